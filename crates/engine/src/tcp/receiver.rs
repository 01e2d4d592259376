//! The receiving half of a connection: in-order delivery to the application, the reassembly
//! queue, when to acknowledge (RFC 5681 §4.2, RFC 1122 §4.2.3.2), SACK blocks (RFC 2018) and the
//! timestamp echo with PAWS (RFC 7323 §4-5).

use super::linux::receive::{AckPlan, LinuxAcking, LinuxReceiveParams};
use super::segment::{SackBlocks, Segment};
use crate::energy::cpu::{Op, OpLog};
use crate::units::{on_tick, SimDuration, SimTime};

#[derive(Debug, Clone)]
pub struct ReceiverParams {
    pub sack: bool,
    pub max_sack_blocks: usize,
    pub timestamps: bool,
    /// Acknowledge every `delack_every` full-sized segments (0: on the timer only).
    pub delack_every: u32,
    pub delack_timeout: SimDuration,
    /// Also acknowledge at once once more than half of `window` has arrived since the last ACK
    /// (Linux 2.2's window-update test, `tcp_raise_window`).
    pub delack_window_update: bool,
    /// The delayed-ACK timer fires on boundaries of this tick (0 = exact).
    pub delack_tick: SimDuration,
    /// Bytes advertised: the application reads in-order data at once, so the window stays at
    /// the buffer size and the reassembly queue lives inside it (as BSD's sbspace does).
    pub window: u32,
    /// Full-sized segment length for the delayed-ACK count.
    pub mss: u32,
    /// RFC 3168 ECN negotiated.
    pub ecn: bool,
    /// Header prediction before the PAWS test (seed 003 §II-E "H2 first").
    pub predict_first: bool,
    /// Acknowledge every data packet at once, short ones too (E2TCP, seed 001 §2.1).
    pub ack_every_packet: bool,
    /// The application reads on demand ([`Receiver::read`]) instead of at once: the window is
    /// the buffer space its unread bytes leave (RFC 9293 §3.8.6), with receiver-side silly
    /// window avoidance; data beyond the advertised window is not accepted. Only a split
    /// connection's relay reads this way (docs/models/split.md).
    pub read_on_demand: bool,
    /// The Linux stack's acknowledgment policy and window (`tcp::linux::receive`), replacing
    /// the delayed-ACK and window settings above.
    pub linux: Option<LinuxReceiveParams>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReceiverCounters {
    pub data_segments_received: u64,
    pub duplicate_segments: u64,
    pub out_of_order_segments: u64,
    pub paws_rejected: u64,
    /// Reading on demand: segments with data beyond the advertised window (trimmed or dropped).
    pub beyond_window_segments: u64,
    /// Reading on demand: segments sent advertising a zero window.
    pub zero_windows_sent: u64,
}

#[derive(Debug, Clone)]
pub struct Receiver {
    params: ReceiverParams,
    /// Next sequence number expected (RFC 9293 RCV.NXT).
    pub rcv_nxt: u64,
    /// Out-of-order ranges held, sorted, disjoint, all above rcv_nxt.
    ooo: Vec<(u64, u64)>,
    /// Sequence number of the peer's FIN once seen.
    fin_seq: Option<u64>,
    pub fin_received: bool,
    /// The range of the most recent out-of-order arrival (first SACK block, RFC 2018 §4).
    last_ooo: Option<(u64, u64)>,
    /// Blocks reported in the last ACK, most recent first.
    reported: Vec<(u64, u64)>,
    /// The list reported before, kept for its allocation: the next ACK's choice is built in it.
    spare: Vec<(u64, u64)>,
    unacked_full: u32,
    delack_deadline: Option<SimTime>,
    ack_now: bool,
    /// RFC 7323 TS.Recent and Last.ACK.sent.
    ts_recent: u32,
    last_ack_sent: u64,
    /// RFC 3168 §6.1.3: set ECE on every ACK from a CE arrival until a CWR arrives.
    pub ece: bool,
    /// Application bytes delivered in order.
    pub delivered: u64,
    pub delivered_at: Option<SimTime>,
    /// Every `[start, end)` delivered to the application, in delivery order, when recording.
    pub delivery_log: Option<Vec<(u64, u64)>>,
    /// First-transmission time of each data packet held out of order, by its first byte.
    held_first_sent: std::collections::BTreeMap<u64, SimTime>,
    /// Per data packet, from its first transmission to its in-order delivery (ns).
    pub packet_latencies: Vec<u64>,
    /// Reading on demand: bytes the application has read (of `delivered`), and the right edge
    /// of the window last advertised (RCV.NXT + RCV.WND when it was sent).
    read: u64,
    adv_right: u64,
    /// The Linux stack's acknowledgment and window state.
    pub linux: Option<LinuxAcking>,
    /// The Linux stack: the RTO of this endpoint's sending half, which bounds the delayed-ACK
    /// timeout (set by the endpoint).
    pub sender_rto: SimDuration,
    /// CPU operations performed, for the world to charge.
    pub ops: OpLog,
    pub counters: ReceiverCounters,
}

impl Receiver {
    /// A receiver whose peer's SYN carried sequence number `irs`.
    pub fn new(params: ReceiverParams, irs: u64, syn_ts: Option<u32>) -> Self {
        Self {
            rcv_nxt: irs + 1,
            ooo: Vec::new(),
            fin_seq: None,
            fin_received: false,
            last_ooo: None,
            reported: Vec::new(),
            spare: Vec::new(),
            unacked_full: 0,
            delack_deadline: None,
            ack_now: true,
            ts_recent: syn_ts.unwrap_or(0),
            ece: false,
            last_ack_sent: irs + 1,
            delivered: 0,
            delivered_at: None,
            delivery_log: None,
            held_first_sent: Default::default(),
            packet_latencies: Vec::new(),
            read: 0,
            adv_right: irs + 1 + params.window as u64,
            linux: params.linux.clone().map(|p| LinuxAcking::new(p, irs + 1, SimTime::ZERO)),
            sender_rto: SimDuration::from_secs(1),
            params,
            ops: OpLog::default(),
            counters: ReceiverCounters::default(),
        }
    }

