//! Media: what carries packets from a node to its neighbours. A point-to-point link, an 802.11
//! channel and a Dummynet-like pipe are each one module here, behind one interface, dispatched
//! statically (an enum of implementations, one `match` per method, as `tcp::cc` dispatches the
//! congestion controllers).
//!
//! Two faces of a medium:
//! * [`Spec`], the medium as the scenario describes it: its interfaces (ports, each from a node to
//!   a neighbour), each port's rate and the medium's MTU. Routing (`net::routing`), the path MTU,
//!   the run's estimate (`budget`), the radio rate checks (`energy::airtime`) and the fair shares
//!   of the record ask these questions, never a medium's configuration.
//! * [`Medium`], the medium in a run, sans-I/O as the endpoints are: a packet (a slab index) is
//!   handed in with [`Medium::send`], its timers come back through [`Medium::on_timer`], and what
//!   it did goes into an [`Out`] buffer the world acts on: packets that left an interface and
//!   those it delivers, the airtime each node's radio spent, timers to set, packets to free. A
//!   medium without timers (a link) knows a packet's fate when it is handed in, and returns it
//!   as one [`Frame`] (the world's per-packet path: no buffer).
//!
//! Adding a medium: one module here (its `Spec` answers, its runtime state and its `Out`s), one
//! line in each of the two enums and their matches, and its configuration read in `config`
//! (docs/architecture.md, "Adding a medium").

pub mod channel;
pub mod link;
pub mod pipe;
pub mod rrc;

use crate::config::network::{NetworkConfig, NodeId};
use crate::energy::meter::{Mark, RadioLog};
use crate::net::impair::RouteNotice;
use crate::net::link::LinkCounters;
use crate::units::{SimDuration, SimTime};

/// The medium of every interface, as the scenario describes it: links first, then channels
/// (routing breaks ties by interface order). Medium `m` of [`crate::net::routing::Via`] is the
/// `m`-th of this list.
#[derive(Debug, Clone, Copy)]
pub enum Spec<'a> {
    /// `links.{0}`.
    Link(usize, &'a crate::config::network::NetLink),
    /// `channels.{0}`.
    Channel(usize, &'a crate::config::channel::ChannelConfig),
}

/// Every medium that joins nodes in `net`, in medium order.
pub fn specs(net: &NetworkConfig) -> impl Iterator<Item = Spec<'_>> {
    let links = net.links.iter().enumerate().map(|(k, l)| Spec::Link(k, l));
    links.chain(net.channels.iter().enumerate().map(|(k, c)| Spec::Channel(k, c)))
}

/// Medium `m` of `net`.
pub fn spec(net: &NetworkConfig, m: u32) -> Spec<'_> {
    let m = m as usize;
    match net.links.get(m) {
        Some(l) => Spec::Link(m, l),
        None => Spec::Channel(m - net.links.len(), &net.channels[m - net.links.len()]),
    }
}

impl Spec<'_> {
    /// Each port of the medium with the node its packets leave and the neighbour they reach,
    /// in interface order.
    pub fn ports(&self, each: &mut dyn FnMut(u32, NodeId, NodeId)) {
        match self {
            Spec::Link(_, l) => link::ports(l, each),
            Spec::Channel(_, c) => channel::ports(c, each),
        }
    }

    /// The rate (bit/s) at which port `port` carries packets.
    pub fn rate_bps(&self, port: u32) -> u64 {
        match self {
            Spec::Link(_, l) => link::rate_bps(l, port),
            Spec::Channel(_, c) => c.data_rate,
        }
    }

    /// The largest IP packet the medium carries (bytes).
    pub fn mtu(&self) -> u32 {
        match self {
            Spec::Link(_, l) => l.mtu,
            Spec::Channel(_, c) => c.mtu,
        }
    }

    /// Whether all its ports share one capacity (a shared medium), and then how many stations
    /// contend for it; `None` when each port has its own.
    pub fn shared_by(&self) -> Option<usize> {
        match self {
            Spec::Link(..) => None,
            Spec::Channel(_, c) => Some(c.members.len()),
        }
    }

    /// Whether each sending node's radio can feed its port: a medium may be slower than the
    /// radios that feed it, never faster (docs/models/energy.md, "Airtime").
    pub fn check_radio_rates(&self, net: &NetworkConfig) -> Result<(), crate::error::EngineError> {
        match self {
            Spec::Link(k, l) => link::check_radio_rates(l, net, *k),
            Spec::Channel(k, c) => channel::check_radio_rates(c, net, *k),
        }
    }
}

