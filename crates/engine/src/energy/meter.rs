//! The per-node energy meter. During the run it only records when the radio transmits and receives
//! (the CPU meter records busy intervals); at the end it lays out the radio's state over the
//! measurement window under the power-management policy and integrates power over time:
//!
//! ```text
//! E      = P_base*W + sum over radio states s of P_s*t_s + E_transitions + E_cpu
//! E_idle = energy drawn while the whole node is idle (no tx/rx, CPU not busy)
//! E_I    = E - E_idle                     (seed 000 §2; seed 002 §3)
//! ```

use super::battery::Battery;
use super::cpu::{Charge, CpuMeter};
use super::profile::{DeviceProfile, Radio};
use super::rrc::RrcTiming;
use crate::config::RadioPolicy;
use crate::units::{SimDuration, SimTime};
use serde::Serialize;

/// Radio states, in precedence order when activities overlap (tx wins over rx).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RadioState {
    Tx,
    Rx,
    Idle,
    Sleep,
    Waking,
}

impl RadioState {
    pub fn name(self) -> &'static str {
        match self {
            RadioState::Tx => "tx",
            RadioState::Rx => "rx",
            RadioState::Idle => "idle",
            RadioState::Sleep => "sleep",
            RadioState::Waking => "waking",
        }
    }
}

/// What the radio did during the run: transmit intervals (in start order, since one link starts
/// one frame at a time; a frame whose airtime outlasts the next frame's start merges with it) and
/// receive intervals (any order), and the start and IP size of every frame for the frame counts.
#[derive(Debug, Clone, Default)]
pub struct RadioLog {
    tx: Vec<(u64, u64)>,
    rx: Vec<(u64, u64)>,
    tx_frames: FrameLog,
    rx_frames: FrameLog,
    /// Parts of the activity above that a shared channel attributes to one cause, indexed by
    /// `Mark` (docs/models/wifi.md "Energy per frame"): they split the tx and rx energy, never add.
    marks: [Vec<(u64, u64)>; MARKS],
    /// When an 802.11 station in power-save mode dozed, in time order (the last may still be
    /// open: `u64::MAX`); used by the `psm` policy only (docs/models/wifi.md "Power save").
    doze: Vec<(u64, u64)>,
    /// When a cellular radio was held connected while its data waited for the link (any
    /// order); used by an RRC machine only (docs/models/cellular.md "What it does to packets").
    holds: Vec<(u64, u64)>,
}

/// Causes of radio activity on a shared channel that the breakdown reports apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// Transmitting RTS, CTS or MAC ACK frames.
    ControlTx,
    /// Receiving RTS, CTS or MAC ACK frames addressed to this station.
    ControlRx,
    /// Transmitting a data frame again (MAC retransmission).
    RetryTx,
    /// Receiving a retransmitted data frame addressed to this station.
    RetryRx,
    /// Receiving frames addressed to other stations.
    Overhear,
}
const MARKS: usize = 5;

/// Frames a radio sent and heard within the measurement window (those whose airtime began before
/// its end), with their IP bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FrameCounts {
    pub tx_frames: u64,
    pub tx_bytes: u64,
    pub rx_frames: u64,
    pub rx_bytes: u64,
}

/// The start and IP size of every frame in one direction, with running totals: while the frames
/// are logged in start order, counting those begun before a time only looks at the few after it.
#[derive(Debug, Clone, Default)]
struct FrameLog {
    frames: Vec<(u64, u32)>,
    bytes: u64,
    out_of_order: bool,
}

impl FrameLog {
    fn with_capacity(frames: usize) -> Self {
        Self { frames: Vec::with_capacity(frames), ..Default::default() }
    }

    #[inline]
    fn push(&mut self, start: u64, ip_len: u32) {
        self.out_of_order |= self.frames.last().is_some_and(|f| f.0 > start);
        self.frames.push((start, ip_len));
        self.bytes += ip_len as u64;
    }

    /// Frames begun before `w` and their IP bytes.
    fn before(&self, w: u64) -> (u64, u64) {
        if self.out_of_order {
            return self.frames.iter().filter(|f| f.0 < w).fold((0, 0), |(n, b), f| (n + 1, b + f.1 as u64));
        }
        let (mut n, mut bytes) = (self.frames.len() as u64, self.bytes);
        for f in self.frames.iter().rev().take_while(|f| f.0 >= w) {
            n -= 1;
            bytes -= f.1 as u64;
        }
        (n, bytes)
    }
}

impl RadioLog {
    /// A log with room for about `packets` transmissions and receptions.
    pub fn with_capacity(packets: usize) -> Self {
        Self {
            tx: Vec::with_capacity(packets),
            rx: Vec::with_capacity(packets),
            tx_frames: FrameLog::with_capacity(packets),
            rx_frames: FrameLog::with_capacity(packets),
            marks: Default::default(),
            doze: Vec::new(),
            holds: Vec::new(),
        }
    }

    /// The radio is held connected, neither sending nor receiving, during `[start, end)`: its
    /// data waits for the link (an RRC machine only).
    pub fn hold(&mut self, start: SimTime, end: SimTime) {
        if start < end {
            self.holds.push((start.0, end.0));
        }
    }

    /// The radio dozes from `at` (802.11 power save) until [`RadioLog::wake`].
    pub fn doze(&mut self, at: SimTime) {
        if self.doze.last().map_or(true, |d| d.1 != u64::MAX) {
            self.doze.push((at.0, u64::MAX));
        }
    }

    /// The dozing radio is awake again from `at`.
    pub fn wake(&mut self, at: SimTime) {
        if let Some(d) = self.doze.last_mut().filter(|d| d.1 == u64::MAX) {
            d.1 = at.0;
        }
    }

    /// The radio is in tx during `[start, end)` (no frame counted).
    #[inline]
    pub fn transmit(&mut self, start: SimTime, end: SimTime) {
        match self.tx.last_mut() {
            Some(last) if last.1 >= start.0 => last.1 = last.1.max(end.0),
            _ => self.tx.push((start.0, end.0)),
        }
    }
    /// The radio is in rx during `[start, end)` (no frame counted).
    #[inline]
    pub fn receive(&mut self, start: SimTime, end: SimTime) {
        self.rx.push((start.0, end.0));
    }
    /// The radio transmits a frame carrying `ip_len` IP bytes during `[start, end)`.
    #[inline]
    pub fn transmit_frame(&mut self, start: SimTime, end: SimTime, ip_len: u32) {
        self.transmit(start, end);
        self.tx_frames.push(start.0, ip_len);
    }
    /// The radio receives a frame carrying `ip_len` IP bytes during `[start, end)`.
    #[inline]
    pub fn receive_frame(&mut self, start: SimTime, end: SimTime, ip_len: u32) {
        self.receive(start, end);
        self.rx_frames.push(start.0, ip_len);
    }

    /// Attribute `[start, end)` of activity logged as tx (`ControlTx`, `RetryTx`) or rx (the
    /// others) to a cause.
    #[inline]
    pub fn mark(&mut self, start: SimTime, end: SimTime, mark: Mark) {
        self.marks[mark as usize].push((start.0, end.0));
    }