    pub fn deadline(&self) -> Option<SimTime> {
        self.delack_deadline
    }
    pub fn ts_recent(&self) -> u32 {
        self.ts_recent
    }
    pub fn ooo_ranges(&self) -> &[(u64, u64)] {
        &self.ooo
    }

    /// Whether an ACK should go out now.
    pub fn ack_due(&self, now: SimTime) -> bool {
        self.ack_now || self.delack_deadline.is_some_and(|d| d <= now)
    }

    /// Ask for an immediate ACK (e.g. a duplicate SYN or an unacceptable segment).
    pub fn request_ack(&mut self) {
        self.ack_now = true;
    }

    /// The delayed-ACK timer fired.
    pub fn on_timeout(&mut self, now: SimTime) {
        if self.delack_deadline.is_some_and(|d| d <= now) {
            self.ops.report(now, Op::TimerExpired);
            self.ack_now = true;
            if let Some(l) = &mut self.linux {
                l.on_delack_timer(self.sender_rto);
            }
        }
    }

    /// Process the payload and FIN of an incoming segment (not a SYN).
    pub fn on_segment(&mut self, now: SimTime, seg: &Segment) {
        let fin = seg.flags.contains(super::segment::Flags::FIN);
        if seg.len == 0 && !fin {
            // RFC 7323 §4.3: a pure ACK at the left window edge refreshes TS.Recent too, so a
            // data sender echoes its peer's latest clock. PAWS is not run on pure ACKs (Linux
            // exempts reordered ones), so nothing else changes.
            if let (true, Some(ts)) = (self.params.timestamps, seg.ts) {
                if seg.seq <= self.last_ack_sent && (ts.val.wrapping_sub(self.ts_recent) as i32) >= 0 {
                    self.ts_recent = ts.val;
                }
            }
            return;
        }
        let start = seg.seq;
        let mut end = start + seg.len as u64;
        let mut fin = fin;
        if seg.len > 0 {
            self.counters.data_segments_received += 1;
            self.ops.report(now, Op::SegmentReceived { bytes: seg.len });
        }
        if self.params.ecn {
            // CWR first: a CE mark on the same segment starts a new echo (RFC 3168 §6.1.3).
            if seg.flags.contains(super::segment::Flags::CWR) {
                self.ece = false;
            }
            if seg.ecn == super::segment::Ecn::Ce {
                self.ece = true;
            }
        }

        if self.params.timestamps {
            if let Some(ts) = seg.ts {
                // Seed 003 §II: with prediction first, a segment that header prediction accepts
                // (the next in sequence, nothing special) skips the PAWS test; others run it.
                let predicted = start == self.rcv_nxt && self.ooo.is_empty() && !fin;
                let check = !(self.params.predict_first && predicted);
                if check {
                    self.ops.report(now, Op::PawsCheck);
                }
                // RFC 7323 §5.3 R1: a segment older than TS.Recent is an old duplicate.
                if check && (ts.val.wrapping_sub(self.ts_recent) as i32) < 0 {
                    self.counters.paws_rejected += 1;
                    self.ack_now = true;
                    return;
                }
                if let Some(l) = &mut self.linux {
                    l.on_timestamp(seg.len, ts.ecr, super::sender::timestamp_ms(now));
                }
                // RFC 7323 §4.3: update TS.Recent from the segment at the left window edge (in
                // RFC 1323's form, which also asks that the segment reach past it).
                if start <= self.last_ack_sent && self.last_ack_sent < end + fin as u64 {
                    self.ts_recent = ts.val;
                }
            }
        }

        if self.params.read_on_demand && end > self.adv_right && end > self.rcv_nxt {
            // RFC 9293 §3.10.7.4: data beyond the window we advertised is not accepted (its
            // part inside the window is), and the segment is acknowledged at once. A bare FIN
            // needs no buffer space and passes, as in Linux's tcp_data_queue.
            self.counters.beyond_window_segments += 1;
            self.ack_now = true;
            if start >= self.adv_right {
                return;
            }
            end = self.adv_right;
            fin = false;
        }
        if fin {
            self.fin_seq = Some(end);
        }

        if end + fin as u64 <= self.rcv_nxt {
            // Entirely old: acknowledge at once (RFC 9293 §3.10.7.4).
            self.counters.duplicate_segments += 1;
            self.ops.report(now, Op::SlowPath);
            self.ack_now = true;
            if let Some(l) = &mut self.linux {
                l.on_duplicate((end > start).then_some((start, end)));
            }
            return;
        }

        if start > self.rcv_nxt {
            // A hole before this segment: queue it and send an immediate duplicate ACK
            // (RFC 5681 §4.2) carrying SACK blocks.
            self.counters.out_of_order_segments += 1;
            self.ops.report(now, Op::SlowPath);
            self.ops.report(now, Op::OutOfOrderQueued);
            let duplicate = self.ooo.iter().any(|&(s, e)| s <= start && end <= e);
            if end > start {
                self.insert_ooo(start, end);
                self.last_ooo = Some((start, end));
                self.held_first_sent.entry(start).or_insert(seg.first_sent);
            }
            if self.linux.is_none() {
                self.ack_now = true;
                return;
            }
            let ooo_bytes = self.ooo_bytes();
            let l = self.linux.as_mut().expect("checked");
            if duplicate {
                l.on_ooo_duplicate((start, end));
            } else {
                l.on_out_of_order(seg.len, ooo_bytes, self.params.sack);
            }
            let plan = l.plan(now, self.rcv_nxt, true, ooo_bytes);
            self.apply_plan(now, plan);
            return;
        }
        if start < self.rcv_nxt {
            if let Some(l) = &mut self.linux {
                // Partly old: its head is reported as a D-SACK (`tcp_dsack_set`).
                if l.dsack.is_none() && self.params.sack {
                    l.dsack = Some((start, self.rcv_nxt));
                }
            }
        }

        // In order (possibly overlapping what we have).
        let had_hole = !self.ooo.is_empty();
        let fast_path = start == self.rcv_nxt && !had_hole && !fin;
        self.ops.report(now, if fast_path { Op::FastPath } else { Op::SlowPath });
        if end > self.rcv_nxt && seg.len > 0 && !self.held_first_sent.contains_key(&start) {
            self.packet_latencies.push((now - seg.first_sent).0);
        }
        self.advance(end, now);
        while let Some(&(s, e)) = self.ooo.first() {
            if s > self.rcv_nxt {
                break;
            }
            self.ooo.remove(0);
            self.advance(e, now);
        }
        // Packets held out of order are delivered now too.
        while let Some((&s, &sent)) = self.held_first_sent.first_key_value() {
            if s >= self.rcv_nxt {
                break;
            }
            self.held_first_sent.remove(&s);
            self.packet_latencies.push((now - sent).0);
        }
        if self.fin_seq == Some(self.rcv_nxt) && !self.fin_received {
            self.rcv_nxt += 1;
            self.fin_received = true;
            self.ack_now = true;
        }
        if self.linux.is_some() {
            let ooo_bytes = self.ooo_bytes();
            let (rcv_nxt, ooo_nonempty, rto) = (self.rcv_nxt, !self.ooo.is_empty(), self.sender_rto);
            let l = self.linux.as_mut().expect("checked");
            if seg.len > 0 {
                l.on_in_order(now, seg.len, ooo_bytes, rto);
            }
            if had_hole && !ooo_nonempty {
                l.on_hole_filled();
            }
            if self.fin_received {
                self.ack_now = true;
            }
            // The application reads at once: autotuning measures what it read.
            let ooo_span = self.ooo.last().map_or(0, |&(_, e)| e - rcv_nxt);
            let l = self.linux.as_mut().expect("checked");
            l.on_read(now, rcv_nxt, ooo_span);
            let plan = l.plan(now, rcv_nxt, ooo_nonempty, ooo_bytes);
            self.apply_plan(now, plan);
            return;
        }
        if had_hole {
            // RFC 5681 §4.2: a segment that fills all or part of a gap is acknowledged at once.
            self.ack_now = true;
            return;
        }
        if seg.len >= self.params.mss {
            self.unacked_full += 1;
        }
        // Linux 2.2 tcp_raise_window: the window it could offer (the whole buffer, read at once)
        // is more than twice the one the peer knows (last ACK + window - RCV.NXT).
        let window_update = self.params.delack_window_update
            && 2 * (self.rcv_nxt - self.last_ack_sent) > self.params.window as u64;
        if self.params.ack_every_packet
            || (self.params.delack_every > 0 && self.unacked_full >= self.params.delack_every)
            || window_update
        {
            self.ack_now = true;
        } else if self.delack_deadline.is_none() {
            self.delack_deadline = Some(on_tick(now, self.params.delack_timeout, self.params.delack_tick));
            self.ops.report(now, Op::TimerSet);
        }
    }

