//! The scenario format: serde structs that are the single source of truth for what a scenario
//! file may contain. Parsing is path-aware: every error names the dotted key it is about
//! (`path.forward.impairments.0.p`) and what is allowed.
//!
//! The contract is plain data: nothing here is computed from the scenario after reading it
//! (routes, path MTUs and segment sizes are the build step's, `crate::plan`), and this module
//! depends only on `units`, `error` and itself (tests/module_layers.rs).
//!
//! Parsing runs in two phases. Phase one deserializes the document with `deny_unknown_fields`;
//! tables whose shape depends on a tag (impairments by `kind`, energy profiles by name or inline
//! table) are kept as JSON values. Phase two reads those with an explicit key prefix, so their
//! errors carry the full path too.

pub mod serde_units;
mod battery;
mod messages;
pub mod channel;
mod e2tcp;
mod impairments;
pub mod metrics;
pub mod network;
mod overrides;
pub mod phy;
mod stack;
pub mod trace;

pub use battery::{BatteryConfig, BatteryModel};
pub use e2tcp::{AfterTimeout, E2tcpConfig};
pub use impairments::{GeState, Impairment, OutageMode, Phase, RouteNotify};
pub use network::{FlowConfig, FlowId, FlowTraffic, IfaceId, NetworkConfig, NodeId, SplitConfig, Transport};
pub use overrides::apply_override;
pub use stack::Stack;
pub use trace::Trace;
/// Variant names and properties live in the transport registry.
pub use crate::tcp::variant::Variant;

use crate::energy::profile::{self, DeviceProfile};
use crate::error::EngineError;
use crate::units::SimDuration;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A complete, validated scenario. Its `topology` is one of the two forms a scenario file is
/// written in: the single-path form (`[path]`, `[traffic]`, with `energy.sender` and
/// `energy.receiver`) or the network form (`[nodes]`, `[[links]]`, `[[flows]]`, ...). The
/// settings of both forms (`tcp`, the meter's `energy.radio_policy` and `energy.timeout`) sit
/// beside it.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    pub name: String,
    pub seed: u64,
    pub stop_after: SimDuration,
    pub tcp: TcpConfig,
    pub energy: EnergyConfig,
    pub topology: Topology,
}

/// What a scenario simulates: one path and its transfer, or a network.
#[derive(Debug, Clone, PartialEq)]
pub enum Topology {
    /// The single-path form: nodes `sender` and `receiver` joined by `path`, one bulk transfer
    /// `traffic` from the sender to the receiver.
    SinglePath { path: PathConfig, traffic: TrafficConfig },
    /// The network form: nodes, links, channels, pipes and flows.
    Network(NetworkConfig),
}

/// The normalized document of each form: what a scenario file of that form may contain.
#[derive(Serialize)]
struct SinglePathDoc<'a> {
    name: &'a str,
    seed: u64,
    #[serde(with = "serde_units::duration")]
    stop_after: SimDuration,
    path: &'a PathConfig,
    tcp: &'a TcpConfig,
    traffic: &'a TrafficConfig,
    energy: &'a EnergyConfig,
}

#[derive(Serialize)]
struct NetworkDoc<'a> {
    name: &'a str,
    seed: u64,
    #[serde(with = "serde_units::duration")]
    stop_after: SimDuration,
    tcp: &'a TcpConfig,
    energy: NetworkEnergyDoc,
    nodes: std::collections::BTreeMap<&'a str, NodeDoc<'a>>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    links: &'a [network::NetLink],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    channels: &'a [channel::ChannelConfig],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pipes: &'a [channel::PipeConfig],
    flows: &'a [FlowConfig],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    routes: &'a [Vec<String>],
    #[serde(skip_serializing_if = "Option::is_none")]
    stop: Option<String>,
    #[serde(skip_serializing_if = "is_default_metrics")]
    metrics: &'a metrics::MetricsConfig,
}

fn is_default_metrics(m: &&metrics::MetricsConfig) -> bool {
    **m == metrics::MetricsConfig::default()
}

#[derive(Serialize)]
struct NetworkEnergyDoc {
    radio_policy: RadioPolicy,
    #[serde(with = "serde_units::duration")]
    timeout: SimDuration,
    #[serde(with = "serde_units::duration", skip_serializing_if = "SimDuration::is_zero")]
    after_completion: SimDuration,
}

#[derive(Serialize)]
struct NodeDoc<'a> {
    profile: &'a ProfileRef,
    #[serde(skip_serializing_if = "Option::is_none")]
    battery: Option<&'a BatteryConfig>,
}

