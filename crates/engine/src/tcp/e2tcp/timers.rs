//! E2TCP's two timers (seed 001 §2.2): one restarted by every first transmission, one by every
//! retransmission, each set a little above the round-trip estimate. A single timer restarted by
//! every send can let a new transmission postpone the detection of a lost retransmission; with
//! two, the retransmission's loss shows when its own timer expires.

use crate::units::{SimDuration, SimTime};

/// Which sends a timer watches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimerKind {
    Transmission,
    Retransmission,
}

#[derive(Debug, Clone, Default)]
pub struct TwoTimers {
    transmission: Option<SimTime>,
    retransmission: Option<SimTime>,
}

impl TwoTimers {
    fn slot(&mut self, kind: TimerKind) -> &mut Option<SimTime> {
        match kind {
            TimerKind::Transmission => &mut self.transmission,
            TimerKind::Retransmission => &mut self.retransmission,
        }
    }

    /// A packet of `kind` was sent at `now`: its timer expires `timeout` later.
    pub fn on_send(&mut self, kind: TimerKind, now: SimTime, timeout: SimDuration) {
        *self.slot(kind) = Some(now + timeout);
    }

    /// Nothing of `kind` is outstanding any more; true if the timer was running.
    pub fn stop(&mut self, kind: TimerKind) -> bool {
        self.slot(kind).take().is_some()
    }

    pub fn deadline_of(&self, kind: TimerKind) -> Option<SimTime> {
        match kind {
            TimerKind::Transmission => self.transmission,
            TimerKind::Retransmission => self.retransmission,
        }
    }

    /// The earlier of the two expiry times.
    pub fn deadline(&self) -> Option<SimTime> {
        match (self.transmission, self.retransmission) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The timers due at `now`, stopped; retransmission first (its packets are the older news).
    pub fn take_expired(&mut self, now: SimTime) -> impl Iterator<Item = TimerKind> {
        let mut due = [None, None];
        for (i, kind) in [TimerKind::Retransmission, TimerKind::Transmission].into_iter().enumerate() {
            if self.deadline_of(kind).is_some_and(|d| d <= now) {
                self.stop(kind);
                due[i] = Some(kind);
            }
        }
        due.into_iter().flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(units: u64) -> SimTime {
        SimTime(units * 1_000_000_000)
    }

    /// Seed 001 §2.2's example: a retransmission at time 1 and a new transmission at time 5, with
    /// timers set 6 units ahead. E2TCP's retransmission timer expires at 7 and its transmission
    /// timer at 11; a single timer (both sends restarting it) would expire first at 11.
    #[test]
    fn a_lost_retransmission_is_detected_at_7_not_11_seed001_s2_2() {
        let timeout = SimDuration::from_secs(6);
        let mut two = TwoTimers::default();
        two.on_send(TimerKind::Retransmission, t(1), timeout);
        two.on_send(TimerKind::Transmission, t(5), timeout);
        assert_eq!(two.deadline(), Some(t(7)));
        assert_eq!(two.take_expired(t(7)).collect::<Vec<_>>(), vec![TimerKind::Retransmission]);
        assert_eq!(two.deadline(), Some(t(11)));
        assert_eq!(two.take_expired(t(11)).collect::<Vec<_>>(), vec![TimerKind::Transmission]);
        assert_eq!(two.deadline(), None);

        let mut single = TwoTimers::default();
        single.on_send(TimerKind::Transmission, t(1), timeout);
        single.on_send(TimerKind::Transmission, t(5), timeout);
        assert_eq!(single.deadline(), Some(t(11)));
    }

    #[test]
    fn a_stopped_timer_never_expires() {
        let mut two = TwoTimers::default();
        two.on_send(TimerKind::Transmission, t(1), SimDuration::from_secs(2));
        assert!(two.stop(TimerKind::Transmission));
        assert!(!two.stop(TimerKind::Transmission));
        assert_eq!(two.take_expired(t(100)).count(), 0);
    }
}
