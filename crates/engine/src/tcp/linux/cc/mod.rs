//! Congestion control as Linux plugs it in (`struct tcp_congestion_ops`, include/net/tcp.h):
//! the sender owns the state machine and calls these hooks; a module changes only the fields of
//! [`CcState`] it is handed. Windows are counted in packets, as the kernel's `snd_cwnd` is.
//!
//! Hooks, in the order the kernel's ACK path calls them (net/ipv4/tcp_input.c `tcp_ack`):
//! `pkts_acked` (RTT sample of the ACK), then either `cong_control` (a module that sets cwnd and
//! pacing itself, as BBR does) or, outside a window reduction, `cong_avoid`. `ssthresh` is asked
//! when a reduction starts (recovery, ECN, RTO), `undo_cwnd` when one proves spurious,
//! `set_state` on every CA-state change and `cwnd_event` on the events of `CaEvent`.

mod bbr;
mod cubic;
mod reno;

pub use bbr::{Bbr, BbrMode};
pub use cubic::Cubic;
pub use reno::Reno;

use crate::units::{SimDuration, SimTime};

/// The sender's congestion-avoidance state (`enum tcp_ca_state`), in the kernel's order: a
/// state compares greater than another when it is further into loss handling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LinuxCaState {
    /// Nothing unusual.
    Open,
    /// SACKs or duplicate ACKs seen: something may be reordered or lost.
    Disorder,
    /// cwnd reduced for ECN or a repaired tail loss, without retransmitting.
    Cwr,
    /// Fast recovery.
    Recovery,
    /// After a retransmission timeout.
    Loss,
}

impl LinuxCaState {
    pub fn name(self) -> &'static str {
        match self {
            LinuxCaState::Open => "open",
            LinuxCaState::Disorder => "disorder",
            LinuxCaState::Cwr => "cwr",
            LinuxCaState::Recovery => "recovery",
            LinuxCaState::Loss => "loss",
        }
    }
}

/// Events a module may react to (`enum tcp_ca_event`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaEvent {
    /// First transmission when nothing was in flight (`CA_EVENT_TX_START`).
    TxStart,
    /// cwnd restarted after idle (`CA_EVENT_CWND_RESTART`).
    CwndRestart,
    /// A window reduction ended (`CA_EVENT_COMPLETE_CWR`).
    CompleteCwr,
    /// A retransmission timeout (`CA_EVENT_LOSS`).
    Loss,
}

/// The part of the connection's state (`struct tcp_sock`) a module reads and may change.
#[derive(Debug, Clone, PartialEq)]
pub struct CcState {
    /// Congestion window, packets (`snd_cwnd`).
    pub cwnd: u32,
    /// Slow-start threshold, packets (`snd_ssthresh`; [`INFINITE_SSTHRESH`] until a loss).
    pub ssthresh: u32,
    /// Linear-increase counter (`snd_cwnd_cnt`).
    pub cwnd_cnt: u32,
    /// Upper bound on cwnd (`snd_cwnd_clamp`).
    pub cwnd_clamp: u32,
    /// cwnd when the current reduction started (`prior_cwnd`).
    pub prior_cwnd: u32,
    /// Payload bytes of a full segment (`mss_cache`).
    pub mss: u32,
    pub ca_state: LinuxCaState,
    /// Oldest unacknowledged sequence number (`snd_una`; the ACK being processed has set it).
    pub snd_una: u64,
    /// Next sequence number to send (`snd_nxt`).
    pub snd_nxt: u64,
    /// Packets sent and not cumulatively acknowledged (`packets_out`).
    pub packets_out: u32,
    /// Packets believed in the network (`tcp_packets_in_flight`).
    pub in_flight: u32,
    /// The window limited the sending in the last round (`tcp_is_cwnd_limited`, which in slow
    /// start also asks that cwnd be below twice the most ever in flight).
    pub cwnd_limited: bool,
    /// Smoothed RTT (`srtt_us >> 3`), once sampled.
    pub srtt: Option<SimDuration>,
    /// Windowed minimum RTT (`tcp_min_rtt`, a 5-minute window), once sampled.
    pub min_rtt: Option<SimDuration>,
    /// Packets delivered (cumulatively or by SACK) since the start (`delivered`).
    pub delivered: u64,
    /// Packets marked lost since the start (`lost`).
    pub lost: u64,
    /// The application limits the sending (`app_limited` is non-zero).
    pub app_limited: bool,
    /// Pacing rate in bytes per second (`sk_pacing_rate`). The sender sets it after every ACK
    /// as `tcp_update_pacing_rate` does (2 x cwnd x mss / srtt in slow start, 1.2 x after) unless
    /// the module sets it itself in `cong_control`; it paces only when `needs_pacing`.
    pub pacing_rate: u64,
    /// When the current ACK arrived (`tcp_mstamp`).
    pub now: SimTime,
    /// When data was last sent (`lsndtime`).
    pub last_send: SimTime,
}