impl Serialize for Scenario {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match &self.topology {
            Topology::SinglePath { path, traffic } => SinglePathDoc {
                name: &self.name,
                seed: self.seed,
                stop_after: self.stop_after,
                path,
                tcp: &self.tcp,
                traffic,
                energy: &self.energy,
            }
            .serialize(s),
            Topology::Network(n) => NetworkDoc {
                name: &self.name,
                seed: self.seed,
                stop_after: self.stop_after,
                tcp: &self.tcp,
                energy: NetworkEnergyDoc { radio_policy: self.energy.radio_policy, timeout: self.energy.timeout, after_completion: self.energy.after_completion },
                nodes: n.nodes.iter().map(|x| (x.name.as_str(), NodeDoc { profile: &x.profile, battery: x.battery.as_ref() })).collect(),
                links: &n.links,
                channels: &n.channels,
                pipes: &n.pipes,
                flows: &n.flows,
                routes: &n.routes,
                stop: n.stop_on_battery.map(|id| format!("battery_empty:{}", n.nodes[id.index()].name)),
                metrics: &n.metrics,
            }
            .serialize(s),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PathConfig {
    /// IP MTU in bytes; the segment size is what the headers leave of it (`tcp::segment::smss`).
    pub mtu: u32,
    /// Link-layer framing bytes added to every packet's airtime (0 = bare IP packets).
    pub frame_overhead: u32,
    pub forward: LinkConfig,
    pub reverse: LinkConfig,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LinkConfig {
    /// How fast it delivers: scenario key `rate` or `trace`.
    #[serde(flatten)]
    pub capacity: Capacity,
    #[serde(with = "serde_units::duration")]
    pub delay: SimDuration,
    /// Queue capacity in packets (drop-tail beyond it).
    pub queue: u32,
    /// Random Early Detection on this link's queue; unset = drop-tail only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub red: Option<RedConfig>,
    /// Periodic congestion episodes: cross traffic loading this link's queue.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cross_traffic: Option<CrossTraffic>,
    pub impairments: Vec<Impairment>,
}

/// What sets when a link direction's packets leave it: a constant rate (`rate = "2Mbps"`) or a
/// trace of delivery opportunities (`trace = {...}`, Mahimahi's format: `config::trace`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Capacity {
    #[serde(rename = "rate", with = "serde_units::rate")]
    Rate(u64),
    #[serde(rename = "trace")]
    Trace(TraceRef),
}

impl Capacity {
    /// The rate (bit/s) for whatever asks for one (routing ties, run estimates, radio rate
    /// checks, fair shares): the constant rate, or the trace's mean rate.
    pub fn rate_bps(&self) -> u64 {
        match self {
            Capacity::Rate(r) => *r,
            Capacity::Trace(t) => t.mean_bps(),
        }
    }

    /// The trace, for a trace-driven direction.
    pub fn trace(&self) -> Option<&std::sync::Arc<Trace>> {
        match self {
            Capacity::Rate(_) => None,
            Capacity::Trace(t) => Some(&t.0),
        }
    }

    /// The scenario key that sets it, for errors (`rate` or `trace`).
    pub fn key(&self) -> &'static str {
        match self {
            Capacity::Rate(_) => "rate",
            Capacity::Trace(_) => "trace",
        }
    }
}

/// A trace shared by the scenario's copies of a link (a long trace is megabytes).
#[derive(Debug, Clone, PartialEq)]
pub struct TraceRef(pub std::sync::Arc<Trace>);

impl std::ops::Deref for TraceRef {
    type Target = Trace;
    fn deref(&self) -> &Trace {
        &self.0
    }
}

impl Serialize for TraceRef {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

/// Constant-rate cross traffic entering a link's queue during `[offset + k*every, + on)`
/// (seed 002 Table 3: router B congested 5 s every 30 s). Its packets compete for the queue and
/// the transmitter (and RED drops them, they are not ECN-capable) but go nowhere we measure.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CrossTraffic {
    #[serde(with = "serde_units::rate")]
    pub rate: u64,
    #[serde(with = "serde_units::duration")]
    pub on: SimDuration,
    #[serde(with = "serde_units::duration")]
    pub every: SimDuration,
    /// Start of the first episode (default every - on).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "opt_duration")]
    pub offset: Option<SimDuration>,
    /// IP packet size in bytes (default 1500).
    #[serde(default = "default_cross_packet")]
    pub packet: u32,
}

fn default_cross_packet() -> u32 {
    1500
}

/// RED parameters (Floyd & Jacobson 1993); thresholds in packets of average queue length.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RedConfig {
    pub min_th: f64,
    pub max_th: f64,
    pub max_p: f64,
    /// Weight w_q of the average-queue estimator.
    #[serde(default = "default_red_weight")]
    pub weight: f64,
    /// Mark ECN-capable packets with CE instead of dropping them (RFC 3168).
    #[serde(default = "yes")]
    pub ecn: bool,
}

fn default_red_weight() -> f64 {
    // Floyd & Jacobson 1993 recommend w_q >= 0.001; 0.002 is the common default.
    0.002
}

fn yes() -> bool {
    true
}

