//! The retransmission queue as Linux keeps it (`tcp_rtx_queue`): one entry per packet sent and
//! not cumulatively acknowledged, with the kernel's per-packet marks (`TCPCB_SACKED_ACKED`,
//! `TCPCB_LOST`, `TCPCB_SACKED_RETRANS`, `TCPCB_EVER_RETRANS`) and the counters the sender keeps
//! from them (`packets_out`, `sacked_out`, `lost_out`, `retrans_out`). Packet boundaries are fixed
//! at the first transmission, so a cumulative ACK or a SACK block covers whole entries.
//!
//! Learnt from net/ipv4/tcp_input.c (`tcp_sacktag_one`, `tcp_clean_rtx_queue`,
//! `tcp_mark_skb_lost`) and tcp_output.c (`tcp_retransmit_skb`).

use crate::units::SimTime;
use std::collections::VecDeque;

/// What a packet remembers of the connection's delivery state when it is (re)sent
/// (`TCP_SKB_CB(skb)->tx`, net/ipv4/tcp_rate.c `tcp_rate_skb_sent`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TxState {
    /// `tp->delivered` at the send.
    pub delivered: u64,
    /// When `tp->delivered` last grew before the send; `None` once the packet was SACKed (it
    /// must not give a second sample when cumulatively acknowledged).
    pub delivered_at: Option<SimTime>,
    /// Send time of the first packet of the flight this one belongs to.
    pub first_tx: SimTime,
    pub app_limited: bool,
}

/// One packet in flight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Packet {
    pub seq: u64,
    pub len: u32,
    /// Carries SYN or FIN (one more unit of sequence space).
    pub ctl: bool,
    /// Last (re)transmission (`skb_mstamp`).
    pub sent_at: SimTime,
    /// First transmission, for per-packet latency.
    pub first_sent: SimTime,
    /// Reported by a SACK block (`TCPCB_SACKED_ACKED`).
    pub sacked: bool,
    /// Deemed lost and awaiting (or in) retransmission (`TCPCB_LOST`).
    pub lost: bool,
    /// Retransmitted, and that retransmission is still believed in flight (`TCPCB_SACKED_RETRANS`).
    pub retrans: bool,
    /// Ever retransmitted (`TCPCB_EVER_RETRANS`), by the retransmission queue or a loss probe.
    pub ever_retrans: bool,
    pub tx: TxState,
}

impl Packet {
    pub fn end(&self) -> u64 {
        self.seq + self.len as u64 + self.ctl as u64
    }
}

/// What a cumulative ACK removed (`tcp_clean_rtx_queue`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Cleaned {
    pub packets: u32,
    pub bytes: u64,
    /// A removed packet carried the FIN (or SYN).
    pub ctl: bool,
    /// Some removed packet had been retransmitted (`FLAG_RETRANS_DATA_ACKED`).
    pub retrans_acked: bool,
    /// Send times of the earliest and latest removed packets that were never retransmitted nor
    /// SACKed (`first_ackt`, `last_ackt`).
    pub first_clean: Option<SimTime>,
    pub last_clean: Option<SimTime>,
    /// Lowest sequence number of a removed, never retransmitted, unSACKed packet: a hole
    /// filled by an original transmission (`reord` in `tcp_clean_rtx_queue`).
    pub lowest_clean_seq: Option<u64>,
    /// A removed never-retransmitted packet lay at or below `high_seq` (`FLAG_ORIG_SACK_ACKED`).
    pub orig_below_high_seq: bool,
    /// Removed packets not SACKed before: newly delivered (for SACK connections).
    pub newly_delivered: u32,
}

/// What the SACK blocks of one ACK newly covered (`struct tcp_sacktag_state`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Tagged {
    pub packets: u32,
    /// Earliest and latest send time of newly SACKed packets never retransmitted
    /// (`first_sackt`, `last_sackt`).
    pub first_clean: Option<SimTime>,
    pub last_clean: Option<SimTime>,
    /// Lowest start of a newly SACKed, never retransmitted packet below the highest SACKed
    /// sequence before this ACK: evidence of reordering (`state->reord`).
    pub reord: Option<u64>,
    /// A newly SACKed never-retransmitted packet lay at or below `high_seq`.
    pub orig_below_high_seq: bool,
}

#[derive(Debug, Clone, Default)]
pub struct RtxQueue {
    packets: VecDeque<Packet>,
    pub packets_out: u32,
    pub sacked_out: u32,
    pub lost_out: u32,
    pub retrans_out: u32,
    /// End of the highest SACKed packet (`tcp_highest_sack_seq`), 0 until one is.
    high_sacked: u64,
}

