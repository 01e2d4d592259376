//! The 802.11 distributed coordination function on one shared channel (IEEE 802.11-2020 10.3),
//! as a sans-I/O state machine: the caller owns the clock and the event queue, hands frames in
//! with [`Dcf::enqueue`], fires the timers the channel asks for with [`Dcf::on_timer`], and
//! drains [`Out`] items (timers to schedule, deliveries, drops, airtime for the meters).
//!
//! Model (docs/models/wifi.md): carrier sense per station over a `hears` graph (a station senses
//! the transmissions of the stations it hears), binary exponential backoff frozen while the
//! medium is busy, DIFS/EIFS, MAC ACK after SIFS, RTS/CTS above a threshold with NAV, short and
//! long retry limits, duplicate detection by sequence number, a drop-tail interface queue.
//! Reception follows the protocol interference model: a frame is decoded by a station that hears
//! its sender when no other audible transmission overlaps it at that station and the station is
//! not transmitting; there is no capture. Channel impairments apply to each frame attempt at its
//! addressee. Propagation delay is zero.
//!
//! In infrastructure mode the access point sends a beacon at every target beacon transmission
//! time, and stations in power-save mode (802.11-2020 11.2.3) doze between the beacons they
//! listen to: the AP buffers their frames, announces them in the beacon's TIM, and releases one
//! per PS-Poll; a dozing station hears nothing and wakes at once when it has a frame to send.
//!
//! On 802.11n and 802.11ac channels data goes in HT or VHT PPDUs (`net::wifi::ht`), aggregated
//! into A-MPDUs answered by block acks (`block_ack`); stations may stay awake after their
//! traffic (`adaptive_psm`).

mod adaptive_psm;
mod block_ack;

use super::ampdu::{self, Held, Reorder};
use super::ht::HtPhy;
use super::phy::{self, MacTiming, Preamble, Standard};
use crate::net::impair::{self, AnyImpairment, Verdict};
use crate::sim::rng::Stream;
use crate::units::{SimDuration, SimTime};
use std::collections::VecDeque;

/// The channel's settings.
#[derive(Debug, Clone)]
pub struct DcfConfig {
    pub standard: Standard,
    pub preamble: Preamble,
    pub data_rate: u64,
    /// The basic rate set: control frames go at the highest basic rate not above the data rate.
    pub basic_rates: Vec<u64>,
    /// Frames whose MPDU is longer than this go after an RTS/CTS exchange; `None`: never.
    pub rts_threshold: Option<u32>,
    /// Attempts before a frame is discarded (802.11-2020 10.3.4.4: dot11ShortRetryLimit 7 for
    /// RTS and frames up to the RTS threshold, dot11LongRetryLimit 4 above it).
    pub short_retry_limit: u32,
    pub long_retry_limit: u32,
    /// Interface queue per station, frames (the head, in service, counts).
    pub queue: usize,
    /// `hears[a][b]`: station `a` senses and can decode `b`'s transmissions.
    pub hears: Vec<Vec<bool>>,
    /// Infrastructure mode (an access point, beacons, power save); `None`: ad hoc.
    pub infrastructure: Option<Infrastructure>,
    /// 802.11n/ac: data frames are QoS data MPDUs in HT or VHT PPDUs of this PHY; `None`: the
    /// legacy PHY of `standard` at `data_rate`.
    pub ht: Option<HtPhy>,
    /// With `ht`: MPDUs per A-MPDU at most, answered by a block ack (802.11-2020 10.12,
    /// 10.25); 0: no aggregation (each MPDU in its own PPDU, answered by an ACK).
    pub ampdu_max: u32,
}

/// An access point and its stations' power management (802.11-2020 11.1.3, 11.2.3).
#[derive(Debug, Clone)]
pub struct Infrastructure {
    /// The access point's station index.
    pub ap: usize,
    /// Time between target beacon transmission times (TBTTs), the first at time zero.
    pub beacon_interval: SimDuration,
    /// A station in power-save mode wakes for every `listen_interval`-th beacon.
    pub listen_interval: u32,
    /// Which stations are in power-save mode (never the AP).
    pub power_save: Vec<bool>,
    /// Adaptive power save: a station in power-save mode stays awake, in active mode, this long
    /// after its last data frame; zero: it dozes at once.
    pub psm_timeout: SimDuration,
}

/// The addressee of a broadcast frame (a beacon).
pub const BROADCAST: usize = usize::MAX;

impl DcfConfig {
    /// 802.11b defaults for `n` stations that all hear each other: 11 Mbit/s data, 1 and 2
    /// Mbit/s basic rates, long preamble, RTS/CTS off, retry limits 7/4, 50-frame queues.
    pub fn dsss(n: usize) -> Self {
        Self {
            standard: Standard::B,
            preamble: Preamble::Long,
            data_rate: 11_000_000,
            basic_rates: vec![1_000_000, 2_000_000],
            rts_threshold: None,
            short_retry_limit: 7,
            long_retry_limit: 4,
            queue: 50,
            hears: (0..n).map(|a| (0..n).map(|b| a != b).collect()).collect(),
            infrastructure: None,
            ht: None,
            ampdu_max: 0,
        }
    }
}

/// A timer the channel asked for; hand it back to [`Dcf::on_timer`] at its time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Timer {
    pub station: u32,
    pub kind: TimerKind,
    /// Stale timers (the station moved on) are ignored.
    gen: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum TimerKind {
    /// The backoff count reached zero: transmit.
    Contend,
    /// The station's transmission ends.
    TxEnd,
    /// SIFS after a reception: send the response (ACK, CTS) or the data after a CTS.
    Respond,
    /// No ACK or CTS came in time.
    Timeout,
    /// The NAV set by an overheard frame runs out.
    NavEnd,
    /// Check whether an overheard RTS was followed by anything (10.3.2.4: NAV reset).
    NavReset,
    /// A target beacon transmission time (the AP's timer).
    Tbtt,
    /// Adaptive power save: the station's stay-awake timeout after its last data frame.
    PsmTimeout,
}

/// Kinds of frames on the air.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameKind {
    Data,
    /// An HT or VHT PPDU carrying an A-MPDU of data MPDUs for one receiver.
    Ampdu,
    Rts,
    Cts,
    Ack,
    /// Management frame the AP broadcasts at each TBTT, with the TIM.
    Beacon,
    /// A dozing station asks the AP for one buffered frame.
    PsPoll,
    /// The compressed BlockAck answering an A-MPDU or a BlockAckReq.
    BlockAck,
    /// A BlockAckReq: the originator moves the recipient's window past MPDUs it gave up.
    BlockAckReq,
    /// A (QoS) Null data frame announcing the power management mode (11.2.3.2).
    Null,
}

impl FrameKind {
    pub const COUNT: usize = 10;
    /// Every kind, in declaration order (`kind as usize` indexes this).
    pub const ALL: [FrameKind; Self::COUNT] = [
        FrameKind::Data,
        FrameKind::Ampdu,
        FrameKind::Rts,
        FrameKind::Cts,
        FrameKind::Ack,
        FrameKind::Beacon,
        FrameKind::PsPoll,
        FrameKind::BlockAck,
        FrameKind::BlockAckReq,
        FrameKind::Null,
    ];

    /// Frames that carry data (the rest are control and management frames for the meters).
    #[inline]
    pub fn is_data(self) -> bool {
        // The two are declared first.
        (self as u8) <= FrameKind::Ampdu as u8
    }
}

