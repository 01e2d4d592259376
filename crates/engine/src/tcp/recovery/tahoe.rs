//! Tahoe: fast retransmit without fast recovery. After three duplicate ACKs the sender halves
//! ssthresh, drops cwnd to one segment and slow-starts again from the lost segment (go-back-N),
//! exactly as after a timeout but without waiting for it (seed 000 §3; seed 001).

use super::{AckOutcome, LossRecovery};
use crate::tcp::cc::CongestionControl;
use crate::tcp::scoreboard::Scoreboard;
use crate::tcp::tcb::{CaState, Tcb};

#[derive(Debug, Clone, Default)]
pub struct TahoeRecovery;

impl LossRecovery for TahoeRecovery {
    fn on_enter(&mut self, tcb: &mut Tcb, _sb: &mut Scoreboard, cc: &mut dyn CongestionControl) {
        tcb.ssthresh = cc.on_congestion_event(tcb);
        tcb.cwnd = tcb.smss;
        tcb.recover = tcb.snd_max;
        // Go back to the first unacknowledged segment and slow-start from there.
        tcb.snd_nxt = tcb.snd_una;
        tcb.ca_state = CaState::Loss;
    }

    fn on_ack(&mut self, _tcb: &mut Tcb, _acked: u64) -> AckOutcome {
        // Tahoe never sits in Recovery; the sender handles the Loss state like after a timeout.
        AckOutcome::Exited
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::CwndGrowth;
    use crate::tcp::cc::{AimdCc, AnyCc};
    use crate::tcp::recovery::test_tcb;

    #[test]
    fn tahoe_fast_retransmit_restarts_slow_start_from_one_segment() {
        let mut t = test_tcb();
        let mut cc = AnyCc::Aimd(AimdCc::standard(CwndGrowth::PerAck));
        TahoeRecovery.on_enter(&mut t, &mut Scoreboard::new(), &mut cc);
        assert_eq!(t.cwnd, 1000);
        assert_eq!(t.ssthresh, 5000);
        assert_eq!(t.snd_nxt, t.snd_una);
    }
}