/// A packet handed to a medium: its slab index, IP length and ECN capability.
#[derive(Debug, Clone, Copy)]
pub struct Handed {
    pub packet: u32,
    pub wire_len: u32,
    pub ect: bool,
}

/// A timer a medium asked for, handed back to [`Medium::on_timer`] at its time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Timer {
    /// A timer of a channel's MAC.
    Mac(crate::net::wifi::dcf::Timer),
    /// A pipe lets packet `packet` go on to the interface it sits in front of.
    Release { packet: u32 },
}

/// What a radio did for a medium, for the node's energy meter (`energy::meter::RadioLog`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Radio {
    /// On the air during `[start, end)`: transmitting or receiving, a data frame of `bytes` IP
    /// bytes (`None` for a control frame), the cause `mark` the breakdown reports apart.
    Busy { transmit: bool, start: SimTime, end: SimTime, bytes: Option<u32>, mark: Option<Mark> },
    Wake(SimTime),
    Doze(SimTime),
    /// A cellular radio held connected during `[start, end)` while its data waits for the link.
    Hold { start: SimTime, end: SimTime },
}

impl Radio {
    /// Log it in a node's radio log.
    #[inline]
    pub fn log(self, radio: &mut RadioLog) {
        match self {
            Radio::Busy { transmit: true, start, end, bytes, mark } => {
                match bytes {
                    Some(b) => radio.transmit_frame(start, end, b),
                    None => radio.transmit(start, end),
                }
                if let Some(m) = mark {
                    radio.mark(start, end, m);
                }
            }
            Radio::Busy { transmit: false, start, end, bytes, mark } => {
                match bytes {
                    Some(b) => radio.receive_frame(start, end, b),
                    None => radio.receive(start, end),
                }
                if let Some(m) = mark {
                    radio.mark(start, end, m);
                }
            }
            Radio::Wake(at) => radio.wake(at),
            Radio::Doze(at) => radio.doze(at),
            Radio::Hold { start, end } => radio.hold(start, end),
        }
    }
}

/// What a medium reports, in the order the world must act on it.
#[derive(Debug, Clone, Copy)]
pub enum Out {
    /// Call [`Medium::on_timer`] with `timer` at `at`.
    Schedule { at: SimTime, timer: Timer },
    /// The interface took the packet to serialize it: its source numbers it now.
    Number { packet: u32 },
    /// The packet left the interface: its first transmission began at `start` (the capture's
    /// time) and ended at `end` (when its bytes count as sent).
    Sent { packet: u32, start: SimTime, end: SimTime },
    /// A copy of the packet arrives at node `node` at `at`; the medium keeps its own until it
    /// frees it.
    Deliver { packet: u32, node: u32, at: SimTime },
    /// The medium is done with the packet (delivered, acknowledged or dropped).
    Free { packet: u32 },
    /// A node's radio spent airtime, or woke or dozed.
    Radio { node: u32, what: Radio },
    /// An outage with notification lost or held the packet: tell its flow's sending end (ELFN).
    Notice { packet: u32, notice: RouteNotice },
    /// Hand the packet on to interface `iface` (a pipe's output).
    PassOn { packet: u32, iface: u32 },
}

