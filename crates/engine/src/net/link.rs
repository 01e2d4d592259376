//! One direction of a hop: a drop-tail queue at the transmitter, serialization at the link rate
//! or by a trace of delivery opportunities, the impairments, and propagation delay.
//!
//! The link rate and `path.frame_overhead` set queueing and throughput: they may describe a wired
//! or shaped hop elsewhere on the path. How long the end nodes' radios are on the air for a frame
//! is the radios' own business (`energy::airtime`).
//!
//! A FIFO link at a constant rate needs no events of its own: when a packet is handed to it, its
//! start and end of transmission follow from the link's backlog, and the impairments are applied
//! at the end time, in transmission order, exactly as if a "transmission done" event had fired.
//! The queue length seen by a new packet is the number of packets scheduled but not yet started.
//!
//! A trace-driven direction (`trace` instead of `rate`) is the same FIFO whose transmitter follows
//! Mahimahi's delivery opportunities (`net::opportunities`): a packet starts at the opportunity
//! that carries its first byte and ends at the one that carries its last, and occupies
//! (IP bytes + Mahimahi's 4-byte TUN header + `frame_overhead`) of them, so a 1500-byte packet
//! fills one opportunity as in Mahimahi. Its reported `start` is when the radio is taken to send
//! it (`Opportunities::serve`), the queue's own bookkeeping uses the first byte's opportunity.
//!
//! Counters follow the packets as they move, not when they are queued: a packet is sent (and, if
//! the channel loses it, lost) when its serialization ends, and delivered when it arrives at the
//! far end (the world reports arrivals, [`Link::arrived`]). Drop-tail and RED decisions happen
//! when the packet reaches the queue. Read the counters with [`Link::counters_at`].

use super::impair::{self, AnyImpairment, RouteNotice, Verdict};
use super::opportunities::Opportunities;
use super::queue::red::{Red, RedVerdict};
use crate::sim::rng::Stream;
use crate::config::trace::TUN_HEADER_BYTES;
use crate::config::LinkConfig;
use crate::units::{airtime, SimDuration, SimTime};
use serde::Serialize;
use std::collections::VecDeque;

/// Per-direction packet counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct LinkCounters {
    /// Packets (and their IP bytes) whose serialization ended: they left the interface.
    pub packets_sent: u64,
    pub bytes_sent: u64,
    /// Packets that arrived at the far end.
    pub packets_delivered: u64,
    pub dropped_channel: u64,
    pub dropped_queue: u64,
    /// Dropped early by RED.
    pub dropped_red: u64,
    /// Marked Congestion Experienced by RED instead of dropped.
    pub marked_ce: u64,
    /// Cross-traffic packets offered to the queue, and those dropped there.
    pub cross_offered: u64,
    pub cross_dropped: u64,
    /// Held by a broken route (outage in hold mode) and delivered after it came back.
    pub held_outage: u64,
    /// Accepted by the queue but not yet sent at the end of the run (waiting or being serialized).
    pub queued: u64,
}

#[derive(Debug)]
pub struct Link {
    pub from: usize,
    pub to: usize,
    /// The constant rate, or a trace's mean rate (RED's idle-time estimate uses it).
    rate_bps: u64,
    /// A trace-driven direction's opportunities; `None` at a constant rate.
    trace: Option<Opportunities>,
    delay: SimDuration,
    capacity: usize,
    frame_overhead: u32,
    /// Start times of scheduled transmissions, oldest first (those not yet started are queued).
    starts: VecDeque<SimTime>,
    /// When the transmitter finishes everything scheduled so far.
    busy_until: SimTime,
    impairments: Vec<AnyImpairment>,
    red: Option<Red>,
    cross: Option<Cross>,
    /// The last (packet size, airtime) computed: most packets share a size, and the division is
    /// a noticeable cost per packet.
    airtime_memo: (u32, SimDuration),
    /// Our packets whose serialization has not ended by the last settled time, oldest first.
    unsent: VecDeque<Unsent>,
    counters: LinkCounters,
}

