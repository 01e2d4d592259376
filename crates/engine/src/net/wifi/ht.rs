//! HT (802.11n) and VHT (802.11ac) PPDU timing in 5 GHz (docs/models/wifi.md "802.11n and
//! 802.11ac"): the data rate of an MCS, and how long a PSDU takes on the air.
//!
//! Sources: IEEE 802.11-2020 clause 19 (HT: 19.3.2 PPDU format, 19.3.5 modulation and coding,
//! 19.3.6 N_LTF, 19.4.3 TXTIME, the MCS tables of 19.5) and clause 21 (VHT: 21.3.2 PPDU format,
//! 21.4.3 TXTIME, the MCS tables of 21.5). Single user, BCC, no STBC, 5 GHz (no signal
//! extension); control frames stay legacy OFDM PPDUs (`phy::airtime`).

use super::phy::{HtFormat, HtMode};
use crate::units::SimDuration;

pub use crate::config::phy::Invalid;

/// aPPDUMaxTime of HT-mixed and VHT PPDUs (19.4.4, 21.4.4): 5.484 ms.
pub const PPDU_MAX_TIME: SimDuration = SimDuration(5_484_000);

/// A channel's HT or VHT data PPDUs, with the numbers their TXTIME needs (the MCS arithmetic is
/// the scenario contract's, `config::phy::HtMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HtPhy {
    pub mode: HtMode,
    /// Data bits per OFDM symbol, all streams.
    n_dbps: u32,
    /// BCC encoders.
    n_es: u32,
    /// HT-LTFs or VHT-LTFs.
    n_ltf: u32,
}

impl HtPhy {
    pub fn new(mode: HtMode) -> Result<Self, Invalid> {
        mode.validate()?;
        Ok(Self { mode, n_dbps: mode.n_dbps(), n_es: mode.n_es(), n_ltf: mode.n_ltf() })
    }

    pub fn n_dbps(&self) -> u32 {
        self.n_dbps
    }

    pub fn n_es(&self) -> u32 {
        self.n_es
    }

    pub fn data_rate_bps(&self) -> u64 {
        self.mode.data_rate_bps()
    }

    pub fn non_ht_reference_rate(&self) -> u64 {
        self.mode.non_ht_reference_rate()
    }

    /// The preamble and signal fields before the data symbols: L-STF 8 + L-LTF 8 + L-SIG 4, then
    /// HT-SIG 8 + HT-STF 4 + 4 per HT-LTF (19.4.3), or VHT-SIG-A 8 + VHT-STF 4 + 4 per VHT-LTF +
    /// VHT-SIG-B 4 (21.4.3).
    pub fn preamble(&self) -> SimDuration {
        let legacy = 8 + 8 + 4;
        let us = match self.mode.format {
            HtFormat::HtMixed => legacy + 8 + 4 + 4 * self.n_ltf,
            HtFormat::Vht => legacy + 8 + 4 + 4 * self.n_ltf + 4,
        };
        SimDuration(us as u64 * 1_000)
    }

    /// TXTIME of a PSDU of `bytes` (for VHT, its APEP length): the preamble, then N_SYM =
    /// ceil((8 bytes + 16 SERVICE + 6 N_ES tail bits) / N_DBPS) symbols of 4 us; with the short
    /// guard interval the N_SYM symbols of 3.6 us are rounded up to a multiple of 4 us
    /// (T_SYML x ceil(T_SYMS x N_SYM / T_SYML), 19.4.3 and 21.4.3).
    pub fn txtime(&self, bytes: u32) -> SimDuration {
        let bits = 8 * bytes as u64 + 16 + 6 * self.n_es as u64;
        let symbols = bits.div_ceil(self.n_dbps as u64);
        let data_us = if self.mode.short_gi { 4 * (9 * symbols).div_ceil(10) } else { 4 * symbols };
        SimDuration(self.preamble().0 + data_us * 1_000)
    }

