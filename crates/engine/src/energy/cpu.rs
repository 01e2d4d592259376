//! Protocol-processing energy: protocol code reports each piece of work it does as an [`Op`]; the
//! device profile's cost table turns it into CPU cycles, busy time and joules. Each operation and
//! cost figure is declared once, in [`CYCLE_FIGURES`]'s table below: the enum, the record names,
//! the profile keys, their defaults and the calibration keys all come from it.

use super::profile::{CardInterface, DeviceProfile};
use crate::units::{SimDuration, SimTime};
use serde::de::{Deserializer, Error as _, MapAccess, Visitor};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use std::fmt;

/// One cycle-cost figure of a device profile (`cpu.cycles.KEY`): the table below is the only
/// place each is named. An operation's count in records goes by the same key.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CycleFigure {
    /// Key under `cpu.cycles` in a profile, and the tail of its calibration key.
    pub key: &'static str,
    /// Cycles charged when a profile omits the figure; `None`: every profile must give it.
    pub default: Option<f64>,
    /// Whether the figure is charged per payload byte rather than per operation.
    pub per_byte: bool,
    /// The protocol operation that charges it, if it is one (`per_byte` is charged by the
    /// operations that move payload).
    pub operation: bool,
    pub doc: &'static str,
}

/// Declares every figure once, in display order, and derives from that one list the [`Op`]
/// enum, each operation's figure and the table [`CYCLE_FIGURES`].
macro_rules! cycle_figures {
    ($( $key:ident $(= $op:ident $({ $field:ident })?)?, default $default:expr, $doc:literal; )+) => {
        /// A unit of protocol work, charged where the work happens.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Op {
            $($( #[doc = $doc] $op $({ $field: u32 })?, )?)+
        }

        /// Operations in table order (their index in per-kind counters).
        #[derive(Clone, Copy)]
        enum Kind {
            $($( $op, )?)+
        }

        /// Figures in table order (their index in [`CycleCosts`]).
        #[allow(non_camel_case_types, dead_code)]
        #[derive(Clone, Copy)]
        enum Fig {
            $( $key, )+
        }

        impl Op {
            /// This operation's counter index, and the payload bytes it moves.
            #[inline]
            fn parts(self) -> (usize, Option<u32>) {
                match self {
                    $($( Op::$op $({ $field })? => (Kind::$op as usize, cycle_figures!(@bytes $($field)?)), )?)+
                }
            }
        }

        /// Every cycle-cost figure, in the order profiles, records and calibration list them.
        pub const CYCLE_FIGURES: &[CycleFigure] = &[
            $( CycleFigure {
                key: stringify!($key),
                default: $default,
                per_byte: cycle_figures!(@per_byte $key),
                operation: cycle_figures!(@is_op $($op)?),
                doc: $doc,
            }, )+
        ];
    };
    (@bytes $f:ident) => { Some($f) };
    (@bytes) => { None };
    (@per_byte per_byte) => { true };
    (@per_byte $other:ident) => { false };
    (@is_op $op:ident) => { true };
    (@is_op) => { false };
}

cycle_figures! {
    segment_sent = SegmentSent { bytes }, default None,
        "A data segment built and handed to the NIC, with its payload copied and checksummed (plus `per_byte` for each payload byte).";
    segment_received = SegmentReceived { bytes }, default None,
        "A data segment taken from the NIC, checksummed and copied to the application (plus `per_byte` for each payload byte).";
    per_byte, default None,
        "Each payload byte sent or received: memory copy, checksum and the transfer to the card.";
    ack_sent = AckSent, default None, "A pure ACK (or SYN/FIN without data) built and sent.";
    ack_received = AckReceived, default None, "A pure ACK received and processed.";
    // The per-mechanism figures default to 0 cycles (not costed), so an operation added here
    // leaves every existing profile, and its results, as they were.
    sack_block_generated = SackBlockGenerated, default Some(0.0), "Receiver: one SACK block written into an ACK.";
    sack_block_processed = SackBlockProcessed, default Some(0.0), "Sender: one SACK block parsed.";
    scoreboard_update = ScoreboardUpdate, default Some(0.0), "Sender: one scoreboard entry changed.";
    timer_set = TimerSet, default Some(0.0), "A timer armed, re-armed or cancelled.";
    timer_expired = TimerExpired, default Some(0.0), "A timer expiry handled.";
    ooo_queued = OutOfOrderQueued, default Some(0.0), "Receiver: an out-of-order segment queued for reassembly.";
    paws_check = PawsCheck, default Some(0.0), "A timestamps option processed, with the PAWS check (RFC 7323 §5).";
    fast_path = FastPath, default Some(0.0), "A segment accepted by header prediction.";
    slow_path = SlowPath, default Some(0.0), "A segment that needed the full input path.";
}

/// Number of distinct [`Op`] kinds (for per-kind counters).
pub const OP_KINDS: usize = {
    let mut n = 0;
    let mut i = 0;
    while i < CYCLE_FIGURES.len() {
        n += CYCLE_FIGURES[i].operation as usize;
        i += 1;
    }
    n
};

const FIGURES: usize = CYCLE_FIGURES.len();

impl Op {
    /// Snake-case names of the operations, in counter order, for result records.
    pub const NAMES: [&'static str; OP_KINDS] = {
        let mut names = [""; OP_KINDS];
        let (mut i, mut k) = (0, 0);
        while i < FIGURES {
            if CYCLE_FIGURES[i].operation {
                names[k] = CYCLE_FIGURES[i].key;
                k += 1;
            }
            i += 1;
        }
        names
    };
}

/// Cycles charged per protocol operation: a profile's `cpu.cycles` table. Every figure of
/// [`CYCLE_FIGURES`], those with a default optional; plus the router's forwarding costs.
#[derive(Debug, Clone, PartialEq)]
pub struct CycleCosts {
    figures: [f64; FIGURES],
    /// Forwarding one IP packet at a router: cycles per packet and per byte; unset = derived
    /// from the endpoint costs (`CpuMeter::forward_cycles`).
    pub forward: Option<f64>,
    pub forward_per_byte: Option<f64>,
}

impl CycleCosts {
    /// The figure `key` (a [`CycleFigure::key`]).
    pub fn get(&self, key: &str) -> Option<f64> {
        CYCLE_FIGURES.iter().position(|f| f.key == key).map(|i| self.figures[i])
    }

    /// Every figure with its key, in table order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, f64)> + '_ {
        CYCLE_FIGURES.iter().zip(self.figures.iter()).map(|(f, v)| (f.key, *v))
    }

    /// Costs with every figure at `cycles` (tests and examples).
    pub fn uniform(cycles: f64) -> Self {
        Self { figures: [cycles; FIGURES], forward: None, forward_per_byte: None }
    }
}

