//! Congestion control: how cwnd grows on ACKs and where ssthresh goes on a congestion signal.
//! One file per algorithm; `AnyCc` dispatches statically on the hot path.

mod aimd;
mod cubic;

pub use aimd::AimdCc;
pub use cubic::CubicCc;

use super::tcb::Tcb;

/// The operations a congestion controller provides. Loss recovery decides *when* these apply.
pub trait CongestionControl {
    /// New data acknowledged outside fast recovery: grow cwnd.
    fn on_ack(&mut self, tcb: &mut Tcb, acked: u64);
    /// A congestion signal (loss by duplicate ACKs, the first expiry of a timeout): returns the
    /// new ssthresh; the controller may update its own state (e.g. CUBIC's W_max).
    fn on_congestion_event(&mut self, tcb: &Tcb) -> u64;
    /// cwnd after a retransmission timeout (the loss window, RFC 5681 §3.1).
    fn cwnd_after_timeout(&mut self, tcb: &Tcb) -> u64 {
        tcb.smss
    }
}

#[derive(Debug, Clone)]
pub enum AnyCc {
    Aimd(AimdCc),
    Cubic(CubicCc),
}

impl CongestionControl for AnyCc {
    #[inline]
    fn on_ack(&mut self, tcb: &mut Tcb, acked: u64) {
        match self {
            AnyCc::Aimd(c) => c.on_ack(tcb, acked),
            AnyCc::Cubic(c) => c.on_ack(tcb, acked),
        }
    }
    #[inline]
    fn on_congestion_event(&mut self, tcb: &Tcb) -> u64 {
        match self {
            AnyCc::Aimd(c) => c.on_congestion_event(tcb),
            AnyCc::Cubic(c) => c.on_congestion_event(tcb),
        }
    }
    #[inline]
    fn cwnd_after_timeout(&mut self, tcb: &Tcb) -> u64 {
        match self {
            AnyCc::Aimd(c) => c.cwnd_after_timeout(tcb),
            AnyCc::Cubic(c) => c.cwnd_after_timeout(tcb),
        }
    }
}
