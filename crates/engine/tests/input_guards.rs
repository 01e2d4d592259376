//! Inputs that would multiply the work of a run, or that the number formats cannot hold, are
//! refused with one error naming the key and the bound (issue #24 items 4 and 8;
//! docs/units-and-scenarios.md "Units" and "Bounds").

use tcpenergy_engine::{EngineError, Scenario};

fn err_of(text: &str) -> (String, String) {
    match Scenario::from_toml(text) {
        Err(EngineError::Config { path, message }) => (path, message),
        other => panic!("expected a config error for {text}, got {other:?}"),
    }
}

fn err_of_json(doc: &str, overrides: &[(&str, &str)]) -> (String, String) {
    let overrides: Vec<(String, String)> = overrides.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    match Scenario::from_json(doc, &overrides) {
        Err(EngineError::Config { path, message }) => (path, message),
        other => panic!("expected a config error for {overrides:?}, got {other:?}"),
    }
}

/// The chain a - b - c - d with one flow from a to d of the given traffic table.
fn network(traffic: &str) -> String {
    format!("{}[[flows]]\nname = \"f\"\nfrom = \"a\"\nto = \"d\"\ntransport = \"udp\"\ntraffic = {traffic}\n", include_str!("data/chain4.toml"))
}

#[test]
fn a_sub_nanosecond_duration_is_refused_rather_than_rounded_to_one_nanosecond() {
    // Durations are documented as exact integer nanoseconds; "0.5ns" used to become 1 ns.
    let (path, msg) = err_of("[path.forward]\ndelay = \"0.5ns\"");
    assert_eq!(path, "path.forward.delay");
    assert!(msg.contains("not a whole number of nanoseconds"), "{msg}");
    assert!(Scenario::from_toml("[path.forward]\ndelay = \"1.5us\"").is_ok());
}

#[test]
fn an_overflowing_duration_is_reported_as_overflow_naming_the_longest() {
    // "1000000000h" used to be reported as a format error.
    let (path, msg) = err_of("stop_after = \"1000000000h\"");
    assert_eq!(path, "stop_after");
    assert!(msg.contains("too large (overflow)") && msg.contains("5124095h"), "{msg}");
}

#[test]
fn a_rate_above_one_terabit_per_second_is_refused() {
    // A CBR rate of 9,999,999,999 Gbit/s used to be accepted and ran for minutes.
    let (path, msg) = err_of(&network("{ kind = \"cbr\", rate = \"9999999999Gbps\", packet = 1000 }"));
    assert_eq!(path, "flows.0.traffic.rate");
    assert!(msg.contains("too large") && msg.contains("1000Gbps"), "{msg}");
    let (path, _) = err_of("[path.forward]\nrate = \"2000Gbps\"");
    assert_eq!(path, "path.forward.rate");
}

#[test]
fn a_size_beyond_64_bits_is_reported_as_too_large() {
    let (path, msg) = err_of_json("{}", &[("traffic.bytes", "1e30")]);
    assert_eq!(path, "traffic.bytes");
    assert!(msg.contains("too large") && msg.contains("18446744073709551615"), "{msg}");
}
