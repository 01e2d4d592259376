//! A TCP segment inside an IPv4 packet, with exact header and option sizes: the bytes that cross
//! the radio and therefore cost energy.

/// TCP header flags (RFC 9293 §3.1; ECE and CWR from RFC 3168 §6.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Flags(pub u8);

impl Flags {
    pub const FIN: Flags = Flags(0x01);
    pub const SYN: Flags = Flags(0x02);
    pub const RST: Flags = Flags(0x04);
    pub const ACK: Flags = Flags(0x10);
    pub const ECE: Flags = Flags(0x40);
    pub const CWR: Flags = Flags(0x80);

    pub fn contains(self, other: Flags) -> bool {
        self.0 & other.0 == other.0
    }
    pub fn with(self, other: Flags) -> Flags {
        Flags(self.0 | other.0)
    }
}

/// Up to four SACK blocks `[left, right)` (RFC 2018 §3), most important first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SackBlocks {
    len: u8,
    blocks: [(u64, u64); 4],
}

impl SackBlocks {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn push(&mut self, left: u64, right: u64) {
        debug_assert!(left < right);
        if (self.len as usize) < self.blocks.len() {
            self.blocks[self.len as usize] = (left, right);
            self.len += 1;
        }
    }
    pub fn len(&self) -> usize {
        self.len as usize
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn as_slice(&self) -> &[(u64, u64)] {
        &self.blocks[..self.len as usize]
    }
}

/// TCP timestamps option (RFC 7323 §3): TSval and TSecr in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timestamps {
    pub val: u32,
    pub ecr: u32,
}

/// Options that appear only on SYN segments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SynOptions {
    pub mss: u16,
    pub sack_permitted: bool,
    pub timestamps: bool,
    pub window_scale: Option<u8>,
}

/// IP ECN codepoint (RFC 3168 §5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Ecn {
    #[default]
    NotEct,
    Ect,
    Ce,
}

/// One segment. Sequence numbers are 64-bit and never wrap (the simulator does not model wrap-around).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    pub seq: u64,
    pub ack: u64,
    /// Payload bytes.
    pub len: u32,
    pub flags: Flags,
    /// Advertised receive window in bytes (already scaled).
    pub window: u32,
    pub ts: Option<Timestamps>,
    pub sack: SackBlocks,
    pub syn: Option<SynOptions>,
    pub ecn: Ecn,
    /// Not on the wire: set when this segment re-sends sequence space sent before (for counters).
    pub retransmission: bool,
    /// Sent with E2TCP's compact header (seed 001 §2.3) in place of the TCP and IP headers.
    pub compact: bool,
    /// Not on the wire: when this sequence range was first transmitted (per-packet latency).
    pub first_sent: crate::units::SimTime,
}

/// IPv4 header without options (RFC 791).
pub const IPV4_HEADER: u32 = 20;
/// TCP header without options (RFC 9293 §3.1).
pub const TCP_HEADER: u32 = 20;
/// Maximum TCP option space (data offset is 4 bits of 32-bit words: 60 - 20).
pub const MAX_OPTION_SPACE: u32 = 40;

/// Option sizes before padding (RFC 9293 §3.2, RFC 7323 §2.2 and §3.2, RFC 2018 §2-3).
pub const OPT_MSS: u32 = 4;
pub const OPT_WINDOW_SCALE: u32 = 3;
pub const OPT_SACK_PERMITTED: u32 = 2;
pub const OPT_TIMESTAMPS: u32 = 10;
pub const OPT_SACK_BASE: u32 = 2;
pub const OPT_SACK_PER_BLOCK: u32 = 8;

impl Segment {
    /// A bare segment with no options.
    pub fn new(seq: u64, ack: u64, len: u32, flags: Flags, window: u32) -> Self {
        Self {
            seq,
            ack,
            len,
            flags,
            window,
            ts: None,
            sack: SackBlocks::new(),
            syn: None,
            ecn: Ecn::NotEct,
            retransmission: false,
            compact: false,
            first_sent: crate::units::SimTime::ZERO,
        }
    }

    /// Sequence space this segment occupies: payload plus one each for SYN and FIN.
    pub fn seq_len(&self) -> u64 {
        self.len as u64 + self.flags.contains(Flags::SYN) as u64 + self.flags.contains(Flags::FIN) as u64
    }

    /// Option bytes including NOP padding. SYN options are packed and the total padded to a
    /// 32-bit boundary (MSS 4, SACK-permitted 2, timestamps 10, window scale 3: 19 -> 20, as
    /// Linux lays them out). On other segments each option is aligned on its own with two NOPs,
    /// as BSD and Linux send them: timestamps 12, SACK 4 + 8n.
    #[inline]
    pub fn options_len(&self) -> u32 {
        if let Some(s) = self.syn {
            let raw = OPT_MSS
                + if s.sack_permitted { OPT_SACK_PERMITTED } else { 0 }
                + if s.timestamps { OPT_TIMESTAMPS } else { 0 }
                + if s.window_scale.is_some() { OPT_WINDOW_SCALE } else { 0 };
            return raw.div_ceil(4) * 4;
        }
        let ts = if self.ts.is_some() { OPT_TIMESTAMPS + 2 } else { 0 };
        let sack = if self.sack.is_empty() { 0 } else { 2 + OPT_SACK_BASE + OPT_SACK_PER_BLOCK * self.sack.len() as u32 };
        ts + sack
    }

