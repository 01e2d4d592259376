//! A point-to-point link as a medium: port 0 is its forward direction (first node to second),
//! port 1 its reverse one when it has one. Each direction is a `net::link::Link` (queue,
//! serialization, impairments, propagation), which needs no timers: a frame's fate is known when
//! it is handed in, so it is reported at once ([`Frame`]).
//!
//! Radio time follows the sending radio's airtime of the frame, not the link's serialization
//! (docs/models/energy.md, "Airtime"): the sending radio transmits from the start of
//! serialization; the far radio receives during the same airtime, ending when the frame arrives.
//! A frame dropped by the queue costs no radio time; one lost on the link costs transmit time only.
//!
//! An end whose radio has an RRC machine (a cellular radio) gates the link both ways: a frame
//! starts only when that radio can send or receive it (`super::rrc`).

use super::rrc::RrcGate;
use super::{Frame, Handed, Out};
use crate::config::network::{NetLink, NetworkConfig, NodeId};
use crate::config::serde_units::format_rate;
use crate::energy::airtime::RadioAirtime;
use crate::error::EngineError;
use crate::net::link::{Fate, Link, LinkCounters};
use crate::units::SimTime;

/// Forward then, if the link has one, reverse.
pub fn ports(l: &NetLink, each: &mut dyn FnMut(u32, NodeId, NodeId)) {
    each(0, l.ends[0], l.ends[1]);
    if l.reverse.is_some() {
        each(1, l.ends[1], l.ends[0]);
    }
}

/// The direction's rate: a trace-driven one's mean rate.
pub fn rate_bps(l: &NetLink, port: u32) -> u64 {
    match (port, &l.reverse) {
        (1, Some(r)) => r.capacity.rate_bps(),
        _ => l.forward.capacity.rate_bps(),
    }
}

/// Each direction is fed by its sending node's radio (a trace-driven one, on average).
pub fn check_radio_rates(l: &NetLink, net: &NetworkConfig, k: usize) -> Result<(), EngineError> {
    let dirs = [(Some(&l.forward), 0usize, "forward"), (l.reverse.as_ref(), 1, "reverse")];
    for (cfg, end, key) in dirs {
        let Some(cfg) = cfg else { continue };
        let node = &net.nodes[l.ends[end].index()];
        let Some(phy) = node.profile.profile.radio.phy else { continue };
        let rate = cfg.capacity.rate_bps();
        if rate > phy.rate {
            let name = node.profile.name.as_deref().map_or(String::new(), |n| format!(" ({n})"));
            let what = if cfg.capacity.trace().is_some() { "the trace's mean rate, " } else { "" };
            return Err(EngineError::config(
                format!("links.{k}.{key}.{}", cfg.capacity.key()),
                format!(
                    "{what}{} is faster than the radio of node {:?}{name}: its radio.phy.rate is {}, so this rate must be at most {} \
                     (give the node a profile whose radio is faster, or without a PHY, for a wired hop)",
                    format_rate(rate),
                    node.name,
                    format_rate(phy.rate),
                    format_rate(phy.rate),
                ),
            ));
        }
    }
    Ok(())
}

/// One direction in a run, with the sending radio's airtime per frame.
#[derive(Debug)]
struct Direction {
    link: Link,
    air: RadioAirtime,
    /// The link's ends (0 or 1) it leaves and reaches.
    ends: (usize, usize),
}

/// A link in a run: its directions, indexed by port, and the RRC gate of each end that has one.
#[derive(Debug)]
pub struct LinkMedium {
    dirs: Vec<Direction>,
    gates: [Option<RrcGate>; 2],
    /// Whether either end has a gate (most links: no).
    gated: bool,
}

impl LinkMedium {
    /// `seed` and the link's keys name each direction's random streams; `net` gives the sending
    /// nodes' radios.
    pub fn new(l: &NetLink, net: &NetworkConfig, seed: u64) -> Self {
        let mut dirs = Vec::with_capacity(2);
        let mut add = |cfg, from: NodeId, to: NodeId, key: &str, ends| {
            let air = RadioAirtime::new(&net.nodes[from.index()].profile.profile);
            dirs.push(Direction { link: Link::new(cfg, from.index(), to.index(), l.frame_overhead, seed, key), air, ends });
        };
        add(&l.forward, l.ends[0], l.ends[1], &l.keys[0], (0, 1));
        if let Some(r) = &l.reverse {
            add(r, l.ends[1], l.ends[0], &l.keys[1], (1, 0));
        }
        let gate = |end: NodeId| {
            let radio = &net.nodes[end.index()].profile.profile.radio;
            radio.rrc.as_ref().map(|rrc| RrcGate::new(rrc.timing(radio.wake_time)))
        };
        let gates = [gate(l.ends[0]), gate(l.ends[1])];
        let gated = gates.iter().any(Option::is_some);
        Self { dirs, gates, gated }
    }