    /// Bytes held in the out-of-order queue.
    fn ooo_bytes(&self) -> u64 {
        self.ooo.iter().map(|&(s, e)| e - s).sum()
    }

    /// Carry out the Linux policy's decision: acknowledge now, or by a time (keeping an
    /// earlier deadline, as `tcp_send_delayed_ack` does).
    fn apply_plan(&mut self, now: SimTime, plan: AckPlan) {
        match plan {
            AckPlan::Now => self.ack_now = true,
            AckPlan::At(t) => {
                if self.delack_deadline.is_none_or(|d| t < d) {
                    self.delack_deadline = Some(t);
                    self.ops.report(now, Op::TimerSet);
                }
            }
        }
    }

    /// Bytes delivered in order that the application has not read yet (always 0 unless it reads
    /// on demand: otherwise it reads everything at once).
    pub fn unread(&self) -> u64 {
        if self.params.read_on_demand {
            self.delivered - self.read
        } else {
            0
        }
    }

    /// The application reads up to `max` in-order bytes; returns how many it got. When the read
    /// frees a lot of space while the window the peer knows is small, a window update goes out
    /// at once: Linux's rule in tcp_cleanup_rbuf (the window the peer sees is at most half the
    /// buffer, and the new one at least twice it), so a reader that keeps up never adds ACKs.
    pub fn read(&mut self, max: u64) -> u64 {
        if !self.params.read_on_demand {
            return 0;
        }
        let n = max.min(self.unread());
        self.read += n;
        let known = self.adv_right.saturating_sub(self.rcv_nxt);
        if n > 0 && 2 * known <= self.params.window as u64 {
            let offered = self.offered_window();
            if offered > known && offered >= 2 * known {
                self.ack_now = true;
            }
        }
        n
    }

