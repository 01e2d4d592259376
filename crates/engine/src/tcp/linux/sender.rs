//! The Linux sender: what net/ipv4/tcp_input.c (`tcp_ack`, `tcp_fastretrans_alert`),
//! tcp_output.c (`tcp_write_xmit`, `tcp_xmit_retransmit_queue`, `tcp_send_loss_probe`) and
//! tcp_timer.c (`tcp_retransmit_timer`) do with ACKs, timers and the window, sans-I/O.
//!
//! States (`LinuxCaState`): Open; Disorder (SACKs or duplicate ACKs, nothing lost yet); CWR (a
//! reduction without loss: ECN, a repaired tail loss); Recovery (fast recovery); Loss (after
//! a timeout). Loss detection is RACK (`rack.rs`, RFC 8985) with SACK and NewReno's marking of
//! the head (`tcp_newreno_mark_lost`) without; window reductions follow PRR (RFC 6937,
//! `tcp_cwnd_reduction`); tail losses are probed (TLP, RFC 8985 §7); reductions proven
//! spurious by D-SACKs (RFC 3708) or timestamps (Eifel, RFC 3522) are undone, and timeouts
//! proven spurious by F-RTO (RFC 5682) too. Windows count packets, as `snd_cwnd` does.

use super::cc::{AckSample, AnyLinuxCc, CaEvent, CcState, LinuxCaState, LinuxCongestion, RateSample, INFINITE_SSTHRESH};
use super::rack::{sent_after, Rack};
use super::rtt::LinuxRtt;
use super::rtx::{Packet, RtxQueue, Tagged, TxState};
use crate::energy::cpu::{Op, OpLog};
use crate::tcp::segment::{Flags, Segment};
use crate::tcp::send_half::{SendHalf, SenderState};
use crate::tcp::sender::{timestamp_ms, OutSegment, SenderCounters};
use crate::tcp::stream::{SendStream, ISS};
use crate::tcp::tcb::CaState;
use super::timer_wheel::fire_time;
use crate::units::{SimDuration, SimTime};

/// `sysctl_tcp_max_reordering`.
const MAX_REORDERING: u32 = 300;
/// The minimum-RTT filter's window (`sysctl_tcp_min_rtt_wlen`, 300 s).
const MIN_RTT_WINDOW: SimDuration = SimDuration(300_000_000_000);

/// Settings of the Linux sender, from the scenario.
#[derive(Debug, Clone)]
pub struct LinuxParams {
    pub smss: u32,
    /// Initial window, packets (`TCP_INIT_CWND`).
    pub initial_window: u32,
    /// Initial ssthresh in packets; [`INFINITE_SSTHRESH`] when unset.
    pub initial_ssthresh: u32,
    pub sack: bool,
    pub timestamps: bool,
    pub ecn: bool,
    pub initial_rto: SimDuration,
    pub rto_min: SimDuration,
    pub rto_max: SimDuration,
    /// A jiffy: timers expire on its boundaries and timeouts are multiples of it.
    pub jiffy: SimDuration,
    /// `sysctl_tcp_reordering`: the initial reordering degree (duplicate-ACK threshold).
    pub reordering: u32,
    /// Largest cwnd in packets (`snd_cwnd_clamp`).
    pub cwnd_clamp: u32,
    /// Socket send buffer: unacknowledged data stays within it.
    pub send_buffer: u64,
    /// `net.ipv4.tcp_slow_start_after_idle`.
    pub slow_start_after_idle: bool,
    /// Pace whatever the module (as the `fq` qdisc makes Linux do); BBR paces regardless.
    pub pacing: bool,
}

/// Which kind of event the single transmission timer is armed for (`icsk_pending`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pending {
    Retransmit,
    /// RACK's reordering timer (`ICSK_TIME_REO_TIMEOUT`).
    Reorder,
    /// A tail loss probe (`ICSK_TIME_LOSS_PROBE`).
    LossProbe,
    /// The zero-window probe timer (`ICSK_TIME_PROBE0`).
    WindowProbe,
}

/// What the ACK just processed asks to be sent (`enum tcp_rexmit`... `REXMIT_NEW` is F-RTO's
/// "new data first").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rexmit {
    Lost,
    New,
}

/// `FLAG_*` of tcp_input.c that decisions below read.
#[derive(Debug, Clone, Copy, Default)]
struct AckFlags {
    data_acked: bool,
    win_update: bool,
    snd_una_advanced: bool,
    data_sacked: bool,
    dsack: bool,
    ece: bool,
    retrans_data_acked: bool,
    orig_sack_acked: bool,
    lost_retrans: bool,
    set_xmit_timer: bool,
    /// A D-SACK covering the tail loss probe (`FLAG_DSACK_TLP`).
    dsack_tlp: bool,
}

impl AckFlags {
    /// `FLAG_NOT_DUP`.
    fn not_dup(&self) -> bool {
        self.data_acked || self.win_update
    }
    /// `FLAG_CA_ALERT`.
    fn ca_alert(&self) -> bool {
        self.data_sacked || self.ece || self.dsack
    }
    /// `FLAG_FORWARD_PROGRESS`.
    fn forward_progress(&self) -> bool {
        self.data_acked || self.data_sacked
    }
}

/// The per-ACK part of the delivery-rate sample (`struct rate_sample` while it is filled).
#[derive(Debug, Clone, Copy, Default)]
struct RateScan {
    prior_delivered: Option<u64>,
    prior_at: Option<SimTime>,
    interval: SimDuration,
    app_limited: bool,
    last_end: u64,
}

/// New data leaving together in one pacing slot, as the segments of one TSO packet do.
#[derive(Debug, Clone, Copy)]
struct Burst {
    at: SimTime,
    /// Segments it may still take.
    left: u32,
    /// Idle time of the pacer before the burst, not yet taken off its gaps.
    credit: u64,
}

/// The connection's delivery state (`tp->delivered` and friends, net/ipv4/tcp_rate.c).
#[derive(Debug, Clone, Copy, Default)]
struct Delivery {
    delivered: u64,
    delivered_at: SimTime,
    first_tx: SimTime,
    /// `tp->app_limited`: the delivered count at which the application-limited phase ends.
    app_limited_until: u64,
}

impl Delivery {
    /// `tcp_rate_skb_delivered`.
    fn on_delivered(&mut self, p: &Packet, rs: &mut RateScan) {
        let Some(at) = p.tx.delivered_at else { return };
        if rs.prior_delivered.is_none() || sent_after(p.sent_at, self.first_tx, p.end(), rs.last_end) {
            rs.prior_delivered = Some(p.tx.delivered);
            rs.prior_at = Some(at);
            rs.app_limited = p.tx.app_limited;
            rs.last_end = p.end();
            self.first_tx = p.sent_at;
            rs.interval = p.sent_at - p.tx.first_tx;
        }
    }
}

#[derive(Debug, Clone, Default)]
struct MinRtt {
    value: Option<SimDuration>,
    at: SimTime,
}

impl MinRtt {
    /// `tcp_update_rtt_min`: a running minimum restarted once it is older than the window.
    fn update(&mut self, now: SimTime, rtt: SimDuration) {
        if self.value.is_none_or(|v| rtt <= v || now - self.at > MIN_RTT_WINDOW) {
            self.value = Some(rtt);
            self.at = now;
        }
    }
}

#[derive(Debug, Clone)]
pub struct LinuxSender {
    params: LinuxParams,
    stream: SendStream,
    q: RtxQueue,
    cc: AnyLinuxCc,
    /// The congestion state the module sees (cwnd, ssthresh, ca_state, ...).
    tp: CcState,
    rtt: LinuxRtt,
    min_rtt: MinRtt,
    rack: Rack,
    snd_una: u64,
    /// Next new sequence number; Linux never moves it back (retransmissions come from the queue).
    snd_nxt: u64,
    /// Window update bookkeeping (`snd_wl1` is the peer's sequence number; ours has none).
    snd_wnd: u64,
    /// `high_seq`: snd_nxt when the current recovery, reduction or loss episode began.
    high_seq: u64,
    /// The reordering degree (`tp->reordering`), packets.
    reordering: u32,
    /// Reordering events seen (`reord_seen`).
    reord_seen: u32,
    /// Duplicate ACKs counted as SACKed packets on a connection without SACK (`sacked_out`
    /// there); unused with SACK.
    reno_sacked: u32,
    prior_ssthresh: u32,
    /// `undo_marker` (Some while a reduction may still be undone) and `undo_retrans`.
    undo_marker: Option<u64>,
    undo_retrans: i64,
    /// TSval of the first retransmission of the episode (`retrans_stamp`), 0 if none.
    retrans_stamp: u32,
    /// TSecr of the ACK being processed (0: none).
    ack_tsecr: u32,
    prr_delivered: u32,
    prr_out: u32,
    /// F-RTO in progress after a timeout (`tp->frto`).
    frto: bool,
    /// `tlp_high_seq` (Some while a probe is unanswered) and whether the probe was a
    /// retransmission (`tlp_retrans`).
    tlp_high_seq: Option<u64>,
    tlp_retrans: bool,
    timer: Option<(SimTime, Pending)>,
    rexmit: Option<Rexmit>,
    /// A loss probe or a zero-window probe is due.
    probe_due: bool,
    /// The retransmission timer fired: its resend of the head goes out now, past the pacer
    /// (`tcp_retransmit_timer` calls `tcp_retransmit_skb` directly).
    rto_resend_due: bool,
    /// `data_segs_out`: data packets sent, retransmissions included; the pacer lets the first
    /// ten out unspaced.
    data_segs_out: u64,
    /// The burst of new data the pacer let out at one instant (`tcp_tso_autosize`'s segments
    /// per TSO packet), while it can grow.
    burst: Option<Burst>,
    window_probe_due: bool,
    window_probes_unanswered: u32,
    /// Earliest time the pacer lets the next packet out, and the wake-up asked for when it held
    /// a packet back.
    pace_at: SimTime,
    pace_wake: Option<SimTime>,
    delivery: Delivery,
    /// `max_packets_out`, `cwnd_usage_seqno`, `is_cwnd_limited`, `snd_cwnd_used`,
    /// `snd_cwnd_stamp` (net/ipv4/tcp_output.c `tcp_cwnd_validate`).
    max_packets_out: u32,
    cwnd_usage_seqno: u64,
    is_cwnd_limited: bool,
    cwnd_used: u32,
    cwnd_stamp: SimTime,
    /// Last time data was sent (`lsndtime`).
    last_send: SimTime,
    /// Times the SYN was sent.
    syn_sends: u32,
    /// Set CWR on the next new data segment (`TCP_ECN_QUEUE_CWR`).
    cwr_pending: bool,
    ops: OpLog,
    pub counters: SenderCounters,
}

