//! Packets and bytes counted at the moment they leave an interface.
//!
//! A link computes a frame's end of serialization when the frame is handed to it, but the frame
//! has not left the interface until then: a run that ends first (at `stop_after`, at a flow's
//! `stop`, or when every flow is done) must not count it. A tally keeps the frames whose end
//! still lies ahead, in end order, and counts each once its end has passed.

use crate::units::SimTime;
use std::collections::VecDeque;

/// Frames (and their IP bytes) that finished serializing by the last settled time.
#[derive(Debug, Clone, Default)]
pub struct WireTally {
    packets: u64,
    bytes: u64,
    /// (end of serialization, bytes) of frames not yet counted, oldest first.
    pending: VecDeque<(SimTime, u32)>,
}

impl WireTally {
    /// A frame of `bytes` that finishes serializing at `end`. Ends must not decrease: one
    /// interface serializes its frames in order.
    #[inline]
    pub fn push(&mut self, now: SimTime, end: SimTime, bytes: u32) {
        self.settle(now);
        debug_assert!(self.pending.back().map_or(true, |&(last, _)| last <= end), "frames leave in order");
        self.pending.push_back((end, bytes));
    }

    /// Count every frame that finished serializing by `t`.
    #[inline]
    pub fn settle(&mut self, t: SimTime) {
        while let Some(&(end, bytes)) = self.pending.front() {
            if end > t {
                break;
            }
            self.pending.pop_front();
            self.packets += 1;
            self.bytes += bytes as u64;
        }
    }

    /// (packets, bytes) that finished serializing by `t`; `t` must not precede an earlier settle.
    pub fn by(&mut self, t: SimTime) -> (u64, u64) {
        self.settle(t);
        (self.packets, self.bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_counts_once_its_serialization_has_ended_not_when_it_was_queued() {
        let mut t = WireTally::default();
        t.push(SimTime(0), SimTime(10), 100);
        t.push(SimTime(0), SimTime(20), 50);
        assert_eq!(t.by(SimTime(9)), (0, 0));
        assert_eq!(t.by(SimTime(10)), (1, 100));
        assert_eq!(t.by(SimTime(25)), (2, 150));
    }
}
