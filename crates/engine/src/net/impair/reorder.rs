//! Reordering (seed 000 §6.2, seed 002 Table 3): a `fraction` of packets is held back by
//! `extra_delay`, so packets sent after it arrive first.

use super::Verdict;
use crate::sim::rng::Stream;
use crate::units::{SimDuration, SimTime};

#[derive(Debug, Clone)]
pub struct Reorder {
    fraction: f64,
    extra_delay: SimDuration,
    rng: Stream,
}

impl Reorder {
    pub fn new(fraction: f64, extra_delay: SimDuration, rng: Stream) -> Self {
        Self { fraction, extra_delay, rng }
    }
    #[inline]
    pub fn on_packet(&mut self, _now: SimTime) -> Verdict {
        if self.rng.chance(self.fraction) {
            Verdict::Delay(self.extra_delay)
        } else {
            Verdict::Pass
        }
    }
}
