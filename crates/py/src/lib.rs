//! Python bindings of the tcpenergy engine: convert, call, map errors. No simulation logic here.

// pyo3 0.22's exception macro checks a cfg this crate does not declare.
#![allow(unexpected_cfgs)]

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::panic::{catch_unwind, AssertUnwindSafe};
use tcpenergy_engine::profiles::ProfileSet;
use tcpenergy_engine::{AnyRecord, EngineError as EngineErr, RunOptions, Scenario, TraceSelect};

create_exception!(_engine, TcpEnergyError, PyException, "Base class of every tcpenergy error.");
create_exception!(_engine, ScenarioError, TcpEnergyError, "The scenario is invalid; `.path` names the key.");
create_exception!(_engine, EngineError, TcpEnergyError, "An internal engine invariant failed (a bug).");

/// One mapping from engine errors to Python exceptions.
fn to_py(py: Python<'_>, e: EngineErr) -> PyErr {
    match e {
        EngineErr::Config { path, message } => {
            let text = if path.is_empty() { message.clone() } else { format!("{path}: {message}") };
            let err = ScenarioError::new_err(text);
            let value = err.value_bound(py);
            let _ = value.setattr("path", path);
            let _ = value.setattr("message", message);
            err
        }
        EngineErr::Invariant(msg) => EngineError::new_err(msg),
    }
}

/// Run engine code, turning a panic into EngineError instead of aborting the interpreter.
fn guarded<T>(py: Python<'_>, f: impl FnOnce() -> Result<T, EngineErr>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(to_py(py, e)),
        Err(panic) => {
            let msg = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".into());
            Err(EngineError::new_err(format!("engine panicked: {msg}")))
        }
    }
}

/// Further profiles as the bindings take them: per profile, [(dotted key, JSON value text)].
type Profiles = Vec<Vec<(String, String)>>;

/// The scenario, its seed and the profile sets of `profiles` (`tcpenergy_engine::profiles`).
fn prepare(text: &str, seed: Option<u64>, overrides: &[(String, String)], profiles: &[Vec<(String, String)>]) -> Result<(Scenario, u64, Vec<ProfileSet>), EngineErr> {
    let s = Scenario::from_json(text, overrides)?;
    let sets = tcpenergy_engine::profiles::from_overrides(text, overrides, &s, profiles)?;
    let seed = seed.unwrap_or(s.seed);
    Ok((s, seed, sets))
}

/// Run a scenario (JSON text) with overrides [(dotted key, JSON value text)]; returns the result
/// record as JSON text. The GIL is released while the simulation runs.
/// A run whose estimate is far beyond this machine is refused (a ScenarioError naming the key
/// that drives it) unless `force`. With `trace`, the flows named in `trace_flows` (every flow
/// when None) and the nodes in `trace_nodes` are traced. `profiles`: further profiles to price
/// the run under, each a list of overrides of energy settings; the record's `profiles` holds
/// their part.
#[pyfunction]
#[pyo3(signature = (scenario_json, seed=None, overrides=Vec::new(), trace=false, force=false, profiles=Vec::new(), trace_flows=None, trace_nodes=Vec::new()))]
#[allow(clippy::too_many_arguments)]
fn run(
    py: Python<'_>,
    scenario_json: &str,
    seed: Option<u64>,
    overrides: Vec<(String, String)>,
    trace: bool,
    force: bool,
    profiles: Profiles,
    trace_flows: Option<Vec<String>>,
    trace_nodes: Vec<String>,
) -> PyResult<String> {
    let select = TraceSelect { flows: trace_flows, nodes: trace_nodes };
    simulate(py, scenario_json, seed, overrides, RunOptions { trace, force, ..Default::default() }, profiles, select).map(|(r, _, _)| r)
}

/// pcap files: (file stem, bytes).
type PcapFiles = Vec<(String, Vec<u8>)>;

/// One run with the GIL released: the record as JSON and the capture's pcap files, if any: each
/// interface's, and each node's own view.
fn simulate(
    py: Python<'_>,
    scenario_json: &str,
    seed: Option<u64>,
    overrides: Vec<(String, String)>,
    opts: RunOptions,
    profiles: Profiles,
    select: TraceSelect,
) -> PyResult<(String, PcapFiles, PcapFiles)> {
    let text = scenario_json.to_owned();
    let result = py.allow_threads(move || {
        catch_unwind(AssertUnwindSafe(|| {
            let (s, seed, sets) = prepare(&text, seed, &overrides, &profiles)?;
            let (record, capture) = tcpenergy_engine::run_selected(&s, seed, opts, &select, &sets)?;
            let (files, nodes) = capture.map(|c| (c.pcap_files(), c.node_pcap_files())).unwrap_or_default();
            Ok((record.to_json(), files, nodes))
        }))
    });
    guarded(py, || match result {
        Ok(r) => r,
        Err(p) => std::panic::resume_unwind(p),
    })
}

