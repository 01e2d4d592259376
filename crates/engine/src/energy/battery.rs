//! A node's battery (docs/models/battery.md): it supplies the node's power P(t) at a constant
//! voltage V, so it is discharged by the current I(t) = P(t) / V, drawn one constant-power
//! segment at a time in time order. Three models of how that current empties it:
//!
//! ```text
//! ideal    dq/dt = -I                                   empty when q = 0: lifetime = E / P exactly
//! Peukert  dq/dt = -I (I / I_r)^(n-1),  I_r = C / H     constant I: lifetime = H (C / (I H))^n
//! KiBaM    dy1/dt = -I + k (h2 - h1),  dy2/dt = -k (h2 - h1),  h1 = y1 / c,  h2 = y2 / (1 - c)
//!          empty when the available well y1 is empty (Manwell & McGowan, Solar Energy 1993)
//! ```
//!
//! C is the capacity in coulombs (mAh x 3.6, or Wh x 3600 / V), H the rated discharge time,
//! n Peukert's exponent, c the share of the charge that is available at once and k the rate
//! constant between the two wells. KiBaM gives the rate-capacity effect (a heavy load empties the
//! available well before the bound charge flows in) and recovery (rest lets it flow back).

use crate::error::EngineError;
use serde::Serialize;

/// The most samples a remaining-capacity series keeps: 10 million (116 days of simulated time at
/// the shortest `sample`, 1 s), 160 MB in the engine, about 400 MB of record text and 640 MB of
/// Python floats.
pub const MAX_SERIES_SAMPLES: u64 = 10_000_000;

/// A battery as the scenario gives it is part of the scenario contract (`nodes.NAME.battery`).
pub use crate::config::{BatteryConfig, BatteryModel};

/// What the record says of a battery.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BatteryResult {
    pub model: &'static str,
    pub capacity_j: f64,
    pub capacity_mah: f64,
    /// When the battery was empty (s), null if it lasted the window.
    pub lifetime_s: Option<f64>,
    /// Charge left at the window's end (both wells for KiBaM), as energy at the battery's voltage.
    pub remaining_j: f64,
    pub remaining_fraction: f64,
    /// The remaining-capacity series: sample times (s) and remaining charge (mAh).
    pub series_t_s: Vec<f64>,
    pub series_remaining_mah: Vec<f64>,
}

const NS: f64 = 1e-9;

/// The discharge of one battery over a run.
#[derive(Debug, Clone)]
pub struct Battery {
    cfg: BatteryConfig,
    /// Charge (C): the available and the bound well for KiBaM; all of it in `y1` otherwise.
    y1: f64,
    y2: f64,
    /// Time drawn up to (ns), when it was empty, and the next sample time.
    t: u64,
    empty_at: Option<u64>,
    next_sample: u64,
    series: Vec<(u64, f64)>,
}

impl Battery {
    /// A full battery that will be drawn from up to `until` (ns). Its remaining-capacity series
    /// is reserved whole here, fallibly: a series too long for memory (or longer than
    /// [`MAX_SERIES_SAMPLES`]) is an error at key `at` (the battery's `sample`), never an abort.
    pub fn new(cfg: &BatteryConfig, until: u64, at: &str) -> Result<Self, EngineError> {
        let c = cfg.capacity_c;
        let (y1, y2) = match cfg.model {
            BatteryModel::Kibam { c: share, .. } => (share * c, (1.0 - share) * c),
            _ => (c, 0.0),
        };
        // Samples at 0, sample, 2 sample, ... before `until`, and one at the end.
        let samples = until / cfg.sample.0.max(1) + 2;
        let too_long = || {
            EngineError::config(
                at,
                format!(
                    "a remaining-capacity series of {samples} samples (one every {} for {:.0} s) is more than {} (at most {MAX_SERIES_SAMPLES}); sample less often or shorten stop_after",
                    crate::config::serde_units::format_duration(cfg.sample),
                    until as f64 / 1e9,
                    if samples > MAX_SERIES_SAMPLES { "the engine keeps" } else { "fits in memory" },
                ),
            )
        };
        if samples > MAX_SERIES_SAMPLES {
            return Err(too_long());
        }
        let mut series = Vec::new();
        series.try_reserve_exact(samples as usize).map_err(|_| too_long())?;
        Ok(Self { cfg: cfg.clone(), y1, y2, t: 0, empty_at: None, next_sample: 0, series })
    }

    pub fn empty_at(&self) -> Option<u64> {
        self.empty_at
    }

    fn charge(&self) -> f64 {
        (self.y1 + self.y2).max(0.0)
    }

