//! Device profiles: the power figures of a node (platform, radio) and the CPU cost of each protocol
//! operation. Profiles are data: TOML files under `python/tcpenergy/profiles/`, compiled into the
//! engine so both the Rust tests and the Python package see the same figures. Each figure names its
//! source; estimates are listed in `estimated` and explained in `docs/models/profiles.md`.

pub use super::cpu::CycleCosts;
use crate::config::serde_units;
use crate::error::EngineError;
use crate::units::{self, SimDuration};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::OnceLock;

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceProfile {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Dotted keys (with `*` globs) whose values are estimates rather than published figures.
    #[serde(default)]
    pub estimated: Vec<String>,
    pub platform: Platform,
    pub radio: Radio,
    pub cpu: Cpu,
    /// How packets cross between the host and the radio card, and what that costs the CPU;
    /// without it the crossing costs nothing beyond the cycle figures (docs/models/energy.md,
    /// "Card interface").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub card: Option<CardInterface>,
    /// Dotted key -> where the figure comes from.
    #[serde(default)]
    pub sources: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Platform {
    /// Whole-node draw excluding the radio and protocol CPU work (W).
    pub base_power_w: f64,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Radio {
    pub tx_power_w: f64,
    pub rx_power_w: f64,
    pub idle_power_w: f64,
    pub sleep_power_w: f64,
    #[serde(with = "serde_units::duration")]
    pub wake_time: SimDuration,
    pub wake_power_w: f64,
    /// The radio's own physical layer. Without it the radio is abstract: it is on the air exactly
    /// while the path's link serializes the frame (docs/models/energy.md, "Airtime").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phy: Option<Phy>,
    /// A cellular radio's RRC state machine (docs/models/cellular.md): its tail after activity,
    /// RRC_IDLE with paging, and the promotion out of it (`wake_time`, `wake_power_w`). Without
    /// it the radio follows the scenario's `energy.radio_policy`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rrc: Option<super::rrc::Rrc>,
}

/// How the radio puts one IP packet on the air: a preamble and PHY header of fixed duration,
/// then the MAC frame (IP packet + `mac_overhead` bytes) at the data rate `rate`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Phy {
    /// Data bit rate (bit/s).
    #[serde(with = "serde_units::rate")]
    pub rate: u64,
    /// Preamble and PHY header, sent before the MAC frame (at the PHY's own base rate).
    #[serde(with = "serde_units::duration")]
    pub preamble: SimDuration,
    /// MAC framing bytes added to every IP packet, sent at `rate`.
    pub mac_overhead: u32,
}

/// Largest preamble accepted: far above any real PHY's (802.11b long preamble: 192 us).
const MAX_PREAMBLE: SimDuration = SimDuration(10_000_000);
/// Largest MAC overhead accepted, in bytes (an IP packet's own limit).
const MAX_MAC_OVERHEAD: u32 = 65_535;

impl Phy {
    /// Time on the air of the frame carrying an IP packet of `ip_len` bytes:
    /// preamble + (ip_len + mac_overhead) * 8 / rate, rounded up to the next ns.
    #[inline]
    pub fn airtime(&self, ip_len: u32) -> SimDuration {
        self.preamble + units::airtime(ip_len as u64 + self.mac_overhead as u64, self.rate)
    }

    fn validate(&self, at: impl Fn(&str) -> String) -> Result<(), EngineError> {
        if self.rate == 0 {
            return Err(EngineError::config(at("radio.phy.rate"), "must be > 0 (a bit rate such as \"11Mbps\")"));
        }
        if self.preamble > MAX_PREAMBLE {
            return Err(EngineError::config(
                at("radio.phy.preamble"),
                format!(
                    "must be between 0s and {}, got {}",
                    serde_units::format_duration(MAX_PREAMBLE),
                    serde_units::format_duration(self.preamble)
                ),
            ));
        }
        if self.mac_overhead > MAX_MAC_OVERHEAD {
            return Err(EngineError::config(
                at("radio.phy.mac_overhead"),
                format!("must be between 0 and {MAX_MAC_OVERHEAD} bytes, got {}", self.mac_overhead),
            ));
        }
        Ok(())
    }
}

/// The host side of a radio card: CPU time for every packet the host hands to the card or takes
/// from it. A 16-bit PC Card has no DMA, so the CPU moves each frame word by word across the card's
/// bus (programmed I/O) and takes an interrupt per frame; both take as long as the bus and the
/// card make them, whatever the CPU's clock, hence times rather than cycles. Plain numbers, like
/// the power figures, so that calibration and sensitivity sweeps can set them.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CardInterface {
    /// Per packet sent or received (µs): interrupt entry and exit, the driver, and the card
    /// commands it waits on.
    pub frame_us: f64,
    /// Per byte moved across the card's bus (ns): the IP packet and `link_header`.
    pub byte_ns: f64,
    /// Bytes the driver moves with each IP packet besides it (the card's frame descriptor and the
    /// link header it writes or reads).
    pub link_header: u32,
}

