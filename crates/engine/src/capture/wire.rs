//! The bytes of one captured packet: IPv4 header (RFC 791 §3.1), TCP header and options
//! (RFC 9293 §3.1-3.2, RFC 7323 §2-3, RFC 2018 §2-3) or UDP header (RFC 768), payload as zeros. Option layout and
//! padding follow docs/models/tcp.md "Bytes on the wire", so every packet is exactly
//! `Segment::wire_len()` bytes long.

use super::{Contents, Endpoint};
use crate::tcp::segment::{Ecn, Flags, Segment, IPV4_HEADER, TCP_HEADER};

const KIND_EOL: u8 = 0;
const KIND_NOP: u8 = 1;
const KIND_MSS: u8 = 2;
const KIND_WINDOW_SCALE: u8 = 3;
const KIND_SACK_PERMITTED: u8 = 4;
const KIND_SACK: u8 = 5;
const KIND_TIMESTAMPS: u8 = 8;

const PROTO_TCP: u8 = 6;
const PROTO_UDP: u8 = 17;
/// UDP header bytes (RFC 768).
pub const UDP_HEADER: u32 = 8;
/// Don't Fragment (RFC 791 §3.1 flags): the engine never fragments.
const FLAG_DF: u16 = 0x4000;

/// The TCP options of `seg`, padded to a multiple of 4 bytes.
///
/// SYN: MSS, then SACK-permitted and timestamps (two NOPs before whichever stands alone), then
/// NOP + window scale: Linux's order, which pads exactly as the packed sizes of
/// `Segment::options_len` (19 -> 20, 9 -> 12, ...). Other segments: NOP NOP timestamps, then
/// NOP NOP SACK, each aligned on its own.
pub fn tcp_options(seg: &Segment, out: &mut Vec<u8>) {
    let start = out.len();
    let ts = |out: &mut Vec<u8>, seg: &Segment| {
        let t = seg.ts.expect("timestamps");
        out.extend_from_slice(&[KIND_TIMESTAMPS, 10]);
        out.extend_from_slice(&t.val.to_be_bytes());
        out.extend_from_slice(&t.ecr.to_be_bytes());
    };
    if let Some(s) = seg.syn {
        // RFC 9293 §3.2: MSS kind 2, length 4.
        out.extend_from_slice(&[KIND_MSS, 4]);
        out.extend_from_slice(&s.mss.to_be_bytes());
        let with_ts = s.timestamps && seg.ts.is_some();
        match (s.sack_permitted, with_ts) {
            (true, true) => {
                out.extend_from_slice(&[KIND_SACK_PERMITTED, 2]);
                ts(out, seg);
            }
            (true, false) => out.extend_from_slice(&[KIND_NOP, KIND_NOP, KIND_SACK_PERMITTED, 2]),
            (false, true) => {
                out.extend_from_slice(&[KIND_NOP, KIND_NOP]);
                ts(out, seg);
            }
            (false, false) => {}
        }
        if let Some(shift) = s.window_scale {
            // RFC 7323 §2.2: kind 3, length 3, shift count.
            out.extend_from_slice(&[KIND_NOP, KIND_WINDOW_SCALE, 3, shift]);
        }
    } else {
        if seg.ts.is_some() {
            out.extend_from_slice(&[KIND_NOP, KIND_NOP]);
            ts(out, seg);
        }
        if !seg.sack.is_empty() {
            // RFC 2018 §3: kind 5, length 2 + 8n, left and right edges (32-bit sequence numbers).
            out.extend_from_slice(&[KIND_NOP, KIND_NOP, KIND_SACK, 2 + 8 * seg.sack.len() as u8]);
            for &(l, r) in seg.sack.as_slice() {
                out.extend_from_slice(&(l as u32).to_be_bytes());
                out.extend_from_slice(&(r as u32).to_be_bytes());
            }
        }
    }
    // Any remainder is padded with End of Option List (RFC 9293 §3.2); the layouts above
    // never leave one, but the data offset must count whole words whatever the mix.
    while (out.len() - start) % 4 != 0 {
        out.push(KIND_EOL);
    }
}