    /// The largest A-MPDU (9.4.2.55.3, 9.4.2.157.2): 65,535 bytes for HT, 1,048,575 for VHT.
    pub fn max_ampdu_bytes(&self) -> u32 {
        match self.mode.format {
            HtFormat::HtMixed => 65_535,
            HtFormat::Vht => 1_048_575,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phy(format: HtFormat, mcs: u8, bandwidth_mhz: u16, streams: u8, short_gi: bool) -> HtPhy {
        HtPhy::new(HtMode { format, mcs, bandwidth_mhz, streams, short_gi }).unwrap()
    }

    const US: u64 = 1_000;
    /// A 1500-byte IP packet in a QoS data MPDU: 1500 + 8 LLC/SNAP + 26 header + 4 FCS.
    const MPDU: u32 = 1538;

    #[test]
    fn ht_mcs_rates_follow_n_dbps_over_the_symbol_time_19_5() {
        // MCS 7, 20 MHz, 1 stream: N_DBPS = 52 x 6 x 5/6 = 260 -> 260 / 4 us = 65 Mbit/s, and
        // 260 / 3.6 us = 72.2 Mbit/s with the short guard interval.
        assert_eq!(phy(HtFormat::HtMixed, 7, 20, 1, false).data_rate_bps(), 65_000_000);
        assert_eq!(phy(HtFormat::HtMixed, 7, 20, 1, true).data_rate_bps(), 72_222_222);
        // MCS 0, 20 MHz: N_DBPS = 52 x 1 x 1/2 = 26 -> 6.5 Mbit/s.
        assert_eq!(phy(HtFormat::HtMixed, 0, 20, 1, false).data_rate_bps(), 6_500_000);
        // HT MCS 15 (mcs 7, 2 streams), 40 MHz, short GI: N_DBPS = 108 x 6 x 2 x 5/6 = 1080 ->
        // 300 Mbit/s, one encoder.
        let p = phy(HtFormat::HtMixed, 7, 40, 2, true);
        assert_eq!((p.data_rate_bps(), p.n_es()), (300_000_000, 1));
        // HT MCS 21 (mcs 5, 3 streams), 40 MHz: N_DBPS = 108 x 6 x 3 x 2/3 = 1296 -> 324
        // Mbit/s, two encoders (Table 19-33); MCS 20 (mcs 4): 972 -> 243 Mbit/s, one.
        assert_eq!(phy(HtFormat::HtMixed, 5, 40, 3, false).n_es(), 2);
        assert_eq!(phy(HtFormat::HtMixed, 4, 40, 3, false).n_es(), 1);
    }

    #[test]
    fn vht_rates_encoders_and_excluded_mcs_21_5() {
        // MCS 9, 80 MHz, 2 streams: N_DBPS = 234 x 8 x 2 x 5/6 = 3120 -> 866.7 Mbit/s (short
        // GI), 780 Mbit/s (long GI), two encoders.
        let p = phy(HtFormat::Vht, 9, 80, 2, true);
        assert_eq!((p.n_dbps(), p.n_es(), p.data_rate_bps()), (3120, 2, 866_666_666));
        assert_eq!(phy(HtFormat::Vht, 9, 80, 2, false).data_rate_bps(), 780_000_000);
        // MCS 9, 80 MHz, 3 streams: N_DBPS 4680, three encoders (Table 21-38).
        assert_eq!(phy(HtFormat::Vht, 9, 80, 3, false).n_es(), 3);
        // 20 MHz MCS 9 only with 3 streams (52 x 8 x 5/6 = 346.7 bits per stream); 80 MHz MCS 6
        // not with 3 streams (N_DBPS 3159 over two encoders).
        for streams in [1, 2, 4] {
            assert!(HtPhy::new(HtMode { format: HtFormat::Vht, mcs: 9, bandwidth_mhz: 20, streams, short_gi: false }).is_err());
        }
        assert_eq!(phy(HtFormat::Vht, 9, 20, 3, false).n_dbps(), 1040);
        assert!(HtPhy::new(HtMode { format: HtFormat::Vht, mcs: 6, bandwidth_mhz: 80, streams: 3, short_gi: false }).is_err());
        // Every other combination within 80 MHz and 4 streams is defined.
        let mut defined = 0;
        for bw in [20, 40, 80] {
            for streams in 1..=4 {
                for mcs in 0..=9 {
                    defined += HtPhy::new(HtMode { format: HtFormat::Vht, mcs, bandwidth_mhz: bw, streams, short_gi: false }).is_ok() as u32;
                }
            }
        }
        assert_eq!(defined, 3 * 4 * 10 - 3 - 1);
    }

    #[test]
    fn ht_mixed_txtime_is_preamble_plus_whole_symbols_19_4_3() {
        // MCS 7, 20 MHz, 1 stream, long GI, 1538 bytes: 16 + 8 x 1538 + 6 = 12326 bits over 260
        // per symbol = 47.4 -> 48 symbols = 192 us; preamble 8 + 8 + 4 + 8 + 4 + 4 x 1 = 36 us.
        assert_eq!(phy(HtFormat::HtMixed, 7, 20, 1, false).txtime(MPDU), SimDuration(228 * US));
        // Short GI: 48 symbols of 3.6 us = 172.8 us, rounded up to 4 us: 4 x ceil(43.2) = 176.
        assert_eq!(phy(HtFormat::HtMixed, 7, 20, 1, true).txtime(MPDU), SimDuration((36 + 176) * US));
        // 2 streams, 40 MHz, short GI: 12326 / 1080 -> 12 symbols, 4 x ceil(10.8) = 44 us; two
        // HT-LTFs: preamble 40 us.
        assert_eq!(phy(HtFormat::HtMixed, 7, 40, 2, true).txtime(MPDU), SimDuration(84 * US));
        // 3 streams (4 HT-LTFs, preamble 48 us), 40 MHz, long GI, two encoders: 16 + 12304 +
        // 12 = 12332 bits / 1620 -> 8 symbols = 32 us.
        assert_eq!(phy(HtFormat::HtMixed, 7, 40, 3, false).txtime(MPDU), SimDuration(80 * US));
        // An empty PSDU still carries SERVICE and tail: 22 bits -> one symbol.
        assert_eq!(phy(HtFormat::HtMixed, 0, 20, 1, false).txtime(0), SimDuration(40 * US));
    }

    #[test]
    fn vht_txtime_adds_sig_a_and_sig_b_to_the_legacy_preamble_21_4_3() {
        // MCS 9, 80 MHz, 2 streams, short GI: preamble 20 + 8 (SIG-A) + 4 (STF) + 2 x 4 (LTFs)
        // + 4 (SIG-B) = 44 us; 16 + 12304 + 2 x 6 = 12332 bits / 3120 -> 4 symbols, 3.6 x 4 =
        // 14.4 -> 16 us: 60 us.
        let p = phy(HtFormat::Vht, 9, 80, 2, true);
        assert_eq!(p.preamble(), SimDuration(44 * US));
        assert_eq!(p.txtime(MPDU), SimDuration(60 * US));
        // MCS 8, 20 MHz, 1 stream, long GI: N_DBPS = 52 x 8 x 3/4 = 312; 12326 / 312 = 39.5 ->
        // 40 symbols = 160 us; preamble 40 us.
        assert_eq!(phy(HtFormat::Vht, 8, 20, 1, false).txtime(MPDU), SimDuration(200 * US));
    }

    #[test]
    fn control_responses_are_chosen_against_the_non_ht_reference_rate_10_6_6_5_2() {
        // MCS 8 of HT (mcs 0, 2 streams) is BPSK 1/2: reference 6 Mbit/s though it sends 13.
        let p = phy(HtFormat::HtMixed, 0, 20, 2, false);
        assert_eq!((p.data_rate_bps(), p.non_ht_reference_rate()), (13_000_000, 6_000_000));
        assert_eq!(phy(HtFormat::Vht, 9, 80, 1, false).non_ht_reference_rate(), 54_000_000);
        assert_eq!(phy(HtFormat::HtMixed, 4, 20, 1, false).non_ht_reference_rate(), 36_000_000);
    }

    #[test]
    fn bad_modes_name_the_allowed_values() {
        let e = HtPhy::new(HtMode { format: HtFormat::HtMixed, mcs: 15, bandwidth_mhz: 20, streams: 1, short_gi: false }).unwrap_err();
        assert_eq!(e, Invalid::Mcs("must be 0-7 (the modulation and coding of each stream), got 15 (HT MCS 15 is mcs = 7 with spatial_streams = 2)".into()));
        let e = HtPhy::new(HtMode { format: HtFormat::HtMixed, mcs: 7, bandwidth_mhz: 80, streams: 1, short_gi: false }).unwrap_err();
        assert!(matches!(e, Invalid::Bandwidth(m) if m.contains("\"20MHz\", \"40MHz\"")));
        let e = HtPhy::new(HtMode { format: HtFormat::Vht, mcs: 7, bandwidth_mhz: 80, streams: 5, short_gi: false }).unwrap_err();
        assert!(matches!(e, Invalid::Streams(_)));
    }
}
