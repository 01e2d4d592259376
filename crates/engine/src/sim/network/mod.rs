//! The run loop of both scenario forms: any number of nodes joined by point-to-point links,
//! static routes, and any number of flows (TCP or UDP), each with its own application traffic.
//! A single-path scenario runs here as the two-node network it stands for
//! (`Scenario::as_network`, [`NetWorld::single_path`]).
//!
//! A node owns a meter (radio log, CPU) and forwards packets not addressed to it by its route
//! table. A flow owns its two ends (sans-I/O TCP endpoints, or UDP counters) and its
//! application: when it writes, how much, and which messages are still to be delivered. Media
//! (`net::medium`: links, 802.11 channels, pipes) carry packets between nodes behind one
//! interface: the world hands them packets, gives their timers back, and acts on what they
//! report. Nodes and flows are addressed by typed ids; an interface is a port of a medium (a
//! link direction, a pair of stations on a channel), and a pipe may sit in front of one.

use super::queue::EventQueue;
use super::rng::Stream;
use super::Slab;
use crate::capture::{self, Capture, Contents, Frame};
use crate::app::{echo::Datagram, Messages, Relay, Source, UdpEnd};
use crate::config::network::{FlowConfig, FlowTraffic, IfaceId, NetworkConfig, NodeId, SplitConfig, Transport};
use crate::config::Scenario;
use crate::energy::battery::Battery;
use crate::energy::cpu::{CpuMeter, Op, OP_KINDS};
use crate::energy::meter::{self, NodeEnergy, RadioLog};
use crate::error::EngineError;
use crate::plan::{FlowPlan, Plan};
use crate::net::link::LinkCounters;
use crate::net::medium::{self, Handed, Medium, Out};
use crate::net::tally::WireTally;
use crate::net::routing::{RouteTable, Via};
use crate::metrics::efficiency::Efficiency;
use crate::metrics::trace::Trace;
use super::RunOptions;
use crate::result::flow::EndBytes;
use crate::result::network::{
    ChannelResult, Latency, NetEnergyResult, NetFlowResult, NetNodeResult, NetProfile, NetRunResult, NetworkTotals, NodeMetering, SplitHalf,
    SplitResult,
};
use crate::profiles::ProfileSet;
use crate::result::FlowResult;
use crate::tcp::endpoint::{Endpoint, Role};
use crate::tcp::segment::{Ecn, Segment};
use crate::units::{SimTime};
use std::collections::{BTreeMap, HashMap};

/// IPv4 (20) + UDP (8) header bytes of a datagram.
const UDP_HEADERS: u32 = crate::tcp::segment::IPV4_HEADER + capture::wire::UDP_HEADER;

/// Which end of a flow: the source (`from`) or the destination (`to`), and for a split flow
/// the split node's two ends: where the first connection (`from` -> `at`) ends and where the
/// second (`at` -> `to`) begins (docs/models/split.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum End {
    Src = 0,
    Dst = 1,
    RelayIn = 2,
    RelayOut = 3,
}

impl End {
    /// The end that opens its connection and sends its data (else the end that receives it).
    fn sends_data(self) -> bool {
        matches!(self, End::Src | End::RelayOut)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    /// Packet (slab index) arrives at a node.
    Arrive { node: u32, packet: u32 },
    /// A flow end asked to be woken (TCP timers).
    Wake { flow: u32, side: End },
    /// A route-failure (`restored` false) or route-restored notice for a flow's sending end (ELFN).
    RouteNotice { flow: u32, side: End, restored: bool },
    /// The flow's application starts.
    Start { flow: u32 },
    /// The flow's application writes its next message.
    Write { flow: u32 },
    /// A timed flow's duration is over: both ends stop and the flow is finished.
    DurationOver { flow: u32 },
    /// The flow's `stop`: both ends stop at once; packets still in flight are discarded on arrival.
    Stop { flow: u32 },
    /// A timer a medium asked for.
    Medium { medium: u32, timer: medium::Timer },
}

#[derive(Debug, Clone, Copy)]
enum Body {
    Tcp(Segment),
    /// A UDP datagram: payload bytes, the time its message was written.
    Udp { payload: u32, written_at: SimTime },
}

#[derive(Debug, Clone, Copy)]
struct Packet {
    flow: u32,
    /// The flow end that sent it; it goes to that end's peer.
    from: End,
    /// IPv4 identification, given by the source node when the packet is first serialized.
    ip_id: u16,
    /// Hops left: `capture::TTL` at the source, one less after each router.
    ttl: u8,
    /// The interface it is crossing (it counts the arrival).
    via: u32,
    body: Body,
}

impl Packet {
    #[inline]
    fn wire_len(&self) -> u32 {
        match &self.body {
            Body::Tcp(seg) => seg.wire_len(),
            Body::Udp { payload, .. } => payload + UDP_HEADERS,
        }
    }
    #[inline]
    fn ect(&self) -> bool {
        matches!(&self.body, Body::Tcp(seg) if seg.ecn != Ecn::NotEct)
    }
    fn new(flow: usize, from: End, body: Body) -> Self {
        Packet { flow: flow as u32, from, ip_id: 0, ttl: capture::TTL, via: u32::MAX, body }
    }
    fn contents(&self) -> Contents {
        match self.body {
            Body::Tcp(seg) => Contents::Tcp(seg),
            Body::Udp { payload, .. } => Contents::Udp { payload },
        }
    }
}

/// A node's meters (of a simulated or an emulated world).
pub(crate) struct NodeState {
    pub(crate) cpu: CpuMeter,
    pub(crate) radio: RadioLog,
    /// Packets its endpoints sent, packets addressed to it that arrived, packets it forwarded.
    pub(crate) originated: u64,
    pub(crate) received: u64,
    pub(crate) forwarded: u64,
    /// IPv4 identification of the last packet it sent as a source (RFC 791 §3.1: the sender's
    /// choice; RFC 6864 §4.1 allows any value with DF set).
    last_ip_id: u16,
}

impl NodeState {
    pub(crate) fn new(profile: &crate::energy::profile::DeviceProfile) -> Self {
        NodeState { cpu: CpuMeter::for_profile(profile), radio: RadioLog::default(), originated: 0, received: 0, forwarded: 0, last_ip_id: 0 }
    }