impl LinuxSender {
    pub fn new(params: LinuxParams, mut cc: AnyLinuxCc, app_bytes: u64) -> Self {
        let mut tp = CcState::new(params.initial_window, params.smss, params.cwnd_clamp);
        tp.ssthresh = params.initial_ssthresh;
        cc.init(&mut tp);
        Self {
            stream: SendStream::new(app_bytes, params.smss as u64, params.send_buffer),
            q: RtxQueue::default(),
            cc,
            tp,
            rtt: LinuxRtt::new(params.initial_rto, params.rto_min, params.rto_max, params.jiffy),
            min_rtt: MinRtt::default(),
            rack: Rack::new(),
            snd_una: ISS,
            snd_nxt: ISS,
            snd_wnd: 0,
            high_seq: ISS,
            reordering: params.reordering,
            reord_seen: 0,
            reno_sacked: 0,
            prior_ssthresh: 0,
            undo_marker: None,
            undo_retrans: 0,
            retrans_stamp: 0,
            ack_tsecr: 0,
            prr_delivered: 0,
            prr_out: 0,
            frto: false,
            tlp_high_seq: None,
            tlp_retrans: false,
            timer: None,
            rexmit: None,
            probe_due: false,
            window_probe_due: false,
            window_probes_unanswered: 0,
            pace_at: SimTime::ZERO,
            pace_wake: None,
            rto_resend_due: false,
            data_segs_out: 0,
            burst: None,
            delivery: Delivery::default(),
            max_packets_out: 0,
            cwnd_usage_seqno: ISS,
            is_cwnd_limited: false,
            cwnd_used: 0,
            cwnd_stamp: SimTime::ZERO,
            last_send: SimTime::ZERO,
            syn_sends: 0,
            cwr_pending: false,
            ops: OpLog::default(),
            counters: SenderCounters::default(),
            params,
        }
    }

    // ------------------------------------------------------------------------------------------
    // Views.

    pub fn ca_state(&self) -> LinuxCaState {
        self.tp.ca_state
    }
    pub fn cwnd_packets(&self) -> u32 {
        self.tp.cwnd
    }
    pub fn ssthresh_packets(&self) -> u32 {
        self.tp.ssthresh
    }
    pub fn srtt(&self) -> Option<SimDuration> {
        self.rtt.srtt()
    }
    pub fn reordering(&self) -> u32 {
        self.reordering
    }
    pub fn pacing_rate(&self) -> u64 {
        self.tp.pacing_rate
    }
    pub fn congestion_control(&self) -> &AnyLinuxCc {
        &self.cc
    }

    fn is_sack(&self) -> bool {
        self.params.sack
    }
    /// `sacked_out`: SACKed packets, or duplicate ACKs without SACK.
    fn sacked_out(&self) -> u32 {
        if self.is_sack() {
            self.q.sacked_out
        } else {
            self.reno_sacked
        }
    }
    fn in_flight(&self) -> u32 {
        self.q.in_flight(self.sacked_out())
    }
    fn left_out(&self) -> u32 {
        self.sacked_out() + self.q.lost_out
    }
    /// `tcp_any_retrans_done`.
    fn any_retrans_done(&self) -> bool {
        self.q.retrans_out > 0 || self.q.head().is_some_and(|p| p.ever_retrans)
    }
    fn in_cwnd_reduction(&self) -> bool {
        matches!(self.tp.ca_state, LinuxCaState::Cwr | LinuxCaState::Recovery)
    }
    fn syn_acked(&self) -> bool {
        self.snd_una > ISS
    }

    /// Refresh the fields of the module's view that mirror the sender.
    fn sync_tp(&mut self, now: SimTime) {
        self.tp.now = now;
        self.tp.snd_una = self.snd_una;
        self.tp.snd_nxt = self.snd_nxt;
        self.tp.packets_out = self.q.packets_out;
        self.tp.in_flight = self.in_flight();
        self.tp.srtt = self.rtt.srtt();
        self.tp.min_rtt = self.min_rtt.value;
        self.tp.delivered = self.delivery.delivered;
        self.tp.app_limited = self.delivery.app_limited_until != 0;
        self.tp.last_send = self.last_send;
        // tcp_is_cwnd_limited: in slow start, let cwnd reach twice what was in flight.
        self.tp.cwnd_limited = if self.tp.in_slow_start() {
            self.tp.cwnd < 2 * self.max_packets_out
        } else {
            self.is_cwnd_limited
        };
    }

    fn set_ca_state(&mut self, state: LinuxCaState) {
        if self.tp.ca_state != state {
            self.cc.set_state(&mut self.tp, state);
            self.tp.ca_state = state;
        }
    }

    // ------------------------------------------------------------------------------------------
    // Timer.

    fn arm(&mut self, now: SimTime, after: SimDuration, kind: Pending) {
        let at = fire_time(now, after, self.params.jiffy);
        self.timer = Some((at, kind));
        self.ops.report(now, Op::TimerSet);
    }

    fn pending(&self) -> Option<Pending> {
        self.timer.map(|(_, k)| k)
    }

    /// `tcp_rto_delta_us`: how long from now until one RTO after the head was last sent.
    fn rto_delta(&self, now: SimTime) -> i64 {
        let rto = self.rtt.rto().0 as i64;
        match self.q.head() {
            Some(h) => h.sent_at.0 as i64 + rto - now.0 as i64,
            None => rto,
        }
    }

    /// `tcp_rearm_rto`.
    fn rearm_rto(&mut self, now: SimTime) {
        if self.q.packets_out == 0 {
            if self.timer.take().is_some() {
                self.ops.report(now, Op::TimerSet);
            }
            return;
        }
        let mut rto = self.rtt.rto();
        if matches!(self.pending(), Some(Pending::Reorder | Pending::LossProbe)) {
            rto = SimDuration(self.rto_delta(now).max(1_000) as u64);
        }
        self.arm(now, rto, Pending::Retransmit);
    }

    /// `tcp_schedule_loss_probe`: arm a probe 2 SRTT out (plus the delayed-ACK allowance when a
    /// single packet is out), unless the RTO comes first. Only with SACK, in Open or CWR.
    fn schedule_loss_probe(&mut self, now: SimTime, advancing_rto: bool) -> bool {
        if self.q.packets_out == 0
            || !self.is_sack()
            || !self.syn_acked()
            || !matches!(self.tp.ca_state, LinuxCaState::Open | LinuxCaState::Cwr)
        {
            return false;
        }
        let mut timeout = match self.rtt.srtt() {
            Some(srtt) => {
                let extra = if self.q.packets_out == 1 { self.params.rto_min.0 } else { 2 * self.params.jiffy.0 };
                2 * srtt.0 + extra
            }
            None => self.params.initial_rto.0,
        };
        let rto_delta = if advancing_rto { self.rtt.rto().0 as i64 } else { self.rto_delta(now) };
        if rto_delta > 0 {
            timeout = timeout.min(rto_delta as u64);
        }
        self.arm(now, SimDuration(timeout), Pending::LossProbe);
        true
    }

    /// `tcp_set_xmit_timer`.
    fn set_xmit_timer(&mut self, now: SimTime) {
        if !self.schedule_loss_probe(now, true) {
            self.rearm_rto(now);
        }
    }

    fn timeout(&mut self, now: SimTime) {
        if self.pace_wake.is_some_and(|t| t <= now) {
            self.pace_wake = None;
        }
        let Some((at, kind)) = self.timer else { return };
        if at > now {
            return;
        }
        self.timer = None;
        self.ops.report(now, Op::TimerExpired);
        self.sync_tp(now);
        match kind {
            Pending::Retransmit => self.retransmit_timer(now),
            Pending::Reorder => self.reorder_timeout(now),
            Pending::LossProbe => self.probe_due = true,
            Pending::WindowProbe => self.window_probe_due = true,
        }
    }

