//! Route failure: every packet crossing the hop while the route is down is lost
//! (seed 002 Table 3: route down 5 s every 15 s). Optionally the node before the break notifies
//! the sender once per episode (ELFN, seed 002 §4).

use super::{DropCause, PeriodicWindow, RouteNotice, Verdict};
use crate::config::RouteNotify;
use crate::units::SimTime;

#[derive(Debug, Clone)]
pub struct Outage {
    window: PeriodicWindow,
    notify: Option<RouteNotify>,
    /// The last episode (index k) already reported.
    reported: Option<u64>,
}

impl Outage {
    pub fn new(window: PeriodicWindow, notify: Option<RouteNotify>) -> Self {
        Self { window, notify, reported: None }
    }

    #[inline]
    pub fn on_packet(&mut self, now: SimTime) -> Verdict {
        if self.window.contains(now) {
            Verdict::Drop(DropCause::Outage)
        } else {
            Verdict::Pass
        }
    }

    /// The notice for a loss at `now`, once per outage episode, if notification is configured.
    pub fn notice(&mut self, now: SimTime) -> Option<RouteNotice> {
        let notify = self.notify?;
        if !self.window.contains(now) {
            return None;
        }
        let w = self.window;
        let k = (now.0 - w.offset.0) / w.every.0;
        if self.reported == Some(k) {
            return None;
        }
        self.reported = Some(k);
        let episode_end = SimTime(w.offset.0 + k * w.every.0 + w.on.0);
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
        let w = PeriodicWindow { on: SimDuration::from_secs(5), every: SimDuration::from_secs(15), offset: SimDuration::from_secs(10) };
        let mut o = Outage::new(w, Some(RouteNotify { delay: SimDuration::from_millis(10), restore: true }));
        let s = |x: f64| SimTime((x * 1e9) as u64);
        assert_eq!(o.notice(s(9.0)), None);
        let n = o.notice(s(11.0)).unwrap();
        assert_eq!(n.fail_at, s(11.01));
        assert_eq!(n.restore_at, Some(s(15.01)));
        assert_eq!(o.notice(s(12.0)), None, "same episode");
        assert!(o.notice(s(26.0)).is_some(), "next episode");
    }
}