    /// Draw `watts` during `[s, e)`; segments come in time order and cover the run.
    pub fn draw(&mut self, s: u64, e: u64, watts: f64) {
        let mut at = s.max(self.t);
        while at < e {
            if self.next_sample <= at {
                self.series.push((self.next_sample, self.charge()));
                self.next_sample += self.cfg.sample.0.max(1);
            }
            let until = e.min(self.next_sample.max(at + 1));
            self.step(at, until, watts / self.cfg.voltage_v);
            at = until;
        }
        self.t = self.t.max(e);
    }

    /// Constant current `i` (A) during `[a, b)`.
    fn step(&mut self, a: u64, b: u64, i: f64) {
        if self.empty_at.is_some() {
            return;
        }
        let dt = (b - a) as f64 * NS;
        match self.cfg.model {
            BatteryModel::Ideal | BatteryModel::Peukert { .. } => {
                let rate = self.effective_current(i);
                let left = self.y1 - rate * dt;
                if left <= 0.0 && rate > 0.0 {
                    self.empty_at = Some(a + (self.y1 / rate / NS).round() as u64);
                    self.y1 = 0.0;
                } else {
                    self.y1 = left;
                }
            }
            BatteryModel::Kibam { c, k } => {
                let (y1, y2) = kibam(self.y1, self.y2, i, c, k, dt);
                if y1 <= 0.0 {
                    // The available well ran dry within the step: find when (bisection).
                    let (mut lo, mut hi) = (0.0, dt);
                    for _ in 0..60 {
                        let mid = 0.5 * (lo + hi);
                        if kibam(self.y1, self.y2, i, c, k, mid).0 > 0.0 {
                            lo = mid;
                        } else {
                            hi = mid;
                        }
                    }
                    let (a1, a2) = kibam(self.y1, self.y2, i, c, k, hi);
                    self.empty_at = Some(a + (hi / NS).round() as u64);
                    self.y1 = a1.max(0.0);
                    self.y2 = a2;
                } else {
                    self.y1 = y1;
                    self.y2 = y2;
                }
            }
        }
    }

    /// The current the charge is lost at: Peukert's law makes a current above the rated one
    /// cost more than its share.
    fn effective_current(&self, i: f64) -> f64 {
        match self.cfg.model {
            BatteryModel::Peukert { exponent, rated_time } if i > 0.0 => {
                let rated = self.cfg.capacity_c / (rated_time.0 as f64 * NS);
                i * (i / rated).powf(exponent - 1.0)
            }
            _ => i,
        }
    }

    /// The record at the window's end `w` (ns).
    pub fn result(mut self, w: u64) -> BatteryResult {
        if self.next_sample <= w {
            self.series.push((self.next_sample.min(w), self.charge()));
        }
        let to_mah = 1.0 / 3.6;
        let cap = self.cfg.capacity_c;
        BatteryResult {
            model: match self.cfg.model {
                BatteryModel::Ideal => "ideal",
                BatteryModel::Peukert { .. } => "peukert",
                BatteryModel::Kibam { .. } => "kibam",
            },
            capacity_j: self.cfg.capacity_j(),
            capacity_mah: cap * to_mah,
            lifetime_s: self.empty_at.map(|t| t as f64 / 1e9),
            remaining_j: self.charge() * self.cfg.voltage_v,
            remaining_fraction: if cap > 0.0 { self.charge() / cap } else { 0.0 },
            series_t_s: self.series.iter().map(|s| s.0 as f64 / 1e9).collect(),
            series_remaining_mah: self.series.iter().map(|s| s.1 * to_mah).collect(),
        }
    }
}