/// Like `run`, and also capture every frame each interface starts serializing: returns the record,
/// a list of (file stem named by the interface's nodes, pcap file bytes), e.g.
/// ("sender-receiver", b"..."), and a list of (node name, pcap bytes) of each node's own view.
#[pyfunction]
#[pyo3(signature = (scenario_json, seed=None, overrides=Vec::new(), trace=false, force=false, profiles=Vec::new(), trace_flows=None, trace_nodes=Vec::new()))]
#[allow(clippy::too_many_arguments)]
fn run_captured(
    py: Python<'_>,
    scenario_json: &str,
    seed: Option<u64>,
    overrides: Vec<(String, String)>,
    trace: bool,
    force: bool,
    profiles: Profiles,
    trace_flows: Option<Vec<String>>,
    trace_nodes: Vec<String>,
) -> PyResult<(String, Vec<(String, PyObject)>, Vec<(String, PyObject)>)> {
    let select = TraceSelect { flows: trace_flows, nodes: trace_nodes };
    let opts = RunOptions { trace, capture: true, force, ..Default::default() };
    let (record, files, nodes) = simulate(py, scenario_json, seed, overrides, opts, profiles, select)?;
    let py_files = |files: PcapFiles| files.into_iter().map(|(name, bytes)| (name, PyBytes::new_bound(py, &bytes).into_any().unbind())).collect();
    Ok((record, py_files(files), py_files(nodes)))
}

/// Run once and price the run under the scenario's own profiles and each of `profiles`; returns
/// one whole record per profile, the scenario's own first: each is, byte for byte, the record a
/// separate run under that profile gives.
#[pyfunction]
#[pyo3(signature = (scenario_json, seed=None, overrides=Vec::new(), profiles=Vec::new(), force=false))]
fn run_each_profile(py: Python<'_>, scenario_json: &str, seed: Option<u64>, overrides: Vec<(String, String)>, profiles: Profiles, force: bool) -> PyResult<Vec<String>> {
    let text = scenario_json.to_owned();
    let result = py.allow_threads(move || {
        catch_unwind(AssertUnwindSafe(|| {
            let (s, seed, sets) = prepare(&text, seed, &overrides, &profiles)?;
            let (record, _) = tcpenergy_engine::run_profiled(&s, seed, RunOptions { force, ..Default::default() }, &sets)?;
            let mut own = record.clone();
            match &mut own {
                AnyRecord::Path(r) => r.profiles.clear(),
                AnyRecord::Network(r) => r.profiles.clear(),
            }
            let mut out = vec![own.to_json()];
            for i in 0..record.profile_count() {
                out.push(record.profile_record(i).ok_or_else(|| EngineErr::Invariant(format!("no record of profile {i}")))?.to_json());
            }
            Ok(out)
        }))
    });
    guarded(py, || match result {
        Ok(r) => r,
        Err(p) => std::panic::resume_unwind(p),
    })
}

/// Validate a scenario; returns the normalized scenario (all defaults filled in) as JSON text.
#[pyfunction]
#[pyo3(signature = (scenario_json, overrides=Vec::new()))]
fn validate(py: Python<'_>, scenario_json: &str, overrides: Vec<(String, String)>) -> PyResult<String> {
    guarded(py, || Scenario::from_json(scenario_json, &overrides).map(|s| s.to_json()))
}

/// What a run of the scenario would cost (events, memory, each part with its key) and this
/// machine's limits, as JSON: {"events", "memory_bytes", "parts": [...], "limits": {...},
/// "summary", "refusal": null or {"path", "message", "reason" (the message without advice)}}.
#[pyfunction]
#[pyo3(signature = (scenario_json, overrides=Vec::new(), trace=false, capture=false))]
fn estimate(py: Python<'_>, scenario_json: &str, overrides: Vec<(String, String)>, trace: bool, capture: bool) -> PyResult<String> {
    guarded(py, || {
        let s = Scenario::from_json(scenario_json, &overrides)?;
        let est = tcpenergy_engine::budget::estimate(&s, &RunOptions { trace, capture, ..Default::default() });
        let limits = tcpenergy_engine::budget::Limits::of_this_machine();
        let refusal = est.beyond(&limits).zip(est.refusal(&limits)).map(|((path, reason), e)| match e {
            EngineErr::Config { message, .. } => serde_json::json!({ "path": path, "message": message, "reason": reason }),
            other => serde_json::json!({ "path": path, "message": other.to_string(), "reason": reason }),
        });
        let mut v = serde_json::to_value(&est).map_err(|e| EngineErr::Invariant(e.to_string()))?;
        v["limits"] = serde_json::to_value(limits).map_err(|e| EngineErr::Invariant(e.to_string()))?;
        v["summary"] = est.summary().into();
        v["refusal"] = refusal.unwrap_or(serde_json::Value::Null);
        Ok(v.to_string())
    })
}

/// The built-in device profiles as a JSON object {name: profile}.
#[pyfunction]
fn profiles(py: Python<'_>) -> PyResult<String> {
    guarded(py, || {
        let mut map = serde_json::Map::new();
        for name in tcpenergy_engine::energy::profile::builtin_names() {
            let p = tcpenergy_engine::energy::profile::builtin(name).expect("listed")?;
            map.insert(name.to_string(), serde_json::to_value(p).map_err(|e| EngineErr::Invariant(e.to_string()))?);
        }
        Ok(serde_json::Value::Object(map).to_string())
    })
}

