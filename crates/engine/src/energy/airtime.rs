//! How long a node's radio is on the air for one frame, and the rule tying a path's rate to the
//! radios at its ends (docs/models/energy.md, "Airtime").
//!
//! Two airtimes are kept apart. The link serializes a frame at `path.*.rate` with
//! `path.frame_overhead`: that is queueing and throughput, and may describe a wired or shaped hop
//! elsewhere on the path. The radio is on the air for its own PHY's airtime of the frame
//! (`radio.phy`), starting when the link starts serializing it. A profile without a PHY keeps an
//! abstract radio whose airtime is the link's serialization. A trace-driven link says only when a
//! frame leaves; it reports the frame's bytes at one opportunity (1504 bytes) per millisecond,
//! ending then (`net::opportunities::Opportunities::serve`).

use super::profile::{DeviceProfile, Phy};
use crate::config::serde_units::format_rate;
use crate::config::{EnergyConfig, PathConfig};
use crate::error::EngineError;
use crate::units::{SimDuration, SimTime};

/// One node's radio airtime per frame.
#[derive(Debug, Clone)]
pub struct RadioAirtime {
    phy: Option<Phy>,
    /// The last (IP length, airtime) computed: most frames share a size.
    memo: (u32, SimDuration),
}

impl RadioAirtime {
    pub fn new(profile: &DeviceProfile) -> Self {
        let phy = profile.radio.phy;
        Self { phy, memo: (0, phy.map_or(SimDuration::ZERO, |p| p.airtime(0))) }
    }

    /// Time on the air of a frame of `ip_len` IP bytes that the link serializes during
    /// `[start, end)`: the PHY's airtime, or the serialization itself for an abstract radio.
    #[inline]
    pub fn of_frame(&mut self, ip_len: u32, start: SimTime, end: SimTime) -> SimDuration {
        let Some(phy) = &self.phy else { return end - start };
        if self.memo.0 != ip_len {
            self.memo = (ip_len, phy.airtime(ip_len));
        }
        self.memo.1
    }
}

/// A path may be slower than the radios that feed it (a shaped or wired hop elsewhere on the
/// path), never faster: frames cannot leave a radio faster than its PHY rate. The sender's radio
/// feeds the forward direction, the receiver's the reverse one.
/// A trace-driven direction is checked by its mean rate.
pub fn check_path_rates(path: &PathConfig, energy: &EnergyConfig) -> Result<(), EngineError> {
    let ends = [("path.forward", &path.forward.capacity, "energy.sender", &energy.sender), ("path.reverse", &path.reverse.capacity, "energy.receiver", &energy.receiver)];
    for (link, capacity, node, profile) in ends {
        let Some(phy) = profile.profile.radio.phy else { continue };
        let rate = capacity.rate_bps();
        if rate > phy.rate {
            let name = profile.name.as_deref().map_or(String::new(), |n| format!(" ({n})"));
            let what = if capacity.trace().is_some() { "the trace's mean rate, " } else { "" };
            return Err(EngineError::config(
                format!("{link}.{}", capacity.key()),
                format!(
                    "{what}{} is faster than the radio of {node}{name}: its radio.phy.rate is {}, so this rate must be at most {} \
                     (a path slower than the radio is a shaped or wired hop; frames cannot leave the radio faster than its PHY rate)",
                    format_rate(rate),
                    format_rate(phy.rate),
                    format_rate(phy.rate),
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::energy::profile;

    #[test]
    fn an_abstract_radio_is_on_the_air_for_the_link_serialization() {
        let p = profile::builtin("ideal-nic-0.3").unwrap().unwrap();
        let mut a = RadioAirtime::new(&p);
        assert_eq!(a.of_frame(1500, SimTime(1_000), SimTime(6_001_000)), SimDuration(6_000_000));
    }

    #[test]
    fn a_phy_radio_is_on_the_air_for_preamble_plus_mac_frame_at_its_rate_ieee_802_11b_s18_2() {
        let p = profile::builtin("singh2002-toshiba-wavelan").unwrap().unwrap();
        let mut a = RadioAirtime::new(&p);
        // 192 us long preamble + (1500 + 36) bytes at 11 Mbit/s = 1117090.9 ns, rounded up.
        assert_eq!(a.of_frame(1500, SimTime(0), SimTime(6_000_000)), SimDuration(192_000 + 1_117_091));
        // Same size again (memoized), then another size: the link's times play no part.
        assert_eq!(a.of_frame(1500, SimTime(5), SimTime(7)), SimDuration(1_309_091));
        // 40-byte ACK: 192 us + 76 bytes at 11 Mbit/s = 192 us + 55272.7 ns.
        assert_eq!(a.of_frame(40, SimTime(0), SimTime(160_000)), SimDuration(192_000 + 55_273));
    }
}
