//! Interfaces on a shared 802.11 channel in the network run loop (docs/models/wifi.md).
//!
//! The channel's DCF is sans-I/O: packets go in with `enqueue`, its timers come back through
//! the world's event queue as `Event::Mac`, and what it reports is acted on here: deliveries
//! become arrivals at the next node, MAC ACKs and drops free the packet, and every frame's
//! airtime goes into the radio logs of the stations that sent, received or overheard it.

use super::{Event, Iface, NetWorld, Packet};
use crate::config::channel::{ChannelConfig, Overhearing};
use crate::energy::meter::Mark;
use crate::net::impair::AnyImpairment;
use crate::net::routing::{RouteTable, Via};
use crate::net::wifi::dcf::{AirRole, Dcf, DcfConfig, DropReason, FrameKind, Infrastructure, Out, StationCounters, Timer};
use crate::result::network::ChannelResult;
use crate::units::SimTime;
use std::collections::BTreeMap;

/// One channel's MAC and the map from its stations to nodes and interfaces.
pub(super) struct ChannelState {
    /// Payloads are packet slab indices.
    dcf: Dcf<u32>,
    /// Node index of each station.
    nodes: Vec<usize>,
    /// `iface[a][b]`: the interface from station `a` to station `b`.
    iface: Vec<Vec<Option<u32>>>,
    overhear_costs_rx: bool,
    /// Reused buffer for the MAC's reports.
    out: Vec<Out<u32>>,
}

impl ChannelState {
    /// `power_save`: the stations behind an access point doze (radio policy `psm`).
    pub(super) fn new(cfg: &ChannelConfig, k: usize, routes: &RouteTable, seed: u64, power_save: bool) -> Self {
        let n = cfg.members.len();
        let mut iface = vec![vec![None; n]; n];
        for (i, e) in routes.ifaces.iter().enumerate() {
            if let Via::Channel { channel, from, to } = e.via {
                if channel == k {
                    iface[from][to] = Some(i as u32);
                }
            }
        }
        let name = format!("channels.{k}");
        let impairments = cfg
            .impairments
            .iter()
            .enumerate()
            .map(|(i, c)| AnyImpairment::new(c, seed, &format!("{name}.impairments.{i}")))
            .collect();
        let dcf_cfg = DcfConfig {
            standard: cfg.standard,
            preamble: cfg.preamble,
            data_rate: cfg.data_rate,
            basic_rates: cfg.basic_rates.clone(),
            rts_threshold: cfg.rts_threshold,
            short_retry_limit: cfg.short_retry_limit,
            long_retry_limit: cfg.long_retry_limit,
            queue: cfg.queue as usize,
            hears: cfg.hears.clone(),
            infrastructure: cfg.infrastructure.as_ref().map(|x| Infrastructure {
                ap: x.station,
                beacon_interval: x.beacon_interval,
                listen_interval: x.listen_interval,
                power_save: (0..n).map(|s| power_save && s != x.station).collect(),
            }),
        };
        Self {
            dcf: Dcf::new(dcf_cfg, impairments, seed, &name),
            nodes: cfg.members.iter().map(|m| m.index()).collect(),
            iface,
            overhear_costs_rx: cfg.overhearing == Overhearing::Receive,
            out: Vec::with_capacity(16),
        }
    }
}

