//! The emulated network, sans-I/O: the scenario's media, routes and meters carrying real IPv4
//! packets between hosts. A host's kernel hands it a packet ([`EmuWorld::from_host`]); the
//! media decide its fate and timing exactly as in simulation; what arrives at a host is handed
//! back to the caller to write to that host's device ([`EmuWorld::run_due`]). The caller owns the
//! clock and the devices (`emulate::realtime`), so this part is tested with a clock of its own.
//!
//! Nodes without a device (routers) forward inside the engine by the route table. Energy is
//! charged as in simulation, from the packets actually carried: radio airtime from the media,
//! and the per-packet CPU operations read off each packet's headers (docs/emulation.md,
//! "Energy of real packets").

use super::ip::{self, Ipv4, Tcp};
use super::observe::Connection;
use crate::config::network::{NetworkConfig, NodeId, Transport};
use crate::config::Scenario;
use crate::energy::battery::Battery;
use crate::energy::cpu::{CpuMeter, Op};
use crate::energy::meter::{self, NodeEnergy};
use crate::error::EngineError;
use crate::metrics::efficiency::Efficiency;
use crate::net::medium::{self, Handed, Medium, Out};
use crate::net::routing::{RouteTable, Via};
use crate::plan::Plan;
use crate::result::network::{NetEnergyResult, NetFlowResult, NetRunResult, NetworkTotals};
use crate::result::FlowResult;
use crate::sim::network::{NodeState, build_media, channel_results, flow_capacities, iface_counters, iface_name, link_results, pipe_results, served_bytes};
use crate::sim::queue::EventQueue;
use crate::units::SimTime;
use std::collections::{BTreeMap, HashMap};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    /// Packet (slab index) arrives at a node.
    Arrive { node: u32, packet: u32 },
    /// A timer a medium asked for.
    Medium { medium: u32, timer: medium::Timer },
    /// A flow is over: a timed flow's duration, or any flow's `stop`. Both ends stop at once.
    FlowOver { flow: u32 },
}

/// A packet in flight: its bytes, and the interface it is crossing.
struct InFlight {
    bytes: Vec<u8>,
    via: u32,
}

/// Packets in flight, addressed by index (a medium knows packets by index only).
#[derive(Default)]
struct Packets {
    items: Vec<Option<InFlight>>,
    free: Vec<u32>,
}

impl Packets {
    fn insert(&mut self, p: InFlight) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.items[i as usize] = Some(p);
                i
            }
            None => {
                self.items.push(Some(p));
                (self.items.len() - 1) as u32
            }
        }
    }
    fn get(&self, i: u32) -> &InFlight {
        self.items[i as usize].as_ref().expect("a packet in flight")
    }
    fn get_mut(&mut self, i: u32) -> &mut InFlight {
        self.items[i as usize].as_mut().expect("a packet in flight")
    }
    fn take(&mut self, i: u32) -> InFlight {
        self.free.push(i);
        self.items[i as usize].take().expect("a packet in flight")
    }
    fn in_use(&self) -> usize {
        self.items.len() - self.free.len()
    }
}

/// How the packets of one flow are recognised: its ends' nodes and the destination's port.
#[derive(Debug, Clone, Copy)]
struct FlowKey {
    src: usize,
    dst: usize,
    port: u16,
    transport: Transport,
}

/// What one flow's packets showed.
#[derive(Default)]
struct FlowWatch {
    tcp: Connection,
    /// The flow is over (its duration or `stop`): its packets are discarded, as in simulation.
    halted: bool,
    /// Packets of the flow sent, and packets that reached an end, after it was over.
    sent_after_stop: u64,
    arrived_after_stop: u64,
    datagrams_sent: u64,
    datagrams_delivered: u64,
    udp_bytes_delivered: u64,
    udp_ip_bytes: u64,
    first_datagram_at: Option<SimTime>,
    last_datagram_at: Option<SimTime>,
}

/// A frame as it began on the wire: when, and its IP packet.
type CapturedFrame = (SimTime, Vec<u8>);

/// Packets the network could not carry, by reason; none of them touched a medium.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct Refused {
    /// Not IPv4 (IPv6 neighbour discovery, a truncated read).
    pub not_ipv4: u64,
    /// Addressed to no node of the scenario.
    pub foreign: u64,
    /// Between nodes no flow's route joins.
    pub unroutable: u64,
    /// Addressed to a node without a device (a router).
    pub to_router: u64,
}

