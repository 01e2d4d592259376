//! The 802.11 names a `[[channels]]` entry may give: its standard and the data rates the
//! standard defines, the PLCP preamble, and the largest IP packet a frame carries. How long a
//! frame takes on the air under them is the PHY model's (`net::wifi::phy`).

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
    /// 802.11n: HT-mixed format PPDUs in 5 GHz (clause 19), rate from the MCS ([`HtMode`]).
    N,
    /// 802.11ac: VHT PPDUs in 5 GHz (clause 21), rate from the MCS ([`HtMode`]).
    Ac,
}

impl Standard {
    pub const NAMES: [&'static str; 5] = ["802.11b", "802.11a", "802.11g", "802.11n", "802.11ac"];

    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "802.11b" => Some(Standard::B),
            "802.11a" => Some(Standard::A),
            "802.11g" => Some(Standard::G),
            "802.11n" => Some(Standard::N),
            "802.11ac" => Some(Standard::Ac),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Standard::B => "802.11b",
            Standard::A => "802.11a",
            Standard::G => "802.11g",
            Standard::N => "802.11n",
            Standard::Ac => "802.11ac",
        }
    }

    /// The data rates the standard defines, bit/s; for 802.11n and 802.11ac the legacy OFDM
    /// rates of their control frames and basic rate set (their data rate comes from the MCS).
    pub fn rates(self) -> &'static [u64] {
        match self {
            Standard::B => &DSSS_RATES,
            Standard::A | Standard::N | Standard::Ac => &OFDM_RATES,
            Standard::G => &ERP_RATES,
        }
    }

    /// Whether data goes in HT or VHT PPDUs at a rate set by the MCS.
    pub fn is_ht(self) -> bool {
        matches!(self, Standard::N | Standard::Ac)
    }
}

pub const DSSS_RATES: [u64; 4] = [1_000_000, 2_000_000, 5_500_000, 11_000_000];
pub const OFDM_RATES: [u64; 8] = [
    6_000_000, 9_000_000, 12_000_000, 18_000_000, 24_000_000, 36_000_000, 48_000_000, 54_000_000,
];
pub const ERP_RATES: [u64; 12] = [
    1_000_000, 2_000_000, 5_500_000, 11_000_000, 6_000_000, 9_000_000, 12_000_000, 18_000_000,
    24_000_000, 36_000_000, 48_000_000, 54_000_000,
];

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
}

/// LLC/SNAP header in front of an IP packet (RFC 1042): 8 bytes.
pub const LLC_SNAP: u32 = 8;
/// Largest MSDU (802.11-2020 9.2.4.8): 2304 bytes, of which LLC/SNAP takes 8, so IP packets of
/// up to 2296 bytes (the MTU the seeds use).
pub const MAX_MSDU: u32 = 2304;
pub const MAX_IP_PACKET: u32 = MAX_MSDU - LLC_SNAP;


/// The PPDU format of an 802.11n or 802.11ac channel's data frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HtFormat {
    /// HT-mixed format (clause 19.3.2): a legacy preamble, then HT-SIG and HT training fields.
    HtMixed,
    /// VHT single-user PPDU (clause 21.3.2).
    Vht,
}

/// The modulation and coding of an 802.11n or 802.11ac channel's data frames, as a user gives
/// it: `mcs` (per stream: 0-7 for HT, 0-9 for VHT), `bandwidth`, `spatial_streams` and
/// `guard_interval`. The data rate follows from them (`net::wifi::ht`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HtMode {
    pub format: HtFormat,
    pub mcs: u8,
    /// 20, 40 or 80 (VHT only) MHz.
    pub bandwidth_mhz: u16,
    /// 1-4.
    pub streams: u8,
    /// 400 ns guard interval (3.6 us symbols) instead of 800 ns (4 us).
    pub short_gi: bool,
}

/// Bits of coded data per subcarrier and the coding rate of MCS 0-9 (802.11-2020 19.5, 21.5):
/// BPSK 1/2, QPSK 1/2, QPSK 3/4, 16-QAM 1/2, 16-QAM 3/4, 64-QAM 2/3, 3/4, 5/6; VHT adds 256-QAM
/// 3/4 and 5/6.
const MODULATION: [(u32, u32, u32); 10] =
    [(1, 1, 2), (2, 1, 2), (2, 3, 4), (4, 1, 2), (4, 3, 4), (6, 2, 3), (6, 3, 4), (6, 5, 6), (8, 3, 4), (8, 5, 6)];