/// `TCP_INFINITE_SSTHRESH`.
pub const INFINITE_SSTHRESH: u32 = 0x7fff_ffff;

impl CcState {
    /// A connection that has sent nothing, with initial window `iw` packets of `mss` bytes.
    pub fn new(iw: u32, mss: u32, cwnd_clamp: u32) -> Self {
        Self {
            cwnd: iw,
            ssthresh: INFINITE_SSTHRESH,
            cwnd_cnt: 0,
            cwnd_clamp,
            prior_cwnd: 0,
            mss,
            ca_state: LinuxCaState::Open,
            snd_una: 0,
            snd_nxt: 0,
            packets_out: 0,
            in_flight: 0,
            cwnd_limited: false,
            srtt: None,
            min_rtt: None,
            delivered: 0,
            lost: 0,
            app_limited: false,
            pacing_rate: 0,
            now: SimTime::ZERO,
            last_send: SimTime::ZERO,
        }
    }

    /// `tcp_in_slow_start`.
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// `tcp_slow_start`: grow cwnd by the packets acknowledged, up to ssthresh; returns the
    /// packets left over for congestion avoidance.
    pub fn slow_start(&mut self, acked: u32) -> u32 {
        let cwnd = self.cwnd.saturating_add(acked).min(self.ssthresh);
        let left = acked - (cwnd - self.cwnd).min(acked);
        self.cwnd = cwnd.min(self.cwnd_clamp);
        left
    }

    /// The part `tcp_reno_cong_avoid` and `cubictcp_cong_avoid` share: nothing unless the window
    /// limited the sending; in slow start, grow by what was acknowledged. Returns the packets
    /// left for congestion avoidance, if any.
    pub fn slow_start_first(&mut self, acked: u32) -> Option<u32> {
        if !self.cwnd_limited {
            return None;
        }
        let left = if self.in_slow_start() { self.slow_start(acked) } else { acked };
        (left > 0).then_some(left)
    }

    /// `tcp_cong_avoid_ai`: one packet more per `w` packets acknowledged, credits accumulated
    /// at a larger `w` applied first.
    pub fn cong_avoid_ai(&mut self, w: u32, acked: u32) {
        let w = w.max(1);
        if self.cwnd_cnt >= w {
            self.cwnd_cnt = 0;
            self.cwnd += 1;
        }
        self.cwnd_cnt += acked;
        if self.cwnd_cnt >= w {
            let delta = self.cwnd_cnt / w;
            self.cwnd_cnt -= delta * w;
            self.cwnd += delta;
        }
        self.cwnd = self.cwnd.min(self.cwnd_clamp);
    }
}

/// One ACK's delivery-rate sample, as `tcp_rate_gen` fills `struct rate_sample`: packets, not
/// bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RateSample {
    /// Packets delivered over `interval` (`rs->delivered`); meaningful only with an interval.
    pub delivered: u64,
    /// The sample's interval (`rs->interval_us`); `None`: no valid sample on this ACK.
    pub interval: Option<SimDuration>,
    /// `tp->delivered` when the sampled packet was sent (`rs->prior_delivered`).
    pub prior_delivered: u64,
    /// Packets newly acknowledged or SACKed by this ACK (`rs->acked_sacked`).
    pub acked_sacked: u32,
    /// Packets newly marked lost while processing this ACK (`rs->losses`).
    pub losses: u32,
    /// Packets in flight before this ACK (`rs->prior_in_flight`).
    pub prior_in_flight: u32,
    /// The RTT of the most recently sent packet this ACK delivered (`rs->rtt_us`).
    pub rtt: Option<SimDuration>,
    /// The sampled packet left while the application limited the sending (`rs->is_app_limited`).
    pub app_limited: bool,
    /// The ACK was delayed by the receiver's delayed-ACK timer as far as the sender can tell
    /// (`rs->is_ack_delayed`).
    pub ack_delayed: bool,
}

/// What one ACK told about round trips (`struct ack_sample`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AckSample {
    /// Packets newly acknowledged cumulatively (`pkts_acked`).
    pub pkts_acked: u32,
    /// The RTT sample for congestion control (`rtt_us`), if the ACK gave one.
    pub rtt: Option<SimDuration>,
    /// Packets in flight when the ACK arrived (`in_flight`).
    pub in_flight: u32,
}

