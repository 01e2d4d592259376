//! The discrete-event core: the world (nodes, links, packets), the event enum and the run loop.

pub mod network;
pub mod queue;
pub mod rng;

use crate::capture::Capture;
use crate::config::Scenario;
use crate::energy::airtime::RadioAirtime;
use crate::energy::cpu::CpuMeter;
use crate::energy::meter::{self, RadioLog};
use crate::error::EngineError;
use crate::metrics::trace::Trace;
use crate::net::impair::RouteNotice;
use crate::net::link::{Fate, Link};
use crate::result::RunResult;
use crate::tcp::endpoint::{Endpoint, Role};
use crate::tcp::segment::{Ecn, Segment};
use crate::units::SimTime;
use queue::EventQueue;

/// Node indices of the single-path topology.
pub const SENDER: usize = 0;
pub const RECEIVER: usize = 1;

/// Events, dispatched by `match` in [`World::dispatch`]. Links schedule arrivals directly
/// (see `net::link`), so there is no per-link event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    /// Packet (slab index) arrives at node.
    Arrive { node: u8, packet: u32 },
    /// A node's endpoint asked to be woken (timers).
    Wake(u8),
    /// A route-failure (`restored` false) or route-restored notice reaches a node (ELFN).
    RouteNotice { node: u8, restored: bool },
}

/// A node: its endpoint, its meters, and its radio's airtime per frame.
struct Node {
    ep: Endpoint,
    cpu: CpuMeter,
    radio: RadioLog,
    airtime: RadioAirtime,
    /// Earliest wake-up already in the queue.
    wake_at: Option<SimTime>,
}

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

pub struct World<'a> {
    scenario: &'a Scenario,
    now: SimTime,
    queue: EventQueue<Event>,
    packets: Slab<Segment>,
    nodes: [Node; 2],
    /// links[0]: sender -> receiver (forward); links[1]: receiver -> sender (reverse).
    links: [Link; 2],
    events: u64,
    trace: Option<Trace>,
    record_deliveries: bool,
    capture: Option<Capture>,
    /// IP bytes the sender's link had finished serializing when the last data byte was
    /// acknowledged: the flow's throughput counts these.
    bytes_out_by_completion: Option<u64>,
}

impl<'a> World<'a> {
    pub fn new(scenario: &'a Scenario, seed: u64, opts: RunOptions) -> Self {
        let s = scenario;
        // Room for every segment of the transfer and its ACKs, so the logs rarely grow; at most a
        // million up front (a transfer of up to 1 PB may be cut short by stop_after).
        let packets = ((s.traffic.bytes / s.smss() as u64) as usize + 64).min(1 << 20);
        let node = |role, bytes, profile: &crate::energy::profile::DeviceProfile| Node {
            ep: Endpoint::new(s, role, bytes),
            cpu: CpuMeter::new(&profile.cpu.cycles, profile.cpu.frequency_hz, profile.cpu.active_power_w),
            radio: RadioLog::with_capacity(packets),
            airtime: RadioAirtime::new(profile),
            wake_at: None,
        };
        let fo = s.path.frame_overhead;
        Self {
            scenario,
            now: SimTime::ZERO,
            queue: EventQueue::with_capacity(256),
            packets: Slab::default(),
            nodes: [
                node(Role::Active, s.traffic.bytes, &s.energy.sender.profile),
                node(Role::Passive, 0, &s.energy.receiver.profile),
            ],
            links: [
                Link::new(&s.path.forward, SENDER, RECEIVER, fo, seed, "path.forward"),
                Link::new(&s.path.reverse, RECEIVER, SENDER, fo, seed, "path.reverse"),
            ],
            events: 0,
            trace: if opts.trace { Some(Trace::default()) } else { None },
            record_deliveries: opts.record_deliveries,
            capture: opts.capture.then(|| Capture::single_path(packets)),
            bytes_out_by_completion: None,
        }
    }

    /// Run to completion or to `stop_after`.
    pub fn run(self, seed: u64) -> Result<RunResult, EngineError> {
        self.run_captured(seed).map(|(r, _)| r)
    }

    /// Run, and return the capture too when `RunOptions::capture` asked for one.
    pub fn run_captured(mut self, seed: u64) -> Result<(RunResult, Option<Capture>), EngineError> {
        let stop = SimTime(self.scenario.stop_after.0);
        self.transmit_from(SENDER);
        self.schedule_wake(SENDER);
        let mut closed = false;
        while let Some((t, ev)) = self.queue.pop() {
            if t > stop {
                break;
            }
            self.now = t;
            self.events += 1;
            self.dispatch(ev);
            if self.nodes[SENDER].ep.is_closed() && self.nodes[RECEIVER].ep.is_closed() {
                closed = true;
                break;
            }
        }
        // Complete once every data byte is acknowledged (the record's completion), whether or
        // not the teardown finished (`flow.closed` says). A run that did not close its
        // connection was simulated until `stop_after`, and ends there.
        let complete = self.nodes[SENDER].ep.sender.data_acked_at().is_some();
        if !closed {
            self.now = stop;
        }
        self.finish(seed, complete, closed)
    }