    /// `tcp_retransmit_timer`: enter Loss, resend the head, double the RTO.
    fn retransmit_timer(&mut self, now: SimTime) {
        if self.q.packets_out == 0 {
            return;
        }
        self.counters.timeouts += 1;
        self.enter_loss(now);
        self.rto_resend_due = true;
        self.rtt.on_timeout();
        self.arm(now, self.rtt.rto(), Pending::Retransmit);
    }

    /// `tcp_enter_loss`.
    fn enter_loss(&mut self, now: SimTime) {
        let new_recovery = self.tp.ca_state < LinuxCaState::Recovery;
        self.timeout_mark_lost(now);
        // Reduce ssthresh once per episode: not again for a timeout of the retransmission.
        if self.tp.ca_state <= LinuxCaState::Disorder
            || self.high_seq <= self.snd_una
            || (self.tp.ca_state == LinuxCaState::Loss && self.rtt.backoff() == 0)
        {
            self.prior_ssthresh = self.current_ssthresh();
            self.tp.prior_cwnd = self.tp.cwnd;
            self.tp.ssthresh = self.cc.ssthresh(&self.tp);
            self.cc.cwnd_event(&mut self.tp, CaEvent::Loss);
            self.init_undo();
        }
        self.tp.cwnd = self.in_flight() + 1;
        self.tp.cwnd_cnt = 0;
        self.cwnd_stamp = now;
        if self.tp.ca_state <= LinuxCaState::Disorder && self.sacked_out() >= self.params.reordering {
            self.reordering = self.reordering.min(self.params.reordering);
        }
        self.set_ca_state(LinuxCaState::Loss);
        self.high_seq = self.snd_nxt;
        self.tlp_high_seq = None;
        self.queue_cwr();
        // F-RTO (RFC 5682 §3.1 step 1) unless another recovery was under way, other than
        // this timeout's own repeats.
        self.frto = new_recovery || self.rtt.backoff() > 0;
        self.rexmit = Some(Rexmit::Lost);
    }

    /// `tcp_timeout_mark_lost`: the head and every packet RACK has given up on are lost; a
    /// SACKed head means the receiver reneged, and every SACK is forgotten.
    fn timeout_mark_lost(&mut self, now: SimTime) {
        let reneged = self.q.head().is_some_and(|h| h.sacked);
        if reneged {
            self.q.forget_sacks();
        } else if !self.is_sack() {
            self.reno_sacked = 0;
        }
        for i in 0..self.q.len() {
            let p = *self.q.get(i).expect("in range");
            if p.sacked {
                continue;
            }
            if i > 0 && !reneged && self.rack.remaining(now, p.sent_at, SimDuration(0)) > 0 {
                continue;
            }
            self.mark_lost(i);
        }
    }

    fn mark_lost(&mut self, i: usize) {
        let (newly, lost_retrans) = self.q.mark_lost(i);
        if newly {
            self.tp.lost += 1;
        }
        if lost_retrans {
            self.counters.lost_retransmits += 1;
        }
    }

    /// `tcp_rack_reo_timeout`.
    fn reorder_timeout(&mut self, now: SimTime) {
        let prior = self.in_flight();
        self.rack_detect_loss(now);
        if prior != self.in_flight() {
            if self.tp.ca_state != LinuxCaState::Recovery {
                self.enter_recovery(false);
                if !self.module_controls_cwnd() {
                    self.cwnd_reduction(1, 0, false);
                }
            }
            self.rexmit = Some(Rexmit::Lost);
        }
        if self.pending() != Some(Pending::Retransmit) {
            self.rearm_rto(now);
        }
    }

    /// The module sets cwnd itself (`cong_control`): no PRR, no restoring ssthresh.
    fn module_controls_cwnd(&self) -> bool {
        self.cc.controls_cwnd()
    }

    // ------------------------------------------------------------------------------------------
    // Input: acknowledgments (`tcp_ack`).

    fn ack(&mut self, now: SimTime, seg: &Segment) {
        let ack = seg.ack;
        if !self.stream.is_open() || ack > self.snd_nxt {
            return;
        }
        self.sync_tp(now);
        if seg.is_pure_ack() {
            let predicted = ack > self.snd_una && self.tp.ca_state == LinuxCaState::Open && seg.sack.is_empty();
            self.ops.report(now, if predicted { Op::FastPath } else { Op::SlowPath });
            if self.params.timestamps && seg.ts.is_some() {
                self.ops.report(now, Op::PawsCheck);
            }
        }
        self.ack_tsecr = if self.params.timestamps { seg.ts.map_or(0, |t| t.ecr) } else { 0 };
        let prior_snd_una = self.snd_una;
        let prior_packets = self.q.packets_out;
        let prior_in_flight = self.in_flight();
        let prior_delivered = self.delivery.delivered;
        let prior_lost = self.tp.lost;
        let prior_fack = self.q.highest_sack_seq(self.snd_una);
        let mut flag = AckFlags::default();
        let mut rs = RateScan::default();
        self.rexmit = None;

        // tcp_ack_update_window: an ACK that advances, or a larger (or zero) window.
        let window = seg.window as u64;
        // tcp_may_update_window: our peer sends no data, so only the ACK and the window count.
        if ack > self.snd_una || (ack == self.snd_una && (window > self.snd_wnd || window == 0)) {
            flag.win_update = true;
        }
        if ack >= self.snd_una {
            self.snd_wnd = window;
            self.stream.rwnd = window;
        }
        if self.params.ecn && seg.flags.contains(Flags::ECE) {
            flag.ece = true;
        }

        let mut tagged = Tagged::default();
        if self.is_sack() && !seg.sack.is_empty() {
            self.sacktag(now, seg, ack, prior_fack, &mut flag, &mut tagged, &mut rs);
        }

        if ack < prior_snd_una {
            // An old, reordered ACK: only its SACK information counts.
            if flag.data_sacked || flag.dsack {
                self.fastretrans_alert(now, prior_snd_una, 0, &mut flag);
                self.rate_gen(now, prior_delivered, prior_lost, &mut rs);
            }
            return;
        }

        if ack > self.snd_una {
            flag.snd_una_advanced = true;
        }
        self.snd_una = ack;
        let high_seq = self.high_seq;
        let sack = self.is_sack();
        let (tsecr, retrans_stamp, min_rtt) = (self.ack_tsecr, self.retrans_stamp, self.min_rtt.value);
        let delivery = &mut self.delivery;
        let rack = &mut self.rack;
        let cleaned = self.q.clean(ack, high_seq, |p| {
            // Without SACK the duplicate ACKs already counted these (`tcp_remove_reno_sacks`).
            delivery.delivered += u64::from(sack);
            delivery.on_delivered(p, &mut rs);
            // RACK learns from cumulatively acknowledged packets too, except a retransmission
            // the timestamp shows was acknowledged through its original (tcp_skb_spurious_retrans).
            let spurious = p.ever_retrans && retrans_stamp != 0 && tsecr != 0 && ts_before(tsecr, timestamp_ms(p.sent_at));
            if sack && !spurious {
                rack.advance(now, p.sent_at, p.end(), p.ever_retrans, min_rtt);
            }
        });
        if cleaned.packets > 0 {
            flag.data_acked = true;
            flag.set_xmit_timer = true;
            if cleaned.ctl && ack > self.stream.data_end() {
                self.stream.fin_acked = true;
            }
            if self.syn_sends > 0 && prior_snd_una == ISS {
                self.on_syn_acked(now);
            }
        }
        self.stream.on_cumulative_ack(ack, now);
        flag.retrans_data_acked = cleaned.retrans_acked;
        flag.orig_sack_acked |= cleaned.orig_below_high_seq || tagged.orig_below_high_seq;

        // RTT: the earliest clean cumulatively acked packet (Karn: not if any acked packet was
        // retransmitted), else the SACKed one, else the timestamp echo (tcp_ack_update_rtt).
        let mut seq_rtt = cleaned.first_clean.filter(|_| !cleaned.retrans_acked).map(|t| now - t);
        let mut ca_rtt = cleaned.last_clean.filter(|_| !cleaned.retrans_acked).map(|t| now - t);
        if let Some(t) = tagged.first_clean {
            if seq_rtt.is_none() {
                seq_rtt = Some(now - t);
            }
            ca_rtt = tagged.last_clean.map(|t| now - t);
        }
        if seq_rtt.is_none() && self.ack_tsecr != 0 && flag.data_acked {
            let ms = timestamp_ms(now).wrapping_sub(self.ack_tsecr).max(1) as u64;
            seq_rtt = Some(SimDuration::from_millis(ms));
            ca_rtt = seq_rtt;
        }
        if let Some(r) = seq_rtt {
            self.min_rtt.update(now, ca_rtt.unwrap_or(r));
            self.rtt.on_sample(r, self.snd_una, self.snd_nxt);
            self.counters.rtt_samples += 1;
        }
        if flag.data_acked {
            if !self.is_sack() {
                self.remove_reno_sacks(cleaned.packets);
                if flag.retrans_data_acked {
                    flag.orig_sack_acked = false;
                }
            } else if let Some(low) = cleaned.lowest_clean_seq {
                if low < prior_fack {
                    self.check_sack_reordering(low);
                }
            }
        }
        self.sync_tp(now);
        let sample = AckSample { pkts_acked: cleaned.packets, rtt: ca_rtt, in_flight: prior_in_flight };
        self.cc.pkts_acked(&mut self.tp, &sample);

        if let Some(p) = rs.prior_delivered {
            self.rack.update_reo_wnd(p, self.delivery.delivered);
        }
        if self.tlp_high_seq.is_some() {
            self.process_tlp_ack(now, ack, &flag);
        }

        if prior_packets == 0 {
            // Nothing was outstanding (`no_queue`): the ACK only carries news of D-SACKed data;
            // it is no duplicate ACK, and the window and rate machinery stand still.
            if flag.dsack {
                self.fastretrans_alert(now, prior_snd_una, 0, &mut flag);
            }
            return;
        }
        let dubious = !flag.not_dup() || flag.ca_alert() || self.tp.ca_state != LinuxCaState::Open;
        if dubious {
            let num_dupack = u32::from(!(flag.snd_una_advanced || flag.not_dup() || flag.dsack));
            if num_dupack > 0 {
                self.counters.dupacks_received += 1;
            }
            self.fastretrans_alert(now, prior_snd_una, num_dupack, &mut flag);
        }
        if flag.set_xmit_timer {
            self.set_xmit_timer(now);
        }
        if self.q.packets_out == 0 && matches!(self.pending(), Some(Pending::Retransmit | Pending::LossProbe | Pending::Reorder)) {
            self.timer = None;
            self.ops.report(now, Op::TimerSet);
        }
        let rate = self.rate_gen(now, prior_delivered, prior_lost, &mut rs);
        let mut rate = rate;
        rate.rtt = ca_rtt;
        rate.prior_in_flight = prior_in_flight;
        self.cong_control(now, &flag, &rate);
    }