impl RtxQueue {
    pub fn is_empty(&self) -> bool {
        self.packets.is_empty()
    }
    pub fn len(&self) -> usize {
        self.packets.len()
    }
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &Packet> {
        self.packets.iter()
    }
    pub fn get(&self, i: usize) -> Option<&Packet> {
        self.packets.get(i)
    }
    pub fn head(&self) -> Option<&Packet> {
        self.packets.front()
    }
    pub fn last(&self) -> Option<&Packet> {
        self.packets.back()
    }
    /// `tcp_highest_sack_seq`: the highest sequence a SACK covered, or `snd_una` if none.
    pub fn highest_sack_seq(&self, snd_una: u64) -> u64 {
        self.high_sacked.max(snd_una)
    }

    /// Packets believed in the network (`tcp_packets_in_flight`), with `sacked_out` replaced by
    /// the duplicate-ACK count on a connection without SACK.
    pub fn in_flight(&self, sacked_out: u32) -> u32 {
        (self.packets_out + self.retrans_out).saturating_sub(sacked_out + self.lost_out)
    }

    /// A first transmission at the right edge.
    pub fn push(&mut self, seq: u64, len: u32, ctl: bool, now: SimTime, tx: TxState) {
        debug_assert!(self.packets.back().is_none_or(|p| p.end() == seq));
        self.packets.push_back(Packet {
            seq,
            len,
            ctl,
            sent_at: now,
            first_sent: now,
            sacked: false,
            lost: false,
            retrans: false,
            ever_retrans: false,
            tx,
        });
        self.packets_out += 1;
    }

    /// The entry at `i` is sent again at `now`. `counted`: by the retransmission queue or the
    /// timer (`tcp_retransmit_skb`: counted in `retrans_out`), not a loss probe.
    pub fn retransmitted(&mut self, i: usize, now: SimTime, tx: TxState, counted: bool) {
        let p = &mut self.packets[i];
        p.sent_at = now;
        p.tx = tx;
        p.ever_retrans = true;
        if counted && !p.retrans {
            p.retrans = true;
            self.retrans_out += 1;
        }
    }

    /// `tcp_mark_skb_lost`: mark entry `i` lost; a retransmission of it still counted in flight
    /// is lost too. Returns whether it was newly marked.
    pub fn mark_lost(&mut self, i: usize) -> (bool, bool) {
        let p = &mut self.packets[i];
        let mut lost_retrans = false;
        if p.retrans {
            p.retrans = false;
            self.retrans_out -= 1;
            lost_retrans = true;
        }
        if p.sacked || p.lost {
            return (false, lost_retrans);
        }
        p.lost = true;
        self.lost_out += 1;
        (true, lost_retrans)
    }

    /// Forget every loss mark (`tcp_undo_cwnd_reduction` with `unmark_loss`).
    pub fn unmark_lost(&mut self) {
        for p in self.packets.iter_mut() {
            p.lost = false;
        }
        self.lost_out = 0;
    }

    /// SACK reneging after a timeout (`tcp_timeout_mark_lost` when the head is SACKed): the
    /// receiver may have dropped what it SACKed, so every SACK mark goes.
    pub fn forget_sacks(&mut self) {
        for p in self.packets.iter_mut() {
            p.sacked = false;
        }
        self.sacked_out = 0;
        self.high_sacked = 0;
    }

    /// Mark entries wholly inside `[left, right)` SACKed (`tcp_sacktag_one`), calling
    /// `delivered(packet)` for each newly SACKed one before its marks change. `high_seq` is the
    /// sender's `high_seq`; `prior_fack` the highest SACKed sequence before this ACK.
    pub fn sack(&mut self, left: u64, right: u64, high_seq: u64, prior_fack: u64, mut delivered: impl FnMut(&Packet), out: &mut Tagged) {
        let start = self.packets.partition_point(|p| p.seq < left);
        for k in start..self.packets.len() {
            let p = &mut self.packets[k];
            // A block covers a FIN-carrying packet once it covers its data: the receiver's
            // blocks count bytes held, and the FIN is not one.
            let covered_to = if p.len > 0 { p.seq + p.len as u64 } else { p.end() };
            if covered_to > right {
                break;
            }
            if p.sacked {
                continue;
            }
            delivered(p);
            if !p.ever_retrans {
                if p.seq < prior_fack && out.reord.is_none_or(|r| p.seq < r) {
                    out.reord = Some(p.seq);
                }
                if p.end() <= high_seq {
                    out.orig_below_high_seq = true;
                }
                if out.first_clean.is_none() {
                    out.first_clean = Some(p.sent_at);
                }
                out.last_clean = Some(p.sent_at);
            }
            if p.lost {
                p.lost = false;
                self.lost_out -= 1;
            }
            if p.retrans {
                p.retrans = false;
                self.retrans_out -= 1;
            }
            p.sacked = true;
            p.tx.delivered_at = None;
            self.sacked_out += 1;
            out.packets += 1;
            let end = p.end();
            self.high_sacked = self.high_sacked.max(end);
        }
    }

