//! Shared 802.11 channels (`[[channels]]`) and IP-level pipes (`[[pipes]]`) of a network scenario
//! (docs/models/wifi.md "The channel in a scenario").
//!
//! A channel is one collision domain: its member nodes contend for it under the DCF, and any two
//! members that hear each other can exchange frames directly (an interface each way). A pipe sits
//! in front of one node's interface towards a neighbour, above the MAC: the seeds' Dummynet node,
//! which delays and drops IP packets before the card ever sees them.

use super::impairments::Impairment;
use super::network::NodeId;
use super::{serde_units, typed};
use crate::error::EngineError;
use super::phy::{self, HtFormat, HtMode, Invalid, Preamble, Standard};
use crate::units::SimDuration;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

/// Largest RTS threshold (802.11-2020 dot11RTSThreshold: 0-65535, but frames are never longer
/// than 2346 bytes on the seeds' cards, so 2347 means "never" there; above it is refused).
pub const MAX_RTS_THRESHOLD: u32 = 2347;

/// What an overheard frame (decoded or sensed, addressed to another station) costs its radio.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Overhearing {
    /// The radio receives it: receive power for its airtime.
    #[default]
    Receive,
    /// The radio ignores it: idle power (an idealized card that filters by address at once).
    Idle,
}

/// A validated channel.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChannelConfig {
    pub name: String,
    #[serde(serialize_with = "standard_name")]
    pub standard: Standard,
    pub nodes: Vec<String>,
    /// Member node ids, in `nodes` order (station `k` of the DCF is `members[k]`).
    #[serde(skip)]
    pub members: Vec<NodeId>,
    #[serde(with = "serde_units::rate")]
    pub data_rate: u64,
    #[serde(serialize_with = "rate_list")]
    pub basic_rates: Vec<u64>,
    #[serde(serialize_with = "preamble_name")]
    pub preamble: Preamble,
    /// Frames whose MPDU is longer than this many bytes go after RTS/CTS; `None`: never.
    #[serde(serialize_with = "threshold")]
    pub rts_threshold: Option<u32>,
    pub short_retry_limit: u32,
    pub long_retry_limit: u32,
    pub queue: u32,
    pub mtu: u32,
    /// `hears[a][b]`: station `a` senses (and can decode) station `b`, by station index.
    #[serde(skip)]
    pub hears: Vec<Vec<bool>>,
    /// The pairs as given (absent: everyone hears everyone).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hears_pairs: Option<Vec<[String; 2]>>,
    pub impairments: Vec<Impairment>,
    pub overhearing: Overhearing,
    /// Infrastructure mode: the access point and its beacons; `None` for an ad hoc channel.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub infrastructure: Option<InfrastructureConfig>,
    /// 802.11n and 802.11ac: the MCS of data frames and aggregation; `None` for 802.11a/b/g.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub ht: Option<HtConfig>,
}

/// An 802.11n or 802.11ac channel's data PPDUs (the data rate follows from them) and A-MPDU
/// aggregation with block ack (802.11-2020 10.12, 10.25).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HtConfig {
    /// Validated (`HtMode::validate`).
    #[serde(skip)]
    pub mode: HtMode,
    pub mcs: u8,
    pub bandwidth: String,
    pub spatial_streams: u8,
    pub guard_interval: &'static str,
    pub ampdu: bool,
    /// MPDUs per A-MPDU at most (1-64, the block ack window).
    pub ampdu_max_mpdus: u32,
}

/// The block ack window (10.25.2): at most 64 MPDUs in flight to one receiver.
pub const BLOCK_ACK_WINDOW: u32 = 64;

