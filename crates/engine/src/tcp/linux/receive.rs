//! The Linux receiver's acknowledgment policy and receive window (net/ipv4/tcp_input.c
//! `__tcp_ack_snd_check`, `tcp_event_data_recv`, `tcp_grow_window`, `tcp_rcv_space_adjust`,
//! `tcp_rcv_rtt_measure_ts`; tcp_output.c `__tcp_select_window`, `tcp_send_delayed_ack`).
//!
//! ACKs: immediately while in quick-ACK mode (the first segments of a connection, after an
//! out-of-order or duplicate segment, and whenever the window grows), when more than one
//! full-sized segment is unacknowledged, or when the out-of-order queue empties; the first three
//! duplicate ACKs for a hole at once and later ones compressed (at most one per min(1 ms, RTT/20),
//! or every 44); otherwise on the delayed-ACK timer, whose timeout (`ato`) adapts to the gaps
//! between segments from 40 ms up to the RTT.
//!
//! Window: the advertised window is the smaller of `rcv_ssthresh` (which grows by two segments
//! per segment received) and the buffer's free space as a window (`tcp_win_from_space`: a fixed
//! share of the buffer, the rest being per-packet overhead). With autotuning (dynamic right-sizing)
//! the buffer grows once per receiver-measured RTT to about twice what the application read in
//! that RTT (more while that grows), up to `tcp_rmem[2]`.

use super::timer_wheel::fire_time;
use crate::units::{SimDuration, SimTime};

/// TCP_MAX_QUICKACKS.
const MAX_QUICKACKS: u32 = 16;
/// TCP_FASTRETRANS_THRESH: duplicate ACKs sent at once before compression starts.
const FASTRETRANS_THRESH: u32 = 3;
/// net.ipv4.tcp_comp_sack_nr.
const COMP_SACK_NR: u32 = 44;
/// net.ipv4.tcp_comp_sack_delay_ns.
const COMP_SACK_DELAY: SimDuration = SimDuration(1_000_000);
/// TCP_ATO_MIN = TCP_DELACK_MIN = HZ / 25.
const ATO_MIN: SimDuration = SimDuration(40_000_000);
/// The delayed-ACK timeout's cap outside interactive mode (HZ / 2).
const ATO_MAX: SimDuration = SimDuration(500_000_000);

/// The settings of the Linux receiver.
#[derive(Debug, Clone, PartialEq)]
pub struct LinuxReceiveParams {
    /// Receive MSS (`rcv_mss`, `advmss`).
    pub mss: u32,
    /// The initial socket receive buffer (`tcp_rmem[1]`).
    pub rcvbuf: u64,
    /// The most autotuning may grow it to (`tcp_rmem[2]`); equal to `rcvbuf`: no autotuning.
    pub rcvbuf_max: u64,
    /// A clamp on the window (`TCP_WINDOW_CLAMP`), if the application set one.
    pub window_clamp: Option<u64>,
    /// Share of buffer space usable as window, in 1/256 (`scaling_ratio`).
    pub scaling_ratio: u64,
    /// The window scale the receiver announced.
    pub wscale: u8,
    /// SACK was negotiated: duplicate ACKs may be compressed (never without SACK, whose
    /// sender counts them).
    pub sack: bool,
    /// Send D-SACKs (RFC 2883; `net.ipv4.tcp_dsack`).
    pub dsack: bool,
    /// Acknowledge every segment (the route's quickack).
    pub quickack_always: bool,
    /// The delayed-ACK timer's granularity (a jiffy).
    pub jiffy: SimDuration,
}

impl LinuxReceiveParams {
    /// `tcp_win_from_space`.
    fn win_from_space(&self, space: u64) -> u64 {
        space * self.scaling_ratio / 256
    }
    /// `tcp_space_from_win`.
    fn space_from_win(&self, win: u64) -> u64 {
        win * 256 / self.scaling_ratio.max(1)
    }
}

/// What to do about acknowledging after a segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AckPlan {
    Now,
    At(SimTime),
}

