//! Static routing: each node forwards a packet by its destination along the shortest path in hops,
//! computed once before the run (ties go to the interface listed first). Explicit `routes`
//! override the next hop at every node they name, for their last node as destination, as a static
//! route in an IP forwarding table would.
//!
//! Only the routes the run can use are computed and kept: those from each flow's ends (and split
//! node) to the others, and from every node an explicit route names to its last node. A node with
//! a single neighbour (a host on its access link) is a *leaf*: it reaches everything through that
//! neighbour, and is reached from everything through it, so its routes follow from its
//! neighbour's without a search of their own. Hop counts are searched only among the other nodes
//! (the core: routers, the two nodes of a two-node network), once per core node that is, or is
//! the neighbour of, a destination. Memory is linear in nodes, interfaces and route hops; time
//! too when the core is small (dumbbells, access networks; docs/models/network.md).

use crate::config::network::{IfaceId, NetworkConfig, NodeId};
use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};

/// An interface: packets leave `from` towards its neighbour `to`, over a medium.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IfaceEnds {
    pub via: Via,
    pub from: NodeId,
    pub to: NodeId,
}

/// What carries an interface's packets: port `port` of medium `medium` (`net::medium::spec`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Via {
    pub medium: u32,
    pub port: u32,
}

/// Every interface of the network, in medium order (`net::medium::specs`: each link's forward
/// then reverse direction, then each channel's ordered pairs of stations where the second hears
/// the first), and the next hop of
/// every node on a route the run uses towards that route's destination.
#[derive(Debug, Clone, PartialEq)]
pub struct RouteTable {
    pub ifaces: Vec<IfaceEnds>,
    /// The interface a packet for a destination leaves a node by, keyed by [`pair`]; only for
    /// the (node, destination) pairs on the routes of [`RouteTable::build`].
    next: HashMap<u64, IfaceId, PairHash>,
    /// Number of nodes: no loop-free path has more hops.
    nodes: usize,
}

/// Why a route could not be built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RouteError {
    /// Flow `flow` has no path from its source to its destination (or back, for TCP's ACKs).
    NoRoute { flow: usize, from: String, to: String },
    /// An explicit route sends packets around a loop.
    Loop { route: usize, at: String },
}

/// Key of a (node, destination) pair.
#[inline]
fn pair(node: NodeId, dest: NodeId) -> u64 {
    (node.0 as u64) << 32 | dest.0 as u64
}

/// Hash of a [`pair`] key: one multiply and a rotation, so that the low bits the table indexes
/// by depend on both halves (SipHash would cost more than the rest of a forwarding decision).
#[derive(Debug, Clone, Copy, Default)]
pub struct PairHasher(u64);

impl Hasher for PairHasher {
    fn finish(&self) -> u64 {
        self.0.wrapping_mul(0xF135_7AEA_2E62_A9C5).rotate_left(26)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ b as u64;
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 ^= x;
    }
}

type PairHash = BuildHasherDefault<PairHasher>;

/// How many distinct neighbours a node has (over interfaces either way), and the one if single.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Neighbours {
    None,
    One(u32),
    Many,
}

impl Neighbours {
    fn note(&mut self, x: u32) {
        *self = match *self {
            Neighbours::None => Neighbours::One(x),
            Neighbours::One(y) if y == x => Neighbours::One(y),
            _ => Neighbours::Many,
        };
    }
}

/// The graph the search runs on: leaves, and the core's interfaces into each core node.
struct Graph<'a> {
    ifaces: &'a [IfaceEnds],
    /// A leaf's single neighbour (`u32::MAX` for a core node).
    parent: Vec<u32>,
    /// A leaf's first interface out (to its neighbour) and in (from it).
    up: Vec<u32>,
    down: Vec<u32>,
    /// Interfaces into core node `v` from core nodes: `core_in[core_in_at[v]..core_in_at[v + 1]]`,
    /// in interface order.
    core_in_at: Vec<u32>,
    core_in: Vec<u32>,
}

const NONE: u32 = u32::MAX;

