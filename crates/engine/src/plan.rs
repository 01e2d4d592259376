//! The build step: what a run needs that a scenario does not say outright, computed once from the
//! validated scenario (`config`): the routes, each connection's path MTU and segment size, and
//! the checks that depend on them (a flow with no route, a buffer smaller than a segment, a
//! datagram larger than its path, a link faster than the radio feeding it).
//!
//! `config` is the contract (plain data, checked on its own); this module is where it meets the
//! models (routing, TCP's header sizes, the radios' PHY rates), so the dependency runs one way.
//! A scenario is accepted only if it can be built: [`Scenario::from_toml`], [`Scenario::from_json`]
//! and [`Scenario::from_value`] parse, validate and then run [`check`].

use crate::config::{FlowTraffic, NetworkConfig, NodeId, Scenario, TcpConfig, Topology, Transport};
use crate::error::EngineError;
use crate::net::routing::{IfaceEnds, RouteError, RouteTable};
use crate::tcp::segment;
use serde_json::Value;

/// What the world needs of a network-form scenario beyond its settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub routes: RouteTable,
    /// One entry per flow, in flow order.
    pub flows: Vec<FlowPlan>,
}

/// One flow's connections: the flow's own (`from` -> `to`, or `from` -> the split node), and the
/// split node's second connection to `to`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowPlan {
    pub first: Conn,
    pub second: Option<Conn>,
}

/// A connection's path: its smallest MTU and the segment size its TCP settings give on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Conn {
    pub path_mtu: u32,
    /// Sender maximum segment size ([`segment::smss`]); 0 when the path MTU cannot hold the
    /// headers (refused by [`check`]).
    pub smss: u32,
}

impl Conn {
    fn new(path_mtu: u32, tcp: &TcpConfig) -> Self {
        let smss = path_mtu.checked_sub(segment::data_header_bytes(tcp.timestamps)).unwrap_or(0);
        Conn { path_mtu, smss }
    }
}

impl Plan {
    /// The routes and connections of `s`, which must be in the network form
    /// ([`Scenario::as_network`]). Errors name the flow or route that cannot be built.
    pub fn of(s: &Scenario) -> Result<Plan, EngineError> {
        let Some(net) = s.network() else {
            return Err(EngineError::Invariant("a plan of a single-path scenario: build it from as_network()".into()));
        };
        let routes = RouteTable::build(net).map_err(|err| match err {
            RouteError::NoRoute { flow, from, to } => {
                EngineError::config(format!("flows.{flow}.to"), format!("no route from {from:?} to {to:?}: no chain of links or channels joins them in that direction"))
            }
            RouteError::Loop { route, at } => {
                EngineError::config(format!("routes.{route}"), format!("the route loops: from {at:?} it never reaches its last node"))
            }
        })?;
        let path_mtu = |a: NodeId, b: NodeId| -> Option<u32> {
            let hops = routes.path(a, b)?;
            hops.iter().map(|i| iface_mtu(net, &routes.ifaces[i.index()])).min()
        };
        let mut flows = Vec::with_capacity(net.flows.len());
        for (k, f) in net.flows.iter().enumerate() {
            let Some(split) = &f.split else {
                let mtu = path_mtu(f.src, f.dst).ok_or_else(|| unrouted(k))?;
                flows.push(FlowPlan { first: Conn::new(mtu, &f.tcp), second: None });
                continue;
            };
            // The split node is one the flow's packets cross from `from` to `to`; each
            // connection is then routed as any flow is, and needs a way back for its ACKs.
            let at = format!("flows.{k}.split.at");
            let route = routes.path(f.src, f.dst).ok_or_else(|| unrouted(k))?;
            if !route.iter().any(|i| routes.ifaces[i.index()].to == split.node) {
                let names: Vec<&str> = std::iter::once(f.src)
                    .chain(route.iter().map(|i| routes.ifaces[i.index()].to))
                    .map(|n| net.nodes[n.index()].name.as_str())
                    .collect();
                return Err(EngineError::config(at, format!("{:?} is not on the flow's route ({})", split.at, names.join(" -> "))));
            }
            let ends = [(f.src, split.node), (split.node, f.src), (split.node, f.dst), (f.dst, split.node)];
            for (a, b) in ends {
                if routes.path(a, b).is_none() {
                    let (a, b) = (&net.nodes[a.index()].name, &net.nodes[b.index()].name);
                    return Err(EngineError::config(at, format!("no route from {a:?} to {b:?} for one of the split connections")));
                }
            }
            let first = path_mtu(f.src, split.node).ok_or_else(|| unrouted(k))?;
            let second = path_mtu(split.node, f.dst).ok_or_else(|| unrouted(k))?;
            flows.push(FlowPlan { first: Conn::new(first, &f.tcp), second: Some(Conn::new(second, &split.tcp)) });
        }
        Ok(Plan { routes, flows })
    }
}

