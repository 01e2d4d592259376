//! Packet capture: every frame an interface starts serializing, kept per interface so that each
//! can be written as one pcap file (docs/capture.md).
//!
//! The capture point is the start of serialization on the sending interface: a frame the queue
//! drops never reaches it, a frame later lost on the channel has already passed it. A frame
//! names its flow and direction; the flow's two addresses and ports come from `Capture::flows`,
//! so one interface's file can hold the packets of many flows.

pub mod pcap;
pub mod wire;

use crate::tcp::segment::Segment;
use crate::units::SimTime;
use std::collections::HashMap;

/// Time to live a packet leaves its source with; each router that forwards it takes one off.
pub const TTL: u8 = 64;

/// What a frame carries above IP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Contents {
    /// A TCP segment, with the IP ECN field it carries on this link (CE if a queue marked it).
    Tcp(Segment),
    /// A UDP datagram with this many payload bytes.
    Udp { payload: u32 },
}

/// One frame as an interface started serializing it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame {
    /// Start of serialization.
    pub at: SimTime,
    /// Index into `Capture::flows`.
    pub flow: u32,
    /// Sent by the flow's source end (else by its destination end).
    pub from_src: bool,
    /// IPv4 identification, set by the node that sent the packet first and kept by routers.
    pub ip_id: u16,
    pub ttl: u8,
    pub contents: Contents,
}

/// One sending interface's frames.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkCapture {
    /// File stem, named by the interface's two nodes: "a-b".
    pub name: String,
    pub frames: Vec<Frame>,
}

/// Address and port of one end of a flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Endpoint {
    pub addr: [u8; 4],
    pub port: u16,
}

/// The addresses of a flow's source (`from`) and destination (`to`) ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowAddresses {
    pub src: Endpoint,
    pub dst: Endpoint,
}

impl FlowAddresses {
    /// (source, destination) of a packet sent by the flow's source end or by its destination end.
    pub fn of(&self, from_src: bool) -> (Endpoint, Endpoint) {
        if from_src {
            (self.src, self.dst)
        } else {
            (self.dst, self.src)
        }
    }
}

/// Every interface's frames of one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capture {
    pub flows: Vec<FlowAddresses>,
    pub links: Vec<LinkCapture>,
    /// Each node's own view, as a capture taken at the node would show it: the packets that
    /// reached it as their destination, stamped when they arrived, here; with the packets it
    /// sent (its interfaces' frames that it originated) in [`Capture::node_pcap_files`].
    /// `tcpenergy analyze` meters such a capture.
    pub nodes: Vec<LinkCapture>,
    /// The node each interface leaves.
    pub link_from: Vec<usize>,
}

/// Addresses and ports of the single-path connection (nodes 0 and 1 of a network, flow 0).
pub const SENDER_ENDPOINT: Endpoint = Endpoint { addr: node_address(0), port: source_port(0) };
pub const RECEIVER_ENDPOINT: Endpoint = Endpoint { addr: node_address(1), port: DESTINATION_PORT };

/// Node `i` has address 10.0.0.0 + i + 1: 10.0.0.1, 10.0.0.2, ... (RFC 1918 private space;
/// unique for 2^24 - 2 nodes). A network's nodes are numbered in name order, as the record
/// lists them; the single path's sender is 10.0.0.1.
pub const fn node_address(i: usize) -> [u8; 4] {
    let a = (10u32 << 24) + (i as u32 + 1);
    a.to_be_bytes()
}

/// Every flow's destination listens on one port (as iperf does); sources differ by port.
pub const DESTINATION_PORT: u16 = 5001;
const FIRST_SOURCE_PORT: u16 = 40_000;
/// Flow `k` sends from port 40000 + k (modulo 25,536, staying in 40000-65535).
pub const fn source_port(k: usize) -> u16 {
    FIRST_SOURCE_PORT + (k % (u16::MAX as usize + 1 - FIRST_SOURCE_PORT as usize)) as u16
}

