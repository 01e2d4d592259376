//! BBR v1 as Linux 6 runs it (net/ipv4/tcp_bbr.c), written afresh from the kernel's behaviour
//! and draft-cardwell-iccrg-bbr-congestion-control-00: a model of the path made of the largest
//! recent delivery rate (a max filter over 10 packet-timed rounds) and the smallest recent RTT (a
//! 10 s min filter), from which every ACK sets the pacing rate (gain x bandwidth) and the
//! congestion window (gain x bandwidth-delay product plus a small budget). The mode machine is
//! STARTUP -> DRAIN -> PROBE_BW, with PROBE_RTT whenever the min RTT has not been refreshed for
//! 10 s. Losses do not shape the model, except through packet conservation in the first round of
//! Recovery and the long-term ("policer") bandwidth estimate.
//!
//! The arithmetic is the kernel's fixed point, so the numbers are the kernel's: bandwidth in
//! packets per microsecond scaled by 2^24 (`BW_SCALE`), gains scaled by 2^8 (`BBR_SCALE`), RTTs
//! in whole microseconds, and the min-RTT and PROBE_RTT clocks in jiffies of a HZ = 250 kernel
//! (4 ms), counted from simulated time zero.
//!
//! Where the simulator has no counterpart of a kernel input, this module assumes:
//! - the TSO/GSO goal is the kernel's minimum TSO burst (`bbr_min_tso_segs`): 2 packets, 1 when
//!   pacing below 1.2 Mbit/s; the simulated sender sends packet by packet, so the kernel's
//!   autosizing of bursts to ~1 ms of data (`bbr_tso_segs_goal`) is not applied;
//! - the next departure is due now (no earliest-departure-time queue below TCP), so
//!   `bbr_packets_in_net_at_edt` gives what is in flight, plus one TSO goal when probing up;
//! - there is no `sk_max_pacing_rate` cap;
//! - `tp->delivered_mstamp` is the arrival time of the last ACK that delivered something, and
//!   an ACK ends an idle restart when it delivers something (the kernel asks `rs->delivered > 0`,
//!   which [`RateSample::delivered`] need not carry without a valid interval);
//! - PROBE_RTT marks the flow application-limited (the kernel stores `delivered + in_flight` in
//!   `tp->app_limited`) by setting [`CcState::app_limited`]; the sender is expected to turn that
//!   into its own mark, ending when what is in flight now has been delivered;
//! - the kernel picks the first PROBE_BW phase with `get_random_u32_below(7)`; here a SplitMix64
//!   generator seeded by [`Bbr::new`]'s `seed` draws it, so a run is reproducible from its seed.

use super::{CaEvent, CcState, LinuxCaState, LinuxCongestion, RateSample, INFINITE_SSTHRESH};
use crate::units::SimTime;

/// Bandwidth is kept in packets per microsecond, shifted left by this many bits.
/// `bbr_min_tso_rate` (1.2 Mbit/s) in bytes per second.
const MIN_TSO_RATE_BYTES: u64 = 1_200_000 / 8;
const BW_SCALE: u32 = 24;
const BW_UNIT: u64 = 1 << BW_SCALE;
/// Gains and other fractions are kept shifted left by this many bits.
const BBR_SCALE: u32 = 8;
const BBR_UNIT: u32 = 1 << BBR_SCALE;

/// Phases of the PROBE_BW gain cycle.
const CYCLE_LEN: u32 = 8;
/// Length of the bandwidth max filter, in packet-timed rounds.
const BW_RTTS: u32 = CYCLE_LEN + 2;
/// Length of the min-RTT filter, in seconds.
const MIN_RTT_WIN_SEC: u32 = 10;
/// Least time PROBE_RTT holds the window at its floor, in milliseconds.
const PROBE_RTT_MODE_MS: u32 = 200;
/// Below this pacing rate (bit/s) sends go one packet at a time.
const MIN_TSO_RATE: u64 = 1_200_000;
/// Pace this many percent below the gain x bandwidth product.
const PACING_MARGIN_PERCENT: u64 = 1;
/// 2 / ln 2, the smallest gain that doubles the sending rate every round (STARTUP).
const HIGH_GAIN: u32 = BBR_UNIT * 2885 / 1000 + 1;
/// Its inverse, to drain in about one round what STARTUP queued (DRAIN).
const DRAIN_GAIN: u32 = BBR_UNIT * 1000 / 2885;
/// The window gain in PROBE_BW, leaving room for delayed and stretched ACKs.
const CWND_GAIN: u32 = BBR_UNIT * 2;
/// PROBE_BW's pacing gains: probe up, drain what the probe queued, then cruise six rounds.
const PACING_GAIN: [u32; CYCLE_LEN as usize] =
    [BBR_UNIT * 5 / 4, BBR_UNIT * 3 / 4, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT];
/// The first PROBE_BW phase is drawn among this many (all but the draining one).
const CYCLE_RAND: u32 = 7;
/// The window floor, also PROBE_RTT's window: two two-packet flights for a delayed-ACK receiver.
const CWND_MIN_TARGET: u32 = 4;
/// Growth of the bandwidth estimate (x 1.25) that means STARTUP has not filled the pipe yet.
const FULL_BW_THRESH: u32 = BBR_UNIT * 5 / 4;
/// Rounds without such growth after which the pipe is deemed full.
const FULL_BW_CNT: u32 = 3;
/// Least rounds in a long-term sampling interval.
const LT_INTVL_MIN_RTTS: u32 = 4;
/// An interval is lossy when lost / delivered >= this / 256 (about 20 %).
const LT_LOSS_THRESH: u64 = 50;
/// Two intervals' rates agree when they differ by at most this / 256 (1/8) ...
const LT_BW_RATIO: u64 = (BBR_UNIT / 8) as u64;
/// ... or by at most this many bytes per second (4 kbit/s).
const LT_BW_DIFF: u64 = 4000 / 8;
/// Rounds a policer estimate is used before BBR probes again.
const LT_BW_MAX_RTTS: u32 = 48;
/// Gain on the ACK-aggregation allowance added to the window.
const EXTRA_ACKED_GAIN: u32 = BBR_UNIT;
/// Each half of the two-slot ACK-aggregation max filter lasts this many rounds.
const EXTRA_ACKED_WIN_RTTS: u32 = 5;
/// An aggregation epoch that has counted this many packets starts over.
const ACK_EPOCH_ACKED_RESET_THRESH: u32 = 1 << 20;
/// The aggregation allowance is at most this much time at the estimated bandwidth.
const EXTRA_ACKED_MAX_US: u64 = 100_000;
/// `TCP_INIT_CWND`.
const TCP_INIT_CWND: u32 = 10;

const USEC_PER_SEC: u64 = 1_000_000;
/// Kernel clock rate for the jiffies-based stamps.
const HZ: u32 = 250;
const NS_PER_JIFFY: u64 = 1_000_000_000 / HZ as u64;

/// BBR's modes (`enum bbr_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BbrMode {
    /// Doubling the sending rate every round to find the bottleneck bandwidth.
    Startup,
    /// Draining the queue STARTUP built.
    Drain,
    /// Steady state: pacing at the estimated bandwidth, cycling the gain to probe and share.
    ProbeBw,
    /// Window cut to 4 packets to measure the path's RTT without a queue.
    ProbeRtt,
}

/// Kathleen Nichols' windowed max filter as lib/win_minmax.c keeps it: the best, second best
/// and third best samples of the window, each with the time (here: the round) it was taken.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct MaxFilter {
    /// (time, value), best first.
    s: [(u32, u32); 3],
}

impl MaxFilter {
    fn get(&self) -> u32 {
        self.s[0].1
    }

    /// `minmax_reset`: one sample holds all three places.
    fn reset(&mut self, t: u32, v: u32) -> u32 {
        self.s = [(t, v); 3];
        v
    }

    /// `minmax_running_max`: take the sample `v` of time `t` into a window of `win`.
    fn running_max(&mut self, win: u32, t: u32, v: u32) -> u32 {
        let new = (t, v);
        // A new best, or even the newest kept sample is out of the window: start afresh.
        if v >= self.s[0].1 || t.wrapping_sub(self.s[2].0) > win {
            return self.reset(t, v);
        }
        if v >= self.s[1].1 {
            self.s[1] = new;
            self.s[2] = new;
        } else if v >= self.s[2].1 {
            self.s[2] = new;
        }
        self.age(win, new)
    }

    /// `minmax_subwin_update`: retire the best when it leaves the window, and spread the kept
    /// samples over the window's quarters and halves so a good second choice is ready.
    fn age(&mut self, win: u32, new: (u32, u32)) -> u32 {
        let dt = new.0.wrapping_sub(self.s[0].0);
        if dt > win {
            self.s = [self.s[1], self.s[2], new];
            if new.0.wrapping_sub(self.s[0].0) > win {
                self.s = [self.s[1], self.s[2], new];
            }
        } else if self.s[1].0 == self.s[0].0 && dt > win / 4 {
            self.s[1] = new;
            self.s[2] = new;
        } else if self.s[2].0 == self.s[1].0 && dt > win / 2 {
            self.s[2] = new;
        }
        self.s[0].1
    }
}

/// The kernel's jiffies clock (`tcp_jiffies32`) at simulated time `now`.
fn jiffies(now: SimTime) -> u32 {
    (now.0 / NS_PER_JIFFY) as u32
}

/// The kernel's `after(a, b)` on wrapping 32-bit stamps: `a` is later than `b`.
fn after(a: u32, b: u32) -> bool {
    (b.wrapping_sub(a) as i32) < 0
}

/// A time as the kernel's microsecond stamps (`tcp_mstamp`) hold it.
fn stamp_us(t: SimTime) -> u64 {
    t.0 / 1_000
}

/// `tcp_stamp_us_delta`: microseconds from `t0` to `t1`, zero if `t1` is earlier.
fn us_delta(t1: SimTime, t0: SimTime) -> u64 {
    stamp_us(t1).saturating_sub(stamp_us(t0))
}

