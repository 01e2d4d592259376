//! The record of a network run (DESIGN.md "Networks"): one entry per flow, per node and per
//! link direction, network totals, and the single-flow keys (`flow`, `energy.sender`,
//! `energy.receiver`) as aliases when the network carries exactly one flow.

use super::FlowResult;
use crate::energy::meter::NodeEnergy;
use crate::metrics::efficiency::{self, Efficiency, MetricWeights};
use crate::net::link::LinkCounters;
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct NetRunResult {
    pub scenario: String,
    pub seed: u64,
    /// The TCP variant every TCP flow uses, "mixed" when they differ, "udp" without TCP flows.
    pub variant: String,
    /// Every flow finished (see [`NetFlowResult::complete`]).
    pub complete: bool,
    /// `"battery_empty:NODE"` when the run ran until that node's battery was empty (then
    /// `complete` says whether it emptied before `stop_after`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop: Option<String>,
    pub sim_time_s: f64,
    pub events: u64,
    pub engine_version: &'static str,
    /// The single flow's keys, when there is exactly one flow.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flow: Option<FlowResult>,
    pub energy: NetEnergyResult,
    pub flows: Vec<NetFlowResult>,
    pub nodes: BTreeMap<String, NetNodeResult>,
    /// Per direction, keyed "A->B".
    pub links: BTreeMap<String, LinkCounters>,
    /// Per shared channel, by name.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub channels: BTreeMap<String, ChannelResult>,
    /// Per IP-level pipe, keyed "A->B".
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub pipes: BTreeMap<String, PipeCounters>,
    pub network: NetworkTotals,
    /// The run priced under each further profile asked for, in order (docs/units-and-scenarios.md,
    /// "Several profiles in one run"); absent when none was.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub profiles: Vec<NetProfile>,
}

/// The keys of a network record that depend on the device profiles, under one profile: put in
/// place of the record's own, they give the record of a run under that profile.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct NetProfile {
    pub energy: NetEnergyResult,
    pub nodes: BTreeMap<String, NodeMetering>,
    pub network: EnergyTotals,
}

/// What the meter gives for one node: its energy, the cycles its forwarding cost and its battery.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct NodeMetering {
    #[serde(flatten)]
    pub energy: NodeEnergy,
    pub forward_cycles: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub battery: Option<crate::energy::battery::BatteryResult>,
}

/// The network's energy: summed over the nodes, and per application bit delivered.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct EnergyTotals {
    pub total_j: f64,
    pub idealized_j: f64,
    pub per_bit_total_uj: f64,
    pub per_bit_idealized_uj: f64,
}

impl EnergyTotals {
    /// Sums over `energies` in node order; per bit of the `delivered` application bytes (NaN when
    /// nothing was delivered).
    pub fn of<'e>(energies: impl Iterator<Item = &'e NodeEnergy> + Clone, delivered: u64) -> Self {
        let (total_j, idealized_j): (f64, f64) = (energies.clone().map(|e| e.total_j).sum(), energies.map(|e| e.idealized_j).sum());
        let per_bit_uj = |j: f64| if delivered > 0 { j * 1e6 / (delivered as f64 * 8.0) } else { f64::NAN };
        Self { total_j, idealized_j, per_bit_total_uj: per_bit_uj(total_j), per_bit_idealized_uj: per_bit_uj(idealized_j) }
    }
}

impl NetProfile {
    /// The profile's part of the record from each node's metering in node order (`names`), the
    /// application bytes all flows delivered, the window, and the single flow's ends if there is
    /// exactly one flow.
    pub fn assemble(names: &[&str], nodes: Vec<NodeMetering>, delivered: u64, window_s: f64, single: Option<(usize, usize)>) -> Self {
        let network = EnergyTotals::of(nodes.iter().map(|m| &m.energy), delivered);
        let alias = |k: Option<usize>| k.map(|k| nodes[k].energy.clone());
        let energy = NetEnergyResult { sender: alias(single.map(|s| s.0)), receiver: alias(single.map(|s| s.1)), window_s };
        let nodes = names.iter().map(|n| n.to_string()).zip(nodes).collect();
        Self { energy, nodes, network }
    }
}