/// TCP settings: the variant and the fidelity knobs other simulators need matched.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct TcpConfig {
    /// A real stack's constants (`stack::Stack::preset`); explicit keys override them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stack: Option<Stack>,
    pub variant: Variant,
    /// Initial congestion window in segments (RFC 5681 §3.1 allows up to 4; RFC 3390).
    pub initial_window: u32,
    pub initial_ssthresh: Ssthresh,
    #[serde(with = "serde_units::duration")]
    pub initial_rto: SimDuration,
    #[serde(with = "serde_units::duration")]
    pub min_rto: SimDuration,
    #[serde(with = "serde_units::duration")]
    pub max_rto: SimDuration,
    /// Clock granularity G in RTO = SRTT + max(G, 4 RTTVAR) (RFC 6298 §2).
    #[serde(with = "serde_units::duration")]
    pub clock_granularity: SimDuration,
    /// The retransmission timer counts ticks of this length and expires on a tick boundary
    /// (BSD's callout/slow-timer ticks, Linux's jiffies); 0 = exact.
    #[serde(with = "serde_units::duration")]
    pub timer_tick: SimDuration,
    /// The delayed-ACK timer fires on a tick boundary of this length (4.4BSD's 200 ms fast
    /// timer, a callout's kernel ticks); 0 = exact.
    #[serde(with = "serde_units::duration")]
    pub delayed_ack_tick: SimDuration,
    pub timestamps: bool,
    pub window_scale: bool,
    /// Negotiate SACK; unset means "as the variant needs" (on for `sack`, off otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sack: Option<bool>,
    pub delayed_ack: DelayedAck,
    /// The receive buffer: the largest window advertised (with `receive_autotune`, the most
    /// the window may grow to).
    #[serde(with = "serde_units::bytes")]
    pub receive_buffer: u64,
    /// The Linux stack only: the buffer starts at Linux's `tcp_rmem[1]` (128 KiB) and grows
    /// with the flow (dynamic right-sizing), the window up to `receive_buffer`.
    pub receive_autotune: bool,
    /// The Linux stack only: pace every module's packets at Linux's pacing rate (2 x cwnd/SRTT in
    /// slow start, 1.2 x after), as with the `fq` qdisc; BBR paces whatever this says.
    pub pacing: bool,
    /// Sender socket buffer: unacknowledged data never exceeds it (the BSD send buffer holds
    /// data until it is acknowledged); unset = unlimited.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "opt_bytes")]
    pub send_buffer: Option<u64>,
    pub cwnd_growth: CwndGrowth,
    /// RFC 3042 limited transmit.
    pub limited_transmit: bool,
    pub dupack_threshold: u32,
    /// Order of header prediction and the PAWS test (seed 003 §II-E).
    pub header_prediction: HeaderPrediction,
    /// RFC 3168 ECN: ECT on data, ECE echoed until CWR, one reduction per window.
    pub ecn: bool,
    /// ELFN: freeze on a route-failure notice and probe every `elfn_probe_interval` (seed 002 §4).
    pub elfn: bool,
    #[serde(with = "serde_units::duration")]
    pub elfn_probe_interval: SimDuration,
    /// TCP(α, β): additive increase in segments per RTT; unset = the variant's value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alpha: Option<f64>,
    /// TCP(α, β): multiplicative decrease factor in (0, 1]; unset = the variant's value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub beta: Option<f64>,
    /// A constant retransmission timeout replacing RFC 6298 (no backoff); unset = the variant's.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "opt_duration")]
    pub fixed_rto: Option<SimDuration>,
    /// Which ACKs give RTT samples when timestamps are off (docs/models/tcp.md#rtt-sampling).
    pub rtt_sampling: RttSampling,
    /// E2TCP's constants (variant `e2tcp` only); unset = the defaults of docs/models/e2tcp.md.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub e2tcp: Option<E2tcpConfig>,
}

pub(crate) mod opt_duration {
    use super::serde_units;
    use crate::units::SimDuration;
    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<SimDuration>, D::Error> {
        serde_units::duration::deserialize(d).map(Some)
    }
    pub fn serialize<S: serde::Serializer>(v: &Option<SimDuration>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(d) => serde_units::duration::serialize(d, s),
            None => s.serialize_none(),
        }
    }
}

mod opt_bytes {
    use super::serde_units;
    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
        serde_units::bytes::deserialize(d).map(Some)
    }
    pub fn serialize<S: serde::Serializer>(v: &Option<u64>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(b) => serde_units::bytes::serialize(b, s),
            None => s.serialize_none(),
        }
    }
}

impl Default for TcpConfig {
    fn default() -> Self {
        Self {
            stack: None,
            variant: Variant::Sack,
            initial_window: 2,
            initial_ssthresh: Ssthresh::Bytes(64_000),
            initial_rto: SimDuration::from_secs(1),
            min_rto: SimDuration::from_secs(1),
            max_rto: SimDuration::from_secs(60),
            clock_granularity: SimDuration::from_millis(1),
            timer_tick: SimDuration::ZERO,
            delayed_ack_tick: SimDuration::ZERO,
            timestamps: false,
            window_scale: false,
            sack: None,
            delayed_ack: DelayedAck::default(),
            receive_buffer: 64_000,
            receive_autotune: false,
            pacing: false,
            send_buffer: None,
            cwnd_growth: CwndGrowth::PerAck,
            limited_transmit: false,
            dupack_threshold: 3,
            header_prediction: HeaderPrediction::Standard,
            ecn: false,
            elfn: false,
            elfn_probe_interval: SimDuration::from_secs(1),
            alpha: None,
            beta: None,
            fixed_rto: None,
            rtt_sampling: RttSampling::EveryAck,
            e2tcp: None,
        }
    }
}

impl TcpConfig {
    /// Whether the SACK option is negotiated.
    pub fn elfn_enabled(&self) -> bool {
        self.elfn || self.variant.forces_elfn()
    }

    pub fn ecn_enabled(&self) -> bool {
        self.ecn || self.variant.forces_ecn()
    }

    pub fn sack_enabled(&self) -> bool {
        self.sack.unwrap_or(self.variant.uses_sack())
    }

    /// The largest window either side can advertise: 65,535 bytes, or 2^30 with window scaling
    /// (RFC 7323 §2.3). It also bounds cwnd, as BSD's TCP_MAXWIN << snd_scale does.
    pub fn max_window(&self) -> u64 {
        if self.window_scale {
            1 << 30
        } else {
            65_535
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ssthresh {
    Bytes(u64),
    Infinite,
}

impl<'de> Deserialize<'de> for Ssthresh {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        if v.as_str() == Some("infinite") {
            return Ok(Ssthresh::Infinite);
        }
        serde_units::bytes::deserialize(v).map(Ssthresh::Bytes).map_err(|e| {
            serde::de::Error::custom(format!("{e}, or \"infinite\""))
        })
    }
}

impl Serialize for Ssthresh {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Ssthresh::Bytes(b) => s.serialize_u64(*b),
            Ssthresh::Infinite => s.serialize_str("infinite"),
        }
    }
}