/// `bbr_rate_bytes_per_sec`: a rate in packets/us << 24, times the segment size, times a gain
/// (<< 8), less the pacing margin, in bytes per second. The kernel's order of shifts is kept so
/// the rounding is the same; the intermediate is 128 bits wide instead of overflowing.
fn rate_bytes_per_sec(mss: u32, rate: u64, gain: u32) -> u64 {
    let mut r = u128::from(rate) * u128::from(mss);
    r *= u128::from(gain);
    r >>= BBR_SCALE;
    r *= u128::from(USEC_PER_SEC / 100 * (100 - PACING_MARGIN_PERCENT));
    u64::try_from(r >> BW_SCALE).unwrap_or(u64::MAX)
}

/// BBR v1's state (`struct bbr`) with its own random source for the PROBE_BW start phase.
#[derive(Debug, Clone)]
pub struct Bbr {
    /// SplitMix64 state, standing in for the kernel's random numbers.
    rng: u64,
    mode: BbrMode,
    /// Min RTT of the last 10 s, in microseconds; `u32::MAX` before any sample.
    min_rtt_us: u32,
    /// When `min_rtt_us` was taken, in jiffies.
    min_rtt_stamp: u32,
    /// When PROBE_RTT may end, in jiffies; 0 until its window floor is reached.
    probe_rtt_done_stamp: u32,
    /// Max filter of delivery rates over `BW_RTTS` rounds, packets/us << 24.
    bw: MaxFilter,
    /// Packet-timed rounds counted so far.
    rtt_cnt: u32,
    /// `tp.delivered` at which the current round ends.
    next_rtt_delivered: u64,
    /// Start of the current PROBE_BW phase.
    cycle_mstamp: SimTime,
    /// The CA state at the previous ACK (or `Loss` once an RTO began).
    prev_ca_state: LinuxCaState,
    /// In the first round of Recovery: send one packet per packet delivered.
    packet_conservation: bool,
    /// This ACK began a new round.
    round_start: bool,
    /// The flow restarted from idle and has not had data delivered since.
    idle_restart: bool,
    /// A full round passed in PROBE_RTT at the window floor.
    probe_rtt_round_done: bool,
    /// Long-term sampling is under way (it starts at a loss).
    lt_is_sampling: bool,
    /// Rounds in the current long-term interval, or rounds using `lt_bw`.
    lt_rtt_cnt: u32,
    /// A policer was detected: the bandwidth estimate is `lt_bw`.
    lt_use_bw: bool,
    /// Long-term delivery rate, packets/us << 24.
    lt_bw: u32,
    /// `tp.delivered` at the start of the long-term interval.
    lt_last_delivered: u64,
    /// Start of the long-term interval, in milliseconds.
    lt_last_stamp: u32,
    /// `tp.lost` at the start of the long-term interval.
    lt_last_lost: u64,
    /// Current pacing gain, << 8.
    pacing_gain: u32,
    /// Current window gain, << 8.
    cwnd_gain: u32,
    /// STARTUP has filled the pipe.
    full_bw_reached: bool,
    /// Rounds in a row without 25 % bandwidth growth.
    full_bw_cnt: u32,
    /// Current phase of the PROBE_BW gain cycle.
    cycle_idx: u32,
    /// The initial pacing rate was computed from a measured RTT.
    has_seen_rtt: bool,
    /// The window to return to after Recovery or PROBE_RTT.
    prior_cwnd: u32,
    /// The bandwidth that STARTUP last grew past by 25 %.
    full_bw: u32,
    /// Start of the current ACK-aggregation epoch.
    ack_epoch_mstamp: SimTime,
    /// Max excess delivered over what the bandwidth explains, per half window.
    extra_acked: [u16; 2],
    /// Packets delivered in the current aggregation epoch.
    ack_epoch_acked: u32,
    /// Age of the current `extra_acked` slot, in rounds.
    extra_acked_win_rtts: u32,
    /// The `extra_acked` slot being filled.
    extra_acked_win_idx: usize,
    /// `tp->delivered_mstamp`: when something was last delivered.
    delivered_mstamp: SimTime,
}

impl Bbr {
    /// A BBR flow whose random PROBE_BW start phases come from `seed` (the kernel uses its
    /// random pool; equal seeds give equal runs). The connection's own numbers are taken when
    /// the sender calls [`LinuxCongestion::init`].
    pub fn new(seed: u64) -> Self {
        Self {
            rng: seed,
            mode: BbrMode::Startup,
            min_rtt_us: u32::MAX,
            min_rtt_stamp: 0,
            probe_rtt_done_stamp: 0,
            bw: MaxFilter::default(),
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            cycle_mstamp: SimTime::ZERO,
            prev_ca_state: LinuxCaState::Open,
            packet_conservation: false,
            round_start: false,
            idle_restart: false,
            probe_rtt_round_done: false,
            lt_is_sampling: false,
            lt_rtt_cnt: 0,
            lt_use_bw: false,
            lt_bw: 0,
            lt_last_delivered: 0,
            lt_last_stamp: 0,
            lt_last_lost: 0,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            full_bw_reached: false,
            full_bw_cnt: 0,
            cycle_idx: 0,
            has_seen_rtt: false,
            prior_cwnd: 0,
            full_bw: 0,
            ack_epoch_mstamp: SimTime::ZERO,
            extra_acked: [0; 2],
            ack_epoch_acked: 0,
            extra_acked_win_rtts: 0,
            extra_acked_win_idx: 0,
            delivered_mstamp: SimTime::ZERO,
        }
    }

    /// The current mode.
    pub fn mode(&self) -> BbrMode {
        self.mode
    }

    /// The bandwidth estimate in use (`bbr_bw`), packets per microsecond << 24.
    pub fn bw(&self) -> u32 {
        if self.lt_use_bw {
            self.lt_bw
        } else {
            self.max_bw()
        }
    }

    /// The bandwidth estimate in bits per second, as `bbr_get_info` reports it (no margin).
    pub fn bw_bps(&self, mss: u32) -> u64 {
        let bytes = (u128::from(self.bw()) * u128::from(mss) * u128::from(USEC_PER_SEC)) >> BW_SCALE;
        u64::try_from(bytes * 8).unwrap_or(u64::MAX)
    }

    /// The min-RTT estimate in microseconds, if any RTT was sampled.
    pub fn min_rtt_us(&self) -> Option<u32> {
        (self.min_rtt_us != u32::MAX).then_some(self.min_rtt_us)
    }

    /// Current pacing and window gains, in 1/256 (`bbr_get_info`'s units).
    pub fn gains(&self) -> (u32, u32) {
        (self.pacing_gain, self.cwnd_gain)
    }

    /// Current PROBE_BW phase (0: probe up at 5/4, 1: drain at 3/4, 2..7: cruise).
    pub fn cycle_idx(&self) -> u32 {
        self.cycle_idx
    }