/// A packet on its way out of the interface, and what the channel will do to it.
#[derive(Debug, Clone, Copy)]
struct Unsent {
    end: SimTime,
    bytes: u32,
    outcome: Outcome,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Passes,
    Lost,
    /// Held by a broken route and delivered after it came back.
    Held,
}

/// What happens to a packet handed to the link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// Drop-tail: the queue was full; nothing is transmitted.
    QueueFull,
    /// Transmitted during `[start, end)` and lost on the channel; `notice` when a notifying
    /// outage caused the loss.
    Lost { start: SimTime, end: SimTime, notice: Option<RouteNotice> },
    /// Transmitted during `[start, end)`; arrives at the far end at `at`, CE-marked if `ce`;
    /// `notice` when a notifying outage held it on the way.
    Arrives { start: SimTime, end: SimTime, at: SimTime, ce: bool, notice: Option<RouteNotice> },
}

impl Link {
    pub fn new(cfg: &LinkConfig, from: usize, to: usize, frame_overhead: u32, run_seed: u64, name: &str) -> Self {
        let impairments = cfg
            .impairments
            .iter()
            .enumerate()
            .map(|(i, c)| AnyImpairment::new(c, run_seed, &format!("{name}.impairments.{i}")))
            .collect();
        let rate_bps = cfg.capacity.rate_bps();
        Self {
            from,
            to,
            rate_bps,
            trace: cfg.capacity.trace().map(|t| Opportunities::new(t.clone())),
            delay: cfg.delay,
            capacity: cfg.queue as usize,
            frame_overhead,
            starts: VecDeque::with_capacity(cfg.queue as usize + 1),
            busy_until: SimTime::ZERO,
            impairments,
            red: cfg.red.map(|r| Red::new(r, Stream::new(run_seed, &format!("{name}.red")))),
            cross: cfg.cross_traffic.map(Cross::new),
            airtime_memo: (0, airtime(frame_overhead as u64, rate_bps)),
            unsent: VecDeque::with_capacity(cfg.queue as usize + 1),
            counters: LinkCounters::default(),
        }
    }

    /// Serialization time of an IP packet of `wire_len` bytes at the constant rate.
    #[inline]
    pub fn airtime(&self, wire_len: u32) -> SimDuration {
        airtime((wire_len + self.frame_overhead) as u64, self.rate_bps)
    }

    /// Hand a packet of `wire_len` IP bytes to the link at `now`; `ect` says whether it is
    /// ECN-capable.
    #[inline]
    pub fn send(&mut self, now: SimTime, wire_len: u32, ect: bool) -> Fate {
        self.send_from(now, now, wire_len, ect)
    }

    /// When a packet handed in at `now` would start, were it free to go at once (on a
    /// trace-driven direction: the opportunity its first byte would take).
    #[inline]
    pub fn next_start(&self, now: SimTime) -> SimTime {
        match &self.trace {
            None => now.max(self.busy_until),
            Some(t) => t.next_after(now),
        }
    }

    /// The propagation delay.
    pub fn delay(&self) -> SimDuration {
        self.delay
    }

