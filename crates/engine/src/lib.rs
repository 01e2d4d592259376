//! tcpenergy engine: a deterministic discrete-event simulator of TCP over impaired (wireless)
//! paths, with an energy model of radio power states and per-operation protocol processing.
//!
//! Data flows one way: scenario (TOML/JSON) -> [`config::Scenario`] (validated, path-aware
//! errors) -> [`Scenario::as_network`] (a single path is the two-node network it stands for) ->
//! [`plan::Plan`] (routes, path MTUs, segment sizes) -> [`sim::network::NetWorld`] (events, endpoints, links, meters) ->
//! [`result::network::NetRunResult`], of which the single-path [`result::RunResult`] is a view.
//!
//! Module map: `config` (scenario contract), `plan` (what a run derives from it), `units` (integer time, unit strings), `sim` (event
//! queue, random streams, run loop), `app` (sans-I/O applications: traffic sources, UDP echo,
//! the split relay), `net` (links, queues, impairments), `tcp` (sans-I/O endpoints,
//! congestion control, loss recovery), `energy` (profiles, CPU costs, meter), `metrics` (traces),
//! `result` (the result record), `capture` (packets as pcap files, outside the record).

pub mod app;
pub mod budget;
pub mod capture;
pub mod config;
pub mod energy;
pub mod emulate;
pub mod error;
pub mod metrics;
pub mod net;
pub mod plan;
pub mod profiles;
pub mod result;
pub mod sim;
pub mod tcp;
pub mod units;

pub use capture::Capture;
pub use config::Scenario;
pub use error::EngineError;
pub use result::RunResult;
pub use sim::{RunOptions, TraceSelect};

/// The engine version, recorded in every result (results stores key on it).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Run a single-path scenario with the given seed (a network scenario: [`run_network`]).
pub fn run(scenario: &Scenario, seed: u64, opts: RunOptions) -> Result<RunResult, EngineError> {
    sim::run(scenario, seed, opts)
}

/// Run a network scenario with the given seed.
pub fn run_network(scenario: &Scenario, seed: u64) -> Result<result::network::NetRunResult, EngineError> {
    run_network_captured(scenario, seed, false).map(|(r, _)| r)
}

/// Run a network scenario; with `capture`, also every frame each interface started serializing.
pub fn run_network_captured(scenario: &Scenario, seed: u64, capture: bool) -> Result<(result::network::NetRunResult, Option<Capture>), EngineError> {
    run_network_profiled(scenario, seed, capture, &[])
}

/// [`run_network_captured`], the run also priced under each of `profiles` ([`profiles`]).
pub fn run_network_profiled(
    scenario: &Scenario,
    seed: u64,
    capture: bool,
    profiles: &[profiles::ProfileSet],
) -> Result<(result::network::NetRunResult, Option<Capture>), EngineError> {
    run_network_with(scenario, seed, capture, None, profiles)
}

/// Run a network scenario as [`run_network_captured`] does, tracing the flows and nodes of
/// `trace` (indices, [`TraceSelect::resolve`]) when given, and pricing it under each of
/// `profiles`.
fn run_network_with(
    scenario: &Scenario,
    seed: u64,
    capture: bool,
    trace: Option<&(Vec<usize>, Vec<usize>)>,
    profiles: &[profiles::ProfileSet],
) -> Result<(result::network::NetRunResult, Option<Capture>), EngineError> {
    let Some(net) = scenario.network() else {
        return Err(EngineError::config("", "a single-path scenario ([path], [traffic]): run it with run()"));
    };
    let Some(node) = net.stop_on_battery else {
        let world = sim::network::NetWorld::new(scenario, seed)?.with_profiles(profiles);
        let world = if capture { world.with_capture() } else { world };
        let world = match trace {
            Some((flows, nodes)) => world.with_trace(flows, nodes),
            None => world,
        };
        return world.run_captured(seed);
    };
    // Until a battery is empty (docs/models/battery.md): the battery only listens, so a first run
    // to `stop_after` tells when it empties, and a second, identical up to then, stops there.
    let name = &net.nodes[node.index()].name;
    let cap = units::SimTime(scenario.stop_after.0);
    let first = sim::network::NetWorld::new(scenario, seed)?.with_horizon(cap).with_profiles(profiles).run(seed)?;
    let lifetime = first.nodes[name].battery.as_ref().and_then(|b| b.lifetime_s);
    let (mut record, frames) = match lifetime {
        None => (first, None),
        Some(t) => {
            let world = sim::network::NetWorld::new(scenario, seed)?.with_horizon(units::SimTime((t * 1e9).round() as u64)).with_profiles(profiles);
            let world = if capture { world.with_capture() } else { world };
            let world = match trace {
                Some((flows, nodes)) => world.with_trace(flows, nodes),
                None => world,
            };
            let (mut r, c) = world.run_captured(seed)?;
            if let Some(b) = r.nodes.get_mut(name).and_then(|n| n.battery.as_mut()) {
                b.lifetime_s = Some(t);
            }
            // Every profile keeps the stopping node's figures (`profiles::check`): its battery too.
            for p in &mut r.profiles {
                if let Some(b) = p.nodes.get_mut(name).and_then(|n| n.battery.as_mut()) {
                    b.lifetime_s = Some(t);
                }
            }
            (r, c)
        }
    };
    record.complete = lifetime.is_some();
    record.stop = Some(format!("battery_empty:{name}"));
    Ok((record, frames))
}

