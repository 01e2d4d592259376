//! The sender's record of every segment in flight: what was SACKed, what is deemed lost, what was
//! retransmitted. Segment boundaries are fixed when a segment is first sent (retransmissions
//! never repacketize), so a cumulative ACK or a SACK block maps onto whole entries.
//!
//! Loss detection and the `pipe` estimate follow RFC 6675 §4 (IsLost, SetPipe) and §5 (NextSeg).

use super::rate::{Delivery, TxRecord};
use crate::units::SimTime;
use std::collections::VecDeque;

/// One transmitted segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegInfo {
    pub seq: u64,
    /// Payload bytes.
    pub len: u32,
    /// Carries FIN (takes one more unit of sequence space).
    pub fin: bool,
    pub sent_at: SimTime,
    /// First transmission (kept through retransmissions).
    pub first_sent: SimTime,
    /// Reported received by a SACK block.
    pub sacked: bool,
    /// Deemed lost by RFC 6675 IsLost().
    pub lost: bool,
    /// Retransmitted since the last time the entry was (re)sent for the first time in this episode.
    pub retransmitted: bool,
    /// Ever retransmitted (Karn's rule: never take an RTT sample from it).
    pub ever_retransmitted: bool,
    /// Ever reported by a SACK block. Its send time has then given (or could have given) its
    /// sample, and the later cumulative ACK says nothing about its round trip; kept through a
    /// timeout, which forgets `sacked`, so a segment SACKed again never gives a second sample.
    pub ever_sacked: bool,
    /// The connection's delivery state at the last send, for rate samples (`tcp::rate`).
    pub tx: TxRecord,
}

impl SegInfo {
    pub fn end(&self) -> u64 {
        self.seq + self.len as u64 + self.fin as u64
    }
}

#[derive(Debug, Clone, Default)]
pub struct Scoreboard {
    segs: VecDeque<SegInfo>,
    /// Highest sequence number covered by any SACK block (RFC 6675 "HighSACK" end), 0 if none.
    high_sacked: u64,
}

/// What a cumulative ACK removed.
#[derive(Debug, Clone, Copy, Default)]
pub struct Acked {
    pub bytes: u64,
    pub segments: u32,
    pub fin_acked: bool,
    /// Some removed segment had been retransmitted (Linux's FLAG_RETRANS_DATA_ACKED).
    pub retransmitted: bool,
    /// Send time of the earliest removed segment never retransmitted nor SACKed (Linux's
    /// first_ackt), the candidate for an RTT sample.
    pub first_clean_sent: Option<SimTime>,
    /// Data delivered by this ACK and not by an earlier SACK block.
    pub delivery: Delivery,
}

/// What the SACK blocks of one ACK newly covered.
#[derive(Debug, Clone, Copy, Default)]
pub struct Sacked {
    pub segments: u32,
    /// Send time of the earliest newly SACKed segment never retransmitted (Linux's first_sackt).
    pub first_clean_sent: Option<SimTime>,
    /// Data the blocks newly delivered (never SACKed before).
    pub delivery: Delivery,
}

impl Sacked {
    /// Fold in another block's result.
    pub fn add(&mut self, other: Sacked) {
        self.segments += other.segments;
        self.delivery.merge(other.delivery);
        self.first_clean_sent = match (self.first_clean_sent, other.first_clean_sent) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }
}

