//! The seeds' efficiency metrics (docs/models/metrics.md), as pure functions of a flow's (or the
//! network's) goodput G, throughput T (its effort: every byte sent, headers and retransmissions
//! included) and the most throughput its path allows, Tmax:
//!
//! ```text
//! seed 004  EEE(a, b)  = a (T - G) / Tmax + b (Tmax - T) / Tmax      (Eq. 3; unclipped)
//!           EEE_ideal  = EEE(1, 0.3),   EP = 1 - EEE_ideal           (Eq. 6)
//!           UAR(k, l)  = 1 - [k T / Tmax + l G / T],  G / T := 0 when T = 0   (Eq. 7)
//!           unfavored: G < 50 % of the flows' mean G;  Risk Index = unfavored / flows   (Eq. 5)
//! seed 001  DataOverhead = (bytes both ends sent - payload) / payload
//!           TimeOverhead = (transfer time - payload bits / bottleneck rate) / that minimum
//!           O = w_d DataOverhead + w_t TimeOverhead,   efficiency M / S = 1 / (1 + O)
//! ```

use serde::Serialize;

/// The weights are part of the scenario contract (`[metrics]`).
pub use crate::config::metrics::MetricWeights;

/// Seed 004's and seed 001's metrics of one flow, or of the network's totals.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Efficiency {
    /// The Tmax the ratios use (bit/s).
    pub tmax_bps: f64,
    pub eee: f64,
    pub eee_ideal: f64,
    pub energy_potential: f64,
    pub uar: f64,
    /// Seed 001: overheads (null where undefined: no payload, or no transfer time for the time part).
    pub data_overhead: f64,
    pub time_overhead: f64,
    pub overhead: f64,
    /// M / S = 1 / (1 + overhead).
    pub energy_efficiency: f64,
}

/// EEE (seed 004 Eq. 3); NaN without a Tmax.
pub fn eee(a: f64, b: f64, throughput: f64, goodput: f64, tmax: f64) -> f64 {
    if tmax > 0.0 {
        a * (throughput - goodput) / tmax + b * (tmax - throughput) / tmax
    } else {
        f64::NAN
    }
}

/// UAR (seed 004 Eq. 7), with G / T taken as 0 when nothing was sent (the paper's "major penalty").
pub fn uar(k: f64, l: f64, throughput: f64, goodput: f64, tmax: f64) -> f64 {
    if tmax <= 0.0 {
        return f64::NAN;
    }
    let useful = if throughput > 0.0 { goodput / throughput } else { 0.0 };
    1.0 - (k * throughput / tmax + l * useful)
}

/// Seed 001's data overhead: every byte both ends sent beyond the payload, per payload byte.
pub fn data_overhead(bytes_sent_both_ends: u64, payload: u64) -> f64 {
    if payload == 0 {
        return f64::NAN;
    }
    (bytes_sent_both_ends as f64 - payload as f64) / payload as f64
}

/// Seed 001's time overhead: how much longer the transfer took than its payload at the
/// bottleneck rate.
pub fn time_overhead(transfer_s: f64, payload: u64, bottleneck_bps: f64) -> f64 {
    let minimum = payload as f64 * 8.0 / bottleneck_bps;
    if !(minimum > 0.0 && transfer_s.is_finite()) {
        return f64::NAN;
    }
    (transfer_s - minimum) / minimum
}

impl Efficiency {
    pub fn of(w: &MetricWeights, throughput: f64, goodput: f64, tmax: f64, data_overhead: f64, time_overhead: f64) -> Self {
        let eee_ideal = eee(1.0, 0.3, throughput, goodput, tmax);
        let overhead = w.overhead_data * data_overhead + w.overhead_time * time_overhead;
        Self {
            tmax_bps: tmax,
            eee: eee(w.eee_a, w.eee_b, throughput, goodput, tmax),
            eee_ideal,
            energy_potential: 1.0 - eee_ideal,
            uar: uar(w.uar_k, w.uar_l, throughput, goodput, tmax),
            data_overhead,
            time_overhead,
            overhead,
            energy_efficiency: 1.0 / (1.0 + overhead),
        }
    }
}

/// Flows whose goodput is below half the flows' mean (seed 004's unfavored flows).
pub fn unfavored(goodputs: &[f64]) -> Vec<bool> {
    if goodputs.is_empty() {
        return Vec::new();
    }
    let mean = goodputs.iter().sum::<f64>() / goodputs.len() as f64;
    goodputs.iter().map(|&g| g < 0.5 * mean).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ideal_eee_is_0_3_with_nothing_sent_and_0_at_full_useful_use_seed_004_eq_3() {
        assert!((eee(1.0, 0.3, 0.0, 0.0, 100.0) - 0.3).abs() < 1e-12);
        assert_eq!(eee(1.0, 0.3, 100.0, 100.0, 100.0), 0.0);
        // Seed 004's third worked value (Tmax 100, T 99, G 1) is 0.983 by its own formula; the
        // paper prints 0.993 (parameters.md b.5).
        assert!((eee(1.0, 0.3, 99.0, 1.0, 100.0) - 0.983).abs() < 1e-12);
        // The device weights: an extremely conservative protocol (T = G = 0) costs b.
        assert!((eee(5.0, 0.72, 0.0, 0.0, 10.0) - 0.72).abs() < 1e-12);
    }

    #[test]
    fn uar_is_1_with_nothing_sent_and_0_for_full_useful_use_seed_004_eq_7() {
        assert_eq!(uar(0.5, 0.5, 0.0, 0.0, 100.0), 1.0);
        assert_eq!(uar(0.5, 0.5, 100.0, 100.0, 100.0), 0.0);
        assert!((uar(0.5, 0.5, 50.0, 25.0, 100.0) - 0.5).abs() < 1e-12);
    }

    #[test]
    fn energy_potential_is_one_minus_ideal_eee_and_overheads_weigh_as_set_seed_001() {
        let w = MetricWeights::default();
        let e = Efficiency::of(&w, 80.0, 60.0, 100.0, 0.1, 0.3);
        assert!((e.energy_potential - (1.0 - e.eee_ideal)).abs() < 1e-15);
        assert!((e.overhead - 0.2).abs() < 1e-12 && (e.energy_efficiency - 1.0 / 1.2).abs() < 1e-12);
        assert!((data_overhead(1_100, 1_000) - 0.1).abs() < 1e-12);
        // 1 MB at 1 Mbit/s takes 8 s at least: 10 s is 25 % over.
        assert!((time_overhead(10.0, 1_000_000, 1e6) - 0.25).abs() < 1e-12);
        assert!(data_overhead(10, 0).is_nan() && time_overhead(f64::NAN, 10, 1e6).is_nan());
    }

    #[test]
    fn flows_below_half_the_mean_goodput_are_unfavored_seed_004_eq_5() {
        assert_eq!(unfavored(&[10.0, 10.0, 4.0, 10.0]), vec![false, false, true, false]);
        assert_eq!(unfavored(&[3.0, 3.0]), vec![false, false]);
    }
}