/// How a station's radio spent an interval of airtime (for the energy meter).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AirRole {
    Transmit,
    /// Receiving a frame addressed to it (decoded or not).
    Receive,
    /// Receiving a frame addressed to another station.
    Overhear,
}

/// What the caller must act on.
#[derive(Debug, Clone, PartialEq)]
pub enum Out<P> {
    Schedule(SimTime, Timer),
    /// The first transmission of the frame for `to`, begun at `start`, ended: the frame has
    /// left the interface (retransmissions are the MAC's own business).
    Sent {
        from: usize,
        to: usize,
        payload: P,
        start: SimTime,
    },
    /// A data frame's payload reached `to` (duplicates are filtered out).
    Delivered {
        from: usize,
        to: usize,
        payload: P,
    },
    /// The sender got the MAC ACK for its head frame.
    Acked {
        from: usize,
        payload: P,
    },
    /// The frame for `to` left the MAC without being acknowledged.
    Dropped {
        from: usize,
        to: usize,
        payload: P,
        reason: DropReason,
    },
    /// A radio was busy with a frame during [start, end); `bytes` are a data frame's IP bytes.
    Air {
        station: usize,
        role: AirRole,
        kind: FrameKind,
        start: SimTime,
        end: SimTime,
        retry: bool,
        bytes: u32,
    },
    /// A station in power-save mode woke (`awake`) or began to doze at `at`.
    Power {
        station: usize,
        awake: bool,
        at: SimTime,
    },
    /// The part [start, end) of an A-MPDU's airtime (reported by `Air`) that carried
    /// retransmitted MPDUs, at a station that sent or received it.
    RetryShare {
        station: usize,
        role: AirRole,
        start: SimTime,
        end: SimTime,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropReason {
    QueueFull,
    RetryLimit,
}

/// Counters of one station.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct StationCounters {
    /// Data frames transmitted, first attempts and retries.
    pub data_attempts: u64,
    pub retries: u64,
    /// Data frames, and RTS frames, that another transmission garbled at their addressee.
    pub collisions: u64,
    pub rts_collisions: u64,
    pub drops_retry_limit: u64,
    pub drops_queue: u64,
    pub rts_sent: u64,
    pub cts_sent: u64,
    pub acks_sent: u64,
    pub delivered: u64,
    pub duplicates: u64,
    pub beacons_sent: u64,
    pub ps_polls_sent: u64,
    /// A-MPDUs sent, and the MPDUs they carried (first transmissions and retries).
    #[serde(skip_serializing_if = "is_zero")]
    pub ampdus_sent: u64,
    #[serde(skip_serializing_if = "is_zero")]
    pub ampdu_mpdus: u64,
    #[serde(skip_serializing_if = "is_zero")]
    pub block_acks_sent: u64,
    #[serde(skip_serializing_if = "is_zero")]
    pub block_ack_reqs_sent: u64,
    /// Null data frames announcing a power management mode (adaptive power save).
    #[serde(skip_serializing_if = "is_zero")]
    pub nulls_sent: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl StationCounters {
    /// Sum of two stations' counters.
    pub fn add(&mut self, o: &StationCounters) {
        self.data_attempts += o.data_attempts;
        self.retries += o.retries;
        self.collisions += o.collisions;
        self.rts_collisions += o.rts_collisions;
        self.drops_retry_limit += o.drops_retry_limit;
        self.drops_queue += o.drops_queue;
        self.rts_sent += o.rts_sent;
        self.cts_sent += o.cts_sent;
        self.acks_sent += o.acks_sent;
        self.delivered += o.delivered;
        self.duplicates += o.duplicates;
        self.beacons_sent += o.beacons_sent;
        self.ps_polls_sent += o.ps_polls_sent;
        self.ampdus_sent += o.ampdus_sent;
        self.ampdu_mpdus += o.ampdu_mpdus;
        self.block_acks_sent += o.block_acks_sent;
        self.block_ack_reqs_sent += o.block_ack_reqs_sent;
        self.nulls_sent += o.nulls_sent;
    }
}

#[derive(Debug, Clone, Copy)]
struct Pending<P> {
    to: usize,
    payload: P,
    /// IP bytes.
    bytes: u32,
    seq: u16,
    retry: bool,
    /// More Data: the AP holds more frames for this dozing addressee (11.2.3.8).
    more: bool,
    /// Its first transmission ended (`Out::Sent` was reported).
    sent: bool,
    /// In an A-MPDU: failed attempts so far (its own retry count, 10.25.3).
    failures: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Nothing to send.
    Idle,
    /// A frame waits for the backoff to run out.
    Contending,
    /// Sending the head frame's RTS or data, or waiting for the CTS or ACK.
    Exchange,
}

/// What a station's exchange in progress sends: the head of its queue, a PS-Poll or a beacon.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Job {
    Data,
    PsPoll,
    Beacon,
    /// An A-MPDU of the MPDUs in `batch`.
    Ampdu,
    /// A BlockAckReq to `peer`.
    Bar,
    /// A Null frame to the AP announcing active mode (`true`) or power save.
    Null(bool),
}

/// Whether an originator must move a recipient's window with a BlockAckReq after discarding
/// MPDUs (10.25.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bar {
    None,
    /// Contend to send it.
    Needed,
    /// It failed at the retry limit: send it before the next A-MPDU to that recipient.
    Owed,
}

/// A station's retrieval of frames the AP buffered for it (11.2.3.8).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Poll {
    None,
    /// The TIM or a More Data bit said a frame waits: contend to send a PS-Poll.
    Pending,
    /// The AP acknowledged the PS-Poll: stay awake for the frame.
    Sent,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rx {
    Nothing,
    /// Locked on this station's transmission, clean so far.
    Clean(usize),
    /// Two or more transmissions overlapped: nothing can be decoded until the medium is quiet.
    Garbled,
}

/// A frame on the air from one station.
#[derive(Debug, Clone, Copy)]
struct OnAir {
    kind: FrameKind,
    to: usize,
    start: SimTime,
    /// The NAV it sets at stations that decode it and are not its addressee.
    duration: SimDuration,
    bytes: u32,
    seq: u16,
    retry: bool,
    more: bool,
}