impl Capture {
    /// The two interfaces of the single-path topology: 0 sender -> receiver, 1 receiver -> sender.
    pub fn single_path(expected_frames: usize) -> Self {
        let link = |name: &str| LinkCapture { name: name.to_string(), frames: Vec::with_capacity(expected_frames) };
        Self {
            flows: vec![FlowAddresses { src: SENDER_ENDPOINT, dst: RECEIVER_ENDPOINT }],
            links: vec![link("sender-receiver"), link("receiver-sender")],
            nodes: Vec::new(),
            link_from: vec![0, 1],
        }
    }

    /// A network's interfaces, each named by its (from, to) nodes, and `flows` (source node,
    /// destination node) in file order.
    pub fn network(node_names: &[&str], ifaces: &[(usize, usize)], flows: &[(usize, usize)]) -> Self {
        let mut taken = std::collections::HashSet::new();
        let links = ifaces
            .iter()
            .enumerate()
            .map(|(i, &(a, b))| {
                // Node names may hold '-', so two interfaces could share a stem ("a-b"+"c" and
                // "a"+"b-c"): the later one gets its interface number.
                let mut name = format!("{}-{}", node_names[a], node_names[b]);
                if !taken.insert(name.clone()) {
                    name = format!("{name}.{i}");
                    taken.insert(name.clone());
                }
                LinkCapture { name, frames: Vec::new() }
            })
            .collect();
        let flows = flows
            .iter()
            .enumerate()
            .map(|(k, &(a, b))| FlowAddresses {
                src: Endpoint { addr: node_address(a), port: source_port(k) },
                dst: Endpoint { addr: node_address(b), port: DESTINATION_PORT },
            })
            .collect();
        let nodes = node_names.iter().map(|n| LinkCapture { name: n.to_string(), frames: Vec::new() }).collect();
        Self { flows, links, nodes, link_from: ifaces.iter().map(|&(a, _)| a).collect() }
    }

    /// A segment of the single-path connection on interface `link`: the IP identification counts
    /// the interface's packets from 1 (each of its nodes has that one interface).
    #[inline]
    pub fn record(&mut self, link: usize, at: SimTime, seg: Segment) {
        let frames = &mut self.links[link].frames;
        let ip_id = (frames.len() as u16).wrapping_add(1);
        frames.push(Frame { at, flow: 0, from_src: link == 0, ip_id, ttl: TTL, contents: Contents::Tcp(seg) });
    }

    #[inline]
    pub fn push(&mut self, link: usize, frame: Frame) {
        self.links[link].frames.push(frame);
    }

    /// A frame that reached node `node`, its destination, as it arrived.
    #[inline]
    pub fn push_arrival(&mut self, node: usize, frame: Frame) {
        self.nodes[node].frames.push(frame);
    }

    /// The shift by which each TCP flow end divides its window field, keyed (flow, from_src);
    /// absent when window scaling is not in effect for that end: RFC 7323 §2.2, both SYNs must
    /// carry the option. A flow's SYNs are found on whichever interfaces carried them.
    pub fn window_shifts(&self) -> HashMap<(u32, bool), u8> {
        let mut announced: HashMap<(u32, bool), Option<u8>> = HashMap::new();
        for f in self.links.iter().flat_map(|l| &l.frames) {
            if let Contents::Tcp(seg) = &f.contents {
                if let Some(syn) = seg.syn {
                    announced.entry((f.flow, f.from_src)).or_insert(syn.window_scale);
                }
            }
        }
        announced
            .iter()
            .filter_map(|(&(flow, side), &own)| {
                let peer = announced.get(&(flow, !side)).copied().flatten();
                own.zip(peer).map(|(shift, _)| ((flow, side), shift))
            })
            .collect()
    }

