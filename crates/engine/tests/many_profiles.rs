//! Many profiles, one simulation (docs/models/energy.md "Several profiles in one run"): a run
//! priced under further profiles gives, for each, exactly the record a separate run under that
//! profile gives, byte for byte; profiles that would change the run itself are refused, naming
//! the setting.

mod common;

use serde_json::{json, Value};
use tcpenergy_engine::energy::profile;
use tcpenergy_engine::profiles::{self, ProfileSet};
use tcpenergy_engine::{run_profiled, AnyRecord, EngineError, RunOptions, Scenario};

/// A scenario file as the JSON document the Python side sends.
fn document(path: &std::path::Path) -> String {
    common::read_scenario_document(path).to_string()
}

/// `(slot key, profile table)` of every node: `energy.sender`/`energy.receiver` or `nodes.NAME.profile`.
fn node_profiles(s: &Scenario) -> Vec<(String, Value)> {
    let normalized: Value = serde_json::from_str(&s.to_json()).unwrap();
    let table = |v: &Value| match v {
        Value::String(name) => serde_json::to_value(profile::builtin(name).unwrap().unwrap()).unwrap(),
        other => other.clone(),
    };
    match normalized.get("nodes") {
        Some(Value::Object(nodes)) => nodes.iter().map(|(n, v)| (format!("nodes.{n}.profile"), table(&v["profile"]))).collect(),
        _ => ["sender", "receiver"].iter().map(|k| (format!("energy.{k}"), table(&normalized["energy"][k]))).collect(),
    }
}

/// Every meter figure of `p` scaled by `k` (powers, clock, cycle costs) and another wake time
/// (but for a cellular radio, whose timers are kept); the PHY is kept.
fn scaled(p: &Value, k: f64, wake: &str) -> Value {
    let mut p = p.clone();
    let scale = |v: &mut Value| {
        if let Some(x) = v.as_f64() {
            *v = json!(x * k);
        }
    };
    scale(&mut p["platform"]["base_power_w"]);
    for key in ["tx_power_w", "rx_power_w", "idle_power_w", "sleep_power_w", "wake_power_w"] {
        scale(&mut p["radio"][key]);
    }
    // A cellular radio's promotion and timers decide when its link carries each frame, so a
    // further profile keeps them (`profiles::check`); its powers and per-bit costs scale.
    if let Some(rrc) = p["radio"].get_mut("rrc") {
        for key in ["uplink_j_per_mbit", "downlink_j_per_mbit"] {
            scale(&mut rrc[key]);
        }
        scale(&mut rrc["paging"]["power_w"]);
        if let Value::Array(tail) = &mut rrc["tail"] {
            for state in tail {
                if state.get("power_w").is_some() {
                    scale(&mut state["power_w"]);
                }
                if state.get("drx").is_some() {
                    scale(&mut state["drx"]["power_w"]);
                }
            }
        }
    } else {
        p["radio"]["wake_time"] = json!(wake);
    }
    scale(&mut p["cpu"]["active_power_w"]);
    scale(&mut p["cpu"]["frequency_hz"]);
    if let Value::Object(cycles) = &mut p["cpu"]["cycles"] {
        cycles.values_mut().for_each(scale);
    }
    // The card interface's times, where the profile has one (docs/models/energy.md#card-interface).
    if p.get("card").is_some() {
        scale(&mut p["card"]["frame_us"]);
        scale(&mut p["card"]["byte_ns"]);
    }
    p["name"] = json!(format!("scaled-{k}"));
    p
}

/// Two profiles for `s` as overrides: every node's figures scaled (but for a node whose battery
/// ends the run), and another radio policy where the run allows one.
fn two_profiles(s: &Scenario) -> Vec<Vec<(String, String)>> {
    let stop = s.network().and_then(|n| n.stop_on_battery.map(|id| format!("nodes.{}.profile", n.nodes[id.index()].name)));
    let psm = s.energy.radio_policy == tcpenergy_engine::config::RadioPolicy::Psm;
    [(0.5, "1ms", "\"ideal\"", "\"100ms\""), (3.0, "40us", "\"idle_timeout\"", "\"30ms\"")]
        .iter()
        .map(|(k, wake, policy, timeout)| {
            let mut set: Vec<(String, String)> = node_profiles(s)
                .into_iter()
                .filter(|(slot, _)| Some(slot) != stop.as_ref())
                .map(|(slot, p)| (slot, scaled(&p, *k, wake).to_string()))
                .collect();
            if !psm && stop.is_none() {
                set.push(("energy.radio_policy".into(), policy.to_string()));
                set.push(("energy.timeout".into(), timeout.to_string()));
            }
            set
        })
        .collect()
}

