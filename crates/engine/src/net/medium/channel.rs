//! A shared 802.11 channel as a medium (docs/models/wifi.md): port `a * n + b` carries packets
//! from station `a` to station `b` of its `n` stations, for every pair where `b` hears `a`.
//!
//! The DCF (`net::wifi::dcf`) is the state machine; this module maps its stations to nodes and
//! its reports to [`Out`]s: a packet is numbered when the IP layer hands it to the MAC (as a
//! capture on the node's interface shows it), counted as sent (and captured, stamped with the
//! start of its first transmission) when that first transmission ends, delivered as a copy when
//! its data frame ends cleanly at the addressee, and freed at the MAC ACK or the retry limit;
//! every frame's airtime goes to the radios that sent, received or overheard it.

use super::{Handed, Out, Radio, Timer};
use crate::config::channel::{ChannelConfig, Overhearing};
use crate::config::network::{NetworkConfig, NodeId};
use crate::config::serde_units::format_rate;
use crate::energy::meter::Mark;
use crate::error::EngineError;
use crate::net::impair::AnyImpairment;
use crate::net::link::LinkCounters;
use crate::net::wifi::ht::HtPhy;
use crate::net::wifi::dcf::{self, AirRole, Dcf, DcfConfig, DropReason, FrameKind, Infrastructure, StationCounters};
use crate::units::SimTime;
use serde::Serialize;
use std::collections::BTreeMap;

/// What a shared 802.11 channel did: the sums over its stations, how busy the medium was, and
/// per station and per interface (pairs of stations that carried packets) counters.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ChannelResult {
    pub standard: &'static str,
    pub data_rate_bps: u64,
    #[serde(flatten)]
    pub totals: StationCounters,
    /// Fractions of the run during which at least one station was transmitting, and none was.
    pub busy_fraction: f64,
    pub idle_fraction: f64,
    pub stations: BTreeMap<String, StationCounters>,
    /// IP packets handed to the MAC per "A->B", delivered, lost at the retry limit
    /// (`dropped_channel`) or at the interface queue (`dropped_queue`).
    pub interfaces: BTreeMap<String, LinkCounters>,
}

/// Every ordered pair of stations where the second hears the first.
pub fn ports(c: &ChannelConfig, each: &mut dyn FnMut(u32, NodeId, NodeId)) {
    let n = c.members.len();
    for (a, &from) in c.members.iter().enumerate() {
        for (b, &to) in c.members.iter().enumerate() {
            if c.reaches(a, b) {
                each((a * n + b) as u32, from, to);
            }
        }
    }
}

/// A channel sets its stations' PHY; a node's radio must be able to send at its data rate.
pub fn check_radio_rates(c: &ChannelConfig, net: &NetworkConfig, k: usize) -> Result<(), EngineError> {
    for (s, m) in c.members.iter().enumerate() {
        let node = &net.nodes[m.index()];
        let Some(phy) = node.profile.profile.radio.phy else { continue };
        if c.data_rate > phy.rate {
            let name = node.profile.name.as_deref().map_or(String::new(), |n| format!(" ({n})"));
            // On an 802.11n or 802.11ac channel the MCS sets the rate.
            let key = if c.ht.is_some() { "mcs" } else { "data_rate" };
            return Err(EngineError::config(
                format!("channels.{k}.{key}"),
                format!(
                    "{} is faster than the radio of node {:?}{name} (channels.{k}.nodes.{s}): its radio.phy.rate is {}; \
                     choose a rate it can send, or give the node a profile without radio.phy (its radio then takes the \
                     channel's airtime as the MAC reports it, e.g. \"ideal-nic-0.3\")",
                    format_rate(c.data_rate),
                    node.name,
                    format_rate(phy.rate),
                ),
            ));
        }
    }
    Ok(())
}

/// A channel in a run: its MAC, its stations' nodes and each port's counters.
pub struct ChannelMedium {
    /// Payloads are (packet slab index, IP bytes).
    dcf: Dcf<(u32, u32)>,
    /// Node index of each station.
    nodes: Vec<u32>,
    /// Counters of port `a * n + b`.
    counters: Vec<LinkCounters>,
    queue: usize,
    overhear_costs_rx: bool,
}

