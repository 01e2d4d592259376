//! A node's `battery` table (docs/models/battery.md): capacity in mAh or Wh at a voltage, and the
//! model that turns the node's power into lost charge.

use super::{serde_units, typed};
use crate::error::EngineError;
use crate::units::SimDuration;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How the battery turns current into lost charge.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "model", rename_all = "snake_case")]
pub enum BatteryModel {
    Ideal,
    Peukert {
        exponent: f64,
        #[serde(with = "super::serde_units::duration")]
        rated_time: SimDuration,
    },
    Kibam {
        /// Share of the charge in the available well (0 < c < 1).
        c: f64,
        /// Rate constant between the wells, 1/s.
        k: f64,
    },
}

/// A validated battery.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BatteryConfig {
    #[serde(flatten)]
    pub model: BatteryModel,
    /// Capacity as written ("4000mAh" or "65Wh"), and in coulombs.
    pub capacity: String,
    #[serde(skip)]
    pub capacity_c: f64,
    #[serde(rename = "voltage")]
    pub voltage_v: f64,
    /// Interval of the remaining-capacity series (an ACPI-like reading).
    #[serde(with = "super::serde_units::duration")]
    pub sample: SimDuration,
}

impl BatteryConfig {
    pub fn capacity_j(&self) -> f64 {
        self.capacity_c * self.voltage_v
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBattery {
    capacity: String,
    voltage: Value,
    #[serde(default = "ideal")]
    model: String,
    #[serde(default = "default_sample", with = "serde_units::duration")]
    sample: SimDuration,
    // Peukert
    #[serde(default)]
    exponent: Option<f64>,
    #[serde(default, with = "super::opt_duration")]
    rated_time: Option<SimDuration>,
    // KiBaM
    #[serde(default)]
    c: Option<f64>,
    #[serde(default)]
    k: Option<f64>,
}

fn ideal() -> String {
    "ideal".into()
}
fn default_sample() -> SimDuration {
    SimDuration::from_secs(10)
}

/// The shortest interval of the remaining-capacity series: an ACPI or smart-battery gauge
/// updates its reading about once a second (docs/models/battery.md).
pub const MIN_SAMPLE: SimDuration = SimDuration(1_000_000_000);

fn err(path: impl Into<String>, message: impl Into<String>) -> EngineError {
    EngineError::config(path, message)
}

/// A number before a unit suffix ("4000mAh" -> 4000).
fn amount(text: &str, unit: &str) -> Option<f64> {
    text.trim().strip_suffix(unit).and_then(|n| n.trim().parse::<f64>().ok())
}

/// Read `nodes.NAME.battery` at `at`.
pub(crate) fn read(v: &Value, at: &str) -> Result<BatteryConfig, EngineError> {
    let raw: RawBattery = typed(v, at)?;
    let voltage_v = match &raw.voltage {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => amount(s, "V"),
        _ => None,
    }
    .ok_or_else(|| err(format!("{at}.voltage"), format!("must be a voltage such as \"10.8V\", got {}", raw.voltage)))?;
    if !(voltage_v.is_finite() && voltage_v > 0.0) {
        return Err(err(format!("{at}.voltage"), format!("must be > 0 V, got {voltage_v}")));
    }
    let capacity_c = if let Some(mah) = amount(&raw.capacity, "mAh") {
        mah * 3.6
    } else if let Some(wh) = amount(&raw.capacity, "Wh") {
        wh * 3600.0 / voltage_v
    } else {
        return Err(err(format!("{at}.capacity"), format!("must be a charge in mAh or an energy in Wh, e.g. \"4000mAh\" or \"65Wh\", got {:?}", raw.capacity)));
    };
    if !(capacity_c.is_finite() && capacity_c > 0.0) {
        return Err(err(format!("{at}.capacity"), format!("must be > 0, got {:?}", raw.capacity)));
    }
    if raw.sample < MIN_SAMPLE {
        return Err(err(
            format!("{at}.sample"),
            format!(
                "must be at least 1s (a battery gauge reports about once a second; a finer series only multiplies the work and the record), got {}",
                serde_units::format_duration(raw.sample)
            ),
        ));
    }
    let unused = |keys: &[(&str, bool)], model: &str| -> Result<(), EngineError> {
        match keys.iter().find(|k| k.1) {
            Some((key, _)) => Err(err(format!("{at}.{key}"), format!("is not a setting of the {model} model; remove it"))),
            None => Ok(()),
        }
    };
    let model = match raw.model.as_str() {
        "ideal" => {
            unused(&[("exponent", raw.exponent.is_some()), ("rated_time", raw.rated_time.is_some()), ("c", raw.c.is_some()), ("k", raw.k.is_some())], "ideal")?;
            BatteryModel::Ideal
        }
        "peukert" => {
            unused(&[("c", raw.c.is_some()), ("k", raw.k.is_some())], "peukert")?;
            let exponent = raw.exponent.ok_or_else(|| err(format!("{at}.exponent"), "the peukert model needs Peukert's exponent (1 to 2; 1 is ideal)"))?;
            if !(1.0..=2.0).contains(&exponent) {
                return Err(err(format!("{at}.exponent"), format!("must be between 1 and 2, got {exponent}")));
            }
            let rated_time = raw.rated_time.ok_or_else(|| err(format!("{at}.rated_time"), "the peukert model needs the discharge time the capacity is rated at, e.g. \"20h\""))?;
            if rated_time.0 == 0 {
                return Err(err(format!("{at}.rated_time"), "must be > 0"));
            }
            BatteryModel::Peukert { exponent, rated_time }
        }
        "kibam" => {
            unused(&[("exponent", raw.exponent.is_some()), ("rated_time", raw.rated_time.is_some())], "kibam")?;
            let c = raw.c.ok_or_else(|| err(format!("{at}.c"), "the kibam model needs c, the share of the charge available at once (0 < c < 1)"))?;
            if !(c > 0.0 && c < 1.0) {
                return Err(err(format!("{at}.c"), format!("must be strictly between 0 and 1, got {c}")));
            }
            let k = raw.k.ok_or_else(|| err(format!("{at}.k"), "the kibam model needs k, the rate constant between its wells (1/s, > 0)"))?;
            if !(k.is_finite() && k > 0.0) {
                return Err(err(format!("{at}.k"), format!("must be > 0 (1/s), got {k}")));
            }
            BatteryModel::Kibam { c, k }
        }
        other => return Err(err(format!("{at}.model"), format!("unknown battery model {other:?}; one of ideal, peukert, kibam"))),
    };
    Ok(BatteryConfig { model, capacity: raw.capacity, capacity_c, voltage_v, sample: raw.sample })
}