    /// The SYN (or SYN-ACK) was acknowledged: the connection starts with the initial window
    /// (one packet if the SYN was sent more than twice, `tcp_init_transfer`).
    fn on_syn_acked(&mut self, now: SimTime) {
        self.tp.cwnd = if self.syn_sends > 2 { 1 } else { self.params.initial_window };
        self.tp.ssthresh = self.params.initial_ssthresh;
        self.tp.cwnd_cnt = 0;
        self.undo_marker = None;
        self.retrans_stamp = 0;
        self.set_ca_state(LinuxCaState::Open);
        self.rexmit = None;
        self.cwnd_stamp = now;
    }

    /// `tcp_sacktag_write_queue`: D-SACK check, then every block.
    #[allow(clippy::too_many_arguments)]
    fn sacktag(&mut self, now: SimTime, seg: &Segment, ack: u64, prior_fack: u64, flag: &mut AckFlags, tagged: &mut Tagged, rs: &mut RateScan) {
        let blocks = seg.sack.as_slice();
        for _ in blocks {
            self.ops.report(now, Op::SackBlockProcessed);
        }
        // RFC 2883 §4: the first block is a D-SACK when it lies below the cumulative ACK or
        // inside the second block.
        let (l0, r0) = blocks[0];
        let dsack = r0 <= ack || blocks.get(1).is_some_and(|&(l1, r1)| l0 >= l1 && r0 <= r1);
        if dsack {
            flag.dsack = true;
            self.rack.dsack_seen = true;
            // tcp_check_dsack and tcp_sacktag_one: each retransmission a D-SACK reports was
            // unnecessary. Below SND.UNA the packets are gone and are counted from the block's
            // length; above it, by the retransmitted packets the block covers.
            let smss = self.params.smss as u64;
            let dup = if r0 <= self.snd_una {
                (r0 - l0).div_ceil(smss) as i64
            } else {
                self.q.iter().filter(|p| p.seq >= l0 && p.seq + p.len as u64 <= r0 && p.ever_retrans).count() as i64
            };
            if self.undo_marker.is_some_and(|m| r0 > m) && self.undo_retrans > 0 {
                self.undo_retrans = (self.undo_retrans - dup).max(0);
            }
            if self.tlp_retrans && self.tlp_high_seq.is_some_and(|t| r0 <= t && r0 + smss >= t) {
                flag.dsack_tlp = true;
            }
        }
        let high_seq = self.high_seq;
        let delivery = &mut self.delivery;
        let rack = &mut self.rack;
        let min_rtt = self.min_rtt.value;
        let mut newly = Tagged::default();
        for (k, &(l, r)) in blocks.iter().enumerate() {
            if (k == 0 && dsack) || r <= ack {
                continue;
            }
            self.q.sack(
                l.max(ack),
                r,
                high_seq,
                prior_fack,
                |p| {
                    delivery.delivered += 1;
                    delivery.on_delivered(p, rs);
                    rack.advance(now, p.sent_at, p.end(), p.ever_retrans, min_rtt);
                },
                &mut newly,
            );
        }
        for _ in 0..newly.packets {
            self.ops.report(now, Op::ScoreboardUpdate);
        }
        if newly.packets > 0 {
            flag.data_sacked = true;
        }
        if let Some(low) = newly.reord {
            self.check_sack_reordering(low);
        }
        *tagged = newly;
    }


    // ------------------------------------------------------------------------------------------
    // The state machine (`tcp_fastretrans_alert`).

    fn fastretrans_alert(&mut self, now: SimTime, prior_snd_una: u64, num_dupack: u32, flag: &mut AckFlags) {
        if self.q.packets_out == 0 && !self.is_sack() {
            self.reno_sacked = 0;
        }
        if flag.ece {
            self.prior_ssthresh = 0; // an ECN reduction is never undone
        }
        // D. Leaving a state once high_seq is acknowledged.
        if self.tp.ca_state == LinuxCaState::Open {
            self.retrans_stamp = 0;
        } else if self.snd_una >= self.high_seq {
            match self.tp.ca_state {
                LinuxCaState::Cwr => {
                    // Hold CWR until something above high_seq is acknowledged (the CWR bit
                    // must have reached the receiver).
                    if self.snd_una != self.high_seq {
                        self.end_cwnd_reduction(now);
                        self.set_ca_state(LinuxCaState::Open);
                    }
                }
                LinuxCaState::Recovery => {
                    if !self.is_sack() {
                        self.reno_sacked = 0;
                    }
                    if self.try_undo_recovery(now) {
                        return;
                    }
                    self.end_cwnd_reduction(now);
                }
                _ => {}
            }
        }
        // E. Acting in the current state.
        match self.tp.ca_state {
            LinuxCaState::Recovery => {
                if !flag.snd_una_advanced {
                    if !self.is_sack() {
                        self.add_reno_sack(num_dupack);
                    }
                } else if self.try_undo_partial(now, prior_snd_una) {
                    return;
                }
                if self.try_undo_dsack(now) {
                    self.try_to_open(flag);
                }
                self.identify_packet_loss(now, flag);
                if self.tp.ca_state != LinuxCaState::Recovery {
                    // An undo reverted the recovery; loss evident since starts a new one.
                    if !self.time_to_recover() {
                        return;
                    }
                    self.enter_recovery(flag.ece);
                }
            }
            LinuxCaState::Loss => {
                if self.process_loss(now, flag, num_dupack) {
                    return;
                }
                self.identify_packet_loss(now, flag);
                if !(self.tp.ca_state == LinuxCaState::Open || flag.lost_retrans) {
                    return;
                }
                if !self.open_or_disorder_alert(now, flag, num_dupack) {
                    return;
                }
            }
            _ => {
                if !self.open_or_disorder_alert(now, flag, num_dupack) {
                    return;
                }
            }
        }
        self.rexmit = Some(Rexmit::Lost);
    }

    /// The default branch of `tcp_fastretrans_alert`: count duplicate ACKs, look for losses,
    /// and enter Recovery when one is found. Returns whether recovery was entered.
    fn open_or_disorder_alert(&mut self, now: SimTime, flag: &mut AckFlags, num_dupack: u32) -> bool {
        if !self.is_sack() {
            if flag.snd_una_advanced {
                self.reno_sacked = 0;
            }
            self.add_reno_sack(num_dupack);
        }
        if self.tp.ca_state <= LinuxCaState::Disorder {
            self.try_undo_dsack(now);
        }
        self.identify_packet_loss(now, flag);
        if !self.time_to_recover() {
            self.try_to_open(flag);
            return false;
        }
        self.enter_recovery(flag.ece);
        true
    }

    /// `tcp_time_to_recover`: a packet is known lost.
    fn time_to_recover(&self) -> bool {
        self.q.lost_out > 0
    }

    /// `tcp_identify_packet_loss`: NewReno's head marking without SACK, RACK with it.
    fn identify_packet_loss(&mut self, now: SimTime, flag: &mut AckFlags) {
        if self.q.is_empty() {
            return;
        }
        if !self.is_sack() {
            self.newreno_mark_lost(flag.snd_una_advanced);
        } else {
            let prior_retrans = self.q.retrans_out;
            if self.rack_mark_lost(now) {
                flag.set_xmit_timer = false;
            }
            if prior_retrans > self.q.retrans_out {
                flag.lost_retrans = true;
            }
        }
    }

    /// `tcp_newreno_mark_lost`: the head is lost once `reordering` duplicate ACKs arrived
    /// (outside Recovery), or on each partial ACK (in Recovery).
    fn newreno_mark_lost(&mut self, snd_una_advanced: bool) {
        let state = self.tp.ca_state;
        if (state < LinuxCaState::Recovery && self.reno_sacked >= self.reordering)
            || (state == LinuxCaState::Recovery && snd_una_advanced)
        {
            if self.q.head().is_some_and(|h| !h.lost) {
                self.mark_lost(0);
            }
        }
    }