    /// [`Link::send`] for a packet that may not start before `ready` (`>= now`): it waits in the
    /// queue until then (a cellular radio being promoted, `net::medium::rrc`).
    #[inline]
    pub fn send_from(&mut self, now: SimTime, ready: SimTime, wire_len: u32, ect: bool) -> Fate {
        self.settle(now);
        if self.cross.is_some() {
            self.inject_cross_traffic(now);
        }
        let ce = match self.admit(now, ect) {
            Admission::Dropped { red: true } => {
                self.counters.dropped_red += 1;
                return Fate::QueueFull;
            }
            Admission::Dropped { red: false } => {
                self.counters.dropped_queue += 1;
                return Fate::QueueFull;
            }
            Admission::Queued { ce } => ce,
        };
        if ce {
            self.counters.marked_ce += 1;
        }
        let (start, end) = if let Some(t) = &mut self.trace {
            let s = t.serve(ready, wire_len + TUN_HEADER_BYTES + self.frame_overhead);
            self.busy_until = s.end;
            self.starts.push_back(s.first);
            (s.radio_start, s.end)
        } else {
            let start = ready.max(self.busy_until);
            if self.airtime_memo.0 != wire_len {
                self.airtime_memo = (wire_len, self.airtime(wire_len));
            }
            let end = start + self.airtime_memo.1;
            self.busy_until = end;
            if start > now {
                self.starts.push_back(start);
            }
            (start, end)
        };
        // Most directions have no impairment (a path's reverse one, typically): no call then.
        let verdict = if self.impairments.is_empty() { Verdict::Pass } else { impair::apply(&mut self.impairments, end, wire_len + self.frame_overhead) };
        let (fate, outcome) = match verdict {
            Verdict::Drop(cause) => {
                let notice = if cause == impair::DropCause::Outage { impair::route_notice(&mut self.impairments, end) } else { None };
                (Fate::Lost { start, end, notice }, Outcome::Lost)
            }
            Verdict::Pass => (Fate::Arrives { start, end, at: end + self.delay, ce, notice: None }, Outcome::Passes),
            Verdict::Delay(extra) => (Fate::Arrives { start, end, at: end + self.delay + extra, ce, notice: None }, Outcome::Passes),
            Verdict::Hold(extra) => {
                let notice = impair::route_notice(&mut self.impairments, end);
                (Fate::Arrives { start, end, at: end + self.delay + extra, ce, notice }, Outcome::Held)
            }
        };
        self.unsent.push_back(Unsent { end, bytes: wire_len, outcome });
        fate
    }

    /// A packet this link carried arrived at its far end.
    #[inline]
    pub fn arrived(&mut self) {
        self.counters.packets_delivered += 1;
    }

    /// Count the packets whose serialization ended by `t`.
    #[inline]
    fn settle(&mut self, t: SimTime) {
        while let Some(&u) = self.unsent.front() {
            if u.end > t {
                break;
            }
            self.unsent.pop_front();
            let c = &mut self.counters;
            c.packets_sent += 1;
            c.bytes_sent += u.bytes as u64;
            match u.outcome {
                Outcome::Passes => {}
                Outcome::Lost => c.dropped_channel += 1,
                Outcome::Held => c.held_outage += 1,
            }
        }
    }

    /// The counters at `t` (not before an earlier call's or send's time): packets whose
    /// serialization ends later have not been sent.
    pub fn counters_at(&mut self, t: SimTime) -> LinkCounters {
        // Cross traffic is replayed lazily, before each of our packets: bring it up to `t`.
        self.inject_cross_traffic(t);
        self.settle(t);
        LinkCounters { queued: self.unsent.len() as u64, ..self.counters }
    }
}

/// Whether a packet arriving at the queue gets in.
enum Admission {
    Queued { ce: bool },
    Dropped { red: bool },
}

impl Link {
    /// Drop-tail and RED admission of a packet arriving at `now`.
    #[inline]
    fn admit(&mut self, now: SimTime, ect: bool) -> Admission {
        // Packets whose transmission has begun have left the queue.
        while self.starts.front().is_some_and(|&s| s <= now) {
            self.starts.pop_front();
        }
        // One packet may be in service; `capacity` more may wait.
        let in_service = self.busy_until > now;
        let waiting = self.starts.len();
        if in_service && waiting >= self.capacity {
            return Admission::Dropped { red: false };
        }
        let Some(red) = &mut self.red else { return Admission::Queued { ce: false } };
        let idle = if in_service { SimDuration::ZERO } else { now.saturating_since(self.busy_until) };
        let small = airtime(1500, self.rate_bps);
        match red.on_arrival(waiting + in_service as usize, idle, small, ect, now) {
            RedVerdict::Enqueue => Admission::Queued { ce: false },
            RedVerdict::Mark => Admission::Queued { ce: true },
            RedVerdict::Drop => Admission::Dropped { red: true },
        }
    }

