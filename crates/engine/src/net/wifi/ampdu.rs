//! A-MPDU aggregation and the block ack recipient's reordering buffer (IEEE 802.11-2020 10.12,
//! 10.25; docs/models/wifi.md "A-MPDU and block ack"): how many queued MPDUs fit in one PPDU,
//! and how the recipient passes MPDUs up in sequence-number order.

use super::ht::{HtPhy, PPDU_MAX_TIME};
use std::collections::VecDeque;

/// The MPDU delimiter in front of each MPDU of an A-MPDU (9.7.1): 4 bytes.
pub const DELIMITER: u32 = 4;
/// Compressed BlockAck (9.3.1.8.2): frame control 2, duration 2, RA 6, TA 6, BA control 2,
/// starting sequence control 2, 64-bit bitmap 8, FCS 4.
pub const BLOCK_ACK_BYTES: u32 = 32;
/// Compressed BlockAckReq (9.3.1.7): frame control 2, duration 2, RA 6, TA 6, BAR control 2,
/// starting sequence control 2, FCS 4.
pub const BLOCK_ACK_REQ_BYTES: u32 = 24;
/// The block ack window (10.25.2, WinSize 64): sequence numbers in flight to one recipient.
pub const WINDOW: u16 = 64;

/// Distance from sequence number `from` forward to `seq`, modulo 4096 (10.3.2.14).
pub fn seq_offset(seq: u16, from: u16) -> u16 {
    seq.wrapping_sub(from) & 0x0fff
}

/// The A-MPDU being assembled: each MPDU framed by its delimiter, every subframe but the last
/// padded to a multiple of 4 bytes (9.7.1), within the MPDU count, the largest A-MPDU and
/// aPPDUMaxTime.
#[derive(Debug, Clone, Copy)]
pub struct Builder {
    max_mpdus: u32,
    max_bytes: u32,
    mpdus: u32,
    /// Length with the last subframe unpadded.
    len: u32,
}

impl Builder {
    pub fn new(phy: &HtPhy, max_mpdus: u32) -> Self {
        Self { max_mpdus, max_bytes: phy.max_ampdu_bytes(), mpdus: 0, len: 0 }
    }

    /// Add an MPDU of `mpdu` bytes if it fits; the first always does.
    pub fn push(&mut self, phy: &HtPhy, mpdu: u32) -> bool {
        let len = if self.mpdus == 0 { DELIMITER + mpdu } else { self.len.next_multiple_of(4) + DELIMITER + mpdu };
        if self.mpdus > 0 && (self.mpdus >= self.max_mpdus || len > self.max_bytes || phy.txtime(len) > PPDU_MAX_TIME) {
            return false;
        }
        self.mpdus += 1;
        self.len = len;
        true
    }

    pub fn mpdus(&self) -> u32 {
        self.mpdus
    }

    /// The A-MPDU's length in bytes (the PSDU).
    pub fn len(&self) -> u32 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.mpdus == 0
    }
}

/// An MPDU the recipient holds until the ones before it arrive. `sender_done`: the originator
/// has forgotten it (acknowledged, or discarded at its retry limit), so passing it up frees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Held<P> {
    pub payload: P,
    pub sender_done: bool,
}

/// The recipient's reordering buffer for one originator (10.25.6): MPDUs go up in
/// sequence-number order; one that arrives after a gap waits for the gap to fill, for a
/// BlockAckReq that moves the window past it, or for an MPDU beyond the window's end.
#[derive(Debug, Clone)]
pub struct Reorder<P> {
    /// WinStartB: the next sequence number to pass up.
    start: u16,
    /// Slot k: MPDU `start + k`, if it arrived (fewer than 64 slots).
    slots: VecDeque<Option<Held<P>>>,
}

impl<P: Copy> Default for Reorder<P> {
    fn default() -> Self {
        Self { start: 0, slots: VecDeque::new() }
    }
}

impl<P: Copy> Reorder<P> {
    /// Whether MPDU `seq` was received: held, or behind the window (passed up, or given up by
    /// the originator).
    pub fn has(&self, seq: u16) -> bool {
        let d = seq_offset(seq, self.start);
        d >= 2048 || self.slots.get(d as usize).is_some_and(Option::is_some)
    }

    /// MPDU `seq`, if it is held.
    pub fn held_mut(&mut self, seq: u16) -> Option<&mut Held<P>> {
        let d = seq_offset(seq, self.start);
        self.slots.get_mut(d as usize).and_then(Option::as_mut)
    }

    /// MPDU `seq` arrived: `false` for a duplicate. What can go up now is appended to `up`.
    pub fn receive(&mut self, seq: u16, payload: P, up: &mut Vec<Held<P>>) -> bool {
        let mut d = seq_offset(seq, self.start);
        if d >= 2048 {
            return false;
        }
        if d >= WINDOW {
            // Beyond the window's end: the window moves so that it ends at `seq` (10.25.6.6).
            self.advance((seq.wrapping_sub(WINDOW - 1)) & 0x0fff, up);
            d = WINDOW - 1;
        }
        let d = d as usize;
        if self.slots.len() <= d {
            self.slots.resize(d + 1, None);
        }
        if self.slots[d].is_some() {
            return false;
        }
        self.slots[d] = Some(Held { payload, sender_done: false });
        self.release(up);
        true
    }