    /// IPv4 + TCP header bytes, or E2TCP's compact header.
    #[inline]
    pub fn header_len(&self) -> u32 {
        if self.compact {
            return super::e2tcp::header::header_len(self);
        }
        IPV4_HEADER + TCP_HEADER + self.options_len()
    }

    /// Total IP packet bytes.
    #[inline]
    pub fn wire_len(&self) -> u32 {
        self.header_len() + self.len
    }

    /// A segment with no payload and no SYN/FIN: a pure ACK.
    pub fn is_pure_ack(&self) -> bool {
        self.len == 0 && !self.flags.contains(Flags::SYN) && !self.flags.contains(Flags::FIN)
    }
}

/// Header bytes of every full-sized data segment: IPv4 and TCP headers and the options each one
/// carries (timestamps, 12 bytes with their two NOPs; RFC 7323 §3, RFC 6691). The one place
/// segment sizes are derived from an MTU.
pub fn data_header_bytes(timestamps: bool) -> u32 {
    IPV4_HEADER + TCP_HEADER + if timestamps { OPT_TIMESTAMPS + 2 } else { 0 }
}

/// Sender maximum segment size on a path of IP MTU `mtu` (RFC 9293 §3.7.1 and RFC 6691: the
/// MTU less the headers and the options every data segment carries).
pub fn smss(mtu: u32, timestamps: bool) -> u32 {
    mtu - data_header_bytes(timestamps)
}

/// The MSS option a SYN advertises: the MTU less the fixed IPv4 and TCP headers (RFC 6691 §2).
pub fn mss_option(mtu: u32) -> u16 {
    (mtu - data_header_bytes(false)).min(u16::MAX as u32) as u16
}

/// The smallest MTU a TCP connection may be given: both headers, the timestamps option and a
/// full option space beside it, and one byte of payload (a margin, so no option layout of any
/// segment can leave a segment without payload).
pub const MIN_TCP_MTU: u32 = IPV4_HEADER + TCP_HEADER + MAX_OPTION_SPACE + OPT_TIMESTAMPS + 2 + 1;

/// How many SACK blocks fit beside the other options (RFC 2018 §3: 4 alone, 3 with timestamps).
pub fn max_sack_blocks(timestamps: bool) -> usize {
    let space = MAX_OPTION_SPACE - if timestamps { OPT_TIMESTAMPS + 2 } else { 0 };
    ((space - OPT_SACK_BASE - 2) / OPT_SACK_PER_BLOCK) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack() -> Segment {
        Segment::new(1, 1, 0, Flags::ACK, 65_535)
    }

    #[test]
    fn pure_ack_without_options_is_40_bytes() {
        assert_eq!(ack().wire_len(), 40);
    }

    #[test]
    fn timestamps_add_12_bytes_with_padding() {
        let mut s = ack();
        s.ts = Some(Timestamps { val: 1, ecr: 1 });
        assert_eq!(s.wire_len(), 52);
    }

    #[test]
    fn sack_blocks_cost_2_plus_8n_padded_to_4() {
        for (n, opt) in [(1u64, 12u32), (2, 20), (3, 28), (4, 36)] {
            let mut s = ack();
            for i in 0..n {
                s.sack.push(10 * (i + 2), 10 * (i + 2) + 5);
            }
            assert_eq!(s.options_len(), opt, "{n} blocks");
        }
    }

    #[test]
    fn sack_with_timestamps_is_16_plus_8n() {
        let mut s = ack();
        s.ts = Some(Timestamps { val: 1, ecr: 1 });
        for i in 0..3u64 {
            s.sack.push(10 * (i + 2), 10 * (i + 2) + 5);
        }
        assert_eq!(s.options_len(), 16 + 8 * 3);
        assert_eq!(s.options_len(), MAX_OPTION_SPACE);
    }

    #[test]
    fn at_most_four_sack_blocks_alone_and_three_with_timestamps() {
        assert_eq!(max_sack_blocks(false), 4);
        assert_eq!(max_sack_blocks(true), 3);
    }

    #[test]
    fn syn_with_all_options_is_20_option_bytes() {
        let mut s = Segment::new(0, 0, 0, Flags::SYN, 65_535);
        s.syn = Some(SynOptions { mss: 1460, sack_permitted: true, timestamps: true, window_scale: Some(7) });
        // MSS 4 + SACK-permitted 2 + timestamps 10 + window scale 3 = 19 -> 20.
        assert_eq!(s.options_len(), 20);
        s.syn = Some(SynOptions { mss: 1460, sack_permitted: false, timestamps: false, window_scale: None });
        assert_eq!(s.options_len(), 4);
        assert_eq!(s.seq_len(), 1);
    }
}