    #[inline]
    fn dispatch(&mut self, ev: Event) {
        match ev {
            Event::Arrive { node, packet } => {
                let n = node as usize;
                let seg = self.packets.take(packet);
                // links[k] leaves node k: what arrives at node n came over the other one.
                self.links[1 - n].arrived();
                let nd = &mut self.nodes[n];
                nd.ep.on_segment(self.now, &seg);
                nd.cpu.absorb(nd.ep.ops());
                if self.record_deliveries {
                    if let Some(r) = &mut nd.ep.receiver {
                        r.record_deliveries();
                    }
                }
                self.after_endpoint_event(n);
            }
            Event::RouteNotice { node, restored } => {
                let n = node as usize;
                let nd = &mut self.nodes[n];
                nd.ep.on_route_notice(self.now, restored);
                nd.cpu.absorb(nd.ep.ops());
                self.after_endpoint_event(n);
            }
            Event::Wake(node) => {
                let n = node as usize;
                let nd = &mut self.nodes[n];
                if nd.wake_at == Some(self.now) {
                    nd.wake_at = None;
                }
                nd.ep.on_timeout(self.now);
                nd.cpu.absorb(nd.ep.ops());
                self.after_endpoint_event(n);
            }
        }
    }

    #[inline]
    fn after_endpoint_event(&mut self, n: usize) {
        self.transmit_from(n);
        self.schedule_wake(n);
        if n == SENDER {
            if self.bytes_out_by_completion.is_none() {
                if let Some(t) = self.nodes[SENDER].ep.sender.data_acked_at() {
                    self.bytes_out_by_completion = Some(self.links[SENDER].counters_at(t).bytes_sent);
                }
            }
            if let Some(tr) = &mut self.trace {
                let ep = &self.nodes[SENDER].ep;
                tr.record(self.now, &ep.sender);
            }
        }
    }

    /// Hand every segment the endpoint wants to send to its outgoing link.
    #[inline]
    fn transmit_from(&mut self, n: usize) {
        loop {
            let nd = &mut self.nodes[n];
            let seg = nd.ep.poll_transmit(self.now);
            nd.cpu.absorb(nd.ep.ops());
            let Some(seg) = seg else { break };
            self.enqueue(n, seg);
        }
    }

    /// Hand a segment to the outgoing link of node `n` (link index = sending node index).
    ///
    /// Radio time follows the sending radio's airtime of the frame, not the link's serialization
    /// (docs/models/energy.md, "Airtime"): the sender's radio transmits from the start of
    /// serialization; the far radio receives during the same airtime, ending when the frame
    /// arrives. A frame dropped by the queue costs no radio time; one lost on the channel costs
    /// transmit time only.
    #[inline]
    fn enqueue(&mut self, n: usize, seg: Segment) {
        let link = &mut self.links[n];
        let wire_len = seg.wire_len();
        match link.send(self.now, wire_len, seg.ecn != Ecn::NotEct) {
            Fate::QueueFull => {}
            Fate::Lost { start, end, notice } => {
                let from = link.from;
                if let Some(c) = &mut self.capture {
                    c.record(n, start, seg);
                }
                let tx = &mut self.nodes[from];
                let air = tx.airtime.of_frame(wire_len, start, end);
                tx.radio.transmit_frame(start, start + air, wire_len);
                if let Some(n) = notice {
                    self.schedule_notice(from, n);
                }
            }
            Fate::Arrives { start, end, at, ce, notice } => {
                let (from, to) = (link.from, link.to);
                let tx = &mut self.nodes[from];
                let air = tx.airtime.of_frame(wire_len, start, end);
                tx.radio.transmit_frame(start, start + air, wire_len);
                if let Some(n) = notice {
                    self.schedule_notice(from, n);
                }
                self.nodes[to].radio.receive_frame(SimTime(at.0.saturating_sub(air.0)), at, wire_len);
                let mut seg = seg;
                if ce {
                    seg.ecn = Ecn::Ce;
                }
                if let Some(c) = &mut self.capture {
                    c.record(n, start, seg);
                }
                let p = self.packets.insert(seg);
                self.queue.push(at, Event::Arrive { node: to as u8, packet: p });
            }
        }
    }

