//! The network form of a scenario (DESIGN.md "Networks"): `[nodes]`, `[[links]]`, `[[flows]]` and
//! optional `[[routes]]`. Read from the raw document with key paths in every error, and resolved
//! into ids (`NodeId`, `FlowId`) that the simulator uses instead of names.
//!
//! The single-path form (`[path]` + `[traffic]`) is shorthand for the network `sender`,
//! `receiver`, one link between them and one flow `main`; [`NetworkConfig::from_single_path`]
//! builds that network so code that works on networks sees both forms alike.

use super::{
    resolve_link, resolve_profile, serde_units, typed, EnergyConfig, LinkConfig, PathConfig, ProfileRef, RawLink, TcpConfig,
    TrafficConfig,
};
use super::channel::{self, ChannelConfig, PipeConfig};
use crate::error::EngineError;
use crate::units::SimDuration;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};

/// Index of a node in [`NetworkConfig::nodes`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct NodeId(pub u32);
/// Index of a flow in [`NetworkConfig::flows`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct FlowId(pub u32);
/// Index of one direction of a link: link `k` has interfaces `2k` (first node -> second) and
/// `2k + 1` (second -> first, absent for a one-way link).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct IfaceId(pub u32);

impl NodeId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}
impl FlowId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}
impl IfaceId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A complete, validated network.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NetworkConfig {
    pub nodes: Vec<NodeConfig>,
    pub links: Vec<NetLink>,
    /// Shared 802.11 channels (`[[channels]]`).
    pub channels: Vec<ChannelConfig>,
    /// IP-level pipes in front of interfaces (`[[pipes]]`).
    pub pipes: Vec<PipeConfig>,
    pub flows: Vec<FlowConfig>,
    /// Explicit routes, each the full node path a flow's packets from its first to its last
    /// node follow; they override the hop-count routes for that (source, destination) pair.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub routes: Vec<Vec<String>>,
    /// `stop = "battery_empty:NODE"`: the run ends when this node's battery is empty.
    #[serde(skip)]
    pub stop_on_battery: Option<NodeId>,
    /// `[metrics]`: the efficiency metrics' weights and Tmax.
    #[serde(skip)]
    pub metrics: super::metrics::MetricsConfig,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NodeConfig {
    pub name: String,
    pub profile: ProfileRef,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub battery: Option<super::BatteryConfig>,
}

/// A point-to-point link between two nodes: one [`LinkConfig`] per direction.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NetLink {
    pub between: [String; 2],
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub oneway: bool,
    #[serde(skip)]
    pub ends: [NodeId; 2],
    pub mtu: u32,
    pub frame_overhead: u32,
    /// First node -> second node.
    pub forward: LinkConfig,
    /// Second node -> first node; `None` for a one-way link.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reverse: Option<LinkConfig>,
    /// The scenario keys of the forward and reverse settings (`links.0.forward`, or
    /// `path.forward` for the single path's link): errors name them, and they name each
    /// direction's random streams, so the two forms of one path draw the same numbers.
    #[serde(skip)]
    pub keys: [String; 2],
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    Tcp,
    Udp,
}

impl Transport {
    pub fn name(self) -> &'static str {
        match self {
            Transport::Tcp => "tcp",
            Transport::Udp => "udp",
        }
    }
}

/// How inter-departure times of `on_off` messages are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Distribution {
    Exponential,
    Fixed,
}

/// What the application at a flow's source writes, and when.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FlowTraffic {
    /// `bytes` written at the start, then the connection is closed (ttcp-like).
    Bulk {
        #[serde(with = "serde_units::bytes")]
        bytes: u64,
    },
    /// As much as the transport takes, for `duration` from the start; then closed.
    Timed {
        #[serde(with = "serde_units::duration")]
        duration: SimDuration,
    },
    /// Messages of `message` bytes, `interval` apart on average (interactive traffic).
    OnOff {
        message: u32,
        #[serde(with = "serde_units::duration")]
        interval: SimDuration,
        distribution: Distribution,
    },
    /// Packets of `packet` bytes of payload at a constant bit rate of payload.
    Cbr {
        #[serde(with = "serde_units::rate")]
        rate: u64,
        packet: u32,
    },
}

fn exponential() -> Distribution {
    Distribution::Exponential
}