    /// STARTUP has judged the pipe full.
    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }

    /// A uniform draw in `0..n` (the kernel's `get_random_u32_below`, by multiply and shift).
    fn random_below(&mut self, n: u32) -> u32 {
        self.rng = self.rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        ((u64::from((z >> 32) as u32) * u64::from(n)) >> 32) as u32
    }

    /// `bbr_max_bw`: the max filter's value.
    fn max_bw(&self) -> u32 {
        self.bw.get()
    }

    /// `bbr_extra_acked`: the larger of the two aggregation slots.
    fn extra_acked(&self) -> u32 {
        u32::from(self.extra_acked[0].max(self.extra_acked[1]))
    }

    /// `bbr_init_pacing_rate_from_rtt`: high gain x initial window over the smoothed RTT, or
    /// over 1 ms before there is one.
    fn init_pacing_rate_from_rtt(&mut self, tp: &mut CcState) {
        let rtt_us = match tp.srtt {
            Some(srtt) => {
                self.has_seen_rtt = true;
                (srtt.0 / 1_000).max(1)
            }
            None => 1_000,
        };
        let bw = u64::from(tp.cwnd) * BW_UNIT / rtt_us;
        tp.pacing_rate = rate_bytes_per_sec(tp.mss, bw, HIGH_GAIN);
    }

    /// `bbr_set_pacing_rate`: pace at gain x `bw`, but before the pipe is full never slower
    /// than now (the first samples of a flow understate its path).
    fn set_pacing_rate(&mut self, tp: &mut CcState, bw: u32, gain: u32) {
        let rate = rate_bytes_per_sec(tp.mss, u64::from(bw), gain);
        if !self.has_seen_rtt && tp.srtt.is_some() {
            self.init_pacing_rate_from_rtt(tp);
        }
        if self.full_bw_reached || rate > tp.pacing_rate {
            tp.pacing_rate = rate;
        }
    }

    /// `bbr_min_tso_segs`, which is also the TSO goal here (see the module documentation).
    fn tso_segs_goal(&self, tp: &CcState) -> u32 {
        if tp.pacing_rate < MIN_TSO_RATE >> 3 {
            1
        } else {
            2
        }
    }

    /// `bbr_save_cwnd`: remember the window to return to; while Recovery or PROBE_RTT has cut
    /// it, keep the larger of the remembered and the current one.
    fn save_cwnd(&mut self, cwnd: u32) {
        if self.prev_ca_state < LinuxCaState::Recovery && self.mode != BbrMode::ProbeRtt {
            self.prior_cwnd = cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(cwnd);
        }
    }

    /// `bbr_bdp`: gain x bandwidth x min RTT, in packets, rounded up; the initial window
    /// while no RTT has been measured.
    fn bdp(&self, bw: u32, gain: u32) -> u32 {
        if self.min_rtt_us == u32::MAX {
            return TCP_INIT_CWND;
        }
        let w = u128::from(bw) * u128::from(self.min_rtt_us);
        let bdp = ((w * u128::from(gain)) >> BBR_SCALE).div_ceil(u128::from(BW_UNIT));
        bdp as u32
    }

    /// `bbr_quantization_budget`: room for three TSO bursts in the end hosts, rounded up to an
    /// even count, and two more in the probing phase so it rises above the BDP even when small.
    fn quantization_budget(&self, tp: &CcState, cwnd: u32) -> u32 {
        let mut cwnd = cwnd.saturating_add(3 * self.tso_segs_goal(tp));
        cwnd = cwnd.saturating_add(1) & !1;
        if self.mode == BbrMode::ProbeBw && self.cycle_idx == 0 {
            cwnd = cwnd.saturating_add(2);
        }
        cwnd
    }

    /// `bbr_inflight`: the in-flight target for a gain.
    fn inflight(&self, tp: &CcState, bw: u32, gain: u32) -> u32 {
        let bdp = self.bdp(bw, gain);
        self.quantization_budget(tp, bdp)
    }

    /// `bbr_packets_in_net_at_edt`, with the next departure due now: what is in flight, plus
    /// the next burst when the pacing gain is raising the flight.
    fn packets_in_net_at_edt(&self, tp: &CcState, inflight_now: u32) -> u32 {
        if self.pacing_gain > BBR_UNIT {
            inflight_now.saturating_add(self.tso_segs_goal(tp))
        } else {
            inflight_now
        }
    }

    /// `bbr_ack_aggregation_cwnd`: once the pipe is full, the window also covers the recent
    /// excess of deliveries over the bandwidth estimate, up to 100 ms of it.
    fn ack_aggregation_cwnd(&self) -> u32 {
        if EXTRA_ACKED_GAIN == 0 || !self.full_bw_reached {
            return 0;
        }
        let max_aggr = (u64::from(self.bw()) * EXTRA_ACKED_MAX_US / BW_UNIT).min(u64::from(u32::MAX)) as u32;
        let aggr = (EXTRA_ACKED_GAIN * self.extra_acked()) >> BBR_SCALE;
        aggr.min(max_aggr)
    }

    /// `bbr_set_cwnd_to_recover_or_restore`: take this ACK's losses off the window; on entering
    /// Recovery, cut the window to what is in flight plus what was delivered and conserve
    /// packets for a round; on leaving Recovery or Loss, return to the window saved before.
    /// Returns whether packet conservation decides the window, and the window.
    fn set_cwnd_to_recover_or_restore(&mut self, tp: &CcState, rs: &RateSample, acked: u32) -> (bool, u32) {
        let prev = self.prev_ca_state;
        let state = tp.ca_state;
        let mut cwnd = tp.cwnd;
        if rs.losses > 0 {
            cwnd = cwnd.saturating_sub(rs.losses).max(1);
        }
        if state == LinuxCaState::Recovery && prev != LinuxCaState::Recovery {
            self.packet_conservation = true;
            // The conservation round starts now.
            self.next_rtt_delivered = tp.delivered;
            cwnd = tp.in_flight.saturating_add(acked);
        } else if prev >= LinuxCaState::Recovery && state < LinuxCaState::Recovery {
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.packet_conservation {
            return (true, cwnd.max(tp.in_flight.saturating_add(acked)));
        }
        (false, cwnd)
    }

    /// `bbr_set_cwnd`: grow the window by what this ACK delivered toward gain x BDP (plus the
    /// aggregation allowance and the quantization budget); once the pipe is full, also cut it
    /// down to that target. Never below 4 packets, never above the clamp, and 4 in PROBE_RTT.
    fn set_cwnd(&mut self, tp: &mut CcState, rs: &RateSample, acked: u32, bw: u32, gain: u32) {
        let mut cwnd = tp.cwnd;
        if acked > 0 {
            let (conserving, c) = self.set_cwnd_to_recover_or_restore(tp, rs, acked);
            cwnd = c;
            if !conserving {
                let mut target = self.bdp(bw, gain);
                target = target.saturating_add(self.ack_aggregation_cwnd());
                target = self.quantization_budget(tp, target);
                if self.full_bw_reached {
                    cwnd = cwnd.saturating_add(acked).min(target);
                } else if cwnd < target || tp.delivered < u64::from(TCP_INIT_CWND) {
                    cwnd = cwnd.saturating_add(acked);
                }
                cwnd = cwnd.max(CWND_MIN_TARGET);
            }
        }
        tp.cwnd = cwnd.min(tp.cwnd_clamp);
        if self.mode == BbrMode::ProbeRtt {
            tp.cwnd = tp.cwnd.min(CWND_MIN_TARGET);
        }
    }

    /// `bbr_is_next_cycle_phase`: a cruising phase lasts one min RTT; the probing phase lasts
    /// at least that and until the flight reaches 5/4 of the BDP target or a loss shows it will
    /// not fit; the draining phase ends after one min RTT or as soon as the flight is down to
    /// the BDP target.
    fn is_next_cycle_phase(&self, tp: &CcState, rs: &RateSample) -> bool {
        let full_length = us_delta(self.delivered_mstamp, self.cycle_mstamp) > u64::from(self.min_rtt_us);
        if self.pacing_gain == BBR_UNIT {
            return full_length;
        }
        let inflight = self.packets_in_net_at_edt(tp, rs.prior_in_flight);
        let bw = self.max_bw();
        if self.pacing_gain > BBR_UNIT {
            return full_length && (rs.losses > 0 || inflight >= self.inflight(tp, bw, self.pacing_gain));
        }
        full_length || inflight <= self.inflight(tp, bw, BBR_UNIT)
    }

    /// `bbr_advance_cycle_phase`.
    fn advance_cycle_phase(&mut self) {
        self.cycle_idx = (self.cycle_idx + 1) & (CYCLE_LEN - 1);
        self.cycle_mstamp = self.delivered_mstamp;
    }

    /// `bbr_update_cycle_phase`.
    fn update_cycle_phase(&mut self, tp: &CcState, rs: &RateSample) {
        if self.mode == BbrMode::ProbeBw && self.is_next_cycle_phase(tp, rs) {
            self.advance_cycle_phase();
        }
    }

    /// `bbr_reset_probe_bw_mode`: enter PROBE_BW at a random phase other than the draining one
    /// (the phase after one drawn among the last seven).
    fn reset_probe_bw_mode(&mut self) {
        self.mode = BbrMode::ProbeBw;
        self.cycle_idx = CYCLE_LEN - 1 - self.random_below(CYCLE_RAND);
        self.advance_cycle_phase();
    }

    /// `bbr_reset_mode`: back to STARTUP if the pipe was never filled, else to PROBE_BW.
    fn reset_mode(&mut self) {
        if self.full_bw_reached {
            self.reset_probe_bw_mode();
        } else {
            self.mode = BbrMode::Startup;
        }
    }

    /// `bbr_reset_lt_bw_sampling_interval`.
    fn reset_lt_bw_sampling_interval(&mut self, tp: &CcState) {
        self.lt_last_stamp = (stamp_us(self.delivered_mstamp) / 1_000) as u32;
        self.lt_last_delivered = tp.delivered;
        self.lt_last_lost = tp.lost;
        self.lt_rtt_cnt = 0;
    }

    /// `bbr_reset_lt_bw_sampling`.
    fn reset_lt_bw_sampling(&mut self, tp: &CcState) {
        self.lt_bw = 0;
        self.lt_use_bw = false;
        self.lt_is_sampling = false;
        self.reset_lt_bw_sampling_interval(tp);
    }

    /// `bbr_lt_bw_interval_done`: a lossy interval ended with rate `bw`; if it agrees with the
    /// previous interval's (within 1/8 or 4 kbit/s), a policer is assumed and their mean used.
    fn lt_bw_interval_done(&mut self, tp: &CcState, bw: u32) {
        if self.lt_bw != 0 {
            let diff = bw.abs_diff(self.lt_bw);
            if u64::from(diff) * u64::from(BBR_UNIT) <= LT_BW_RATIO * u64::from(self.lt_bw)
                || rate_bytes_per_sec(tp.mss, u64::from(diff), BBR_UNIT) <= LT_BW_DIFF
            {
                self.lt_bw = ((u64::from(bw) + u64::from(self.lt_bw)) >> 1) as u32;
                self.lt_use_bw = true;
                self.pacing_gain = BBR_UNIT;
                self.lt_rtt_cnt = 0;
                return;
            }
        }
        self.lt_bw = bw;
        self.reset_lt_bw_sampling_interval(tp);
    }

    /// `bbr_lt_bw_sampling`: detect a token-bucket policer. From the first loss on, measure the
    /// delivery rate over intervals of 4 to 16 rounds ending at a loss; two consecutive lossy
    /// (>= 20 %) intervals with consistent rates make that rate the estimate for 48 rounds.
    fn lt_bw_sampling(&mut self, tp: &CcState, losses: u32, app_limited: bool) {
        if self.lt_use_bw {
            if self.mode == BbrMode::ProbeBw && self.round_start {
                self.lt_rtt_cnt += 1;
                if self.lt_rtt_cnt >= LT_BW_MAX_RTTS {
                    self.reset_lt_bw_sampling(tp);
                    self.reset_probe_bw_mode();
                }
            }
            return;
        }
        // Start only at a loss, once the policer's bucket has run dry, so its burst does not
        // inflate the rate.
        if !self.lt_is_sampling {
            if losses == 0 {
                return;
            }
            self.reset_lt_bw_sampling_interval(tp);
            self.lt_is_sampling = true;
        }
        // An application-limited stretch would understate the rate.
        if app_limited {
            self.reset_lt_bw_sampling(tp);
            return;
        }
        if self.round_start {
            self.lt_rtt_cnt += 1;
        }
        if self.lt_rtt_cnt < LT_INTVL_MIN_RTTS {
            return;
        }
        if self.lt_rtt_cnt > 4 * LT_INTVL_MIN_RTTS {
            self.reset_lt_bw_sampling(tp);
            return;
        }
        // End the interval only at a loss, when the bucket is surely empty.
        if losses == 0 {
            return;
        }
        let lost = tp.lost.wrapping_sub(self.lt_last_lost) as u32;
        let delivered = tp.delivered.wrapping_sub(self.lt_last_delivered) as u32;
        if delivered == 0 || (u64::from(lost) << BBR_SCALE) < LT_LOSS_THRESH * u64::from(delivered) {
            return;
        }
        let now_ms = (stamp_us(self.delivered_mstamp) / 1_000) as u32;
        let t = now_ms.wrapping_sub(self.lt_last_stamp);
        if (t as i32) < 1 {
            return;
        }
        if t >= u32::MAX / 1_000 {
            self.reset_lt_bw_sampling(tp);
            return;
        }
        let bw = u64::from(delivered) * BW_UNIT / (u64::from(t) * 1_000);
        self.lt_bw_interval_done(tp, bw.min(u64::from(u32::MAX)) as u32);
    }

    /// `bbr_update_bw`: count packet-timed rounds (a round ends when a packet sent after the
    /// previous round's end is delivered), feed the long-term sampler, and put the sample
    /// delivered / interval into the max filter, unless it is application-limited and below
    /// the current estimate.
    fn update_bw(&mut self, tp: &CcState, rs: &RateSample) {
        self.round_start = false;
        let Some(interval_us) = rs.interval.map(|i| i.0 / 1_000).filter(|&us| us > 0) else {
            return;
        };
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = tp.delivered;
            self.rtt_cnt = self.rtt_cnt.wrapping_add(1);
            self.round_start = true;
            self.packet_conservation = false;
        }
        self.lt_bw_sampling(tp, rs.losses, rs.app_limited);
        let bw =
            (u128::from(rs.delivered) * u128::from(BW_UNIT) / u128::from(interval_us)).min(u128::from(u32::MAX)) as u32;
        if !rs.app_limited || bw >= self.max_bw() {
            self.bw.running_max(BW_RTTS, self.rtt_cnt, bw);
        }
    }

    /// `bbr_update_ack_aggregation`: within an epoch that starts whenever deliveries fall
    /// behind the bandwidth estimate, track how far they run ahead of it (capped by the
    /// window), in a max filter of two 5-round slots.
    fn update_ack_aggregation(&mut self, tp: &CcState, rs: &RateSample) {
        if EXTRA_ACKED_GAIN == 0 || rs.acked_sacked == 0 || rs.interval.is_none_or(|i| i.0 / 1_000 == 0) {
            return;
        }
        if self.round_start {
            self.extra_acked_win_rtts = (self.extra_acked_win_rtts + 1).min(0x1f);
            if self.extra_acked_win_rtts >= EXTRA_ACKED_WIN_RTTS {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx ^= 1;
                self.extra_acked[self.extra_acked_win_idx] = 0;
            }
        }
        let epoch_us = us_delta(self.delivered_mstamp, self.ack_epoch_mstamp);
        let mut expected =
            (u128::from(self.bw()) * u128::from(epoch_us) / u128::from(BW_UNIT)).min(u128::from(u32::MAX)) as u32;
        if self.ack_epoch_acked <= expected
            || self.ack_epoch_acked.saturating_add(rs.acked_sacked) >= ACK_EPOCH_ACKED_RESET_THRESH
        {
            self.ack_epoch_acked = 0;
            self.ack_epoch_mstamp = self.delivered_mstamp;
            expected = 0;
        }
        self.ack_epoch_acked = self.ack_epoch_acked.saturating_add(rs.acked_sacked).min(0xfffff);
        let extra = self.ack_epoch_acked.saturating_sub(expected).min(tp.cwnd);
        let slot = &mut self.extra_acked[self.extra_acked_win_idx];
        if extra > u32::from(*slot) {
            *slot = extra.min(u32::from(u16::MAX)) as u16;
        }
    }

    /// `bbr_check_full_bw_reached`: at each round start of a non-application-limited sample,
    /// the pipe is full once the bandwidth estimate has failed to grow by 25 % three times.
    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.app_limited {
            return;
        }
        let thresh = (u64::from(self.full_bw) * u64::from(FULL_BW_THRESH)) >> BBR_SCALE;
        if u64::from(self.max_bw()) >= thresh {
            self.full_bw = self.max_bw();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= FULL_BW_CNT;
    }

    /// `bbr_check_drain`: a full pipe ends STARTUP (ssthresh then records the BDP target);
    /// DRAIN ends once the flight is down to that target.
    fn check_drain(&mut self, tp: &mut CcState) {
        if self.mode == BbrMode::Startup && self.full_bw_reached {
            self.mode = BbrMode::Drain;
            tp.ssthresh = self.inflight(tp, self.max_bw(), BBR_UNIT);
        }
        if self.mode == BbrMode::Drain
            && self.packets_in_net_at_edt(tp, tp.in_flight) <= self.inflight(tp, self.max_bw(), BBR_UNIT)
        {
            self.reset_probe_bw_mode();
        }
    }

    /// `bbr_check_probe_rtt_done`: once PROBE_RTT's time is up, restart the min-RTT clock,
    /// give back the saved window and return to STARTUP or PROBE_BW.
    fn check_probe_rtt_done(&mut self, tp: &mut CcState) {
        let now = jiffies(tp.now);
        if !(self.probe_rtt_done_stamp != 0 && after(now, self.probe_rtt_done_stamp)) {
            return;
        }
        self.min_rtt_stamp = now;
        tp.cwnd = tp.cwnd.max(self.prior_cwnd);
        self.reset_mode();
    }

    /// `bbr_update_min_rtt`: keep the least RTT of the last 10 s (an RTT no larger, or any not
    /// delayed-ACK sample once 10 s passed, replaces it). When 10 s pass without one, and the
    /// flow is not just restarting from idle, enter PROBE_RTT: hold the window at 4 packets for
    /// 200 ms and one round once the flight has fallen to 4, marking the samples taken
    /// meanwhile application-limited.
    fn update_min_rtt(&mut self, tp: &mut CcState, rs: &RateSample) {
        let now = jiffies(tp.now);
        let expired = after(now, self.min_rtt_stamp.wrapping_add(MIN_RTT_WIN_SEC * HZ));
        if let Some(rtt) = rs.rtt {
            let rtt_us = (rtt.0 / 1_000).min(u64::from(u32::MAX)) as u32;
            if rtt_us <= self.min_rtt_us || (expired && !rs.ack_delayed) {
                self.min_rtt_us = rtt_us;
                self.min_rtt_stamp = now;
            }
        }
        if PROBE_RTT_MODE_MS > 0 && expired && !self.idle_restart && self.mode != BbrMode::ProbeRtt {
            self.mode = BbrMode::ProbeRtt;
            self.save_cwnd(tp.cwnd);
            self.probe_rtt_done_stamp = 0;
        }
        if self.mode == BbrMode::ProbeRtt {
            tp.app_limited = true;
            if self.probe_rtt_done_stamp == 0 && tp.in_flight <= CWND_MIN_TARGET {
                self.probe_rtt_done_stamp = now.wrapping_add((PROBE_RTT_MODE_MS * HZ).div_ceil(1_000));
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = tp.delivered;
            } else if self.probe_rtt_done_stamp != 0 {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(tp);
                }
            }
        }
        // The restart from idle is over once data sent after it is delivered.
        if rs.delivered > 0 || rs.acked_sacked > 0 {
            self.idle_restart = false;
        }
    }

    /// `bbr_update_gains`: the gains of the mode (and PROBE_BW phase).
    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            BbrMode::Startup => (HIGH_GAIN, HIGH_GAIN),
            BbrMode::Drain => (DRAIN_GAIN, HIGH_GAIN),
            BbrMode::ProbeBw => {
                let pacing = if self.lt_use_bw { BBR_UNIT } else { PACING_GAIN[self.cycle_idx as usize] };
                (pacing, CWND_GAIN)
            }
            BbrMode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
        };
    }

    /// `bbr_update_model`: everything one rate sample teaches, in the kernel's order.
    fn update_model(&mut self, tp: &mut CcState, rs: &RateSample) {
        self.update_bw(tp, rs);
        self.update_ack_aggregation(tp, rs);
        self.update_cycle_phase(tp, rs);
        self.check_full_bw_reached(rs);
        self.check_drain(tp);
        self.update_min_rtt(tp, rs);
        self.update_gains();
    }
}

