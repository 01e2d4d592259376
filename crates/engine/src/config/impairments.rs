//! Impairment settings, one kind per table, selected by `kind`. The behaviour of each kind lives
//! in `net::impair`; this file only reads and checks the numbers.

use super::{serde_units, typed};
use crate::error::EngineError;
use crate::units::SimDuration;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Impairment {
    /// Independent loss with probability `p`; with `reference_bytes`, `p` is the loss of a frame of
    /// that size and other sizes lose as under bit errors (net::impair::bernoulli).
    Bernoulli {
        p: f64,
        #[serde(skip_serializing_if = "Option::is_none")]
        reference_bytes: Option<u32>,
    },
    /// Independent bit errors at rate `ber`: a frame of n bits is lost with 1 − (1 − ber)^n.
    BitError { ber: f64 },
    /// Loss with probability `p` during `[offset + k*every, offset + k*every + on)`.
    /// `offset = "random"` draws the phase per run; impairments sharing a `phase_group` share it.
    PeriodicBurst {
        p: f64,
        #[serde(with = "serde_units::duration")]
        on: SimDuration,
        #[serde(with = "serde_units::duration")]
        every: SimDuration,
        offset: Phase,
        #[serde(skip_serializing_if = "Option::is_none")]
        phase_group: Option<String>,
    },
    /// Time-driven two-state channel; state lengths uniform in [min, max]. Impairments sharing a
    /// `phase_group` share the state timeline (one radio channel seen by both directions) and
    /// draw their losses independently.
    GilbertElliott {
        good: GeState,
        bad: GeState,
        #[serde(skip_serializing_if = "Option::is_none")]
        phase_group: Option<String>,
    },
    /// A `fraction` of packets is held back `extra_delay` so later packets overtake it.
    Reorder {
        fraction: f64,
        #[serde(with = "serde_units::duration")]
        extra_delay: SimDuration,
    },
    /// Extra delay uniform in [min, max]; with `keep_order`, no packet overtakes an earlier one.
    Jitter {
        #[serde(with = "serde_units::duration")]
        min: SimDuration,
        #[serde(with = "serde_units::duration")]
        max: SimDuration,
        keep_order: bool,
    },
    /// Route failure: everything crossing during `[offset + k*every, offset + k*every + down)` is
    /// lost, or with `mode = "hold"` buffered at the node before the break and sent on when the
    /// route is back (up to `hold_limit` packets per episode; the rest are lost).
    /// With `notify`, the node before the break tells the sender (ELFN, seed 002 §4).
    Outage {
        #[serde(with = "serde_units::duration")]
        down: SimDuration,
        #[serde(with = "serde_units::duration")]
        every: SimDuration,
        offset: Phase,
        #[serde(skip_serializing_if = "Option::is_none")]
        phase_group: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        notify: Option<RouteNotify>,
        mode: OutageMode,
        #[serde(skip_serializing_if = "Option::is_none")]
        hold_limit: Option<u32>,
    },
}

/// Where a periodic impairment's first window starts: a fixed offset, or `"random"`, a phase
/// drawn per run uniformly in [0, every). A perfectly periodic channel and a perfectly doubled
/// retransmission timer can lock in phase (a backed-off RTO that is a multiple of the period
/// lands every retransmission in the same part of the cycle), which no testbed sustains; a
/// random phase per run averages over where in the cycle the transfer starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    At(SimDuration),
    Random,
}

impl<'de> Deserialize<'de> for Phase {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        if v.as_str() == Some("random") {
            return Ok(Phase::Random);
        }
        serde_units::duration::deserialize(v)
            .map(Phase::At)
            .map_err(|e| serde::de::Error::custom(format!("{e}, or \"random\" (a phase drawn per run in [0, every))")))
    }
}

impl Serialize for Phase {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Phase::At(d) => serde_units::duration::serialize(d, s),
            Phase::Random => s.serialize_str("random"),
        }
    }
}

