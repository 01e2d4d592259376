//! Periodic windows in time, and the bursty loss that uses them: loss with probability `p` during
//! `[offset + k*every, offset + k*every + on)` (seed 000 §6.1.1 and seed 002 Table 3: 85 % loss
//! for 1 s every 12 s).

use super::{DropCause, Verdict};
use crate::sim::rng::Stream;
use crate::units::{SimDuration, SimTime};

/// `[offset + k*every, offset + k*every + on)` for k = 0, 1, 2, ... (`shift` = 0: clean before
/// `offset`), or for every integer k (`shift` = `every`: a stationary pattern whose phase is
/// `offset`, used for random phases, so that t = 0 falls at a uniformly random point of the cycle,
/// inside a window with probability on/every). Times are shifted by `shift` before the
/// arithmetic, which keeps it unsigned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeriodicWindow {
    pub on: SimDuration,
    pub every: SimDuration,
    pub offset: SimDuration,
    pub shift: SimDuration,
}

impl PeriodicWindow {
    #[inline]
    pub fn contains(&self, t: SimTime) -> bool {
        let t = t.0 + self.shift.0;
        if t < self.offset.0 {
            return false;
        }
        (t - self.offset.0) % self.every.0 < self.on.0
    }

    /// Index of the period `t` falls in (t must not precede the first window's period).
    pub fn episode(&self, t: SimTime) -> u64 {
        (t.0 + self.shift.0 - self.offset.0) / self.every.0
    }

    /// End of window `k`.
    pub fn episode_end(&self, k: u64) -> SimTime {
        SimTime(self.offset.0 + k * self.every.0 + self.on.0 - self.shift.0)
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
            shift: SimDuration::ZERO,
        };
        let s = |x: f64| SimTime((x * 1e9) as u64);
        assert!(!w.contains(s(0.0)));
        assert!(!w.contains(s(10.99)));
        assert!(w.contains(s(11.0)));
        assert!(w.contains(s(11.99)));
        assert!(!w.contains(s(12.0)));
        assert!(w.contains(s(23.5)));
    }

    #[test]
    fn a_stationary_window_also_covers_the_period_before_its_phase() {
        // Phase 14 s of a 5 s window every 15 s: the previous window [-1 s, 4 s) covers t = 0.
        let w = PeriodicWindow {
            on: SimDuration::from_secs(5),
            every: SimDuration::from_secs(15),
            offset: SimDuration::from_secs(14),
            shift: SimDuration::from_secs(15),
        };
        let s = |x: f64| SimTime((x * 1e9) as u64);
        assert!(w.contains(s(0.0)) && w.contains(s(3.99)));
        assert!(!w.contains(s(4.0)) && !w.contains(s(13.99)));
        assert!(w.contains(s(14.0)) && w.contains(s(18.99)) && !w.contains(s(19.0)));
        assert_eq!(w.episode_end(w.episode(s(1.0))), s(4.0));
        assert_eq!(w.episode_end(w.episode(s(15.0))), s(19.0));
    }
}