/// Delayed ACK (RFC 1122 §4.2.3.2, RFC 5681 §4.2): ACK every `every` full-sized segments or when
/// `timeout` expires, whichever is first; `every = 0` acknowledges on the timer only.
/// `window_update`: also ACK at once when the window the receiver could offer is more than twice
/// the one the peer last heard of, i.e. once more than half the window has arrived since the last
/// ACK (Linux 2.2's `tcp_raise_window` test in `__tcp_ack_snd_check`, which stays in force when the
/// two-segment test is removed: seed 003 §II-F).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct DelayedAck {
    pub every: u32,
    #[serde(with = "serde_units::duration")]
    pub timeout: SimDuration,
    #[serde(skip_serializing_if = "is_false")]
    pub window_update: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl Default for DelayedAck {
    fn default() -> Self {
        Self { every: 2, timeout: SimDuration::from_millis(200), window_update: false }
    }
}

/// Where the PAWS test sits on the input path (seed 003 §II-E): `standard` runs it on every
/// segment before header prediction (H1 then H2); `predict_first` tries prediction first and runs
/// PAWS only for segments that fail it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HeaderPrediction {
    Standard,
    PredictFirst,
}

/// Where RTT samples come from when timestamps are off (with timestamps every ACK that advances
/// SND.UNA gives one from its TSecr, RFC 7323 §4.1, whatever this says). Both keep Karn's rule
/// (RFC 6298 §3): a retransmitted segment never gives a sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RttSampling {
    /// Linux: every ACK that newly acknowledges only never-retransmitted data gives a sample from
    /// the earliest such segment's send time, and so does an ACK whose SACK blocks newly cover
    /// never-retransmitted segments (tcp_clean_rtx_queue, tcp_sacktag_one).
    EveryAck,
    /// BSD: one segment at a time is timed (t_rtttime / t_rtseq) and any retransmission cancels
    /// the timing.
    OneSegment,
}

/// How congestion avoidance and slow start grow cwnd.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CwndGrowth {
    /// RFC 5681: +SMSS per ACK in slow start, +SMSS*SMSS/cwnd per ACK in congestion avoidance.
    #[default]
    PerAck,
    /// RFC 3465 appropriate byte counting (L = 2 in slow start).
    PerByte,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TrafficConfig {
    pub kind: TrafficKind,
    #[serde(with = "serde_units::bytes")]
    pub bytes: u64,
}

