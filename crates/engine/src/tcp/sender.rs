//! The sending half of a connection: sequence space, the retransmission timer, the scoreboard, and
//! every congestion-avoidance state transition, in one place. Congestion control (`cc`) and loss
//! recovery (`recovery`) are called from here and never reach into it.
//!
//! Sequence space as in `stream.rs`; the SYN and FIN are retransmitted like data. What the
//! application wrote and the peer's window are the shared [`SendStream`]'s.

use super::cc::{AckEvent, AnyCc, CongestionControl};
use super::rate::{Delivery, DeliveryRate};
use super::send_half::{SendHalf, SenderState};
pub use super::stream::ISS;
use super::stream::SendStream;
use super::recovery::{AckOutcome, AnyRecovery, LossRecovery};
use super::rtt::RttEstimator;
use super::scoreboard::{Acked, Sacked, Scoreboard};
use super::segment::Segment;
use super::tcb::{CaState, Tcb};
use crate::config::RttSampling;
use crate::energy::cpu::{Op, OpLog};
use crate::units::{on_tick, SimDuration, SimTime};

/// What the sender wants transmitted next; the endpoint adds ACK fields and options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutSegment {
    pub seq: u64,
    pub len: u32,
    pub syn: bool,
    pub fin: bool,
    pub retransmission: bool,
    /// ECN-capable transport (RFC 3168 §6.1.1: new data only, not retransmissions or ACKs).
    pub ect: bool,
    /// Congestion Window Reduced: the first new data segment after an ECN reduction.
    pub cwr: bool,
    /// When this sequence range was first transmitted (for per-packet delivery latency).
    pub first_sent: SimTime,
}

/// Per-connection sending counters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SenderCounters {
    /// Segments carrying data, SYN or FIN, first transmissions and retransmissions.
    pub segments_sent: u64,
    pub data_segments_sent: u64,
    pub retransmissions: u64,
    pub timeouts: u64,
    pub fast_retransmits: u64,
    pub payload_bytes_sent: u64,
    pub dupacks_received: u64,
    /// Window reductions in response to ECN-Echo (RFC 3168 §6.1.2).
    pub ecn_reductions: u64,
    /// Route-failure notices acted on (ELFN freezes).
    pub route_failures: u64,
    /// ELFN probes sent while frozen.
    pub probes_sent: u64,
    /// Total time frozen (ns).
    pub frozen_ns: u64,
    /// RTT samples fed to the RFC 6298 estimator.
    pub rtt_samples: u64,
    /// Zero-window probes sent by the persist timer (RFC 9293 §3.8.6.1).
    pub window_probes: u64,
    /// The Linux stack: tail loss probes sent (RFC 8985 §7).
    pub loss_probes: u64,
    /// The Linux stack: probes that repaired a loss (`TCPLossProbeRecovery`).
    pub loss_probe_recoveries: u64,
    /// The Linux stack: retransmissions found lost again by RACK (`TCPLostRetransmit`).
    pub lost_retransmits: u64,
    /// The Linux stack: window reductions undone as spurious (D-SACK, timestamps, F-RTO).
    pub undos: u64,
    /// The Linux stack: timeouts F-RTO found spurious (RFC 5682).
    pub spurious_timeouts: u64,
}

impl SenderCounters {
    /// One segment sent (`len` payload bytes; 0 for a SYN, FIN or probe without data), counted
    /// and reported as the CPU operation it is.
    pub fn count_sent(&mut self, len: u32, now: SimTime, ops: &mut OpLog) {
        self.segments_sent += 1;
        if len > 0 {
            self.data_segments_sent += 1;
            self.payload_bytes_sent += len as u64;
            ops.report(now, Op::SegmentSent { bytes: len });
        } else {
            ops.report(now, Op::AckSent);
        }
    }
}

