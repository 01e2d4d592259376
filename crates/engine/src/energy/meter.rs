//! The per-node energy meter. During the run it only records when the radio transmits and receives
//! (the CPU meter records busy intervals); at the end it lays out the radio's state over the
//! measurement window under the power-management policy and integrates power over time:
//!
//! ```text
//! E      = P_base*W + sum over radio states s of P_s*t_s + E_transitions + E_cpu
//! E_idle = energy drawn while the whole node is idle (no tx/rx, CPU not busy)
//! E_I    = E - E_idle                     (seed 000 §2; seed 002 §3)
//! ```

use super::cpu::CpuMeter;
use super::profile::DeviceProfile;
use crate::config::RadioPolicy;
use crate::units::{SimDuration, SimTime};
use serde::Serialize;

/// Radio states, in precedence order when activities overlap (tx wins over rx).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RadioState {
    Tx,
    Rx,
    Idle,
    Sleep,
    Waking,
}

impl RadioState {
    pub fn name(self) -> &'static str {
        match self {
            RadioState::Tx => "tx",
            RadioState::Rx => "rx",
            RadioState::Idle => "idle",
            RadioState::Sleep => "sleep",
            RadioState::Waking => "waking",
        }
    }
}

/// What the radio did during the run: transmit intervals (in start order, since one link starts
/// one frame at a time; a frame whose airtime outlasts the next frame's start merges with it) and
/// receive intervals (any order), and the start and IP size of every frame for the frame counts.
#[derive(Debug, Clone, Default)]
pub struct RadioLog {
    tx: Vec<(u64, u64)>,
    rx: Vec<(u64, u64)>,
    tx_frames: Vec<(u64, u32)>,
    rx_frames: Vec<(u64, u32)>,
}

/// Frames a radio sent and heard within the measurement window (those whose airtime began before
/// its end), with their IP bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FrameCounts {
    pub tx_frames: u64,
    pub tx_bytes: u64,
    pub rx_frames: u64,
    pub rx_bytes: u64,
}

impl RadioLog {
    /// A log with room for about `packets` transmissions and receptions.
    pub fn with_capacity(packets: usize) -> Self {
        Self {
            tx: Vec::with_capacity(packets),
            rx: Vec::with_capacity(packets),
            tx_frames: Vec::with_capacity(packets),
            rx_frames: Vec::with_capacity(packets),
        }
    }

    /// The radio is in tx during `[start, end)` (no frame counted).
    #[inline]
    pub fn transmit(&mut self, start: SimTime, end: SimTime) {
        match self.tx.last_mut() {
            Some(last) if last.1 >= start.0 => last.1 = last.1.max(end.0),
            _ => self.tx.push((start.0, end.0)),
        }
    }
    /// The radio is in rx during `[start, end)` (no frame counted).
    #[inline]
    pub fn receive(&mut self, start: SimTime, end: SimTime) {
        self.rx.push((start.0, end.0));
    }
    /// The radio transmits a frame carrying `ip_len` IP bytes during `[start, end)`.
    #[inline]
    pub fn transmit_frame(&mut self, start: SimTime, end: SimTime, ip_len: u32) {
        self.transmit(start, end);
        self.tx_frames.push((start.0, ip_len));
    }
    /// The radio receives a frame carrying `ip_len` IP bytes during `[start, end)`.
    #[inline]
    pub fn receive_frame(&mut self, start: SimTime, end: SimTime, ip_len: u32) {
        self.receive(start, end);
        self.rx_frames.push((start.0, ip_len));
    }

    /// Frames whose airtime began before `w`.
    pub fn frames_before(&self, w: SimTime) -> FrameCounts {
        let count = |frames: &[(u64, u32)]| {
            frames.iter().filter(|f| f.0 < w.0).fold((0, 0), |(n, b), f| (n + 1, b + f.1 as u64))
        };
        let ((tx_frames, tx_bytes), (rx_frames, rx_bytes)) = (count(&self.tx_frames), count(&self.rx_frames));
        FrameCounts { tx_frames, tx_bytes, rx_frames, rx_bytes }
    }
}

/// Energy breakdown by component (J); the fields sum to the total.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Breakdown {
    pub base: f64,
    pub radio_tx: f64,
    pub radio_rx: f64,
    pub radio_idle: f64,
    pub radio_sleep: f64,
    pub radio_transitions: f64,
    pub cpu: f64,
}

impl Breakdown {
    pub fn total(&self) -> f64 {
        self.base + self.radio_tx + self.radio_rx + self.radio_idle + self.radio_sleep + self.radio_transitions + self.cpu
    }
}

