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

/// Every message the scenario's serde structs can give for a value of the wrong type or size.
fn type_errors() -> Vec<(String, String, String)> {
    let single = "{}".to_string();
    let net_toml = format!(
        "{}[[flows]]\nname = \"f\"\nfrom = \"a\"\nto = \"d\"\ntraffic = {{ kind = \"bulk\", bytes = \"5MB\" }}\n",
        include_str!("data/chain4.toml")
    );
    let net: serde_json::Value = toml::from_str(&net_toml).unwrap();
    let net = net.to_string();
    let cases: &[(&str, &str, &str)] = &[
        (&single, "path", "3"),
        (&single, "path.forward", "3"),
        (&single, "path.forward.red", "3"),
        (&single, "path.forward.cross_traffic", "3"),
        (&single, "path.forward.impairments.0", "3"),
        (&single, "path.forward.impairments", "[{\"kind\": \"gilbert_elliott\", \"good\": 3, \"bad\": 3}]"),
        (&single, "path.forward.impairments", "[{\"kind\": \"outage\", \"down\": \"1s\", \"every\": \"5s\", \"notify\": 3}]"),
        (&single, "path.mtu", "1e30"),
        (&single, "path.mtu", "1000000000000000000000000000000"),
        (&single, "path.mtu", "5000000000"),
        (&single, "path.mtu", "1.5"),
        (&single, "path.forward.queue", "true"),
        (&single, "seed", "1000000000000000000000000000000"),
        (&single, "tcp", "3"),
        (&single, "tcp.variant", "3"),
        (&single, "tcp.delayed_ack", "3"),
        (&single, "tcp.timestamps", "{}"),
        (&single, "tcp.alpha", "\"x\""),
        (&single, "traffic", "3"),
        (&single, "energy", "3"),
        (&single, "energy.radio_policy", "[]"),
        (&single, "energy.sender", "{\"name\": \"x\", \"platform\": 3, \"radio\": 3, \"cpu\": 3}"),
        (&net, "nodes.c", "\"x\""),
        (&net, "nodes.c.battery", "3"),
        (&net, "flows.0", "3"),
        (&net, "flows.0.transport", "3"),
        (&net, "flows.0.traffic", "{\"kind\": \"on_off\", \"message\": 1e30, \"interval\": \"1s\"}"),
        (&net, "flows.0.split", "{\"at\": 3, \"buffer\": \"1MB\"}"),
        (&net, "channels", "[3]"),
        (&net, "pipes", "[3]"),
        (&net, "metrics", "3"),
        (&net, "links.0.between", "3"),
    ];
    cases
        .iter()
        .map(|(doc, key, value)| {
            let (path, msg) = err_of_json(doc, &[(key, value)]);
            (format!("{key} = {value}"), path, msg)
        })
        .collect()
}

#[test]
fn type_errors_use_the_scenario_s_words_not_rust_type_names() {
    // `nodes.c: ... expected struct RawNode` used to show an internal type name.
    let internal = ["struct ", "Raw", "enum ", "u32", "u64", "f64", "string or map", "floating point", "integer `", "a map", "a sequence"];
    for (case, path, msg) in type_errors() {
        assert!(!internal.iter().any(|w| msg.contains(w)), "{case}: {path}: {msg}");
        assert!(!path.is_empty(), "{case}: {msg}");
    }
    let (path, msg) = err_of_json(&toml::from_str::<serde_json::Value>(&network("{ kind = \"bulk\", bytes = \"1MB\" }")).unwrap().to_string(), &[("nodes.c", "\"x\"")]);
    assert_eq!((path.as_str(), msg.as_str()), ("nodes.c", "expected a table of node settings (profile, battery; {} for the defaults), got \"x\""));
}

#[test]
fn an_integer_too_large_for_its_key_is_reported_as_too_large_with_the_maximum() {
    // An integer of 10^30 used to be reported as "floating point 1e+30".
    let (path, msg) = err_of_json("{}", &[("path.mtu", "1000000000000000000000000000000")]);
    assert_eq!((path.as_str(), msg.as_str()), ("path.mtu", "1e30 is too large: at most 4294967295"));
    let (_, msg) = err_of_json("{}", &[("path.mtu", "5000000000")]);
    assert_eq!(msg, "5000000000 is too large: at most 4294967295");
    let (path, msg) = err_of_json("{}", &[("seed", "1000000000000000000000000000000")]);
    assert_eq!((path.as_str(), msg.as_str()), ("seed", "1e30 is too large: at most 18446744073709551615"));
}