const FORWARD: &str = "forward";
const FORWARD_PER_BYTE: &str = "forward_per_byte";

impl Serialize for CycleCosts {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let extra = self.forward.is_some() as usize + self.forward_per_byte.is_some() as usize;
        let mut m = s.serialize_map(Some(FIGURES + extra))?;
        for (k, v) in self.iter() {
            m.serialize_entry(k, &v)?;
        }
        if let Some(v) = self.forward {
            m.serialize_entry(FORWARD, &v)?;
        }
        if let Some(v) = self.forward_per_byte {
            m.serialize_entry(FORWARD_PER_BYTE, &v)?;
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for CycleCosts {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Costs;
        impl<'de> Visitor<'de> for Costs {
            type Value = CycleCosts;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("struct CycleCosts")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<CycleCosts, A::Error> {
                let mut given: [Option<f64>; FIGURES] = [None; FIGURES];
                let (mut forward, mut forward_per_byte) = (None, None);
                while let Some(key) = map.next_key::<String>()? {
                    let slot = match CYCLE_FIGURES.iter().position(|f| f.key == key) {
                        Some(i) => &mut given[i],
                        None if key == FORWARD => &mut forward,
                        None if key == FORWARD_PER_BYTE => &mut forward_per_byte,
                        None => {
                            let known: Vec<String> =
                                CYCLE_FIGURES.iter().map(|f| f.key).chain([FORWARD, FORWARD_PER_BYTE]).map(|k| format!("`{k}`")).collect();
                            return Err(A::Error::custom(format!("unknown field `{key}`, expected one of {}", known.join(", "))));
                        }
                    };
                    if slot.is_some() {
                        return Err(A::Error::custom(format!("duplicate field `{key}`")));
                    }
                    *slot = Some(map.next_value::<f64>()?);
                }
                let mut figures = [0.0; FIGURES];
                for (i, f) in CYCLE_FIGURES.iter().enumerate() {
                    figures[i] = match given[i].or(f.default) {
                        Some(v) => v,
                        None => return Err(A::Error::custom(format!("missing field `{}`", f.key))),
                    };
                }
                Ok(CycleCosts { figures, forward, forward_per_byte })
            }
        }
        d.deserialize_map(Costs)
    }
}

/// The operations a protocol component performed, in order, with when: protocol code reports
/// here and never sees a meter; the world drains the log into the node's [`CpuMeter`]
/// ([`CpuMeter::absorb`]), which charges them exactly as if charged directly.
#[derive(Debug, Clone, Default)]
pub struct OpLog {
    ops: Vec<(SimTime, Op)>,
}

impl OpLog {
    /// Note that `op` was performed at `now`.
    #[inline]
    pub fn report(&mut self, now: SimTime, op: Op) {
        self.ops.push((now, op));
    }