/// The legacy rate of the same modulation and coding (the non-HT reference rate, 10.6.6.5.2).
const NON_HT_REFERENCE_MBPS: [u64; 10] = [6, 12, 18, 24, 36, 48, 54, 54, 54, 54];

/// Why a mode is not a valid HT or VHT rate; the message names the allowed values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invalid {
    Mcs(String),
    Bandwidth(String),
    Streams(String),
}

impl HtMode {
    /// Data subcarriers N_SD (19.3.5 Table 19-6, 21.3.7 Table 21-5).
    fn data_subcarriers(&self) -> u32 {
        match self.bandwidth_mhz {
            20 => 52,
            40 => 108,
            _ => 234,
        }
    }

    /// Whether the standard defines this MCS at this bandwidth and number of streams.
    pub fn validate(&self) -> Result<(), Invalid> {
        let (max_mcs, bandwidths): (u8, &[u16]) = match self.format {
            HtFormat::HtMixed => (7, &[20, 40]),
            HtFormat::Vht => (9, &[20, 40, 80]),
        };
        if !bandwidths.contains(&self.bandwidth_mhz) {
            let names: Vec<String> = bandwidths.iter().map(|b| format!("\"{b}MHz\"")).collect();
            return Err(Invalid::Bandwidth(format!("{} MHz is not a bandwidth of this standard; one of {}", self.bandwidth_mhz, names.join(", "))));
        }
        if !(1..=4).contains(&self.streams) {
            return Err(Invalid::Streams(format!("must be 1-4 spatial streams, got {}", self.streams)));
        }
        if self.mcs > max_mcs {
            let hint = if self.format == HtFormat::HtMixed && self.mcs <= 31 {
                format!(" (HT MCS {} is mcs = {} with spatial_streams = {})", self.mcs, self.mcs % 8, self.mcs / 8 + 1)
            } else {
                String::new()
            };
            return Err(Invalid::Mcs(format!("must be 0-{max_mcs} (the modulation and coding of each stream), got {}{hint}", self.mcs)));
        }
        // An MCS whose N_DBPS is no whole number, or does not split evenly among the encoders,
        // is excluded (21.5: e.g. 20 MHz MCS 9 with 1, 2 or 4 streams, 80 MHz MCS 6 with 3).
        let (bits, num, den) = MODULATION[self.mcs as usize];
        let coded = self.data_subcarriers() * bits * self.streams as u32;
        if coded * num % den != 0 || self.n_dbps() % self.n_es() != 0 {
            return Err(Invalid::Mcs(format!(
                "MCS {} is not defined for {} spatial stream(s) at {} MHz (802.11-2020 21.5)",
                self.mcs, self.streams, self.bandwidth_mhz
            )));
        }
        Ok(())
    }

    /// Data bits per OFDM symbol, all streams: N_SD x N_BPSCS x N_SS x R.
    pub fn n_dbps(&self) -> u32 {
        let (bits, num, den) = MODULATION[self.mcs.min(9) as usize];
        self.data_subcarriers() * bits * self.streams as u32 * num / den
    }

    /// BCC encoders: one per 1080 data bits of a symbol for HT (300 Mbit/s with the short GI),
    /// per 2160 for VHT (600 Mbit/s): the N_ES of the MCS tables within 80 MHz and 4 streams.
    pub fn n_es(&self) -> u32 {
        let per_encoder = match self.format {
            HtFormat::HtMixed => 1080,
            HtFormat::Vht => 2160,
        };
        self.n_dbps().div_ceil(per_encoder).max(1)
    }

    /// HT-LTFs or VHT-LTFs for the streams (19.3.9.4.6 Table 19-13, 21.3.8.3.5): 1, 2, 4, 4.
    pub fn n_ltf(&self) -> u32 {
        [1, 2, 4, 4][(self.streams.clamp(1, 4) - 1) as usize]
    }

    /// The data rate N_DBPS / T_SYM, bit/s (rounded down: 7.2 Mbit/s is 7,222,222 bit/s).
    pub fn data_rate_bps(&self) -> u64 {
        let symbol_ns = if self.short_gi { 3_600 } else { 4_000 };
        self.n_dbps() as u64 * 1_000_000_000 / symbol_ns
    }

    /// The legacy OFDM rate of the MCS's modulation and coding (10.6.6.5.2).
    pub fn non_ht_reference_rate(&self) -> u64 {
        NON_HT_REFERENCE_MBPS[self.mcs.min(9) as usize] * 1_000_000
    }
}
