//! What a run will cost, estimated from its validated scenario before it starts: events (and
//! like work: samples, cross-traffic packets, channel state changes) and peak memory, each
//! attributed to the scenario key that drives it. A run far beyond the machine (more than
//! [`MAX_EVENTS`] events, or more memory than the machine has) is refused with one error naming
//! its largest contributor, unless forced (docs/units-and-scenarios.md "Bounds").
//!
//! The estimate is cheap (a pass over the flows, links and nodes) and errs high where it must
//! guess: every packet a source could put on each hop in its active time, bounded by its
//! application's data and by the slowest rate up to that hop, each timer firing at its shortest
//! period, a battery run counted twice (it is simulated twice). It never refuses a shipped
//! scenario or reproduction (tests/golden_records.rs and `budget::tests` check the files).

use crate::config::network::{FlowConfig, FlowTraffic, NetworkConfig, Transport};
use crate::config::{Impairment, LinkConfig, RadioPolicy, Scenario, Topology};
use crate::error::EngineError;
use crate::plan::Plan;
use crate::sim::RunOptions;
use serde::Serialize;

/// The most events a run may be estimated at: about half an hour to several hours of one core
/// (the engine processes 2 to 5 million events a second), far beyond any scenario shipped.
pub const MAX_EVENTS: f64 = 5e9;

/// Memory assumed when the machine's is unknown (not Linux): 16 GiB.
pub const FALLBACK_MEMORY_BYTES: f64 = 16.0 * (1u64 << 30) as f64;

/// Engine events per packet crossing a point-to-point link (its arrival) and a shared channel
/// (contention, the frame, its MAC acknowledgment, RTS/CTS; measured 3 to 5).
const EVENTS_PER_LINK_HOP: f64 = 1.0;
const EVENTS_PER_CHANNEL_HOP: f64 = 6.0;
/// Events at the ends per packet: a timer rearmed, an ACK delayed.
const EVENTS_PER_PACKET_AT_ENDS: f64 = 1.0;
/// Bytes kept per packet crossing a hop: radio logs of both ends, CPU busy intervals, latencies
/// (measured 50 to 80 in whole runs; the estimate allows about twice as much).
const BYTES_PER_PACKET_HOP: f64 = 100.0;
/// Bytes per frame a station overhears on a channel (its receive log).
const BYTES_PER_OVERHEARD_FRAME: f64 = 32.0;
/// Bytes per packet-hop a capture keeps (the frame, its pcap bytes, their copy for Python).
const BYTES_PER_CAPTURED_FRAME: f64 = 250.0;
/// Bytes per row of the sender's trace (nine columns in the engine, then as Python objects).
const BYTES_PER_TRACE_ROW: f64 = 400.0;
/// Bytes per battery sample: the series, the record's numbers as text and as Python floats.
const BYTES_PER_BATTERY_SAMPLE: f64 = 160.0;
/// The process and the scenario itself, per node and per flow (meters, endpoints, queues).
const BASE_BYTES: f64 = 64.0 * (1u64 << 20) as f64;
const BYTES_PER_NODE: f64 = 64.0 * 1024.0;
const BYTES_PER_FLOW: f64 = 64.0 * 1024.0;

/// One contributor to the estimate: the scenario key that drives it, what it is, its share.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Part {
    pub key: String,
    pub what: String,
    pub events: f64,
    pub memory_bytes: f64,
}

/// The estimate of one run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Estimate {
    pub events: f64,
    pub memory_bytes: f64,
    /// Largest first (by its share of the limits).
    pub parts: Vec<Part>,
}

/// What a run may cost on this machine.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Limits {
    pub events: f64,
    pub memory_bytes: f64,
    /// Whether `memory_bytes` is the machine's (else [`FALLBACK_MEMORY_BYTES`]).
    pub memory_measured: bool,
}

impl Limits {
    /// [`MAX_EVENTS`] and the machine's physical memory (`MemTotal` of /proc/meminfo), or
    /// [`FALLBACK_MEMORY_BYTES`] where that cannot be read.
    pub fn of_this_machine() -> Self {
        let total = std::fs::read_to_string("/proc/meminfo").ok().and_then(|text| mem_total(&text));
        Limits { events: MAX_EVENTS, memory_bytes: total.unwrap_or(FALLBACK_MEMORY_BYTES), memory_measured: total.is_some() }
    }
}