/// A channel's access point (802.11-2020 11.1.3): stations talk only through it, and under
/// `radio_policy = "psm"` they doze between the beacons they listen to (11.2.3).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InfrastructureConfig {
    pub ap: String,
    /// The AP's station index.
    #[serde(skip)]
    pub station: usize,
    #[serde(with = "serde_units::duration")]
    pub beacon_interval: SimDuration,
    pub listen_interval: u32,
    /// Adaptive power save: a station stays awake this long after its last data frame (zero:
    /// it dozes at once, as 802.11-2020 11.2.3 has it).
    #[serde(with = "serde_units::duration", skip_serializing_if = "SimDuration::is_zero")]
    pub psm_timeout: SimDuration,
}

/// 100 time units of 1024 us (802.11-2020 dot11BeaconPeriod default).
pub const DEFAULT_BEACON_INTERVAL: SimDuration = SimDuration(102_400_000);

fn standard_name<S: Serializer>(s: &Standard, ser: S) -> Result<S::Ok, S::Error> {
    ser.serialize_str(s.name())
}

fn preamble_name<S: Serializer>(p: &Preamble, ser: S) -> Result<S::Ok, S::Error> {
    ser.serialize_str(match p {
        Preamble::Long => "long",
        Preamble::Short => "short",
    })
}

fn threshold<S: Serializer>(t: &Option<u32>, ser: S) -> Result<S::Ok, S::Error> {
    match t {
        Some(bytes) => ser.serialize_u32(*bytes),
        None => ser.serialize_str("off"),
    }
}

fn rate_list<S: Serializer>(rates: &[u64], ser: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeSeq;
    let mut seq = ser.serialize_seq(Some(rates.len()))?;
    for r in rates {
        seq.serialize_element(&serde_units::format_rate(*r))?;
    }
    seq.end()
}

impl ChannelConfig {
    /// Station index of `node` on this channel.
    pub fn station_of(&self, node: NodeId) -> Option<usize> {
        self.members.iter().position(|&m| m == node)
    }

    /// Whether a frame from station `a` can reach station `b` (b hears a).
    pub fn reaches(&self, a: usize, b: usize) -> bool {
        let via_ap = self.infrastructure.as_ref().map_or(true, |x| x.station == a || x.station == b);
        a != b && self.hears[b][a] && via_ap
    }
}

/// An IP-level pipe at node `from` on its way to neighbour `to`: packets are delayed by `delay`
/// and pass the impairments when they enter it, then go to the interface (seed 000/002's
/// Dummynet at node C on the C -> D interface).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PipeConfig {
    pub from: String,
    pub to: String,
    #[serde(skip)]
    pub ends: [NodeId; 2],
    #[serde(with = "serde_units::duration")]
    pub delay: SimDuration,
    pub impairments: Vec<Impairment>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawChannel {
    name: String,
    #[serde(default = "default_standard")]
    standard: String,
    nodes: Vec<String>,
    #[serde(default)]
    data_rate: Option<Value>,
    #[serde(default)]
    basic_rate: Option<Value>,
    #[serde(default)]
    basic_rates: Option<Vec<Value>>,
    #[serde(default = "default_preamble")]
    preamble: String,
    #[serde(default)]
    rts_threshold: Option<Value>,
    #[serde(default = "short_retry_limit")]
    short_retry_limit: u32,
    #[serde(default = "long_retry_limit")]
    long_retry_limit: u32,
    #[serde(default = "default_queue")]
    queue: u32,
    #[serde(default = "default_mtu")]
    mtu: u32,
    #[serde(default)]
    hears: Option<Vec<[String; 2]>>,
    #[serde(default)]
    impairments: Vec<Value>,
    #[serde(default)]
    overhearing: Overhearing,
    #[serde(default)]
    ap: Option<String>,
    #[serde(default, with = "super::opt_duration")]
    beacon_interval: Option<SimDuration>,
    #[serde(default)]
    listen_interval: Option<u32>,
    #[serde(default, with = "super::opt_duration")]
    psm_timeout: Option<SimDuration>,
    #[serde(default)]
    mcs: Option<u32>,
    #[serde(default)]
    bandwidth: Option<String>,
    #[serde(default)]
    spatial_streams: Option<u32>,
    #[serde(default)]
    guard_interval: Option<String>,
    #[serde(default)]
    ampdu: Option<bool>,
    #[serde(default)]
    ampdu_max_mpdus: Option<u32>,
}