    /// Frames whose airtime began before `w`.
    pub fn frames_before(&self, w: SimTime) -> FrameCounts {
        let ((tx_frames, tx_bytes), (rx_frames, rx_bytes)) = (self.tx_frames.before(w.0), self.rx_frames.before(w.0));
        FrameCounts { tx_frames, tx_bytes, rx_frames, rx_bytes }
    }
}

/// Energy breakdown by component (J); the fields sum to the total. On a shared channel the
/// radio's tx and rx energy is split further: `mac_control` (RTS, CTS, MAC ACKs sent and
/// received), `retries` (MAC retransmissions of data frames, sent and received) and
/// `radio_overhear` (frames addressed to others); `radio_tx` and `radio_rx` keep the rest.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Breakdown {
    pub base: f64,
    pub radio_tx: f64,
    pub radio_rx: f64,
    pub radio_overhear: f64,
    pub mac_control: f64,
    pub retries: f64,
    pub radio_idle: f64,
    pub radio_sleep: f64,
    pub radio_transitions: f64,
    pub cpu: f64,
}

impl Breakdown {
    pub fn total(&self) -> f64 {
        self.base
            + self.radio_tx
            + self.radio_rx
            + self.radio_overhear
            + self.mac_control
            + self.retries
            + self.radio_idle
            + self.radio_sleep
            + self.radio_transitions
            + self.cpu
    }
}

/// One node's energy over the measurement window.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NodeEnergy {
    pub total_j: f64,
    pub idle_j: f64,
    pub idealized_j: f64,
    pub per_bit_total_uj: f64,
    pub per_bit_idealized_uj: f64,
    pub breakdown_j: Breakdown,
    /// Seconds the whole node was idle (no tx/rx, CPU not busy).
    pub idle_s: f64,
    /// Seconds the radio spent in each state; they sum to the window. Receiving frames addressed
    /// to others (`radio_overhear_s`) is not in `radio_rx_s`.
    pub radio_tx_s: f64,
    pub radio_rx_s: f64,
    pub radio_overhear_s: f64,
    pub radio_idle_s: f64,
    pub radio_sleep_s: f64,
    pub radio_waking_s: f64,
    pub cpu_busy_s: f64,
    /// Of the CPU's work, the seconds spent moving packets to and from the radio card (the card
    /// interface, docs/models/energy.md#card-interface) for the packets handled in the window.
    pub cpu_card_s: f64,
    pub radio_wakeups: u64,
    /// Frames the radio transmitted within the window (airtime begun before its end), lost ones
    /// included, and their IP bytes.
    pub radio_tx_frames: u64,
    pub radio_tx_bytes: u64,
    /// Frames the radio received within the window, and their IP bytes.
    pub radio_rx_frames: u64,
    pub radio_rx_bytes: u64,
}

/// The radio's state over `[0, W)` as contiguous segments `(start, end, state, radio power in W)`.
/// The power is the state's profile figure, except under an RRC machine, whose tail states and
/// listening windows each draw their own (docs/models/cellular.md).
pub type RadioTimeline = Vec<(u64, u64, RadioState, f64)>;

/// Sort intervals by start unless they already are (transmission and arrival order usually keep
/// them sorted; reordering breaks it). Any order among equal starts gives the same union.
fn sort_by_start(v: &mut [(u64, u64)]) {
    if !v.is_sorted_by_key(|iv| iv.0) {
        v.sort_unstable_by_key(|iv| iv.0);
    }
}

/// The disjoint union of intervals sorted by start, clipped to `[0, w)`, merged as it is read
/// (intervals that touch merge; empty ones are dropped).
struct Union<'a> {
    /// The intervals not read yet, all starting before `w`.
    rest: &'a [(u64, u64)],
    w: u64,
}

impl<'a> Union<'a> {
    fn new(sorted: &'a [(u64, u64)], w: u64) -> Self {
        // Intervals starting at or after `w` are empty once clipped, and they are all at the end.
        Self { rest: &sorted[..sorted.partition_point(|iv| iv.0 < w)], w }
    }
}

impl Iterator for Union<'_> {
    type Item = (u64, u64);

    #[inline]
    fn next(&mut self) -> Option<(u64, u64)> {
        let (rest, w) = (self.rest, self.w);
        let mut i = 0;
        let (s, mut e) = loop {
            let Some(&(s, e)) = rest.get(i) else {
                self.rest = &[];
                return None;
            };
            i += 1;
            if s < e.min(w) {
                break (s, e.min(w));
            }
        };
        // Absorb what overlaps or touches; an empty interval in reach leaves `e` as it is.
        while let Some(&(s2, e2)) = rest.get(i) {
            if s2 > e {
                break;
            }
            e = e.max(e2.min(w));
            i += 1;
        }
        self.rest = &rest[i..];
        Some((s, e))
    }
}

/// How the power-management policy fills the radio's gaps between activity.
struct GapPolicy<'a> {
    policy: RadioPolicy,
    timeout: u64,
    wake: u64,
    /// Radio power in each state, indexed by `RadioState as usize`.
    power: [f64; 5],
    /// A cellular radio's RRC machine, which fills every gap whatever the policy, and the
    /// times it was held connected (merged, in order) with the first that may still matter.
    rrc: Option<RrcTiming>,
    holds: Vec<(u64, u64)>,
    next_hold: usize,
    /// The states an RRC machine laid over the current gap.
    pieces: Vec<(u64, u64, RadioState, f64)>,
    /// Under `psm`: the doze intervals in time order, and the first that may still matter.
    doze: &'a [(u64, u64)],
    next_doze: usize,
}

impl<'a> GapPolicy<'a> {
    fn new(policy: RadioPolicy, timeout: SimDuration, radio: &Radio, doze: &'a [(u64, u64)], mut holds: Vec<(u64, u64)>) -> Self {
        let rrc = radio.rrc.as_ref().map(|r| r.timing(radio.wake_time));
        sort_by_start(&mut holds);
        let holds = Union::new(&holds, u64::MAX).collect();
        Self { policy, timeout: timeout.0, wake: radio.wake_time.0, power: state_powers(radio), rrc, holds, next_hold: 0, pieces: Vec::new(), doze, next_doze: 0 }
    }

    /// Emit `[s, e)` in state `st` at the state's power.
    #[inline(always)]
    fn state(&self, s: u64, e: u64, st: RadioState, emit: &mut impl FnMut(u64, u64, RadioState, f64)) {
        emit(s, e, st, self.power[st as usize]);
    }

    /// Under an RRC machine: the tail after activity ending at `a` (none before the first
    /// activity: the radio starts in RRC_IDLE), then RRC_IDLE, then the promotion that ends when
    /// the next activity begins at `b`. A link never starts a frame for an idle radio sooner than
    /// a promotion after it went idle (`net::medium::rrc`), so the promotion fits; if it does
    /// not, it is cut to the time there is.
    /// [`GapPolicy::fill_rrc`] out of line, into a buffer (reused from gap to gap) that the
    /// caller hands on: the other policies' gaps stay inlined in the sweep.
    #[inline(never)]
    fn fill_cellular(&mut self, a: u64, b: u64, followed_by_activity: bool) -> Vec<(u64, u64, RadioState, f64)> {
        let mut pieces = std::mem::take(&mut self.pieces);
        pieces.clear();
        if let Some(rrc) = self.rrc.take() {
            self.fill_rrc(&rrc, a, b, followed_by_activity, &mut |s, e, st, p| pieces.push((s, e, st, p)));
            self.rrc = Some(rrc);
        }
        pieces
    }