/// The CPU cycle-cost figures a profile holds, in table order, as a JSON list of
/// {key ("cpu.cycles.NAME"), name, default (null: required), per_byte, operation, doc}.
#[pyfunction]
fn cycle_figures() -> String {
    let list: Vec<serde_json::Value> = tcpenergy_engine::energy::cpu::CYCLE_FIGURES
        .iter()
        .map(|f| {
            serde_json::json!({
                "key": format!("cpu.cycles.{}", f.key),
                "name": f.key,
                "default": f.default,
                "per_byte": f.per_byte,
                "operation": f.operation,
                "doc": f.doc,
            })
        })
        .collect();
    serde_json::Value::Array(list).to_string()
}

/// The engine version.
/// Emulate a scenario on real devices (kernel mode, `tcpenergy_engine::emulate`): `hosts` are
/// (node name, IPv4 address as four bytes, TUN descriptor) for each node with a host (the rest
/// are routers), `ports` each flow's listening port, `control` a descriptor that becomes
/// readable to end the run; with `capture`, each interface's frames are kept; `origin_s` is the
/// run's time 0 on the monotonic clock (`time.monotonic()`), now when None. Returns the record
/// as JSON text and the capture's (file stem, pcap bytes). The GIL is released while it runs.
#[pyfunction]
#[pyo3(signature = (scenario_json, seed, overrides, hosts, ports, control, limit_s, lag_bound_ms, capture=false, origin_s=None))]
#[allow(clippy::too_many_arguments)]
fn emulate(
    py: Python<'_>,
    scenario_json: &str,
    seed: Option<u64>,
    overrides: Vec<(String, String)>,
    hosts: Vec<(String, [u8; 4], i32)>,
    ports: Vec<u16>,
    control: i32,
    limit_s: f64,
    lag_bound_ms: f64,
    capture: bool,
    origin_s: Option<f64>,
) -> PyResult<(String, Vec<(String, PyObject)>)> {
    let text = scenario_json.to_owned();
    let result = py.allow_threads(move || {
        catch_unwind(AssertUnwindSafe(|| {
            let (s, seed, _) = prepare(&text, seed, &overrides, &[])?;
            let limit = std::time::Duration::from_secs_f64(limit_s.clamp(0.0, 1e7));
            let origin_ns = origin_s.map(|s| (s.max(0.0) * 1e9).round() as u64);
            let setup = tcpenergy_engine::emulate::Setup { hosts, ports, control, origin_ns, limit, lag_bound_ms, capture };
            tcpenergy_engine::emulate::run_json(&s, seed, &setup)
        }))
    });
    let (record, files) = guarded(py, || match result {
        Ok(r) => r,
        Err(p) => std::panic::resume_unwind(p),
    })?;
    Ok((record, files.into_iter().map(|(name, bytes)| (name, PyBytes::new_bound(py, &bytes).into())).collect()))
}

/// Meter one node's packets in a pcap capture (`tcpenergy_engine::emulate::analyze`): `node` its
/// IPv4 address as four bytes, the profile and radio policy those of the scenario's sender,
/// `window` (start, end) in ns on the capture's clock, each None for the capture's own span.
#[pyfunction]
#[pyo3(signature = (scenario_json, pcap, node, window_start=None, window_end=None))]
fn analyze(py: Python<'_>, scenario_json: &str, pcap: &[u8], node: [u8; 4], window_start: Option<u64>, window_end: Option<u64>) -> PyResult<String> {
    let text = scenario_json.to_owned();
    let bytes = pcap.to_vec();
    let result = py.allow_threads(move || {
        catch_unwind(AssertUnwindSafe(|| {
            let s = Scenario::from_json(&text, &[])?;
            tcpenergy_engine::emulate::analyze_json(&s, &bytes, node, (window_start, window_end))
        }))
    });
    guarded(py, || match result {
        Ok(r) => r,
        Err(p) => std::panic::resume_unwind(p),
    })
}

#[pyfunction]
fn version() -> &'static str {
    tcpenergy_engine::VERSION
}

#[pymodule]
fn _engine(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(run_captured, m)?)?;
    m.add_function(wrap_pyfunction!(run_each_profile, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(estimate, m)?)?;
    m.add_function(wrap_pyfunction!(profiles, m)?)?;
    m.add_function(wrap_pyfunction!(cycle_figures, m)?)?;
    m.add_function(wrap_pyfunction!(emulate, m)?)?;
    m.add_function(wrap_pyfunction!(analyze, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add("__version__", tcpenergy_engine::VERSION)?;
    m.add("TcpEnergyError", py.get_type_bound::<TcpEnergyError>())?;
    m.add("ScenarioError", py.get_type_bound::<ScenarioError>())?;
    m.add("EngineError", py.get_type_bound::<EngineError>())?;
    Ok(())
}