/// Largest per-packet (µs) or per-byte (ns) card time accepted: far above any real card's.
const MAX_CARD_TIME: f64 = 10_000.0;

impl CardInterface {
    /// CPU time, in ns, to move one IP packet of `ip_len` bytes across the interface.
    #[inline]
    pub fn time_ns(&self, ip_len: u32) -> f64 {
        self.frame_us * 1e3 + self.byte_ns * (ip_len as f64 + self.link_header as f64)
    }

    fn validate(&self, at: impl Fn(&str) -> String) -> Result<(), EngineError> {
        for (k, v, unit) in [("card.frame_us", self.frame_us, "µs"), ("card.byte_ns", self.byte_ns, "ns")] {
            if !v.is_finite() || !(0.0..=MAX_CARD_TIME).contains(&v) {
                return Err(EngineError::config(at(k), format!("must be a number of {unit} between 0 and {MAX_CARD_TIME}, got {v}")));
            }
        }
        if self.link_header > MAX_MAC_OVERHEAD {
            return Err(EngineError::config(at("card.link_header"), format!("must be between 0 and {MAX_MAC_OVERHEAD} bytes, got {}", self.link_header)));
        }
        Ok(())
    }
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Cpu {
    pub frequency_hz: f64,
    /// Power above base while the CPU executes protocol code (W).
    pub active_power_w: f64,
    pub cycles: CycleCosts,
    /// The CPU's DVFS operating points as published, slowest first. `frequency_hz` and
    /// `active_power_w` are the one a run uses and must be one of them (docs/models/energy.md,
    /// "Operating points"); the governor that would move between them is not modelled.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub operating_points: Vec<OperatingPoint>,
}

/// One DVFS operating point: the clock, and the power above base while busy at it.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct OperatingPoint {
    pub frequency_hz: f64,
    pub active_power_w: f64,
}

impl Cpu {
    fn validate_operating_points(&self, at: &dyn Fn(&str) -> String) -> Result<(), EngineError> {
        let mut previous = 0.0;
        for (k, p) in self.operating_points.iter().enumerate() {
            let key = |f: &str| at(&format!("cpu.operating_points.{k}.{f}"));
            if !p.frequency_hz.is_finite() || p.frequency_hz <= previous {
                return Err(EngineError::config(
                    key("frequency_hz"),
                    format!("must be finite, > 0 and above the previous point's (slowest first), got {}", p.frequency_hz),
                ));
            }
            if !p.active_power_w.is_finite() || p.active_power_w < 0.0 {
                return Err(EngineError::config(key("active_power_w"), format!("must be a finite number >= 0, got {}", p.active_power_w)));
            }
            previous = p.frequency_hz;
        }
        let in_use = OperatingPoint { frequency_hz: self.frequency_hz, active_power_w: self.active_power_w };
        if !self.operating_points.is_empty() && !self.operating_points.contains(&in_use) {
            let points: Vec<String> =
                self.operating_points.iter().map(|p| format!("{} Hz at {} W", p.frequency_hz, p.active_power_w)).collect();
            return Err(EngineError::config(
                at("cpu.frequency_hz"),
                format!(
                    "with cpu.active_power_w ({} Hz at {} W) must be one of the profile's operating points: {} (set both together)",
                    self.frequency_hz,
                    self.active_power_w,
                    points.join(", ")
                ),
            ));
        }
        Ok(())
    }
}