struct Station<P> {
    queue: VecDeque<Pending<P>>,
    state: State,
    cw: u32,
    backoff: u32,
    /// Start of the current backoff count (medium idle and past DIFS/EIFS), `None` when frozen.
    count_start: Option<SimTime>,
    contend_at: Option<SimTime>,
    /// Generations of the contend timer and of the response timeout: a timer of an older
    /// generation is stale.
    contend_gen: u32,
    exchange_gen: u32,
    short_retries: u32,
    long_retries: u32,
    /// What the station waits for after its RTS or data, and whether the deadline passed
    /// while a frame was still arriving.
    awaiting: Option<FrameKind>,
    deadline_passed: bool,
    /// Response to send at the Respond timer: kind, addressee, NAV it carries.
    response: Option<(FrameKind, usize, SimDuration)>,
    on_air: Option<OnAir>,
    audible: u32,
    rx: Rx,
    nav_until: SimTime,
    /// Bumped whenever the NAV is extended: a NAV reset applies only to the RTS that set it.
    nav_gen: u32,
    /// When the last transmission this station hears began.
    last_rx_start: SimTime,
    idle_since: SimTime,
    eifs: bool,
    next_seq: u16,
    last_seq_from: Vec<Option<u16>>,
    rng: Stream,
    counters: StationCounters,
    job: Job,
    // ---- power save ----
    /// In power-save mode (a PSM station; the AP and ad hoc stations never doze).
    ps: bool,
    awake: bool,
    /// When it last woke: frames that began earlier were slept through and cannot be decoded.
    woke_at: SimTime,
    /// Awake for a beacon it listens to, until that beacon is decoded.
    awaiting_beacon: bool,
    poll: Poll,
    /// At the AP: frames held for each dozing station; at the AP, a beacon due.
    ps_buffer: Vec<VecDeque<Pending<P>>>,
    beacon_pending: bool,
    // ---- A-MPDU and block ack (HT and VHT channels with aggregation) ----
    /// Queue positions of the MPDUs in the A-MPDU under way, in queue (sequence) order.
    batch: Vec<usize>,
    /// The recipient of a BlockAckReq or Null under way.
    peer: usize,
    /// The A-MPDU's length in bytes.
    ampdu_len: u32,
    /// Next sequence number per recipient (10.3.2.14.3: one counter per receiver and TID).
    next_seq_to: Vec<u16>,
    bar: Vec<Bar>,
    /// Reordering buffer per originator.
    reorder: Vec<Reorder<P>>,
    /// The bitmap of the BlockAck it sends (at the Respond timer, and on the air): bit k
    /// acknowledges the k-th MPDU of the A-MPDU it answers.
    response_bitmap: u64,
    /// The part of its A-MPDU's airtime that carries retransmitted MPDUs (from its start).
    ampdu_retry_ns: u64,
    // ---- adaptive power save ----
    /// In active mode (PM = 0 at the AP) since its last data frame, until the timeout.
    active: bool,
    /// At the AP: which stations are in active mode (their frames are not buffered).
    ap_active: Vec<bool>,
    /// A Null frame to send: announcing active mode (`true`) or power save.
    null_pending: Option<bool>,
    /// Awake in active mode until then at least; whether a timer for it is pending (one timer
    /// per timeout, moved on when it fires early, rather than one per frame).
    psm_until: SimTime,
    psm_timer: bool,
}

/// The DCF of one channel.
pub struct Dcf<P> {
    cfg: DcfConfig,
    timing: MacTiming,
    control_rate: u64,
    stations: Vec<Station<P>>,
    impairments: Vec<AnyImpairment>,
    out: Vec<Out<P>>,
    /// Transmissions on the air, and since when the channel (any station) has been busy.
    transmitting: u32,
    busy_since: SimTime,
    busy_ns: u64,
    /// TBTTs so far, and the traffic indication map of the beacon on the air (by station).
    tbtts: u64,
    tim: Vec<bool>,
    /// With aggregation: MPDUs per A-MPDU at most (0: none); scratch room for what a
    /// reordering buffer passes up.
    ampdu_max: u32,
    up: Vec<Held<P>>,
    /// Adaptive power save's stay-awake timeout (zero: none).
    psm_timeout: SimDuration,
    /// Airtime of each control and management frame kind (`FrameKind as usize`).
    control_airs: [SimDuration; FrameKind::COUNT],
    /// What a data MPDU adds to its IP packet: LLC/SNAP, MAC header and FCS (QoS data on HT
    /// and VHT channels).
    mpdu_overhead: u32,
}

impl<P: Copy> Dcf<P> {
    /// `name` seeds each station's backoff stream ("<name>.stations.<i>").
    pub fn new(cfg: DcfConfig, impairments: Vec<AnyImpairment>, run_seed: u64, name: &str) -> Self {
        let n = cfg.hears.len();
        let timing = cfg.standard.timing();
        // An HT or VHT frame's response goes at the highest basic rate not above the legacy
        // rate of its modulation and coding (10.6.6.5.2).
        let eliciting = cfg.ht.as_ref().map_or(cfg.data_rate, HtPhy::non_ht_reference_rate);
        let control_rate = phy::response_rate(&cfg.basic_rates, eliciting);
        let infra = cfg.infrastructure.clone();
        let ampdu_max = if cfg.ht.is_some() { cfg.ampdu_max } else { 0 };
        let control_airs = FrameKind::ALL.map(|k| Self::compute_control_air(&cfg, control_rate, k));
        let mpdu_overhead = phy::LLC_SNAP + if cfg.ht.is_some() { phy::QOS_DATA_MAC_OVERHEAD } else { phy::DATA_MAC_OVERHEAD };
        let aggregating = ampdu_max > 0;
        let stations = (0..n)
            .map(|i| Station {
                queue: VecDeque::with_capacity(cfg.queue),
                state: State::Idle,
                cw: timing.cw_min,
                backoff: 0,
                count_start: Some(SimTime(timing.difs().0)),
                contend_at: None,
                contend_gen: 0,
                exchange_gen: 0,
                short_retries: 0,
                long_retries: 0,
                awaiting: None,
                deadline_passed: false,
                response: None,
                on_air: None,
                audible: 0,
                rx: Rx::Nothing,
                nav_until: SimTime::ZERO,
                nav_gen: 0,
                last_rx_start: SimTime::ZERO,
                idle_since: SimTime::ZERO,
                eifs: false,
                next_seq: 0,
                last_seq_from: vec![None; n],
                rng: Stream::new(run_seed, &format!("{name}.stations.{i}")),
                counters: StationCounters::default(),
                job: Job::Data,
                ps: infra.as_ref().is_some_and(|x| x.power_save[i] && x.ap != i),
                awake: true,
                woke_at: SimTime::ZERO,
                awaiting_beacon: false,
                poll: Poll::None,
                ps_buffer: if infra.as_ref().is_some_and(|x| x.ap == i) {
                    (0..n).map(|_| VecDeque::new()).collect()
                } else {
                    Vec::new()
                },
                beacon_pending: false,
                batch: Vec::new(),
                peer: 0,
                ampdu_len: 0,
                null_pending: None,
                next_seq_to: if aggregating { vec![0; n] } else { Vec::new() },
                bar: if aggregating { vec![Bar::None; n] } else { Vec::new() },
                reorder: if aggregating { (0..n).map(|_| Reorder::default()).collect() } else { Vec::new() },
                response_bitmap: 0,
                ampdu_retry_ns: 0,
                active: false,
                ap_active: if infra.as_ref().is_some_and(|x| x.ap == i) { vec![false; n] } else { Vec::new() },
                psm_until: SimTime::ZERO,
                psm_timer: false,
            })
            .collect();
        let mut out = Vec::new();
        if let Some(x) = &infra {
            let t = Timer {
                station: x.ap as u32,
                kind: TimerKind::Tbtt,
                gen: 0,
            };
            out.push(Out::Schedule(SimTime::ZERO, t));
        }
        Self {
            cfg,
            timing,
            control_rate,
            stations,
            impairments,
            out,
            transmitting: 0,
            busy_since: SimTime::ZERO,
            busy_ns: 0,
            tbtts: 0,
            tim: vec![false; n],
            ampdu_max,
            up: Vec::new(),
            psm_timeout: infra.as_ref().map_or(SimDuration::ZERO, |x| x.psm_timeout),
            control_airs,
            mpdu_overhead,
        }
    }

    pub fn stations(&self) -> usize {
        self.stations.len()
    }

    pub fn counters(&self, station: usize) -> StationCounters {
        self.stations[station].counters
    }

    /// Nanoseconds during which at least one station was transmitting, up to `now`.
    pub fn busy_ns(&self, now: SimTime) -> u64 {
        self.busy_ns
            + if self.transmitting > 0 {
                now.0 - self.busy_since.0
            } else {
                0
            }
    }

