//! Traces of either scenario form (metrics/trace.rs, docs/models/energy.md "Traces"): power is a
//! step function of time with a row at every change of a node's radio or CPU state, so its step
//! integral over the metered window is the record's energy for that node; flows and nodes are
//! selected by name.

use serde_json::Value;
use tcpenergy_engine::{run_json_traced, RunOptions, Scenario, TraceSelect};

fn scenario(file: &str) -> Scenario {
    let path = format!("{}/../../scenarios/{file}", env!("CARGO_MANIFEST_DIR"));
    Scenario::from_toml(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn run(s: &Scenario, select: &TraceSelect) -> Value {
    let opts = RunOptions { trace: true, ..Default::default() };
    serde_json::from_str(&run_json_traced(s, 1, opts, select).unwrap().0).unwrap()
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect()
}

/// Each row's power times the time to the next row, over [0, w].
fn step_integral(trace: &Value, w: f64) -> f64 {
    let (t, p) = (floats(&trace["t_s"]), floats(&trace["power_w"]));
    assert!(t.windows(2).all(|x| x[0] <= x[1]), "rows in time order");
    let mut joules = 0.0;
    for k in 0..t.len() {
        let next = t.get(k + 1).copied().unwrap_or(w).min(w);
        if t[k] < w {
            joules += p[k] * (next - t[k]);
        }
    }
    joules
}

/// Equal up to float summation: the meter sums joules per radio segment and CPU interval, the
/// integral per row, each of up to a million terms rounded to 2^-53: a relative difference far
/// below 1e-9. Times are nanoseconds shown in seconds (exact to 2^-53 relative as well).
fn assert_integrates_to(trace: &Value, w: f64, total_j: f64, what: &str) {
    let j = step_integral(trace, w);
    assert!((j - total_j).abs() <= 1e-9 * total_j, "{what}: power integrates to {j} J, the record says {total_j} J");
}

#[test]
fn a_single_path_traces_power_integral_is_the_senders_energy() {
    let r = run(&scenario("quickstart.toml"), &TraceSelect::default());
    let w = r["energy"]["window_s"].as_f64().unwrap();
    assert_integrates_to(&r["trace"], w, r["energy"]["sender"]["total_j"].as_f64().unwrap(), "quickstart sender");
    // The protocol columns hold the sender's rows; power steps repeat the state in force.
    let cwnd = r["trace"]["cwnd_bytes"].as_array().unwrap();
    assert_eq!(cwnd.len(), r["trace"]["power_w"].as_array().unwrap().len());
}

#[test]
fn a_networks_flow_and_node_traces_integrate_to_their_nodes_energy() {
    let s = scenario("chain-3hop.toml");
    let net = s.network().unwrap();
    let nodes: Vec<String> = net.nodes.iter().map(|n| n.name.clone()).collect();
    let r = run(&s, &TraceSelect { flows: None, nodes: nodes.clone() });
    let w = r["energy"]["window_s"].as_f64().unwrap();
    for (i, f) in r["flows"].as_array().unwrap().iter().enumerate() {
        if net.flows[i].transport == tcpenergy_engine::config::network::Transport::Tcp {
            let src = f["from"].as_str().unwrap();
            assert_integrates_to(&f["trace"], w, r["nodes"][src]["total_j"].as_f64().unwrap(), &format!("flow {i}"));
        }
    }
    for n in &nodes {
        assert_integrates_to(&r["nodes"][n]["trace"], w, r["nodes"][n]["total_j"].as_f64().unwrap(), n);
    }
}

#[test]
fn an_802_11_psm_nodes_power_trace_shows_its_dozing_and_integrates_to_its_energy_ieee_802_11_s11_2_3() {
    let s = scenario("wifi-psm.toml");
    let r = run(&s, &TraceSelect { flows: Some(vec![]), nodes: vec!["laptop".into(), "ap".into()] });
    let w = r["energy"]["window_s"].as_f64().unwrap();
    for n in ["laptop", "ap"] {
        assert_integrates_to(&r["nodes"][n]["trace"], w, r["nodes"][n]["total_j"].as_f64().unwrap(), n);
    }
    let states = r["nodes"]["laptop"]["trace"]["radio_state"].as_array().unwrap();
    assert!(states.iter().any(|s| s == "sleep") && states.iter().any(|s| s == "waking"), "the laptop dozes between beacons");
    assert!(r["flows"].as_array().unwrap().iter().all(|f| f.get("trace").is_none()), "no flow asked for");
    assert!(r["nodes"]["server"].get("trace").is_none(), "no trace for a node not asked for");
}

#[test]
fn a_udp_flow_has_no_sender_state_to_trace_and_is_refused_naming_its_node() {
    let opts = RunOptions { trace: true, ..Default::default() };
    let select = TraceSelect { flows: Some(vec!["ping".into()]), nodes: vec![] };
    let e = run_json_traced(&scenario("wifi-psm.toml"), 1, opts, &select).unwrap_err().to_string();
    assert!(e.contains("trace.flows") && e.contains("UDP") && e.contains("\"laptop\""), "{e}");
}

#[test]
fn an_unknown_flow_or_node_is_refused_naming_the_key_and_the_names_allowed() {
    let s = scenario("chain-3hop.toml");
    let opts = RunOptions { trace: true, ..Default::default() };
    let e = run_json_traced(&s, 1, opts, &TraceSelect { flows: Some(vec!["nope".into()]), nodes: vec![] }).unwrap_err().to_string();
    assert!(e.contains("trace.flows") && e.contains("\"nope\""), "{e}");
    let e = run_json_traced(&s, 1, opts, &TraceSelect { flows: None, nodes: vec!["zz".into()] }).unwrap_err().to_string();
    assert!(e.contains("trace.nodes") && e.contains("\"zz\""), "{e}");
    let e = run_json_traced(&scenario("quickstart.toml"), 1, opts, &TraceSelect { flows: None, nodes: vec!["sender".into()] }).unwrap_err().to_string();
    assert!(e.contains("trace.nodes"), "{e}");
}