    /// `tcp_rack_mark_lost`: scan when a delivery moved RACK; arm the reordering timer for
    /// packets not yet judged. Returns whether it was armed.
    fn rack_mark_lost(&mut self, now: SimTime) -> bool {
        if !self.rack.advanced {
            return false;
        }
        self.rack.advanced = false;
        let wait = self.rack_detect_loss(now);
        if let Some(wait) = wait {
            let after = SimDuration(wait.0 + 2 * self.params.jiffy.0);
            self.arm(now, after, Pending::Reorder);
            return true;
        }
        false
    }

    /// `tcp_rack_detect_loss`: mark lost every packet sent before RACK's that waited longer than
    /// RACK's RTT plus the reordering window; returns the longest wait of the others.
    fn rack_detect_loss(&mut self, now: SimTime) -> Option<SimDuration> {
        let Some(rack_ts) = self.rack.xmit_ts else { return None };
        let reo_wnd = self.rack.reo_wnd(
            self.reord_seen > 0,
            self.tp.ca_state >= LinuxCaState::Recovery,
            self.sacked_out(),
            self.reordering,
            self.min_rtt.value,
            self.rtt.srtt(),
        );
        let mut wait: Option<u64> = None;
        for i in 0..self.q.len() {
            let p = *self.q.get(i).expect("in range");
            if p.sacked || (p.lost && !p.retrans) {
                continue;
            }
            if !sent_after(rack_ts, p.sent_at, self.rack.end_seq, p.end()) {
                continue;
            }
            let remaining = self.rack.remaining(now, p.sent_at, reo_wnd);
            if remaining <= 0 {
                self.mark_lost(i);
            } else {
                wait = Some(wait.map_or(remaining as u64, |w| w.max(remaining as u64)));
            }
        }
        wait.map(SimDuration)
    }

    /// `tcp_check_sack_reordering`: an original transmission at `low` was delivered below the
    /// highest SACK: the path reorders at least that far.
    fn check_sack_reordering(&mut self, low: u64) {
        let fack = self.q.highest_sack_seq(self.snd_una);
        if low >= fack {
            return;
        }
        let mss = self.params.smss as u64;
        let metric = fack - low;
        if metric > self.reordering as u64 * mss {
            self.reordering = (metric.div_ceil(mss) as u32).min(MAX_REORDERING);
        }
        self.reord_seen += 1;
    }

    /// `tcp_add_reno_sack`: duplicate ACKs stand for packets that left the network.
    fn add_reno_sack(&mut self, num_dupack: u32) {
        if num_dupack == 0 {
            return;
        }
        let prior = self.reno_sacked;
        self.reno_sacked += num_dupack;
        self.check_reno_reordering(0);
        self.delivery.delivered += self.reno_sacked.saturating_sub(prior) as u64;
    }

    /// `tcp_remove_reno_sacks`: one acknowledged packet filled the hole; the others had been
    /// counted by duplicate ACKs.
    fn remove_reno_sacks(&mut self, acked: u32) {
        if acked > 0 {
            self.delivery.delivered += acked.saturating_sub(self.reno_sacked).max(1) as u64;
            self.reno_sacked = self.reno_sacked.saturating_sub(acked - 1);
        }
        self.check_reno_reordering(acked);
    }

    /// `tcp_check_reno_reordering` with `tcp_limit_reno_sacked`: more duplicate ACKs than
    /// packets out means reordering.
    fn check_reno_reordering(&mut self, addend: u32) {
        let holes = self.q.lost_out.max(1).min(self.q.packets_out);
        if self.reno_sacked + holes > self.q.packets_out {
            self.reno_sacked = self.q.packets_out.saturating_sub(holes);
            self.reordering = (self.q.packets_out + addend).min(MAX_REORDERING);
            self.reord_seen += 1;
        }
    }

    /// `tcp_current_ssthresh`.
    fn current_ssthresh(&self) -> u32 {
        if self.in_cwnd_reduction() {
            self.tp.ssthresh
        } else {
            self.tp.ssthresh.max((self.tp.cwnd >> 1) + (self.tp.cwnd >> 2))
        }
    }

    fn queue_cwr(&mut self) {
        if self.params.ecn {
            self.cwr_pending = true;
        }
    }

    /// `tcp_init_undo`.
    fn init_undo(&mut self) {
        self.undo_marker = Some(self.snd_una);
        self.undo_retrans = if self.q.retrans_out > 0 { self.q.retrans_out as i64 } else { -1 };
    }

    /// `tcp_init_cwnd_reduction`.
    fn init_cwnd_reduction(&mut self) {
        self.high_seq = self.snd_nxt;
        self.tlp_high_seq = None;
        self.tp.cwnd_cnt = 0;
        self.tp.prior_cwnd = self.tp.cwnd;
        self.prr_delivered = 0;
        self.prr_out = 0;
        self.tp.ssthresh = self.cc.ssthresh(&self.tp);
        self.queue_cwr();
    }

    /// `tcp_enter_recovery`.
    fn enter_recovery(&mut self, ece: bool) {
        // Start the clock with this fast retransmission (`tcp_retrans_stamp_cleanup`).
        if !self.any_retrans_done() {
            self.retrans_stamp = 0;
        }
        self.counters.fast_retransmits += 1;
        self.prior_ssthresh = 0;
        self.init_undo();
        if !self.in_cwnd_reduction() {
            if !ece {
                self.prior_ssthresh = self.current_ssthresh();
            }
            self.init_cwnd_reduction();
        }
        self.set_ca_state(LinuxCaState::Recovery);
    }

    /// `tcp_enter_cwr`: an ECN echo outside recovery.
    fn enter_cwr(&mut self) {
        self.prior_ssthresh = 0;
        if self.tp.ca_state < LinuxCaState::Cwr {
            self.undo_marker = None;
            self.init_cwnd_reduction();
            self.set_ca_state(LinuxCaState::Cwr);
            self.counters.ecn_reductions += 1;
        }
    }

    /// `tcp_end_cwnd_reduction`: settle at ssthresh (unless the module owns cwnd).
    fn end_cwnd_reduction(&mut self, now: SimTime) {
        if self.module_controls_cwnd() {
            return;
        }
        if self.tp.ssthresh < INFINITE_SSTHRESH && (self.tp.ca_state == LinuxCaState::Cwr || self.undo_marker.is_some()) {
            self.tp.cwnd = self.tp.ssthresh;
            self.cwnd_stamp = now;
        }
        self.cc.cwnd_event(&mut self.tp, CaEvent::CompleteCwr);
    }

    /// `tcp_try_keep_open`.
    fn try_keep_open(&mut self) {
        let state = if self.left_out() > 0 || self.any_retrans_done() { LinuxCaState::Disorder } else { LinuxCaState::Open };
        if self.tp.ca_state != state {
            self.set_ca_state(state);
            self.high_seq = self.snd_nxt;
        }
    }

    /// `tcp_try_to_open`.
    fn try_to_open(&mut self, flag: &AckFlags) {
        if !self.any_retrans_done() {
            self.retrans_stamp = 0;
        }
        if flag.ece {
            self.enter_cwr();
        }
        if self.tp.ca_state != LinuxCaState::Cwr {
            self.try_keep_open();
        }
    }

    fn tsecr_before(&self, when: u32) -> bool {
        self.ack_tsecr != 0 && ts_before(self.ack_tsecr, when)
    }

    /// `tcp_packet_delayed`: the ACK echoes a time before the first retransmission, so the
    /// original was delivered (Eifel, RFC 3522).
    fn packet_delayed(&self) -> bool {
        if self.retrans_stamp != 0 {
            return self.tsecr_before(self.retrans_stamp);
        }
        // No record of a retransmission: nothing was retransmitted (the SYN's own
        // retransmissions are forgotten once it is acknowledged), unless a connection without
        // SACK holds its state at high_seq, which forgets the record itself (the next ACK
        // would otherwise undo every such recovery, which the measured kernel does not).
        self.syn_acked() && (self.is_sack() || self.snd_una < self.high_seq)
    }

    /// `tcp_may_undo`: every retransmission proved unnecessary by D-SACKs, or the timestamps.
    fn may_undo(&self) -> bool {
        self.undo_marker.is_some() && (self.undo_retrans == 0 || self.packet_delayed())
    }

    /// `tcp_undo_cwnd_reduction`.
    fn undo_cwnd_reduction(&mut self, now: SimTime, unmark_loss: bool) {
        if unmark_loss {
            self.q.unmark_lost();
        }
        if self.prior_ssthresh > 0 {
            self.tp.cwnd = self.cc.undo_cwnd(&self.tp);
            if self.prior_ssthresh > self.tp.ssthresh {
                self.tp.ssthresh = self.prior_ssthresh;
                self.cwr_pending = false;
            }
        }
        self.cwnd_stamp = now;
        self.undo_marker = None;
        self.rack.advanced = true;
        self.counters.undos += 1;
    }

    /// `tcp_try_undo_recovery`: at the end of Recovery (or Loss).
    fn try_undo_recovery(&mut self, now: SimTime) -> bool {
        if self.may_undo() {
            self.undo_cwnd_reduction(now, false);
        } else {
            self.rack.reo_wnd_persist = self.rack.reo_wnd_persist.saturating_sub(1);
        }
        if self.non_sack_preventing_reopen() {
            return true;
        }
        self.set_ca_state(LinuxCaState::Open);
        false
    }

