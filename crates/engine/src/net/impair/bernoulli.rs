//! Independent (Bernoulli) packet loss: each packet is lost with probability `p`
//! (seed 000 §6.1 random uniform loss; seed 004 §5.3 PER), whatever its size, as Dummynet's
//! packet loss rate drops it. With `reference_bytes`, `p` is the loss of a frame of that size and
//! other sizes are lost as under independent bit errors, 1 − (1 − p)^(bytes / reference_bytes):
//! the same nominal loss rate read per bit on the radio (the "loss process" reading of seeds 000
//! and 002).

use super::{DropCause, Verdict};
use crate::sim::rng::Stream;
use crate::units::SimTime;

#[derive(Debug, Clone)]
pub struct Bernoulli {
    p: f64,
    /// ln(1 − p) / reference_bytes when the loss scales with frame size.
    log_keep_per_byte: Option<f64>,
    rng: Stream,
}

impl Bernoulli {
    pub fn new(p: f64, reference_bytes: Option<u32>, rng: Stream) -> Self {
        let log_keep_per_byte = reference_bytes.map(|r| (-p).ln_1p() / f64::from(r));
        Self { p, log_keep_per_byte, rng }
    }

    /// Loss probability of a frame of `bytes` bytes.
    pub fn frame_loss(&self, bytes: u32) -> f64 {
        match self.log_keep_per_byte {
            None => self.p,
            Some(k) => 1.0 - (k * f64::from(bytes)).exp(),
        }
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
    fn per_packet_loss_ignores_size_and_per_bit_loss_is_p_at_the_reference_size() {
        let per_packet = Bernoulli::new(0.05, None, Stream::new(1, "b"));
        assert_eq!(per_packet.frame_loss(40), 0.05);
        assert_eq!(per_packet.frame_loss(1500), 0.05);
        let per_bit = Bernoulli::new(0.05, Some(1500), Stream::new(1, "b"));
        assert!((per_bit.frame_loss(1500) - 0.05).abs() < 1e-12);
        // 512 bytes: 1 - 0.95^(512/1500) = 0.01736
        assert!((per_bit.frame_loss(512) - 0.017_355).abs() < 1e-5, "{}", per_bit.frame_loss(512));
        assert!(per_bit.frame_loss(40) < 0.002);
    }
}
