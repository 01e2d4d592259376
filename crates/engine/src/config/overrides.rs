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
