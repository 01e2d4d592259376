//! When a cellular radio can move a frame, from its RRC state (docs/models/cellular.md): a link
//! one of whose ends has an RRC machine asks this gate before it starts a frame.
//!
//! * Sending from an idle radio waits for the promotion (the radio asks for a connection at once).
//! * A frame for an idle radio waits for its next paging occasion, then for the promotion.
//! * A frame for a radio in DRX waits for its next on-duration; in continuous reception it goes.
//! * A radio in a state it must be resumed from (RRC_INACTIVE) sends after the resume, and
//!   receives after its next listening window and the resume.
//! * A radio that is (or is being promoted to be) connected for another frame takes this one then.
//!
//! The gate knows the radio's activity as the link scheduled it (frames may be scheduled ahead
//! of the present), and reads the machine's timers as the meter does (`energy::rrc`), so the
//! states the meter lays out afterwards are those the frames waited for.

use crate::energy::rrc::RrcTiming;
use crate::units::SimTime;

#[derive(Debug)]
pub struct RrcGate {
    timing: RrcTiming,
    /// The radio's activity scheduled so far, merged and sorted; intervals that ended a whole
    /// tail before the last one began are dropped (the radio is idle after them either way).
    busy: Vec<(u64, u64)>,
}

impl RrcGate {
    pub fn new(timing: RrcTiming) -> Self {
        Self { timing, busy: Vec::new() }
    }

    /// The earliest time at or after `t` the radio can start sending.
    pub fn send_at(&self, t: SimTime) -> SimTime {
        SimTime(self.ready(t.0, false))
    }

    /// The earliest time at or after `t` the radio can start receiving.
    pub fn receive_at(&self, t: SimTime) -> SimTime {
        SimTime(self.ready(t.0, true))
    }

    fn ready(&self, t: u64, receive: bool) -> u64 {
        let i = self.busy.partition_point(|iv| iv.0 <= t);
        // Merged and sorted, so the interval starting last at or before `t` ends last.
        let last_end = i.checked_sub(1).map(|k| self.busy[k].1);
        if last_end.is_some_and(|e| e > t) {
            return t;
        }
        let next_start = self.busy.get(i).map_or(u64::MAX, |iv| iv.0);
        let mut idle_from = t;
        if let Some(a) = last_end {
            if t - a < self.timing.tail {
                // Connected (or resumable: a resume for the next scheduled activity may
                // already be under way, and serves).
                match self.timing.tail_ready(a, t, receive) {
                    Some(x) => return x.min(next_start),
                    None => idle_from = a + self.timing.tail,
                }
            }
        }
        // Idle from `idle_from`: a promotion under way for the next scheduled activity serves.
        let promotion = self.timing.promotion;
        if next_start != u64::MAX && next_start - promotion.min(next_start) <= idle_from {
            return next_start;
        }
        let promoted = if receive { self.timing.next_page(idle_from) } else { idle_from } + promotion;
        promoted.min(next_start)
    }

