//! Many profiles, one simulation (docs/models/energy.md, "Several profiles in one run").
//!
//! The meter never feeds back into the run: what a node's radio and CPU do, and when, is fixed by
//! the protocol, the media and the scenario's timers; the device profile only prices it. So one
//! run can be priced under several profiles. A profile is given as overrides of the scenario's
//! energy settings; this module checks that a list of them only changes figures that price the
//! run, and gathers what the meter needs for each.
//!
//! Which energy settings change the run itself, and are therefore refused when they differ:
//! - `energy.radio_policy = "psm"` drives 802.11 power save (stations doze, the access point
//!   buffers their frames): a profile may neither turn it on nor off. The other policies
//!   (`always_on`, `ideal`, `idle_timeout`) and `energy.timeout` only lay out the radio's idle
//!   gaps when the run is over.
//! - A profile's `radio.phy` sets how long the radio is on the air for each frame, which the run
//!   logs as frames go out: every node keeps the scenario's PHY.
//! - With `stop = "battery_empty:NODE"` that node's energy decides when the run ends: its profile,
//!   the radio policy and the timeout stay the scenario's.
//!
//! Everything else of a profile (platform, radio state and transition powers, wake time, CPU
//! clock, active power and cycle costs) is a pure meter figure.

use crate::config::{RadioPolicy, Scenario};
use crate::energy::profile::DeviceProfile;
use crate::error::EngineError;
use crate::units::SimDuration;
use std::sync::Arc;

/// What the meter needs to price a run under one profile.
#[derive(Debug, Clone)]
pub struct ProfileSet {
    /// Each node's device profile, in node order (the single-path form: sender, receiver).
    pub nodes: Vec<Arc<DeviceProfile>>,
    pub radio_policy: RadioPolicy,
    pub timeout: SimDuration,
}

impl ProfileSet {
    /// The scenario's own profiles and meter settings.
    pub fn of(s: &Scenario) -> Self {
        let nodes = match s.network() {
            Some(net) => net.nodes.iter().map(|n| n.profile.profile.clone()).collect(),
            None => vec![s.energy.sender.profile.clone(), s.energy.receiver.profile.clone()],
        };
        Self { nodes, radio_policy: s.energy.radio_policy, timeout: s.energy.timeout }
    }
}

/// The keys a profile may set, each with any key inside it (`energy.sender.cpu.active_power_w`).
const ENERGY_KEYS: [&str; 5] = ["energy.sender", "energy.receiver", "energy.default_profile", "energy.radio_policy", "energy.timeout"];

fn is_profile_key(key: &str) -> bool {
    let within = |k: &str| key == k || key.starts_with(&format!("{k}."));
    if ENERGY_KEYS.iter().any(|k| within(k)) {
        return true;
    }
    // nodes.NAME.profile[.…]
    let parts: Vec<&str> = key.split('.').collect();
    parts.len() >= 3 && parts[0] == "nodes" && parts[2] == "profile"
}

/// The profile sets of `profiles`, each a list of `(dotted key, JSON value)` overrides applied to
/// the scenario document `text` after its own `overrides` (the run's scenario is `base`). Errors
/// name `profiles.<index>.<key>`.
pub fn from_overrides(text: &str, overrides: &[(String, String)], base: &Scenario, profiles: &[Vec<(String, String)>]) -> Result<Vec<ProfileSet>, EngineError> {
    profiles
        .iter()
        .enumerate()
        .map(|(i, set)| {
            let at = |k: &str| if k.is_empty() { format!("profiles.{i}") } else { format!("profiles.{i}.{k}") };
            for (key, _) in set {
                if !is_profile_key(key) {
                    return Err(EngineError::config(
                        at(key),
                        "is not a profile setting: a profile may set energy.sender, energy.receiver, energy.default_profile, \
                         energy.radio_policy, energy.timeout and nodes.NAME.profile (and keys inside them), the figures that \
                         price a run without changing it; run other settings separately",
                    ));
                }
            }
            let all: Vec<(String, String)> = overrides.iter().chain(set).cloned().collect();
            let variant = Scenario::from_json(text, &all).map_err(|e| match e {
                EngineError::Config { path, message } => EngineError::config(at(&path), message),
                other => other,
            })?;
            check(base, &variant, i)
        })
        .collect()
}

