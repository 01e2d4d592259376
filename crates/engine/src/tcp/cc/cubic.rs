//! CUBIC (RFC 9438): above ssthresh the window follows W_cubic(t) = C·(t − K)³ + W_max, a cubic
//! function of the time since the last congestion event, with a Reno-friendly estimate W_est as a
//! floor (§4.3). Constants per §4.1-4.2: C = 0.4, β_cubic = 0.7. Window arithmetic is in segments.

use super::{AckEvent, CongestionControl};
use crate::config::CwndGrowth;
use crate::tcp::tcb::Tcb;
use crate::units::SimTime;

/// RFC 9438 §5.1: C = 0.4 segments/s³.
pub const C: f64 = 0.4;
/// RFC 9438 §4.6: multiplicative decrease factor.
pub const BETA: f64 = 0.7;

#[derive(Debug, Clone, Default)]
pub struct CubicCc {
    /// Slow-start growth per ACK: one SMSS (RFC 5681) or up to two (RFC 3465 with L = 2).
    pub growth: CwndGrowth,
    /// W_max: window (segments) just before the last reduction (§4.2), lowered by fast
    /// convergence (§4.7).
    w_max: f64,
    /// K: time (s) W_cubic takes to climb back to W_max (§4.2 eq. 2).
    k: f64,
    /// Start of the current congestion-avoidance epoch.
    epoch_start: Option<SimTime>,
    /// W_est: the Reno-friendly window estimate (§4.3).
    w_est: f64,
}

impl CubicCc {
    pub fn new(growth: CwndGrowth) -> Self {
        Self { growth, ..Self::default() }
    }

    /// §4.2 eq. (1): W_cubic(t) in segments.
    pub fn w_cubic(&self, t: f64) -> f64 {
        C * (t - self.k).powi(3) + self.w_max
    }

    /// §4.3: α_cubic = 3(1 − β)/(1 + β), so the estimate grows like Reno with the same average.
    fn alpha() -> f64 {
        3.0 * (1.0 - BETA) / (1.0 + BETA)
    }
}

impl CongestionControl for CubicCc {
    fn on_ack(&mut self, tcb: &mut Tcb, ack: &AckEvent) {
        let acked = ack.acked;
        let smss = tcb.smss as f64;
        if tcb.cwnd < tcb.ssthresh {
            // Slow start as RFC 5681 (§4.10), with RFC 3465's byte counting when configured.
            let limit = match self.growth {
                CwndGrowth::PerAck => tcb.smss,
                CwndGrowth::PerByte => 2 * tcb.smss,
            };
            tcb.cwnd += acked.min(limit);
            return;
        }
        let cwnd = tcb.cwnd as f64 / smss;
        let now = ack.now;
        let start = *self.epoch_start.get_or_insert_with(|| {
            // §4.2: a new epoch starts at the first ACK in congestion avoidance.
            if cwnd < self.w_max {
                self.k = ((self.w_max - cwnd) / C).cbrt();
            } else {
                self.k = 0.0;
                self.w_max = cwnd;
            }
            self.w_est = cwnd;
            now
        });
        let t = (now - start).as_secs_f64();
        let rtt = ack.srtt.map_or(0.0, |r| r.as_secs_f64());
        let acked_segments = acked as f64 / smss;
        // §4.3: W_est grows α_cubic segments per window of acknowledged data.
        self.w_est += Self::alpha() * acked_segments / cwnd;
        let next = if self.w_cubic(t) < self.w_est {
            // Reno-friendly region.
            self.w_est
        } else {
            // §4.4-4.5: approach target = W_cubic(t + RTT), clamped to [cwnd, 1.5 cwnd].
            let target = self.w_cubic(t + rtt).clamp(cwnd, 1.5 * cwnd);
            cwnd + (target - cwnd) / cwnd * acked_segments
        };
        tcb.cwnd = ((next * smss) as u64).max(tcb.cwnd);
    }