    /// Move everything `other` holds to the end of this log.
    #[inline]
    pub fn append(&mut self, other: &mut OpLog) {
        // A call reports a few operations: copying them one by one beats a call to memcpy.
        for &x in &other.ops {
            self.ops.push(x);
        }
        other.ops.clear();
    }

    /// Take the reported operations, oldest first.
    #[inline]
    pub fn drain(&mut self) -> std::vec::Drain<'_, (SimTime, Op)> {
        self.ops.drain(..)
    }

    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }
}

/// One charge as the meter received it, kept so the same work can be costed under another
/// profile (the cycles of an operation depend on the profile, the operation does not).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Charge {
    Op(Op),
    /// A router forwarding one IP packet of this many bytes ([`CpuMeter::charge_forward`]).
    Forward { ip_len: u32 },
    /// One IP packet of this many bytes moved between host and radio card ([`CpuMeter::charge_card`]).
    Card { ip_len: u32 },
}

/// One node's CPU: a single server that runs charged work back to back. Busy intervals are kept
/// (merged when they touch) so the meter can tell system-idle time from busy time.
#[derive(Debug, Clone)]
pub struct CpuMeter {
    costs: Option<CycleCosts>,
    /// Each operation's own figure by counter index, and the per-byte figure, looked up once.
    op_cycles: [f64; OP_KINDS],
    per_byte: f64,
    /// A router's cycles per forwarded packet, and per byte beyond the first 52 (looked up once).
    forward_fixed: f64,
    forward_per_byte: f64,
    ns_per_cycle: f64,
    active_power_w: f64,
    /// The radio card's host interface, when the profile models it.
    card: Option<CardInterface>,
    busy_until: SimTime,
    /// Busy intervals `[start, end)` in time order.
    busy: Vec<(SimTime, SimTime)>,
    /// Cycles charged at `pending_at` and not yet turned into busy time.
    pending_cycles: f64,
    pending_at: SimTime,
    pub cycles: f64,
    /// Of `cycles`, those charged by [`CpuMeter::charge_cycles`].
    pub other_cycles: f64,
    /// Each packet moved between host and card: when, and the CPU time it took (ns; in `cycles`
    /// too). Empty unless the profile has a card interface.
    card_work: Vec<(SimTime, f64)>,
    pub op_counts: [u64; OP_KINDS],
    /// Every charge in order, when asked for ([`CpuMeter::keep_charges`]).
    charges: Option<Vec<(SimTime, Charge)>>,
}

impl CpuMeter {
    pub fn new(costs: &CycleCosts, frequency_hz: f64, active_power_w: f64) -> Self {
        Self {
            costs: Some(costs.clone()),
            op_cycles: std::array::from_fn(|k| costs.figures[Self::figure_of(k)]),
            per_byte: costs.figures[Fig::per_byte as usize],
            forward_fixed: costs.forward.unwrap_or(costs.figures[Fig::ack_received as usize] + costs.figures[Fig::ack_sent as usize]),
            forward_per_byte: costs.forward_per_byte.unwrap_or(costs.figures[Fig::per_byte as usize]),
            ns_per_cycle: 1e9 / frequency_hz,
            active_power_w,
            card: None,
            busy_until: SimTime::ZERO,
            busy: Vec::new(),
            pending_cycles: 0.0,
            pending_at: SimTime::ZERO,
            cycles: 0.0,
            other_cycles: 0.0,
            card_work: Vec::new(),
            op_counts: [0; OP_KINDS],
            charges: None,
        }
    }

