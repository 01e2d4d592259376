//! Protocol-processing energy: protocol code reports each piece of work it does as an [`Op`]; the
//! device profile's cost table turns it into CPU cycles, busy time and joules.

use super::profile::CycleCosts;
use crate::units::{SimDuration, SimTime};

/// A unit of protocol work, charged where the work happens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// A data segment built and handed to the NIC, with its payload copied and checksummed.
    SegmentSent { bytes: u32 },
    /// A data segment taken from the NIC, checksummed and copied to the application.
    SegmentReceived { bytes: u32 },
    /// A pure ACK (or SYN/FIN without data) built and sent.
    AckSent,
    /// A pure ACK received and processed.
    AckReceived,
    /// Receiver: one SACK block written into an ACK.
    SackBlockGenerated,
    /// Sender: one SACK block parsed.
    SackBlockProcessed,
    /// Sender: one scoreboard entry changed.
    ScoreboardUpdate,
    /// A timer armed, re-armed or cancelled.
    TimerSet,
    /// A timer expiry handled.
    TimerExpired,
    /// Receiver: an out-of-order segment queued for reassembly.
    OutOfOrderQueued,
    /// A timestamps option processed, with the PAWS check (RFC 7323 §5).
    PawsCheck,
    /// A segment accepted by header prediction.
    FastPath,
    /// A segment that needed the full input path.
    SlowPath,
}

/// Number of distinct [`Op`] kinds (for per-kind counters).
pub const OP_KINDS: usize = 13;

impl Op {
    fn index(self) -> usize {
        match self {
            Op::SegmentSent { .. } => 0,
            Op::SegmentReceived { .. } => 1,
            Op::AckSent => 2,
            Op::AckReceived => 3,
            Op::SackBlockGenerated => 4,
            Op::SackBlockProcessed => 5,
            Op::ScoreboardUpdate => 6,
            Op::TimerSet => 7,
            Op::TimerExpired => 8,
            Op::OutOfOrderQueued => 9,
            Op::PawsCheck => 10,
            Op::FastPath => 11,
            Op::SlowPath => 12,
        }
    }

    /// Snake-case names, in `index` order, for result records.
    pub const NAMES: [&'static str; OP_KINDS] = [
        "segment_sent",
        "segment_received",
        "ack_sent",
        "ack_received",
        "sack_block_generated",
        "sack_block_processed",
        "scoreboard_update",
        "timer_set",
        "timer_expired",
        "ooo_queued",
        "paws_check",
        "fast_path",
        "slow_path",
    ];

    fn cycles(self, c: &CycleCosts) -> f64 {
        match self {
            Op::SegmentSent { bytes } => c.segment_sent + c.per_byte * bytes as f64,
            Op::SegmentReceived { bytes } => c.segment_received + c.per_byte * bytes as f64,
            Op::AckSent => c.ack_sent,
            Op::AckReceived => c.ack_received,
            Op::SackBlockGenerated => c.sack_block_generated,
            Op::SackBlockProcessed => c.sack_block_processed,
            Op::ScoreboardUpdate => c.scoreboard_update,
            Op::TimerSet => c.timer_set,
            Op::TimerExpired => c.timer_expired,
            Op::OutOfOrderQueued => c.ooo_queued,
            Op::PawsCheck => c.paws_check,
            Op::FastPath => c.fast_path,
            Op::SlowPath => c.slow_path,
        }
    }
}

/// One charge as the meter received it, kept so the same work can be costed under another
/// profile (the cycles of an operation depend on the profile, the operation does not).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Charge {
    Op(Op),
    /// A router forwarding one IP packet of this many bytes ([`CpuMeter::charge_forward`]).
    Forward { ip_len: u32 },
}

/// One node's CPU: a single server that runs charged work back to back. Busy intervals are kept
/// (merged when they touch) so the meter can tell system-idle time from busy time.
#[derive(Debug, Clone)]
pub struct CpuMeter {
    costs: Option<CycleCosts>,
    ns_per_cycle: f64,
    active_power_w: f64,
    busy_until: SimTime,
    /// Busy intervals `[start, end)` in time order.
    busy: Vec<(SimTime, SimTime)>,
    /// Cycles charged at `pending_at` and not yet turned into busy time.
    pending_cycles: f64,
    pending_at: SimTime,
    pub cycles: f64,
    /// Of `cycles`, those charged by [`CpuMeter::charge_cycles`].
    pub other_cycles: f64,
    pub op_counts: [u64; OP_KINDS],
    /// Every charge in order, when asked for ([`CpuMeter::keep_charges`]).
    charges: Option<Vec<(SimTime, Charge)>>,
}

impl CpuMeter {
    pub fn new(costs: &CycleCosts, frequency_hz: f64, active_power_w: f64) -> Self {
        Self {
            costs: Some(costs.clone()),
            ns_per_cycle: 1e9 / frequency_hz,
            active_power_w,
            busy_until: SimTime::ZERO,
            busy: Vec::new(),
            pending_cycles: 0.0,
            pending_at: SimTime::ZERO,
            cycles: 0.0,
            other_cycles: 0.0,
            op_counts: [0; OP_KINDS],
            charges: None,
        }
    }

