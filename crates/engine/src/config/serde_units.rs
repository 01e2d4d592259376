//! Serde adapters that read unit strings (`"20ms"`, `"2Mbps"`, `"5MB"`) and write them back in a
//! canonical form, so a normalized scenario round-trips.

use crate::units::{parse_bytes, parse_duration, parse_rate, SimDuration};
use serde::de::{self, Deserializer, Visitor};
use serde::Serializer;
use std::fmt;

/// Canonical text for a duration: the largest unit that represents it exactly.
pub fn format_duration(d: SimDuration) -> String {
    let ns = d.0;
    for (unit, mult) in [("h", 3_600_000_000_000u64), ("min", 60_000_000_000), ("s", 1_000_000_000), ("ms", 1_000_000), ("us", 1_000)] {
        if ns != 0 && ns % mult == 0 {
            return format!("{}{}", ns / mult, unit);
        }
    }
    if ns == 0 {
        "0s".into()
    } else {
        format!("{ns}ns")
    }
}

pub fn format_rate(bps: u64) -> String {
    for (unit, mult) in [("Gbps", 1_000_000_000u64), ("Mbps", 1_000_000), ("kbps", 1_000)] {
        if bps != 0 && bps % mult == 0 {
            return format!("{}{}", bps / mult, unit);
        }
    }
    format!("{bps}bps")
}

struct UnitVisitor {
    what: &'static str,
    parse: fn(&str) -> Result<u64, String>,
    allow_int: bool,
}

impl<'de> Visitor<'de> for UnitVisitor {
    type Value = u64;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}", self.what)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<u64, E> {
        (self.parse)(v).map_err(E::custom)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<u64, E> {
        if self.allow_int {
            Ok(v)
        } else {
            Err(E::custom(format!("expected {}, found the bare number {v} (add a unit)", self.what)))
        }
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<u64, E> {
        if v < 0 {
            return Err(E::custom(format!("expected {}, found the negative number {v}", self.what)));
        }
        self.visit_u64(v as u64)
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<u64, E> {
        // A whole number beyond 64 bits arrives as a float (JSON has one number type).
        if self.allow_int && v.fract() == 0.0 && v >= u64::MAX as f64 {
            return Err(E::custom(format!("{v:e} is too large: at most {} bytes", u64::MAX)));
        }
        Err(E::custom(format!("expected {}, found the number {v}", self.what)))
    }
}

pub mod duration {
    use super::*;
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<SimDuration, D::Error> {
        d.deserialize_any(UnitVisitor {
            what: "a duration string such as \"20ms\" (units ns, us, ms, s, min, h)",
            parse: |s| parse_duration(s).map(|d| d.0),
            allow_int: false,
        })
        .map(SimDuration)
    }
    pub fn serialize<S: Serializer>(v: &SimDuration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format_duration(*v))
    }
}

pub mod rate {
    use super::*;
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        d.deserialize_any(UnitVisitor {
            what: "a rate string such as \"2Mbps\" (units bps, kbps, Mbps, Gbps)",
            parse: parse_rate,
            allow_int: false,
        })
    }
    pub fn serialize<S: Serializer>(v: &u64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format_rate(*v))
    }
}

pub mod bytes {
    use super::*;
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        d.deserialize_any(UnitVisitor {
            what: "a size: a whole number of bytes or a string such as \"5MB\" or \"64KiB\"",
            parse: parse_bytes,
            allow_int: true,
        })
    }
    pub fn serialize<S: Serializer>(v: &u64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(*v)
    }
}

/// An optional rate (`None` when the key is absent).
pub mod opt_rate {
    use super::*;
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
        super::rate::deserialize(d).map(Some)
    }
    pub fn serialize<S: Serializer>(v: &Option<u64>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(r) => s.serialize_str(&format_rate(*r)),
            None => s.serialize_none(),
        }
    }
}
