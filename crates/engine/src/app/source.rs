//! A flow's source application: what it writes and when (docs/models/network.md, "Flows and traffic kinds").
//! Bulk writes the whole transfer at its start and closes; timed writes without end until its
//! duration is over; on/off writes messages `interval` apart (fixed, or exponential on average);
//! CBR writes packets on an exact schedule from its start.

use crate::config::network::{Distribution, FlowTraffic};
use crate::sim::rng::Stream;
use crate::units::{SimDuration, SimTime};

/// A timed flow's application never runs dry: it writes this much at the start.
const ENDLESS: u64 = 1 << 50;

/// The source application of one flow.
#[derive(Debug, Clone)]
pub struct Source {
    traffic: FlowTraffic,
    start: SimTime,
    stop: Option<SimTime>,
    /// Messages written so far (paced traffic).
    writes: u64,
    /// Exponential on/off gaps; drawn from only by that kind.
    rng: Stream,
}

/// What the application does as it starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Start {
    /// Bytes a TCP source hands its connection at once, and whether it closes after them.
    pub stream_bytes: u64,
    pub close: bool,
    /// The bytes written at once are one message (bulk: the whole transfer).
    pub one_message: bool,
    /// A timed flow's end: both ends stop then.
    pub duration_over: Option<SimTime>,
    /// Paced traffic writes its first message now ([`Source::write`]).
    pub write_now: bool,
}

/// A message the application writes now, and when it writes the next one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Write {
    pub bytes: u32,
    /// `None` when the next one would fall at or after the flow's stop.
    pub next: Option<SimTime>,
}

impl Source {
    /// The application of a flow with `traffic`, started at `start` and stopped at `stop`; `rng`
    /// is the flow's traffic stream.
    pub fn new(traffic: FlowTraffic, start: SimTime, stop: Option<SimTime>, rng: Stream) -> Self {
        Source { traffic, start, stop, writes: 0, rng }
    }

    /// The application starts at `now`.
    pub fn start(&mut self, now: SimTime) -> Start {
        let (stream_bytes, close) = match self.traffic {
            FlowTraffic::Bulk { bytes } => (bytes, true),
            FlowTraffic::Timed { .. } => (ENDLESS, false),
            FlowTraffic::OnOff { .. } | FlowTraffic::Cbr { .. } => (0, false),
        };
        Start {
            stream_bytes,
            close,
            one_message: matches!(self.traffic, FlowTraffic::Bulk { .. }),
            duration_over: match self.traffic {
                FlowTraffic::Timed { duration } => Some(now + duration),
                _ => None,
            },
            write_now: self.paced(),
        }
    }

    /// Paced traffic (on/off, CBR) writes its next message now; `None` for other kinds.
    pub fn write(&mut self, now: SimTime) -> Option<Write> {
        let (bytes, next) = match self.traffic {
            FlowTraffic::OnOff { message, interval, distribution } => {
                let gap = match distribution {
                    Distribution::Fixed => interval,
                    Distribution::Exponential => {
                        // Inverse transform; 1 - u in (0, 1] keeps the logarithm finite.
                        let u = self.rng.uniform();
                        SimDuration((-(1.0 - u).ln() * interval.0 as f64).round() as u64)
                    }
                };
                (message, now + gap)
            }
            FlowTraffic::Cbr { rate, packet } => {
                // Exact schedule from the start: write k at start + k * packet * 8 / rate.
                let k = self.writes + 1;
                let at = self.start.0 as u128 + (k as u128 * packet as u128 * 8 * 1_000_000_000).div_ceil(rate as u128);
                (packet, SimTime(at.min(u64::MAX as u128) as u64))
            }
            FlowTraffic::Bulk { .. } | FlowTraffic::Timed { .. } => return None,
        };
        self.writes += 1;
        let next = self.stop.map_or(true, |s| next < s).then_some(next);
        Some(Write { bytes, next })
    }

    /// Paced traffic: it writes messages over time rather than a stream at once.
    pub fn paced(&self) -> bool {
        matches!(self.traffic, FlowTraffic::OnOff { .. } | FlowTraffic::Cbr { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(traffic: FlowTraffic, stop: Option<u64>) -> Source {
        Source::new(traffic, SimTime(1_000), stop.map(SimTime), Stream::new(1, "flows.0.traffic"))
    }

    #[test]
    fn cbr_writes_on_the_exact_schedule_from_its_start_and_not_at_its_stop() {
        // 200 bytes at 64 kbit/s: one packet every 25 ms after the start at 1 µs.
        let mut s = source(FlowTraffic::Cbr { rate: 64_000, packet: 200 }, Some(1_000 + 50_000_000));
        assert!(s.start(SimTime(1_000)).write_now);
        let w = s.write(SimTime(1_000)).unwrap();
        assert_eq!((w.bytes, w.next), (200, Some(SimTime(1_000 + 25_000_000))));
        // The second write's successor would fall on the stop: none is scheduled.
        assert_eq!(s.write(SimTime(1_000 + 25_000_000)).unwrap().next, None);
    }

    #[test]
    fn bulk_hands_its_whole_transfer_over_at_once_as_one_message_and_closes() {
        let mut s = source(FlowTraffic::Bulk { bytes: 5_000 }, None);
        let st = s.start(SimTime(1_000));
        assert_eq!((st.stream_bytes, st.close, st.one_message, st.write_now, st.duration_over), (5_000, true, true, false, None));
        assert_eq!(s.write(SimTime(1_000)), None, "bulk writes nothing more");
    }

    #[test]
    fn a_timed_flow_never_runs_dry_and_ends_after_its_duration() {
        let mut s = source(FlowTraffic::Timed { duration: SimDuration(7) }, None);
        let st = s.start(SimTime(1_000));
        assert!(!st.close && st.stream_bytes >= 1 << 50);
        assert_eq!(st.duration_over, Some(SimTime(1_007)));
    }

    #[test]
    fn exponential_on_off_gaps_average_their_interval() {
        let interval = SimDuration(1_000_000);
        let mut s = source(FlowTraffic::OnOff { message: 100, interval, distribution: Distribution::Exponential }, None);
        let (mut now, n) = (SimTime(1_000), 20_000u64);
        for _ in 0..n {
            now = s.write(now).unwrap().next.unwrap();
        }
        let mean = (now.0 - 1_000) as f64 / n as f64;
        assert!((mean / interval.0 as f64 - 1.0).abs() < 0.03, "mean gap {mean}");
    }
}