    /// Its part of the record: `energy` over the window ending at `end`, and its battery's.
    pub(crate) fn result(&self, energy: NodeEnergy, battery: Option<Battery>, end: SimTime) -> NetNodeResult {
        NetNodeResult {
            energy,
            originated_packets: self.originated,
            received_packets: self.received,
            forwarded_packets: self.forwarded,
            forward_cycles: self.cpu.other_cycles,
            cpu_ops: (0..OP_KINDS).map(|k| (Op::NAMES[k], self.cpu.count(k))).collect(),
            battery: battery.map(|b| b.result(end.0)),
            trace: None,
        }
    }
}

/// Node `node` hands `p` to an interface: if it is `p`'s source (`p` was not forwarded yet), it
/// numbers it; a node numbers its packets from 1.
#[inline]
fn number(node: &mut NodeState, p: &mut Packet) {
    if p.ttl == capture::TTL {
        node.last_ip_id = node.last_ip_id.wrapping_add(1);
        p.ip_id = node.last_ip_id;
    }
}

/// One flow: its ends, its applications (`crate::app`) and its counters.
struct FlowState {
    /// TCP ends, indexed by `End`: source and destination, and a split flow's two ends at the
    /// split node; `None` for UDP, before the source starts or the second connection opens.
    tcp: [Option<Endpoint>; 4],
    wake_at: [Option<SimTime>; 4],
    /// The interface each end's packets leave its node by, looked up once (`None` for an end the
    /// flow does not have).
    first_hop: [Option<IfaceId>; 4],
    /// The source's application, the messages it wrote, and a split flow's relay.
    source: Source,
    messages: Messages,
    relay: Relay,
    started: bool,
    /// Both ends are silent: the flow reached its `stop` or the end of its `timed` duration.
    halted: bool,
    stopped_at: Option<SimTime>,
    /// When the flow finished (see `NetFlowResult::complete`).
    finished_at: Option<SimTime>,
    udp_sent: u64,
    udp_delivered: u64,
    udp_bytes_delivered: u64,
    arrived_after_stop: u64,
    /// IP bytes each end (indexed by `End`) put on its first hop, counted as they left the
    /// interface, and those counts when the flow finished or stopped (its throughput).
    out: [WireTally; 4],
    out_at_end: Option<[u64; 4]>,
}

impl FlowState {
    /// The flow ends now: keep what each end had sent by now.
    fn close_books(&mut self, now: SimTime) {
        if self.out_at_end.is_none() {
            let mut bytes = [0; 4];
            for (b, tally) in bytes.iter_mut().zip(&mut self.out) {
                *b = tally.by(now).1;
            }
            self.out_at_end = Some(bytes);
        }
    }
}

pub struct NetWorld<'a> {
    scenario: &'a Scenario,
    net: &'a NetworkConfig,
    routes: RouteTable,
    /// Each flow's connections: path MTU and segment size (`crate::plan`).
    conns: Vec<FlowPlan>,
    now: SimTime,
    queue: EventQueue<Event>,
    packets: Slab<Packet>,
    nodes: Vec<NodeState>,
    /// Every medium: those of `net::medium::specs` (the interfaces' `Via::medium`), then the pipes.
    media: Vec<Medium>,
    /// The pipe (its medium) in front of each interface, if any.
    pipe_of: Vec<Option<u32>>,
    /// What media reported and the world has not acted on yet ([`Self::act`]).
    out: Vec<Out>,
    flows: Vec<FlowState>,
    events: u64,
    /// Every frame each interface started serializing, when asked for (`with_capture`).
    capture: Option<Capture>,
    /// Run until this time whatever the flows do, and meter up to it (a battery run).
    horizon: Option<SimTime>,
    /// What tests watch of split flows, one entry per flow, when asked (`run_with_split_logs`).
    split_logs: Option<Vec<SplitLog>>,
    /// The time series of each traced flow's source end, indexed by flow (empty unless asked
    /// for, [`Self::with_trace`]), and the nodes whose power is traced.
    traces: Vec<Option<Trace>>,
    traced_nodes: Vec<usize>,
    /// Keep every byte range each receiving end delivers (`RunOptions::record_deliveries`).
    record_deliveries: bool,
    /// Further profiles to price the run under when it is over (`crate::profiles`).
    profiles: &'a [ProfileSet],
}

/// What a run shows of a split flow, for checks (`NetWorld::run_with_split_logs`); empty for a
/// flow that is not split.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SplitLog {
    /// The relay buffer's occupancy (bytes) each time it changed, with the time.
    pub occupancy: Vec<(SimTime, u64)>,
    /// The window of every segment the first connection's receiving end (at the split node) sent.
    pub windows: Vec<(SimTime, u32)>,
    /// Byte ranges (sequence numbers) delivered in order at `to`, and at the split node by the
    /// first connection, in delivery order.
    pub deliveries: Vec<(u64, u64)>,
    pub relay_deliveries: Vec<(u64, u64)>,
}

impl<'a> NetWorld<'a> {
    /// The world of a network scenario: each flow's application starts with an event at its
    /// `start`.
    pub fn new(scenario: &'a Scenario, seed: u64) -> Result<Self, EngineError> {
        Self::build(scenario, seed, true)
    }

    /// The world of a single-path scenario's network (`Scenario::as_network`): its one transfer
    /// begins as the run begins, so no event starts it (the network form's flow start is one).
    pub fn single_path(network: &'a Scenario, seed: u64, opts: RunOptions) -> Result<Self, EngineError> {
        Self::single_path_profiled(network, seed, opts, &[])
    }

    /// [`Self::single_path`], also priced under each of `profiles` ([`Self::with_profiles`],
    /// applied before the transfer begins, so every CPU charge is kept).
    pub fn single_path_profiled(network: &'a Scenario, seed: u64, opts: RunOptions, profiles: &'a [ProfileSet]) -> Result<Self, EngineError> {
        let mut w = Self::build(network, seed, false)?.with_profiles(profiles);
        // Room in each radio log for every segment of the transfer and its ACKs, so the logs
        // rarely grow; at most a million up front (a transfer may be cut short by stop_after).
        if let (Some(FlowConfig { traffic: FlowTraffic::Bulk { bytes }, .. }), Some(c)) = (w.net.flows.first(), w.conns.first()) {
            let packets = ((*bytes / c.first.smss.max(1) as u64) as usize + 64).min(1 << 20);
            for n in &mut w.nodes {
                n.radio = RadioLog::with_capacity(packets);
                // Each end moves its segments or their ACKs across its card, and the other kind back.
                n.cpu.reserve_card(2 * packets);
            }
        }
        if opts.capture {
            w = w.with_capture();
        }
        if opts.trace {
            w = w.with_trace(&[0], &[]);
        }
        w.record_deliveries = opts.record_deliveries;
        for f in 0..w.flows.len() {
            w.start(f);
        }
        Ok(w)
    }