    fn fill_rrc(&mut self, rrc: &RrcTiming, a: u64, b: u64, followed_by_activity: bool, emit: &mut impl FnMut(u64, u64, RadioState, f64)) {
        // Held connected while data waited: continuous reception, then the machine runs on from
        // the hold's end as from activity.
        let hold_w = rrc.connected_power(self.power[RadioState::Idle as usize]);
        let mut t = a;
        while let Some(&(hs, he)) = self.holds.get(self.next_hold) {
            if he <= t {
                self.next_hold += 1;
                continue;
            }
            if hs >= b {
                break;
            }
            let (hs, he) = (hs.max(t), he.min(b));
            self.fill_rrc_between(rrc, t, hs, true, emit);
            emit(hs, he, RadioState::Idle, hold_w);
            t = he;
            if he == b {
                return;
            }
        }
        self.fill_rrc_between(rrc, t, b, followed_by_activity, emit);
    }

    fn fill_rrc_between(&self, rrc: &RrcTiming, a: u64, b: u64, followed_by_activity: bool, emit: &mut impl FnMut(u64, u64, RadioState, f64)) {
        if a >= b {
            return;
        }
        let after_activity = a > 0;
        if after_activity && followed_by_activity {
            // Activity that began in a state the radio is resumed from: the tail up to the
            // resume, then the resume (`net::medium::rrc` started it there).
            if let Some((began, power)) = rrc.resume_before(a, b) {
                rrc.lay_tail(a, began, self.power[RadioState::Idle as usize], &mut |s, e, p| emit(s, e, RadioState::Idle, p));
                emit(began, b, RadioState::Waking, power);
                return;
            }
        }
        let idle_from = if after_activity {
            rrc.lay_tail(a, b, self.power[RadioState::Idle as usize], &mut |s, e, p| emit(s, e, RadioState::Idle, p));
            (a + rrc.tail).min(b)
        } else {
            a
        };
        let idle_to = if followed_by_activity { b.saturating_sub(rrc.promotion).max(idle_from) } else { b };
        rrc.lay_idle(idle_from, idle_to, self.power[RadioState::Sleep as usize], &mut |s, e, p| emit(s, e, RadioState::Sleep, p));
        if idle_to < b {
            self.state(idle_to, b, RadioState::Waking, emit);
        }
    }

    /// The states of the gap `[a, b)`; `followed_by_activity` when the radio must be awake at `b`.
    /// Gaps come in time order.
    #[inline(always)]
    fn fill(&mut self, a: u64, b: u64, followed_by_activity: bool, emit: &mut impl FnMut(u64, u64, RadioState, f64)) {
        if a >= b {
            return;
        }
        if self.rrc.is_some() {
            let pieces = self.fill_cellular(a, b, followed_by_activity);
            for &(s, e, st, p) in &pieces {
                emit(s, e, st, p);
            }
            self.pieces = pieces;
            return;
        }
        match self.policy {
            RadioPolicy::Psm => self.fill_psm(a, b, emit),
            RadioPolicy::AlwaysOn => self.state(a, b, RadioState::Idle, emit),
            RadioPolicy::Ideal => self.state(a, b, RadioState::Sleep, emit),
            RadioPolicy::IdleTimeout => {
                let wake_need = if followed_by_activity { self.wake } else { 0 };
                if b - a > self.timeout + wake_need {
                    self.state(a, a + self.timeout, RadioState::Idle, emit);
                    self.state(a + self.timeout, b - wake_need, RadioState::Sleep, emit);
                    if wake_need > 0 {
                        self.state(b - wake_need, b, RadioState::Waking, emit);
                    }
                } else {
                    self.state(a, b, RadioState::Idle, emit);
                }
            }
        }
    }

    /// Under `psm`: asleep while dozing, waking during the last `wake` of each doze that ends
    /// (the card wakes ahead of the beacon or frame it woke for), idle otherwise.
    fn fill_psm(&mut self, a: u64, b: u64, emit: &mut impl FnMut(u64, u64, RadioState, f64)) {
        let mut t = a;
        while t < b {
            while self.doze.get(self.next_doze).is_some_and(|d| d.1 <= t) {
                self.next_doze += 1;
            }
            match self.doze.get(self.next_doze) {
                Some(&(ds, de)) if ds < b => {
                    if ds > t {
                        self.state(t, ds, RadioState::Idle, emit);
                        t = ds;
                    }
                    if de <= b {
                        let waking_from = de.saturating_sub(self.wake).max(t);
                        if waking_from > t {
                            self.state(t, waking_from, RadioState::Sleep, emit);
                        }
                        if de > waking_from {
                            self.state(waking_from, de, RadioState::Waking, emit);
                        }
                        t = de;
                    } else {
                        self.state(t, b, RadioState::Sleep, emit);
                        t = b;
                    }
                }
                _ => {
                    self.state(t, b, RadioState::Idle, emit);
                    t = b;
                }
            }
        }
    }

    /// Most segments one gap can become (under `psm`, besides three per doze interval; under an
    /// RRC machine, besides its listening windows).
    fn max_segments(&self) -> usize {
        if let Some(rrc) = &self.rrc {
            return rrc.stages() + 3;
        }
        match self.policy {
            RadioPolicy::AlwaysOn | RadioPolicy::Ideal | RadioPolicy::Psm => 1,
            RadioPolicy::IdleTimeout => 3,
        }
    }
}

/// Lay the tx and rx activity out in time with tx taking precedence, fill the gaps per `gaps`, and
/// hand each segment of `[0, w)` to `emit` in time order. One sweep over both interval lists, so no
/// intermediate lists are built.
fn sweep_timeline(log: &mut RadioLog, w: u64, mut gaps: GapPolicy, mut emit: impl FnMut(u64, u64, RadioState, f64)) {
    sort_by_start(&mut log.tx);
    sort_by_start(&mut log.rx);
    let tx = Union::new(&log.tx, w);
    let mut rx = Union::new(&log.rx, w);
    let mut next_rx = rx.next();
    // End of the last segment emitted.
    let mut t = 0u64;
    for (ts, te) in tx {
        // Receive time before this transmission (all of it, or up to the transmission).
        while let Some((rs, re)) = next_rx {
            if rs >= ts {
                break;
            }
            let end = re.min(ts);
            gaps.fill(t, rs, true, &mut emit);
            gaps.state(rs, end, RadioState::Rx, &mut emit);
            t = end;
            next_rx = if end < re { Some((end, re)) } else { rx.next() };
        }
        gaps.fill(t, ts, true, &mut emit);
        gaps.state(ts, te, RadioState::Tx, &mut emit);
        t = te;
        // Receive time under this transmission does not count as rx.
        while let Some((rs, re)) = next_rx {
            if re > te {
                next_rx = Some((rs.max(te), re));
                break;
            }
            next_rx = rx.next();
        }
    }
    while let Some((rs, re)) = next_rx {
        gaps.fill(t, rs, true, &mut emit);
        gaps.state(rs, re, RadioState::Rx, &mut emit);
        t = re;
        next_rx = rx.next();
    }
    gaps.fill(t, w, false, &mut emit);
}

