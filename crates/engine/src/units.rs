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
    pub fn is_zero(&self) -> bool {
        self.0 == 0
    }
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

/// A quantity's number, kept as an exact decimal: integer part, fraction digits (trailing zeros
/// removed, at most `MAX_FRAC_DIGITS` of them kept) and whether a non-zero digit was dropped.
struct Decimal {
    int: u128,
    frac: u128,
    frac_digits: u32,
    truncated: bool,
}

/// Fraction digits kept: enough for any exact duration (a whole number of nanoseconds needs at
/// most 13 after an hour) and far below u128 overflow once scaled (10^24 x 3.6e12 < 2^128).
const MAX_FRAC_DIGITS: usize = 24;

/// Why a quantity string is not a number with a unit, or not a value the engine can hold.
enum NumberError {
    /// Not a number followed by a unit.
    Syntax,
    /// More than a 64-bit count of the base unit can hold.
    Overflow,
    /// Not a whole number of the base unit (durations only: they are exact).
    Inexact,
}

fn split_number(s: &str) -> Result<(Decimal, &str), NumberError> {
    let s = s.trim();
    let end = s.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_')).unwrap_or(s.len());
    let (num, unit) = s.split_at(end);
    let num = num.replace('_', "");
    if num.is_empty() || num.matches('.').count() > 1 {
        return Err(NumberError::Syntax);
    }
    let (i, f) = num.split_once('.').unwrap_or((&num, ""));
    if i.is_empty() && f.is_empty() {
        return Err(NumberError::Syntax);
    }
    let i = i.trim_start_matches('0');
    // u128 holds any 38-digit integer; more digits are more than any quantity here can be.
    if i.len() > 38 {
        return Err(NumberError::Overflow);
    }
    let int = if i.is_empty() { 0 } else { i.parse().map_err(|_| NumberError::Syntax)? };
    let f = f.trim_end_matches('0');
    let truncated = f.len() > MAX_FRAC_DIGITS;
    let f = &f[..f.len().min(MAX_FRAC_DIGITS)];
    let frac = if f.is_empty() { 0 } else { f.parse().map_err(|_| NumberError::Syntax)? };
    Ok((Decimal { int, frac, frac_digits: f.len() as u32, truncated }, unit.trim()))
}

/// `number * scale`, exactly when `exact` (else an `Inexact` error), or rounded to the nearest
/// integer; integer arithmetic throughout, so no float rounding surprises.
fn scale(d: &Decimal, scale: u128, exact: bool) -> Result<u64, NumberError> {
    let pow = 10u128.pow(d.frac_digits);
    let whole = d.int.checked_mul(scale).ok_or(NumberError::Overflow)?;
    let frac_scaled = d.frac * scale; // < 10^24 x 3.6e12: no overflow
    if exact && (d.truncated || frac_scaled % pow != 0) {
        return Err(NumberError::Inexact);
    }
    let frac = if exact { frac_scaled / pow } else { (frac_scaled + pow / 2) / pow };
    let total = whole.checked_add(frac).ok_or(NumberError::Overflow)?;
    u64::try_from(total).map_err(|_| NumberError::Overflow)
}

/// The longest duration: simulated time is a 64-bit count of nanoseconds (about 584 years).
pub const MAX_DURATION: SimDuration = SimDuration(u64::MAX);

/// The fastest rate any link, channel, radio or traffic source may have: 1 Tbit/s, beyond any
/// wireless or wired interface the models describe, and where a packet's airtime (12 ns for
/// 1500 bytes) is still counted in whole nanoseconds with room to spare.
pub const MAX_RATE_BPS: u64 = 1_000_000_000_000;

/// Parse a duration such as `"20ms"`, `"1.5s"`, `"250us"`, `"1h"` into nanoseconds. Durations are
/// exact: a value that is not a whole number of nanoseconds (`"0.5ns"`, `"1.0000000001s"`) is
/// refused rather than rounded, and one beyond [`MAX_DURATION`] is named as too large.
pub fn parse_duration(s: &str) -> Result<SimDuration, String> {
    let syntax = || {
        format!("invalid duration {s:?}: expected a number with a unit ns, us, ms, s, min or h (e.g. \"20ms\")")
    };
    let (d, unit) = split_number(s).map_err(|e| match e {
        NumberError::Overflow => too_long(s),
        _ => syntax(),
    })?;
    let mult: u128 = match unit {
        "ns" => 1,
        "us" | "µs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "min" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        _ => return Err(syntax()),
    };
    scale(&d, mult, true).map(SimDuration).map_err(|e| match e {
        NumberError::Overflow => too_long(s),
        NumberError::Inexact => format!(
            "duration {s:?} is not a whole number of nanoseconds: simulated time counts whole nanoseconds, so write e.g. \"1ns\" or \"1500ns\""
        ),
        NumberError::Syntax => syntax(),
    })
}

