//! CUBIC as Linux 6 runs it (net/ipv4/tcp_cubic.c), with the module's default parameters, and
//! its HyStart slow-start exit. Written afresh from the kernel's behaviour; the arithmetic is the
//! kernel's own fixed point (jiffies of 4 ms for the cubic epoch, 2^-10 s for the curve's time
//! axis, microseconds for delays and HyStart, the table-seeded integer cube root), so the windows
//! it produces are the kernel's to the packet.
//!
//! In short: after a reduction from `W_max`, cwnd follows `W(t) = C (t - K)^3 + W_max` with
//! `C = 0.4` (`bic_scale` 41 / 1024 x 10) and `K = cbrt(W_max (1 - beta) / C)`, `beta` = 717/1024,
//! where `t` counts from the first ACK of the epoch plus one minimum RTT; a Reno estimate keeps it
//! at least as fast as standard TCP (RFC 9438 section 4.3), and growth never exceeds one packet per
//! two acknowledged. HyStart leaves slow start (ssthresh = cwnd) when either ACKs arriving in a
//! close train span more than half the minimum RTT, or a round's minimum RTT rises clearly above
//! the connection's.

use super::{AckSample, CaEvent, CcState, LinuxCaState, LinuxCongestion};
use crate::units::SimTime;

// Module parameters, at their defaults.

/// `fast_convergence`: lower `W_max` further when a loss comes before the previous `W_max`.
const FAST_CONVERGENCE: bool = true;
/// `beta` in 1/1024: the window kept on a reduction (0.7).
const BETA: u32 = 717;
/// The scale of `BETA` (`BICTCP_BETA_SCALE`).
const BETA_SCALE: u32 = 1024;
/// `initial_ssthresh`: 0 leaves the sender's own.
const INITIAL_SSTHRESH: u32 = 0;
/// `bic_scale`: C x 1024 / 10, i.e. C = 41 x 10 / 1024 = 0.4.
const BIC_SCALE: u32 = 41;
/// `tcp_friendliness`: never grow more slowly than a Reno flow would.
const TCP_FRIENDLINESS: bool = true;
/// `hystart`: use HyStart to leave slow start.
const HYSTART: bool = true;
/// `hystart_detect` bit: the ACK-train test.
const HYSTART_ACK_TRAIN: u32 = 0x1;
/// `hystart_detect` bit: the delay-increase test.
const HYSTART_DELAY: u32 = 0x2;
/// `hystart_detect`: both tests.
const HYSTART_DETECT: u32 = HYSTART_ACK_TRAIN | HYSTART_DELAY;
/// `hystart_low_window`: HyStart judges nothing below this cwnd, packets.
const HYSTART_LOW_WINDOW: u32 = 16;
/// `hystart_ack_delta_us`: ACKs at most this far apart (us) belong to one train.
const HYSTART_ACK_DELTA_US: u32 = 2000;

/// RTT samples taken in a round before its minimum is judged (`HYSTART_MIN_SAMPLES`).
const HYSTART_MIN_SAMPLES: u8 = 8;
/// Floor of the delay-increase threshold, us (`HYSTART_DELAY_MIN`).
const HYSTART_DELAY_MIN: u32 = 4000;
/// Ceiling of the delay-increase threshold, us (`HYSTART_DELAY_MAX`).
const HYSTART_DELAY_MAX: u32 = 16000;

/// The curve's time axis counts 2^-10 s (`BICTCP_HZ`).
const BICTCP_HZ: u32 = 10;
/// Kernel timer frequency assumed for jiffies (CONFIG_HZ = 250: one jiffy is 4 ms).
const HZ: u32 = 250;
const NS_PER_JIFFY: u64 = 1_000_000_000 / HZ as u64;
const USEC_PER_JIFFY: u32 = 1_000_000 / HZ;
/// `sk_gso_max_size` of a usual device (`GSO_LEGACY_MAX_SIZE`), bytes.
const GSO_MAX_SIZE: u64 = 65536;

// Scale factors the module computes once when it registers (`cubictcp_register`).

/// The Reno estimate gains a packet per `cwnd x FRIENDLY_SCALE / 8` packets acknowledged:
/// 8 (1 + beta) / 3 / (1 - beta) in integer steps, 15 for beta = 717. This makes the estimate
/// grow 3 (1 - beta) / (1 + beta) packets per round, the AIMD rate of RFC 9438 section 4.3.
const FRIENDLY_SCALE: u32 = 8 * (BETA_SCALE + BETA) / 3 / (BETA_SCALE - BETA);
/// C x 2^10 over the reference RTT in the kernel's units (`cube_rtt_scale`): 410.
const CUBE_RTT_SCALE: u32 = BIC_SCALE * 10;
/// 2^40 / (C x 2^10) (`cube_factor`): `cubic_root(CUBE_FACTOR x (W_max - cwnd))` is K in 2^-10 s.
const CUBE_FACTOR: u64 = (1u64 << (10 + 3 * BICTCP_HZ)) / (BIC_SCALE as u64 * 10);