    /// `tcp_is_non_sack_preventing_reopen`: without SACK, hold the state until something above
    /// high_seq is acknowledged (RFC 6582's guard against false fast retransmits), forgetting
    /// the retransmission time once nothing retransmitted is out.
    fn non_sack_preventing_reopen(&mut self) -> bool {
        if self.snd_una == self.high_seq && !self.is_sack() {
            if !self.any_retrans_done() {
                self.retrans_stamp = 0;
            }
            return true;
        }
        false
    }

    /// `tcp_try_undo_dsack`.
    fn try_undo_dsack(&mut self, now: SimTime) -> bool {
        if self.undo_marker.is_some() && self.undo_retrans == 0 {
            self.rack.reo_wnd_persist = (self.rack.reo_wnd_persist + 1).min(super::rack::RECOVERY_THRESH);
            self.undo_cwnd_reduction(now, false);
            return true;
        }
        false
    }

    /// `tcp_try_undo_partial`: a partial ACK for data the timestamps show was not
    /// retransmitted: reordering, not loss. Returns whether the ACK needs nothing more (a
    /// retransmission is still out); after an undo the ACK is processed on from the state the
    /// undo left, which may start a new recovery.
    fn try_undo_partial(&mut self, now: SimTime, prior_snd_una: u64) -> bool {
        if self.undo_marker.is_some() && self.packet_delayed() {
            self.check_sack_reordering(prior_snd_una);
            if self.q.retrans_out > 0 {
                return true;
            }
            if !self.any_retrans_done() {
                self.retrans_stamp = 0;
            }
            self.undo_cwnd_reduction(now, true);
            self.try_keep_open();
        }
        false
    }

    /// `tcp_try_undo_loss`.
    fn try_undo_loss(&mut self, now: SimTime, frto_undo: bool) -> bool {
        if frto_undo || self.may_undo() {
            self.undo_cwnd_reduction(now, true);
            if frto_undo {
                self.counters.spurious_timeouts += 1;
            }
            if self.non_sack_preventing_reopen() {
                return true;
            }
            if frto_undo || self.is_sack() {
                self.set_ca_state(LinuxCaState::Open);
            }
            return true;
        }
        false
    }

    /// `tcp_process_loss` with F-RTO (RFC 5682 §3.1, SACK-enhanced). Returns whether the ACK
    /// needs nothing more.
    fn process_loss(&mut self, now: SimTime, flag: &AckFlags, num_dupack: u32) -> bool {
        let recovered = self.snd_una >= self.high_seq;
        if flag.snd_una_advanced && self.try_undo_loss(now, false) {
            return true;
        }
        if self.frto {
            // Step 3.b: never-retransmitted data was delivered: the timeout was spurious.
            if flag.orig_sack_acked && self.try_undo_loss(now, true) {
                return true;
            }
            if self.snd_nxt > self.high_seq {
                if flag.data_sacked || num_dupack > 0 {
                    self.frto = false; // step 3.a: the loss was real
                }
            } else if flag.snd_una_advanced && !recovered {
                self.high_seq = self.snd_nxt;
                // Step 2.b: send new data, if any may go, before retransmitting more.
                if self.stream.has_unsent(self.snd_nxt, self.snd_nxt) && self.snd_una + self.snd_wnd > self.snd_nxt {
                    self.rexmit = Some(Rexmit::New);
                    return true;
                }
                self.frto = false;
            }
        }
        if recovered {
            // Step 2.a and the first part of 3.a.
            self.try_undo_recovery(now);
            return true;
        }
        if !self.is_sack() {
            if self.snd_nxt > self.high_seq && num_dupack > 0 {
                self.add_reno_sack(num_dupack);
            } else if flag.snd_una_advanced {
                self.reno_sacked = 0;
            }
        }
        self.rexmit = Some(Rexmit::Lost);
        false
    }

    /// `tcp_process_tlp_ack`: was the probed tail lost?
    fn process_tlp_ack(&mut self, now: SimTime, ack: u64, flag: &AckFlags) {
        let Some(high) = self.tlp_high_seq else { return };
        if ack < high {
            return;
        }
        if !self.tlp_retrans || flag.dsack_tlp {
            self.tlp_high_seq = None;
        } else if ack > high {
            // The probe repaired a loss: reduce once, as for a loss, without retransmitting.
            self.init_cwnd_reduction();
            self.set_ca_state(LinuxCaState::Cwr);
            self.end_cwnd_reduction(now);
            self.try_keep_open();
            self.counters.loss_probe_recoveries += 1;
        } else if !(flag.snd_una_advanced || flag.not_dup() || flag.data_sacked) {
            self.tlp_high_seq = None; // a pure duplicate: both copies arrived
        }
    }

    // ------------------------------------------------------------------------------------------
    // Window: PRR, growth, rate samples.

    /// `tcp_cwnd_reduction`: Proportional Rate Reduction (RFC 6937) with the slow-start
    /// reduction bound.
    fn cwnd_reduction(&mut self, newly_acked_sacked: u32, newly_lost: u32, snd_una_advanced: bool) {
        if newly_acked_sacked == 0 || self.tp.prior_cwnd == 0 {
            return;
        }
        self.prr_delivered += newly_acked_sacked;
        let in_flight = self.in_flight() as i64;
        let ssthresh = self.tp.ssthresh as i64;
        let delta = ssthresh - in_flight;
        let mut sndcnt: i64 = if delta < 0 {
            let dividend = ssthresh as u64 * self.prr_delivered as u64 + self.tp.prior_cwnd as u64 - 1;
            (dividend / self.tp.prior_cwnd as u64) as i64 - self.prr_out as i64
        } else {
            let mut n = (self.prr_delivered as i64 - self.prr_out as i64).max(newly_acked_sacked as i64);
            if snd_una_advanced && newly_lost == 0 {
                n += 1;
            }
            n.min(delta)
        };
        // Enter recovery with at least the fast retransmission.
        sndcnt = sndcnt.max(if self.prr_out > 0 { 0 } else { 1 });
        self.tp.cwnd = (in_flight + sndcnt).max(0) as u32;
    }

    /// `tcp_cong_control`, then `tcp_update_pacing_rate`.
    fn cong_control(&mut self, now: SimTime, flag: &AckFlags, rs: &RateSample) {
        self.sync_tp(now);
        if self.cc.cong_control(&mut self.tp, rs) {
            // A module may declare the sending application-limited (BBR's PROBE_RTT).
            if self.tp.app_limited && self.delivery.app_limited_until == 0 {
                self.delivery.app_limited_until = (self.delivery.delivered + self.in_flight() as u64).max(1);
            }
            return;
        }
        if self.in_cwnd_reduction() {
            self.cwnd_reduction(rs.acked_sacked, rs.losses, flag.snd_una_advanced);
        } else if self.may_raise_cwnd(flag) {
            self.sync_tp(now);
            self.cc.cong_avoid(&mut self.tp, rs.acked_sacked);
        }
        self.update_pacing_rate();
    }

    /// `tcp_may_raise_cwnd`.
    fn may_raise_cwnd(&self, flag: &AckFlags) -> bool {
        if self.reordering > self.params.reordering {
            flag.forward_progress()
        } else {
            flag.data_acked
        }
    }

    /// `tcp_update_pacing_rate`: 200 % of cwnd per SRTT in slow start, 120 % after.
    fn update_pacing_rate(&mut self) {
        let Some(srtt) = self.rtt.srtt() else { return };
        let ratio: u64 = if self.tp.cwnd < self.tp.ssthresh / 2 { 200 } else { 120 };
        let window = self.tp.cwnd.max(self.q.packets_out) as u64 * self.params.smss as u64;
        self.tp.pacing_rate = window * ratio * 1_000_000_000 / 100 / srtt.0.max(1);
    }

    /// `tcp_rate_gen`.
    fn rate_gen(&mut self, now: SimTime, prior_delivered: u64, prior_lost: u64, rs: &mut RateScan) -> RateSample {
        let d = &mut self.delivery;
        if d.app_limited_until != 0 && d.delivered > d.app_limited_until {
            d.app_limited_until = 0;
        }
        let acked_sacked = (d.delivered - prior_delivered) as u32;
        if acked_sacked > 0 {
            d.delivered_at = now;
        }
        let mut out = RateSample {
            acked_sacked,
            losses: (self.tp.lost - prior_lost) as u32,
            app_limited: rs.app_limited,
            ..RateSample::default()
        };
        let (Some(prior), Some(prior_at)) = (rs.prior_delivered, rs.prior_at) else { return out };
        out.prior_delivered = prior;
        out.delivered = d.delivered - prior;
        let interval = rs.interval.max(now - prior_at);
        if self.min_rtt.value.is_none_or(|m| interval >= m) {
            out.interval = Some(interval);
        }
        out
    }

    // ------------------------------------------------------------------------------------------
    // Output (`tcp_write_xmit`, `tcp_xmit_retransmit_queue`, `tcp_send_loss_probe`).

    fn tx_state(&mut self, now: SimTime) -> TxState {
        if self.q.packets_out == 0 {
            self.delivery.first_tx = now;
            self.delivery.delivered_at = now;
        }
        TxState {
            delivered: self.delivery.delivered,
            delivered_at: Some(self.delivery.delivered_at),
            first_tx: self.delivery.first_tx,
            app_limited: self.delivery.app_limited_until != 0,
        }
    }