/// `RouteTable::build` refuses a flow without a route both ways, so this is never reached.
fn unrouted(flow: usize) -> EngineError {
    EngineError::Invariant(format!("flow {flow} has no route after the route table was built"))
}

/// The IP MTU of an interface: its medium's.
pub fn iface_mtu(net: &NetworkConfig, e: &IfaceEnds) -> u32 {
    crate::net::medium::spec(net, e.via.medium).mtu()
}

/// The checks a scenario of either form must pass to be built, with errors naming the key of
/// the form it was written in.
pub fn check(s: &Scenario) -> Result<(), EngineError> {
    let net = match &s.topology {
        Topology::Network(net) => net,
        Topology::SinglePath { path, .. } => {
            check_mtu_room(path.mtu, "path.mtu")?;
            check_buffers(&s.tcp, segment::smss(path.mtu, s.tcp.timestamps), "tcp")?;
            // A hop faster than the radio's PHY could not be fed by that radio (docs/models/energy.md#radio).
            return crate::energy::airtime::check_path_rates(path, &s.energy);
        }
    };
    let plan = Plan::of(s)?;
    for (i, (f, p)) in net.flows.iter().zip(&plan.flows).enumerate() {
        let at = format!("flows.{i}");
        let mtu = p.first.path_mtu;
        check_mtu_room(mtu, &format!("{at} (path MTU {mtu})"))?;
        if f.transport == Transport::Tcp {
            check_buffers(&f.tcp, p.first.smss, &format!("{at}.tcp"))?;
        }
        if let (Some(split), Some(second)) = (&f.split, p.second) {
            check_mtu_room(second.path_mtu, &format!("{at}.split (path MTU {})", second.path_mtu))?;
            check_buffers(&split.tcp, second.smss, &format!("{at}.split.tcp"))?;
        }
        let payload = match f.traffic {
            FlowTraffic::Cbr { packet, .. } => Some((packet, "packet")),
            FlowTraffic::OnOff { message, .. } => Some((message, "message")),
            _ => None,
        };
        if let (Transport::Udp, Some((bytes, key))) = (f.transport, payload) {
            if bytes + UDP_HEADERS > mtu {
                return Err(EngineError::config(
                    format!("{at}.traffic.{key}"),
                    format!("a {bytes}-byte datagram does not fit the path MTU {mtu} (IPv4 20 + UDP 8 + payload); at most {} bytes", mtu - UDP_HEADERS),
                ));
            }
        }
    }
    // The same rule in a network, asked of each medium: each port is fed by its sending node's radio.
    crate::net::medium::specs(net).try_for_each(|m| m.check_radio_rates(net))?;
    check_cellular_radios(net)
}

/// A radio with an RRC machine (a cellular radio) talks to its base station over one link: its
/// machine gates that link (docs/models/cellular.md). It cannot join an 802.11 channel, and a
/// second link would run a second machine for the same radio.
fn check_cellular_radios(net: &crate::config::network::NetworkConfig) -> Result<(), EngineError> {
    for (n, node) in net.nodes.iter().enumerate() {
        if node.profile.profile.radio.rrc.is_none() {
            continue;
        }
        let what = format!("node {:?}'s radio has an RRC machine (radio.rrc of its profile)", node.name);
        for (k, c) in net.channels.iter().enumerate() {
            if let Some(s) = c.members.iter().position(|m| m.index() == n) {
                return Err(EngineError::config(
                    format!("channels.{k}.nodes.{s}"),
                    format!("{what}, a cellular radio: it reaches its base station over a [[links]] entry, not an 802.11 channel"),
                ));
            }
        }
        let links: Vec<usize> = net.links.iter().enumerate().filter(|(_, l)| l.ends.iter().any(|e| e.index() == n)).map(|(k, _)| k).collect();
        if let [first, second, ..] = links[..] {
            return Err(EngineError::config(
                format!("links.{second}.between"),
                format!("{what}, which gates the one link to its base station (links.{first}); give the node a single link"),
            ));
        }
    }
    Ok(())
}

