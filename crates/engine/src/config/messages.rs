//! serde's error messages in the scenario's own words: serde names the Rust types it expected
//! (`struct RawNode`, `u32`, `string or map`) and shows numbers as it parsed them (`floating
//! point 1e+30` for an integer beyond 64 bits, which JSON carries as a float); a user knows tables,
//! whole numbers, names and lists.

/// What each of the config structs is, in a scenario's terms. Any struct not listed is "a table of
/// settings", so no type name ever reaches a message.
const TABLES: &[(&str, &str)] = &[
    ("RawScenario", "a scenario table"),
    ("RawPath", "a table of path settings (mtu, frame_overhead, forward, reverse)"),
    ("RawLink", "a table of link settings (rate or trace, delay, queue, red, cross_traffic, impairments)"),
    ("TcpConfig", "a table of tcp settings (variant, initial_window, min_rto, ...)"),
    ("DelayedAck", "a table { every = <segments>, timeout = \"<duration>\", window_update = <bool> }"),
    ("TrafficConfig", "a table of traffic settings (kind, bytes)"),
    ("RawEnergy", "a table of energy settings (sender, receiver, default_profile, radio_policy, timeout)"),
    ("RedConfig", "a table of RED settings (min_th, max_th, max_p, weight, ecn)"),
    ("CrossTraffic", "a table of cross-traffic settings (rate, on, every, offset, packet)"),
    ("RawNode", "a table of node settings (profile, battery; {} for the defaults)"),
    ("RawFlow", "a table of flow settings (name, from, to, transport, tcp, traffic, start, stop, echo, split)"),
    ("RawSplit", "a table of split settings (at, tcp, buffer)"),
    ("RawBulk", "a table of traffic settings (kind = \"bulk\", bytes)"),
    ("RawTimed", "a table of traffic settings (kind = \"timed\", duration)"),
    ("RawOnOff", "a table of traffic settings (kind = \"on_off\", message, interval, distribution)"),
    ("RawCbr", "a table of traffic settings (kind = \"cbr\", rate, packet)"),
    ("RawBattery", "a table of battery settings (capacity, voltage, model, sample, ...)"),
    ("E2tcpConfig", "a table of E2TCP settings"),
    ("DeviceProfile", "a device profile table (name, platform, radio, cpu, ...)"),
    ("Platform", "a table of platform settings"),
    ("Radio", "a table of radio settings"),
    ("Phy", "a table of radio PHY settings (rate, preamble, mac_overhead)"),
    ("Cpu", "a table of CPU settings"),
    ("CycleCosts", "a table of CPU cycle costs"),
    ("GeState", "a table { per, min, max }"),
    ("RouteNotify", "a table { delay, restore }"),
    ("RawChannel", "a table of channel settings"),
    ("RawPipe", "a table of pipe settings"),
    ("RawMetrics", "a table of metrics settings"),
];

/// The largest value of each unsigned integer type serde may name.
const WHOLE: &[(&str, u64)] = &[
    ("u8", u8::MAX as u64),
    ("u16", u16::MAX as u64),
    ("u32", u32::MAX as u64),
    ("u64", u64::MAX),
    ("usize", usize::MAX as u64),
];

/// A serde error message for a scenario value, in the scenario's terms.
pub(crate) fn user_message(msg: &str) -> String {
    // serde_json appends " at line 1 column 2" to some messages; a JSON value has no lines.
    let msg = match msg.find(" at line ") {
        Some(i) => &msg[..i],
        None => msg,
    };
    for prefix in ["invalid type: ", "invalid value: "] {
        if let Some((got, expected)) = msg.strip_prefix(prefix).and_then(|rest| rest.split_once(", expected ")) {
            return mismatch(got, expected);
        }
    }
    msg.to_string()
}

