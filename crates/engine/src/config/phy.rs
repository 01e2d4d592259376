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