    fn build(scenario: &'a Scenario, seed: u64, schedule_starts: bool) -> Result<Self, EngineError> {
        let Some(net) = scenario.network() else {
            return Err(EngineError::Invariant("network run of a single-path scenario".into()));
        };
        let plan = Plan::of(scenario)?;
        let routes = &plan.routes;
        let nodes = net
            .nodes
            .iter()
            .map(|n| NodeState::new(&n.profile.profile))
            .collect();
        let power_save = scenario.energy.radio_policy == crate::config::RadioPolicy::Psm;
        let (media, pipe_of) = build_media(net, routes, seed, power_save);
        let flows = net
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| FlowState {
                tcp: [None, None, None, None],
                wake_at: [None; 4],
                first_hop: [None; 4],
                source: Source::new(f.traffic, SimTime(f.start.0), f.stop.map(|t| SimTime(t.0)), Stream::new(seed, &format!("flows.{i}.traffic"))),
                messages: Messages::default(),
                relay: f.split.as_ref().map_or_else(Relay::default, |s| Relay::new(s.buffer)),
                started: false,
                halted: false,
                stopped_at: None,
                finished_at: None,
                udp_sent: 0,
                udp_delivered: 0,
                udp_bytes_delivered: 0,
                arrived_after_stop: 0,
                out: Default::default(),
                out_at_end: None,
            })
            .collect();
        let mut w = Self {
            scenario,
            net,
            routes: plan.routes,
            conns: plan.flows,
            now: SimTime::ZERO,
            queue: EventQueue::with_capacity(1024),
            packets: Slab::default(),
            nodes,
            media,
            pipe_of,
            out: Vec::with_capacity(16),
            flows,
            events: 0,
            capture: None,
            horizon: None,
            split_logs: None,
            traces: Vec::new(),
            traced_nodes: Vec::new(),
            record_deliveries: false,
            profiles: &[],
        };
        for (i, f) in net.flows.iter().enumerate() {
            let ends: &[End] = if f.split.is_some() { &[End::Src, End::Dst, End::RelayIn, End::RelayOut] } else { &[End::Src, End::Dst] };
            for &e in ends {
                w.flows[i].first_hop[e as usize] = w.routes.next_hop(w.node_of(i, e), w.node_of(i, w.peer(i, e)));
            }
            let id = i as u32;
            if f.transport == Transport::Tcp {
                // The destination listens from the start (a passive open); so does the split
                // node, whose application reads on demand to relay.
                let st = &mut w.flows[i];
                let conns = w.conns[i];
                match (&f.split, conns.second) {
                    (Some(split), Some(second)) => {
                        st.tcp[End::Dst as usize] = Some(Endpoint::with_settings(&split.tcp, second.path_mtu, Role::Passive, 0, true));
                        st.tcp[End::RelayIn as usize] =
                            Some(Endpoint::with_settings(&f.tcp, conns.first.path_mtu, Role::Passive, 0, true).read_on_demand());
                    }
                    _ => st.tcp[End::Dst as usize] = Some(Endpoint::with_settings(&f.tcp, conns.first.path_mtu, Role::Passive, 0, true)),
                }
            }
            if schedule_starts {
                w.queue.push(SimTime(f.start.0), Event::Start { flow: id });
            }
            if let Some(stop) = f.stop {
                w.queue.push(SimTime(stop.0), Event::Stop { flow: id });
            }
        }
        for m in 0..w.media.len() {
            w.media[m].start(&mut w.out);
            w.act(m as u32, 0);
        }
        Ok(w)
    }

    /// Record every frame each interface starts serializing (`run_captured` returns it). A
    /// split flow's first connection has the flow's ports, `from` to `split.at`; its second
    /// connection, `split.at` to `to`, is listed after every flow ([`Self::capture_flow`]).
    pub fn with_capture(mut self) -> Self {
        let names: Vec<&str> = self.net.nodes.iter().map(|n| n.name.as_str()).collect();
        let ifaces: Vec<(usize, usize)> = self.routes.ifaces.iter().map(|e| (e.from.index(), e.to.index())).collect();
        let flows = self.net.flows.iter();
        let first = flows.clone().map(|f| (f.src.index(), f.split.as_ref().map_or(f.dst, |s| s.node).index()));
        let second = flows.filter_map(|f| f.split.as_ref().map(|s| (s.node.index(), f.dst.index())));
        let flows: Vec<(usize, usize)> = first.chain(second).collect();
        self.capture = Some(Capture::network(&names, &ifaces, &flows));
        self
    }

    /// The capture's flow index of a packet of flow `f` sent by `from`.
    fn capture_flow(&self, f: usize, from: End) -> u32 {
        let flows = &self.net.flows;
        if matches!(from, End::Src | End::RelayIn) || flows[f].split.is_none() {
            return f as u32;
        }
        (flows.len() + flows[..f].iter().filter(|g| g.split.is_some()).count()) as u32
    }

    /// Record the time series of flows `flows` (their source ends, with their nodes' power) and
    /// the power of nodes `nodes` (indices), for the record's `flows[i].trace` and
    /// `nodes[name].trace`.
    pub fn with_trace(mut self, flows: &[usize], nodes: &[usize]) -> Self {
        self.traces = (0..self.net.flows.len()).map(|f| flows.contains(&f).then(Trace::default)).collect();
        self.traced_nodes = nodes.to_vec();
        self
    }

    /// Run until `at` even when every flow is done, and meter the window [0, at) (batteries).
    pub fn with_horizon(mut self, at: SimTime) -> Self {
        self.horizon = Some(at);
        self
    }

    /// Also price the run under each of `profiles` (their part of the record goes to `profiles`).
    pub fn with_profiles(mut self, profiles: &'a [ProfileSet]) -> Self {
        if !profiles.is_empty() {
            self.nodes.iter_mut().for_each(|n| n.cpu.keep_charges());
        }
        self.profiles = profiles;
        self
    }

    pub fn run(self, seed: u64) -> Result<NetRunResult, EngineError> {
        self.run_captured(seed).map(|(r, _)| r)
    }

    /// Run, and return the capture too when `with_capture` asked for one.
    pub fn run_captured(mut self, seed: u64) -> Result<(NetRunResult, Option<Capture>), EngineError> {
        self.run_events();
        self.trim_capture();
        let capture = self.capture.take();
        self.finish(seed).map(|r| (r, capture))
    }

    /// Run, and return what each split flow's relay did over time (one entry per flow).
    pub fn run_with_split_logs(mut self, seed: u64) -> Result<(NetRunResult, Vec<SplitLog>), EngineError> {
        self.split_logs = Some(vec![SplitLog::default(); self.net.flows.len()]);
        self.run_events();
        let mut logs = self.split_logs.take().unwrap_or_default();
        for (st, log) in self.flows.iter().zip(&mut logs) {
            let delivered = |e: &Option<Endpoint>| e.as_ref().and_then(|e| e.receiver.as_ref()).and_then(|r| r.delivery_log.clone()).unwrap_or_default();
            log.deliveries = delivered(&st.tcp[End::Dst as usize]);
            log.relay_deliveries = delivered(&st.tcp[End::RelayIn as usize]);
        }
        self.finish(seed).map(|r| (r, logs))
    }

    fn run_events(&mut self) {
        let mut stop = self.horizon.unwrap_or(SimTime(self.scenario.stop_after.0));
        let mut done = false;
        let mut first_not_done = 0;
        while let Some((t, ev)) = self.queue.pop() {
            if t > stop {
                break;
            }
            self.now = t;
            self.events += 1;
            self.dispatch(ev);
            if self.horizon.is_none() && self.all_done(&mut first_not_done) {
                // Metering on after completion (`energy.after_completion`): the run goes on to
                // that horizon, which then ends the window.
                let linger = self.scenario.energy.after_completion;
                if !linger.is_zero() {
                    let completed = self.flows.iter().filter_map(|f| f.finished_at).max().unwrap_or(self.now);
                    stop = (completed + linger).min(stop);
                    self.horizon = Some(stop);
                    continue;
                }
                done = true;
                break;
            }
        }
        // A run that did not end by itself was simulated until its horizon or `stop_after`.
        if !done {
            self.now = stop;
        }
        // Streaming flows without a stop end with the run.
        let end = self.now;
        for (i, f) in self.net.flows.iter().enumerate() {
            let st = &mut self.flows[i];
            if st.finished_at.is_none() && st.started && f.stop.is_none() && matches!(f.traffic, FlowTraffic::OnOff { .. } | FlowTraffic::Cbr { .. }) {
                st.finished_at = Some(end);
                st.close_books(end);
            }
        }
    }

    /// Every flow finished and every TCP connection closed (or stopped). A flow that is stays so
    /// (nothing unsets `finished_at` or `halted`, nor reopens a closed connection), so the check
    /// goes on from `from`, the first flow that was not, and moves it on.
    fn all_done(&self, from: &mut usize) -> bool {
        let done = |f: &FlowState| {
            f.finished_at.is_some() && (f.halted || f.tcp.iter().all(|e| e.as_ref().map_or(true, |e| e.is_closed())))
        };
        while self.flows.get(*from).is_some_and(done) {
            *from += 1;
        }
        *from == self.flows.len()
    }

    fn dispatch(&mut self, ev: Event) {
        match ev {
            Event::Arrive { node, packet } => {
                self.count_arrival(self.packets.at(packet).via as usize);
                self.arrive(NodeId(node), packet);
            }
            Event::Wake { flow, side } => {
                let f = flow as usize;
                let s = side as usize;
                if self.flows[f].wake_at[s] == Some(self.now) {
                    self.flows[f].wake_at[s] = None;
                }
                if self.flows[f].halted {
                    return;
                }
                let node = self.node_of(f, side);
                let now = self.now;
                if let Some(ep) = self.flows[f].tcp[s].as_mut() {
                    ep.on_timeout(now);
                    self.nodes[node.index()].cpu.absorb(ep.ops());
                }
                self.after_endpoint_event(f, side);
                self.trace_point(f, side);
            }
            Event::RouteNotice { flow, side, restored } => {
                let f = flow as usize;
                if self.flows[f].halted {
                    return;
                }
                let node = self.node_of(f, side);
                let now = self.now;
                if let Some(ep) = self.flows[f].tcp[side as usize].as_mut() {
                    ep.on_route_notice(now, restored);
                    self.nodes[node.index()].cpu.absorb(ep.ops());
                }
                self.after_endpoint_event(f, side);
                self.trace_point(f, side);
            }
            Event::Medium { medium, timer } => {
                let from = self.out.len();
                self.media[medium as usize].on_timer(self.now, timer, &mut self.out);
                self.act(medium, from);
            }
            Event::Start { flow } => self.start(flow as usize),
            Event::Write { flow } => self.write(flow as usize),
            Event::DurationOver { flow } => {
                // A timed flow ends where a fixed-length simulation ends: at once, with what was
                // delivered by then; packets still in flight are not counted.
                let st = &mut self.flows[flow as usize];
                if !st.halted {
                    st.halted = true;
                    st.finished_at = Some(self.now);
                    st.close_books(self.now);
                }
            }
            Event::Stop { flow } => {
                let f = flow as usize;
                let st = &mut self.flows[f];
                if !st.halted {
                    st.halted = true;
                    st.stopped_at = Some(self.now);
                    st.close_books(self.now);
                    if st.finished_at.is_none() {
                        // A stopped streaming flow did what it was asked; a bulk or timed one was cut short.
                        if matches!(self.net.flows[f].traffic, FlowTraffic::OnOff { .. } | FlowTraffic::Cbr { .. }) {
                            st.finished_at = Some(self.now);
                        }
                    }
                }
            }
        }
    }

    fn node_of(&self, f: usize, side: End) -> NodeId {
        let cfg = &self.net.flows[f];
        match side {
            End::Src => cfg.src,
            End::Dst => cfg.dst,
            End::RelayIn | End::RelayOut => cfg.split.as_ref().expect("split flow").node,
        }
    }

    /// The end that receives what `end` sends: the other end of its connection.
    fn peer(&self, f: usize, end: End) -> End {
        let split = self.net.flows[f].split.is_some();
        match (end, split) {
            (End::Src, false) => End::Dst,
            (End::Dst, false) => End::Src,
            (End::Src, true) => End::RelayIn,
            (End::RelayIn, _) => End::Src,
            (End::RelayOut, _) => End::Dst,
            (End::Dst, true) => End::RelayOut,
        }
    }

    fn start(&mut self, f: usize) {
        let cfg: &'a FlowConfig = &self.net.flows[f];
        if self.flows[f].halted {
            return;
        }
        let now = self.now;
        let st = &mut self.flows[f];
        st.started = true;
        let begin = st.source.start(now);
        if cfg.transport == Transport::Tcp {
            let mut ep = Endpoint::with_settings(&cfg.tcp, self.conns[f].first.path_mtu, Role::Active, 0, false);
            ep.write(begin.stream_bytes);
            if begin.close {
                ep.sender.close();
            }
            if let Some(Some(trace)) = self.traces.get_mut(f) {
                trace.start(&ep.sender);
            }
            st.tcp[End::Src as usize] = Some(ep);
            if begin.one_message {
                st.messages.wrote(begin.stream_bytes, now);
            }
        }
        if let Some(t) = begin.duration_over {
            self.queue.push(t, Event::DurationOver { flow: f as u32 });
        }
        if begin.write_now {
            self.write(f);
        }
        self.after_endpoint_event(f, End::Src);
    }

    /// The source's application writes its next message now; the one after is scheduled.
    fn write(&mut self, f: usize) {
        let cfg: &'a FlowConfig = &self.net.flows[f];
        if self.flows[f].halted {
            return;
        }
        let now = self.now;
        let st = &mut self.flows[f];
        let Some(w) = st.source.write(now) else { return };
        match cfg.transport {
            Transport::Tcp => {
                st.messages.wrote(w.bytes as u64, now);
                if let Some(ep) = st.tcp[End::Src as usize].as_mut() {
                    ep.write(w.bytes as u64);
                }
                self.after_endpoint_event(f, End::Src);
            }
            Transport::Udp => {
                st.messages.wrote_datagram();
                st.udp_sent += 1;
                let node = cfg.src;
                self.nodes[node.index()].cpu.charge(now, Op::SegmentSent { bytes: w.bytes });
                let p = Packet::new(f, End::Src, Body::Udp { payload: w.bytes, written_at: now });
                self.nodes[node.index()].originated += 1;
                self.send(node, p);
            }
        }
        if let Some(next) = w.next {
            self.queue.push(next, Event::Write { flow: f as u32 });
        }
    }

    /// Transmit what the flow end wants to send and re-arm its timer.
    fn after_endpoint_event(&mut self, f: usize, side: End) {
        if self.flows[f].halted {
            return;
        }
        let node = self.node_of(f, side);
        let s = side as usize;
        loop {
            let now = self.now;
            let Some(ep) = self.flows[f].tcp[s].as_mut() else { return };
            let seg = ep.poll_transmit(now);
            self.nodes[node.index()].cpu.absorb(ep.ops());
            let Some(seg) = seg else { break };
            if let (End::RelayIn, Some(logs)) = (side, self.split_logs.as_mut()) {
                logs[f].windows.push((now, seg.window));
            }
            let p = Packet::new(f, side, Body::Tcp(seg));
            self.nodes[node.index()].originated += 1;
            self.send(node, p);
        }
        let st = &mut self.flows[f];
        if let Some(d) = st.tcp[s].as_ref().and_then(|e| e.poll_timeout()) {
            if st.wake_at[s].map_or(true, |w| d < w) {
                let d = d.max(self.now);
                st.wake_at[s] = Some(d);
                self.queue.push(d, Event::Wake { flow: f as u32, side });
            }
        }
    }

    /// After an event of a flow's source end (not its start): a row of the time series, when
    /// that flow is traced.
    #[inline]
    fn trace_point(&mut self, f: usize, side: End) {
        if let (Some(Some(trace)), End::Src) = (self.traces.get_mut(f), side) {
            if let Some(ep) = &self.flows[f].tcp[End::Src as usize] {
                trace.record(self.now, &ep.sender);
            }
        }
    }

    /// Hand a packet at `node` to the interface its route leaves by (docs/models/network.md),
    /// through the pipe in front of it if there is one.
    fn send(&mut self, node: NodeId, p: Packet) {
        let f = p.flow as usize;
        // A packet not forwarded yet is at its end's node (`number`): its first hop is known.
        let hop = if p.ttl == capture::TTL {
            self.flows[f].first_hop[p.from as usize]
        } else {
            self.routes.next_hop(node, self.node_of(f, self.peer(f, p.from)))
        };
        let Some(iface) = hop else {
            // Routes were checked for every flow's two ends; no packet can lack one.
            debug_assert!(false, "no route from node {} for flow {f}", node.0);
            return;
        };
        let i = iface.index();
        let (wire_len, ect) = (p.wire_len(), p.ect());
        match self.pipe_of[i] {
            Some(m) => {
                let packet = self.packets.insert(p);
                self.hand(m, 0, Handed { packet, wire_len, ect });
            }
            None => {
                let mut p = p;
                p.via = i as u32;
                let packet = self.packets.insert(p);
                let Via { medium, port } = self.routes.ifaces[i].via;
                self.hand(medium, port, Handed { packet, wire_len, ect });
            }
        }
    }

    /// Put the packet in slab entry `packet` on interface `i` (out of the pipe in front of it).
    fn transmit(&mut self, i: u32, packet: u32) {
        let p = self.packets.get_mut(packet);
        p.via = i;
        let handed = Handed { packet, wire_len: p.wire_len(), ect: p.ect() };
        let Via { medium, port } = self.routes.ifaces[i as usize].via;
        self.hand(medium, port, handed);
    }

    /// Hand a packet to port `port` of medium `m` and act on what it reports.
    #[inline]
    fn hand(&mut self, m: u32, port: u32, p: Handed) {
        let from = self.out.len();
        if let Some(frame) = self.media[m as usize].send(self.now, port, p, &mut self.out) {
            self.on_the_air(frame);
        }
        if self.out.len() > from {
            self.act(m, from);
        }
    }

    /// Act, in order, on what medium `m` reported from `self.out[from]` on, then forget it. A
    /// pipe's output is handed to another medium at once, whose reports go after these and are
    /// acted on (and forgotten) first.
    fn act(&mut self, m: u32, from: usize) {
        let mut k = from;
        while k < self.out.len() {
            let o = self.out[k];
            k += 1;
            match o {
                Out::Schedule { at, timer } => self.queue.push(at, Event::Medium { medium: m, timer }),
                Out::Number { packet } => {
                    let via = self.packets.get(packet).via as usize;
                    let from = self.routes.ifaces[via].from.index();
                    let p = self.packets.get_mut(packet);
                    // The interface took the packet: the host hands it to the card now.
                    self.nodes[from].cpu.charge_card(self.now, p.wire_len());
                    number(&mut self.nodes[from], p);
                }
                Out::Sent { packet, start, end } => {
                    let p = self.packets.get(packet);
                    self.capture_frame(p.via as usize, &p, start);
                    self.count_out(p.flow, p.from, p.ttl, end, p.wire_len());
                }
                Out::Deliver { packet, node, at } => {
                    let p = self.packets.get(packet);
                    let slot = self.packets.insert(p);
                    self.queue.push(at, Event::Arrive { node, packet: slot });
                }
                Out::Free { packet } => {
                    self.packets.take(packet);
                }
                Out::Radio { node, what } => what.log(&mut self.nodes[node as usize].radio),
                Out::Notice { packet, notice } => {
                    let p = self.packets.get(packet);
                    self.schedule_notice(p.flow, p.from, notice);
                }
                Out::PassOn { packet, iface } => self.transmit(iface, packet),
            }
        }
        self.out.truncate(from);
    }

    /// A frame a link put on the wire ([`medium::Frame`]): mark it, number it at its source,
    /// capture it, count it, log the radios' airtime, pass on a route notice and schedule its
    /// arrival.
    #[inline]
    fn on_the_air(&mut self, f: medium::Frame) {
        let medium::Frame { packet, bytes, start, end, ce, from, air, arrives, notice } = f;
        let p = self.packets.get_mut(packet);
        if ce {
            if let Body::Tcp(seg) = &mut p.body {
                seg.ecn = Ecn::Ce;
            }
        }
        // The link took the packet: the host hands it to the card now.
        self.nodes[from as usize].cpu.charge_card(self.now, bytes);
        number(&mut self.nodes[from as usize], p);
        let (flow, side, ttl, via) = (p.flow, p.from, p.ttl, p.via);
        if self.capture.is_some() {
            let p = self.packets.get(packet);
            self.capture_frame(via as usize, &p, start);
        }
        self.count_out(flow, side, ttl, end, bytes);
        self.nodes[from as usize].radio.transmit_frame(start, start + air, bytes);
        if let Some(n) = notice {
            self.schedule_notice(flow, side, n);
        }
        match arrives {
            Some((to, at)) => {
                self.nodes[to as usize].radio.receive_frame(SimTime(at.0.saturating_sub(air.0)), at, bytes);
                self.queue.push(at, Event::Arrive { node: to, packet });
            }
            None => {
                self.packets.take(packet);
            }
        }
    }

    /// What left each interface by the end of the run.
    fn iface_counters(&mut self) -> Vec<LinkCounters> {
        iface_counters(&self.routes, &mut self.media, self.now)
    }

    /// Keep in the capture only what left each interface by the end of the run: an interface's
    /// frames are captured in the order they start, so those are its first `packets_sent` frames
    /// (a link reports a frame as it is handed in, before its serialization ends).
    fn trim_capture(&mut self) {
        let counters = self.iface_counters();
        if let Some(c) = &mut self.capture {
            for (frames, counters) in c.links.iter_mut().zip(counters) {
                frames.frames.truncate(counters.packets_sent as usize);
            }
        }
    }

    /// Interface `iface` put `p` on the wire at `at`: capture it, when asked to.
    fn capture_frame(&mut self, iface: usize, p: &Packet, at: SimTime) {
        if self.capture.is_some() {
            let flow = self.capture_flow(p.flow as usize, p.from);
            let frame = Frame { at, flow, from_src: p.from.sends_data(), ip_id: p.ip_id, ttl: p.ttl, contents: p.contents() };
            self.capture.as_mut().expect("checked").push(iface, frame);
        }
    }

    /// `p` reached its destination `node` now: that node's own capture shows it arriving.
    fn capture_arrival(&mut self, node: usize, p: &Packet) {
        if self.capture.is_some() {
            let flow = self.capture_flow(p.flow as usize, p.from);
            let frame = Frame { at: self.now, flow, from_src: p.from.sends_data(), ip_id: p.ip_id, ttl: p.ttl, contents: p.contents() };
            self.capture.as_mut().expect("checked").push_arrival(node, frame);
        }
    }

    /// `p` leaves an interface at `end`: on its first hop, its flow end's bytes count then.
    #[inline]
    fn count_out(&mut self, flow: u32, from: End, ttl: u8, end: SimTime, wire_len: u32) {
        if ttl == capture::TTL {
            self.flows[flow as usize].out[from as usize].push(self.now, end, wire_len);
        }
    }

    /// A packet that crossed interface `via` arrived at its far end.
    #[inline]
    fn count_arrival(&mut self, via: usize) {
        let Via { medium, port } = self.routes.ifaces[via].via;
        self.media[medium as usize].arrived(port);
    }

    /// ELFN: the node before the break tells the flow's sending end at once (a route error with
    /// no delay of its own; docs/models/network.md).
    fn schedule_notice(&mut self, flow: u32, side: End, n: crate::net::impair::RouteNotice) {
        self.queue.push(n.fail_at, Event::RouteNotice { flow, side, restored: false });
        if let Some(t) = n.restore_at {
            self.queue.push(t, Event::RouteNotice { flow, side, restored: true });
        }
    }

    /// The packet in slab entry `slot` arrives at `node`. A segment is read in place (it is
    /// large, and the endpoint only reads it); the entry is freed where a copy would have been
    /// taken before, so entries are reused in the same order.
    fn arrive(&mut self, node: NodeId, slot: u32) {
        let p = self.packets.at(slot);
        // Whatever becomes of it, the host took the packet from the card.
        self.nodes[node.index()].cpu.charge_card(self.now, p.wire_len());
        let (f, from) = (p.flow as usize, p.from);
        let side = self.peer(f, from);
        let dest = self.node_of(f, side);
        if node != dest {
            let p = self.packets.take(slot);
            let n = &mut self.nodes[node.index()];
            n.cpu.charge_forward(self.now, p.wire_len());
            n.forwarded += 1;
            // RFC 791 §3.2: each router takes one off the time to live. Routes are loop-free,
            // so it is only shown, never used to discard (it stops at 1 on paths over 63 hops).
            let mut p = p;
            p.ttl = p.ttl.saturating_sub(1).max(1);
            self.send(node, p);
            return;
        }
        self.nodes[node.index()].received += 1;
        if self.capture.is_some() {
            let p = self.packets.get(slot);
            self.capture_arrival(node.index(), &p);
        }
        if self.flows[f].halted {
            self.packets.free(slot);
            self.flows[f].arrived_after_stop += 1;
            return;
        }
        let now = self.now;
        match self.packets.at(slot).body {
            Body::Tcp(_) => {
                let Self { packets, flows, nodes, split_logs, record_deliveries, .. } = self;
                if let (Some(ep), Body::Tcp(seg)) = (flows[f].tcp[side as usize].as_mut(), &packets.at(slot).body) {
                    ep.on_segment(now, seg);
                    nodes[node.index()].cpu.absorb(ep.ops());
                    if let (true, Some(r)) = (split_logs.is_some() || *record_deliveries, ep.receiver.as_mut()) {
                        r.record_deliveries();
                    }
                }
                self.packets.free(slot);
                match side {
                    End::Dst => {
                        self.check_deliveries(f);
                        if self.net.flows[f].split.is_some() {
                            self.check_finished(f);
                        }
                    }
                    End::Src => self.check_finished(f),
                    End::RelayIn | End::RelayOut => {
                        // Either the first connection brought bytes or the second freed room.
                        self.relay(f);
                        let other = if side == End::RelayIn { End::RelayOut } else { End::RelayIn };
                        self.after_endpoint_event(f, side);
                        self.after_endpoint_event(f, other);
                        return;
                    }
                }
                self.after_endpoint_event(f, side);
                self.trace_point(f, side);
            }
            Body::Udp { payload, written_at } => {
                self.packets.free(slot);
                self.nodes[node.index()].cpu.charge(now, Op::SegmentReceived { bytes: payload });
                let end = if side == End::Src { UdpEnd::Source } else { UdpEnd::Destination { echo: self.net.flows[f].echo } };
                let got = end.receive(Datagram { payload, written_at });
                let st = &mut self.flows[f];
                if got.delivered {
                    st.udp_delivered += 1;
                    st.udp_bytes_delivered += payload as u64;
                }
                if got.completed {
                    st.messages.arrived(written_at, now);
                }
                if let Some(d) = got.reply {
                    let n = &mut self.nodes[node.index()];
                    n.cpu.charge(now, Op::SegmentSent { bytes: d.payload });
                    n.originated += 1;
                    self.send(node, Packet::new(f, End::Dst, Body::Udp { payload: d.payload, written_at: d.written_at }));
                }
            }
        }
    }

    /// Messages whose last byte the receiving application now has.
    fn check_deliveries(&mut self, f: usize) {
        let now = self.now;
        let st = &mut self.flows[f];
        let delivered = st.tcp[End::Dst as usize].as_ref().and_then(|e| e.receiver.as_ref()).map_or(0, |r| r.delivered);
        st.messages.delivered(delivered, now);
    }

    /// The split node's application (`app::relay`): either connection brought bytes or room.
    fn relay(&mut self, f: usize) {
        let net = self.net;
        let (Some(split), Some(second)) = (&net.flows[f].split, self.conns[f].second) else { return };
        let FlowState { tcp, relay, .. } = &mut self.flows[f];
        let [_, _, Some(inn), out] = tcp else { return };
        let open = || Endpoint::with_settings(&split.tcp, second.path_mtu, Role::Active, 0, false);
        let Some(pumped) = relay.pump(inn, out, open) else { return };
        if let Some(logs) = &mut self.split_logs {
            let log = &mut logs[f].occupancy;
            for v in [pumped.held, pumped.held + pumped.moved] {
                if log.last().map_or(true, |&(_, last)| last != v) {
                    log.push((self.now, v));
                }
            }
        }
    }

    /// Bulk flows finish when everything written is acknowledged; a split flow when its last
    /// byte reached `to` (the source only learns that the split node has it).
    fn check_finished(&mut self, f: usize) {
        let st = &mut self.flows[f];
        if st.finished_at.is_some() {
            return;
        }
        if self.net.flows[f].split.is_some() {
            let bulk = matches!(self.net.flows[f].traffic, FlowTraffic::Bulk { .. });
            if let (true, Some(r)) = (bulk, st.tcp[End::Dst as usize].as_ref().and_then(|e| e.receiver.as_ref())) {
                if st.messages.written > 0 && r.delivered >= st.messages.written {
                    debug_assert_eq!(r.delivered_at, Some(self.now), "checked as the last byte arrives");
                    st.finished_at = r.delivered_at;
                    st.close_books(self.now);
                }
            }
            return;
        }
        let Some(ep) = st.tcp[End::Src as usize].as_ref() else { return };
        let closing = ep.sender.is_closing();
        if let (true, Some(t)) = (closing, ep.sender.data_acked_at()) {
            if matches!(self.net.flows[f].traffic, FlowTraffic::Bulk { .. }) {
                debug_assert_eq!(t, self.now, "checked as the last ACK arrives");
                st.finished_at = Some(t);
                st.close_books(t);
            }
        }
    }

    fn finish(mut self, seed: u64) -> Result<NetRunResult, EngineError> {
        let s = self.scenario;
        let net = self.net;
        let complete = self.flows.iter().all(|f| f.finished_at.is_some());
        let window_end = match self.horizon {
            Some(h) => h,
            None if complete => self.flows.iter().filter_map(|f| f.finished_at).max().unwrap_or(self.now),
            None => self.now,
        };
        let w_s = window_end.as_secs_f64();
        let run_end = self.now;
        let iface_counters = self.iface_counters();

        // Seed 004's Tmax and seed 001's bottleneck for each flow (docs/models/metrics.md).
        let (tmax_of, bottleneck_of) = flow_capacities(net, &self.routes);
        let weights = &net.metrics.weights;
        let n_flows = net.flows.len().max(1) as f64;

        // Per flow.
        let mut flows = Vec::with_capacity(net.flows.len());
        let mut delivered_of = Vec::with_capacity(net.flows.len());
        for (i, cfg) in net.flows.iter().enumerate() {
            let st = &mut self.flows[i];
            let start = SimTime(cfg.start.0);
            let end = st.finished_at.or(st.stopped_at).unwrap_or(window_end).max(start);
            let active = (end - start).as_secs_f64();
            let per_s = |bits: f64| if active > 0.0 { bits / active } else { 0.0 };
            st.close_books(end);
            let wire = Wire {
                by_flow_end: st.out_at_end.expect("books closed"),
                by_run_end: std::array::from_fn(|k| st.out[k].by(run_end).1),
            };
            let (flow, split) = match (cfg.transport, &cfg.split) {
                (Transport::Tcp, None) => {
                    let src = st.tcp[End::Src as usize].as_ref();
                    let dst = st.tcp[End::Dst as usize].as_ref().expect("destination end");
                    (FlowResult::of_tcp(src, dst, wire.of(End::Src, End::Dst), &per_s), None)
                }
                (Transport::Tcp, Some(split)) => {
                    let (flow, split) = split_flow_result(cfg, split, st, &wire, &per_s);
                    (flow, Some(split))
                }
                (Transport::Udp, _) => (FlowResult::of_udp(st.udp_sent, st.udp_bytes_delivered, wire.of(End::Src, End::Dst), &per_s), None),
            };
            delivered_of.push(flow.bytes_delivered);
            let tmax = net.metrics.tmax.map_or(tmax_of[i], |t| t as f64 / n_flows);
            let busy_s = match (cfg.transport, st.tcp[End::Src as usize].as_ref()) {
                (Transport::Tcp, Some(src)) => src.busy_time(end).as_secs_f64(),
                _ => f64::NAN,
            };
            // A bulk transfer's time is its completion; paced traffic (on_off, cbr) keeps the
            // radio busy while written data awaits acknowledgment. A timed (saturating) flow has
            // no minimum to compare with.
            let transfer_s = match (cfg.traffic, st.finished_at) {
                (FlowTraffic::Bulk { .. }, Some(t)) => (t - start).as_secs_f64(),
                (FlowTraffic::OnOff { .. } | FlowTraffic::Cbr { .. }, _) => busy_s,
                _ => f64::NAN,
            };
            let packet_latencies = match st.tcp[End::Dst as usize].as_mut().and_then(|e| e.receiver.as_mut()) {
                Some(r) => std::mem::take(&mut r.packet_latencies),
                None => Vec::new(),
            };
            let eff = Efficiency::of_flow(weights, &flow, tmax, transfer_s, bottleneck_of[i]);
            let deliveries = st.tcp[End::Dst as usize].as_ref().and_then(|e| e.receiver.as_ref()).and_then(|r| r.delivery_log.clone()).filter(|_| self.record_deliveries);
            let messages_delivered = st.messages.latencies.len() as u64;
            flows.push(NetFlowResult {
                stop_s: st.stopped_at.map(|t| t.as_secs_f64()),
                messages_sent: st.messages.sent,
                messages_delivered,
                latency_ms: Latency::of(std::mem::take(&mut st.messages.latencies)),
                packet_latency_ms: Latency::of(packet_latencies),
                busy_s,
                datagrams_sent: st.udp_sent,
                datagrams_delivered: st.udp_delivered,
                arrived_after_stop: st.arrived_after_stop,
                split,
                deliveries,
                ..NetFlowResult::of_config(cfg, flow, eff, st.finished_at.is_some(), start.as_secs_f64())
            });
        }

        let served = served_bytes(net, &self.routes, &delivered_of);

        let mut nodes = BTreeMap::new();
        let mut energies: Vec<NodeEnergy> = Vec::with_capacity(net.nodes.len());
        let mut priced: Vec<Vec<NodeMetering>> = vec![Vec::with_capacity(net.nodes.len()); self.profiles.len()];
        // A traced node, or a traced flow's source, keeps its radio timeline: the trace reads it.
        let mut timelines: Vec<Option<meter::RadioTimeline>> = vec![None; net.nodes.len()];
        let mut traced = vec![false; net.nodes.len()];
        for &n in &self.traced_nodes {
            traced[n] = true;
        }
        for (f, t) in self.traces.iter().enumerate() {
            if t.is_some() {
                traced[net.flows[f].src.index()] = true;
            }
        }
        for (n, cfg) in net.nodes.iter().enumerate() {
            let profile = &cfg.profile.profile;
            let nd = &mut self.nodes[n];
            let log = std::mem::take(&mut nd.radio);
            for (p, set) in self.profiles.iter().enumerate() {
                let mut battery = cfg.battery.as_ref().map(|b| Battery::new(b, window_end.0, &format!("nodes.{}.battery.sample", cfg.name))).transpose()?;
                let (energy, cpu) = meter::node_energy_under(&set.nodes[n], log.clone(), nd.cpu.charges(), window_end, set.radio_policy, set.timeout, served[n], battery.as_mut());
                priced[p].push(NodeMetering { energy, forward_cycles: cpu.other_cycles, battery: battery.map(|b| b.result(window_end.0)) });
            }
            let mut battery = cfg.battery.as_ref().map(|b| Battery::new(b, window_end.0, &format!("nodes.{}.battery.sample", cfg.name))).transpose()?;
            let (policy, timeout) = (s.energy.radio_policy, s.energy.timeout);
            let e = if traced[n] && battery.is_none() {
                let frames = log.frames_before(window_end);
                let tl = meter::radio_timeline(log, window_end, policy, timeout, &profile.radio);
                let e = meter::node_energy(profile, &tl, &mut nd.cpu, window_end, served[n], frames);
                timelines[n] = Some(tl);
                e
            } else {
                meter::node_energy_and_battery(profile, log, &mut nd.cpu, window_end, policy, timeout, served[n], battery.as_mut())
            };
            energies.push(e.clone());
            nodes.insert(cfg.name.clone(), nd.result(e, battery, window_end));
        }

        let (links, wire_bytes) = link_results(net, &self.routes, &self.media, iface_counters);
        let channels = channel_results(net, &self.routes, &self.media, self.now);
        let pipes = pipe_results(net, &self.media);

        // Traces (not for a node with a battery, which is metered as its battery drains).
        for (f, trace) in std::mem::take(&mut self.traces).into_iter().enumerate() {
            let src = net.flows[f].src.index();
            if let (Some(trace), Some(tl)) = (trace, &timelines[src]) {
                let profile = &net.nodes[src].profile.profile;
                flows[f].trace = Some(trace.finish(tl, profile, &mut self.nodes[src].cpu, window_end));
            }
        }
        for &n in &self.traced_nodes {
            if let (Some(tl), Some(rec)) = (&timelines[n], nodes.get_mut(&net.nodes[n].name)) {
                rec.trace = Some(crate::metrics::trace::node_power(tl, &net.nodes[n].profile.profile, &mut self.nodes[n].cpu, window_end));
            }
        }

        let tmax_all = net.metrics.tmax.map_or(tmax_of.iter().sum(), |t| t as f64);
        let network = NetworkTotals::of(&mut flows, &energies, w_s, wire_bytes, weights, tmax_all, self.packets.in_use() as u64, nodes.len());
        let variant = NetRunResult::variant_label(
            net.flows
                .iter()
                .filter(|f| f.transport == Transport::Tcp)
                .flat_map(|f| std::iter::once(&f.tcp).chain(f.split.as_ref().map(|s| &s.tcp)).map(|t| t.variant.name())),
        );
        let delivered: u64 = delivered_of.iter().sum();
        let single = flows.len() == 1;
        let names: Vec<&str> = net.nodes.iter().map(|n| n.name.as_str()).collect();
        let ends = single.then(|| (net.flows[0].src.index(), net.flows[0].dst.index()));
        let profiles = priced.into_iter().map(|nodes| NetProfile::assemble(&names, nodes, delivered, w_s, ends)).collect();
        Ok(NetRunResult {
            scenario: s.name.clone(),
            seed,
            variant,
            complete,
            stop: None,
            sim_time_s: self.now.as_secs_f64(),
            events: self.events,
            engine_version: crate::VERSION,
            flow: single.then(|| flows[0].flow.clone()),
            energy: NetEnergyResult::of_ends(net, &energies, w_s),
            flows,
            nodes,
            links,
            channels,
            pipes,
            network,
            profiles,
        })
    }
}

