//! Shared helpers for the engine's integration tests: scenarios built from TOML snippets.
#![allow(dead_code)]

use tcpenergy_engine::result::network::NetRunResult;
use tcpenergy_engine::{run, RunOptions, RunResult, Scenario};

/// A network node's radio time in every state; it must equal the measurement window.
pub fn radio_seconds(r: &NetRunResult, node: &str) -> f64 {
    let e = &r.nodes[node].energy;
    e.radio_tx_s + e.radio_rx_s + e.radio_overhear_s + e.radio_idle_s + e.radio_sleep_s + e.radio_waking_s
}

/// The standard single-path scenario (2 Mbit/s, 20 ms each way), with `extra` TOML appended.
pub fn scenario(variant: &str, bytes: &str, forward_impairments: &str, extra: &str) -> Scenario {
    let variant_line = format!("variant = \"{variant}\"\n");
    let extra = if extra.contains("[tcp]\n") {
        extra.replacen("[tcp]\n", &format!("[tcp]\n{variant_line}"), 1)
    } else {
        format!("{extra}\n[tcp]\n{variant_line}")
    };
    let text = format!(
        r#"
name = "test"
[path]
mtu = 1500
[path.forward]
rate = "2Mbps"
delay = "20ms"
queue = 100
impairments = [{forward_impairments}]
[path.reverse]
rate = "2Mbps"
delay = "20ms"
queue = 100
[traffic]
kind = "bulk"
bytes = "{bytes}"
{extra}
"#
    );
    Scenario::from_toml(&text).unwrap_or_else(|e| panic!("bad test scenario: {e}\n{text}"))
}

pub fn run_seed(s: &Scenario, seed: u64) -> RunResult {
    run(s, seed, RunOptions::default()).expect("run succeeds")
}

use tcpenergy_engine::energy::cpu::CpuMeter;
use tcpenergy_engine::tcp::endpoint::{Endpoint, Role};
use tcpenergy_engine::tcp::segment::Segment;
use tcpenergy_engine::units::{SimDuration, SimTime};

/// Transmission time of every segment in the [`Pair`] harness.
pub const PAIR_TX_TIME: SimDuration = SimDuration(1_000_000);

/// A segment on the wire in the [`Pair`] harness.
#[derive(Debug, Clone, Copy)]
pub struct Sent {
    pub at: SimTime,
    /// 0 = the data sender, 1 = the receiver.
    pub from: usize,
    pub seg: Segment,
    pub dropped: bool,
}

/// Two sans-I/O endpoints joined by a path with a fixed one-way delay and a fixed transmission
/// time per segment (1 ms, so back-to-back segments arrive 1 ms apart); a drop rule decides which
/// segments vanish. Every transmission is logged, so tests read as
/// timelines (the quinn `Pair` / ns-3 drop-segment-N style).
pub struct Pair {
    pub eps: [Endpoint; 2],
    cpus: [CpuMeter; 2],
    pub now: SimTime,
    delay: SimDuration,
    free_at: [SimTime; 2],
    in_flight: Vec<(SimTime, u64, usize, Segment)>,
    seq: u64,
    pub log: Vec<Sent>,
    drop: Box<dyn FnMut(usize, &Segment, &[Sent]) -> bool>,
    /// Sets CE on ECN-capable segments it returns true for (a marking router).
    pub mark: Option<Box<dyn FnMut(usize, &Segment, &[Sent]) -> bool>>,
    /// Extra one-way delay for the segments it names (reordering, delay spikes).
    pub extra_delay: Option<Box<dyn FnMut(usize, &Segment, &[Sent]) -> SimDuration>>,
}

impl Pair {
    pub fn new(s: &Scenario, one_way: SimDuration, drop: impl FnMut(usize, &Segment, &[Sent]) -> bool + 'static) -> Self {
        let end = |role, bytes| Endpoint::new(s, role, bytes).expect("a single-path scenario");
        let mut p = Pair {
            eps: [end(Role::Active, s.traffic().expect("a single-path scenario").bytes), end(Role::Passive, 0)],
            cpus: [CpuMeter::disabled(), CpuMeter::disabled()],
            now: SimTime::ZERO,
            delay: one_way,
            free_at: [SimTime::ZERO; 2],
            in_flight: Vec::new(),
            seq: 0,
            log: Vec::new(),
            drop: Box::new(drop),
            mark: None,
            extra_delay: None,
        };
        p.flush(0);
        p
    }

