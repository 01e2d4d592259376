//! Random streams. Every random component owns one stream, seeded from the run seed and the
//! component's name (its scenario path), so two variants run with the same seed see the same
//! channel (common random numbers) and adding a component never shifts another's draws.

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// A component's random stream.
#[derive(Debug, Clone)]
pub struct Stream(Xoshiro256PlusPlus);

impl Stream {
    pub fn new(run_seed: u64, component: &str) -> Self {
        Stream(Xoshiro256PlusPlus::seed_from_u64(mix(run_seed, component)))
    }
    /// Uniform in [0, 1).
    #[inline]
    pub fn uniform(&mut self) -> f64 {
        self.0.gen::<f64>()
    }
    /// True with probability `p`. Draws exactly one number whatever `p` is, so changing a
    /// probability does not shift later draws.
    #[inline]
    pub fn chance(&mut self, p: f64) -> bool {
        self.uniform() < p
    }
    /// Uniform integer in [lo, hi].
    #[inline]
    pub fn between(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            // Draw anyway to keep the stream's position independent of the range.
            let _ = self.0.gen::<u64>();
            lo
        } else {
            self.0.gen_range(lo..=hi)
        }
    }
}

/// FNV-1a of the name, folded with the seed through SplitMix64's finalizer.
fn mix(seed: u64, name: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    let mut z = h ^ seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_and_name_give_the_same_stream() {
        let mut a = Stream::new(7, "path.forward.impairments.0");
        let mut b = Stream::new(7, "path.forward.impairments.0");
        for _ in 0..100 {
            assert_eq!(a.uniform(), b.uniform());
        }
    }

    #[test]
    fn different_components_get_independent_streams() {
        let mut a = Stream::new(7, "path.forward.impairments.0");
        let mut b = Stream::new(7, "path.forward.impairments.1");
        let same = (0..100).filter(|_| a.uniform() == b.uniform()).count();
        assert_eq!(same, 0);
    }
}
