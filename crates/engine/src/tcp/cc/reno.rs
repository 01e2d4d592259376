//! Standard TCP congestion control (RFC 5681 §3.1): slow start below ssthresh, additive increase
//! of about one segment per RTT above it, ssthresh = max(FlightSize / 2, 2 SMSS) on loss.

use super::CongestionControl;
use crate::config::CwndGrowth;
use crate::tcp::tcb::Tcb;

#[derive(Debug, Clone)]
pub struct RenoCc {
    pub growth: CwndGrowth,
}

/// RFC 3465 §2.3: limit L on the slow-start increase per ACK, in segments.
const ABC_LIMIT: u64 = 2;

impl CongestionControl for RenoCc {
    fn on_ack(&mut self, tcb: &mut Tcb, acked: u64) {
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
                // RFC 5681 eq. (3): cwnd += SMSS*SMSS/cwnd per ACK (at least 1 byte).
                CwndGrowth::PerAck => tcb.cwnd += (smss * smss / tcb.cwnd).max(1),
                // RFC 3465 §2.1: one SMSS once a full cwnd of bytes has been acknowledged.
                CwndGrowth::PerByte => {
                    tcb.bytes_acked += acked;
                    if tcb.bytes_acked >= tcb.cwnd {
                        tcb.bytes_acked -= tcb.cwnd;
                        tcb.cwnd += smss;
                    }
                }
            }
        }
    }

    fn ssthresh_after_loss(&self, tcb: &Tcb) -> u64 {
        // RFC 5681 eq. (4).
        (tcb.flight_size() / 2).max(2 * tcb.smss)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::tcb::CaState;

    fn tcb(cwnd: u64, ssthresh: u64) -> Tcb {
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
        let mut cc = RenoCc { growth: CwndGrowth::PerAck };
        let mut t = tcb(2000, 64_000);
        cc.on_ack(&mut t, 2000);
        assert_eq!(t.cwnd, 3000);
    }

    #[test]
    fn slow_start_with_byte_counting_grows_up_to_two_segments_rfc3465() {
        let mut cc = RenoCc { growth: CwndGrowth::PerByte };
        let mut t = tcb(2000, 64_000);
        cc.on_ack(&mut t, 3000);
        assert_eq!(t.cwnd, 4000);
    }

    #[test]
    fn congestion_avoidance_adds_about_one_segment_per_window() {
        let mut cc = RenoCc { growth: CwndGrowth::PerAck };
        let mut t = tcb(10_000, 5_000);
        for _ in 0..10 {
            cc.on_ack(&mut t, 1000);
        }
        assert!((10_900..=11_000).contains(&t.cwnd), "{}", t.cwnd);
        let mut cc = RenoCc { growth: CwndGrowth::PerByte };
        let mut t = tcb(10_000, 5_000);
        for _ in 0..10 {
            cc.on_ack(&mut t, 1000);
        }
        assert_eq!(t.cwnd, 11_000);
    }

    #[test]
    fn ssthresh_after_loss_is_half_flight_but_at_least_two_segments() {
        let cc = RenoCc { growth: CwndGrowth::PerAck };
        let mut t = tcb(10_000, 64_000);
        t.snd_max = 1 + 8000;
        assert_eq!(cc.ssthresh_after_loss(&t), 4000);
        t.snd_max = 1 + 1000;
        assert_eq!(cc.ssthresh_after_loss(&t), 2000);
    }
}