/// `tcp_jiffies32` at `t`.
fn jiffies(t: SimTime) -> u32 {
    (t.0 / NS_PER_JIFFY) as u32
}

/// `tcp_mstamp` truncated to 32 bits, as `bictcp_clock_us` reads it.
fn clock_us(t: SimTime) -> u32 {
    (t.0 / 1000) as u32
}

/// `usecs_to_jiffies`: whole jiffies, rounding up.
fn usecs_to_jiffies(us: u32) -> u32 {
    us.div_ceil(USEC_PER_JIFFY)
}

/// Index of the highest set bit counting from 1, 0 for 0 (`fls64`).
fn fls64(a: u64) -> u32 {
    64 - a.leading_zeros()
}

/// Seeds of the cube root for the top bits of its argument: for x in 0..64, about
/// cbrt(x x 2^18) - 1, hand-tuned in the kernel; the root of x itself is (seed + 10) / 64.
const CBRT_SEED: [u8; 64] = [
    0, 54, 54, 54, 118, 118, 118, 118, //
    123, 129, 134, 138, 143, 147, 151, 156, //
    157, 161, 164, 168, 170, 173, 176, 179, //
    181, 185, 187, 190, 192, 194, 197, 199, //
    200, 202, 204, 206, 209, 211, 213, 215, //
    217, 219, 221, 222, 224, 225, 227, 229, //
    231, 232, 234, 236, 237, 239, 240, 242, //
    244, 245, 246, 248, 250, 251, 252, 254, //
];

/// `cubic_root`: the integer cube root as the kernel approximates it. Small arguments are read
/// from the seed table directly; larger ones take the seed of their top six bits, scaled by the
/// number of bits above them divided by three, and refine it with a single Newton step (whose
/// division by 3 is done as x 341 / 1024). Within one of the true root, and within half a
/// percent of it for large arguments.
fn cubic_root(a: u64) -> u32 {
    let bits = fls64(a);
    if bits < 7 {
        return (u32::from(CBRT_SEED[a as usize]) + 35) >> 6;
    }
    // About bits / 3, less one: the bit groups of three below the top six bits.
    let b = ((bits * 84) >> 8) - 1;
    let top = (a >> (b * 3)) as usize;
    let x = ((u32::from(CBRT_SEED[top]) + 10) << b) >> 6;
    // One Newton step, x' = (2x + a / x^2) / 3, with x(x - 1) in place of x^2 as the kernel has it.
    let x = (2 * x).wrapping_add((a / (u64::from(x) * u64::from(x - 1))) as u32);
    x.wrapping_mul(341) >> 10
}

/// `hystart_ack_delay`: slack (us) added to the ACK-train threshold for the aggregation that
/// TSO/GRO causes, four 64 KB bursts at the pacing rate, at most 1 ms; none before the rate is
/// known.
fn hystart_ack_delay(tp: &CcState) -> u32 {
    if tp.pacing_rate == 0 {
        return 0;
    }
    (GSO_MAX_SIZE * 4 * 1_000_000 / tp.pacing_rate).min(1000) as u32
}

/// CUBIC's per-connection state (`struct bictcp`).
#[derive(Debug, Clone)]
pub struct Cubic {
    /// Packets to acknowledge per packet of growth (`cnt`).
    cnt: u32,
    /// `W_max`: cwnd before the last reduction, lowered by fast convergence (`last_max_cwnd`).
    last_max_cwnd: u32,
    /// cwnd when `cnt` was last computed (`last_cwnd`).
    last_cwnd: u32,
    /// Jiffies when `cnt` was last computed (`last_time`).
    last_time: u32,
    /// The curve's plateau, packets (`bic_origin_point`).
    bic_origin_point: u32,
    /// K, in 2^-10 s (`bic_K`).
    bic_k: u32,
    /// Minimum RTT seen, us; 0 before any (`delay_min`).
    delay_min: u32,
    /// Jiffies when the current growth epoch began; `None` between a reduction and the next
    /// growth (the kernel writes 0 for that).
    epoch_start: Option<u32>,
    /// Packets acknowledged towards the Reno estimate (`ack_cnt`).
    ack_cnt: u32,
    /// The Reno estimate of cwnd, packets (`tcp_cwnd`).
    tcp_cwnd: u32,
    /// RTT samples taken this round (`sample_cnt`).
    sample_cnt: u8,
    /// HyStart has ended slow start (`found`).
    found: bool,
    /// When this HyStart round began, us (`round_start`).
    round_start: u32,
    /// The round ends once `snd_una` passes this (`end_seq`).
    end_seq: u64,
    /// The last ACK of the current train, us (`last_ack`).
    last_ack: u32,
    /// This round's minimum RTT, us (`curr_rtt`).
    curr_rtt: u32,
}

impl Default for Cubic {
    fn default() -> Self {
        Self::new()
    }
}

