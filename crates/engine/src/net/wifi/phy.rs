//! 802.11 PHY timing: how long a frame occupies the medium, and the MAC's interframe spaces and
//! contention windows, per standard (docs/models/wifi.md "PHY timing").
//!
//! Sources: IEEE 802.11-2020 clause 15 (DSSS: 1 and 2 Mbit/s) and 16 (HR/DSSS: 5.5 and 11 Mbit/s)
//! for 802.11b, clause 17 (OFDM) for 802.11a, clause 18 (ERP) for 802.11g; the MAC constants of
//! each PHY's characteristics table (aSlotTime, aSIFSTime, aCWmin, aCWmax).

use crate::units::SimDuration;

/// The standards a channel may follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standard {
    /// 802.11b: DSSS / HR-DSSS, 1, 2, 5.5, 11 Mbit/s.
    B,
    /// 802.11a: OFDM in 5 GHz, 6-54 Mbit/s.
    A,
    /// 802.11g: ERP in 2.4 GHz, the DSSS rates and ERP-OFDM 6-54 Mbit/s (short slots: no
    /// 802.11b station on the channel).
    G,
}

impl Standard {
    pub const NAMES: [&'static str; 3] = ["802.11b", "802.11a", "802.11g"];

    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "802.11b" => Some(Standard::B),
            "802.11a" => Some(Standard::A),
            "802.11g" => Some(Standard::G),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Standard::B => "802.11b",
            Standard::A => "802.11a",
            Standard::G => "802.11g",
        }
    }

    /// The data rates the standard defines, bit/s.
    pub fn rates(self) -> &'static [u64] {
        match self {
            Standard::B => &DSSS_RATES,
            Standard::A => &OFDM_RATES,
            Standard::G => &ERP_RATES,
        }
    }

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
            // Clause 17 (OFDM, 20 MHz): aSlotTime 9 us, aSIFSTime 16 us, aCWmin 15, aCWmax 1023.
            Standard::A => MacTiming {
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

pub const DSSS_RATES: [u64; 4] = [1_000_000, 2_000_000, 5_500_000, 11_000_000];
pub const OFDM_RATES: [u64; 8] = [
    6_000_000, 9_000_000, 12_000_000, 18_000_000, 24_000_000, 36_000_000, 48_000_000, 54_000_000,
];
pub const ERP_RATES: [u64; 12] = [
    1_000_000, 2_000_000, 5_500_000, 11_000_000, 6_000_000, 9_000_000, 12_000_000, 18_000_000,
    24_000_000, 36_000_000, 48_000_000, 54_000_000,
];

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

/// DSSS PLCP preamble and header (clause 15.2.2, 16.2.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preamble {
    /// 144 us SYNC+SFD and a 48 us header, both at 1 Mbit/s: 192 us.
    Long,
    /// 72 us preamble at 1 Mbit/s and a 24 us header at 2 Mbit/s: 96 us (not for 1 Mbit/s).
    Short,
}

impl Preamble {
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "long" => Some(Preamble::Long),
            "short" => Some(Preamble::Short),
            _ => None,
        }
    }

    fn duration(self) -> SimDuration {
        match self {
            Preamble::Long => us(192),
            Preamble::Short => us(96),
        }
    }
}

/// MAC header and FCS of a data frame (three addresses, no QoS): 24 + 4 bytes.
pub const DATA_MAC_OVERHEAD: u32 = 28;
/// LLC/SNAP header in front of an IP packet (RFC 1042): 8 bytes.
pub const LLC_SNAP: u32 = 8;
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
/// Largest MSDU (802.11-2020 9.2.4.8): 2304 bytes, of which LLC/SNAP takes 8, so IP packets of
/// up to 2296 bytes (the MTU the seeds use).
pub const MAX_MSDU: u32 = 2304;
pub const MAX_IP_PACKET: u32 = MAX_MSDU - LLC_SNAP;

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