    /// Remove every entry below `ack` (`tcp_clean_rtx_queue`), calling `delivered(packet)` for
    /// each one not SACKed before.
    pub fn clean(&mut self, ack: u64, high_seq: u64, mut delivered: impl FnMut(&Packet)) -> Cleaned {
        let mut out = Cleaned::default();
        while let Some(front) = self.packets.front() {
            if front.end() > ack {
                break;
            }
            let p = self.packets.pop_front().expect("front exists");
            self.packets_out -= 1;
            out.packets += 1;
            out.bytes += p.len as u64;
            out.ctl |= p.ctl;
            if p.ever_retrans {
                out.retrans_acked = true;
            } else if !p.sacked {
                out.last_clean = Some(p.sent_at);
                out.first_clean.get_or_insert(p.sent_at);
                out.lowest_clean_seq.get_or_insert(p.seq);
                if p.end() <= high_seq {
                    out.orig_below_high_seq = true;
                }
            }
            if p.retrans {
                self.retrans_out -= 1;
            }
            if p.sacked {
                self.sacked_out -= 1;
            } else {
                out.newly_delivered += 1;
                delivered(&p);
            }
            if p.lost {
                self.lost_out -= 1;
            }
        }
        if self.packets.is_empty() || self.high_sacked <= ack {
            self.high_sacked = 0;
        }
        out
    }

    /// Index of the entry starting at `seq`.
    pub fn index_of(&self, seq: u64) -> Option<usize> {
        self.packets.binary_search_by_key(&seq, |p| p.seq).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queue(n: u64) -> RtxQueue {
        let mut q = RtxQueue::default();
        for i in 0..n {
            q.push(1 + i * 100, 100, false, SimTime(i), TxState::default());
        }
        q
    }

    #[test]
    fn in_flight_is_packets_out_minus_left_out_plus_retransmissions_tcp_packets_in_flight() {
        let mut q = queue(6);
        q.sack(301, 501, 601, 0, |_| {}, &mut Tagged::default()); // packets 3, 4
        q.mark_lost(0);
        q.mark_lost(1);
        q.retransmitted(0, SimTime(9), TxState::default(), true);
        assert_eq!((q.packets_out, q.sacked_out, q.lost_out, q.retrans_out), (6, 2, 2, 1));
        assert_eq!(q.in_flight(q.sacked_out), 3, "6 - (2 + 2) + 1");
    }

    #[test]
    fn a_lost_retransmission_leaves_retrans_out_and_is_retransmitted_again_tcp_mark_skb_lost() {
        let mut q = queue(3);
        q.mark_lost(0);
        q.retransmitted(0, SimTime(5), TxState::default(), true);
        let (newly, lost_retrans) = q.mark_lost(0);
        assert!(!newly, "it was already marked lost");
        assert!(lost_retrans);
        assert_eq!((q.lost_out, q.retrans_out), (1, 0));
    }

    #[test]
    fn sacking_below_the_highest_sack_of_an_original_reports_reordering_tcp_sacktag_one() {
        let mut q = queue(6);
        let mut t = Tagged::default();
        q.sack(401, 501, 601, 0, |_| {}, &mut t);
        assert_eq!(t.reord, None);
        let prior = q.highest_sack_seq(1);
        let mut t = Tagged::default();
        q.sack(101, 201, 601, prior, |_| {}, &mut t);
        assert_eq!(t.reord, Some(101));
    }

    #[test]
    fn clean_reports_karn_clean_send_times_and_keeps_counters_tcp_clean_rtx_queue() {
        let mut q = queue(4);
        q.mark_lost(0);
        q.retransmitted(0, SimTime(9), TxState::default(), true);
        q.sack(201, 301, 401, 0, |_| {}, &mut Tagged::default());
        let mut newly = 0;
        let c = q.clean(301, 401, |_| newly += 1);
        assert!(c.retrans_acked);
        assert_eq!(c.first_clean, Some(SimTime(1)), "packet 1: 0 was retransmitted, 2 SACKed");
        assert_eq!((c.packets, c.newly_delivered, newly), (3, 2, 2));
        assert_eq!((q.packets_out, q.sacked_out, q.lost_out, q.retrans_out), (1, 0, 0, 0));
    }
}
