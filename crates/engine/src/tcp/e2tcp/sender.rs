//! The E2TCP sender (seed 001 §2): per-packet loss detection from SACK, immediate retransmission,
//! the loss-driven window of `window.rs` and the two timers of `timers.rs`.
//!
//! Numbering. The wire carries packet numbers (`header::packet_number`); inside the engine the
//! sender keeps the byte offsets the receiver and the capture share, which map one to one onto
//! packet numbers because every packet but the last is `smss` bytes long.
//!
//! Loss detection. E2TCP runs over one hop, which never reorders: when the receiver reports a
//! packet, every packet sent before it and not yet reported is lost. The sender numbers its sends
//! (first transmissions and retransmissions alike) and applies exactly that rule, so a lost
//! retransmission is detected like any other loss, as soon as a later send is reported.

use super::timers::{TimerKind, TwoTimers};
use super::window::{E2tcpWindow, Reading};
use crate::config::{E2tcpConfig, TcpConfig};
use crate::energy::cpu::{Op, OpLog};
use crate::tcp::rtt::RttEstimator;
use crate::tcp::segment::Segment;
use crate::tcp::send_half::{SendHalf, SenderState, NO_SSTHRESH};
use crate::tcp::sender::{OutSegment, SenderCounters};
use crate::tcp::stream::{SendStream, ISS};
use crate::tcp::tcb::CaState;
use crate::units::{SimDuration, SimTime};
use std::collections::VecDeque;

/// One packet sent and not yet cumulatively acknowledged.
#[derive(Debug, Clone, Copy)]
struct Packet {
    seq: u64,
    len: u32,
    syn: bool,
    fin: bool,
    sacked: bool,
    /// Deemed lost and waiting for its retransmission.
    lost: bool,
    /// Its last send was a retransmission: the retransmission timer watches it.
    retransmitted: bool,
    ever_retransmitted: bool,
    /// Order of its last send among all sends.
    order: u64,
    sent_at: SimTime,
    first_sent: SimTime,
}

impl Packet {
    fn end(&self) -> u64 {
        self.seq + self.len as u64 + self.syn as u64 + self.fin as u64
    }
    /// On its way: neither reported nor deemed lost.
    fn outstanding(&self) -> bool {
        !self.sacked && !self.lost
    }
    fn class(&self) -> Class {
        match (self.sacked, self.lost) {
            (true, _) => Class::Reported,
            (false, true) => Class::Lost,
            (false, false) => Class::Outstanding { retransmitted: self.retransmitted },
        }
    }
}

/// Where a packet stands, for the counts kept in `Tally`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Outstanding { retransmitted: bool },
    Lost,
    Reported,
}

/// Running counts over `packets` by class, so the per-event questions (how many on their way,
/// any lost, does a timer still watch something) cost O(1) instead of a scan of the window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Tally {
    /// Outstanding packets by their last send: [first transmission, retransmission].
    outstanding: [u32; 2],
    outstanding_bytes: u64,
    lost: u32,
}

impl Tally {
    fn apply(&mut self, class: Class, len: u32, add: bool) {
        let step = |n: &mut u32| if add { *n += 1 } else { *n -= 1 };
        match class {
            Class::Outstanding { retransmitted } => {
                step(&mut self.outstanding[retransmitted as usize]);
                if add {
                    self.outstanding_bytes += len as u64;
                } else {
                    self.outstanding_bytes -= len as u64;
                }
            }
            Class::Lost => step(&mut self.lost),
            Class::Reported => {}
        }
    }
    fn of<'a>(packets: impl Iterator<Item = &'a Packet>) -> Self {
        let mut t = Tally::default();
        for p in packets {
            t.apply(p.class(), p.len, true);
        }
        t
    }
}

