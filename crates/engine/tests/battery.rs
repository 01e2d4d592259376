//! Batteries in network runs (docs/models/battery.md): a node's power drains its battery, and
//! `stop = "battery_empty:NODE"` runs until that battery is empty (seed 003's lifetime runs).

use tcpenergy_engine::{run_network, EngineError, Scenario};

/// A laptop sending to a server over one link until its battery (`battery`) is empty.
fn laptop(battery: &str, stop_after: &str, extra: &str) -> String {
    format!(
        r#"
stop_after = "{stop_after}"
stop = "battery_empty:laptop"
[energy]
default_profile = "agrawal2003-samsung-wavelan-turbo"
[nodes]
laptop = {{ battery = {battery} }}
server = {{}}
[[links]]
between = ["laptop", "server"]
rate = "11Mbps"
delay = "1ms"
[[flows]]
name = "ttcp"
from = "laptop"
to = "server"
traffic = {{ kind = "timed", duration = "10h" }}
{extra}
"#
    )
}

fn scenario(text: &str) -> Scenario {
    Scenario::from_toml(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

#[test]
fn an_ideal_battery_run_stops_when_the_node_has_drawn_exactly_its_capacity() {
    // 2 mAh at 10 V = 72 J: a few seconds of a laptop's power.
    let r = run_network(&scenario(&laptop(r#"{ capacity = "2mAh", voltage = "10V" }"#, "1h", "")), 1).unwrap();
    let b = r.nodes["laptop"].battery.as_ref().expect("battery in the record");
    let t = b.lifetime_s.expect("it empties");
    assert!(r.complete && r.stop.as_deref() == Some("battery_empty:laptop"), "{:?} {:?}", r.complete, r.stop);
    assert!((r.energy.window_s - t).abs() < 1e-9, "window {} vs lifetime {t}", r.energy.window_s);
    assert!((b.capacity_j - 72.0).abs() < 1e-9);
    // Everything the laptop drew over its lifetime is its capacity (to the nanosecond step).
    let e = r.nodes["laptop"].energy.total_j;
    assert!((e - b.capacity_j).abs() < 1e-6 * b.capacity_j, "drew {e} J of {} J", b.capacity_j);
    assert!(b.remaining_j.abs() < 1e-6 && b.remaining_fraction.abs() < 1e-9);
    // The flow was cut short by the battery, and it delivered bytes until then.
    assert!(!r.flows[0].complete && r.flows[0].flow.bytes_delivered > 0);
    // The series falls from full to empty at its sampling interval (10 s default).
    assert_eq!(b.series_remaining_mah[0], 2.0);
    assert!(b.series_remaining_mah.windows(2).all(|w| w[1] <= w[0]));
}

#[test]
fn a_battery_that_outlasts_stop_after_leaves_the_run_incomplete_with_no_lifetime() {
    let r = run_network(&scenario(&laptop(r#"{ capacity = "4000mAh", voltage = "10.8V" }"#, "30s", "")), 1).unwrap();
    let b = r.nodes["laptop"].battery.as_ref().unwrap();
    assert!(!r.complete && b.lifetime_s.is_none());
    assert!((r.energy.window_s - 30.0).abs() < 1e-9);
    let drawn = b.capacity_j - b.remaining_j;
    let e = r.nodes["laptop"].energy.total_j;
    assert!((drawn - e).abs() < 1e-6 * e, "battery lost {drawn} J, node drew {e} J");
    assert_eq!(b.series_t_s, (0..=3).map(|k| k as f64 * 10.0).collect::<Vec<_>>());
}

#[test]
fn the_battery_models_order_lifetimes_as_their_laws_say() {
    let life = |battery: &str| {
        let r = run_network(&scenario(&laptop(battery, "1h", "")), 1).unwrap();
        r.nodes["laptop"].battery.as_ref().unwrap().lifetime_s.unwrap()
    };
    let ideal = life(r#"{ capacity = "2mAh", voltage = "10V" }"#);
    // Rated over 10 h, the laptop's ~1 A is far above the rated current: Peukert shortens it.
    let peukert = life(r#"{ capacity = "2mAh", voltage = "10V", model = "peukert", exponent = 1.2, rated_time = "10h" }"#);
    // A KiBaM battery delivers less than its capacity under load.
    let kibam = life(r#"{ capacity = "2mAh", voltage = "10V", model = "kibam", c = 0.5, k = 0.01 }"#);
    assert!(peukert < ideal && kibam < ideal, "ideal {ideal} s, peukert {peukert} s, kibam {kibam} s");
    // The same seed gives the same lifetime.
    assert_eq!(life(r#"{ capacity = "2mAh", voltage = "10V" }"#), ideal);
}

fn err_of(text: &str) -> (String, String) {
    match Scenario::from_toml(text) {
        Err(EngineError::Config { path, message }) => (path, message),
        other => panic!("expected a config error, got {other:?}"),
    }
}

#[test]
fn bad_batteries_and_stops_are_refused_with_the_key_path() {
    let (p, m) = err_of(&laptop(r#"{ capacity = "0mAh", voltage = "10V" }"#, "1h", ""));
    assert_eq!((p.as_str(), m.as_str()), ("nodes.laptop.battery.capacity", "must be > 0, got \"0mAh\""));
    let (p, m) = err_of(&laptop(r#"{ capacity = "-5Wh", voltage = "10V" }"#, "1h", ""));
    assert_eq!(p, "nodes.laptop.battery.capacity", "{m}");
    let (p, m) = err_of(&laptop(r#"{ capacity = "4000", voltage = "10V" }"#, "1h", ""));
    assert!(p == "nodes.laptop.battery.capacity" && m.contains("mAh or an energy in Wh"), "{m}");
    let (p, _) = err_of(&laptop(r#"{ capacity = "4000mAh", voltage = "0V" }"#, "1h", ""));
    assert_eq!(p, "nodes.laptop.battery.voltage");
    let (p, m) = err_of(&laptop(r#"{ capacity = "4000mAh", voltage = "10V", model = "lead" }"#, "1h", ""));
    assert!(p == "nodes.laptop.battery.model" && m.contains("ideal, peukert, kibam"), "{m}");
    let (p, _) = err_of(&laptop(r#"{ capacity = "4000mAh", voltage = "10V", model = "kibam", k = 0.1 }"#, "1h", ""));
    assert_eq!(p, "nodes.laptop.battery.c");
    let (p, _) = err_of(&laptop(r#"{ capacity = "4000mAh", voltage = "10V", model = "kibam", c = 1.5, k = 0.1 }"#, "1h", ""));
    assert_eq!(p, "nodes.laptop.battery.c");
    let (p, m) = err_of(&laptop(r#"{ capacity = "4000mAh", voltage = "10V", exponent = 1.2 }"#, "1h", ""));
    assert!(p == "nodes.laptop.battery.exponent" && m.contains("not a setting of the ideal model"), "{m}");
    // A stop on a node without a battery, or of another form.
    let text = laptop(r#"{ capacity = "4000mAh", voltage = "10V" }"#, "1h", "").replace("battery_empty:laptop", "battery_empty:server");
    let (p, m) = err_of(&text);
    assert!(p == "stop" && m.starts_with("node \"server\" has no battery"), "{m}");
    let text = laptop(r#"{ capacity = "4000mAh", voltage = "10V" }"#, "1h", "").replace("battery_empty:laptop", "when_done");
    assert_eq!(err_of(&text).0, "stop");
}

#[test]
fn a_battery_scenario_round_trips_through_its_normal_form() {
    let s = scenario(&laptop(r#"{ capacity = "2mAh", voltage = "10V", model = "peukert", exponent = 1.2, rated_time = "10h" }"#, "1h", ""));
    let json = s.to_json();
    assert!(json.contains("\"stop\":\"battery_empty:laptop\"") && json.contains("\"model\":\"peukert\""), "{json}");
    assert_eq!(Scenario::from_json(&json, &[]).unwrap().to_json(), json);
}