    /// Offer the queue every cross-traffic packet due up to `now`, in time order. Only the queue
    /// and the transmitter see them, and only our own packets look at those, so replaying them
    /// lazily, just before each of ours, is exact.
    fn inject_cross_traffic(&mut self, now: SimTime) {
        while let Some(t) = self.cross.as_ref().and_then(|c| c.next_at(now)) {
            let size = self.cross.as_ref().expect("cross traffic").cfg.packet;
            self.counters.cross_offered += 1;
            match self.admit(t, false) {
                Admission::Dropped { .. } => self.counters.cross_dropped += 1,
                Admission::Queued { .. } => {
                    if let Some(o) = &mut self.trace {
                        let s = o.serve(t, size + TUN_HEADER_BYTES + self.frame_overhead);
                        self.busy_until = s.end;
                        self.starts.push_back(s.first);
                    } else {
                        let start = t.max(self.busy_until);
                        self.busy_until = start + self.airtime(size);
                        if start > t {
                            self.starts.push_back(start);
                        }
                    }
                }
            }
            self.cross.as_mut().expect("cross traffic").advance();
        }
    }
}

/// The constant-rate cross-traffic schedule of a link.
#[derive(Debug, Clone)]
struct Cross {
    cfg: crate::config::CrossTraffic,
    interval: SimDuration,
    /// The next arrival.
    next: SimTime,
}

impl Cross {
    fn new(cfg: crate::config::CrossTraffic) -> Self {
        let offset = cfg.offset.unwrap_or(SimDuration(cfg.every.0 - cfg.on.0));
        Self { interval: airtime(cfg.packet as u64, cfg.rate), next: SimTime(offset.0), cfg }
    }

    fn next_at(&self, now: SimTime) -> Option<SimTime> {
        (self.next <= now).then_some(self.next)
    }

    /// Step to the next arrival: `interval` later within the episode, else the next episode.
    fn advance(&mut self) {
        let offset = self.cfg.offset.unwrap_or(SimDuration(self.cfg.every.0 - self.cfg.on.0)).0;
        let every = self.cfg.every.0;
        let k = (self.next.0 - offset) / every;
        let episode_end = offset + k * every + self.cfg.on.0;
        let t = self.next.0 + self.interval.0;
        self.next = SimTime(if t < episode_end { t } else { offset + (k + 1) * every });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Capacity, LinkConfig};

    fn config(capacity: Capacity, queue: u32) -> LinkConfig {
        LinkConfig { capacity, delay: SimDuration::from_millis(10), queue, red: None, cross_traffic: None, impairments: vec![] }
    }

    fn link(queue: u32) -> Link {
        Link::new(&config(Capacity::Rate(1_000_000), queue), 0, 1, 0, 1, "l")
    }

    fn trace_link(ms: &[u64], queue: u32) -> Link {
        let trace = crate::config::Trace { name: "t".into(), ms: ms.to_vec() };
        let capacity = Capacity::Trace(crate::config::TraceRef(std::sync::Arc::new(trace)));
        Link::new(&config(capacity, queue), 0, 1, 0, 1, "l")
    }

    const MS: u64 = 1_000_000;

    /// When each packet (arrival in ns, IP bytes) leaves the link, in ns; `None` if dropped.
    fn ends(l: &mut Link, packets: &[(u64, u32)]) -> Vec<Option<u64>> {
        packets
            .iter()
            .map(|&(t, bytes)| match l.send(SimTime(t), bytes, false) {
                Fate::Arrives { end, at, .. } => {
                    assert_eq!(at, end + SimDuration::from_millis(10), "propagation follows the trace's delivery");
                    Some(end.0)
                }
                Fate::Lost { .. } => unreachable!("no impairments"),
                Fate::QueueFull => None,
            })
            .collect()
    }

    fn in_ms(v: &[u64]) -> Vec<Option<u64>> {
        v.iter().map(|&m| Some(m * MS)).collect()
    }

    // The trace-driven link follows Mahimahi's LinkQueue (src/frontend/link_queue.cc,
    // `rationalize`) and the trace format of its traces/README. A 1500-byte IP packet is 1504
    // bytes as Mahimahi queues it (its TUN header): one whole opportunity.