    /// The radio is busy during `[s, e)`: on the air for a frame, or held connected for one.
    /// Nothing is recorded for an empty interval: the meter sees no activity there either.
    pub fn commit(&mut self, s: SimTime, e: SimTime) {
        if e <= s {
            return;
        }
        let (s, e) = (s.0, e.0);
        // Where it goes: after every interval starting before it (nearly always at the end).
        let mut k = self.busy.len();
        while k > 0 && self.busy[k - 1].0 > s {
            k -= 1;
        }
        self.busy.insert(k, (s, e));
        // Merge with the one before, then absorb those after that it reaches.
        let mut k = if k > 0 && self.busy[k - 1].1 >= s { k - 1 } else { k };
        while k + 1 < self.busy.len() && self.busy[k + 1].0 <= self.busy[k].1 {
            self.busy[k].1 = self.busy[k].1.max(self.busy[k + 1].1);
            self.busy.remove(k + 1);
        }
        k = k.min(self.busy.len() - 1);
        let horizon = self.busy[k].0.saturating_sub(self.timing.tail + self.timing.promotion + self.timing.paging.cycle.0);
        let old = self.busy.partition_point(|iv| iv.1 < horizon);
        if old > 32 {
            self.busy.drain(..old);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::energy::profile::builtin;

    const MS: u64 = 1_000_000;

    fn lte() -> RrcGate {
        let r = builtin("huang2012-lte-phone").unwrap().unwrap().radio;
        RrcGate::new(r.rrc.as_ref().unwrap().timing(r.wake_time))
    }

    #[test]
    fn an_idle_radio_sends_after_its_promotion_and_receives_after_paging_and_promotion() {
        // Huang et al. 2012 §3 (Table 3): promotion 260.1 ms; paging every 1280.2 ms (43.2 ms on).
        let g = lte();
        let promo = g.timing.promotion;
        assert_eq!(promo, 260_100_000);
        assert_eq!(g.send_at(SimTime(5_000 * MS)).0, 5_000 * MS + promo);
        // 5000 ms is 5000 - 3*1280.2 = 1159.4 ms into a paging cycle: the next occasion is 5120.8 ms.
        assert_eq!(g.receive_at(SimTime(5_000 * MS)).0, 5_120_800_000 + promo);
        // Within an occasion the page is heard at once.
        assert_eq!(g.receive_at(SimTime(2_561 * MS)).0, 2_561 * MS + promo);
    }

    #[test]
    fn a_connected_radio_sends_at_once_and_receives_at_its_next_drx_on_duration() {
        let mut g = lte();
        g.commit(SimTime(1_000 * MS), SimTime(1_010 * MS));
        // Continuous reception for 100 ms after the last activity.
        assert_eq!(g.receive_at(SimTime(1_050 * MS)).0, 1_050 * MS);
        // Short DRX from 1110 ms (20 ms cycles, 1 ms on): 1115 waits for 1130, where long DRX
        // (40.1 ms cycles) begins with an on-duration.
        assert_eq!(g.receive_at(SimTime(1_115 * MS)).0, 1_130 * MS);
        assert_eq!(g.receive_at(SimTime(1_131 * MS)).0, 1_170_100_000);
        // Sending needs no wait anywhere in the tail.
        assert_eq!(g.send_at(SimTime(9_000 * MS)).0, 9_000 * MS);
        // After the tail (11576 ms) the radio is idle again.
        let idle = 1_010 * MS + 11_576 * MS;
        assert_eq!(g.send_at(SimTime(idle)).0, idle + g.timing.promotion);
    }

    #[test]
    fn a_frame_for_a_radio_being_promoted_goes_when_the_promotion_ends() {
        let mut g = lte();
        let promo = g.timing.promotion;
        // A frame scheduled at 10 s after a promotion; at 9.9 s the promotion is under way.
        g.commit(SimTime(10_000 * MS), SimTime(10_002 * MS));
        assert_eq!(g.receive_at(SimTime(10_000 * MS - promo + MS)).0, 10_000 * MS);
        // Before the promotion began, sending starts its own, sooner.
        assert_eq!(g.send_at(SimTime(9_000 * MS)).0, 9_000 * MS + promo);
        // A page would come later than the frame already scheduled: the radio is connected then.
        assert_eq!(g.receive_at(SimTime(9_500 * MS)).0, 10_000 * MS);
    }

    #[test]
    fn a_radio_in_rrc_inactive_moves_data_after_its_resume_and_after_it_from_rrc_idle() {
        // 3GPP TS 38.331 §5.3.13 (resume from RRC_INACTIVE), with the illustrative machine of
        // energy::rrc's tests: RRC_INACTIVE 10-30 s after the last activity, resume 60 ms, RAN
        // paging every 1280 ms; RRC_IDLE after, promotion 300 ms, paging every 2560 ms.
        let mut g = RrcGate::new(crate::energy::rrc::tests::nr().timing(crate::units::SimDuration(300 * MS)));
        g.commit(SimTime(1_000 * MS), SimTime(1_010 * MS));
        let inactive = 1_010 * MS + 10_000 * MS;
        assert_eq!(g.send_at(SimTime(inactive + 500 * MS)).0, inactive + 560 * MS);
        // RAN paging cycles start when RRC_INACTIVE does: the next after +500 ms is +1280 ms.
        assert_eq!(g.receive_at(SimTime(inactive + 500 * MS)).0, inactive + 1_340 * MS);
        // A resume under way for activity already scheduled serves a frame asked for meanwhile.
        g.commit(SimTime(inactive + 4_060 * MS), SimTime(inactive + 4_061 * MS));
        assert_eq!(g.send_at(SimTime(inactive + 4_030 * MS)).0, inactive + 4_060 * MS);
        // After RRC_INACTIVE (20 s from the last activity's tail end): a promotion from RRC_IDLE.
        let idle = inactive + 4_061 * MS + 30_000 * MS;
        assert_eq!(g.send_at(SimTime(idle)).0, idle + 300 * MS);
    }

    #[test]
    fn overlapping_and_touching_activity_merges() {
        let mut g = lte();
        g.commit(SimTime(10), SimTime(20));
        g.commit(SimTime(30), SimTime(40));
        g.commit(SimTime(15), SimTime(30));
        g.commit(SimTime(5), SimTime(8));
        assert_eq!(g.busy, vec![(5, 8), (10, 40)]);
    }

    #[test]
    fn an_empty_interval_is_not_activity() {
        let mut g = lte();
        g.commit(SimTime(5_000 * MS), SimTime(5_000 * MS));
        assert!(g.busy.is_empty());
        assert_eq!(g.send_at(SimTime(5_000 * MS)).0, 5_000 * MS + g.timing.promotion);
    }
}
