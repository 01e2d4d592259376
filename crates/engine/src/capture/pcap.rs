//! The pcap file format with nanosecond timestamps (magic 0xa1b23c4d) and raw IPv4 frames
//! (LINKTYPE_RAW, 101): no link-layer header, each record is one IP packet.

use super::{wire, Contents, FlowAddresses, LinkCapture};
use std::collections::HashMap;

/// Nanosecond-resolution pcap magic, written in the file's byte order (little-endian here).
pub const MAGIC_NANOS: u32 = 0xa1b2_3c4d;
/// LINKTYPE_RAW: the packet begins with an IPv4 or IPv6 header.
pub const LINKTYPE_RAW: u32 = 101;
/// Largest packet the file declares it may hold (IPv4 total length is 16 bits).
pub const SNAPLEN: u32 = 65_535;

/// Global header: magic, version 2.4, zone 0, sigfigs 0, snaplen, link type.
pub fn header(out: &mut Vec<u8>) {
    out.extend_from_slice(&MAGIC_NANOS.to_le_bytes());
    out.extend_from_slice(&2u16.to_le_bytes());
    out.extend_from_slice(&4u16.to_le_bytes());
    out.extend_from_slice(&0i32.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&SNAPLEN.to_le_bytes());
    out.extend_from_slice(&LINKTYPE_RAW.to_le_bytes());
}

/// One record: seconds, nanoseconds, captured and original length, then the packet.
pub fn record(out: &mut Vec<u8>, at_ns: u64, packet: &[u8]) {
    out.extend_from_slice(&((at_ns / 1_000_000_000) as u32).to_le_bytes());
    out.extend_from_slice(&((at_ns % 1_000_000_000) as u32).to_le_bytes());
    out.extend_from_slice(&(packet.len() as u32).to_le_bytes());
    out.extend_from_slice(&(packet.len() as u32).to_le_bytes());
    out.extend_from_slice(packet);
}

/// The whole file of one interface: each frame as an IPv4 packet between its flow's addresses,
/// TCP windows shifted by the sending end's scale (`shifts`, from `Capture::window_shifts`).
pub fn file(link: &LinkCapture, flows: &[FlowAddresses], shifts: &HashMap<(u32, bool), u8>) -> Vec<u8> {
    let bytes: usize = link.frames.iter().map(|f| 16 + wire::len(&f.contents) as usize).sum();
    let mut out = Vec::with_capacity(24 + bytes);
    header(&mut out);
    for f in &link.frames {
        let (src, dst) = flows[f.flow as usize].of(f.from_src);
        let p = match &f.contents {
            Contents::Tcp(seg) => wire::packet(seg, src, dst, f.ip_id, f.ttl, shifts.get(&(f.flow, f.from_src)).copied()),
            Contents::Udp { payload } => wire::datagram(*payload, src, dst, f.ip_id, f.ttl),
        };
        record(&mut out, f.at.0, &p);
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
