//! The transport registry: every named variant and what it is made of, in one table. The scenario
//! format reads names from here (`config::Variant` is this enum), validation asks it which
//! settings a variant takes, and `recipe.rs` builds a sender from its entry. Adding a variant is
//! one enum line and one table entry here (plus its algorithm's module, if it is new).
//!
//! This module depends on nothing but `units`, so every layer may ask it.

use crate::units::SimDuration;
use serde::{Deserialize, Serialize};

/// The named transport variants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Variant {
    Tahoe,
    Reno,
    Newreno,
    Sack,
    /// TCP(α, β) with NewReno recovery (seed 004 §2); α, β from `tcp.alpha`, `tcp.beta`.
    Gaimd,
    /// TCP(1.24, 0.25) (seed 004 §4.1).
    Responsive,
    /// TCP(0.31, 0.875) (seed 004 §4.1).
    Smooth,
    /// TCP(1.2, 1) with a fixed 50 ms timeout (seed 004 §5.1 calibration).
    Aggressive,
    /// TCP(0.3, 0.2) with a fixed 1 s timeout (seed 004 §5.1 calibration).
    Conservative,
    /// CUBIC (RFC 9438) with SACK recovery.
    Cubic,
    /// NewReno congestion control with SACK recovery and ECN (RFC 3168) on.
    Ecn,
    /// NewReno with ELFN (seed 002 §4).
    Elfn,
    /// TCP-ECN-ELFN (seed 002 Table 1): NewReno base, ECN and ELFN on; duplicate ACKs and
    /// timeouts retransmit without touching cwnd; only ECN-Echo halves it.
    EcnElfn,
    /// E2TCP (seed 001 §2): per-packet SACK, immediate retransmission, a loss-driven window,
    /// two timers and compact headers; its constants in `tcp.e2tcp`.
    E2tcp,
    /// BBR v1 (Linux's tcp_bbr.c); the Linux stack only (`tcp.stack = "linux-6"`).
    Bbr,
}

/// The Linux congestion-control module a variant runs on the Linux stack (`tcp::linux::cc`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinuxModule {
    Reno,
    Cubic,
    Bbr,
}

/// Which congestion controller a TCP variant runs (`tcp::cc`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Controller {
    /// AIMD(α, β) (RFC 5681 for α = 1, β = 1/2; seed 004's TCP(α, β) family otherwise).
    Aimd { alpha: f64, beta: f64 },
    /// CUBIC (RFC 9438).
    Cubic,
}

/// Which loss-recovery policy a TCP variant runs (`tcp::recovery`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recovery {
    Tahoe,
    Reno,
    NewReno,
    Sack,
    EcnElfn,
}

/// Which sender a variant runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SenderKind {
    /// The TCP sender (`tcp::sender`) with a controller and a recovery policy.
    Tcp { cc: Controller, recovery: Recovery },
    /// E2TCP's own sender (`tcp::e2tcp`, seed 001 §2).
    E2tcp,
    /// The Linux sender only (`tcp::linux`).
    Linux,
}

/// Everything the engine knows about a variant by its name.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VariantInfo {
    pub variant: Variant,
    /// The name scenario files and records use.
    pub name: &'static str,
    pub sender: SenderKind,
    /// SACK is negotiated unless `tcp.sack` says otherwise (the recovery reads SACK blocks).
    pub sack_by_default: bool,
    /// ECN (RFC 3168) is on whatever `tcp.ecn` says.
    pub forces_ecn: bool,
    /// ELFN (seed 002 §4) is on whatever `tcp.elfn` says.
    pub forces_elfn: bool,
    /// A TCP(α, β) member: `tcp.alpha` and `tcp.beta` replace its preset.
    pub takes_alpha_beta: bool,
    /// A constant retransmission timeout replacing RFC 6298's unless `tcp.fixed_rto` is set
    /// (seed 004 §5.1's calibration protocols).
    pub preset_fixed_rto: Option<SimDuration>,
    /// The receiver acknowledges every data packet (no delayed ACKs).
    pub ack_every_packet: bool,
    /// At most this many SACK blocks per ACK; `None`: as many as the option space holds.
    pub max_sack_blocks: Option<usize>,
    /// Segments carry E2TCP's compact header unless `tcp.e2tcp.header_compression` is false.
    pub compact_headers: bool,
    /// On the Linux stack, the congestion module this variant names; `None`: Linux has no such
    /// variant and the Linux stack refuses it.
    pub linux: Option<LinuxModule>,
    /// Runs only on the Linux stack.
    pub linux_only: bool,
}

const STANDARD: Controller = Controller::Aimd { alpha: 1.0, beta: 0.5 };

/// The defaults every entry starts from: a TCP sender with nothing forced.
const BASE: VariantInfo = VariantInfo {
    variant: Variant::Newreno,
    name: "newreno",
    sender: SenderKind::Tcp { cc: STANDARD, recovery: Recovery::NewReno },
    sack_by_default: false,
    forces_ecn: false,
    forces_elfn: false,
    takes_alpha_beta: false,
    preset_fixed_rto: None,
    ack_every_packet: false,
    max_sack_blocks: None,
    compact_headers: false,
    linux: None,
    linux_only: false,
};

const fn tcp(variant: Variant, name: &'static str, cc: Controller, recovery: Recovery) -> VariantInfo {
    VariantInfo { variant, name, sender: SenderKind::Tcp { cc, recovery }, ..BASE }
}

const fn aimd(variant: Variant, name: &'static str, alpha: f64, beta: f64, fixed_rto: Option<SimDuration>) -> VariantInfo {
    VariantInfo { takes_alpha_beta: true, preset_fixed_rto: fixed_rto, ..tcp(variant, name, Controller::Aimd { alpha, beta }, Recovery::NewReno) }
}

