//! The discrete-event core: the event queue, the random streams and the world (`network`): one
//! run loop for both scenario forms. A single-path scenario runs as the two-node network it
//! stands for ([`Scenario::as_network`]); its record is a view of the network record
//! ([`RunResult::of_network`]).

pub mod network;
pub mod queue;
pub mod rng;

use crate::capture::Capture;
use crate::config::{Scenario, TrafficConfig};
use crate::error::EngineError;
use crate::profiles::ProfileSet;
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

    /// A stored packet, read in place.
    #[inline]
    fn at(&self, i: u32) -> &T {
        &self.items[i as usize]
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

    /// Forget a stored packet that was read in place ([`Slab::at`]).
    #[inline]
    fn free(&mut self, i: u32) {
        self.free.push(i);
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

/// What a run traces when [`RunOptions::trace`] is set: TCP flows by name (their source ends,
/// each with its node's power; every TCP flow when `None`) and nodes by name (their power). The
/// single-path form traces its one flow, `main`, and no node.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TraceSelect {
    pub flows: Option<Vec<String>>,
    pub nodes: Vec<String>,
}

impl TraceSelect {
    /// The indices of the flows and nodes it names in `net`; an unknown name is an error naming
    /// `trace.flows` or `trace.nodes` and the names allowed.
    pub fn resolve(&self, net: &crate::config::network::NetworkConfig) -> Result<(Vec<usize>, Vec<usize>), EngineError> {
        let find = |key: &str, what: &str, names: &[&str], wanted: &str| -> Result<usize, EngineError> {
            names.iter().position(|n| *n == wanted).ok_or_else(|| EngineError::config(key, format!("no {what} named {wanted:?}; the scenario has {}", names.join(", "))))
        };
        let flow_names: Vec<&str> = net.flows.iter().map(|f| f.name.as_str()).collect();
        let node_names: Vec<&str> = net.nodes.iter().map(|n| n.name.as_str()).collect();
        let tcp = |f: usize| net.flows[f].transport == crate::config::network::Transport::Tcp;
        let flows = match &self.flows {
            None => (0..net.flows.len()).filter(|&f| tcp(f)).collect(),
            Some(list) => list.iter().map(|f| find("trace.flows", "flow", &flow_names, f)).collect::<Result<Vec<_>, _>>()?,
        };
        // A flow's trace is its TCP sender's state; a UDP source's power is its node's trace.
        if let Some(&f) = flows.iter().find(|&&f| !tcp(f)) {
            let (name, node) = (&net.flows[f].name, &net.flows[f].from);
            return Err(EngineError::config("trace.flows", format!("flow {name:?} is UDP: it has no sender state to trace; trace its node {node:?} instead")));
        }
        let nodes = self.nodes.iter().map(|n| find("trace.nodes", "node", &node_names, n)).collect::<Result<_, _>>()?;
        Ok((flows, nodes))
    }
}

/// Run the single-path `scenario` with `seed`.
pub fn run(scenario: &Scenario, seed: u64, opts: RunOptions) -> Result<RunResult, EngineError> {
    run_captured(scenario, seed, opts).map(|(r, _)| r)
}

/// The transfer of the single-path `scenario`; an error for a network.
fn single_path_only(scenario: &Scenario) -> Result<&TrafficConfig, EngineError> {
    scenario.traffic().ok_or_else(|| EngineError::config("", "a network scenario ([nodes], [[links]], [[flows]]): run it with run_network() or run_json()"))
}

/// Run the single-path `scenario` with `seed` through its network; the second value is the
/// packet capture when `opts.capture`.
pub fn run_captured(scenario: &Scenario, seed: u64, opts: RunOptions) -> Result<(RunResult, Option<Capture>), EngineError> {
    run_profiled(scenario, seed, opts, &[])
}

/// [`run_captured`], the run also priced under each of `profiles` (`crate::profiles`).
pub fn run_profiled(scenario: &Scenario, seed: u64, opts: RunOptions, profiles: &[ProfileSet]) -> Result<(RunResult, Option<Capture>), EngineError> {
    let traffic = single_path_only(scenario)?;
    let net = scenario.as_network()?;
    let (record, capture) = network::NetWorld::single_path_profiled(&net, seed, opts, profiles)?.run_captured(seed)?;
    let record = RunResult::of_network(record)?;
    if record.flow.bytes_delivered > traffic.bytes {
        return Err(EngineError::Invariant(format!(
            "receiver got {} bytes of a {}-byte transfer",
            record.flow.bytes_delivered, traffic.bytes
        )));
    }
    Ok((record, capture))
}
