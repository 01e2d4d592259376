//! Shared 802.11 channels in networks (docs/models/wifi.md "The channel in a scenario"): TCP and
//! UDP over the DCF across hops, link-layer retransmission below IP, IP-level pipes above the
//! MAC, and every node's radio time and energy accounted frame by frame.

mod common;
use common::radio_seconds;

use proptest::prelude::*;
use tcpenergy_engine::result::network::NetRunResult;
use tcpenergy_engine::{run_network, Scenario};

fn net(text: &str) -> Scenario {
    Scenario::from_toml(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn run_net(text: &str, seed: u64) -> NetRunResult {
    run_network(&net(text), seed).unwrap()
}

/// Four stations in one collision domain, static routes a -> b -> c -> d and back, one bulk
/// transfer; `channel` and `extra` are appended to the channel table and the document.
fn chain(channel: &str, extra: &str, bytes: &str) -> String {
    format!(
        r#"
stop_after = "600s"
routes = [["a", "b", "c", "d"], ["d", "c", "b", "a"]]
[tcp]
variant = "sack"
[energy]
default_profile = "singh2002-toshiba-wavelan"
[nodes]
a = {{}}
b = {{}}
c = {{}}
d = {{}}
[[channels]]
name = "adhoc"
nodes = ["a", "b", "c", "d"]
data_rate = "11Mbps"
basic_rate = "2Mbps"
{channel}
[[flows]]
name = "bulk"
from = "a"
to = "d"
traffic = {{ kind = "bulk", bytes = "{bytes}" }}
{extra}
"#
    )
}

/// Two stations on a channel, one flow from s to r.
fn pair(channel: &str, flow: &str) -> String {
    format!(
        r#"
stop_after = "2000s"
[energy]
default_profile = "singh2002-toshiba-wavelan"
[nodes]
s = {{}}
r = {{}}
[[channels]]
name = "air"
nodes = ["s", "r"]
data_rate = "11Mbps"
basic_rate = "2Mbps"
{channel}
[[flows]]
name = "f"
from = "s"
to = "r"
{flow}
"#
    )
}


#[test]
fn tcp_crosses_three_hops_of_one_channel_and_every_node_is_metered_frame_by_frame() {
    let r = run_net(&chain("", "", "1MB"), 1);
    assert!(r.complete);
    let f = r.flow.as_ref().unwrap();
    assert_eq!(f.bytes_delivered, 1_000_000);
    // Relays forward every data packet and ACK; the chain shares one medium, so the goodput is
    // well below a third of the 11 Mbit/s PHY rate.
    assert!(r.nodes["b"].forwarded_packets > 700 && r.nodes["c"].forwarded_packets == r.nodes["b"].forwarded_packets);
    assert!(f.goodput_bps > 1.0e6 && f.goodput_bps < 11.0e6 / 3.0, "{}", f.goodput_bps);
    let ch = &r.channels["adhoc"];
    // Every packet handed to the MAC was delivered (no loss configured, no retry-limit drop),
    // but for the last ACK, which may still be queued when the connection is closed.
    for (k, i) in &ch.interfaces {
        assert_eq!(i.dropped_channel + i.dropped_queue, 0, "{k}");
        assert!(i.packets_sent - i.packets_delivered <= 1, "{k}: {i:?}");
    }
    // Every frame received answers with a MAC ACK after SIFS (one may be due as the run ends).
    let received = ch.totals.delivered + ch.totals.duplicates;
    assert!(ch.totals.acks_sent <= received && received - ch.totals.acks_sent <= 1, "{:?}", ch.totals);
    assert!(ch.busy_fraction > 0.5 && (ch.busy_fraction + ch.idle_fraction - 1.0).abs() < 1e-12);
    let window = r.energy.window_s;
    for n in ["a", "b", "c", "d"] {
        let e = &r.nodes[n].energy;
        // tx + rx + overhear + idle + sleep + waking = the measurement window.
        assert!((radio_seconds(&r, n) - window).abs() < 1e-6, "{n}: {} vs {window}", radio_seconds(&r, n));
        let b = &e.breakdown_j;
        assert!((b.base + b.radio_tx + b.radio_rx + b.radio_overhear + b.mac_control + b.retries + b.radio_idle + b.radio_sleep + b.radio_transitions + b.cpu - e.total_j).abs() < 1e-9 * e.total_j);
        assert!(b.mac_control > 0.0 && b.radio_overhear > 0.0, "{n}: {b:?}");
        assert!([b.radio_tx, b.radio_rx, b.retries].iter().all(|x| *x >= 0.0), "{n}: {b:?}");
    }
    // a and d overhear the b <-> c hop; b and c each take part in two hops.
    assert!(r.nodes["a"].energy.radio_overhear_s > r.nodes["b"].energy.radio_overhear_s);
}

#[test]
fn the_same_seed_gives_the_same_record_and_another_seed_another_backoff() {
    let text = chain("", "", "300KB");
    let a = serde_json::to_string(&run_net(&text, 7)).unwrap();
    let b = serde_json::to_string(&run_net(&text, 7)).unwrap();
    assert_eq!(a, b);
    let c = serde_json::to_string(&run_net(&text, 8)).unwrap();
    assert_ne!(a, c);
}

#[test]
fn link_layer_retransmission_hides_channel_loss_from_tcp_ieee_802_11_10_3_4_4() {
    // 10 % loss per frame attempt (data and ACK alike): the MAC retries up to 7 times, so a frame
    // is lost to IP with probability 0.1^7. TCP sees (almost) nothing.
    let flow = "traffic = { kind = \"bulk\", bytes = \"2MB\" }";
    let r = run_net(&pair("impairments = [{ kind = \"bernoulli\", p = 0.1 }]", flow), 3);
    assert!(r.complete);
    let ch = &r.channels["air"];
    assert!(ch.totals.retries > 200, "{:?}", ch.totals);
    assert_eq!(ch.totals.drops_retry_limit, 0);
    assert!(ch.totals.duplicates > 0, "lost MAC ACKs make the sender repeat frames the receiver has");
    assert_eq!(r.flow.as_ref().unwrap().retransmissions, 0);
    assert!(r.nodes["s"].energy.breakdown_j.retries > 0.0);
    // The same loss on a point-to-point link reaches TCP directly.
    let link = r#"
stop_after = "2000s"
[nodes]
s = {}
r = {}
[[links]]
between = ["s", "r"]
rate = "11Mbps"
delay = "0ms"
forward = { impairments = [{ kind = "bernoulli", p = 0.1 }] }
[[flows]]
name = "f"
from = "s"
to = "r"
traffic = { kind = "bulk", bytes = "2MB" }
"#;
    assert!(run_net(link, 3).flow.unwrap().retransmissions > 50);
}

#[test]
fn datagrams_reach_ip_unless_every_attempt_is_lost_ieee_802_11_10_3_4_4() {
    // p = 0.3 per attempt on data and ACK frames, 4 attempts (3 retries): the receiver misses a
    // datagram with probability p^4; the sender gives up on it (no ACK in 4 attempts) with
    // probability (1 - (1 - p)^2)^4. Both within three standard errors over 20,000 datagrams.
    let flow = "transport = \"udp\"\ntraffic = { kind = \"cbr\", rate = \"200kbps\", packet = 1000 }\nstop = \"800s\"";
    let r = run_net(&pair("short_retry_limit = 4\nlong_retry_limit = 4\nimpairments = [{ kind = \"bernoulli\", p = 0.3 }]", flow), 11);
    let f = &r.flows[0];
    let n = f.datagrams_sent as f64;
    assert!(n >= 19_990.0, "{n}");
    let within = |observed: f64, p: f64, what: &str| {
        let se = (p * (1.0 - p) / n).sqrt();
        assert!((observed - p).abs() < 3.0 * se, "{what}: {observed} vs {p} (se {se})");
    };
    let lost_to_ip = 1.0 - f.datagrams_delivered as f64 / n;
    within(lost_to_ip, 0.3f64.powi(4), "lost to IP");
    let gave_up = r.channels["air"].totals.drops_retry_limit as f64 / n;
    within(gave_up, (1.0 - 0.7f64 * 0.7).powi(4), "sender discards");
}

#[test]
fn a_pipe_above_the_mac_drops_and_delays_packets_that_tcp_then_sees_seed_000_s5() {
    // Dummynet at c on c -> d: 45 ms and 5 % loss before the card; the MAC cannot hide it.
    let pipe = "[[pipes]]\nfrom = \"c\"\nto = \"d\"\ndelay = \"45ms\"\nimpairments = [{ kind = \"bernoulli\", p = 0.05 }]";
    let with = run_net(&chain("", pipe, "1MB"), 2);
    let without = run_net(&chain("", "", "1MB"), 2);
    let p = &with.pipes["c->d"];
    assert!(p.dropped > 0 && p.packets > 700, "{p:?}");
    let f = with.flow.as_ref().unwrap();
    assert!(f.retransmissions >= p.dropped.min(f.retransmissions) && f.retransmissions > 0);
    assert!(f.completion_s > without.flow.as_ref().unwrap().completion_s);
    assert!(with.complete);
}

#[test]
fn rts_cts_on_the_chain_sends_an_rts_for_every_data_frame_above_the_threshold() {
    let r = run_net(&chain("rts_threshold = 1000", "", "300KB"), 1);
    let ch = &r.channels["adhoc"];
    assert!(r.complete);
    // Data segments (1500-byte packets) go after RTS/CTS; TCP ACKs (40 bytes) do not.
    let data_frames: u64 = ["a->b", "b->c", "c->d"].iter().map(|k| ch.interfaces[*k].packets_sent).sum();
    assert!(ch.totals.rts_sent >= data_frames - 6, "{} RTS for {data_frames} data-carrying hops", ch.totals.rts_sent);
    assert!(ch.totals.cts_sent > 0 && ch.totals.cts_sent <= ch.totals.rts_sent);
    let off = run_net(&chain("", "", "300KB"), 1);
    assert_eq!(off.channels["adhoc"].totals.rts_sent, 0);
    // The handshake costs control airtime at every node.
    assert!(r.nodes["a"].energy.breakdown_j.mac_control > off.nodes["a"].energy.breakdown_j.mac_control);
}

#[test]
fn overhearing_as_idle_leaves_other_stations_frames_out_of_the_radio_energy() {
    let heard = run_net(&chain("", "", "300KB"), 4);
    let ignored = run_net(&chain("overhearing = \"idle\"", "", "300KB"), 4);
    // Same MAC and TCP behaviour: only the accounting differs.
    assert_eq!(heard.channels["adhoc"].totals, ignored.channels["adhoc"].totals);
    for n in ["a", "b", "c", "d"] {
        let (h, i) = (&heard.nodes[n].energy, &ignored.nodes[n].energy);
        assert!(h.radio_overhear_s > 0.0 && i.radio_overhear_s == 0.0);
        assert!(i.total_j < h.total_j, "{n}");
        assert!((radio_seconds(&ignored, n) - ignored.energy.window_s).abs() < 1e-6);
    }
}

#[test]
fn hidden_stations_of_a_chain_reach_each_other_only_through_the_relays() {
    // a hears only b, d only c: no route a -> d without b and c, whatever `routes` say.
    let text = chain("hears = [[\"a\", \"b\"], [\"b\", \"c\"], [\"c\", \"d\"]]", "", "300KB").replace("routes = [[\"a\", \"b\", \"c\", \"d\"], [\"d\", \"c\", \"b\", \"a\"]]\n", "");
    let r = run_net(&text, 1);
    assert!(r.complete);
    assert!(r.nodes["b"].forwarded_packets > 200 && r.nodes["c"].forwarded_packets > 200);
    assert!(!r.channels["adhoc"].interfaces.contains_key("a->d"));
    // a does not hear c or d, so it overhears only b's frames to c.
    assert!(r.nodes["a"].energy.radio_overhear_s < r.nodes["b"].energy.radio_overhear_s + r.nodes["b"].energy.radio_rx_s);
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 24,
        failure_persistence: None,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x802_11),
        ..ProptestConfig::default()
    })]

    /// Random hears graphs (connected through a spanning chain), RTS thresholds, loss and loads,
    /// ad hoc or behind an access point with power save: every run ends without a panic, every
    /// packet handed to the MAC is accounted for once, and every node's radio time sums to the
    /// window.
    #[test]
    fn random_channels_run_to_the_end_with_every_frame_and_second_accounted(
        n in 3usize..7,
        extra in proptest::collection::vec((0usize..7, 0usize..7), 0..8),
        rts in prop_oneof![Just(None), (0u32..=2347).prop_map(Some)],
        loss in 0.0f64..0.4,
        queue in 1u32..60,
        flows in proptest::collection::vec((0usize..7, 0usize..7, 50u32..1400, 1u32..40, any::<bool>()), 1..5),
        seed in 0u64..1000,
        ap in prop_oneof![Just(None), (0usize..7).prop_map(Some)],
    ) {
        let names: Vec<String> = (0..n).map(|i| format!("n{i}")).collect();
        let mut pairs: Vec<(usize, usize)> = (1..n).map(|i| (i - 1, i)).collect();
        pairs.extend(extra.into_iter().map(|(a, b)| (a % n, b % n)).filter(|(a, b)| a != b));
        let ap = ap.map(|a| a % n);
        if let Some(a) = ap {
            // Every station hears its access point.
            pairs.extend((0..n).filter(|&i| i != a).map(|i| (a, i)));
        }
        let hears: Vec<String> = pairs.iter().map(|(a, b)| format!("[\"{}\", \"{}\"]", names[*a], names[*b])).collect();
        let mut text = String::from("stop_after = \"20s\"\n");
        if ap.is_some() {
            text += "[energy]\nradio_policy = \"psm\"\n";
        }
        text += "[nodes]\n";
        for nm in &names {
            text += &format!("{nm} = {{}}\n");
        }
        let quoted: Vec<String> = names.iter().map(|x| format!("\"{x}\"")).collect();
        text += &format!(
            "[[channels]]\nname = \"c\"\nnodes = [{}]\nhears = [{}]\nqueue = {queue}\nrts_threshold = {}\nimpairments = [{{ kind = \"bernoulli\", p = {loss} }}]\n",
            quoted.join(", "),
            hears.join(", "),
            rts.map_or("\"off\"".to_string(), |t| t.to_string()),
        );
        if let Some(a) = ap {
            text += &format!("ap = \"{}\"\nbeacon_interval = \"{}ms\"\n", names[a], 20 + seed % 200);
        }
        let mut k = 0;
        for (a, b, size, rate_kbps, tcp) in flows {
            let (a, b) = (a % n, b % n);
            if a == b {
                continue;
            }
            let traffic = if tcp {
                format!("traffic = {{ kind = \"bulk\", bytes = {} }}", size * 40)
            } else {
                format!("transport = \"udp\"\ntraffic = {{ kind = \"cbr\", rate = \"{}kbps\", packet = {size} }}\nstop = \"15s\"", rate_kbps * 50)
            };
            text += &format!("[[flows]]\nname = \"f{k}\"\nfrom = \"{}\"\nto = \"{}\"\n{traffic}\n", names[a], names[b]);
            k += 1;
        }
        prop_assume!(k > 0);
        let r = run_net(&text, seed);
        let ch = &r.channels["c"];
        let window = r.energy.window_s;
        for nm in &names {
            prop_assert!((radio_seconds(&r, nm) - window).abs() < 1e-6, "{nm}: {} vs {window}", radio_seconds(&r, nm));
        }
        for (key, i) in &ch.interfaces {
            // A packet is sent when its first transmission ends, and delivered at most once after
            // that; the rest of those sent were given up on at the retry limit (some after all
            // reaching the receiver, whose MAC ACK was lost; the retry limit also drops frames
            // whose RTS never got through, never sent) or are still being retried at the end.
            prop_assert!(i.packets_delivered <= i.packets_sent, "{key}: {i:?}");
            let unaccounted = i.packets_sent as i64 - (i.packets_delivered + i.dropped_channel) as i64;
            prop_assert!(unaccounted >= -(i.dropped_channel as i64) && unaccounted <= queue as i64, "{key}: {i:?}");
            prop_assert!(i.queued <= queue as u64, "{key}: {i:?}");
        }
        prop_assert_eq!(ch.totals.drops_queue, ch.interfaces.values().map(|i| i.dropped_queue).sum::<u64>());
    }
}
