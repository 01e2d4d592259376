//! Conservative SACK-based loss recovery (RFC 6675 §5). On entry ssthresh = cwnd = FlightSize/2
//! and the first lost segment is retransmitted; afterwards the sender transmits whenever
//! cwnd - pipe >= SMSS, choosing with NextSeg() (lost segments first, then new data). Recovery ends
//! when the cumulative ACK passes RecoveryPoint.

use super::{AckOutcome, LossRecovery};
use crate::tcp::cc::CongestionControl;
use crate::tcp::scoreboard::Scoreboard;
use crate::tcp::tcb::{CaState, Tcb};

#[derive(Debug, Clone, Default)]
pub struct SackRecovery;

impl LossRecovery for SackRecovery {
    fn on_enter(&mut self, tcb: &mut Tcb, sb: &mut Scoreboard, cc: &mut dyn CongestionControl) {
        // RFC 6675 §5 steps (4.1)-(4.3).
        tcb.recover = tcb.snd_max;
        tcb.ssthresh = cc.on_congestion_event(tcb);
        tcb.cwnd = tcb.ssthresh;
        tcb.ca_state = CaState::Recovery;
        sb.start_episode();
        tcb.pending_rexmit = Some(tcb.snd_una);
    }

    fn on_ack(&mut self, tcb: &mut Tcb, _acked: u64) -> AckOutcome {
        if tcb.snd_una >= tcb.recover {
            AckOutcome::Exited
        } else {
            // RFC 6675 §5 (C): partial ACKs keep recovery going; RFC 6298 (5.3) restarts the timer.
            AckOutcome::Partial { restart_timer: true }
        }
    }

    fn uses_pipe(&self) -> bool {
        true
    }

    fn guards_with_recover(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::CwndGrowth;
    use crate::tcp::cc::{AimdCc, AnyCc};
    use crate::tcp::recovery::test_tcb;

    #[test]
    fn sack_entry_sets_cwnd_and_ssthresh_to_half_flight_rfc6675() {
        let mut t = test_tcb();
        let mut cc = AnyCc::Aimd(AimdCc::standard(CwndGrowth::PerAck));
        SackRecovery.on_enter(&mut t, &mut Scoreboard::new(), &mut cc);
        assert_eq!((t.cwnd, t.ssthresh), (5000, 5000));
        assert_eq!(t.recover, 10_001);
        assert_eq!(t.pending_rexmit, Some(1));
    }
}