impl ChannelMedium {
    /// `k` is its index among the channels (it names its random streams); `power_save`: the
    /// stations behind an access point doze (radio policy `psm`).
    pub fn new(cfg: &ChannelConfig, k: usize, seed: u64, power_save: bool) -> Self {
        let n = cfg.members.len();
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
                psm_timeout: x.psm_timeout,
            }),
            ht: cfg.ht.as_ref().and_then(|h| HtPhy::new(h.mode).ok()),
            ampdu_max: cfg.ht.as_ref().map_or(0, |h| if h.ampdu { h.ampdu_max_mpdus } else { 0 }),
        };
        Self {
            dcf: Dcf::new(dcf_cfg, impairments, seed, &name),
            nodes: cfg.members.iter().map(|m| m.0).collect(),
            counters: vec![LinkCounters::default(); n * n],
            queue: cfg.queue as usize,
            overhear_costs_rx: cfg.overhearing == Overhearing::Receive,
        }
    }

    fn stations(&self, port: u32) -> (usize, usize) {
        let n = self.nodes.len();
        (port as usize / n, port as usize % n)
    }

    pub fn send(&mut self, now: SimTime, port: u32, p: Handed, out: &mut Vec<Out>) {
        let (a, b) = self.stations(port);
        // A packet the full interface queue refuses is never serialized (the MAC reports the drop).
        if self.dcf.queued(a) < self.queue {
            out.push(Out::Number { packet: p.packet });
        }
        self.dcf.enqueue(now, a, b, (p.packet, p.wire_len), p.wire_len);
        self.after_mac(now, out);
    }

    /// What the MAC asks for before the run begins (the first beacons).
    pub fn start(&mut self, out: &mut Vec<Out>) {
        self.after_mac(SimTime::ZERO, out);
    }

    pub fn on_timer(&mut self, now: SimTime, t: dcf::Timer, out: &mut Vec<Out>) {
        self.dcf.on_timer(now, t);
        self.after_mac(now, out);
    }

    pub fn arrived(&mut self, port: u32) {
        self.counters[port as usize].packets_delivered += 1;
    }

    /// Port `port`'s counters, with what its station still holds for that neighbour.
    pub fn counters(&self, port: u32) -> LinkCounters {
        let (a, b) = self.stations(port);
        LinkCounters { queued: self.dcf.unsent(a, b) as u64, ..self.counters[port as usize] }
    }

    /// Turn everything the MAC reported into the world's [`Out`]s.
    fn after_mac(&mut self, now: SimTime, out: &mut Vec<Out>) {
        let n = self.nodes.len();
        let (nodes, counters, overhear_costs_rx) = (&self.nodes, &mut self.counters, self.overhear_costs_rx);
        for r in self.dcf.drain() {
            match r {
                dcf::Out::Schedule(at, timer) => out.push(Out::Schedule { at, timer: Timer::Mac(timer) }),
                dcf::Out::Sent { from, to, payload: (packet, bytes), start } => {
                    let c = &mut counters[from * n + to];
                    c.packets_sent += 1;
                    c.bytes_sent += bytes as u64;
                    out.push(Out::Sent { packet, start, end: now });
                }
                // The sender keeps its copy until the MAC ACK (it may send it again).
                dcf::Out::Delivered { to, payload: (packet, _), .. } => out.push(Out::Deliver { packet, node: nodes[to], at: now }),
                dcf::Out::Acked { payload: (packet, _), .. } => out.push(Out::Free { packet }),
                dcf::Out::Dropped { from, to, payload: (packet, _), reason } => {
                    let c = &mut counters[from * n + to];
                    match reason {
                        DropReason::QueueFull => c.dropped_queue += 1,
                        DropReason::RetryLimit => c.dropped_channel += 1,
                    }
                    out.push(Out::Free { packet });
                }
                dcf::Out::Air { station, role, kind, start, end, retry, bytes } => {
                    if let Some(what) = air(overhear_costs_rx, role, kind, start, end, retry, bytes) {
                        out.push(Out::Radio { node: nodes[station], what });
                    }
                }
                dcf::Out::RetryShare { station, role, start, end } => {
                    let (transmit, mark) = match role {
                        AirRole::Transmit => (true, Mark::RetryTx),
                        _ => (false, Mark::RetryRx),
                    };
                    out.push(Out::Radio { node: nodes[station], what: Radio::Busy { transmit, start, end, bytes: None, mark: Some(mark) } });
                }
                dcf::Out::Power { station, awake, at } => {
                    let what = if awake { Radio::Wake(at) } else { Radio::Doze(at) };
                    out.push(Out::Radio { node: nodes[station], what });
                }
            }
        }
    }

    /// The channel's record: counters, medium occupancy up to `end`, and each port that carried
    /// or holds a packet, named by `iface_name` (`None` for a pair that is no interface).
    pub fn result(&self, cfg: &ChannelConfig, end: SimTime, iface_name: &dyn Fn(u32) -> Option<String>) -> ChannelResult {
        let mut totals = StationCounters::default();
        let mut stations = BTreeMap::new();
        for (s, name) in cfg.nodes.iter().enumerate() {
            let c = self.dcf.counters(s);
            totals.add(&c);
            stations.insert(name.clone(), c);
        }
        let mut interfaces = BTreeMap::new();
        for port in 0..self.counters.len() as u32 {
            let c = self.counters(port);
            if c.packets_sent > 0 || c.queued > 0 {
                if let Some(key) = iface_name(port) {
                    interfaces.insert(key, c);
                }
            }
        }
        let busy = if end.0 > 0 { self.dcf.busy_ns(end) as f64 / end.0 as f64 } else { 0.0 };
        ChannelResult {
            standard: cfg.standard.name(),
            data_rate_bps: cfg.data_rate,
            totals,
            busy_fraction: busy,
            idle_fraction: 1.0 - busy,
            stations,
            interfaces,
        }
    }
}

/// A station's radio was busy with a frame: what its meter logs, with the cause.
fn air(overhear_costs_rx: bool, role: AirRole, kind: FrameKind, start: SimTime, end: SimTime, retry: bool, bytes: u32) -> Option<Radio> {
    let control = !kind.is_data();
    let (transmit, mark) = match role {
        AirRole::Transmit => (true, if control { Some(Mark::ControlTx) } else { retry.then_some(Mark::RetryTx) }),
        AirRole::Receive => (false, if control { Some(Mark::ControlRx) } else { retry.then_some(Mark::RetryRx) }),
        AirRole::Overhear if overhear_costs_rx => return Some(Radio::Busy { transmit: false, start, end, bytes: None, mark: Some(Mark::Overhear) }),
        AirRole::Overhear => return None,
    };
    Some(Radio::Busy { transmit, start, end, bytes: (!control).then_some(bytes), mark })
}