#[derive(Debug, Clone)]
pub struct E2tcpSender {
    smss: u64,
    /// Oldest unacknowledged sequence number, and one past the highest sent.
    snd_una: u64,
    snd_max: u64,
    packets: VecDeque<Packet>,
    /// Counts over `packets`; every change of a packet's class goes through `reclassify`.
    tally: Tally,
    window: E2tcpWindow,
    timers: TwoTimers,
    rtt: RttEstimator,
    cfg: E2tcpConfig,
    initial_timeout: SimDuration,
    stream: SendStream,
    /// The peer's window is closed and nothing is on its way: when to probe it (RFC 9293
    /// §3.8.6.1's persist timer, at E2TCP's timeout), and whether a probe is due.
    persist: Option<SimTime>,
    probe_due: bool,
    next_order: u64,
    /// CPU operations performed, for the world to charge.
    ops: OpLog,
    pub counters: SenderCounters,
    /// Acknowledgments whose newly reported losses reached the error limit.
    pub bursts_detected: u64,
}

impl E2tcpSender {
    /// A sender of `app_bytes` in packets of `smss` payload bytes with TCP settings `tcp`.
    pub fn new(tcp: &TcpConfig, smss: u32, app_bytes: u64) -> Self {
        let cfg = tcp.e2tcp.clone().unwrap_or_default();
        let window = E2tcpWindow::new(cfg.clone());
        let smss = smss as u64;
        Self {
            smss,
            snd_una: ISS,
            snd_max: ISS,
            packets: VecDeque::new(),
            tally: Tally::default(),
            window,
            timers: TwoTimers::default(),
            rtt: RttEstimator::new(tcp.initial_rto, SimDuration(1), tcp.max_rto, SimDuration::ZERO),
            initial_timeout: tcp.initial_rto,
            cfg,
            stream: SendStream::new(app_bytes, smss, tcp.send_buffer.unwrap_or(u64::MAX / 4)),
            persist: None,
            probe_due: false,
            next_order: 0,
            ops: OpLog::default(),
            counters: SenderCounters::default(),
            bursts_detected: 0,
        }
    }

    /// The smoothed round-trip time its timers follow, once sampled.
    pub fn srtt(&self) -> Option<SimDuration> {
        self.rtt.srtt()
    }

    /// The window in packets.
    pub fn window_packets(&self) -> u32 {
        self.window.packets()
    }

    /// Both timers' value: a little above the round-trip estimate (seed 001 §2.2), i.e.
    /// SRTT + max(margin x SRTT, 4 RTTVAR), at least `min_timeout`; `initial_rto` before the
    /// first sample. Never backed off: a timeout is read as a burst, and the minimum window that
    /// follows is the probe.
    pub fn timeout(&self) -> SimDuration {
        match self.rtt.srtt() {
            None => self.initial_timeout,
            Some(srtt) => {
                let margin = SimDuration((srtt.0 as f64 * self.cfg.timer_margin).round() as u64);
                let spread = SimDuration(4 * self.rtt.rttvar().0);
                (srtt + margin.max(spread)).max(self.cfg.min_timeout)
            }
        }
    }

    fn outstanding_packets(&self) -> u32 {
        self.tally.outstanding[0] + self.tally.outstanding[1]
    }

    /// Applies `change` to packet `i` and moves it between the tally's classes.
    fn reclassify(&mut self, i: usize, change: impl FnOnce(&mut Packet)) {
        let p = &mut self.packets[i];
        let before = p.class();
        change(p);
        let after = p.class();
        if before != after {
            self.tally.apply(before, p.len, false);
            self.tally.apply(after, p.len, true);
        }
    }

    /// The tally agrees with a scan of the window (checked in debug builds).
    fn check_tally(&self) {
        debug_assert_eq!(self.tally, Tally::of(self.packets.iter()), "E2TCP tally out of step");
    }

    // ------------------------------------------------------------------------------------------
    // Acknowledgments.