/// Lay the tx and rx activity out in time with tx taking precedence, then fill the gaps according
/// to the power-management policy.
pub fn radio_timeline(mut log: RadioLog, w: SimTime, policy: RadioPolicy, timeout: SimDuration, radio: &Radio) -> RadioTimeline {
    let doze = std::mem::take(&mut log.doze);
    let gaps = GapPolicy::new(policy, timeout, radio, &doze, std::mem::take(&mut log.holds));
    // Each activity interval is about one busy segment plus the gap after it: sized so the list
    // rarely grows (pages never written are never touched).
    let busy = log.tx.len() + log.rx.len();
    let mut out: RadioTimeline = Vec::with_capacity(busy * (1 + gaps.max_segments()) + gaps.max_segments() + 3 * doze.len());
    sweep_timeline(&mut log, w.0, gaps, |s, e, st, p| out.push((s, e, st, p)));
    out
}

/// The frames whose per-bit energy a battery has still to be charged, in start order: each is
/// drawn during the timeline segment in which it starts (segments tile the window, so once).
struct FramesToDrain {
    tx: Vec<(u64, u32)>,
    rx: Vec<(u64, u32)>,
    next: (usize, usize),
}

impl FramesToDrain {
    fn new(log: &RadioLog) -> Self {
        let sorted = |f: &FrameLog| {
            let mut v = f.frames.clone();
            v.sort_unstable_by_key(|f| f.0);
            v
        };
        Self { tx: sorted(&log.tx_frames), rx: sorted(&log.rx_frames), next: (0, 0) }
    }

    /// Energy (J) of the frames starting before `e` not drawn yet, at `per_bit_j` (sent, received).
    fn energy_before(&mut self, e: u64, per_bit_j: (f64, f64)) -> f64 {
        let take = |v: &[(u64, u32)], k: &mut usize| {
            let mut bytes = 0u64;
            while *k < v.len() && v[*k].0 < e {
                bytes += v[*k].1 as u64;
                *k += 1;
            }
            bytes as f64 * 8.0
        };
        let (mut i, mut j) = self.next;
        let j_total = per_bit_j.0 * take(&self.tx, &mut i) + per_bit_j.1 * take(&self.rx, &mut j);
        self.next = (i, j);
        j_total
    }
}

/// A radio's power in each state, indexed by `RadioState as usize`.
fn state_powers(r: &Radio) -> [f64; 5] {
    let mut power = [0.0; 5];
    for (st, p) in [
        (RadioState::Tx, r.tx_power_w),
        (RadioState::Rx, r.rx_power_w),
        (RadioState::Idle, r.idle_power_w),
        (RadioState::Sleep, r.sleep_power_w),
        (RadioState::Waking, r.wake_power_w),
    ] {
        power[st as usize] = p;
    }
    power
}

fn secs(ns: u64) -> f64 {
    ns as f64 * 1e-9
}

/// Power integrated over the radio's timeline, fed one segment at a time in time order.
struct PowerIntegral<'a> {
    /// Radio power in each state, indexed by `RadioState as usize`.
    state_power_w: [f64; 5],
    /// A cellular radio's energy per bit sent and received beyond its connected power (J).
    per_bit_j: (f64, f64),
    /// With a battery and a per-bit cost: the (start, IP bytes) of every frame sent and
    /// received, sorted by start, and how many the battery has been charged for.
    frames_to_drain: Option<FramesToDrain>,
    base_w: f64,
    /// CPU busy intervals that begin before `w` (in time order); ends are clipped to `w` on use.
    cpu_busy: &'a [(SimTime, SimTime)],
    w: u64,
    /// First CPU busy interval that may still overlap the segments to come.
    ci: usize,
    /// Joules, nanoseconds and segments in each radio state, each summed in time order.
    state_j: [f64; 5],
    state_ns: [u64; 5],
    state_segments: [u64; 5],
    idle_ns: u64,
    idle_j: f64,
    /// The tx and rx segments, kept only when marks are to be attributed.
    keep_segments: bool,
    tx_segments: Vec<(u64, u64)>,
    rx_segments: Vec<(u64, u64)>,
    /// A battery the node's power drains, segment by segment, and the CPU's active power.
    battery: Option<&'a mut Battery>,
    cpu_w: f64,
}

impl<'a> PowerIntegral<'a> {
    fn new(profile: &DeviceProfile, cpu_busy: &'a [(SimTime, SimTime)], w: u64) -> Self {
        let state_power_w = state_powers(&profile.radio);
        let per_bit_j = profile.radio.rrc.as_ref().map_or((0.0, 0.0), |r| (r.uplink_j_per_mbit * 1e-6, r.downlink_j_per_mbit * 1e-6));
        let before_w = cpu_busy.partition_point(|iv| iv.0 .0 < w);
        Self {
            state_power_w,
            per_bit_j,
            frames_to_drain: None,
            base_w: profile.platform.base_power_w,
            cpu_busy: &cpu_busy[..before_w],
            w,
            ci: 0,
            state_j: [0.0; 5],
            state_ns: [0; 5],
            state_segments: [0; 5],
            idle_ns: 0,
            idle_j: 0.0,
            keep_segments: false,
            tx_segments: Vec::new(),
            rx_segments: Vec::new(),
            battery: None,
            cpu_w: 0.0,
        }
    }

    /// Draw a timeline segment's power from the battery, with the per-bit energy of the frames
    /// that start in it (a cellular radio's).
    #[inline(never)]
    fn drain_segment(&mut self, s: u64, e: u64, radio_w: f64) {
        let moved_j = self.frames_to_drain.as_mut().map_or(0.0, |f| f.energy_before(e, self.per_bit_j));
        self.drain(s, e, radio_w + moved_j / secs(e - s));
    }

    /// Draw the node's power during `[s, e)` from the battery: base and radio power `radio_w`
    /// throughout, the CPU's while it is busy (split at its busy intervals' ends, so exact).
    fn drain(&mut self, s: u64, e: u64, radio_w: f64) {
        let idle_w = self.base_w + radio_w;
        let busy_w = idle_w + self.cpu_w;
        self.skip_cpu_before(s);
        let Some(b) = self.battery.as_deref_mut() else { return };
        let mut t = s;
        let mut k = self.ci;
        while k < self.cpu_busy.len() && self.cpu_busy[k].0 .0 < e {
            let (bs, be) = (self.cpu_busy[k].0 .0.max(t), self.cpu_busy[k].1 .0.min(self.w).min(e));
            if bs > t {
                b.draw(t, bs, idle_w);
            }
            if be > bs {
                b.draw(bs, be, busy_w);
                t = be;
            }
            k += 1;
        }
        if e > t {
            b.draw(t, e, idle_w);
        }
    }

    /// Move the CPU cursor past busy intervals that end at or before `s` (segments come in order).
    #[inline]
    fn skip_cpu_before(&mut self, s: u64) {
        while self.ci < self.cpu_busy.len() && self.cpu_end(self.ci) <= s {
            self.ci += 1;
        }
    }

