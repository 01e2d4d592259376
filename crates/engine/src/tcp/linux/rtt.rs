//! The round-trip estimator and retransmission timeout as Linux computes them
//! (net/ipv4/tcp_input.c `tcp_rtt_estimator`, `tcp_set_rto`; net/ipv4/tcp_timer.c backoff).
//!
//! SRTT has RFC 6298's gain of 1/8. The deviation differs: `mdev` (gain 1/4, but only 1/32 for
//! samples below SRTT, so a falling RTT does not inflate the timeout) feeds `mdev_max`, the
//! largest deviation seen in the current round trip; `rttvar` follows `mdev_max` up at once
//! and decays toward it by a quarter once per round trip (when `snd_una` passes the sequence
//! recorded at the round's start). `mdev_max` restarts each round at `rto_min`, so `rttvar`
//! never falls below it: RTO = SRTT + max(rto_min, ~4 x deviation), in whole jiffies.
//! A timeout doubles the RTO itself (`icsk_rto <<= 1`); only a new RTT sample recomputes it.

use crate::units::SimDuration;

#[derive(Debug, Clone)]
pub struct LinuxRtt {
    /// Smoothed RTT, ns; 0 until the first sample.
    srtt: u64,
    /// Four times the mean deviation (`mdev_us`), ns.
    mdev: u64,
    /// The largest `mdev` this round trip, at least `rto_min` (`mdev_max_us`).
    mdev_max: u64,
    /// The variance term of the RTO (`rttvar_us`), ns.
    rttvar: u64,
    /// `rtt_seq`: the round ends when `snd_una` passes it.
    rtt_seq: u64,
    /// The timeout armed now (`icsk_rto`), backoff included, ns.
    rto: u64,
    /// Consecutive timeouts since the last RTT sample (`icsk_backoff`).
    backoff: u32,
    rto_min: u64,
    rto_max: u64,
    /// The timer's granularity (a jiffy): timeouts are whole multiples of it.
    tick: u64,
}

impl LinuxRtt {
    pub fn new(initial_rto: SimDuration, rto_min: SimDuration, rto_max: SimDuration, tick: SimDuration) -> Self {
        Self {
            srtt: 0,
            mdev: 0,
            mdev_max: 0,
            rttvar: 0,
            rtt_seq: 0,
            rto: initial_rto.0,
            backoff: 0,
            rto_min: rto_min.0,
            rto_max: rto_max.0,
            tick: tick.0,
        }
    }

    pub fn srtt(&self) -> Option<SimDuration> {
        (self.srtt > 0).then_some(SimDuration(self.srtt))
    }
    pub fn rto(&self) -> SimDuration {
        SimDuration(self.rto)
    }
    pub fn backoff(&self) -> u32 {
        self.backoff
    }
    /// The variance term, for tests and traces.
    pub fn rttvar(&self) -> SimDuration {
        SimDuration(self.rttvar)
    }

    /// `tcp_rtt_estimator` then `tcp_set_rto` for a sample `m`; `snd_una`/`snd_nxt` as the ACK
    /// left them. A valid sample also ends the backoff (RFC 6298 §5.7, as Linux does).
    pub fn on_sample(&mut self, m: SimDuration, snd_una: u64, snd_nxt: u64) {
        let m = m.0.max(1);
        if self.srtt == 0 {
            self.srtt = m;
            self.mdev = 2 * m;
            self.rttvar = self.mdev.max(self.rto_min);
            self.mdev_max = self.rttvar;
            self.rtt_seq = snd_nxt;
        } else {
            let srtt = self.srtt as i64;
            let err = m as i64 - srtt;
            self.srtt = (srtt + err / 8).max(1) as u64;
            // mdev holds 4 x the deviation, so "mdev += |err| - mdev/4" is a 1/4 gain.
            let quarter = (self.mdev / 4) as i64;
            let mut step = err.abs() - quarter;
            if err < 0 && step > 0 {
                step /= 8; // a falling RTT moves the deviation 8 times more slowly
            }
            self.mdev = (self.mdev as i64 + step).max(0) as u64;
            if self.mdev > self.mdev_max {
                self.mdev_max = self.mdev;
                self.rttvar = self.rttvar.max(self.mdev_max);
            }
            if snd_una > self.rtt_seq {
                if self.mdev_max < self.rttvar {
                    self.rttvar -= (self.rttvar - self.mdev_max) / 4;
                }
                self.rtt_seq = snd_nxt;
                self.mdev_max = self.rto_min;
            }
        }
        self.rto = self.computed_rto();
        self.backoff = 0;
    }