impl<'a> Graph<'a> {
    fn new(n: usize, ifaces: &'a [IfaceEnds]) -> Self {
        let mut nb = vec![Neighbours::None; n];
        let (mut up, mut down) = (vec![NONE; n], vec![NONE; n]);
        for (i, e) in ifaces.iter().enumerate() {
            let (a, b) = (e.from.index(), e.to.index());
            nb[a].note(b as u32);
            nb[b].note(a as u32);
            if up[a] == NONE {
                up[a] = i as u32;
            }
            if down[b] == NONE {
                down[b] = i as u32;
            }
        }
        // A leaf sends to and hears from one neighbour only, which has another neighbour (of two
        // nodes joined only to each other, neither is a leaf).
        let parent: Vec<u32> = (0..n)
            .map(|p| match nb[p] {
                Neighbours::One(w) if up[p] != NONE && down[p] != NONE && nb[w as usize] != Neighbours::One(p as u32) => w,
                _ => NONE,
            })
            .collect();
        let mut core_in_at = vec![0u32; n + 1];
        let core = |e: &IfaceEnds| parent[e.from.index()] == NONE && parent[e.to.index()] == NONE;
        for e in ifaces.iter().filter(|e| core(e)) {
            core_in_at[e.to.index() + 1] += 1;
        }
        for v in 0..n {
            core_in_at[v + 1] += core_in_at[v];
        }
        let mut fill = core_in_at.clone();
        let mut core_in = vec![0u32; core_in_at[n] as usize];
        for (i, e) in ifaces.iter().enumerate().filter(|(_, e)| core(e)) {
            let v = e.to.index();
            core_in[fill[v] as usize] = i as u32;
            fill[v] += 1;
        }
        Graph { ifaces, parent, up, down, core_in_at, core_in }
    }

    fn is_leaf(&self, u: usize) -> bool {
        self.parent[u] != NONE
    }

    /// The core node a route to `t` is searched from: `t`, or a leaf's neighbour.
    fn core_of(&self, t: NodeId) -> NodeId {
        if self.is_leaf(t.index()) {
            NodeId(self.parent[t.index()])
        } else {
            t
        }
    }
}

/// Hop counts of core nodes to one core destination, and each one's first interface on a
/// shortest path (the lowest-numbered interface into a node one hop nearer).
struct Search {
    dist: Vec<u32>,
    first: Vec<u32>,
    touched: Vec<u32>,
    queue: VecDeque<u32>,
}

impl Search {
    fn new(n: usize) -> Self {
        Search { dist: vec![NONE; n], first: vec![NONE; n], touched: Vec::new(), queue: VecDeque::new() }
    }

    /// Breadth-first from `dest` over the core's interfaces, walked backwards.
    fn run(&mut self, g: &Graph, dest: NodeId) {
        for &u in &self.touched {
            self.dist[u as usize] = NONE;
            self.first[u as usize] = NONE;
        }
        self.touched.clear();
        self.dist[dest.index()] = 0;
        self.touched.push(dest.0);
        self.queue.push_back(dest.0);
        while let Some(v) = self.queue.pop_front() {
            let v = v as usize;
            let d = self.dist[v] + 1;
            let (lo, hi) = (g.core_in_at[v] as usize, g.core_in_at[v + 1] as usize);
            for &i in &g.core_in[lo..hi] {
                let u = g.ifaces[i as usize].from.index();
                if self.dist[u] == NONE {
                    self.dist[u] = d;
                    self.first[u] = i;
                    self.touched.push(u as u32);
                    self.queue.push_back(u as u32);
                } else if self.dist[u] == d && i < self.first[u] {
                    self.first[u] = i;
                }
            }
        }
    }
}