/// The built-in profiles, as TOML text, compiled in from the Python package's data directory.
const BUILTIN: &[(&str, &str)] = &[
    (
        "singh2002-toshiba-wavelan",
        include_str!("../../../../python/tcpenergy/profiles/singh2002-toshiba-wavelan.toml"),
    ),
    (
        "donckers2002-wavelan-modem",
        include_str!("../../../../python/tcpenergy/profiles/donckers2002-wavelan-modem.toml"),
    ),
    (
        "agrawal2003-samsung-wavelan-turbo",
        include_str!("../../../../python/tcpenergy/profiles/agrawal2003-samsung-wavelan-turbo.toml"),
    ),
    ("ideal-nic-0.3", include_str!("../../../../python/tcpenergy/profiles/ideal-nic-0.3.toml")),
    // Smartphones of Huang et al. (MobiSys 2012), each radio with its RRC machine
    // (docs/models/cellular.md), and a wired host that draws nothing, for the far end.
    ("huang2012-lte-phone", include_str!("../../../../python/tcpenergy/profiles/huang2012-lte-phone.toml")),
    ("huang2012-3g-phone", include_str!("../../../../python/tcpenergy/profiles/huang2012-3g-phone.toml")),
    ("huang2012-wifi-phone", include_str!("../../../../python/tcpenergy/profiles/huang2012-wifi-phone.toml")),
    // 2020 phones on LTE and 5G NSA, from the data of Narayanan et al. (SIGCOMM 2021)
    // (docs/models/cellular.md#reading-narayanan).
    ("narayanan2021-lte-phone", include_str!("../../../../python/tcpenergy/profiles/narayanan2021-lte-phone.toml")),
    (
        "narayanan2021-5g-nsa-lowband-phone",
        include_str!("../../../../python/tcpenergy/profiles/narayanan2021-5g-nsa-lowband-phone.toml"),
    ),
    (
        "narayanan2021-5g-nsa-mmwave-phone",
        include_str!("../../../../python/tcpenergy/profiles/narayanan2021-5g-nsa-mmwave-phone.toml"),
    ),
    // The HTC Dream on 3G as PowerTutor's model has it (Zhang et al., CODES+ISSS 2010), with its
    // CPU's two operating points (docs/models/cellular.md#reading-zhang).
    ("zhang2010-htc-dream-3g", include_str!("../../../../python/tcpenergy/profiles/zhang2010-htc-dream-3g.toml")),
    ("wired-host", include_str!("../../../../python/tcpenergy/profiles/wired-host.toml")),
    // An 802.11n network card alone, no host (Halperin et al., HotPower 2010, as ns-3's
    // WifiRadioEnergyModel restates it; docs/models/profiles.md#halperin2010-80211n-nic).
    (
        "halperin2010-80211n-nic",
        include_str!("../../../../python/tcpenergy/profiles/halperin2010-80211n-nic.toml"),
    ),
    // The figures shipped with engine 0.5 (abstract radio, memory-copy-only per-byte cost), kept so
    // results can be compared across the refit (docs/models/profiles.md#refit).
    (
        "singh2002-toshiba-wavelan-v0.5",
        include_str!("../../../../python/tcpenergy/profiles/singh2002-toshiba-wavelan-v0.5.toml"),
    ),
    (
        "agrawal2003-samsung-wavelan-turbo-v0.5",
        include_str!("../../../../python/tcpenergy/profiles/agrawal2003-samsung-wavelan-turbo-v0.5.toml"),
    ),
    // The figures shipped with engine 0.12 (no card interface: the kernel-to-card transfer sized
    // on a measured breakdown inside the cycle figures), kept for comparison
    // (docs/models/profiles.md#card-interface).
    (
        "singh2002-toshiba-wavelan-v0.12",
        include_str!("../../../../python/tcpenergy/profiles/singh2002-toshiba-wavelan-v0.12.toml"),
    ),
    (
        "agrawal2003-samsung-wavelan-turbo-v0.12",
        include_str!("../../../../python/tcpenergy/profiles/agrawal2003-samsung-wavelan-turbo-v0.12.toml"),
    ),
];

/// Names of the built-in profiles.
pub fn builtin_names() -> Vec<&'static str> {
    BUILTIN.iter().map(|(n, _)| *n).collect()
}

/// Parse and check one built-in profile by name (parsed once per process, then cloned).
pub fn builtin(name: &str) -> Option<Result<DeviceProfile, EngineError>> {
    static PARSED: OnceLock<Vec<Result<DeviceProfile, EngineError>>> = OnceLock::new();
    let parsed = PARSED.get_or_init(|| BUILTIN.iter().map(|(n, text)| parse_builtin(n, text)).collect());
    BUILTIN.iter().position(|(n, _)| *n == name).map(|i| parsed[i].clone())
}

