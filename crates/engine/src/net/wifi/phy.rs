//! 802.11 PHY timing: how long a frame occupies the medium, and the MAC's interframe spaces and
//! contention windows, per standard (docs/models/wifi.md "PHY timing").
//!
//! Sources: IEEE 802.11-2020 clause 15 (DSSS: 1 and 2 Mbit/s) and 16 (HR/DSSS: 5.5 and 11 Mbit/s)
//! for 802.11b, clause 17 (OFDM) for 802.11a, clause 18 (ERP) for 802.11g; the MAC constants of
//! each PHY's characteristics table (aSlotTime, aSIFSTime, aCWmin, aCWmax).

use crate::units::SimDuration;

pub use crate::config::phy::{HtFormat, HtMode, Preamble, Standard, DSSS_RATES, ERP_RATES, LLC_SNAP, MAX_IP_PACKET, MAX_MSDU, OFDM_RATES};

impl Standard {
    /// Slot, SIFS and contention window bounds (each PHY's characteristics table).
    pub fn timing(self) -> MacTiming {
        match self {
            // Clause 16 (HR/DSSS): aSlotTime 20 us, aSIFSTime 10 us, aCWmin 31, aCWmax 1023.
            Standard::B => MacTiming {
                slot: us(20),
                sifs: us(10),
                cw_min: 31,
                cw_max: 1023,
            },
            // Clause 17 (OFDM, 20 MHz): aSlotTime 9 us, aSIFSTime 16 us, aCWmin 15, aCWmax 1023;
            // HT and VHT in 5 GHz keep them (19.4.4 Table 19-25, 21.4.4 Table 21-29).
            Standard::A | Standard::N | Standard::Ac => MacTiming {
                slot: us(9),
                sifs: us(16),
                cw_min: 15,
                cw_max: 1023,
            },
            // Clause 18 (ERP) with short slots: aSlotTime 9 us, aSIFSTime 10 us, aCWmin 15.
            Standard::G => MacTiming {
                slot: us(9),
                sifs: us(10),
                cw_min: 15,
                cw_max: 1023,
            },
        }
    }
}

const fn us(n: u64) -> SimDuration {
    SimDuration(n * 1_000)
}

/// The MAC's timing constants for one PHY.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MacTiming {
    pub slot: SimDuration,
    pub sifs: SimDuration,
    /// Contention window bounds, in slots (CW runs cw_min, 2 cw_min + 1, ... cw_max).
    pub cw_min: u32,
    pub cw_max: u32,
}

impl MacTiming {
    /// DIFS = SIFS + 2 slots (802.11-2020 10.3.2.3.5).
    pub fn difs(&self) -> SimDuration {
        SimDuration(self.sifs.0 + 2 * self.slot.0)
    }
}

impl Preamble {
    fn duration(self) -> SimDuration {
        match self {
            Preamble::Long => us(192),
            Preamble::Short => us(96),
        }
    }
}

/// MAC header and FCS of a data frame (three addresses, no QoS): 24 + 4 bytes.
pub const DATA_MAC_OVERHEAD: u32 = 28;
/// A QoS data frame's (HT and VHT channels send QoS data, 10.2.4.2): header 26 + FCS 4 bytes.
pub const QOS_DATA_MAC_OVERHEAD: u32 = 30;
/// Control frames, FCS included: ACK and CTS 14 bytes, RTS 20 bytes (802.11-2020 9.3.1).
pub const ACK_BYTES: u32 = 14;
pub const CTS_BYTES: u32 = 14;
pub const RTS_BYTES: u32 = 20;
/// PS-Poll (802.11-2020 9.3.1.5): frame control, AID, BSSID, TA, FCS: 20 bytes.
pub const PS_POLL_BYTES: u32 = 20;
/// A minimal beacon (802.11-2020 9.3.3.2): MAC header 24, timestamp 8, beacon interval 2,
/// capability 2, SSID element of 8 characters 10, supported rates (four) 6, DS parameter set 3,
/// TIM with a one-byte bitmap 6, FCS 4: 65 bytes.
pub const BEACON_BYTES: u32 = 65;
fn is_dsss(rate_bps: u64) -> bool {
    DSSS_RATES.contains(&rate_bps)
}

/// aRxPHYStartDelay: how long after a frame starts the receiver knows one is arriving (the
/// preamble and header): DSSS 192 us (long) or 96 us (short; never at 1 Mbit/s), OFDM 25 us.
pub fn rx_start_delay(preamble: Preamble, rate_bps: u64) -> SimDuration {
    if !is_dsss(rate_bps) {
        return us(25);
    }
    if rate_bps == 1_000_000 { Preamble::Long } else { preamble }.duration()
}

