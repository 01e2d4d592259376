//! The result record: the contract that the Python front, the results store and outside scripts
//! read (DESIGN.md "The result record"). Extend it; never rename a field.

pub mod network;

use crate::config::Scenario;
use crate::energy::cpu::{CpuMeter, Op, OP_KINDS};
use crate::energy::meter::NodeEnergy;
use crate::metrics::trace::TraceColumns;
use crate::net::link::LinkCounters;
use crate::tcp::endpoint::Endpoint;
use crate::units::SimTime;
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

pub(crate) struct Parts<'a> {
    pub scenario: &'a Scenario,
    pub seed: u64,
    pub complete: bool,
    pub closed: bool,
    /// IP bytes that left the sender's interface by the end of the flow.
    pub bytes_out: u64,
    pub sim_time: SimTime,
    pub events: u64,
    pub window_end: SimTime,
    pub sender: &'a Endpoint,
    pub receiver: &'a Endpoint,
    pub sender_cpu: &'a CpuMeter,
    pub receiver_cpu: &'a CpuMeter,
    pub forward: LinkCounters,
    pub reverse: LinkCounters,
    pub energy_sender: NodeEnergy,
    pub energy_receiver: NodeEnergy,
    pub trace: Option<TraceColumns>,
    pub deliveries: Option<Vec<(u64, u64)>>,
}

fn ops(cpu: &CpuMeter) -> BTreeMap<&'static str, u64> {
    (0..OP_KINDS).map(|i| (Op::NAMES[i], cpu.count(i))).collect()
}

impl RunResult {
    pub(crate) fn assemble(p: Parts) -> Self {
        let snd = &p.sender.sender.counters();
        let rcv = p.receiver.receiver.as_ref();
        let delivered = rcv.map_or(0, |r| r.delivered);
        let completion = p.sender.sender.data_acked_at().map_or(f64::NAN, |t| t.as_secs_f64());
        let window = p.window_end.as_secs_f64();
        let per_s = |bits: f64| if window > 0.0 { bits / window } else { 0.0 };
        let rcv_counters = rcv.map(|r| r.counters.clone()).unwrap_or_default();
        RunResult {
            scenario: p.scenario.name.clone(),
            seed: p.seed,
            variant: p.scenario.tcp.variant.name().to_string(),
            complete: p.complete,
            sim_time_s: p.sim_time.as_secs_f64(),
            events: p.events,
            engine_version: crate::VERSION,
            flow: FlowResult {
                bytes_delivered: delivered,
                completion_s: completion,
                goodput_bps: per_s(delivered as f64 * 8.0),
                throughput_bps: per_s(p.bytes_out as f64 * 8.0),
                segments_sent: snd.segments_sent,
                data_segments_sent: snd.data_segments_sent,
                retransmissions: snd.retransmissions,
                timeouts: snd.timeouts,
                fast_retransmits: snd.fast_retransmits,
                acks_sent: p.receiver.counters.pure_acks_sent,
                sack_blocks_sent: p.receiver.counters.sack_blocks_sent,
                dupacks_received: snd.dupacks_received,
                ecn_reductions: snd.ecn_reductions,
                route_failures: snd.route_failures,
                probes_sent: snd.probes_sent,
                frozen_s: snd.frozen_ns as f64 * 1e-9,
                out_of_order_segments: rcv_counters.out_of_order_segments,
                duplicate_segments: rcv_counters.duplicate_segments,
                wire_bytes_sender: p.forward.bytes_sent,
                wire_bytes_receiver: p.reverse.bytes_sent,
                closed: Some(p.closed),
            },
            energy: EnergyResult { sender: p.energy_sender, receiver: p.energy_receiver, window_s: window },
            path: PathResult { forward: p.forward, reverse: p.reverse },
            cpu: CpuResult { sender_ops: ops(p.sender_cpu), receiver_ops: ops(p.receiver_cpu) },
            trace: p.trace,
            deliveries: p.deliveries,
            profiles: Vec::new(),
        }
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
