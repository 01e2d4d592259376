//! Route failure: every packet crossing the hop while the route is down is lost
//! (seed 002 Table 3: route down 5 s every 15 s), or, in hold mode, buffered at the node before
//! the break and sent on, in order, when the route is back (the route-request buffers of ad hoc
//! routing protocols), up to a per-episode limit. Optionally the node before the break notifies
//! the sender once per episode (ELFN, seed 002 §4).

use super::{DropCause, PeriodicWindow, RouteNotice, Verdict};
use crate::config::{OutageMode, RouteNotify};
use crate::units::SimTime;

#[derive(Debug, Clone)]
pub struct Outage {
    window: PeriodicWindow,
    notify: Option<RouteNotify>,
    mode: OutageMode,
    hold_limit: Option<u32>,
    /// The last episode (index k) already reported.
    reported: Option<u64>,
    /// Packets held so far in episode k: (k, count).
    held: (u64, u32),
}

impl Outage {
    pub fn new(window: PeriodicWindow, notify: Option<RouteNotify>, mode: OutageMode, hold_limit: Option<u32>) -> Self {
        Self { window, notify, mode, hold_limit, reported: None, held: (0, 0) }
    }

    #[inline]
    pub fn on_packet(&mut self, now: SimTime) -> Verdict {
        if !self.window.contains(now) {
            return Verdict::Pass;
        }
        if self.mode == OutageMode::Drop {
            return Verdict::Drop(DropCause::Outage);
        }
        let k = self.episode(now);
        if self.held.0 != k {
            self.held = (k, 0);
        }
        if self.hold_limit.is_some_and(|limit| self.held.1 >= limit) {
            return Verdict::Drop(DropCause::Outage);
        }
        self.held.1 += 1;
        // Released when the route is restored; equal release times keep the sending order.
        Verdict::Hold(self.episode_end(k) - now)
    }

    fn episode(&self, now: SimTime) -> u64 {
        self.window.episode(now)
    }

    fn episode_end(&self, k: u64) -> SimTime {
        self.window.episode_end(k)
    }

    /// The notice for a loss at `now`, once per outage episode, if notification is configured.
    pub fn notice(&mut self, now: SimTime) -> Option<RouteNotice> {
        let notify = self.notify?;
        if !self.window.contains(now) {
            return None;
        }
        let k = self.episode(now);
        if self.reported == Some(k) {
            return None;
        }
        self.reported = Some(k);
        let episode_end = self.episode_end(k);
        Some(RouteNotice {
            fail_at: now + notify.delay,
            restore_at: notify.restore.then(|| episode_end + notify.delay),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::SimDuration;

    #[test]
    fn an_outage_is_reported_once_per_episode_with_its_restoration() {
        let w = PeriodicWindow { on: SimDuration::from_secs(5), every: SimDuration::from_secs(15), offset: SimDuration::from_secs(10), shift: SimDuration::ZERO };
        let mut o = Outage::new(w, Some(RouteNotify { delay: SimDuration::from_millis(10), restore: true }), OutageMode::Drop, None);
        let s = |x: f64| SimTime((x * 1e9) as u64);
        assert_eq!(o.notice(s(9.0)), None);
        let n = o.notice(s(11.0)).unwrap();
        assert_eq!(n.fail_at, s(11.01));
        assert_eq!(n.restore_at, Some(s(15.01)));
        assert_eq!(o.notice(s(12.0)), None, "same episode");
        assert!(o.notice(s(26.0)).is_some(), "next episode");
    }

    #[test]
    fn hold_mode_releases_packets_when_the_route_returns_up_to_the_limit() {
        let w = PeriodicWindow { on: SimDuration::from_secs(5), every: SimDuration::from_secs(15), offset: SimDuration::from_secs(10), shift: SimDuration::ZERO };
        let mut o = Outage::new(w, None, OutageMode::Hold, Some(2));
        let s = |x: f64| SimTime((x * 1e9) as u64);
        assert_eq!(o.on_packet(s(9.0)), Verdict::Pass);
        assert_eq!(o.on_packet(s(11.0)), Verdict::Hold(s(15.0) - s(11.0)), "held until the episode ends");
        assert_eq!(o.on_packet(s(14.0)), Verdict::Hold(s(15.0) - s(14.0)));
        assert_eq!(o.on_packet(s(14.5)), Verdict::Drop(DropCause::Outage), "over the limit");
        assert_eq!(o.on_packet(s(26.0)), Verdict::Hold(s(30.0) - s(26.0)), "the limit is per episode");
    }
}
