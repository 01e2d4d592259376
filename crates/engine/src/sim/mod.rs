//! The discrete-event core: the event queue, the random streams and the world (`network`): one
//! run loop for both scenario forms. A single-path scenario runs as the two-node network it
//! stands for ([`Scenario::as_network`]); its record is a view of the network record
//! ([`RunResult::of_network`]).

pub mod network;
pub mod queue;
pub mod rng;

use crate::capture::Capture;
use crate::config::Scenario;
use crate::error::EngineError;
use crate::result::RunResult;

/// Packets in flight, stored once and addressed by index.
struct Slab<T> {
    items: Vec<T>,
    free: Vec<u32>,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Self { items: Vec::new(), free: Vec::new() }
    }
}

impl<T: Copy> Slab<T> {
    #[inline]
    fn insert(&mut self, seg: T) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.items[i as usize] = seg;
                i
            }
            None => {
                self.items.push(seg);
                (self.items.len() - 1) as u32
            }
        }
    }
    /// A copy of a stored packet, left in place.
    #[inline]
    fn get(&self, i: u32) -> T {
        self.items[i as usize]
    }

    #[inline]
    fn get_mut(&mut self, i: u32) -> &mut T {
        &mut self.items[i as usize]
    }

    /// Packets stored and not yet taken.
    fn in_use(&self) -> usize {
        self.items.len() - self.free.len()
    }

    #[inline]
    fn take(&mut self, i: u32) -> T {
        self.free.push(i);
        self.items[i as usize]
    }
}

/// Options for one run.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunOptions {
    /// Record the sender's time series.
    pub trace: bool,
    /// Record every range of bytes the receiver delivers to the application (for checks).
    pub record_deliveries: bool,
    /// Record every frame each link starts serializing, for pcap files ([`run_captured`]).
    pub capture: bool,
    /// Run even when the estimate says the run is far beyond this machine (`crate::budget`;
    /// checked by `run_json` and `run_json_captured`).
    pub force: bool,
}

/// Run the single-path `scenario` with `seed`.
pub fn run(scenario: &Scenario, seed: u64, opts: RunOptions) -> Result<RunResult, EngineError> {
    run_captured(scenario, seed, opts).map(|(r, _)| r)
}

fn single_path_only(scenario: &Scenario) -> Result<(), EngineError> {
    match scenario.network {
        None => Ok(()),
        Some(_) => Err(EngineError::config("", "a network scenario ([nodes], [[links]], [[flows]]): run it with run_network() or run_json()")),
    }
}

/// Run the single-path `scenario` with `seed` through its network; the second value is the
/// packet capture when `opts.capture`.
pub fn run_captured(scenario: &Scenario, seed: u64, opts: RunOptions) -> Result<(RunResult, Option<Capture>), EngineError> {
    single_path_only(scenario)?;
    let net = scenario.as_network()?;
    let (record, capture) = network::NetWorld::single_path(&net, seed, opts)?.run_captured(seed)?;
    let record = RunResult::of_network(record)?;
    if record.flow.bytes_delivered > scenario.traffic.bytes {
        return Err(EngineError::Invariant(format!(
            "receiver got {} bytes of a {}-byte transfer",
            record.flow.bytes_delivered, scenario.traffic.bytes
        )));
    }
    Ok((record, capture))
}
