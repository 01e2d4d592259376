//! Properties of random networks: every packet sent is delivered, dropped (with its reason
//! counted) or still on a link at the end; a bulk flow that completes delivered every byte; the
//! same seed gives the same record; and no network makes the engine panic.

use proptest::prelude::*;
use tcpenergy_engine::{run_network, Scenario};

#[derive(Debug, Clone)]
struct RandomNet {
    nodes: usize,
    /// Extra links beyond the spanning chain, as (a, b) node indices.
    extra: Vec<(usize, usize)>,
    /// Per link direction: an impairment table or "".
    impair: Vec<String>,
    flows: Vec<(usize, usize, String, Option<(u64, u64)>)>,
    oneway_last: bool,
}

fn impairment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        (0.0..0.1f64).prop_map(|p| format!(r#"impairments = [{{kind="bernoulli", p={p}}}]"#)),
        (0.0..0.1f64, 1..30u64).prop_map(|(f, d)| format!(r#"impairments = [{{kind="reorder", fraction={f}, extra_delay="{d}ms"}}]"#)),
        (1..3u64, 5..11u64).prop_map(|(down, every)| format!(r#"impairments = [{{kind="outage", down="{down}s", every="{every}s"}}]"#)),
        (1..5u32).prop_map(|q| format!("queue = {q}")),
    ]
}

fn traffic() -> impl Strategy<Value = String> {
    prop_oneof![
        (10..200u64).prop_map(|kb| format!(r#"traffic = {{ kind = "bulk", bytes = "{kb}kB" }}"#)),
        (1..20u64).prop_map(|s| format!(r#"traffic = {{ kind = "timed", duration = "{s}s" }}"#)),
        (100..1400u32, 20..500u64).prop_map(|(m, i)| format!(r#"traffic = {{ kind = "on_off", message = {m}, interval = "{i}ms" }}"#)),
        (100..1400u32, 10..500u64).prop_map(|(p, r)| format!(r#"transport = "udp"
traffic = {{ kind = "cbr", rate = "{r}kbps", packet = {p} }}"#)),
        (100..1400u32, 10..500u64).prop_map(|(p, r)| format!(r#"traffic = {{ kind = "cbr", rate = "{r}kbps", packet = {p} }}"#)),
    ]
}

fn random_net() -> impl Strategy<Value = RandomNet> {
    (2..7usize).prop_flat_map(|n| {
        let extra = prop::collection::vec((0..n, 0..n), 0..3);
        let impair = prop::collection::vec(impairment(), 2 * (n - 1) + 6);
        let flow = (0..n, 0..n, traffic(), prop::option::of((0..5u64, 1..30u64)));
        let flows = prop::collection::vec(flow, 1..5);
        (Just(n), extra, impair, flows, any::<bool>())
            .prop_map(|(nodes, extra, impair, flows, oneway_last)| RandomNet { nodes, extra, impair, flows, oneway_last })
    })
}

impl RandomNet {
    fn toml(&self) -> String {
        let mut t = String::from("stop_after = \"60s\"\n[tcp]\nvariant = \"sack\"\n[nodes]\n");
        for i in 0..self.nodes {
            t += &format!("n{i} = {{}}\n");
        }
        let mut pairs: Vec<(usize, usize)> = (1..self.nodes).map(|i| (i - 1, i)).collect();
        for &(a, b) in &self.extra {
            if a != b && !pairs.iter().any(|&(x, y)| (x, y) == (a, b) || (x, y) == (b, a)) {
                pairs.push((a, b));
            }
        }
        let last = pairs.len() - 1;
        for (k, (a, b)) in pairs.iter().enumerate() {
            // A one-way extra link is only safe when the chain keeps every node reachable both ways.
            let oneway = self.oneway_last && k == last && k >= self.nodes - 1;
            t += &format!("[[links]]\nbetween = [\"n{a}\", \"n{b}\"]\nrate = \"5Mbps\"\ndelay = \"2ms\"\n");
            if oneway {
                t += "oneway = true\n";
            }
            t += &format!("forward = {{ {} }}\n", self.impair[(2 * k) % self.impair.len()]);
            if !oneway {
                t += &format!("reverse = {{ {} }}\n", self.impair[(2 * k + 1) % self.impair.len()]);
            }
        }
        let mut any = false;
        for (i, (a, b, traffic, window)) in self.flows.iter().enumerate() {
            if a == b {
                continue;
            }
            any = true;
            t += &format!("[[flows]]\nname = \"f{i}\"\nfrom = \"n{a}\"\nto = \"n{b}\"\n{traffic}\n");
            if let Some((start, len)) = window {
                t += &format!("start = \"{start}s\"\nstop = \"{}s\"\n", start + len);
            }
        }
        if !any {
            t += "[[flows]]\nname = \"f\"\nfrom = \"n0\"\nto = \"n1\"\ntraffic = { kind = \"bulk\", bytes = \"10kB\" }\n";
        }
        t
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn every_packet_is_delivered_dropped_or_in_flight_in_random_networks(net in random_net(), seed in 1..1000u64) {
        let text = net.toml();
        let s = Scenario::from_toml(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        let r = run_network(&s, seed).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        let links = r.links.values();
        let sent: u64 = links.clone().map(|l| l.packets_sent).sum();
        let delivered: u64 = links.clone().map(|l| l.packets_delivered).sum();
        // A packet handed to a link is dropped by its queue, still queued at the end, or sent; a
        // sent packet is lost on the channel, delivered, or still propagating.
        for (name, l) in &r.links {
            prop_assert!(l.packets_sent >= l.packets_delivered + l.dropped_channel, "link {}: {:?}", name, l);
        }
        let handed: u64 = links.clone().map(|l| l.packets_sent + l.queued + l.dropped_queue + l.dropped_red).sum();
        let originated: u64 = r.nodes.values().map(|n| n.originated_packets).sum();
        let forwarded: u64 = r.nodes.values().map(|n| n.forwarded_packets).sum();
        let received: u64 = r.nodes.values().map(|n| n.received_packets).sum();
        prop_assert!(sent <= handed);
        prop_assert_eq!(handed, originated + forwarded, "packets handed to links");
        prop_assert_eq!(delivered, received + forwarded, "packets that crossed a link arrived at a relay or an end");
        for (cfg, f) in s.network().unwrap().flows.iter().zip(&r.flows) {
            if let tcpenergy_engine::config::FlowTraffic::Bulk { bytes } = cfg.traffic {
                if f.complete {
                    prop_assert_eq!(f.flow.bytes_delivered, bytes, "flow {}", &f.name);
                }
                prop_assert!(f.flow.bytes_delivered <= bytes);
            }
            prop_assert!(f.messages_delivered <= f.messages_sent);
        }
        let again = run_network(&s, seed).unwrap();
        prop_assert_eq!(r.to_json(), again.to_json());
    }
}