    fn ack(&mut self, now: SimTime, seg: &Segment) {
        let ack = seg.ack;
        if !self.stream.is_open() || ack > self.snd_max {
            return;
        }
        if seg.is_pure_ack() {
            let predicted = ack > self.snd_una && seg.sack.is_empty();
            self.ops.report(now, if predicted { Op::FastPath } else { Op::SlowPath });
        }
        self.stream.rwnd = seg.window as u64;

        // What this ACK newly reports as received: the latest send among it, and the latest
        // never-retransmitted one (Karn: only that gives an RTT sample).
        let mut newest_order: Option<u64> = None;
        let mut sample_from: Option<(u64, SimTime)> = None;
        let mut note = |p: &Packet| {
            newest_order = newest_order.max(Some(p.order));
            if !p.ever_retransmitted && sample_from.is_none_or(|(o, _)| p.order > o) {
                sample_from = Some((p.order, p.sent_at));
            }
        };
        while let Some(p) = self.packets.front() {
            if p.end() > ack {
                break;
            }
            let p = self.packets.pop_front().expect("front exists");
            self.tally.apply(p.class(), p.len, false);
            if !p.sacked {
                note(&p);
            }
            if p.fin {
                self.stream.fin_acked = true;
            }
        }
        let advanced = ack > self.snd_una;
        if advanced {
            self.snd_una = ack;
        }
        for &(l, r) in seg.sack.as_slice() {
            self.ops.report(now, Op::SackBlockProcessed);
            for i in 0..self.packets.len() {
                let p = &self.packets[i];
                if p.sacked || p.seq < l || p.end() > r {
                    continue;
                }
                self.reclassify(i, |p| {
                    p.sacked = true;
                    p.lost = false;
                });
                note(&self.packets[i]);
                self.ops.report(now, Op::ScoreboardUpdate);
            }
        }
        self.stream.on_cumulative_ack(ack, now);
        if let Some((_, sent)) = sample_from {
            self.rtt.on_sample(now - sent);
            self.counters.rtt_samples += 1;
        }
        if newest_order.is_some() || advanced {
            // One hop never reorders: every send older than a reported one that is still
            // unreported was lost (seed 001 §2.1).
            let horizon = newest_order.unwrap_or(0);
            let mut n_new = 0u32;
            for i in 0..self.packets.len() {
                let p = &self.packets[i];
                if p.outstanding() && p.order < horizon {
                    self.reclassify(i, |p| p.lost = true);
                    n_new += 1;
                }
            }
            if n_new > 0 {
                self.counters.fast_retransmits += 1;
            }
            if self.window.on_report(n_new) == Reading::Burst {
                self.bursts_detected += 1;
            }
        }
        self.stop_idle_timers(now);
        self.check_tally();
    }

    /// A timer with nothing left to watch is stopped.
    fn stop_idle_timers(&mut self, now: SimTime) {
        for (kind, retx) in [(TimerKind::Transmission, false), (TimerKind::Retransmission, true)] {
            let watching = self.tally.outstanding[retx as usize] > 0;
            if !watching && self.timers.stop(kind) {
                self.ops.report(now, Op::TimerSet);
            }
        }
    }

    // ------------------------------------------------------------------------------------------
    // Timers.

    /// An expired timer deems every packet it watches lost: the transmission timer the first
    /// transmissions, the retransmission timer the retransmissions; the window goes to its
    /// minimum size (`after_timeout`).
    fn expire(&mut self, now: SimTime) {
        if self.persist.is_some_and(|d| d <= now) {
            self.ops.report(now, Op::TimerExpired);
            self.persist = None;
            self.probe_due = true;
        }
        let expired: Vec<TimerKind> = self.timers.take_expired(now).collect();
        for kind in expired {
            self.ops.report(now, Op::TimerExpired);
            let retx = kind == TimerKind::Retransmission;
            let mut deemed = 0;
            if self.tally.outstanding[retx as usize] > 0 {
                for i in 0..self.packets.len() {
                    let p = &self.packets[i];
                    if p.outstanding() && p.retransmitted == retx {
                        self.reclassify(i, |p| p.lost = true);
                        deemed += 1;
                    }
                }
            }
            if deemed > 0 {
                self.counters.timeouts += 1;
                self.window.on_timeout();
            }
        }
        self.check_tally();
    }

    // ------------------------------------------------------------------------------------------
    // Output.