/// How late the clock ran events: each due event's lag, and the packets relayed.
#[derive(Debug, Default)]
pub struct Timeliness {
    /// Lag (ns) of every event run: how long after its time it ran.
    pub lags_ns: Vec<u64>,
    /// Packets taken from hosts, and written to hosts.
    pub taken: u64,
    pub written: u64,
    /// Per interface: the first and last arrival it carried, each as (due, done) times.
    pub arrivals: Vec<Option<[(SimTime, SimTime); 2]>>,
}

impl Timeliness {
    /// Interface `i` carried a packet due at `due` that arrived at `done`.
    fn arrived(&mut self, i: usize, due: SimTime, done: SimTime) {
        let a = &mut self.arrivals[i];
        match a {
            None => *a = Some([(due, done); 2]),
            Some(span) => span[1] = (due, done),
        }
    }

    /// How far interface `i`'s real rate strayed from its model's over the packets it carried:
    /// the real span from first to last arrival over the modelled one, less one (positive: slower).
    pub fn rate_error(&self, i: usize) -> Option<f64> {
        let [(d0, r0), (d1, r1)] = self.arrivals.get(i).copied().flatten()?;
        let due = d1.0.checked_sub(d0.0).filter(|&d| d > 0)? as f64;
        Some((r1.0 as f64 - r0.0 as f64) / due - 1.0)
    }
}

/// The emulated network of one scenario.
pub struct EmuWorld<'a> {
    scenario: &'a Scenario,
    net: &'a NetworkConfig,
    routes: RouteTable,
    media: Vec<Medium>,
    pipe_of: Vec<Option<u32>>,
    out: Vec<Out>,
    queue: EventQueue<Event>,
    packets: Packets,
    nodes: Vec<NodeState>,
    address_of: HashMap<[u8; 4], usize>,
    hosts: Vec<bool>,
    keys: Vec<FlowKey>,
    flows: Vec<FlowWatch>,
    pub refused: Refused,
    pub timeliness: Timeliness,
    events: u64,
    /// When capturing: each interface's frames, each as it began on the wire.
    capture: Option<Vec<Vec<CapturedFrame>>>,
}

impl<'a> EmuWorld<'a> {
    /// The network of `scenario` with `seed`; node `i` has address `addresses[i]` and, when
    /// `hosts[i]`, a device the caller reads and writes; flow `f`'s destination listens on
    /// `ports[f]`.
    pub fn new(scenario: &'a Scenario, seed: u64, addresses: &[[u8; 4]], hosts: &[bool], ports: &[u16]) -> Result<Self, EngineError> {
        let Some(net) = scenario.network() else {
            return Err(EngineError::Invariant("an emulation of a single-path scenario: build it from as_network()".into()));
        };
        if addresses.len() != net.nodes.len() || hosts.len() != net.nodes.len() || ports.len() != net.flows.len() {
            return Err(EngineError::Invariant("one address and host flag per node, one port per flow".into()));
        }
        let plan = Plan::of(scenario)?;
        let power_save = scenario.energy.radio_policy == crate::config::RadioPolicy::Psm;
        let (media, pipe_of) = build_media(net, &plan.routes, seed, power_save);
        let nodes = net
            .nodes
            .iter()
            .map(|n| NodeState::new(&n.profile.profile))
            .collect();
        let keys = net.flows.iter().zip(ports).map(|(f, &port)| FlowKey { src: f.src.index(), dst: f.dst.index(), port, transport: f.transport }).collect();
        let mut w = EmuWorld {
            scenario,
            net,
            routes: plan.routes,
            media,
            pipe_of,
            out: Vec::with_capacity(16),
            queue: EventQueue::with_capacity(1024),
            packets: Packets::default(),
            nodes,
            address_of: addresses.iter().enumerate().map(|(i, a)| (*a, i)).collect(),
            hosts: hosts.to_vec(),
            keys,
            flows: (0..net.flows.len()).map(|_| FlowWatch::default()).collect(),
            refused: Refused::default(),
            timeliness: Timeliness::default(),
            events: 0,
            capture: None,
        };
        w.timeliness.arrivals = vec![None; w.routes.ifaces.len()];
        for (i, f) in net.flows.iter().enumerate() {
            let duration_over = match f.traffic {
                crate::config::network::FlowTraffic::Timed { duration } => Some(f.start.0 + duration.0),
                _ => None,
            };
            let over = [duration_over, f.stop.map(|t| t.0)].into_iter().flatten().min();
            if let Some(at) = over {
                w.queue.push(SimTime(at), Event::FlowOver { flow: i as u32 });
            }
        }
        for m in 0..w.media.len() {
            w.media[m].start(&mut w.out);
            w.act(SimTime::ZERO, m as u32, 0);
        }
        Ok(w)
    }