/// A channel's record is made by the channel, a pipe's counters are kept by the pipe (as a
/// link's are by the link).
pub use crate::net::medium::channel::ChannelResult;
pub use crate::net::medium::pipe::PipeCounters;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct NetEnergyResult {
    /// The single flow's source and destination nodes, when there is exactly one flow.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sender: Option<NodeEnergy>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receiver: Option<NodeEnergy>,
    /// The measurement window [0, window_s] (s): until the last flow finished.
    pub window_s: f64,
}

impl NetEnergyResult {
    /// The energy of the one flow's ends when the network has one flow (else none), over a
    /// window of `window_s`; `energies` per node.
    pub fn of_ends(net: &crate::config::network::NetworkConfig, energies: &[NodeEnergy], window_s: f64) -> Self {
        let (sender, receiver) = match &net.flows[..] {
            [f] => (Some(energies[f.src.index()].clone()), Some(energies[f.dst.index()].clone())),
            _ => (None, None),
        };
        NetEnergyResult { sender, receiver, window_s }
    }
}

/// Delivery latency of application messages (ms): from the write to the delivery of its last
/// byte to the receiving application; for an echoed UDP flow, the round trip back to the
/// source. NaN (null) when no message was delivered.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct Latency {
    pub mean: f64,
    pub min: f64,
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    pub max: f64,
}

impl Latency {
    /// Mean and nearest-rank percentiles of latencies given in ns.
    pub fn of(mut ns: Vec<u64>) -> Self {
        let n = ns.len();
        if n == 0 {
            let nan = f64::NAN;
            return Latency { mean: nan, min: nan, p50: nan, p95: nan, p99: nan, max: nan };
        }
        let ms = |v: u64| v as f64 * 1e-6;
        // The 0-based index of the nearest rank of `q`.
        let rank = |q: f64| ((q * n as f64).ceil() as usize).clamp(1, n) - 1;
        let (i50, i95, i99) = (rank(0.50), rank(0.95), rank(0.99));
        let (mut min, mut max, mut total) = (u64::MAX, 0, 0u128);
        for &v in &ns {
            min = min.min(v);
            max = max.max(v);
            total += v as u128;
        }
        // The mean is defined as the sum in ascending order. While the total fits in an f64's
        // 53-bit integers, every partial sum in any order is exact: the same bits without a sort.
        let sum = if total <= 1 << 53 {
            total as f64
        } else {
            ns.sort_unstable();
            ns.iter().map(|&v| v as f64).sum::<f64>()
        };
        // Three selections instead of a sort: each rank's value is the one a sort would put there.
        let (_, &mut p50, above) = ns.select_nth_unstable(i50);
        let p95 = if i95 == i50 { p50 } else { *above.select_nth_unstable(i95 - i50 - 1).1 };
        let p99 = if i99 == i95 { p95 } else { *ns[i95 + 1..].select_nth_unstable(i99 - i95 - 1).1 };
        Latency { mean: sum / n as f64 * 1e-6, min: ms(min), p50: ms(p50), p95: ms(p95), p99: ms(p99), max: ms(max) }
    }
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct NetFlowResult {
    pub name: String,
    pub from: String,
    pub to: String,
    pub transport: &'static str,
    /// TCP variant, or "udp".
    pub variant: String,
    pub traffic: &'static str,
    /// Bulk: every byte acknowledged; timed: it ran its whole duration; on_off and cbr: it reached
    /// its stop (or the end of the run, when it has none). A `stop` that cuts a bulk or timed flow
    /// short leaves it incomplete.
    pub complete: bool,
    pub start_s: f64,
    /// When the flow was stopped (its `stop`), if it was.
    pub stop_s: Option<f64>,
    #[serde(flatten)]
    pub flow: FlowResult,
    /// Application messages written and delivered in full: one for bulk (the whole transfer),
    /// none for timed (a saturating source's write-to-delivery time measures its send buffer).
    pub messages_sent: u64,
    pub messages_delivered: u64,
    /// UDP echo (RFC 862): the destination returned every datagram, and `latency_ms` is the
    /// round trip.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub echo: bool,
    pub latency_ms: Latency,
    /// TCP: per data packet, from its first transmission to its in-order delivery to the
    /// receiving application (seed 001's packet latency; null for UDP).
    pub packet_latency_ms: Latency,
    /// TCP: time the source had written data not yet acknowledged (s): the whole transfer for
    /// bulk, the busy periods of paced traffic.
    pub busy_s: f64,
    /// UDP: datagrams sent and received.
    pub datagrams_sent: u64,
    pub datagrams_delivered: u64,
    /// Packets of this flow that reached an endpoint after the flow was stopped (discarded).
    pub arrived_after_stop: u64,
    /// Seed 004's and seed 001's efficiency metrics (docs/models/metrics.md).
    pub efficiency: crate::metrics::efficiency::Efficiency,
    /// Goodput below half the flows' mean (seed 004).
    pub unfavored: bool,
    /// A split flow's relay and its two connections (docs/models/split.md); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub split: Option<SplitResult>,
    /// The source end's time series, when recorded (`RunOptions::trace`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<crate::metrics::trace::TraceColumns>,
    /// Byte ranges delivered in order at `to`, when recorded (`RunOptions::record_deliveries`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deliveries: Option<Vec<(u64, u64)>>,
}

impl NetFlowResult {
    /// The record of flow `cfg` with its counters `flow`, its efficiency, its start, and
    /// nothing else observed: no messages, latencies, datagrams, split or trace (a caller that
    /// has them sets them).
    pub fn of_config(cfg: &crate::config::network::FlowConfig, flow: FlowResult, efficiency: Efficiency, complete: bool, start_s: f64) -> Self {
        use crate::config::network::Transport;
        NetFlowResult {
            efficiency,
            unfavored: false,
            name: cfg.name.clone(),
            from: cfg.from.clone(),
            to: cfg.to.clone(),
            transport: cfg.transport.name(),
            variant: match cfg.transport {
                // A split flow's source runs the first connection's variant.
                Transport::Tcp => cfg.tcp.variant.name().to_string(),
                Transport::Udp => "udp".into(),
            },
            traffic: cfg.traffic.kind(),
            complete,
            start_s,
            stop_s: None,
            flow,
            messages_sent: 0,
            messages_delivered: 0,
            echo: cfg.echo,
            latency_ms: Latency::of(Vec::new()),
            packet_latency_ms: Latency::of(Vec::new()),
            busy_s: f64::NAN,
            datagrams_sent: 0,
            datagrams_delivered: 0,
            arrived_after_stop: 0,
            split: None,
            trace: None,
            deliveries: None,
        }
    }
}

/// What the split node did for a split flow.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SplitResult {
    /// The split node.
    pub at: String,
    /// The relay buffer's bound, and the most it held at once (bytes read from the first
    /// connection and not yet acknowledged on the second).
    pub buffer_bytes: u64,
    pub relay_max_bytes: u64,
    /// Bytes the relay moved from the first connection to the second.
    pub relayed_bytes: u64,
    /// The first connection (`from` -> `at`), then the second (`at` -> `to`).
    pub halves: Vec<SplitHalf>,
}