    /// The route-failure (and restoration) messages of the node before a broken hop.
    fn schedule_notice(&mut self, from: usize, n: RouteNotice) {
        self.queue.push(n.fail_at, Event::RouteNotice { node: from as u8, restored: false });
        if let Some(t) = n.restore_at {
            self.queue.push(t, Event::RouteNotice { node: from as u8, restored: true });
        }
    }

    fn schedule_wake(&mut self, n: usize) {
        let nd = &mut self.nodes[n];
        if let Some(d) = nd.ep.poll_timeout() {
            if nd.wake_at.map_or(true, |w| d < w) {
                let d = d.max(self.now);
                nd.wake_at = Some(d);
                self.queue.push(d, Event::Wake(n as u8));
            }
        }
    }

    fn finish(mut self, seed: u64, complete: bool, closed: bool) -> Result<(RunResult, Option<Capture>), EngineError> {
        let s = self.scenario;
        // What left each link by the end of the run; a capture keeps those frames alone (a
        // link's frames are captured in order, so they are the first `packets_sent`).
        let links = [self.links[0].counters_at(self.now), self.links[1].counters_at(self.now)];
        let mut capture = self.capture.take();
        if let Some(c) = &mut capture {
            for (k, l) in links.iter().enumerate() {
                c.links[k].frames.truncate(l.packets_sent as usize);
            }
        }
        let snd = &self.nodes[SENDER].ep;
        let window_end = snd.sender.data_acked_at().unwrap_or(self.now);
        let bytes_out = self.bytes_out_by_completion.unwrap_or(links[SENDER].bytes_sent);
        let delivered = self.nodes[RECEIVER].ep.receiver.as_ref().map_or(0, |r| r.delivered);
        if delivered > s.traffic.bytes {
            return Err(EngineError::Invariant(format!(
                "receiver got {delivered} bytes of a {}-byte transfer",
                s.traffic.bytes
            )));
        }
        let mut logs = [std::mem::take(&mut self.nodes[0].radio), std::mem::take(&mut self.nodes[1].radio)];
        let (policy, timeout) = (s.energy.radio_policy, s.energy.timeout);
        let mut energy = |n: usize, profile: &crate::energy::profile::DeviceProfile, keep_timeline: bool| {
            let log = std::mem::take(&mut logs[n]);
            let cpu = &mut self.nodes[n].cpu;
            if !keep_timeline {
                return (meter::node_energy_from_log(profile, log, cpu, window_end, policy, timeout, delivered), None);
            }
            let frames = log.frames_before(window_end);
            let tl = meter::radio_timeline(log, window_end, policy, timeout, profile.radio.wake_time);
            (meter::node_energy(profile, &tl, cpu, window_end, delivered, frames), Some(tl))
        };
        // Only the sender's trace needs its radio timeline.
        let (e_snd, tl_snd) = energy(SENDER, &s.energy.sender.profile, self.trace.is_some());
        let (e_rcv, _) = energy(RECEIVER, &s.energy.receiver.profile, false);
        let trace = self.trace.take().map(|t| {
            let tl_snd = tl_snd.expect("the sender's timeline is kept when tracing");
            t.finish(&tl_snd, &s.energy.sender.profile, &mut self.nodes[SENDER].cpu)
        });
        let record = RunResult::assemble(crate::result::Parts {
            scenario: s,
            seed,
            complete,
            closed,
            bytes_out,
            sim_time: self.now,
            events: self.events,
            window_end,
            sender: &self.nodes[SENDER].ep,
            receiver: &self.nodes[RECEIVER].ep,
            sender_cpu: &self.nodes[SENDER].cpu,
            receiver_cpu: &self.nodes[RECEIVER].cpu,
            forward: links[0],
            reverse: links[1],
            energy_sender: e_snd,
            energy_receiver: e_rcv,
            trace,
            deliveries: self.nodes[RECEIVER].ep.receiver.as_ref().and_then(|r| r.delivery_log.clone()),
        });
        Ok((record, capture))
    }
}

/// Run the single-path `scenario` with `seed`.
pub fn run(scenario: &Scenario, seed: u64, opts: RunOptions) -> Result<RunResult, EngineError> {
    single_path_only(scenario)?;
    World::new(scenario, seed, opts).run(seed)
}

fn single_path_only(scenario: &Scenario) -> Result<(), EngineError> {
    match scenario.network {
        None => Ok(()),
        Some(_) => Err(EngineError::config("", "a network scenario ([nodes], [[links]], [[flows]]): run it with run_network() or run_json()")),
    }
}

/// Run `scenario` with `seed`; the second value is the packet capture when `opts.capture`.
pub fn run_captured(scenario: &Scenario, seed: u64, opts: RunOptions) -> Result<(RunResult, Option<Capture>), EngineError> {
    single_path_only(scenario)?;
    World::new(scenario, seed, opts).run_captured(seed)
}