/// Every medium of `net` in a run with `seed` (those of `medium::specs`, then one per pipe), and
/// the pipe (its medium) in front of each interface of `routes`, if any.
pub(crate) fn build_media(net: &NetworkConfig, routes: &RouteTable, seed: u64, power_save: bool) -> (Vec<Medium>, Vec<Option<u32>>) {
    let mut media: Vec<Medium> = medium::specs(net)
        .map(|spec| match spec {
            medium::Spec::Link(_, l) => Medium::Link(medium::link::LinkMedium::new(l, net, seed)),
            medium::Spec::Channel(k, c) => Medium::Channel(medium::channel::ChannelMedium::new(c, k, seed, power_save)),
        })
        .collect();
    // Pipes are one per (from, to): keep the first alike.
    let pipe_at: HashMap<[NodeId; 2], usize> = net.pipes.iter().enumerate().rev().map(|(k, p)| (p.ends, k)).collect();
    let iface_at: HashMap<[NodeId; 2], usize> = routes.ifaces.iter().enumerate().rev().map(|(i, e)| ([e.from, e.to], i)).collect();
    let first_pipe = media.len();
    for (k, p) in net.pipes.iter().enumerate() {
        // Config checked that some interface carries each pipe's packets; a pipe no route
        // uses hands nothing on.
        let iface = iface_at.get(&p.ends).map_or(u32::MAX, |&i| i as u32);
        media.push(Medium::Pipe(medium::pipe::PipeMedium::new(p, k, iface, seed)));
    }
    let pipe_of = routes.ifaces.iter().map(|e| pipe_at.get(&[e.from, e.to]).map(|&k| (first_pipe + k) as u32)).collect();
    (media, pipe_of)
}