/// A frame a medium without timers (a link) serialized during `[start, end)`, reported as it
/// is handed in ([`Medium::send`]): its source numbers it, it is CE-marked if `ce`, and it
/// counts as sent at `end`. Node `from`'s radio was on the air for `air` from `start`; it
/// arrives at `arrives` (node, time) unless lost, and the receiving radio was on the air for the
/// same `air` ending then. The slab entry moves on with it (or is freed when it is lost). An
/// outage with notification that lost or held it gives `notice` (ELFN), told before the arrival
/// is scheduled.
#[derive(Debug, Clone, Copy)]
pub struct Frame {
    pub packet: u32,
    /// Its IP bytes.
    pub bytes: u32,
    pub start: SimTime,
    pub end: SimTime,
    pub ce: bool,
    pub from: u32,
    pub air: SimDuration,
    pub arrives: Option<(u32, SimTime)>,
    pub notice: Option<RouteNotice>,
}

/// A medium in a run.
// A run has few media, built once: a channel's state stays inline (no pointer to follow per frame).
#[allow(clippy::large_enum_variant)]
pub enum Medium {
    Link(link::LinkMedium),
    Channel(channel::ChannelMedium),
    Pipe(pipe::PipeMedium),
}

impl Medium {
    /// Hand a packet to port `port` at `now`. A medium that knows at once what becomes of it
    /// (a link) returns its [`Frame`]; the rest of what it does goes into `out`.
    #[inline]
    pub fn send(&mut self, now: SimTime, port: u32, p: Handed, out: &mut Vec<Out>) -> Option<Frame> {
        match self {
            Medium::Link(m) => m.send(now, port, p, out),
            Medium::Channel(m) => {
                m.send(now, port, p, out);
                None
            }
            Medium::Pipe(m) => {
                m.send(now, p, out);
                None
            }
        }
    }

    /// A timer the medium asked for is due.
    #[inline]
    pub fn on_timer(&mut self, now: SimTime, timer: Timer, out: &mut Vec<Out>) {
        match (self, timer) {
            (Medium::Channel(m), Timer::Mac(t)) => m.on_timer(now, t, out),
            (Medium::Pipe(m), Timer::Release { packet }) => m.release(packet, out),
            // A medium only gets back the timers it asked for.
            _ => debug_assert!(false, "a timer of another medium"),
        }
    }

    /// What the medium asks for before the run begins (a channel's first beacons).
    pub fn start(&mut self, out: &mut Vec<Out>) {
        if let Medium::Channel(m) = self {
            m.start(out);
        }
    }

    /// A packet this medium carried on port `port` arrived at the far end.
    #[inline]
    pub fn arrived(&mut self, port: u32) {
        match self {
            Medium::Link(m) => m.arrived(port),
            Medium::Channel(m) => m.arrived(port),
            Medium::Pipe(_) => {}
        }
    }

