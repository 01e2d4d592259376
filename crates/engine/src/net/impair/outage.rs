//! Route failure: every packet crossing the hop while the route is down is lost
//! (seed 002 Table 3: route down 5 s every 15 s).

use super::{DropCause, PeriodicWindow, Verdict};
use crate::units::SimTime;

#[derive(Debug, Clone)]
pub struct Outage {
    window: PeriodicWindow,
}

impl Outage {
    pub fn new(window: PeriodicWindow) -> Self {
        Self { window }
    }
    #[inline]
    pub fn on_packet(&mut self, now: SimTime) -> Verdict {
        if self.window.contains(now) {
            Verdict::Drop(DropCause::Outage)
        } else {
            Verdict::Pass
        }
    }
}