impl Default for TrafficConfig {
    fn default() -> Self {
        Self { kind: TrafficKind::Bulk, bytes: 5_000_000 }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TrafficKind {
    /// One-way bulk transfer of `bytes` from sender to receiver (ttcp-like).
    Bulk,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EnergyConfig {
    pub sender: ProfileRef,
    pub receiver: ProfileRef,
    pub radio_policy: RadioPolicy,
    /// Idle time after which the radio sleeps under `idle_timeout`.
    #[serde(with = "serde_units::duration")]
    pub timeout: SimDuration,
    /// How long the meter keeps running after the last flow completes (the run goes on until
    /// then): a cellular radio's tail comes after the transfer (docs/models/cellular.md).
    #[serde(with = "serde_units::duration", skip_serializing_if = "SimDuration::is_zero")]
    pub after_completion: SimDuration,
}

/// A device profile given by built-in name or inline; nodes that name the same profile share it.
#[derive(Debug, Clone, PartialEq)]
pub struct ProfileRef {
    /// The built-in name, or `None` for an inline table.
    pub name: Option<String>,
    pub profile: std::sync::Arc<DeviceProfile>,
}

impl Serialize for ProfileRef {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match &self.name {
            Some(n) => s.serialize_str(n),
            None => self.profile.serialize(s),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RadioPolicy {
    AlwaysOn,
    Ideal,
    IdleTimeout,
    /// 802.11 power save: stations behind an access point doze between the beacons they listen
    /// to; every other radio (the AP's, wired nodes') stays on (docs/models/wifi.md "Power save").
    Psm,
}

// ---------------------------------------------------------------------------------------------
// Phase one: the raw document.

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    #[serde(default = "default_name")]
    name: String,
    #[serde(default = "default_seed")]
    seed: u64,
    #[serde(default = "default_stop_after", with = "serde_units::duration")]
    stop_after: SimDuration,
    #[serde(default)]
    path: RawPath,
    #[serde(default)]
    tcp: TcpConfig,
    #[serde(default)]
    traffic: TrafficConfig,
    #[serde(default)]
    energy: RawEnergy,
    // The network form (read by `network::read`).
    #[serde(default)]
    nodes: Option<Value>,
    #[serde(default)]
    links: Option<Value>,
    #[serde(default)]
    flows: Option<Value>,
    #[serde(default)]
    routes: Option<Value>,
    #[serde(default)]
    channels: Option<Value>,
    #[serde(default)]
    pipes: Option<Value>,
    /// `"battery_empty:NODE"` (read by `network::read`).
    #[serde(default)]
    stop: Option<Value>,
    #[serde(default)]
    metrics: Option<Value>,
}

fn default_name() -> String {
    "unnamed".into()
}
fn default_seed() -> u64 {
    1
}
fn default_stop_after() -> SimDuration {
    SimDuration::from_secs(3600)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, default)]
struct RawPath {
    mtu: u32,
    frame_overhead: u32,
    forward: RawLink,
    reverse: RawLink,
}

impl Default for RawPath {
    fn default() -> Self {
        Self { mtu: 1500, frame_overhead: 0, forward: RawLink::default(), reverse: RawLink::default() }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct RawLink {
    #[serde(with = "serde_units::opt_rate")]
    rate: Option<u64>,
    /// Kept as JSON: read by `Trace::from_value` with its key path.
    trace: Option<Value>,
    #[serde(with = "serde_units::duration")]
    delay: SimDuration,
    queue: u32,
    red: Option<RedConfig>,
    cross_traffic: Option<CrossTraffic>,
    impairments: Vec<Value>,
}

impl Default for RawLink {
    fn default() -> Self {
        Self {
            rate: None,
            trace: None,
            delay: SimDuration::from_millis(20),
            queue: 100,
            red: None,
            cross_traffic: None,
            impairments: vec![],
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, default)]
struct RawEnergy {
    sender: Value,
    receiver: Value,
    /// Profile of every node that names none (both nodes of the single-path form, unless
    /// `sender` / `receiver` are given).
    default_profile: Option<Value>,
    radio_policy: RadioPolicy,
    #[serde(with = "serde_units::duration")]
    timeout: SimDuration,
    #[serde(with = "serde_units::duration")]
    after_completion: SimDuration,
}

/// A link direction's rate when it gives neither `rate` nor `trace`.
pub(crate) const DEFAULT_LINK_RATE: u64 = 2_000_000;

/// Largest bulk transfer accepted (sequence arithmetic stays far from overflow).
pub(crate) const MAX_TRANSFER: u64 = 1_000_000_000_000_000;

const DEFAULT_PROFILE: &str = "singh2002-toshiba-wavelan";

impl Default for RawEnergy {
    fn default() -> Self {
        Self {
            sender: Value::String(DEFAULT_PROFILE.into()),
            receiver: Value::String(DEFAULT_PROFILE.into()),
            default_profile: None,
            radio_policy: RadioPolicy::AlwaysOn,
            timeout: SimDuration::from_millis(100),
            after_completion: SimDuration::ZERO,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Path-aware deserialization helpers.

/// Deserialize `value` as `T`, reporting errors at `prefix` + the path inside `value`.
pub(crate) fn typed<T: DeserializeOwned>(value: &Value, prefix: &str) -> Result<T, EngineError> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let mut path = prefix.to_string();
        for seg in e.path().iter() {
            let part = match seg {
                serde_path_to_error::Segment::Seq { index } => index.to_string(),
                serde_path_to_error::Segment::Map { key } => key.clone(),
                serde_path_to_error::Segment::Enum { variant } => variant.clone(),
                serde_path_to_error::Segment::Unknown => continue,
            };
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(&part);
        }
        EngineError::config(path, messages::user_message(&e.into_inner().to_string()))
    })
}

// ---------------------------------------------------------------------------------------------
// Phase two: resolve and validate.

impl Scenario {
    /// Read and validate a scenario from a JSON document with `(dotted key, JSON value)`
    /// overrides applied in order. The checks that need routes or models follow in
    /// `Scenario::from_json` (`crate::plan`).
    pub fn read_json(text: &str, overrides: &[(String, String)]) -> Result<Self, EngineError> {
        let mut doc: Value = serde_json::from_str(text)
            .map_err(|e| EngineError::config("", format!("scenario is not valid JSON: {e}")))?;
        for (key, value) in overrides {
            let v: Value = serde_json::from_str(value).map_err(|e| {
                EngineError::config(key.clone(), format!("override value is not valid JSON: {e}"))
            })?;
            apply_override(&mut doc, key, v)?;
        }
        Self::read_value(&doc)
    }

    /// Read and validate a scenario from TOML text (see [`Scenario::read_json`]).
    pub fn read_toml(text: &str) -> Result<Self, EngineError> {
        let doc: Value = toml::from_str(text).map_err(|e| EngineError::config("", format!("invalid TOML: {e}")))?;
        Self::read_value(&doc)
    }

    /// Read and validate a scenario from a parsed document (see [`Scenario::read_json`]).
    pub fn read_value(doc: &Value) -> Result<Self, EngineError> {
        if !doc.is_object() {
            return Err(EngineError::config("", "a scenario must be a table of keys"));
        }
        // A `tcp.stack` preset fills the tcp keys the scenario leaves unset.
        let preset;
        let doc = match doc.get("tcp") {
            Some(tcp) if tcp.get("stack").is_some() => {
                let mut d = doc.clone();
                d["tcp"] = stack::apply_preset(tcp)?;
                preset = d;
                &preset
            }
            _ => doc,
        };
        let raw: RawScenario = typed(doc, "")?;
        let has = |table: &str, key: &str| doc.get(table).and_then(|t| t.get(key)).is_some();
        let network_form = raw.nodes.is_some()
            || raw.links.is_some()
            || raw.flows.is_some()
            || raw.routes.is_some()
            || raw.channels.is_some()
            || raw.pipes.is_some();
        if network_form {
            for key in ["path", "traffic"] {
                if doc.get(key).is_some() {
                    return Err(EngineError::config(
                        key,
                        format!("[{key}] belongs to the single-path form; a network ([nodes], [[links]], [[flows]]) sets links and traffic per link and per flow"),
                    ));
                }
            }
            for key in ["sender", "receiver"] {
                if has("energy", key) {
                    return Err(EngineError::config(
                        format!("energy.{key}"),
                        "belongs to the single-path form; in a network give nodes.NAME.profile or energy.default_profile",
                    ));
                }
            }
        }
        let default_profile = raw.energy.default_profile.clone().unwrap_or_else(|| Value::String(DEFAULT_PROFILE.into()));
        let profile_of = |key: &str, given: &Value| {
            if has("energy", key) || raw.energy.default_profile.is_none() {
                resolve_profile(given, &format!("energy.{key}"))
            } else {
                resolve_profile(&default_profile, "energy.default_profile")
            }
        };
        let energy = EnergyConfig {
            sender: profile_of("sender", &raw.energy.sender)?,
            receiver: profile_of("receiver", &raw.energy.receiver)?,
            radio_policy: raw.energy.radio_policy,
            timeout: raw.energy.timeout,
            after_completion: raw.energy.after_completion,
        };
        let topology = if network_form {
            let tcp_doc = doc.get("tcp").cloned().unwrap_or(Value::Object(Default::default()));
            Topology::Network(network::read(doc, &tcp_doc, &default_profile)?)
        } else {
            let path = PathConfig {
                mtu: raw.path.mtu,
                frame_overhead: raw.path.frame_overhead,
                forward: resolve_link(raw.path.forward, "path.forward")?,
                reverse: resolve_link(raw.path.reverse, "path.reverse")?,
            };
            if raw.stop.is_some() {
                return Err(EngineError::config("stop", "stop = \"battery_empty:NODE\" needs the network form ([nodes] with a battery)"));
            }
            if raw.metrics.is_some() {
                return Err(EngineError::config("metrics", "[metrics] applies to the network form ([nodes], [[flows]])"));
            }
            Topology::SinglePath { path, traffic: raw.traffic }
        };
        let s = Scenario { name: raw.name, seed: raw.seed, stop_after: raw.stop_after, tcp: raw.tcp, energy, topology };
        s.validate()?;
        Ok(s)
    }

    /// Range checks that types alone do not express.
    fn validate(&self) -> Result<(), EngineError> {
        fn e(path: impl Into<String>, msg: impl Into<String>) -> EngineError {
            EngineError::config(path, msg)
        }
        if self.stop_after.0 == 0 {
            return Err(e("stop_after", "must be > 0"));
        }
        if self.energy.radio_policy == RadioPolicy::IdleTimeout && self.energy.timeout.0 == 0 {
            return Err(e("energy.timeout", "must be > 0 with radio_policy = \"idle_timeout\""));
        }
        validate_tcp(&self.tcp, "tcp")?;
        let infrastructure = self.network().is_some_and(|n| n.channels.iter().any(|c| c.infrastructure.is_some()));
        if self.energy.radio_policy == RadioPolicy::Psm && !infrastructure {
            return Err(e(
                "energy.radio_policy",
                "\"psm\" is 802.11 power save, which needs an access point: give a [[channels]] entry ap = \"<node>\"; \
                 otherwise one of always_on, ideal, idle_timeout",
            ));
        }
        let Topology::SinglePath { path: p, traffic } = &self.topology else {
            return Ok(());
        };
        if !(128..=65_535).contains(&p.mtu) {
            return Err(e("path.mtu", format!("must be between 128 and 65535 bytes, got {}", p.mtu)));
        }
        for (name, link) in [("path.forward", &p.forward), ("path.reverse", &p.reverse)] {
            if link.capacity == Capacity::Rate(0) {
                return Err(e(format!("{name}.rate"), "must be > 0"));
            }
            check_queue(link.queue, &format!("{name}.queue"), "packet")?;
        }
        if traffic.bytes == 0 || traffic.bytes > MAX_TRANSFER {
            return Err(e("traffic.bytes", format!("must be between 1 byte and {MAX_TRANSFER} bytes (1 PB)")));
        }
        Ok(())
    }

    /// The network this scenario describes, which is what the simulator runs: the scenario
    /// itself in the network form; for the single-path form, the two nodes `sender` and
    /// `receiver`, one link per direction and one bulk flow `main`
    /// ([`NetworkConfig::from_single_path`]). Its routes and path MTUs are the build step's
    /// (`crate::plan`).
    pub fn as_network(&self) -> Result<std::borrow::Cow<'_, Scenario>, EngineError> {
        let Topology::SinglePath { path, traffic } = &self.topology else {
            return Ok(std::borrow::Cow::Borrowed(self));
        };
        Ok(std::borrow::Cow::Owned(Scenario {
            name: self.name.clone(),
            seed: self.seed,
            stop_after: self.stop_after,
            tcp: self.tcp.clone(),
            energy: self.energy.clone(),
            topology: Topology::Network(NetworkConfig::from_single_path(path, traffic, &self.tcp, &self.energy)),
        }))
    }

    /// The path of the single-path form; `None` for a network.
    pub fn path(&self) -> Option<&PathConfig> {
        match &self.topology {
            Topology::SinglePath { path, .. } => Some(path),
            Topology::Network(_) => None,
        }
    }

    /// The path of the single-path form, to change it; `None` for a network.
    pub fn path_mut(&mut self) -> Option<&mut PathConfig> {
        match &mut self.topology {
            Topology::SinglePath { path, .. } => Some(path),
            Topology::Network(_) => None,
        }
    }

    /// The transfer of the single-path form; `None` for a network (each flow has its own).
    pub fn traffic(&self) -> Option<&TrafficConfig> {
        match &self.topology {
            Topology::SinglePath { traffic, .. } => Some(traffic),
            Topology::Network(_) => None,
        }
    }

    /// The network of the network form; `None` for the single-path form (whose network is
    /// [`Scenario::as_network`]'s).
    pub fn network(&self) -> Option<&NetworkConfig> {
        match &self.topology {
            Topology::Network(n) => Some(n),
            Topology::SinglePath { .. } => None,
        }
    }

    /// The network of the network form, to change it; `None` for the single-path form.
    pub fn network_mut(&mut self) -> Option<&mut NetworkConfig> {
        match &mut self.topology {
            Topology::Network(n) => Some(n),
            Topology::SinglePath { .. } => None,
        }
    }

    /// The network of the network form, taken out of the scenario; `None` for the single-path
    /// form.
    pub fn into_network(self) -> Option<NetworkConfig> {
        match self.topology {
            Topology::Network(n) => Some(n),
            Topology::SinglePath { .. } => None,
        }
    }

    /// The normalized scenario (every default filled in) as JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("scenario serializes")
    }
}

/// TCP settings checks shared by `[tcp]` and each flow's merged `tcp` table (`at` is its key).
/// The Linux stack runs Linux's variants and mechanisms: a variant Linux lacks, or a knob of
/// the textbook stack set to anything but Linux's own behaviour, is refused (the same keys kernel
/// mode refuses). A Linux-only variant needs the Linux stack.
fn validate_linux_stack(t: &TcpConfig, at: &str) -> Result<(), EngineError> {
    let e = |key: &str, msg: String| EngineError::config(format!("{at}.{key}"), msg);
    let info = t.variant.info();
    if t.stack != Some(Stack::Linux6) {
        if info.linux_only {
            return Err(e("variant", format!("{:?} runs on the Linux stack only: set tcp.stack = \"linux-6\"", info.name)));
        }
        for (key, set) in [("receive_autotune", t.receive_autotune), ("pacing", t.pacing)] {
            if set {
                return Err(e(key, "applies to the Linux stack only (tcp.stack = \"linux-6\")".into()));
            }
        }
        return Ok(());
    }
    if info.linux.is_none() {
        return Err(e(
            "variant",
            format!("the Linux stack (tcp.stack = \"linux-6\") runs {}; {:?} is not a Linux variant", Variant::linux_names().join(", "), info.name),
        ));
    }
    let preset = Stack::Linux6.preset();
    let textbook_only = [
        ("cwnd_growth", serde_json::to_value(t.cwnd_growth).ok(), "Linux grows cwnd by the packets acknowledged"),
        ("limited_transmit", serde_json::to_value(t.limited_transmit).ok(), "Linux always sends new data on the first duplicate ACKs"),
        ("rtt_sampling", serde_json::to_value(t.rtt_sampling).ok(), "Linux samples the RTT from every ACK"),
        ("clock_granularity", serde_json::to_value(serde_units::format_duration(t.clock_granularity)).ok(), "Linux floors RTTVAR at min_rto instead"),
    ];
    for (key, value, why) in textbook_only {
        let linux = &preset[key];
        let same = match (key, &value) {
            ("clock_granularity", _) => t.clock_granularity == SimDuration::from_millis(200),
            (_, Some(v)) => v == linux,
            _ => false,
        };
        if !same {
            return Err(e(key, format!("{why}; on the Linux stack leave it unset (it is {linux})")));
        }
    }
    if t.fixed_rto.is_some() {
        return Err(e("fixed_rto", "the Linux stack computes its RTO (tcp_rtt_estimator); fixed_rto belongs to the textbook stack".into()));
    }
    if t.elfn {
        return Err(e("elfn", "Linux has no explicit link failure notification".into()));
    }
    Ok(())
}

pub(crate) fn validate_tcp(t: &TcpConfig, at: &str) -> Result<(), EngineError> {
    let e = |key: &str, msg: String| EngineError::config(format!("{at}.{key}"), msg);
    if t.initial_window == 0 {
        return Err(e("initial_window", "must be at least 1 segment".into()));
    }
    // Timers that rearm themselves: each expiry is an event (and a retransmission or a probe),
    // so a 1 ns timer costs a billion events per simulated second.
    let timers = [
        ("min_rto", Some(t.min_rto)),
        ("initial_rto", Some(t.initial_rto)),
        ("fixed_rto", t.fixed_rto),
        ("elfn_probe_interval", Some(t.elfn_probe_interval)),
    ];
    for (key, d) in timers {
        if let Some(d) = d {
            check_min_timer(d, &format!("{at}.{key}"))?;
        }
    }
    if t.max_rto < t.min_rto {
        return Err(e("max_rto", format!("must be >= {at}.min_rto")));
    }
    if let Some(a) = t.alpha {
        if !(a.is_finite() && a > 0.0) {
            return Err(e("alpha", format!("must be a number > 0 (segments per RTT), got {a}")));
        }
    }
    if let Some(b) = t.beta {
        if !(b > 0.0 && b <= 1.0) {
            return Err(e("beta", format!("must be in (0, 1], got {b}")));
        }
    }
    if (t.alpha.is_some() || t.beta.is_some()) && !t.variant.is_aimd() {
        return Err(e("alpha", format!("alpha and beta apply to the TCP(alpha, beta) variants: {}", Variant::aimd_names().join(", "))));
    }
    for (key, tick) in [("timer_tick", t.timer_tick), ("delayed_ack_tick", t.delayed_ack_tick)] {
        if tick.0 != 0 && !(SimDuration::from_micros(1)..=SimDuration::from_secs(1)).contains(&tick) {
            return Err(e(key, format!("must be 0 (exact timers) or a tick between 1us and 1s, got {}", serde_units::format_duration(tick))));
        }
    }
    if t.dupack_threshold == 0 {
        return Err(e("dupack_threshold", "must be at least 1".into()));
    }
    if t.delayed_ack.every > 0 && t.delayed_ack.timeout.0 == 0 {
        return Err(e("delayed_ack.timeout", "must be > 0".into()));
    }
    if t.delayed_ack.every == 0 && t.delayed_ack.timeout.0 == 0 {
        return Err(e("delayed_ack", "every = 0 (timer only) needs a timeout > 0".into()));
    }
    validate_linux_stack(t, at)?;
    if t.variant == Variant::E2tcp {
        if t.timestamps {
            return Err(e("timestamps", "E2TCP has no timestamps option; set it false with variant = \"e2tcp\"".into()));
        }
        if t.sack == Some(false) {
            return Err(e("sack", "E2TCP always acknowledges with SACK blocks; leave it unset or true".into()));
        }
        if t.window_scale {
            return Err(e("window_scale", "E2TCP windows count packets (at most 32767); window_scale does not apply".into()));
        }
        e2tcp::validate(t.e2tcp.as_ref().unwrap_or(&E2tcpConfig::default()), &format!("{at}.e2tcp"))?;
    } else if t.e2tcp.is_some() {
        return Err(e("e2tcp", format!("applies to variant = \"e2tcp\" only, not {:?}", t.variant.name())));
    }
    Ok(())
}

/// The shortest timer or interval that recurs by itself (retransmission timeouts and their
/// bounds, ELFN probes, E2TCP's timeout floor, on/off inter-departure times, Gilbert-Elliott
/// state lengths): 1 ms, a kernel's finest timer tick (a jiffy at HZ = 1000; Linux's rto_min
/// route option cannot go below it). Shorter ones multiply the events of a run by as much.
pub const MIN_TIMER: SimDuration = SimDuration(1_000_000);

/// `d` at key `at` must be at least [`MIN_TIMER`].
pub(crate) fn check_min_timer(d: SimDuration, at: &str) -> Result<(), EngineError> {
    if d < MIN_TIMER {
        return Err(EngineError::config(
            at,
            format!("must be at least 1ms (the finest kernel timer tick; shorter timers multiply the work of a run), got {}", serde_units::format_duration(d)),
        ));
    }
    Ok(())
}

/// The largest queue, in packets or frames: far beyond any router or driver queue (the
/// scenarios use at most a few thousand), while a full one still fits in memory.
pub const MAX_QUEUE: u32 = 1_000_000;

/// A queue capacity at key `at`: 1 to [`MAX_QUEUE`] `unit`s.
pub(crate) fn check_queue(queue: u32, at: &str, unit: &str) -> Result<(), EngineError> {
    if !(1..=MAX_QUEUE).contains(&queue) {
        return Err(EngineError::config(at, format!("must be between 1 and {MAX_QUEUE} {unit}s, got {queue}")));
    }
    Ok(())
}

pub(crate) fn resolve_link(raw: RawLink, prefix: &str) -> Result<LinkConfig, EngineError> {
    let impairments = raw
        .impairments
        .iter()
        .enumerate()
        .map(|(i, v)| Impairment::from_value(v, &format!("{prefix}.impairments.{i}")))
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(r) = raw.red {
        let at = |k: &str| format!("{prefix}.red.{k}");
        if !(r.min_th >= 0.0 && r.min_th < r.max_th) {
            return Err(EngineError::config(at("min_th"), "must be >= 0 and below max_th"));
        }
        if !(r.max_p > 0.0 && r.max_p <= 1.0) {
            return Err(EngineError::config(at("max_p"), format!("must be in (0, 1], got {}", r.max_p)));
        }
        if !(r.weight > 0.0 && r.weight <= 1.0) {
            return Err(EngineError::config(at("weight"), format!("must be in (0, 1], got {}", r.weight)));
        }
    }
    if let Some(c) = raw.cross_traffic {
        let at = |k: &str| format!("{prefix}.cross_traffic.{k}");
        if c.rate == 0 {
            return Err(EngineError::config(at("rate"), "must be > 0"));
        }
        if c.every.0 == 0 || c.on > c.every {
            return Err(EngineError::config(at("on"), "must be at most `every`, and `every` > 0"));
        }
        if !(40..=65_535).contains(&c.packet) {
            return Err(EngineError::config(at("packet"), "must be between 40 and 65535 bytes"));
        }
    }
    let capacity = match (raw.rate, &raw.trace) {
        (Some(_), Some(_)) => {
            return Err(EngineError::config(
                format!("{prefix}.trace"),
                "a link direction has either rate (a constant rate such as \"2Mbps\") or trace (a delivery-opportunity \
                 trace: a file's path, or { name = \"...\", ms = [...] }), not both; remove one",
            ))
        }
        (Some(r), None) => Capacity::Rate(r),
        (None, Some(t)) => Capacity::Trace(TraceRef(std::sync::Arc::new(Trace::from_value(t, &format!("{prefix}.trace"))?))),
        (None, None) => Capacity::Rate(DEFAULT_LINK_RATE),
    };
    Ok(LinkConfig {
        capacity,
        delay: raw.delay,
        queue: raw.queue,
        red: raw.red,
        cross_traffic: raw.cross_traffic,
        impairments,
    })
}

pub(crate) fn resolve_profile(v: &Value, prefix: &str) -> Result<ProfileRef, EngineError> {
    match v {
        Value::String(name) => match profile::builtin(name) {
            Some(p) => Ok(ProfileRef { name: Some(name.clone()), profile: p?.into() }),
            None => Err(EngineError::config(
                prefix,
                format!("unknown profile {name:?}; built-in profiles: {}", profile::builtin_names().join(", ")),
            )),
        },
        Value::Object(_) => {
            let p: DeviceProfile = typed(v, prefix)?;
            p.validate(prefix)?;
            Ok(ProfileRef { name: None, profile: p.into() })
        }
        _ => Err(EngineError::config(prefix, "expected a built-in profile name or an inline profile table")),
    }
}

#[cfg(test)]
mod tests;