/// The two wells after `dt` seconds of constant current `i` (Manwell & McGowan's closed form,
/// with k' = k / (c (1 - c))).
fn kibam(y1: f64, y2: f64, i: f64, c: f64, k: f64, dt: f64) -> (f64, f64) {
    let kp = k / (c * (1.0 - c));
    let y0 = y1 + y2;
    let e = (-kp * dt).exp();
    let ramp = kp * dt - 1.0 + e;
    let a = y1 * e + (y0 * kp * c - i) * (1.0 - e) / kp - i * c * ramp / kp;
    let b = y2 * e + y0 * (1.0 - c) * (1.0 - e) - i * (1.0 - c) * ramp / kp;
    (a, b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::SimDuration;

    fn cfg(model: BatteryModel) -> BatteryConfig {
        // 1000 mAh at 10 V: 3600 C, 36 kJ.
        BatteryConfig { model, capacity: "1000mAh".into(), capacity_c: 3600.0, voltage_v: 10.0, sample: SimDuration::from_secs(60) }
    }

    /// Draw constant `watts` (or the pulses of `pattern`: (watts, seconds) repeated) until empty.
    fn lifetime(model: BatteryModel, pattern: &[(f64, u64)]) -> f64 {
        let mut b = Battery::new(&cfg(model), 1_000_000 * 1_000_000_000, "battery.sample").unwrap();
        let mut t = 0u64;
        while b.empty_at().is_none() && t < 1_000_000 * 1_000_000_000 {
            for &(w, secs) in pattern {
                let e = t + secs * 1_000_000_000;
                b.draw(t, e, w);
                t = e;
            }
        }
        b.empty_at().expect("empties") as f64 / 1e9
    }

    #[test]
    fn an_ideal_battery_lasts_its_capacity_over_a_constant_power_exactly() {
        // 36 kJ at 10 W: 3600 s; at 4 W: 9000 s. Exact to the nanosecond the simulator keeps
        // time in (the charge is summed over thousands of steps in floating point).
        assert!((lifetime(BatteryModel::Ideal, &[(10.0, 7)]) - 3600.0).abs() <= 1e-9);
        assert!((lifetime(BatteryModel::Ideal, &[(4.0, 1)]) - 9000.0).abs() <= 1e-9 * 9000.0 / 3600.0 + 1e-9);
    }

    #[test]
    fn peukert_shortens_lifetime_at_higher_current_as_its_exponent_says() {
        // Rated 1000 mAh over 10 h (0.1 A). At 1 A (10 W at 10 V): H (C / (I H))^n = 10 h x 0.1^1.2.
        let m = BatteryModel::Peukert { exponent: 1.2, rated_time: SimDuration::from_secs(36_000) };
        let got = lifetime(m, &[(10.0, 1)]);
        let want = 36_000.0 * 0.1f64.powf(1.2);
        assert!((got - want).abs() < 1e-6 * want, "{got} vs {want}");
        // At the rated current it delivers its capacity; with n = 1 it is ideal.
        assert!((lifetime(m, &[(1.0, 1)]) - 36_000.0).abs() < 1e-6);
        let linear = BatteryModel::Peukert { exponent: 1.0, rated_time: SimDuration::from_secs(36_000) };
        assert!((lifetime(linear, &[(10.0, 1)]) - 3600.0).abs() < 1e-6);
    }

    #[test]
    fn kibam_recovers_charge_in_rest_periods_so_a_pulsed_load_delivers_more_than_a_constant_one() {
        let m = BatteryModel::Kibam { c: 0.3, k: 1e-4 };
        // The same current, drawn without a break or in 10-s pulses with 10-s rests: the rests
        // let bound charge flow into the available well, so the pulses deliver more in all.
        let constant = lifetime(m, &[(20.0, 10)]);
        let pulsed = lifetime(m, &[(20.0, 10), (0.0, 10)]);
        let on_time = (pulsed / 20.0).floor() * 10.0 + (pulsed % 20.0).min(10.0);
        assert!(on_time > constant * 1.05, "pulsed: {on_time} s at 20 W, constant: {constant} s");
        // After the available well runs dry, rest alone refills it from the bound well.
        let (y1, y2) = kibam(0.0, 2000.0, 0.0, 0.3, 1e-4, 600.0);
        assert!(y1 > 100.0 && (y1 + y2 - 2000.0).abs() < 1e-9, "{y1} {y2}");
        let constant = lifetime(m, &[(10.0, 10)]);
        // Rate-capacity effect: below the ideal 3600 s at 10 W, and the heavier the load, the less
        // of the charge it delivers.
        assert!(constant < 3600.0);
        let heavy = lifetime(m, &[(40.0, 10)]);
        assert!(heavy * 40.0 < constant * 10.0, "{heavy} s at 40 W, {constant} s at 10 W");
        // A small load gets most of it (what stays bound at the end shrinks with the current).
        let light = lifetime(m, &[(0.5, 100)]);
        assert!(light * 0.5 > constant * 10.0 && light * 0.5 > 0.9 * 36_000.0, "{light} s at 0.5 W");
    }

    #[test]
    fn the_remaining_charge_series_is_sampled_at_its_interval_and_falls() {
        let mut b = Battery::new(&cfg(BatteryModel::Ideal), 600 * 1_000_000_000, "battery.sample").unwrap();
        b.draw(0, 600 * 1_000_000_000, 10.0);
        let r = b.result(600 * 1_000_000_000);
        assert_eq!(r.series_t_s, (0..=10).map(|k| k as f64 * 60.0).collect::<Vec<_>>());
        assert_eq!(r.series_remaining_mah[0], 1000.0);
        assert!((r.series_remaining_mah[10] - 1000.0 * (1.0 - 6000.0 / 36_000.0)).abs() < 1e-9);
        assert!((r.remaining_j - 30_000.0).abs() < 1e-6 && r.lifetime_s.is_none());
    }
}
