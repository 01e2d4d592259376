//! One direction of a hop: a drop-tail queue at the transmitter, serialization at the link rate,
//! the impairments, and propagation delay.
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
//! Counters follow the packets as they move, not when they are queued: a packet is sent (and, if
//! the channel loses it, lost) when its serialization ends, and delivered when it arrives at the
//! far end (the world reports arrivals, [`Link::arrived`]). Drop-tail and RED decisions happen
//! when the packet reaches the queue. Read the counters with [`Link::counters_at`].

use super::impair::{self, AnyImpairment, RouteNotice, Verdict};
use super::queue::red::{Red, RedVerdict};
use crate::sim::rng::Stream;
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
    rate_bps: u64,
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
        Self {
            from,
            to,
            rate_bps: cfg.rate,
            delay: cfg.delay,
            capacity: cfg.queue as usize,
            frame_overhead,
            starts: VecDeque::with_capacity(cfg.queue as usize + 1),
            busy_until: SimTime::ZERO,
            impairments,
            red: cfg.red.map(|r| Red::new(r, Stream::new(run_seed, &format!("{name}.red")))),
            cross: cfg.cross_traffic.map(Cross::new),
            airtime_memo: (0, airtime(frame_overhead as u64, cfg.rate)),
            unsent: VecDeque::with_capacity(cfg.queue as usize + 1),
            counters: LinkCounters::default(),
        }
    }

    /// Serialization time of an IP packet of `wire_len` bytes.
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

    /// When a packet handed in at `now` would start, were it free to go at once.
    #[inline]
    pub fn next_start(&self, now: SimTime) -> SimTime {
        now.max(self.busy_until)
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
        let start = ready.max(self.busy_until);
        if self.airtime_memo.0 != wire_len {
            self.airtime_memo = (wire_len, self.airtime(wire_len));
        }
        let end = start + self.airtime_memo.1;
        self.busy_until = end;
        if start > now {
            self.starts.push_back(start);
        }
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
                    let start = t.max(self.busy_until);
                    self.busy_until = start + self.airtime(size);
                    if start > t {
                        self.starts.push_back(start);
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
    use crate::config::LinkConfig;

    fn link(queue: u32) -> Link {
        let cfg = LinkConfig {
            rate: 1_000_000,
            delay: SimDuration::from_millis(10),
            queue,
            red: None,
            cross_traffic: None,
            impairments: vec![],
        };
        Link::new(&cfg, 0, 1, 0, 1, "l")
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
