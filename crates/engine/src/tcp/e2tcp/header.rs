//! E2TCP's compact header (seed 001 §2.3): every field optional behind a presence bit, the
//! addresses and ports sent only while the connection is set up, a one-byte connection
//! identifier afterwards (as RFC 2508 compresses RTP/UDP/IP headers), and packet numbers in
//! place of byte sequence numbers. The paper gives sizes (typical data header 8 bytes, ACKs
//! 8-16 bytes by SACK blocks) but no layout; this is the layout that yields them
//! (docs/models/e2tcp.md#header-format):
//!
//! | field | bytes | present |
//! |---|---|---|
//! | presence bits | 1 | always |
//! | connection id | 1 | always |
//! | packet number | 2 | packets that carry data, SYN or FIN |
//! | ACK number | 2 | once the peer's SYN has arrived |
//! | window (packets) | 2 | ACKs, SYNs, and any packet whose window changed |
//! | SACK blocks | 4 each | 0-2 blocks: two 16-bit offsets from the ACK number |
//! | addresses and ports | 12 | SYN only (IPv4 source, destination, two ports) |
//! | checksum | 2 | always |
//!
//! A data packet is then 1 + 1 + 2 + 2 + 2 = 8 bytes of header, an ACK 8, 12 or 16, a SYN 20
//! and a SYN-ACK 22. The compact header replaces the TCP and IP headers on the wireless hop.

use crate::tcp::segment::{Flags, Segment};

/// Presence bits of the first byte.
pub const P_SEQ: u8 = 0x80;
pub const P_ACK: u8 = 0x40;
pub const P_WINDOW: u8 = 0x20;
pub const P_ADDRESSES: u8 = 0x10;
pub const P_SYN: u8 = 0x08;
pub const P_FIN: u8 = 0x04;
/// The low two bits count SACK blocks (0-2).
pub const SACK_COUNT_MASK: u8 = 0x03;

pub const PRESENCE: u32 = 1;
pub const CONNECTION_ID: u32 = 1;
pub const PACKET_NUMBER: u32 = 2;
pub const ACK_NUMBER: u32 = 2;
pub const WINDOW: u32 = 2;
pub const SACK_BLOCK: u32 = 4;
pub const ADDRESSES: u32 = 12;
pub const CHECKSUM: u32 = 2;
/// SACK blocks an ACK can carry: enough to describe two separate runs of losses (seed 001 §2.1).
pub const MAX_SACK_BLOCKS: usize = 2;

/// The presence bits of `seg` as an E2TCP endpoint sends it.
pub fn presence(seg: &Segment) -> u8 {
    let syn = seg.flags.contains(Flags::SYN);
    let fin = seg.flags.contains(Flags::FIN);
    let mut p = (seg.sack.len().min(MAX_SACK_BLOCKS)) as u8;
    if seg.len > 0 || syn || fin {
        p |= P_SEQ;
    }
    if seg.flags.contains(Flags::ACK) {
        p |= P_ACK;
    }
    // An ACK carries the window (flow control is its business); a data packet only when the
    // window changed, which never happens with the engine's constant receive window.
    if seg.is_pure_ack() || syn {
        p |= P_WINDOW;
    }
    if syn {
        p |= P_ADDRESSES | P_SYN;
    }
    if fin {
        p |= P_FIN;
    }
    p
}

/// Header bytes of `seg` in E2TCP's compact format.
pub fn header_len(seg: &Segment) -> u32 {
    let p = presence(seg);
    let bit = |b: u8, n: u32| if p & b != 0 { n } else { 0 };
    PRESENCE
        + CONNECTION_ID
        + bit(P_SEQ, PACKET_NUMBER)
        + bit(P_ACK, ACK_NUMBER)
        + bit(P_WINDOW, WINDOW)
        + SACK_BLOCK * (p & SACK_COUNT_MASK) as u32
        + bit(P_ADDRESSES, ADDRESSES)
        + CHECKSUM
}

/// Packet number of byte sequence number `seq` on a connection of `mss`-byte packets: the SYN is
/// packet 0, the packet carrying bytes from `1 + (n - 1) * mss` is packet n, and the number just
/// past the last byte (a bare FIN, or an ACK of everything) is the next packet's. Sent modulo
/// 2^16: a 16-bit number suffices because every packet in flight lies within the maximum window.
pub fn packet_number(seq: u64, mss: u32) -> u64 {
    if seq == 0 {
        0
    } else {
        (seq - 1).div_ceil(mss as u64) + 1
    }
}