/// The hooks of `struct tcp_congestion_ops` a module implements.
pub trait LinuxCongestion {
    /// The module's name as `net.ipv4.tcp_congestion_control` spells it.
    fn name(&self) -> &'static str;
    /// The connection is established (`init`).
    fn init(&mut self, _tp: &mut CcState) {}
    /// The slow-start threshold for a reduction starting now (`ssthresh`).
    fn ssthresh(&mut self, tp: &CcState) -> u32;
    /// Grow cwnd for `acked` packets newly acknowledged or SACKed (`cong_avoid`).
    fn cong_avoid(&mut self, tp: &mut CcState, acked: u32);
    /// The CA state is about to change to `new` (`set_state`).
    fn set_state(&mut self, _tp: &mut CcState, _new: LinuxCaState) {}
    /// An event of [`CaEvent`] (`cwnd_event`).
    fn cwnd_event(&mut self, _tp: &mut CcState, _event: CaEvent) {}
    /// Every ACK that acknowledged something, with its RTT sample (`pkts_acked`).
    fn pkts_acked(&mut self, _tp: &mut CcState, _sample: &AckSample) {}
    /// The cwnd to return to when a reduction proves spurious (`undo_cwnd`).
    fn undo_cwnd(&mut self, tp: &CcState) -> u32;
    /// A module that sets cwnd and pacing itself from every rate sample (`cong_control`); the
    /// sender then skips `cong_avoid` and PRR. Returns whether it did.
    fn cong_control(&mut self, _tp: &mut CcState, _rs: &RateSample) -> bool {
        false
    }
    /// The module asks the sender to pace (`SK_PACING_NEEDED`).
    fn needs_pacing(&self) -> bool {
        false
    }
    /// The fewest segments the sender puts in one burst (`min_tso_segs`, else the
    /// `tcp_min_tso_segs` sysctl's 2), at `pacing_rate` bytes per second.
    fn min_tso_segs(&self, _pacing_rate: u64) -> u32 {
        2
    }
    /// The module implements `cong_control` and owns cwnd: the sender runs no PRR and does
    /// not settle cwnd at ssthresh when a reduction ends.
    fn controls_cwnd(&self) -> bool {
        false
    }
}

/// The modules the Linux stack offers, dispatched statically.
#[derive(Debug, Clone)]
pub enum AnyLinuxCc {
    Reno(Reno),
    Cubic(Box<Cubic>),
    Bbr(Box<Bbr>),
}

macro_rules! each {
    ($self:expr, $c:ident => $e:expr) => {
        match $self {
            AnyLinuxCc::Reno($c) => $e,
            AnyLinuxCc::Cubic($c) => $e,
            AnyLinuxCc::Bbr($c) => $e,
        }
    };
}

impl LinuxCongestion for AnyLinuxCc {
    fn name(&self) -> &'static str {
        each!(self, c => c.name())
    }
    fn init(&mut self, tp: &mut CcState) {
        each!(self, c => c.init(tp))
    }
    #[inline]
    fn ssthresh(&mut self, tp: &CcState) -> u32 {
        each!(self, c => c.ssthresh(tp))
    }
    #[inline]
    fn cong_avoid(&mut self, tp: &mut CcState, acked: u32) {
        each!(self, c => c.cong_avoid(tp, acked))
    }
    #[inline]
    fn set_state(&mut self, tp: &mut CcState, new: LinuxCaState) {
        each!(self, c => c.set_state(tp, new))
    }
    #[inline]
    fn cwnd_event(&mut self, tp: &mut CcState, event: CaEvent) {
        each!(self, c => c.cwnd_event(tp, event))
    }
    #[inline]
    fn pkts_acked(&mut self, tp: &mut CcState, sample: &AckSample) {
        each!(self, c => c.pkts_acked(tp, sample))
    }
    #[inline]
    fn undo_cwnd(&mut self, tp: &CcState) -> u32 {
        each!(self, c => c.undo_cwnd(tp))
    }
    #[inline]
    fn cong_control(&mut self, tp: &mut CcState, rs: &RateSample) -> bool {
        each!(self, c => c.cong_control(tp, rs))
    }
    fn needs_pacing(&self) -> bool {
        each!(self, c => c.needs_pacing())
    }
    fn min_tso_segs(&self, pacing_rate: u64) -> u32 {
        each!(self, c => c.min_tso_segs(pacing_rate))
    }
    fn controls_cwnd(&self) -> bool {
        each!(self, c => c.controls_cwnd())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slow_start_stops_at_ssthresh_and_hands_back_the_rest_tcp_slow_start() {
        let mut tp = CcState::new(10, 1448, 10_000);
        tp.ssthresh = 12;
        assert_eq!(tp.slow_start(5), 3);
        assert_eq!(tp.cwnd, 12);
    }

    #[test]
    fn additive_increase_adds_one_packet_per_window_acknowledged_tcp_cong_avoid_ai() {
        let mut tp = CcState::new(10, 1448, 10_000);
        for _ in 0..9 {
            tp.cong_avoid_ai(10, 1);
        }
        assert_eq!(tp.cwnd, 10);
        tp.cong_avoid_ai(10, 1);
        assert_eq!((tp.cwnd, tp.cwnd_cnt), (11, 0));
        // A stretch ACK of 25 packets at w = 10 adds two and keeps 5 credits.
        tp.cong_avoid_ai(10, 25);
        assert_eq!((tp.cwnd, tp.cwnd_cnt), (13, 5));
    }
}