/// What left each interface of `routes` by `end`.
pub(crate) fn iface_counters(routes: &RouteTable, media: &mut [Medium], end: SimTime) -> Vec<LinkCounters> {
    routes.ifaces.iter().map(|e| media[e.via.medium as usize].counters(e.via.port, end)).collect()
}

/// The record's `links` (each link direction's counters, by name; a channel's pairs are in its
/// own record) and the IP bytes every interface sent, from each interface's `counters`.
pub(crate) fn link_results(net: &NetworkConfig, routes: &RouteTable, media: &[Medium], counters: Vec<LinkCounters>) -> (BTreeMap<String, LinkCounters>, u64) {
    let mut links = BTreeMap::new();
    let mut wire_bytes = 0;
    for (e, c) in routes.ifaces.iter().zip(counters) {
        wire_bytes += c.bytes_sent;
        if let Medium::Link(_) = media[e.via.medium as usize] {
            links.insert(iface_name(net, e), c);
        }
    }
    (links, wire_bytes)
}

/// The record's `pipes`: each pipe's counters, by its ends.
pub(crate) fn pipe_results(net: &NetworkConfig, media: &[Medium]) -> BTreeMap<String, medium::pipe::PipeCounters> {
    net.pipes
        .iter()
        .zip(media.iter().filter_map(|m| if let Medium::Pipe(p) = m { Some(p.counters) } else { None }))
        .map(|(cfg, c)| (format!("{}->{}", cfg.from, cfg.to), c))
        .collect()
}