/// Check that `variant` differs from `base` only in figures that price the run (module docs) and
/// return its profile set; errors name `profiles.<index>.<key>`.
pub fn check(base: &Scenario, variant: &Scenario, index: usize) -> Result<ProfileSet, EngineError> {
    let at = |k: &str| format!("profiles.{index}.{k}");
    let (b, v) = (ProfileSet::of(base), ProfileSet::of(variant));
    if b.nodes.len() != v.nodes.len() {
        return Err(EngineError::config(at("nodes"), "a profile cannot add or remove nodes"));
    }
    let psm = |p: RadioPolicy| p == RadioPolicy::Psm;
    if psm(b.radio_policy) != psm(v.radio_policy) {
        return Err(EngineError::config(
            at("energy.radio_policy"),
            format!(
                "{} differs from the scenario's {}: \"psm\" drives 802.11 power save (stations doze and the access point \
                 buffers their frames), which changes the run itself; every profile of one run keeps it on or off as the scenario does",
                policy_name(v.radio_policy),
                policy_name(b.radio_policy)
            ),
        ));
    }
    let slot = |n: usize| match base.network() {
        Some(net) => format!("nodes.{}.profile", net.nodes[n].name),
        None => ["energy.sender", "energy.receiver"][n].to_string(),
    };
    for n in 0..b.nodes.len() {
        if rrc_timers(&b.nodes[n].radio) != rrc_timers(&v.nodes[n].radio) {
            return Err(EngineError::config(
                at(&format!("{}.radio.rrc", slot(n))),
                "differs from the scenario's in its timers: an RRC machine's promotion, tail, DRX and paging timers decide when \
                 the link carries each frame, which the run did once; every profile of one run keeps each node's timers \
                 (its powers may differ)",
            ));
        }
        if b.nodes[n].radio.phy != v.nodes[n].radio.phy {
            return Err(EngineError::config(
                at(&format!("{}.radio.phy", slot(n))),
                "differs from the scenario's: the radio's PHY sets how long it is on the air for each frame, which the run \
                 logs as frames go out; every profile of one run keeps each node's PHY",
            ));
        }
    }
    if let Some((net, node)) = base.network().and_then(|net| net.stop_on_battery.map(|node| (net, node))) {
        let n = node.index();
        let name = &net.nodes[n].name;
        let why = format!("the run stops when node {name:?}'s battery is empty, so that node's energy decides when the run ends");
        let figures = |p: &DeviceProfile| (p.platform.clone(), p.radio.clone(), p.cpu.clone());
        if figures(&b.nodes[n]) != figures(&v.nodes[n]) {
            return Err(EngineError::config(at(&slot(n)), format!("differs from the scenario's: {why}; every profile of one run keeps its profile")));
        }
        if b.radio_policy != v.radio_policy {
            return Err(EngineError::config(at("energy.radio_policy"), format!("differs from the scenario's: {why}; every profile of one run keeps the radio policy")));
        }
        if b.timeout != v.timeout {
            return Err(EngineError::config(at("energy.timeout"), format!("differs from the scenario's: {why}; every profile of one run keeps the timeout")));
        }
    }
    Ok(v)
}

/// The timers of a radio's RRC machine, which gate its link (`net::medium::rrc`): the promotion,
/// each tail state's duration and DRX window, and the paging window.
type RrcTimers = (u64, Vec<(u64, Option<(u64, u64)>)>, (u64, u64));

fn rrc_timers(radio: &crate::energy::profile::Radio) -> Option<RrcTimers> {
    let rrc = radio.rrc.as_ref()?;
    let tail = rrc.tail.iter().map(|st| (st.duration.0, st.drx.map(|d| (d.cycle.0, d.on.0)))).collect();
    Some((radio.wake_time.0, tail, (rrc.paging.cycle.0, rrc.paging.on.0)))
}

fn policy_name(p: RadioPolicy) -> String {
    serde_json::to_string(&p).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profile_keys_are_the_energy_slots_and_the_keys_inside_them() {
        for k in ["energy.sender", "energy.receiver.cpu.active_power_w", "energy.radio_policy", "energy.timeout", "nodes.a.profile", "nodes.a.profile.radio.tx_power_w"] {
            assert!(is_profile_key(k), "{k}");
        }
        for k in ["energy", "energy.senders", "tcp.variant", "nodes.a", "nodes.a.battery", "path.forward.rate"] {
            assert!(!is_profile_key(k), "{k}");
        }
    }
}