    /// The items produced since the last call.
    pub fn drain(&mut self) -> std::vec::Drain<'_, Out<P>> {
        self.out.drain(..)
    }

    /// Frames waiting or in service at `station`, with those an AP holds for dozing stations.
    pub fn queued(&self, station: usize) -> usize {
        let s = &self.stations[station];
        s.queue.len() + s.ps_buffer.iter().map(VecDeque::len).sum::<usize>()
    }

    /// Frames for `to` that `station` holds and has not yet sent once (waiting, in contention,
    /// or buffered for a dozing addressee).
    pub fn unsent(&self, station: usize, to: usize) -> usize {
        let s = &self.stations[station];
        let waiting = s.queue.iter().filter(|f| f.to == to && !f.sent).count();
        waiting + s.ps_buffer.get(to).map_or(0, |b| b.iter().filter(|f| !f.sent).count())
    }

    /// Whether `station` is awake (always, unless it is in power-save mode).
    pub fn awake(&self, station: usize) -> bool {
        self.stations[station].awake
    }

    /// Hand a packet of `bytes` IP bytes to `from`'s interface queue, for `to`.
    pub fn enqueue(&mut self, now: SimTime, from: usize, to: usize, payload: P, bytes: u32) {
        if self.queued(from) >= self.cfg.queue {
            let s = &mut self.stations[from];
            s.counters.drops_queue += 1;
            self.out.push(Out::Dropped {
                from,
                to,
                payload,
                reason: DropReason::QueueFull,
            });
            return;
        }
        let s = &mut self.stations[from];
        let seq = if self.ampdu_max > 0 {
            // QoS data: one sequence counter per recipient, so that each block ack window sees
            // consecutive numbers.
            if s.bar[to] == Bar::Owed {
                s.bar[to] = Bar::Needed;
            }
            let next = &mut s.next_seq_to[to];
            let seq = *next;
            *next = (seq + 1) & 0x0fff;
            seq
        } else {
            let seq = s.next_seq;
            s.next_seq = s.next_seq.wrapping_add(1) & 0x0fff; // 12-bit sequence numbers
            seq
        };
        let frame = Pending {
            to,
            payload,
            bytes,
            seq,
            retry: false,
            more: false,
            sent: false,
            failures: 0,
        };
        let ap = &self.stations[from];
        if self.stations[to].ps && !ap.ps_buffer.is_empty() && !ap.ap_active[to] {
            // 11.2.3.7: the AP buffers every frame for a station in power-save mode.
            self.stations[from].ps_buffer[to].push_back(frame);
            return;
        }
        let s = &mut self.stations[from];
        s.queue.push_back(frame);
        if self.psm_timeout.0 != 0 && s.ps {
            // Adaptive power save: its frames say PM = 0, and it stays awake after them.
            if s.null_pending == Some(false) {
                s.null_pending = None;
            }
            self.traffic(from, now);
        }
        self.wake(from, now);
        self.start_contending(from, now);
    }

    /// A station with something to send (a frame, a PS-Poll, a beacon) contends for the medium.
    fn start_contending(&mut self, i: usize, now: SimTime) {
        let s = &self.stations[i];
        if s.state != State::Idle {
            return;
        }
        // 10.3.4.3: a frame that finds the medium busy (or not yet idle for DIFS) with no
        // backoff left invokes the backoff procedure.
        let ready = s.count_start.is_some_and(|c| c <= now) && self.medium_idle(i, now);
        if s.backoff == 0 && !ready {
            self.draw_backoff(i);
        }
        self.stations[i].state = State::Contending;
        self.schedule_contend(i, now);
    }

    /// Fire a timer the channel scheduled.
    pub fn on_timer(&mut self, now: SimTime, t: Timer) {
        let i = t.station as usize;
        let s = &self.stations[i];
        let stale = match t.kind {
            TimerKind::Contend => s.contend_gen != t.gen,
            TimerKind::Timeout => s.exchange_gen != t.gen,
            TimerKind::NavReset => s.nav_gen != t.gen,
            TimerKind::PsmTimeout => false,
            TimerKind::TxEnd | TimerKind::Respond | TimerKind::NavEnd | TimerKind::Tbtt => false,
        };
        if stale {
            return;
        }
        match t.kind {
            TimerKind::Contend => self.contend_expired(i, now),
            TimerKind::TxEnd => self.tx_end(i, now),
            TimerKind::Respond => self.respond(i, now),
            TimerKind::Timeout => self.timeout(i, now),
            TimerKind::Tbtt => self.tbtt(i, now),
            TimerKind::PsmTimeout => self.psm_timeout_expired(i, now),
            TimerKind::NavEnd => {
                if self.stations[i].nav_until == now && self.medium_idle(i, now) {
                    self.became_idle(i, now);
                }
            }
            TimerKind::NavReset => {
                // No frame began since the RTS ended: its exchange did not happen.
                let since = SimTime(now.0 - self.nav_reset_wait().0);
                let s = &mut self.stations[i];
                if s.last_rx_start < since && s.nav_until > now {
                    s.nav_until = now;
                    s.nav_gen = s.nav_gen.wrapping_add(1);
                    if self.medium_idle(i, now) {
                        self.became_idle(i, now);
                    }
                }
            }
        }
    }

    /// 10.3.2.4: a station whose NAV an RTS set may reset it when no frame starts within
    /// 2 x SIFS + CTS + aRxPHYStartDelay + 2 slots after the RTS ends.
    fn nav_reset_wait(&self) -> SimDuration {
        let t = &self.timing;
        let rx_start = phy::rx_start_delay(self.cfg.preamble, self.control_rate);
        SimDuration(2 * t.sifs.0 + self.control_air(FrameKind::Cts).0 + rx_start.0 + 2 * t.slot.0)
    }

    // ---- airtime of each frame kind ----------------------------------------------------

    /// A data MPDU carrying `bytes` of IP: LLC/SNAP, MAC header and FCS (QoS data on HT and
    /// VHT channels).
    fn mpdu(&self, bytes: u32) -> u32 {
        bytes + self.mpdu_overhead
    }

    /// Airtime of a PSDU of `psdu` bytes of data (an MPDU, or an A-MPDU).
    fn psdu_air(&self, psdu: u32) -> SimDuration {
        match &self.cfg.ht {
            Some(ht) => ht.txtime(psdu),
            None => phy::airtime(self.cfg.standard, self.cfg.preamble, self.cfg.data_rate, psdu),
        }
    }

    fn data_air(&self, bytes: u32) -> SimDuration {
        self.psdu_air(self.mpdu(bytes))
    }

    /// Airtime of a control or management frame (computed once, `control_airs`).
    #[inline]
    fn control_air(&self, kind: FrameKind) -> SimDuration {
        self.control_airs[kind as usize]
    }

    fn compute_control_air(cfg: &DcfConfig, control_rate: u64, kind: FrameKind) -> SimDuration {
        // Beacons go at the lowest basic rate, so that every station can decode them.
        let rate = if kind == FrameKind::Beacon { cfg.basic_rates.iter().copied().min().unwrap_or(control_rate) } else { control_rate };
        phy::airtime(cfg.standard, cfg.preamble, rate, Self::control_bytes(kind))
    }

    fn control_bytes(kind: FrameKind) -> u32 {
        match kind {
            FrameKind::Rts => phy::RTS_BYTES,
            FrameKind::Cts => phy::CTS_BYTES,
            FrameKind::PsPoll => phy::PS_POLL_BYTES,
            FrameKind::Beacon => phy::BEACON_BYTES,
            FrameKind::BlockAck => ampdu::BLOCK_ACK_BYTES,
            FrameKind::BlockAckReq => ampdu::BLOCK_ACK_REQ_BYTES,
            FrameKind::Ack | FrameKind::Data | FrameKind::Ampdu | FrameKind::Null => phy::ACK_BYTES,
        }
    }

    /// A Null data frame: MAC header and FCS, no body (QoS Null on HT and VHT channels).
    fn null_bytes(&self) -> u32 {
        self.mpdu(0) - phy::LLC_SNAP
    }

    /// Beacons go at the lowest basic rate, so that every station can decode them.
    fn lowest_basic_rate(&self) -> u64 {
        self.cfg
            .basic_rates
            .iter()
            .copied()
            .min()
            .unwrap_or(self.control_rate)
    }

    /// EIFS = SIFS + DIFS + an ACK at the lowest basic rate (802.11-2020 10.3.2.3.7).
    fn eifs(&self) -> SimDuration {
        let lowest = self.lowest_basic_rate();
        let ack = phy::airtime(self.cfg.standard, self.cfg.preamble, lowest, phy::ACK_BYTES);
        SimDuration(self.timing.sifs.0 + self.timing.difs().0 + ack.0)
    }

    /// How long a station waits for a response after its frame ends: SIFS + slot + the PHY's
    /// receive-start delay (the preamble; 802.11-2020 10.3.2.9). A response that has started
    /// by then is waited for.
    fn response_timeout(&self) -> SimDuration {
        let rx_start = phy::rx_start_delay(self.cfg.preamble, self.control_rate);
        SimDuration(self.timing.sifs.0 + self.timing.slot.0 + rx_start.0)
    }

    fn uses_rts(&self, bytes: u32) -> bool {
        self.cfg
            .rts_threshold
            .is_some_and(|t| self.mpdu(bytes) > t)
    }

    // ---- carrier sense and backoff -------------------------------------------------------

    fn medium_idle(&self, i: usize, now: SimTime) -> bool {
        let s = &self.stations[i];
        s.audible == 0 && s.on_air.is_none() && now >= s.nav_until
    }

    fn ifs(&self, i: usize) -> SimDuration {
        if self.stations[i].eifs {
            self.eifs()
        } else {
            self.timing.difs()
        }
    }

    fn draw_backoff(&mut self, i: usize) {
        let s = &mut self.stations[i];
        s.backoff = s.rng.between(0, s.cw as u64) as u32;
    }

    fn schedule_contend(&mut self, i: usize, now: SimTime) {
        let slot = self.timing.slot.0;
        let s = &mut self.stations[i];
        s.contend_gen = s.contend_gen.wrapping_add(1);
        s.contend_at = None;
        if s.state != State::Contending {
            return;
        }
        let Some(start) = s.count_start else { return }; // frozen: resumes when the medium idles
        let at = SimTime((start.0 + s.backoff as u64 * slot).max(now.0));
        s.contend_at = Some(at);
        let t = Timer {
            station: i as u32,
            kind: TimerKind::Contend,
            gen: s.contend_gen,
        };
        self.out.push(Out::Schedule(at, t));
    }

    /// The medium turned busy for station `i`: freeze the backoff count (10.3.4.3).
    fn freeze(&mut self, i: usize, now: SimTime) {
        let slot = self.timing.slot.0;
        let s = &mut self.stations[i];
        if s.contend_at == Some(now) {
            // Its count reached zero in this very slot: it transmits too (and collides).
            return;
        }
        if let Some(start) = s.count_start.take() {
            if now > start {
                let elapsed = ((now.0 - start.0) / slot) as u32;
                s.backoff = s.backoff.saturating_sub(elapsed);
            }
        }
        if s.contend_at.take().is_some() {
            s.contend_gen = s.contend_gen.wrapping_add(1);
        }
    }

    /// The medium turned idle for station `i`: count again after DIFS (or EIFS).
    fn became_idle(&mut self, i: usize, now: SimTime) {
        let ifs = self.ifs(i);
        let s = &mut self.stations[i];
        s.idle_since = now;
        s.count_start = Some(now + ifs);
        if s.state == State::Contending {
            self.schedule_contend(i, now);
        }
    }

    fn contend_expired(&mut self, i: usize, now: SimTime) {
        let s = &mut self.stations[i];
        if s.state != State::Contending || s.contend_at != Some(now) {
            return;
        }
        s.contend_at = None;
        s.count_start = None;
        s.backoff = 0;
        s.state = State::Exchange;
        if s.beacon_pending {
            s.beacon_pending = false;
            s.job = Job::Beacon;
            s.counters.beacons_sent += 1;
            // The TIM: which dozing stations the AP holds frames for (11.2.3.6).
            let buffered: Vec<bool> = s.ps_buffer.iter().map(|b| !b.is_empty()).collect();
            self.tim = buffered;
            self.start_tx(i, now, FrameKind::Beacon, BROADCAST, SimDuration::ZERO, 0, 0, false);
            return;
        }
        if s.poll == Poll::Pending {
            s.job = Job::PsPoll;
            s.counters.ps_polls_sent += 1;
            // Stations that hear it keep off for the AP's answer (SIFS + ACK).
            let nav = SimDuration(self.timing.sifs.0 + self.control_air(FrameKind::Ack).0);
            let ap = self.ap();
            self.start_tx(i, now, FrameKind::PsPoll, ap, nav, 0, 0, false);
            return;
        }
        if let Some(to) = s.bar.iter().position(|&b| b == Bar::Needed) {
            s.job = Job::Bar;
            s.peer = to;
            s.counters.block_ack_reqs_sent += 1;
            let nav = SimDuration(self.timing.sifs.0 + self.control_air(FrameKind::BlockAck).0);
            let ssn = self.window_start(i, to);
            self.start_tx(i, now, FrameKind::BlockAckReq, to, nav, 0, ssn, false);
            return;
        }
        if let Some(pm) = self.null_due(i) {
            return self.send_null(i, now, pm);
        }
        if self.ampdu_max > 0 {
            return self.start_ampdu(i, now);
        }
        let s = &mut self.stations[i];
        s.job = Job::Data;
        let head = *s.queue.front().expect("contending with a frame");
        if self.uses_rts(head.bytes) {
            self.stations[i].counters.rts_sent += 1;
            let d = self.rts_nav(head.bytes);
            self.start_tx(i, now, FrameKind::Rts, head.to, d, 0, head.seq, head.retry);
        } else {
            self.send_data(i, now);
        }
    }

    fn rts_nav(&self, bytes: u32) -> SimDuration {
        let sifs = self.timing.sifs.0;
        SimDuration(
            3 * sifs
                + self.control_air(FrameKind::Cts).0
                + self.data_air(bytes).0
                + self.control_air(FrameKind::Ack).0,
        )
    }

    fn send_data(&mut self, i: usize, now: SimTime) {
        let head = *self.stations[i].queue.front().expect("a frame to send");
        let c = &mut self.stations[i].counters;
        c.data_attempts += 1;
        if head.retry {
            c.retries += 1;
        }
        let nav = SimDuration(self.timing.sifs.0 + self.control_air(FrameKind::Ack).0);
        self.start_tx(
            i,
            now,
            FrameKind::Data,
            head.to,
            nav,
            head.bytes,
            head.seq,
            head.retry,
        );
        if let Some(f) = self.stations[i].on_air.as_mut() {
            f.more = head.more;
        }
    }

    fn ap(&self) -> usize {
        self.cfg
            .infrastructure
            .as_ref()
            .expect("infrastructure mode")
            .ap
    }

    #[allow(clippy::too_many_arguments)]
    fn start_tx(
        &mut self,
        i: usize,
        now: SimTime,
        kind: FrameKind,
        to: usize,
        duration: SimDuration,
        bytes: u32,
        seq: u16,
        retry: bool,
    ) {
        let air = match kind {
            FrameKind::Data => self.data_air(bytes),
            FrameKind::Ampdu => self.psdu_air(self.ampdu_len(i)),
            FrameKind::Null => self.psdu_air(self.null_bytes()),
            k => self.control_air(k),
        };
        if self.transmitting == 0 {
            self.busy_since = now;
        }
        self.transmitting += 1;
        self.freeze(i, now);
        let s = &mut self.stations[i];
        s.on_air = Some(OnAir {
            kind,
            to,
            start: now,
            duration,
            bytes,
            seq,
            retry,
            more: false,
        });
        // A station that starts sending cannot decode what it was receiving.
        if s.rx != Rx::Nothing {
            s.rx = Rx::Garbled;
        }
        let t = Timer {
            station: i as u32,
            kind: TimerKind::TxEnd,
            gen: 0,
        };
        self.out.push(Out::Schedule(now + air, t));
        self.out.push(Out::Air {
            station: i,
            role: AirRole::Transmit,
            kind,
            start: now,
            end: now + air,
            retry,
            bytes,
        });
        for h in 0..self.stations.len() {
            if h == i || !self.cfg.hears[h][i] {
                continue;
            }
            let was_idle = self.medium_idle(h, now);
            let st = &mut self.stations[h];
            st.rx = match (st.rx, st.audible, st.on_air.is_some()) {
                (Rx::Nothing, 0, false) => Rx::Clean(i),
                (Rx::Nothing, _, true) => Rx::Nothing, // transmitting: deaf
                _ => Rx::Garbled,
            };
            st.audible += 1;
            st.last_rx_start = now;
            if was_idle {
                self.freeze(h, now);
            }
        }
    }

    fn tx_end(&mut self, i: usize, now: SimTime) {
        let Some(frame) = self.stations[i].on_air.take() else {
            return;
        };
        if frame.kind == FrameKind::Data {
            if let Some(head) = self.stations[i].queue.front_mut().filter(|h| !h.sent) {
                head.sent = true;
                let (to, payload) = (head.to, head.payload);
                self.out.push(Out::Sent { from: i, to, payload, start: frame.start });
            }
        } else if frame.kind == FrameKind::Ampdu {
            self.ampdu_sent(i, frame.start);
        }
        self.transmitting -= 1;
        if self.transmitting == 0 {
            self.busy_ns += now.0 - self.busy_since.0;
        }
        // Every station that heard it: decode or not, then maybe idle again.
        let mut decoded_by_addressee = false;
        let mut addressee_garbled = false;
        for h in 0..self.stations.len() {
            if h == i || !self.cfg.hears[h][i] {
                continue;
            }
            let st = &mut self.stations[h];
            st.audible -= 1;
            let addressed = h == frame.to || frame.to == BROADCAST;
            let role = if addressed {
                AirRole::Receive
            } else {
                AirRole::Overhear
            };
            // A dozing radio hears nothing; one that woke during the frame missed its preamble.
            let deaf = st.on_air.is_some() || !st.awake;
            let whole = frame.start >= st.woke_at;
            if !deaf {
                self.out.push(Out::Air {
                    station: h,
                    role,
                    kind: frame.kind,
                    start: frame.start.max(st.woke_at),
                    end: now,
                    retry: frame.retry,
                    bytes: frame.bytes,
                });
            }
            let st = &mut self.stations[h];
            // A clean reception ends with the medium quiet (a later start would have garbled it).
            let clean = st.rx == Rx::Clean(i) && !deaf && whole;
            if st.audible == 0 {
                st.rx = Rx::Nothing;
            }
            if clean {
                // Impairments act on each frame at its addressee; on each MPDU of an A-MPDU.
                let mut got = 0;
                let survives = if !addressed {
                    true
                } else if frame.kind == FrameKind::Ampdu {
                    got = self.ampdu_verdicts(i, now);
                    got != 0
                } else {
                    let frame_bytes = match frame.kind {
                        FrameKind::Data => self.mpdu(frame.bytes),
                        FrameKind::Null => self.null_bytes(),
                        k => Self::control_bytes(k),
                    };
                    !matches!(impair::apply(&mut self.impairments, now, frame_bytes), Verdict::Drop(_))
                };
                if survives {
                    self.stations[h].eifs = false;
                    if addressed {
                        decoded_by_addressee = true;
                        if frame.kind == FrameKind::Ampdu {
                            self.receive_ampdu(h, i, got, now);
                        } else {
                            self.receive(h, i, frame, now);
                        }
                    } else if frame.duration.0 > 0 {
                        self.set_nav(h, now + frame.duration);
                        if frame.kind == FrameKind::Rts && self.stations[h].nav_until == now + frame.duration {
                            let t = Timer {
                                station: h as u32,
                                kind: TimerKind::NavReset,
                                gen: self.stations[h].nav_gen,
                            };
                            self.out.push(Out::Schedule(now + self.nav_reset_wait(), t));
                        }
                    }
                } else {
                    self.stations[h].eifs = true;
                }
            } else if !deaf && whole {
                // Heard but not decodable: the next access waits EIFS (10.3.2.3.7).
                self.stations[h].eifs = true;
                if h == frame.to {
                    addressee_garbled = true;
                }
            }
            if self.medium_idle(h, now) {
                self.became_idle(h, now);
                // 10.3.2.9: the response deadline passed while this frame arrived, and it was
                // not the response.
                let st = &self.stations[h];
                if st.deadline_passed && st.awaiting.is_some() {
                    self.exchange_failed(h, now);
                }
            }
        }
        if frame.kind == FrameKind::Ampdu {
            self.ampdu_retry_share(i, frame.to, frame.start);
        }
        // The sender: wait for the response, or go back to contending.
        match frame.kind {
            FrameKind::Data | FrameKind::Rts | FrameKind::PsPoll | FrameKind::Ampdu | FrameKind::BlockAckReq | FrameKind::Null => {
                let s = &mut self.stations[i];
                s.awaiting = Some(match frame.kind {
                    FrameKind::Rts => FrameKind::Cts,
                    FrameKind::Ampdu | FrameKind::BlockAckReq => FrameKind::BlockAck,
                    _ => FrameKind::Ack,
                });
                s.deadline_passed = false;
                if addressee_garbled && !decoded_by_addressee {
                    match frame.kind {
                        FrameKind::Data | FrameKind::Ampdu => s.counters.collisions += 1,
                        FrameKind::Rts => s.counters.rts_collisions += 1,
                        _ => {}
                    }
                }
                let t = Timer {
                    station: i as u32,
                    kind: TimerKind::Timeout,
                    gen: s.exchange_gen,
                };
                let at = now + self.response_timeout();
                self.out.push(Out::Schedule(at, t));
            }
            // A broadcast is not acknowledged: the exchange is over.
            FrameKind::Beacon => self.after_exchange(i, now),
            FrameKind::Cts | FrameKind::Ack | FrameKind::BlockAck => {}
        }
        if self.medium_idle(i, now) {
            self.became_idle(i, now);
        }
        self.maybe_doze(i, now);
    }

    fn set_nav(&mut self, h: usize, until: SimTime) {
        let s = &mut self.stations[h];
        if until > s.nav_until {
            s.nav_until = until;
            s.nav_gen = s.nav_gen.wrapping_add(1);
            let t = Timer {
                station: h as u32,
                kind: TimerKind::NavEnd,
                gen: 0,
            };
            self.out.push(Out::Schedule(until, t));
        }
    }

    /// Station `h` decoded `frame` from `from`, addressed to it.
    fn receive(&mut self, h: usize, from: usize, frame: OnAir, now: SimTime) {
        match frame.kind {
            FrameKind::Data => {
                let s = &mut self.stations[h];
                // 10.3.2.14: a retransmission of the last frame seen from this sender is a
                // duplicate: acknowledged again, not passed up.
                let duplicate = frame.retry && s.last_seq_from[from] == Some(frame.seq);
                s.last_seq_from[from] = Some(frame.seq);
                if duplicate {
                    s.counters.duplicates += 1;
                } else {
                    s.counters.delivered += 1;
                    let payload = self.stations[from]
                        .queue
                        .front()
                        .expect("the sender's head frame")
                        .payload;
                    self.out.push(Out::Delivered {
                        from,
                        to: h,
                        payload,
                    });
                }
                self.respond_after_sifs(h, now, FrameKind::Ack, from, SimDuration::ZERO);
                if self.stations[h].ps {
                    self.buffered_frame_received(h, now, frame.more);
                }
                if self.adaptive() {
                    self.traffic(h, now);
                    self.data_from(h, from, now);
                }
            }
            FrameKind::PsPoll => {
                // 11.2.3.8: the AP acknowledges and sends the station's oldest buffered frame,
                // marked More Data when others remain.
                self.respond_after_sifs(h, now, FrameKind::Ack, from, SimDuration::ZERO);
                let ap = &mut self.stations[h];
                if let Some(b) = ap.ps_buffer.get_mut(from) {
                    if let Some(mut f) = b.pop_front() {
                        f.more = !b.is_empty();
                        ap.queue.push_back(f);
                        self.start_contending(h, now);
                    }
                }
            }
            FrameKind::Beacon => {
                if self.stations[h].ps {
                    self.beacon_received(h, now);
                }
            }
            FrameKind::Rts => {
                // 10.3.2.7: answer only when the NAV does not say the medium is reserved.
                if self.stations[h].nav_until <= now {
                    // The CTS reserves what the RTS did, less one SIFS and itself.
                    let cts = self.control_air(FrameKind::Cts).0 + self.timing.sifs.0;
                    let nav = SimDuration(frame.duration.0.saturating_sub(cts));
                    self.respond_after_sifs(h, now, FrameKind::Cts, from, nav);
                }
            }
            FrameKind::BlockAckReq => {
                // 10.25.6.7: pass up what is held before the starting sequence number.
                let mut up = std::mem::take(&mut self.up);
                self.stations[h].reorder[from].advance(frame.seq, &mut up);
                self.pass_up(h, from, &mut up);
                self.up = up;
                self.stations[h].response_bitmap = 0;
                self.respond_after_sifs(h, now, FrameKind::BlockAck, from, SimDuration::ZERO);
            }
            FrameKind::Null => {
                // 11.2.3.2: the AP notes the station's power management mode.
                self.respond_after_sifs(h, now, FrameKind::Ack, from, SimDuration::ZERO);
                let active = matches!(self.stations[from].job, Job::Null(true));
                self.power_mode_heard(h, from, active, now);
            }
            FrameKind::Ampdu => {}
            FrameKind::Cts | FrameKind::Ack | FrameKind::BlockAck => {
                let s = &self.stations[h];
                let peer = match s.job {
                    Job::PsPoll => Some(self.ap()),
                    Job::Bar | Job::Null(_) => Some(s.peer),
                    _ => s.queue.front().map(|p| p.to),
                };
                let s = &mut self.stations[h];
                if s.awaiting != Some(frame.kind) || peer != Some(from) {
                    return;
                }
                s.awaiting = None;
                s.deadline_passed = false;
                s.exchange_gen = s.exchange_gen.wrapping_add(1); // cancels the timeout
                if frame.kind == FrameKind::Cts {
                    s.short_retries = 0; // 10.3.4.4: a CTS resets the short retry count
                    s.response = Some((FrameKind::Data, from, SimDuration::ZERO));
                    let t = Timer {
                        station: h as u32,
                        kind: TimerKind::Respond,
                        gen: 0,
                    };
                    self.out.push(Out::Schedule(now + self.timing.sifs, t));
                } else if frame.kind == FrameKind::BlockAck && self.stations[h].job == Job::Ampdu {
                    // The BlockAck on the air carries its sender's bitmap.
                    let bitmap = self.stations[from].response_bitmap;
                    self.block_ack_received(h, bitmap, now);
                } else {
                    self.exchange_succeeded(h, now);
                }
            }
        }
    }

    fn respond_after_sifs(
        &mut self,
        h: usize,
        now: SimTime,
        kind: FrameKind,
        to: usize,
        nav: SimDuration,
    ) {
        let s = &mut self.stations[h];
        s.response = Some((kind, to, nav));
        let t = Timer {
            station: h as u32,
            kind: TimerKind::Respond,
            gen: 0,
        };
        self.out.push(Out::Schedule(now + self.timing.sifs, t));
    }

    fn respond(&mut self, h: usize, now: SimTime) {
        let Some((kind, to, nav)) = self.stations[h].response.take() else {
            return;
        };
        if self.stations[h].on_air.is_some() {
            return;
        }
        match kind {
            FrameKind::Ack => {
                self.stations[h].counters.acks_sent += 1;
                self.start_tx(h, now, FrameKind::Ack, to, SimDuration::ZERO, 0, 0, false);
            }
            FrameKind::Cts => {
                self.stations[h].counters.cts_sent += 1;
                self.start_tx(h, now, FrameKind::Cts, to, nav, 0, 0, false);
            }
            FrameKind::BlockAck => {
                self.stations[h].counters.block_acks_sent += 1;
                self.start_tx(h, now, FrameKind::BlockAck, to, SimDuration::ZERO, 0, 0, false);
            }
            FrameKind::Data if self.stations[h].job == Job::Ampdu => self.send_ampdu(h, now),
            FrameKind::Data => self.send_data(h, now),
            _ => {}
        }
    }

    fn timeout(&mut self, i: usize, now: SimTime) {
        let s = &mut self.stations[i];
        if s.awaiting.is_none() {
            return;
        }
        if s.audible > 0 {
            // A frame is arriving: it may be the response; decide when the medium is quiet.
            s.deadline_passed = true;
            return;
        }
        self.exchange_failed(i, now);
    }

    fn exchange_succeeded(&mut self, i: usize, now: SimTime) {
        let cw_min = self.timing.cw_min;
        let s = &mut self.stations[i];
        s.short_retries = 0;
        s.long_retries = 0;
        s.cw = cw_min;
        if s.job == Job::Data {
            let done = s.queue.pop_front().expect("head frame");
            self.out.push(Out::Acked {
                from: i,
                payload: done.payload,
            });
            if self.adaptive() && self.stations[i].ps {
                self.traffic(i, now);
            }
        } else {
            self.control_exchange_done(i, now);
        }
        self.after_exchange(i, now);
    }

    /// A PS-Poll, BlockAckReq or Null was acknowledged.
    #[cold]
    fn control_exchange_done(&mut self, i: usize, now: SimTime) {
        let s = &mut self.stations[i];
        match s.job {
            Job::PsPoll => s.poll = Poll::Sent,
            Job::Bar => s.bar[s.peer] = Bar::None,
            Job::Null(active) => self.power_mode_announced(i, active, now),
            _ => {}
        }
    }

    /// Adaptive power save is on (a stay-awake timeout).
    #[inline]
    fn adaptive(&self) -> bool {
        self.psm_timeout.0 != 0
    }

    fn exchange_failed(&mut self, i: usize, now: SimTime) {
        let (limit_short, limit_long, cw_max, cw_min) = (
            self.cfg.short_retry_limit,
            self.cfg.long_retry_limit,
            self.timing.cw_max,
            self.timing.cw_min,
        );
        let job = self.stations[i].job;
        if job == Job::Ampdu {
            return self.ampdu_failed(i, now);
        }
        // A PS-Poll, BlockAckReq or Null: no MPDU of the queue is at stake.
        let polling = matches!(job, Job::PsPoll | Job::Bar | Job::Null(_));
        let long = !polling && {
            let head = self.stations[i].queue.front().expect("head frame");
            self.stations[i].awaiting == Some(FrameKind::Ack) && self.uses_rts(head.bytes)
        };
        let s = &mut self.stations[i];
        s.awaiting = None;
        s.deadline_passed = false;
        let count = if long {
            s.long_retries += 1;
            (s.long_retries, limit_long)
        } else {
            s.short_retries += 1;
            (s.short_retries, limit_short)
        };
        if count.0 >= count.1 && polling {
            s.short_retries = 0;
            s.cw = cw_min;
            match job {
                // Give up: the next beacon's TIM says whether the frame still waits.
                Job::PsPoll => s.poll = Poll::None,
                // Send it before the next A-MPDU to that recipient.
                Job::Bar => s.bar[s.peer] = Bar::Owed,
                Job::Null(active) => self.power_mode_unannounced(i, active, now),
                _ => {}
            }
        } else if count.0 >= count.1 {
            let dropped = s.queue.pop_front().expect("head frame");
            s.short_retries = 0;
            s.long_retries = 0;
            s.cw = cw_min;
            s.counters.drops_retry_limit += 1;
            self.out.push(Out::Dropped {
                from: i,
                to: dropped.to,
                payload: dropped.payload,
                reason: DropReason::RetryLimit,
            });
        } else {
            s.cw = (2 * s.cw + 1).min(cw_max);
            if !polling {
                if let Some(h) = s.queue.front_mut() {
                    h.retry = true;
                }
            }
        }
        self.after_exchange(i, now);
    }

    /// After an exchange: a fresh backoff (post-backoff even with an empty queue, 10.3.4.3),
    /// counted from DIFS after the medium is idle, or from now if it has been idle that long.
    fn after_exchange(&mut self, i: usize, now: SimTime) {
        self.draw_backoff(i);
        let idle = self.medium_idle(i, now);
        let ifs = self.ifs(i);
        let s = &mut self.stations[i];
        let work = !s.queue.is_empty()
            || s.poll == Poll::Pending
            || s.beacon_pending
            || s.bar.contains(&Bar::Needed)
            || s.null_pending.is_some();
        s.state = if work {
            State::Contending
        } else {
            State::Idle
        };
        s.count_start = if idle {
            Some(SimTime((s.idle_since + ifs).0.max(now.0)))
        } else {
            None
        };
        self.schedule_contend(i, now);
        self.maybe_doze(i, now);
    }

    // ---- infrastructure mode and power save (802.11-2020 11.1.3, 11.2.3) -----------------

    /// A TBTT: the AP queues a beacon ahead of its frames, and the stations in power-save mode
    /// that listen to this beacon wake for it.
    fn tbtt(&mut self, ap: usize, now: SimTime) {
        let (interval, listen) = {
            let x = self.cfg.infrastructure.as_ref().expect("TBTTs in infrastructure mode");
            (x.beacon_interval, x.listen_interval as u64)
        };
        let t = Timer {
            station: ap as u32,
            kind: TimerKind::Tbtt,
            gen: 0,
        };
        self.out.push(Out::Schedule(now + interval, t));
        // A beacon the busy medium held back past the next TBTT is replaced, not doubled.
        self.stations[ap].beacon_pending = true;
        self.start_contending(ap, now);
        if self.tbtts % listen == 0 {
            for i in 0..self.stations.len() {
                if self.stations[i].ps {
                    self.stations[i].awaiting_beacon = true;
                    self.wake(i, now);
                }
            }
        }
        self.tbtts += 1;
    }

    /// A station in power-save mode decoded a beacon: poll for what the TIM announces, or doze.
    fn beacon_received(&mut self, i: usize, now: SimTime) {
        let announced = self.tim[i];
        let s = &mut self.stations[i];
        s.awaiting_beacon = false;
        if announced && !self.psm_timeout.is_zero() && s.null_pending.is_none() && s.poll == Poll::None {
            // Adaptive power save: leave power save (a Null with PM = 0) and take every buffered
            // frame at once rather than poll for each.
            s.null_pending = Some(true);
            self.start_contending(i, now);
        } else if announced && s.poll == Poll::None && self.psm_timeout.is_zero() {
            s.poll = Poll::Pending;
            self.start_contending(i, now);
        } else if !announced && s.poll == Poll::Sent {
            // The frame it polled for is gone (dropped at the AP): stop waiting.
            s.poll = Poll::None;
        }
        self.maybe_doze(i, now);
    }

    /// A station in power-save mode got a data frame from the AP: poll again while More Data
    /// is set; otherwise doze once its ACK is out.
    fn buffered_frame_received(&mut self, i: usize, now: SimTime, more: bool) {
        let s = &mut self.stations[i];
        if more {
            if s.poll != Poll::Pending {
                s.poll = Poll::Pending;
                self.start_contending(i, now);
            }
        } else if s.poll == Poll::Sent {
            s.poll = Poll::None;
        }
    }

    fn wake(&mut self, i: usize, now: SimTime) {
        let s = &mut self.stations[i];
        if s.ps && !s.awake {
            s.awake = true;
            s.woke_at = now;
            self.out.push(Out::Power {
                station: i,
                awake: true,
                at: now,
            });
        }
    }

    /// A station in power-save mode dozes as soon as it has nothing to send, expects nothing
    /// and is not listening for a beacon (11.2.3.1).
    #[inline]
    fn maybe_doze(&mut self, i: usize, now: SimTime) {
        if self.stations[i].ps {
            self.doze_if_idle(i, now);
        }
    }

    fn doze_if_idle(&mut self, i: usize, now: SimTime) {
        let s = &mut self.stations[i];
        let busy = s.state != State::Idle
            || s.awaiting_beacon
            || s.poll != Poll::None
            || s.on_air.is_some()
            || s.response.is_some()
            || s.awaiting.is_some()
            || s.active
            || s.null_pending.is_some();
        if s.awake && !busy {
            s.awake = false;
            self.out.push(Out::Power {
                station: i,
                awake: false,
                at: now,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_frame_kind_indexes_its_own_control_airtime() {
        assert!(FrameKind::ALL.iter().enumerate().all(|(k, &kind)| kind as usize == k));
    }
}