impl NetWorld<'_> {
    /// Hand a packet to the MAC of interface `i` (a channel's): it is numbered when the IP
    /// layer hands it over, and counted as sent (and captured, stamped with the start of its
    /// first transmission) when the MAC's first transmission of it ends.
    pub(super) fn channel_send(&mut self, i: usize, mut p: Packet) {
        let Iface::Channel { channel: k, from: a, to: b, .. } = self.ifaces[i] else {
            unreachable!("channel_send on a channel interface")
        };
        let wire_len = p.wire_len();
        // A packet the full interface queue refuses is never serialized (the MAC reports the drop).
        if self.channels[k].dcf.queued(a) < self.net.channels[k].queue as usize {
            let node = self.channels[k].nodes[a];
            self.number(node, &mut p);
        }
        p.via = i as u32;
        let slot = self.packets.insert(p);
        self.channels[k].dcf.enqueue(self.now, a, b, slot, wire_len);
        self.after_mac(k);
    }

    /// Schedule what the channels' MACs asked for before the run began (the first beacons).
    pub(super) fn start_channels(&mut self) {
        for k in 0..self.channels.len() {
            self.after_mac(k);
        }
    }

    pub(super) fn on_mac_timer(&mut self, k: usize, timer: Timer) {
        self.channels[k].dcf.on_timer(self.now, timer);
        self.after_mac(k);
    }

    /// Act on everything channel `k`'s MAC reported.
    fn after_mac(&mut self, k: usize) {
        let mut out = std::mem::take(&mut self.channels[k].out);
        out.extend(self.channels[k].dcf.drain());
        for o in out.drain(..) {
            match o {
                Out::Schedule(at, timer) => self.queue.push(at, Event::Mac { channel: k as u32, timer }),
                Out::Sent { from, to, payload, start } => {
                    let p = self.packets.get(payload);
                    let c = self.iface_counters(k, from, to);
                    c.packets_sent += 1;
                    c.bytes_sent += p.wire_len() as u64;
                    self.capture_frame(p.via as usize, &p, start);
                    self.count_out(&p, self.now);
                }
                Out::Delivered { to, payload, .. } => {
                    // The sender keeps its copy until the MAC ACK (it may send it again); the
                    // arrival counts as the interface's delivery.
                    let p = self.packets.get(payload);
                    let slot = self.packets.insert(p);
                    let node = self.channels[k].nodes[to] as u32;
                    self.queue.push(self.now, Event::Arrive { node, packet: slot });
                }
                Out::Acked { payload, .. } => {
                    self.packets.take(payload);
                }
                Out::Dropped { from, to, payload, reason } => {
                    self.packets.take(payload);
                    let c = self.iface_counters(k, from, to);
                    match reason {
                        DropReason::QueueFull => c.dropped_queue += 1,
                        DropReason::RetryLimit => c.dropped_channel += 1,
                    }
                }
                Out::Air { station, role, kind, start, end, retry, bytes } => self.log_air(k, station, role, kind, start, end, retry, bytes),
                Out::Power { station, awake, at } => {
                    let radio = &mut self.nodes[self.channels[k].nodes[station]].radio;
                    if awake {
                        radio.wake(at);
                    } else {
                        radio.doze(at);
                    }
                }
            }
        }
        self.channels[k].out = out;
    }

    fn iface_counters(&mut self, k: usize, from: usize, to: usize) -> &mut crate::net::link::LinkCounters {
        let i = self.channels[k].iface[from][to].expect("frames only go between stations that hear each other") as usize;
        match &mut self.ifaces[i] {
            Iface::Channel { counters, .. } => counters,
            Iface::Link(_) => unreachable!("a channel's interface"),
        }
    }

    /// A station's radio was busy with a frame: log it for the energy meter, with its cause.
    #[allow(clippy::too_many_arguments)]
    fn log_air(&mut self, k: usize, station: usize, role: AirRole, kind: FrameKind, start: SimTime, end: SimTime, retry: bool, bytes: u32) {
        let ch = &self.channels[k];
        let radio = &mut self.nodes[ch.nodes[station]].radio;
        let control = kind != FrameKind::Data;
        match role {
            AirRole::Transmit => {
                if control {
                    radio.transmit(start, end);
                    radio.mark(start, end, Mark::ControlTx);
                } else {
                    radio.transmit_frame(start, end, bytes);
                    if retry {
                        radio.mark(start, end, Mark::RetryTx);
                    }
                }
            }
            AirRole::Receive => {
                if control {
                    radio.receive(start, end);
                    radio.mark(start, end, Mark::ControlRx);
                } else {
                    radio.receive_frame(start, end, bytes);
                    if retry {
                        radio.mark(start, end, Mark::RetryRx);
                    }
                }
            }
            AirRole::Overhear => {
                if ch.overhear_costs_rx {
                    radio.receive(start, end);
                    radio.mark(start, end, Mark::Overhear);
                }
            }
        }
    }

    /// Each channel's counters, medium occupancy and used interfaces, for the record.
    pub(super) fn channel_results(&self) -> BTreeMap<String, ChannelResult> {
        let mut out = BTreeMap::new();
        let end = self.now;
        for (k, (cfg, ch)) in self.net.channels.iter().zip(&self.channels).enumerate() {
            let mut totals = StationCounters::default();
            let mut stations = BTreeMap::new();
            for (s, name) in cfg.nodes.iter().enumerate() {
                let c = ch.dcf.counters(s);
                totals.add(&c);
                stations.insert(name.clone(), c);
            }
            let mut interfaces = BTreeMap::new();
            for (i, e) in self.routes.ifaces.iter().enumerate() {
                if let (Via::Channel { channel, from, to }, Iface::Channel { counters, .. }) = (e.via, &self.ifaces[i]) {
                    let queued = ch.dcf.unsent(from, to) as u64;
                    if channel == k && (counters.packets_sent > 0 || queued > 0) {
                        let key = format!("{}->{}", self.net.nodes[e.from.index()].name, self.net.nodes[e.to.index()].name);
                        interfaces.insert(key, crate::net::link::LinkCounters { queued, ..*counters });
                    }
                }
            }
            let busy = if end.0 > 0 { ch.dcf.busy_ns(end) as f64 / end.0 as f64 } else { 0.0 };
            out.insert(
                cfg.name.clone(),
                ChannelResult {
                    standard: cfg.standard.name(),
                    data_rate_bps: cfg.data_rate,
                    totals,
                    busy_fraction: busy,
                    idle_fraction: 1.0 - busy,
                    stations,
                    interfaces,
                },
            );
        }
        out
    }
}
