//! Kernel mode: a scenario's network carrying real IPv4 packets between hosts' own TCP stacks,
//! on the wall clock, metered by the same energy model (docs/emulation.md).
//!
//! The caller makes the hosts (a network namespace and a TUN device per node that terminates a
//! flow) and runs their programs; this module runs the media between the devices. Its parts:
//! `ip` reads and edits real headers, `observe` makes a flow's record from its packets, `world`
//! is the network (media, routes, meters) without I/O, and `realtime` drives it from the devices
//! and the monotonic clock. `analyze` meters a capture taken at one node with the same model.

pub mod analyze;
pub mod ip;
pub mod observe;
#[cfg(target_os = "linux")]
pub mod realtime;
pub mod world;

use crate::config::Scenario;
use crate::error::EngineError;
use crate::result::RunResult;
use std::time::Duration;

/// pcap files: (file stem, bytes).
pub type PcapFiles = Vec<(String, Vec<u8>)>;

/// What the caller made for a run.
#[derive(Debug, Clone)]
pub struct Setup {
    /// Each host's node name, IPv4 address and TUN descriptor (this process's end); nodes not
    /// listed are routers, forwarding inside the engine.
    pub hosts: Vec<(String, [u8; 4], i32)>,
    /// The port each flow's destination listens on, in flow order.
    pub ports: Vec<u16>,
    /// A descriptor that becomes readable when the run is to end.
    pub control: i32,
    /// Simulated time 0 on the monotonic clock, ns (`realtime::monotonic_ns`); now when None.
    pub origin_ns: Option<u64>,
    /// The run ends by itself this long after its origin.
    pub limit: Duration,
    /// The largest 99th-percentile lag (ms) of a run reported complete.
    pub lag_bound_ms: f64,
    /// Keep each interface's frames, returned as pcap files.
    pub capture: bool,
}

/// Emulate `scenario` with `seed` on the devices of `setup`: the result record as JSON text,
/// with the keys of a simulated run's record (single-path or network form, as the scenario is)
/// plus `mode` ("emulated") and `emulation` (how the clock kept up, what was refused, each
/// interface's rate error), and the capture's pcap files when `setup.capture`.
#[cfg(target_os = "linux")]
pub fn run_json(scenario: &Scenario, seed: u64, setup: &Setup) -> Result<(String, PcapFiles), EngineError> {
    let net = scenario.as_network()?;
    let nodes = &net.network().ok_or_else(|| EngineError::Invariant("a network".into()))?.nodes;
    // Routers get addresses of their own in 10.255/16, never routed to a host.
    let mut addresses: Vec<[u8; 4]> = (0..nodes.len()).map(|i| [10, 255, (i >> 8) as u8, i as u8]).collect();
    let mut devices: Vec<Option<i32>> = vec![None; nodes.len()];
    for (name, address, fd) in &setup.hosts {
        let Some(i) = nodes.iter().position(|n| &n.name == name) else {
            return Err(EngineError::config("hosts", format!("no node named {name:?}")));
        };
        addresses[i] = *address;
        devices[i] = Some(*fd);
    }
    let hosts: Vec<bool> = devices.iter().map(Option::is_some).collect();
    let mut world = world::EmuWorld::new(&net, seed, &addresses, &hosts, &setup.ports)?;
    if setup.capture {
        world = world.with_capture();
    }
    let (end, report) = realtime::run(&mut world, &devices, setup.control, setup.origin_ns, setup.limit)?;
    let refused = world.refused;
    let rate_error: serde_json::Map<String, serde_json::Value> = world
        .iface_names()
        .into_iter()
        .enumerate()
        .filter_map(|(i, name)| world.timeliness.rate_error(i).map(|e| (name, serde_json::json!(e))))
        .collect();
    let stop = if report.write_errors > 0 {
        Some(format!("{} packets could not be written to their hosts' devices: lost outside the model", report.write_errors))
    } else if report.lag_p99_ms > setup.lag_bound_ms {
        Some(format!("the clock fell behind: 99th-percentile lag {:.3} ms, above the bound of {} ms", report.lag_p99_ms, setup.lag_bound_ms))
    } else if report.ended_by == "time limit" {
        Some(format!("time limit of {} s reached", setup.limit.as_secs_f64()))
    } else {
        None
    };
    let honest = report.write_errors == 0 && report.lag_p99_ms <= setup.lag_bound_ms;
    let record = world.finish(seed, end, honest, stop.clone())?;
    let mut value = match scenario.traffic() {
        Some(_) => serde_json::to_value(RunResult::of_network(record)?),
        None => serde_json::to_value(&record),
    }
    .map_err(|e| EngineError::Invariant(format!("record serializes: {e}")))?;
    let obj = value.as_object_mut().ok_or_else(|| EngineError::Invariant("a record is an object".into()))?;
    obj.insert("mode".into(), "emulated".into());
    // Said in both forms (a simulated single-path record has no `stop`): why it is incomplete.
    obj.insert("stop".into(), stop.map_or(serde_json::Value::Null, serde_json::Value::from));
    obj.insert(
        "emulation".into(),
        serde_json::json!({
            "loop": report,
            "refused": refused,
            "rate_error": rate_error,
            "lag_bound_ms": setup.lag_bound_ms,
        }),
    );
    Ok((value.to_string(), world.pcap_files()))
}

/// The energy of node `node`'s packets in the pcap file `pcap` under the sender profile and radio
/// policy of `scenario`, over `window` (ns on the capture's clock; default: the capture's span):
/// the analysis as JSON text ([`analyze::Analysis`]).
pub fn analyze_json(scenario: &Scenario, pcap: &[u8], node: [u8; 4], window: (Option<u64>, Option<u64>)) -> Result<String, EngineError> {
    let packets = analyze::read_pcap(pcap)?;
    let a = analyze::analyze(scenario, &packets, node, window)?;
    serde_json::to_string(&a).map_err(|e| EngineError::Invariant(format!("analysis serializes: {e}")))
}