    /// Keep every frame each interface puts on the wire, for [`EmuWorld::pcap_files`].
    pub fn with_capture(mut self) -> Self {
        self.capture = Some(vec![Vec::new(); self.routes.ifaces.len()]);
        self
    }

    /// The capture as pcap files named by interface (`from-to`), as a simulated run's
    /// (`Capture::pcap_files`): frames at the time they began on the wire, an interface that
    /// sent nothing left out.
    pub fn pcap_files(&mut self) -> Vec<(String, Vec<u8>)> {
        let Some(capture) = self.capture.take() else { return Vec::new() };
        let names = self.routes.ifaces.iter().map(|e| format!("{}-{}", self.net.nodes[e.from.index()].name, self.net.nodes[e.to.index()].name));
        names
            .zip(capture)
            .filter(|(_, frames)| !frames.is_empty())
            .map(|(name, frames)| {
                let mut out = Vec::with_capacity(24 + frames.iter().map(|(_, b)| 16 + b.len()).sum::<usize>());
                crate::capture::pcap::header(&mut out);
                for (at, bytes) in frames {
                    crate::capture::pcap::record(&mut out, at.0, &bytes);
                }
                (name, out)
            })
            .collect()
    }

    /// When the next event is due, if any.
    pub fn next_due(&self) -> Option<SimTime> {
        self.queue.peek_time()
    }

    /// The flow a packet between nodes `from` and `to` belongs to, and whether it goes from
    /// the flow's source to its destination.
    fn flow_of(&self, from: usize, to: usize, protocol: u8, src_port: u16, dst_port: u16) -> Option<(usize, bool)> {
        self.keys.iter().enumerate().find_map(|(i, k)| {
            let proto_ok = match k.transport {
                Transport::Tcp => protocol == ip::TCP,
                Transport::Udp => protocol == ip::UDP,
            };
            if !proto_ok {
                None
            } else if k.src == from && k.dst == to && dst_port == k.port {
                Some((i, true))
            } else if k.src == to && k.dst == from && src_port == k.port {
                Some((i, false))
            } else {
                None
            }
        })
    }

    /// The flow of a packet between nodes `from` and `to`, by its ports, and whether it goes from
    /// the flow's source to its destination.
    fn flow_of_packet(&self, bytes: &[u8], hdr: &Ipv4, from: usize, to: usize) -> Option<(usize, bool)> {
        let (sp, dp) = match Tcp::parse(bytes, hdr) {
            Some(t) => (t.src_port, t.dst_port),
            None => ip::udp(bytes, hdr).map(|(s, d, _)| (s, d))?,
        };
        self.flow_of(from, to, hdr.protocol, sp, dp)
    }