    #[test]
    fn packets_leave_at_the_opportunities_their_last_bytes_take_mahimahi_link_queue() {
        let mut l = trace_link(&[2, 4, 4, 7], 100);
        // Two opportunities at 4 ms carry two packets then; the fifth waits for the repetition.
        assert_eq!(ends(&mut l, &[(0, 1500); 5]), in_ms(&[2, 4, 4, 7, 9]));
    }

    #[test]
    fn packets_share_an_opportunity_in_order_mahimahi_link_queue() {
        let mut l = trace_link(&[1], 100);
        // 504 + 504 bytes fit in the opportunity at 1 ms; the third's last 8 bytes go at 2 ms,
        // where the fourth fits in what is left.
        assert_eq!(ends(&mut l, &[(0, 500); 4]), in_ms(&[1, 1, 2, 2]));
    }

    #[test]
    fn a_packet_larger_than_what_is_left_spans_opportunities_mahimahi_link_queue() {
        let mut l = trace_link(&[1], 100);
        // 4004 bytes: all of 1 and 2 ms, 996 of 3 ms; the next 1004 bytes take the 508 left at
        // 3 ms and 496 at 4 ms.
        assert_eq!(ends(&mut l, &[(0, 4000), (0, 1000)]), in_ms(&[3, 4]));
        // It counts as sent when its last byte leaves.
        assert_eq!(l.counters_at(SimTime(3 * MS - 1)).packets_sent, 0);
        assert_eq!(l.counters_at(SimTime(3 * MS)).packets_sent, 1);
    }

    #[test]
    fn a_packet_arriving_at_an_opportunitys_time_cannot_use_it_mahimahi_link_queue() {
        // rationalize(now) spends the opportunities at or before now before enqueueing.
        for (t, end) in [(2 * MS - 1, 2), (2 * MS, 3), (2 * MS + 1, 3)] {
            let mut l = trace_link(&[1], 100);
            assert_eq!(ends(&mut l, &[(t, 1500)]), in_ms(&[end]), "arriving at {t} ns");
        }
    }

    #[test]
    fn capacity_nobody_is_queued_for_is_lost_mahimahi_link_queue() {
        let mut l = trace_link(&[1], 100);
        // What is left of the opportunity at 1 ms is lost to a packet arriving at 1 ms, which
        // waits for the one at 2 ms...
        assert_eq!(ends(&mut l, &[(0, 500), (MS, 500)]), in_ms(&[1, 2]));
        // ...and ten idle milliseconds leave no backlog of capacity: one packet per ms after.
        let burst: Vec<(u64, u32)> = vec![(12 * MS + MS / 2, 1500); 4];
        assert_eq!(ends(&mut l, &burst), in_ms(&[13, 14, 15, 16]));
    }

    #[test]
    fn the_trace_repeats_with_the_period_of_its_last_timestamp_mahimahi_traces_readme() {
        let mut l = trace_link(&[1, 2, 5], 100);
        assert_eq!(ends(&mut l, &[(MS / 2, 1500); 7]), in_ms(&[1, 2, 5, 6, 7, 10, 11]));
        // Far into the trace's 20th repetition: 100 + 1 ms.
        assert_eq!(ends(&mut l, &[(100 * MS + 1, 1500)]), in_ms(&[101]));
        // A trace whose first timestamp is 0 has, at each multiple of the period, the last
        // entries of one repetition and the first of the next: here two opportunities.
        let mut l = trace_link(&[0, 3], 100);
        assert_eq!(ends(&mut l, &[(0, 1500); 5]), in_ms(&[3, 3, 6, 6, 9]));
    }

