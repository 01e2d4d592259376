//! Packet capture: every frame a link starts serializing, kept per link so that each link can be
//! written as one pcap file (docs/capture.md).
//!
//! The capture point is the start of serialization on the sending interface: a frame the queue
//! drops never reaches it, a frame later lost on the channel has already passed it.

pub mod pcap;
pub mod wire;

use crate::tcp::segment::Segment;
use crate::units::SimTime;

/// One frame as the link started serializing it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame {
    /// Start of serialization.
    pub at: SimTime,
    /// The segment with the IP ECN field it carries on this link (CE if the queue marked it).
    pub seg: Segment,
}

/// One sending interface's frames on one link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkCapture {
    /// File stem, named by the link: "sender-receiver".
    pub name: String,
    /// IPv4 address and TCP port of the sending and receiving endpoint.
    pub src: Endpoint,
    pub dst: Endpoint,
    /// The link carrying the opposite direction of the same connection; its SYN tells whether
    /// the peer agreed to window scaling.
    pub reverse: usize,
    pub frames: Vec<Frame>,
}

/// Address and port of one end of the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Endpoint {
    pub addr: [u8; 4],
    pub port: u16,
}

/// Every link's frames of one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capture {
    pub links: Vec<LinkCapture>,
}

/// Addresses and ports of today's single connection.
pub const SENDER_ENDPOINT: Endpoint = Endpoint { addr: [10, 0, 0, 1], port: 40000 };
pub const RECEIVER_ENDPOINT: Endpoint = Endpoint { addr: [10, 0, 0, 2], port: 5001 };

impl Capture {
    /// The two links of the single-path topology: 0 sender -> receiver, 1 receiver -> sender.
    pub fn single_path(expected_frames: usize) -> Self {
        let link = |name: &str, src, dst, reverse| LinkCapture {
            name: name.to_string(),
            src,
            dst,
            reverse,
            frames: Vec::with_capacity(expected_frames),
        };
        Self {
            links: vec![
                link("sender-receiver", SENDER_ENDPOINT, RECEIVER_ENDPOINT, 1),
                link("receiver-sender", RECEIVER_ENDPOINT, SENDER_ENDPOINT, 0),
            ],
        }
    }

    #[inline]
    pub fn record(&mut self, link: usize, at: SimTime, seg: Segment) {
        self.links[link].frames.push(Frame { at, seg });
    }

    /// The shift by which link `i`'s sender divides its window field, `None` when window scaling
    /// is not in effect: RFC 7323 §2.2, both SYNs must carry the option.
    pub fn window_shift(&self, i: usize) -> Option<u8> {
        let announced = |l: &LinkCapture| l.frames.iter().find_map(|f| f.seg.syn).and_then(|s| s.window_scale);
        let own = announced(&self.links[i])?;
        announced(&self.links[self.links[i].reverse])?;
        Some(own)
    }

    /// Each link's pcap file: (file stem, bytes).
    pub fn pcap_files(&self) -> Vec<(String, Vec<u8>)> {
        (0..self.links.len())
            .map(|i| (self.links[i].name.clone(), pcap::file(&self.links[i], self.window_shift(i))))
            .collect()
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
                    let p = super::wire::packet(&f.seg, link.src, link.dst, 0, cap.window_shift(i));
                    assert_eq!(p.len() as u32, f.seg.wire_len());
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
        assert!(cap.unwrap().window_shift(0).is_some());
        let off = Scenario::from_json(&s.to_json(), &[("tcp.window_scale".into(), "false".into())]).unwrap();
        let (_, cap) = run_captured(&off, 1, RunOptions { capture: true, ..Default::default() }).unwrap();
        assert_eq!(cap.unwrap().window_shift(0), None);
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