/// IPv4 and UDP headers of a datagram.
const UDP_HEADERS: u32 = segment::IPV4_HEADER + 8;

/// The MTU must leave room for the IPv4 and TCP headers, the largest options and one payload byte.
fn check_mtu_room(mtu: u32, at: &str) -> Result<(), EngineError> {
    if mtu < segment::MIN_TCP_MTU {
        return Err(EngineError::config(at, format!("must leave room for headers and options: at least {} bytes", segment::MIN_TCP_MTU)));
    }
    Ok(())
}

/// Socket buffers must hold at least one segment of `smss` bytes.
fn check_buffers(t: &TcpConfig, smss: u32, at: &str) -> Result<(), EngineError> {
    if t.receive_buffer < smss as u64 {
        return Err(EngineError::config(format!("{at}.receive_buffer"), format!("must hold at least one segment ({smss} bytes)")));
    }
    if t.send_buffer.is_some_and(|b| b < smss as u64) {
        return Err(EngineError::config(format!("{at}.send_buffer"), format!("must hold at least one segment ({smss} bytes)")));
    }
    Ok(())
}

// The scenario's entry points: the contract's reader (`config`), then the build checks.
impl Scenario {
    /// Build a scenario from a JSON document with `(dotted key, JSON value)` overrides applied in order.
    pub fn from_json(text: &str, overrides: &[(String, String)]) -> Result<Self, EngineError> {
        let s = Self::read_json(text, overrides)?;
        check(&s)?;
        Ok(s)
    }

    /// Build a scenario from TOML text (used by Rust tests and tools; Python sends JSON).
    pub fn from_toml(text: &str) -> Result<Self, EngineError> {
        let s = Self::read_toml(text)?;
        check(&s)?;
        Ok(s)
    }

    /// Build a scenario from a parsed document.
    pub fn from_value(doc: &Value) -> Result<Self, EngineError> {
        let s = Self::read_value(doc)?;
        check(&s)?;
        Ok(s)
    }

    /// Sender maximum segment size of the single-path form ([`segment::smss`] on `path.mtu`);
    /// `None` for a network, whose flows each have theirs ([`Plan::of`]).
    pub fn smss(&self) -> Option<u32> {
        self.path().map(|p| segment::smss(p.mtu, self.tcp.timestamps))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPLIT: &str = r#"
        [nodes]
        a = {}
        r = {}
        b = {}
        [[links]]
        between = ["a", "r"]
        mtu = 1500
        [[links]]
        between = ["r", "b"]
        mtu = 576
        [[flows]]
        name = "f"
        from = "a"
        to = "b"
        traffic = { kind = "bulk", bytes = "10kB" }
    "#;

    #[test]
    fn a_connections_path_mtu_is_the_smallest_mtu_on_its_route_and_its_mss_follows_from_it() {
        let s = Scenario::from_toml(SPLIT).unwrap();
        let plan = Plan::of(&s).unwrap();
        assert_eq!(plan.flows[0].first, Conn { path_mtu: 576, smss: 536 });
        assert_eq!(plan.flows[0].second, None);
    }

    #[test]
    fn a_split_flow_has_one_path_mtu_per_connection_and_timestamps_shrink_only_its_own_mss() {
        let text = SPLIT.replace("traffic = {", "split = { at = \"r\", tcp = { timestamps = true }, buffer = \"64KB\" }\ntraffic = {");
        let s = Scenario::from_toml(&text).unwrap();
        let plan = Plan::of(&s).unwrap();
        assert_eq!(plan.flows[0].first, Conn { path_mtu: 1500, smss: 1460 });
        assert_eq!(plan.flows[0].second, Some(Conn { path_mtu: 576, smss: 524 }));
    }

    #[test]
    fn the_single_path_form_is_planned_through_its_network() {
        let s = Scenario::from_toml("[path]\nmtu = 1000\n[tcp]\ntimestamps = true\n").unwrap();
        assert!(Plan::of(&s).is_err(), "a plan needs the network form");
        let plan = Plan::of(&s.as_network().unwrap()).unwrap();
        assert_eq!(plan.flows[0].first, Conn { path_mtu: 1000, smss: s.smss().unwrap() });
        assert_eq!((s.smss(), s.as_network().unwrap().smss()), (Some(948), None));
    }
}