    /// The shift of flow `flow`'s end (`from_src`), `None` without window scaling.
    pub fn window_shift(&self, flow: u32, from_src: bool) -> Option<u8> {
        self.window_shifts().get(&(flow, from_src)).copied()
    }

    /// Each interface's pcap files, (file stem, bytes), none of them empty (docs/capture.md):
    /// "<stem>" holds the IP packets, "<stem>.e2tcp" the E2TCP packets with compact headers.
    /// An interface that sent no packet of a kind gets no file of it: every ordered pair of an
    /// 802.11 channel's stations is an interface, and most pairs of a larger channel never
    /// exchange a frame.
    pub fn pcap_files(&self) -> Vec<(String, Vec<u8>)> {
        let shifts = self.window_shifts();
        let mss = self.e2tcp_packet_sizes();
        let mut files = Vec::with_capacity(self.links.len());
        for l in &self.links {
            let compact = l.frames.iter().filter(|f| pcap::is_compact(&f.contents)).count();
            if compact < l.frames.len() {
                files.push((l.name.clone(), pcap::file(l, &self.flows, &shifts)));
            }
            if compact > 0 {
                files.push((format!("{}.e2tcp", l.name), pcap::e2tcp_file(l, &self.flows, &mss)));
            }
        }
        files
    }

    /// Each node's view as a pcap file named by the node, in time order: the frames it sent as
    /// their source (those of its interfaces' files), then stamped as they began on the wire,
    /// and those that reached it, stamped as they arrived. A node that sent and received nothing
    /// gets none. E2TCP's compact frames are left out (they are not IP).
    pub fn node_pcap_files(&self) -> Vec<(String, Vec<u8>)> {
        let shifts = self.window_shifts();
        let mut out = Vec::new();
        for (n, node) in self.nodes.iter().enumerate() {
            let sent = self.links.iter().zip(&self.link_from).filter(|(_, &from)| from == n).flat_map(|(l, _)| &l.frames).filter(|f| f.ttl == TTL);
            let mut frames: Vec<Frame> = sent.chain(&node.frames).filter(|f| !pcap::is_compact(&f.contents)).copied().collect();
            if frames.is_empty() {
                continue;
            }
            frames.sort_by_key(|f| f.at);
            out.push((node.name.clone(), pcap::file(&LinkCapture { name: node.name.clone(), frames }, &self.flows, &shifts)));
        }
        out
    }

    /// Each E2TCP flow end's packet size: the largest payload it sent (every packet but the
    /// last is that long), which numbers its packets.
    fn e2tcp_packet_sizes(&self) -> HashMap<(u32, bool), u32> {
        let mut sizes: HashMap<(u32, bool), u32> = HashMap::new();
        for f in self.links.iter().flat_map(|l| &l.frames) {
            if let Contents::Tcp(seg) = &f.contents {
                if seg.compact {
                    let e = sizes.entry((f.flow, f.from_src)).or_insert(1);
                    *e = (*e).max(seg.len);
                }
            }
        }
        sizes
    }
}

#[cfg(test)]
mod tests {
    use crate::sim::{run, run_captured, RunOptions};
    use crate::Scenario;

    const LOSSY: &str = r#"
name = "lossy"
[path.forward]
rate = "2Mbps"
delay = "20ms"
queue = 1000
impairments = [{ kind = "bernoulli", p = 0.05 }]
[path.reverse]
rate = "2Mbps"
delay = "20ms"
queue = 1000
[tcp]
variant = "sack"
timestamps = true
window_scale = true
[traffic]
kind = "bulk"
bytes = "300kB"
"#;

    fn ip_total_len(p: &[u8]) -> u64 {
        u16::from_be_bytes([p[2], p[3]]) as u64
    }