    /// Host `node`'s kernel sent `bytes` at `now`.
    pub fn from_host(&mut self, now: SimTime, node: usize, bytes: Vec<u8>) {
        self.timeliness.taken += 1;
        let Some(hdr) = Ipv4::parse(&bytes) else {
            self.refused.not_ipv4 += 1;
            return;
        };
        let Some(&dest) = self.address_of.get(&hdr.dst) else {
            self.refused.foreign += 1;
            return;
        };
        if !self.hosts[dest] {
            self.refused.to_router += 1;
            return;
        }
        let Some(iface) = self.routes.next_hop(NodeId(node as u32), NodeId(dest as u32)) else {
            self.refused.unroutable += 1;
            return;
        };
        if let Some((f, _)) = self.flow_of_packet(&bytes, &hdr, node, dest) {
            if self.flows[f].halted {
                // Both ends stopped: what the host still sends goes nowhere.
                self.flows[f].sent_after_stop += 1;
                return;
            }
        }
        let n = &mut self.nodes[node];
        n.originated += 1;
        // The protocol work of building it, read off its headers.
        match Tcp::parse(&bytes, &hdr) {
            Some(tcp) => {
                charge_sent(&mut n.cpu, now, &tcp);
                if let Some((f, forward)) = self.flow_of(node, dest, hdr.protocol, tcp.src_port, tcp.dst_port) {
                    let c = &mut self.flows[f].tcp;
                    if forward {
                        c.source_sent(now, &tcp);
                    } else {
                        c.destination_sent(now, &tcp);
                    }
                }
            }
            None => {
                let udp = ip::udp(&bytes, &hdr);
                n.cpu.charge(now, Op::SegmentSent { bytes: udp.map_or(0, |u| u.2) });
                if let Some((sp, dp, _)) = udp {
                    if let Some((f, true)) = self.flow_of(node, dest, hdr.protocol, sp, dp) {
                        let w = &mut self.flows[f];
                        w.datagrams_sent += 1;
                        w.first_datagram_at.get_or_insert(now);
                    }
                }
            }
        }
        self.hand_on(now, iface.index(), InFlight { bytes, via: u32::MAX }, hdr.ect());
    }

    /// Put a packet on interface `i`, through the pipe in front of it if there is one.
    fn hand_on(&mut self, now: SimTime, i: usize, mut p: InFlight, ect: bool) {
        let wire_len = p.bytes.len() as u32;
        match self.pipe_of[i] {
            Some(m) => {
                let packet = self.packets.insert(p);
                self.hand(now, m, 0, Handed { packet, wire_len, ect });
            }
            None => {
                p.via = i as u32;
                let packet = self.packets.insert(p);
                let Via { medium, port } = self.routes.ifaces[i].via;
                self.hand(now, medium, port, Handed { packet, wire_len, ect });
            }
        }
    }

    fn hand(&mut self, now: SimTime, m: u32, port: u32, p: Handed) {
        let from = self.out.len();
        if let Some(frame) = self.media[m as usize].send(now, port, p, &mut self.out) {
            self.on_the_air(now, frame);
        }
        if self.out.len() > from {
            self.act(now, m, from);
        }
    }

    /// Act on what medium `m` reported from `self.out[from]` on, as the simulation does.
    fn act(&mut self, now: SimTime, m: u32, from: usize) {
        let mut k = from;
        while k < self.out.len() {
            let o = self.out[k];
            k += 1;
            match o {
                Out::Schedule { at, timer } => self.queue.push(at, Event::Medium { medium: m, timer }),
                Out::Number { packet } => {
                    let p = self.packets.get_mut(packet);
                    let sender = self.routes.ifaces[p.via as usize].from.index();
                    let len = p.bytes.len() as u32;
                    self.nodes[sender].cpu.charge_card(now, len);
                }
                Out::Sent { packet, start, .. } => {
                    let p = self.packets.get_mut(packet);
                    let via = p.via as usize;
                    if let Some(c) = &mut self.capture {
                        c[via].push((start, p.bytes.clone()));
                    }
                    self.count_first_hop(packet, via);
                }
                Out::Notice { .. } => {}
                Out::Deliver { packet, node, at } => {
                    let p = self.packets.get_mut(packet);
                    let copy = InFlight { bytes: p.bytes.clone(), via: p.via };
                    let slot = self.packets.insert(copy);
                    self.queue.push(at, Event::Arrive { node, packet: slot });
                }
                Out::Free { packet } => {
                    self.packets.take(packet);
                }
                Out::Radio { node, what } => what.log(&mut self.nodes[node as usize].radio),
                Out::PassOn { packet, iface } => {
                    let p = self.packets.take(packet);
                    let ect = Ipv4::parse(&p.bytes).is_some_and(|h| h.ect());
                    self.hand_on_after_pipe(now, iface as usize, p, ect);
                }
            }
        }
        self.out.truncate(from);
    }