    /// The meter of a node with `profile`: its cycle costs, clock, active power and card interface.
    pub fn for_profile(profile: &DeviceProfile) -> Self {
        let c = &profile.cpu;
        let mut m = Self::new(&c.cycles, c.frequency_hz, c.active_power_w);
        m.card = profile.card;
        m
    }

    /// A meter that counts operations but charges nothing (for protocol unit tests).
    pub fn disabled() -> Self {
        Self {
            costs: None,
            op_cycles: [0.0; OP_KINDS],
            per_byte: 0.0,
            forward_fixed: 0.0,
            forward_per_byte: 0.0,
            ns_per_cycle: 0.0,
            active_power_w: 0.0,
            card: None,
            busy_until: SimTime::ZERO,
            busy: Vec::new(),
            pending_cycles: 0.0,
            pending_at: SimTime::ZERO,
            cycles: 0.0,
            other_cycles: 0.0,
            card_work: Vec::new(),
            op_counts: [0; OP_KINDS],
            charges: None,
        }
    }

    /// Charge one operation performed at `now`. Work charged at the same instant is gathered and
    /// turned into one busy interval when time moves on (or when the meter is read).
    #[inline]
    pub fn charge(&mut self, now: SimTime, op: Op) {
        let (k, bytes) = op.parts();
        self.op_counts[k] += 1;
        if self.charges.is_some() {
            self.keep(now, Charge::Op(op));
        }
        if self.costs.is_none() {
            return;
        }
        // The same sum as Op::cycles, from the figures looked up at construction.
        let cycles = match bytes {
            Some(b) => self.op_cycles[k] + self.per_byte * b as f64,
            None => self.op_cycles[k],
        };
        if now != self.pending_at {
            self.flush();
            self.pending_at = now;
        }
        self.pending_cycles += cycles;
    }

    /// Charge every operation a component reported, in the order reported.
    #[inline(always)]
    pub fn absorb(&mut self, log: &mut OpLog) {
        // Many calls report nothing: only the test is inlined at the call site.
        if !log.ops.is_empty() {
            self.absorb_all(log);
        }
    }

    // Inlined where logs are absorbed (a few places, once or twice per event): the call's own
    // cost is a fair share of charging the few operations a log holds.
    #[inline(always)]
    fn absorb_all(&mut self, log: &mut OpLog) {
        if self.charges.is_some() || self.costs.is_none() {
            self.absorb_charging(log);
        } else {
            // The common case, `charge` without its two rare branches: the same sums in the
            // same order, so the same busy time to the bit.
            for &(at, op) in &log.ops {
                let (k, bytes) = op.parts();
                self.op_counts[k] += 1;
                let cycles = match bytes {
                    Some(b) => self.op_cycles[k] + self.per_byte * b as f64,
                    None => self.op_cycles[k],
                };
                if at != self.pending_at {
                    self.flush();
                    self.pending_at = at;
                }
                self.pending_cycles += cycles;
            }
        }
        log.ops.clear();
    }

    /// [`CpuMeter::absorb`] through `charge`, for a meter that keeps charges or charges nothing:
    /// out of line, so the common case is small enough to inline where logs are absorbed.
    #[inline(never)]
    fn absorb_charging(&mut self, log: &OpLog) {
        for &(at, op) in &log.ops {
            self.charge(at, op);
        }
    }