    fn flush(&mut self, n: usize) {
        while let Some(mut seg) = self.eps[n].poll_transmit(self.now) {
            self.cpus[n].absorb(self.eps[n].ops());
            if seg.ecn == tcpenergy_engine::tcp::segment::Ecn::Ect {
                if let Some(mark) = &mut self.mark {
                    if mark(n, &seg, &self.log) {
                        seg.ecn = tcpenergy_engine::tcp::segment::Ecn::Ce;
                    }
                }
            }
            let dropped = (self.drop)(n, &seg, &self.log);
            let depart = self.now.max(self.free_at[n]);
            self.free_at[n] = depart + PAIR_TX_TIME;
            self.log.push(Sent { at: depart, from: n, seg, dropped });
            if !dropped {
                let extra = self.extra_delay.as_mut().map_or(SimDuration::ZERO, |f| f(n, &seg, &self.log));
                self.in_flight.push((depart + self.delay + extra, self.seq, 1 - n, seg));
                self.seq += 1;
            }
        }
    }

    /// Process the next event; false when nothing is left.
    pub fn step(&mut self) -> bool {
        let next_arrival = self.in_flight.iter().map(|x| (x.0, x.1)).min();
        let timers = [self.eps[0].poll_timeout(), self.eps[1].poll_timeout()];
        let next_timer = timers.iter().enumerate().filter_map(|(i, t)| t.map(|t| (t, i))).min();
        match (next_arrival, next_timer) {
            (None, None) => false,
            (Some((ta, sq)), t) if t.map_or(true, |(tt, _)| ta <= tt) => {
                let i = self.in_flight.iter().position(|x| x.1 == sq).unwrap();
                let (at, _, to, seg) = self.in_flight.remove(i);
                self.now = at;
                self.eps[to].on_segment(at, &seg);
                self.cpus[to].absorb(self.eps[to].ops());
                self.flush(to);
                true
            }
            (_, Some((tt, n))) => {
                self.now = tt;
                self.eps[n].on_timeout(tt);
                self.cpus[n].absorb(self.eps[n].ops());
                self.flush(n);
                true
            }
            _ => unreachable!(),
        }
    }

    pub fn run_until_closed(&mut self, limit: SimTime) {
        while self.now < limit && !(self.eps[0].is_closed() && self.eps[1].is_closed()) {
            if !self.step() {
                break;
            }
        }
    }

    /// The application at endpoint `n` reads up to `max` bytes (an endpoint that reads on
    /// demand), and whatever that makes the endpoint send (a window update) goes out.
    pub fn app_read(&mut self, n: usize, max: u64) -> u64 {
        let got = self.eps[n].read(max);
        self.flush(n);
        got
    }

    /// Transmissions by `from` carrying data that starts at `seq`.
    pub fn sends_of(&self, from: usize, seq: u64) -> Vec<Sent> {
        self.log.iter().filter(|s| s.from == from && s.seg.seq == seq && s.seg.len > 0).copied().collect()
    }
}

/// Drop the first transmission of the data segments whose index (0-based) is listed.
pub fn drop_first_tx_of(smss: u32, indices: &'static [u64]) -> impl FnMut(usize, &Segment, &[Sent]) -> bool {
    move |from, seg, log| {
        from == 0
            && seg.len > 0
            && indices.iter().any(|&i| seg.seq == 1 + i * smss as u64)
            && !log.iter().any(|s| s.from == 0 && s.seg.seq == seg.seq && s.seg.len > 0)
    }
}

/// A scenario file as the Python package reads it (`tcpenergy/trace_files.py`): a link's `trace`
/// given as a file's path, relative to the scenario file, becomes the inline table the engine
/// takes, `{ name, ms }`. The engine itself reads no files.
pub fn read_scenario_file(path: &std::path::Path) -> Scenario {
    Scenario::from_value(&read_scenario_document(path)).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The document of a scenario file with its traces inlined, as [`read_scenario_file`] reads it.
pub fn read_scenario_document(path: &std::path::Path) -> serde_json::Value {
    use serde_json::{json, Value};
    let text = std::fs::read_to_string(path).unwrap();
    let mut doc: Value = toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let inline = |t: &mut Value| {
        if let Some(file) = t.get("trace").and_then(Value::as_str).map(|f| path.parent().unwrap().join(f)) {
            let lines = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            let ms: Vec<u64> = lines.lines().map(|l| l.trim().parse().unwrap()).collect();
            t["trace"] = json!({ "name": file.file_name().unwrap().to_str().unwrap(), "ms": ms });
        }
    };
    for dir in ["forward", "reverse"] {
        if let Some(t) = doc.get_mut("path").and_then(|p| p.get_mut(dir)) {
            inline(t);
        }
    }
    if let Some(links) = doc.get_mut("links").and_then(Value::as_array_mut) {
        for link in links {
            inline(link);
            for dir in ["forward", "reverse"] {
                if let Some(t) = link.get_mut(dir) {
                    inline(t);
                }
            }
        }
    }
    doc
}

/// Every scenario file shipped under `scenarios/`, in name order.
pub fn scenario_files() -> Vec<std::path::PathBuf> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().and_then(|e| e.to_str()) == Some("toml"))
        .collect();
    files.sort();
    files
}