    /// Whether the application has read everything up to the peer's FIN.
    pub fn eof_read(&self) -> bool {
        self.fin_received && self.unread() == 0
    }

    /// The window to advertise now when reading on demand: the buffer space left (RFC 9293
    /// §3.8.6.2.2, receiver SWS avoidance) moves the right edge only by at least
    /// min(buffer / 2, MSS); otherwise the right edge stays where it was (never shrinks).
    fn offered_window(&self) -> u64 {
        let buffer = self.params.window as u64;
        let right = self.rcv_nxt + (buffer - self.unread().min(buffer));
        let step = (buffer / 2).min(self.params.mss as u64).max(1);
        if right >= self.adv_right + step {
            right - self.rcv_nxt
        } else {
            self.adv_right.saturating_sub(self.rcv_nxt)
        }
    }

    /// Start keeping a log of delivered byte ranges (tests check exactly-once, in-order delivery).
    pub fn record_deliveries(&mut self) {
        if self.delivery_log.is_none() {
            self.delivery_log = Some(Vec::new());
        }
    }

    fn advance(&mut self, end: u64, now: SimTime) {
        if end > self.rcv_nxt {
            if let Some(log) = &mut self.delivery_log {
                log.push((self.rcv_nxt, end));
            }
            self.delivered += end - self.rcv_nxt;
            self.rcv_nxt = end;
            self.delivered_at = Some(now);
        }
    }