#[derive(Debug, Clone)]
pub struct LinuxAcking {
    p: LinuxReceiveParams,
    /// Quick-ACK credit (`icsk_ack.quick`).
    quick: u32,
    /// The delayed-ACK timeout (`icsk_ack.ato`); zero until the first data segment.
    ato: SimDuration,
    /// Last data arrival (`lrcvtime`).
    last_rcv: Option<SimTime>,
    /// An ACK must go at once (`ICSK_ACK_NOW`).
    ack_now: bool,
    /// SACK compression (`compressed_ack_rcv_nxt`, `dup_ack_counter`, `compressed_ack`).
    compressed_rcv_nxt: u64,
    dup_acks: u32,
    compressed: u32,
    /// rcv_nxt when the last ACK (window update) went out (`rcv_wup`).
    pub rcv_wup: u64,
    /// The right edge last advertised (`rcv_wup + rcv_wnd`).
    right_edge: u64,
    rcvbuf: u64,
    window_clamp: u64,
    rcv_ssthresh: u64,
    /// Dynamic right-sizing (`rcvq_space`): bytes read in the last measured RTT, and where and
    /// when the current measurement started.
    space: u64,
    space_seq: u64,
    space_time: SimTime,
    /// The receiver's RTT estimate from timestamps (`rcv_rtt_est`), and the last TSecr used.
    rcv_rtt: Option<SimDuration>,
    last_tsecr: u32,
    /// The sender side's smoothed RTT, bounding the delayed-ACK timeout.
    pub srtt: Option<SimDuration>,
    /// A D-SACK block to report in the next ACK (`tcp_dsack_set`).
    pub dsack: Option<(u64, u64)>,
}

impl LinuxAcking {
    /// The receiving side of a connection whose first data byte is `rcv_nxt`, at `now`.
    pub fn new(p: LinuxReceiveParams, rcv_nxt: u64, now: SimTime) -> Self {
        let full = p.win_from_space(p.rcvbuf);
        let window_clamp = p.window_clamp.map_or(full, |c| c.min(full));
        // tcp_select_initial_window: the buffer at the default ratio (half), whole segments, at
        // most 64 KiB unscaled; tcp_init_buffer_space: the first measurement expects ten
        // segments per RTT.
        let initial = ((p.rcvbuf / 2).min(65_535) / p.mss as u64 * p.mss as u64).min(window_clamp).max(p.mss as u64);
        let space = initial.min(10 * p.mss as u64);
        Self {
            quick: 0,
            ato: SimDuration(0),
            last_rcv: None,
            ack_now: false,
            compressed_rcv_nxt: rcv_nxt,
            dup_acks: 0,
            compressed: 0,
            rcv_wup: rcv_nxt,
            right_edge: rcv_nxt + initial,
            rcvbuf: p.rcvbuf,
            window_clamp,
            rcv_ssthresh: initial,
            space,
            space_seq: rcv_nxt,
            space_time: now,
            rcv_rtt: None,
            last_tsecr: 0,
            srtt: None,
            dsack: None,
            p,
        }
    }

    pub fn rcvbuf(&self) -> u64 {
        self.rcvbuf
    }
    pub fn window_clamp(&self) -> u64 {
        self.window_clamp
    }

    /// `tcp_incr_quickack`.
    fn incr_quickack(&mut self, max: u32) {
        let window = self.right_edge - self.rcv_wup;
        let quickacks = ((window / (2 * self.p.mss as u64)) as u32).max(2).min(max);
        self.quick = self.quick.max(quickacks);
    }

    /// `tcp_enter_quickack_mode`.
    fn enter_quickack_mode(&mut self) {
        self.incr_quickack(MAX_QUICKACKS);
        self.ato = ATO_MIN;
    }

    /// `tcp_rcv_rtt_measure_ts`: a full-sized data segment echoing a new timestamp of ours.
    pub fn on_timestamp(&mut self, len: u32, tsecr: u32, now_ts: u32) {
        if tsecr == 0 || tsecr == self.last_tsecr {
            return;
        }
        self.last_tsecr = tsecr;
        if len < self.p.mss {
            return;
        }
        let sample = SimDuration::from_millis(now_ts.wrapping_sub(tsecr) as u64);
        self.rcv_rtt = Some(match self.rcv_rtt {
            None => sample,
            Some(r) => SimDuration(((r.0 as i64) + (sample.0 as i64 - r.0 as i64) / 8) as u64),
        });
    }