/// Bytes each node's energy served, from each flow's `delivered` bytes: the flows it is an end
/// of, or whose route crosses it. Routes are loop-free: each node of a path is on it once.
pub(crate) fn served_bytes(net: &NetworkConfig, routes: &RouteTable, delivered: &[u64]) -> Vec<u64> {
    let mut served = vec![0u64; net.nodes.len()];
    for (cfg, &d) in net.flows.iter().zip(delivered) {
        served[cfg.src.index()] += d;
        for hop in routes.path(cfg.src, cfg.dst).unwrap_or_default() {
            served[routes.ifaces[hop.index()].to.index()] += d;
        }
    }
    served
}

/// An interface's name in the record: `from->to`.
pub(crate) fn iface_name(net: &NetworkConfig, e: &crate::net::routing::IfaceEnds) -> String {
    format!("{}->{}", net.nodes[e.from.index()].name, net.nodes[e.to.index()].name)
}

/// Each channel's counters, medium occupancy and used interfaces at `now`, for the record.
pub(crate) fn channel_results(net: &NetworkConfig, routes: &RouteTable, media: &[Medium], now: SimTime) -> BTreeMap<String, ChannelResult> {
    let links = net.links.len() as u32;
    let mut out = BTreeMap::new();
    for (k, cfg) in net.channels.iter().enumerate() {
        let m = links + k as u32;
        let Medium::Channel(ch) = &media[m as usize] else { continue };
        let name = |port| routes.ifaces.iter().find(|e| e.via == Via { medium: m, port }).map(|e| iface_name(net, e));
        out.insert(cfg.name.clone(), ch.result(cfg, now, &name));
    }
    out
}