    fn insert_ooo(&mut self, start: u64, end: u64) {
        let i = self.ooo.partition_point(|r| r.1 < start);
        let mut s = start;
        let mut e = end;
        let mut j = i;
        while j < self.ooo.len() && self.ooo[j].0 <= e {
            s = s.min(self.ooo[j].0);
            e = e.max(self.ooo[j].1);
            j += 1;
        }
        self.ooo.splice(i..j, std::iter::once((s, e)));
    }

    /// The ACK fields to send now: acknowledgment number and window, and the SACK blocks,
    /// written into `blocks` (empty; the segment's own, so they are not copied). Resets the
    /// delayed-ACK state.
    pub fn build_ack(&mut self, now: SimTime, blocks: &mut SackBlocks) -> (u64, u32) {
        let mut max_blocks = self.params.max_sack_blocks;
        if let Some(d) = self.linux.as_mut().and_then(|l| l.dsack.take()) {
            // RFC 2883 §4: the D-SACK block comes first; the others follow in what space is left.
            if self.params.sack {
                blocks.push(d.0, d.1);
                self.ops.report(now, Op::SackBlockGenerated);
                max_blocks = max_blocks.saturating_sub(1);
            }
        }
        if self.params.sack && !self.ooo.is_empty() {
            // RFC 2018 §4: the first block holds the most recent arrival; the others repeat the
            // most recently reported blocks; remaining holdings fill any space left.
            let containing = |x: u64| self.ooo.iter().copied().find(|r| r.0 <= x && x < r.1);
            let mut chosen = std::mem::take(&mut self.spare);
            chosen.clear();
            let candidates = self
                .last_ooo
                .iter()
                .map(|r| r.0)
                .chain(self.reported.iter().map(|r| r.0))
                .chain(self.ooo.iter().rev().map(|r| r.0));
            for left in candidates {
                if chosen.len() >= max_blocks {
                    break;
                }
                if let Some(r) = containing(left) {
                    if !chosen.contains(&r) {
                        chosen.push(r);
                    }
                }
            }
            for &(l, r) in &chosen {
                blocks.push(l, r);
                self.ops.report(now, Op::SackBlockGenerated);
            }
            self.spare = std::mem::replace(&mut self.reported, chosen);
        } else {
            self.reported.clear();
        }
        self.last_ooo = None;
        self.ack_now = false;
        self.unacked_full = 0;
        if self.delack_deadline.take().is_some() {
            self.ops.report(now, Op::TimerSet);
        }
        self.last_ack_sent = self.rcv_nxt;
        if !self.params.read_on_demand {
            if self.linux.is_some() {
                let ooo_bytes = self.ooo_bytes();
                let window = self.linux.as_mut().expect("checked").on_ack_sent(self.rcv_nxt, ooo_bytes);
                return (self.rcv_nxt, window.min(u32::MAX as u64) as u32);
            }
            return (self.rcv_nxt, self.params.window);
        }
        let window = self.offered_window();
        self.adv_right = self.rcv_nxt + window;
        if window == 0 {
            self.counters.zero_windows_sent += 1;
        }
        (self.rcv_nxt, window as u32)
    }
}