/// One connection of a split flow: every key of the single-path `flow` table for it (goodput
/// over the flow's active time), its ends and variant, and its window management.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SplitHalf {
    pub from: String,
    pub to: String,
    pub variant: String,
    #[serde(flatten)]
    pub flow: FlowResult,
    /// Zero-window probes its sender's persist timer sent.
    pub window_probes: u64,
    /// Segments its receiving end sent advertising a zero window.
    pub zero_windows_sent: u64,
    /// Segments with data beyond the advertised window its receiving end did not accept.
    pub beyond_window_segments: u64,
}
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct NetNodeResult {
    #[serde(flatten)]
    pub energy: NodeEnergy,
    /// Packets this node's flow ends sent, and packets addressed to it that arrived.
    pub originated_packets: u64,
    pub received_packets: u64,
    /// Packets this node forwarded for other nodes, and the cycles that cost.
    pub forwarded_packets: u64,
    pub forward_cycles: f64,
    /// Protocol operations charged to this node's CPU, by kind.
    pub cpu_ops: BTreeMap<&'static str, u64>,
    /// The node's battery over the window (docs/models/battery.md), when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub battery: Option<crate::energy::battery::BatteryResult>,
    /// The node's power over time, when asked for (`--trace`; docs/models/energy.md, "Traces").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<crate::metrics::trace::PowerColumns>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct NetworkTotals {
    /// Application bits delivered by all flows per second of the measurement window.
    pub goodput_bps: f64,
    /// Application bytes delivered by all flows.
    pub bytes_delivered: u64,
    /// IP bytes put on every link (each hop counts).
    pub wire_bytes: u64,
    pub total_j: f64,
    pub idealized_j: f64,
    /// Energy of all nodes per application bit delivered by all flows (µJ/bit); null when
    /// nothing was delivered.
    pub per_bit_total_uj: f64,
    pub per_bit_idealized_uj: f64,
    /// Jain's fairness index over the flows' goodput: (sum x)^2 / (n sum x^2); null if all are 0.
    pub jain_fairness: f64,
    /// Seed 004: flows with goodput below half the mean, and their share of the flows.
    pub unfavored_flows: usize,
    pub risk_index: f64,
    /// Seed 004's and seed 001's metrics on the flows' totals (Tmax: the flows' Tmax summed).
    pub efficiency: crate::metrics::efficiency::Efficiency,
    /// Packets on a link (propagating) when the run ended.
    pub packets_in_flight: u64,
    pub flows: usize,
    pub nodes: usize,
}