    /// CPU busy time within `[s, e)`.
    #[inline]
    fn cpu_overlap(&mut self, s: u64, e: u64) -> u64 {
        self.skip_cpu_before(s);
        let mut overlap = 0;
        let mut k = self.ci;
        while k < self.cpu_busy.len() && self.cpu_busy[k].0 .0 < e {
            overlap += self.cpu_end(k).min(e) - self.cpu_busy[k].0 .0.max(s);
            k += 1;
        }
        overlap
    }

    #[inline]
    fn cpu_end(&self, k: usize) -> u64 {
        self.cpu_busy[k].1 .0.min(self.w)
    }

    /// The radio was in state `st`, drawing `p` W, during `[s, e)`.
    #[inline(always)]
    fn add(&mut self, s: u64, e: u64, st: RadioState, p: f64) {
        let len = e - s;
        let i = st as usize;
        self.state_j[i] += p * secs(len);
        self.state_ns[i] += len;
        self.state_segments[i] += 1;
        if self.battery.is_some() && len > 0 {
            self.drain_segment(s, e, p);
        }
        if matches!(st, RadioState::Tx | RadioState::Rx) {
            if self.keep_segments {
                if st == RadioState::Tx { &mut self.tx_segments } else { &mut self.rx_segments }.push((s, e));
            }
            return;
        }
        // System idle = this radio-idle stretch minus the time the CPU was busy within it.
        let overlap = self.cpu_overlap(s, e);
        let free = len - overlap;
        self.idle_ns += free;
        self.idle_j += (self.base_w + p) * secs(free);
    }

    fn finish(self, cpu_w: f64, delivered_bytes: u64, frames: FrameCounts, marks: Option<&mut [Vec<(u64, u64)>; MARKS]>) -> NodeEnergy {
        let cpu_ns: u64 = (0..self.cpu_busy.len()).map(|k| self.cpu_end(k) - self.cpu_busy[k].0 .0).sum();
        let (j, ns) = (|st: RadioState| self.state_j[st as usize], |st: RadioState| self.state_ns[st as usize]);
        let mut b = Breakdown {
            base: self.base_w * secs(self.w),
            radio_tx: j(RadioState::Tx),
            radio_rx: j(RadioState::Rx),
            radio_idle: j(RadioState::Idle),
            radio_sleep: j(RadioState::Sleep),
            radio_transitions: j(RadioState::Waking),
            cpu: cpu_w * secs(cpu_ns),
            ..Default::default()
        };
        let mut overhear_ns = 0;
        if let Some(marks) = marks {
            let a = attribute(marks, &self.tx_segments, &self.rx_segments, self.w);
            let (p_tx, p_rx) = (self.state_power_w[RadioState::Tx as usize], self.state_power_w[RadioState::Rx as usize]);
            let (tx_ns, rx_ns) = (ns(RadioState::Tx), ns(RadioState::Rx));
            b.radio_tx = p_tx * secs(tx_ns - a.control_tx - a.retry_tx);
            b.radio_rx = p_rx * secs(rx_ns - a.overhear - a.control_rx - a.retry_rx);
            b.radio_overhear = p_rx * secs(a.overhear);
            b.mac_control = p_tx * secs(a.control_tx) + p_rx * secs(a.control_rx);
            b.retries = p_tx * secs(a.retry_tx) + p_rx * secs(a.retry_rx);
            overhear_ns = a.overhear;
        }
        // A cellular radio's cost per bit moved (Huang et al. 2012's α terms).
        b.radio_tx += self.per_bit_j.0 * frames.tx_bytes as f64 * 8.0;
        b.radio_rx += self.per_bit_j.1 * frames.rx_bytes as f64 * 8.0;
        let total = b.total();
        // E_I cannot be negative; E and E_idle are sums in different orders, so for a node that
        // only idled the difference can come out an ulp below zero.
        let idealized = (total - self.idle_j).max(0.0);
        let bits = delivered_bytes as f64 * 8.0;
        let per_bit = |j: f64| if bits > 0.0 { j / bits * 1e6 } else { f64::NAN };
        NodeEnergy {
            total_j: total,
            idle_j: self.idle_j,
            idealized_j: idealized,
            per_bit_total_uj: per_bit(total),
            per_bit_idealized_uj: per_bit(idealized),
            breakdown_j: b,
            idle_s: secs(self.idle_ns),
            radio_tx_s: secs(ns(RadioState::Tx)),
            radio_rx_s: secs(ns(RadioState::Rx) - overhear_ns),
            radio_overhear_s: secs(overhear_ns),
            radio_idle_s: secs(ns(RadioState::Idle)),
            radio_sleep_s: secs(ns(RadioState::Sleep)),
            radio_waking_s: secs(ns(RadioState::Waking)),
            cpu_busy_s: secs(cpu_ns),
            cpu_card_s: 0.0,
            radio_wakeups: self.state_segments[RadioState::Waking as usize],
            radio_tx_frames: frames.tx_frames,
            radio_tx_bytes: frames.tx_bytes,
            radio_rx_frames: frames.rx_frames,
            radio_rx_bytes: frames.rx_bytes,
        }
    }
}

/// Integrate one node's power over `[0, w)`; `frames` are the radio's frame counts in the window.
pub fn node_energy(
    profile: &DeviceProfile,
    timeline: &RadioTimeline,
    cpu: &mut CpuMeter,
    w: SimTime,
    delivered_bytes: u64,
    frames: FrameCounts,
) -> NodeEnergy {
    let cpu_w = cpu.active_power_w();
    let card_s = cpu.card_s(w);
    let mut power = PowerIntegral::new(profile, cpu.busy_intervals(), w.0);
    for &(s, e, st, p) in timeline {
        power.add(s, e, st, p);
    }
    NodeEnergy { cpu_card_s: card_s, ..power.finish(cpu_w, delivered_bytes, frames, None) }
}

/// One node's energy over `[0, w)` straight from its radio log, for callers that do not need the
/// timeline: the same figures as `node_energy` over `radio_timeline(log, w, policy, timeout,
/// &profile.radio)` with `log.frames_before(w)`, integrated as the timeline is laid out.
pub fn node_energy_from_log(
    profile: &DeviceProfile,
    log: RadioLog,
    cpu: &mut CpuMeter,
    w: SimTime,
    policy: RadioPolicy,
    timeout: SimDuration,
    delivered_bytes: u64,
) -> NodeEnergy {
    node_energy_and_battery(profile, log, cpu, w, policy, timeout, delivered_bytes, None)
}

