//! Packet capture of network runs (docs/capture.md): one pcap file per interface, each packet
//! between its flow's two addresses, numbered by its source and aged by every router it crossed.

use std::collections::{BTreeMap, BTreeSet};
use tcpenergy_engine::capture::wire::checksum;
use tcpenergy_engine::capture::Capture;
use tcpenergy_engine::result::network::NetRunResult;
use tcpenergy_engine::{run_captured, run_json_captured, run_network_captured, RunOptions, Scenario};

fn net(text: &str) -> Scenario {
    Scenario::from_toml(text).unwrap_or_else(|e| panic!("{e}"))
}

fn captured_network(text: &str, seed: u64) -> (NetRunResult, Capture) {
    let (r, cap) = run_network_captured(&net(text), seed, true).unwrap();
    (r, cap.expect("capture asked for"))
}

/// A pcap file's records as (nanoseconds, IPv4 packet).
fn records(file: &[u8]) -> Vec<(u64, Vec<u8>)> {
    assert_eq!(u32::from_le_bytes(file[0..4].try_into().unwrap()), 0xa1b2_3c4d, "nanosecond pcap");
    let (mut i, mut out) = (24, Vec::new());
    while i < file.len() {
        let word = |k: usize| u32::from_le_bytes(file[i + k..i + k + 4].try_into().unwrap()) as u64;
        let (len, orig) = (word(8) as usize, word(12) as usize);
        assert_eq!(len, orig, "never truncated");
        out.push((word(0) * 1_000_000_000 + word(4), file[i + 16..i + 16 + len].to_vec()));
        i += 16 + len;
    }
    out
}

fn files(cap: &Capture) -> BTreeMap<String, Vec<(u64, Vec<u8>)>> {
    cap.pcap_files().into_iter().map(|(name, bytes)| (name, records(&bytes))).collect()
}

struct Ip<'a> {
    ttl: u8,
    proto: u8,
    id: u16,
    src: [u8; 4],
    dst: [u8; 4],
    transport: &'a [u8],
}

fn ip(p: &[u8]) -> Ip<'_> {
    assert_eq!(p[0], 0x45, "IPv4 without options");
    assert_eq!(u16::from_be_bytes([p[2], p[3]]) as usize, p.len(), "total length");
    Ip {
        ttl: p[8],
        proto: p[9],
        id: u16::from_be_bytes([p[4], p[5]]),
        src: p[12..16].try_into().unwrap(),
        dst: p[16..20].try_into().unwrap(),
        transport: &p[20..],
    }
}

fn ports(t: &[u8]) -> (u16, u16) {
    (u16::from_be_bytes([t[0], t[1]]), u16::from_be_bytes([t[2], t[3]]))
}

/// The checksum over the pseudo-header and the transport segment verifies to zero
/// (RFC 9293 §3.1, RFC 768).
fn transport_checksum_verifies(p: &Ip) -> bool {
    let mut pseudo = Vec::new();
    pseudo.extend_from_slice(&p.src);
    pseudo.extend_from_slice(&p.dst);
    pseudo.extend_from_slice(&[0, p.proto]);
    pseudo.extend_from_slice(&(p.transport.len() as u16).to_be_bytes());
    pseudo.extend_from_slice(p.transport);
    checksum(0, &pseudo) == 0
}

/// The chain a - b - c - d (tests/data/chain4.toml), then `flows`.
fn chain(flows: &str) -> String {
    format!("{}\n{flows}\n", include_str!("data/chain4.toml"))
}

const MIXED_FLOWS: &str = r#"
[[flows]]
name = "bulk"
from = "a"
to = "d"
tcp = { variant = "sack", timestamps = true, window_scale = true }
traffic = { kind = "bulk", bytes = "400kB" }
[[flows]]
name = "plain"
from = "b"
to = "d"
tcp = { variant = "newreno", window_scale = false }
traffic = { kind = "bulk", bytes = "200kB" }
[[flows]]
name = "voice"
from = "d"
to = "a"
transport = "udp"
traffic = { kind = "cbr", rate = "64kbps", packet = 200 }
stop = "3s"
"#;