impl NetworkTotals {
    /// The network's totals, and each flow's `unfavored` label (seed 004): `energies` per node,
    /// over a measurement window of `window_s`; `wire_bytes` put on every interface (each hop
    /// counts); `tmax` the network's Tmax (docs/models/metrics.md); `nodes` how many there are.
    #[allow(clippy::too_many_arguments)]
    pub fn of(
        flows: &mut [NetFlowResult],
        energies: &[NodeEnergy],
        window_s: f64,
        wire_bytes: u64,
        weights: &MetricWeights,
        tmax: f64,
        packets_in_flight: u64,
        nodes: usize,
    ) -> Self {
        let goodputs: Vec<f64> = flows.iter().map(|f| f.flow.goodput_bps).collect();
        for (f, u) in flows.iter_mut().zip(efficiency::unfavored(&goodputs)) {
            f.unfavored = u;
        }
        let unfavored_flows = flows.iter().filter(|f| f.unfavored).count();
        let sum = |g: &dyn Fn(&NetFlowResult) -> f64| flows.iter().map(g).sum::<f64>();
        let (t_all, g_all) = (sum(&|f| f.flow.throughput_bps), sum(&|f| f.flow.goodput_bps));
        let sent_all: u64 = flows.iter().map(|f| f.flow.wire_bytes_sender + f.flow.wire_bytes_receiver).sum();
        let payload_all: u64 = flows.iter().map(|f| f.flow.bytes_delivered).sum();
        let net_efficiency = Efficiency::of(weights, t_all, g_all, tmax, efficiency::data_overhead(sent_all, payload_all), f64::NAN);
        let delivered = payload_all;
        let e = EnergyTotals::of(energies.iter(), delivered);
        NetworkTotals {
            goodput_bps: if window_s > 0.0 { delivered as f64 * 8.0 / window_s } else { 0.0 },
            bytes_delivered: delivered,
            wire_bytes,
            total_j: e.total_j,
            idealized_j: e.idealized_j,
            per_bit_total_uj: e.per_bit_total_uj,
            per_bit_idealized_uj: e.per_bit_idealized_uj,
            jain_fairness: jain_index(&goodputs),
            unfavored_flows,
            risk_index: if flows.is_empty() { f64::NAN } else { unfavored_flows as f64 / flows.len() as f64 },
            efficiency: net_efficiency,
            packets_in_flight,
            flows: flows.len(),
            nodes,
        }
    }
}

impl Efficiency {
    /// A flow's metrics (docs/models/metrics.md): its data overhead (bytes both ends sent over
    /// the payload) and time overhead (`transfer_s` over the payload's time at `bottleneck_bps`).
    pub fn of_flow(weights: &MetricWeights, flow: &FlowResult, tmax: f64, transfer_s: f64, bottleneck_bps: f64) -> Self {
        let data_oh = efficiency::data_overhead(flow.wire_bytes_sender + flow.wire_bytes_receiver, flow.bytes_delivered);
        let time_oh = efficiency::time_overhead(transfer_s, flow.bytes_delivered, bottleneck_bps);
        Efficiency::of(weights, flow.throughput_bps, flow.goodput_bps, tmax, data_oh, time_oh)
    }
}

