//! A Dummynet-like pipe as a medium (docs/models/wifi.md, "Pipes"): it sits in front of one
//! interface, above its MAC. A packet entering it passes its impairments at that instant (loss,
//! then the delay line, as Dummynet does), waits the pipe's delay plus any an impairment adds,
//! and is handed on to the interface; order is kept unless an impairment reorders.

use super::{Handed, Out, Timer};
use crate::config::channel::PipeConfig;
use crate::net::impair::{self, AnyImpairment, DropCause, Verdict};
use crate::units::{SimDuration, SimTime};
use serde::Serialize;

/// Packets that entered an IP-level pipe, and what became of them.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq, Eq)]
pub struct PipeCounters {
    pub packets: u64,
    pub dropped: u64,
    /// Held by a route outage in hold mode and passed on after it.
    pub held_outage: u64,
}

#[derive(Debug)]
pub struct PipeMedium {
    delay: SimDuration,
    impairments: Vec<AnyImpairment>,
    /// The interface it hands packets on to.
    iface: u32,
    pub counters: PipeCounters,
}

impl PipeMedium {
    /// Pipe `k` of the scenario, in front of interface `iface`.
    pub fn new(cfg: &PipeConfig, k: usize, iface: u32, seed: u64) -> Self {
        let impairments = cfg.impairments.iter().enumerate().map(|(i, c)| AnyImpairment::new(c, seed, &format!("pipes.{k}.impairments.{i}"))).collect();
        Self { delay: cfg.delay, impairments, iface, counters: PipeCounters::default() }
    }

    pub fn send(&mut self, now: SimTime, p: Handed, out: &mut Vec<Out>) {
        self.counters.packets += 1;
        let (extra, held) = match impair::apply(&mut self.impairments, now, p.wire_len) {
            Verdict::Drop(cause) => {
                self.counters.dropped += 1;
                if cause == DropCause::Outage {
                    if let Some(notice) = impair::route_notice(&mut self.impairments, now) {
                        out.push(Out::Notice { packet: p.packet, notice });
                    }
                }
                return out.push(Out::Free { packet: p.packet });
            }
            Verdict::Pass => (SimDuration::ZERO, false),
            Verdict::Delay(d) => (d, false),
            Verdict::Hold(d) => (d, true),
        };
        if held {
            self.counters.held_outage += 1;
            if let Some(notice) = impair::route_notice(&mut self.impairments, now) {
                out.push(Out::Notice { packet: p.packet, notice });
            }
        }
        out.push(Out::Schedule { at: now + self.delay + extra, timer: Timer::Release { packet: p.packet } });
    }

    pub fn release(&mut self, packet: u32, out: &mut Vec<Out>) {
        out.push(Out::PassOn { packet, iface: self.iface });
    }
}