/// Each flow's Tmax (its fair share of its bottleneck: the least, over its route's hops, of
/// the hop's rate over the flows that cross it) and its bottleneck rate (bit/s).
pub(crate) fn flow_capacities(net: &NetworkConfig, routes: &RouteTable) -> (Vec<f64>, Vec<f64>) {
    let rate = |i: usize| -> f64 {
        let Via { medium, port } = routes.ifaces[i].via;
        medium::spec(net, medium).rate_bps(port) as f64
    };
    let hops: Vec<Vec<usize>> = net.flows.iter().map(|f| routes.path(f.src, f.dst).unwrap_or_default().iter().map(|h| h.index()).collect()).collect();
    let mut users = vec![0usize; routes.ifaces.len()];
    for h in hops.iter().flatten() {
        users[*h] += 1;
    }
    let least = |f: &dyn Fn(usize) -> f64, h: &[usize]| h.iter().map(|&i| f(i)).fold(f64::INFINITY, f64::min);
    let tmax = hops.iter().map(|h| least(&|i| rate(i) / users[i] as f64, h)).collect();
    let bottleneck = hops.iter().map(|h| least(&rate, h)).collect();
    (tmax, bottleneck)
}

/// IP bytes each end of a flow (indexed by `End`) put on its first hop: by the time the flow
/// finished or stopped, and by the end of the run.
struct Wire {
    by_flow_end: [u64; 4],
    by_run_end: [u64; 4],
}