impl NetRunResult {
    /// The record's `variant`: the one every TCP connection runs, "mixed" when they differ,
    /// "udp" when there is none.
    pub fn variant_label<'a>(tcp_variants: impl IntoIterator<Item = &'a str>) -> String {
        let mut names = tcp_variants.into_iter();
        let Some(first) = names.next() else { return "udp".to_string() };
        if names.all(|v| v == first) {
            first.to_string()
        } else {
            "mixed".to_string()
        }
    }
}

/// Jain, Chiu & Hawe (DEC-TR-301, 1984): 1 when all equal, 1/n when one flow takes everything.
pub fn jain_index(x: &[f64]) -> f64 {
    let sum: f64 = x.iter().sum();
    let sq: f64 = x.iter().map(|v| v * v).sum();
    if x.is_empty() || sq <= 0.0 {
        return f64::NAN;
    }
    // Equal shares give exactly 1 in exact arithmetic; rounding may land a hair above it.
    (sum * sum / (x.len() as f64 * sq)).min(1.0)
}

impl NetRunResult {
    /// The record as JSON; non-finite floats become null.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("result serializes")
    }

    /// The record of a run under the further profile `i` (`profiles[i]` in place of the record's
    /// own keys); `None` when there is no such profile.
    pub fn profile_record(&self, i: usize) -> Option<NetRunResult> {
        let p = self.profiles.get(i)?;
        let mut r = NetRunResult { profiles: Vec::new(), ..self.clone() };
        r.energy = p.energy.clone();
        for (name, m) in &p.nodes {
            let node = r.nodes.get_mut(name)?;
            node.energy = m.energy.clone();
            node.forward_cycles = m.forward_cycles;
            node.battery = m.battery.clone();
        }
        let t = p.network;
        (r.network.total_j, r.network.idealized_j, r.network.per_bit_total_uj, r.network.per_bit_idealized_uj) =
            (t.total_j, t.idealized_j, t.per_bit_total_uj, t.per_bit_idealized_uj);
        Some(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_index_is_one_for_equal_shares_and_one_over_n_for_a_monopoly() {
        assert!((jain_index(&[3.0, 3.0, 3.0]) - 1.0).abs() < 1e-12);
        assert!((jain_index(&[5.0, 0.0, 0.0, 0.0]) - 0.25).abs() < 1e-12);
        assert!(jain_index(&[0.0, 0.0]).is_nan());
    }

    #[test]
    fn the_variant_label_is_the_common_variant_mixed_or_udp() {
        assert_eq!(NetRunResult::variant_label(["reno", "reno"]), "reno");
        assert_eq!(NetRunResult::variant_label(["reno", "cubic", "reno"]), "mixed");
        assert_eq!(NetRunResult::variant_label([]), "udp");
    }

    #[test]
    fn latency_percentiles_use_the_nearest_rank() {
        let l = Latency::of((1..=100).map(|v| v * 1_000_000).collect());
        assert_eq!((l.min, l.p50, l.p95, l.p99, l.max), (1.0, 50.0, 95.0, 99.0, 100.0));
        assert!((l.mean - 50.5).abs() < 1e-9);
    }

    /// The selections and the integer sum give, bit for bit, what sorting and summing in
    /// ascending order gives, for small and large lists and for totals beyond 2^53.
    #[test]
    fn latency_without_a_sort_equals_the_sorted_definition() {
        let sorted = |mut ns: Vec<u64>| {
            ns.sort_unstable();
            let ms = |v: u64| v as f64 * 1e-6;
            let rank = |q: f64| ms(ns[((q * ns.len() as f64).ceil() as usize).clamp(1, ns.len()) - 1]);
            let mean = ns.iter().map(|&v| v as f64).sum::<f64>() / ns.len() as f64 * 1e-6;
            [mean, ms(ns[0]), rank(0.50), rank(0.95), rank(0.99), ms(ns[ns.len() - 1])].map(f64::to_bits)
        };
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |bound: u64| {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            (x >> 11) % bound
        };
        for (n, bound) in [(1, 1000), (2, 1000), (3, 7), (20, 1000), (101, 3), (3600, 80_000_000), (5000, 1 << 52), (777, u64::MAX >> 11)] {
            let ns: Vec<u64> = (0..n).map(|_| next(bound)).collect();
            let l = Latency::of(ns.clone());
            assert_eq!([l.mean, l.min, l.p50, l.p95, l.p99, l.max].map(f64::to_bits), sorted(ns), "n {n}, bound {bound}");
        }
    }
}
