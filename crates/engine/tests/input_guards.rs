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

#[test]
fn retransmission_timers_and_probes_shorter_than_one_millisecond_are_refused() {
    // min_rto = max_rto = "1ns" used to cost about a billion events per simulated second.
    let (path, msg) = err_of("[tcp]\nmin_rto = \"1ns\"\nmax_rto = \"1ns\"");
    assert_eq!(path, "tcp.min_rto");
    assert!(msg.contains("at least 1ms") && msg.contains("got 1ns"), "{msg}");
    for (key, table) in [
        ("initial_rto", "[tcp]\ninitial_rto = \"999us\""),
        ("fixed_rto", "[tcp]\nfixed_rto = \"1us\""),
        ("elfn_probe_interval", "[tcp]\nelfn_probe_interval = \"10ns\""),
        ("e2tcp.min_timeout", "[tcp]\nvariant = \"e2tcp\"\ne2tcp = { min_timeout = \"100us\" }"),
    ] {
        let (path, msg) = err_of(table);
        assert_eq!(path, format!("tcp.{key}"), "{msg}");
        assert!(msg.contains("at least 1ms"), "{msg}");
    }
    let per_flow = network("{ kind = \"cbr\", rate = \"1Mbps\", packet = 1000 }")
        .replace("transport = \"udp\"", "tcp = { min_rto = \"1ns\" }");
    assert_eq!(err_of(&per_flow).0, "flows.0.tcp.min_rto");
    // The bound itself is allowed (and ns-2's 200 ms, the shipped scenarios' values, far above it).
    assert!(Scenario::from_toml("[tcp]\nmin_rto = \"1ms\"\nmax_rto = \"1ms\"\ninitial_rto = \"1ms\"").is_ok());
}

#[test]
fn an_on_off_interval_shorter_than_one_millisecond_is_refused() {
    // An on/off interval of "1ns" used to be accepted.
    let (path, msg) = err_of(&network("{ kind = \"on_off\", message = 100, interval = \"1ns\" }"));
    assert_eq!(path, "flows.0.traffic.interval");
    assert!(msg.contains("at least 1ms") && msg.contains("got 1ns"), "{msg}");
    assert!(Scenario::from_toml(&network("{ kind = \"on_off\", message = 100, interval = \"1ms\" }")).is_ok());
}

#[test]
fn a_battery_sample_shorter_than_one_second_is_refused() {
    // sample = "1ms" over a 3.4 h lifetime took 36.6 s and 891 MB; "1us" aborted the process.
    let with_sample = |sample: &str| network("{ kind = \"cbr\", rate = \"1Mbps\", packet = 1000 }")
        .replace("a = {}", &format!("a = {{ battery = {{ capacity = \"4000mAh\", voltage = \"10.8V\", sample = \"{sample}\" }} }}"));
    for sample in ["1us", "1ms", "999ms"] {
        let (path, msg) = err_of(&with_sample(sample));
        assert_eq!(path, "nodes.a.battery.sample");
        assert!(msg.contains("at least 1s"), "{msg}");
    }
    assert!(Scenario::from_toml(&with_sample("1s")).is_ok());
}

#[test]
fn a_queue_of_more_than_a_million_packets_is_refused() {
    // A queue's storage is sized from its capacity: queue = 4000000000 aborted the process
    // ("memory allocation of 32000000008 bytes failed").
    let (path, msg) = err_of("[path.forward]\nqueue = 4000000000");
    assert_eq!(path, "path.forward.queue");
    assert!(msg.contains("between 1 and 1000000 packets"), "{msg}");
    let (path, _) = err_of(&network("{ kind = \"cbr\", rate = \"1Mbps\", packet = 1000 }").replacen("delay = \"1ms\"", "delay = \"1ms\"\nqueue = 2000000", 1));
    assert_eq!(path, "links.0.forward.queue");
    assert!(Scenario::from_toml("[path.forward]\nqueue = 1000000").is_ok());
}

#[test]
fn a_petabyte_transfer_cut_short_by_stop_after_runs_without_reserving_logs_for_all_of_it() {
    // The sender's and receiver's radio logs were reserved for every segment of the transfer
    // up front: 1 PB aborted the process ("memory allocation of 10958904110608 bytes failed").
    let s = Scenario::from_toml("stop_after = \"1s\"\n[traffic]\nkind = \"bulk\"\nbytes = 1000000000000000").unwrap();
    let r = tcpenergy_engine::run(&s, 1, tcpenergy_engine::RunOptions::default()).unwrap();
    assert!(!r.complete && r.flow.bytes_delivered > 0);
}

#[test]
fn a_battery_series_too_long_to_keep_is_an_error_naming_the_sample_not_an_abort() {
    // The remaining-capacity series grew one sample at a time: a series too long for memory
    // aborted the process ("memory allocation of 4294967296 bytes failed", issue #24). It is now
    // reserved fallibly and bounded (energy::battery::MAX_SERIES_SAMPLES).
    let text = format!(
        "stop = \"battery_empty:a\"\n{}[[flows]]\nname = \"f\"\nfrom = \"a\"\nto = \"d\"\ntransport = \"udp\"\nstart = \"5000000h\"\ntraffic = {{ kind = \"cbr\", rate = \"1Mbps\", packet = 1000 }}\n",
        include_str!("data/chain4.toml")
            .replace("stop_after = \"300s\"", "stop_after = \"5000000h\"")
            .replace("a = {}", "a = { battery = { capacity = \"4000mAh\", voltage = \"10.8V\", sample = \"1s\" } }")
    );
    let s = Scenario::from_toml(&text).unwrap();
    match tcpenergy_engine::run_network(&s, 1) {
        Err(EngineError::Config { path, message }) => {
            assert_eq!(path, "nodes.a.battery.sample");
            assert!(message.contains("18000000002 samples") && message.contains("at most 10000000"), "{message}");
        }
        other => panic!("expected an error naming the battery's sample, got {other:?}"),
    }
}
