//! One direction of a hop: a drop-tail queue at the transmitter, serialization at the link rate,
//! the impairments, and propagation delay.
//!
//! A FIFO link at a constant rate needs no events of its own: when a packet is handed to it, its
//! start and end of transmission follow from the link's backlog, and the impairments are applied
//! at the end time, in transmission order, exactly as if a "transmission done" event had fired.
//! The queue length seen by a new packet is the number of packets scheduled but not yet started.

use super::impair::{self, AnyImpairment, Verdict};
use crate::config::LinkConfig;
use crate::units::{airtime, SimDuration, SimTime};
use serde::Serialize;
use std::collections::VecDeque;

/// Per-direction packet counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct LinkCounters {
    pub packets_sent: u64,
    pub bytes_sent: u64,
    pub packets_delivered: u64,
    pub dropped_channel: u64,
    pub dropped_queue: u64,
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
    /// The last (packet size, airtime) computed: most packets share a size, and the division is
    /// a noticeable cost per packet.
    airtime_memo: (u32, SimDuration),
    pub counters: LinkCounters,
}

/// What happens to a packet handed to the link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// Drop-tail: the queue was full; nothing is transmitted.
    QueueFull,
    /// Transmitted during `[start, end)` and lost on the channel.
    Lost { start: SimTime, end: SimTime },
    /// Transmitted during `[start, end)`; arrives at the far end at `at`.
    Arrives { start: SimTime, end: SimTime, at: SimTime },
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
            airtime_memo: (0, airtime(frame_overhead as u64, cfg.rate)),
            counters: LinkCounters::default(),
        }
    }

    /// Serialization time of an IP packet of `wire_len` bytes.
    #[inline]
    pub fn airtime(&self, wire_len: u32) -> SimDuration {
        airtime((wire_len + self.frame_overhead) as u64, self.rate_bps)
    }

    /// Hand a packet of `wire_len` IP bytes to the link at `now`.
    #[inline]
    pub fn send(&mut self, now: SimTime, wire_len: u32) -> Fate {
        self.counters.packets_sent += 1;
        self.counters.bytes_sent += wire_len as u64;
        // Packets whose transmission has begun have left the queue.
        while self.starts.front().is_some_and(|&s| s <= now) {
            self.starts.pop_front();
        }
        // One packet may be in service; `capacity` more may wait.
        let in_service = self.busy_until > now;
        let waiting = self.starts.len();
        if in_service && waiting >= self.capacity {
            self.counters.dropped_queue += 1;
            return Fate::QueueFull;
        }
        let start = now.max(self.busy_until);
        if self.airtime_memo.0 != wire_len {
            self.airtime_memo = (wire_len, self.airtime(wire_len));
        }
        let end = start + self.airtime_memo.1;
        self.busy_until = end;
        if start > now {
            self.starts.push_back(start);
        }
        match impair::apply(&mut self.impairments, end) {
            Verdict::Drop(_) => {
                self.counters.dropped_channel += 1;
                Fate::Lost { start, end }
            }
            Verdict::Pass => {
                self.counters.packets_delivered += 1;
                Fate::Arrives { start, end, at: end + self.delay }
            }
            Verdict::Delay(extra) => {
                self.counters.packets_delivered += 1;
                Fate::Arrives { start, end, at: end + self.delay + extra }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::LinkConfig;

    fn link(queue: u32) -> Link {
        let cfg = LinkConfig { rate: 1_000_000, delay: SimDuration::from_millis(10), queue, impairments: vec![] };
        Link::new(&cfg, 0, 1, 0, 1, "l")
    }

    #[test]
    fn back_to_back_packets_serialize_one_after_another() {
        let mut l = link(10);
        // 125 bytes at 1 Mbit/s = 1 ms.
        let a = l.send(SimTime(0), 125);
        let b = l.send(SimTime(0), 125);
        assert_eq!(a, Fate::Arrives { start: SimTime(0), end: SimTime(1_000_000), at: SimTime(11_000_000) });
        assert_eq!(b, Fate::Arrives { start: SimTime(1_000_000), end: SimTime(2_000_000), at: SimTime(12_000_000) });
    }

    #[test]
    fn drop_tail_drops_when_the_queue_is_full() {
        let mut l = link(2);
        let fates: Vec<_> = (0..5).map(|_| l.send(SimTime(0), 125)).collect();
        // One in service, two waiting, the rest dropped.
        assert!(matches!(fates[2], Fate::Arrives { .. }));
        assert_eq!(fates[3], Fate::QueueFull);
        assert_eq!(fates[4], Fate::QueueFull);
        // Once the first has left, there is room again.
        assert!(matches!(l.send(SimTime(1_000_000), 125), Fate::Arrives { .. }));
    }
}