    #[test]
    fn captured_ip_lengths_sum_to_the_wire_bytes_each_side_was_charged_rfc791_s3_1() {
        let s = Scenario::from_toml(LOSSY).unwrap();
        let (r, cap) = run_captured(&s, 3, RunOptions { capture: true, ..Default::default() }).unwrap();
        let cap = cap.expect("capture asked for");
        assert_eq!(r.path.forward.dropped_queue + r.path.reverse.dropped_queue, 0, "every frame reaches its link");
        assert!(r.path.forward.dropped_channel > 0, "some captured frames are lost afterwards");
        for (i, charged) in [(0, r.flow.wire_bytes_sender), (1, r.flow.wire_bytes_receiver)] {
            let link = &cap.links[i];
            let sum: u64 = link
                .frames
                .iter()
                .map(|f| {
                    let super::Contents::Tcp(seg) = f.contents else { panic!("single path is TCP") };
                    let (src, dst) = cap.flows[0].of(f.from_src);
                    let p = super::wire::packet(&seg, src, dst, 0, f.ttl, cap.window_shift(0, f.from_src));
                    assert_eq!(p.len() as u32, seg.wire_len());
                    ip_total_len(&p)
                })
                .sum();
            assert_eq!(sum, charged, "link {}", link.name);
        }
        let fwd = &cap.links[0].frames;
        assert_eq!(fwd.len() as u64, r.path.forward.packets_sent);
        assert!(fwd.windows(2).all(|w| w[0].at <= w[1].at), "serialization starts in order");
    }

    #[test]
    fn window_scaling_applies_only_when_both_syns_carry_the_option_rfc7323_s2_2() {
        let s = Scenario::from_toml(LOSSY).unwrap();
        let (_, cap) = run_captured(&s, 1, RunOptions { capture: true, ..Default::default() }).unwrap();
        assert!(cap.unwrap().window_shift(0, true).is_some());
        let off = Scenario::from_json(&s.to_json(), &[("tcp.window_scale".into(), "false".into())]).unwrap();
        let (_, cap) = run_captured(&off, 1, RunOptions { capture: true, ..Default::default() }).unwrap();
        assert_eq!(cap.unwrap().window_shift(0, true), None);
    }

    #[test]
    fn data_segments_echo_the_receivers_latest_timestamp_rfc7323_s4_3() {
        let s = Scenario::from_toml(LOSSY).unwrap();
        let (_, cap) = run_captured(&s, 3, RunOptions { capture: true, ..Default::default() }).unwrap();
        let cap = cap.unwrap();
        let stamps = |link: usize| -> Vec<(u64, u32, u32, u32)> {
            cap.links[link]
                .frames
                .iter()
                .filter_map(|f| match f.contents {
                    super::Contents::Tcp(seg) => seg.ts.map(|t| (f.at.0, seg.len, t.val, t.ecr)),
                    _ => None,
                })
                .collect()
        };
        let (data, acks) = (stamps(0), stamps(1));
        let echoed: Vec<u32> = data.iter().filter(|d| d.1 > 0).map(|d| d.3).collect();
        assert!(echoed.windows(2).all(|w| w[0] <= w[1]), "TS.Recent never goes back");
        assert!(echoed.last() > echoed.first(), "the echo follows the receiver's clock, not its SYN-ACK");
        for d in data.iter().filter(|d| d.1 > 0) {
            // Each echo is the TSval of an ACK the receiver sent before this segment left.
            assert!(acks.iter().any(|a| a.2 == d.3 && a.0 <= d.0), "echo {} at {} ns", d.3, d.0);
        }
    }

    #[test]
    fn capturing_leaves_the_result_record_unchanged() {
        let s = Scenario::from_toml(LOSSY).unwrap();
        let plain = run(&s, 2, RunOptions::default()).unwrap();
        let (captured, cap) = run_captured(&s, 2, RunOptions { capture: true, ..Default::default() }).unwrap();
        assert_eq!(plain.to_json(), captured.to_json());
        assert!(cap.is_some());
        assert!(run_captured(&s, 2, RunOptions::default()).unwrap().1.is_none());
    }
}