    /// Free space as a window: the buffer less what the out-of-order queue holds (`tcp_space`).
    fn free_space(&self, ooo_bytes: u64) -> u64 {
        self.p.win_from_space(self.rcvbuf).saturating_sub(ooo_bytes)
    }

    /// `tcp_grow_window`: each segment lets `rcv_ssthresh` grow by two segments, up to the
    /// clamp and the free space; growing asks for a quick ACK.
    fn grow_window(&mut self, len: u32, ooo_bytes: u64) {
        let room = self.window_clamp.min(self.free_space(ooo_bytes)).saturating_sub(self.rcv_ssthresh);
        if room == 0 || len < 128 {
            return;
        }
        let incr = (2 * self.p.mss as u64).max(2 * len as u64);
        self.rcv_ssthresh += room.min(incr);
        self.quick |= 1;
    }

    /// An in-order data segment of `len` bytes arrived (`tcp_event_data_recv`): adapt the
    /// delayed-ACK timeout to the gap since the last one and grow the window.
    pub fn on_in_order(&mut self, now: SimTime, len: u32, ooo_bytes: u64, rto: SimDuration) {
        if self.ato.0 == 0 {
            // The first data segment starts the delayed-ACK machinery in quick-ACK mode.
            self.incr_quickack(MAX_QUICKACKS);
            self.ato = ATO_MIN;
        } else if let Some(last) = self.last_rcv {
            let m = now - last;
            if m.0 <= ATO_MIN.0 / 2 {
                self.ato = SimDuration(self.ato.0 / 2 + ATO_MIN.0 / 2);
            } else if m < self.ato {
                self.ato = SimDuration((self.ato.0 / 2 + m.0).min(rto.0));
            } else if m > rto {
                // A long silence: the sender may restart slowly; acknowledge quickly.
                self.incr_quickack(MAX_QUICKACKS);
            }
        }
        self.last_rcv = Some(now);
        self.grow_window(len, ooo_bytes);
    }

    /// An out-of-order segment was queued (`tcp_data_queue_ofo`): the window grows only with
    /// SACK, so a connection without it keeps sending pure duplicate ACKs.
    pub fn on_out_of_order(&mut self, len: u32, ooo_bytes: u64, sack: bool) {
        if sack {
            self.grow_window(len, ooo_bytes);
        }
    }

    /// A segment wholly or partly below `rcv_nxt`, or out of the window: acknowledge at once
    /// in quick-ACK mode, reporting `dup` as a D-SACK if enabled.
    pub fn on_duplicate(&mut self, dup: Option<(u64, u64)>) {
        if let (true, Some(d)) = (self.p.dsack, dup) {
            self.dsack = Some(d);
        }
        self.enter_quickack_mode();
        self.ack_now = true;
    }

    /// A duplicate of data already held out of order: reported as a D-SACK.
    pub fn on_ooo_duplicate(&mut self, dup: (u64, u64)) {
        if self.p.dsack {
            self.dsack = Some(dup);
        }
        self.ack_now = true;
    }

    /// The out-of-order queue emptied (a hole filled): acknowledge at once (RFC 5681 §4.2).
    pub fn on_hole_filled(&mut self) {
        self.ack_now = true;
    }

    /// The application read everything up to `copied` at `now` (`tcp_rcv_space_adjust` with
    /// `tcp_rcvbuf_grow`, Linux 6.18): once per receiver RTT, if more was read than in the last
    /// measured RTT, the buffer becomes twice that as a window, more again in proportion to the
    /// growth (a sender in slow start doubles), plus what the out-of-order queue spans, up to
    /// `tcp_rmem[2]`; the window clamp follows.
    pub fn on_read(&mut self, now: SimTime, copied: u64, ooo_span: u64) {
        let Some(rtt) = self.rcv_rtt else { return };
        if now - self.space_time < rtt {
            return;
        }
        let read = copied - self.space_seq;
        if read > self.space {
            let old = self.space.max(1);
            self.space = read;
            if self.p.rcvbuf_max > self.p.rcvbuf {
                let mut rcvwin = 2 * read;
                rcvwin += 2 * (rcvwin * (read - old) / old);
                rcvwin += ooo_span;
                let rcvbuf = self.p.space_from_win(rcvwin).min(self.p.rcvbuf_max);
                if rcvbuf > self.rcvbuf {
                    self.rcvbuf = rcvbuf;
                    let clamp = self.p.win_from_space(rcvbuf);
                    self.window_clamp = self.p.window_clamp.map_or(clamp, |c| c.min(clamp).max(self.window_clamp.min(c)));
                }
            }
        }
        self.space_seq = copied;
        self.space_time = now;
    }

