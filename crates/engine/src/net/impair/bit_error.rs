//! Bit errors: each bit of a frame is corrupted independently with probability `ber`, so a frame
//! of n bits is lost with probability 1 − (1 − ber)^n. Unlike `bernoulli`, loss grows with frame
//! size: the effect behind small-header and small-MTU gains on error-prone links (seed 001 §2.3).

use super::{DropCause, Verdict};
use crate::sim::rng::Stream;
use crate::units::SimTime;

#[derive(Debug, Clone)]
pub struct BitError {
    /// ln(1 − ber), so a frame's survival probability is exp(bits · ln(1 − ber)).
    log_keep: f64,
    rng: Stream,
}

impl BitError {
    pub fn new(ber: f64, rng: Stream) -> Self {
        Self { log_keep: (-ber).ln_1p(), rng }
    }

    /// Loss probability of a frame of `bytes` bytes.
    pub fn frame_loss(&self, bytes: u32) -> f64 {
        1.0 - (self.log_keep * 8.0 * bytes as f64).exp()
    }

    #[inline]
    pub fn on_packet(&mut self, _now: SimTime, bytes: u32) -> Verdict {
        if self.rng.chance(self.frame_loss(bytes)) {
            Verdict::Drop(DropCause::Random)
        } else {
            Verdict::Pass
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_loss_grows_with_frame_size() {
        let b = BitError::new(1e-5, Stream::new(1, "b"));
        // 1 - (1 - 1e-5)^(8 * 1500) = 1 - exp(12000 ln(1 - 1e-5)) ≈ 0.1131
        assert!((b.frame_loss(1500) - 0.113_08).abs() < 1e-4, "{}", b.frame_loss(1500));
        assert!(b.frame_loss(512) < b.frame_loss(1500));
        assert_eq!(BitError::new(0.0, Stream::new(1, "b")).frame_loss(1500), 0.0);
    }
}