impl Cubic {
    pub fn new() -> Self {
        Self {
            cnt: 0,
            last_max_cwnd: 0,
            last_cwnd: 0,
            last_time: 0,
            bic_origin_point: 0,
            bic_k: 0,
            delay_min: 0,
            epoch_start: None,
            ack_cnt: 0,
            tcp_cwnd: 0,
            sample_cnt: 0,
            found: false,
            round_start: 0,
            end_seq: 0,
            last_ack: 0,
            curr_rtt: u32::MAX,
        }
    }

    /// `bictcp_reset`: forget the curve, the minimum delay and HyStart's verdict.
    fn reset(&mut self) {
        self.cnt = 0;
        self.last_max_cwnd = 0;
        self.last_cwnd = 0;
        self.last_time = 0;
        self.bic_origin_point = 0;
        self.bic_k = 0;
        self.delay_min = 0;
        self.epoch_start = None;
        self.ack_cnt = 0;
        self.tcp_cwnd = 0;
        self.found = false;
    }

    /// `bictcp_hystart_reset`: start a HyStart round that ends when everything sent so far is
    /// acknowledged.
    fn hystart_reset(&mut self, tp: &CcState) {
        let now = clock_us(tp.now);
        self.round_start = now;
        self.last_ack = now;
        self.end_seq = tp.snd_nxt;
        self.curr_rtt = u32::MAX;
        self.sample_cnt = 0;
    }

    /// `bictcp_update`: set `cnt`, the packets to acknowledge per packet of growth, from the cubic
    /// curve and the Reno estimate. The curve is re-evaluated at most once a jiffy, and while
    /// cwnd stays the same at most every `HZ / 32` jiffies; the Reno estimate counts every ACK.
    fn update(&mut self, cwnd: u32, acked: u32, now: u32) {
        self.ack_cnt = self.ack_cnt.wrapping_add(acked);

        if self.last_cwnd == cwnd && (now.wrapping_sub(self.last_time) as i32) <= (HZ / 32) as i32 {
            return;
        }

        if !(self.epoch_start.is_some() && now == self.last_time) {
            self.last_cwnd = cwnd;
            self.last_time = now;
            self.update_curve(cwnd, acked, now);
        }

        if TCP_FRIENDLINESS {
            let per_packet = cwnd.wrapping_mul(FRIENDLY_SCALE) >> 3;
            while self.ack_cnt > per_packet {
                self.ack_cnt -= per_packet;
                self.tcp_cwnd += 1;
            }
            if self.tcp_cwnd > cwnd {
                // Reno would be ahead: grow at least as fast as it.
                let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
                self.cnt = self.cnt.min(max_cnt);
            }
        }

        // At most one packet per two acknowledged: 1.5 x per round.
        self.cnt = self.cnt.max(2);
    }

    /// The curve part of `bictcp_update`: open an epoch if none is running (K and the origin
    /// from `W_max`), then aim at the curve's value one minimum RTT ahead.
    fn update_curve(&mut self, cwnd: u32, acked: u32, now: u32) {
        let epoch_start = match self.epoch_start {
            Some(e) => e,
            None => {
                self.epoch_start = Some(now);
                self.ack_cnt = acked;
                self.tcp_cwnd = cwnd;
                if self.last_max_cwnd <= cwnd {
                    self.bic_k = 0;
                    self.bic_origin_point = cwnd;
                } else {
                    self.bic_k = cubic_root(CUBE_FACTOR * u64::from(self.last_max_cwnd - cwnd));
                    self.bic_origin_point = self.last_max_cwnd;
                }
                now
            }
        };

        // Elapsed time plus one minimum RTT, in jiffies, then in 2^-10 s.
        let mut t = i64::from(now.wrapping_sub(epoch_start) as i32) as u64;
        t = t.wrapping_add(u64::from(usecs_to_jiffies(self.delay_min)));
        t = (t << BICTCP_HZ) / u64::from(HZ);

        let k = u64::from(self.bic_k);
        let offs = k.abs_diff(t);
        // C x offs^3, back from 2^-30 s^3 and C's 2^10 scale to packets.
        let delta = (u64::from(CUBE_RTT_SCALE).wrapping_mul(offs).wrapping_mul(offs).wrapping_mul(offs)
            >> (10 + 3 * BICTCP_HZ)) as u32;
        let target = if t < k {
            self.bic_origin_point.wrapping_sub(delta)
        } else {
            self.bic_origin_point.wrapping_add(delta)
        };

        self.cnt = if target > cwnd { cwnd / (target - cwnd) } else { cwnd.wrapping_mul(100) };

        // No loss yet, so no idea of the capacity: at least 5 % growth per round.
        if self.last_max_cwnd == 0 && self.cnt > 20 {
            self.cnt = 20;
        }
    }