    /// `__tcp_ack_snd_check`: after a data segment, whether to acknowledge now, at a time, or
    /// leave the timer as it is.
    pub fn plan(&mut self, now: SimTime, rcv_nxt: u64, ooo_nonempty: bool, ooo_bytes: u64) -> AckPlan {
        let full_frame = rcv_nxt - self.rcv_wup > self.p.mss as u64 && self.select_window(rcv_nxt, ooo_bytes) >= self.right_edge.saturating_sub(self.rcv_wup);
        if full_frame || self.quick > 0 || self.ack_now || self.p.quickack_always {
            return AckPlan::Now;
        }
        if !ooo_nonempty {
            return AckPlan::At(fire_time(now, self.delack_timeout(), self.p.jiffy));
        }
        // SACK compression: the first duplicate ACKs for this rcv_nxt at once, then batched.
        if !self.p.sack || self.compressed >= COMP_SACK_NR {
            return AckPlan::Now;
        }
        if self.compressed_rcv_nxt != rcv_nxt {
            self.compressed_rcv_nxt = rcv_nxt;
            self.dup_acks = 0;
        }
        if self.dup_acks < FASTRETRANS_THRESH {
            self.dup_acks += 1;
            return AckPlan::Now;
        }
        self.compressed += 1;
        let rtt = match (self.rcv_rtt, self.srtt) {
            (Some(r), Some(s)) => r.min(s),
            (r, s) => r.or(s).unwrap_or(SimDuration::from_millis(100)),
        };
        AckPlan::At(now + COMP_SACK_DELAY.min(SimDuration(rtt.0 / 20)))
    }

    /// `tcp_send_delayed_ack`: the adaptive timeout, at most the RTT (and 500 ms).
    fn delack_timeout(&self) -> SimDuration {
        let mut ato = self.ato.max(ATO_MIN);
        if ato > ATO_MIN {
            let mut max_ato = ATO_MAX;
            if let Some(srtt) = self.srtt {
                max_ato = max_ato.min(srtt.max(ATO_MIN));
            }
            ato = ato.min(max_ato);
        }
        ato
    }

    /// The delayed-ACK timer fired without an ACK having gone: double the timeout.
    pub fn on_delack_timer(&mut self, rto: SimDuration) {
        self.ato = SimDuration((self.ato.0 * 2).min(rto.0)).max(ATO_MIN);
    }

    /// `__tcp_select_window`: the window to offer now.
    fn select_window(&self, _rcv_nxt: u64, ooo_bytes: u64) -> u64 {
        let unit = 1u64 << self.p.wscale;
        let free = self.free_space(ooo_bytes) / unit * unit;
        let window = free.min(self.rcv_ssthresh).min(self.window_clamp.max(self.p.mss as u64));
        window.div_ceil(unit) * unit
    }

