//! Dotted-key overrides (`--set path.forward.impairments.0.p=0.05`): replace one value inside the
//! scenario document before it is read, so overrides get the same checks and error paths as files.

use crate::error::EngineError;
use serde_json::{Map, Value};

/// Set `key` (dots separate table keys; a number selects an array element) to `value` in `doc`.
/// Missing tables are created; unknown keys are left for the schema to reject with their path.
pub fn apply_override(doc: &mut Value, key: &str, value: Value) -> Result<(), EngineError> {
    let parts: Vec<&str> = key.split('.').collect();
    if key.is_empty() || parts.iter().any(|p| p.is_empty()) {
        return Err(EngineError::config(key, "override keys are dotted names such as tcp.variant"));
    }
    let mut cur = doc;
    for (i, part) in parts.iter().enumerate() {
        let here = parts[..=i].join(".");
        let last = i + 1 == parts.len();
        if let Value::String(name) = cur {
            if is_profile_slot(&parts[..i]) {
                let name = name.clone();
                *cur = builtin_table(&name, &parts[..i].join("."), part)?;
            }
        }
        cur = match cur {
            Value::Object(map) => {
                if last {
                    map.insert(part.to_string(), value);
                    return Ok(());
                }
                map.entry(part.to_string()).or_insert_with(|| Value::Object(Map::new()))
            }
            Value::Array(items) => {
                let idx: usize = part.parse().map_err(|_| {
                    EngineError::config(here.clone(), format!("{part:?} is not an array index (the value here is a list)"))
                })?;
                let len = items.len();
                let slot = items.get_mut(idx).ok_or_else(|| {
                    EngineError::config(here.clone(), format!("index {idx} is out of range: the list has {len} element(s)"))
                })?;
                if last {
                    *slot = value;
                    return Ok(());
                }
                slot
            }
            _ => {
                return Err(EngineError::config(
                    parts[..i].join("."),
                    format!("is a single value, so it has no key {part:?}"),
                ))
            }
        };
    }
    unreachable!("loop returns on the last part")
}

/// Where a scenario names a device profile: `energy.sender`, `energy.receiver`,
/// `energy.default_profile`, `nodes.NAME.profile`.
fn is_profile_slot(path: &[&str]) -> bool {
    matches!(path, ["energy", "sender" | "receiver" | "default_profile"] | ["nodes", _, "profile"])
}

/// A built-in profile as an inline table, so that one of its figures can be set: its name says
/// it was modified, so records do not pass it off as the built-in.
fn builtin_table(name: &str, at: &str, key: &str) -> Result<Value, EngineError> {
    let Some(profile) = crate::energy::profile::builtin(name) else {
        return Err(EngineError::config(at, format!("{name:?} is not a built-in profile, so it has no key {key:?}")));
    };
    let mut table = serde_json::to_value(profile?).map_err(|e| EngineError::Invariant(format!("built-in profile {name} as JSON: {e}")))?;
    table["name"] = Value::String(format!("{name} (modified)"));
    Ok(table)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_figure_of_a_named_builtin_profile_is_set_on_a_copy_that_says_it_was_modified() {
        let mut doc = json!({"energy": {"receiver": "zhang2010-htc-dream-3g", "sender": "wired-host"},
                             "nodes": {"phone": {"profile": "huang2012-lte-phone"}}});
        apply_override(&mut doc, "energy.receiver.cpu.frequency_hz", json!(245.36e6)).unwrap();
        let receiver = &doc["energy"]["receiver"];
        assert_eq!(receiver["name"], "zhang2010-htc-dream-3g (modified)");
        assert_eq!(receiver["cpu"]["frequency_hz"], 245.36e6);
        // Every other figure is the built-in's.
        assert_eq!(receiver["cpu"]["active_power_w"], 0.43388);
        assert_eq!(receiver["radio"]["rrc"]["tail"][1]["duration"], "4s");
        assert_eq!(doc["energy"]["sender"], "wired-host");
        apply_override(&mut doc, "nodes.phone.profile.radio.rrc.tail.2.duration", json!("5s")).unwrap();
        assert_eq!(doc["nodes"]["phone"]["profile"]["radio"]["rrc"]["tail"][2]["duration"], "5s");
    }

    #[test]
    fn keys_inside_a_name_that_is_not_a_builtin_profile_are_refused_naming_it() {
        let mut doc = json!({"energy": {"receiver": "no-such-phone"}, "tcp": {"variant": "reno"}});
        let err = apply_override(&mut doc, "energy.receiver.cpu.frequency_hz", json!(1.0)).unwrap_err().to_string();
        assert!(err.contains("energy.receiver") && err.contains("not a built-in profile"), "{err}");
        let err = apply_override(&mut doc, "tcp.variant.x", json!(1)).unwrap_err().to_string();
        assert!(err.contains("tcp.variant") && err.contains("single value"), "{err}");
    }
}
