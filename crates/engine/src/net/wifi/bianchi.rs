//! Bianchi's model of DCF saturation throughput (G. Bianchi, "Performance analysis of the IEEE
//! 802.11 distributed coordination function", IEEE JSAC 18(3), 2000), the first check of the DCF
//! (docs/models/wifi.md "Validation").
//!
//! n stations always have a frame to send. Each transmits in a slot with probability tau and a
//! transmission collides with probability p; with W = CWmin + 1 and m backoff stages
//! (CWmax + 1 = 2^m W), eqs. (7) and (9):
//!   tau = 2 (1 - 2p) / ((1 - 2p)(W + 1) + p W (1 - (2p)^m)),   p = 1 - (1 - tau)^(n - 1).
//! Throughput, eq. (13): S = Ps Ptr E[P] / ((1 - Ptr) sigma + Ptr Ps Ts + Ptr (1 - Ps) Tc), with
//! Ptr = 1 - (1 - tau)^n and Ps = n tau (1 - tau)^(n - 1) / Ptr. The model retries a frame until it
//! succeeds (no retry limit).

use super::phy::MacTiming;

/// The model's solution for one number of stations.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Saturation {
    /// Probability that a station transmits in a slot.
    pub tau: f64,
    /// Probability that a transmission collides.
    pub p: f64,
    /// Payload bits per second over the channel.
    pub throughput_bps: f64,
}

/// tau as a function of p, eq. (7).
pub fn tau_of(p: f64, w: f64, m: u32) -> f64 {
    let q = 1.0 - 2.0 * p;
    if q.abs() < 1e-12 {
        // The limit p -> 1/2: (1 - 2p)/(1 - (2p)^m) -> 1/m.
        return 2.0 / (w + 1.0 + w * p * m as f64);
    }
    2.0 * q / (q * (w + 1.0) + p * w * (1.0 - (2.0 * p).powi(m as i32)))
}

/// Backoff stages m with CWmax + 1 = 2^m (CWmin + 1).
pub fn stages(t: &MacTiming) -> u32 {
    ((t.cw_max + 1) / (t.cw_min + 1)).trailing_zeros()
}

/// Solve the model for `n` stations. `success_s` and `collision_s` are the seconds the channel
/// is busy for a success (Ts) and a collision (Tc), `payload_bits` the bits one success carries.
pub fn saturation(
    n: u32,
    t: &MacTiming,
    success_s: f64,
    collision_s: f64,
    payload_bits: f64,
) -> Saturation {
    let w = (t.cw_min + 1) as f64;
    let m = stages(t);
    let (tau, p) = if n == 1 {
        (tau_of(0.0, w, m), 0.0)
    } else {
        // p - (1 - (1 - tau(p))^(n-1)) rises from negative at p = 0 to positive at p = 1.
        let f = |p: f64| p - (1.0 - (1.0 - tau_of(p, w, m)).powi(n as i32 - 1));
        let (mut lo, mut hi) = (0.0, 1.0 - 1e-12);
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if f(mid) > 0.0 {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        let p = 0.5 * (lo + hi);
        (tau_of(p, w, m), p)
    };
    let ptr = 1.0 - (1.0 - tau).powi(n as i32);
    let ps = n as f64 * tau * (1.0 - tau).powi(n as i32 - 1) / ptr;
    let sigma = t.slot.0 as f64 * 1e-9;
    let s = ps * ptr * payload_bits
        / ((1.0 - ptr) * sigma + ptr * ps * success_s + ptr * (1.0 - ps) * collision_s);
    Saturation {
        tau,
        p,
        throughput_bps: s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::wifi::phy::Standard;

    #[test]
    fn one_station_never_collides_and_transmits_with_probability_2_over_w_plus_1() {
        let t = Standard::B.timing();
        let s = saturation(1, &t, 1e-3, 1e-3, 8000.0);
        assert_eq!(s.p, 0.0);
        assert!((s.tau - 2.0 / 33.0).abs() < 1e-12);
    }

    #[test]
    fn the_fixed_point_satisfies_both_equations_and_p_grows_with_n_bianchi_eq_7_9() {
        let t = Standard::B.timing();
        assert_eq!(stages(&t), 5);
        let mut last = 0.0;
        for n in [2, 5, 10, 20, 50] {
            let s = saturation(n, &t, 1e-3, 1e-3, 8000.0);
            assert!(
                (s.p - (1.0 - (1.0 - s.tau).powi(n as i32 - 1))).abs() < 1e-9,
                "n = {n}"
            );
            assert!((s.tau - tau_of(s.p, 32.0, 5)).abs() < 1e-12);
            assert!(s.p > last);
            last = s.p;
        }
    }
}
