//! RACK (RFC 8985 §6): a packet is lost once a packet sent after it has been delivered and more
//! than the latest delivered packet's RTT plus a reordering window has passed since it was sent.
//! Time, not duplicate-ACK counts, so lost retransmissions and tail losses are found too.
//!
//! Learnt from net/ipv4/tcp_recovery.c (`tcp_rack_advance`, `tcp_rack_reo_wnd`,
//! `tcp_rack_detect_loss`, `tcp_rack_update_reo_wnd`).

use crate::units::{SimDuration, SimTime};

/// RFC 8985 §6.2 step 4 / Linux's TCP_RACK_RECOVERY_THRESH: recoveries a widened window lasts.
pub const RECOVERY_THRESH: u32 = 16;

#[derive(Debug, Clone, Default)]
pub struct Rack {
    /// Send time and end of the most recently sent packet delivered so far (RACK.xmit_ts,
    /// RACK.end_seq), and its RTT (RACK.rtt).
    pub xmit_ts: Option<SimTime>,
    pub end_seq: u64,
    pub rtt: SimDuration,
    /// A delivery moved `xmit_ts` since the last loss scan (`rack.advanced`).
    pub advanced: bool,
    /// The reordering window in quarters of min RTT (`reo_wnd_steps`, RFC 8985 §6.2 step 4).
    pub reo_wnd_steps: u32,
    /// Recoveries left before the window shrinks back (`reo_wnd_persist`).
    pub reo_wnd_persist: u32,
    /// A D-SACK arrived and the window should widen (`dsack_seen`).
    pub dsack_seen: bool,
    /// `tp->delivered` when the window last widened (`last_delivered`).
    pub last_delivered: u64,
}

/// `tcp_skb_sent_after`: sent later, or at the same time with a higher end.
pub fn sent_after(t1: SimTime, t2: SimTime, seq1: u64, seq2: u64) -> bool {
    t1 > t2 || (t1 == t2 && seq1 > seq2)
}

impl Rack {
    pub fn new() -> Self {
        Self { reo_wnd_steps: 1, ..Self::default() }
    }

    /// RFC 8985 §6.2 step 2 (`tcp_rack_advance`): a packet sent at `xmit` ending at `end` was
    /// delivered at `now`. A retransmitted one whose RTT is below the minimum RTT may have been
    /// delivered by its original transmission, so it says nothing.
    pub fn advance(&mut self, now: SimTime, xmit: SimTime, end: u64, retransmitted: bool, min_rtt: Option<SimDuration>) {
        if self.xmit_ts.is_some_and(|t| !sent_after(xmit, t, end, self.end_seq)) {
            return;
        }
        let rtt = now - xmit;
        if retransmitted && min_rtt.is_some_and(|m| rtt < m) {
            return;
        }
        self.rtt = rtt;
        self.xmit_ts = Some(xmit);
        self.end_seq = end;
        self.advanced = true;
    }

    /// RFC 8985 §6.2 step 4 (`tcp_rack_reo_wnd`): no window while reordering was never seen and
    /// either recovery is under way or the duplicate-ACK threshold is met (`sacked_out >=
    /// reordering`); otherwise min RTT / 4 per step, at most SRTT.
    pub fn reo_wnd(&self, reord_seen: bool, in_recovery: bool, sacked_out: u32, reordering: u32, min_rtt: Option<SimDuration>, srtt: Option<SimDuration>) -> SimDuration {
        if !reord_seen && (in_recovery || sacked_out >= reordering) {
            return SimDuration(0);
        }
        let quarter = min_rtt.map_or(0, |m| m.0 / 4);
        SimDuration((quarter * self.reo_wnd_steps as u64).min(srtt.map_or(u64::MAX, |s| s.0)))
    }

    /// How long after `now` a packet sent at `sent` stays unjudged (RFC 8985 §6.2 step 5):
    /// negative or zero means lost.
    pub fn remaining(&self, now: SimTime, sent: SimTime, reo_wnd: SimDuration) -> i64 {
        (self.rtt.0 + reo_wnd.0) as i64 - (now.0 as i64 - sent.0 as i64)
    }

    /// RFC 8985 §6.2 step 4 (`tcp_rack_update_reo_wnd`), once per ACK: widen the window a step
    /// after a D-SACK (at most once per round trip), or return it to one step when the widened
    /// window has outlived its recoveries. `prior_delivered`: the delivered count when the
    /// ACK's sampled packet was sent (0: no sample).
    pub fn update_reo_wnd(&mut self, prior_delivered: u64, delivered: u64) {
        if prior_delivered == 0 {
            return;
        }
        if prior_delivered < self.last_delivered {
            self.dsack_seen = false;
        }
        if self.dsack_seen {
            self.reo_wnd_steps = (self.reo_wnd_steps + 1).min(0xff);
            self.dsack_seen = false;
            self.last_delivered = delivered;
            self.reo_wnd_persist = RECOVERY_THRESH;
        } else if self.reo_wnd_persist == 0 {
            self.reo_wnd_steps = 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> SimDuration {
        SimDuration::from_millis(n)
    }

    #[test]
    fn rack_follows_the_most_recently_sent_delivered_packet_rfc8985_s6_2() {
        let mut r = Rack::new();
        r.advance(SimTime(ms(50).0), SimTime(ms(10).0), 200, false, None);
        r.advance(SimTime(ms(60).0), SimTime(ms(5).0), 100, false, None);
        assert_eq!((r.xmit_ts, r.end_seq, r.rtt), (Some(SimTime(ms(10).0)), 200, ms(40)));
    }

    #[test]
    fn a_retransmission_acked_faster_than_the_min_rtt_is_ambiguous_and_ignored_rfc8985_s6_2() {
        let mut r = Rack::new();
        r.advance(SimTime(ms(105).0), SimTime(ms(100).0), 300, true, Some(ms(40)));
        assert!(r.xmit_ts.is_none());
        r.advance(SimTime(ms(145).0), SimTime(ms(100).0), 300, true, Some(ms(40)));
        assert_eq!(r.rtt, ms(45));
    }

    #[test]
    fn the_reordering_window_is_zero_in_recovery_until_reordering_is_seen_rfc8985_s6_2_step4() {
        let r = Rack::new();
        assert_eq!(r.reo_wnd(false, true, 0, 3, Some(ms(40)), Some(ms(50))), ms(0));
        assert_eq!(r.reo_wnd(false, false, 3, 3, Some(ms(40)), Some(ms(50))), ms(0));
        assert_eq!(r.reo_wnd(false, false, 2, 3, Some(ms(40)), Some(ms(50))), ms(10));
        assert_eq!(r.reo_wnd(true, true, 9, 3, Some(ms(40)), Some(ms(50))), ms(10));
    }

    #[test]
    fn dsacks_widen_the_window_a_quarter_min_rtt_at_a_time_up_to_srtt_rfc8985_s6_2_step4() {
        let mut r = Rack::new();
        for k in 1..=5u64 {
            r.dsack_seen = true;
            r.update_reo_wnd(100 * k, 100 * k + 50);
        }
        assert_eq!(r.reo_wnd_steps, 6);
        assert_eq!(r.reo_wnd(true, false, 0, 3, Some(ms(40)), Some(ms(50))), ms(50), "6 x 10 ms capped at SRTT");
        // A D-SACK within the same round trip is not counted twice.
        r.dsack_seen = true;
        r.update_reo_wnd(100, 600);
        assert_eq!(r.reo_wnd_steps, 6);
    }
}
