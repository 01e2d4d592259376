//! Independent (Bernoulli) packet loss: each packet is lost with probability `p`
//! (seed 000 §6.1 random uniform loss; seed 004 §5.3 PER).

use super::{DropCause, Verdict};
use crate::sim::rng::Stream;
use crate::units::SimTime;

#[derive(Debug, Clone)]
pub struct Bernoulli {
    p: f64,
    rng: Stream,
}

impl Bernoulli {
    pub fn new(p: f64, rng: Stream) -> Self {
        Self { p, rng }
    }
    #[inline]
    pub fn on_packet(&mut self, _now: SimTime) -> Verdict {
        if self.rng.chance(self.p) {
            Verdict::Drop(DropCause::Random)
        } else {
            Verdict::Pass
        }
    }
}