    #[test]
    fn the_drop_tail_queue_holds_the_packets_whose_first_byte_has_not_left_mahimahi_link_queue() {
        // Mahimahi's drop-tail limit counts the packets not yet dequeued; a packet is dequeued at
        // the opportunity of its first byte. One opportunity every 10 ms, room for two.
        let mut l = trace_link(&[10], 2);
        assert_eq!(ends(&mut l, &[(0, 1500), (0, 1500), (0, 1500)]), vec![Some(10 * MS), Some(20 * MS), None]);
        // After 10 ms the first has gone: room for one more.
        assert_eq!(ends(&mut l, &[(10 * MS, 1500), (10 * MS, 1500)]), vec![Some(30 * MS), None]);
        assert_eq!(l.counters_at(SimTime(10 * MS)).dropped_queue, 2);
    }

    #[test]
    fn a_one_line_trace_of_1_carries_what_a_12_032_mbps_link_does_mahimahi_traces_readme() {
        // "a link that can pass one MTU-sized packet per millisecond (12 Mbps) can be
        // represented by a file that contains just 1": 1504 bytes per ms, 12.032 Mbit/s. Both
        // links are offered more than they carry for 20 s; at a constant rate the 4 bytes the
        // trace counts per packet are frame overhead.
        let mut trace = trace_link(&[1], 100);
        let mut constant = Link::new(&config(Capacity::Rate(12_032_000), 100), 0, 1, 4, 1, "l");
        let horizon = SimTime(20_000 * MS);
        let mut t = 0;
        while t < horizon.0 {
            trace.send(SimTime(t), 1500, false);
            constant.send(SimTime(t), 1500, false);
            t += 900_000;
        }
        let (a, b) = (trace.counters_at(horizon), constant.counters_at(horizon));
        assert!(a.packets_sent.abs_diff(b.packets_sent) <= 1, "trace {a:?}, constant {b:?}");
        assert!(a.packets_sent.abs_diff(20_000) <= 1, "{a:?}");
        assert!(a.dropped_queue.abs_diff(b.dropped_queue) <= 1, "trace {a:?}, constant {b:?}");
    }

    #[test]
    fn a_packet_held_until_its_radio_is_ready_takes_the_opportunities_after_that() {
        // A cellular radio being promoted (`send_from`): the opportunities before it is ready
        // pass unused, and the radio is on the air from then at the earliest.
        let mut l = trace_link(&[1], 100);
        let f = l.send_from(SimTime(0), SimTime(5 * MS), 1500, false);
        assert!(matches!(f, Fate::Arrives { start, end, .. } if start == SimTime(5 * MS) && end == SimTime(6 * MS)), "{f:?}");
        assert_eq!(l.next_start(SimTime(5 * MS)), SimTime(7 * MS));
    }

    #[test]
    fn a_trace_driven_frame_reports_a_nonempty_radio_interval_ending_at_its_delivery() {
        let mut l = trace_link(&[1], 100);
        // Alone, arriving at 0.2 ms: on the air from 0.2 ms until it leaves at 1 ms.
        assert_eq!(
            l.send(SimTime(MS / 5), 1500, false),
            Fate::Arrives { start: SimTime(MS / 5), end: SimTime(MS), at: SimTime(11 * MS), ce: false, notice: None }
        );
    }

