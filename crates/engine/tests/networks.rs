//! The network form (DESIGN.md "Networks"): nodes that forward by static routes, many flows with
//! their own transport and traffic, and every node metered.

use tcpenergy_engine::result::network::NetRunResult;
use tcpenergy_engine::{run, run_network, RunOptions, Scenario};

fn net(text: &str) -> Scenario {
    Scenario::from_toml(text).unwrap_or_else(|e| panic!("{e}"))
}

fn run_net(text: &str, seed: u64) -> NetRunResult {
    run_network(&net(text), seed).unwrap()
}

fn flow<'a>(r: &'a NetRunResult, name: &str) -> &'a tcpenergy_engine::result::network::NetFlowResult {
    r.flows.iter().find(|f| f.name == name).unwrap()
}

/// Two nodes, one link, one bulk flow: the network the single-path form stands for.
const DETERMINISTIC_PATH: &str = r#"
stop_after = "600s"
[path.forward]
rate = "2Mbps"
delay = "20ms"
queue = 20
impairments = [{ kind = "outage", down = "2s", every = "9s", offset = "3s" }]
[path.reverse]
rate = "2Mbps"
delay = "20ms"
[tcp]
variant = "newreno"
[traffic]
kind = "bulk"
bytes = "2MB"
"#;

const DETERMINISTIC_NETWORK: &str = r#"
stop_after = "600s"
[tcp]
variant = "newreno"
[nodes]
sender = {}
receiver = {}
[[links]]
between = ["sender", "receiver"]
rate = "2Mbps"
delay = "20ms"
forward = { queue = 20, impairments = [{ kind = "outage", down = "2s", every = "9s", offset = "3s" }] }
reverse = { queue = 100 }
[[flows]]
name = "main"
from = "sender"
to = "receiver"
traffic = { kind = "bulk", bytes = "2MB" }
"#;

#[test]
fn a_two_node_network_gives_the_single_path_record_it_stands_for() {
    let path = run(&net(DETERMINISTIC_PATH), 1, RunOptions::default()).unwrap();
    let network = run_net(DETERMINISTIC_NETWORK, 1);
    assert!(path.flow.timeouts > 0 && path.flow.retransmissions > 0, "the outage makes the comparison non-trivial");
    assert_eq!(network.flow.as_ref().unwrap(), &path.flow);
    assert_eq!(network.energy.sender.as_ref().unwrap(), &path.energy.sender);
    assert_eq!(network.energy.receiver.as_ref().unwrap(), &path.energy.receiver);
    assert_eq!(network.links["sender->receiver"], path.path.forward);
    assert_eq!(network.links["receiver->sender"], path.path.reverse);
    // The network run has one event more: the flow's start.
    assert_eq!(network.events, path.events + 1);
}

#[test]
fn the_single_path_form_is_read_as_two_nodes_one_link_and_one_bulk_flow() {
    let path = net(DETERMINISTIC_PATH);
    let as_net = path.as_network().unwrap();
    let n = as_net.network().unwrap();
    let names: Vec<&str> = n.nodes.iter().map(|x| x.name.as_str()).collect();
    assert_eq!(names, ["sender", "receiver"], "the sender is node 0: address 10.0.0.1 in captures");
    assert_eq!(n.links.len(), 1);
    // Each direction keeps its single-path key, which names its random streams.
    assert_eq!(n.links[0].keys, ["path.forward".to_string(), "path.reverse".to_string()]);
    assert_eq!((&n.links[0].forward, n.links[0].reverse.as_ref()), (&path.path().unwrap().forward, Some(&path.path().unwrap().reverse)));
    let f = &n.flows[0];
    assert_eq!((n.flows.len(), f.name.as_str(), f.start.0), (1, "main", 0));
    assert_eq!(f.traffic, tcpenergy_engine::config::FlowTraffic::Bulk { bytes: path.traffic().unwrap().bytes });
    let plan = tcpenergy_engine::plan::Plan::of(&as_net).expect("its routes are built");
    assert_eq!((plan.flows[0].first.path_mtu, plan.flows[0].first.smss), (path.path().unwrap().mtu, path.smss().unwrap()));
    // A network scenario is already one.
    let written = net(DETERMINISTIC_NETWORK);
    assert!(matches!(written.as_network().unwrap(), std::borrow::Cow::Borrowed(_)));
}