    fn hand_on_after_pipe(&mut self, now: SimTime, i: usize, mut p: InFlight, ect: bool) {
        p.via = i as u32;
        let wire_len = p.bytes.len() as u32;
        let packet = self.packets.insert(p);
        let Via { medium, port } = self.routes.ifaces[i].via;
        self.hand(now, medium, port, Handed { packet, wire_len, ect });
    }

    /// The packet in `packet` left interface `via`: when that is its source's first hop, its
    /// flow end's bytes count now (as the simulation counts them, `sim::network`).
    fn count_first_hop(&mut self, packet: u32, via: usize) {
        let from = self.routes.ifaces[via].from.index();
        let bytes = &self.packets.get(packet).bytes;
        let Some(hdr) = Ipv4::parse(bytes) else { return };
        if self.address_of.get(&hdr.src) != Some(&from) {
            return;
        }
        let Some(&dest) = self.address_of.get(&hdr.dst) else { return };
        let len = hdr.total_len as u32;
        if let Some((f, forward)) = self.flow_of_packet(bytes, &hdr, from, dest) {
            match self.keys[f].transport {
                Transport::Tcp => self.flows[f].tcp.left_first_hop(forward, len),
                Transport::Udp => self.flows[f].udp_ip_bytes += len as u64,
            }
        }
    }