    fn has_unsent(&self) -> bool {
        self.stream.has_unsent(self.snd_max, self.snd_max)
    }

    /// The next packet to send now: the oldest lost packet first (immediate retransmission),
    /// then new data, while fewer packets than the window are on their way.
    fn poll(&mut self, now: SimTime) -> Option<OutSegment> {
        if !self.stream.is_open() || self.outstanding_packets() >= self.window.packets() {
            return None;
        }
        if self.tally.lost > 0 {
            if let Some(i) = self.packets.iter().position(|p| p.lost) {
                return Some(self.retransmit(i, now));
            }
        }
        if !self.has_unsent() {
            return None;
        }
        let seq = self.snd_max;
        let syn = seq == ISS;
        let (len, fin) = self.stream.next_segment(seq, self.smss);
        let edge = self.stream.send_edge(self.snd_una);
        if !syn && len > 0 && seq + len as u64 > edge {
            // The peer's window is closed. With nothing on its way no acknowledgment will reopen
            // it, so the persist timer sends the next packet as a probe (RFC 9293 §3.8.6.1).
            if !std::mem::take(&mut self.probe_due) || self.outstanding_packets() > 0 {
                if self.outstanding_packets() == 0 && self.persist.is_none() {
                    self.persist = Some(now + self.timeout());
                    self.ops.report(now, Op::TimerSet);
                }
                return None;
            }
            self.counters.window_probes += 1;
        }
        self.persist = None;
        let order = self.take_order();
        let p = Packet { seq, len, syn, fin, sacked: false, lost: false, retransmitted: false, ever_retransmitted: false, order, sent_at: now, first_sent: now };
        self.packets.push_back(p);
        self.tally.apply(p.class(), p.len, true);
        self.snd_max = p.end();
        self.account_sent(len, now);
        self.timers.on_send(TimerKind::Transmission, now, self.timeout());
        self.ops.report(now, Op::TimerSet);
        self.check_tally();
        Some(OutSegment { seq, len, syn, fin, retransmission: false, ect: false, cwr: false, first_sent: now })
    }

    fn take_order(&mut self) -> u64 {
        self.next_order += 1;
        self.next_order
    }

    fn retransmit(&mut self, i: usize, now: SimTime) -> OutSegment {
        let order = self.take_order();
        self.reclassify(i, |p| {
            p.lost = false;
            p.retransmitted = true;
            p.ever_retransmitted = true;
            p.order = order;
            p.sent_at = now;
        });
        let p = self.packets[i];
        self.counters.retransmissions += 1;
        self.account_sent(p.len, now);
        self.timers.on_send(TimerKind::Retransmission, now, self.timeout());
        self.ops.report(now, Op::TimerSet);
        self.check_tally();
        OutSegment { seq: p.seq, len: p.len, syn: p.syn, fin: p.fin, retransmission: true, ect: false, cwr: false, first_sent: p.first_sent }
    }

    fn account_sent(&mut self, len: u32, now: SimTime) {
        self.counters.count_sent(len, now, &mut self.ops);
    }
}