fn default_standard() -> String {
    "802.11b".into()
}
fn default_preamble() -> String {
    "long".into()
}
/// dot11ShortRetryLimit and dot11LongRetryLimit (802.11-2020 Annex C): attempts per frame.
fn short_retry_limit() -> u32 {
    7
}
fn long_retry_limit() -> u32 {
    4
}
fn default_queue() -> u32 {
    50
}
fn default_mtu() -> u32 {
    1500
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPipe {
    from: String,
    to: String,
    #[serde(default, with = "serde_units::duration")]
    delay: SimDuration,
    #[serde(default)]
    impairments: Vec<Value>,
}

fn err(path: impl Into<String>, message: impl Into<String>) -> EngineError {
    EngineError::config(path, message)
}

fn rate_names(rates: &[u64]) -> String {
    rates.iter().map(|r| serde_units::format_rate(*r)).collect::<Vec<_>>().join(", ")
}

/// A rate of the channel's standard, from "11Mbps", 11000000 or "5.5Mbps".
fn read_rate(v: &Value, standard: Standard, at: &str) -> Result<u64, EngineError> {
    let rate = match v {
        Value::String(s) => crate::units::parse_rate(s).map_err(|m| err(at, m))?,
        Value::Number(n) => n.as_u64().ok_or_else(|| err(at, "must be a rate, e.g. \"11Mbps\""))?,
        _ => return Err(err(at, "must be a rate, e.g. \"11Mbps\"")),
    };
    if !standard.rates().contains(&rate) {
        return Err(err(
            at,
            format!("{} is not a rate of {}; one of {}", serde_units::format_rate(rate), standard.name(), rate_names(standard.rates())),
        ));
    }
    Ok(rate)
}

/// The HT or VHT settings of an 802.11n or 802.11ac channel at `at`; `None` for the others,
/// which must not give them.
fn read_ht(raw: &RawChannel, standard: Standard, at: &str) -> Result<Option<HtConfig>, EngineError> {
    let given = [
        ("mcs", raw.mcs.is_some()),
        ("bandwidth", raw.bandwidth.is_some()),
        ("spatial_streams", raw.spatial_streams.is_some()),
        ("guard_interval", raw.guard_interval.is_some()),
        ("ampdu", raw.ampdu.is_some()),
        ("ampdu_max_mpdus", raw.ampdu_max_mpdus.is_some()),
    ];
    let format = match standard {
        Standard::N => HtFormat::HtMixed,
        Standard::Ac => HtFormat::Vht,
        _ => {
            if let Some((key, _)) = given.iter().find(|g| g.1) {
                return Err(err(format!("{at}.{key}"), format!("only 802.11n and 802.11ac channels have it ({} sets its rate with data_rate); remove the key", standard.name())));
            }
            return Ok(None);
        }
    };
    let bandwidths: &[&str] = if format == HtFormat::Vht { &["20MHz", "40MHz", "80MHz"] } else { &["20MHz", "40MHz"] };
    let bandwidth = raw.bandwidth.clone().unwrap_or_else(|| bandwidths.last().expect("bandwidths").to_string());
    let bandwidth_mhz = match bandwidths.iter().position(|b| *b == bandwidth) {
        Some(k) => 20 << k,
        None => {
            let names: Vec<String> = bandwidths.iter().map(|b| format!("{b:?}")).collect();
            return Err(err(format!("{at}.bandwidth"), format!("unknown bandwidth {bandwidth:?} for {}; one of {}", standard.name(), names.join(", "))));
        }
    };
    let short_gi = match raw.guard_interval.as_deref() {
        None | Some("long") => false,
        Some("short") => true,
        Some(other) => return Err(err(format!("{at}.guard_interval"), format!("unknown guard interval {other:?}; one of \"long\" (800 ns), \"short\" (400 ns)"))),
    };
    let streams = raw.spatial_streams.unwrap_or(1);
    if !(1..=4).contains(&streams) {
        return Err(err(format!("{at}.spatial_streams"), format!("must be 1-4 spatial streams, got {streams}")));
    }
    let mode = |mcs: u32| HtMode { format, mcs: mcs.min(255) as u8, bandwidth_mhz, streams: streams as u8, short_gi };
    // The MCSs these settings define, lowest first.
    let defined: Vec<HtMode> = (0..=9).map(mode).filter(|m| m.validate().is_ok()).collect();
    let rate = match &raw.data_rate {
        None => None,
        Some(v) => Some(parse_rate_value(v, &format!("{at}.data_rate"))?),
    };
    let phy = match (raw.mcs, rate) {
        (Some(mcs), _) => {
            let m = mode(mcs);
            m.validate().map_err(|e| match e {
                Invalid::Mcs(m) => err(format!("{at}.mcs"), m),
                Invalid::Bandwidth(m) => err(format!("{at}.bandwidth"), m),
                Invalid::Streams(m) => err(format!("{at}.spatial_streams"), m),
            })?;
            m
        }
        // A data rate picks the MCS that gives it with these settings.
        (None, Some(r)) => *defined.iter().find(|p| p.data_rate_bps() == r).ok_or_else(|| rate_error(&defined, r, at))?,
        // The highest MCS defined for these settings.
        (None, None) => *defined.last().expect("MCS 0 is always defined"),
    };
    if let Some(r) = rate {
        if r != phy.data_rate_bps() {
            return Err(rate_error(&defined, r, at));
        }
    }
    let ampdu = raw.ampdu.unwrap_or(true);
    let max = raw.ampdu_max_mpdus.unwrap_or(BLOCK_ACK_WINDOW);
    if !(1..=BLOCK_ACK_WINDOW).contains(&max) {
        return Err(err(format!("{at}.ampdu_max_mpdus"), format!("must be 1-{BLOCK_ACK_WINDOW} MPDUs (the block ack window), got {max}")));
    }
    Ok(Some(HtConfig {
        mode: phy,
        mcs: phy.mcs,
        bandwidth,
        spatial_streams: streams as u8,
        guard_interval: if short_gi { "short" } else { "long" },
        ampdu,
        ampdu_max_mpdus: max,
    }))
}

/// An HT or VHT channel's `data_rate` that no MCS of its settings gives.
fn rate_error(defined: &[HtMode], rate: u64, at: &str) -> EngineError {
    let m = defined.first().expect("MCS 0 is always defined");
    let rates: Vec<String> = defined.iter().map(|p| format!("{} (mcs {})", serde_units::format_rate(p.data_rate_bps()), p.mcs)).collect();
    err(
        format!("{at}.data_rate"),
        format!(
            "{} is not a rate of {} spatial stream(s) at {} MHz with the {} guard interval; one of {} (or set mcs instead)",
            serde_units::format_rate(rate),
            m.streams,
            m.bandwidth_mhz,
            if m.short_gi { "short" } else { "long" },
            rates.join(", ")
        ),
    )
}

fn parse_rate_value(v: &Value, at: &str) -> Result<u64, EngineError> {
    match v {
        Value::String(s) => crate::units::parse_rate(s).map_err(|m| err(at, m)),
        Value::Number(n) => n.as_u64().ok_or_else(|| err(at, "must be a rate, e.g. \"65Mbps\"")),
        _ => Err(err(at, "must be a rate, e.g. \"65Mbps\"")),
    }
}

/// Impairments that act on one frame attempt: they can only lose it (delay, reordering and
/// route outages belong to the IP layer: a pipe).
fn frame_impairment(imp: &Impairment) -> bool {
    matches!(
        imp,
        Impairment::Bernoulli { .. } | Impairment::BitError { .. } | Impairment::PeriodicBurst { .. } | Impairment::GilbertElliott { .. }
    )
}

/// Read `[[channels]]` (`lookup` resolves node names with the error path given).
pub(crate) fn read_channels(
    doc: &Value,
    lookup: &dyn Fn(&str, String) -> Result<NodeId, EngineError>,
) -> Result<Vec<ChannelConfig>, EngineError> {
    let list = match doc.get("channels") {
        None => return Ok(Vec::new()),
        Some(Value::Array(a)) => a,
        Some(_) => return Err(err("channels", "must be a list of [[channels]] tables")),
    };
    let mut out: Vec<ChannelConfig> = Vec::with_capacity(list.len());
    for (i, v) in list.iter().enumerate() {
        let at = format!("channels.{i}");
        let raw: RawChannel = typed(v, &at)?;
        if let Some(j) = out.iter().position(|c| c.name == raw.name) {
            return Err(err(format!("{at}.name"), format!("duplicate channel name {:?} (also channels.{j})", raw.name)));
        }
        let standard = Standard::parse(&raw.standard).ok_or_else(|| {
            err(format!("{at}.standard"), format!("unknown standard {:?}; one of {}", raw.standard, Standard::NAMES.join(", ")))
        })?;
        let preamble = Preamble::parse(&raw.preamble)
            .ok_or_else(|| err(format!("{at}.preamble"), format!("unknown preamble {:?}; one of long, short", raw.preamble)))?;
        if preamble == Preamble::Short && matches!(standard, Standard::A | Standard::N | Standard::Ac) {
            return Err(err(format!("{at}.preamble"), format!("{} has no DSSS preamble to shorten; remove the key", standard.name())));
        }
        let ht = read_ht(&raw, standard, &at)?;
        if raw.nodes.len() < 2 {
            return Err(err(format!("{at}.nodes"), format!("a channel needs at least two nodes, got {}", raw.nodes.len())));
        }
        let mut members = Vec::with_capacity(raw.nodes.len());
        for (k, n) in raw.nodes.iter().enumerate() {
            let id = lookup(n, format!("{at}.nodes.{k}"))?;
            if members.contains(&id) {
                return Err(err(format!("{at}.nodes.{k}"), format!("node {n:?} is listed twice")));
            }
            members.push(id);
        }
        let data_rate = match (&ht, &raw.data_rate) {
            (Some(h), _) => h.mode.data_rate_bps(),
            (None, Some(v)) => read_rate(v, standard, &format!("{at}.data_rate"))?,
            (None, None) => *standard.rates().iter().max().expect("a standard has rates"),
        };
        let basic_rates = match (&raw.basic_rate, &raw.basic_rates) {
            (Some(_), Some(_)) => return Err(err(format!("{at}.basic_rates"), "give basic_rate or basic_rates, not both")),
            (Some(v), None) => vec![read_rate(v, standard, &format!("{at}.basic_rate"))?],
            (None, Some(list)) if list.is_empty() => return Err(err(format!("{at}.basic_rates"), "must name at least one rate")),
            (None, Some(list)) => list
                .iter()
                .enumerate()
                .map(|(k, v)| read_rate(v, standard, &format!("{at}.basic_rates.{k}")))
                .collect::<Result<Vec<_>, _>>()?,
            // The mandatory rates each PHY's stations all support (802.11-2020 15.1, 17.1).
            (None, None) => match standard {
                Standard::B | Standard::G => vec![1_000_000, 2_000_000],
                Standard::A | Standard::N | Standard::Ac => vec![6_000_000, 12_000_000, 24_000_000],
            },
        };
        let rts_threshold = match &raw.rts_threshold {
            None => None,
            Some(Value::String(s)) if s == "off" => None,
            Some(Value::Number(n)) => match n.as_u64() {
                Some(t) if t <= MAX_RTS_THRESHOLD as u64 => Some(t as u32),
                _ => return Err(err(format!("{at}.rts_threshold"), format!("must be 0-{MAX_RTS_THRESHOLD} bytes or \"off\", got {n}"))),
            },
            Some(other) => return Err(err(format!("{at}.rts_threshold"), format!("must be 0-{MAX_RTS_THRESHOLD} bytes or \"off\", got {other}"))),
        };
        for (key, limit) in [("short_retry_limit", raw.short_retry_limit), ("long_retry_limit", raw.long_retry_limit)] {
            if !(1..=255).contains(&limit) {
                return Err(err(format!("{at}.{key}"), format!("must be 1-255 attempts, got {limit}")));
            }
        }
        super::check_queue(raw.queue, &format!("{at}.queue"), "frame")?;
        if !(128..=phy::MAX_IP_PACKET).contains(&raw.mtu) {
            return Err(err(
                format!("{at}.mtu"),
                format!(
                    "must be between 128 and {} bytes (the largest 802.11 MSDU, {} bytes, less 8 of LLC/SNAP), got {}",
                    phy::MAX_IP_PACKET,
                    phy::MAX_MSDU,
                    raw.mtu
                ),
            ));
        }
        let n = members.len();
        let hears = match &raw.hears {
            None => (0..n).map(|a| (0..n).map(|b| a != b).collect()).collect(),
            Some(pairs) => {
                let mut h = vec![vec![false; n]; n];
                for (k, [x, y]) in pairs.iter().enumerate() {
                    let station = |name: &str, e: usize| -> Result<usize, EngineError> {
                        let id = lookup(name, format!("{at}.hears.{k}.{e}"))?;
                        members.iter().position(|&m| m == id).ok_or_else(|| {
                            err(format!("{at}.hears.{k}.{e}"), format!("node {name:?} is not on this channel; its nodes are {}", raw.nodes.join(", ")))
                        })
                    };
                    let (a, b) = (station(x, 0)?, station(y, 1)?);
                    if a == b {
                        return Err(err(format!("{at}.hears.{k}"), format!("a pair names two different nodes; both are {x:?}")));
                    }
                    // Sensing is symmetric: equal powers and thresholds at every station.
                    h[a][b] = true;
                    h[b][a] = true;
                }
                h
            }
        };
        let impairments = raw
            .impairments
            .iter()
            .enumerate()
            .map(|(k, v)| {
                let key = format!("{at}.impairments.{k}");
                let imp = Impairment::from_value(v, &key)?;
                if !frame_impairment(&imp) {
                    return Err(err(
                        format!("{key}.kind"),
                        "a channel's impairments act on each frame attempt and can only lose it: bernoulli, bit_error, \
                         periodic_burst, gilbert_elliott (delay, reordering and outages go in a [[pipes]] entry)",
                    ));
                }
                Ok(imp)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let infrastructure = match &raw.ap {
            None => {
                for (key, given) in [
                    ("beacon_interval", raw.beacon_interval.is_some()),
                    ("listen_interval", raw.listen_interval.is_some()),
                    ("psm_timeout", raw.psm_timeout.is_some()),
                ] {
                    if given {
                        return Err(err(format!("{at}.{key}"), "beacons come from an access point: set ap = \"<node>\" (infrastructure mode) or remove the key"));
                    }
                }
                None
            }
            Some(name) => {
                let id = lookup(name, format!("{at}.ap"))?;
                let station = members.iter().position(|&m| m == id).ok_or_else(|| {
                    err(format!("{at}.ap"), format!("node {name:?} is not on this channel; its nodes are {}", raw.nodes.join(", ")))
                })?;
                if let Some(s) = (0..n).find(|&s| s != station && !(hears[s][station] && hears[station][s])) {
                    return Err(err(
                        format!("{at}.hears"),
                        format!("{:?} does not hear the access point {name:?}; in infrastructure mode every station talks through it", raw.nodes[s]),
                    ));
                }
                let beacon_interval = raw.beacon_interval.unwrap_or(DEFAULT_BEACON_INTERVAL);
                if beacon_interval.0 < 1_024_000 {
                    return Err(err(format!("{at}.beacon_interval"), format!("must be at least 1 time unit (1.024ms), got {}", serde_units::format_duration(beacon_interval))));
                }
                let listen_interval = raw.listen_interval.unwrap_or(1);
                if !(1..=65_535).contains(&listen_interval) {
                    return Err(err(format!("{at}.listen_interval"), format!("must be 1-65535 beacons, got {listen_interval}")));
                }
                let psm_timeout = raw.psm_timeout.unwrap_or(SimDuration::ZERO);
                Some(InfrastructureConfig { ap: name.clone(), station, beacon_interval, listen_interval, psm_timeout })
            }
        };
        out.push(ChannelConfig {
            name: raw.name,
            standard,
            nodes: raw.nodes,
            members,
            data_rate,
            basic_rates,
            preamble,
            rts_threshold,
            short_retry_limit: raw.short_retry_limit,
            long_retry_limit: raw.long_retry_limit,
            queue: raw.queue,
            mtu: raw.mtu,
            hears,
            hears_pairs: raw.hears,
            impairments,
            overhearing: raw.overhearing,
            infrastructure,
            ht,
        });
    }
    // One radio per node: a node on several channels sends at one rate on one standard.
    for (i, c) in out.iter().enumerate() {
        for (j, d) in out[..i].iter().enumerate() {
            if let Some(&m) = c.members.iter().find(|m| d.members.contains(m)) {
                if c.standard != d.standard || c.data_rate != d.data_rate {
                    let name = &c.nodes[c.station_of(m).expect("member")];
                    return Err(err(
                        format!("channels.{i}.data_rate"),
                        format!(
                            "node {name:?} is also on channels.{j} ({} at {}); its radio cannot send {} at {} here",
                            d.standard.name(),
                            serde_units::format_rate(d.data_rate),
                            c.standard.name(),
                            serde_units::format_rate(c.data_rate)
                        ),
                    ));
                }
            }
        }
    }
    Ok(out)
}

/// Read `[[pipes]]`.
pub(crate) fn read_pipes(doc: &Value, lookup: &dyn Fn(&str, String) -> Result<NodeId, EngineError>) -> Result<Vec<PipeConfig>, EngineError> {
    let list = match doc.get("pipes") {
        None => return Ok(Vec::new()),
        Some(Value::Array(a)) => a,
        Some(_) => return Err(err("pipes", "must be a list of [[pipes]] tables")),
    };
    let mut out: Vec<PipeConfig> = Vec::with_capacity(list.len());
    for (i, v) in list.iter().enumerate() {
        let at = format!("pipes.{i}");
        let raw: RawPipe = typed(v, &at)?;
        let ends = [lookup(&raw.from, format!("{at}.from"))?, lookup(&raw.to, format!("{at}.to"))?];
        if ends[0] == ends[1] {
            return Err(err(format!("{at}.to"), format!("a pipe leads to another node; from and to are both {:?}", raw.to)));
        }
        if let Some(j) = out.iter().position(|p| p.ends == ends) {
            return Err(err(format!("{at}.to"), format!("pipes.{j} already sits on {} -> {}", raw.from, raw.to)));
        }
        let impairments = raw
            .impairments
            .iter()
            .enumerate()
            .map(|(k, v)| Impairment::from_value(v, &format!("{at}.impairments.{k}")))
            .collect::<Result<Vec<_>, _>>()?;
        out.push(PipeConfig { from: raw.from, to: raw.to, ends, delay: raw.delay, impairments });
    }
    Ok(out)
}