/// Settings the sender needs, derived from the scenario.
#[derive(Debug, Clone)]
pub struct SenderParams {
    pub smss: u32,
    pub initial_window: u32,
    pub initial_ssthresh: u64,
    pub dupthresh: u32,
    pub limited_transmit: bool,
    pub sack: bool,
    pub timestamps: bool,
    pub initial_rto: SimDuration,
    pub min_rto: SimDuration,
    pub max_rto: SimDuration,
    pub clock_granularity: SimDuration,
    /// The retransmission timer expires on boundaries of this tick (0 = exact).
    pub timer_tick: SimDuration,
    /// A constant RTO replacing RFC 6298 (seed 004's calibration protocols), without backoff.
    pub fixed_rto: Option<SimDuration>,
    /// Which ACKs give RTT samples when timestamps are off.
    pub rtt_sampling: RttSampling,
    /// RFC 3168 ECN.
    pub ecn: bool,
    /// Header prediction before the PAWS test (seed 003 §II).
    pub predict_first: bool,
    /// ELFN (seed 002 §4): freeze on a route-failure notice, probe, resume on an answer.
    pub elfn: bool,
    pub elfn_probe_interval: SimDuration,
    /// Upper bound on cwnd: the largest window the peer can advertise (BSD's TCP_MAXWIN <<
    /// snd_scale). Growth beyond it could never be used and would only inflate later
    /// reductions computed from cwnd.
    pub max_cwnd: u64,
    /// Socket send buffer: snd_max - snd_una stays within it.
    pub send_buffer: u64,
}

/// The TCP sender, generic over its congestion controller (the variants' `AnyCc` by default, so
/// a new controller can be tried without touching this file).
#[derive(Debug, Clone)]
pub struct Sender<C = AnyCc> {
    pub tcb: Tcb,
    sb: Scoreboard,
    cc: C,
    recovery: AnyRecovery,
    rtt: RttEstimator,
    rto_deadline: Option<SimTime>,
    params: SenderParams,
    stream: SendStream,
    rate: DeliveryRate,
    last_window: u64,
    /// `one_segment` sampling: the segment being timed, (sequence number it ends at, send time).
    /// One at a time, cancelled by any retransmission (Karn's rule, RFC 6298 §3; BSD's t_rtseq).
    rtt_timing: Option<(u64, SimTime)>,
    /// RFC 3168 §6.1.2: no further ECN reduction until snd_una passes this point.
    ecn_recover: u64,
    /// Set CWR on the next new data segment.
    cwr_pending: bool,
    /// ELFN: frozen since this time (timers stopped, no data sent, state kept).
    frozen_since: Option<SimTime>,
    /// ELFN: next probe time while frozen, and whether a probe is due.
    probe_deadline: Option<SimTime>,
    probe_due: bool,
    probes_this_freeze: u32,
    /// The persist timer (RFC 9293 §3.8.6.1, RFC 1122 §4.2.2.17): armed while the peer's window
    /// keeps the next segment back and nothing is outstanding, so no retransmission timer runs;
    /// the probes sent since the window last let data through; a probe is due.
    persist_deadline: Option<SimTime>,
    persist_backoff: u32,
    persist_probe_due: bool,
    /// CPU operations performed, for the world to charge.
    ops: OpLog,
    pub counters: SenderCounters,
}

impl<C: CongestionControl> Sender<C> {
    /// A sender with `app_bytes` to send.
    pub fn new(params: SenderParams, cc: C, recovery: AnyRecovery, app_bytes: u64) -> Self {
        let smss = params.smss as u64;
        let tcb = Tcb {
            smss,
            cwnd: params.initial_window as u64 * smss,
            ssthresh: params.initial_ssthresh,
            ca_state: CaState::Open,
            recover: ISS,
            dupacks: 0,
            snd_una: ISS,
            snd_nxt: ISS,
            snd_max: ISS,
            pending_rexmit: None,
            bytes_acked: 0,
        };
        let mut rtt = RttEstimator::new(params.initial_rto, params.min_rto, params.max_rto, params.clock_granularity);
        if let Some(fixed) = params.fixed_rto {
            rtt = rtt.with_fixed_rto(fixed);
        }
        Self {
            tcb,
            sb: Scoreboard::new(),
            cc,
            recovery,
            rtt,
            rto_deadline: None,
            stream: SendStream::new(app_bytes, smss, params.send_buffer),
            rate: DeliveryRate::default(),
            params,
            last_window: 0,
            rtt_timing: None,
            ecn_recover: ISS,
            cwr_pending: false,
            frozen_since: None,
            probe_deadline: None,
            probe_due: false,
            probes_this_freeze: 0,
            persist_deadline: None,
            persist_backoff: 0,
            persist_probe_due: false,
            ops: OpLog::default(),
            counters: SenderCounters::default(),
        }
    }