impl SendHalf for E2tcpSender {
    fn stream(&self) -> &SendStream {
        &self.stream
    }
    fn stream_mut(&mut self) -> &mut SendStream {
        &mut self.stream
    }
    fn ops(&mut self) -> &mut OpLog {
        &mut self.ops
    }
    fn on_ack(&mut self, now: SimTime, seg: &Segment) {
        self.ack(now, seg)
    }
    fn on_timeout(&mut self, now: SimTime) {
        self.expire(now)
    }
    fn poll_segment(&mut self, now: SimTime) -> Option<OutSegment> {
        self.poll(now)
    }
    fn deadline(&self) -> Option<SimTime> {
        match (self.timers.deadline(), self.persist) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
    /// Bytes on their way (neither reported nor deemed lost).
    fn in_flight(&self) -> u64 {
        self.tally.outstanding_bytes
    }
    fn rto(&self) -> SimDuration {
        self.timeout()
    }
    /// The window in bytes; no ssthresh; "recovery" while a reported loss awaits its resend.
    fn state(&self) -> SenderState {
        SenderState {
            cwnd: self.window.packets() as u64 * self.smss,
            ssthresh: NO_SSTHRESH,
            ca_state: if self.tally.lost > 0 { CaState::Recovery } else { CaState::Open },
            snd_una: self.snd_una,
            snd_nxt: self.snd_max,
            snd_max: self.snd_max,
        }
    }
    fn counters(&self) -> &SenderCounters {
        &self.counters
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Variant;
    use crate::tcp::send_half::SendHalf;
    use crate::tcp::segment::Flags;

    const SMSS: u32 = 1000;

    fn ms(n: u64) -> SimTime {
        SimTime(n * 1_000_000)
    }

    fn ack(ack: u64, sack: &[(u64, u64)]) -> Segment {
        let mut seg = Segment::new(ISS + 1, ack, 0, Flags::ACK, 1 << 20);
        for &(l, r) in sack {
            seg.sack.push(l, r);
        }
        seg
    }

    /// The running counts equal a scan of the window, and in-flight bytes are the outstanding
    /// packets' payload.
    fn assert_counts_match_the_window(s: &E2tcpSender) {
        assert_eq!(s.tally, Tally::of(s.packets.iter()));
        let scanned: u64 = s.packets.iter().filter(|p| p.outstanding()).map(|p| p.len as u64).sum();
        assert_eq!(s.in_flight(), scanned);
    }

    /// Seed 001 §2.1-§2.2: a report of a later packet makes every earlier unreported one lost and
    /// retransmitted at once; a transmission timeout deems the first transmissions on their way lost
    /// and restarts from the minimum window. The sender's counts follow every step.
    #[test]
    fn packets_in_flight_and_lost_are_counted_through_reports_retransmissions_and_timeouts_seed001_s2() {
        let tcp = TcpConfig { variant: Variant::E2tcp, ..TcpConfig::default() };
        let mut s = E2tcpSender::new(&tcp, SMSS, 20 * SMSS as u64);
        s.stream_mut().open(1 << 20);
        let syn = s.poll_segment(ms(0)).expect("the SYN goes first");
        assert!(syn.syn);
        s.on_ack(ms(10), &ack(ISS + 1, &[]));
        assert_counts_match_the_window(&s);

        let sends: Vec<OutSegment> = std::iter::from_fn(|| s.poll_segment(ms(10))).collect();
        assert_eq!(sends.len() as u32, s.window_packets());
        assert!(sends.len() >= 3, "the test needs three packets on their way");
        assert_eq!(s.in_flight(), sends.len() as u64 * SMSS as u64);
        assert_counts_match_the_window(&s);

        // The first packet arrives, the second is lost, the third is reported by SACK.
        let third = (sends[2].seq, sends[2].seq + SMSS as u64);
        s.on_ack(ms(20), &ack(sends[0].seq + SMSS as u64, &[third]));
        assert_eq!(s.tally.lost, 1);
        assert_eq!(s.in_flight(), (sends.len() as u64 - 3) * SMSS as u64);
        assert_counts_match_the_window(&s);

        let retx = s.poll_segment(ms(20)).expect("a lost packet is resent at once");
        assert!(retx.retransmission);
        assert_eq!(retx.seq, sends[1].seq);
        assert_eq!(s.tally.lost, 0);
        assert_eq!(s.tally.outstanding[1], 1);
        assert_counts_match_the_window(&s);

        // Nothing more is reported: the transmission timer expires first (it watches the older
        // sends) and deems every first transmission on its way lost.
        let deadline = s.deadline().expect("timers run");
        s.on_timeout(deadline);
        assert_eq!(s.tally.outstanding[0], 0);
        assert_eq!(s.tally.lost as usize, sends.len() - 3);
        assert_eq!(s.window_packets(), tcp.e2tcp.clone().unwrap_or_default().min_window);
        assert_counts_match_the_window(&s);
    }
}
