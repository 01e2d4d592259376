//! The split connection (Indirect TCP, Bakre & Badrinath 1995; docs/models/split.md): a node on
//! the route ends the flow's TCP connection and relays its bytes onto a second one, through a
//! bounded relay buffer whose back-pressure reaches the first sender as a shrinking receive
//! window (RFC 9293 §3.8.6), probed by the persist timer when it closes (RFC 9293 §3.8.6.1,
//! RFC 1122 §4.2.2.17).

mod common;

use common::Pair;
use tcpenergy_engine::result::network::NetRunResult;
use tcpenergy_engine::sim::network::{NetWorld, SplitLog};
use tcpenergy_engine::tcp::endpoint::{Endpoint, Role};
use tcpenergy_engine::units::{SimDuration, SimTime};
use tcpenergy_engine::{run_network, EngineError, Scenario};

/// A wired server, a base station and a mobile host: 10 Mbit/s and 20 ms on the wire, 1 Mbit/s
/// and 50 ms on the wireless hop (the settings after `WIRELESS` go to the bs - mobile link).
const BASE: &str = r#"
stop_after = "1h"
[tcp]
variant = "newreno"
[nodes]
server = {}
bs = {}
mobile = {}
cache = {}
[[links]]
between = ["server", "bs"]
rate = "10Mbps"
delay = "20ms"
queue = 100
[[links]]
between = ["bs", "cache"]
rate = "10Mbps"
delay = "1ms"
[[links]]
between = ["bs", "mobile"]
rate = "1Mbps"
delay = "50ms"
queue = 50
"#;

/// BASE with `wireless` settings on the bs - mobile link and one bulk flow server -> mobile
/// with `flow` keys (e.g. its `split`).
fn net(wireless: &str, bytes: u64, flow: &str) -> String {
    format!("{BASE}{wireless}\n[[flows]]\nname = \"download\"\nfrom = \"server\"\nto = \"mobile\"\ntraffic = {{ kind = \"bulk\", bytes = \"{bytes}B\" }}\n{flow}\n")
}