/// One node's energy over the measurement window.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NodeEnergy {
    pub total_j: f64,
    pub idle_j: f64,
    pub idealized_j: f64,
    pub per_bit_total_uj: f64,
    pub per_bit_idealized_uj: f64,
    pub breakdown_j: Breakdown,
    /// Seconds the whole node was idle (no tx/rx, CPU not busy).
    pub idle_s: f64,
    pub radio_tx_s: f64,
    pub radio_rx_s: f64,
    pub radio_sleep_s: f64,
    pub cpu_busy_s: f64,
    pub radio_wakeups: u64,
    /// Frames the radio transmitted within the window (airtime begun before its end), lost ones
    /// included, and their IP bytes.
    pub radio_tx_frames: u64,
    pub radio_tx_bytes: u64,
    /// Frames the radio received within the window, and their IP bytes.
    pub radio_rx_frames: u64,
    pub radio_rx_bytes: u64,
}

/// The radio's state over `[0, W)` as contiguous segments `(start, end, state)`.
pub type RadioTimeline = Vec<(u64, u64, RadioState)>;

/// Sort and merge possibly-overlapping intervals (clipped to `[0, w)`) into disjoint ones.
fn union(mut v: Vec<(u64, u64)>, w: u64) -> Vec<(u64, u64)> {
    // Usually sorted already (transmission and arrival order); sort only when reordering broke it.
    if !v.is_sorted_by_key(|iv| iv.0) {
        v.sort_by_key(|iv| iv.0);
    }
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(v.len());
    for (s, e) in v {
        let (s, e) = (s.min(w), e.min(w));
        if s >= e {
            continue;
        }
        match out.last_mut() {
            Some(last) if last.1 >= s => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

/// Lay the tx and rx activity out in time with tx taking precedence, then fill the gaps according
/// to the power-management policy.
pub fn radio_timeline(log: RadioLog, w: SimTime, policy: RadioPolicy, timeout: SimDuration, wake: SimDuration) -> RadioTimeline {
    let w = w.0;
    let tx = union(log.tx, w);
    let rx = union(log.rx, w);
    // Receive time not covered by transmission, in time order (both lists are sorted, disjoint).
    let mut rx_only: Vec<(u64, u64)> = Vec::with_capacity(rx.len());
    let mut ti = 0;
    for &(rs, re) in &rx {
        while ti < tx.len() && tx[ti].1 <= rs {
            ti += 1;
        }
        let (mut cur, mut k) = (rs, ti);
        while cur < re {
            if k < tx.len() && tx[k].0 < re {
                if tx[k].0 > cur {
                    rx_only.push((cur, tx[k].0));
                }
                cur = cur.max(tx[k].1);
                k += 1;
            } else {
                rx_only.push((cur, re));
                cur = re;
            }
        }
    }
    // Merge the two sorted lists into busy segments.
    let mut busy: Vec<(u64, u64, RadioState)> = Vec::with_capacity(tx.len() + rx_only.len());
    let (mut a, mut b) = (0, 0);
    while a < tx.len() || b < rx_only.len() {
        if b >= rx_only.len() || (a < tx.len() && tx[a].0 <= rx_only[b].0) {
            busy.push((tx[a].0, tx[a].1, RadioState::Tx));
            a += 1;
        } else {
            busy.push((rx_only[b].0, rx_only[b].1, RadioState::Rx));
            b += 1;
        }
    }

    // Fill the gaps between busy segments per policy.
    let mut out: RadioTimeline = Vec::with_capacity(busy.len() * 2 + 1);
    let mut t = 0u64;
    let fill = |out: &mut RadioTimeline, a: u64, b: u64, followed_by_activity: bool| {
        if a >= b {
            return;
        }
        match policy {
            RadioPolicy::AlwaysOn => out.push((a, b, RadioState::Idle)),
            RadioPolicy::Ideal => out.push((a, b, RadioState::Sleep)),
            RadioPolicy::IdleTimeout => {
                let wake_need = if followed_by_activity { wake.0 } else { 0 };
                if b - a > timeout.0 + wake_need {
                    out.push((a, a + timeout.0, RadioState::Idle));
                    out.push((a + timeout.0, b - wake_need, RadioState::Sleep));
                    if wake_need > 0 {
                        out.push((b - wake_need, b, RadioState::Waking));
                    }
                } else {
                    out.push((a, b, RadioState::Idle));
                }
            }
        }
    };
    for &(s, e, st) in &busy {
        if s > t {
            fill(&mut out, t, s, true);
        }
        let s = s.max(t);
        if e > s {
            out.push((s, e, st));
            t = e;
        }
    }
    fill(&mut out, t, w, false);
    out
}

/// Integrate one node's power over `[0, w)`; `frames` are the radio's frame counts in the window.
pub fn node_energy(
    profile: &DeviceProfile,
    timeline: &RadioTimeline,
    cpu: &mut CpuMeter,
    w: SimTime,
    delivered_bytes: u64,
    frames: FrameCounts,
) -> NodeEnergy {
    let r = &profile.radio;
    let base_w = profile.platform.base_power_w;
    let cpu_w = cpu.active_power_w();
    let wns = w.0;
    let secs = |ns: u64| ns as f64 * 1e-9;
    let cpu_busy: Vec<(u64, u64)> =
        cpu.busy_intervals().iter().map(|&(s, e)| (s.0.min(wns), e.0.min(wns))).filter(|(s, e)| s < e).collect();

    let mut b = Breakdown { base: base_w * secs(wns), ..Default::default() };
    let (mut tx_ns, mut rx_ns, mut sleep_ns, mut idle_ns, mut wakeups) = (0u64, 0u64, 0u64, 0u64, 0u64);
    let mut idle_j = 0.0;
    let mut ci = 0usize;
    for &(s, e, st) in timeline {
        let len = e - s;
        let p = match st {
            RadioState::Tx => r.tx_power_w,
            RadioState::Rx => r.rx_power_w,
            RadioState::Idle => r.idle_power_w,
            RadioState::Sleep => r.sleep_power_w,
            RadioState::Waking => r.wake_power_w,
        };
        let j = p * secs(len);
        match st {
            RadioState::Tx => {
                b.radio_tx += j;
                tx_ns += len
            }
            RadioState::Rx => {
                b.radio_rx += j;
                rx_ns += len
            }
            RadioState::Idle => b.radio_idle += j,
            RadioState::Sleep => {
                b.radio_sleep += j;
                sleep_ns += len
            }
            RadioState::Waking => {
                b.radio_transitions += j;
                wakeups += 1
            }
        }
        if matches!(st, RadioState::Idle | RadioState::Sleep | RadioState::Waking) {
            // System idle = this radio-idle stretch minus the time the CPU was busy within it.
            while ci < cpu_busy.len() && cpu_busy[ci].1 <= s {
                ci += 1;
            }
            let mut overlap = 0;
            let mut k = ci;
            while k < cpu_busy.len() && cpu_busy[k].0 < e {
                overlap += cpu_busy[k].1.min(e) - cpu_busy[k].0.max(s);
                k += 1;
            }
            let free = len - overlap;
            idle_ns += free;
            idle_j += (base_w + p) * secs(free);
        }
    }
    let cpu_ns: u64 = cpu_busy.iter().map(|(s, e)| e - s).sum();
    b.cpu = cpu_w * secs(cpu_ns);
    let total = b.total();
    let idealized = total - idle_j;
    let bits = delivered_bytes as f64 * 8.0;
    let per_bit = |j: f64| if bits > 0.0 { j / bits * 1e6 } else { f64::NAN };
    NodeEnergy {
        total_j: total,
        idle_j,
        idealized_j: idealized,
        per_bit_total_uj: per_bit(total),
        per_bit_idealized_uj: per_bit(idealized),
        breakdown_j: b,
        idle_s: secs(idle_ns),
        radio_tx_s: secs(tx_ns),
        radio_rx_s: secs(rx_ns),
        radio_sleep_s: secs(sleep_ns),
        cpu_busy_s: secs(cpu_ns),
        radio_wakeups: wakeups,
        radio_tx_frames: frames.tx_frames,
        radio_tx_bytes: frames.tx_bytes,
        radio_rx_frames: frames.rx_frames,
        radio_rx_bytes: frames.rx_bytes,
    }
}

/// Instantaneous power at time `t` from the timeline (base + radio; CPU added by the caller).
pub fn radio_state_at(timeline: &RadioTimeline, t: u64) -> Option<RadioState> {
    let i = timeline.partition_point(|seg| seg.1 <= t);
    timeline.get(i).filter(|seg| seg.0 <= t).map(|seg| seg.2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tx_takes_precedence_over_overlapping_rx() {
        let mut log = RadioLog::default();
        log.transmit(SimTime(10), SimTime(20));
        log.receive(SimTime(15), SimTime(30));
        log.receive(SimTime(0), SimTime(12));
        let tl = radio_timeline(log, SimTime(40), RadioPolicy::AlwaysOn, SimDuration(0), SimDuration(0));
        assert_eq!(
            tl,
            vec![
                (0, 10, RadioState::Rx),
                (10, 20, RadioState::Tx),
                (20, 30, RadioState::Rx),
                (30, 40, RadioState::Idle)
            ]
        );
    }

    #[test]
    fn idle_timeout_sleeps_after_timeout_and_wakes_before_activity() {
        let mut log = RadioLog::default();
        log.transmit(SimTime(0), SimTime(10));
        log.transmit(SimTime(100), SimTime(110));
        let tl = radio_timeline(log, SimTime(200), RadioPolicy::IdleTimeout, SimDuration(20), SimDuration(5));
        assert_eq!(
            tl,
            vec![
                (0, 10, RadioState::Tx),
                (10, 30, RadioState::Idle),
                (30, 95, RadioState::Sleep),
                (95, 100, RadioState::Waking),
                (100, 110, RadioState::Tx),
                (110, 130, RadioState::Idle),
                (130, 200, RadioState::Sleep)
            ]
        );
    }

    #[test]
    fn short_gaps_stay_idle_under_idle_timeout() {
        let mut log = RadioLog::default();
        log.transmit(SimTime(0), SimTime(10));
        log.transmit(SimTime(30), SimTime(40));
        let tl = radio_timeline(log, SimTime(40), RadioPolicy::IdleTimeout, SimDuration(20), SimDuration(5));
        assert_eq!(tl[1], (10, 30, RadioState::Idle));
    }
}
