//! Delay variation: each packet gets an extra delay uniform in [min, max]. With `keep_order` the
//! hop stays FIFO (a packet is never released before one that entered earlier), as a Dummynet pipe
//! with a per-packet RTT drawn from a range does (seed 002 Table 2).

use super::Verdict;
use crate::sim::rng::Stream;
use crate::units::{SimDuration, SimTime};

#[derive(Debug, Clone)]
pub struct Jitter {
    min: SimDuration,
    max: SimDuration,
    keep_order: bool,
    last_release: SimTime,
    rng: Stream,
}

impl Jitter {
    pub fn new(min: SimDuration, max: SimDuration, keep_order: bool, rng: Stream) -> Self {
        Self { min, max, keep_order, last_release: SimTime::ZERO, rng }
    }
    #[inline]
    pub fn on_packet(&mut self, now: SimTime) -> Verdict {
        let mut d = SimDuration(self.rng.between(self.min.0, self.max.0));
        if self.keep_order {
            // Packets reach this impairment in send order (`now` never decreases), so releasing
            // no earlier than the previous packet keeps FIFO order.
            let release = (now + d).max(self.last_release);
            d = release - now;
            self.last_release = release;
        }
        if d.0 == 0 {
            Verdict::Pass
        } else {
            Verdict::Delay(d)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keep_order_never_releases_a_packet_before_an_earlier_one() {
        let mut j = Jitter::new(SimDuration::ZERO, SimDuration::from_millis(50), true, Stream::new(3, "j"));
        let mut last = SimTime::ZERO;
        for i in 0..1000u64 {
            let now = SimTime(i * 1_000_000);
            let release = match j.on_packet(now) {
                Verdict::Delay(d) => now + d,
                _ => now,
            };
            assert!(release >= last);
            last = release;
        }
    }
}