    pub fn syn_acked(&self) -> bool {
        self.tcb.snd_una > ISS
    }
    /// The congestion controller, for tests that inspect what it was given.
    pub fn congestion_control(&self) -> &C {
        &self.cc
    }
    /// The RFC 6298 smoothed round-trip time, once sampled.
    pub fn srtt(&self) -> Option<SimDuration> {
        self.rtt.srtt()
    }
    /// Consecutive expirations the RTO is backed off for (RFC 6298 §5.5).
    pub fn rto_backoff(&self) -> u32 {
        self.rtt.backoff()
    }
    pub fn is_frozen(&self) -> bool {
        self.frozen_since.is_some()
    }

    /// A route-failure (or route-restored) notice from the node before a broken hop. Only an
    /// ELFN sender reacts: it freezes (timers stopped, no data, state kept) and probes until the
    /// route answers (seed 002 §4; Holland & Vaidya's ELFN).
    fn route_notice(&mut self, now: SimTime, restored: bool) {
        if !self.params.elfn || !self.stream.is_open() {
            return;
        }
        if restored {
            self.unfreeze(now);
        } else if self.frozen_since.is_none() {
            self.counters.route_failures += 1;
            self.frozen_since = Some(now);
            self.probes_this_freeze = 0;
            self.stop_timer(now);
            self.probe_deadline = Some(now + self.params.elfn_probe_interval);
            self.ops.report(now, Op::TimerSet);
        }
    }

    fn unfreeze(&mut self, now: SimTime) {
        let Some(since) = self.frozen_since.take() else { return };
        self.counters.frozen_ns += (now - since).0;
        self.probe_deadline = None;
        self.probe_due = false;
        if self.tcb.snd_una < self.tcb.snd_max {
            // What was in flight when the route broke was most likely lost: resend the first
            // unacknowledged segment now rather than waiting out a backed-off timer.
            self.tcb.pending_rexmit = Some(self.tcb.snd_una);
            self.restart_timer(now);
        }
    }
    /// The peer's window as last advertised (bytes).
    pub fn peer_window(&self) -> u64 {
        self.stream.rwnd
    }

    /// Bytes in flight as the sender estimates them (pipe during SACK recovery).
    fn flight_estimate(&self) -> u64 {
        if self.tcb.ca_state == CaState::Recovery && self.recovery.uses_pipe() {
            self.sb.pipe()
        } else {
            self.tcb.snd_nxt - self.tcb.snd_una
        }
    }

    fn arm_timer_if_idle(&mut self, now: SimTime) {
        if self.rto_deadline.is_none() {
            self.restart_timer(now);
        }
    }

    fn restart_timer(&mut self, now: SimTime) {
        self.rto_deadline = Some(on_tick(now, self.rtt.rto(), self.params.timer_tick));
        self.ops.report(now, Op::TimerSet);
    }

    fn stop_timer(&mut self, now: SimTime) {
        if self.rto_deadline.take().is_some() {
            self.ops.report(now, Op::TimerSet);
        }
    }

    // ------------------------------------------------------------------------------------------
    // Input: acknowledgments.

