//! The transmitter of a trace-driven link direction: when each packet's bytes leave, given the
//! delivery opportunities of a trace in Mahimahi's format (`config::trace`).
//!
//! Mahimahi's semantics (`LinkQueue::rationalize` in src/frontend/link_queue.cc, and the
//! repository's traces/README), reproduced without events:
//! * an opportunity at or before the time a packet arrives is spent before the packet is queued,
//!   so a packet arriving at `t` can use only opportunities strictly after `t`;
//! * an opportunity carries up to [`OPPORTUNITY_BYTES`] to the queued packets in order: a packet
//!   that finishes inside it leaves the rest to the next one, and a packet larger than what is
//!   left spans several opportunities;
//! * what nobody is queued for is lost (capacity does not accumulate);
//! * a packet leaves when the opportunity carrying its last byte comes;
//! * the trace repeats with the period of its last timestamp.
//!
//! Packets are handed in in time order, as a link receives them, so the bytes scheduled so far
//! end at a known opportunity: a new packet starts where they end if that opportunity is still
//! to come, else at the first opportunity after its arrival.

use crate::config::trace::{Trace, OPPORTUNITY_BYTES};
use crate::units::{SimDuration, SimTime};
use std::sync::Arc;

const NS_PER_MS: u64 = 1_000_000;

#[derive(Debug, Clone)]
pub struct Opportunities {
    trace: Arc<Trace>,
    period_ms: u64,
    /// Where the next byte goes: entry `index` of repetition `cycle`...
    cycle: u64,
    index: usize,
    /// ...of which `left` bytes are still free (> 0).
    left: u32,
    /// When the last packet handed in leaves.
    last_end: SimTime,
}

/// When a packet's bytes leave: the opportunities of its first and last bytes, and the start of
/// the interval the radio is taken to send it in (see [`Opportunities::serve`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Served {
    pub first: SimTime,
    pub end: SimTime,
    pub radio_start: SimTime,
}

impl Opportunities {
    pub fn new(trace: Arc<Trace>) -> Self {
        let period_ms = trace.period_ms();
        Self { trace, period_ms, cycle: 0, index: 0, left: OPPORTUNITY_BYTES, last_end: SimTime::ZERO }
    }

    /// Time of the opportunity the next byte goes to.
    #[inline]
    fn next_time(&self) -> SimTime {
        SimTime((self.cycle * self.period_ms + self.trace.ms[self.index]).saturating_mul(NS_PER_MS))
    }

    #[inline]
    fn advance(&mut self) {
        self.index += 1;
        if self.index == self.trace.ms.len() {
            self.index = 0;
            self.cycle += 1;
        }
        self.left = OPPORTUNITY_BYTES;
    }

    /// The first opportunity strictly after `now`: (repetition, entry).
    fn first_after(&self, now: SimTime) -> (u64, usize) {
        let target = now.0 / NS_PER_MS + 1;
        let (mut cycle, mut r) = (target / self.period_ms, target % self.period_ms);
        // The last entries of a repetition (at the period) come at the same time as, and before,
        // the next repetition's entries at 0.
        if r == 0 {
            cycle -= 1;
            r = self.period_ms;
        }
        // The last entry is the period, >= r: there is always one.
        (cycle, self.trace.ms.partition_point(|&m| m < r))
    }

    /// Move to the first opportunity strictly after `now`, whole.
    fn skip_past(&mut self, now: SimTime) {
        (self.cycle, self.index) = self.first_after(now);
        self.left = OPPORTUNITY_BYTES;
    }

    /// When the first byte of a packet arriving at `now` would leave.
    pub fn next_after(&self, now: SimTime) -> SimTime {
        let next = self.next_time();
        if next > now {
            return next;
        }
        let (cycle, index) = self.first_after(now);
        SimTime((cycle * self.period_ms + self.trace.ms[index]).saturating_mul(NS_PER_MS))
    }

    /// Schedule a packet of `bytes` (as Mahimahi queues it) arriving at `now` (or free to go
    /// from `now`), after every packet handed in before it.
    ///
    /// `radio_start`: a trace says when bytes leave, not how long they take to, yet the sending
    /// radio needs an interval on the air. It is taken to send at one opportunity per
    /// millisecond (1504 B/ms) up to the packet's delivery, starting no earlier than its arrival
    /// or the previous packet's delivery: `max(now, previous end, end - bytes at 1504 B/ms)`.
    /// So intervals never overlap, and a packet that waited for nobody has a non-empty one.
    #[inline]
    pub fn serve(&mut self, now: SimTime, bytes: u32) -> Served {
        if self.next_time() <= now {
            self.skip_past(now);
        }
        let first = self.next_time();
        let mut need = bytes;
        while need > self.left {
            need -= self.left;
            self.advance();
        }
        self.left -= need;
        let end = self.next_time();
        if self.left == 0 {
            self.advance();
        }
        let spread = SimDuration((bytes as u64 * NS_PER_MS).div_ceil(OPPORTUNITY_BYTES as u64));
        let radio_start = now.max(self.last_end).max(SimTime(end.0.saturating_sub(spread.0)));
        self.last_end = end;
        Served { first, end, radio_start }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opp(ms: &[u64]) -> Opportunities {
        Opportunities::new(Arc::new(Trace { name: "t".into(), ms: ms.to_vec() }))
    }

    const MS: u64 = NS_PER_MS;

    #[test]
    fn the_repetition_after_the_period_keeps_both_ends_opportunities_at_the_seam() {
        // [0, 2, 2]: period 2 ms; at 2 ms come the two entries at 2 and the next repetition's 0.
        let mut o = opp(&[0, 2, 2]);
        let ends: Vec<u64> = (0..7).map(|_| o.serve(SimTime(MS / 2), 1504).end.0 / MS).collect();
        assert_eq!(ends, [2, 2, 2, 4, 4, 4, 6]);
        // An idle link seeks: the first opportunity after 4 ms is at 6 ms (three of them).
        let mut o = opp(&[0, 2, 2]);
        assert_eq!(o.next_after(SimTime(4 * MS)), SimTime(6 * MS));
        assert_eq!(o.serve(SimTime(4 * MS), 1504).end, SimTime(6 * MS));
        assert_eq!(o.serve(SimTime(4 * MS), 1504).end, SimTime(6 * MS));
        assert_eq!(o.serve(SimTime(4 * MS), 1504).end, SimTime(6 * MS));
        assert_eq!(o.serve(SimTime(4 * MS), 1504).end, SimTime(8 * MS));
    }

    #[test]
    fn the_radio_interval_is_nonempty_and_never_overlaps_the_previous_one() {
        let mut o = opp(&[1]);
        // Alone: 1504 bytes at 1504 B/ms end at 1 ms, so they start at 0.
        assert_eq!(o.serve(SimTime(0), 1504), Served { first: SimTime(MS), end: SimTime(MS), radio_start: SimTime(0) });
        // Arriving at 1.5 ms: leaves at 2 ms, on the air from 1.5 ms (not before it arrived).
        let s = o.serve(SimTime(3 * MS / 2), 1504);
        assert_eq!((s.end, s.radio_start), (SimTime(2 * MS), SimTime(3 * MS / 2)));
        // Two small packets in one opportunity: the second starts when the first ends.
        let a = o.serve(SimTime(5 * MS / 2), 500);
        let b = o.serve(SimTime(5 * MS / 2), 500);
        assert_eq!((a.end, b.end, b.radio_start), (SimTime(3 * MS), SimTime(3 * MS), SimTime(3 * MS)));
        assert!(a.radio_start < a.end);
    }
}
