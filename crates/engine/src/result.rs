//! The result record: the contract that the Python front, the results store and outside scripts
//! read (DESIGN.md "The result record"). Extend it; never rename a field.

pub mod flow;
pub mod network;

use crate::energy::meter::NodeEnergy;
use crate::error::EngineError;
use crate::metrics::trace::TraceColumns;
use crate::net::link::LinkCounters;
use network::{NetFlowResult, NetRunResult};
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RunResult {
    pub scenario: String,
    pub seed: u64,
    pub variant: String,
    pub complete: bool,
    pub sim_time_s: f64,
    pub events: u64,
    pub engine_version: &'static str,
    pub flow: FlowResult,
    pub energy: EnergyResult,
    pub path: PathResult,
    pub cpu: CpuResult,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceColumns>,
    /// Delivered byte ranges, when recorded (`RunOptions::record_deliveries`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deliveries: Option<Vec<(u64, u64)>>,
    /// The run priced under each further profile asked for, in order (docs/units-and-scenarios.md,
    /// "Several profiles in one run"); absent when none was.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub profiles: Vec<PathProfile>,
}

/// The keys of a single-path record that depend on the device profiles, under one profile:
/// put in place of the record's own, they give the record of a run under that profile.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PathProfile {
    pub energy: EnergyResult,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FlowResult {
    /// Application bytes delivered in order to the receiver.
    pub bytes_delivered: u64,
    /// When the sender had every data byte acknowledged (s); NaN if it never did.
    pub completion_s: f64,
    /// Delivered application bits per second of completion time.
    pub goodput_bps: f64,
    /// IP bits that left the sender's interface (headers and retransmissions included) by the
    /// end of the flow, per second of the flow.
    pub throughput_bps: f64,
    /// Segments the sender sent carrying data, SYN or FIN, retransmissions included.
    pub segments_sent: u64,
    pub data_segments_sent: u64,
    pub retransmissions: u64,
    pub timeouts: u64,
    pub fast_retransmits: u64,
    /// Pure ACKs the receiver sent.
    pub acks_sent: u64,
    pub sack_blocks_sent: u64,
    pub dupacks_received: u64,
    pub ecn_reductions: u64,
    /// ELFN: route-failure notices acted on, probes sent, seconds frozen.
    pub route_failures: u64,
    pub probes_sent: u64,
    pub frozen_s: f64,
    pub out_of_order_segments: u64,
    pub duplicate_segments: u64,
    /// IP bytes that left the sender's and the receiver's interface by the end of the run.
    pub wire_bytes_sender: u64,
    pub wire_bytes_receiver: u64,
    /// TCP: both ends closed the connection (FIN handshake done) by the end of the run; a
    /// transfer is complete without it. Null for UDP.
    pub closed: Option<bool>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct EnergyResult {
    pub sender: NodeEnergy,
    pub receiver: NodeEnergy,
    /// The measurement window [0, window_s] (s): until the last data byte is acknowledged.
    pub window_s: f64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PathResult {
    pub forward: LinkCounters,
    pub reverse: LinkCounters,
}

/// Protocol operations charged to each node's CPU, by kind.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CpuResult {
    pub sender_ops: BTreeMap<&'static str, u64>,
    pub receiver_ops: BTreeMap<&'static str, u64>,
}

impl RunResult {
    /// The single-path record as a view of the record of the network the single path stands
    /// for (`Scenario::as_network`): its one flow, its source (`sender`) and destination
    /// (`receiver`) nodes, and the link's two directions. Its `events` are the network run's:
    /// the single path's transfer begins with the run, without a start event.
    pub fn of_network(net: NetRunResult) -> Result<Self, EngineError> {
        let shape = || EngineError::Invariant("a single-path record is a view of a network of one flow over one link".into());
        let [flow]: [NetFlowResult; 1] = net.flows.try_into().map_err(|_| shape())?;
        let node = |name: &str| net.nodes.get(name).ok_or_else(shape);
        let link = |a: &str, b: &str| net.links.get(&format!("{a}->{b}")).copied().ok_or_else(shape);
        let (sender, receiver) = (node(&flow.from)?, node(&flow.to)?);
        let priced = |p: &network::NetProfile, name: &str| p.nodes.get(name).map(|m| m.energy.clone()).ok_or_else(shape);
        let profiles = net
            .profiles
            .iter()
            .map(|p| Ok(PathProfile { energy: EnergyResult { sender: priced(p, &flow.from)?, receiver: priced(p, &flow.to)?, window_s: p.energy.window_s } }))
            .collect::<Result<Vec<_>, EngineError>>()?;
        Ok(RunResult {
            scenario: net.scenario,
            seed: net.seed,
            variant: flow.variant,
            complete: net.complete,
            sim_time_s: net.sim_time_s,
            events: net.events,
            engine_version: net.engine_version,
            energy: EnergyResult { sender: sender.energy.clone(), receiver: receiver.energy.clone(), window_s: net.energy.window_s },
            path: PathResult { forward: link(&flow.from, &flow.to)?, reverse: link(&flow.to, &flow.from)? },
            cpu: CpuResult { sender_ops: sender.cpu_ops.clone(), receiver_ops: receiver.cpu_ops.clone() },
            flow: flow.flow,
            trace: flow.trace,
            deliveries: flow.deliveries,
            profiles,
        })
    }

    /// The record of a run under the further profile `i` (`profiles[i]` in place of the record's
    /// own energy); `None` when there is no such profile.
    pub fn profile_record(&self, i: usize) -> Option<RunResult> {
        let p = self.profiles.get(i)?;
        Some(RunResult { energy: p.energy.clone(), profiles: Vec::new(), ..self.clone() })
    }

    /// The record as JSON. Non-finite floats (e.g. completion of an unfinished run) become null.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("result serializes")
    }
}
