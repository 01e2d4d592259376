//! The pcap file format with nanosecond timestamps (magic 0xa1b23c4d) and raw IPv4 frames
//! (LINKTYPE_RAW, 101): no link-layer header, each record is one IP packet.

use super::{wire, Contents, FlowAddresses, LinkCapture};
use std::collections::HashMap;

/// Nanosecond-resolution pcap magic, written in the file's byte order (little-endian here).
pub const MAGIC_NANOS: u32 = 0xa1b2_3c4d;
/// LINKTYPE_RAW: the packet begins with an IPv4 or IPv6 header.
pub const LINKTYPE_RAW: u32 = 101;
/// LINKTYPE_USER0, the first of the link types reserved for private use: here each record is one
/// E2TCP packet with its compact header (seed 001 §2.3), which replaces the IP header.
pub const LINKTYPE_E2TCP: u32 = 147;
/// Largest packet the file declares it may hold (IPv4 total length is 16 bits).
pub const SNAPLEN: u32 = 65_535;

/// Global header: magic, version 2.4, zone 0, sigfigs 0, snaplen, LINKTYPE_RAW.
pub fn header(out: &mut Vec<u8>) {
    header_of(out, LINKTYPE_RAW);
}

/// Global header with link type `linktype`.
pub fn header_of(out: &mut Vec<u8>, linktype: u32) {
    out.extend_from_slice(&MAGIC_NANOS.to_le_bytes());
    out.extend_from_slice(&2u16.to_le_bytes());
    out.extend_from_slice(&4u16.to_le_bytes());
    out.extend_from_slice(&0i32.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&SNAPLEN.to_le_bytes());
    out.extend_from_slice(&linktype.to_le_bytes());
}

/// One record: seconds, nanoseconds, captured and original length, then the packet.
pub fn record(out: &mut Vec<u8>, at_ns: u64, packet: &[u8]) {
    out.extend_from_slice(&((at_ns / 1_000_000_000) as u32).to_le_bytes());
    out.extend_from_slice(&((at_ns % 1_000_000_000) as u32).to_le_bytes());
    out.extend_from_slice(&(packet.len() as u32).to_le_bytes());
    out.extend_from_slice(&(packet.len() as u32).to_le_bytes());
    out.extend_from_slice(packet);
}

/// Whether a frame travels with E2TCP's compact header rather than inside IP.
pub fn is_compact(c: &Contents) -> bool {
    matches!(c, Contents::Tcp(seg) if seg.compact)
}

/// The whole file of one interface: each frame as an IPv4 packet between its flow's addresses,
/// TCP windows shifted by the sending end's scale (`shifts`, from `Capture::window_shifts`).
/// Compact E2TCP frames are left to [`e2tcp_file`].
pub fn file(link: &LinkCapture, flows: &[FlowAddresses], shifts: &HashMap<(u32, bool), u8>) -> Vec<u8> {
    let bytes: usize = link.frames.iter().map(|f| 16 + wire::len(&f.contents) as usize).sum();
    let mut out = Vec::with_capacity(24 + bytes);
    header(&mut out);
    for f in link.frames.iter().filter(|f| !is_compact(&f.contents)) {
        let (src, dst) = flows[f.flow as usize].of(f.from_src);
        let p = match &f.contents {
            Contents::Tcp(seg) => wire::packet(seg, src, dst, f.ip_id, f.ttl, shifts.get(&(f.flow, f.from_src)).copied()),
            Contents::Udp { payload } => wire::datagram(*payload, src, dst, f.ip_id, f.ttl),
        };
        record(&mut out, f.at.0, &p);
    }
    out
}

/// The compact E2TCP frames of one interface (LINKTYPE_E2TCP). `mss` gives each flow end's
/// packet size, which maps byte offsets to packet numbers; the connection identifier is the
/// flow's index modulo 256.
pub fn e2tcp_file(link: &LinkCapture, flows: &[FlowAddresses], mss: &HashMap<(u32, bool), u32>) -> Vec<u8> {
    let mut out = Vec::new();
    header_of(&mut out, LINKTYPE_E2TCP);
    for f in &link.frames {
        if let Contents::Tcp(seg) = &f.contents {
            if seg.compact {
                let (src, dst) = flows[f.flow as usize].of(f.from_src);
                let size = |side: bool| mss.get(&(f.flow, side)).copied().unwrap_or(1);
                let ends = (src.addr, src.port, dst.addr, dst.port);
                let p = crate::tcp::e2tcp::header::encode(seg, f.flow as u8, size(f.from_src), size(!f.from_src), ends);
                record(&mut out, f.at.0, &p);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::Capture;
    use crate::tcp::segment::{Flags, Segment};
    use crate::units::SimTime;

    #[test]
    fn file_has_nanosecond_header_and_one_record_per_frame() {
        let mut c = Capture::single_path(2);
        let seg = Segment::new(1, 1, 100, Flags::ACK, 65_535);
        c.record(0, SimTime(1_500_000_123), seg);
        c.record(0, SimTime(2_000_000_000), seg);
        let f = file(&c.links[0], &c.flows, &HashMap::new());
        assert_eq!(u32::from_le_bytes(f[0..4].try_into().unwrap()), MAGIC_NANOS);
        assert_eq!(u32::from_le_bytes(f[20..24].try_into().unwrap()), LINKTYPE_RAW);
        assert_eq!(f.len(), 24 + 2 * (16 + 140));
        assert_eq!(u32::from_le_bytes(f[24..28].try_into().unwrap()), 1, "seconds");
        assert_eq!(u32::from_le_bytes(f[28..32].try_into().unwrap()), 500_000_123, "nanoseconds");
        // IP identification of the second packet (RFC 791 §3.1), bytes 4-5 of its IP header.
        let second = 24 + 16 + 140 + 16;
        assert_eq!(u16::from_be_bytes([f[second + 4], f[second + 5]]), 2);
    }
}