    /// `hystart_update`: one RTT sample (`delay`, us) during slow start.
    fn hystart_update(&mut self, tp: &mut CcState, delay: u32) {
        if tp.snd_una > self.end_seq {
            self.hystart_reset(tp);
        }

        if tp.cwnd < HYSTART_LOW_WINDOW {
            return;
        }

        if HYSTART_DETECT & HYSTART_ACK_TRAIN != 0 {
            let now = clock_us(tp.now);
            if (now.wrapping_sub(self.last_ack) as i32) <= HYSTART_ACK_DELTA_US as i32 {
                self.last_ack = now;
                let mut threshold = self.delay_min.wrapping_add(hystart_ack_delay(tp));
                // This module does not ask for pacing and the simulated host has no fq qdisc,
                // so the socket is not paced (SK_PACING_NONE) and a train spanning half the
                // minimum RTT is enough.
                threshold >>= 1;
                // The kernel compares the signed span with an unsigned threshold: unsigned.
                if now.wrapping_sub(self.round_start) > threshold {
                    self.found = true;
                    tp.ssthresh = tp.cwnd;
                }
            }
        }

        if HYSTART_DETECT & HYSTART_DELAY != 0 {
            self.curr_rtt = self.curr_rtt.min(delay);
            if self.sample_cnt < HYSTART_MIN_SAMPLES {
                self.sample_cnt += 1;
            } else {
                let thresh = (self.delay_min >> 3).clamp(HYSTART_DELAY_MIN, HYSTART_DELAY_MAX);
                if self.curr_rtt > self.delay_min.wrapping_add(thresh) {
                    self.found = true;
                    tp.ssthresh = tp.cwnd;
                }
            }
        }
    }
}

