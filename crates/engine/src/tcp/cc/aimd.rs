//! AIMD(α, β) congestion control. Slow start below ssthresh (RFC 5681 §3.1); above it cwnd grows
//! by α segments per RTT; a congestion signal sets ssthresh = max(β·FlightSize, 2·SMSS).
//! Standard TCP (RFC 5681) is α = 1, β = 1/2; seed 004 §2 studies the TCP(α, β) family
//! (Responsive 1.24/0.25, Smooth 0.31/0.875 on the TCP-friendly curve α = 4(1 − β²)/3, and the
//! off-curve calibration protocols 1.2/1 and 0.3/0.2).

use super::{AckEvent, CongestionControl};
use crate::config::CwndGrowth;
use crate::tcp::tcb::Tcb;

#[derive(Debug, Clone)]
pub struct AimdCc {
    pub growth: CwndGrowth,
    /// Additive increase, segments per RTT.
    pub alpha: f64,
    /// Multiplicative decrease factor applied on a congestion signal.
    pub beta: f64,
}

impl AimdCc {
    /// RFC 5681 standard TCP.
    pub fn standard(growth: CwndGrowth) -> Self {
        Self { growth, alpha: 1.0, beta: 0.5 }
    }
}

/// RFC 3465 §2.3: limit L on the slow-start increase per ACK, in segments.
const ABC_LIMIT: u64 = 2;

impl CongestionControl for AimdCc {
    fn on_ack(&mut self, tcb: &mut Tcb, ack: &AckEvent) {
        let acked = ack.acked;
        let smss = tcb.smss;
        if tcb.cwnd < tcb.ssthresh {
            // Slow start: RFC 5681 eq. (2) cwnd += min(N, SMSS); RFC 3465 allows min(N, L*SMSS).
            let limit = match self.growth {
                CwndGrowth::PerAck => smss,
                CwndGrowth::PerByte => ABC_LIMIT * smss,
            };
            tcb.cwnd += acked.min(limit);
        } else {
            match self.growth {
                // RFC 5681 eq. (3) scaled by α: cwnd += α*SMSS*SMSS/cwnd per ACK (at least 1 byte).
                CwndGrowth::PerAck => {
                    let inc = (self.alpha * (smss * smss) as f64 / tcb.cwnd as f64) as u64;
                    tcb.cwnd += inc.max(1);
                }
                // RFC 3465 §2.1 scaled by α: α*SMSS once a full cwnd of bytes has been acknowledged.
                CwndGrowth::PerByte => {
                    tcb.bytes_acked += acked;
                    if tcb.bytes_acked >= tcb.cwnd {
                        tcb.bytes_acked -= tcb.cwnd;
                        tcb.cwnd += ((self.alpha * smss as f64).round() as u64).max(1);
                    }
                }
            }
        }
    }

    fn on_congestion_event(&mut self, tcb: &Tcb) -> u64 {
        // RFC 5681 eq. (4) with β in place of 1/2; seed 004 §2: repeated drops floor at 2 segments.
        // FlightSize is capped at cwnd: right after Reno leaves an inflated fast recovery the
        // data in flight can exceed the window, and a second loss must still halve the window
        // (BSD and ns-2 halve min(cwnd, rwnd); Fall & Floyd's "halves cwnd twice", seed 000 §3).
        let base = tcb.flight_size().min(tcb.cwnd);
        ((self.beta * base as f64) as u64).max(2 * tcb.smss)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::tcb::CaState;

    pub(crate) fn tcb(cwnd: u64, ssthresh: u64) -> Tcb {
        Tcb {
            smss: 1000,
            cwnd,
            ssthresh,
            ca_state: CaState::Open,
            recover: 0,
            dupacks: 0,
            snd_una: 1,
            snd_nxt: 1,
            snd_max: 1,
            pending_rexmit: None,
            bytes_acked: 0,
        }
    }

    #[test]
    fn slow_start_grows_by_min_of_acked_and_smss() {
        let mut cc = AimdCc::standard(CwndGrowth::PerAck);
        let mut t = tcb(2000, 64_000);
        cc.on_ack(&mut t, &AckEvent::new(Default::default(), 2000));
        assert_eq!(t.cwnd, 3000);
    }

    #[test]
    fn slow_start_with_byte_counting_grows_up_to_two_segments_rfc3465() {
        let mut cc = AimdCc::standard(CwndGrowth::PerByte);
        let mut t = tcb(2000, 64_000);
        cc.on_ack(&mut t, &AckEvent::new(Default::default(), 3000));
        assert_eq!(t.cwnd, 4000);
    }

    #[test]
    fn congestion_avoidance_adds_about_one_segment_per_window() {
        let mut cc = AimdCc::standard(CwndGrowth::PerAck);
        let mut t = tcb(10_000, 5_000);
        for _ in 0..10 {
            cc.on_ack(&mut t, &AckEvent::new(Default::default(), 1000));
        }
        assert!((10_900..=11_000).contains(&t.cwnd), "{}", t.cwnd);
        let mut cc = AimdCc::standard(CwndGrowth::PerByte);
        let mut t = tcb(10_000, 5_000);
        for _ in 0..10 {
            cc.on_ack(&mut t, &AckEvent::new(Default::default(), 1000));
        }
        assert_eq!(t.cwnd, 11_000);
    }

    #[test]
    fn ssthresh_after_loss_is_half_flight_but_at_least_two_segments() {
        let mut cc = AimdCc::standard(CwndGrowth::PerAck);
        let mut t = tcb(10_000, 64_000);
        t.snd_max = 1 + 8000;
        assert_eq!(cc.on_congestion_event(&t), 4000);
        t.snd_max = 1 + 1000;
        assert_eq!(cc.on_congestion_event(&t), 2000);
    }

    #[test]
    fn a_second_loss_after_an_inflated_recovery_still_halves_the_window() {
        let mut cc = AimdCc::standard(CwndGrowth::PerAck);
        let mut t = tcb(10_000, 10_000);
        t.snd_max = 1 + 16_000; // more in flight than the window, as after Reno's inflation
        assert_eq!(cc.on_congestion_event(&t), 5_000);
    }

    #[test]
    fn window_after_loss_is_beta_times_w_seed004() {
        let mut cc = AimdCc { growth: CwndGrowth::PerAck, alpha: 0.31, beta: 0.875 };
        let mut t = tcb(16_000, 64_000);
        t.snd_max = 1 + 16_000;
        assert_eq!(cc.on_congestion_event(&t), 14_000);
        cc.beta = 0.25;
        assert_eq!(cc.on_congestion_event(&t), 4_000);
    }

    #[test]
    fn congestion_avoidance_grows_alpha_segments_per_window_seed004() {
        for alpha in [0.31, 1.24, 1.2, 0.3] {
            for growth in [CwndGrowth::PerAck, CwndGrowth::PerByte] {
                let mut cc = AimdCc { growth, alpha, beta: 0.5 };
                let mut t = tcb(20_000, 1_000);
                // One window's worth of ACKs, one per segment.
                for _ in 0..20 {
                    cc.on_ack(&mut t, &AckEvent::new(Default::default(), 1000));
                }
                let grown = (t.cwnd - 20_000) as f64 / 1000.0;
                assert!((grown - alpha).abs() < 0.06 * alpha.max(1.0), "alpha {alpha} {growth:?}: grew {grown}");
            }
        }
    }
}