    /// An ACK goes out now (`tcp_select_window` and `tcp_event_ack_sent`): the window it
    /// carries (never shrinking the right edge) and the quick-ACK credit it uses.
    pub fn on_ack_sent(&mut self, rcv_nxt: u64, ooo_bytes: u64) -> u64 {
        let mut window = self.select_window(rcv_nxt, ooo_bytes);
        let current = self.right_edge.saturating_sub(rcv_nxt);
        if window < current {
            let unit = 1u64 << self.p.wscale;
            window = current.div_ceil(unit) * unit;
        }
        self.right_edge = rcv_nxt + window;
        self.rcv_wup = rcv_nxt;
        if self.quick > 0 {
            self.quick -= 1;
            if self.quick == 0 {
                self.ato = ATO_MIN;
            }
        }
        self.ack_now = false;
        self.compressed = 0;
        window
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> LinuxReceiveParams {
        LinuxReceiveParams {
            mss: 1448,
            rcvbuf: 131_072,
            rcvbuf_max: 33_554_432,
            window_clamp: None,
            scaling_ratio: 160,
            wscale: 10,
            sack: true,
            dsack: true,
            quickack_always: false,
            jiffy: SimDuration::from_millis(4),
        }
    }

    fn ms(n: u64) -> SimTime {
        SimTime(n * 1_000_000)
    }

    #[test]
    fn the_first_segments_are_acknowledged_one_by_one_in_quickack_mode_tcp_incr_quickack() {
        let mut a = LinuxAcking::new(params(), 1, ms(0));
        let mut now_acks = 0;
        for k in 0..40u64 {
            a.on_in_order(ms(k), 1448, 0, SimDuration::from_millis(200));
            if a.plan(ms(k), 1 + 1448 * (k + 1), false, 0) == AckPlan::Now {
                now_acks += 1;
                a.on_ack_sent(1 + 1448 * (k + 1), 0);
            }
        }
        // Quick ACKs at first and while the window grows; then every second segment.
        assert!(now_acks > 20, "{now_acks}");
        assert!(now_acks < 40, "{now_acks}");
    }

    #[test]
    fn more_than_one_full_segment_unacknowledged_is_acknowledged_at_once_tcp_ack_snd_check() {
        let mut a = LinuxAcking::new(params(), 1, ms(0));
        a.quick = 0;
        a.ato = ATO_MIN;
        a.rcv_ssthresh = a.window_clamp; // no growth, so no quick ACK from it
        assert!(matches!(a.plan(ms(1), 1 + 1448, false, 0), AckPlan::At(_)), "one segment waits");
        assert_eq!(a.plan(ms(2), 1 + 2 * 1448, false, 0), AckPlan::Now, "two go at once");
    }

    #[test]
    fn duplicate_acks_beyond_the_third_for_a_hole_are_compressed_tcp_sack_compress() {
        let mut a = LinuxAcking::new(params(), 1, ms(0));
        a.quick = 0;
        a.rcv_ssthresh = a.window_clamp;
        let plans: Vec<AckPlan> = (0..5).map(|k| a.plan(ms(10 + k), 1, true, 1448 * (k + 1))).collect();
        assert_eq!(&plans[..3], &[AckPlan::Now; 3]);
        assert!(matches!(plans[3], AckPlan::At(t) if t <= ms(14) + SimDuration::from_millis(1)));
    }

    #[test]
    fn autotuning_grows_the_buffer_to_twice_what_one_rtt_delivered_tcp_rcv_space_adjust() {
        let mut a = LinuxAcking::new(params(), 1, ms(0));
        a.rcv_rtt = Some(SimDuration::from_millis(100));
        a.on_read(ms(100), 1 + 200_000, 0);
        assert!(a.window_clamp() >= 400_000, "at least twice what one RTT delivered: {}", a.window_clamp());
        // Less than the last RTT read: no growth.
        let clamp = a.window_clamp();
        a.on_read(ms(200), 1 + 300_000, 0);
        assert_eq!(a.window_clamp(), clamp);
        // Without autotuning the buffer stays.
        let mut fixed = LinuxAcking::new(LinuxReceiveParams { rcvbuf_max: 131_072, ..params() }, 1, ms(0));
        fixed.rcv_rtt = Some(SimDuration::from_millis(100));
        fixed.on_read(ms(100), 1 + 200_000, 0);
        assert_eq!(fixed.rcvbuf(), 131_072);
    }

    #[test]
    fn the_advertised_right_edge_never_moves_left_rfc9293_s3_8_6() {
        let mut a = LinuxAcking::new(params(), 1, ms(0));
        let w1 = a.on_ack_sent(1, 0);
        // A large out-of-order backlog takes buffer space: the window shrinks only as far as
        // keeping the right edge.
        let w2 = a.on_ack_sent(1 + 1448, 80_000);
        assert!(1 + 1448 + w2 >= 1 + w1);
    }
}