fn too_long(s: &str) -> String {
    format!(
        "duration {s:?} is too large (overflow): the longest is {}ns, about 5124095h or 584 years (simulated time is a 64-bit count of nanoseconds)",
        MAX_DURATION.0
    )
}

/// Parse a bit rate such as `"2Mbps"`, `"11Mbps"`, `"500kbps"` into bits per second (at most
/// [`MAX_RATE_BPS`]).
pub fn parse_rate(s: &str) -> Result<u64, String> {
    let err = || format!("invalid rate {s:?}: expected a number with a unit bps, kbps, Mbps or Gbps (e.g. \"2Mbps\")");
    let too_fast = || format!("rate {s:?} is too large: the fastest rate is 1000Gbps (1 Tbit/s)");
    let (d, unit) = split_number(s).map_err(|e| match e {
        NumberError::Overflow => too_fast(),
        _ => err(),
    })?;
    let mult: u128 = match unit {
        "bps" => 1,
        "kbps" | "Kbps" => 1_000,
        "Mbps" => 1_000_000,
        "Gbps" => 1_000_000_000,
        _ => return Err(err()),
    };
    match scale(&d, mult, false) {
        Ok(bps) if bps <= MAX_RATE_BPS => Ok(bps),
        Ok(_) | Err(NumberError::Overflow) => Err(too_fast()),
        Err(_) => Err(err()),
    }
}

/// Parse a byte size such as `"5MB"` (5 000 000), `"64KB"` (64 000), `"64KiB"` (65 536), `"1460B"`.
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    let err = || format!("invalid size {s:?}: expected a number with a unit B, KB, MB, GB (powers of 1000) or KiB, MiB, GiB (powers of 1024)");
    let too_large = || format!("size {s:?} is too large (overflow): at most {} bytes", u64::MAX);
    let (d, unit) = split_number(s).map_err(|e| match e {
        NumberError::Overflow => too_large(),
        _ => err(),
    })?;
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
    scale(&d, mult, false).map_err(|e| match e {
        NumberError::Overflow => too_large(),
        _ => err(),
    })
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
    fn a_duration_that_is_not_a_whole_number_of_nanoseconds_is_refused_not_rounded() {
        // Simulated time counts whole nanoseconds (docs/units-and-scenarios.md "Units"): "0.5ns"
        // used to become 1 ns silently.
        for text in ["0.5ns", "1.5ns", "0.0000000001s", "1.0000000001s", "0.0000001us", "1.0000000000000000000000000001s"] {
            let msg = parse_duration(text).unwrap_err();
            assert!(msg.contains("not a whole number of nanoseconds"), "{text}: {msg}");
        }
        // Exact values with a fraction or trailing zeros stay exact.
        assert_eq!(parse_duration("0.000000001s").unwrap(), SimDuration(1));
        assert_eq!(parse_duration("1.5us").unwrap(), SimDuration(1_500));
        assert_eq!(parse_duration("1.500000000000000000000000000000s").unwrap(), SimDuration(1_500_000_000));
        assert_eq!(parse_duration("0.00000000001h").unwrap(), SimDuration(36));
        assert!(parse_duration("0.0000000000001h").is_err(), "0.36 ns");
    }

    #[test]
    fn an_overflowing_duration_is_named_as_overflow_with_the_longest_allowed() {
        for text in ["1000000000h", "18446744073709551616ns", "99999999999999999999999999999999999999999s"] {
            let msg = parse_duration(text).unwrap_err();
            assert!(msg.contains("too large (overflow)") && msg.contains("18446744073709551615ns") && msg.contains("5124095h"), "{text}: {msg}");
        }
        assert_eq!(parse_duration("18446744073709551615ns").unwrap(), MAX_DURATION);
        assert_eq!(parse_duration("5124095h").unwrap(), SimDuration(5_124_095 * 3_600 * NS_PER_SEC));
    }

    #[test]
    fn rates_above_one_terabit_per_second_are_refused_naming_the_maximum() {
        assert_eq!(parse_rate("1000Gbps").unwrap(), MAX_RATE_BPS);
        for text in ["1000.000001Gbps", "9999999999Gbps", "99999999999999999999999999999999999999999bps"] {
            let msg = parse_rate(text).unwrap_err();
            assert!(msg.contains("too large") && msg.contains("1000Gbps"), "{text}: {msg}");
        }
    }

    #[test]
    fn an_overflowing_size_is_named_as_overflow() {
        let msg = parse_bytes("18446744073709551616B").unwrap_err();
        assert!(msg.contains("too large (overflow)") && msg.contains("18446744073709551615"), "{msg}");
        assert_eq!(parse_bytes("18446744073709551615").unwrap(), u64::MAX);
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
