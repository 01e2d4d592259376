//! Congestion control: how cwnd grows on ACKs and where ssthresh goes on a congestion signal.
//! One file per algorithm; `AnyCc` dispatches statically on the hot path.

mod reno;

pub use reno::RenoCc;

use super::tcb::Tcb;

/// The operations a congestion controller provides. Loss recovery decides *when* these apply.
pub trait CongestionControl {
    /// New data acknowledged outside fast recovery: grow cwnd.
    fn on_ack(&mut self, tcb: &mut Tcb, acked: u64);
    /// ssthresh after a loss detected by duplicate ACKs or a timeout.
    fn ssthresh_after_loss(&self, tcb: &Tcb) -> u64;
    /// cwnd after a retransmission timeout (the loss window).
    fn cwnd_after_timeout(&self, tcb: &Tcb) -> u64 {
        tcb.smss
    }
}

#[derive(Debug, Clone)]
pub enum AnyCc {
    Reno(RenoCc),
}

impl CongestionControl for AnyCc {
    #[inline]
    fn on_ack(&mut self, tcb: &mut Tcb, acked: u64) {
        match self {
            AnyCc::Reno(c) => c.on_ack(tcb, acked),
        }
    }
    #[inline]
    fn ssthresh_after_loss(&self, tcb: &Tcb) -> u64 {
        match self {
            AnyCc::Reno(c) => c.ssthresh_after_loss(tcb),
        }
    }
    #[inline]
    fn cwnd_after_timeout(&self, tcb: &Tcb) -> u64 {
        match self {
            AnyCc::Reno(c) => c.cwnd_after_timeout(tcb),
        }
    }
}