    /// Process the acknowledgment information of an incoming segment that has the ACK flag.
    fn ack(&mut self, now: SimTime, seg: &Segment) {
        let ack = seg.ack;
        if !self.stream.is_open() || ack > self.tcb.snd_max {
            return; // RFC 9293 §3.10.7.4: an ACK for something not yet sent is ignored.
        }
        if self.frozen_since.is_some() && self.probes_this_freeze > 0 {
            // An answer after a probe: the route is back; resume with the state kept.
            self.unfreeze(now);
        }
        if seg.is_pure_ack() {
            // BSD header prediction for ACKs: an in-order ACK of new data with nothing special
            // takes the fast path; duplicates, SACK-bearing and recovery ACKs the slow path.
            let predicted = ack > self.tcb.snd_una && self.tcb.ca_state == CaState::Open && seg.sack.is_empty();
            self.ops.report(now, if predicted { Op::FastPath } else { Op::SlowPath });
            // The PAWS test on the ACK's timestamp (RFC 7323 §5), skipped for predicted ACKs
            // when prediction comes first (seed 003 §II).
            if self.params.timestamps && seg.ts.is_some() && !(self.params.predict_first && predicted) {
                self.ops.report(now, Op::PawsCheck);
            }
        }
        let window_changed = seg.window as u64 != self.last_window;
        if ack >= self.tcb.snd_una {
            // An older ACK (reordered) does not set the window (RFC 9293 §3.10.7.4, SND.WL2).
            self.stream.rwnd = seg.window as u64;
        }
        self.last_window = seg.window as u64;

        let use_sack = self.params.sack && self.recovery.uses_pipe();
        let mut sacked = Sacked::default();
        if self.params.sack {
            for &(l, r) in seg.sack.as_slice() {
                self.ops.report(now, Op::SackBlockProcessed);
                if use_sack && r > ack {
                    sacked.add(self.sb.on_sack_block(l.max(ack), r));
                }
            }
            for _ in 0..sacked.segments {
                self.ops.report(now, Op::ScoreboardUpdate);
            }
        }
        let newly_sacked = sacked.segments;

        if self.params.ecn && seg.flags.contains(super::segment::Flags::ECE) {
            self.on_ecn_echo();
        }
        if ack > self.tcb.snd_una {
            self.on_new_ack(now, seg, ack, sacked);
        } else if ack == self.tcb.snd_una {
            // An ACK that does not advance SND.UNA can give a sample only from its SACK blocks
            // (an older, reordered ACK gives none, as in Linux's old-ACK path).
            let rtt = self.take_rtt_sample(now, seg, None, sacked);
            self.ack_event(now, 0, sacked.delivery, rtt);
            if seg.is_pure_ack() && self.tcb.snd_max > self.tcb.snd_una && !window_changed {
                // RFC 5681 §2 duplicate ACK: no data, nothing new acknowledged, window
                // unchanged, data outstanding.
                self.on_duplicate_ack(now);
            }
        }
        if use_sack && newly_sacked > 0 {
            let lost = self.sb.update_lost(self.params.dupthresh, self.params.smss);
            // RFC 6675 §5: loss detection by IsLost(HighACK + 1) also starts recovery.
            if lost > 0
                && self.tcb.ca_state == CaState::Open
                && self.sb.get(0).is_some_and(|s| s.lost)
                && self.may_enter_recovery()
            {
                self.enter_recovery(now);
            }
        }
    }

    fn on_new_ack(&mut self, now: SimTime, seg: &Segment, ack: u64, sacked: Sacked) {
        let acked = self.sb.on_cumulative_ack(ack);
        self.tcb.snd_una = ack;
        self.tcb.snd_nxt = self.tcb.snd_nxt.max(ack);
        self.tcb.dupacks = 0;
        // The scoreboard marks the SYN like a FIN (each takes one sequence number); only an ACK
        // beyond the data acknowledges the FIN (RFC 9293 §3.10.7.4).
        if acked.fin_acked && ack > self.stream.data_end() {
            self.stream.fin_acked = true;
        }
        self.stream.on_cumulative_ack(ack, now);

        let rtt = self.take_rtt_sample(now, seg, Some(&acked), sacked);
        let mut delivery = sacked.delivery;
        delivery.merge(acked.delivery);
        let event = self.ack_event(now, acked.bytes, delivery, rtt);

        let mut restart = true;
        match self.tcb.ca_state {
            CaState::Recovery => match self.recovery.on_ack(&mut self.tcb, acked.bytes) {
                AckOutcome::Exited => self.tcb.ca_state = CaState::Open,
                AckOutcome::Partial { restart_timer } => restart = restart_timer,
            },
            CaState::Loss => {
                if self.tcb.snd_una >= self.tcb.recover {
                    self.tcb.ca_state = CaState::Open;
                }
                self.grow_window(&event);
            }
            CaState::Open | CaState::Disorder | CaState::Cwr => self.grow_window(&event),
        }

        // RFC 6298 §5.2-5.3; a frozen ELFN sender keeps its timers stopped.
        if self.frozen_since.is_some() {
        } else if self.tcb.snd_una == self.tcb.snd_max {
            self.stop_timer(now);
        } else if restart {
            self.restart_timer(now);
        }
    }