    fn on_congestion_event(&mut self, tcb: &Tcb) -> u64 {
        let cwnd = tcb.cwnd as f64 / tcb.smss as f64;
        // §4.7 fast convergence: if the window did not climb back to the previous W_max (itself
        // possibly lowered by this rule), release bandwidth by lowering the new W_max further.
        self.w_max = if cwnd < self.w_max { cwnd * (1.0 + BETA) / 2.0 } else { cwnd };
        self.epoch_start = None;
        // §4.6: ssthresh = cwnd·β_cubic, at least two segments.
        ((tcb.cwnd as f64 * BETA) as u64).max(2 * tcb.smss)
    }

    fn cwnd_after_timeout(&mut self, tcb: &Tcb) -> u64 {
        // §4.8: after a timeout the epoch restarts from slow start.
        self.epoch_start = None;
        tcb.smss
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::tcb::CaState;
    use crate::units::{SimDuration, SimTime};

    fn tcb(cwnd_segments: u64) -> Tcb {
        Tcb {
            smss: 1000,
            cwnd: cwnd_segments * 1000,
            ssthresh: 1000,
            ca_state: CaState::Open,
            recover: 0,
            dupacks: 0,
            snd_una: 1,
            snd_nxt: 1,
            snd_max: 1 + cwnd_segments * 1000,
            pending_rexmit: None,
            bytes_acked: 0,
        }
    }

    #[test]
    fn reduction_keeps_seventy_percent_and_sets_k_rfc9438() {
        let mut cc = CubicCc::default();
        let mut t = tcb(100);
        t.ssthresh = cc.on_congestion_event(&t);
        assert_eq!(t.ssthresh, 70_000);
        t.cwnd = t.ssthresh;
        cc.on_ack(&mut t, &AckEvent::new(SimTime::ZERO, 1000));
        // K = cbrt(W_max (1 - β) / C) = cbrt(100 * 0.3 / 0.4) = cbrt(75).
        assert!((cc.k - 75f64.cbrt()).abs() < 1e-9);
    }

    #[test]
    fn cubic_window_follows_the_cubic_function_between_losses() {
        let mut cc = CubicCc::default();
        let mut t = tcb(100);
        t.ssthresh = cc.on_congestion_event(&t);
        t.cwnd = t.ssthresh;
        // Round by round: each RTT, a window's worth of segments is acknowledged one by one.
        let rtt = 0.1;
        let mut now = 0.0;
        while now < 8.0 {
            let segments = t.cwnd / 1000;
            for i in 0..segments {
                let at = SimTime(((now + rtt * i as f64 / segments as f64) * 1e9) as u64);
                cc.on_ack(&mut t, &AckEvent { srtt: Some(SimDuration::from_millis(100)), ..AckEvent::new(at, 1000) });
            }
            now += rtt;
            let expected = cc.w_cubic(now);
            let got = t.cwnd as f64 / 1000.0;
            assert!((got - expected).abs() <= 0.05 * expected + 2.0, "t = {now:.1}: cwnd {got:.1}, W_cubic {expected:.1}");
        }
        // Concave then convex: back at W_max near K, beyond it afterwards.
        assert!(t.cwnd as f64 / 1000.0 > 100.0);
    }

    #[test]
    fn fast_convergence_lowers_w_max_when_the_window_shrank() {
        let mut cc = CubicCc::default();
        let t = tcb(100);
        cc.on_congestion_event(&t);
        let t = tcb(80);
        cc.on_congestion_event(&t);
        assert!((cc.w_max - 80.0 * 1.7 / 2.0).abs() < 1e-9);
    }

    #[test]
    fn fast_convergence_compares_with_the_lowered_w_max_rfc9438_s4_7() {
        // 100 -> event (W_max 100), 80 -> event (W_max 68), 75 -> event: 75 >= 68, so W_max = 75
        // (RFC 8312's W_last_max = 80 would have lowered it again).
        let mut cc = CubicCc::default();
        for w in [100, 80, 75] {
            cc.on_congestion_event(&tcb(w));
        }
        assert!((cc.w_max - 75.0).abs() < 1e-9);
    }
}
