//! Bad scenarios give one error naming the key and what is allowed; no input panics.

use std::panic::catch_unwind;
use tcpenergy_engine::{EngineError, Scenario};

fn err_of(toml_text: &str) -> (String, String) {
    match Scenario::from_toml(toml_text) {
        Err(EngineError::Config { path, message }) => (path, message),
        other => panic!("expected a config error for {toml_text:?}, got {other:?}"),
    }
}

#[test]
fn unknown_key_is_named_with_its_path() {
    let (path, msg) = err_of("[path.forward]\nrat = \"2Mbps\"");
    assert_eq!(path, "path.forward.rat");
    assert!(msg.contains("unknown field") && msg.contains("rate"), "{msg}");
}

#[test]
fn wrong_type_is_named_with_its_path() {
    let (path, msg) = err_of("[path]\nmtu = \"big\"");
    assert_eq!(path, "path.mtu");
    assert!(msg.contains("expected"), "{msg}");
}

#[test]
fn negative_rate_is_rejected() {
    let (path, msg) = err_of("[path.forward]\nrate = \"-2Mbps\"");
    assert_eq!(path, "path.forward.rate");
    assert!(msg.contains("Mbps"), "{msg}");
}

#[test]
fn probability_outside_unit_interval_is_rejected() {
    let (path, msg) = err_of("[path.forward]\nimpairments = [{kind = \"bernoulli\", p = 1.5}]");
    assert_eq!(path, "path.forward.impairments.0.p");
    assert!(msg.contains("[0, 1]"), "{msg}");
}

#[test]
fn a_send_buffer_smaller_than_one_segment_is_rejected() {
    let (path, msg) = err_of("[tcp]\nsend_buffer = \"1KB\"");
    assert_eq!(path, "tcp.send_buffer");
    assert!(msg.contains("at least one segment"), "{msg}");
}

#[test]
fn an_outage_mode_must_be_drop_or_hold_and_hold_limit_needs_hold() {
    let (path, msg) = err_of("[path.forward]\nimpairments = [{kind = \"outage\", down = \"1s\", every = \"5s\", mode = \"queue\"}]");
    assert_eq!(path, "path.forward.impairments.0.mode");
    assert!(msg.contains("drop") && msg.contains("hold"), "{msg}");
    let (path, msg) = err_of("[path.forward]\nimpairments = [{kind = \"outage\", down = \"1s\", every = \"5s\", hold_limit = 4}]");
    assert_eq!(path, "path.forward.impairments.0.hold_limit");
    assert!(msg.contains("mode = \"hold\""), "{msg}");
}

#[test]
fn unknown_variant_lists_the_allowed_ones() {
    let (path, msg) = err_of("[tcp]\nvariant = \"vegas\"");
    assert_eq!(path, "tcp.variant");
    assert!(msg.contains("newreno") && msg.contains("sack"), "{msg}");
}

#[test]
fn unknown_profile_lists_the_built_in_ones() {
    let (path, msg) = err_of("[energy]\nsender = \"nokia\"");
    assert_eq!(path, "energy.sender");
    assert!(msg.contains("singh2002-toshiba-wavelan"), "{msg}");
}

#[test]
fn unknown_impairment_kind_lists_the_kinds() {
    let (path, msg) = err_of("[path.reverse]\nimpairments = [{kind = \"gremlin\"}]");
    assert_eq!(path, "path.reverse.impairments.0.kind");
    assert!(msg.contains("gilbert_elliott"), "{msg}");
}

#[test]
fn unknown_key_inside_an_impairment_is_named() {
    let (path, _) = err_of("[path.forward]\nimpairments = [{kind = \"bernoulli\", p = 0.1, q = 2}]");
    assert_eq!(path, "path.forward.impairments.0.q");
}

