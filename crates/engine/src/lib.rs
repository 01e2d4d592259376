//! tcpenergy engine: a deterministic discrete-event simulator of TCP over impaired (wireless)
//! paths, with an energy model of radio power states and per-operation protocol processing.
//!
//! Data flows one way: scenario (TOML/JSON) -> [`config::Scenario`] (validated, path-aware
//! errors) -> [`Scenario::as_network`] (a single path is the two-node network it stands for) ->
//! [`sim::network::NetWorld`] (events, endpoints, links, meters) ->
//! [`result::network::NetRunResult`], of which the single-path [`result::RunResult`] is a view.
//!
//! Module map: `config` (scenario contract), `units` (integer time, unit strings), `sim` (event
//! queue, random streams, run loop), `app` (sans-I/O applications: traffic sources, UDP echo,
//! the split relay), `net` (links, queues, impairments), `tcp` (sans-I/O endpoints,
//! congestion control, loss recovery), `energy` (profiles, CPU costs, meter), `metrics` (traces),
//! `result` (the result record), `capture` (packets as pcap files, outside the record).

pub mod app;
pub mod budget;
pub mod capture;
pub mod config;
pub mod energy;
pub mod error;
pub mod metrics;
pub mod net;
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
    run_network_traced(scenario, seed, capture, None)
}

/// Run a network scenario as [`run_network_captured`] does, tracing the flows and nodes of
/// `trace` (indices, [`TraceSelect::resolve`]) when given.
fn run_network_traced(
    scenario: &Scenario,
    seed: u64,
    capture: bool,
    trace: Option<&(Vec<usize>, Vec<usize>)>,
) -> Result<(result::network::NetRunResult, Option<Capture>), EngineError> {
    if scenario.network.is_none() {
        return Err(EngineError::config("", "a single-path scenario ([path], [traffic]): run it with run()"));
    }
    let net = scenario.network.as_ref().expect("checked above");
    let Some(node) = net.stop_on_battery else {
        let world = sim::network::NetWorld::new(scenario, seed)?;
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
    let first = sim::network::NetWorld::new(scenario, seed)?.with_horizon(cap).run(seed)?;
    let lifetime = first.nodes[name].battery.as_ref().and_then(|b| b.lifetime_s);
    let (mut record, frames) = match lifetime {
        None => (first, None),
        Some(t) => {
            let world = sim::network::NetWorld::new(scenario, seed)?.with_horizon(units::SimTime((t * 1e9).round() as u64));
            let world = if capture { world.with_capture() } else { world };
            let world = match trace {
                Some((flows, nodes)) => world.with_trace(flows, nodes),
                None => world,
            };
            let (mut r, c) = world.run_captured(seed)?;
            if let Some(b) = r.nodes.get_mut(name).and_then(|n| n.battery.as_mut()) {
                b.lifetime_s = Some(t);
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
    run_json_traced(scenario, seed, opts, &TraceSelect::default())
}

/// [`run_json_captured`], tracing what `select` names when `opts.trace` (every flow of a network
/// by default): a flow's trace is its record's `flows[i].trace` (the single path's: `trace`), a
/// node's is `nodes[name].trace`.
pub fn run_json_traced(scenario: &Scenario, seed: u64, opts: RunOptions, select: &TraceSelect) -> Result<(String, Option<Capture>), EngineError> {
    // A run far beyond the machine is refused before it starts, unless forced (budget.rs).
    if !opts.force {
        budget::estimate(scenario, &opts).check(&budget::Limits::of_this_machine())?;
    }
    let Some(net) = &scenario.network else {
        if opts.trace {
            if !select.nodes.is_empty() {
                return Err(EngineError::config("trace.nodes", "the single-path form traces its sender with its flow; node traces are for networks"));
            }
            if let Some(f) = select.flows.iter().flatten().find(|f| *f != "main") {
                return Err(EngineError::config("trace.flows", format!("no flow named {f:?}; the single-path form has one flow, main")));
            }
        }
        return sim::run_captured(scenario, seed, opts).map(|(r, c)| (r.to_json(), c));
    };
    let trace = if opts.trace { Some(select.resolve(net)?) } else { None };
    run_network_traced(scenario, seed, opts.capture, trace.as_ref()).map(|(r, c)| (r.to_json(), c))
}

/// Run a scenario and also return its packet capture (present when `opts.capture`).
pub fn run_captured(scenario: &Scenario, seed: u64, opts: RunOptions) -> Result<(RunResult, Option<Capture>), EngineError> {
    sim::run_captured(scenario, seed, opts)
}