#[test]
fn a_single_path_run_counts_no_start_event_and_records_what_its_network_run_records() {
    // The single path's record is a view of its network's record: same flow, energy and links;
    // its transfer begins with the run, so it counts one event fewer than the network form,
    // which starts the flow with an event.
    let path = net(DETERMINISTIC_PATH);
    let view = run(&path, 1, RunOptions::default()).unwrap();
    let full = run_network(&path.as_network().unwrap(), 1).unwrap();
    assert_eq!(full.flow.as_ref().unwrap(), &view.flow);
    assert_eq!(full.links["sender->receiver"], view.path.forward);
    assert_eq!(full.nodes["receiver"].cpu_ops, view.cpu.receiver_ops);
    assert_eq!(full.events, view.events + 1);
}

/// The 3-hop chain a - b - c - d (tests/data/chain4.toml), `last_hop` settings added to the c - d
/// link, then `flows`.
fn chain(flows: &str, last_hop: &str) -> String {
    format!("{}{last_hop}\n{flows}\n", include_str!("data/chain4.toml"))
}

#[test]
fn routers_forward_every_packet_and_pay_for_it_with_cpu_time() {
    let r = run_net(&chain(r#"[[flows]]
name = "bulk"
from = "a"
to = "d"
traffic = { kind = "bulk", bytes = "500kB" }"#, ""), 1);
    assert!(r.complete);
    assert_eq!(flow(&r, "bulk").flow.bytes_delivered, 500_000);
    for relay in ["b", "c"] {
        let n = &r.nodes[relay];
        // Data one way, ACKs the other: every packet of the flow that reached a relay crossed it.
        let reached = if relay == "b" { r.links["a->b"].packets_delivered + r.links["c->b"].packets_delivered } else { r.links["b->c"].packets_delivered + r.links["d->c"].packets_delivered };
        assert!(n.forwarded_packets <= reached && n.forwarded_packets + r.network.packets_in_flight >= reached, "{relay}");
        assert_eq!(n.received_packets + n.originated_packets, 0, "{relay} is no flow's end");
        assert!(n.forward_cycles > 0.0 && n.energy.cpu_busy_s > 0.0, "{relay}");
        assert_eq!(n.cpu_ops["segment_sent"], 0, "a relay runs no TCP");
    }
    for end in ["a", "d"] {
        assert_eq!(r.nodes[end].forwarded_packets, 0);
    }
}

#[test]
fn a_flow_sends_nothing_before_its_start_or_after_its_stop() {
    let flows = r#"[[flows]]
name = "late"
from = "c"
to = "d"
traffic = { kind = "timed", duration = "100s" }
start = "10s"
stop = "20s""#;
    let text = chain(flows, "");
    let at = |stop_after: &str| {
        let mut s = net(&text);
        s.stop_after = tcpenergy_engine::units::parse_duration(stop_after).unwrap();
        run_network(&s, 1).unwrap()
    };
    let before = at("9999ms");
    assert_eq!(before.links["c->d"].packets_sent + before.links["d->c"].packets_sent, 0);
    let during = at("20s");
    let after = at("60s");
    assert!(during.links["c->d"].packets_sent > 100, "it sent during its window");
    // Its ends emit nothing after the stop; what was queued then still leaves the interface.
    let (f_during, f_after) = (flow(&during, "late"), flow(&after, "late"));
    assert_eq!(f_after.flow.segments_sent, f_during.flow.segments_sent);
    assert_eq!(f_after.flow.acks_sent, f_during.flow.acks_sent);
    for key in ["c->d", "d->c"] {
        let (d, a) = (&during.links[key], &after.links[key]);
        assert_eq!(a.packets_sent + a.queued + a.dropped_queue, d.packets_sent + d.queued + d.dropped_queue, "{key}");
        assert_eq!(a.queued, 0, "{key}: the queue drained");
    }
    let f = flow(&after, "late");
    assert_eq!(f.stop_s, Some(20.0));
    assert!(!f.complete, "a timed flow cut short by its stop did not finish");
    assert!(!after.complete);
}

#[test]
fn cbr_delivers_its_rate_within_one_percent_on_a_clean_path() {
    for transport in ["udp", "tcp"] {
        let flows = format!(
            r#"[[flows]]
name = "voice"
from = "a"
to = "d"
transport = "{transport}"
traffic = {{ kind = "cbr", rate = "64kbps", packet = 200 }}
stop = "60s""#
        );
        let r = run_net(&chain(&flows, ""), 1);
        let f = flow(&r, "voice");
        assert!(f.complete, "{transport}");
        let bps = f.flow.goodput_bps;
        assert!((bps - 64_000.0).abs() <= 640.0, "{transport}: {bps} bit/s");
    }
}

#[test]
fn interactive_latency_on_an_idle_path_is_propagation_plus_serialization() {
    // Three hops of 1 ms at 10 Mbit/s; 1000-byte messages, fixed 0.1 s apart.
    let flows = |transport: &str| {
        format!(
            r#"[[flows]]
name = "chat"
from = "a"
to = "d"
transport = "{transport}"
traffic = {{ kind = "on_off", message = 1000, interval = "100ms", distribution = "fixed" }}
start = "1s"
stop = "11s""#
        )
    };
    let r = run_net(&chain(&flows("udp"), ""), 1);
    let f = flow(&r, "chat");
    assert_eq!(f.messages_sent, 100);
    assert_eq!(f.messages_delivered, 100);
    // 3 x (1 ms + 1028 bytes x 8 / 10 Mbit/s) = 3 x 1.8224 ms.
    let expected = 3.0 * (1.0 + 1028.0 * 8.0 / 10e6 * 1e3);
    for v in [f.latency_ms.mean, f.latency_ms.p50, f.latency_ms.p99] {
        assert!((v - expected).abs() < 1e-6, "udp latency {v} ms, expected {expected}");
    }
    // Over TCP the segment carries 1040 IP bytes; the first message waits for the handshake.
    let r = run_net(&chain(&flows("tcp"), ""), 1);
    let f = flow(&r, "chat");
    assert_eq!(f.messages_delivered, 100);
    let expected = 3.0 * (1.0 + 1040.0 * 8.0 / 10e6 * 1e3);
    assert!((f.latency_ms.p50 - expected).abs() < 1e-6, "tcp median latency {} ms, expected {expected}", f.latency_ms.p50);
}

/// A dumbbell: sources s1..sN -> r1 -> r2 -> sinks d1..dN, the r1 -> r2 bottleneck shared.
fn dumbbell(access_delays_ms: &[u64], bottleneck: &str, duration_s: u64) -> String {
    let mut t = format!("stop_after = \"{duration_s}s\"\n[tcp]\nvariant = \"newreno\"\nreceive_buffer = \"256kB\"\nwindow_scale = true\n[nodes]\nr1 = {{}}\nr2 = {{}}\n");
    for i in 1..=access_delays_ms.len() {
        t += &format!("s{i} = {{}}\nd{i} = {{}}\n");
    }
    t += &format!("[[links]]\nbetween = [\"r1\", \"r2\"]\n{bottleneck}\n");
    for (i, d) in access_delays_ms.iter().enumerate() {
        let i = i + 1;
        t += &format!("[[links]]\nbetween = [\"s{i}\", \"r1\"]\nrate = \"10Mbps\"\ndelay = \"{d}ms\"\n");
        t += &format!("[[links]]\nbetween = [\"r2\", \"d{i}\"]\nrate = \"10Mbps\"\ndelay = \"1ms\"\n");
    }
    for i in 1..=access_delays_ms.len() {
        t += &format!(
            "[[flows]]\nname = \"f{i}\"\nfrom = \"s{i}\"\nto = \"d{i}\"\ntraffic = {{ kind = \"timed\", duration = \"{duration_s}s\" }}\nstart = \"{}ms\"\n",
            (i - 1) * 100
        );
    }
    t
}

#[test]
fn identical_newreno_flows_with_equal_rtts_share_a_bottleneck_fairly() {
    // Jain's index >= 0.9 over 120 s (the issue's bar; seed 004 §5.3 uses Jain's index).
    let text = dumbbell(&[5; 8], "rate = \"10Mbps\"\ndelay = \"10ms\"\nqueue = 50", 120);
    let r = run_net(&text, 1);
    assert_eq!(r.flows.len(), 8);
    assert!(r.network.jain_fairness >= 0.9, "Jain's index {}", r.network.jain_fairness);
    assert!(r.links["r1->r2"].dropped_queue > 0, "the flows are congestion-limited");
    let total: f64 = r.flows.iter().map(|f| f.flow.goodput_bps).sum();
    assert!(total > 8.5e6 && total <= 10e6, "the bottleneck is used: {total} bit/s");
}

#[test]
fn flows_with_rtts_in_ratio_one_to_three_share_in_inverse_proportion_to_rtt() {
    // Random loss on a bottleneck with room in its queue: both flows see the same loss rate p, and
    // the square-root law (Mathis et al. 1997; the PFTK model without timeouts) gives
    // throughput ~ MSS / (RTT sqrt(p)), so the ratio of goodputs is the inverse ratio of RTTs.
    // RTTs: 2 x (d + 10 + 1) ms with d = 9 and 49 ms -> 40 ms and 120 ms.
    let bottleneck = "rate = \"10Mbps\"\ndelay = \"10ms\"\nqueue = 1000\nforward = { impairments = [{ kind = \"bernoulli\", p = 0.01 }] }";
    let mut ratios = vec![];
    for seed in 1..=3 {
        let r = run_net(&dumbbell(&[9, 49], bottleneck, 300), seed);
        assert_eq!(r.links["r1->r2"].dropped_queue, 0);
        ratios.push(flow(&r, "f1").flow.goodput_bps / flow(&r, "f2").flow.goodput_bps);
    }
    let mean = ratios.iter().sum::<f64>() / ratios.len() as f64;
    assert!((2.4..=3.6).contains(&mean), "goodput ratio {mean} (runs {ratios:?}), expected about 3");
}

#[test]
fn explicit_routes_override_the_hop_count_route() {
    let text = format!("routes = [[\"a\", \"c\", \"d\"]]\n{}", include_str!("data/diamond.toml"));
    let r = run_net(&text, 1);
    assert!(r.complete);
    assert!(r.links["a->c"].packets_sent > 0 && r.links["c->d"].packets_sent > 0);
    assert_eq!(r.links["a->b"].packets_sent, 0, "data leaves by the explicit route");
    assert!(r.links["d->b"].packets_sent > 0, "ACKs come back by the hop-count route, via b (listed first)");
}

#[test]
fn the_energy_of_the_network_is_the_sum_of_its_nodes() {
    let r = run_net(&chain(r#"[[flows]]
name = "bulk"
from = "a"
to = "d"
traffic = { kind = "bulk", bytes = "300kB" }
[[flows]]
name = "back"
from = "d"
to = "b"
transport = "udp"
traffic = { kind = "cbr", rate = "100kbps", packet = 500 }
stop = "2s""#, ""), 1);
    let sum: f64 = r.nodes.values().map(|n| n.energy.total_j).sum();
    assert!((r.network.total_j - sum).abs() < 1e-9 * sum);
    for (name, n) in &r.nodes {
        let b = &n.energy.breakdown_j;
        let parts = b.base + b.radio_tx + b.radio_rx + b.radio_idle + b.radio_sleep + b.radio_transitions + b.cpu;
        assert!((parts - n.energy.total_j).abs() < 1e-9 * n.energy.total_j, "{name}");
    }
    assert_eq!(r.variant, "sack", "UDP flows do not make the TCP variant mixed");
    assert!(r.flow.is_none() && r.energy.sender.is_none(), "no single-flow aliases with two flows");
}

#[test]
fn the_same_seed_gives_the_same_network_record() {
    let text = chain(r#"[[flows]]
name = "bulk"
from = "a"
to = "d"
traffic = { kind = "bulk", bytes = "300kB" }
[[flows]]
name = "chat"
from = "d"
to = "a"
traffic = { kind = "on_off", message = 500, interval = "50ms" }
stop = "5s""#, "forward = { impairments = [{ kind = \"bernoulli\", p = 0.05 }] }");
    let a = run_net(&text, 7).to_json();
    assert_eq!(a, run_net(&text, 7).to_json());
    assert_ne!(a, run_net(&text, 8).to_json());
}

#[test]
fn the_normalized_network_scenario_reads_back_as_itself() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/mixed-traffic.toml")).unwrap();
    let s = net(&text);
    let again = Scenario::from_json(&s.to_json(), &[]).unwrap_or_else(|e| panic!("{e}\n{}", s.to_json()));
    assert_eq!(again, s);
    assert!(!s.to_json().contains("\"voice\",\"from\":\"mobile\",\"to\":\"server\",\"transport\":\"udp\",\"tcp\""), "a UDP flow has no tcp table");
}