    /// A meter that counts operations but charges nothing (for protocol unit tests).
    pub fn disabled() -> Self {
        Self {
            costs: None,
            ns_per_cycle: 0.0,
            active_power_w: 0.0,
            busy_until: SimTime::ZERO,
            busy: Vec::new(),
            pending_cycles: 0.0,
            pending_at: SimTime::ZERO,
            cycles: 0.0,
            other_cycles: 0.0,
            op_counts: [0; OP_KINDS],
            charges: None,
        }
    }

    /// Charge one operation performed at `now`. Work charged at the same instant is gathered and
    /// turned into one busy interval when time moves on (or when the meter is read).
    #[inline]
    pub fn charge(&mut self, now: SimTime, op: Op) {
        self.op_counts[op.index()] += 1;
        if self.charges.is_some() {
            self.keep(now, Charge::Op(op));
        }
        let Some(costs) = &self.costs else { return };
        let cycles = op.cycles(costs);
        if now != self.pending_at {
            self.flush();
            self.pending_at = now;
        }
        self.pending_cycles += cycles;
    }

    /// Charge `cycles` of work that is not a protocol operation of an endpoint (a router
    /// forwarding a packet), counted apart in `other_cycles`.
    #[inline]
    pub fn charge_cycles(&mut self, now: SimTime, cycles: f64) {
        if self.costs.is_none() {
            return;
        }
        self.other_cycles += cycles;
        if now != self.pending_at {
            self.flush();
            self.pending_at = now;
        }
        self.pending_cycles += cycles;
    }

    /// Cycles of a router forwarding one IP packet of `ip_len` bytes: `cycles.forward` +
    /// `cycles.forward_per_byte` x length when the profile gives them, else the per-packet cost of
    /// receiving and of sending a packet without payload (driver, IP and the 52-byte card
    /// transfers) plus `per_byte` for the packet's other bytes crossing the card (docs/models/network.md).
    pub fn forward_cycles(&self, ip_len: u32) -> f64 {
        let Some(c) = &self.costs else { return 0.0 };
        let fixed = c.forward.unwrap_or(c.ack_received + c.ack_sent);
        let per_byte = c.forward_per_byte.unwrap_or(c.per_byte);
        fixed + per_byte * ip_len.saturating_sub(52) as f64
    }

    /// Charge a router's forwarding of one IP packet of `ip_len` bytes ([`CpuMeter::forward_cycles`]).
    #[inline]
    pub fn charge_forward(&mut self, now: SimTime, ip_len: u32) {
        if self.charges.is_some() {
            self.keep(now, Charge::Forward { ip_len });
        }
        let cycles = self.forward_cycles(ip_len);
        self.charge_cycles(now, cycles);
    }

    /// Out of the charging path: most runs keep no charges.
    #[cold]
    #[inline(never)]
    fn keep(&mut self, now: SimTime, c: Charge) {
        if let Some(log) = &mut self.charges {
            log.push((now, c));
        }
    }

    /// Keep every charge from now on, so [`CpuMeter::replay`] can cost the same work under
    /// another profile.
    pub fn keep_charges(&mut self) {
        self.charges.get_or_insert_with(Vec::new);
    }

    /// The charges kept so far, in order (empty unless [`CpuMeter::keep_charges`]).
    pub fn charges(&self) -> &[(SimTime, Charge)] {
        self.charges.as_deref().unwrap_or(&[])
    }

    /// A meter with another profile's costs that received the same charges in the same order:
    /// the meter that profile's run would have ended with, since charges never change the run.
    pub fn replay(charges: &[(SimTime, Charge)], costs: &CycleCosts, frequency_hz: f64, active_power_w: f64) -> Self {
        let mut cpu = Self::new(costs, frequency_hz, active_power_w);
        for &(at, c) in charges {
            match c {
                Charge::Op(op) => cpu.charge(at, op),
                Charge::Forward { ip_len } => cpu.charge_forward(at, ip_len),
            }
        }
        cpu
    }

    /// Turn the work gathered at `pending_at` into busy time.
    fn flush(&mut self) {
        let cycles = std::mem::take(&mut self.pending_cycles);
        if cycles <= 0.0 {
            return;
        }
        self.cycles += cycles;
        // Nearest nanosecond (cycles and the clock are positive, so +0.5 and truncation round).
        let dur = SimDuration((cycles * self.ns_per_cycle + 0.5) as u64);
        if dur.0 == 0 {
            return;
        }
        let now = self.pending_at;
        if now <= self.busy_until && !self.busy.is_empty() {
            // Queued behind work still running: extend the current busy interval.
            self.busy_until += dur;
            self.busy.last_mut().expect("non-empty").1 = self.busy_until;
        } else {
            self.busy_until = now + dur;
            self.busy.push((now, self.busy_until));
        }
    }

    /// Busy intervals `[start, end)` in time order, including work charged last.
    pub fn busy_intervals(&mut self) -> &[(SimTime, SimTime)] {
        self.flush();
        &self.busy
    }

    pub fn count(&self, op_index: usize) -> u64 {
        self.op_counts[op_index]
    }


    pub fn active_power_w(&self) -> f64 {
        self.active_power_w
    }
}
