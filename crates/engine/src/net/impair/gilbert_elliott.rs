//! Two-state (good/bad) time-driven channel (seed 001 §3): the channel alternates between states
//! whose lengths are drawn uniformly in [min, max]; each packet is lost with its state's error rate.
//! It starts in the good state at t = 0. Alone, one random stream draws both the state lengths
//! and the losses; in a phase group the state lengths come from the group's own stream, so every
//! member (e.g. the two directions of one radio hop) sees the same good and bad periods.

use super::{DropCause, Verdict};
use crate::config::GeState;
use crate::sim::rng::Stream;
use crate::units::SimTime;

#[derive(Debug, Clone)]
pub struct GilbertElliott {
    good: GeState,
    bad: GeState,
    in_bad: bool,
    state_end: SimTime,
    rng: Stream,
    /// The phase group's stream of state lengths, if any.
    timeline: Option<Stream>,
}

impl GilbertElliott {
    pub fn new(good: GeState, bad: GeState, mut rng: Stream) -> Self {
        let first = SimTime(rng.between(good.min.0, good.max.0));
        Self { good, bad, in_bad: false, state_end: first, rng, timeline: None }
    }

    /// Draw the state lengths from `timeline` (shared by a phase group) instead.
    pub fn with_timeline(self, mut timeline: Stream) -> Self {
        let first = SimTime(timeline.between(self.good.min.0, self.good.max.0));
        Self { state_end: first, timeline: Some(timeline), ..self }
    }

    /// Advance the state sequence up to `now` (the channel evolves with time, not per packet).
    fn advance(&mut self, now: SimTime) {
        while now >= self.state_end {
            self.in_bad = !self.in_bad;
            let s = if self.in_bad { self.bad } else { self.good };
            let lengths = self.timeline.as_mut().unwrap_or(&mut self.rng);
            self.state_end += crate::units::SimDuration(lengths.between(s.min.0, s.max.0));
        }
    }

    pub fn in_bad_state(&mut self, now: SimTime) -> bool {
        self.advance(now);
        self.in_bad
    }

    #[inline]
    pub fn on_packet(&mut self, now: SimTime) -> Verdict {
        self.advance(now);
        let per = if self.in_bad { self.bad.per } else { self.good.per };
        if self.rng.chance(per) {
            Verdict::Drop(DropCause::Burst)
        } else {
            Verdict::Pass
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::SimDuration;

    #[test]
    fn fixed_state_lengths_alternate_on_schedule() {
        let good = GeState { per: 0.0, min: SimDuration::from_secs(3), max: SimDuration::from_secs(3) };
        let bad = GeState { per: 1.0, min: SimDuration::from_secs(1), max: SimDuration::from_secs(1) };
        let mut ch = GilbertElliott::new(good, bad, Stream::new(1, "ge"));
        let s = |x: f64| SimTime((x * 1e9) as u64);
        assert!(!ch.in_bad_state(s(2.9)));
        assert!(ch.in_bad_state(s(3.0)));
        assert!(ch.in_bad_state(s(3.9)));
        assert!(!ch.in_bad_state(s(4.0)));
        assert!(ch.in_bad_state(s(7.5)));
        assert_eq!(ch.on_packet(s(7.5)), Verdict::Drop(DropCause::Burst));
        assert_eq!(ch.on_packet(s(8.5)), Verdict::Pass);
    }

    #[test]
    fn a_phase_group_shares_the_bad_periods_and_not_the_losses_seed001_s3_2() {
        let good = GeState { per: 0.0005, min: SimDuration::from_millis(500), max: SimDuration::from_secs(3) };
        let bad = GeState { per: 0.5, min: SimDuration::from_millis(100), max: SimDuration::from_millis(900) };
        let group = || Stream::new(7, "gilbert_elliott phase group wlan");
        let mut fwd = GilbertElliott::new(good, bad, Stream::new(7, "fwd")).with_timeline(group());
        let mut rev = GilbertElliott::new(good, bad, Stream::new(7, "rev")).with_timeline(group());
        let mut alone = GilbertElliott::new(good, bad, Stream::new(7, "rev"));
        let (mut differs_alone, mut losses_differ) = (false, false);
        for ms in (0..60_000).step_by(7) {
            let t = SimTime(ms * 1_000_000);
            let (f, r) = (fwd.in_bad_state(t), rev.in_bad_state(t));
            assert_eq!(f, r, "same state at {ms} ms");
            differs_alone |= alone.in_bad_state(t) != f;
            if f {
                losses_differ |= fwd.on_packet(t) != rev.on_packet(t);
            }
        }
        assert!(differs_alone, "without the group the timelines differ");
        assert!(losses_differ, "losses are drawn per direction");
    }
}
