//! Periodic windows in time, and the bursty loss that uses them: loss with probability `p` during
//! `[offset + k*every, offset + k*every + on)` (seed 000 §6.1.1 and seed 002 Table 3: 85 % loss
//! for 1 s every 12 s).

use super::{DropCause, Verdict};
use crate::sim::rng::Stream;
use crate::units::{SimDuration, SimTime};

/// `[offset + k*every, offset + k*every + on)` for k = 0, 1, 2, ...
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeriodicWindow {
    pub on: SimDuration,
    pub every: SimDuration,
    pub offset: SimDuration,
}

impl PeriodicWindow {
    #[inline]
    pub fn contains(&self, t: SimTime) -> bool {
        if t.0 < self.offset.0 {
            return false;
        }
        (t.0 - self.offset.0) % self.every.0 < self.on.0
    }
}

#[derive(Debug, Clone)]
pub struct PeriodicBurst {
    p: f64,
    window: PeriodicWindow,
    rng: Stream,
}

impl PeriodicBurst {
    pub fn new(p: f64, window: PeriodicWindow, rng: Stream) -> Self {
        Self { p, window, rng }
    }
    #[inline]
    pub fn on_packet(&mut self, now: SimTime) -> Verdict {
        // One draw per packet in or out of the burst keeps the stream aligned across variants.
        let hit = self.rng.chance(self.p);
        if self.window.contains(now) && hit {
            Verdict::Drop(DropCause::Burst)
        } else {
            Verdict::Pass
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_covers_on_seconds_of_each_period_after_offset() {
        let w = PeriodicWindow {
            on: SimDuration::from_secs(1),
            every: SimDuration::from_secs(12),
            offset: SimDuration::from_secs(11),
        };
        let s = |x: f64| SimTime((x * 1e9) as u64);
        assert!(!w.contains(s(0.0)));
        assert!(!w.contains(s(10.99)));
        assert!(w.contains(s(11.0)));
        assert!(w.contains(s(11.99)));
        assert!(!w.contains(s(12.0)));
        assert!(w.contains(s(23.5)));
    }
}
