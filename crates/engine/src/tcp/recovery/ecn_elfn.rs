//! TCP-ECN-ELFN's response to duplicate ACKs (seed 002 §4 and Table 1): three duplicate ACKs are
//! taken as reordering or a link error, not congestion: the missing segment is retransmitted and
//! the window is left alone. Each further run of three duplicates retransmits it again (seed 002
//! §6.2.1 notes the same packet can be sent more than once). Timeouts likewise retransmit without
//! touching cwnd (the sender checks `keeps_window_on_timeout`); only ECN-Echo halves the window.

use super::{AckOutcome, LossRecovery};
use crate::tcp::cc::AnyCc;
use crate::tcp::scoreboard::Scoreboard;
use crate::tcp::tcb::Tcb;

#[derive(Debug, Clone, Default)]
pub struct EcnElfnRecovery;

impl LossRecovery for EcnElfnRecovery {
    fn on_enter(&mut self, tcb: &mut Tcb, _sb: &mut Scoreboard, _cc: &mut AnyCc) {
        // Retransmit the segment the duplicates point at; cwnd, ssthresh and state stay.
        tcb.pending_rexmit = Some(tcb.snd_una);
    }

    fn on_ack(&mut self, _tcb: &mut Tcb, _acked: u64) -> AckOutcome {
        AckOutcome::Exited
    }

    fn repeats_on_each_threshold(&self) -> bool {
        true
    }

    fn keeps_window_on_timeout(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::CwndGrowth;
    use crate::tcp::cc::AimdCc;
    use crate::tcp::recovery::test_tcb;
    use crate::tcp::tcb::CaState;

    #[test]
    fn three_duplicates_retransmit_without_reducing_cwnd_seed002_table1() {
        let mut t = test_tcb();
        let mut cc = AnyCc::Aimd(AimdCc::standard(CwndGrowth::PerAck));
        let (cwnd, ssthresh) = (t.cwnd, t.ssthresh);
        EcnElfnRecovery.on_enter(&mut t, &mut Scoreboard::new(), &mut cc);
        assert_eq!(t.pending_rexmit, Some(t.snd_una));
        assert_eq!((t.cwnd, t.ssthresh, t.ca_state), (cwnd, ssthresh, CaState::Open));
    }
}