/// "expected X, got Y", or "N is too large: at most M" for a whole number beyond its type.
fn mismatch(got: &str, expected: &str) -> String {
    if let Some(&(_, max)) = WHOLE.iter().find(|(name, _)| *name == expected) {
        let range = format!("a whole number from 0 to {max}");
        if let Some(n) = number(got) {
            // u64::MAX as f64 rounds up to 2^64, itself too large.
            let too_large = if max == u64::MAX { n >= max as f64 } else { n > max as f64 };
            if n.fract() == 0.0 && too_large {
                return format!("{} is too large: at most {max}", show_number(got, n));
            }
        }
        return format!("expected {range}, got {}", value(got));
    }
    format!("expected {}, got {}", expectation(expected), value(got))
}

/// The number in serde's "integer `N`" or "floating point `X`".
fn number(got: &str) -> Option<f64> {
    let inner = got.strip_prefix("integer `").or_else(|| got.strip_prefix("floating point `"))?;
    inner.strip_suffix('`')?.parse().ok()
}

/// A number as the user would write it: integers in full, huge floats as 1e30.
fn show_number(got: &str, n: f64) -> String {
    if got.starts_with("integer") {
        return got["integer `".len()..got.len() - 1].to_string();
    }
    if n.fract() == 0.0 && n.abs() >= 1e16 {
        format!("{n:e}")
    } else {
        n.to_string()
    }
}

/// What serde found, without its type words.
fn value(got: &str) -> String {
    let strip = |prefix: &str| got.strip_prefix(prefix).and_then(|r| r.strip_suffix('`')).map(str::to_string);
    if let Some(s) = got.strip_prefix("string ") {
        return s.to_string();
    }
    if let Some(v) = strip("integer `").or_else(|| strip("boolean `")) {
        return v;
    }
    if let Some(n) = number(got) {
        return show_number(got, n);
    }
    match got {
        "map" => "a table".into(),
        "sequence" => "a list".into(),
        "unit value" | "Option value" => "null".into(),
        other => other.to_string(),
    }
}

/// What serde expected, as a kind of scenario value.
fn expectation(expected: &str) -> String {
    if let Some(name) = expected.strip_prefix("struct ") {
        return TABLES.iter().find(|(n, _)| *n == name).map_or("a table of settings", |(_, d)| d).to_string();
    }
    if expected.starts_with("enum ") || expected == "string or map" || expected == "variant identifier" {
        return "a name (a string)".into();
    }
    match expected {
        "f64" | "f32" => "a number".into(),
        "i8" | "i16" | "i32" | "i64" | "isize" => "a whole number".into(),
        "a boolean" => "true or false".into(),
        "a sequence" => "a list".into(),
        "a map" => "a table".into(),
        other => match other.strip_prefix("an array of length ") {
            Some(n) => format!("a list of {n}"),
            None => other.to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_names_become_kinds_of_scenario_values() {
        assert_eq!(
            user_message("invalid type: string \"x\", expected struct RawNode"),
            "expected a table of node settings (profile, battery; {} for the defaults), got \"x\""
        );
        assert_eq!(user_message("invalid type: integer `3`, expected struct Unlisted"), "expected a table of settings, got 3");
        assert!(user_message("invalid type: integer `3`, expected string or map").starts_with("expected a name"));
        assert_eq!(user_message("invalid type: map, expected a boolean"), "expected true or false, got a table");
        assert_eq!(user_message("invalid type: string \"big\", expected u32"), "expected a whole number from 0 to 4294967295, got \"big\"");
        assert_eq!(user_message("invalid type: floating point `1.5`, expected u32"), "expected a whole number from 0 to 4294967295, got 1.5");
        assert_eq!(user_message("invalid value: integer `-1`, expected u32"), "expected a whole number from 0 to 4294967295, got -1");
    }

    #[test]
    fn whole_numbers_beyond_their_type_are_too_large_with_the_maximum() {
        assert_eq!(user_message("invalid type: floating point `1e+30`, expected u32"), "1e30 is too large: at most 4294967295");
        assert_eq!(user_message("invalid value: integer `5000000000`, expected u32"), "5000000000 is too large: at most 4294967295");
        assert_eq!(
            user_message("invalid type: floating point `1e+30`, expected u64"),
            "1e30 is too large: at most 18446744073709551615"
        );
    }
}