fn scenario(text: &str) -> Scenario {
    Scenario::from_toml(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn run_logged(text: &str, seed: u64) -> (NetRunResult, SplitLog) {
    let s = scenario(text);
    let (r, mut logs) = NetWorld::new(&s, seed).unwrap().run_with_split_logs(seed).unwrap();
    (r, logs.swap_remove(0))
}

/// Delivered ranges start at the first data byte (sequence number 1), follow one another
/// without gap or overlap, and end after `bytes` bytes: in order, exactly once, all of them.
fn assert_in_order_exactly_once(log: &[(u64, u64)], bytes: u64, what: &str) {
    let mut next = 1;
    for &(a, b) in log {
        assert_eq!(a, next, "{what}: a delivery starts at {a}, the next byte expected is {next}");
        assert!(b > a, "{what}: empty delivery at {a}");
        next = b;
    }
    assert_eq!(next - 1, bytes, "{what}: delivered {} of {bytes} bytes", next - 1);
}

#[test]
fn bytes_arrive_at_the_destination_in_order_exactly_once_and_the_transfer_completes() {
    let bytes = 200_000;
    let mut runs = 0;
    // The realistic deployment (wired NewReno, E2TCP on the wireless hop) and E2TCP reading on
    // demand at the relay (its window closes: the persist timer probes it).
    for (first, second) in [("newreno", "sack"), ("sack", "newreno"), ("newreno", "e2tcp"), ("e2tcp", "newreno")] {
        for p in [0.0, 0.02, 0.08] {
            for buffer in ["3000B", "64KB"] {
                for seed in 1..=3 {
                    // Loss both ways on the wireless hop and a little on the wire.
                    let wireless = format!(
                        "forward = {{ impairments = [{{ kind = \"bernoulli\", p = {p} }}] }}\nreverse = {{ impairments = [{{ kind = \"bernoulli\", p = {} }}] }}",
                        p / 2.0
                    );
                    let flow = format!("tcp = {{ variant = \"{first}\" }}\nsplit = {{ at = \"bs\", tcp = {{ variant = \"{second}\" }}, buffer = \"{buffer}\" }}");
                    let mut text = net(&wireless, bytes, &flow);
                    if p > 0.0 {
                        text = text.replacen("delay = \"20ms\"\n", "delay = \"20ms\"\nforward = { impairments = [{ kind = \"bernoulli\", p = 0.01 }] }\n", 1);
                    }
                    let (r, log) = run_logged(&text, seed);
                    let what = format!("{first}/{second}, p = {p}, buffer {buffer}, seed {seed}");
                    assert!(r.complete, "{what}: did not complete");
                    let f = &r.flows[0];
                    assert_eq!(f.flow.bytes_delivered, bytes, "{what}");
                    assert_in_order_exactly_once(&log.deliveries, bytes, &format!("{what}, at mobile"));
                    assert_in_order_exactly_once(&log.relay_deliveries, bytes, &format!("{what}, at bs"));
                    let split = f.split.as_ref().unwrap();
                    assert_eq!(split.relayed_bytes, bytes, "{what}: the relay moved every byte once");
                    assert_eq!(split.halves[0].flow.bytes_delivered, bytes, "{what}");
                    assert_eq!(split.halves[1].flow.bytes_delivered, bytes, "{what}");
                    if p > 0.0 {
                        assert!(split.halves[1].flow.retransmissions > 0, "{what}: the lossy hop must make the check non-trivial");
                    }
                    runs += 1;
                }
            }
        }
    }
    assert_eq!(runs, 72);
}

#[test]
fn the_relay_never_holds_more_than_its_buffer_and_fills_it_when_the_second_hop_is_the_bottleneck() {
    // 20,000 bytes: not a whole number of 1460-byte segments, so the bound is met to the byte.
    let buffer = 20_000;
    let text = net("", 1_000_000, &format!("split = {{ at = \"bs\", tcp = {{ variant = \"sack\" }}, buffer = \"{buffer}B\" }}"));
    let (r, log) = run_logged(&text, 1);
    assert!(r.complete);
    assert!(log.occupancy.len() > 100, "occupancy is logged at every change");
    let max = log.occupancy.iter().map(|&(_, v)| v).max().unwrap();
    for &(t, v) in &log.occupancy {
        assert!(v <= buffer, "the relay held {v} bytes at {t:?}, over its bound {buffer}");
    }
    assert_eq!(max, buffer, "with a slow second hop the relay fills its buffer");
    let split = r.flows[0].split.as_ref().unwrap();
    assert_eq!(split.buffer_bytes, buffer);
    assert_eq!(split.relay_max_bytes, buffer);
    // The buffer drains as the second connection is acknowledged: it ends empty.
    assert_eq!(log.occupancy.last().unwrap().1, 0);
}

#[test]
fn with_a_slow_second_hop_the_first_sender_is_held_back_by_a_shrinking_advertised_window() {
    let bytes: u64 = 1_000_000;
    // A receive buffer and a relay buffer of whole segments (40 and 14): the relay reads whole
    // segments and the first sender fills the window exactly, so it closes to zero. (With a
    // remainder it stops at less than a segment, which the sender's whole-segment rule leaves
    // unused: closed as well, but not to zero.)
    let (buffer, receive_buffer) = (14 * 1460u64, 40 * 1460u64);
    let split = |buffer: &str| {
        format!("tcp = {{ receive_buffer = \"{receive_buffer}B\" }}\nsplit = {{ at = \"bs\", tcp = {{ variant = \"sack\" }}, buffer = \"{buffer}\" }}")
    };
    let (r, log) = run_logged(&net("", bytes, &split(&format!("{buffer}B"))), 1);
    assert!(r.complete);
    let halves = &r.flows[0].split.as_ref().unwrap().halves;

    // The window the split node advertises starts at the receive buffer, shrinks, and closes.
    let windows: Vec<u32> = log.windows.iter().map(|&(_, w)| w).collect();
    assert_eq!(windows[0] as u64, receive_buffer, "the SYN-ACK offers the whole buffer");
    assert!(windows.contains(&0), "the window closes when the relay is full");
    assert!(windows.iter().any(|&w| w > 0 && (w as u64) < receive_buffer / 2), "and shrinks on the way");
    assert!(halves[0].zero_windows_sent > 0);
    // The first sender keeps to the window: the split node never had to refuse data.
    assert_eq!(halves[0].beyond_window_segments, 0);
    assert_eq!(r.flows[0].split.as_ref().unwrap().relayed_bytes, bytes);

    // Held back: when its last byte is acknowledged, the split node holds at most the relay
    // buffer and the unread receive buffer, so the 1 Mbit/s hop has already carried the rest.
    let bound_s = (bytes - buffer - receive_buffer) as f64 * 8.0 / 1e6;
    let first_done = halves[0].flow.completion_s;
    assert!(first_done >= bound_s, "the first connection finished at {first_done} s, before {bound_s} s");
    // Without back-pressure (a relay buffer larger than the transfer) it runs at the wire's pace.
    let (free, _) = run_logged(&net("", bytes, &split("100MB")), 1);
    let free_done = free.flows[0].split.as_ref().unwrap().halves[0].flow.completion_s;
    assert!(free_done < bound_s / 2.0, "unbounded relay: the first connection finished at {free_done} s");
    assert_eq!(free.flows[0].split.as_ref().unwrap().halves[0].zero_windows_sent, 0);
    // End to end, the transfer takes as long either way: the wireless hop sets the pace.
    let (a, b) = (r.flows[0].flow.completion_s, free.flows[0].flow.completion_s);
    assert!((a - b).abs() < 0.05 * b, "end-to-end completion {a} s vs {b} s");
}

#[test]
fn a_zero_window_is_probed_with_backoff_and_a_lost_window_update_does_not_stall_the_sender() {
    // RFC 9293 §3.8.6.1 / RFC 1122 §4.2.2.17: the receiver's application reads nothing, so its
    // 4-segment buffer fills and the window closes; the sender probes, each probe after twice
    // the previous interval. Then the application reads, and its window update is lost: only a
    // probe can learn that the window opened.
    let bytes = 40_000;
    let s = common::scenario("newreno", &format!("{bytes}B"), "", "[tcp]\nreceive_buffer = \"5840B\"\n");
    let mut zero_seen = false;
    let mut update_dropped = false;
    let mut pair = Pair::new(&s, SimDuration::from_millis(20), move |from, seg, _| {
        if from == 1 && seg.window == 0 {
            zero_seen = true;
        } else if from == 1 && zero_seen && !update_dropped {
            update_dropped = true;
            return true;
        }
        false
    });
    pair.eps[1] = Endpoint::new(&s, Role::Passive, 0).unwrap().read_on_demand();
    // Four probes, and the fourth one's arrival at the receiver (answered with a zero window).
    while pair.eps[0].sender.counters().window_probes < 4 {
        assert!(pair.step() && pair.now < SimTime::ZERO + SimDuration::from_secs(60), "the sender must keep probing");
    }
    pair.step();
    let probes: Vec<SimTime> = pair.log.iter().filter(|x| x.from == 0 && x.seg.len == 1).map(|x| x.at).collect();
    assert_eq!(probes.len(), 4);
    assert!(pair.log.iter().filter(|x| x.from == 1 && x.seg.window == 0).count() >= 5, "each probe is answered with the closed window");
    let gaps: Vec<u64> = probes.windows(2).map(|w| (w[1] - w[0]).0).collect();
    for g in gaps.windows(2) {
        assert_eq!(g[1], 2 * g[0], "each probe waits twice as long as the one before: {probes:?}");
    }
    assert_eq!(pair.eps[1].unread(), 5840, "the buffer is full and nothing more was accepted");
    assert_eq!(pair.eps[0].sender.counters().window_probes, probes.len() as u64);

    // The application reads everything from now on; its first window update is dropped.
    let read_at = pair.now;
    pair.app_read(1, u64::MAX);
    while !(pair.eps[0].is_closed() && pair.eps[1].is_closed()) && pair.now < SimTime::ZERO + SimDuration::from_secs(600) {
        if !pair.step() {
            break;
        }
        pair.app_read(1, u64::MAX);
    }
    assert!(pair.log.iter().any(|x| x.dropped && x.from == 1 && x.at >= read_at && x.seg.window > 0), "the update was lost");
    let delivered = pair.eps[1].receiver.as_ref().unwrap().delivered;
    assert_eq!(delivered, bytes, "the transfer completes after the lost window update");
    let resumed_by = pair.log.iter().find(|x| x.from == 0 && x.at > read_at && x.seg.len > 1).unwrap().at;
    let probe_after = pair.log.iter().find(|x| x.from == 0 && x.at > read_at && x.seg.len == 1).unwrap().at;
    assert!(probe_after < resumed_by, "a probe, not the lost update, reopened the window");
}

#[test]
fn the_split_node_is_charged_as_a_connection_end_not_as_a_router() {
    let text = net("", 300_000, "split = { at = \"bs\", tcp = { variant = \"sack\" }, buffer = \"64KB\" }");
    let r = run_network(&scenario(&text), 1).unwrap();
    let bs = &r.nodes["bs"];
    let halves = &r.flows[0].split.as_ref().unwrap().halves;
    assert_eq!(bs.forwarded_packets, 0, "every packet of the flow ends or starts at the split node");
    // Per-segment receive work for the first connection's data (no loss on the wire), send
    // work for the second connection's: the ordinary costs of a connection end.
    assert_eq!(bs.cpu_ops["segment_received"], halves[0].flow.data_segments_sent);
    assert_eq!(bs.cpu_ops["segment_sent"], halves[1].flow.data_segments_sent);
    assert!(bs.cpu_ops["ack_sent"] >= halves[0].flow.acks_sent);
    assert!(bs.energy.breakdown_j.cpu > 0.0);
    // Without the split, the same node forwards instead.
    let plain = run_network(&scenario(&net("", 300_000, "")), 1).unwrap();
    assert!(plain.nodes["bs"].forwarded_packets > 0);
    assert_eq!(plain.nodes["bs"].cpu_ops["segment_received"], 0);
}

#[test]
fn the_record_is_end_to_end_with_each_connection_under_split_halves() {
    let text = net(
        "forward = { impairments = [{ kind = \"bernoulli\", p = 0.03 }] }",
        300_000,
        "split = { at = \"bs\", tcp = { variant = \"sack\" }, buffer = \"64KB\" }",
    );
    let r = run_network(&scenario(&text), 2).unwrap();
    let f = &r.flows[0];
    let split = f.split.as_ref().unwrap();
    let [a, b] = [&split.halves[0], &split.halves[1]];
    assert_eq!((a.from.as_str(), a.to.as_str(), a.variant.as_str()), ("server", "bs", "newreno"));
    assert_eq!((b.from.as_str(), b.to.as_str(), b.variant.as_str()), ("bs", "mobile", "sack"));
    assert_eq!(split.at, "bs");
    assert_eq!(r.variant, "mixed", "the flow's two connections run different variants");
    assert_eq!(f.variant, "newreno", "the source runs the first connection's");
    assert_eq!(f.flow.bytes_delivered, b.flow.bytes_delivered);
    assert_eq!(f.flow.goodput_bps, b.flow.goodput_bps);
    assert_eq!(f.flow.segments_sent, a.flow.segments_sent + b.flow.segments_sent);
    assert_eq!(f.flow.retransmissions, a.flow.retransmissions + b.flow.retransmissions);
    assert_eq!(f.flow.wire_bytes_sender, a.flow.wire_bytes_sender + b.flow.wire_bytes_sender);
    assert!(b.flow.retransmissions > 0 && a.flow.retransmissions == 0, "losses are the wireless connection's own");
    // Completion is when the last byte reached the mobile host, after the wire was done.
    assert!(f.flow.completion_s > a.flow.completion_s);
    assert!(f.complete);
    // In JSON: a `split` table on the split flow only; the other keys are those of any flow.
    let two = text.replace(
        "[[flows]]",
        "[[flows]]\nname = \"plain\"\nfrom = \"server\"\nto = \"mobile\"\ntraffic = { kind = \"bulk\", bytes = \"10kB\" }\n[[flows]]",
    );
    let json: serde_json::Value = serde_json::from_str(&run_network(&scenario(&two), 2).unwrap().to_json()).unwrap();
    let flows = json["flows"].as_array().unwrap();
    assert!(flows[0].get("split").is_none());
    let keys = |v: &serde_json::Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    let mut plain = keys(&flows[0]);
    plain.push("split".into());
    plain.sort();
    let mut split_keys = keys(&flows[1]);
    split_keys.sort();
    assert_eq!(split_keys, plain);
    let sub = &flows[1]["split"];
    for key in ["at", "buffer_bytes", "relay_max_bytes", "relayed_bytes", "halves"] {
        assert!(sub.get(key).is_some(), "split.{key}");
    }
    for key in ["segments_sent", "retransmissions", "timeouts", "wire_bytes_sender", "window_probes", "zero_windows_sent"] {
        assert!(sub["halves"][1].get(key).is_some(), "split.halves.1.{key}");
    }
}

// ---------------------------------------------------------------------------------------------
// The scenario contract and bad input.

fn err_of(text: &str) -> (String, String) {
    match Scenario::from_toml(text) {
        Err(EngineError::Config { path, message }) => (path, message),
        other => panic!("expected a config error, got {other:?}\n{text}"),
    }
}

fn split_err(split: &str) -> (String, String) {
    err_of(&net("", 10_000, &format!("split = {split}")))
}

#[test]
fn the_second_connection_takes_the_scenario_tcp_table_with_split_tcp_merged_over_it() {
    let text = net("", 10_000, "tcp = { initial_window = 4 }\nsplit = { at = \"bs\", tcp = { variant = \"sack\" }, buffer = \"64KB\" }")
        .replace("[tcp]\nvariant = \"newreno\"", "[tcp]\nvariant = \"newreno\"\ntimestamps = true");
    let s = scenario(&text);
    let f = &s.network().unwrap().flows[0];
    let split = f.split.as_ref().unwrap();
    assert_eq!((f.tcp.variant.name(), f.tcp.initial_window, f.tcp.timestamps), ("newreno", 4, true));
    assert_eq!((split.tcp.variant.name(), split.tcp.initial_window, split.tcp.timestamps), ("sack", 2, true));
    assert_eq!((split.at.as_str(), split.buffer), ("bs", 64_000));
    // Each connection's MTU is its own route's.
    let plan = tcpenergy_engine::plan::Plan::of(&s).unwrap();
    assert_eq!((plan.flows[0].first.path_mtu, plan.flows[0].second.map(|c| c.path_mtu)), (1500, Some(1500)));
    // The normalized scenario keeps the split and reads back the same.
    let again = Scenario::from_json(&s.to_json(), &[]).unwrap();
    assert_eq!(again.into_network().unwrap().flows[0].split.as_ref().unwrap(), split);
}

#[test]
fn a_split_node_without_a_second_transport_is_refused_naming_split_tcp() {
    let (path, msg) = split_err("{ at = \"bs\", buffer = \"64KB\" }");
    assert_eq!(path, "flows.0.split.tcp");
    assert!(msg.contains("second connection"), "{msg}");
}

#[test]
fn a_bad_setting_of_the_second_transport_is_named_under_split_tcp() {
    let (path, _) = split_err("{ at = \"bs\", tcp = { variant = \"sack\", initial_window = 0 }, buffer = \"64KB\" }");
    assert_eq!(path, "flows.0.split.tcp.initial_window");
    let (path, _) = split_err("{ at = \"bs\", tcp = { variant = \"no-such-tcp\" }, buffer = \"64KB\" }");
    assert_eq!(path, "flows.0.split.tcp.variant");
    let (path, msg) = split_err("{ at = \"bs\", tcp = {}, buffer = \"64KB\", buffr = 1 }");
    assert_eq!(path, "flows.0.split.buffr");
    assert!(msg.contains("buffr"), "{msg}");
}

#[test]
fn a_split_node_off_the_route_or_at_an_end_of_the_flow_is_refused() {
    let (path, msg) = split_err("{ at = \"cache\", tcp = {}, buffer = \"64KB\" }");
    assert_eq!(path, "flows.0.split.at");
    assert_eq!(msg, "\"cache\" is not on the flow's route (server -> bs -> mobile)");
    for end in ["server", "mobile"] {
        let (path, msg) = split_err(&format!("{{ at = \"{end}\", tcp = {{}}, buffer = \"64KB\" }}"));
        assert_eq!(path, "flows.0.split.at");
        assert!(msg.contains("between the flow's ends"), "{msg}");
    }
    let (path, msg) = split_err("{ at = \"nowhere\", tcp = {}, buffer = \"64KB\" }");
    assert_eq!(path, "flows.0.split.at");
    assert!(msg.contains("unknown node"), "{msg}");
}

#[test]
fn a_relay_buffer_of_zero_bytes_is_refused() {
    let (path, msg) = split_err("{ at = \"bs\", tcp = {}, buffer = \"0B\" }");
    assert_eq!(path, "flows.0.split.buffer");
    assert!(msg.contains("at least 1 byte"), "{msg}");
}

#[test]
fn a_udp_flow_cannot_be_split() {
    let text = net("", 10_000, "split = { at = \"bs\", tcp = {}, buffer = \"64KB\" }")
        .replace("traffic = { kind = \"bulk\", bytes = \"10000B\" }", "transport = \"udp\"\ntraffic = { kind = \"cbr\", rate = \"64kbps\", packet = 200 }");
    let (path, msg) = err_of(&text);
    assert_eq!(path, "flows.0.split");
    assert!(msg.contains("only a TCP flow"), "{msg}");
}

#[test]
fn the_example_split_scenario_completes_and_fills_its_relay() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/split-connection.toml")).unwrap();
    let s = scenario(&text);
    let r = run_network(&s, s.seed).unwrap();
    assert!(r.complete);
    let split = r.flows[0].split.as_ref().unwrap();
    assert_eq!(split.relay_max_bytes, split.buffer_bytes);
    assert!(split.halves[1].flow.retransmissions > 0, "the wireless hop is lossy");
}

#[test]
fn a_capture_shows_each_connection_between_its_own_ends() {
    use tcpenergy_engine::capture::node_address;
    let s = scenario(&net("", 50_000, "split = { at = \"bs\", tcp = { variant = \"sack\" }, buffer = \"64KB\" }"));
    let (_, capture) = tcpenergy_engine::run_network_captured(&s, 1, true).unwrap();
    let capture = capture.unwrap();
    let id = |name: &str| s.network().unwrap().node_id(name).unwrap().index();
    // Flow 0 is the first connection, server -> bs; the second, bs -> mobile, comes after the flows.
    assert_eq!(capture.flows.len(), 2);
    assert_eq!((capture.flows[0].src.addr, capture.flows[0].dst.addr), (node_address(id("server")), node_address(id("bs"))));
    assert_eq!((capture.flows[1].src.addr, capture.flows[1].dst.addr), (node_address(id("bs")), node_address(id("mobile"))));
    for (link, flow) in [("server-bs", 0), ("bs-server", 0), ("bs-mobile", 1), ("mobile-bs", 1)] {
        let frames = &capture.links.iter().find(|l| l.name == link).unwrap().frames;
        assert!(!frames.is_empty() && frames.iter().all(|f| f.flow == flow), "{link}");
        // Data goes from each connection's source: server -> bs, then bs -> mobile.
        assert!(frames.iter().all(|f| f.from_src == link.starts_with(["server-bs", "bs-mobile"].iter().find(|x| **x == link).copied().unwrap_or("~"))));
    }
}
