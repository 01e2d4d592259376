//! The energy of a capture: one node's packets, as a capture taken at that node saw them (what
//! it sent, stamped when it began sending; what it received, stamped when it arrived), metered
//! by a device profile's radio and CPU model (docs/emulation.md, "Energy of a capture").
//!
//! Each packet the node sent keeps its radio transmitting for the profile's PHY airtime of it
//! from its timestamp; each packet it received keeps it receiving for that airtime up to its
//! timestamp. The CPU is charged the per-packet operations read off the headers, as kernel mode
//! charges them (`world`), and the card interface per packet. Traffic the node neither sent nor
//! received (a capture in monitor mode) is counted and left out.

use super::ip::{Ipv4, Tcp, SYN, ACK};
use super::observe::Connection;
use super::world::{charge_received, charge_sent};
use crate::config::Scenario;
use crate::energy::cpu::{CpuMeter, Op, OP_KINDS};
use crate::energy::meter::{self, NodeEnergy, RadioLog};
use crate::error::EngineError;
use crate::result::FlowResult;
use crate::units::{SimDuration, SimTime};
use serde::Serialize;
use std::collections::BTreeMap;

/// pcap link types this reader takes (tcpdump's LINKTYPE_* numbers).
const ETHERNET: u32 = 1;
const RAW: u32 = 101;
const LINUX_SLL: u32 = 113;
const IPV4: u32 = 228;
const LINUX_SLL2: u32 = 276;

fn bad(message: impl Into<String>) -> EngineError {
    EngineError::config("capture", message)
}

/// The IPv4 packets of a pcap file with their timestamps (ns on the capture's clock).
pub fn read_pcap(bytes: &[u8]) -> Result<Vec<(u64, Vec<u8>)>, EngineError> {
    if bytes.len() < 24 {
        return Err(bad("not a pcap file: shorter than its 24-byte header"));
    }
    let magic = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    let (little, nanos) = match magic {
        0xa1b2_c3d4 => (true, false),
        0xa1b2_3c4d => (true, true),
        0xd4c3_b2a1 => (false, false),
        0x4d3c_b2a1 => (false, true),
        0x0a0d_0d0a => return Err(bad("a pcapng file: convert it to pcap first (editcap -F pcap IN OUT)")),
        _ => return Err(bad(format!("not a pcap file (magic {magic:#010x})"))),
    };
    let u32_at = |at: usize| {
        let b = [bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]];
        if little {
            u32::from_le_bytes(b)
        } else {
            u32::from_be_bytes(b)
        }
    };
    let linktype = u32_at(20) & 0x0fff_ffff;
    let mut out = Vec::new();
    let mut at = 24;
    while at + 16 <= bytes.len() {
        let (sec, frac, caplen, len) = (u32_at(at) as u64, u32_at(at + 4) as u64, u32_at(at + 8) as usize, u32_at(at + 12));
        at += 16;
        if at + caplen > bytes.len() {
            return Err(bad(format!("truncated record at byte {}", at - 16)));
        }
        let frame = &bytes[at..at + caplen];
        at += caplen;
        if (len as usize) > caplen {
            // A packet cut short by the snap length cannot be read whole.
            continue;
        }
        let ns = sec * 1_000_000_000 + if nanos { frac } else { frac * 1000 };
        if let Some(packet) = ipv4_of(frame, linktype)? {
            out.push((ns, packet.to_vec()));
        }
    }
    Ok(out)
}

/// The IPv4 packet a frame of link type `linktype` carries, if it carries one.
fn ipv4_of(frame: &[u8], linktype: u32) -> Result<Option<&[u8]>, EngineError> {
    let (proto, at) = match linktype {
        RAW | IPV4 => return Ok(Some(frame).filter(|f| f.first().is_some_and(|b| b >> 4 == 4))),
        ETHERNET => {
            let mut at = 12;
            let mut proto = frame.get(12..14).map(|b| u16::from_be_bytes([b[0], b[1]]));
            // 802.1Q tags.
            while proto == Some(0x8100) {
                at += 4;
                proto = frame.get(at..at + 2).map(|b| u16::from_be_bytes([b[0], b[1]]));
            }
            (proto, at + 2)
        }
        LINUX_SLL => (frame.get(14..16).map(|b| u16::from_be_bytes([b[0], b[1]])), 16),
        LINUX_SLL2 => (frame.get(0..2).map(|b| u16::from_be_bytes([b[0], b[1]])), 20),
        other => return Err(bad(format!("link type {other} is not read; captures of raw IP (101), Ethernet (1) and Linux cooked (113, 276) are"))),
    };
    Ok(if proto == Some(0x0800) { frame.get(at..) } else { None })
}