    fn pacing(&self) -> bool {
        self.params.pacing || self.cc.needs_pacing()
    }

    /// `tcp_tso_segs` / `tcp_tso_autosize`: segments per burst, about a millisecond of the pacing
    /// rate (`sk_pacing_shift` = 10), at least the module's minimum, at most a 64 KB packet.
    fn tso_segs(&self) -> u32 {
        let smss = self.params.smss.max(1) as u64;
        let by_rate = (self.tp.pacing_rate >> 10) / smss;
        let most = (65_536 / smss).max(1);
        (by_rate.min(most) as u32).max(self.cc.min_tso_segs(self.tp.pacing_rate))
    }

    /// The pacer holds the next packet until `pace_at` (when the module asks for pacing, or
    /// pacing is on).
    fn paced(&self, now: SimTime) -> bool {
        self.pacing() && self.pace_at > now
    }

    fn after_send(&mut self, now: SimTime, len: u32, new_data: bool) {
        if len > 0 {
            self.data_segs_out += 1;
        }
        if self.pacing() && self.tp.pacing_rate > 0 && self.data_segs_out > 10 {
            // `tcp_update_skb_after_send` spaces by the segment's payload (the headers are the
            // clone's), at least a byte for a bare SYN or FIN, and leaves the first ten data
            // packets unspaced (as sch_fq does). Time the pacer stood idle before this packet
            // is credit that shortens the next gap by up to half. New data leaves in bursts of
            // `tso_segs` (one TSO packet, spaced as a whole); a retransmission on its own.
            let bytes = len.max(1) as u64;
            let mut ns = bytes * 1_000_000_000 / self.tp.pacing_rate;
            let idle = now.0.saturating_sub(self.pace_at.0);
            let credit = if !new_data {
                self.burst = None;
                idle
            } else {
                let burst = match self.burst {
                    Some(b) if b.at == now && b.left > 0 => Burst { left: b.left - 1, ..b },
                    _ => Burst { at: now, left: self.tso_segs().saturating_sub(1), credit: idle },
                };
                self.burst = Some(burst);
                burst.credit
            };
            let taken = (ns / 2).min(credit);
            ns -= taken;
            if let Some(b) = self.burst.as_mut().filter(|_| new_data) {
                b.credit -= taken;
            }
            self.pace_at = self.pace_at.max(now) + SimDuration(ns);
        }
        if self.in_cwnd_reduction() {
            self.prr_out += 1;
        }
    }

    fn poll(&mut self, now: SimTime) -> Option<OutSegment> {
        if !self.stream.is_open() {
            return None;
        }
        if self.probe_due {
            self.probe_due = false;
            if let Some(out) = self.send_loss_probe(now) {
                return Some(out);
            }
        }
        if self.window_probe_due {
            self.window_probe_due = false;
            if self.window_blocked() {
                self.counters.window_probes += 1;
                self.window_probes_unanswered += 1;
                self.account_sent(1, now);
                let backoff = self.rtt.rto().0.saturating_mul(1 << self.window_probes_unanswered.min(16));
                self.arm(now, SimDuration(backoff.min(self.params.rto_max.0)), Pending::WindowProbe);
                let seq = self.snd_una - 1;
                return Some(OutSegment { seq, len: 1, syn: false, fin: false, retransmission: false, ect: false, cwr: false, first_sent: now });
            }
        }
        if self.rto_resend_due {
            self.rto_resend_due = false;
            if let Some(out) = self.retransmit_lost(now) {
                return Some(out);
            }
        }
        if self.paced(now) {
            // The rest of the burst the last new packet opened leaves with it.
            if self.burst.is_some_and(|b| b.at == now && b.left > 0) && self.rexmit != Some(Rexmit::New) {
                if let Some(out) = self.send_new_data(now) {
                    return Some(out);
                }
            }
            self.pace_wake = Some(self.pace_at);
            return None;
        }
        if self.rexmit == Some(Rexmit::New) {
            // F-RTO step 2b (`tcp_xmit_recovery` with REXMIT_NEW): this ACK sends new data
            // only; if none could go, the loss is taken as real and retransmission resumes.
            if let Some(out) = self.send_new_data(now) {
                return Some(out);
            }
            if self.snd_nxt > self.high_seq {
                return None;
            }
            self.rexmit = None;
            self.frto = false;
        }
        if let Some(out) = self.retransmit_lost(now) {
            return Some(out);
        }
        self.send_new_data(now)
    }

    /// One packet of `tcp_xmit_retransmit_queue`: the first lost packet not retransmitted since,
    /// while the window has room.
    fn retransmit_lost(&mut self, now: SimTime) -> Option<OutSegment> {
        if self.q.retrans_out >= self.q.lost_out || self.in_flight() >= self.tp.cwnd {
            return None;
        }
        let i = self.q.iter().position(|p| p.lost && !p.retrans && !p.sacked)?;
        let out = self.retransmit(i, now, true);
        if i == 0 && self.pending() != Some(Pending::Reorder) {
            self.arm(now, self.rtt.rto(), Pending::Retransmit);
        }
        Some(out)
    }

    /// New data within the congestion and receive windows.
    fn send_new_data(&mut self, now: SimTime) -> Option<OutSegment> {
        if !self.stream.has_unsent(self.snd_nxt, self.snd_nxt) {
            self.check_app_limited();
            self.cwnd_validate(now, false);
            return None;
        }
        if self.snd_nxt == ISS {
            return Some(self.send_new(now));
        }
        if !self.syn_acked() {
            return None;
        }
        let (len, _) = self.stream.next_segment(self.snd_nxt, self.params.smss as u64);
        if self.snd_nxt + len as u64 > self.stream.send_edge(self.snd_una) && len > 0 {
            if self.q.packets_out == 0 && self.timer.is_none() {
                // Nothing outstanding: no ACK will open the window; probe it (`tcp_probe_timer`).
                self.window_probes_unanswered = 0;
                self.arm(now, self.rtt.rto(), Pending::WindowProbe);
            }
            self.cwnd_validate(now, false);
            return None;
        }
        if self.in_flight() >= self.tp.cwnd {
            self.cwnd_validate(now, true);
            return None;
        }
        Some(self.send_new(now))
    }

    /// `tcp_send_loss_probe`: new data if the window allows, else the last packet again.
    fn send_loss_probe(&mut self, now: SimTime) -> Option<OutSegment> {
        if self.tlp_high_seq.is_some() || self.q.is_empty() {
            self.rearm_rto(now);
            return None;
        }
        self.tlp_retrans = false;
        let out = if self.stream.has_unsent(self.snd_nxt, self.snd_nxt)
            && self.snd_nxt + self.stream.next_segment(self.snd_nxt, self.params.smss as u64).0 as u64 <= self.stream.send_edge(self.snd_una)
        {
            self.send_new(now)
        } else {
            self.tlp_retrans = true;
            let i = self.q.len() - 1;
            self.retransmit(i, now, false)
        };
        self.tlp_high_seq = Some(self.snd_nxt);
        self.counters.loss_probes += 1;
        self.timer = None;
        self.rearm_rto(now);
        Some(out)
    }

    /// Nothing outstanding and the peer's window keeps the next packet back.
    fn window_blocked(&self) -> bool {
        if self.q.packets_out > 0 || !self.syn_acked() || !self.stream.has_unsent(self.snd_nxt, self.snd_nxt) {
            return false;
        }
        let (len, _) = self.stream.next_segment(self.snd_nxt, self.params.smss as u64);
        len > 0 && self.snd_nxt + len as u64 > self.stream.send_edge(self.snd_una)
    }

    /// `tcp_rate_check_app_limited`: the application has nothing to send while the window has
    /// room and every lost packet was resent.
    fn check_app_limited(&mut self) {
        if self.in_flight() < self.tp.cwnd && self.q.lost_out <= self.q.retrans_out {
            self.delivery.app_limited_until = (self.delivery.delivered + self.in_flight() as u64).max(1);
        }
    }

    /// `tcp_cwnd_validate`: track whether the window limits the sending (RFC 7661's idea), and
    /// shrink a window the application has not used for an RTO (`tcp_cwnd_application_limited`).
    fn cwnd_validate(&mut self, now: SimTime, is_cwnd_limited: bool) {
        if self.snd_una >= self.cwnd_usage_seqno || is_cwnd_limited || (!self.is_cwnd_limited && self.q.packets_out > self.max_packets_out) {
            self.is_cwnd_limited = is_cwnd_limited;
            self.max_packets_out = self.q.packets_out;
            self.cwnd_usage_seqno = self.snd_nxt;
        }
        let limited = if self.tp.in_slow_start() { self.tp.cwnd < 2 * self.max_packets_out } else { self.is_cwnd_limited };
        if limited {
            self.cwnd_used = 0;
            self.cwnd_stamp = now;
        } else {
            self.cwnd_used = self.cwnd_used.max(self.q.packets_out);
            if self.params.slow_start_after_idle && now - self.cwnd_stamp >= self.rtt.rto() && !self.module_controls_cwnd() && self.syn_acked() {
                if self.tp.ca_state == LinuxCaState::Open {
                    let used = self.cwnd_used.max(self.params.initial_window);
                    if used < self.tp.cwnd {
                        self.tp.ssthresh = self.current_ssthresh();
                        self.tp.cwnd = (self.tp.cwnd + used) >> 1;
                    }
                    self.cwnd_used = 0;
                }
                self.cwnd_stamp = now;
            }
        }
    }