impl LinuxCongestion for Bbr {
    fn name(&self) -> &'static str {
        "bbr"
    }

    /// `bbr_init`: empty model (min RTT from the connection's, if any), initial pacing rate,
    /// STARTUP, ssthresh infinite.
    fn init(&mut self, tp: &mut CcState) {
        self.prior_cwnd = 0;
        tp.ssthresh = INFINITE_SSTHRESH;
        self.rtt_cnt = 0;
        self.next_rtt_delivered = 0;
        self.prev_ca_state = LinuxCaState::Open;
        self.packet_conservation = false;
        self.probe_rtt_done_stamp = 0;
        self.probe_rtt_round_done = false;
        self.min_rtt_us = tp.min_rtt.map_or(u32::MAX, |r| (r.0 / 1_000).min(u64::from(u32::MAX)) as u32);
        self.min_rtt_stamp = jiffies(tp.now);
        self.bw.reset(self.rtt_cnt, 0);
        self.has_seen_rtt = false;
        self.init_pacing_rate_from_rtt(tp);
        self.round_start = false;
        self.idle_restart = false;
        self.full_bw_reached = false;
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.cycle_mstamp = SimTime::ZERO;
        self.cycle_idx = 0;
        self.delivered_mstamp = tp.now;
        self.reset_lt_bw_sampling(tp);
        self.mode = BbrMode::Startup;
        self.pacing_gain = HIGH_GAIN;
        self.cwnd_gain = HIGH_GAIN;
        self.ack_epoch_mstamp = tp.now;
        self.ack_epoch_acked = 0;
        self.extra_acked_win_rtts = 0;
        self.extra_acked_win_idx = 0;
        self.extra_acked = [0; 2];
    }

    /// `bbr_ssthresh`: a reduction starts; save the window to restore after it. BBR does not
    /// reduce through ssthresh: it answers with the current one (infinite until DRAIN records
    /// the BDP target there).
    fn ssthresh(&mut self, tp: &CcState) -> u32 {
        self.save_cwnd(tp.cwnd);
        tp.ssthresh
    }

    /// BBR sets the window in `cong_control`; the kernel gives it no `cong_avoid`.
    fn cong_avoid(&mut self, _tp: &mut CcState, _acked: u32) {}

    /// `bbr_set_state`: an RTO ends the round, restarts full-pipe detection and counts as a
    /// loss for the policer detector.
    fn set_state(&mut self, tp: &mut CcState, new: LinuxCaState) {
        if new == LinuxCaState::Loss {
            self.prev_ca_state = LinuxCaState::Loss;
            self.full_bw = 0;
            self.round_start = true;
            self.lt_bw_sampling(tp, 1, false);
        }
    }

    /// `bbr_cwnd_event`: sending restarts after an application-limited idle period; in
    /// PROBE_BW pace at the estimated bandwidth (no probing gain), in PROBE_RTT see whether
    /// it may end.
    fn cwnd_event(&mut self, tp: &mut CcState, event: CaEvent) {
        if event == CaEvent::TxStart && tp.app_limited {
            self.idle_restart = true;
            self.ack_epoch_mstamp = tp.now;
            self.ack_epoch_acked = 0;
            match self.mode {
                BbrMode::ProbeBw => {
                    let bw = self.bw();
                    self.set_pacing_rate(tp, bw, BBR_UNIT);
                }
                BbrMode::ProbeRtt => self.check_probe_rtt_done(tp),
                _ => {}
            }
        }
    }

    /// `bbr_undo_cwnd`: the reduction was spurious; restart full-pipe detection and policer
    /// sampling, and keep the window (BBR did not cut it for the loss).
    fn undo_cwnd(&mut self, tp: &CcState) -> u32 {
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.reset_lt_bw_sampling(tp);
        tp.cwnd
    }

    /// `bbr_main`: update the model from the rate sample, then set the pacing rate and window.
    fn cong_control(&mut self, tp: &mut CcState, rs: &RateSample) -> bool {
        if rs.acked_sacked > 0 {
            self.delivered_mstamp = tp.now;
        }
        self.update_model(tp, rs);
        let bw = self.bw();
        self.set_pacing_rate(tp, bw, self.pacing_gain);
        self.set_cwnd(tp, rs, rs.acked_sacked, bw, self.cwnd_gain);
        true
    }

    fn needs_pacing(&self) -> bool {
        true
    }

    /// `bbr_min_tso_segs`: bursts of two segments, or one below 1.2 Mbit/s.
    fn min_tso_segs(&self, pacing_rate: u64) -> u32 {
        if pacing_rate < MIN_TSO_RATE_BYTES {
            1
        } else {
            2
        }
    }

    fn controls_cwnd(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{airtime, SimDuration, NS_PER_SEC};
    use std::collections::VecDeque;

    const MSS: u32 = 1448;

    fn ms(n: u64) -> SimDuration {
        SimDuration::from_millis(n)
    }

    /// A fresh connection (initial window 10) with BBR initialised at time zero.
    fn fresh(seed: u64) -> (Bbr, CcState) {
        let mut tp = CcState::new(10, MSS, 10_000);
        let mut b = Bbr::new(seed);
        b.init(&mut tp);
        (b, tp)
    }

    /// One synthetic ACK `dt` after the previous one that delivers `pkts` packets, sampled over
    /// `dt` with an RTT of 40 ms; its sampled packet was sent when the previous ACK arrived, so
    /// every call begins a new packet-timed round.
    fn round(b: &mut Bbr, tp: &mut CcState, pkts: u64, dt: SimDuration, app_limited: bool, losses: u32) -> RateSample {
        tp.now += dt;
        let prior_delivered = tp.delivered;
        tp.delivered += pkts;
        tp.lost += u64::from(losses);
        tp.srtt = Some(ms(40));
        let rs = RateSample {
            delivered: pkts,
            interval: Some(dt),
            prior_delivered,
            acked_sacked: pkts as u32,
            losses,
            prior_in_flight: tp.in_flight,
            rtt: Some(ms(40)),
            app_limited,
            ack_delayed: false,
        };
        assert!(b.cong_control(tp, &rs));
        rs
    }

    /// `pkts` packets per `dt` as the kernel's bandwidth unit.
    fn bw_of(pkts: u64, dt: SimDuration) -> u32 {
        (pkts * BW_UNIT / (dt.0 / 1_000)) as u32
    }

    struct Pkt {
        sent: SimTime,
        ack_at: SimTime,
        delivered: u64,
        delivered_time: SimTime,
        first_sent: SimTime,
        app_limited: bool,
    }

    /// A sender with endless data on a single bottleneck of `rate_bps` with an unbounded FIFO
    /// buffer and a base RTT, the receiver ACKing every packet at once. It samples delivery
    /// rates as tcp_rate.c does (draft-cheng-iccrg-delivery-rate-estimation), paces at
    /// `tp.pacing_rate` and keeps at most `tp.cwnd` packets in flight.
    struct FakePath {
        bbr: Bbr,
        tp: CcState,
        rate_bps: u64,
        base_rtt: SimDuration,
        link_free: SimTime,
        next_send: SimTime,
        flight: VecDeque<Pkt>,
        delivered_time: SimTime,
        first_sent: SimTime,
        app_limited_until: u64,
    }

    impl FakePath {
        /// 10 Mbit/s, 40 ms.
        fn new(seed: u64) -> Self {
            let (bbr, tp) = fresh(seed);
            Self {
                bbr,
                tp,
                rate_bps: 10_000_000,
                base_rtt: ms(40),
                link_free: SimTime::ZERO,
                next_send: SimTime::ZERO,
                flight: VecDeque::new(),
                delivered_time: SimTime::ZERO,
                first_sent: SimTime::ZERO,
                app_limited_until: 0,
            }
        }

        /// The smallest RTT the path can give: base RTT plus one packet's serialisation.
        fn path_min_rtt_us(&self) -> u32 {
            ((self.base_rtt + airtime(u64::from(MSS), self.rate_bps)).0 / 1_000) as u32
        }

        fn send(&mut self, t: SimTime) {
            self.tp.now = t;
            if self.flight.is_empty() {
                self.first_sent = t;
                self.delivered_time = t;
                self.tp.app_limited = self.app_limited_until != 0;
                self.bbr.cwnd_event(&mut self.tp, CaEvent::TxStart);
            }
            let start = t.max(self.link_free);
            self.link_free = start + airtime(u64::from(MSS), self.rate_bps);
            self.flight.push_back(Pkt {
                sent: t,
                ack_at: self.link_free + self.base_rtt,
                delivered: self.tp.delivered,
                delivered_time: self.delivered_time,
                first_sent: self.first_sent,
                app_limited: self.app_limited_until != 0,
            });
            self.tp.packets_out = self.flight.len() as u32;
            self.tp.in_flight = self.flight.len() as u32;
            let gap = (u64::from(MSS) * NS_PER_SEC).div_ceil(self.tp.pacing_rate.max(1));
            self.next_send = t + SimDuration(gap);
        }

        /// Send what window and pacing allow, then process the next ACK; returns its sample.
        fn step(&mut self) -> RateSample {
            loop {
                let ack_at = self.flight.front().map(|p| p.ack_at);
                let send_at = self.next_send.max(self.tp.now);
                if (self.flight.len() as u32) < self.tp.cwnd && ack_at.is_none_or(|a| send_at < a) {
                    self.send(send_at);
                } else {
                    return self.ack();
                }
            }
        }

        fn ack(&mut self) -> RateSample {
            let p = self.flight.pop_front().expect("an ACK needs a packet in flight");
            let now = p.ack_at;
            self.tp.now = now;
            let prior_in_flight = self.flight.len() as u32 + 1;
            self.tp.delivered += 1;
            self.delivered_time = now;
            self.first_sent = p.sent;
            if self.app_limited_until != 0 && self.tp.delivered > self.app_limited_until {
                self.app_limited_until = 0;
            }
            let rtt = now - p.sent;
            self.tp.srtt = Some(self.tp.srtt.map_or(rtt, |s| SimDuration((7 * s.0 + rtt.0) / 8)));
            self.tp.min_rtt = Some(self.tp.min_rtt.map_or(rtt, |m| m.min(rtt)));
            let interval = (p.sent - p.first_sent).max(now - p.delivered_time);
            let valid = self.tp.min_rtt.is_none_or(|m| interval >= m);
            let rs = RateSample {
                delivered: self.tp.delivered - p.delivered,
                interval: valid.then_some(interval),
                prior_delivered: p.delivered,
                acked_sacked: 1,
                losses: 0,
                prior_in_flight,
                rtt: Some(rtt),
                app_limited: p.app_limited,
                ack_delayed: false,
            };
            self.tp.in_flight = self.flight.len() as u32;
            self.tp.packets_out = self.flight.len() as u32;
            self.tp.snd_una += u64::from(MSS);
            self.tp.app_limited = self.app_limited_until != 0;
            assert!(self.bbr.cong_control(&mut self.tp, &rs));
            // PROBE_RTT marks the flow application-limited until what is in flight is delivered.
            if self.tp.app_limited && self.app_limited_until == 0 {
                self.app_limited_until = (self.tp.delivered + self.flight.len() as u64).max(1);
            }
            rs
        }

        /// Run ACK by ACK until `done` says so (or panic after `limit` seconds).
        fn run_until(&mut self, limit_s: u64, mut done: impl FnMut(&Self, &RateSample) -> bool) {
            while self.tp.now < SimTime(limit_s * NS_PER_SEC) {
                let rs = self.step();
                if done(self, &rs) {
                    return;
                }
            }
            panic!("condition not met within {limit_s} s (mode {:?})", self.bbr.mode);
        }
    }

    /// 10 Mbit/s of 1448-byte packets in the kernel's unit (packets/us << 24).
    fn ten_mbit_bw() -> u32 {
        (10_000_000u64 * BW_UNIT / (8 * u64::from(MSS)) / USEC_PER_SEC) as u32
    }

    #[test]
    fn gains_are_the_kernels_fixed_point_constants() {
        assert_eq!(HIGH_GAIN, 739); // 2/ln2 = 2.885 -> 2.887 after rounding up
        assert_eq!(DRAIN_GAIN, 88);
        assert_eq!(CWND_GAIN, 512);
        assert_eq!(PACING_GAIN, [320, 192, 256, 256, 256, 256, 256, 256]);
    }

    /// bbr_init_pacing_rate_from_rtt: high gain x initial window / srtt, 1 ms without an srtt.
    #[test]
    fn initial_pacing_rate_is_high_gain_times_initial_window_over_srtt_or_1ms_bbr_init_pacing_rate_from_rtt() {
        let (b, tp) = fresh(1);
        assert_eq!(b.min_rtt_us(), None);
        let want = 10.0 * f64::from(MSS) / 1e-3 * 2.887 * 0.99;
        assert!((tp.pacing_rate as f64 / want - 1.0).abs() < 1e-3, "{} vs {want}", tp.pacing_rate);
        assert!(!b.has_seen_rtt);

        let mut tp = CcState::new(10, MSS, 10_000);
        tp.srtt = Some(ms(40));
        let mut b = Bbr::new(1);
        b.init(&mut tp);
        assert_eq!(tp.pacing_rate, rate_bytes_per_sec(MSS, 10 * BW_UNIT / 40_000, HIGH_GAIN));
        let want = 10.0 * f64::from(MSS) / 0.040 * 2.887 * 0.99;
        assert!((tp.pacing_rate as f64 / want - 1.0).abs() < 1e-3);
        assert!(b.has_seen_rtt);
        assert!(b.needs_pacing());
        assert_eq!(tp.ssthresh, INFINITE_SSTHRESH);
    }

    /// bbr_set_pacing_rate in STARTUP (draft §4.3.2.1): pacing rate = 2.89 x max_bw x mss,
    /// less the 1 % margin, and never lowered before the pipe is full; the first RTT sample
    /// replaces the 1 ms guess of the initial rate.
    #[test]
    fn startup_paces_at_high_gain_times_the_bandwidth_estimate_bbr_set_pacing_rate() {
        let (mut b, mut tp) = fresh(1);
        let initial = tp.pacing_rate;
        // Without an srtt a smaller rate does not lower the 1-ms-based initial rate.
        tp.now += ms(40);
        tp.delivered = 40;
        let rs = RateSample { delivered: 40, interval: Some(ms(40)), acked_sacked: 1, ..RateSample::default() };
        b.cong_control(&mut tp, &rs);
        assert_eq!(tp.pacing_rate, initial);
        assert_eq!(tp.cwnd, 11);
        // With an srtt, the initial rate is recomputed (11 packets / 40 ms x 2.89), and the
        // bandwidth estimate of 1 packet/ms x 2.89 is above it.
        round(&mut b, &mut tp, 40, ms(40), false, 0);
        assert!(b.has_seen_rtt);
        let bw = bw_of(40, ms(40));
        assert_eq!(b.max_bw(), bw);
        assert_eq!(tp.pacing_rate, rate_bytes_per_sec(MSS, u64::from(bw), HIGH_GAIN));
        let want = 1000.0 * f64::from(MSS) * 2.885 * 0.99;
        assert!((tp.pacing_rate as f64 / want - 1.0).abs() < 2e-3, "{} vs {want}", tp.pacing_rate);
        // A fresh STARTUP flow whose estimate is below the current rate keeps the rate.
        let (mut b, mut tp) = fresh(1);
        tp.srtt = Some(ms(40));
        tp.pacing_rate = 10 * initial;
        let high = tp.pacing_rate;
        round(&mut b, &mut tp, 40, ms(40), false, 0);
        assert!(b.has_seen_rtt);
        assert!(tp.pacing_rate >= rate_bytes_per_sec(MSS, u64::from(bw), HIGH_GAIN));
        assert!(tp.pacing_rate < high, "the first srtt recomputes the initial rate");
    }

    /// bbr_check_full_bw_reached (draft §4.3.2.2): the pipe is full after 3 rounds in which the
    /// max bandwidth grew by less than 25 %; application-limited rounds are not counted. Then
    /// bbr_check_drain: DRAIN (pacing 1/2.89, ssthresh = BDP target), then PROBE_BW once the
    /// flight is down to the BDP target.
    #[test]
    fn full_bandwidth_after_three_rounds_without_25_percent_growth_then_drain_then_probe_bw() {
        let (mut b, mut tp) = fresh(3);
        tp.in_flight = 1_000;
        for (pkts, app_limited, cnt) in [
            (40, false, 0),  // first estimate
            (80, false, 0),  // x2
            (160, false, 0), // x2
            (180, false, 1), // +12.5 % of 160: no real growth
            (196, false, 2),
            (20, true, 2), // app-limited round: not counted
            (199, false, 3),
        ] {
            assert_eq!(b.mode, BbrMode::Startup);
            round(&mut b, &mut tp, pkts, ms(40), app_limited, 0);
            assert_eq!(b.full_bw_cnt, cnt, "round of {pkts}");
        }
        assert_eq!(b.full_bw, bw_of(160, ms(40)), "growth is measured from the last 25 % step");
        assert!(b.full_bw_reached);
        assert_eq!(b.mode, BbrMode::Drain);
        assert_eq!(tp.ssthresh, b.inflight(&tp, b.max_bw(), BBR_UNIT));
        assert_eq!(b.gains(), (DRAIN_GAIN, HIGH_GAIN));
        // DRAIN paces at 1/2.89 of the estimate, lowering the rate now that the pipe is full.
        assert_eq!(tp.pacing_rate, rate_bytes_per_sec(MSS, u64::from(b.max_bw()), DRAIN_GAIN));
        // Still too much in flight: stay.
        round(&mut b, &mut tp, 199, ms(40), false, 0);
        assert_eq!(b.mode, BbrMode::Drain);
        tp.in_flight = b.inflight(&tp, b.max_bw(), BBR_UNIT);
        round(&mut b, &mut tp, 199, ms(40), false, 0);
        assert_eq!(b.mode, BbrMode::ProbeBw);
        assert_eq!(b.gains().1, CWND_GAIN);
    }

    /// The same on the 10 Mbit/s, 40 ms fake path: STARTUP finds the bottleneck rate, DRAIN
    /// follows, PROBE_BW starts once in-flight <= BDP target, and the window settles at
    /// 2 x BDP + quantization budget (bbr_set_cwnd, bbr_quantization_budget).
    #[test]
    fn startup_drain_probe_bw_on_a_10_mbit_40_ms_path_bbr_check_drain() {
        let mut p = FakePath::new(5);
        let mut modes = vec![BbrMode::Startup];
        p.run_until(5, |p, _| {
            if *modes.last().unwrap() != p.bbr.mode {
                modes.push(p.bbr.mode);
                if p.bbr.mode == BbrMode::Drain {
                    assert_eq!(p.bbr.full_bw_cnt, 3);
                    assert!(p.bbr.round_start);
                }
                if p.bbr.mode == BbrMode::ProbeBw {
                    assert!(p.tp.in_flight <= p.bbr.inflight(&p.tp, p.bbr.max_bw(), BBR_UNIT));
                }
            }
            p.bbr.mode == BbrMode::ProbeBw
        });
        assert_eq!(modes, [BbrMode::Startup, BbrMode::Drain, BbrMode::ProbeBw]);
        assert_eq!(p.bbr.mode(), BbrMode::ProbeBw);
        assert!(p.bbr.full_bw_reached());
        assert!(p.bbr.bw_bps(MSS).abs_diff(10_000_000) < 100_000, "{} bit/s", p.bbr.bw_bps(MSS));
        assert_eq!(p.bbr.min_rtt_us(), Some(p.bbr.min_rtt_us));
        assert!(p.tp.now < SimTime(NS_PER_SEC), "STARTUP and DRAIN take a few round trips");
        let bw = ten_mbit_bw();
        let err = f64::from(p.bbr.max_bw()) / f64::from(bw) - 1.0;
        assert!(err.abs() < 0.01, "estimate {} vs path {bw}", p.bbr.max_bw());
        assert!(p.bbr.min_rtt_us.abs_diff(p.path_min_rtt_us()) <= 1);
        // Let it settle for a few seconds, then check the window against its formula.
        let end = p.tp.now + SimDuration::from_secs(3);
        p.run_until(10, |p, _| p.tp.now >= end);
        let b = &p.bbr;
        let bdp = b.bdp(b.max_bw(), BBR_UNIT);
        assert_eq!(bdp, 36); // 863 packets/s x 41.16 ms = 35.5
        let want = b.quantization_budget(&p.tp, b.bdp(b.max_bw(), CWND_GAIN) + b.ack_aggregation_cwnd());
        assert_eq!(p.tp.cwnd, want);
        assert!(b.ack_aggregation_cwnd() <= 4, "a smooth path aggregates little");
        assert!((78..=86).contains(&p.tp.cwnd), "2 x 35.5 + 3 x 2 packets, got {}", p.tp.cwnd);
    }

    /// bbr_update_cycle_phase (draft §4.3.4.3): PROBE_BW moves through the 8 gains in order;
    /// the 1.0 phases last one min RTT, the 5/4 phase at least one min RTT (until the flight
    /// reaches 5/4 BDP), the 3/4 phase at most one; each phase paces at its gain.
    #[test]
    fn probe_bw_cycles_through_the_8_gains_one_min_rtt_each_bbr_update_cycle_phase() {
        let mut p = FakePath::new(7);
        p.run_until(5, |p, _| p.bbr.mode == BbrMode::ProbeBw);
        let mut phases = vec![(p.tp.now, p.bbr.cycle_idx)];
        let end = p.tp.now + SimDuration::from_secs(3);
        p.run_until(10, |p, rs| {
            let b = &p.bbr;
            assert_eq!(b.mode, BbrMode::ProbeBw, "no PROBE_RTT while the queue drains to min RTT");
            let (t0, idx) = *phases.last().unwrap();
            if b.cycle_idx() != idx {
                assert_eq!(b.cycle_idx, (idx + 1) % 8, "phases in order");
                let len_us = (p.tp.now - t0).0 / 1_000;
                let min_rtt = u64::from(b.min_rtt_us);
                match idx {
                    0 => {
                        assert!(len_us > min_rtt);
                        let bdp = b.bdp(b.max_bw(), BBR_UNIT);
                        assert!(rs.prior_in_flight + 2 >= bdp * 5 / 4, "probe reached 5/4 BDP");
                    }
                    1 => assert!(len_us <= min_rtt + 1_500),
                    _ => assert!(len_us > min_rtt && len_us <= min_rtt + 1_500, "phase {idx}: {len_us} us"),
                }
                phases.push((p.tp.now, b.cycle_idx));
            }
            assert_eq!(b.gains().0, PACING_GAIN[b.cycle_idx as usize]);
            assert_eq!(p.tp.pacing_rate, rate_bytes_per_sec(MSS, u64::from(b.bw()), b.gains().0));
            p.tp.now >= end
        });
        // 3 s of ~8 x 41 ms cycles: every phase seen, several cycles complete.
        assert!(phases.len() > 3 * 8, "{} phase changes", phases.len());
        for idx in 0..8 {
            assert!(phases.iter().any(|&(_, i)| i == idx));
        }
    }

    /// bbr_update_min_rtt and bbr_check_probe_rtt_done (draft §4.3.5): when the path's RTT
    /// rises (a route change) the 41 ms min RTT is never matched again; 10 s after it was last
    /// seen BBR enters PROBE_RTT, holds cwnd at 4 packets for 200 ms and a round once the flight
    /// is down to 4, takes the new min RTT, then restores the window and returns to PROBE_BW.
    #[test]
    fn probe_rtt_when_min_rtt_is_10_s_old_holds_cwnd_4_for_200_ms_and_a_round_then_restores() {
        let mut p = FakePath::new(11);
        p.run_until(2, |p, _| p.tp.now >= SimTime(NS_PER_SEC));
        assert_eq!(p.bbr.mode, BbrMode::ProbeBw);
        let old_min = p.bbr.min_rtt_us;
        assert!(old_min.abs_diff(p.path_min_rtt_us()) <= 1);
        p.base_rtt = ms(50);
        let mut stamp = p.bbr.min_rtt_stamp;
        let mut cwnd_before = 0;
        p.run_until(20, |p, _| {
            if p.bbr.mode != BbrMode::ProbeRtt {
                stamp = p.bbr.min_rtt_stamp;
                cwnd_before = p.tp.cwnd;
                return false;
            }
            true
        });
        // Entered at the first ACK past 10 s (2500 jiffies) after the last 41 ms sample.
        let now_j = jiffies(p.tp.now);
        assert!(
            now_j > stamp + MIN_RTT_WIN_SEC * HZ && now_j <= stamp + MIN_RTT_WIN_SEC * HZ + 1,
            "{now_j} vs {stamp}"
        );
        assert_eq!(p.bbr.prior_cwnd, cwnd_before);
        assert!(p.tp.cwnd <= CWND_MIN_TARGET);
        // Any sample once the filter expired takes over the min RTT.
        assert!(p.bbr.min_rtt_us > old_min);
        let mut floor_at = None;
        p.run_until(20, |p, _| {
            if p.bbr.mode != BbrMode::ProbeRtt {
                return true;
            }
            assert!(p.tp.cwnd <= CWND_MIN_TARGET);
            assert!(p.tp.app_limited, "PROBE_RTT samples are marked application-limited");
            if floor_at.is_none() && p.bbr.probe_rtt_done_stamp != 0 {
                assert!(p.tp.in_flight <= CWND_MIN_TARGET);
                floor_at = Some(p.tp.now);
            }
            false
        });
        let held = p.tp.now - floor_at.expect("the flight fell to 4");
        assert!(held > ms(200), "held {held:?}");
        assert!(held < ms(200 + 2 * 52 + 8), "held {held:?}");
        assert_eq!(p.bbr.mode, BbrMode::ProbeBw);
        assert!(p.tp.cwnd >= cwnd_before, "window restored: {} < {cwnd_before}", p.tp.cwnd);
        assert!(p.bbr.min_rtt_us.abs_diff(p.path_min_rtt_us()) <= 1, "new min RTT {}", p.bbr.min_rtt_us);
        assert_eq!(p.bbr.min_rtt_stamp, jiffies(p.tp.now));
    }

    /// bbr_set_cwnd_to_recover_or_restore: entering Recovery cuts cwnd to in_flight + acked and
    /// keeps packet conservation for one round (cwnd >= in_flight + acked, losses taken off);
    /// after that round the window slow-starts again; leaving Recovery restores the window
    /// saved by bbr_ssthresh.
    #[test]
    fn losses_in_recovery_give_packet_conservation_then_restore_the_saved_window() {
        let (mut b, mut tp) = fresh(13);
        for _ in 0..3 {
            round(&mut b, &mut tp, 80, ms(40), false, 0);
        }
        assert_eq!(b.mode, BbrMode::Startup);
        tp.cwnd = 100;
        tp.in_flight = 90;
        assert_eq!(b.ssthresh(&tp), INFINITE_SSTHRESH);
        assert_eq!(b.prior_cwnd, 100);
        b.set_state(&mut tp, LinuxCaState::Recovery);
        tp.ca_state = LinuxCaState::Recovery;
        let in_round = |tp: &mut CcState, acked: u32, losses: u32| {
            tp.delivered += u64::from(acked);
            tp.lost += u64::from(losses);
            RateSample {
                delivered: u64::from(acked),
                interval: None,
                prior_delivered: 0,
                acked_sacked: acked,
                losses,
                prior_in_flight: tp.in_flight,
                rtt: None,
                app_limited: false,
                ack_delayed: false,
            }
        };
        // First ACK of Recovery: 5 lost, 2 delivered, 80 left in flight.
        tp.in_flight = 80;
        let rs = in_round(&mut tp, 2, 5);
        b.cong_control(&mut tp, &rs);
        assert!(b.packet_conservation);
        assert_eq!(tp.cwnd, 82);
        assert_eq!(b.next_rtt_delivered, tp.delivered);
        // Same round: one out, one in, and losses cannot cut below in_flight + acked.
        let rs = in_round(&mut tp, 1, 0);
        b.cong_control(&mut tp, &rs);
        assert_eq!(tp.cwnd, 82);
        let rs = in_round(&mut tp, 1, 3);
        b.cong_control(&mut tp, &rs);
        assert_eq!(tp.cwnd, 81);
        // The round ends: conservation stops, the window grows by what is delivered.
        tp.now += ms(40);
        let rs = RateSample {
            delivered: 40,
            interval: Some(ms(40)),
            prior_delivered: tp.delivered,
            acked_sacked: 3,
            prior_in_flight: 80,
            rtt: Some(ms(40)),
            ..RateSample::default()
        };
        tp.delivered += 3;
        b.cong_control(&mut tp, &rs);
        assert!(!b.packet_conservation);
        assert_eq!(tp.cwnd, 84);
        // Recovery ends: back to the saved 100, then on growing by what is acked.
        tp.ca_state = LinuxCaState::Open;
        let rs = in_round(&mut tp, 1, 0);
        b.cong_control(&mut tp, &rs);
        assert_eq!(tp.cwnd, 101);
        assert_eq!(b.prev_ca_state, LinuxCaState::Open);
    }

    /// bbr_update_bw with minmax_running_max over bbr_bw_rtts = 10 rounds (draft §4.1.1.5):
    /// a high sample is kept while it is at most 10 rounds old and forgotten the round after.
    #[test]
    fn the_bandwidth_filter_forgets_a_sample_after_10_rounds_minmax_running_max() {
        let (mut b, mut tp) = fresh(17);
        round(&mut b, &mut tp, 100, ms(40), false, 0);
        let high = bw_of(100, ms(40));
        let low = bw_of(50, ms(40));
        assert_eq!((b.rtt_cnt, b.max_bw()), (1, high));
        for age in 1..=10 {
            round(&mut b, &mut tp, 50, ms(40), false, 0);
            assert_eq!(b.rtt_cnt, 1 + age);
            assert_eq!(b.max_bw(), high, "{age} rounds old");
        }
        round(&mut b, &mut tp, 50, ms(40), false, 0);
        assert_eq!(b.max_bw(), low, "11 rounds old: forgotten");
    }

    /// The MaxFilter keeps runner-ups so that an expiring best gives way to the best of the
    /// rest (win_minmax.c), not to the newest sample.
    #[test]
    fn the_max_filter_falls_back_to_the_best_remaining_sample_minmax_subwin_update() {
        let mut f = MaxFilter::default();
        f.reset(0, 0);
        f.running_max(10, 1, 100);
        f.running_max(10, 4, 80); // after a quarter window: second choice
        f.running_max(10, 7, 60); // after half: third choice
        for t in 8..=11 {
            assert_eq!(f.running_max(10, t, 10), 100);
        }
        assert_eq!(f.running_max(10, 12, 10), 80);
        assert_eq!(f.running_max(10, 15, 10), 60);
        assert_eq!(f.running_max(10, 18, 10), 10);
    }

    /// bbr_update_bw (draft §4.1.1.4): an application-limited sample lower than the estimate
    /// is not put in the max filter, however long the application stays slow; a higher one is.
    #[test]
    fn app_limited_samples_do_not_lower_the_max_filter_bbr_update_bw() {
        let (mut b, mut tp) = fresh(19);
        round(&mut b, &mut tp, 100, ms(40), false, 0);
        let high = bw_of(100, ms(40));
        for _ in 0..30 {
            round(&mut b, &mut tp, 10, ms(40), true, 0);
            assert_eq!(b.max_bw(), high);
        }
        // An application-limited sample above the estimate still counts.
        round(&mut b, &mut tp, 120, ms(40), true, 0);
        assert_eq!(b.max_bw(), bw_of(120, ms(40)));
        // A network-limited low sample after the window does replace it.
        round(&mut b, &mut tp, 10, ms(40), false, 0);
        for _ in 0..10 {
            round(&mut b, &mut tp, 10, ms(40), false, 0);
        }
        assert_eq!(b.max_bw(), bw_of(10, ms(40)));
    }

    /// bbr_reset_probe_bw_mode: the first PROBE_BW phase is random but never the 3/4 draining
    /// phase, and here it is a function of the seed.
    #[test]
    fn probe_bw_starts_at_a_seeded_random_phase_other_than_the_drain_phase_bbr_reset_probe_bw_mode() {
        let mut seen = [0u32; 8];
        for seed in 0..400 {
            let mut a = Bbr::new(seed);
            let mut b = Bbr::new(seed);
            a.reset_probe_bw_mode();
            b.reset_probe_bw_mode();
            assert_eq!(a.cycle_idx, b.cycle_idx);
            assert_eq!(a.mode, BbrMode::ProbeBw);
            seen[a.cycle_idx as usize] += 1;
        }
        assert_eq!(seen[1], 0);
        for (i, n) in seen.iter().enumerate() {
            if i != 1 {
                assert!(*n > 30, "phase {i} drawn {n} times");
            }
        }
    }

    /// bbr_quantization_budget / bbr_min_tso_segs: 3 bursts of 2 packets (1 below 1.2 Mbit/s),
    /// rounded up to even, plus 2 in the 5/4 probing phase.
    #[test]
    fn quantization_budget_is_three_tso_goals_rounded_even_plus_two_in_phase_0() {
        let (mut b, mut tp) = fresh(23);
        tp.pacing_rate = 150_000;
        assert_eq!(b.quantization_budget(&tp, 35), 42);
        tp.pacing_rate = 149_999;
        assert_eq!(b.quantization_budget(&tp, 35), 38);
        tp.pacing_rate = 1_250_000;
        b.mode = BbrMode::ProbeBw;
        b.cycle_idx = 0;
        assert_eq!(b.quantization_budget(&tp, 36), 44);
        b.cycle_idx = 2;
        assert_eq!(b.quantization_budget(&tp, 36), 42);
        // No RTT yet: the BDP is the initial window whatever the gain.
        assert_eq!(b.bdp(1 << 30, HIGH_GAIN), TCP_INIT_CWND);
        b.min_rtt_us = 40_000;
        assert_eq!(b.bdp(bw_of(1, ms(1)), BBR_UNIT), 40);
        assert_eq!(b.bdp(bw_of(1, ms(1)), CWND_GAIN), 80);
    }

    /// bbr_cwnd_event: restarting from an application-limited idle period in PROBE_BW paces at
    /// 1.0 x the estimate, whatever the phase; PROBE_RTT is not entered during the restart.
    #[test]
    fn idle_restart_paces_at_the_estimated_bandwidth_bbr_cwnd_event() {
        let mut p = FakePath::new(29);
        p.run_until(5, |p, _| p.bbr.mode == BbrMode::ProbeBw && p.bbr.cycle_idx == 0);
        let bw = p.bbr.bw();
        assert_eq!(p.tp.pacing_rate, rate_bytes_per_sec(MSS, u64::from(bw), PACING_GAIN[0]));
        p.tp.app_limited = false;
        p.bbr.cwnd_event(&mut p.tp, CaEvent::TxStart);
        assert!(!p.bbr.idle_restart, "only an application-limited restart counts");
        p.tp.app_limited = true;
        p.bbr.cwnd_event(&mut p.tp, CaEvent::TxStart);
        assert!(p.bbr.idle_restart);
        assert_eq!(p.tp.pacing_rate, rate_bytes_per_sec(MSS, u64::from(bw), BBR_UNIT));
        // A min RTT 10 s old does not start PROBE_RTT on the ACK that ends the restart, and the
        // RTT sample it carries refreshes the filter.
        p.bbr.min_rtt_stamp = jiffies(p.tp.now).wrapping_sub(MIN_RTT_WIN_SEC * HZ + 1);
        p.step();
        assert_ne!(p.bbr.mode, BbrMode::ProbeRtt);
        assert!(!p.bbr.idle_restart);
        assert_eq!(p.bbr.min_rtt_stamp, jiffies(p.tp.now));
    }

    /// bbr_ssthresh saves the window (keeping the larger one while Recovery has cut it) and
    /// answers the current ssthresh; bbr_undo_cwnd restarts full-pipe detection and policer
    /// sampling and keeps the window; bbr_set_state(Loss) ends the round.
    #[test]
    fn ssthresh_saves_cwnd_and_undo_restarts_full_bw_detection_bbr_ssthresh_bbr_undo_cwnd() {
        let (mut b, mut tp) = fresh(31);
        tp.cwnd = 50;
        assert_eq!(b.ssthresh(&tp), INFINITE_SSTHRESH);
        assert_eq!(b.prior_cwnd, 50);
        b.prev_ca_state = LinuxCaState::Recovery;
        tp.cwnd = 20;
        b.ssthresh(&tp);
        assert_eq!(b.prior_cwnd, 50, "a window cut by Recovery is not saved over the old one");
        b.full_bw = 1234;
        b.full_bw_cnt = 2;
        b.lt_use_bw = true;
        b.lt_bw = 99;
        assert_eq!(b.undo_cwnd(&tp), 20);
        assert_eq!((b.full_bw, b.full_bw_cnt, b.lt_use_bw, b.lt_bw), (0, 0, false, 0));
        b.full_bw = 1234;
        b.set_state(&mut tp, LinuxCaState::Loss);
        assert_eq!((b.full_bw, b.round_start, b.prev_ca_state), (0, true, LinuxCaState::Loss));
        assert!(b.lt_is_sampling, "an RTO counts as a loss for policer detection");
    }

    /// bbr_lt_bw_sampling / bbr_lt_bw_interval_done: two consecutive lossy intervals of at
    /// least 4 rounds with the same delivery rate make BBR assume a policer and use that rate
    /// (pacing gain 1.0) for 48 rounds of PROBE_BW, then probe again.
    #[test]
    fn a_policer_is_detected_from_two_lossy_intervals_at_the_same_rate_bbr_lt_bw_sampling() {
        let (mut b, mut tp) = fresh(37);
        tp.in_flight = 0;
        // 80 packets per 40 ms delivered, 30 lost: 37 % loss.
        for i in 0..3 {
            round(&mut b, &mut tp, 80, ms(40), false, 30);
            assert!(b.lt_is_sampling);
            assert_eq!(b.lt_bw, 0, "round {i}: first interval not over");
        }
        // Sampling began at the first loss; the 4th round ends the interval: 240 packets
        // delivered since, over 120 ms.
        round(&mut b, &mut tp, 80, ms(40), false, 30);
        assert_eq!(b.lt_bw, bw_of(240, ms(120)));
        assert!(!b.lt_use_bw);
        for _ in 0..3 {
            round(&mut b, &mut tp, 80, ms(40), false, 30);
            assert!(!b.lt_use_bw);
        }
        round(&mut b, &mut tp, 80, ms(40), false, 30);
        assert!(b.lt_use_bw);
        assert_eq!(b.bw(), bw_of(80, ms(40)));
        // The max filter has the same here; what matters is that PROBE_BW does not probe.
        assert_eq!(b.mode, BbrMode::ProbeBw);
        assert_eq!(b.gains().0, BBR_UNIT);
        assert_eq!(tp.pacing_rate, rate_bytes_per_sec(MSS, u64::from(b.lt_bw), BBR_UNIT));
        for _ in 0..LT_BW_MAX_RTTS - 1 {
            round(&mut b, &mut tp, 80, ms(40), false, 0);
            assert!(b.lt_use_bw);
            assert_eq!(b.gains().0, BBR_UNIT);
        }
        round(&mut b, &mut tp, 80, ms(40), false, 0);
        assert!(!b.lt_use_bw, "after 48 rounds BBR stops trusting the policer estimate");
    }

    /// bbr_lt_bw_sampling: intervals that lose little, or that run out of data, are not taken.
    #[test]
    fn policer_sampling_ignores_light_losses_and_app_limited_intervals_bbr_lt_bw_sampling() {
        let (mut b, mut tp) = fresh(41);
        for _ in 0..12 {
            round(&mut b, &mut tp, 80, ms(40), false, 5); // 6 % loss
        }
        assert_eq!(b.lt_bw, 0);
        round(&mut b, &mut tp, 80, ms(40), true, 30);
        assert!(!b.lt_is_sampling);
    }

    /// bbr_update_ack_aggregation / bbr_ack_aggregation_cwnd: ACKs delivering more than the
    /// estimate explains raise the window by the excess once the pipe is full.
    #[test]
    fn aggregated_acks_raise_the_window_target_bbr_update_ack_aggregation() {
        let mut p = FakePath::new(43);
        p.run_until(5, |p, _| p.bbr.mode == BbrMode::ProbeBw);
        let before = p.bbr.extra_acked();
        // A stretch ACK: 20 packets 1 ms after the last delivery (the estimate explains ~1).
        let tp = &mut p.tp;
        tp.now += ms(1);
        tp.delivered += 20;
        let rs = RateSample {
            delivered: 40,
            interval: Some(ms(45)),
            prior_delivered: tp.delivered - 40,
            acked_sacked: 20,
            prior_in_flight: tp.in_flight,
            rtt: Some(ms(42)),
            ..RateSample::default()
        };
        p.bbr.cong_control(tp, &rs);
        // The excess is ~19 packets (all 20 if the epoch restarts here).
        assert!(before < 19 && p.bbr.extra_acked() >= 19, "{} -> {}", before, p.bbr.extra_acked());
        assert_eq!(p.bbr.ack_aggregation_cwnd(), p.bbr.extra_acked());
    }

    /// bbr_set_cwnd: the global clamp bounds the window in every mode.
    #[test]
    fn the_window_never_exceeds_the_clamp_bbr_set_cwnd() {
        let mut p = FakePath::new(47);
        p.tp.cwnd_clamp = 20;
        p.run_until(3, |p, _| {
            assert!(p.tp.cwnd <= 20);
            p.tp.now >= SimTime(2 * NS_PER_SEC)
        });
    }

    #[test]
    fn bbr_bursts_two_segments_except_below_1_2_mbit_per_s_bbr_min_tso_segs() {
        let b = Bbr::new(1);
        assert_eq!(b.min_tso_segs(149_999), 1);
        assert_eq!(b.min_tso_segs(150_000), 2);
    }
}