    #[test]
    fn a_direction_takes_either_rate_or_trace_and_bad_traces_are_refused_naming_the_key() {
        let err = |text: &str| match crate::Scenario::from_toml(text) {
            Err(crate::error::EngineError::Config { path, message }) => (path, message),
            other => panic!("expected an error, got {other:?}"),
        };
        let (path, msg) = err("[path.forward]\nrate = \"2Mbps\"\ntrace = { ms = [1] }");
        assert_eq!(path, "path.forward.trace");
        assert!(msg.contains("either rate") && msg.contains("not both"), "{msg}");
        let (path, msg) = err("[path.reverse]\ntrace = { name = \"up\", ms = [1, 3, 2] }");
        assert_eq!(path, "path.reverse.trace.ms.2");
        assert!(msg.contains("\"up\"") && msg.contains("line 3"), "{msg}");
        let (path, msg) = err("[path.forward]\ntrace = \"traces/x.down\"");
        assert_eq!(path, "path.forward.trace");
        assert!(msg.contains("inline"), "{msg}");
        // The mean rate is what the radio check sees: 12.032 Mbit/s is beyond an 11 Mbit/s PHY.
        let (path, msg) = err("[path.forward]\ntrace = { ms = [1] }");
        assert_eq!(path, "path.forward.trace");
        assert!(msg.contains("mean rate") && msg.contains("12032kbps"), "{msg}");
        // In a network, a direction's own rate or trace replaces the one the link gives both.
        let net = "[nodes]\na = { profile = \"ideal-nic-0.3\" }\nb = { profile = \"ideal-nic-0.3\" }\n\
                   [[links]]\nbetween = [\"a\", \"b\"]\ntrace = { ms = [1] }\nreverse = { rate = \"1Mbps\" }\n\
                   [[flows]]\nname = \"f\"\nfrom = \"a\"\nto = \"b\"\ntraffic = { kind = \"bulk\", bytes = 1000 }\n";
        let s = crate::Scenario::from_toml(net).unwrap_or_else(|e| panic!("{e}"));
        let l = &s.network().unwrap().links[0];
        assert_eq!((l.forward.capacity.rate_bps(), &l.reverse.as_ref().unwrap().capacity), (12_032_000, &Capacity::Rate(1_000_000)));
        let (path, _) = err(&net.replace("reverse = { rate = \"1Mbps\" }", "rate = \"1Mbps\""));
        assert_eq!(path, "links.0.trace");
    }

    #[test]
    fn back_to_back_packets_serialize_one_after_another() {
        let mut l = link(10);
        // 125 bytes at 1 Mbit/s = 1 ms.
        let a = l.send(SimTime(0), 125, false);
        let b = l.send(SimTime(0), 125, false);
        assert_eq!(a, Fate::Arrives { start: SimTime(0), end: SimTime(1_000_000), at: SimTime(11_000_000), ce: false, notice: None });
        assert_eq!(b, Fate::Arrives { start: SimTime(1_000_000), end: SimTime(2_000_000), at: SimTime(12_000_000), ce: false, notice: None });
    }

    #[test]
    fn cross_traffic_fills_the_queue_only_during_episodes() {
        let mut l = link(10);
        // 2 Mbit/s of 125-byte packets into a 1 Mbit/s link for 1 s every 10 s, from t = 9 s.
        l.cross = Some(Cross::new(crate::config::CrossTraffic {
            rate: 2_000_000,
            on: SimDuration::from_secs(1),
            every: SimDuration::from_secs(10),
            offset: None,
            packet: 125,
        }));
        let s = |x: f64| SimTime((x * 1e9) as u64);
        // Before the episode: an empty link.
        assert!(matches!(l.send(s(8.0), 125, false), Fate::Arrives { start, .. } if start == s(8.0)));
        // Inside it: the queue is full of cross traffic, so our packet is dropped.
        assert_eq!(l.send(s(9.5), 125, false), Fate::QueueFull);
        assert!(l.counters.cross_dropped > 0);
        // After it drains: served at once again.
        assert!(matches!(l.send(s(10.5), 125, false), Fate::Arrives { start, .. } if start == s(10.5)));
        // 1 s at 2 Mbit/s of 125-byte packets = 2000 offered in the first episode.
        assert_eq!(l.counters.cross_offered, 2000);
        // The counters at the end of a run hold the cross traffic offered up to then, though no
        // packet of ours came after it: two episodes more by 30.5 s.
        assert_eq!(l.counters_at(s(30.5)).cross_offered, 6000);
    }

    #[test]
    fn drop_tail_drops_when_the_queue_is_full() {
        let mut l = link(2);
        let fates: Vec<_> = (0..5).map(|_| l.send(SimTime(0), 125, false)).collect();
        // One in service, two waiting, the rest dropped.
        assert!(matches!(fates[2], Fate::Arrives { .. }));
        assert_eq!(fates[3], Fate::QueueFull);
        assert_eq!(fates[4], Fate::QueueFull);
        // Once the first has left, there is room again.
        assert!(matches!(l.send(SimTime(1_000_000), 125, false), Fate::Arrives { .. }));
    }
}