    /// Port `port`'s counters at the end of the run, `end`.
    pub fn counters(&mut self, port: u32, end: SimTime) -> LinkCounters {
        match self {
            Medium::Link(m) => m.counters(port, end),
            Medium::Channel(m) => m.counters(port),
            Medium::Pipe(_) => LinkCounters::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Scenario;

    fn network(text: &str) -> NetworkConfig {
        Scenario::from_toml(text).unwrap_or_else(|e| panic!("{e}")).into_network().expect("network form")
    }

    const TWO: &str = r#"
[nodes]
a = {}
b = {}
[[links]]
between = ["a", "b"]
rate = "1Mbps"
delay = "10ms"
queue = 1
forward = { rate = "2Mbps" }
[[pipes]]
from = "a"
to = "b"
delay = "5ms"
[[flows]]
name = "f"
from = "a"
to = "b"
traffic = { kind = "bulk", bytes = "1kB" }
"#;

    #[test]
    fn a_links_ports_are_its_directions_each_with_its_own_rate() {
        let net = network(TWO);
        let mut ports = Vec::new();
        spec(&net, 0).ports(&mut |p, from, to| ports.push((p, from.0, to.0, spec(&net, 0).rate_bps(p))));
        assert_eq!(ports, [(0, 0, 1, 2_000_000), (1, 1, 0, 1_000_000)]);
        assert_eq!(spec(&net, 0).shared_by(), None);
    }

    #[test]
    fn a_link_reports_a_frames_fate_when_handed_in_and_frees_what_its_full_queue_drops() {
        let net = network(TWO);
        let Spec::Link(_, l) = spec(&net, 0) else { panic!("a link") };
        let mut m = Medium::Link(link::LinkMedium::new(l, &net, 1));
        let mut out = Vec::new();
        // 1000 IP bytes at 2 Mbit/s: 4 ms of serialization, then 10 ms of propagation.
        let f = m.send(SimTime::ZERO, 0, Handed { packet: 7, wire_len: 1000, ect: false }, &mut out).expect("a frame");
        assert_eq!((f.packet, f.start, f.end, f.arrives), (7, SimTime::ZERO, SimTime(4_000_000), Some((1, SimTime(14_000_000)))));
        assert!(out.is_empty());
        // Queue of one: the second waits, the third is refused.
        assert!(m.send(SimTime::ZERO, 0, Handed { packet: 8, wire_len: 1000, ect: false }, &mut out).is_some());
        assert!(m.send(SimTime::ZERO, 0, Handed { packet: 9, wire_len: 1000, ect: false }, &mut out).is_none());
        assert!(matches!(out[..], [Out::Free { packet: 9 }]));
        assert_eq!(m.counters(0, SimTime(1)).dropped_queue, 1);
    }

    #[test]
    fn a_pipe_hands_a_packet_on_to_its_interface_after_its_delay() {
        let net = network(TWO);
        let mut m = Medium::Pipe(pipe::PipeMedium::new(&net.pipes[0], 0, 3, 1));
        let mut out = Vec::new();
        assert!(m.send(SimTime(1_000), 0, Handed { packet: 5, wire_len: 100, ect: false }, &mut out).is_none());
        let [Out::Schedule { at, timer }] = out[..] else { panic!("{out:?}") };
        assert_eq!(at, SimTime(5_001_000));
        out.clear();
        m.on_timer(at, timer, &mut out);
        assert!(matches!(out[..], [Out::PassOn { packet: 5, iface: 3 }]));
    }

    /// docs/models/cellular.md "What it does to packets": a frame for an idle phone waits for
    /// its paging occasion and promotion; one queued behind it finds the phone connected and
    /// holds it so until its turn.
    #[test]
    fn frames_for_an_idle_phone_wait_for_its_promotion_and_hold_it_connected_in_the_queue() {
        let text = TWO
            .replace("a = {}\nb = {}", "a = { profile = \"wired-host\" }\nb = { profile = \"huang2012-lte-phone\" }")
            .replace("queue = 1\n", "queue = 10\n");
        let net = network(&text);
        let Spec::Link(_, l) = spec(&net, 0) else { panic!("a link") };
        let mut m = Medium::Link(link::LinkMedium::new(l, &net, 1));
        let mut out = Vec::new();
        let ms = |x: f64| SimTime((x * 1e6).round() as u64);
        // The phone hears the first at 10 ms, inside the paging occasion [0, 43.2 ms): it is
        // promoted until 270.1 ms, so the frame leaves at 260.1 ms (10 ms before), 4 ms at 2 Mbit/s.
        let f = m.send(SimTime::ZERO, 0, Handed { packet: 1, wire_len: 1000, ect: false }, &mut out).expect("a frame");
        assert_eq!((f.start, f.arrives), (ms(260.1), Some((1, ms(274.1)))));
        assert!(out.is_empty(), "{out:?}");
        let g = m.send(SimTime::ZERO, 0, Handed { packet: 2, wire_len: 1000, ect: false }, &mut out).expect("a frame");
        assert_eq!(g.start, ms(264.1));
        assert!(matches!(out[..], [Out::Radio { node: 1, what: Radio::Hold { start, end } }] if start == ms(270.1) && end == ms(274.1)), "{out:?}");
    }
}