fn parse_builtin(name: &str, text: &str) -> Result<DeviceProfile, EngineError> {
    let p: DeviceProfile =
        toml::from_str(text).map_err(|e| EngineError::Invariant(format!("built-in profile {name} does not parse: {e}")))?;
    p.validate("").map_err(|e| EngineError::Invariant(format!("built-in profile {name}: {e}")))?;
    Ok(p)
}

impl DeviceProfile {
    /// Check physical sense: powers and costs are finite and non-negative, the CPU clock positive,
    /// the radio PHY (if any) has a positive rate and a bounded preamble and MAC overhead.
    pub fn validate(&self, prefix: &str) -> Result<(), EngineError> {
        let at = |k: &str| if prefix.is_empty() { k.to_string() } else { format!("{prefix}.{k}") };
        let r = &self.radio;
        let c = &self.cpu.cycles;
        let checks = [
            ("platform.base_power_w", self.platform.base_power_w),
            ("radio.tx_power_w", r.tx_power_w),
            ("radio.rx_power_w", r.rx_power_w),
            ("radio.idle_power_w", r.idle_power_w),
            ("radio.sleep_power_w", r.sleep_power_w),
            ("radio.wake_power_w", r.wake_power_w),
            ("cpu.active_power_w", self.cpu.active_power_w),
            ("cpu.frequency_hz", self.cpu.frequency_hz),
        ];
        let figures = c.iter().map(|(k, v)| (format!("cpu.cycles.{k}"), v));
        let optional = [("cpu.cycles.forward", c.forward), ("cpu.cycles.forward_per_byte", c.forward_per_byte)];
        let optional = optional.into_iter().filter_map(|(k, v)| v.map(|v| (k.to_string(), v)));
        for (k, v) in checks.into_iter().map(|(k, v)| (k.to_string(), v)).chain(figures).chain(optional) {
            if !v.is_finite() || v < 0.0 {
                return Err(EngineError::config(at(&k), format!("must be a finite number >= 0, got {v}")));
            }
        }
        if self.cpu.frequency_hz <= 0.0 {
            return Err(EngineError::config(at("cpu.frequency_hz"), "must be > 0"));
        }
        self.cpu.validate_operating_points(&at)?;
        if let Some(phy) = &r.phy {
            phy.validate(&at)?;
        }
        if let Some(rrc) = &r.rrc {
            if r.phy.is_some() {
                return Err(EngineError::config(
                    at("radio.rrc"),
                    "cannot go with radio.phy: a cellular radio is on the air while its link carries the frame (leave radio.phy out)",
                ));
            }
            rrc.validate(&at)?;
        }
        if let Some(card) = &self.card {
            card.validate(&at)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_profile_parses_and_names_itself() {
        for name in builtin_names() {
            let p = builtin(name).unwrap().unwrap();
            assert_eq!(p.name, name);
        }
    }

    #[test]
    fn wavelan_cards_carry_the_80211b_phy_and_seed_004s_device_stays_abstract() {
        // 11 Mb/s (seed 000 §5, seed 002 §5, seed 003 §III); long PLCP preamble + header 192 us
        // (IEEE 802.11b-1999 §18.2); MAC header 24 + FCS 4 + LLC/SNAP 8 bytes.
        let b = Phy { rate: 11_000_000, preamble: SimDuration::from_micros(192), mac_overhead: 36 };
        for name in ["singh2002-toshiba-wavelan", "agrawal2003-samsung-wavelan-turbo"] {
            assert_eq!(builtin(name).unwrap().unwrap().radio.phy, Some(b), "{name}");
        }
        let modem = builtin("donckers2002-wavelan-modem").unwrap().unwrap().radio.phy.unwrap();
        assert_eq!(modem.preamble, SimDuration::from_micros(254)); // seed 001 §1.2
        assert_eq!(builtin("ideal-nic-0.3").unwrap().unwrap().radio.phy, None);
    }

    /// The 802.11n card carries exactly the four powers of Halperin, Greenstein, Sheth and
    /// Wetherall, "Demystifying 802.11n power consumption", HotPower 2010, single antenna, as ns-3
    /// restates them (src/wifi/model/wifi-radio-energy-model.h), each sourced and none estimated;
    /// the rest (no host, the wake-up) is listed as estimated. It has no PHY of its own: on a
    /// channel its radio takes the airtime the MAC reports.
    #[test]
    fn the_80211n_card_carries_the_four_published_powers_of_halperin_2010() {
        let p = builtin("halperin2010-80211n-nic").unwrap().unwrap();
        let r = &p.radio;
        assert_eq!((r.tx_power_w, r.rx_power_w, r.idle_power_w, r.sleep_power_w), (1.14, 0.94, 0.82, 0.10));
        assert_eq!((r.phy, r.rrc.is_some()), (None, false));
        for key in ["radio.tx_power_w", "radio.rx_power_w", "radio.idle_power_w", "radio.sleep_power_w"] {
            let source = &p.sources[key];
            assert!(source.starts_with("Halperin") && source.contains("ns-3"), "{key}: {source}");
            assert!(!p.estimated.iter().any(|e| e == key || e == "radio.*"), "{key} is listed as estimated");
        }
        for key in ["platform.base_power_w", "radio.wake_time", "radio.wake_power_w", "cpu.*", "cpu.cycles.*"] {
            assert!(p.estimated.iter().any(|e| e == key), "{key} is not listed as estimated");
        }
        // Radio-only: no host draws anything, and no protocol work is charged.
        assert_eq!((p.platform.base_power_w, p.cpu.active_power_w), (0.0, 0.0));
        assert!(p.cpu.cycles.iter().all(|(_, v)| v == 0.0));
        // The estimated wake-up: 250 us at idle power (docs/models/profiles.md#halperin2010-wake).
        assert_eq!((r.wake_time, r.wake_power_w), (SimDuration::from_micros(250), 0.82));
    }

    /// A profile may leave out a cycle figure that has a documented default (the per-mechanism
    /// figures: 0 cycles, not costed); one without a default is an error naming it.
    #[test]
    fn a_profile_may_omit_cycle_figures_with_a_default_but_not_the_others() {
        let base = builtin("singh2002-toshiba-wavelan").unwrap().unwrap();
        let mut doc = serde_json::to_value(&base).unwrap();
        let cycles = doc["cpu"]["cycles"].as_object_mut().unwrap();
        cycles.remove("paws_check");
        let p: DeviceProfile = serde_json::from_value(doc.clone()).unwrap();
        assert_eq!(p.cpu.cycles.get("paws_check"), Some(0.0));
        assert_eq!(p.cpu.cycles.get("slow_path"), base.cpu.cycles.get("slow_path"));
        doc["cpu"]["cycles"].as_object_mut().unwrap().remove("segment_sent");
        let err = crate::config::typed::<DeviceProfile>(&doc, "energy.sender").unwrap_err().to_string();
        assert!(err.contains("energy.sender.cpu.cycles") && err.contains("segment_sent"), "{err}");
        doc["cpu"]["cycles"]["segment_sent"] = 1.0.into();
        doc["cpu"]["cycles"]["segment_snet"] = 1.0.into();
        let err = crate::config::typed::<DeviceProfile>(&doc, "energy.sender").unwrap_err().to_string();
        assert!(err.contains("segment_snet"), "{err}");
    }

    #[test]
    fn every_cycle_figure_without_a_default_is_given_by_every_builtin_profile() {
        for name in builtin_names() {
            let (_, text) = BUILTIN.iter().find(|(n, _)| *n == name).unwrap();
            let doc: toml::Value = toml::from_str(text).unwrap();
            let cycles = doc["cpu"]["cycles"].as_table().unwrap();
            for f in crate::energy::cpu::CYCLE_FIGURES.iter().filter(|f| f.default.is_none()) {
                assert!(cycles.contains_key(f.key), "{name} lacks cpu.cycles.{}", f.key);
            }
        }
    }

    #[test]
    fn phy_airtime_is_preamble_plus_mac_frame_at_the_data_rate_rounded_up_to_the_ns() {
        let phy = Phy { rate: 11_000_000, preamble: SimDuration::from_micros(192), mac_overhead: 36 };
        // (1500 + 36) * 8 bits at 11 Mbit/s = 1117090.9 ns.
        assert_eq!(phy.airtime(1500), SimDuration(192_000 + 1_117_091));
        // (52 + 36) * 8 bits = 704 bits at 11 Mbit/s = 64 us exactly.
        assert_eq!(phy.airtime(52), SimDuration(192_000 + 64_000));
    }

    /// A profile's DVFS operating points (docs/models/energy.md, "Operating points"): slowest
    /// first, and the point in use is one of them; anything else is refused naming the key.
    #[test]
    fn the_cpu_runs_at_one_of_its_operating_points_listed_slowest_first() {
        let base = builtin("zhang2010-htc-dream-3g").unwrap().unwrap();
        assert_eq!(base.cpu.operating_points.len(), 2);
        let doc = serde_json::to_value(&base).unwrap();
        let check = |edit: &dyn Fn(&mut serde_json::Value), key: &str, words: &str| {
            let mut d = doc.clone();
            edit(&mut d);
            let p: DeviceProfile = crate::config::typed(&d, "energy.receiver").unwrap();
            let err = p.validate("energy.receiver").unwrap_err().to_string();
            assert!(err.contains(key) && err.contains(words), "{err}");
        };
        check(&|d| d["cpu"]["active_power_w"] = 0.34169.into(), "energy.receiver.cpu.frequency_hz", "must be one of the profile's operating points");
        check(&|d| d["cpu"]["operating_points"][1]["frequency_hz"] = 100e6.into(), "energy.receiver.cpu.operating_points.1.frequency_hz", "slowest first");
        check(&|d| d["cpu"]["operating_points"][0]["active_power_w"] = (-1.0).into(), "energy.receiver.cpu.operating_points.0.active_power_w", ">= 0");
        // The slower point, given whole, is accepted.
        let mut d = doc.clone();
        d["cpu"]["frequency_hz"] = 245.36e6.into();
        d["cpu"]["active_power_w"] = 0.34169.into();
        let p: DeviceProfile = crate::config::typed(&d, "energy.receiver").unwrap();
        p.validate("energy.receiver").unwrap();
    }

    /// An RRC machine's timers are settings (docs/models/cellular.md): a negative, zero or
    /// inconsistent one is refused with its key and the allowed values.
    #[test]
    fn bad_rrc_timers_are_refused_naming_the_key() {
        let base = builtin("huang2012-lte-phone").unwrap().unwrap();
        let doc = serde_json::to_value(&base).unwrap();
        let check = |edit: &dyn Fn(&mut serde_json::Value), key: &str, words: &str| {
            let mut d = doc.clone();
            edit(&mut d);
            let err = crate::config::typed::<DeviceProfile>(&d, "energy.receiver")
                .and_then(|p| p.validate("energy.receiver").map(|_| p))
                .unwrap_err()
                .to_string();
            assert!(err.contains(key) && err.contains(words), "{err}");
        };
        check(&|d| d["radio"]["rrc"]["tail"][1]["duration"] = "-20ms".into(), "energy.receiver.radio.rrc.tail.1.duration", "");
        check(&|d| d["radio"]["rrc"]["tail"][0]["duration"] = "0s".into(), "energy.receiver.radio.rrc.tail.0.duration", "between 1ns and 1h");
        check(&|d| d["radio"]["rrc"]["tail"][2]["drx"]["on"] = "50ms".into(), "energy.receiver.radio.rrc.tail.2.drx.on", "at most the cycle");
        check(&|d| d["radio"]["rrc"]["paging"]["cycle"] = "0s".into(), "energy.receiver.radio.rrc.paging.cycle", "between 1ns and 1h");
        check(&|d| d["radio"]["rrc"]["uplink_j_per_mbit"] = (-1.0).into(), "energy.receiver.radio.rrc.uplink_j_per_mbit", ">= 0");
        let inactive = serde_json::json!({"state": "rrc_inactive", "duration": "20s", "resume": {"delay": "60ms", "power_w": 1.0}});
        check(
            &|d| {
                let tail = d["radio"]["rrc"]["tail"].as_array_mut().unwrap();
                tail.push(inactive.clone());
                tail[3]["resume"]["delay"] = "0s".into();
            },
            "energy.receiver.radio.rrc.tail.3.resume.delay",
            "between 1ns and 1h",
        );
        check(
            &|d| {
                let tail = d["radio"]["rrc"]["tail"].as_array_mut().unwrap();
                let connected = tail[2].clone();
                tail.insert(2, inactive.clone());
                tail[3] = connected;
            },
            "energy.receiver.radio.rrc.tail.3.resume",
            "every state after one with a resume must have one",
        );
        check(
            &|d| d["radio"]["phy"] = serde_json::json!({"rate": "11Mbps", "preamble": "192us", "mac_overhead": 36}),
            "energy.receiver.radio.rrc",
            "cannot go with radio.phy",
        );
    }
}
