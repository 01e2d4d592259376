//! The messages a flow's source wrote and which of them the destination's application has in
//! full: each delivered message's latency, from its write to the delivery of its last byte.

use crate::units::SimTime;
use std::collections::VecDeque;

#[derive(Debug, Clone, Default)]
pub struct Messages {
    /// Bytes written so far: the stream offset where the next message begins.
    pub written: u64,
    /// Messages written (whatever the transport).
    pub sent: u64,
    /// Messages on a byte stream still undelivered: (end offset, written at).
    pending: VecDeque<(u64, SimTime)>,
    /// Latency of each delivered message (ns), in delivery order.
    pub latencies: Vec<u64>,
}

impl Messages {
    /// A message of `bytes` written at `now` on a byte stream (TCP).
    pub fn wrote(&mut self, bytes: u64, now: SimTime) {
        self.written += bytes;
        self.pending.push_back((self.written, now));
        self.sent += 1;
    }

    /// A datagram written (UDP): its latency comes with it ([`Messages::arrived`]).
    pub fn wrote_datagram(&mut self) {
        self.sent += 1;
    }

    /// The receiving application has `delivered` bytes of the stream at `now`.
    pub fn delivered(&mut self, delivered: u64, now: SimTime) {
        while let Some(&(end, at)) = self.pending.front() {
            if delivered < end {
                break;
            }
            self.latencies.push(now.0 - at.0);
            self.pending.pop_front();
        }
    }

    /// A message written at `written_at` arrived (one way, or back at the source) at `now`.
    pub fn arrived(&mut self, written_at: SimTime, now: SimTime) {
        self.latencies.push(now.0 - written_at.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_is_delivered_when_its_last_byte_is_not_before() {
        let mut m = Messages::default();
        m.wrote(100, SimTime(10));
        m.wrote(50, SimTime(20));
        m.delivered(149, SimTime(30));
        assert_eq!(m.latencies, vec![20], "the first message only");
        m.delivered(150, SimTime(45));
        assert_eq!((m.latencies.clone(), m.sent, m.written), (vec![20, 25], 2, 150));
    }
}