/// [`node_energy_from_log`], draining `battery` with the node's power as the timeline is laid
/// out (docs/models/battery.md).
#[allow(clippy::too_many_arguments)]
pub fn node_energy_and_battery(
    profile: &DeviceProfile,
    mut log: RadioLog,
    cpu: &mut CpuMeter,
    w: SimTime,
    policy: RadioPolicy,
    timeout: SimDuration,
    delivered_bytes: u64,
    battery: Option<&mut Battery>,
) -> NodeEnergy {
    let frames = log.frames_before(w);
    let doze = std::mem::take(&mut log.doze);
    let gaps = GapPolicy::new(policy, timeout, &profile.radio, &doze, std::mem::take(&mut log.holds));
    let cpu_w = cpu.active_power_w();
    let card_s = cpu.card_s(w);
    let mut power = PowerIntegral::new(profile, cpu.busy_intervals(), w.0);
    power.cpu_w = cpu_w;
    if battery.is_some() && profile.radio.rrc.is_some() {
        power.frames_to_drain = Some(FramesToDrain::new(&log));
    }
    power.battery = battery;
    let marked = log.marks.iter().any(|m| !m.is_empty());
    power.keep_segments = marked;
    sweep_timeline(&mut log, w.0, gaps, |s, e, st, p| power.add(s, e, st, p));
    NodeEnergy { cpu_card_s: card_s, ..power.finish(cpu_w, delivered_bytes, frames, marked.then_some(&mut log.marks)) }
}

/// One node's energy under another profile, from what the run logged: its radio log and the CPU
/// charges it received ([`CpuMeter::keep_charges`]), replayed at that profile's costs. The figures
/// are those of a run under `profile`, since the profile never changes what the node did (when
/// it keeps the run's radio PHY: `crate::profiles`). Returns the replayed CPU meter too.
#[allow(clippy::too_many_arguments)]
pub fn node_energy_under(
    profile: &DeviceProfile,
    log: RadioLog,
    charges: &[(SimTime, Charge)],
    w: SimTime,
    policy: RadioPolicy,
    timeout: SimDuration,
    delivered_bytes: u64,
    battery: Option<&mut Battery>,
) -> (NodeEnergy, CpuMeter) {
    let mut cpu = CpuMeter::replay(charges, profile);
    let e = node_energy_and_battery(profile, log, &mut cpu, w, policy, timeout, delivered_bytes, battery);
    (e, cpu)
}

/// Nanoseconds of tx and rx time attributed to each cause.
#[derive(Debug, Default, PartialEq, Eq)]
struct Attribution {
    control_tx: u64,
    retry_tx: u64,
    overhear: u64,
    control_rx: u64,
    retry_rx: u64,
}

/// Split the tx and rx segments among the marks. Where causes overlap, the first in this order
/// takes the time: tx — control, retry; rx — overhearing, control, retry (a frame heard for
/// another station is overheard whatever its kind). Time no mark covers stays plain tx or rx.
fn attribute(marks: &mut [Vec<(u64, u64)>; MARKS], tx: &[(u64, u64)], rx: &[(u64, u64)], w: u64) -> Attribution {
    let mut within = |m: Mark, segments: &[(u64, u64)]| {
        let v = &mut marks[m as usize];
        sort_by_start(v);
        let merged: Vec<(u64, u64)> = Union::new(v, w).collect();
        intersect(&merged, segments)
    };
    let control_tx = within(Mark::ControlTx, tx);
    let retry_tx = subtract(&within(Mark::RetryTx, tx), &control_tx);
    let overhear = within(Mark::Overhear, rx);
    let control_rx = subtract(&within(Mark::ControlRx, rx), &overhear);
    let retry_rx = subtract(&subtract(&within(Mark::RetryRx, rx), &overhear), &control_rx);
    let len = |v: &[(u64, u64)]| v.iter().map(|iv| iv.1 - iv.0).sum();
    Attribution {
        control_tx: len(&control_tx),
        retry_tx: len(&retry_tx),
        overhear: len(&overhear),
        control_rx: len(&control_rx),
        retry_rx: len(&retry_rx),
    }
}