impl Wire {
    /// Those of the connection whose data goes from `sender` to `receiver`.
    fn of(&self, sender: End, receiver: End) -> EndBytes {
        let (s, r) = (sender as usize, receiver as usize);
        EndBytes { sender_by_flow_end: self.by_flow_end[s], sender: self.by_run_end[s], receiver: self.by_run_end[r] }
    }
}

/// A split flow's record ([`FlowResult::of_split`]) and its relay's with each connection's.
fn split_flow_result(cfg: &FlowConfig, split: &SplitConfig, st: &FlowState, wire: &Wire, per_s: &dyn Fn(f64) -> f64) -> (FlowResult, SplitResult) {
    let end = |e: End| st.tcp[e as usize].as_ref();
    let half = |src: End, dst: End, from: &str, to: &str, tcp: &crate::config::TcpConfig| {
        let rcv = end(dst).expect("receiving ends listen from the start");
        SplitHalf::of(from, to, tcp.variant.name(), end(src), rcv, wire.of(src, dst), per_s)
    };
    let first = half(End::Src, End::RelayIn, &cfg.from, &split.at, &cfg.tcp);
    let second = half(End::RelayOut, End::Dst, &split.at, &cfg.to, &split.tcp);
    // Complete when every byte written reached `to` (the source only learns that the split
    // node has it).
    let written = st.messages.written;
    let completion = match end(End::Dst).and_then(|e| e.receiver.as_ref()) {
        Some(r) if written > 0 && r.delivered >= written => r.delivered_at.map_or(f64::NAN, |t| t.as_secs_f64()),
        _ => f64::NAN,
    };
    let sent = wire.by_flow_end[End::Src as usize] + wire.by_flow_end[End::RelayOut as usize];
    let flow = FlowResult::of_split(&first.flow, &second.flow, completion, sent, per_s);
    let result = SplitResult {
        at: split.at.clone(),
        buffer_bytes: split.buffer,
        relay_max_bytes: st.relay.max_held,
        relayed_bytes: st.relay.relayed,
        halves: vec![first, second],
    };
    (flow, result)
}
