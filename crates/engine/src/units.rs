//! Units: simulated time is an integer count of nanoseconds. Strings such as `"20ms"`, `"2Mbps"` and
//! `"5MB"` are parsed here and only here (the config layer); the simulator sees integers.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// An instant of simulated time, in nanoseconds since the start of the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct SimTime(pub u64);

/// A span of simulated time, in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct SimDuration(pub u64);

pub const NS_PER_SEC: u64 = 1_000_000_000;

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);
    pub const MAX: SimTime = SimTime(u64::MAX);
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / NS_PER_SEC as f64
    }
    /// Time elapsed since `earlier` (zero if `earlier` is later).
    pub fn saturating_since(self, earlier: SimTime) -> SimDuration {
        SimDuration(self.0.saturating_sub(earlier.0))
    }
}

impl SimDuration {
    pub const ZERO: SimDuration = SimDuration(0);
    pub fn from_millis(ms: u64) -> Self {
        SimDuration(ms * 1_000_000)
    }
    pub fn from_micros(us: u64) -> Self {
        SimDuration(us * 1_000)
    }
    pub fn from_secs(s: u64) -> Self {
        SimDuration(s * NS_PER_SEC)
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / NS_PER_SEC as f64
    }
}

/// When a timer of length `d` set at `now` fires if it counts ticks of `tick` (0 = exact): it
/// needs ceil(d / tick) ticks, at least one, and the first tick is the next boundary, so it fires
/// on a boundary between (n - 1) and n ticks after `now` (a BSD callout or slow-timer count, a
/// Linux jiffies timer).
#[inline]
pub fn on_tick(now: SimTime, d: SimDuration, tick: SimDuration) -> SimTime {
    if tick.0 == 0 {
        return now + d;
    }
    let n = d.0.div_ceil(tick.0).max(1);
    SimTime((now.0 / tick.0).saturating_add(n).saturating_mul(tick.0))
}

impl Add<SimDuration> for SimTime {
    type Output = SimTime;
    fn add(self, d: SimDuration) -> SimTime {
        SimTime(self.0.saturating_add(d.0))
    }
}
impl AddAssign<SimDuration> for SimTime {
    fn add_assign(&mut self, d: SimDuration) {
        self.0 = self.0.saturating_add(d.0);
    }
}
impl Sub for SimTime {
    type Output = SimDuration;
    fn sub(self, rhs: SimTime) -> SimDuration {
        SimDuration(self.0 - rhs.0)
    }
}
impl Add for SimDuration {
    type Output = SimDuration;
    fn add(self, d: SimDuration) -> SimDuration {
        SimDuration(self.0.saturating_add(d.0))
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.6}s", self.as_secs_f64())
    }
}

/// Time to serialize `bytes` at `rate_bps`, rounded up to the next nanosecond.
pub fn airtime(bytes: u64, rate_bps: u64) -> SimDuration {
    // u64 arithmetic suffices for any packet (< 2^31 bytes); fall back to u128 beyond.
    match bytes.checked_mul(8 * NS_PER_SEC) {
        Some(bits_ns) => SimDuration(bits_ns.div_ceil(rate_bps)),
        None => SimDuration((bytes as u128 * 8 * NS_PER_SEC as u128).div_ceil(rate_bps as u128) as u64),
    }
}

/// Split a quantity string into its decimal number and unit suffix: `"1.5ms"` -> (1.5 as a
/// fraction, "ms"). The number is kept as an exact decimal (integer part, fraction digits).
struct Decimal {
    int: u128,
    frac: u128,
    frac_digits: u32,
}

fn split_number(s: &str) -> Option<(Decimal, &str)> {
    let s = s.trim();
    let end = s.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_')).unwrap_or(s.len());
    let (num, unit) = s.split_at(end);
    let num = num.replace('_', "");
    if num.is_empty() || num.matches('.').count() > 1 {
        return None;
    }
    let (i, f) = num.split_once('.').unwrap_or((&num, ""));
    if i.is_empty() && f.is_empty() {
        return None;
    }
    let int = if i.is_empty() { 0 } else { i.parse().ok()? };
    let frac_digits = f.len() as u32;
    if frac_digits > 18 {
        return None;
    }
    let frac = if f.is_empty() { 0 } else { f.parse().ok()? };
    Some((Decimal { int, frac, frac_digits }, unit.trim()))
}