    /// Feed the estimator the RTT sample this ACK gives, if any. `acked` is what it cumulatively
    /// acknowledged (`None`: SND.UNA did not advance), `sacked` what its SACK blocks newly covered.
    /// A sample ends the timer backoff (RFC 6298 §5, note after rule 5.7); no other event does.
    fn take_rtt_sample(&mut self, now: SimTime, seg: &Segment, acked: Option<&Acked>, sacked: Sacked) -> Option<SimDuration> {
        let sample = if self.params.timestamps {
            // RFC 7323 §4.1 (RTTM): a TSecr is used only from an ACK that advances SND.UNA. The
            // echo tells which transmission was acknowledged, so retransmissions are no obstacle
            // (RFC 6298 §3); a zero TSecr is no echo.
            match seg.ts {
                Some(ts) if acked.is_some() && ts.ecr != 0 => {
                    Some(SimDuration::from_millis(timestamp_ms(now).wrapping_sub(ts.ecr) as u64))
                }
                _ => None,
            }
        } else {
            match self.params.rtt_sampling {
                RttSampling::OneSegment => match (acked, self.rtt_timing) {
                    (Some(_), Some((end, sent))) if seg.ack >= end => {
                        self.rtt_timing = None;
                        Some(now - sent)
                    }
                    _ => None,
                },
                // Karn's rule (RFC 6298 §3) as Linux applies it: the cumulative part counts only
                // if it acknowledged no retransmitted segment at all, since a hole filled by a
                // retransmission also releases the ACK for the segments above it, whose send
                // times would then measure the repair, not the path. Otherwise the SACK blocks
                // can still give one (tcp_ack_update_rtt prefers the former).
                RttSampling::EveryAck => acked
                    .filter(|a| !a.retransmitted)
                    .and_then(|a| a.first_clean_sent)
                    .or(sacked.first_clean_sent)
                    .map(|sent| now - sent),
            }
        };
        if let Some(r) = sample {
            self.rtt.on_sample(r);
            self.counters.rtt_samples += 1;
        }
        sample
    }

    /// The controller's view of an acceptable ACK: the time, the bytes newly acknowledged, the
    /// RTT estimate and the delivery-rate sample; handed to `on_ack_sample` at once.
    fn ack_event(&mut self, now: SimTime, acked: u64, delivery: Delivery, rtt: Option<SimDuration>) -> AckEvent {
        let rate = self.rate.sample(now, delivery, rtt);
        let event = AckEvent { now, acked, srtt: self.rtt.srtt(), rate };
        self.cc.on_ack_sample(&self.tcb, &event);
        event
    }

    /// Congestion control's increase for newly acknowledged data, bounded by `max_cwnd`.
    fn grow_window(&mut self, event: &AckEvent) {
        self.cc.on_ack(&mut self.tcb, event);
        self.tcb.cwnd = self.tcb.cwnd.min(self.params.max_cwnd.max(self.tcb.smss));
    }

    /// RFC 3168 §6.1.2: react to ECN-Echo as to a loss, at most once per window of data, without
    /// retransmitting; announce it with CWR.
    fn on_ecn_echo(&mut self) {
        let once_per_window = self.tcb.snd_una >= self.ecn_recover && self.tcb.snd_una > ISS;
        if self.tcb.ca_state != CaState::Open || !once_per_window {
            return; // already reducing (loss recovery or a reduction for this window)
        }
        self.tcb.ssthresh = self.cc.on_congestion_event(&self.tcb);
        self.tcb.cwnd = self.tcb.ssthresh;
        self.tcb.bytes_acked = 0;
        self.ecn_recover = self.tcb.snd_max;
        self.cwr_pending = true;
        self.counters.ecn_reductions += 1;
    }

    fn may_enter_recovery(&self) -> bool {
        // RFC 6582 §3.2 step 1 / RFC 6675 §5.1: only when the cumulative ACK covers more than
        // `recover`, the highest sequence number sent when recovery (or the timeout) began. We
        // keep `recover` as snd_max then, one past that sequence number, so an ACK equal to it
        // already covers it: after a go-back-N that has repaired everything sent before the
        // timeout, a loss of the first new segment can be fast-retransmitted.
        !self.recovery.guards_with_recover() || self.tcb.snd_una >= self.tcb.recover
    }