/// The registry, in the order the documentation lists the variants.
pub const REGISTRY: [VariantInfo; 15] = [
    tcp(Variant::Tahoe, "tahoe", STANDARD, Recovery::Tahoe),
    // Linux's recovery is its own whatever the name: NewReno's without SACK, RACK with it.
    VariantInfo { linux: Some(LinuxModule::Reno), ..tcp(Variant::Reno, "reno", STANDARD, Recovery::Reno) },
    VariantInfo { linux: Some(LinuxModule::Reno), ..tcp(Variant::Newreno, "newreno", STANDARD, Recovery::NewReno) },
    VariantInfo { sack_by_default: true, linux: Some(LinuxModule::Reno), ..tcp(Variant::Sack, "sack", STANDARD, Recovery::Sack) },
    aimd(Variant::Gaimd, "gaimd", 1.0, 0.5, None),
    // Seed 004 §4.1 (on the TCP-friendly curve α = 4(1 − β²)/3) and §5.1 (off it).
    aimd(Variant::Responsive, "responsive", 1.24, 0.25, None),
    aimd(Variant::Smooth, "smooth", 0.31, 0.875, None),
    aimd(Variant::Aggressive, "aggressive", 1.2, 1.0, Some(SimDuration(50_000_000))),
    aimd(Variant::Conservative, "conservative", 0.3, 0.2, Some(SimDuration(1_000_000_000))),
    VariantInfo { sack_by_default: true, linux: Some(LinuxModule::Cubic), ..tcp(Variant::Cubic, "cubic", Controller::Cubic, Recovery::Sack) },
    VariantInfo { sack_by_default: true, forces_ecn: true, linux: Some(LinuxModule::Reno), ..tcp(Variant::Ecn, "ecn", STANDARD, Recovery::Sack) },
    VariantInfo { forces_elfn: true, ..tcp(Variant::Elfn, "elfn", STANDARD, Recovery::NewReno) },
    VariantInfo { forces_ecn: true, forces_elfn: true, ..tcp(Variant::EcnElfn, "ecn-elfn", STANDARD, Recovery::EcnElfn) },
    // Seed 001 §2.1: every packet acknowledged, with two SACK blocks for two runs of losses.
    VariantInfo {
        variant: Variant::E2tcp,
        name: "e2tcp",
        sender: SenderKind::E2tcp,
        sack_by_default: true,
        ack_every_packet: true,
        max_sack_blocks: Some(2),
        compact_headers: true,
        ..BASE
    },
    VariantInfo {
        variant: Variant::Bbr,
        name: "bbr",
        sender: SenderKind::Linux,
        sack_by_default: true,
        linux: Some(LinuxModule::Bbr),
        linux_only: true,
        ..BASE
    },
];

impl Variant {
    /// This variant's registry entry.
    #[inline]
    pub fn info(self) -> &'static VariantInfo {
        &REGISTRY[self as usize]
    }

    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// Whether the variant is a TCP(α, β) member (takes `tcp.alpha` and `tcp.beta`).
    pub fn is_aimd(self) -> bool {
        self.info().takes_alpha_beta
    }

    /// Whether SACK is negotiated by default.
    pub fn uses_sack(self) -> bool {
        self.info().sack_by_default
    }

    /// Whether the variant turns ECN on whatever `tcp.ecn` says.
    pub fn forces_ecn(self) -> bool {
        self.info().forces_ecn
    }

    /// Whether the variant turns ELFN on whatever `tcp.elfn` says.
    pub fn forces_elfn(self) -> bool {
        self.info().forces_elfn
    }

    /// Names of the variants the Linux stack runs, for error messages.
    pub fn linux_names() -> Vec<&'static str> {
        REGISTRY.iter().filter(|i| i.linux.is_some()).map(|i| i.name).collect()
    }

    /// Names of the variants that take `tcp.alpha` and `tcp.beta`, for error messages.
    pub fn aimd_names() -> Vec<&'static str> {
        REGISTRY.iter().filter(|i| i.takes_alpha_beta).map(|i| i.name).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_registry_entry_sits_at_its_variants_index_and_names_it_as_scenario_files_do() {
        for (i, info) in REGISTRY.iter().enumerate() {
            assert_eq!(info.variant as usize, i, "{}", info.name);
            let serde_name: String = serde_json::from_value(serde_json::to_value(info.variant).unwrap()).unwrap();
            assert_eq!(serde_name, info.name);
            let parsed: Variant = serde_json::from_value(serde_json::Value::String(info.name.into())).unwrap();
            assert_eq!(parsed, info.variant);
        }
    }

    #[test]
    fn e2tcp_sends_two_sack_blocks_as_its_header_carries_seed001_s2_1() {
        assert_eq!(Variant::E2tcp.info().max_sack_blocks, Some(crate::tcp::e2tcp::header::MAX_SACK_BLOCKS));
    }

    #[test]
    fn seed004_presets_keep_their_alpha_beta_and_calibration_timeouts() {
        let cc = |v: Variant| match v.info().sender {
            SenderKind::Tcp { cc: Controller::Aimd { alpha, beta }, .. } => (alpha, beta),
            other => panic!("{other:?}"),
        };
        assert_eq!(cc(Variant::Responsive), (1.24, 0.25));
        assert_eq!(cc(Variant::Smooth), (0.31, 0.875));
        assert_eq!(Variant::Aggressive.info().preset_fixed_rto, Some(SimDuration::from_millis(50)));
        assert_eq!(Variant::Conservative.info().preset_fixed_rto, Some(SimDuration::from_secs(1)));
        assert_eq!(Variant::aimd_names(), ["gaimd", "responsive", "smooth", "aggressive", "conservative"]);
    }
}
