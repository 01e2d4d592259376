//! Reading real IPv4 packets, and the two edits a medium makes to one in flight: a CE mark
//! (RFC 3168 §5) and a router's TTL decrement (RFC 791 §3.2), each with the header checksum
//! updated incrementally (RFC 1624 §3).

/// IP protocol numbers (RFC 790).
pub const TCP: u8 = 6;
pub const UDP: u8 = 17;

/// TCP header flags (RFC 9293 §3.1, RFC 3168 §6.1).
pub const FIN: u8 = 0x01;
pub const SYN: u8 = 0x02;
pub const RST: u8 = 0x04;
pub const ACK: u8 = 0x10;
pub const ECE: u8 = 0x40;
pub const CWR: u8 = 0x80;

/// The fields of an IPv4 header this module reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ipv4 {
    pub src: [u8; 4],
    pub dst: [u8; 4],
    pub protocol: u8,
    /// Header length in bytes.
    pub header_len: usize,
    /// Total length (header and payload), as the header gives it.
    pub total_len: usize,
    /// The two ECN bits (RFC 3168 §5): 0 Not-ECT, 1 or 2 ECT, 3 CE.
    pub ecn: u8,
}

impl Ipv4 {
    /// The header of `packet`, or `None` when it is not a well-formed IPv4 packet (an IPv6
    /// packet, a truncated one, a length that disagrees with what was read).
    pub fn parse(packet: &[u8]) -> Option<Self> {
        if packet.len() < 20 || packet[0] >> 4 != 4 {
            return None;
        }
        let header_len = ((packet[0] & 0x0f) as usize) * 4;
        let total_len = u16::from_be_bytes([packet[2], packet[3]]) as usize;
        if header_len < 20 || total_len < header_len || total_len > packet.len() {
            return None;
        }
        Some(Ipv4 {
            src: [packet[12], packet[13], packet[14], packet[15]],
            dst: [packet[16], packet[17], packet[18], packet[19]],
            protocol: packet[9],
            header_len,
            total_len,
            ecn: packet[1] & 0x03,
        })
    }

    /// Whether the sender declared the packet ECN-capable (ECT(0), ECT(1) or already CE).
    pub fn ect(&self) -> bool {
        self.ecn != 0
    }
}

/// The fields of a TCP header this module reads, with what its options say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Tcp {
    pub src_port: u16,
    pub dst_port: u16,
    pub seq: u32,
    pub ack: u32,
    pub flags: u8,
    pub window: u16,
    /// Payload bytes (after the TCP header).
    pub payload: u32,
    /// SACK blocks carried (RFC 2018 §3).
    pub sack_blocks: u8,
    /// Whether it carries a timestamps option (RFC 7323 §3).
    pub timestamps: bool,
}

impl Tcp {
    /// The TCP header of the IPv4 packet `packet` whose header is `ip`, or `None` when it is
    /// not TCP or is truncated.
    pub fn parse(packet: &[u8], ip: &Ipv4) -> Option<Self> {
        if ip.protocol != TCP {
            return None;
        }
        let seg = &packet[ip.header_len..ip.total_len];
        if seg.len() < 20 {
            return None;
        }
        let data_offset = ((seg[12] >> 4) as usize) * 4;
        if data_offset < 20 || data_offset > seg.len() {
            return None;
        }
        let mut tcp = Tcp {
            src_port: u16::from_be_bytes([seg[0], seg[1]]),
            dst_port: u16::from_be_bytes([seg[2], seg[3]]),
            seq: u32::from_be_bytes([seg[4], seg[5], seg[6], seg[7]]),
            ack: u32::from_be_bytes([seg[8], seg[9], seg[10], seg[11]]),
            flags: seg[13],
            window: u16::from_be_bytes([seg[14], seg[15]]),
            payload: (seg.len() - data_offset) as u32,
            sack_blocks: 0,
            timestamps: false,
        };
        // Options (RFC 9293 §3.1): kind 0 ends the list, kind 1 is one byte of padding, every
        // other kind has a length byte.
        let mut opts = &seg[20..data_offset];
        while let Some(&kind) = opts.first() {
            match kind {
                0 => break,
                1 => opts = &opts[1..],
                _ => {
                    let Some(&len) = opts.get(1) else { break };
                    let len = len as usize;
                    if len < 2 || len > opts.len() {
                        break;
                    }
                    match kind {
                        5 => tcp.sack_blocks = ((len - 2) / 8) as u8,
                        8 => tcp.timestamps = true,
                        _ => {}
                    }
                    opts = &opts[len..];
                }
            }
        }
        Some(tcp)
    }

    /// A segment's length in sequence space: its payload, plus one each for SYN and FIN.
    pub fn seq_len(&self) -> u32 {
        self.payload + (self.flags & SYN != 0) as u32 + (self.flags & FIN != 0) as u32
    }

    /// A segment with no payload and neither SYN nor FIN: a pure acknowledgment.
    pub fn is_pure_ack(&self) -> bool {
        self.payload == 0 && self.flags & (SYN | FIN | RST) == 0
    }
}

