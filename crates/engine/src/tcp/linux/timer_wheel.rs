//! When a kernel timer fires: the timer wheel of kernel/time/timer.c (`calc_wheel_index`,
//! `calc_index`). A timer armed `d` from now expires at jiffy `J + ceil(d / jiffy)`, but the
//! wheel files it in a bucket of its level's granularity and fires the bucket at the first
//! multiple of that granularity strictly after the expiry, so that no timer fires early. Level 0
//! (expiries under 63 jiffies away) has one-jiffy buckets; each level above is 8 times coarser
//! and reaches 8 times further. At HZ = 250 a 200 ms retransmission timeout (50 jiffies) fires
//! one jiffy late; one of 300 ms (75 jiffies, level 1) fires up to 8 jiffies (32 ms) late; a
//! backed-off one of 2.4 s (600 jiffies, level 2) up to 64 jiffies (256 ms) late.

use crate::units::{SimDuration, SimTime};

/// `LVL_CLK_SHIFT`: each level is 2^3 times coarser than the one below.
const LVL_CLK_SHIFT: u32 = 3;
/// `LVL_SIZE - 1`: a level holds 64 buckets.
const LVL_SPAN: u64 = 63;
/// `LVL_DEPTH` for HZ > 100.
const LVL_DEPTH: u32 = 9;

/// The time a timer armed at `now` to run `d` later fires, on a wheel ticking every `jiffy`.
pub fn fire_time(now: SimTime, d: SimDuration, jiffy: SimDuration) -> SimTime {
    if jiffy.0 == 0 {
        return now + d;
    }
    let clk = now.0 / jiffy.0;
    let delta = d.0.div_ceil(jiffy.0);
    let expires = clk.saturating_add(delta);
    // `LVL_START(n)` = 63 << 3(n - 1): the first distance that level n holds.
    let level = (1..LVL_DEPTH).take_while(|&n| delta >= LVL_SPAN << (LVL_CLK_SHIFT * (n - 1))).count() as u32;
    let shift = LVL_CLK_SHIFT * level;
    let bucket = ((expires >> shift) + 1) << shift;
    SimTime(bucket.saturating_mul(jiffy.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    const JIFFY: SimDuration = SimDuration(4_000_000); // HZ = 250

    fn ms(v: u64) -> SimDuration {
        SimDuration::from_millis(v)
    }

    #[test]
    fn level_zero_timer_fires_on_the_jiffy_after_its_expiry_calc_index() {
        // Armed 1 ms into jiffy 10 for 40 ms (10 jiffies): expiry jiffy 20, fired at 21.
        let now = SimTime(41_000_000);
        assert_eq!(fire_time(now, ms(40), JIFFY), SimTime(84_000_000));
        // Never early: at least the asked delay has passed.
        for start in (0..40_000_000).step_by(333_333) {
            let at = fire_time(SimTime(start), ms(40), JIFFY);
            assert!(at.0 - start > 40_000_000 && at.0 - start <= 44_000_000, "{start}: {at:?}");
        }
    }

    #[test]
    fn level_one_timer_rounds_up_to_eight_jiffies_calc_wheel_index() {
        // 300 ms = 75 jiffies >= LVL_START(1) = 63: level 1, buckets of 8 jiffies (32 ms).
        let at = fire_time(SimTime(0), ms(300), JIFFY);
        assert_eq!(at, SimTime(80 * 4_000_000), "expiry 75 -> bucket (75 >> 3) + 1 = 10, << 3 = jiffy 80");
        // 62 jiffies stays on level 0; 63 moves to level 1.
        assert_eq!(fire_time(SimTime(0), ms(248), JIFFY), SimTime(63 * 4_000_000));
        assert_eq!(fire_time(SimTime(0), ms(252), JIFFY), SimTime(64 * 4_000_000));
    }

    #[test]
    fn level_two_timer_rounds_up_to_sixty_four_jiffies() {
        // 2.4 s = 600 jiffies >= LVL_START(2) = 504: buckets of 64 jiffies (256 ms).
        let at = fire_time(SimTime(0), ms(2_400), JIFFY);
        assert_eq!(at, SimTime(640 * 4_000_000));
    }

    #[test]
    fn without_a_tick_the_timer_fires_exactly() {
        assert_eq!(fire_time(SimTime(5), ms(7), SimDuration::ZERO), SimTime(5) + ms(7));
    }
}
