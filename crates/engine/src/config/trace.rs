//! A link direction's delivery-opportunity trace, in Mahimahi's format (the `traces/README` of
//! the mahimahi repository): each entry is a whole number of milliseconds from the start of the
//! trace and stands for one opportunity to deliver up to [`OPPORTUNITY_BYTES`] bytes; a
//! timestamp repeated is several opportunities in that millisecond; the trace repeats with the
//! period of its last timestamp.
//!
//! The engine reads no files: a scenario gives the trace inline, `trace = { name = "x.down",
//! ms = [...] }`; the Python package turns `trace = "traces/x.down"` into that table.
//! Each entry's line in the file is its index + 1, so errors name the line.

use super::typed;
use crate::error::EngineError;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Bytes one opportunity carries: Mahimahi's PACKET_SIZE, a 1500-byte IP packet and the 4-byte
/// header its TUN device adds (link_queue.hh).
pub const OPPORTUNITY_BYTES: u32 = 1504;

/// Bytes Mahimahi queues for each IP packet besides the packet itself: the TUN header, so a
/// 1500-byte packet fills one opportunity exactly.
pub const TUN_HEADER_BYTES: u32 = 4;

/// The longest trace accepted, in entries: the longest public traces have about half a million.
pub const MAX_TRACE_ENTRIES: usize = 10_000_000;

/// The latest timestamp accepted: about 11.6 days, far beyond any recorded trace, so the
/// repetitions of a trace stay far from overflowing simulated time.
pub const MAX_TRACE_MS: u64 = 1_000_000_000;

/// A validated trace: non-empty, non-decreasing, its last timestamp > 0.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Trace {
    /// Where it came from (the file's name); errors and summaries show it.
    pub name: String,
    /// Each opportunity's time in milliseconds from the start of the trace.
    pub ms: Vec<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTrace {
    #[serde(default)]
    name: String,
    ms: Vec<Value>,
}

impl Trace {
    /// The period with which the trace repeats: its last timestamp (ms, > 0).
    pub fn period_ms(&self) -> u64 {
        *self.ms.last().expect("a validated trace is not empty")
    }

    /// The mean rate (bit/s, rounded): the bytes of every opportunity over the period.
    pub fn mean_bps(&self) -> u64 {
        let bits = self.ms.len() as u128 * OPPORTUNITY_BYTES as u128 * 8 * 1000;
        let p = self.period_ms() as u128;
        ((bits + p / 2) / p) as u64
    }

    /// Read and check the inline table at `at` (`path.forward.trace`).
    pub(crate) fn from_value(v: &Value, at: &str) -> Result<Self, EngineError> {
        let err = |path: String, msg: String| Err(EngineError::config(path, msg));
        match v {
            Value::Object(_) => {}
            Value::String(s) => {
                return err(
                    at.into(),
                    format!(
                        "{s:?}: the engine takes a trace inline, {{ name = \"...\", ms = [0, 1, ...] }}; a trace file's path is \
                         read by the Python package (tcpenergy run, tcpenergy.load_scenario)"
                    ),
                )
            }
            _ => return err(at.into(), "expected a trace: a file's path, or inline { name = \"...\", ms = [...] }".into()),
        }
        let raw: RawTrace = typed(v, at)?;
        let named = if raw.name.is_empty() { String::new() } else { format!("trace {:?}, ", raw.name) };
        if raw.ms.is_empty() {
            return err(format!("{at}.ms"), format!("{named}no timestamps: a trace needs at least one line"));
        }
        if raw.ms.len() > MAX_TRACE_ENTRIES {
            return err(format!("{at}.ms"), format!("{named}{} lines: at most {MAX_TRACE_ENTRIES} are accepted", raw.ms.len()));
        }
        let mut ms = Vec::with_capacity(raw.ms.len());
        for (i, x) in raw.ms.iter().enumerate() {
            let line = i + 1;
            let Some(t) = x.as_u64() else {
                return err(
                    format!("{at}.ms.{i}"),
                    format!("{named}line {line}: expected a whole number of milliseconds >= 0, got {x}"),
                );
            };
            if t > MAX_TRACE_MS {
                return err(format!("{at}.ms.{i}"), format!("{named}line {line}: {t} ms is beyond the latest accepted, {MAX_TRACE_MS} ms"));
            }
            if let Some(&before) = ms.last() {
                if t < before {
                    return err(
                        format!("{at}.ms.{i}"),
                        format!("{named}line {line}: {t} ms comes after {before} ms on line {i}; timestamps must not decrease"),
                    );
                }
            }
            ms.push(t);
        }
        if ms.last() == Some(&0) {
            return err(
                format!("{at}.ms"),
                format!("{named}every timestamp is 0: the last one is the trace's period, which must be > 0 ms"),
            );
        }
        Ok(Trace { name: raw.name, ms })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(v: Value) -> Result<Trace, EngineError> {
        Trace::from_value(&v, "path.forward.trace")
    }

    fn error(v: Value) -> (String, String) {
        match read(v) {
            Err(EngineError::Config { path, message }) => (path, message),
            other => panic!("expected an error, got {other:?}"),
        }
    }

    #[test]
    fn one_opportunity_per_ms_is_12_032_mbps_mahimahi_traces_readme() {
        // traces/README: a file holding "1" passes one MTU-sized packet per millisecond.
        let t = read(json!({"name": "1ms", "ms": [1]})).unwrap();
        assert_eq!((t.period_ms(), t.mean_bps()), (1, 12_032_000));
        // Repeated timestamps are several opportunities in one millisecond.
        assert_eq!(read(json!({"ms": [0, 2, 2, 4]})).unwrap().mean_bps(), 4 * 1504 * 8 * 1000 / 4);
    }

    #[test]
    fn bad_traces_are_refused_naming_the_line_mahimahi_link_queue() {
        let (path, msg) = error(json!({"name": "x.down", "ms": [0, 5, 3]}));
        assert_eq!(path, "path.forward.trace.ms.2");
        assert!(msg.contains("trace \"x.down\"") && msg.contains("line 3") && msg.contains("must not decrease"), "{msg}");
        let (path, msg) = error(json!({"ms": [1, 2.5]}));
        assert_eq!(path, "path.forward.trace.ms.1");
        assert!(msg.contains("line 2") && msg.contains("whole number"), "{msg}");
        let (_, msg) = error(json!({"ms": [1, -2]}));
        assert!(msg.contains("line 2") && msg.contains("-2"), "{msg}");
        let (path, msg) = error(json!({"ms": []}));
        assert_eq!(path, "path.forward.trace.ms");
        assert!(msg.contains("at least one line"), "{msg}");
        let (_, msg) = error(json!({"ms": [0, 0]}));
        assert!(msg.contains("must be > 0"), "{msg}");
        let (path, msg) = error(json!("traces/x.down"));
        assert_eq!(path, "path.forward.trace");
        assert!(msg.contains("inline") && msg.contains("Python"), "{msg}");
        let (path, _) = error(json!({"ms": [1], "period": 3}));
        assert_eq!(path, "path.forward.trace.period");
    }
}
