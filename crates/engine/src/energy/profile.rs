//! Device profiles: the power figures of a node (platform, radio) and the CPU cost of each protocol
//! operation. Profiles are data: TOML files under `python/tcpenergy/profiles/`, compiled into the
//! engine so both the Rust tests and the Python package see the same figures. Each figure names its
//! source; estimates are listed in `estimated` and explained in `docs/models/profiles.md`.

use crate::config::serde_units;
use crate::error::EngineError;
use crate::units::SimDuration;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::OnceLock;

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceProfile {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Dotted keys (with `*` globs) whose values are estimates rather than published figures.
    #[serde(default)]
    pub estimated: Vec<String>,
    pub platform: Platform,
    pub radio: Radio,
    pub cpu: Cpu,
    /// Dotted key -> where the figure comes from.
    #[serde(default)]
    pub sources: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Platform {
    /// Whole-node draw excluding the radio and protocol CPU work (W).
    pub base_power_w: f64,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Radio {
    pub tx_power_w: f64,
    pub rx_power_w: f64,
    pub idle_power_w: f64,
    pub sleep_power_w: f64,
    #[serde(with = "serde_units::duration")]
    pub wake_time: SimDuration,
    pub wake_power_w: f64,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Cpu {
    pub frequency_hz: f64,
    /// Power above base while the CPU executes protocol code (W).
    pub active_power_w: f64,
    pub cycles: CycleCosts,
}

/// Cycles charged per protocol operation (see `energy::cpu::Op`).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CycleCosts {
    pub segment_sent: f64,
    pub segment_received: f64,
    pub per_byte: f64,
    pub ack_sent: f64,
    pub ack_received: f64,
    pub sack_block_generated: f64,
    pub sack_block_processed: f64,
    pub scoreboard_update: f64,
    pub timer_set: f64,
    pub timer_expired: f64,
    pub ooo_queued: f64,
    pub paws_check: f64,
    pub fast_path: f64,
    pub slow_path: f64,
}

/// The built-in profiles, as TOML text, compiled in from the Python package's data directory.
const BUILTIN: &[(&str, &str)] = &[
    (
        "singh2002-toshiba-wavelan",
        include_str!("../../../../python/tcpenergy/profiles/singh2002-toshiba-wavelan.toml"),
    ),
    (
        "donckers2002-wavelan-modem",
        include_str!("../../../../python/tcpenergy/profiles/donckers2002-wavelan-modem.toml"),
    ),
    (
        "agrawal2003-samsung-wavelan-turbo",
        include_str!("../../../../python/tcpenergy/profiles/agrawal2003-samsung-wavelan-turbo.toml"),
    ),
    ("ideal-nic-0.3", include_str!("../../../../python/tcpenergy/profiles/ideal-nic-0.3.toml")),
];

/// Names of the built-in profiles.
pub fn builtin_names() -> Vec<&'static str> {
    BUILTIN.iter().map(|(n, _)| *n).collect()
}

/// Parse and check one built-in profile by name (parsed once per process, then cloned).
pub fn builtin(name: &str) -> Option<Result<DeviceProfile, EngineError>> {
    static PARSED: OnceLock<Vec<Result<DeviceProfile, EngineError>>> = OnceLock::new();
    let parsed = PARSED.get_or_init(|| BUILTIN.iter().map(|(n, text)| parse_builtin(n, text)).collect());
    BUILTIN.iter().position(|(n, _)| *n == name).map(|i| parsed[i].clone())
}

fn parse_builtin(name: &str, text: &str) -> Result<DeviceProfile, EngineError> {
    let p: DeviceProfile =
        toml::from_str(text).map_err(|e| EngineError::Invariant(format!("built-in profile {name} does not parse: {e}")))?;
    p.validate("").map_err(|e| EngineError::Invariant(format!("built-in profile {name}: {e}")))?;
    Ok(p)
}

impl DeviceProfile {
    /// Check physical sense: powers and costs are finite and non-negative, the CPU clock positive.
    pub fn validate(&self, prefix: &str) -> Result<(), EngineError> {
        let at = |k: &str| if prefix.is_empty() { k.to_string() } else { format!("{prefix}.{k}") };
        let r = &self.radio;
        let c = &self.cpu.cycles;
        let checks = [
            ("platform.base_power_w", self.platform.base_power_w),
            ("radio.tx_power_w", r.tx_power_w),
            ("radio.rx_power_w", r.rx_power_w),
            ("radio.idle_power_w", r.idle_power_w),
            ("radio.sleep_power_w", r.sleep_power_w),
            ("radio.wake_power_w", r.wake_power_w),
            ("cpu.active_power_w", self.cpu.active_power_w),
            ("cpu.frequency_hz", self.cpu.frequency_hz),
            ("cpu.cycles.segment_sent", c.segment_sent),
            ("cpu.cycles.segment_received", c.segment_received),
            ("cpu.cycles.per_byte", c.per_byte),
            ("cpu.cycles.ack_sent", c.ack_sent),
            ("cpu.cycles.ack_received", c.ack_received),
            ("cpu.cycles.sack_block_generated", c.sack_block_generated),
            ("cpu.cycles.sack_block_processed", c.sack_block_processed),
            ("cpu.cycles.scoreboard_update", c.scoreboard_update),
            ("cpu.cycles.timer_set", c.timer_set),
            ("cpu.cycles.timer_expired", c.timer_expired),
            ("cpu.cycles.ooo_queued", c.ooo_queued),
            ("cpu.cycles.paws_check", c.paws_check),
            ("cpu.cycles.fast_path", c.fast_path),
            ("cpu.cycles.slow_path", c.slow_path),
        ];
        for (k, v) in checks {
            if !v.is_finite() || v < 0.0 {
                return Err(EngineError::config(at(k), format!("must be a finite number >= 0, got {v}")));
            }
        }
        if self.cpu.frequency_hz <= 0.0 {
            return Err(EngineError::config(at("cpu.frequency_hz"), "must be > 0"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_profile_parses_and_names_itself() {
        for name in builtin_names() {
            let p = builtin(name).unwrap().unwrap();
            assert_eq!(p.name, name);
        }
    }
}
