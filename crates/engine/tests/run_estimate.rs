//! The estimate of a run's events and memory before it starts (crates/engine/src/budget.rs,
//! docs/units-and-scenarios.md "Bounds"): every shipped scenario is well within the limits and
//! estimated at or above what it really takes; a run far beyond the machine is refused with one
//! error naming the key that drives it, unless forced.

mod common;

use common::scenario_files;

use tcpenergy_engine::budget::{self, Limits, FALLBACK_MEMORY_BYTES, MAX_EVENTS};
use tcpenergy_engine::{run_json, EngineError, RunOptions, Scenario};

/// The smallest machine the limits are checked against: 16 GiB.
const SMALL_MACHINE: Limits = Limits { events: MAX_EVENTS, memory_bytes: FALLBACK_MEMORY_BYTES, memory_measured: false };

#[test]
fn every_shipped_scenario_is_estimated_within_the_limits_and_at_or_above_its_events() {
    for path in scenario_files() {
        let s = common::read_scenario_file(&path);
        let name = path.file_stem().unwrap().to_str().unwrap();
        for opts in [RunOptions::default(), RunOptions { capture: true, trace: true, ..Default::default() }] {
            let e = budget::estimate(&s, &opts);
            // Far within: a hundredth of the events and a tenth of a small machine's memory.
            assert!(e.events < MAX_EVENTS / 100.0 && e.memory_bytes < FALLBACK_MEMORY_BYTES / 10.0, "{name}: {}", e.summary());
            e.check(&SMALL_MACHINE).unwrap();
        }
        let record: serde_json::Value = serde_json::from_str(&run_json(&s, 1, RunOptions::default()).unwrap()).unwrap();
        let events = record["events"].as_f64().unwrap();
        let e = budget::estimate(&s, &RunOptions::default());
        assert!(e.events >= events, "{name}: estimated {:.3e} events, ran {events:.3e}", e.events);
    }
}

fn refusal(text: &str) -> (String, String) {
    let s = Scenario::from_toml(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    match run_json(&s, 1, RunOptions::default()) {
        Err(EngineError::Config { path, message }) => (path, message),
        other => panic!("expected the run to be refused, got {other:?}"),
    }
}

/// The chain a - b - c - d with one flow from a to d of the given traffic table.
fn network(before: &str, traffic: &str) -> String {
    format!(
        "{before}\n{}[[flows]]\nname = \"f\"\nfrom = \"a\"\nto = \"d\"\ntransport = \"udp\"\ntraffic = {traffic}\n",
        include_str!("data/chain4.toml")
    )
}

#[test]
fn a_run_of_too_many_events_is_refused_naming_the_key_that_drives_them() {
    // A CBR flow of 1-byte datagrams at 1 Tbit/s over fast links for an hour: 4.5e14 writes (a
    // device without a PHY rate, so that links may be that fast).
    let fast = (network("", "{ kind = \"cbr\", rate = \"1000Gbps\", packet = 1 }") + "[energy]\ndefault_profile = \"ideal-nic-0.3\"\n")
        .replace("stop_after = \"300s\"", "stop_after = \"1h\"")
        .replace("rate = \"10Mbps\"", "rate = \"1000Gbps\"");
    let (path, msg) = refusal(&fast);
    assert_eq!(path, "flows.0.traffic.rate");
    assert!(msg.contains("events") && msg.contains("the packets of flow \"f\"") && msg.contains("--force"), "{msg}");
    // A petabyte over a 1 Tbit/s path in the single-path form, within stop_after.
    let (path, msg) = refusal(
        "stop_after = \"1000h\"\n[path.forward]\nrate = \"1000Gbps\"\n[path.reverse]\nrate = \"1000Gbps\"\n[traffic]\nkind = \"bulk\"\nbytes = 1000000000000000\n[energy]\nsender = \"ideal-nic-0.3\"\nreceiver = \"ideal-nic-0.3\"\n",
    );
    assert_eq!(path, "traffic.bytes", "{msg}");
    assert!(msg.contains("the bulk transfer of flow \"main\""), "{msg}");
}

/// A battery run of 5,000,000 hours (about 570 years) sampled every second, nothing sent.
fn long_battery_run() -> String {
    network("stop = \"battery_empty:a\"", "{ kind = \"cbr\", rate = \"1Mbps\", packet = 1000 }")
        .replace("stop_after = \"300s\"", "stop_after = \"5000000h\"")
        .replace("transport = \"udp\"", "transport = \"udp\"\nstart = \"5000000h\"")
        .replace("a = {}", "a = { battery = { capacity = \"4000mAh\", voltage = \"10.8V\", sample = \"1s\" } }")
}

#[test]
fn a_run_needing_more_memory_than_the_machine_is_refused_naming_the_key() {
    // 1.8e10 battery samples, terabytes of series and record.
    let (path, msg) = refusal(&long_battery_run());
    assert_eq!(path, "nodes.a.battery.sample");
    assert!(msg.contains("need about") && msg.contains("TB of memory, more than this machine's") && msg.contains("battery series of node \"a\""), "{msg}");
}

#[test]
fn a_forced_run_skips_the_estimate_and_still_fails_cleanly_where_memory_runs_out() {
    let s = Scenario::from_toml(&long_battery_run()).unwrap();
    match run_json(&s, 1, RunOptions { force: true, ..Default::default() }) {
        Err(EngineError::Config { path, message }) => {
            assert_eq!(path, "nodes.a.battery.sample");
            assert!(message.contains("samples") && !message.contains("--force"), "the series' own guard: {message}");
        }
        other => panic!("expected the battery series' error, got {other:?}"),
    }
}

#[test]
fn the_refusal_names_the_largest_contributor_of_what_is_over() {
    let s = Scenario::from_toml(&long_battery_run()).unwrap();
    let e = budget::estimate(&s, &RunOptions::default());
    let tight = Limits { events: 1.0, memory_bytes: f64::INFINITY, memory_measured: true };
    match e.check(&tight) {
        Err(EngineError::Config { path, message }) => {
            assert_eq!(path, "nodes.a.battery.sample", "{message}");
            assert!(message.contains("events"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    let roomy = Limits { events: f64::INFINITY, memory_bytes: f64::INFINITY, memory_measured: true };
    assert!(e.check(&roomy).is_ok());
}
