//! Time series, recorded when asked for. A flow's trace holds its source's protocol state (cwnd,
//! ssthresh, bytes in flight, RTO, CA state) after every event of that end, merged with its
//! node's power; a node's trace holds its power alone.
//!
//! Power is a step function of time, laid out at the end from the meter's radio timeline and the
//! CPU's busy intervals: a row at time 0 and at every change of the node's radio state or CPU
//! busy state within the metered window [0, w), and one at w. Between two rows power is constant,
//! so the step integral of `power_w` over [0, w] (each row's power times the time to the next
//! row) is the record's `total_j` for that node, up to float summation order
//! (docs/models/energy.md, "Traces"). Rows after w (the connection closing) are outside the
//! window: they show the radio `off` and the node's idle power, as the meter does not run there.

use crate::energy::cpu::CpuMeter;
use crate::energy::meter::{radio_state_at, RadioState, RadioTimeline};
use crate::energy::profile::DeviceProfile;
use crate::tcp::endpoint::AnySender;
use crate::units::SimTime;
use serde::Serialize;

/// The protocol state of a sender at one instant.
#[derive(Debug, Clone, Copy)]
struct Row {
    cwnd: u64,
    ssthresh: u64,
    in_flight: u64,
    rto: u64,
    ca_state: &'static str,
    ecn_reductions: u64,
}

impl Row {
    fn of(s: &AnySender) -> Self {
        Row {
            cwnd: s.state().cwnd,
            ssthresh: s.state().ssthresh.min(u32::MAX as u64),
            in_flight: s.in_flight(),
            rto: s.rto().0,
            ca_state: s.state().ca_state.name(),
            ecn_reductions: s.counters().ecn_reductions,
        }
    }
}

#[derive(Debug, Default)]
pub struct Trace {
    /// The sender's state when it was created: what power rows before its first event show.
    initial: Option<Row>,
    t: Vec<u64>,
    cwnd: Vec<u64>,
    ssthresh: Vec<u64>,
    in_flight: Vec<u64>,
    rto: Vec<u64>,
    ca_state: Vec<&'static str>,
    ecn_reductions: Vec<u64>,
}

/// Columns of equal length, ready for a data frame.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TraceColumns {
    pub t_s: Vec<f64>,
    pub cwnd_bytes: Vec<u64>,
    pub ssthresh_bytes: Vec<u64>,
    pub in_flight_bytes: Vec<u64>,
    pub rto_s: Vec<f64>,
    pub ca_state: Vec<&'static str>,
    /// ECN-Echo window reductions so far (RFC 3168 §6.1.2): a step marks a reduction.
    pub ecn_reductions: Vec<u64>,
    pub radio_state: Vec<&'static str>,
    pub power_w: Vec<f64>,
}

/// A node's power over time (a node's trace).
#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct PowerColumns {
    pub t_s: Vec<f64>,
    pub radio_state: Vec<&'static str>,
    pub power_w: Vec<f64>,
}

/// A node's power as a step function: rows (time ns, radio state, W) at 0, at every change of
/// the radio state or the CPU busy state in [0, w), and at w.
struct Steps {
    t: Vec<u64>,
    state: Vec<&'static str>,
    power_w: Vec<f64>,
}

/// The node's power at `t` (ns) in radio state `st` (`None`: beyond the radio timeline, shown as
/// `off` at idle power) with the CPU busy or not.
fn power_at(profile: &DeviceProfile, st: Option<(RadioState, f64)>, cpu_busy: bool, cpu_w: f64) -> f64 {
    let p_radio = st.map_or(profile.radio.idle_power_w, |(_, p)| p);
    profile.platform.base_power_w + p_radio + if cpu_busy { cpu_w } else { 0.0 }
}

fn steps(timeline: &RadioTimeline, profile: &DeviceProfile, busy: &[(SimTime, SimTime)], cpu_w: f64, w: u64) -> Steps {
    let mut out = Steps { t: Vec::new(), state: Vec::new(), power_w: Vec::new() };
    let (mut i, mut k, mut t) = (0, 0, 0u64);
    let cpu_end = |k: usize| busy[k].1 .0.min(w);
    while t < w {
        while i < timeline.len() && timeline[i].1 <= t {
            i += 1;
        }
        while k < busy.len() && cpu_end(k) <= t {
            k += 1;
        }
        let st = timeline.get(i).filter(|seg| seg.0 <= t).map(|seg| (seg.2, seg.3));
        let cpu = busy.get(k).is_some_and(|&(s, _)| s.0 <= t);
        let (name, p) = (st.map_or("off", |s| s.0.name()), power_at(profile, st, cpu, cpu_w));
        if out.state.last() != Some(&name) || out.power_w.last() != Some(&p) {
            out.t.push(t);
            out.state.push(name);
            out.power_w.push(p);
        }
        // The next instant either may change.
        let radio_next = match (st, timeline.get(i)) {
            (Some(_), Some(seg)) => seg.1,
            (None, Some(seg)) => seg.0,
            (_, None) => u64::MAX,
        };
        let cpu_next = match busy.get(k) {
            Some(_) if cpu => cpu_end(k),
            Some(&(s, _)) => s.0,
            None => u64::MAX,
        };
        t = radio_next.min(cpu_next).min(w).max(t + 1);
    }
    let st = radio_state_at(timeline, w);
    out.t.push(w);
    out.state.push(st.map_or("off", |s| s.0.name()));
    out.power_w.push(power_at(profile, st, false, cpu_w));
    out
}