    /// The figure index of the operation with counter index `k`.
    fn figure_of(k: usize) -> usize {
        let mut seen = 0;
        for (i, f) in CYCLE_FIGURES.iter().enumerate() {
            if f.operation {
                if seen == k {
                    return i;
                }
                seen += 1;
            }
        }
        unreachable!("counter index {k} beyond the table")
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
        if self.costs.is_none() {
            return 0.0;
        }
        self.forward_fixed + self.forward_per_byte * ip_len.saturating_sub(52) as f64
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

    /// Charge moving one IP packet of `ip_len` bytes between host and radio card at `now` (handed
    /// to the card to be sent, or taken from it on arrival): the card interface's time for it, at
    /// the CPU's active power. Nothing when the profile has no card interface.
    #[inline]
    pub fn charge_card(&mut self, now: SimTime, ip_len: u32) {
        if self.charges.is_some() {
            self.keep(now, Charge::Card { ip_len });
        }
        let (Some(card), Some(_)) = (self.card, &self.costs) else { return };
        let t = card.time_ns(ip_len);
        self.card_work.push((now, t));
        if now != self.pending_at {
            self.flush();
            self.pending_at = now;
        }
        // Held as cycles like the rest of the work gathered at this instant: flush turns them
        // back into the same nanoseconds.
        self.pending_cycles += t / self.ns_per_cycle;
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
    pub fn replay(charges: &[(SimTime, Charge)], profile: &DeviceProfile) -> Self {
        let mut cpu = Self::for_profile(profile);
        for &(at, c) in charges {
            match c {
                Charge::Op(op) => cpu.charge(at, op),
                Charge::Forward { ip_len } => cpu.charge_forward(at, ip_len),
                Charge::Card { ip_len } => cpu.charge_card(at, ip_len),
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

    /// Room for `packets` crossings of the card interface, when the profile has one.
    pub fn reserve_card(&mut self, packets: usize) {
        if self.card.is_some() && self.costs.is_some() {
            self.card_work.reserve(packets);
        }
    }

    /// CPU seconds spent on the card interface for the packets it handled before `w`.
    pub fn card_s(&self, w: SimTime) -> f64 {
        self.card_work.iter().take_while(|c| c.0 < w).map(|c| c.1).sum::<f64>() * 1e-9
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

#[cfg(test)]
mod tests {
    use super::*;

    fn costs() -> CycleCosts {
        let mut c = CycleCosts::uniform(0.0);
        for (i, v) in c.figures.iter_mut().enumerate() {
            *v = 100.0 + 37.3 * i as f64;
        }
        c
    }

    /// Work reported into a log and absorbed later makes the same busy intervals, cycles and
    /// counts as the same work charged directly, in the same order (the energy figures rest on it).
    #[test]
    fn absorbing_a_log_charges_exactly_as_charging_directly() {
        let work = [
            (SimTime(10), Op::AckReceived),
            (SimTime(10), Op::SlowPath),
            (SimTime(10), Op::SackBlockProcessed),
            (SimTime(10), Op::SegmentSent { bytes: 1460 }),
            (SimTime(2_000), Op::TimerSet),
            (SimTime(2_000), Op::SegmentReceived { bytes: 512 }),
        ];
        let mut direct = CpuMeter::new(&costs(), 500e6, 1.0);
        for (t, op) in work {
            direct.charge(t, op);
        }
        let mut via_log = CpuMeter::new(&costs(), 500e6, 1.0);
        let mut log = OpLog::default();
        for (t, op) in work {
            log.report(t, op);
        }
        via_log.absorb(&mut log);
        assert!(log.is_empty());
        assert_eq!(via_log.busy_intervals(), direct.busy_intervals());
        assert_eq!(via_log.cycles.to_bits(), direct.cycles.to_bits());
        assert_eq!(via_log.op_counts, direct.op_counts);
    }

    #[test]
    fn operations_charge_their_figure_and_per_byte_for_the_payload_they_move() {
        let c = costs();
        let f = |k: &str| c.get(k).unwrap();
        let cycles = |op: Op| {
            let mut m = CpuMeter::new(&c, 1e9, 1.0);
            m.charge(SimTime(1), op);
            m.busy_intervals();
            m.cycles
        };
        assert_eq!(cycles(Op::SegmentSent { bytes: 10 }), f("segment_sent") + f("per_byte") * 10.0);
        assert_eq!(cycles(Op::SegmentReceived { bytes: 3 }), f("segment_received") + f("per_byte") * 3.0);
        assert_eq!(cycles(Op::PawsCheck), f("paws_check"));
        // Every figure but per_byte is an operation, counted under the figure's key.
        assert_eq!(Op::NAMES.len(), CYCLE_FIGURES.len() - 1);
        let mut m = CpuMeter::disabled();
        m.charge(SimTime(1), Op::OutOfOrderQueued);
        let counted: Vec<&str> = (0..OP_KINDS).filter(|&k| m.count(k) > 0).map(|k| Op::NAMES[k]).collect();
        assert_eq!(counted, ["ooo_queued"]);
    }
}
