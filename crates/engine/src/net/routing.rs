//! Static routing: each node forwards a packet by its destination along the shortest path in hops,
//! computed once before the run (ties go to the interface listed first). Explicit `routes`
//! override the next hop at every node they name, for their last node as destination, as a static
//! route in an IP forwarding table would.

use crate::config::network::{IfaceId, NetworkConfig, NodeId};
use std::collections::VecDeque;

/// An interface: packets leave `from` towards its neighbour `to`, over a link or a channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IfaceEnds {
    pub via: Via,
    pub from: NodeId,
    pub to: NodeId,
}

/// What carries an interface's packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// One direction of link `link` (`reverse`: second node -> first).
    Link { link: usize, reverse: bool },
    /// Channel `channel`, from its station `from` to its station `to`.
    Channel { channel: usize, from: usize, to: usize },
}

/// Every interface of the network, in link order (forward then reverse), then each channel's
/// (every ordered pair of its stations where the second hears the first), and the next hop of
/// every node towards every node that some flow sends to.
#[derive(Debug, Clone, PartialEq)]
pub struct RouteTable {
    pub ifaces: Vec<IfaceEnds>,
    /// `next[node][dest]`: the interface a packet for `dest` leaves `node` by.
    next: Vec<Vec<Option<IfaceId>>>,
}

/// Why a route could not be built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RouteError {
    /// Flow `flow` has no path from its source to its destination (or back, for TCP's ACKs).
    NoRoute { flow: usize, from: String, to: String },
    /// An explicit route sends packets around a loop.
    Loop { route: usize, at: String },
}

impl RouteTable {
    pub fn build(net: &NetworkConfig) -> Result<Self, RouteError> {
        let n = net.nodes.len();
        let mut ifaces = Vec::with_capacity(net.links.len() * 2);
        for (k, l) in net.links.iter().enumerate() {
            ifaces.push(IfaceEnds { via: Via::Link { link: k, reverse: false }, from: l.ends[0], to: l.ends[1] });
            if l.reverse.is_some() {
                ifaces.push(IfaceEnds { via: Via::Link { link: k, reverse: true }, from: l.ends[1], to: l.ends[0] });
            }
        }
        for (k, c) in net.channels.iter().enumerate() {
            for (a, &from) in c.members.iter().enumerate() {
                for (b, &to) in c.members.iter().enumerate() {
                    if c.reaches(a, b) {
                        ifaces.push(IfaceEnds { via: Via::Channel { channel: k, from: a, to: b }, from, to });
                    }
                }
            }
        }
        let mut out: Vec<Vec<IfaceId>> = vec![Vec::new(); n];
        let mut inc: Vec<Vec<IfaceId>> = vec![Vec::new(); n];
        for (i, f) in ifaces.iter().enumerate() {
            out[f.from.index()].push(IfaceId(i as u32));
            inc[f.to.index()].push(IfaceId(i as u32));
        }
        let mut next = vec![vec![None; n]; n];
        let mut wanted = vec![false; n];
        for f in &net.flows {
            wanted[f.dst.index()] = true;
            wanted[f.src.index()] = true;
            if let Some(split) = &f.split {
                // Both split connections end there.
                wanted[split.node.index()] = true;
            }
        }
        for dest in (0..n).filter(|&d| wanted[d]) {
            // Hop distance of every node to `dest`, walking interfaces backwards.
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
            for u in 0..n {
                if u == dest || dist[u] == u32::MAX {
                    continue;
                }
                next[u][dest] = out[u].iter().copied().find(|i| dist[ifaces[i.index()].to.index()] == dist[u] - 1);
            }
        }
        let id = |name: &str| net.node_id(name).expect("route nodes were checked");
        for hops in &net.routes {
            let dest = id(hops.last().expect("routes have two nodes or more"));
            for w in hops.windows(2) {
                let (a, b) = (id(&w[0]), id(&w[1]));
                next[a.index()][dest.index()] = out[a.index()].iter().copied().find(|i| ifaces[i.index()].to == b);
            }
        }
        let table = RouteTable { ifaces, next };
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

    /// The interface a packet for `dest` leaves `node` by.
    #[inline]
    pub fn next_hop(&self, node: NodeId, dest: NodeId) -> Option<IfaceId> {
        self.next[node.index()][dest.index()]
    }

    /// The interfaces from `a` to `b`, or `None` when there is no path (or a loop).
    pub fn path(&self, a: NodeId, b: NodeId) -> Option<Vec<IfaceId>> {
        let mut hops = Vec::new();
        let mut at = a;
        while at != b {
            let i = self.next_hop(at, b)?;
            hops.push(i);
            if hops.len() > self.next.len() {
                return None;
            }
            at = self.ifaces[i.index()].to;
        }
        Some(hops)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Scenario;

    fn net(extra: &str) -> NetworkConfig {
        let text = format!("{extra}\n{}", include_str!("../../tests/data/diamond.toml"));
        Scenario::from_toml(&text).unwrap().network.unwrap()
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
}