#[test]
fn a_two_node_networks_capture_has_the_single_path_frames() {
    let path = r#"
[path.forward]
rate = "2Mbps"
delay = "20ms"
queue = 10
impairments = [{ kind = "outage", down = "2s", every = "9s", offset = "3s" }]
[path.reverse]
rate = "2Mbps"
delay = "20ms"
[tcp]
variant = "sack"
timestamps = true
window_scale = true
[traffic]
kind = "bulk"
bytes = "3MB"
"#;
    let network = r#"
[tcp]
variant = "sack"
timestamps = true
window_scale = true
[nodes]
sender = {}
receiver = {}
[[links]]
between = ["sender", "receiver"]
rate = "2Mbps"
delay = "20ms"
forward = { queue = 10, impairments = [{ kind = "outage", down = "2s", every = "9s", offset = "3s" }] }
reverse = { queue = 100 }
[[flows]]
name = "main"
from = "sender"
to = "receiver"
traffic = { kind = "bulk", bytes = "3MB" }
"#;
    // Deterministic impairments only: random streams are named by the component
    // ("path.forward" vs "links.0.forward"), so random loss would differ.
    let (r, single) = run_captured(&net(path), 2, RunOptions { capture: true, ..Default::default() }).unwrap();
    assert!(r.path.forward.dropped_queue > 0 && r.flow.retransmissions > 0, "drops before and after the capture point");
    let (_, two_node) = captured_network(network, 2);
    let single = single.unwrap();
    // Same interfaces, frames, times, IP IDs, TTLs and segments; only the addresses differ, as
    // network nodes are numbered in name order (receiver 10.0.0.1, sender 10.0.0.2).
    for (a, b) in two_node.links.iter().zip(&single.links) {
        assert_eq!(a.name, b.name);
        assert_eq!(a.frames.len(), b.frames.len(), "{}", a.name);
        if let Some(i) = (0..a.frames.len()).find(|&i| a.frames[i] != b.frames[i]) {
            panic!("{} frame {i}: {:?} vs {:?}", a.name, a.frames[i], b.frames[i]);
        }
    }
    assert_eq!(two_node.flows[0].src.addr, [10, 0, 0, 2]);
    assert_eq!((two_node.flows[0].src.port, two_node.flows[0].dst.port), (single.flows[0].src.port, single.flows[0].dst.port));
}

#[test]
fn every_interface_file_holds_each_frame_its_link_started_serializing() {
    let (r, cap) = captured_network(&chain(MIXED_FLOWS), 1);
    assert!(r.complete);
    let files = files(&cap);
    assert_eq!(files.len(), r.links.len(), "one file per interface");
    let mut bytes = 0;
    for (key, c) in &r.links {
        let name = key.replace("->", "-");
        let frames = &files[&name];
        assert_eq!(frames.len() as u64, c.packets_sent, "{key}");
        assert!(frames.windows(2).all(|w| w[0].0 <= w[1].0), "{key}: serialization starts in order");
        bytes += frames.iter().map(|(_, p)| p.len() as u64).sum::<u64>();
    }
    assert_eq!(bytes, r.network.wire_bytes, "IP bytes in the files = bytes the links carried");
}

#[test]
fn every_packet_carries_its_flows_addresses_and_valid_checksums_rfc791_rfc9293_rfc768() {
    let (_, cap) = captured_network(&chain(MIXED_FLOWS), 1);
    let addr = |n: u8| [10, 0, 0, n]; // a, b, c, d: 10.0.0.1-4 in name order
    // (source, destination, protocol, destination port) of each flow's forward packets.
    let expected = [(addr(1), addr(4), 6, 40000), (addr(2), addr(4), 6, 40001), (addr(4), addr(1), 17, 40002)];
    let mut seen = BTreeSet::new();
    for frames in files(&cap).values() {
        for (_, p) in frames {
            let h = ip(p);
            assert_eq!(checksum(0, &p[..20]), 0, "IP header checksum");
            assert!(transport_checksum_verifies(&h), "transport checksum");
            let (sport, dport) = ports(h.transport);
            let (src, dst, port) = if sport >= 40000 { (h.src, h.dst, sport) } else { (h.dst, h.src, dport) };
            assert!(expected.contains(&(src, dst, h.proto, port)), "{src:?} -> {dst:?} port {port}");
            if h.proto == 17 {
                assert_eq!(u16::from_be_bytes([h.transport[4], h.transport[5]]) as usize, h.transport.len(), "UDP length");
                assert_eq!(h.transport.len(), 8 + 200);
            }
            seen.insert(port);
        }
    }
    assert_eq!(seen.len(), 3, "every flow was captured");
}