/// One TCP connection of the node, by its two ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Ends {
    local: ([u8; 4], u16),
    remote: ([u8; 4], u16),
}

/// A connection as the node saw it: whether the node opened it, and what its packets showed.
struct Seen {
    node_opened: bool,
    conn: Connection,
    sent: u64,
    received: u64,
    tx_s: f64,
    rx_s: f64,
}

/// One connection's part of the analysis.
#[derive(Debug, Serialize)]
pub struct AnalyzedFlow {
    pub local: String,
    pub remote: String,
    /// "source" when the node opened the connection (sent its SYN), else "destination".
    pub role: &'static str,
    pub packets_sent: u64,
    pub packets_received: u64,
    /// The node's radio time on this connection's packets.
    pub radio_tx_s: f64,
    pub radio_rx_s: f64,
    #[serde(flatten)]
    pub flow: FlowResult,
}

/// What the capture held, and the node's energy over the window.
#[derive(Debug, Serialize)]
pub struct Analysis {
    pub mode: &'static str,
    pub node: String,
    pub packets: u64,
    pub packets_sent: u64,
    pub packets_received: u64,
    /// Packets neither from nor to the node.
    pub packets_other: u64,
    pub window_start_s: f64,
    pub window_s: f64,
    pub energy: NodeEnergy,
    pub cpu_ops: BTreeMap<&'static str, u64>,
    pub flows: Vec<AnalyzedFlow>,
    pub engine_version: &'static str,
}

/// How long a captured frame of a cellular radio is taken to be on the air: an instant, long
/// enough to be logged as activity.
const CELLULAR_FRAME_AIR: SimDuration = SimDuration(1_000);

fn dotted(a: [u8; 4], port: u16) -> String {
    format!("{}.{}.{}.{}:{port}", a[0], a[1], a[2], a[3])
}