impl Scoreboard {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.segs.len()
    }
    pub fn is_empty(&self) -> bool {
        self.segs.is_empty()
    }
    pub fn iter(&self) -> impl Iterator<Item = &SegInfo> {
        self.segs.iter()
    }
    pub fn high_sacked(&self) -> u64 {
        self.high_sacked
    }

    /// Record a first transmission at the right edge.
    pub fn push(&mut self, seq: u64, len: u32, fin: bool, now: SimTime, tx: TxRecord) {
        debug_assert!(self.segs.back().is_none_or(|s| s.end() == seq));
        self.segs.push_back(SegInfo {
            seq,
            len,
            fin,
            sent_at: now,
            first_sent: now,
            sacked: false,
            lost: false,
            retransmitted: false,
            ever_retransmitted: false,
            ever_sacked: false,
            tx,
        });
    }

    /// Index of the entry starting at `seq`.
    pub fn index_of(&self, seq: u64) -> Option<usize> {
        self.segs.binary_search_by_key(&seq, |s| s.seq).ok()
    }
    pub fn get(&self, i: usize) -> Option<&SegInfo> {
        self.segs.get(i)
    }

    /// Note that the entry at `i` was sent again at `now`.
    pub fn mark_retransmitted(&mut self, i: usize, now: SimTime, tx: TxRecord) {
        let s = &mut self.segs[i];
        s.tx = tx;
        s.retransmitted = true;
        s.ever_retransmitted = true;
        s.sent_at = now;
    }

    /// Remove everything below `ack` (RFC 9293 cumulative acknowledgment).
    pub fn on_cumulative_ack(&mut self, ack: u64) -> Acked {
        let mut out = Acked::default();
        while let Some(front) = self.segs.front() {
            if front.end() > ack {
                break;
            }
            let s = self.segs.pop_front().expect("front exists");
            out.bytes += s.len as u64;
            out.segments += 1;
            out.fin_acked |= s.fin;
            out.retransmitted |= s.ever_retransmitted;
            if !s.ever_sacked {
                out.delivery.add(s.tx, s.end(), s.len as u64);
            }
            if out.first_clean_sent.is_none() && !s.ever_retransmitted && !s.ever_sacked {
                // Entries are in sequence order and first transmissions go out in sequence
                // order, so the first clean entry is the earliest sent.
                out.first_clean_sent = Some(s.sent_at);
            }
        }
        out
    }

    /// Mark entries wholly inside `[left, right)` as SACKed.
    pub fn on_sack_block(&mut self, left: u64, right: u64) -> Sacked {
        let start = self.segs.partition_point(|s| s.seq < left);
        let mut out = Sacked::default();
        for s in self.segs.range_mut(start..) {
            if s.end() > right {
                break;
            }
            if !s.sacked {
                s.sacked = true;
                s.lost = false;
                out.segments += 1;
                if out.first_clean_sent.is_none() && !s.ever_retransmitted && !s.ever_sacked {
                    out.first_clean_sent = Some(s.sent_at);
                }
                if !s.ever_sacked {
                    out.delivery.add(s.tx, s.end(), s.len as u64);
                }
                s.ever_sacked = true;
            }
        }
        if out.segments > 0 {
            self.high_sacked = self.high_sacked.max(right);
        }
        out
    }

    /// RFC 2018 §8: after a retransmission timeout the sender forgets SACK information, and every
    /// outstanding segment is about to be sent again.
    pub fn on_timeout(&mut self) {
        for s in self.segs.iter_mut() {
            s.sacked = false;
            s.lost = false;
            s.retransmitted = false;
        }
        self.high_sacked = 0;
    }

    /// Clear per-episode retransmission marks when a new recovery episode starts.
    pub fn start_episode(&mut self) {
        for s in self.segs.iter_mut() {
            s.retransmitted = false;
        }
    }

    /// RFC 6675 §4 IsLost(): an unSACKed segment is lost when at least `dupthresh` SACKed
    /// segments, or more than (dupthresh - 1) * SMSS SACKed bytes, lie above it. Returns the
    /// number of entries newly marked lost.
    pub fn update_lost(&mut self, dupthresh: u32, smss: u32) -> u32 {
        let byte_limit = (dupthresh.saturating_sub(1) as u64) * smss as u64;
        let (mut sacked_segs, mut sacked_bytes, mut newly) = (0u32, 0u64, 0u32);
        for s in self.segs.iter_mut().rev() {
            if s.sacked {
                sacked_segs += 1;
                sacked_bytes += s.len as u64;
            } else if !s.lost && (sacked_segs >= dupthresh || sacked_bytes > byte_limit) {
                s.lost = true;
                newly += 1;
            }
        }
        newly
    }

    /// RFC 6675 §4 SetPipe(): bytes believed in the network.
    pub fn pipe(&self) -> u64 {
        self.segs
            .iter()
            .filter(|s| !s.sacked)
            .map(|s| {
                let len = s.len.max(s.fin as u32) as u64;
                (if s.lost { 0 } else { len }) + (if s.retransmitted { len } else { 0 })
            })
            .sum()
    }

    /// RFC 6675 §4 NextSeg() rules (1) and (3) for retransmissions: the first lost segment not yet
    /// retransmitted; failing that (when `allow_rule3`), the first unSACKed, unretransmitted
    /// segment below the highest SACKed byte. Rule (2), new data, is the caller's.
    pub fn next_retransmission(&self, allow_rule3: bool) -> Option<usize> {
        if let Some(i) = self.segs.iter().position(|s| !s.sacked && s.lost && !s.retransmitted) {
            return Some(i);
        }
        if allow_rule3 {
            return self
                .segs
                .iter()
                .position(|s| !s.sacked && !s.retransmitted && s.end() <= self.high_sacked);
        }
        None
    }

    pub fn has_sacked(&self) -> bool {
        self.high_sacked > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(n: u64) -> Scoreboard {
        let mut b = Scoreboard::new();
        for i in 0..n {
            b.push(1 + i * 100, 100, false, SimTime(i), TxRecord::default());
        }
        b
    }

    #[test]
    fn cumulative_ack_removes_whole_segments_and_reports_bytes() {
        let mut b = board(5);
        let a = b.on_cumulative_ack(301);
        assert_eq!(a.bytes, 300);
        assert_eq!(a.segments, 3);
        assert_eq!(b.len(), 2);
    }

    #[test]
    fn is_lost_needs_three_sacked_segments_above_rfc6675() {
        let mut b = board(5);
        b.on_sack_block(101, 301); // segments 1, 2
        assert_eq!(b.update_lost(3, 100), 0);
        b.on_sack_block(301, 401); // segment 3
        assert_eq!(b.update_lost(3, 100), 1);
        assert!(b.get(0).unwrap().lost);
        assert!(!b.get(4).unwrap().lost);
    }

    #[test]
    fn pipe_counts_unsacked_not_lost_plus_retransmitted_rfc6675() {
        let mut b = board(5);
        b.on_sack_block(101, 401);
        b.update_lost(3, 100);
        // seg0 lost (0), seg1-3 SACKed (0), seg4 outstanding (100).
        assert_eq!(b.pipe(), 100);
        let i = b.next_retransmission(false).unwrap();
        assert_eq!(i, 0);
        b.mark_retransmitted(i, SimTime(9), TxRecord::default());
        assert_eq!(b.pipe(), 200);
        assert_eq!(b.next_retransmission(false), None);
    }

    #[test]
    fn acks_report_the_earliest_send_time_of_data_neither_retransmitted_nor_sacked_karn() {
        let mut b = board(5); // segment i sent at time i
        b.mark_retransmitted(1, SimTime(9), TxRecord::default());
        // SACKing segments 2-3 reports segment 2's send time; a SACKed segment is not offered again.
        assert_eq!(b.on_sack_block(201, 401).first_clean_sent, Some(SimTime(2)));
        let a = b.on_cumulative_ack(501);
        assert!(a.retransmitted, "segment 1 was retransmitted");
        assert_eq!(a.first_clean_sent, Some(SimTime(0)), "segment 0; 1 is retransmitted, 2-3 SACKed");
        let mut b = board(3);
        b.mark_retransmitted(0, SimTime(9), TxRecord::default());
        assert_eq!(b.on_sack_block(1, 101).first_clean_sent, None, "a retransmitted segment gives nothing");
    }

    #[test]
    fn a_segment_sacked_again_after_a_timeout_gives_no_second_sample() {
        let mut b = board(3);
        assert_eq!(b.on_sack_block(101, 201).first_clean_sent, Some(SimTime(1)));
        b.on_timeout(); // RFC 2018 §8: SACK information is forgotten
        let again = b.on_sack_block(101, 201);
        assert_eq!((again.segments, again.first_clean_sent), (1, None));
        assert_eq!(b.on_cumulative_ack(201).first_clean_sent, Some(SimTime(0)));
    }

    /// draft-cheng-iccrg-delivery-rate-estimation §3.3: a packet counts as delivered once, when
    /// it is first SACKed or cumulatively acknowledged, whichever comes first.
    #[test]
    fn data_is_delivered_once_whether_sacked_first_or_acknowledged_draft_cheng_s3_3() {
        let mut b = board(4);
        assert_eq!(b.on_sack_block(201, 401).delivery.bytes, 200);
        b.on_timeout(); // forgets the SACKs, not the deliveries
        assert_eq!(b.on_sack_block(201, 301).delivery.bytes, 0);
        assert_eq!(b.on_cumulative_ack(401).delivery.bytes, 200, "segments 0 and 1 only");
    }

    #[test]
    fn timeout_forgets_sack_information_rfc2018() {
        let mut b = board(3);
        b.on_sack_block(101, 201);
        b.on_timeout();
        assert!(b.iter().all(|s| !s.sacked));
        assert!(!b.has_sacked());
    }
}