/// The 16-bit window field: unscaled on SYNs (RFC 7323 §2.2), else the window shifted right by
/// the sender's announced shift when both sides agreed to scaling (RFC 7323 §2.3).
pub fn window_field(seg: &Segment, shift: Option<u8>) -> u16 {
    let w = if seg.flags.contains(Flags::SYN) { seg.window } else { seg.window >> shift.unwrap_or(0) };
    w.min(u16::MAX as u32) as u16
}

/// Internet checksum (RFC 1071): one's complement of the one's-complement sum of 16-bit words,
/// starting from `initial` (a partial sum, e.g. of a pseudo-header).
pub fn checksum(initial: u32, bytes: &[u8]) -> u16 {
    let mut sum = initial as u64;
    let mut chunks = bytes.chunks_exact(2);
    for c in &mut chunks {
        sum += u16::from_be_bytes([c[0], c[1]]) as u64;
    }
    if let [last] = chunks.remainder() {
        sum += (*last as u64) << 8;
    }
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// IP ECN bits (RFC 3168 §5): Not-ECT 00, ECT(0) 10, CE 11.
fn ecn_bits(e: Ecn) -> u8 {
    match e {
        Ecn::NotEct => 0b00,
        Ecn::Ect => 0b10,
        Ecn::Ce => 0b11,
    }
}

/// Bytes of the IP packet a frame carries.
pub fn len(c: &Contents) -> u32 {
    match c {
        Contents::Tcp(seg) => seg.wire_len(),
        Contents::Udp { payload } => IPV4_HEADER + UDP_HEADER + payload,
    }
}

/// The 20-byte IPv4 header (RFC 791 §3.1), no options, with its checksum.
fn ipv4_header(p: &mut Vec<u8>, total: usize, ecn: Ecn, ip_id: u16, ttl: u8, proto: u8, src: Endpoint, dst: Endpoint) {
    let start = p.len();
    p.push(0x45); // version 4, IHL 5 words
    p.push(ecn_bits(ecn)); // DSCP 0
    p.extend_from_slice(&(total as u16).to_be_bytes());
    p.extend_from_slice(&ip_id.to_be_bytes());
    p.extend_from_slice(&FLAG_DF.to_be_bytes());
    p.extend_from_slice(&[ttl, proto, 0, 0]);
    p.extend_from_slice(&src.addr);
    p.extend_from_slice(&dst.addr);
    debug_assert_eq!(p.len() - start, IPV4_HEADER as usize);
    let sum = checksum(0, &p[start..]);
    p[start + 10..start + 12].copy_from_slice(&sum.to_be_bytes());
}

/// The partial sum of the pseudo-header that TCP (RFC 9293 §3.1) and UDP (RFC 768) checksums
/// cover: both addresses, zero, protocol, and the transport segment's length.
fn pseudo_header_sum(src: Endpoint, dst: Endpoint, proto: u8, len: u32) -> u32 {
    [src.addr, dst.addr]
        .iter()
        .map(|a| u16::from_be_bytes([a[0], a[1]]) as u32 + u16::from_be_bytes([a[2], a[3]]) as u32)
        .sum::<u32>()
        + proto as u32
        + len
}

/// One IPv4 packet carrying `seg`, exactly `seg.wire_len()` bytes.
pub fn packet(seg: &Segment, src: Endpoint, dst: Endpoint, ip_id: u16, ttl: u8, shift: Option<u8>) -> Vec<u8> {
    let total = seg.wire_len() as usize;
    let mut p = Vec::with_capacity(total);
    ipv4_header(&mut p, total, seg.ecn, ip_id, ttl, PROTO_TCP, src, dst);

    // TCP header, RFC 9293 §3.1. Sequence numbers on the wire are the engine's modulo 2^32.
    let tcp = p.len();
    p.extend_from_slice(&src.port.to_be_bytes());
    p.extend_from_slice(&dst.port.to_be_bytes());
    p.extend_from_slice(&(seg.seq as u32).to_be_bytes());
    p.extend_from_slice(&(seg.ack as u32).to_be_bytes());
    p.extend_from_slice(&[0, seg.flags.0]); // data offset filled in below
    p.extend_from_slice(&window_field(seg, shift).to_be_bytes());
    p.extend_from_slice(&[0, 0, 0, 0]); // checksum, urgent pointer
    debug_assert_eq!(p.len() - tcp, TCP_HEADER as usize);
    tcp_options(seg, &mut p);
    let offset_words = (p.len() - tcp) / 4;
    p[tcp + 12] = (offset_words as u8) << 4;
    p.resize(total, 0); // payload: zeros

    let tcp_sum = checksum(pseudo_header_sum(src, dst, PROTO_TCP, (total - tcp) as u32), &p[tcp..]);
    p[tcp + 16..tcp + 18].copy_from_slice(&tcp_sum.to_be_bytes());
    p
}

/// One IPv4 packet carrying a UDP datagram of `payload` zero bytes (RFC 768). UDP datagrams are
/// never ECN-capable here (RFC 3168 §5 leaves ECT to transports that react to CE).
pub fn datagram(payload: u32, src: Endpoint, dst: Endpoint, ip_id: u16, ttl: u8) -> Vec<u8> {
    let total = (IPV4_HEADER + UDP_HEADER + payload) as usize;
    let mut p = Vec::with_capacity(total);
    ipv4_header(&mut p, total, Ecn::NotEct, ip_id, ttl, PROTO_UDP, src, dst);
    let udp = p.len();
    let udp_len = (UDP_HEADER + payload) as u16;
    p.extend_from_slice(&src.port.to_be_bytes());
    p.extend_from_slice(&dst.port.to_be_bytes());
    p.extend_from_slice(&udp_len.to_be_bytes());
    p.extend_from_slice(&[0, 0]); // checksum, below
    p.resize(total, 0);
    // RFC 768: a computed checksum of zero is sent as all ones (zero means "none").
    let sum = match checksum(pseudo_header_sum(src, dst, PROTO_UDP, udp_len as u32), &p[udp..]) {
        0 => 0xffff,
        s => s,
    };
    p[udp + 6..udp + 8].copy_from_slice(&sum.to_be_bytes());
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::{RECEIVER_ENDPOINT, SENDER_ENDPOINT, TTL};
    use crate::tcp::segment::{SynOptions, Timestamps};

    fn data(len: u32) -> Segment {
        Segment::new(1, 1, len, Flags::ACK, 65_535)
    }

    fn syn(sack: bool, ts: bool, ws: Option<u8>) -> Segment {
        let mut s = Segment::new(0, 0, 0, Flags::SYN, 65_535);
        s.syn = Some(SynOptions { mss: 1460, sack_permitted: sack, timestamps: ts, window_scale: ws });
        if ts {
            s.ts = Some(Timestamps { val: 7, ecr: 0 });
        }
        s
    }

    fn options(seg: &Segment) -> Vec<u8> {
        let mut v = Vec::new();
        tcp_options(seg, &mut v);
        v
    }

    /// Walk an option list as a receiver would (RFC 9293 §3.2: kinds 0 and 1 are one byte,
    /// the others carry a length), returning the kinds seen.
    fn kinds(opts: &[u8]) -> Vec<u8> {
        let (mut i, mut out) = (0, Vec::new());
        while i < opts.len() {
            out.push(opts[i]);
            match opts[i] {
                KIND_EOL => break,
                KIND_NOP => i += 1,
                _ => {
                    assert!(opts[i + 1] >= 2 && i + opts[i + 1] as usize <= opts.len(), "option overruns");
                    i += opts[i + 1] as usize;
                }
            }
        }
        out
    }

    #[test]
    fn syn_option_layouts_are_as_long_as_the_engine_charges_rfc9293_s3_2_rfc7323_s2_2() {
        for sack in [false, true] {
            for ts in [false, true] {
                for ws in [None, Some(7)] {
                    let s = syn(sack, ts, ws);
                    let o = options(&s);
                    assert_eq!(o.len() as u32, s.options_len(), "sack {sack} ts {ts} ws {ws:?}");
                    let k = kinds(&o);
                    assert_eq!(k.contains(&KIND_SACK_PERMITTED), sack);
                    assert_eq!(k.contains(&KIND_TIMESTAMPS), ts);
                    assert_eq!(k.contains(&KIND_WINDOW_SCALE), ws.is_some());
                    assert_eq!(k[0], KIND_MSS);
                }
            }
        }
    }

    #[test]
    fn timestamp_and_sack_layouts_are_as_long_as_the_engine_charges_rfc7323_s3_rfc2018_s3() {
        for ts in [false, true] {
            let max = crate::tcp::segment::max_sack_blocks(ts);
            for n in 0..=max as u64 {
                let mut s = data(0);
                if ts {
                    s.ts = Some(Timestamps { val: 5, ecr: 3 });
                }
                for i in 0..n {
                    s.sack.push(1000 * (i + 2), 1000 * (i + 2) + 500);
                }
                let o = options(&s);
                assert_eq!(o.len() as u32, s.options_len(), "ts {ts} blocks {n}");
                assert_eq!(kinds(&o).iter().filter(|&&k| k == KIND_SACK).count(), (n > 0) as usize);
            }
        }
    }

    #[test]
    fn sack_block_edges_are_32_bit_sequence_numbers_rfc2018_s3() {
        let mut s = data(0);
        s.sack.push(3000, 4448);
        let o = options(&s);
        assert_eq!(&o[..4], &[KIND_NOP, KIND_NOP, KIND_SACK, 10]);
        assert_eq!(u32::from_be_bytes(o[4..8].try_into().unwrap()), 3000);
        assert_eq!(u32::from_be_bytes(o[8..12].try_into().unwrap()), 4448);
    }

    #[test]
    fn timestamps_carry_tsval_then_tsecr_rfc7323_s3_2() {
        let mut s = data(0);
        s.ts = Some(Timestamps { val: 0x0102_0304, ecr: 0x0a0b_0c0d });
        let o = options(&s);
        assert_eq!(o, [KIND_NOP, KIND_NOP, KIND_TIMESTAMPS, 10, 1, 2, 3, 4, 0x0a, 0x0b, 0x0c, 0x0d]);
    }

    #[test]
    fn ip_total_length_equals_the_bytes_the_engine_charges_rfc791_s3_1() {
        let mut s = data(1448);
        s.ts = Some(Timestamps { val: 1, ecr: 1 });
        let p = packet(&s, SENDER_ENDPOINT, RECEIVER_ENDPOINT, 1, TTL, None);
        assert_eq!(p.len() as u32, s.wire_len());
        assert_eq!(u16::from_be_bytes([p[2], p[3]]) as u32, s.wire_len());
        assert_eq!(p[20 + 12] >> 4, 5 + 3, "data offset: 20 + 12 option bytes");
    }

    #[test]
    fn ipv4_header_checksum_verifies_to_zero_rfc791_s3_1() {
        let p = packet(&data(100), SENDER_ENDPOINT, RECEIVER_ENDPOINT, 42, TTL, None);
        assert_ne!(u16::from_be_bytes([p[10], p[11]]), 0);
        assert_eq!(checksum(0, &p[..20]), 0);
    }

    #[test]
    fn tcp_checksum_covers_pseudo_header_and_odd_payload_rfc9293_s3_1() {
        let mut s = data(101); // odd length: the last byte is padded with zero for the sum
        s.sack.push(5000, 6000);
        let p = packet(&s, SENDER_ENDPOINT, RECEIVER_ENDPOINT, 42, TTL, None);
        let mut pseudo = Vec::new();
        pseudo.extend_from_slice(&SENDER_ENDPOINT.addr);
        pseudo.extend_from_slice(&RECEIVER_ENDPOINT.addr);
        pseudo.extend_from_slice(&[0, PROTO_TCP]);
        pseudo.extend_from_slice(&((p.len() - 20) as u16).to_be_bytes());
        pseudo.extend_from_slice(&p[20..]);
        assert_eq!(checksum(0, &pseudo), 0);
    }

    #[test]
    fn checksum_matches_the_rfc1071_s3_worked_example() {
        // RFC 1071 §3: bytes 00 01 f2 03 f4 f5 f6 f7 sum to 0xddf2 (one's complement 0x220d).
        assert_eq!(checksum(0, &[0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7]), !0xddf2);
    }

    #[test]
    fn ecn_codepoints_sit_in_the_low_tos_bits_rfc3168_s5() {
        let mut s = data(10);
        for (e, bits) in [(Ecn::NotEct, 0), (Ecn::Ect, 0b10), (Ecn::Ce, 0b11)] {
            s.ecn = e;
            assert_eq!(packet(&s, SENDER_ENDPOINT, RECEIVER_ENDPOINT, 0, TTL, None)[1], bits);
        }
    }

    #[test]
    fn flags_byte_is_the_tcp_header_flags_rfc9293_s3_1_rfc3168_s6_1() {
        let mut s = data(10);
        s.flags = Flags::ACK.with(Flags::ECE).with(Flags::CWR).with(Flags::FIN);
        let p = packet(&s, SENDER_ENDPOINT, RECEIVER_ENDPOINT, 0, TTL, None);
        assert_eq!(p[20 + 13], 0x10 | 0x40 | 0x80 | 0x01);
    }

    #[test]
    fn window_field_is_scaled_except_on_syns_rfc7323_s2_2() {
        let mut s = data(0);
        s.window = 1 << 20;
        assert_eq!(window_field(&s, Some(5)), (1 << 15) as u16);
        assert_eq!(window_field(&s, None), u16::MAX, "without scaling the field saturates");
        let mut y = syn(false, false, Some(5));
        y.window = 1 << 20;
        assert_eq!(window_field(&y, Some(5)), u16::MAX, "a SYN's window is never scaled");
    }

    #[test]
    fn udp_length_and_checksum_cover_the_pseudo_header_rfc768() {
        for payload in [0, 1, 200, 1471] {
            let p = datagram(payload, SENDER_ENDPOINT, RECEIVER_ENDPOINT, 9, 63);
            assert_eq!(p.len() as u32, len(&Contents::Udp { payload }));
            assert_eq!((p[9], p[8]), (PROTO_UDP, 63), "protocol, TTL");
            assert_eq!(u16::from_be_bytes([p[24], p[25]]) as u32, 8 + payload, "UDP length");
            assert_eq!(checksum(0, &p[..20]), 0, "IP header checksum");
            let mut pseudo = Vec::new();
            pseudo.extend_from_slice(&SENDER_ENDPOINT.addr);
            pseudo.extend_from_slice(&RECEIVER_ENDPOINT.addr);
            pseudo.extend_from_slice(&[0, PROTO_UDP]);
            pseudo.extend_from_slice(&((p.len() - 20) as u16).to_be_bytes());
            pseudo.extend_from_slice(&p[20..]);
            assert_eq!(checksum(0, &pseudo), 0, "payload {payload}");
            assert_ne!(u16::from_be_bytes([p[26], p[27]]), 0, "zero would mean no checksum");
        }
    }
}