    /// A frame a link put on the wire: mark it, charge its sender's card, log the radios and
    /// schedule its arrival.
    fn on_the_air(&mut self, now: SimTime, f: medium::Frame) {
        let medium::Frame { packet, bytes, start, ce, from, air, arrives, .. } = f;
        if ce {
            ip::mark_ce(&mut self.packets.get_mut(packet).bytes);
        }
        self.nodes[from as usize].cpu.charge_card(now, bytes);
        self.nodes[from as usize].radio.transmit_frame(start, start + air, bytes);
        let via = self.packets.get_mut(packet).via as usize;
        if let Some(c) = &mut self.capture {
            c[via].push((start, self.packets.get_mut(packet).bytes.clone()));
        }
        self.count_first_hop(packet, via);
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

    /// Run every event due by `now`, in time order; each packet that reaches its host goes to
    /// `write(node, bytes)`.
    pub fn run_due(&mut self, now: SimTime, write: &mut dyn FnMut(usize, &[u8])) {
        while let Some(t) = self.queue.peek_time() {
            if t > now {
                break;
            }
            let Some((t, ev)) = self.queue.pop() else { break };
            self.events += 1;
            self.timeliness.lags_ns.push(now.0 - t.0);

            match ev {
                Event::Medium { medium, timer } => {
                    let from = self.out.len();
                    self.media[medium as usize].on_timer(t, timer, &mut self.out);
                    self.act(t, medium, from);
                }
                Event::Arrive { node, packet } => self.arrive(t, now, node as usize, packet, write),
                Event::FlowOver { flow } => {
                    let w = &mut self.flows[flow as usize];
                    w.tcp.close_books(t);
                    w.halted = true;
                }
            }
        }
    }

    /// The packet in slot `slot` arrives at `node` at `t`: to its host, or on to the next hop.
    fn arrive(&mut self, t: SimTime, now: SimTime, node: usize, slot: u32, write: &mut dyn FnMut(usize, &[u8])) {
        let mut p = self.packets.take(slot);
        let via = p.via as usize;
        self.timeliness.arrived(via, t, now);
        let Via { medium, port } = self.routes.ifaces[via].via;
        self.media[medium as usize].arrived(port);
        let len = p.bytes.len() as u32;
        self.nodes[node].cpu.charge_card(t, len);
        let Some(hdr) = Ipv4::parse(&p.bytes) else { return };
        let dest = self.address_of.get(&hdr.dst).copied().unwrap_or(node);
        if dest != node {
            let n = &mut self.nodes[node];
            n.cpu.charge_forward(t, len);
            n.forwarded += 1;
            ip::decrement_ttl(&mut p.bytes);
            match self.routes.next_hop(NodeId(node as u32), NodeId(dest as u32)) {
                Some(iface) => self.hand_on(t, iface.index(), p, hdr.ect()),
                None => self.refused.unroutable += 1,
            }
            return;
        }
        let sender = self.routes.ifaces[via].from.index();
        let source = self.address_of.get(&hdr.src).copied().unwrap_or(sender);
        self.nodes[node].received += 1;
        if let Some((f, _)) = self.flow_of_packet(&p.bytes, &hdr, source, node) {
            if self.flows[f].halted {
                // Still in flight when the flow stopped: discarded on arrival.
                self.flows[f].arrived_after_stop += 1;
                return;
            }
        }
        let n = &mut self.nodes[node];
        match Tcp::parse(&p.bytes, &hdr) {
            Some(tcp) => {
                charge_received(&mut n.cpu, t, &tcp);
                if let Some((f, forward)) = self.flow_of(source, node, hdr.protocol, tcp.src_port, tcp.dst_port) {
                    let c = &mut self.flows[f].tcp;
                    if forward {
                        c.destination_got(t, &tcp);
                    } else {
                        c.source_got(t, &tcp);
                    }
                }
            }
            None => {
                let udp = ip::udp(&p.bytes, &hdr);
                n.cpu.charge(t, Op::SegmentReceived { bytes: udp.map_or(0, |u| u.2) });
                if let Some((sp, dp, payload)) = udp {
                    if let Some((f, true)) = self.flow_of(source, node, hdr.protocol, sp, dp) {
                        let w = &mut self.flows[f];
                        w.datagrams_delivered += 1;
                        w.udp_bytes_delivered += payload as u64;
                        w.last_datagram_at = Some(t);
                    }
                }
            }
        }
        self.timeliness.written += 1;
        write(node, &p.bytes);
    }

    /// The record of the emulation over `[0, end)`. `complete` and `stop` say whether it ran to
    /// its end honestly, and why not.
    pub fn finish(&mut self, seed: u64, run_end: SimTime, complete: bool, stop: Option<String>) -> Result<NetRunResult, EngineError> {
        let s = self.scenario;
        let net = self.net;
        // The measurement window ends when the last flow finished, as a simulated run's does
        // (a TCP flow when its data was all acknowledged, a UDP flow at its last datagram);
        // at the run's end when one did not.
        let done_at = |w: &FlowWatch, t: Transport| match t {
            Transport::Tcp => w.tcp.finished_at(),
            Transport::Udp => w.last_datagram_at,
        };
        let finished: Option<Vec<SimTime>> = net.flows.iter().zip(&self.flows).map(|(cfg, w)| done_at(w, cfg.transport)).collect();
        // Metering on after completion (`energy.after_completion`), as far as the run went.
        let linger = s.energy.after_completion;
        let end = finished.and_then(|t| t.into_iter().max()).map_or(run_end, |t| (t + linger).min(run_end));
        let w_s = end.as_secs_f64();
        let (tmax_of, bottleneck_of) = flow_capacities(net, &self.routes);
        let weights = &net.metrics.weights;
        let n_flows = net.flows.len().max(1) as f64;
        let mut flows = Vec::with_capacity(net.flows.len());
        for (i, cfg) in net.flows.iter().enumerate() {
            let watch = &self.flows[i];
            let (flow, start, done) = match cfg.transport {
                Transport::Tcp => {
                    let c = &watch.tcp;
                    let start = c.started_at.unwrap_or(SimTime(cfg.start.0));
                    let stop = c.finished_at().unwrap_or(end);
                    (c.result((stop.max(start) - start).as_secs_f64()), start, c.finished_at())
                }
                Transport::Udp => {
                    let start = watch.first_datagram_at.unwrap_or(SimTime(cfg.start.0));
                    let active = (watch.last_datagram_at.unwrap_or(end).max(start) - start).as_secs_f64();
                    let per_s = |bits: f64| if active > 0.0 { bits / active } else { 0.0 };
                    let bytes = crate::result::flow::EndBytes { sender_by_flow_end: watch.udp_ip_bytes, sender: watch.udp_ip_bytes, receiver: 0 };
                    (FlowResult::of_udp(watch.datagrams_sent, watch.udp_bytes_delivered, bytes, &per_s), start, watch.last_datagram_at)
                }
            };
            let tmax = net.metrics.tmax.map_or(tmax_of[i], |t| t as f64 / n_flows);
            let transfer_s = done.map_or(f64::NAN, |d| (d - start).as_secs_f64());
            let eff = Efficiency::of_flow(weights, &flow, tmax, transfer_s, bottleneck_of[i]);
            let complete = cfg.transport == Transport::Udp || done.is_some();
            flows.push(NetFlowResult {
                datagrams_sent: watch.datagrams_sent,
                datagrams_delivered: watch.datagrams_delivered,
                arrived_after_stop: watch.arrived_after_stop,
                stop_s: cfg.stop.map(|t| t.as_secs_f64()),
                ..NetFlowResult::of_config(cfg, flow, eff, complete, start.as_secs_f64())
            });
        }
        let delivered: Vec<u64> = flows.iter().map(|f| f.flow.bytes_delivered).collect();
        let served = served_bytes(net, &self.routes, &delivered);
        let mut nodes = BTreeMap::new();
        let mut energies: Vec<NodeEnergy> = Vec::with_capacity(net.nodes.len());
        let (policy, timeout) = (s.energy.radio_policy, s.energy.timeout);
        for (n, cfg) in net.nodes.iter().enumerate() {
            let nd = &mut self.nodes[n];
            let log = std::mem::take(&mut nd.radio);
            let mut battery = cfg.battery.as_ref().map(|b| Battery::new(b, end.0, &format!("nodes.{}.battery.sample", cfg.name))).transpose()?;
            let e = meter::node_energy_and_battery(&cfg.profile.profile, log, &mut nd.cpu, end, policy, timeout, served[n], battery.as_mut());
            energies.push(e.clone());
            nodes.insert(cfg.name.clone(), nd.result(e, battery, end));
        }
        // What the media carried over the whole run, as a simulated run's record counts it.
        let counters = iface_counters(&self.routes, &mut self.media, run_end);
        let (links, wire_bytes) = link_results(net, &self.routes, &self.media, counters);
        let channels = channel_results(net, &self.routes, &self.media, run_end);
        let pipes = pipe_results(net, &self.media);
        let tmax_all = net.metrics.tmax.map_or(tmax_of.iter().sum(), |t| t as f64);
        let network = NetworkTotals::of(&mut flows, &energies, w_s, wire_bytes, weights, tmax_all, self.packets.in_use() as u64, nodes.len());
        let variant = NetRunResult::variant_label(net.flows.iter().filter(|f| f.transport == Transport::Tcp).map(|f| f.tcp.variant.name()));
        let single = flows.len() == 1;
        Ok(NetRunResult {
            scenario: s.name.clone(),
            seed,
            variant,
            complete: complete && flows.iter().all(|f| f.complete),
            stop,
            sim_time_s: run_end.as_secs_f64(),
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
            profiles: Vec::new(),
        })
    }

    /// Each interface's name in the record (`from->to`), in interface order.
    pub fn iface_names(&self) -> Vec<String> {
        self.routes.ifaces.iter().map(|e| iface_name(self.net, e)).collect()
    }
}

/// The CPU work of sending `tcp`, as the simulation charges it (`tcp::endpoint`): a data
/// segment with its payload, or a pure ACK; each SACK block written.
pub(crate) fn charge_sent(cpu: &mut CpuMeter, now: SimTime, tcp: &Tcp) {
    if tcp.payload > 0 {
        cpu.charge(now, Op::SegmentSent { bytes: tcp.payload });
    } else {
        cpu.charge(now, Op::AckSent);
    }
    for _ in 0..tcp.sack_blocks {
        cpu.charge(now, Op::SackBlockGenerated);
    }
}

/// The CPU work of receiving `tcp`: a data segment or an ACK, each SACK block parsed, and the
/// timestamps option's PAWS check.
pub(crate) fn charge_received(cpu: &mut CpuMeter, now: SimTime, tcp: &Tcp) {
    if tcp.payload > 0 {
        cpu.charge(now, Op::SegmentReceived { bytes: tcp.payload });
    } else {
        cpu.charge(now, Op::AckReceived);
    }
    for _ in 0..tcp.sack_blocks {
        cpu.charge(now, Op::SackBlockProcessed);
    }
    if tcp.timestamps {
        cpu.charge(now, Op::PawsCheck);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHAIN: &str = r#"
[nodes]
a = { profile = "singh2002-toshiba-wavelan" }
r = {}
b = { profile = "singh2002-toshiba-wavelan" }
[[links]]
between = ["a", "r"]
rate = "1Mbps"
delay = "10ms"
[[links]]
between = ["r", "b"]
rate = "1Mbps"
delay = "10ms"
[[flows]]
name = "f"
from = "a"
to = "b"
transport = "udp"
traffic = { kind = "cbr", rate = "100kbps", packet = 972 }
"#;

    const A: [u8; 4] = [10, 0, 0, 1];
    const B: [u8; 4] = [10, 0, 0, 3];

    /// The chain's world: a and b are hosts, r a router; returns it with a's and b's indices.
    fn chain(s: &Scenario) -> (EmuWorld<'_>, usize, usize) {
        let nodes = &s.network().expect("network").nodes;
        let at = |name: &str| nodes.iter().position(|n| n.name == name).expect("node");
        let mut addresses = [[10, 0, 0, 2]; 3];
        let mut hosts = [true; 3];
        addresses[at("a")] = A;
        addresses[at("b")] = B;
        hosts[at("r")] = false;
        (EmuWorld::new(s, 1, &addresses, &hosts, &[20000]).expect("world"), at("a"), at("b"))
    }

    /// A 1000-byte UDP datagram from `A` to `B` (972 payload bytes), TTL 64, checksummed.
    fn datagram() -> Vec<u8> {
        let mut p = vec![0u8; 1000];
        p[0] = 0x45;
        p[2..4].copy_from_slice(&1000u16.to_be_bytes());
        p[8] = 64;
        p[9] = ip::UDP;
        p[12..16].copy_from_slice(&A);
        p[16..20].copy_from_slice(&B);
        let c = crate::capture::wire::checksum(0, &p[..20]);
        p[10..12].copy_from_slice(&c.to_be_bytes());
        p[20..22].copy_from_slice(&5000u16.to_be_bytes());
        p[22..24].copy_from_slice(&20000u16.to_be_bytes());
        p[24..26].copy_from_slice(&980u16.to_be_bytes());
        p
    }

    /// Two hops of 8 ms serialization (1000 bytes at 1 Mbit/s) and 10 ms propagation each: the
    /// packet reaches b's host at 36 ms, not before, through the router r that took one off its
    /// TTL (RFC 791 §3.2) and charged its forwarding.
    #[test]
    fn a_packet_crosses_a_router_in_the_links_own_time() {
        let s = Scenario::from_toml(CHAIN).expect("scenario");
        let (mut w, a, b) = chain(&s);
        w.from_host(SimTime::ZERO, a, datagram());
        let mut got = Vec::new();
        w.run_due(SimTime(35_999_999), &mut |node, bytes| got.push((node, bytes.to_vec())));
        assert!(got.is_empty(), "nothing arrives early");
        w.run_due(SimTime(36_000_000), &mut |node, bytes| got.push((node, bytes.to_vec())));
        assert_eq!(got.len(), 1);
        let (node, bytes) = &got[0];
        assert_eq!((*node, bytes[8], bytes.len()), (b, 63, 1000));
        assert_eq!(crate::capture::wire::checksum(0, &bytes[..20]), 0, "header still valid");
        let r = w.finish(1, SimTime(40_000_000), true, None).expect("record");
        assert_eq!((r.nodes["r"].forwarded_packets, r.flows[0].datagrams_delivered), (1, 1));
        assert_eq!(r.nodes["a"].cpu_ops["segment_sent"], 1);
        assert_eq!(r.nodes["b"].cpu_ops["segment_received"], 1);
    }

    #[test]
    fn packets_for_no_node_or_a_router_are_refused_and_counted() {
        let s = Scenario::from_toml(CHAIN).expect("scenario");
        let (mut w, a, _) = chain(&s);
        let mut foreign = datagram();
        foreign[19] = 99;
        let mut to_router = datagram();
        to_router[19] = 2;
        w.from_host(SimTime::ZERO, a, foreign);
        w.from_host(SimTime::ZERO, a, to_router);
        w.from_host(SimTime::ZERO, a, vec![0x60; 40]);
        let Refused { not_ipv4, foreign, to_router, unroutable } = w.refused;
        assert_eq!((not_ipv4, foreign, to_router, unroutable), (1, 1, 1, 0));
        assert_eq!(w.next_due(), None, "none of them reached a medium");
    }
}