    fn on_duplicate_ack(&mut self, now: SimTime) {
        self.counters.dupacks_received += 1;
        self.tcb.dupacks += 1;
        match self.tcb.ca_state {
            CaState::Recovery => self.recovery.on_dupack(&mut self.tcb),
            CaState::Open | CaState::Loss | CaState::Disorder | CaState::Cwr => {
                if self.tcb.dupacks == self.params.dupthresh && self.may_enter_recovery() {
                    self.enter_recovery(now);
                }
            }
        }
    }

    fn enter_recovery(&mut self, _now: SimTime) {
        self.counters.fast_retransmits += 1;
        self.tcb.dupacks = self.tcb.dupacks.max(self.params.dupthresh);
        self.tcb.bytes_acked = 0;
        self.recovery.on_enter(&mut self.tcb, &mut self.sb, &mut self.cc);
    }

    // ------------------------------------------------------------------------------------------
    // Timer.

    /// Handle the retransmission timer if it is due (RFC 6298 §5.4-5.6, RFC 5681 §3.1).
    fn timeout(&mut self, now: SimTime) {
        if self.persist_deadline.is_some_and(|d| d <= now) {
            self.ops.report(now, Op::TimerExpired);
            self.persist_deadline = None;
            self.persist_probe_due = true;
        }
        if self.probe_deadline.is_some_and(|d| d <= now) {
            self.ops.report(now, Op::TimerExpired);
            self.probe_due = true;
            self.probe_deadline = Some(now + self.params.elfn_probe_interval);
        }
        match self.rto_deadline {
            Some(d) if d <= now => {}
            _ => return,
        }
        self.rto_deadline = None;
        self.ops.report(now, Op::TimerExpired);
        if self.tcb.snd_una == self.tcb.snd_max {
            return;
        }
        self.counters.timeouts += 1;
        match self.recovery.window_after_timeout(&self.tcb) {
            // Seed 002 Table 1 (TCP-ECN-ELFN): the timeout retransmits but leaves the window
            // (and ssthresh) as they were; only BSD's `cwnd = 1 segment` line is dropped.
            Some(window) => self.tcb.cwnd = window.max(self.tcb.smss),
            None => {
                if self.rtt.backoff() == 0 {
                    // RFC 5681 eq. (4), applied once per segment however often it times out.
                    self.tcb.ssthresh = self.cc.on_congestion_event(&self.tcb);
                }
                self.tcb.cwnd = self.cc.cwnd_after_timeout(&self.tcb);
            }
        }
        self.tcb.recover = self.tcb.snd_max;
        self.tcb.ca_state = CaState::Loss;
        self.tcb.dupacks = 0;
        self.tcb.bytes_acked = 0;
        self.tcb.pending_rexmit = None;
        // Go-back-N from the first unacknowledged segment (RFC 6298 §5.4 and the BSD/Linux
        // practice of resending the rest of the window in slow start).
        self.tcb.snd_nxt = self.tcb.snd_una;
        self.sb.on_timeout();
        self.rtt.on_timeout();
        self.rtt_timing = None;
    }

    // ------------------------------------------------------------------------------------------
    // Output.

    fn has_unsent(&self) -> bool {
        self.stream.has_unsent(self.tcb.snd_nxt, self.tcb.snd_max)
    }

    /// Length and FIN flag of a first transmission starting at snd_nxt.
    fn next_new_segment(&self) -> (u32, bool) {
        self.stream.next_segment(self.tcb.snd_nxt, self.tcb.smss)
    }

    fn send_edge(&self) -> u64 {
        self.stream.send_edge(self.tcb.snd_una)
    }

    /// Nothing is outstanding and the peer's window keeps the next new segment back.
    fn window_blocked(&self) -> bool {
        if self.tcb.snd_una != self.tcb.snd_max || self.tcb.snd_nxt == ISS || !self.has_unsent() {
            return false;
        }
        let (len, _) = self.next_new_segment();
        len > 0 && self.tcb.snd_nxt + len as u64 > self.send_edge()
    }

    /// Arm the persist timer unless it runs: the RTO, doubled for each probe already sent, at
    /// most `max_rto` (RFC 1122 §4.2.2.17: the first probe after one RTO, then exponentially).
    fn arm_persist(&mut self, now: SimTime) {
        if self.persist_deadline.is_none() {
            let interval = SimDuration(self.rtt.rto().0.saturating_mul(1u64 << self.persist_backoff.min(16))).min(self.params.max_rto);
            self.persist_deadline = Some(on_tick(now, interval, self.params.timer_tick));
            self.ops.report(now, Op::TimerSet);
        }
    }

