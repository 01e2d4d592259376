//! Congestion control: how cwnd grows on ACKs and where ssthresh goes on a congestion signal.
//! One file per algorithm; `AnyCc` dispatches statically on the hot path.
//!
//! A controller sees every acceptable ACK as an [`AckEvent`]: the time, the bytes it newly
//! acknowledged, the smoothed RTT and a delivery-rate sample (`tcp::rate`). A rate- or delay-based
//! controller (BBR, Vegas) needs nothing more from the sender.

mod aimd;
mod cubic;

pub use aimd::AimdCc;
pub use cubic::CubicCc;

use super::rate::RateSample;
use super::tcb::Tcb;
use crate::units::{SimDuration, SimTime};

/// One acceptable ACK as a controller sees it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AckEvent {
    /// When the ACK arrived.
    pub now: SimTime,
    /// Bytes it newly acknowledged cumulatively (RFC 5681's "newly acknowledged data").
    pub acked: u64,
    /// The RFC 6298 smoothed RTT after this ACK's sample, if there has been one.
    pub srtt: Option<SimDuration>,
    /// Delivery-rate sample: bytes delivered (cumulatively or by SACK), the interval, the RTT
    /// sample and whether the application limited the sending.
    pub rate: RateSample,
}

impl AckEvent {
    /// An ACK at `now` of `acked` new bytes, without RTT or rate information.
    pub fn new(now: SimTime, acked: u64) -> Self {
        Self { now, acked, ..Self::default() }
    }
}

/// The operations a congestion controller provides. Loss recovery decides *when* these apply.
pub trait CongestionControl {
    /// Every acceptable ACK (new data, duplicate or SACK-only), after the sender updated its
    /// sequence state and RTT estimate, before it acts on the ACK: the hook for controllers that
    /// model the path from rates and delays.
    fn on_ack_sample(&mut self, _tcb: &Tcb, _ack: &AckEvent) {}
    /// New data acknowledged outside fast recovery: grow cwnd.
    fn on_ack(&mut self, tcb: &mut Tcb, ack: &AckEvent);
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
    fn on_ack_sample(&mut self, tcb: &Tcb, ack: &AckEvent) {
        match self {
            AnyCc::Aimd(c) => c.on_ack_sample(tcb, ack),
            AnyCc::Cubic(c) => c.on_ack_sample(tcb, ack),
        }
    }
    #[inline]
    fn on_ack(&mut self, tcb: &mut Tcb, ack: &AckEvent) {
        match self {
            AnyCc::Aimd(c) => c.on_ack(tcb, ack),
            AnyCc::Cubic(c) => c.on_ack(tcb, ack),
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