/// Run a scenario of either form; its record as JSON.
pub fn run_json(scenario: &Scenario, seed: u64, opts: RunOptions) -> Result<String, EngineError> {
    run_json_captured(scenario, seed, opts).map(|(r, _)| r)
}

/// Run a scenario of either form; its record as JSON and, when `opts.capture`, every frame each
/// interface started serializing. Unless `opts.force`, a run whose estimate is beyond this
/// machine ([`budget::estimate`], [`budget::Limits::of_this_machine`]) is refused with a config
/// error naming the key that drives it.
pub fn run_json_captured(scenario: &Scenario, seed: u64, opts: RunOptions) -> Result<(String, Option<Capture>), EngineError> {
    run_json_profiled(scenario, seed, opts, &[])
}

/// [`run_json_captured`], the run also priced under each of `profiles` ([`profiles`]): the
/// record's `profiles` holds, for each, the keys that depend on the profiles.
pub fn run_json_profiled(scenario: &Scenario, seed: u64, opts: RunOptions, profiles: &[profiles::ProfileSet]) -> Result<(String, Option<Capture>), EngineError> {
    run_profiled(scenario, seed, opts, profiles).map(|(r, c)| (r.to_json(), c))
}

/// A record of either form.
#[derive(Debug, Clone)]
pub enum AnyRecord {
    Path(RunResult),
    Network(result::network::NetRunResult),
}

impl AnyRecord {
    pub fn to_json(&self) -> String {
        match self {
            AnyRecord::Path(r) => r.to_json(),
            AnyRecord::Network(r) => r.to_json(),
        }
    }

    /// How many further profiles the record was priced under.
    pub fn profile_count(&self) -> usize {
        match self {
            AnyRecord::Path(r) => r.profiles.len(),
            AnyRecord::Network(r) => r.profiles.len(),
        }
    }

    /// The record of a run under the further profile `i` ([`RunResult::profile_record`]).
    pub fn profile_record(&self, i: usize) -> Option<AnyRecord> {
        match self {
            AnyRecord::Path(r) => r.profile_record(i).map(AnyRecord::Path),
            AnyRecord::Network(r) => r.profile_record(i).map(AnyRecord::Network),
        }
    }
}

/// Run a scenario of either form, also priced under each of `profiles`; the record and, when
/// `opts.capture`, the capture. Refused as [`run_json_captured`] refuses, and with `opts.trace`
/// when there are further profiles (the time series' power follows one profile).
pub fn run_profiled(scenario: &Scenario, seed: u64, opts: RunOptions, profiles: &[profiles::ProfileSet]) -> Result<(AnyRecord, Option<Capture>), EngineError> {
    run_selected(scenario, seed, opts, &TraceSelect::default(), profiles)
}

/// [`run_json_captured`], tracing what `select` names when `opts.trace` (every flow of a network
/// by default): a flow's trace is its record's `flows[i].trace` (the single path's: `trace`), a
/// node's is `nodes[name].trace`.
pub fn run_json_traced(scenario: &Scenario, seed: u64, opts: RunOptions, select: &TraceSelect) -> Result<(String, Option<Capture>), EngineError> {
    run_selected(scenario, seed, opts, select, &[]).map(|(r, c)| (r.to_json(), c))
}

/// Run a scenario of either form, tracing what `select` names when `opts.trace`, priced under
/// each of `profiles` (a trace and further profiles are refused together).
pub fn run_selected(
    scenario: &Scenario,
    seed: u64,
    opts: RunOptions,
    select: &TraceSelect,
    profiles: &[profiles::ProfileSet],
) -> Result<(AnyRecord, Option<Capture>), EngineError> {
    // A run far beyond the machine is refused before it starts, unless forced (budget.rs).
    if !opts.force {
        budget::estimate(scenario, &opts).check(&budget::Limits::of_this_machine())?;
    }
    if opts.trace && !profiles.is_empty() {
        return Err(EngineError::config(
            "profiles",
            "a trace gives the power of the scenario's own profile only; trace a run without further profiles",
        ));
    }
    let Some(net) = scenario.network() else {
        if opts.trace {
            if !select.nodes.is_empty() {
                return Err(EngineError::config("trace.nodes", "the single-path form traces its sender with its flow; node traces are for networks"));
            }
            if let Some(f) = select.flows.iter().flatten().find(|f| *f != "main") {
                return Err(EngineError::config("trace.flows", format!("no flow named {f:?}; the single-path form has one flow, main")));
            }
        }
        return sim::run_profiled(scenario, seed, opts, profiles).map(|(r, c)| (AnyRecord::Path(r), c));
    };
    let trace = if opts.trace { Some(select.resolve(net)?) } else { None };
    run_network_with(scenario, seed, opts.capture, trace.as_ref(), profiles).map(|(r, c)| (AnyRecord::Network(r), c))
}

/// Run a scenario and also return its packet capture (present when `opts.capture`).
pub fn run_captured(scenario: &Scenario, seed: u64, opts: RunOptions) -> Result<(RunResult, Option<Capture>), EngineError> {
    sim::run_captured(scenario, seed, opts)
}
