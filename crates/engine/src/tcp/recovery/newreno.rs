//! NewReno (RFC 6582): like Reno, but a partial ACK (one below `recover`) means the next segment
//! was lost too: retransmit it at once and stay in fast recovery until everything outstanding at
//! the start of recovery is acknowledged.

use super::reno::enter_fast_recovery;
use super::{AckOutcome, LossRecovery};
use crate::tcp::cc::CongestionControl;
use crate::tcp::scoreboard::Scoreboard;
use crate::tcp::tcb::Tcb;

#[derive(Debug, Clone, Default)]
pub struct NewRenoRecovery {
    partial_acks: u32,
}

impl LossRecovery for NewRenoRecovery {
    fn on_enter(&mut self, tcb: &mut Tcb, _sb: &mut Scoreboard, cc: &mut dyn CongestionControl) {
        self.partial_acks = 0;
        let dupthresh = tcb.dupacks as u64;
        enter_fast_recovery(tcb, cc, dupthresh);
    }

    fn on_dupack(&mut self, tcb: &mut Tcb) {
        // RFC 6582 §3.2 step 4.
        tcb.cwnd += tcb.smss;
    }

    fn on_ack(&mut self, tcb: &mut Tcb, acked: u64) -> AckOutcome {
        if tcb.snd_una >= tcb.recover {
            // RFC 6582 §3.2 step 3 (full acknowledgment), option (1):
            // cwnd = min(ssthresh, max(FlightSize, SMSS) + SMSS).
            tcb.cwnd = tcb.ssthresh.min(tcb.flight_size().max(tcb.smss) + tcb.smss);
            return AckOutcome::Exited;
        }
        // RFC 6582 §3.2 step 5 (partial acknowledgment): retransmit the first unacknowledged
        // segment, deflate by the amount acknowledged, add back one SMSS if at least one SMSS was
        // acknowledged; the timer restarts on the first partial ACK only ("impatient").
        tcb.pending_rexmit = Some(tcb.snd_una);
        tcb.cwnd = tcb.cwnd.saturating_sub(acked);
        if acked >= tcb.smss {
            tcb.cwnd += tcb.smss;
        }
        tcb.cwnd = tcb.cwnd.max(tcb.smss);
        self.partial_acks += 1;
        AckOutcome::Partial { restart_timer: self.partial_acks == 1 }
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
    fn newreno_partial_ack_retransmits_next_hole_and_stays_in_recovery() {
        let mut t = test_tcb();
        let mut cc = AnyCc::Aimd(AimdCc::standard(CwndGrowth::PerAck));
        let mut r = NewRenoRecovery::default();
        r.on_enter(&mut t, &mut Scoreboard::new(), &mut cc);
        t.pending_rexmit = None;
        t.snd_una = 3001;
        assert_eq!(r.on_ack(&mut t, 3000), AckOutcome::Partial { restart_timer: true });
        assert_eq!(t.pending_rexmit, Some(3001));
        // 8000 - 3000 + 1000
        assert_eq!(t.cwnd, 6000);
        t.snd_una = 5001;
        assert_eq!(r.on_ack(&mut t, 2000), AckOutcome::Partial { restart_timer: false });
    }

    #[test]
    fn newreno_full_ack_exits_with_cwnd_at_most_ssthresh() {
        let mut t = test_tcb();
        let mut cc = AnyCc::Aimd(AimdCc::standard(CwndGrowth::PerAck));
        let mut r = NewRenoRecovery::default();
        r.on_enter(&mut t, &mut Scoreboard::new(), &mut cc);
        t.snd_una = 10_001;
        assert_eq!(r.on_ack(&mut t, 10_000), AckOutcome::Exited);
        assert_eq!(t.cwnd, 1000 + 1000);
    }
}
