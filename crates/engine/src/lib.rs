//! tcpenergy engine: a deterministic discrete-event simulator of TCP over impaired (wireless)
//! paths, with an energy model of radio power states and per-operation protocol processing.
//!
//! Data flows one way: scenario (TOML/JSON) -> [`config::Scenario`] (validated, path-aware
//! errors) -> [`sim::World`] (events, endpoints, links, meters) -> [`result::RunResult`].
//!
//! Module map: `config` (scenario contract), `units` (integer time, unit strings), `sim` (event
//! queue, random streams, run loop), `net` (links, queues, impairments), `tcp` (sans-I/O endpoints,
//! congestion control, loss recovery), `energy` (profiles, CPU costs, meter), `metrics` (traces),
//! `result` (the result record), `capture` (packets as pcap files, outside the record).

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
pub use sim::RunOptions;

/// The engine version, recorded in every result (results stores key on it).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Run a scenario with the given seed.
pub fn run(scenario: &Scenario, seed: u64, opts: RunOptions) -> Result<RunResult, EngineError> {
    sim::run(scenario, seed, opts)
}

/// Run a scenario and also return its packet capture (present when `opts.capture`).
pub fn run_captured(scenario: &Scenario, seed: u64, opts: RunOptions) -> Result<(RunResult, Option<Capture>), EngineError> {
    sim::run_captured(scenario, seed, opts)
}