/// The UDP ports and payload of an IPv4 datagram (RFC 768), or `None` when it is not UDP.
pub fn udp(packet: &[u8], ip: &Ipv4) -> Option<(u16, u16, u32)> {
    if ip.protocol != UDP || ip.total_len < ip.header_len + 8 {
        return None;
    }
    let d = &packet[ip.header_len..];
    Some((u16::from_be_bytes([d[0], d[1]]), u16::from_be_bytes([d[2], d[3]]), (ip.total_len - ip.header_len - 8) as u32))
}

/// Replace the 16-bit header word at `at` with `new`, updating the header checksum (bytes 10-11)
/// as RFC 1624 §3 does: HC' = ~(~HC + ~m + m').
fn rewrite_word(packet: &mut [u8], at: usize, new: u16) {
    let old = u16::from_be_bytes([packet[at], packet[at + 1]]);
    let hc = u16::from_be_bytes([packet[10], packet[11]]);
    let mut sum = (!hc as u32) + (!old as u32) + new as u32;
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    packet[at..at + 2].copy_from_slice(&new.to_be_bytes());
    packet[10..12].copy_from_slice(&(!(sum as u16)).to_be_bytes());
}

/// Mark an ECN-capable packet Congestion Experienced (RFC 3168 §5).
pub fn mark_ce(packet: &mut [u8]) {
    let word = u16::from_be_bytes([packet[0], packet[1]]) | 0x0003;
    rewrite_word(packet, 0, word);
}

/// Take one off the time to live, as a router does (RFC 791 §3.2); it stays at 1 at least
/// (routes are loop-free; the engine never discards on it).
pub fn decrement_ttl(packet: &mut [u8]) {
    let ttl = packet[8];
    if ttl > 1 {
        let word = u16::from_be_bytes([ttl - 1, packet[9]]);
        rewrite_word(packet, 8, word);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::wire;

    /// A 40-byte TCP SYN with a SACK-permitted and a timestamps option, checksummed.
    fn syn() -> Vec<u8> {
        let mut p = vec![0u8; 20];
        p[0] = 0x45;
        p[1] = 0x02; // ECT(0)
        p[8] = 64;
        p[9] = TCP;
        p[12..16].copy_from_slice(&[10, 0, 0, 1]);
        p[16..20].copy_from_slice(&[10, 0, 0, 2]);
        let mut tcp = vec![0u8; 20];
        tcp[0..2].copy_from_slice(&5000u16.to_be_bytes());
        tcp[2..4].copy_from_slice(&80u16.to_be_bytes());
        tcp[4..8].copy_from_slice(&7u32.to_be_bytes());
        tcp[13] = SYN;
        // SACK-permitted (4, 2), NOP, NOP, timestamps (8, 10, ...), then a SACK block option.
        tcp.extend_from_slice(&[4, 2, 1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 1, 5, 10, 0, 0, 0, 1, 0, 0, 0, 2]);
        tcp.extend_from_slice(&[0, 0]);
        tcp[12] = ((tcp.len() / 4) as u8) << 4;
        p.extend_from_slice(&tcp);
        let len = p.len() as u16;
        p[2..4].copy_from_slice(&len.to_be_bytes());
        let c = wire::checksum(0, &p[..20]);
        p[10..12].copy_from_slice(&c.to_be_bytes());
        p
    }

    #[test]
    fn an_ipv4_tcp_header_and_its_options_are_read() {
        let p = syn();
        let ip = Ipv4::parse(&p).expect("IPv4");
        assert_eq!((ip.src, ip.dst, ip.protocol, ip.header_len, ip.total_len, ip.ect()), ([10, 0, 0, 1], [10, 0, 0, 2], TCP, 20, p.len(), true));
        let tcp = Tcp::parse(&p, &ip).expect("TCP");
        assert_eq!((tcp.src_port, tcp.dst_port, tcp.seq, tcp.payload, tcp.seq_len()), (5000, 80, 7, 0, 1));
        assert_eq!((tcp.sack_blocks, tcp.timestamps, tcp.is_pure_ack()), (1, true, false));
    }

    #[test]
    fn what_is_not_a_whole_ipv4_packet_is_refused() {
        let p = syn();
        assert_eq!(Ipv4::parse(&p[..30]), None, "truncated");
        let mut v6 = p.clone();
        v6[0] = 0x60;
        assert_eq!(Ipv4::parse(&v6), None, "IPv6");
    }

    /// RFC 1624 §3: the incrementally updated checksum equals a fresh one.
    #[test]
    fn a_ce_mark_and_a_ttl_decrement_keep_the_header_checksum_valid() {
        let mut p = syn();
        mark_ce(&mut p);
        decrement_ttl(&mut p);
        assert_eq!((Ipv4::parse(&p).unwrap().ecn, p[8]), (3, 63));
        assert_eq!(wire::checksum(0, &p[..20]), 0, "a valid header sums to zero");
    }
}
