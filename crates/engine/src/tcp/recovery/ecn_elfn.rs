//! TCP-ECN-ELFN's loss response (seed 002 §4 and Table 1): duplicate ACKs and timeouts are taken
//! as reordering or link errors, not congestion, so the missing segment is retransmitted and the
//! window is left alone; only ECN-Echo halves cwnd.
//!
//! The protocol is built on FreeBSD's NewReno (seed 002 abstract); the paper leaves open whether
//! NewReno's partial-ACK handling stays active. Here it does, without the window changes: after
//! three duplicate ACKs the sender retransmits the first unacknowledged segment and stays in
//! recovery until everything outstanding at its start is acknowledged, retransmitting the next
//! hole on each partial ACK, with cwnd and ssthresh untouched throughout. When a whole window's
//! worth of further duplicates arrives without progress (the retransmission was lost too), the
//! first unacknowledged segment is retransmitted again: one segment can be sent more than twice
//! (seed 002 §6.2.1).
//!
//! A timeout keeps BSD's retransmission mechanics (go back to the first unacknowledged segment
//! and resend from there, RFC 6298 §5.4) and drops only its window collapse: the sender resends
//! up to the window it had before the episode. That is where ECN-ELFN's extra transmissions and
//! few timeouts at high loss come from (seed 002 Table 5).

use super::{AckOutcome, LossRecovery};
use crate::tcp::cc::CongestionControl;
use crate::tcp::scoreboard::Scoreboard;
use crate::tcp::tcb::{CaState, Tcb};

#[derive(Debug, Clone, Default)]
pub struct EcnElfnRecovery {
    /// Duplicate ACKs since the last retransmission they triggered.
    dupacks_since_rexmit: u32,
    dupthresh: u32,
    /// cwnd when recovery began, restored when it ends.
    saved_cwnd: u64,
}

impl EcnElfnRecovery {
    pub fn new(dupthresh: u32) -> Self {
        Self { dupacks_since_rexmit: 0, dupthresh, saved_cwnd: 0 }
    }
}

impl LossRecovery for EcnElfnRecovery {
    fn on_enter(&mut self, tcb: &mut Tcb, _sb: &mut Scoreboard, _cc: &mut dyn CongestionControl) {
        // Retransmit the segment the duplicates point at; cwnd and ssthresh stay.
        tcb.pending_rexmit = Some(tcb.snd_una);
        tcb.recover = tcb.snd_max;
        tcb.ca_state = CaState::Recovery;
        self.dupacks_since_rexmit = 0;
        // NewReno's window inflation stays (each duplicate means a segment left the network, so
        // new data may go out), around the unreduced window rather than a halved one.
        self.saved_cwnd = tcb.cwnd;
        tcb.cwnd += tcb.dupacks as u64 * tcb.smss;
    }

    fn on_dupack(&mut self, tcb: &mut Tcb) {
        tcb.cwnd += tcb.smss;
        // Seed 002 Table 1: a triple duplicate ACK retransmits. Within one episode, a further
        // triple retransmits again only once the previous retransmission has had time to be
        // acknowledged: `dupthresh` duplicates per segment in flight would otherwise resend the
        // same segment dozens of times per window.
        self.dupacks_since_rexmit += 1;
        let in_flight = (tcb.snd_max - tcb.snd_una) / tcb.smss.max(1);
        if self.dupacks_since_rexmit as u64 >= in_flight.max(self.dupthresh as u64) {
            self.dupacks_since_rexmit = 0;
            tcb.pending_rexmit = Some(tcb.snd_una);
        }
    }

    fn on_ack(&mut self, tcb: &mut Tcb, acked: u64) -> AckOutcome {
        self.dupacks_since_rexmit = 0;
        if tcb.snd_una >= tcb.recover {
            // Deflate back to the window recovery started with: no reduction.
            tcb.cwnd = self.saved_cwnd.max(tcb.smss);
            return AckOutcome::Exited;
        }
        // NewReno's partial ACK: the next hole is lost too; deflate by what was acknowledged
        // (RFC 6582 §3.2 step 5), never below the saved window.
        tcb.pending_rexmit = Some(tcb.snd_una);
        tcb.cwnd = tcb.cwnd.saturating_sub(acked).saturating_add(tcb.smss).max(self.saved_cwnd);
        AckOutcome::Partial { restart_timer: true }
    }

    fn guards_with_recover(&self) -> bool {
        true
    }

    fn window_after_timeout(&self, tcb: &Tcb) -> Option<u64> {
        // The window before any recovery inflation: a timeout during recovery ends the episode.
        Some(if tcb.ca_state == CaState::Recovery { self.saved_cwnd } else { tcb.cwnd })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::CwndGrowth;
    use crate::tcp::cc::{AimdCc, AnyCc};
    use crate::tcp::recovery::test_tcb;

    #[test]
    fn three_duplicates_retransmit_without_reducing_cwnd_seed002_table1() {
        let mut t = test_tcb();
        let mut cc = AnyCc::Aimd(AimdCc::standard(CwndGrowth::PerAck));
        let (cwnd, ssthresh) = (t.cwnd, t.ssthresh);
        let mut r = EcnElfnRecovery::new(3);
        r.on_enter(&mut t, &mut Scoreboard::new(), &mut cc);
        assert_eq!(t.pending_rexmit, Some(t.snd_una));
        // Inflated by the three duplicates, never reduced; ssthresh untouched.
        assert_eq!((t.cwnd, t.ssthresh), (cwnd + 3 * t.smss, ssthresh));
        // A further window's worth of duplicates (10 segments in flight): the same segment again.
        t.pending_rexmit = None;
        for _ in 0..9 {
            r.on_dupack(&mut t);
        }
        assert_eq!(t.pending_rexmit, None);
        r.on_dupack(&mut t);
        assert_eq!(t.pending_rexmit, Some(t.snd_una));
        assert!(t.cwnd >= cwnd);
    }

    #[test]
    fn a_partial_ack_retransmits_the_next_hole_and_keeps_the_window() {
        let mut t = test_tcb();
        let mut cc = AnyCc::Aimd(AimdCc::standard(CwndGrowth::PerAck));
        let mut r = EcnElfnRecovery::new(3);
        let cwnd = t.cwnd;
        r.on_enter(&mut t, &mut Scoreboard::new(), &mut cc);
        t.snd_una = 3001;
        assert_eq!(r.on_ack(&mut t, 3000), AckOutcome::Partial { restart_timer: true });
        assert_eq!(t.pending_rexmit, Some(3001));
        assert!(t.cwnd >= cwnd);
        t.snd_una = t.recover;
        assert_eq!(r.on_ack(&mut t, 7000), AckOutcome::Exited);
        assert_eq!(t.cwnd, cwnd, "back to the window recovery started with");
    }

    #[test]
    fn a_timeout_keeps_the_window_from_before_recovery_seed002_table1() {
        let mut t = test_tcb();
        let mut cc = AnyCc::Aimd(AimdCc::standard(CwndGrowth::PerAck));
        let mut r = EcnElfnRecovery::new(3);
        let cwnd = t.cwnd;
        assert_eq!(r.window_after_timeout(&t), Some(cwnd), "outside recovery: the current window");
        r.on_enter(&mut t, &mut Scoreboard::new(), &mut cc);
        r.on_dupack(&mut t);
        assert!(t.cwnd > cwnd, "inflated by duplicates");
        assert_eq!(r.window_after_timeout(&t), Some(cwnd), "in recovery: without the inflation");
    }
}