/// The intersection of two sorted lists of disjoint intervals.
fn intersect(a: &[(u64, u64)], b: &[(u64, u64)]) -> Vec<(u64, u64)> {
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < a.len() && j < b.len() {
        let (s, e) = (a[i].0.max(b[j].0), a[i].1.min(b[j].1));
        if s < e {
            out.push((s, e));
        }
        if a[i].1 < b[j].1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

/// `a` without `b` (both sorted lists of disjoint intervals).
fn subtract(a: &[(u64, u64)], b: &[(u64, u64)]) -> Vec<(u64, u64)> {
    let mut out = Vec::with_capacity(a.len());
    let mut j = 0;
    for &(s, e) in a {
        let mut s = s;
        while j < b.len() && b[j].1 <= s {
            j += 1;
        }
        let mut k = j;
        while k < b.len() && b[k].0 < e {
            if b[k].0 > s {
                out.push((s, b[k].0));
            }
            s = s.max(b[k].1);
            k += 1;
        }
        if s < e {
            out.push((s, e));
        }
    }
    out
}

/// The radio state at time `t` and its power, from the timeline.
pub fn radio_state_at(timeline: &RadioTimeline, t: u64) -> Option<(RadioState, f64)> {
    let i = timeline.partition_point(|seg| seg.1 <= t);
    timeline.get(i).filter(|seg| seg.0 <= t).map(|seg| (seg.2, seg.3))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The states laid out under `policy` for a radio that takes `wake` to wake.
    fn timeline(log: RadioLog, w: SimTime, policy: RadioPolicy, timeout: SimDuration, wake: SimDuration) -> Vec<(u64, u64, RadioState)> {
        let mut radio = crate::energy::profile::builtin("singh2002-toshiba-wavelan").unwrap().unwrap().radio;
        radio.wake_time = wake;
        radio_timeline(log, w, policy, timeout, &radio).into_iter().map(|seg| (seg.0, seg.1, seg.2)).collect()
    }

    #[test]
    fn tx_takes_precedence_over_overlapping_rx() {
        let mut log = RadioLog::default();
        log.transmit(SimTime(10), SimTime(20));
        log.receive(SimTime(15), SimTime(30));
        log.receive(SimTime(0), SimTime(12));
        let tl = timeline(log, SimTime(40), RadioPolicy::AlwaysOn, SimDuration(0), SimDuration(0));
        assert_eq!(
            tl,
            vec![
                (0, 10, RadioState::Rx),
                (10, 20, RadioState::Tx),
                (20, 30, RadioState::Rx),
                (30, 40, RadioState::Idle)
            ]
        );
    }

    #[test]
    fn idle_timeout_sleeps_after_timeout_and_wakes_before_activity() {
        let mut log = RadioLog::default();
        log.transmit(SimTime(0), SimTime(10));
        log.transmit(SimTime(100), SimTime(110));
        let tl = timeline(log, SimTime(200), RadioPolicy::IdleTimeout, SimDuration(20), SimDuration(5));
        assert_eq!(
            tl,
            vec![
                (0, 10, RadioState::Tx),
                (10, 30, RadioState::Idle),
                (30, 95, RadioState::Sleep),
                (95, 100, RadioState::Waking),
                (100, 110, RadioState::Tx),
                (110, 130, RadioState::Idle),
                (130, 200, RadioState::Sleep)
            ]
        );
    }

    #[test]
    fn energy_from_the_log_equals_energy_from_its_timeline_under_every_policy() {
        use crate::energy::cpu::Op;
        let p = crate::energy::profile::builtin("singh2002-toshiba-wavelan").unwrap().unwrap();
        let ms = |x: f64| SimTime((x * 1e6) as u64);
        let mut log = RadioLog::default();
        // Overlapping transmissions, one running past the window's end, one starting after it.
        for (s, e) in [(0.0, 1.2), (5.0, 6.2), (6.0, 7.0), (20.0, 21.0), (49.5, 50.5), (52.0, 53.0)] {
            log.transmit_frame(ms(s), ms(e), 1500);
        }
        // Receptions out of order, overlapping each other and the transmissions.
        for (s, e) in [(3.0, 5.5), (1.0, 2.0), (10.5, 12.0), (10.0, 11.0), (20.2, 20.4), (30.0, 60.0)] {
            log.receive_frame(ms(s), ms(e), 52);
        }
        let mut cpu = CpuMeter::new(&p.cpu.cycles, p.cpu.frequency_hz, p.cpu.active_power_w);
        // CPU work during activity, in idle and sleeping gaps, while waking, across and after the end.
        for at in [0.5, 8.0, 15.0, 19.9, 49.99, 55.0] {
            cpu.charge(ms(at), Op::SegmentReceived { bytes: 1460 });
        }
        // Dozing (802.11 power save) in gaps, one doze still open at the end.
        for (s, e) in [(13.0, 19.9), (22.0, 29.0), (40.0, 49.0)] {
            log.doze(ms(s));
            log.wake(ms(e));
        }
        log.doze(ms(53.5));
        let (w, timeout) = (ms(50.0), SimDuration(1_000_000));
        for policy in [RadioPolicy::AlwaysOn, RadioPolicy::Ideal, RadioPolicy::IdleTimeout, RadioPolicy::Psm] {
            let tl = radio_timeline(log.clone(), w, policy, timeout, &p.radio);
            assert!(tl.iter().any(|seg| seg.2 == RadioState::Tx) && tl.iter().any(|seg| seg.2 == RadioState::Rx));
            let from_timeline = node_energy(&p, &tl, &mut cpu.clone(), w, 5000, log.frames_before(w));
            let streamed = node_energy_from_log(&p, log.clone(), &mut cpu.clone(), w, policy, timeout, 5000);
            assert_eq!(streamed, from_timeline, "{policy:?}");
        }
        let tl = radio_timeline(log, w, RadioPolicy::IdleTimeout, timeout, &p.radio);
        assert!(tl.iter().any(|seg| seg.2 == RadioState::Waking) && tl.iter().any(|seg| seg.2 == RadioState::Sleep));
    }

    #[test]
    fn under_psm_the_radio_sleeps_while_dozing_and_wakes_ahead_of_each_wake_up() {
        // docs/models/wifi.md "Power save": idle while awake, asleep while dozing, waking for the
        // last wake_time of each doze that ends (a doze shorter than that is all waking).
        let mut log = RadioLog::default();
        log.receive(SimTime(0), SimTime(10));
        log.doze(SimTime(10));
        log.wake(SimTime(100));
        log.transmit(SimTime(120), SimTime(130));
        log.doze(SimTime(130));
        log.wake(SimTime(133));
        log.doze(SimTime(150));
        let tl = timeline(log, SimTime(200), RadioPolicy::Psm, SimDuration(0), SimDuration(5));
        assert_eq!(
            tl,
            vec![
                (0, 10, RadioState::Rx),
                (10, 95, RadioState::Sleep),
                (95, 100, RadioState::Waking),
                (100, 120, RadioState::Idle),
                (120, 130, RadioState::Tx),
                (130, 133, RadioState::Waking),
                (133, 150, RadioState::Idle),
                (150, 200, RadioState::Sleep)
            ]
        );
        // A radio that never dozed stays on, as under always_on.
        let mut log = RadioLog::default();
        log.transmit(SimTime(0), SimTime(10));
        let tl = timeline(log, SimTime(50), RadioPolicy::Psm, SimDuration(0), SimDuration(5));
        assert_eq!(tl[1], (10, 50, RadioState::Idle));
    }

    #[test]
    fn short_gaps_stay_idle_under_idle_timeout() {
        let mut log = RadioLog::default();
        log.transmit(SimTime(0), SimTime(10));
        log.transmit(SimTime(30), SimTime(40));
        let tl = timeline(log, SimTime(40), RadioPolicy::IdleTimeout, SimDuration(20), SimDuration(5));
        assert_eq!(tl[1], (10, 30, RadioState::Idle));
    }

    /// Huang et al. 2012 Table 3 (LTE): one packet sent from RRC_IDLE costs the promotion, the
    /// packet itself (beta for its airtime plus alpha_u per bit, Table 4), then the whole tail:
    /// continuous reception at beta for 100 ms, short DRX for 20 ms, long DRX to 11576 ms, each
    /// DRX cycle's 1 ms on-duration at its own power; then paging in RRC_IDLE. By hand:
    #[test]
    fn one_packet_on_lte_costs_promotion_plus_packet_plus_tail_computed_by_hand() {
        let p = crate::energy::profile::builtin("huang2012-lte-phone").unwrap().unwrap();
        let ms = |x: f64| (x * 1e6).round() as u64;
        let (start, air) = (ms(260.1), ms(1.0));
        let end = start + air;
        let w = end + ms(11576.0) + ms(2000.0);
        let mut log = RadioLog::default();
        log.transmit_frame(SimTime(start), SimTime(end), 1000);
        let tl = radio_timeline(log.clone(), SimTime(w), RadioPolicy::AlwaysOn, SimDuration(0), &p.radio);
        let mut cpu = CpuMeter::new(&p.cpu.cycles, p.cpu.frequency_hz, p.cpu.active_power_w);
        let e = node_energy_from_log(&p, log.clone(), &mut cpu.clone(), SimTime(w), RadioPolicy::AlwaysOn, SimDuration(0), 1000);

        let promotion = 0.2601 * 1.2107;
        let packet = 0.001 * 1.28804 + 0.43839e-6 * 8000.0;
        let continuous = 0.1 * 1.28804;
        let short_drx = 0.001 * 1.6802 + 0.019 * 1.06;
        // Long DRX: 11456 ms of 40.1 ms cycles, on-durations at 0, 40.1, ..., 285 * 40.1 ms.
        let long_drx = 286.0 * 0.001 * 1.6801 + (11.456 - 0.286) * 1.06;
        // RRC_IDLE from 11837.1 ms to the window's end at 13837.1 ms: one paging occasion, at
        // 10 * 1280.2 = 12802 ms.
        let paging = 0.0432 * 0.5943;
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
        let b = &e.breakdown_j;
        assert!(close(b.radio_transitions, promotion), "{} vs {promotion}", b.radio_transitions);
        assert!(close(b.radio_tx, packet), "{} vs {packet}", b.radio_tx);
        assert!(close(b.radio_idle, continuous + short_drx + long_drx), "{} vs {}", b.radio_idle, continuous + short_drx + long_drx);
        assert!(close(b.radio_sleep, paging), "{} vs {paging}", b.radio_sleep);
        assert!(close(b.base, 0.0114 * w as f64 * 1e-9));
        assert!(close(e.total_j, b.base + promotion + packet + continuous + short_drx + long_drx + paging));
        assert_eq!(e.radio_wakeups, 1);
        // The same from the timeline, and the timeline's states as the timers say.
        let from_tl = node_energy(&p, &tl, &mut cpu, SimTime(w), 1000, log.frames_before(SimTime(w)));
        assert_eq!(from_tl, e);
        let at = |t: u64| radio_state_at(&tl, t).unwrap();
        assert_eq!(at(0).0, RadioState::Waking);
        assert_eq!(at(start).0, RadioState::Tx);
        assert_eq!(at(end), (RadioState::Idle, 1.28804)); // continuous reception
        assert_eq!(at(end + ms(100.0)), (RadioState::Idle, 1.6802)); // short DRX on-duration
        assert_eq!(at(end + ms(101.0)), (RadioState::Idle, 1.06));
        assert_eq!(at(end + ms(120.0)), (RadioState::Idle, 1.6801)); // long DRX on-duration
        assert_eq!(at(end + ms(11575.9)), (RadioState::Idle, 1.06));
        assert_eq!(at(end + ms(11576.0)), (RadioState::Sleep, 0.0)); // RRC_IDLE after T_tail
        assert_eq!(at(ms(12802.0)), (RadioState::Sleep, 0.5943)); // a paging occasion
        assert_eq!(tl.last().unwrap().1, w);
    }

    /// 3GPP TS 38.331 §5.3.13: activity that finds the radio in RRC_INACTIVE pays the resume,
    /// laid out just before it at the resume's power, and restarts the tail; by hand, with the
    /// illustrative machine of energy::rrc's tests.
    #[test]
    fn activity_in_rrc_inactive_costs_the_resume_laid_just_before_it() {
        let mut p = crate::energy::profile::builtin("huang2012-lte-phone").unwrap().unwrap();
        p.radio.rrc = Some(crate::energy::rrc::tests::nr());
        p.radio.wake_time = SimDuration(300_000_000);
        let ms = |x: f64| (x * 1e6).round() as u64;
        let mut log = RadioLog::default();
        // The first frame after the promotion from RRC_IDLE; the second 12 s after it ends,
        // 2 s into RRC_INACTIVE, sent after a 60 ms resume that began at 12 001 ms.
        log.transmit_frame(SimTime(ms(300.0)), SimTime(ms(301.0)), 100);
        log.transmit_frame(SimTime(ms(12_361.0)), SimTime(ms(12_362.0)), 100);
        let w = SimTime(ms(13_000.0));
        let tl = radio_timeline(log.clone(), w, RadioPolicy::AlwaysOn, SimDuration(0), &p.radio);
        let wakes: Vec<_> = tl.iter().filter(|seg| seg.2 == RadioState::Waking).map(|seg| (seg.0, seg.1, seg.3)).collect();
        assert_eq!(wakes, vec![(0, ms(300.0), p.radio.wake_power_w), (ms(12_301.0), ms(12_361.0), 1.0)]);
        // Before the resume: RRC_INACTIVE's floor, its RAN paging on-durations apart (cycles
        // from 10 301 ms: on at 11 581 ms).
        assert_eq!(radio_state_at(&tl, ms(12_300.5)), Some((RadioState::Idle, 0.02)));
        assert_eq!(radio_state_at(&tl, ms(11_581.5)), Some((RadioState::Idle, 0.5)));
        // After the second frame the tail restarts: continuous reception at 1.0 W.
        assert_eq!(radio_state_at(&tl, ms(12_400.0)), Some((RadioState::Idle, 1.0)));
        let mut cpu = CpuMeter::new(&p.cpu.cycles, p.cpu.frequency_hz, p.cpu.active_power_w);
        let e = node_energy_from_log(&p, log, &mut cpu, w, RadioPolicy::AlwaysOn, SimDuration(0), 0);
        assert_eq!(e.radio_wakeups, 2);
        let transitions = 0.3 * p.radio.wake_power_w + 0.06 * 1.0;
        assert!((e.breakdown_j.radio_transitions - transitions).abs() < 1e-9, "{}", e.breakdown_j.radio_transitions);
    }

    /// Huang et al. 2012 §3: a packet that arrives within the tail restarts it without a
    /// promotion; one after it pays the promotion again, laid out just before it.
    #[test]
    fn activity_within_the_tail_needs_no_promotion_and_after_it_needs_one() {
        let p = crate::energy::profile::builtin("huang2012-3g-phone").unwrap().unwrap();
        let ms = |x: f64| (x * 1e6).round() as u64;
        let mut log = RadioLog::default();
        for s in [1000.0, 5000.0, 30000.0] {
            log.receive_frame(SimTime(ms(s)), SimTime(ms(s + 1.0)), 1500);
        }
        let w = SimTime(ms(40000.0));
        let tl = radio_timeline(log, w, RadioPolicy::AlwaysOn, SimDuration(0), &p.radio);
        let wakes: Vec<_> = tl.iter().filter(|seg| seg.2 == RadioState::Waking).map(|seg| (seg.0, seg.1)).collect();
        // From the start (idle), and after the 8088.2 + 824.2 ms tail that ends at 5001 + 8912.4 ms.
        assert_eq!(wakes, vec![(ms(1000.0 - 582.1), ms(1000.0)), (ms(30000.0 - 582.1), ms(30000.0))]);
        let at = |t: f64| radio_state_at(&tl, ms(t)).unwrap();
        assert_eq!(at(5001.0 + 8088.1), (RadioState::Idle, 0.8039)); // DCH tail
        assert_eq!(at(5001.0 + 8088.3), (RadioState::Idle, 0.6013)); // FACH tail
        assert_eq!(at(5001.0 + 8912.5).0, RadioState::Sleep);
    }

    /// docs/models/cellular.md "What it does to packets": a radio whose data waits for the link
    /// is held connected (continuous reception) meanwhile, and its tail starts when the hold ends.
    #[test]
    fn a_radio_held_connected_while_its_data_waits_starts_its_tail_after_the_hold() {
        let p = crate::energy::profile::builtin("huang2012-lte-phone").unwrap().unwrap();
        let ms = |x: f64| (x * 1e6).round() as u64;
        let mut log = RadioLog::default();
        log.receive_frame(SimTime(ms(300.0)), SimTime(ms(301.0)), 1500);
        // The next frame waits 5 s for the link (a trace with no capacity), then arrives.
        log.hold(SimTime(ms(301.0)), SimTime(ms(5301.0)));
        log.receive_frame(SimTime(ms(5301.0)), SimTime(ms(5302.0)), 1500);
        let tl = radio_timeline(log, SimTime(ms(6000.0)), RadioPolicy::AlwaysOn, SimDuration(0), &p.radio);
        let at = |t: f64| radio_state_at(&tl, ms(t)).unwrap();
        // Held: continuous reception (beta) throughout, no DRX on-durations, no idle.
        assert_eq!(at(301.0), (RadioState::Idle, 1.28804));
        assert_eq!(at(2000.0), (RadioState::Idle, 1.28804));
        assert_eq!(at(5300.9), (RadioState::Idle, 1.28804));
        // After the last frame the tail runs from its end.
        assert_eq!(at(5302.0 + 99.0), (RadioState::Idle, 1.28804));
        assert_eq!(at(5302.0 + 100.5), (RadioState::Idle, 1.6802));
        assert_eq!(tl.iter().filter(|seg| seg.2 == RadioState::Waking).count(), 1);
    }
}
