//! Reno fast recovery (RFC 5681 §3.2): retransmit the lost segment, set cwnd = ssthresh + 3 SMSS,
//! inflate by one SMSS per further duplicate ACK, and deflate to ssthresh on the first ACK of new
//! data, partial or not. With several losses in one window this usually ends in a timeout
//! (seed 000 §3, after Fall & Floyd).

use super::{AckOutcome, LossRecovery};
use crate::tcp::cc::CongestionControl;
use crate::tcp::scoreboard::Scoreboard;
use crate::tcp::tcb::{CaState, Tcb};

#[derive(Debug, Clone, Default)]
pub struct RenoRecovery;

/// RFC 5681 §3.2 steps 2-3, shared with NewReno (RFC 6582 §3.2 step 2).
pub(super) fn enter_fast_recovery(tcb: &mut Tcb, cc: &mut dyn CongestionControl, dupthresh: u64) {
    tcb.ssthresh = cc.on_congestion_event(tcb);
    tcb.pending_rexmit = Some(tcb.snd_una);
    tcb.cwnd = tcb.ssthresh + dupthresh * tcb.smss;
    tcb.recover = tcb.snd_max;
    tcb.ca_state = CaState::Recovery;
}

impl LossRecovery for RenoRecovery {
    fn on_enter(&mut self, tcb: &mut Tcb, _sb: &mut Scoreboard, cc: &mut dyn CongestionControl) {
        let dupthresh = tcb.dupacks as u64;
        enter_fast_recovery(tcb, cc, dupthresh);
    }

    fn on_dupack(&mut self, tcb: &mut Tcb) {
        // RFC 5681 §3.2 step 4: inflate for the segment that left the network.
        tcb.cwnd += tcb.smss;
    }

    fn on_ack(&mut self, tcb: &mut Tcb, _acked: u64) -> AckOutcome {
        // RFC 5681 §3.2 step 6: deflate and leave on any ACK of new data.
        tcb.cwnd = tcb.ssthresh;
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
    fn reno_sets_cwnd_to_ssthresh_plus_three_and_inflates_per_dupack() {
        let mut t = test_tcb();
        let mut cc = AnyCc::Aimd(AimdCc::standard(CwndGrowth::PerAck));
        let mut r = RenoRecovery;
        r.on_enter(&mut t, &mut Scoreboard::new(), &mut cc);
        assert_eq!(t.ssthresh, 5000);
        assert_eq!(t.cwnd, 8000);
        assert_eq!(t.pending_rexmit, Some(1));
        r.on_dupack(&mut t);
        assert_eq!(t.cwnd, 9000);
    }

    #[test]
    fn reno_leaves_recovery_on_the_first_partial_ack() {
        let mut t = test_tcb();
        let mut cc = AnyCc::Aimd(AimdCc::standard(CwndGrowth::PerAck));
        let mut r = RenoRecovery;
        r.on_enter(&mut t, &mut Scoreboard::new(), &mut cc);
        t.snd_una = 2001; // partial: recover is 10001
        assert_eq!(r.on_ack(&mut t, 2000), AckOutcome::Exited);
        assert_eq!(t.cwnd, 5000);
    }
}
