//! Retransmission timeout estimation (RFC 6298) with Karn's rule enforced by the caller (no samples
//! from retransmitted segments unless timestamps disambiguate them, RFC 7323 §4).

use crate::units::SimDuration;

#[derive(Debug, Clone)]
pub struct RttEstimator {
    /// SRTT and RTTVAR in ns; `None` until the first sample (RFC 6298 §2.1).
    srtt: Option<u64>,
    rttvar: u64,
    /// The current RTO before backoff.
    rto: u64,
    /// Number of consecutive expirations (exponential backoff, RFC 6298 §5.5).
    backoff: u32,
    min_rto: u64,
    max_rto: u64,
    granularity: u64,
    /// A fixed timeout that replaces the estimate and is never backed off (seed 004 §5.1).
    fixed: Option<u64>,
}

impl RttEstimator {
    pub fn new(initial_rto: SimDuration, min_rto: SimDuration, max_rto: SimDuration, granularity: SimDuration) -> Self {
        Self {
            srtt: None,
            rttvar: 0,
            rto: initial_rto.0.clamp(min_rto.0, max_rto.0),
            backoff: 0,
            min_rto: min_rto.0,
            max_rto: max_rto.0,
            granularity: granularity.0,
            fixed: None,
        }
    }

    /// Replace RFC 6298 by a constant timeout, with no backoff.
    pub fn with_fixed_rto(mut self, rto: SimDuration) -> Self {
        self.fixed = Some(rto.0);
        self
    }

    /// Take one RTT measurement R (RFC 6298 §2.2-2.3, alpha = 1/8, beta = 1/4).
    pub fn on_sample(&mut self, r: SimDuration) {
        let r = r.0;
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = r / 2;
            }
            Some(srtt) => {
                let err = srtt.abs_diff(r);
                self.rttvar = (3 * self.rttvar + err) / 4;
                self.srtt = Some((7 * srtt + r) / 8);
            }
        }
        // RFC 6298 §2.4: RTO = SRTT + max(G, K*RTTVAR), K = 4; §2.4-2.5: clamp to [min, max].
        let srtt = self.srtt.expect("set above");
        self.rto = (srtt + self.granularity.max(4 * self.rttvar)).clamp(self.min_rto, self.max_rto);
        // A fresh sample ends the backoff (RFC 6298 §5.7 note on collapsing the backoff).
        self.backoff = 0;
    }

    /// The timeout to arm now: the RTO doubled once per consecutive expiry, capped at max_rto.
    pub fn rto(&self) -> SimDuration {
        if let Some(f) = self.fixed {
            return SimDuration(f);
        }
        let shifted = self.rto.checked_shl(self.backoff).filter(|v| v >> self.backoff == self.rto);
        SimDuration(shifted.unwrap_or(u64::MAX).min(self.max_rto))
    }

    /// RFC 6298 §5.5: back off the timer after an expiry.
    pub fn on_timeout(&mut self) {
        if self.fixed.is_none() && self.rto().0 < self.max_rto {
            self.backoff += 1;
        }
    }

    pub fn backoff(&self) -> u32 {
        self.backoff
    }

    pub fn srtt(&self) -> Option<SimDuration> {
        self.srtt.map(SimDuration)
    }

    pub fn rttvar(&self) -> SimDuration {
        SimDuration(self.rttvar)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est() -> RttEstimator {
        RttEstimator::new(SimDuration::from_secs(1), SimDuration::from_millis(200), SimDuration::from_secs(60), SimDuration::from_millis(1))
    }

    #[test]
    fn first_sample_sets_srtt_and_rttvar_half() {
        let mut e = est();
        e.on_sample(SimDuration::from_millis(100));
        assert_eq!(e.srtt(), Some(SimDuration::from_millis(100)));
        // RTO = 100 + 4 * 50 = 300 ms (RFC 6298 §2.2).
        assert_eq!(e.rto(), SimDuration::from_millis(300));
    }

    #[test]
    fn later_samples_use_alpha_one_eighth_beta_one_quarter() {
        let mut e = est();
        e.on_sample(SimDuration::from_millis(100));
        e.on_sample(SimDuration::from_millis(200));
        // RTTVAR = 3/4*50 + 1/4*100 = 62.5; SRTT = 7/8*100 + 1/8*200 = 112.5; RTO = 112.5 + 250.
        assert_eq!(e.srtt(), Some(SimDuration(112_500_000)));
        assert_eq!(e.rto(), SimDuration(362_500_000));
    }

    #[test]
    fn rto_doubles_on_each_expiry_up_to_max() {
        let mut e = est();
        assert_eq!(e.rto(), SimDuration::from_secs(1));
        e.on_timeout();
        assert_eq!(e.rto(), SimDuration::from_secs(2));
        e.on_timeout();
        assert_eq!(e.rto(), SimDuration::from_secs(4));
        for _ in 0..10 {
            e.on_timeout();
        }
        assert_eq!(e.rto(), SimDuration::from_secs(60));
    }

    #[test]
    fn a_fixed_rto_ignores_samples_and_never_backs_off_seed004() {
        let mut e = est().with_fixed_rto(SimDuration::from_millis(50));
        e.on_sample(SimDuration::from_millis(300));
        e.on_timeout();
        e.on_timeout();
        assert_eq!(e.rto(), SimDuration::from_millis(50));
    }

    #[test]
    fn rto_is_at_least_min_rto() {
        let mut e = est();
        e.on_sample(SimDuration::from_millis(1));
        assert_eq!(e.rto(), SimDuration::from_millis(200));
    }
}
