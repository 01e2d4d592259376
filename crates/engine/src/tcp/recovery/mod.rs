//! Loss recovery: what the sender does when duplicate ACKs signal a loss, and how it leaves fast
//! recovery. One file per policy; the sender owns every CA-state transition and calls these.

mod ecn_elfn;
mod newreno;
mod reno;
mod sack;
mod tahoe;

pub use ecn_elfn::EcnElfnRecovery;
pub use newreno::NewRenoRecovery;
pub use reno::RenoRecovery;
pub use sack::SackRecovery;
pub use tahoe::TahoeRecovery;

use super::cc::CongestionControl;
use super::scoreboard::Scoreboard;
use super::tcb::Tcb;

/// What a new cumulative ACK did to an ongoing recovery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AckOutcome {
    /// Recovery is over; the sender is back in Open.
    Exited,
    /// A partial ACK: still recovering. `restart_timer` says whether the RTO timer restarts.
    Partial { restart_timer: bool },
}

pub trait LossRecovery {
    /// The duplicate-ACK threshold was reached (fast retransmit, RFC 5681 §3.2 step 2).
    fn on_enter(&mut self, tcb: &mut Tcb, sb: &mut Scoreboard, cc: &mut dyn CongestionControl);
    /// A further duplicate ACK while in recovery.
    fn on_dupack(&mut self, _tcb: &mut Tcb) {}
    /// New data acknowledged while in recovery; `acked` bytes were newly acknowledged.
    fn on_ack(&mut self, tcb: &mut Tcb, acked: u64) -> AckOutcome;
    /// Whether sending during recovery is governed by the SACK scoreboard's pipe (RFC 6675).
    fn uses_pipe(&self) -> bool {
        false
    }
    /// Whether fast retransmit is suppressed until `recover` is passed (RFC 6582 §3.2 step 1,
    /// RFC 6675 §5), which avoids repeated reductions for one window of losses.
    fn guards_with_recover(&self) -> bool {
        false
    }
    /// The window a timeout leaves, when the policy does not treat a timeout as congestion
    /// (`None`: RFC 5681 §3.1, ssthresh from the flight size and cwnd to the loss window).
    fn window_after_timeout(&self, _tcb: &Tcb) -> Option<u64> {
        None
    }
}

#[derive(Debug, Clone)]
pub enum AnyRecovery {
    Tahoe(TahoeRecovery),
    Reno(RenoRecovery),
    NewReno(NewRenoRecovery),
    Sack(SackRecovery),
    EcnElfn(EcnElfnRecovery),
}

macro_rules! dispatch {
    ($self:ident, $r:ident => $e:expr) => {
        match $self {
            AnyRecovery::Tahoe($r) => $e,
            AnyRecovery::Reno($r) => $e,
            AnyRecovery::NewReno($r) => $e,
            AnyRecovery::Sack($r) => $e,
            AnyRecovery::EcnElfn($r) => $e,
        }
    };
}

impl LossRecovery for AnyRecovery {
    #[inline]
    fn on_enter(&mut self, tcb: &mut Tcb, sb: &mut Scoreboard, cc: &mut dyn CongestionControl) {
        dispatch!(self, r => r.on_enter(tcb, sb, cc))
    }
    #[inline]
    fn on_dupack(&mut self, tcb: &mut Tcb) {
        dispatch!(self, r => r.on_dupack(tcb))
    }
    #[inline]
    fn on_ack(&mut self, tcb: &mut Tcb, acked: u64) -> AckOutcome {
        dispatch!(self, r => r.on_ack(tcb, acked))
    }
    #[inline]
    fn uses_pipe(&self) -> bool {
        dispatch!(self, r => r.uses_pipe())
    }
    #[inline]
    fn guards_with_recover(&self) -> bool {
        dispatch!(self, r => r.guards_with_recover())
    }
    #[inline]
    fn window_after_timeout(&self, tcb: &Tcb) -> Option<u64> {
        dispatch!(self, r => r.window_after_timeout(tcb))
    }
}

#[cfg(test)]
pub(crate) fn test_tcb() -> Tcb {
    Tcb {
        smss: 1000,
        cwnd: 10_000,
        ssthresh: 64_000,
        ca_state: super::tcb::CaState::Open,
        recover: 0,
        dupacks: 3,
        snd_una: 1,
        snd_nxt: 10_001,
        snd_max: 10_001,
        pending_rexmit: None,
        bytes_acked: 0,
    }
}