fn run(s: &Scenario, sets: &[ProfileSet]) -> AnyRecord {
    run_profiled(s, s.seed, RunOptions::default(), sets).unwrap().0
}

#[test]
fn each_further_profile_gives_the_record_of_a_separate_run_under_it_in_every_scenario_file() {
    for path in common::scenario_files() {
        let text = document(&path);
        let base = Scenario::from_json(&text, &[]).unwrap();
        let sets_as_overrides = two_profiles(&base);
        let sets = profiles::from_overrides(&text, &[], &base, &sets_as_overrides).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        let priced = run(&base, &sets);
        assert_eq!(priced.profile_count(), 2, "{path:?}");
        // The scenario's own record is what a run without further profiles gives.
        let own = run(&base, &[]).to_json();
        assert_eq!(priced.profile_record(usize::MAX).map(|r| r.to_json()), None);
        let mut without = priced.clone();
        match &mut without {
            AnyRecord::Path(r) => r.profiles.clear(),
            AnyRecord::Network(r) => r.profiles.clear(),
        }
        assert_eq!(without.to_json(), own, "{path:?}: the scenario's own record changed");
        for (i, set) in sets_as_overrides.iter().enumerate() {
            let alone = Scenario::from_json(&text, set).unwrap();
            let expected = run(&alone, &[]).to_json();
            let got = priced.profile_record(i).unwrap().to_json();
            assert_eq!(got, expected, "{path:?}: profile {i}");
            assert_ne!(got, own, "{path:?}: profile {i} priced nothing differently");
        }
    }
}

fn refusal(scenario: &str, set: &[(&str, &str)]) -> (String, String) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios").join(scenario);
    let text = document(&path);
    let base = Scenario::from_json(&text, &[]).unwrap();
    let set: Vec<(String, String)> = set.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    match profiles::from_overrides(&text, &[], &base, &[vec![], set]) {
        Err(EngineError::Config { path, message }) => (path, message),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn turning_80211_power_save_on_or_off_changes_the_run_and_is_refused() {
    let (path, message) = refusal("wifi-psm.toml", &[("energy.radio_policy", "\"always_on\"")]);
    assert_eq!(path, "profiles.1.energy.radio_policy");
    assert!(message.contains("802.11 power save"), "{message}");
}

#[test]
fn another_radio_phy_changes_when_the_radio_is_on_the_air_and_is_refused() {
    // ideal-nic-0.3 has no PHY: its radio is on the air while the link serializes.
    let (path, message) = refusal("quickstart.toml", &[("energy.sender", "\"ideal-nic-0.3\"")]);
    assert_eq!(path, "profiles.1.energy.sender.radio.phy");
    assert!(message.contains("on the air"), "{message}");
}

#[test]
fn the_profile_of_the_node_whose_battery_ends_the_run_cannot_vary() {
    let (path, message) = refusal("agrawal2003-battery.toml", &[("nodes.sender.profile", "\"singh2002-toshiba-wavelan\"")]);
    assert_eq!(path, "profiles.1.nodes.sender.profile");
    assert!(message.contains("battery is empty"), "{message}");
    let (path, _) = refusal("agrawal2003-battery.toml", &[("energy.radio_policy", "\"ideal\"")]);
    assert_eq!(path, "profiles.1.energy.radio_policy");
}

#[test]
fn a_profile_sets_energy_settings_only() {
    let (path, message) = refusal("quickstart.toml", &[("tcp.variant", "\"reno\"")]);
    assert_eq!(path, "profiles.1.tcp.variant");
    assert!(message.contains("not a profile setting"), "{message}");
}

#[test]
fn a_bad_figure_in_a_profile_is_reported_at_its_place_in_the_list() {
    let (path, _) = refusal("quickstart.toml", &[("energy.sender", "\"no-such-profile\"")]);
    assert_eq!(path, "profiles.1.energy.sender");
}

#[test]
fn a_trace_follows_one_profile_so_it_is_refused_with_further_profiles() {
    let s = common::scenario("sack", "100KB", "", "");
    let sets = vec![ProfileSet::of(&s)];
    let opts = RunOptions { trace: true, ..Default::default() };
    match run_profiled(&s, 1, opts, &sets) {
        Err(EngineError::Config { path, .. }) => assert_eq!(path, "profiles"),
        other => panic!("expected a refusal, got {:?}", other.map(|r| r.0.to_json())),
    }
}