/// `MemTotal:  24563412 kB` -> bytes.
fn mem_total(meminfo: &str) -> Option<f64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024.0)
}

impl Estimate {
    /// Refuse the run if it is beyond `limits`: a config error at the largest contributor's key.
    pub fn check(&self, limits: &Limits) -> Result<(), EngineError> {
        match self.refusal(limits) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// The error [`Estimate::check`] gives, if any.
    pub fn refusal(&self, limits: &Limits) -> Option<EngineError> {
        self.beyond(limits).map(|(key, reason)| {
            EngineError::config(key, format!("{reason}; change this setting or stop_after, or run anyway with --force (Python: force=True)"))
        })
    }

    /// When the run is beyond `limits`: the key of its largest contributor to what is over, and
    /// why ("the run would need about 5.8 TB of memory, ..., mostly for ...").
    pub fn beyond(&self, limits: &Limits) -> Option<(String, String)> {
        let over_events = self.events > limits.events;
        let over_memory = self.memory_bytes > limits.memory_bytes;
        if !over_events && !over_memory {
            return None;
        }
        let top = if over_memory {
            self.parts.iter().max_by(|a, b| a.memory_bytes.total_cmp(&b.memory_bytes))
        } else {
            self.parts.iter().max_by(|a, b| a.events.total_cmp(&b.events))
        };
        let (key, what) = top.map_or(("", "the scenario"), |p| (p.key.as_str(), p.what.as_str()));
        let mut costs = Vec::new();
        if over_events {
            costs.push(format!("process about {:.1e} events, more than the {:.0e} a run may take (hours of computing)", self.events, limits.events));
        }
        if over_memory {
            costs.push(format!(
                "need about {} of memory, more than this machine's {}{}",
                bytes_text(self.memory_bytes),
                bytes_text(limits.memory_bytes),
                if limits.memory_measured { "" } else { " (assumed)" }
            ));
        }
        Some((key.to_string(), format!("the run would {}, mostly for {what}", costs.join(" and "))))
    }

    /// One line for `tcpenergy validate`.
    pub fn summary(&self) -> String {
        format!("about {:.1e} events and {} of memory", self.events, bytes_text(self.memory_bytes))
    }
}

fn bytes_text(b: f64) -> String {
    let (v, unit) = if b >= 1e12 {
        (b / 1e12, "TB")
    } else if b >= 1e9 {
        (b / 1e9, "GB")
    } else {
        (b / 1e6, "MB")
    };
    format!("{v:.1} {unit}")
}

/// What packets cross: a port of a medium (one direction of a link), or a shared medium (a
/// channel, one for all its stations: port `u32::MAX`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Resource(u32, u32);

/// One hop of a route: what carries it and at what rate.
#[derive(Debug, Clone, Copy)]
struct Hop {
    resource: Resource,
    rate_bps: f64,
    /// Stations on the channel, for a channel hop.
    channel_members: Option<usize>,
}

impl Hop {
    fn events(&self) -> f64 {
        if self.channel_members.is_some() {
            EVENTS_PER_CHANNEL_HOP
        } else {
            EVENTS_PER_LINK_HOP
        }
    }
    fn bytes(&self) -> f64 {
        BYTES_PER_PACKET_HOP + self.channel_members.map_or(0.0, |m| m.saturating_sub(2) as f64 * BYTES_PER_OVERHEARD_FRAME)
    }
}

/// Names of a scenario's keys in its own form (the single-path form's flow is `traffic`).
struct Keys {
    single: bool,
}

impl Keys {
    fn traffic(&self, flow: usize, field: &str) -> String {
        if self.single {
            format!("traffic.{field}")
        } else {
            format!("flows.{flow}.traffic.{field}")
        }
    }
    fn link(&self, link: usize, reverse: bool) -> String {
        let dir = if reverse { "reverse" } else { "forward" };
        if self.single {
            format!("path.{dir}")
        } else {
            format!("links.{link}.{dir}")
        }
    }
}

/// Estimate the run of `s` with `opts` (trace and capture add their records).
pub fn estimate(s: &Scenario, opts: &RunOptions) -> Estimate {
    let single_net;
    let (net, keys) = match &s.topology {
        Topology::Network(n) => (n, Keys { single: false }),
        Topology::SinglePath { path, traffic } => {
            single_net = NetworkConfig::from_single_path(path, traffic, &s.tcp, &s.energy);
            (&single_net, Keys { single: true })
        }
    };
    let horizon_s = s.stop_after.as_secs_f64();
    // A run until a battery is empty is simulated twice (lib.rs run_network_captured).
    let runs = if net.stop_on_battery.is_some() { 2.0 } else { 1.0 };
    let mut parts = Vec::new();

    // Flows: what each could send on each hop of its route, then no more on a link direction or
    // a channel than it carries in the run (flows sharing it share that).
    // The routes of a network (a scenario that could not be built was refused when read);
    // without them, as in the single-path form, a flow crosses the one link (`hops`), whose MTU
    // gives its segment size.
    let plan = s.network().and_then(|_| Plan::of(s).ok());
    let loads: Vec<Load> = net.flows.iter().enumerate().map(|(i, f)| load(plan.as_ref(), net, f, i, &keys, horizon_s)).collect();
    let mut demand: std::collections::HashMap<Resource, f64> = Default::default();
    for l in &loads {
        for (h, n) in l.forward.iter().zip(&l.packets) {
            *demand.entry(h.resource).or_default() += n * l.size;
        }
    }
    let share = |h: &Hop| {
        let capacity = h.rate_bps * horizon_s / 8.0;
        (capacity / demand.get(&h.resource).copied().unwrap_or(0.0)).min(1.0)
    };
    for (i, l) in loads.into_iter().enumerate() {
        parts.extend(flow_parts(s, &net.flows[i], i, &keys, l, &share, runs, opts));
    }

    // Links: cross traffic and Gilbert-Elliott state changes, over the whole run.
    let mut directions: Vec<(usize, bool, &LinkConfig)> = Vec::new();
    for (k, l) in net.links.iter().enumerate() {
        directions.push((k, false, &l.forward));
        if let Some(r) = &l.reverse {
            directions.push((k, true, r));
        }
    }
    for (k, reverse, l) in directions {
        let at = keys.link(k, reverse);
        if let Some(c) = &l.cross_traffic {
            let share = c.on.as_secs_f64() / c.every.as_secs_f64().max(1e-9);
            let packets = horizon_s * share * c.rate as f64 / (8.0 * c.packet as f64);
            parts.push(Part {
                key: format!("{at}.cross_traffic.rate"),
                what: format!("the cross traffic on {at} ({packets:.1e} packets)"),
                events: 2.0 * packets * runs,
                memory_bytes: 0.0,
            });
        }
        parts.extend(impairment_parts(&l.impairments, &format!("{at}.impairments"), horizon_s, runs));
    }
    for (k, c) in net.channels.iter().enumerate() {
        parts.extend(impairment_parts(&c.impairments, &format!("channels.{k}.impairments"), horizon_s, runs));
        if let (Some(infra), RadioPolicy::Psm) = (&c.infrastructure, s.energy.radio_policy) {
            let beacons = horizon_s / infra.beacon_interval.as_secs_f64();
            let stations = c.members.len() as f64;
            parts.push(Part {
                key: format!("channels.{k}.beacon_interval"),
                what: format!("the beacons of channel {:?} and its stations' dozing ({beacons:.1e} beacons)", c.name),
                events: beacons * (1.0 + stations) * runs,
                memory_bytes: beacons * stations * 32.0,
            });
        }
    }
    for (k, p) in net.pipes.iter().enumerate() {
        parts.extend(impairment_parts(&p.impairments, &format!("pipes.{k}.impairments"), horizon_s, runs));
    }

    // Batteries: one sample per `sample` over the window, up to stop_after.
    for n in &net.nodes {
        if let Some(b) = &n.battery {
            let samples = horizon_s / b.sample.as_secs_f64() + 2.0;
            parts.push(Part {
                key: format!("nodes.{}.battery.sample", n.name),
                what: format!("the battery series of node {:?} ({samples:.1e} samples)", n.name),
                events: samples * runs,
                memory_bytes: samples * BYTES_PER_BATTERY_SAMPLE * runs,
            });
        }
    }

    // The nodes and their routes: state that does not grow with time.
    let nodes = net.nodes.len() as f64;
    parts.push(Part {
        key: if keys.single { String::new() } else { "nodes".into() },
        what: format!("the state of {} nodes and {} flows", net.nodes.len(), net.flows.len()),
        events: 0.0,
        memory_bytes: BASE_BYTES + nodes * BYTES_PER_NODE + nodes * nodes * 16.0 + net.flows.len() as f64 * BYTES_PER_FLOW,
    });

    let events = parts.iter().map(|p| p.events).sum();
    let memory_bytes = parts.iter().map(|p| p.memory_bytes).sum();
    parts.sort_by(|a, b| (b.events / MAX_EVENTS).max(b.memory_bytes / FALLBACK_MEMORY_BYTES).total_cmp(&(a.events / MAX_EVENTS).max(a.memory_bytes / FALLBACK_MEMORY_BYTES)));
    Estimate { events, memory_bytes, parts }
}

/// The hops of a flow's route, source to destination and back.
fn hops(plan: Option<&Plan>, net: &NetworkConfig, f: &FlowConfig) -> (Vec<Hop>, Vec<Hop>) {
    let Some(table) = plan.map(|p| &p.routes) else {
        // The single-path form: one link each way.
        let l = &net.links[0];
        let hop = |c: &LinkConfig, port| Hop { resource: Resource(0, port), rate_bps: c.capacity.rate_bps() as f64, channel_members: None };
        return (vec![hop(&l.forward, 0)], l.reverse.as_ref().map(|r| vec![hop(r, 1)]).unwrap_or_default());
    };
    let route = |a, b| -> Vec<Hop> {
        table
            .path(a, b)
            .unwrap_or_default()
            .iter()
            .map(|i| {
                let via = table.ifaces[i.index()].via;
                let m = crate::net::medium::spec(net, via.medium);
                // A shared medium is one resource for all its ports.
                let shared = m.shared_by();
                Hop { resource: Resource(via.medium, if shared.is_some() { u32::MAX } else { via.port }), rate_bps: m.rate_bps(via.port) as f64, channel_members: shared }
            })
            .collect()
    };
    (route(f.src, f.dst), route(f.dst, f.src))
}

/// A flow's traffic before the links it shares are taken into account.
struct Load {
    forward: Vec<Hop>,
    back: Vec<Hop>,
    /// Data packets on each hop of `forward` at most, alone on the route.
    packets: Vec<f64>,
    /// Bytes of a data packet on the wire.
    size: f64,
    writes: f64,
    /// Data packets the application offers (infinite for a saturating source).
    offered: f64,
    active_s: f64,
    key: String,
    what: String,
}

/// TCP retransmits what it loses, and a window overshoots into the bottleneck's queue: up to
/// half as many packets again as the data needs.
const TCP_RESEND: f64 = 1.5;

fn load(plan: Option<&Plan>, net: &NetworkConfig, f: &FlowConfig, i: usize, keys: &Keys, horizon_s: f64) -> Load {
    let (forward, back) = hops(plan, net, f);
    let start = f.start.as_secs_f64();
    let end = f.stop.map_or(horizon_s, |t| t.as_secs_f64().min(horizon_s));
    let mut active_s = (end - start).max(0.0);
    let tcp = f.transport == Transport::Tcp;
    let smss = plan.map_or_else(|| crate::tcp::segment::smss(net.links[0].mtu, f.tcp.timestamps), |p| p.flows[i].first.smss).max(1) as f64;
    let header = if tcp { crate::tcp::segment::data_header_bytes(f.tcp.timestamps) as f64 } else { 28.0 };
    let name = &f.name;
    let bottleneck = forward.iter().map(|h| h.rate_bps).fold(f64::INFINITY, f64::min);
    // Packets of `bytes` bytes of payload: TCP segments them, UDP sends one datagram.
    let packets_of = |bytes: f64| if tcp { (bytes / smss).ceil().max(1.0) } else { 1.0 };
    let size_of = |bytes: f64| bytes.min(if tcp { smss } else { f64::INFINITY }) + header;
    // Application writes, data packets offered, their size, the key that sets them.
    let (writes, offered, size, key, what) = match f.traffic {
        FlowTraffic::Bulk { bytes } => {
            let segments = packets_of(bytes as f64);
            let key = if segments * (smss + header) * 8.0 / bottleneck < active_s { keys.traffic(i, "bytes") } else { "stop_after".to_string() };
            (1.0, segments, smss + header, key, format!("the bulk transfer of flow {name:?}"))
        }
        FlowTraffic::Timed { duration } => {
            let d = duration.as_secs_f64();
            let key = if d < active_s { keys.traffic(i, "duration") } else { "stop_after".to_string() };
            active_s = active_s.min(d);
            (1.0, f64::INFINITY, smss + header, key, format!("the timed transfer of flow {name:?}"))
        }
        FlowTraffic::OnOff { message, interval, .. } => {
            let writes = active_s / interval.as_secs_f64() + 1.0;
            let m = message as f64;
            (writes, writes * packets_of(m), size_of(m), keys.traffic(i, "interval"), format!("the messages of flow {name:?} ({writes:.1e} of them)"))
        }
        FlowTraffic::Cbr { rate, packet } => {
            let writes = active_s * rate as f64 / (8.0 * packet as f64) + 1.0;
            let p = packet as f64;
            (writes, writes * packets_of(p), size_of(p), keys.traffic(i, "rate"), format!("the packets of flow {name:?} ({writes:.1e} of them)"))
        }
    };
    // UDP sends what the application writes, as fast as each hop and those before it carry (the
    // rest is dropped on the way); TCP is clocked by its ACKs to the route's bottleneck.
    let mut rate = f64::INFINITY;
    let packets = forward
        .iter()
        .map(|h| {
            rate = if tcp { bottleneck } else { rate.min(h.rate_bps) };
            let offered = if tcp { offered * TCP_RESEND } else { offered };
            offered.min(active_s * rate / (8.0 * size))
        })
        .collect();
    Load { forward, back, packets, size, writes, offered, active_s, key, what }
}

#[allow(clippy::too_many_arguments)]
fn flow_parts(s: &Scenario, f: &FlowConfig, i: usize, keys: &Keys, l: Load, share: &dyn Fn(&Hop) -> f64, runs: f64, opts: &RunOptions) -> Vec<Part> {
    let tcp = f.transport == Transport::Tcp;
    let name = &f.name;
    let (mut events, mut bytes) = (0.0, 0.0);
    // Each hop's packets scaled by the share of the busiest link or channel up to it (TCP: on
    // the whole route, as its ACK clock slows every hop).
    let route_share = l.forward.iter().map(share).fold(1.0, f64::min);
    let mut before = 1.0f64;
    let (mut first, mut last) = (0.0, 0.0);
    for (k, (h, n)) in l.forward.iter().zip(&l.packets).enumerate() {
        before = before.min(share(h));
        let n = n * if tcp { route_share } else { before };
        events += n * h.events();
        bytes += n * h.bytes();
        if k == 0 {
            first = n;
        }
        last = n;
    }
    // ACKs (TCP) or echoes (UDP echo) come back, one per packet delivered at most.
    let returned = if tcp || f.echo { last } else { 0.0 };
    for h in &l.back {
        events += returned * h.events();
        bytes += returned * h.bytes();
    }
    // Each write, and each packet sent or answered at an end (timers rearmed, ACKs delayed).
    events += l.writes + (first + returned) * EVENTS_PER_PACKET_AT_ENDS;
    bytes += l.writes * 16.0;
    if opts.capture {
        bytes += bytes / BYTES_PER_PACKET_HOP * BYTES_PER_CAPTURED_FRAME;
    }
    if opts.trace {
        // A sender row per packet, and power steps at its node's radio and CPU changes (about
        // two per packet sent or received).
        bytes += 3.0 * (first + returned) * BYTES_PER_TRACE_ROW;
    }
    let (active_s, offered) = (l.active_s, l.offered);
    let forward = l.forward;
    let mut parts = vec![Part { key: l.key, what: l.what, events: events * runs, memory_bytes: bytes }];

    // Timers that rearm themselves while the flow is active, each a packet on every hop.
    if tcp {
        let connections: Vec<(&crate::config::TcpConfig, String)> = std::iter::once((&f.tcp, "tcp".to_string()))
            .chain(f.split.as_ref().map(|sp| (&sp.tcp, "split.tcp".to_string())))
            .collect();
        for (t, table) in connections {
            // The scenario-wide [tcp] table where the flow's settings are its, else the flow's own.
            let prefix = if keys.single || (table == "tcp" && t == &s.tcp) { "tcp".to_string() } else { format!("flows.{i}.{table}") };
            // E2TCP's sender runs two timers of its own (docs/models/e2tcp.md); the others one.
            let (timer, tkey, timers) = if let Some(d) = t.fixed_rto {
                (d, "fixed_rto", 1.0)
            } else if matches!(t.variant.info().sender, crate::tcp::variant::SenderKind::E2tcp) {
                (t.e2tcp.clone().unwrap_or_default().min_timeout, "e2tcp.min_timeout", 2.0)
            } else if t.initial_rto < t.min_rto {
                (t.initial_rto, "initial_rto", 1.0)
            } else {
                (t.min_rto, "min_rto", 1.0)
            };
            let hop_events: f64 = forward.iter().map(|h| h.events()).sum::<f64>() + 1.0;
            // At most one per period; and a sender that times out again without progress backs
            // off (RFC 6298 5.5), so beyond a timeout per packet sent, one per max_rto.
            let stalled = timers * offered * TCP_RESEND + active_s / t.max_rto.as_secs_f64() + 64.0;
            let timeouts = (timers * active_s / timer.as_secs_f64()).min(stalled);
            parts.push(Part {
                key: format!("{prefix}.{tkey}"),
                what: format!("retransmission timeouts of flow {name:?} ({timeouts:.1e})"),
                events: timeouts * hop_events * runs,
                memory_bytes: timeouts * forward.iter().map(|h| h.bytes()).sum::<f64>(),
            });
            if t.elfn_enabled() {
                let probes = (active_s / t.elfn_probe_interval.as_secs_f64()).min(stalled);
                parts.push(Part {
                    key: format!("{prefix}.elfn_probe_interval"),
                    what: format!("ELFN probes of flow {name:?} ({probes:.1e})"),
                    events: probes * hop_events * runs,
                    memory_bytes: probes * forward.iter().map(|h| h.bytes()).sum::<f64>(),
                });
            }
        }
    }
    parts
}

/// Work of time-driven impairments: a Gilbert-Elliott channel changes state at least every
/// `min` of each state.
fn impairment_parts(list: &[Impairment], at: &str, horizon_s: f64, runs: f64) -> Vec<Part> {
    let mut parts = Vec::new();
    for (j, imp) in list.iter().enumerate() {
        if let Impairment::GilbertElliott { good, bad, .. } = imp {
            let cycle = (good.min + bad.min).as_secs_f64();
            let changes = 2.0 * horizon_s / cycle.max(1e-9);
            let state = if good.min <= bad.min { "good" } else { "bad" };
            parts.push(Part {
                key: format!("{at}.{j}.{state}.min"),
                what: format!("the state changes of {at}.{j} ({changes:.1e})"),
                events: changes * runs,
                memory_bytes: 0.0,
            });
        }
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mem_total_is_read_from_meminfo_in_bytes() {
        assert_eq!(mem_total("MemTotal:       24563412 kB\nMemFree: 1 kB\n"), Some(24_563_412.0 * 1024.0));
        assert_eq!(mem_total("nothing"), None);
    }
}