impl RouteTable {
    pub fn build(net: &NetworkConfig) -> Result<Self, RouteError> {
        let n = net.nodes.len();
        let mut ifaces = Vec::with_capacity(net.links.len() * 2);
        for (m, spec) in crate::net::medium::specs(net).enumerate() {
            spec.ports(&mut |port, from, to| ifaces.push(IfaceEnds { via: Via { medium: m as u32, port }, from, to }));
        }

        // Explicit routes: at each node they name, the first interface to the next one, for the
        // route's last node (a later route naming the same node and destination wins).
        let mut ids: HashMap<&str, NodeId> = HashMap::new();
        let mut first_to: HashMap<u64, IfaceId, PairHash> = HashMap::default();
        if !net.routes.is_empty() {
            ids = net.nodes.iter().enumerate().map(|(i, x)| (x.name.as_str(), NodeId(i as u32))).collect();
            for (i, e) in ifaces.iter().enumerate() {
                first_to.entry(pair(e.from, e.to)).or_insert(IfaceId(i as u32));
            }
        }
        let id = |name: &str| *ids.get(name).expect("route nodes were checked");
        let mut fixed: HashMap<u64, Option<IfaceId>, PairHash> = HashMap::default();
        for hops in &net.routes {
            let dest = id(hops.last().expect("routes have two nodes or more"));
            for w in hops.windows(2) {
                let (a, b) = (id(&w[0]), id(&w[1]));
                fixed.insert(pair(a, dest), first_to.get(&pair(a, b)).copied());
            }
        }

        // The (node, destination) pairs the run and the checks below ask for.
        let mut wanted: Vec<(NodeId, NodeId)> = Vec::with_capacity(net.flows.len() * 2);
        for f in &net.flows {
            wanted.extend([(f.src, f.dst), (f.dst, f.src)]);
            if let Some(split) = &f.split {
                let at = split.node;
                wanted.extend([(f.src, at), (at, f.src), (at, f.dst), (f.dst, at)]);
            }
        }
        for hops in &net.routes {
            let dest = id(hops.last().expect("non-empty"));
            wanted.extend(hops.iter().map(|h| (id(h), dest)));
        }

        let g = Graph::new(n, &ifaces);
        // One search per core node routes lead to.
        wanted.sort_by_key(|&(_, t)| g.core_of(t));
        let mut search = Search::new(n);
        let mut next: HashMap<u64, IfaceId, PairHash> = HashMap::default();
        let mut walk: Vec<(NodeId, IfaceId)> = Vec::new();
        let mut searched = None;
        for &(a, t) in &wanted {
            let core = g.core_of(t);
            if searched != Some(core) {
                search.run(&g, core);
                searched = Some(core);
            }
            // Follow the next hops from `a` until `t`, or a node with a known route to `t`; keep
            // the hops only if `t` is reached (no hop, or more hops than nodes: no route).
            walk.clear();
            let mut at = a;
            let reached = loop {
                if at == t || next.contains_key(&pair(at, t)) {
                    break true;
                }
                let hop = match fixed.get(&pair(at, t)) {
                    Some(&hop) => hop,
                    None => hop_count_next(&g, &search, at, t),
                };
                let Some(i) = hop else { break false };
                walk.push((at, i));
                if walk.len() > n {
                    break false;
                }
                at = ifaces[i.index()].to;
            };
            if reached {
                next.extend(walk.iter().map(|&(u, i)| (pair(u, t), i)));
            }
        }

        let table = RouteTable { ifaces, next, nodes: n };
        for (r, hops) in net.routes.iter().enumerate() {
            let dest = id(hops.last().expect("non-empty"));
            for h in hops {
                if table.path(id(h), dest).is_none() {
                    return Err(RouteError::Loop { route: r, at: h.clone() });
                }
            }
        }
        for (k, f) in net.flows.iter().enumerate() {
            // TCP needs the way back for its ACKs; UDP flows only forward, but a network where the
            // destination cannot answer is refused alike, so every flow can be turned into TCP.
            for (a, b) in [(f.src, f.dst), (f.dst, f.src)] {
                if table.path(a, b).is_none() {
                    return Err(RouteError::NoRoute { flow: k, from: net.nodes[a.index()].name.clone(), to: net.nodes[b.index()].name.clone() });
                }
            }
        }
        Ok(table)
    }

    /// The interface a packet for `dest` leaves `node` by (for the pairs on the routes the run
    /// uses; `None` for any other).
    #[inline]
    pub fn next_hop(&self, node: NodeId, dest: NodeId) -> Option<IfaceId> {
        self.next.get(&pair(node, dest)).copied()
    }