/// A node's power trace over the window [0, w).
pub fn node_power(timeline: &RadioTimeline, profile: &DeviceProfile, cpu: &mut CpuMeter, w: SimTime) -> PowerColumns {
    let cpu_w = cpu.active_power_w();
    let s = steps(timeline, profile, cpu.busy_intervals(), cpu_w, w.0);
    PowerColumns { t_s: s.t.iter().map(|&t| t as f64 * 1e-9).collect(), radio_state: s.state, power_w: s.power_w }
}

impl Trace {
    /// The sender as it was created (before its first event).
    pub fn start(&mut self, s: &AnySender) {
        self.initial.get_or_insert(Row::of(s));
    }

    pub fn record(&mut self, now: SimTime, s: &AnySender) {
        let r = Row::of(s);
        self.t.push(now.0);
        self.cwnd.push(r.cwnd);
        self.ssthresh.push(r.ssthresh);
        self.in_flight.push(r.in_flight);
        self.rto.push(r.rto);
        self.ca_state.push(r.ca_state);
        self.ecn_reductions.push(r.ecn_reductions);
    }

    fn row(&self, k: usize) -> Row {
        Row {
            cwnd: self.cwnd[k],
            ssthresh: self.ssthresh[k],
            in_flight: self.in_flight[k],
            rto: self.rto[k],
            ca_state: self.ca_state[k],
            ecn_reductions: self.ecn_reductions[k],
        }
    }

    /// The columns: every row the sender recorded, and a row at every step of its node's power
    /// over the window [0, w) (and at w) showing the sender's state then (as it was created, for
    /// steps before its first event). A sender row shows the power in force at its time.
    pub fn finish(self, timeline: &RadioTimeline, profile: &DeviceProfile, cpu: &mut CpuMeter, w: SimTime) -> TraceColumns {
        let cpu_w = cpu.active_power_w();
        let busy = cpu.busy_intervals();
        let steps = steps(timeline, profile, busy, cpu_w, w.0);
        let n = self.t.len() + steps.t.len();
        let mut c = TraceColumns {
            t_s: Vec::with_capacity(n),
            cwnd_bytes: Vec::with_capacity(n),
            ssthresh_bytes: Vec::with_capacity(n),
            in_flight_bytes: Vec::with_capacity(n),
            rto_s: Vec::with_capacity(n),
            ca_state: Vec::with_capacity(n),
            ecn_reductions: Vec::with_capacity(n),
            radio_state: Vec::with_capacity(n),
            power_w: Vec::with_capacity(n),
        };
        let blank = Row { cwnd: 0, ssthresh: 0, in_flight: 0, rto: 0, ca_state: "open", ecn_reductions: 0 };
        let push = |c: &mut TraceColumns, t: u64, r: Row, state: &'static str, p: f64| {
            c.t_s.push(t as f64 * 1e-9);
            c.cwnd_bytes.push(r.cwnd);
            c.ssthresh_bytes.push(r.ssthresh);
            c.in_flight_bytes.push(r.in_flight);
            c.rto_s.push(r.rto as f64 * 1e-9);
            c.ca_state.push(r.ca_state);
            c.ecn_reductions.push(r.ecn_reductions);
            c.radio_state.push(state);
            c.power_w.push(p);
        };
        // Merge by time; at equal times the power step first, so the sender rows show it.
        let (mut j, mut last) = (0, self.initial.unwrap_or(blank));
        for k in 0..self.t.len() {
            let t = self.t[k];
            while j < steps.t.len() && steps.t[j] <= t {
                push(&mut c, steps.t[j], last, steps.state[j], steps.power_w[j]);
                j += 1;
            }
            let (state, p) = if t < w.0 && j > 0 {
                (steps.state[j - 1], steps.power_w[j - 1])
            } else {
                // Beyond the window: the radio is not metered there.
                let i = busy.partition_point(|&(_, e)| e.0 <= t);
                let cpu_busy = busy.get(i).is_some_and(|&(s, _)| s.0 <= t);
                let st = radio_state_at(timeline, t);
                (st.map_or("off", |s| s.0.name()), power_at(profile, st, cpu_busy, cpu_w))
            };
            last = self.row(k);
            push(&mut c, t, last, state, p);
        }
        while j < steps.t.len() {
            push(&mut c, steps.t[j], last, steps.state[j], steps.power_w[j]);
            j += 1;
        }
        c
    }
}
