//! Channel impairments, applied in list order to each packet as it leaves the transmitter:
//! a drop stops the list; delays add up. One file per kind; each owns its random stream.

mod bernoulli;
mod bit_error;
mod gilbert_elliott;
mod jitter;
mod outage;
mod periodic;
mod reorder;

use crate::config::{Impairment, Phase};
use crate::sim::rng::Stream;
use crate::units::{SimDuration, SimTime};

pub use periodic::PeriodicWindow;

/// What an impairment does to one packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    Delay(SimDuration),
    /// Buffered by a broken route and delivered this much later (an outage in hold mode).
    Hold(SimDuration),
    Drop(DropCause),
}

/// Why a packet was lost (for counters and traces).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropCause {
    Random,
    Burst,
    Outage,
    QueueFull,
}

/// One configured impairment with its state and random stream.
#[derive(Debug, Clone)]
pub enum AnyImpairment {
    Bernoulli(bernoulli::Bernoulli),
    BitError(bit_error::BitError),
    PeriodicBurst(periodic::PeriodicBurst),
    GilbertElliott(gilbert_elliott::GilbertElliott),
    Reorder(reorder::Reorder),
    Jitter(jitter::Jitter),
    Outage(outage::Outage),
}

impl AnyImpairment {
    /// Build from config; `name` (the scenario path) seeds the random stream.
    pub fn new(cfg: &Impairment, run_seed: u64, name: &str) -> Self {
        let rng = Stream::new(run_seed, name);
        match *cfg {
            Impairment::Bernoulli { p, reference_bytes } => Self::Bernoulli(bernoulli::Bernoulli::new(p, reference_bytes, rng)),
            Impairment::BitError { ber } => Self::BitError(bit_error::BitError::new(ber, rng)),
            Impairment::PeriodicBurst { p, on, every, offset, ref phase_group } => {
                let window = window(on, every, offset, run_seed, name, phase_group.as_deref());
                Self::PeriodicBurst(periodic::PeriodicBurst::new(p, window, rng))
            }
            Impairment::GilbertElliott { good, bad, ref phase_group } => {
                let mut ge = gilbert_elliott::GilbertElliott::new(good, bad, rng);
                if let Some(g) = phase_group {
                    ge = ge.with_timeline(Stream::new(run_seed, &format!("gilbert_elliott phase group {g}")));
                }
                Self::GilbertElliott(ge)
            }
            Impairment::Reorder { fraction, extra_delay } => Self::Reorder(reorder::Reorder::new(fraction, extra_delay, rng)),
            Impairment::Jitter { min, max, keep_order } => Self::Jitter(jitter::Jitter::new(min, max, keep_order, rng)),
            Impairment::Outage { down, every, offset, ref phase_group, notify, mode, hold_limit } => {
                let window = window(down, every, offset, run_seed, name, phase_group.as_deref());
                Self::Outage(outage::Outage::new(window, notify, mode, hold_limit))
            }
        }
    }

    /// Decide the fate of a frame of `bytes` bytes leaving the transmitter at `now`.
    #[inline]
    pub fn on_packet(&mut self, now: SimTime, bytes: u32) -> Verdict {
        match self {
            Self::Bernoulli(i) => i.on_packet(now, bytes),
            Self::BitError(i) => i.on_packet(now, bytes),
            Self::PeriodicBurst(i) => i.on_packet(now),
            Self::GilbertElliott(i) => i.on_packet(now),
            Self::Reorder(i) => i.on_packet(now),
            Self::Jitter(i) => i.on_packet(now),
            Self::Outage(i) => i.on_packet(now),
        }
    }
}

/// The offset of a periodic impairment for this run. A random phase comes from its own stream,
/// named after the component (`<name>.phase`) or its phase group (`phase.<group>`): the same
/// seed gives every variant the same channel, a group gives its members one phase (a route
/// that fails in both directions at once), and the per-packet draws of a burst are untouched.
pub fn phase(offset: Phase, every: SimDuration, run_seed: u64, name: &str, group: Option<&str>) -> SimDuration {
    let stream = match group {
        Some(g) => format!("phase.{g}"),
        None => format!("{name}.phase"),
    };
    match offset {
        Phase::At(d) => d,
        // One draw in [0, every).
        Phase::Random => {
            let u = Stream::new(run_seed, &stream).uniform();
            SimDuration(((u * every.0 as f64) as u64).min(every.0.saturating_sub(1)))
        }
    }
}

/// The window of a periodic impairment for this run: a random phase makes it stationary (the
/// cycle runs on before the phase too), a fixed offset keeps the clean start.
fn window(on: SimDuration, every: SimDuration, offset: Phase, run_seed: u64, name: &str, group: Option<&str>) -> PeriodicWindow {
    let shift = if offset == Phase::Random { every } else { SimDuration::ZERO };
    PeriodicWindow { on, every, offset: phase(offset, every, run_seed, name, group), shift }
}

/// A route-failure notice owed to the sender: failure at `fail_at`, restoration at `restore_at`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RouteNotice {
    pub fail_at: SimTime,
    pub restore_at: Option<SimTime>,
}

/// After a packet was lost or held at `now`: a notice if an outage with notification caused it and
/// this outage episode has not been reported yet.
pub fn route_notice(list: &mut [AnyImpairment], now: SimTime) -> Option<RouteNotice> {
    list.iter_mut().find_map(|imp| match imp {
        AnyImpairment::Outage(o) => o.notice(now),
        _ => None,
    })
}

/// Apply a list of impairments in order to a frame of `bytes` bytes.
#[inline]
pub fn apply(list: &mut [AnyImpairment], now: SimTime, bytes: u32) -> Verdict {
    let mut extra = SimDuration::ZERO;
    let mut held = false;
    for imp in list.iter_mut() {
        match imp.on_packet(now, bytes) {
            Verdict::Pass => {}
            Verdict::Delay(d) => extra = extra + d,
            Verdict::Hold(d) => {
                held = true;
                extra = extra + d;
            }
            drop @ Verdict::Drop(_) => return drop,
        }
    }
    if held {
        Verdict::Hold(extra)
    } else if extra.0 == 0 {
        Verdict::Pass
    } else {
        Verdict::Delay(extra)
    }
}