    /// The window let new data through: the persist timer stops and its backoff resets.
    fn stop_persist(&mut self, now: SimTime) {
        self.persist_backoff = 0;
        self.persist_probe_due = false;
        if self.persist_deadline.take().is_some() {
            self.ops.report(now, Op::TimerSet);
        }
    }

    /// The next segment the congestion and receive windows allow, if any.
    fn poll(&mut self, now: SimTime) -> Option<OutSegment> {
        if !self.stream.is_open() {
            return None;
        }
        if self.frozen_since.is_some() {
            // Frozen: nothing but probes, one old byte that the receiver acknowledges at once
            // (a zero-window-probe style segment).
            if !std::mem::take(&mut self.probe_due) {
                return None;
            }
            self.probes_this_freeze += 1;
            self.counters.probes_sent += 1;
            self.account_sent(1, now);
            let seq = self.tcb.snd_una.saturating_sub(1);
            return Some(OutSegment { seq, len: 1, syn: false, fin: false, retransmission: false, ect: false, cwr: false, first_sent: now });
        }
        if std::mem::take(&mut self.persist_probe_due) && self.window_blocked() {
            // A zero-window probe: one octet already acknowledged (RFC 9293 §3.8.6.1 allows a
            // retransmission as the probe), which the receiver acknowledges at once with its
            // current window, as Linux's out-of-window probe does; it takes no sequence space.
            self.counters.window_probes += 1;
            self.account_sent(1, now);
            self.persist_backoff += 1;
            self.arm_persist(now);
            let seq = self.tcb.snd_una - 1;
            return Some(OutSegment { seq, len: 1, syn: false, fin: false, retransmission: false, ect: false, cwr: false, first_sent: now });
        }
        if let Some(seq) = self.tcb.pending_rexmit.take() {
            if let Some(i) = self.sb.index_of(seq) {
                return Some(self.retransmit(i, now));
            }
        }
        let send_edge = self.send_edge();

        if self.tcb.ca_state == CaState::Recovery && self.recovery.uses_pipe() {
            // RFC 6675 §5 (C): send while cwnd - pipe >= SMSS, choosing by NextSeg().
            if self.sb.pipe() + self.tcb.smss > self.tcb.cwnd {
                return None;
            }
            if let Some(i) = self.sb.next_retransmission(false) {
                return Some(self.retransmit(i, now));
            }
            if self.tcb.snd_nxt == self.tcb.snd_max && self.has_unsent() {
                let (len, _) = self.next_new_segment();
                if self.tcb.snd_nxt + len as u64 <= send_edge {
                    return Some(self.send_new(now));
                }
            }
            return self.sb.next_retransmission(true).map(|i| self.retransmit(i, now));
        }

        let flight = self.tcb.snd_nxt - self.tcb.snd_una;
        let mut window = self.tcb.cwnd;
        if self.params.limited_transmit && self.tcb.ca_state == CaState::Open && self.tcb.dupacks > 0 {
            // RFC 3042 §2: one new segment per each of the first two duplicate ACKs.
            window += self.tcb.dupacks.min(2) as u64 * self.tcb.smss;
        }

        if self.tcb.snd_nxt < self.tcb.snd_max {
            // Go-back-N after a timeout (or Tahoe's fast retransmit).
            let i = self.sb.index_of(self.tcb.snd_nxt)?;
            let seg = *self.sb.get(i)?;
            let len = seg.end() - seg.seq;
            if flight > 0 && flight + len > window {
                return None;
            }
            if seg.sacked {
                // Already at the receiver (only possible when SACK info survived): skip it.
                self.tcb.snd_nxt = seg.end();
                return self.poll(now);
            }
            self.tcb.snd_nxt = seg.end();
            return Some(self.retransmit(i, now));
        }

        if !self.has_unsent() {
            if flight < self.tcb.cwnd {
                // Room in the window and nothing to send (draft-cheng-iccrg-delivery-rate-estimation §3.4).
                self.rate.on_app_limited(flight);
            }
            return None;
        }
        let (len, fin) = self.next_new_segment();
        let seq_len = len as u64 + fin as u64 + (self.tcb.snd_nxt == ISS) as u64;
        if flight > 0 && flight + seq_len > window {
            return None;
        }
        if self.tcb.snd_nxt != ISS && self.tcb.snd_nxt + len as u64 > send_edge && len > 0 {
            if self.tcb.snd_una == self.tcb.snd_max {
                // Nothing outstanding, so no ACK will come to open the window: persist.
                self.arm_persist(now);
            }
            return None;
        }
        if self.persist_deadline.is_some() || self.persist_backoff > 0 {
            self.stop_persist(now);
        }
        Some(self.send_new(now))
    }