/// The bytes of `seg` on the wireless hop: compact header, then `seg.len` zero bytes of payload.
/// `addresses` are the source and destination (IPv4 address, port), sent only on SYNs; `cid` is
/// the connection identifier. Packet sizes map byte offsets to packet numbers: `own_mss` the
/// sending end's (its packet number), `peer_mss` the other end's (ACK number, SACK offsets and
/// the window, which count the peer's packets).
pub fn encode(seg: &Segment, cid: u8, own_mss: u32, peer_mss: u32, addresses: ([u8; 4], u16, [u8; 4], u16)) -> Vec<u8> {
    let mss = peer_mss;
    let p = presence(seg);
    let mut out = Vec::with_capacity((header_len(seg) + seg.len) as usize);
    out.push(p);
    out.push(cid);
    let ack_pkt = packet_number(seg.ack, mss);
    if p & P_SEQ != 0 {
        out.extend_from_slice(&(packet_number(seg.seq, own_mss) as u16).to_be_bytes());
    }
    if p & P_ACK != 0 {
        out.extend_from_slice(&(ack_pkt as u16).to_be_bytes());
    }
    if p & P_WINDOW != 0 {
        let packets = (seg.window / mss.max(1)).min(u16::MAX as u32) as u16;
        out.extend_from_slice(&packets.to_be_bytes());
    }
    for &(l, r) in seg.sack.as_slice().iter().take(MAX_SACK_BLOCKS) {
        // Offsets from the ACK number, in packets: first packet held, one past the last.
        let off = |x: u64| (packet_number(x, mss).saturating_sub(ack_pkt)).min(u16::MAX as u64) as u16;
        out.extend_from_slice(&off(l).to_be_bytes());
        out.extend_from_slice(&off(r).to_be_bytes());
    }
    if p & P_ADDRESSES != 0 {
        let (sa, sp, da, dp) = addresses;
        out.extend_from_slice(&sa);
        out.extend_from_slice(&da);
        out.extend_from_slice(&sp.to_be_bytes());
        out.extend_from_slice(&dp.to_be_bytes());
    }
    let sum_at = out.len();
    out.extend_from_slice(&[0, 0]);
    debug_assert_eq!(out.len() as u32, header_len(seg));
    out.resize((header_len(seg) + seg.len) as usize, 0);
    let sum = crate::capture::wire::checksum(0, &out);
    out[sum_at..sum_at + 2].copy_from_slice(&sum.to_be_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1000;

    fn ack_with_blocks(n: u64) -> Segment {
        let mut s = Segment::new(1, 1 + 3 * MSS as u64, 0, Flags::ACK, 64_000);
        for i in 0..n {
            let l = 1 + (5 + 3 * i) * MSS as u64;
            s.sack.push(l, l + MSS as u64);
        }
        s
    }

    #[test]
    fn data_header_is_8_bytes_seed001_s2_3() {
        let s = Segment::new(1 + 7 * MSS as u64, 1, MSS, Flags::ACK, 64_000);
        assert_eq!(header_len(&s), 8);
        assert_eq!(encode(&s, 1, MSS, MSS, ([0; 4], 0, [0; 4], 0)).len(), 8 + MSS as usize);
    }

    #[test]
    fn acks_are_8_12_16_bytes_by_sack_blocks_seed001_s2_3() {
        for (n, len) in [(0, 8), (1, 12), (2, 16)] {
            let s = ack_with_blocks(n);
            assert_eq!(header_len(&s), len, "{n} blocks");
            assert_eq!(encode(&s, 1, MSS, MSS, ([0; 4], 0, [0; 4], 0)).len(), len as usize);
        }
    }

    #[test]
    fn syn_carries_addresses_once_seed001_s2_3() {
        let syn = Segment::new(0, 0, 0, Flags::SYN, 64_000);
        assert_eq!(header_len(&syn), 20);
        let syn_ack = Segment::new(0, 1, 0, Flags::SYN.with(Flags::ACK), 64_000);
        assert_eq!(header_len(&syn_ack), 22);
        let bytes = encode(&syn, 9, MSS, MSS, ([10, 0, 0, 1], 5001, [10, 0, 0, 2], 80));
        assert_eq!(&bytes[6..10], &[10, 0, 0, 1]);
    }

    #[test]
    fn packet_numbers_count_whole_packets() {
        assert_eq!(packet_number(0, MSS), 0);
        assert_eq!(packet_number(1, MSS), 1);
        assert_eq!(packet_number(1 + MSS as u64, MSS), 2);
        assert_eq!(packet_number(1 + 5 * MSS as u64, MSS), 6);
    }

    #[test]
    fn sack_offsets_are_relative_to_the_ack_number_seed001_s2_1() {
        let s = ack_with_blocks(1);
        let b = encode(&s, 1, MSS, MSS, ([0; 4], 0, [0; 4], 0));
        // ACK number = packet 4 (bytes up to 3 * MSS received); the block holds packet 6.
        assert_eq!(u16::from_be_bytes([b[2], b[3]]), 4);
        assert_eq!(u16::from_be_bytes([b[6], b[7]]), 2);
        assert_eq!(u16::from_be_bytes([b[8], b[9]]), 3);
    }
}
