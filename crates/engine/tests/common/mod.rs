//! Shared helpers for the engine's integration tests: scenarios built from TOML snippets.
#![allow(dead_code)]

use tcpenergy_engine::{run, RunOptions, RunResult, Scenario};

/// The standard single-path scenario (2 Mbit/s, 20 ms each way), with `extra` TOML appended.
pub fn scenario(variant: &str, bytes: &str, forward_impairments: &str, extra: &str) -> Scenario {
    let text = format!(
        r#"
name = "test"
[path]
mtu = 1500
[path.forward]
rate = "2Mbps"
delay = "20ms"
queue = 100
impairments = [{forward_impairments}]
[path.reverse]
rate = "2Mbps"
delay = "20ms"
queue = 100
[traffic]
kind = "bulk"
bytes = "{bytes}"
{extra}
"#
    );
    let mut s = Scenario::from_toml(&text).unwrap_or_else(|e| panic!("bad test scenario: {e}\n{text}"));
    s.tcp.variant = serde_json::from_value(serde_json::Value::String(variant.into())).unwrap();
    s
}

pub fn run_seed(s: &Scenario, seed: u64) -> RunResult {
    run(s, seed, RunOptions::default()).expect("run succeeds")
}
