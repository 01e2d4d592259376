//! The `[metrics]` table of a network scenario (docs/models/metrics.md): the weights of the seeds'
//! efficiency metrics and, optionally, the network's Tmax.

use super::{serde_units, typed};
use crate::error::EngineError;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Default)]
pub struct MetricsConfig {
    #[serde(flatten)]
    pub weights: MetricWeights,
    /// The network's Tmax (bit/s); `None`: each flow's bottleneck fair share, summed.
    #[serde(skip_serializing_if = "Option::is_none", with = "serde_units::opt_rate")]
    pub tmax: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMetrics {
    #[serde(default)]
    eee_a: Option<f64>,
    #[serde(default)]
    eee_b: Option<f64>,
    #[serde(default)]
    uar_k: Option<f64>,
    #[serde(default)]
    uar_l: Option<f64>,
    /// Seed 001's radio types: the overhead weights of data and time they stand for.
    #[serde(default)]
    radio: Option<String>,
    #[serde(default)]
    overhead_data: Option<f64>,
    #[serde(default)]
    overhead_time: Option<f64>,
    #[serde(default, with = "serde_units::opt_rate")]
    tmax: Option<u64>,
}

fn err(path: impl Into<String>, message: impl Into<String>) -> EngineError {
    EngineError::config(path, message)
}

/// Read `[metrics]` (absent: the defaults).
pub(crate) fn read(doc: &Value) -> Result<MetricsConfig, EngineError> {
    let Some(v) = doc.get("metrics") else { return Ok(MetricsConfig::default()) };
    let raw: RawMetrics = typed(v, "metrics")?;
    let mut w = MetricWeights::default();
    if let Some(radio) = &raw.radio {
        // Seed 001 §3: an always-on radio pays for time, an ideal one for data, its
        // intermediate radio for both equally.
        (w.overhead_data, w.overhead_time) = match radio.as_str() {
            "always_on" => (0.0, 1.0),
            "intermediate" => (0.5, 0.5),
            "ideal" => (1.0, 0.0),
            other => return Err(err("metrics.radio", format!("unknown radio type {other:?}; one of always_on, intermediate, ideal"))),
        };
        if raw.overhead_data.is_some() || raw.overhead_time.is_some() {
            return Err(err("metrics.radio", "give radio or overhead_data and overhead_time, not both"));
        }
    }
    for (key, given, slot) in [
        ("uar_k", raw.uar_k, &mut w.uar_k),
        ("uar_l", raw.uar_l, &mut w.uar_l),
        ("overhead_data", raw.overhead_data, &mut w.overhead_data),
        ("overhead_time", raw.overhead_time, &mut w.overhead_time),
    ] {
        if let Some(x) = given {
            if !(0.0..=1.0).contains(&x) {
                return Err(err(format!("metrics.{key}"), format!("must be between 0 and 1, got {x}")));
            }
            *slot = x;
        }
    }
    for (key, given, slot) in [("eee_a", raw.eee_a, &mut w.eee_a), ("eee_b", raw.eee_b, &mut w.eee_b)] {
        if let Some(x) = given {
            // Seed 004 calibrates a = 5 on its card: not a share, but never negative.
            if !(x.is_finite() && x >= 0.0) {
                return Err(err(format!("metrics.{key}"), format!("must be >= 0, got {x}")));
            }
            *slot = x;
        }
    }
    if raw.tmax == Some(0) {
        return Err(err("metrics.tmax", "must be > 0"));
    }
    Ok(MetricsConfig { weights: w, tmax: raw.tmax })
}

/// The weights the metrics take (`[metrics]` in a scenario).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MetricWeights {
    /// EEE's weights: a for overhead (set by the card's transmit power), b for unexploited time
    /// (its idle power). Seed 004's device values: a = 5, b = 0.72.
    pub eee_a: f64,
    pub eee_b: f64,
    /// UAR's weights (seed 004: typically 0.5 and 0.5).
    pub uar_k: f64,
    pub uar_l: f64,
    /// Seed 001's overhead weights of data and time (its intermediate radio: 0.5 and 0.5).
    pub overhead_data: f64,
    pub overhead_time: f64,
}

impl Default for MetricWeights {
    fn default() -> Self {
        Self { eee_a: 5.0, eee_b: 0.72, uar_k: 0.5, uar_l: 0.5, overhead_data: 0.5, overhead_time: 0.5 }
    }
}