    fn send_new(&mut self, now: SimTime) -> OutSegment {
        let seq = self.tcb.snd_nxt;
        let syn = seq == ISS;
        let (len, fin) = if syn { (0, false) } else { self.next_new_segment() };
        let tx = self.rate.on_send(now, self.sb.is_empty());
        self.sb.push(seq, len, fin || syn, now, tx);
        let end = seq + len as u64 + (fin || syn) as u64;
        self.tcb.snd_nxt = end;
        self.tcb.snd_max = self.tcb.snd_max.max(end);
        self.account_sent(len, now);
        self.arm_timer_if_idle(now);
        if self.rtt_timing.is_none() && self.params.rtt_sampling == RttSampling::OneSegment {
            self.rtt_timing = Some((end, now));
        }
        let ect = self.params.ecn && len > 0;
        let cwr = ect && std::mem::take(&mut self.cwr_pending);
        OutSegment { seq, len, syn, fin, retransmission: false, ect, cwr, first_sent: now }
    }

    fn retransmit(&mut self, i: usize, now: SimTime) -> OutSegment {
        let tx = self.rate.on_send(now, false);
        self.sb.mark_retransmitted(i, now, tx);
        let s = *self.sb.get(i).expect("index from scoreboard");
        // Karn: a retransmission makes the timed segment's acknowledgment ambiguous.
        self.rtt_timing = None;
        self.counters.retransmissions += 1;
        self.account_sent(s.len, now);
        self.arm_timer_if_idle(now);
        let syn = s.seq == ISS;
        OutSegment { seq: s.seq, len: s.len, syn, fin: s.fin && !syn, retransmission: true, ect: false, cwr: false, first_sent: s.first_sent }
    }

    fn account_sent(&mut self, len: u32, now: SimTime) {
        self.counters.count_sent(len, now, &mut self.ops);
    }
}

/// The TSval clock: milliseconds since the start of the run (RFC 7323 §5.4 allows 1 ms - 1 s ticks).
pub fn timestamp_ms(now: SimTime) -> u32 {
    (now.0 / 1_000_000) as u32 + 1
}

impl<C: CongestionControl> SendHalf for Sender<C> {
    fn stream(&self) -> &SendStream {
        &self.stream
    }
    fn stream_mut(&mut self) -> &mut SendStream {
        &mut self.stream
    }
    fn ops(&mut self) -> &mut OpLog {
        &mut self.ops
    }
    #[inline]
    fn on_ack(&mut self, now: SimTime, seg: &Segment) {
        self.ack(now, seg)
    }
    #[inline]
    fn on_timeout(&mut self, now: SimTime) {
        self.timeout(now)
    }
    #[inline]
    fn poll_segment(&mut self, now: SimTime) -> Option<OutSegment> {
        self.poll(now)
    }
    fn on_route_notice(&mut self, now: SimTime, restored: bool) {
        self.route_notice(now, restored)
    }
    fn deadline(&self) -> Option<SimTime> {
        [self.rto_deadline, self.probe_deadline, self.persist_deadline].into_iter().flatten().min()
    }
    fn in_flight(&self) -> u64 {
        self.flight_estimate()
    }
    /// The timeout the retransmission timer is armed with now (backoff included).
    fn rto(&self) -> SimDuration {
        self.rtt.rto()
    }
    fn state(&self) -> SenderState {
        let t = &self.tcb;
        SenderState { cwnd: t.cwnd, ssthresh: t.ssthresh, ca_state: t.ca_state, snd_una: t.snd_una, snd_nxt: t.snd_nxt, snd_max: t.snd_max }
    }
    fn counters(&self) -> &SenderCounters {
        &self.counters
    }
}