#[test]
fn override_of_a_missing_list_element_is_an_error_at_that_key() {
    let doc = r#"{"path": {"forward": {"impairments": []}}}"#;
    let e = Scenario::from_json(doc, &[("path.forward.impairments.0.p".into(), "0.1".into())]).unwrap_err();
    assert!(matches!(e, EngineError::Config { ref path, .. } if path == "path.forward.impairments.0"), "{e:?}");
}

#[test]
fn override_of_an_unknown_key_is_rejected_by_the_schema() {
    let e = Scenario::from_json("{}", &[("tcp.varient".into(), "\"reno\"".into())]).unwrap_err();
    assert!(matches!(e, EngineError::Config { ref path, .. } if path == "tcp.varient"), "{e:?}");
}

#[test]
fn no_bad_value_at_any_key_panics() {
    let keys = [
        "name", "seed", "stop_after", "path", "path.mtu", "path.frame_overhead", "path.forward", "path.forward.rate",
        "path.forward.delay", "path.forward.queue", "path.forward.impairments", "path.forward.impairments.0",
        "path.forward.impairments.0.p", "path.forward.impairments.0.kind", "tcp", "tcp.variant",
        "tcp.initial_window", "tcp.initial_ssthresh", "tcp.min_rto", "tcp.max_rto", "tcp.initial_rto",
        "tcp.clock_granularity", "tcp.timestamps", "tcp.sack", "tcp.delayed_ack", "tcp.delayed_ack.every",
        "tcp.delayed_ack.timeout", "tcp.receive_buffer", "tcp.send_buffer", "tcp.cwnd_growth", "tcp.dupack_threshold", "traffic",
        "traffic.kind", "traffic.bytes", "energy", "energy.sender", "energy.sender.radio", "energy.radio_policy",
        "energy.timeout",
    ];
    let values = [
        "\"x\"", "-1", "0", "1e300", "-1e300", "[]", "{}", "true", "null", "18446744073709551615", "\"0ms\"",
        "\"99999999999999h\"", "\"1.5.5s\"", "\"\"", "[{\"kind\": 3}]", "{\"kind\": \"jitter\", \"min\": \"5ms\", \"max\": \"1ms\"}",
    ];
    let base = r#"{"path": {"forward": {"impairments": [{"kind": "bernoulli", "p": 0.1}]}}}"#;
    for k in keys {
        for v in values {
            let outcome = catch_unwind(|| Scenario::from_json(base, &[(k.to_string(), v.to_string())]));
            assert!(outcome.is_ok(), "setting {k} = {v} panicked");
        }
    }
}

#[test]
fn an_unknown_tcp_stack_lists_the_presets() {
    let (path, msg) = err_of("[tcp]\nstack = \"windows-95\"");
    assert_eq!(path, "tcp.stack");
    assert!(msg.contains("freebsd-4.3") && msg.contains("linux-2.2") && msg.contains("linux-6"), "{msg}");
}

#[test]
fn a_timer_tick_must_be_zero_or_between_1us_and_1s() {
    for key in ["timer_tick", "delayed_ack_tick"] {
        let (path, msg) = err_of(&format!("[tcp]\n{key} = \"2s\""));
        assert_eq!(path, format!("tcp.{key}"));
        assert!(msg.contains("0 (exact timers)") && msg.contains("1s"), "{msg}");
        let (path, msg) = err_of(&format!("[tcp]\n{key} = \"soon\""));
        assert_eq!(path, format!("tcp.{key}"));
        assert!(msg.contains("duration"), "{msg}");
    }
}

#[test]
fn a_periodic_offset_is_a_duration_or_random_and_phase_group_needs_random() {
    let (path, msg) = err_of("[path.forward]\nimpairments = [{kind = \"outage\", down = \"1s\", every = \"5s\", offset = \"sometimes\"}]");
    assert_eq!(path, "path.forward.impairments.0.offset");
    assert!(msg.contains("\"random\""), "{msg}");
    let (path, msg) = err_of("[path.forward]\nimpairments = [{kind = \"periodic_burst\", p = 0.5, on = \"1s\", every = \"5s\", offset = \"2s\", phase_group = \"x\"}]");
    assert_eq!(path, "path.forward.impairments.0.phase_group");
    assert!(msg.contains("offset = \"random\""), "{msg}");
}

