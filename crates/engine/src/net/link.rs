//! One direction of a hop: a drop-tail queue at the transmitter, serialization at the link rate,
//! the impairments, and propagation delay.

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
    /// Packets waiting (slab indices), not counting the one being serialized.
    pub queue: VecDeque<u32>,
    /// The packet being serialized and when it started.
    pub in_service: Option<(u32, SimTime)>,
    impairments: Vec<AnyImpairment>,
    pub counters: LinkCounters,
}

/// What happened to a packet when it finished serialization.
pub enum Departure {
    /// Arrives at the far end at this time; the receiver's radio was busy for `airtime` before.
    Arrives { at: SimTime, airtime: SimDuration },
    Lost,
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
            queue: VecDeque::new(),
            in_service: None,
            impairments,
            counters: LinkCounters::default(),
        }
    }

    /// Serialization time of an IP packet of `wire_len` bytes.
    #[inline]
    pub fn airtime(&self, wire_len: u32) -> SimDuration {
        airtime((wire_len + self.frame_overhead) as u64, self.rate_bps)
    }

    /// Whether the queue has room for one more packet (drop-tail).
    #[inline]
    pub fn has_room(&self) -> bool {
        self.queue.len() < self.capacity
    }

    /// The packet in service finished serialization at `now`: decide its fate.
    #[inline]
    pub fn depart(&mut self, now: SimTime) -> Departure {
        let (_, started) = self.in_service.expect("a packet is in service");
        match impair::apply(&mut self.impairments, now) {
            Verdict::Drop(_) => {
                self.counters.dropped_channel += 1;
                Departure::Lost
            }
            Verdict::Pass => {
                self.counters.packets_delivered += 1;
                Departure::Arrives { at: now + self.delay, airtime: now - started }
            }
            Verdict::Delay(extra) => {
                self.counters.packets_delivered += 1;
                Departure::Arrives { at: now + self.delay + extra, airtime: now - started }
            }
        }
    }
}