impl LinuxCongestion for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }

    /// `cubictcp_init`.
    fn init(&mut self, tp: &mut CcState) {
        self.reset();
        if HYSTART {
            self.hystart_reset(tp);
        }
        if !HYSTART && INITIAL_SSTHRESH != 0 {
            tp.ssthresh = INITIAL_SSTHRESH;
        }
    }

    /// `cubictcp_recalc_ssthresh`: end the epoch, remember `W_max` (lowered to (1 + beta) / 2 of
    /// cwnd when the loss came below the previous one) and keep beta of cwnd.
    fn ssthresh(&mut self, tp: &CcState) -> u32 {
        self.epoch_start = None;
        self.last_max_cwnd = if FAST_CONVERGENCE && tp.cwnd < self.last_max_cwnd {
            tp.cwnd.wrapping_mul(BETA_SCALE + BETA) / (2 * BETA_SCALE)
        } else {
            tp.cwnd
        };
        (tp.cwnd.wrapping_mul(BETA) / BETA_SCALE).max(2)
    }

    /// `cubictcp_cong_avoid`.
    fn cong_avoid(&mut self, tp: &mut CcState, acked: u32) {
        if let Some(acked) = tp.slow_start_first(acked) {
            self.update(tp.cwnd, acked, jiffies(tp.now));
            tp.cong_avoid_ai(self.cnt, acked);
        }
    }

    /// `cubictcp_state`: a timeout starts everything afresh.
    fn set_state(&mut self, tp: &mut CcState, new: LinuxCaState) {
        if new == LinuxCaState::Loss {
            self.reset();
            self.hystart_reset(tp);
        }
    }

    /// `cubictcp_cwnd_event`: after an idle period, move the epoch's start forward by the time
    /// nothing was sent, so the curve resumes where it stood (never past now).
    fn cwnd_event(&mut self, tp: &mut CcState, event: CaEvent) {
        if event != CaEvent::TxStart {
            return;
        }
        let now = jiffies(tp.now);
        let idle = now.wrapping_sub(jiffies(tp.last_send)) as i32;
        if let Some(start) = self.epoch_start {
            if idle > 0 {
                let mut start = start.wrapping_add(idle as u32);
                if (start.wrapping_sub(now) as i32) > 0 {
                    start = now;
                }
                self.epoch_start = Some(start);
            }
        }
    }

    /// `cubictcp_acked`: track the minimum RTT (not in the first second of an epoch, when the
    /// queue a reduction drains would still be in the samples) and feed HyStart during slow
    /// start.
    fn pkts_acked(&mut self, tp: &mut CcState, sample: &AckSample) {
        let Some(rtt) = sample.rtt else {
            return;
        };

        if let Some(start) = self.epoch_start {
            if (jiffies(tp.now).wrapping_sub(start) as i32) < HZ as i32 {
                return;
            }
        }

        let delay = ((rtt.0 / 1000) as u32).max(1);
        if self.delay_min == 0 || self.delay_min > delay {
            self.delay_min = delay;
        }

        if !self.found && tp.in_slow_start() && HYSTART {
            self.hystart_update(tp, delay);
        }
    }

    /// `tcp_reno_undo_cwnd`, which CUBIC uses.
    fn undo_cwnd(&mut self, tp: &CcState) -> u32 {
        tp.cwnd.max(tp.prior_cwnd)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::SimDuration;

    const MSS: u32 = 1448;

    fn ms(x: u64) -> SimDuration {
        SimDuration::from_millis(x)
    }

    fn sample(rtt: SimDuration) -> AckSample {
        AckSample { pkts_acked: 1, rtt: Some(rtt), in_flight: 0 }
    }

    /// A connection in congestion avoidance just after a reduction from `w_max` to beta x w_max,
    /// with a minimum RTT of `rtt` already measured, at time 10 s.
    fn after_reduction(w_max: u32, rtt: SimDuration) -> (Cubic, CcState) {
        let mut cc = Cubic::new();
        let mut tp = CcState::new(10, MSS, 100_000);
        tp.now = SimTime(10 * 1_000_000_000);
        cc.init(&mut tp);
        tp.ssthresh = 1; // not in slow start: no HyStart
        cc.pkts_acked(&mut tp, &sample(rtt));
        tp.cwnd = w_max;
        let ss = cc.ssthresh(&tp);
        tp.ssthresh = ss;
        tp.cwnd = ss;
        tp.cwnd_limited = true;
        (cc, tp)
    }

    /// One round trip of ACKs, one per packet of cwnd, evenly spread over `rtt`.
    fn one_round(cc: &mut Cubic, tp: &mut CcState, rtt: SimDuration) {
        let n = tp.cwnd as u64;
        for _ in 0..n {
            tp.now += SimDuration(rtt.0 / n);
            cc.pkts_acked(tp, &sample(rtt));
            cc.cong_avoid(tp, 1);
        }
    }

    /// C (t - K)^3 + W_max, RFC 9438 section 4.2, in floating point.
    fn w_cubic(t: f64, w_max: f64) -> f64 {
        let k = (w_max * (1.0 - BETA as f64 / 1024.0) / 0.4).cbrt();
        0.4 * (t - k).powi(3) + w_max
    }

    #[test]
    fn ssthresh_after_a_loss_is_717_1024ths_of_cwnd_cubictcp_recalc_ssthresh() {
        let mut cc = Cubic::new();
        let mut tp = CcState::new(10, MSS, 100_000);
        cc.init(&mut tp);
        tp.cwnd = 100;
        assert_eq!(cc.ssthresh(&tp), 70);
        assert_eq!(cc.last_max_cwnd, 100);
        tp.cwnd = 1000;
        assert_eq!(cc.ssthresh(&tp), 700);
        tp.cwnd = 2;
        assert_eq!(cc.ssthresh(&tp), 2);
    }

    #[test]
    fn fast_convergence_lowers_w_max_when_a_loss_comes_below_the_last_one_cubictcp_recalc_ssthresh() {
        let mut cc = Cubic::new();
        let mut tp = CcState::new(10, MSS, 100_000);
        cc.init(&mut tp);
        tp.cwnd = 100;
        cc.ssthresh(&tp);
        assert_eq!(cc.last_max_cwnd, 100);
        // Below the previous W_max: remember (1 + beta) / 2 of cwnd, 80 x 1741 / 2048 = 68.
        tp.cwnd = 80;
        cc.ssthresh(&tp);
        assert_eq!(cc.last_max_cwnd, 68);
        // Above it: remember cwnd itself.
        tp.cwnd = 90;
        cc.ssthresh(&tp);
        assert_eq!(cc.last_max_cwnd, 90);
    }

    #[test]
    fn cube_root_is_within_one_or_half_a_percent_of_the_true_root_cubic_root() {
        let mut a: u64 = 64;
        while a < (1u64 << 62) {
            for m in [a, a + a / 3, a + a / 2, a + 2 * a / 3] {
                let exact = (m as f64).cbrt();
                let got = f64::from(cubic_root(m));
                // An integer root: within one of the true root, and half a percent of it.
                assert!((got - exact).abs() < 1.0_f64.max(exact * 0.005), "cbrt({m}) = {got}, want {exact}");
            }
            a <<= 1;
        }
        // Small arguments come from the table: cbrt(27) = 3, cbrt(8) = 2, cbrt(1) = 1.
        assert_eq!(cubic_root(27), 3);
        assert_eq!(cubic_root(8), 2);
        assert_eq!(cubic_root(1), 1);
        // K for W_max - cwnd = 30 packets is cbrt(30 / 0.4) s = 4.217 s, in 2^-10 s.
        let k = f64::from(cubic_root(CUBE_FACTOR * 30)) / 1024.0;
        assert!((k - 4.217).abs() < 0.02, "K = {k}");
    }

    #[test]
    fn window_regains_w_max_about_k_seconds_after_the_reduction_bictcp_update_rfc9438_4_2() {
        let rtt = ms(100);
        let (mut cc, mut tp) = after_reduction(100, rtt);
        assert_eq!(tp.cwnd, 70);
        let start = tp.now;
        // K = cbrt(W_max (1 - beta) / C) = cbrt(30 / 0.4) = 4.22 s.
        let k = (100.0 * (1.0 - 717.0 / 1024.0) / 0.4f64).cbrt();
        let mut last_below = None;
        let mut first_above = None;
        let mut worst: f64 = 0.0;
        while tp.now.saturating_since(start).as_secs_f64() < k + 2.5 {
            one_round(&mut cc, &mut tp, rtt);
            let t = tp.now.saturating_since(start).as_secs_f64();
            if tp.cwnd < 99 {
                last_below = Some(t);
            }
            if first_above.is_none() && tp.cwnd > 101 {
                first_above = Some(t);
            }
            // The window follows the curve, which aims one minimum RTT ahead.
            if t > 0.3 {
                worst = worst.max((f64::from(tp.cwnd) - w_cubic(t + 0.1, 100.0)).abs());
            }
        }
        assert!(worst <= 2.0, "cwnd strayed {worst:.1} packets from the curve");
        // The curve is flat around W_max for a second either side of K, and symmetric about it:
        // the middle of its flat stretch is K (less the RTT it aims ahead).
        let (below, above) = (last_below.unwrap(), first_above.expect("never probed past W_max"));
        let middle = (below + above) / 2.0;
        assert!(below < k - 1.0 && above > k + 1.0, "flat from {below:.2} s to {above:.2} s");
        assert!((middle + 0.1 - k).abs() < 0.25, "plateau centred at {middle:.2} s, K = {k:.2} s");
    }

    #[test]
    fn tcp_friendliness_keeps_growth_at_least_renos_at_small_windows_bictcp_update_rfc9438_4_3() {
        // A window of 14 after a loss at 20, on a 20 ms path: the curve takes K = 2.47 s to climb
        // the 6 packets back, while Reno gains 3 (1 - beta) / (1 + beta) = 0.53 packets a round.
        let rtt = ms(20);
        let (mut cc, mut tp) = after_reduction(20, rtt);
        assert_eq!(tp.cwnd, 14);
        let start = tp.now;
        for _ in 0..100 {
            one_round(&mut cc, &mut tp, rtt);
        }
        let t = tp.now.saturating_since(start).as_secs_f64();
        let curve = w_cubic(t + 0.02, 20.0);
        assert!(curve < 20.0, "the curve alone would be at {curve:.1}");
        // Reno after 100 rounds: 14 + 100 x 8 / 15 = 67.
        assert!((64..=70).contains(&tp.cwnd), "cwnd {} after 100 rounds, Reno would be at 67", tp.cwnd);

        // On a 1 ms path the curve is re-evaluated once a jiffy (4 rounds) and in between cnt
        // only falls, so the kernel outruns Reno there; it never lags it.
        let rtt = ms(1);
        let (mut cc, mut tp) = after_reduction(20, rtt);
        for _ in 0..100 {
            one_round(&mut cc, &mut tp, rtt);
        }
        assert!(tp.cwnd >= 64, "cwnd {} after 100 rounds, Reno would be at 67", tp.cwnd);
    }

    #[test]
    fn growth_is_capped_at_one_packet_per_two_acknowledged_bictcp_update() {
        // Far past K the curve's target is far above cwnd: cnt would be 0 without the cap.
        let rtt = ms(100);
        let (mut cc, mut tp) = after_reduction(100, rtt);
        tp.now += SimDuration::from_secs(1);
        cc.cong_avoid(&mut tp, 1); // opens the epoch
        tp.now += SimDuration::from_secs(30);
        let before = tp.cwnd;
        cc.cong_avoid(&mut tp, 10);
        assert_eq!(cc.cnt, 2);
        assert_eq!(tp.cwnd, before + 5);
    }

    #[test]
    fn first_epoch_without_a_loss_grows_at_least_5_percent_per_round_bictcp_update() {
        let mut cc = Cubic::new();
        let mut tp = CcState::new(10, MSS, 100_000);
        cc.init(&mut tp);
        tp.cwnd = 200;
        tp.ssthresh = 200;
        tp.cwnd_limited = true;
        cc.cong_avoid(&mut tp, 1);
        // The curve starts flat at cwnd (W_max unknown), so cnt would be 100 x cwnd.
        assert_eq!(cc.cnt, 20);
        // With a W_max below cwnd the curve is still flat at the start, and no cap applies.
        let (mut cc, mut tp) = after_reduction(100, ms(100));
        tp.cwnd = 200;
        tp.now += SimDuration::from_secs(2);
        cc.cong_avoid(&mut tp, 1);
        assert!(cc.cnt > 20, "cnt {}", cc.cnt);
    }

    /// Slow start at `cwnd` from time 10 s: `init`, then per ACK one packet acknowledged and two
    /// sent, as slow start does.
    fn slow_start_at(cwnd: u32) -> (Cubic, CcState) {
        let mut cc = Cubic::new();
        let mut tp = CcState::new(10, MSS, 100_000);
        tp.now = SimTime(10 * 1_000_000_000);
        tp.cwnd = cwnd;
        tp.snd_nxt = u64::from(cwnd * MSS);
        cc.init(&mut tp);
        (cc, tp)
    }

    fn ss_ack(cc: &mut Cubic, tp: &mut CcState, gap: SimDuration, rtt: SimDuration) {
        tp.now += gap;
        tp.snd_una += u64::from(MSS);
        tp.snd_nxt += 2 * u64::from(MSS);
        cc.pkts_acked(tp, &sample(rtt));
    }

    /// ACKs at `gap` spacing with RTT `first` for one round, then `second` until HyStart fires or
    /// 3 more rounds pass; returns the cwnd at which ssthresh was set, if it was.
    fn hystart_rounds(cwnd: u32, gap: SimDuration, first: SimDuration, second: SimDuration) -> Option<u32> {
        let (mut cc, mut tp) = slow_start_at(cwnd);
        for _ in 0..cwnd {
            ss_ack(&mut cc, &mut tp, gap, first);
        }
        for _ in 0..3 * 4 * cwnd {
            ss_ack(&mut cc, &mut tp, gap, second);
            if tp.ssthresh != crate::tcp::linux::cc::INFINITE_SSTHRESH {
                assert!(cc.found);
                return Some(tp.ssthresh);
            }
        }
        None
    }

    #[test]
    fn hystart_delay_exits_slow_start_when_a_rounds_rtt_rises_past_the_threshold_hystart_update() {
        // delay_min 100 ms: threshold clamp(12.5 ms, 4, 16) = 12.5 ms. ACKs 5 ms apart: no train.
        let fired = hystart_rounds(32, ms(5), ms(100), ms(113));
        assert_eq!(fired, Some(32));
        let quiet = hystart_rounds(32, ms(5), ms(100), ms(112));
        assert_eq!(quiet, None);
        // A 20 ms path: threshold floors at 4 ms.
        assert_eq!(hystart_rounds(32, ms(5), ms(20), ms(25)), Some(32));
        assert_eq!(hystart_rounds(32, ms(5), ms(20), ms(23)), None);
    }

    #[test]
    fn hystart_delay_judges_a_round_only_after_8_samples_hystart_update() {
        let (mut cc, mut tp) = slow_start_at(32);
        // End the first round: all 32 packets acknowledged at 100 ms.
        for _ in 0..32 {
            ss_ack(&mut cc, &mut tp, ms(5), ms(100));
        }
        // The next ACK passes end_seq and opens a round; its first 8 samples only fill it, the
        // 9th is judged.
        for i in 0..8 {
            ss_ack(&mut cc, &mut tp, ms(5), ms(150));
            assert!(!cc.found, "fired on sample {i} of the round");
        }
        ss_ack(&mut cc, &mut tp, ms(5), ms(150));
        assert!(cc.found);
        assert_eq!(tp.ssthresh, 32);
    }

    #[test]
    fn hystart_does_not_fire_below_16_packets_hystart_low_window() {
        assert_eq!(hystart_rounds(15, ms(5), ms(100), ms(200)), None);
        assert_eq!(hystart_rounds(15, SimDuration::from_micros(500), ms(40), ms(40)), None);
        assert_eq!(hystart_rounds(16, ms(5), ms(100), ms(200)), Some(16));
    }

    #[test]
    fn hystart_ack_train_fires_when_close_acks_span_half_the_min_rtt_hystart_update() {
        // delay_min 40 ms, no pacing rate yet: the train must span more than 20 ms from the
        // round's start (here `init`). ACKs 1 ms apart: the 21st crosses.
        let (mut cc, mut tp) = slow_start_at(64);
        let mut acks = 0;
        while !cc.found && acks < 64 {
            ss_ack(&mut cc, &mut tp, ms(1), ms(40));
            acks += 1;
        }
        assert!(cc.found);
        assert_eq!(acks, 21);
        assert_eq!(tp.ssthresh, 64);
        // ACKs 3 ms apart are no train (> hystart_ack_delta_us), and the RTT is flat.
        assert_eq!(hystart_rounds(64, ms(3), ms(40), ms(40)), None);
    }

    #[test]
    fn ack_train_threshold_adds_the_tso_cushion_of_the_pacing_rate_hystart_ack_delay() {
        let mut tp = CcState::new(10, MSS, 100_000);
        assert_eq!(hystart_ack_delay(&tp), 0);
        tp.pacing_rate = 1_000_000; // 1 MB/s: 262 ms, capped at 1 ms
        assert_eq!(hystart_ack_delay(&tp), 1000);
        tp.pacing_rate = 1_048_576_000; // 4 x 64 KB at 1000 x 2^20 B/s: 250 us
        assert_eq!(hystart_ack_delay(&tp), 250);

        // ACKs 0.5 ms apart, delay_min 40 ms: without a rate the train must span more than
        // 20 ms (41 ACKs), with the 1 ms cushion more than 20.5 ms (42 ACKs).
        let train = |rate: u64| {
            let (mut cc, mut tp) = slow_start_at(64);
            tp.pacing_rate = rate;
            let mut acks = 0;
            while !cc.found && acks < 64 {
                ss_ack(&mut cc, &mut tp, SimDuration::from_micros(500), ms(40));
                acks += 1;
            }
            acks
        };
        assert_eq!(train(0), 41);
        assert_eq!(train(1_000_000), 42);
    }

    #[test]
    fn rtt_samples_are_ignored_for_a_second_after_the_epoch_starts_cubictcp_acked() {
        let (mut cc, mut tp) = after_reduction(100, ms(100));
        assert_eq!(cc.delay_min, 100_000);
        cc.cong_avoid(&mut tp, 1); // opens the epoch
        tp.now += ms(996);
        cc.pkts_acked(&mut tp, &sample(ms(50)));
        assert_eq!(cc.delay_min, 100_000);
        tp.now += ms(4);
        cc.pkts_acked(&mut tp, &sample(ms(50)));
        assert_eq!(cc.delay_min, 50_000);
        // Without a sample nothing changes; a zero sample counts as 1 us.
        cc.pkts_acked(&mut tp, &AckSample { pkts_acked: 1, rtt: None, in_flight: 0 });
        assert_eq!(cc.delay_min, 50_000);
        cc.pkts_acked(&mut tp, &sample(SimDuration::ZERO));
        assert_eq!(cc.delay_min, 1);
    }

    #[test]
    fn idle_time_moves_the_epoch_start_forward_cubictcp_cwnd_event() {
        let (mut cc, mut tp) = after_reduction(100, ms(100));
        for _ in 0..5 {
            one_round(&mut cc, &mut tp, ms(100));
        }
        let epoch = cc.epoch_start.unwrap();
        // The last packet left 100 ms before the last ACK; 2 s after that ACK the application
        // sends again: idle since that packet left (`lsndtime`), 2.1 s = 525 jiffies.
        tp.last_send = SimTime(tp.now.0 - ms(100).0);
        let last_sent = jiffies(tp.last_send);
        tp.now += SimDuration::from_secs(2);
        cc.cwnd_event(&mut tp, CaEvent::TxStart);
        assert_eq!(cc.epoch_start, Some(epoch + (jiffies(tp.now) - last_sent)));
        assert_eq!(jiffies(tp.now) - last_sent, 525);
        // Other events leave it alone; so does a start with no epoch running.
        cc.cwnd_event(&mut tp, CaEvent::CwndRestart);
        assert_eq!(cc.epoch_start, Some(epoch + 525));
        cc.ssthresh(&tp);
        tp.now += SimDuration::from_secs(2);
        cc.cwnd_event(&mut tp, CaEvent::TxStart);
        assert_eq!(cc.epoch_start, None);
    }

    #[test]
    fn idle_shift_never_moves_the_epoch_past_now_cubictcp_cwnd_event() {
        let (mut cc, mut tp) = after_reduction(100, ms(100));
        // Epoch opened now, with the last send 100 ms ago.
        tp.last_send = SimTime(tp.now.0 - ms(100).0);
        cc.cong_avoid(&mut tp, 1);
        tp.now += ms(40);
        cc.cwnd_event(&mut tp, CaEvent::TxStart);
        assert_eq!(cc.epoch_start, Some(jiffies(tp.now)));
    }

    #[test]
    fn a_timeout_forgets_w_max_and_restarts_hystart_cubictcp_state() {
        let (mut cc, mut tp) = slow_start_at(32);
        for _ in 0..40 {
            ss_ack(&mut cc, &mut tp, ms(5), ms(100));
        }
        tp.cwnd = 100;
        cc.ssthresh(&tp);
        cc.found = true;
        cc.set_state(&mut tp, LinuxCaState::Recovery);
        assert_eq!(cc.last_max_cwnd, 100);
        assert!(cc.found);
        cc.set_state(&mut tp, LinuxCaState::Loss);
        assert_eq!((cc.last_max_cwnd, cc.delay_min, cc.epoch_start), (0, 0, None));
        assert!(!cc.found);
        assert_eq!((cc.end_seq, cc.sample_cnt, cc.curr_rtt), (tp.snd_nxt, 0, u32::MAX));
    }

    #[test]
    fn undo_returns_to_the_cwnd_before_the_reduction_tcp_reno_undo_cwnd() {
        let mut cc = Cubic::new();
        let mut tp = CcState::new(10, MSS, 100_000);
        tp.cwnd = 70;
        tp.prior_cwnd = 100;
        assert_eq!(cc.undo_cwnd(&tp), 100);
        tp.cwnd = 120;
        assert_eq!(cc.undo_cwnd(&tp), 120);
        assert_eq!(cc.name(), "cubic");
    }

    #[test]
    fn a_window_that_does_not_limit_the_sending_does_not_grow_cubictcp_cong_avoid() {
        let (mut cc, mut tp) = after_reduction(100, ms(100));
        tp.cwnd_limited = false;
        tp.now += SimDuration::from_secs(10);
        cc.cong_avoid(&mut tp, 50);
        assert_eq!(tp.cwnd, 70);
        assert_eq!(cc.epoch_start, None);
        // Slow start hands only the packets left over at ssthresh to the curve.
        tp.cwnd_limited = true;
        tp.cwnd = 60;
        cc.cong_avoid(&mut tp, 5);
        assert_eq!(tp.cwnd, 65);
        assert_eq!(cc.epoch_start, None);
        cc.cong_avoid(&mut tp, 8);
        assert_eq!(tp.cwnd, 70);
        assert!(cc.epoch_start.is_some());
    }
}