/// A scenario whose sender is the Toshiba profile given inline, with the figure at `path` (its
/// tables, then its key) set to `value`: the config error's path and message.
fn err_of_inline_figure(path: &[&str], value: serde_json::Value) -> (String, String) {
    let profile = tcpenergy_engine::energy::profile::builtin("singh2002-toshiba-wavelan").unwrap().unwrap();
    let mut sender = serde_json::to_value(&profile).unwrap();
    let (key, tables) = path.split_last().expect("a figure's path");
    let table = tables.iter().fold(&mut sender, |node, t| &mut node[*t]);
    table[*key] = value;
    let doc = serde_json::json!({ "energy": { "sender": sender } }).to_string();
    match Scenario::from_json(&doc, &[]) {
        Err(EngineError::Config { path, message }) => (path, message),
        other => panic!("expected a config error for {}, got {other:?}", path.join(".")),
    }
}

fn err_of_inline_phy(key: &str, value: serde_json::Value) -> (String, String) {
    err_of_inline_figure(&["radio", "phy", key], value)
}

#[test]
fn a_radio_phy_rate_must_be_a_positive_bit_rate() {
    let (path, msg) = err_of_inline_phy("rate", "0bps".into());
    assert_eq!(path, "energy.sender.radio.phy.rate");
    assert!(msg.contains("> 0"), "{msg}");
    let (path, msg) = err_of_inline_phy("rate", 11_000_000.into());
    assert_eq!(path, "energy.sender.radio.phy.rate");
    assert!(msg.contains("Mbps"), "{msg}");
}

#[test]
fn a_radio_phy_preamble_and_mac_overhead_are_bounded() {
    let (path, msg) = err_of_inline_phy("preamble", "1s".into());
    assert_eq!(path, "energy.sender.radio.phy.preamble");
    assert!(msg.contains("between 0s and 10ms"), "{msg}");
    let (path, msg) = err_of_inline_phy("mac_overhead", 70_000.into());
    assert_eq!(path, "energy.sender.radio.phy.mac_overhead");
    assert!(msg.contains("between 0 and 65535 bytes"), "{msg}");
    let (path, msg) = err_of_inline_phy("guard", 1.into());
    assert_eq!(path, "energy.sender.radio.phy.guard");
    assert!(msg.contains("unknown field") && msg.contains("mac_overhead"), "{msg}");
}

fn err_of_inline_card(key: &str, value: serde_json::Value) -> (String, String) {
    err_of_inline_figure(&["card", key], value)
}

/// docs/models/profiles.md, the profile format: the card interface's times are numbers of µs and
/// ns between 0 and 10,000, its header a byte count; a wrong one is named with its place.
#[test]
fn a_card_interface_s_times_and_header_are_bounded_and_named() {
    let (path, msg) = err_of_inline_card("frame_us", (-1.0).into());
    assert_eq!(path, "energy.sender.card.frame_us");
    assert!(msg.contains("between 0 and 10000") && msg.contains("µs"), "{msg}");
    let (path, msg) = err_of_inline_card("byte_ns", 20_000.0.into());
    assert_eq!(path, "energy.sender.card.byte_ns");
    assert!(msg.contains("between 0 and 10000"), "{msg}");
    let (path, msg) = err_of_inline_card("link_header", 70_000.into());
    assert_eq!(path, "energy.sender.card.link_header");
    assert!(msg.contains("between 0 and 65535 bytes"), "{msg}");
    let (path, msg) = err_of_inline_card("dma", true.into());
    assert_eq!(path, "energy.sender.card.dma");
    assert!(msg.contains("unknown field") && msg.contains("frame_us"), "{msg}");
}