// Each kind's fields, read on their own so that errors carry the field's key path.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBulk {
    #[serde(rename = "kind")]
    _kind: String,
    #[serde(with = "serde_units::bytes")]
    bytes: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTimed {
    #[serde(rename = "kind")]
    _kind: String,
    #[serde(with = "serde_units::duration")]
    duration: SimDuration,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOnOff {
    #[serde(rename = "kind")]
    _kind: String,
    message: u32,
    #[serde(with = "serde_units::duration")]
    interval: SimDuration,
    #[serde(default = "exponential")]
    distribution: Distribution,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCbr {
    #[serde(rename = "kind")]
    _kind: String,
    #[serde(with = "serde_units::rate")]
    rate: u64,
    packet: u32,
}

impl FlowTraffic {
    pub fn kind(&self) -> &'static str {
        match self {
            FlowTraffic::Bulk { .. } => "bulk",
            FlowTraffic::Timed { .. } => "timed",
            FlowTraffic::OnOff { .. } => "on_off",
            FlowTraffic::Cbr { .. } => "cbr",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(into = "FlowDoc")]
pub struct FlowConfig {
    pub name: String,
    pub from: String,
    pub to: String,
    #[serde(skip)]
    pub src: NodeId,
    #[serde(skip)]
    pub dst: NodeId,
    pub transport: Transport,
    /// The scenario-wide `[tcp]` with this flow's `tcp` table merged over it.
    pub tcp: TcpConfig,
    pub traffic: FlowTraffic,
    #[serde(with = "serde_units::duration")]
    pub start: SimDuration,
    #[serde(skip_serializing_if = "Option::is_none", with = "super::opt_duration")]
    pub stop: Option<SimDuration>,
    /// UDP only: the destination sends every datagram back (RFC 862 Echo), so the source
    /// measures round trips: a ping.
    pub echo: bool,
    /// TCP only: the connection ends at a node on the route, which relays the bytes onto a
    /// second connection to `to` (docs/models/split.md). Then `tcp` is that of the first
    /// connection (`from` -> `split.at`).
    pub split: Option<SplitConfig>,
}

/// `split = { at, tcp, buffer }`: the split connection (Indirect TCP) of one flow.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SplitConfig {
    /// The node that ends the first connection and opens the second.
    pub at: String,
    #[serde(skip)]
    pub node: NodeId,
    /// The second connection's settings: the scenario-wide `[tcp]` with `split.tcp` merged over
    /// it, as the flow's own `tcp` table is for the first.
    pub tcp: TcpConfig,
    /// Bound of the relay buffer: bytes the relay has read from the first connection and the
    /// second has not acknowledged (the second connection's send buffer).
    #[serde(with = "serde_units::bytes")]
    pub buffer: u64,
}

/// A flow as a scenario file writes it: no `tcp` table for a UDP flow.
#[derive(Serialize)]
struct FlowDoc {
    name: String,
    from: String,
    to: String,
    transport: Transport,
    #[serde(skip_serializing_if = "Option::is_none")]
    tcp: Option<TcpConfig>,
    traffic: FlowTraffic,
    #[serde(with = "serde_units::duration")]
    start: SimDuration,
    #[serde(skip_serializing_if = "Option::is_none", with = "super::opt_duration")]
    stop: Option<SimDuration>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    echo: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    split: Option<SplitConfig>,
}

impl From<FlowConfig> for FlowDoc {
    fn from(f: FlowConfig) -> Self {
        FlowDoc {
            tcp: (f.transport == Transport::Tcp).then_some(f.tcp),
            name: f.name,
            from: f.from,
            to: f.to,
            transport: f.transport,
            traffic: f.traffic,
            start: f.start,
            stop: f.stop,
            echo: f.echo,
            split: f.split,
        }
    }
}

impl NetworkConfig {
    pub fn node_id(&self, name: &str) -> Option<NodeId> {
        self.nodes.iter().position(|n| n.name == name).map(|i| NodeId(i as u32))
    }

    /// The two-node network a single-path scenario stands for: its `path` and `traffic` (the
    /// single-path form, [`super::Topology::SinglePath`]), its `tcp` settings and its `energy`
    /// (the nodes' profiles `energy.sender` and `energy.receiver`).
    pub fn from_single_path(path: &PathConfig, traffic: &TrafficConfig, tcp: &TcpConfig, energy: &EnergyConfig) -> Self {
        let node = |name: &str, profile: &ProfileRef| NodeConfig { name: name.into(), profile: profile.clone(), battery: None };
        let mtu = path.mtu;
        NetworkConfig {
            nodes: vec![node("sender", &energy.sender), node("receiver", &energy.receiver)],
            links: vec![NetLink {
                between: ["sender".into(), "receiver".into()],
                oneway: false,
                ends: [NodeId(0), NodeId(1)],
                mtu,
                frame_overhead: path.frame_overhead,
                forward: path.forward.clone(),
                reverse: Some(path.reverse.clone()),
                keys: ["path.forward".into(), "path.reverse".into()],
            }],
            flows: vec![FlowConfig {
                name: "main".into(),
                from: "sender".into(),
                to: "receiver".into(),
                src: NodeId(0),
                dst: NodeId(1),
                transport: Transport::Tcp,
                tcp: tcp.clone(),
                traffic: FlowTraffic::Bulk { bytes: traffic.bytes },
                start: SimDuration::ZERO,
                stop: None,
                split: None,
                echo: false,
            }],
            routes: vec![],
            channels: vec![],
            pipes: vec![],
            stop_on_battery: None,
            metrics: Default::default(),
        }
    }

    /// Whether a link or a channel carries packets from `a` to its neighbour `b`.
    pub fn carries(&self, a: NodeId, b: NodeId) -> bool {
        self.links.iter().any(|l| l.carries(a, b))
            || self.channels.iter().any(|c| match (c.station_of(a), c.station_of(b)) {
                (Some(x), Some(y)) => c.reaches(x, y),
                _ => false,
            })
    }
}

// ---------------------------------------------------------------------------------------------
// Reading the raw document.

/// Keys of a `[[links]]` entry that are not per-direction link settings.
const LINK_KEYS: [&str; 6] = ["between", "oneway", "mtu", "frame_overhead", "forward", "reverse"];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawNode {
    #[serde(default)]
    profile: Option<Value>,
    #[serde(default)]
    battery: Option<Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFlow {
    name: String,
    from: String,
    to: String,
    #[serde(default = "tcp_transport")]
    transport: Transport,
    #[serde(default)]
    tcp: Option<Value>,
    traffic: Value,
    #[serde(default, with = "serde_units::duration")]
    start: SimDuration,
    #[serde(default, with = "super::opt_duration")]
    stop: Option<SimDuration>,
    #[serde(default)]
    echo: bool,
    #[serde(default)]
    split: Option<Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSplit {
    at: String,
    #[serde(default)]
    tcp: Option<Value>,
    #[serde(with = "serde_units::bytes")]
    buffer: u64,
}

fn tcp_transport() -> Transport {
    Transport::Tcp
}

fn err(path: impl Into<String>, message: impl Into<String>) -> EngineError {
    EngineError::config(path, message)
}

/// Node and flow names: non-empty, letters, digits, '_' and '-' (safe in dotted keys and columns).
fn plain_name(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

fn join_names(names: &[&str]) -> String {
    names.join(", ")
}

/// Build the network from the document's `nodes`, `links`, `flows` and `routes`.
pub(crate) fn read(doc: &Value, tcp: &Value, default_profile: &Value) -> Result<NetworkConfig, EngineError> {
    let Some(nodes_v) = doc.get("nodes") else {
        return Err(err("nodes", "a network needs a [nodes] table naming every node"));
    };
    let Some(node_map) = nodes_v.as_object() else {
        return Err(err("nodes", "must be a table: node name -> settings ({} for the defaults)"));
    };
    if node_map.len() < 2 {
        return Err(err("nodes", format!("a network needs at least two nodes, got {}", node_map.len())));
    }
    let mut nodes = Vec::with_capacity(node_map.len());
    // Built-in profiles by name, read once and shared by the nodes that name them.
    let mut builtins: HashMap<String, ProfileRef> = HashMap::new();
    let mut shared_profile = |v: &Value, at: &str| -> Result<ProfileRef, EngineError> {
        let Some(name) = v.as_str() else { return resolve_profile(v, at) };
        if let Some(p) = builtins.get(name) {
            return Ok(p.clone());
        }
        let p = resolve_profile(v, at)?;
        builtins.insert(name.to_string(), p.clone());
        Ok(p)
    };
    for (name, v) in node_map {
        let at = format!("nodes.{name}");
        if !plain_name(name) {
            return Err(err(at, "node names are letters, digits, '_' and '-'"));
        }
        let raw: RawNode = typed(v, &at)?;
        let battery = raw.battery.as_ref().map(|b| super::battery::read(b, &format!("{at}.battery"))).transpose()?;
        let profile = match &raw.profile {
            Some(p) => shared_profile(p, &format!("{at}.profile"))?,
            None => shared_profile(default_profile, "energy.default_profile")?,
        };
        nodes.push(NodeConfig { name: name.clone(), profile, battery });
    }
    let names: Vec<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
    let ids: HashMap<&str, NodeId> = names.iter().enumerate().map(|(i, n)| (*n, NodeId(i as u32))).collect();
    let lookup = |name: &str, at: String| -> Result<NodeId, EngineError> {
        ids.get(name).copied().ok_or_else(|| err(at, format!("unknown node {name:?}; nodes are {}", join_names(&names))))
    };

    let channels = channel::read_channels(doc, &lookup)?;
    let no_links: Vec<Value> = Vec::new();
    let links_v = match doc.get("links") {
        None if !channels.is_empty() => &no_links,
        None => return Err(err("links", "a network needs at least one [[links]] or [[channels]] entry")),
        Some(Value::Array(a)) if !a.is_empty() || !channels.is_empty() => a,
        Some(_) => return Err(err("links", "must be a non-empty list of [[links]] tables")),
    };
    let mut links: Vec<NetLink> = Vec::with_capacity(links_v.len());
    // Each pair of nodes a link joins, either way round, and that link.
    let mut joined: HashMap<(NodeId, NodeId), usize> = HashMap::with_capacity(links_v.len());
    for (i, v) in links_v.iter().enumerate() {
        links.push(read_link(v, i, &lookup)?);
        let new = &links[i];
        let [a, b] = new.ends;
        if let Some(j) = joined.insert((a.min(b), a.max(b)), i) {
            return Err(err(
                format!("links.{i}.between"),
                format!("duplicate link {} - {}: links.{j} already joins these nodes", new.between[0], new.between[1]),
            ));
        }
    }

    let flows_v = match doc.get("flows") {
        None => return Err(err("flows", "a network needs at least one [[flows]] entry")),
        Some(Value::Array(a)) if !a.is_empty() => a,
        Some(_) => return Err(err("flows", "must be a non-empty list of [[flows]] tables")),
    };
    let mut flows: Vec<FlowConfig> = Vec::with_capacity(flows_v.len());
    let mut flow_names: HashMap<String, usize> = HashMap::with_capacity(flows_v.len());
    for (i, v) in flows_v.iter().enumerate() {
        let at = format!("flows.{i}");
        let raw: RawFlow = typed(v, &at)?;
        if !plain_name(&raw.name) {
            return Err(err(format!("{at}.name"), format!("flow names are letters, digits, '_' and '-' (they become column names), got {:?}", raw.name)));
        }
        if let Some(&j) = flow_names.get(&raw.name) {
            return Err(err(format!("{at}.name"), format!("duplicate flow name {:?} (also flows.{j})", raw.name)));
        }
        flow_names.insert(raw.name.clone(), i);
        let src = lookup(&raw.from, format!("{at}.from"))?;
        let dst = lookup(&raw.to, format!("{at}.to"))?;
        if src == dst {
            return Err(err(format!("{at}.to"), format!("a flow needs two different nodes; from and to are both {:?}", raw.to)));
        }
        let tcp_cfg = flow_tcp(tcp, raw.tcp.as_ref(), &format!("{at}.tcp"))?;
        if raw.transport == Transport::Udp && raw.tcp.is_some() {
            return Err(err(format!("{at}.tcp"), "a UDP flow takes no tcp settings (transport = \"udp\")"));
        }
        let traffic: FlowTraffic = read_traffic(&raw.traffic, &format!("{at}.traffic"))?;
        if raw.transport == Transport::Udp && matches!(traffic, FlowTraffic::Bulk { .. } | FlowTraffic::Timed { .. }) {
            return Err(err(
                format!("{at}.traffic.kind"),
                format!("{:?} needs a transport with congestion control (tcp); over udp use \"cbr\" or \"on_off\"", traffic.kind()),
            ));
        }
        if raw.echo && raw.transport != Transport::Udp {
            return Err(err(format!("{at}.echo"), "only a UDP flow is echoed (RFC 862); set transport = \"udp\" or remove the key"));
        }
        if let Some(stop) = raw.stop {
            if stop <= raw.start {
                return Err(err(
                    format!("{at}.stop"),
                    format!(
                        "must be after start ({} <= {})",
                        serde_units::format_duration(stop),
                        serde_units::format_duration(raw.start)
                    ),
                ));
            }
        }
        let split = match &raw.split {
            None => None,
            Some(v) => Some(read_split(v, &raw, src, dst, tcp, &format!("{at}.split"), &lookup)?),
        };
        flows.push(FlowConfig {
            split,
            name: raw.name,
            from: raw.from,
            to: raw.to,
            src,
            dst,
            transport: raw.transport,
            tcp: tcp_cfg,
            traffic,
            start: raw.start,
            stop: raw.stop,
            echo: raw.echo,
        });
    }

    // The (from, to) pairs a link carries packets between.
    let by_link: HashSet<(NodeId, NodeId)> = links
        .iter()
        .flat_map(|l| std::iter::once((l.ends[0], l.ends[1])).chain(l.reverse.is_some().then_some((l.ends[1], l.ends[0]))))
        .collect();
    let carried = |a: NodeId, b: NodeId| {
        by_link.contains(&(a, b))
            || channels.iter().any(|c| matches!((c.station_of(a), c.station_of(b)), (Some(x), Some(y)) if c.reaches(x, y)))
    };
    let mut routes = Vec::new();
    if let Some(v) = doc.get("routes") {
        let Some(list) = v.as_array() else {
            return Err(err("routes", "must be a list of node paths, e.g. [[\"a\", \"b\", \"d\"]]"));
        };
        for (i, r) in list.iter().enumerate() {
            let at = format!("routes.{i}");
            let hops: Vec<String> = typed(r, &at)?;
            if hops.len() < 2 {
                return Err(err(at, "a route names at least its first and last node"));
            }
            for (k, h) in hops.iter().enumerate() {
                let id = lookup(h, format!("{at}.{k}"))?;
                if hops[..k].contains(h) {
                    return Err(err(format!("{at}.{k}"), format!("node {h:?} appears twice in the route")));
                }
                if k > 0 {
                    let prev = lookup(&hops[k - 1], format!("{at}.{}", k - 1))?;
                    if !carried(prev, id) {
                        return Err(err(format!("{at}.{k}"), format!("no link or channel carries packets from {:?} to {h:?}", hops[k - 1])));
                    }
                }
            }
            routes.push(hops);
        }
    }
    let pipes = channel::read_pipes(doc, &lookup)?;
    let stop_on_battery = match doc.get("stop") {
        None => None,
        Some(v) => {
            let name = v.as_str().and_then(|t| t.strip_prefix("battery_empty:")).ok_or_else(|| {
                err("stop", format!("must be \"battery_empty:NODE\" (the run ends when that node's battery is empty), got {v}"))
            })?;
            let id = lookup(name, "stop".into())?;
            if nodes[id.index()].battery.is_none() {
                return Err(err("stop", format!("node {name:?} has no battery; give it one: nodes.{name}.battery = {{ capacity = \"4000mAh\", voltage = \"10.8V\" }}")));
            }
            Some(id)
        }
    };
    let metrics = super::metrics::read(doc)?;
    for (i, p) in pipes.iter().enumerate() {
        if !carried(p.ends[0], p.ends[1]) {
            return Err(err(format!("pipes.{i}.to"), format!("no link or channel carries packets from {:?} to {:?}", p.from, p.to)));
        }
    }
    Ok(NetworkConfig { nodes, links, channels, pipes, flows, routes, stop_on_battery, metrics })
}

impl NetLink {
    /// Whether this link carries packets from `a` to `b`.
    pub fn carries(&self, a: NodeId, b: NodeId) -> bool {
        (self.ends == [a, b]) || (self.reverse.is_some() && self.ends == [b, a])
    }
}

fn read_link(v: &Value, i: usize, lookup: &dyn Fn(&str, String) -> Result<NodeId, EngineError>) -> Result<NetLink, EngineError> {
    let at = format!("links.{i}");
    let Some(map) = v.as_object() else { return Err(err(at, "must be a table")) };
    let between: [String; 2] = match map.get("between") {
        None => return Err(err(format!("{at}.between"), "missing: the two nodes the link joins, e.g. [\"a\", \"b\"]")),
        Some(b) => typed(b, &format!("{at}.between"))?,
    };
    let a = lookup(&between[0], format!("{at}.between.0"))?;
    let b = lookup(&between[1], format!("{at}.between.1"))?;
    if a == b {
        return Err(err(format!("{at}.between"), format!("a link joins two different nodes; both ends are {:?}", between[0])));
    }
    let get_u32 = |key: &str, default: u32| -> Result<u32, EngineError> {
        match map.get(key) {
            None => Ok(default),
            Some(x) => typed(x, &format!("{at}.{key}")),
        }
    };
    let mtu = get_u32("mtu", 1500)?;
    if !(128..=65_535).contains(&mtu) {
        return Err(err(format!("{at}.mtu"), format!("must be between 128 and 65535 bytes, got {mtu}")));
    }
    let frame_overhead = get_u32("frame_overhead", 0)?;
    let oneway: bool = match map.get("oneway") {
        None => false,
        Some(x) => typed(x, &format!("{at}.oneway"))?,
    };
    // Settings shared by both directions, then each direction's own table over them.
    let shared: Map<String, Value> = map.iter().filter(|(k, _)| !LINK_KEYS.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())).collect();
    let _: RawLink = typed(&Value::Object(shared.clone()), &at)?;
    if shared.contains_key("rate") && shared.contains_key("trace") {
        return Err(err(format!("{at}.trace"), "a link has either rate (a constant rate such as \"2Mbps\") or trace (a delivery-opportunity trace), not both; remove one"));
    }
    let direction = |key: &str| -> Result<LinkConfig, EngineError> {
        let mut merged = shared.clone();
        match map.get(key) {
            None => {}
            Some(Value::Object(own)) => {
                // A direction's own rate or trace replaces the one the link gives both directions.
                if own.contains_key("rate") || own.contains_key("trace") {
                    merged.remove("rate");
                    merged.remove("trace");
                }
                merged.extend(own.iter().map(|(k, v)| (k.clone(), v.clone())))
            }
            Some(_) => return Err(err(format!("{at}.{key}"), "must be a table of link settings (rate or trace, delay, queue, impairments, ...)")),
        }
        let prefix = format!("{at}.{key}");
        let raw: RawLink = typed(&Value::Object(merged), &prefix)?;
        let cfg = resolve_link(raw, &prefix)?;
        if cfg.capacity == super::Capacity::Rate(0) {
            return Err(err(format!("{prefix}.rate"), "must be > 0"));
        }
        super::check_queue(cfg.queue, &format!("{prefix}.queue"), "packet")?;
        Ok(cfg)
    };
    let forward = direction("forward")?;
    if oneway && map.contains_key("reverse") {
        return Err(err(format!("{at}.reverse"), "a one-way link (oneway = true) has no reverse direction"));
    }
    let reverse = if oneway { None } else { Some(direction("reverse")?) };
    let keys = [format!("{at}.forward"), format!("{at}.reverse")];
    Ok(NetLink { between, oneway, ends: [a, b], mtu, frame_overhead, forward, reverse, keys })
}

/// A flow's `split` table, with the checks that need no routes (`at` on the route: see
/// `crate::plan::Plan::of`).
fn read_split(
    v: &Value,
    flow: &RawFlow,
    src: NodeId,
    dst: NodeId,
    tcp: &Value,
    at: &str,
    lookup: &dyn Fn(&str, String) -> Result<NodeId, EngineError>,
) -> Result<SplitConfig, EngineError> {
    if flow.transport != Transport::Tcp {
        return Err(err(at, "only a TCP flow can be split (the relay terminates a TCP connection); remove `split` or set transport = \"tcp\""));
    }
    if !v.is_object() {
        return Err(err(at, "must be a table: { at = \"<node>\", tcp = { variant = \"...\" }, buffer = \"64KB\" }"));
    }
    let raw: RawSplit = typed(v, at)?;
    let node = lookup(&raw.at, format!("{at}.at"))?;
    if node == src || node == dst {
        return Err(err(
            format!("{at}.at"),
            format!("the split node must be a node between the flow's ends, not {:?} itself", raw.at),
        ));
    }
    let Some(own) = raw.tcp.as_ref() else {
        return Err(err(
            format!("{at}.tcp"),
            "missing: the split node opens a second connection and needs its transport, e.g. tcp = { variant = \"sack\" }",
        ));
    };
    let tcp = flow_tcp(tcp, Some(own), &format!("{at}.tcp"))?;
    if raw.buffer == 0 {
        return Err(err(format!("{at}.buffer"), "must be at least 1 byte: the relay holds what the second connection has not acknowledged"));
    }
    Ok(SplitConfig { at: raw.at, node, tcp, buffer: raw.buffer })
}

/// The scenario-wide `[tcp]` table with a flow's own `tcp` table merged over it (key by key).
fn flow_tcp(base: &Value, own: Option<&Value>, at: &str) -> Result<TcpConfig, EngineError> {
    let mut merged = match base {
        Value::Object(m) => m.clone(),
        _ => Map::new(),
    };
    match own {
        None => {}
        Some(Value::Object(m)) => merged.extend(m.iter().map(|(k, v)| (k.clone(), v.clone()))),
        Some(_) => return Err(EngineError::config(at, "must be a table of tcp settings, e.g. { variant = \"sack\" }")),
    }
    let mut v = Value::Object(merged);
    if v.get("stack").is_some() {
        v = super::stack::apply_preset(&v)?;
    }
    let tcp: TcpConfig = typed(&v, at)?;
    super::validate_tcp(&tcp, at)?;
    Ok(tcp)
}

fn read_traffic(v: &Value, at: &str) -> Result<FlowTraffic, EngineError> {
    const KINDS: &str = "bulk, timed, on_off, cbr";
    let Some(kind) = v.get("kind") else {
        return Err(err(format!("{at}.kind"), format!("missing; one of {KINDS}")));
    };
    if !matches!(kind.as_str(), Some("bulk" | "timed" | "on_off" | "cbr")) {
        return Err(err(format!("{at}.kind"), format!("unknown traffic kind {kind}; one of {KINDS}")));
    }
    let t = match kind.as_str() {
        Some("bulk") => typed::<RawBulk>(v, at).map(|r| FlowTraffic::Bulk { bytes: r.bytes })?,
        Some("timed") => typed::<RawTimed>(v, at).map(|r| FlowTraffic::Timed { duration: r.duration })?,
        Some("on_off") => typed::<RawOnOff>(v, at)
            .map(|r| FlowTraffic::OnOff { message: r.message, interval: r.interval, distribution: r.distribution })?,
        _ => typed::<RawCbr>(v, at).map(|r| FlowTraffic::Cbr { rate: r.rate, packet: r.packet })?,
    };
    match t {
        FlowTraffic::Bulk { bytes } if bytes == 0 || bytes > super::MAX_TRANSFER => {
            Err(err(format!("{at}.bytes"), format!("must be between 1 byte and {} bytes (1 PB)", super::MAX_TRANSFER)))
        }
        FlowTraffic::Timed { duration } if duration.0 == 0 => Err(err(format!("{at}.duration"), "must be > 0")),
        FlowTraffic::OnOff { message, .. } if message == 0 || message > 1 << 30 => {
            Err(err(format!("{at}.message"), "must be between 1 byte and 1 GiB"))
        }
        FlowTraffic::OnOff { interval, .. } => super::check_min_timer(interval, &format!("{at}.interval")).map(|()| t),
        FlowTraffic::Cbr { rate, .. } if rate == 0 => Err(err(format!("{at}.rate"), "must be > 0")),
        FlowTraffic::Cbr { packet, .. } if packet == 0 || packet > 65_507 => {
            Err(err(format!("{at}.packet"), "must be between 1 and 65507 bytes of payload"))
        }
        t => Ok(t),
    }
}