/// Time on the air of a PSDU (MPDU: MAC header, body, FCS) of `bytes` at `rate_bps`.
///
/// DSSS/HR-DSSS: preamble + header, then the PSDU at the data rate, its length in microseconds
/// rounded up (clause 16.2.3.5's LENGTH field). OFDM (clause 17.4.3): 16 us preamble + 4 us
/// SIGNAL + 4 us per symbol, N_SYM = ceil((16 service + 8 bytes + 6 tail bits) / N_DBPS) with
/// N_DBPS = 4 us x rate; ERP-OFDM adds a 6 us signal extension (clause 18.3.2.4).
pub fn airtime(standard: Standard, preamble: Preamble, rate_bps: u64, bytes: u32) -> SimDuration {
    let bits = 8 * bytes as u64;
    if is_dsss(rate_bps) {
        // 1 Mbit/s always uses the long preamble (clause 16.2.2.3).
        let pre = if rate_bps == 1_000_000 {
            Preamble::Long
        } else {
            preamble
        };
        // ceil(bits / rate) in ns, rounded up to whole microseconds as the LENGTH field is.
        let psdu_us = (bits * 1_000_000).div_ceil(rate_bps);
        return SimDuration(pre.duration().0 + psdu_us * 1_000);
    }
    let bits_per_symbol = rate_bps * 4 / 1_000_000; // N_DBPS: 4 us symbols
    let symbols = (16 + bits + 6).div_ceil(bits_per_symbol);
    let extension = if standard == Standard::G { 6 } else { 0 };
    us(20 + 4 * symbols + extension)
}

/// The basic (control-response) rate for a frame sent at `rate_bps`: the highest rate of the
/// basic rate set not above it (802.11-2020 10.6.6.5.2), or the lowest basic rate.
pub fn response_rate(basic: &[u64], rate_bps: u64) -> u64 {
    basic
        .iter()
        .copied()
        .filter(|&r| r <= rate_bps)
        .max()
        .unwrap_or_else(|| basic.iter().copied().min().unwrap_or(rate_bps))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_11_mbps_1500_byte_packet_takes_preamble_plus_its_bits_clause_16_2_3_5() {
        // 1500 IP + 8 LLC/SNAP + 28 MAC = 1536 bytes = 12288 bits: 1117.09 us -> 1118 us.
        let t = airtime(
            Standard::B,
            Preamble::Long,
            11_000_000,
            1500 + LLC_SNAP + DATA_MAC_OVERHEAD,
        );
        assert_eq!(t, us(192 + 1118));
        let short = airtime(Standard::B, Preamble::Short, 11_000_000, 1536);
        assert_eq!(short, us(96 + 1118));
    }

    #[test]
    fn a_dsss_ack_at_1_and_2_mbps_takes_304_and_248_us_clause_15() {
        assert_eq!(
            airtime(Standard::B, Preamble::Long, 1_000_000, ACK_BYTES),
            us(192 + 112)
        );
        assert_eq!(
            airtime(Standard::B, Preamble::Long, 2_000_000, ACK_BYTES),
            us(192 + 56)
        );
        // 1 Mbit/s ignores a short preamble.
        assert_eq!(
            airtime(Standard::B, Preamble::Short, 1_000_000, ACK_BYTES),
            us(304)
        );
    }

    #[test]
    fn ofdm_airtime_counts_whole_symbols_clause_17_4_3() {
        // An ACK at 6 Mbit/s: 16 + 112 + 6 = 134 bits over 24 bits/symbol = 6 symbols: 44 us.
        assert_eq!(
            airtime(Standard::A, Preamble::Long, 6_000_000, ACK_BYTES),
            us(44)
        );
        // 1536 bytes at 54 Mbit/s: 12310 bits / 216 = 56.99 -> 57 symbols: 20 + 228 = 248 us.
        assert_eq!(
            airtime(Standard::A, Preamble::Long, 54_000_000, 1536),
            us(248)
        );
        // ERP-OFDM adds the 6 us signal extension.
        assert_eq!(
            airtime(Standard::G, Preamble::Long, 54_000_000, 1536),
            us(254)
        );
        // 802.11g's DSSS rates time as 802.11b's.
        assert_eq!(
            airtime(Standard::G, Preamble::Long, 11_000_000, 1536),
            airtime(Standard::B, Preamble::Long, 11_000_000, 1536)
        );
    }

    #[test]
    fn difs_is_sifs_plus_two_slots_10_3_2_3_5() {
        assert_eq!(Standard::N.timing().difs(), us(34));
        assert_eq!(Standard::Ac.timing(), Standard::A.timing());
        assert_eq!(Standard::B.timing().difs(), us(50));
        assert_eq!(Standard::A.timing().difs(), us(34));
        assert_eq!(Standard::G.timing().difs(), us(28));
    }

    #[test]
    fn control_responses_go_at_the_highest_basic_rate_not_above_the_data_rate_10_6_6_5_2() {
        let basic = [1_000_000, 2_000_000];
        assert_eq!(response_rate(&basic, 11_000_000), 2_000_000);
        assert_eq!(response_rate(&basic, 1_000_000), 1_000_000);
        assert_eq!(
            response_rate(&[2_000_000], 1_000_000),
            2_000_000,
            "below every basic rate: the lowest"
        );
    }
}
