//! Random Early Detection (Floyd & Jacobson 1993) with ECN marking (RFC 3168 §5, §7).
//!
//! On each arrival the average queue length is updated with weight w_q (after an idle period it
//! decays as if m small packets had arrived to an empty queue, m = idle time / a 1500-byte
//! transmission time). Below min_th packets pass; between min_th and max_th a packet is marked
//! (ECN-capable) or dropped with probability p_a = p_b / (1 − count·p_b), p_b = max_p·(avg −
//! min_th)/(max_th − min_th), count being the packets since the last mark; at or above max_th
//! every packet is dropped.

use crate::config::RedConfig;
use crate::sim::rng::Stream;
use crate::units::{SimDuration, SimTime};

/// What RED does with an arriving packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedVerdict {
    Enqueue,
    /// Set CE instead of dropping (the packet is ECN-capable and marking is enabled).
    Mark,
    Drop,
}

#[derive(Debug, Clone)]
pub struct Red {
    cfg: RedConfig,
    avg: f64,
    /// Packets since the last mark or drop (-1 when avg is below min_th, as in the paper).
    count: i64,
    rng: Stream,
}

impl Red {
    pub fn new(cfg: RedConfig, rng: Stream) -> Self {
        Self { cfg, avg: 0.0, count: -1, rng }
    }

    pub fn average(&self) -> f64 {
        self.avg
    }

    /// Decide for a packet arriving at `now` that finds `queue_len` packets waiting; `idle` is how
    /// long the queue has been empty (zero if busy), `small_packet` a typical transmission time.
    pub fn on_arrival(&mut self, queue_len: usize, idle: SimDuration, small_packet: SimDuration, ect: bool, _now: SimTime) -> RedVerdict {
        let w = self.cfg.weight;
        if idle.0 > 0 && small_packet.0 > 0 {
            let m = idle.0 as f64 / small_packet.0 as f64;
            self.avg *= (1.0 - w).powf(m);
        } else {
            self.avg = (1.0 - w) * self.avg + w * queue_len as f64;
        }
        // One draw per arrival keeps the stream aligned whatever the verdict.
        let u = self.rng.uniform();
        let (min_th, max_th) = (self.cfg.min_th, self.cfg.max_th);
        if self.avg < min_th {
            self.count = -1;
            return RedVerdict::Enqueue;
        }
        if self.avg >= max_th {
            self.count = 0;
            return RedVerdict::Drop;
        }
        self.count += 1;
        let p_b = self.cfg.max_p * (self.avg - min_th) / (max_th - min_th);
        let denom = 1.0 - self.count as f64 * p_b;
        let p_a = if denom <= 0.0 { 1.0 } else { (p_b / denom).min(1.0) };
        if u < p_a {
            self.count = 0;
            if ect && self.cfg.ecn {
                RedVerdict::Mark
            } else {
                RedVerdict::Drop
            }
        } else {
            RedVerdict::Enqueue
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn red(ecn: bool) -> Red {
        // weight 1: the average is the instantaneous queue, so tests can set it directly.
        Red::new(RedConfig { min_th: 5.0, max_th: 15.0, max_p: 0.1, weight: 1.0, ecn }, Stream::new(1, "red"))
    }

    #[test]
    fn nothing_is_marked_below_min_th() {
        let mut r = red(true);
        assert!((0..10_000).all(|_| r.on_arrival(4, SimDuration::ZERO, SimDuration(1), true, SimTime::ZERO) == RedVerdict::Enqueue));
    }

    #[test]
    fn everything_is_dropped_at_or_above_max_th() {
        let mut r = red(true);
        assert!((0..1000).all(|_| r.on_arrival(15, SimDuration::ZERO, SimDuration(1), true, SimTime::ZERO) == RedVerdict::Drop));
    }

    #[test]
    fn marking_probability_between_thresholds_follows_p_b_with_uniform_spacing() {
        // avg = 10: p_b = 0.1 * (10 - 5) / (15 - 5) = 0.05. With p_a = p_b / (1 - count p_b) the
        // gap between marks is uniform on 1..1/p_b, so the mark rate is 2 p_b / (1 + p_b).
        let mut r = red(true);
        let n = 200_000;
        let marks = (0..n).filter(|_| r.on_arrival(10, SimDuration::ZERO, SimDuration(1), true, SimTime::ZERO) == RedVerdict::Mark).count();
        let rate = marks as f64 / n as f64;
        let expected = 2.0 * 0.05 / 1.05;
        assert!((rate - expected).abs() < 0.05 * expected, "rate {rate}, expected {expected}");
    }

    #[test]
    fn packets_that_are_not_ecn_capable_are_dropped_instead_of_marked() {
        let mut r = red(true);
        let verdicts: Vec<_> = (0..10_000).map(|_| r.on_arrival(10, SimDuration::ZERO, SimDuration(1), false, SimTime::ZERO)).collect();
        assert!(verdicts.contains(&RedVerdict::Drop));
        assert!(!verdicts.contains(&RedVerdict::Mark));
    }

    #[test]
    fn the_average_decays_over_an_idle_period() {
        let mut r = Red::new(RedConfig { min_th: 5.0, max_th: 15.0, max_p: 0.1, weight: 0.1, ecn: true }, Stream::new(1, "red"));
        for _ in 0..200 {
            r.on_arrival(10, SimDuration::ZERO, SimDuration(1), true, SimTime::ZERO);
        }
        let before = r.average();
        r.on_arrival(0, SimDuration(100), SimDuration(10), true, SimTime::ZERO);
        assert!((r.average() - before * 0.9f64.powi(10)).abs() < 1e-9);
    }
}
