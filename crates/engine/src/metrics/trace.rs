//! The sender's time series, recorded after every sender event when asked for: cwnd, ssthresh,
//! bytes in flight, RTO and CA state; radio state and instantaneous power are added at the end,
//! from the meter's radio timeline.

use crate::energy::cpu::CpuMeter;
use crate::energy::meter::{radio_state_at, RadioState, RadioTimeline};
use crate::energy::profile::DeviceProfile;
use crate::tcp::endpoint::AnySender;
use crate::units::SimTime;
use serde::Serialize;

#[derive(Debug, Default)]
pub struct Trace {
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

impl Trace {
    pub fn record(&mut self, now: SimTime, s: &AnySender) {
        self.t.push(now.0);
        self.cwnd.push(s.state().cwnd);
        self.ssthresh.push(s.state().ssthresh.min(u32::MAX as u64));
        self.in_flight.push(s.in_flight());
        self.rto.push(s.rto().0);
        self.ca_state.push(s.state().ca_state.name());
        self.ecn_reductions.push(s.counters().ecn_reductions);
    }

    pub fn finish(self, timeline: &RadioTimeline, profile: &DeviceProfile, cpu: &mut CpuMeter) -> TraceColumns {
        let r = &profile.radio;
        let cpu_power = cpu.active_power_w();
        let busy = cpu.busy_intervals();
        let mut radio_state = Vec::with_capacity(self.t.len());
        let mut power = Vec::with_capacity(self.t.len());
        for &t in &self.t {
            let st = radio_state_at(timeline, t);
            let p_radio = match st {
                Some(RadioState::Tx) => r.tx_power_w,
                Some(RadioState::Rx) => r.rx_power_w,
                Some(RadioState::Idle) | None => r.idle_power_w,
                Some(RadioState::Sleep) => r.sleep_power_w,
                Some(RadioState::Waking) => r.wake_power_w,
            };
            let i = busy.partition_point(|&(_, e)| e.0 <= t);
            let cpu_busy = busy.get(i).is_some_and(|&(s, _)| s.0 <= t);
            radio_state.push(st.map_or("off", |s| s.name()));
            power.push(profile.platform.base_power_w + p_radio + if cpu_busy { cpu_power } else { 0.0 });
        }
        TraceColumns {
            t_s: self.t.iter().map(|&t| t as f64 * 1e-9).collect(),
            cwnd_bytes: self.cwnd,
            ssthresh_bytes: self.ssthresh,
            in_flight_bytes: self.in_flight,
            rto_s: self.rto.iter().map(|&r| r as f64 * 1e-9).collect(),
            ca_state: self.ca_state,
            ecn_reductions: self.ecn_reductions,
            radio_state,
            power_w: power,
        }
    }
}