#[test]
fn routers_take_one_off_the_ttl_and_keep_the_sources_ip_id_rfc791_s3_2() {
    let (r, cap) = captured_network(&chain(MIXED_FLOWS), 1);
    let files = files(&cap);
    // The bulk flow's data (a -> d) on each hop: TTL 64, 63, 62.
    let data_of = |file: &str| -> BTreeMap<u16, (u8, Vec<u8>)> {
        files[file]
            .iter()
            .map(|(_, p)| ip(p))
            .filter(|h| h.src == [10, 0, 0, 1] && h.proto == 6)
            .map(|h| (h.id, (h.ttl, h.transport.to_vec())))
            .collect()
    };
    let (first, second, third) = (data_of("a-b"), data_of("b-c"), data_of("c-d"));
    assert_eq!(first.len() as u64, r.links["a->b"].packets_sent, "a's IDs are unique");
    for (hop, ttl) in [(&first, 64), (&second, 63), (&third, 62)] {
        assert!(!hop.is_empty() && hop.values().all(|(t, _)| *t == ttl), "TTL {ttl}");
    }
    for (id, (_, segment)) in &third {
        assert_eq!(&first[id].1, segment, "packet {id} crossed two routers unchanged above IP");
    }
    // a numbers its own packets 1, 2, 3, ... (it has one interface and sends only its own).
    assert_eq!(first.keys().copied().collect::<Vec<_>>(), (1..=first.len() as u16).collect::<Vec<_>>());
}

#[test]
fn window_scaling_is_in_effect_per_flow_when_both_its_syns_carry_it_rfc7323_s2_2() {
    let (_, cap) = captured_network(&chain(MIXED_FLOWS), 1);
    assert!(cap.window_shift(0, true).is_some() && cap.window_shift(0, false).is_some(), "bulk: both ends scale");
    assert_eq!((cap.window_shift(1, true), cap.window_shift(1, false)), (None, None), "plain: no scaling");
    assert_eq!(cap.window_shift(2, true), None, "UDP has no window");
}

#[test]
fn capturing_leaves_the_network_record_unchanged() {
    let s = net(&chain(MIXED_FLOWS));
    let plain = tcpenergy_engine::run_json(&s, 3, RunOptions::default()).unwrap();
    let (captured, cap) = run_json_captured(&s, 3, RunOptions { capture: true, ..Default::default() }).unwrap();
    assert_eq!(plain, captured);
    assert!(cap.is_some());
    assert!(run_json_captured(&s, 3, RunOptions::default()).unwrap().1.is_none());
}

#[test]
fn interfaces_whose_node_names_would_share_a_file_name_get_distinct_files() {
    let text = r#"
[nodes]
a-b = {}
c = {}
a = {}
b-c = {}
[[links]]
between = ["a-b", "c"]
rate = "10Mbps"
delay = "1ms"
[[links]]
between = ["a", "b-c"]
rate = "10Mbps"
delay = "1ms"
[[flows]]
name = "one"
from = "a"
to = "b-c"
traffic = { kind = "bulk", bytes = "10kB" }
[[flows]]
name = "two"
from = "a-b"
to = "c"
traffic = { kind = "bulk", bytes = "10kB" }
"#;
    let (_, cap) = captured_network(text, 1);
    let names: BTreeSet<String> = cap.pcap_files().into_iter().map(|(n, _)| n).collect();
    assert_eq!(names.len(), 4, "{names:?}");
}

#[test]
fn channel_pairs_that_never_exchange_a_frame_get_no_file() {
    // Four stations in one collision domain relay a -> b -> c -> d: every ordered pair that
    // hears each other is an interface (docs/models/wifi.md, Interfaces), but only neighbours on
    // the route send frames, so a-c, a-d, b-d and their reverses carry nothing; the record
    // leaves them out of `interfaces`, and the capture writes no file for them.
    let text = include_str!("data/wifi-relay4.toml");
    let (r, cap) = captured_network(text, 1);
    assert!(r.complete);
    assert_eq!(cap.links.len(), 12, "every ordered pair of the four stations is an interface");
    let silent: BTreeSet<&str> = cap.links.iter().filter(|l| l.frames.is_empty()).map(|l| l.name.as_str()).collect();
    assert_eq!(silent, BTreeSet::from(["a-c", "a-d", "b-d", "c-a", "d-a", "d-b"]));
    // The record lists the pairs that sent frames; each has its file with those frames.
    let interfaces = &r.channels["adhoc"].interfaces;
    let talking: BTreeSet<String> = interfaces.iter().filter(|(_, i)| i.packets_sent > 0).map(|(k, _)| k.replace("->", "-")).collect();
    let files = files(&cap);
    assert_eq!(files.keys().cloned().collect::<BTreeSet<_>>(), talking, "a file for each pair that sent a frame, no other");
    assert_eq!(files.len(), 6);
    for (key, i) in interfaces.iter().filter(|(_, i)| i.packets_sent > 0) {
        assert_eq!(files[&key.replace("->", "-")].len() as u64, i.packets_sent, "{key}");
    }
}