/// `number * scale` rounded to the nearest integer, exactly (no float rounding surprises).
fn scale(d: &Decimal, scale: u128) -> Option<u64> {
    let pow = 10u128.pow(d.frac_digits);
    let whole = d.int.checked_mul(scale)?;
    let frac = (d.frac.checked_mul(scale)? + pow / 2) / pow;
    u64::try_from(whole.checked_add(frac)?).ok()
}

/// Parse a duration such as `"20ms"`, `"1.5s"`, `"250us"`, `"1h"` into nanoseconds.
pub fn parse_duration(s: &str) -> Result<SimDuration, String> {
    let err = || {
        format!("invalid duration {s:?}: expected a number with a unit ns, us, ms, s, min or h (e.g. \"20ms\")")
    };
    let (d, unit) = split_number(s).ok_or_else(err)?;
    let mult: u128 = match unit {
        "ns" => 1,
        "us" | "µs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "min" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        _ => return Err(err()),
    };
    scale(&d, mult).map(SimDuration).ok_or_else(err)
}

/// Parse a bit rate such as `"2Mbps"`, `"11Mbps"`, `"500kbps"` into bits per second.
pub fn parse_rate(s: &str) -> Result<u64, String> {
    let err = || format!("invalid rate {s:?}: expected a number with a unit bps, kbps, Mbps or Gbps (e.g. \"2Mbps\")");
    let (d, unit) = split_number(s).ok_or_else(err)?;
    let mult: u128 = match unit {
        "bps" => 1,
        "kbps" | "Kbps" => 1_000,
        "Mbps" => 1_000_000,
        "Gbps" => 1_000_000_000,
        _ => return Err(err()),
    };
    scale(&d, mult).ok_or_else(err)
}

/// Parse a byte size such as `"5MB"` (5 000 000), `"64KB"` (64 000), `"64KiB"` (65 536), `"1460B"`.
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    let err = || format!("invalid size {s:?}: expected a number with a unit B, KB, MB, GB (powers of 1000) or KiB, MiB, GiB (powers of 1024)");
    let (d, unit) = split_number(s).ok_or_else(err)?;
    let mult: u128 = match unit {
        "" | "B" => 1,
        "KB" | "kB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        _ => return Err(err()),
    };
    scale(&d, mult).ok_or_else(err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_exactly() {
        assert_eq!(parse_duration("20ms").unwrap(), SimDuration(20_000_000));
        assert_eq!(parse_duration("1.5s").unwrap(), SimDuration(1_500_000_000));
        assert_eq!(parse_duration("250us").unwrap(), SimDuration(250_000));
        assert_eq!(parse_duration("1h").unwrap(), SimDuration(3_600 * NS_PER_SEC));
        assert_eq!(parse_duration("0.1s").unwrap(), SimDuration(100_000_000));
        assert!(parse_duration("20").is_err());
        assert!(parse_duration("-1s").is_err());
        assert!(parse_duration("ms").is_err());
    }

    #[test]
    fn sizes_use_si_and_binary_prefixes() {
        assert_eq!(parse_bytes("5MB").unwrap(), 5_000_000);
        assert_eq!(parse_bytes("64KiB").unwrap(), 65_536);
        assert_eq!(parse_bytes("1460").unwrap(), 1_460);
        assert!(parse_bytes("5XB").is_err());
    }

    #[test]
    fn rates_parse_in_bits_per_second() {
        assert_eq!(parse_rate("2Mbps").unwrap(), 2_000_000);
        assert_eq!(parse_rate("5.5Mbps").unwrap(), 5_500_000);
        assert!(parse_rate("2MB").is_err());
    }

    #[test]
    fn airtime_of_1500_bytes_at_2mbps_is_6ms() {
        assert_eq!(airtime(1500, 2_000_000), SimDuration(6_000_000));
    }
}