    /// The interfaces from `a` to `b`, or `None` when there is no path (or a loop). Known for the
    /// pairs [`RouteTable::build`] routes: each flow's ends both ways, a split flow's ends and
    /// split node, and every node of an explicit route to its last node.
    pub fn path(&self, a: NodeId, b: NodeId) -> Option<Vec<IfaceId>> {
        let mut hops = Vec::new();
        let mut at = a;
        while at != b {
            let i = self.next_hop(at, b)?;
            hops.push(i);
            if hops.len() > self.nodes {
                return None;
            }
            at = self.ifaces[i.index()].to;
        }
        Some(hops)
    }
}

/// The next hop from `u` to `t` by hop count alone, `u != t`, with `search` run from
/// `g.core_of(t)`: the first interface of a shortest path in the whole network. A leaf has one
/// way out (the walk finds out whether `t` is beyond it); every path to a leaf `t` ends with its
/// neighbour's interface to it, so elsewhere it is the route to that neighbour.
fn hop_count_next(g: &Graph, search: &Search, u: NodeId, t: NodeId) -> Option<IfaceId> {
    let u = u.index();
    let hop = if g.is_leaf(u) {
        g.up[u]
    } else if g.parent[t.index()] == u as u32 {
        g.down[t.index()]
    } else {
        search.first[u]
    };
    (hop != NONE).then_some(IfaceId(hop))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::network::SplitConfig;
    use crate::Scenario;
    use proptest::prelude::*;

    fn net(extra: &str) -> NetworkConfig {
        let text = format!("{extra}\n{}", include_str!("../../tests/data/diamond.toml"));
        Scenario::from_toml(&text).unwrap().into_network().unwrap()
    }

    fn names(net: &NetworkConfig, t: &RouteTable, hops: &[IfaceId]) -> Vec<String> {
        hops.iter().map(|i| net.nodes[t.ifaces[i.index()].to.index()].name.clone()).collect()
    }

    #[test]
    fn equal_hop_count_paths_go_by_the_interface_listed_first() {
        let n = net("");
        let t = RouteTable::build(&n).unwrap();
        let p = t.path(NodeId(0), NodeId(3)).unwrap();
        assert_eq!(names(&n, &t, &p), ["b", "d"]);
    }

    #[test]
    fn an_explicit_route_overrides_the_hop_count_route() {
        let n = net("routes = [[\"a\", \"c\", \"d\"]]");
        let t = RouteTable::build(&n).unwrap();
        let p = t.path(NodeId(0), NodeId(3)).unwrap();
        assert_eq!(names(&n, &t, &p), ["c", "d"]);
        // The way back is still the hop-count route.
        let back = t.path(NodeId(3), NodeId(0)).unwrap();
        assert_eq!(back.len(), 2);
    }

    /// Every node's next hop towards every destination a flow or a route needs, from a search
    /// over the whole network per destination: the definition the table must agree with.
    fn every_next_hop(net: &NetworkConfig, ifaces: &[IfaceEnds]) -> Result<Vec<Vec<Option<IfaceId>>>, RouteError> {
        let n = net.nodes.len();
        let mut out: Vec<Vec<IfaceId>> = vec![Vec::new(); n];
        let mut inc: Vec<Vec<IfaceId>> = vec![Vec::new(); n];
        for (i, f) in ifaces.iter().enumerate() {
            out[f.from.index()].push(IfaceId(i as u32));
            inc[f.to.index()].push(IfaceId(i as u32));
        }
        let mut next = vec![vec![None; n]; n];
        for dest in 0..n {
            let mut dist = vec![u32::MAX; n];
            dist[dest] = 0;
            let mut q = VecDeque::from([dest]);
            while let Some(v) = q.pop_front() {
                for &i in &inc[v] {
                    let u = ifaces[i.index()].from.index();
                    if dist[u] == u32::MAX {
                        dist[u] = dist[v] + 1;
                        q.push_back(u);
                    }
                }
            }
            for u in (0..n).filter(|&u| u != dest && dist[u] != u32::MAX) {
                next[u][dest] = out[u].iter().copied().find(|i| dist[ifaces[i.index()].to.index()] == dist[u] - 1);
            }
        }
        let id = |name: &str| NodeId(net.nodes.iter().position(|x| x.name == name).unwrap() as u32);
        for hops in &net.routes {
            let dest = id(hops.last().unwrap());
            for w in hops.windows(2) {
                let (a, b) = (id(&w[0]), id(&w[1]));
                next[a.index()][dest.index()] = out[a.index()].iter().copied().find(|i| ifaces[i.index()].to == b);
            }
        }
        for (r, hops) in net.routes.iter().enumerate() {
            let dest = id(hops.last().unwrap());
            for h in hops {
                if walk(&next, ifaces, id(h), dest).is_none() {
                    return Err(RouteError::Loop { route: r, at: h.clone() });
                }
            }
        }
        for (k, f) in net.flows.iter().enumerate() {
            for (a, b) in [(f.src, f.dst), (f.dst, f.src)] {
                if walk(&next, ifaces, a, b).is_none() {
                    return Err(RouteError::NoRoute { flow: k, from: net.nodes[a.index()].name.clone(), to: net.nodes[b.index()].name.clone() });
                }
            }
        }
        Ok(next)
    }

    fn walk(next: &[Vec<Option<IfaceId>>], ifaces: &[IfaceEnds], a: NodeId, b: NodeId) -> Option<Vec<IfaceId>> {
        let mut hops = Vec::new();
        let mut at = a;
        while at != b {
            let i = next[at.index()][b.index()]?;
            hops.push(i);
            if hops.len() > next.len() {
                return None;
            }
            at = ifaces[i.index()].to;
        }
        Some(hops)
    }

    #[derive(Debug, Clone)]
    struct Shape {
        nodes: usize,
        /// (a, b, one way) beyond the first link, n0 - n1.
        links: Vec<(usize, usize, bool)>,
        /// Members (a bit per node), pairs that hear each other (all when empty), access point.
        channel: Option<(u32, Vec<(usize, usize)>, Option<usize>)>,
        /// (from, to, split node).
        flows: Vec<(usize, usize, Option<usize>)>,
        /// (first node, choices of the next neighbour, length).
        routes: Vec<(usize, Vec<usize>)>,
    }

    fn shape() -> impl Strategy<Value = Shape> {
        (2..10usize).prop_flat_map(|n| {
            let links = prop::collection::vec((0..n, 0..n, prop::bool::weighted(0.2)), 0..14);
            let pairs = prop::collection::vec((0..n, 0..n), 0..8);
            let channel = prop::option::weighted(0.4, (0..(1u32 << n), pairs, prop::option::of(0..n)));
            let flows = prop::collection::vec((0..n, 0..n, prop::option::weighted(0.3, 0..n)), 1..6);
            let routes = prop::collection::vec((0..n, prop::collection::vec(0..8usize, 1..6)), 0..4);
            (Just(n), links, channel, flows, routes)
                .prop_map(|(nodes, links, channel, flows, routes)| Shape { nodes, links, channel, flows, routes })
        })
    }

    /// The network of `s` (its flows and routes set after reading, so that the table is built
    /// for networks a scenario file would have refused too).
    fn network_of(s: &Shape) -> NetworkConfig {
        let mut t = String::from("[nodes]\n");
        for i in 0..s.nodes {
            t += &format!("n{i} = {{}}\n");
        }
        let mut seen = vec![(0, 1)];
        t += "[[links]]\nbetween = [\"n0\", \"n1\"]\nrate = \"1Mbps\"\n";
        for &(a, b, oneway) in &s.links {
            if a != b && !seen.contains(&(a, b)) && !seen.contains(&(b, a)) {
                seen.push((a, b));
                t += &format!("[[links]]\nbetween = [\"n{a}\", \"n{b}\"]\nrate = \"1Mbps\"\noneway = {oneway}\n");
            }
        }
        if let Some((mask, pairs, ap)) = &s.channel {
            let members: Vec<usize> = (0..s.nodes).filter(|i| mask >> i & 1 == 1).collect();
            if members.len() >= 2 {
                let list: Vec<String> = members.iter().map(|m| format!("\"n{m}\"")).collect();
                t += &format!("[[channels]]\nname = \"w\"\nnodes = [{}]\ndata_rate = \"2Mbps\"\nbasic_rate = \"2Mbps\"\n", list.join(", "));
                match ap.filter(|a| members.contains(a)) {
                    Some(a) => t += &format!("ap = \"n{a}\"\n"),
                    None => {
                        let hears: Vec<String> = pairs
                            .iter()
                            .filter(|(a, b)| a != b && members.contains(a) && members.contains(b))
                            .map(|(a, b)| format!("[\"n{a}\", \"n{b}\"]"))
                            .collect();
                        if !hears.is_empty() {
                            t += &format!("hears = [{}]\n", hears.join(", "));
                        }
                    }
                }
            }
        }
        t += "[[flows]]\nname = \"f\"\nfrom = \"n0\"\nto = \"n1\"\ntraffic = { kind = \"bulk\", bytes = \"1kB\" }\n";
        let mut net = Scenario::from_toml(&t).unwrap_or_else(|e| panic!("{e}\n{t}")).into_network().unwrap();
        let base = net.flows[0].clone();
        let node = |i: usize| (format!("n{i}"), NodeId(i as u32));
        net.flows = s
            .flows
            .iter()
            .filter(|(a, b, _)| a != b)
            .map(|&(a, b, at)| {
                let mut f = base.clone();
                (f.from, f.src) = node(a);
                (f.to, f.dst) = node(b);
                f.split = at.filter(|&x| x != a && x != b).map(|x| SplitConfig {
                    at: node(x).0,
                    node: node(x).1,
                    tcp: base.tcp.clone(),
                    buffer: 1,
                });
                f
            })
            .collect();
        let ifaces = RouteTable::build(&NetworkConfig { flows: vec![], ..net.clone() }).unwrap().ifaces;
        net.routes = s
            .routes
            .iter()
            .filter_map(|(first, choices)| {
                let mut hops = vec![*first];
                for c in choices {
                    let at = *hops.last().unwrap();
                    let ahead: Vec<usize> =
                        ifaces.iter().filter(|e| e.from.index() == at && !hops.contains(&e.to.index())).map(|e| e.to.index()).collect();
                    if ahead.is_empty() {
                        break;
                    }
                    hops.push(ahead[c % ahead.len()]);
                }
                (hops.len() >= 2).then(|| hops.iter().map(|&h| node(h).0).collect())
            })
            .collect();
        net
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        /// Leaves, one-way links, channels, split nodes and explicit routes (loops included):
        /// the table gives every route the whole-network search gives, and refuses alike.
        #[test]
        fn routes_are_those_of_a_search_over_the_whole_network(s in shape()) {
            let net = network_of(&s);
            let built = RouteTable::build(&net);
            let ifaces = RouteTable::build(&NetworkConfig { flows: vec![], routes: vec![], ..net.clone() }).unwrap().ifaces;
            match (built, every_next_hop(&net, &ifaces)) {
                (Err(a), Err(b)) => prop_assert_eq!(a, b),
                (Ok(t), Ok(next)) => {
                    prop_assert_eq!(&t.ifaces, &ifaces);
                    for (&k, &i) in &t.next {
                        let (u, d) = ((k >> 32) as usize, (k & 0xFFFF_FFFF) as usize);
                        prop_assert_eq!(next[u][d], Some(i), "next hop of n{} towards n{}", u, d);
                    }
                    let id = |name: &str| NodeId(name[1..].parse::<u32>().unwrap());
                    let mut wanted = Vec::new();
                    for f in &net.flows {
                        wanted.extend([(f.src, f.dst), (f.dst, f.src)]);
                        if let Some(x) = &f.split {
                            wanted.extend([(f.src, x.node), (x.node, f.src), (x.node, f.dst), (f.dst, x.node)]);
                        }
                    }
                    for hops in &net.routes {
                        let dest = id(hops.last().unwrap());
                        wanted.extend(hops.iter().map(|h| (id(h), dest)));
                    }
                    for (a, b) in wanted {
                        prop_assert_eq!(t.path(a, b), walk(&next, &ifaces, a, b), "path n{} -> n{}", a.0, b.0);
                    }
                }
                (a, b) => prop_assert!(false, "table {:?}, search {:?}", a.err(), b.err()),
            }
        }
    }
}