    /// A BlockAckReq with starting sequence number `ssn`: everything held before it goes up,
    /// then what follows it in order (10.25.6.7).
    pub fn advance(&mut self, ssn: u16, up: &mut Vec<Held<P>>) {
        let d = seq_offset(ssn, self.start);
        if d >= 2048 {
            return;
        }
        for _ in 0..d {
            match self.slots.pop_front() {
                Some(slot) => up.extend(slot),
                None => break,
            }
        }
        self.start = ssn;
        self.release(up);
    }

    fn release(&mut self, up: &mut Vec<Held<P>>) {
        while let Some(Some(h)) = self.slots.front() {
            up.push(*h);
            self.slots.pop_front();
            self.start = (self.start + 1) & 0x0fff;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::phy::{HtFormat, HtMode};

    fn ht(mcs: u8) -> HtPhy {
        HtPhy::new(HtMode { format: HtFormat::HtMixed, mcs, bandwidth_mhz: 20, streams: 1, short_gi: false }).unwrap()
    }

    fn vht() -> HtPhy {
        HtPhy::new(HtMode { format: HtFormat::Vht, mcs: 9, bandwidth_mhz: 80, streams: 2, short_gi: true }).unwrap()
    }

    fn fill(phy: &HtPhy, max: u32, mpdu: u32) -> Builder {
        let mut b = Builder::new(phy, max);
        while b.push(phy, mpdu) {}
        b
    }

    #[test]
    fn subframes_are_delimited_and_padded_to_4_bytes_except_the_last_9_7_1() {
        let p = ht(7);
        let mut b = Builder::new(&p, 64);
        assert!(b.push(&p, 1538));
        assert_eq!(b.len(), 4 + 1538);
        assert!(b.push(&p, 1538));
        // 1542 padded to 1544, then 4 + 1538.
        assert_eq!(b.len(), 1544 + 1542);
    }

    #[test]
    fn an_ht_a_mpdu_stops_at_the_longest_ppdu_time_19_4_4() {
        // MCS 7, 20 MHz, long GI (260 bits per 4 us symbol): 5484 us - 36 us preamble leaves
        // 1362 symbols = 354,120 bits, of which 22 are SERVICE and tail: 44,262 bytes. Subframes
        // of 1544 bytes: 28 MPDUs take 27 x 1544 + 1542 = 43,230 bytes; 29 would take 44,774.
        let b = fill(&ht(7), 64, 1538);
        assert_eq!((b.mpdus(), b.len()), (28, 43_230));
        assert!(ht(7).txtime(b.len()) <= PPDU_MAX_TIME);
    }

    #[test]
    fn an_ht_a_mpdu_stops_at_65535_bytes_9_4_2_55_3() {
        // At MCS 7, 2 streams, 40 MHz, short GI (300 Mbit/s) time is no limit: 42 subframes take
        // 41 x 1544 + 1542 = 64,846 bytes; a 43rd would reach 66,390 > 65,535.
        let p = HtPhy::new(HtMode { format: HtFormat::HtMixed, mcs: 7, bandwidth_mhz: 40, streams: 2, short_gi: true }).unwrap();
        let b = fill(&p, 64, 1538);
        assert_eq!((b.mpdus(), b.len()), (42, 64_846));
    }

    #[test]
    fn a_vht_a_mpdu_stops_at_the_64_mpdu_block_ack_window_10_25_2() {
        // 866.7 Mbit/s: 64 x 1544 bytes is 0.9 ms and far below 1,048,575 bytes.
        let b = fill(&vht(), 64, 1538);
        assert_eq!(b.mpdus(), 64);
        assert_eq!(fill(&vht(), 16, 1538).mpdus(), 16);
        assert_eq!(fill(&vht(), 1, 1538).mpdus(), 1);
    }

    #[test]
    fn the_recipient_passes_mpdus_up_in_order_after_a_gap_fills_10_25_6() {
        let mut r: Reorder<u32> = Reorder::default();
        let mut up = Vec::new();
        assert!(r.receive(0, 100, &mut up));
        assert!(r.receive(2, 102, &mut up));
        assert!(r.receive(3, 103, &mut up));
        assert_eq!(up.iter().map(|h| h.payload).collect::<Vec<_>>(), [100]);
        assert!(r.has(2) && !r.has(1) && r.has(0));
        assert!(!r.receive(2, 102, &mut up), "a duplicate");
        assert!(r.receive(1, 101, &mut up));
        assert_eq!(up.iter().map(|h| h.payload).collect::<Vec<_>>(), [100, 101, 102, 103]);
        assert!(!r.receive(1, 101, &mut up), "behind the window: a duplicate");
    }

    #[test]
    fn a_block_ack_request_moves_the_window_past_a_given_up_mpdu_10_25_6_7() {
        let mut r: Reorder<u32> = Reorder::default();
        let mut up = Vec::new();
        r.receive(4095, 0, &mut up); // window starts at 0: far behind, a duplicate
        assert!(up.is_empty());
        r.receive(1, 1, &mut up);
        r.receive(2, 2, &mut up);
        assert!(up.is_empty());
        r.advance(1, &mut up);
        assert_eq!(up.iter().map(|h| h.payload).collect::<Vec<_>>(), [1, 2]);
        // An MPDU beyond the window's end moves it: 70 - 63 = 7, so 3..6 are given up.
        up.clear();
        r.receive(5, 5, &mut up);
        r.receive(70, 70, &mut up);
        assert_eq!(up.iter().map(|h| h.payload).collect::<Vec<_>>(), [5]);
        assert!(r.has(70) && r.has(6));
    }
}