    /// `__tcp_set_rto` with `tcp_bound_rto`: SRTT + rttvar, rounded up to the jiffy.
    fn computed_rto(&self) -> u64 {
        let raw = self.srtt + self.rttvar;
        let rounded = if self.tick > 0 { raw.div_ceil(self.tick) * self.tick } else { raw };
        rounded.min(self.rto_max)
    }

    /// A retransmission timeout: double the RTO (`tcp_retransmit_timer`), up to the maximum.
    pub fn on_timeout(&mut self) {
        self.backoff += 1;
        self.rto = (self.rto.saturating_mul(2)).min(self.rto_max);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> SimDuration {
        SimDuration::from_millis(n)
    }

    fn estimator() -> LinuxRtt {
        LinuxRtt::new(ms(1000), ms(200), ms(120_000), ms(4))
    }

    #[test]
    fn the_first_sample_gives_srtt_plus_a_variance_floored_at_rto_min_tcp_rtt_estimator() {
        let mut r = estimator();
        r.on_sample(ms(40), 1, 100);
        assert_eq!(r.srtt(), Some(ms(40)));
        // mdev = 80 ms is below rto_min, so rttvar = 200 ms and RTO = 240 ms.
        assert_eq!(r.rto(), ms(240));
        let mut r = estimator();
        r.on_sample(ms(300), 1, 100);
        assert_eq!(r.rto(), ms(900), "srtt + 2 x srtt when that exceeds rto_min: RTO = 3 RTT");
    }

    #[test]
    fn a_steady_rtt_keeps_the_timeout_at_srtt_plus_rto_min_not_below() {
        let mut r = estimator();
        for k in 0..50u64 {
            r.on_sample(ms(40), 1 + 100 * k, 100 * (k + 1));
        }
        assert_eq!(r.rto(), ms(240));
    }

    #[test]
    fn a_falling_rtt_barely_moves_the_deviation_while_a_rising_one_does_tcp_rtt_estimator() {
        let mut falling = estimator();
        falling.on_sample(ms(400), 1, 10);
        let before = falling.mdev;
        falling.on_sample(ms(100), 1, 10);
        let mut rising = estimator();
        rising.on_sample(ms(400), 1, 10);
        rising.on_sample(ms(700), 1, 10);
        // |err| = 300 ms both ways; mdev = 800 ms: a rise moves mdev by 300 - 200 = +100 ms,
        // a fall of the same size by (300 - 200) / 8 = +12.5 ms.
        assert_eq!(rising.mdev - before, ms(100).0);
        assert_eq!(falling.mdev - before, ms(100).0 / 8);
    }

    #[test]
    fn a_timeout_doubles_the_rto_and_a_sample_resets_it_tcp_retransmit_timer() {
        let mut r = estimator();
        r.on_sample(ms(40), 1, 100);
        r.on_timeout();
        r.on_timeout();
        assert_eq!((r.rto(), r.backoff()), (ms(960), 2));
        r.on_sample(ms(40), 200, 300);
        assert_eq!((r.rto(), r.backoff()), (ms(240), 0));
    }

    #[test]
    fn the_timeout_is_a_whole_number_of_jiffies() {
        let mut r = estimator();
        r.on_sample(SimDuration::from_micros(41_500), 1, 100);
        assert_eq!(r.rto().0 % ms(4).0, 0);
        assert_eq!(r.rto(), ms(244), "41.5 + 200 ms, rounded up to 244");
    }
}