    fn send_new(&mut self, now: SimTime) -> OutSegment {
        let seq = self.snd_nxt;
        let syn = seq == ISS;
        let (len, fin) = if syn { (0, false) } else { self.stream.next_segment(seq, self.params.smss as u64) };
        if self.q.packets_out == 0 && self.syn_acked() {
            self.restart_after_idle(now);
            self.sync_tp(now);
            self.cc.cwnd_event(&mut self.tp, CaEvent::TxStart);
        }
        let tx = self.tx_state(now);
        let prior_packets = self.q.packets_out;
        self.q.push(seq, len, fin || syn, now, tx);
        self.snd_nxt = seq + len as u64 + (fin || syn) as u64;
        if syn {
            self.syn_sends += 1;
        }
        self.last_send = now;
        self.account_sent(len, now);
        if prior_packets == 0 || self.pending() == Some(Pending::LossProbe) || self.pending() == Some(Pending::WindowProbe) {
            self.rearm_rto(now);
        }
        self.schedule_loss_probe(now, false);
        self.after_send(now, len, true);
        let ect = self.params.ecn && len > 0;
        let cwr = ect && std::mem::take(&mut self.cwr_pending);
        OutSegment { seq, len, syn, fin, retransmission: false, ect, cwr, first_sent: now }
    }

    /// `tcp_slow_start_after_idle_check` / `tcp_cwnd_restart`: after an idle RTO, halve cwnd
    /// per RTO idle, down to the restart window.
    fn restart_after_idle(&mut self, now: SimTime) {
        if !self.params.slow_start_after_idle || self.module_controls_cwnd() {
            return;
        }
        let idle = now - self.last_send;
        let rto = self.rtt.rto();
        if idle <= rto {
            return;
        }
        self.sync_tp(now);
        self.cc.cwnd_event(&mut self.tp, CaEvent::CwndRestart);
        self.tp.ssthresh = self.current_ssthresh();
        let restart = self.params.initial_window.min(self.tp.cwnd);
        let mut cwnd = self.tp.cwnd;
        let mut left = idle.0 as i64 - rto.0 as i64;
        while left > 0 && cwnd > restart {
            cwnd >>= 1;
            left -= rto.0 as i64;
        }
        self.tp.cwnd = cwnd.max(restart);
        self.cwnd_stamp = now;
        self.cwnd_used = 0;
    }

    /// Resend the entry at `i`. `counted`: by the retransmission queue or the timer
    /// (`tcp_retransmit_skb`); a loss probe's copy is not (`__tcp_retransmit_skb`).
    fn retransmit(&mut self, i: usize, now: SimTime, counted: bool) -> OutSegment {
        let tx = self.tx_state(now);
        self.q.retransmitted(i, now, tx, counted);
        let p = *self.q.get(i).expect("index from the queue");
        if counted {
            if self.retrans_stamp == 0 {
                self.retrans_stamp = timestamp_ms(now);
            }
            if self.undo_retrans < 0 {
                self.undo_retrans = 0;
            }
            self.undo_retrans += 1;
        }
        if p.seq == ISS {
            self.syn_sends += 1;
        }
        self.counters.retransmissions += 1;
        self.account_sent(p.len, now);
        self.after_send(now, p.len, false);
        let syn = p.seq == ISS;
        OutSegment { seq: p.seq, len: p.len, syn, fin: p.ctl && !syn, retransmission: true, ect: false, cwr: false, first_sent: p.first_sent }
    }

    fn account_sent(&mut self, len: u32, now: SimTime) {
        self.counters.count_sent(len, now, &mut self.ops);
    }
}

/// Whether TCP timestamp `a` is before `b` (modulo 2^32, RFC 7323 §5.2).
fn ts_before(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

impl SendHalf for LinuxSender {
    fn stream(&self) -> &SendStream {
        &self.stream
    }
    fn stream_mut(&mut self) -> &mut SendStream {
        &mut self.stream
    }
    fn ops(&mut self) -> &mut OpLog {
        &mut self.ops
    }
    fn on_ack(&mut self, now: SimTime, seg: &Segment) {
        self.ack(now, seg);
        if seg.window > 0 {
            self.window_probes_unanswered = 0;
            if self.pending() == Some(Pending::WindowProbe) && !self.window_blocked() {
                self.timer = None;
            }
        }
    }
    fn on_timeout(&mut self, now: SimTime) {
        self.timeout(now)
    }
    fn poll_segment(&mut self, now: SimTime) -> Option<OutSegment> {
        self.poll(now)
    }
    fn deadline(&self) -> Option<SimTime> {
        let timer = self.timer.map(|(t, _)| t);
        match (timer, self.pace_wake) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
    fn in_flight(&self) -> u64 {
        self.in_flight() as u64 * self.params.smss as u64
    }
    fn rto(&self) -> SimDuration {
        self.rtt.rto()
    }
    fn state(&self) -> SenderState {
        let smss = self.params.smss as u64;
        let ca_state = match self.tp.ca_state {
            LinuxCaState::Open => CaState::Open,
            LinuxCaState::Disorder => CaState::Disorder,
            LinuxCaState::Cwr => CaState::Cwr,
            LinuxCaState::Recovery => CaState::Recovery,
            LinuxCaState::Loss => CaState::Loss,
        };
        SenderState {
            cwnd: self.tp.cwnd as u64 * smss,
            ssthresh: if self.tp.ssthresh >= INFINITE_SSTHRESH { u64::MAX / 4 } else { self.tp.ssthresh as u64 * smss },
            ca_state,
            snd_una: self.snd_una,
            snd_nxt: self.snd_nxt,
            snd_max: self.snd_nxt,
        }
    }
    fn counters(&self) -> &SenderCounters {
        &self.counters
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::linux::cc::AnyLinuxCc;
    use crate::tcp::segment::Flags;

    fn paced_sender() -> LinuxSender {
        let params = LinuxParams {
            smss: 1448,
            initial_window: 10,
            initial_ssthresh: INFINITE_SSTHRESH,
            sack: false,
            timestamps: false,
            ecn: false,
            initial_rto: SimDuration::from_millis(1_000),
            rto_min: SimDuration::from_millis(200),
            rto_max: SimDuration::from_millis(120_000),
            jiffy: SimDuration::from_millis(4),
            reordering: 3,
            cwnd_clamp: INFINITE_SSTHRESH,
            send_buffer: u64::MAX,
            slow_start_after_idle: true,
            pacing: true,
        };
        let mut s = LinuxSender::new(params, AnyLinuxCc::Reno(Default::default()), 100_000);
        s.stream.open(1448);
        s
    }

    #[test]
    fn the_timeout_resends_the_head_even_while_the_pacer_holds_packets_tcp_retransmit_timer() {
        let mut s = paced_sender();
        let syn = s.poll(SimTime::ZERO).expect("the SYN");
        assert!(syn.syn);
        let t = SimTime(40_000_000);
        s.on_ack(t, &Segment::new(ISS + 1, ISS + 1, 0, Flags::default().with(Flags::ACK), 1 << 20));
        while s.poll(t).is_some() {}
        assert!(s.q.packets_out > 0);
        // The pacer holds the next packet ten seconds away (a rate collapsed to almost nothing).
        s.pace_at = t + SimDuration::from_millis(10_000);
        let (at, kind) = s.timer.expect("the retransmission timer");
        assert_eq!(kind, Pending::Retransmit);
        s.timeout(at);
        let out = s.poll(at).expect("the timeout's resend leaves at once");
        assert_eq!((out.seq, out.retransmission), (ISS + 1, true));
        assert!(s.poll(at).is_none(), "the rest of the go-back-N waits for the pacer");
    }

    #[test]
    fn idle_time_before_a_packet_shortens_the_next_pacing_gap_by_up_to_half_tcp_update_skb_after_send() {
        let mut s = paced_sender();
        s.tp.pacing_rate = 1_448_000; // one 1448-byte packet per millisecond
        s.data_segs_out = 20;
        let now = SimTime(1_000_000_000);
        // The pacer was due 5 ms ago: the credit halves the 1 ms gap.
        s.pace_at = SimTime(now.0 - 5_000_000);
        s.after_send(now, 1448, false);
        assert_eq!(s.pace_at, now + SimDuration(500_000));
        // Back to back (the pacer's time is now or later): the full gap.
        s.after_send(s.pace_at, 1448, false);
        assert_eq!(s.pace_at, now + SimDuration(1_500_000));
        // 0.2 ms of idle time takes 0.2 ms off the gap.
        let later = s.pace_at + SimDuration(200_000);
        s.after_send(later, 1448, false);
        assert_eq!(s.pace_at, later + SimDuration(800_000));
    }

    #[test]
    fn a_burst_carries_about_a_millisecond_of_the_pacing_rate_tcp_tso_autosize() {
        let mut s = paced_sender();
        s.tp.pacing_rate = 1_000_000; // under a segment per millisecond: the minimum, 2
        assert_eq!(s.tso_segs(), 2);
        s.tp.pacing_rate = 12_500_000; // 100 Mbit/s: 12 207 bytes per 1/1024 s, 8 segments
        assert_eq!(s.tso_segs(), 8);
        s.tp.pacing_rate = 10_000_000_000; // at most a 64 KB packet
        assert_eq!(s.tso_segs(), 45);
    }
}
