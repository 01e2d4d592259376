//! Every scenario under `scenarios/` gives, for seeds 1 and 2, the record checked in under
//! `tests/golden/` (engine version aside), compared field by field. These are the records users'
//! scripts and the reproductions have been reading: an engine change that moves any of them must
//! be a deliberate change of protocol or energy behaviour, which regenerates the files in the same
//! commit and says why:
//!
//!     TCPENERGY_BLESS=1 cargo test --release -p tcpenergy-engine --test golden_records
//!
//! Numbers compare exactly for integers and within 1e-12 relative for floats (the engine is
//! deterministic; the tolerance only absorbs a platform's last-bit differences in libm).

mod common;

use common::{read_scenario_file, scenario_files};

use serde_json::Value;
use std::path::Path;
use tcpenergy_engine::{run_json, RunOptions};

const SEEDS: [u64; 2] = [1, 2];
const FLOAT_TOLERANCE: f64 = 1e-12;

fn record(path: &Path, seed: u64) -> Value {
    let scenario = read_scenario_file(path);
    let json = run_json(&scenario, seed, RunOptions::default()).unwrap();
    let mut value: Value = serde_json::from_str(&json).unwrap();
    value.as_object_mut().unwrap().remove("engine_version");
    value
}

/// Paths of every difference between `expected` and `got`, as `flow.timeouts: 12 -> 13`.
fn differences(expected: &Value, got: &Value, at: &str, out: &mut Vec<String>) {
    match (expected, got) {
        (Value::Object(a), Value::Object(b)) => {
            for (key, va) in a {
                let here = if at.is_empty() { key.clone() } else { format!("{at}.{key}") };
                match b.get(key) {
                    Some(vb) => differences(va, vb, &here, out),
                    None => out.push(format!("{here}: missing")),
                }
            }
            for key in b.keys().filter(|k| !a.contains_key(*k)) {
                out.push(format!("{}: new field", if at.is_empty() { key.clone() } else { format!("{at}.{key}") }));
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (va, vb)) in a.iter().zip(b).enumerate() {
                differences(va, vb, &format!("{at}.{i}"), out);
            }
        }
        (Value::Number(a), Value::Number(b)) if a.is_f64() || b.is_f64() => {
            let (x, y) = (a.as_f64().unwrap(), b.as_f64().unwrap());
            if (x - y).abs() > FLOAT_TOLERANCE * x.abs().max(y.abs()) {
                out.push(format!("{at}: {x} -> {y}"));
            }
        }
        _ if expected == got => {}
        _ => out.push(format!("{at}: {expected} -> {got}")),
    }
}

#[test]
fn every_scenario_file_gives_the_checked_in_record_for_seeds_1_and_2() {
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let bless = std::env::var_os("TCPENERGY_BLESS").is_some();
    let mut failures = Vec::new();
    let mut compared = 0;
    for path in scenario_files() {
        let stem = path.file_stem().unwrap().to_str().unwrap().to_string();
        for seed in SEEDS {
            let file = golden.join(format!("{stem}.seed{seed}.json"));
            let got = record(&path, seed);
            if bless {
                std::fs::create_dir_all(&golden).unwrap();
                std::fs::write(&file, serde_json::to_string_pretty(&got).unwrap() + "\n").unwrap();
                continue;
            }
            let text = std::fs::read_to_string(&file)
                .unwrap_or_else(|_| panic!("{} is missing: bless the golden records (see this file's header)", file.display()));
            let expected: Value = serde_json::from_str(&text).unwrap();
            let mut diffs = Vec::new();
            differences(&expected, &got, "", &mut diffs);
            if !diffs.is_empty() {
                diffs.truncate(8);
                failures.push(format!("{stem} seed {seed}:\n  {}", diffs.join("\n  ")));
            }
            compared += 1;
        }
    }
    assert!(failures.is_empty(), "records changed:\n{}", failures.join("\n"));
    assert!(bless || compared >= 2 * 9, "expected the 9 example scenarios, compared {compared} records");
}

#[test]
fn a_changed_field_is_reported_with_its_path() {
    let a: Value = serde_json::json!({"flow": {"timeouts": 3, "goodput_bps": 1.5e6}, "seed": 1});
    let b: Value = serde_json::json!({"flow": {"timeouts": 4, "goodput_bps": 1.5e6 * (1.0 + 1e-15)}, "seed": 1});
    let mut diffs = Vec::new();
    differences(&a, &b, "", &mut diffs);
    assert_eq!(diffs, vec!["flow.timeouts: 3 -> 4".to_string()]);
}
