//! The interface every sender implements (the TCP sender and E2TCP's), and [`AnySender`], the
//! enum the endpoint holds and dispatches statically. The application's side of the connection
//! (writes, close, the peer's window) is the shared [`SendStream`] each sender owns.

use super::e2tcp::E2tcpSender;
use super::linux::sender::LinuxSender;
use super::segment::Segment;
use super::sender::{OutSegment, Sender, SenderCounters};
use super::stream::SendStream;
use super::tcb::CaState;
use crate::energy::cpu::OpLog;
use crate::units::{SimDuration, SimTime};

/// What a sender shows of its state to the endpoint, traces and tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SenderState {
    /// The window, in bytes, that limits what may be outstanding.
    pub cwnd: u64,
    /// Slow-start threshold; [`NO_SSTHRESH`] for a sender without one.
    pub ssthresh: u64,
    pub ca_state: CaState,
    pub snd_una: u64,
    pub snd_nxt: u64,
    pub snd_max: u64,
}

/// The ssthresh of a sender that has none (E2TCP): larger than any window.
pub const NO_SSTHRESH: u64 = u64::MAX / 4;

/// A sender, sans-I/O: acknowledgments and timer expiries in, segments to send out.
pub trait SendHalf {
    fn stream(&self) -> &SendStream;
    fn stream_mut(&mut self) -> &mut SendStream;
    /// The CPU operations performed since the log was last drained.
    fn ops(&mut self) -> &mut OpLog;
    /// Process the acknowledgment information of an incoming segment that has the ACK flag.
    fn on_ack(&mut self, now: SimTime, seg: &Segment);
    /// Run whatever timers are due at `now`.
    fn on_timeout(&mut self, now: SimTime);
    /// The next segment to send now, if any.
    fn poll_segment(&mut self, now: SimTime) -> Option<OutSegment>;
    /// A route-failure (or route-restored) notice; only senders with ELFN react.
    fn on_route_notice(&mut self, _now: SimTime, _restored: bool) {}
    /// Earliest time `on_timeout` has work to do.
    fn deadline(&self) -> Option<SimTime>;
    /// Bytes in flight as the sender estimates them.
    fn in_flight(&self) -> u64;
    /// The timeout a timer would be armed with now.
    fn rto(&self) -> SimDuration;
    fn state(&self) -> SenderState;
    fn counters(&self) -> &SenderCounters;
    /// The application writes nothing more: the connection closes after what was sent.
    fn stop_writing(&mut self, now: SimTime) {
        let st = self.state();
        self.stream_mut().stop_writing(now, st.snd_una, st.snd_max);
    }
}

/// The sending half an endpoint runs, as the variant's registry entry says.
#[derive(Debug, Clone)]
pub enum AnySender {
    Tcp(Sender),
    E2tcp(E2tcpSender),
    /// The Linux stack's sender (`tcp.stack = "linux-6"`).
    Linux(Box<LinuxSender>),
}

macro_rules! each {
    ($self:expr, $s:ident => $e:expr) => {
        match $self {
            AnySender::Tcp($s) => $e,
            AnySender::E2tcp($s) => $e,
            AnySender::Linux($s) => $e,
        }
    };
}

impl SendHalf for AnySender {
    #[inline]
    fn stream(&self) -> &SendStream {
        each!(self, s => s.stream())
    }
    #[inline]
    fn stream_mut(&mut self) -> &mut SendStream {
        each!(self, s => s.stream_mut())
    }
    #[inline]
    fn ops(&mut self) -> &mut OpLog {
        each!(self, s => s.ops())
    }
    #[inline]
    fn on_ack(&mut self, now: SimTime, seg: &Segment) {
        each!(self, s => s.on_ack(now, seg))
    }
    #[inline]
    fn on_timeout(&mut self, now: SimTime) {
        each!(self, s => s.on_timeout(now))
    }
    #[inline]
    fn poll_segment(&mut self, now: SimTime) -> Option<OutSegment> {
        each!(self, s => s.poll_segment(now))
    }
    #[inline]
    fn on_route_notice(&mut self, now: SimTime, restored: bool) {
        each!(self, s => s.on_route_notice(now, restored))
    }
    #[inline]
    fn deadline(&self) -> Option<SimTime> {
        each!(self, s => s.deadline())
    }
    #[inline]
    fn in_flight(&self) -> u64 {
        each!(self, s => s.in_flight())
    }
    fn rto(&self) -> SimDuration {
        each!(self, s => s.rto())
    }
    #[inline]
    fn state(&self) -> SenderState {
        each!(self, s => s.state())
    }
    fn counters(&self) -> &SenderCounters {
        each!(self, s => s.counters())
    }
    fn stop_writing(&mut self, now: SimTime) {
        each!(self, s => s.stop_writing(now))
    }
}

/// The application's calls, the same for every sender, and what the world reads without
/// naming the interface.
impl AnySender {
    pub fn state(&self) -> SenderState {
        SendHalf::state(self)
    }
    pub fn counters(&self) -> &SenderCounters {
        SendHalf::counters(self)
    }
    pub fn in_flight(&self) -> u64 {
        SendHalf::in_flight(self)
    }
    pub fn rto(&self) -> SimDuration {
        SendHalf::rto(self)
    }
    pub fn deadline(&self) -> Option<SimTime> {
        SendHalf::deadline(self)
    }
    pub fn open(&mut self, peer_window: u64) {
        self.stream_mut().open(peer_window)
    }
    pub fn close(&mut self) {
        self.stream_mut().close()
    }
    pub fn is_closing(&self) -> bool {
        self.stream().is_closing()
    }
    pub fn fin_acked(&self) -> bool {
        self.stream().fin_acked
    }
    pub fn write(&mut self, bytes: u64) {
        self.stream_mut().write(bytes)
    }
    pub fn data_end(&self) -> u64 {
        self.stream().data_end()
    }
    /// Application bytes written and not yet acknowledged: what the send buffer holds.
    pub fn unacked_data(&self) -> u64 {
        self.stream().unacked_data(self.state().snd_una)
    }
    /// When the last application byte was acknowledged.
    pub fn data_acked_at(&self) -> Option<SimTime> {
        self.stream().data_acked_at()
    }
    /// The TCP sender, for the tests and traces that read its internals.
    pub fn as_tcp(&self) -> Option<&Sender> {
        match self {
            AnySender::Tcp(s) => Some(s),
            _ => None,
        }
    }
    pub fn as_e2tcp(&self) -> Option<&E2tcpSender> {
        match self {
            AnySender::E2tcp(s) => Some(s),
            _ => None,
        }
    }
    pub fn as_linux(&self) -> Option<&LinuxSender> {
        match self {
            AnySender::Linux(s) => Some(s),
            _ => None,
        }
    }
}