/// What a broken route does to the packets that reach it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OutageMode {
    /// Lost (no route, no buffering).
    #[default]
    Drop,
    /// Buffered until the route is restored, as ad hoc routing protocols hold packets while they
    /// repair a route.
    Hold,
}

/// Explicit link-failure notification (Holland & Vaidya's ELFN as used in seed 002 §4): the first
/// packet lost to an outage makes the node before the break send a route-failure message to the
/// sender, arriving `delay` later; with `restore`, a route-restored message follows `delay` after
/// the route comes back.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RouteNotify {
    #[serde(with = "serde_units::duration")]
    pub delay: SimDuration,
    #[serde(default = "yes")]
    pub restore: bool,
}

/// One state of the Gilbert-Elliott channel.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct GeState {
    /// Packet error rate in this state.
    pub per: f64,
    #[serde(with = "serde_units::duration")]
    pub min: SimDuration,
    #[serde(with = "serde_units::duration")]
    pub max: SimDuration,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBernoulli {
    p: f64,
    #[serde(default)]
    reference_bytes: Option<u32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBitError {
    ber: f64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPeriodicBurst {
    p: f64,
    #[serde(with = "serde_units::duration")]
    on: SimDuration,
    #[serde(with = "serde_units::duration")]
    every: SimDuration,
    #[serde(default)]
    offset: Option<Phase>,
    #[serde(default)]
    phase_group: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawGilbertElliott {
    good: GeState,
    bad: GeState,
    #[serde(default)]
    phase_group: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawReorder {
    fraction: f64,
    #[serde(with = "serde_units::duration")]
    extra_delay: SimDuration,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawJitter {
    #[serde(with = "serde_units::duration")]
    min: SimDuration,
    #[serde(with = "serde_units::duration")]
    max: SimDuration,
    #[serde(default = "yes")]
    keep_order: bool,
}

fn yes() -> bool {
    true
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOutage {
    #[serde(with = "serde_units::duration")]
    down: SimDuration,
    #[serde(with = "serde_units::duration")]
    every: SimDuration,
    #[serde(default)]
    offset: Option<Phase>,
    #[serde(default)]
    phase_group: Option<String>,
    #[serde(default)]
    notify: Option<RouteNotify>,
    #[serde(default)]
    mode: OutageMode,
    #[serde(default)]
    hold_limit: Option<u32>,
}

/// `phase_group` only means something with a random phase, and must name something.
fn phase_group(offset: Phase, group: Option<String>, path: String) -> Result<Option<String>, EngineError> {
    match group {
        Some(_) if offset != Phase::Random => Err(EngineError::config(path, "only applies with offset = \"random\"")),
        Some(g) if g.trim().is_empty() => Err(EngineError::config(path, "must be a non-empty name")),
        g => Ok(g),
    }
}

const KINDS: &str = "bernoulli, bit_error, periodic_burst, gilbert_elliott, reorder, jitter, outage";

fn probability(p: f64, path: String) -> Result<f64, EngineError> {
    if (0.0..=1.0).contains(&p) {
        Ok(p)
    } else {
        Err(EngineError::config(path, format!("must be a probability in [0, 1], got {p}")))
    }
}

fn positive(d: SimDuration, path: String) -> Result<SimDuration, EngineError> {
    if d.0 > 0 {
        Ok(d)
    } else {
        Err(EngineError::config(path, "must be > 0"))
    }
}

impl Impairment {
    /// Read one impairment table found at `prefix` (e.g. `path.forward.impairments.0`).
    pub(crate) fn from_value(v: &Value, prefix: &str) -> Result<Self, EngineError> {
        let at = |k: &str| format!("{prefix}.{k}");
        let Value::Object(map) = v else {
            return Err(EngineError::config(prefix, format!("expected a table with a `kind` ({KINDS})")));
        };
        let kind = match map.get("kind") {
            Some(Value::String(k)) => k.as_str(),
            Some(_) => return Err(EngineError::config(at("kind"), format!("expected a string, one of {KINDS}"))),
            None => return Err(EngineError::config(at("kind"), format!("missing; one of {KINDS}"))),
        };
        let mut rest = map.clone();
        rest.remove("kind");
        let rest = Value::Object(rest);
        Ok(match kind {
            "bernoulli" => {
                let r: RawBernoulli = typed(&rest, prefix)?;
                if r.reference_bytes == Some(0) {
                    return Err(EngineError::config(at("reference_bytes"), "must be a frame size of at least 1 byte, got 0"));
                }
                Impairment::Bernoulli { p: probability(r.p, at("p"))?, reference_bytes: r.reference_bytes }
            }
            "bit_error" => {
                let r: RawBitError = typed(&rest, prefix)?;
                if !(0.0..1.0).contains(&r.ber) {
                    return Err(EngineError::config(at("ber"), format!("must be a bit error rate in [0, 1), got {}", r.ber)));
                }
                Impairment::BitError { ber: r.ber }
            }
            "periodic_burst" => {
                let r: RawPeriodicBurst = typed(&rest, prefix)?;
                let every = positive(r.every, at("every"))?;
                if r.on > every {
                    return Err(EngineError::config(at("on"), "must not exceed `every`"));
                }
                let offset = r.offset.unwrap_or(Phase::At(SimDuration(every.0 - r.on.0)));
                Impairment::PeriodicBurst {
                    p: probability(r.p, at("p"))?,
                    on: r.on,
                    every,
                    offset,
                    phase_group: phase_group(offset, r.phase_group, at("phase_group"))?,
                }
            }
            "gilbert_elliott" => {
                let r: RawGilbertElliott = typed(&rest, prefix)?;
                for (name, s) in [("good", &r.good), ("bad", &r.bad)] {
                    probability(s.per, at(&format!("{name}.per")))?;
                    // The channel steps through every state change, so states shorter than a
                    // millisecond would make long runs crawl.
                    if s.min < SimDuration::from_millis(1) {
                        return Err(EngineError::config(at(&format!("{name}.min")), "must be at least 1ms"));
                    }
                    if s.max < s.min {
                        return Err(EngineError::config(at(&format!("{name}.max")), "must be >= min"));
                    }
                }
                if r.phase_group.as_deref().is_some_and(|g| g.trim().is_empty()) {
                    return Err(EngineError::config(at("phase_group"), "must be a non-empty name"));
                }
                Impairment::GilbertElliott { good: r.good, bad: r.bad, phase_group: r.phase_group }
            }
            "reorder" => {
                let r: RawReorder = typed(&rest, prefix)?;
                Impairment::Reorder { fraction: probability(r.fraction, at("fraction"))?, extra_delay: r.extra_delay }
            }
            "jitter" => {
                let r: RawJitter = typed(&rest, prefix)?;
                if r.max < r.min {
                    return Err(EngineError::config(at("max"), "must be >= min"));
                }
                Impairment::Jitter { min: r.min, max: r.max, keep_order: r.keep_order }
            }
            "outage" => {
                let r: RawOutage = typed(&rest, prefix)?;
                let every = positive(r.every, at("every"))?;
                if r.down > every {
                    return Err(EngineError::config(at("down"), "must not exceed `every`"));
                }
                if r.hold_limit.is_some() && r.mode != OutageMode::Hold {
                    return Err(EngineError::config(at("hold_limit"), "only applies with mode = \"hold\""));
                }
                let offset = r.offset.unwrap_or(Phase::At(SimDuration(every.0 - r.down.0)));
                Impairment::Outage {
                    down: r.down,
                    every,
                    offset,
                    phase_group: phase_group(offset, r.phase_group, at("phase_group"))?,
                    notify: r.notify,
                    mode: r.mode,
                    hold_limit: r.hold_limit,
                }
            }
            other => return Err(EngineError::config(at("kind"), format!("unknown impairment kind {other:?}; one of {KINDS}"))),
        })
    }
}