/// Meter node `node`'s packets in `packets` (from [`read_pcap`]) with the sender profile and
/// radio policy of `scenario` (its `energy` table, read as any scenario's), over the window
/// `[start, end)` on the capture's clock (ns; default: from the first packet to the end of the
/// last).
pub fn analyze(scenario: &Scenario, packets: &[(u64, Vec<u8>)], node: [u8; 4], window: (Option<u64>, Option<u64>)) -> Result<Analysis, EngineError> {
    let net = scenario.as_network()?;
    let cfg = &net.network().ok_or_else(|| EngineError::Invariant("a network".into()))?.nodes[0];
    let profile = &cfg.profile.profile;
    // A cellular radio (an RRC machine) has no PHY of its own: a captured frame is taken as an
    // instant on the air (docs/models/cellular.md, "From a capture"); its cost is per bit, and
    // the machine's states follow it.
    let phy = profile.radio.phy;
    if phy.is_none() && profile.radio.rrc.is_none() {
        return Err(EngineError::config(
            "profile",
            "this profile's radio has no PHY (radio.phy): a capture alone does not say how long each frame was on the air; use a profile with one (or a cellular one, with radio.rrc)",
        ));
    }
    let air = |len: u32| phy.map_or(CELLULAR_FRAME_AIR, |phy| phy.airtime(len));
    // A frame began on the air at its stamp when the node sent it, an airtime before its stamp
    // when the node received it.
    let began = |t: u64, bytes: &[u8]| match Ipv4::parse(bytes) {
        Some(h) if h.src != node => t.saturating_sub(air(h.total_len as u32).0),
        _ => t,
    };
    let start = window.0.or_else(|| packets.iter().map(|(t, b)| began(*t, b)).min()).unwrap_or(0);
    let last_end = packets.last().map_or(start, |(t, p)| t + air(p.len() as u32).0);
    let end = window.1.unwrap_or(last_end);
    if end <= start {
        return Err(EngineError::config("window", "the window ends before it starts"));
    }
    let mut cpu = CpuMeter::for_profile(profile);
    let mut radio = RadioLog::default();
    let mut seen: BTreeMap<Ends, Seen> = BTreeMap::new();
    let (mut sent, mut received, mut other) = (0u64, 0u64, 0u64);
    for (t, bytes) in packets {
        let Some(hdr) = Ipv4::parse(bytes) else { continue };
        let len = hdr.total_len as u32;
        let a = air(len);
        let outgoing = hdr.src == node;
        // A frame belongs to the window when it began on the air within it, as a radio log
        // counts it.
        let from = began(*t, bytes);
        if from < start || from >= end {
            continue;
        }
        let at = SimTime(t - start);
        if !outgoing && hdr.dst != node {
            other += 1;
            continue;
        }
        let tcp = Tcp::parse(bytes, &hdr);
        if outgoing {
            sent += 1;
            radio.transmit_frame(at, at + a, len);
            match &tcp {
                Some(tcp) => charge_sent(&mut cpu, at, tcp),
                None => cpu.charge(at, Op::SegmentSent { bytes: len.saturating_sub(28) }),
            }
            cpu.charge_card(at, len);
        } else {
            received += 1;
            radio.receive_frame(SimTime(from - start), at, len);
            cpu.charge_card(at, len);
            match &tcp {
                Some(tcp) => charge_received(&mut cpu, at, tcp),
                None => cpu.charge(at, Op::SegmentReceived { bytes: len.saturating_sub(28) }),
            }
        }
        if let Some(tcp) = tcp {
            observe(&mut seen, at, &hdr, &tcp, outgoing, len, a);
        }
    }
    let window_end = SimTime(end - start);
    let e = meter::node_energy_from_log(profile, radio, &mut cpu, window_end, scenario.energy.radio_policy, scenario.energy.timeout, 0);
    let flows = seen
        .into_iter()
        .map(|(ends, s)| {
            let started = s.conn.started_at.unwrap_or(SimTime::ZERO);
            let stop = s.conn.all_acked_at.unwrap_or(window_end);
            AnalyzedFlow {
                local: dotted(ends.local.0, ends.local.1),
                remote: dotted(ends.remote.0, ends.remote.1),
                role: if s.node_opened { "source" } else { "destination" },
                packets_sent: s.sent,
                packets_received: s.received,
                radio_tx_s: s.tx_s,
                radio_rx_s: s.rx_s,
                flow: s.conn.result(SimDuration(stop.0.saturating_sub(started.0)).as_secs_f64()),
            }
        })
        .collect();
    Ok(Analysis {
        mode: "analyzed",
        node: format!("{}.{}.{}.{}", node[0], node[1], node[2], node[3]),
        packets: packets.len() as u64,
        packets_sent: sent,
        packets_received: received,
        packets_other: other,
        window_start_s: start as f64 * 1e-9,
        window_s: window_end.as_secs_f64(),
        energy: e,
        cpu_ops: (0..OP_KINDS).map(|k| (Op::NAMES[k], cpu.count(k))).collect(),
        flows,
        engine_version: crate::VERSION,
    })
}

/// Follow the node's TCP connections: the one that sent a SYN without ACK opened it.
fn observe(seen: &mut BTreeMap<Ends, Seen>, at: SimTime, hdr: &Ipv4, tcp: &Tcp, outgoing: bool, len: u32, air: SimDuration) {
    let ends = if outgoing {
        Ends { local: (hdr.src, tcp.src_port), remote: (hdr.dst, tcp.dst_port) }
    } else {
        Ends { local: (hdr.dst, tcp.dst_port), remote: (hdr.src, tcp.src_port) }
    };
    let opening = tcp.flags & SYN != 0 && tcp.flags & ACK == 0;
    let s = match seen.get_mut(&ends) {
        Some(s) => s,
        None if opening => seen.entry(ends).or_insert(Seen { node_opened: outgoing, conn: Connection::default(), sent: 0, received: 0, tx_s: 0.0, rx_s: 0.0 }),
        // Its handshake is not in the capture: it cannot be followed.
        None => return,
    };
    let from_source = outgoing == s.node_opened;
    if outgoing {
        s.sent += 1;
        s.tx_s += air.as_secs_f64();
    } else {
        s.received += 1;
        s.rx_s += air.as_secs_f64();
    }
    match (from_source, outgoing) {
        (true, true) => s.conn.source_sent(at, tcp),
        (false, true) => s.conn.destination_sent(at, tcp),
        (true, false) => s.conn.destination_got(at, tcp),
        (false, false) => s.conn.source_got(at, tcp),
    }
    // Bytes count where the capture saw them: the node's as they left, the peer's as they came.
    s.conn.left_first_hop(from_source, len);
}