    /// When the radios at the ends of direction `port` are ready for a frame handed in at `now`:
    /// at once, later if the sending radio must be promoted first or the receiving one is idle
    /// or in DRX (it hears the frame from its start plus the propagation delay). A radio is asked
    /// when the data arrives, not when the link is free: promotion and paging start at once,
    /// and the radio then waits connected for the link. Each gate's answer is the time its radio
    /// is ready for a request made at the time asked (asking again then would start another
    /// wait), so each is asked once.
    fn radios_ready(&self, port: usize, now: SimTime) -> SimTime {
        let d = &self.dirs[port];
        let mut t = now;
        if let Some(g) = &self.gates[d.ends.0] {
            t = g.send_at(t);
        }
        if let Some(g) = &self.gates[d.ends.1] {
            let delay = d.link.delay();
            t = SimTime(g.receive_at(t + delay).0 - delay.0);
        }
        t
    }

    /// Tell the gates (and the meters, through `out`) what the frame did to their radios: each
    /// was held connected from `ready` until the frame started, then busy with it.
    #[allow(clippy::too_many_arguments)]
    fn commit(&mut self, port: usize, ready: SimTime, start: SimTime, air: crate::units::SimDuration, arrives: Option<(u32, SimTime)>, out: &mut Vec<Out>) {
        let d = &self.dirs[port];
        let (ends, delay, from, to) = (d.ends, d.link.delay(), d.link.from as u32, d.link.to as u32);
        let hold = |node: u32, s: SimTime, e: SimTime, out: &mut Vec<Out>| {
            if s < e {
                out.push(Out::Radio { node, what: super::Radio::Hold { start: s, end: e } });
            }
        };
        if let Some(g) = &mut self.gates[ends.0] {
            g.commit(ready, start + air);
            hold(from, ready, start, out);
        }
        if let Some(g) = &mut self.gates[ends.1] {
            let (rx_ready, rx_start) = (ready + delay, start + delay);
            if let Some((_, at)) = arrives {
                g.commit(rx_ready, at);
                hold(to, rx_ready, SimTime(at.0.saturating_sub(air.0)).min(rx_start), out);
            } else {
                // Lost on the way: the radio waited for it all the same, and heard nothing.
                g.commit(rx_ready, rx_start);
                hold(to, rx_ready, rx_start, out);
            }
        }
    }

    #[inline]
    pub fn send(&mut self, now: SimTime, port: u32, p: Handed, out: &mut Vec<Out>) -> Option<Frame> {
        let gated = self.gated;
        let ready = if gated { self.radios_ready(port as usize, now) } else { now };
        let d = &mut self.dirs[port as usize];
        let (from, to) = (d.link.from as u32, d.link.to as u32);
        let (start, end, arrives, ce, notice) = match d.link.send_from(now, ready, p.wire_len, p.ect) {
            Fate::QueueFull => {
                out.push(Out::Free { packet: p.packet });
                return None;
            }
            Fate::Lost { start, end, notice } => (start, end, None, false, notice),
            Fate::Arrives { start, end, at, ce, notice } => (start, end, Some((to, at)), ce, notice),
        };
        let air = d.air.of_frame(p.wire_len, start, end);
        if gated {
            self.commit(port as usize, ready, start, air, arrives, out);
        }
        Some(Frame { packet: p.packet, bytes: p.wire_len, start, end, ce, from, air, arrives, notice })
    }

    #[inline]
    pub fn arrived(&mut self, port: u32) {
        self.dirs[port as usize].link.arrived();
    }

    pub fn counters(&mut self, port: u32, end: SimTime) -> LinkCounters {
        self.dirs[port as usize].link.counters_at(end)
    }
}
