//! A flow's record from the packets alone: what a TCP connection's two ends put on the network
//! and what reached them, seen where they leave and enter their hosts. Nothing here reads a
//! stack's state; every figure is one an observer of the wire can vouch for (docs/emulation.md,
//! "What the wire tells").
//!
//! Sequence numbers are taken relative to the sender's initial sequence number (RFC 9293 §3.4),
//! so the first data byte is 1; arithmetic is modulo 2^32 from there (transfers under 4 GB).

use super::ip::{Tcp, ACK, CWR, FIN, SYN};
use crate::result::FlowResult;
use crate::units::SimTime;

/// What one direction's packets did, as seen leaving their host.
#[derive(Debug, Clone, Default)]
struct Sent {
    segments: u64,
    data_segments: u64,
    pure_acks: u64,
    sack_blocks: u64,
    retransmissions: u64,
    /// Segments with CWR set: each is one congestion-window reduction told to the peer
    /// (RFC 3168 §6.1.2).
    cwr: u64,
    ip_bytes: u64,
    /// One past the highest sequence number sent (relative).
    next: u32,
}

/// One TCP connection of a flow, its data going from the flow's source (the active opener) to
/// its destination.
#[derive(Debug, Clone, Default)]
pub struct Connection {
    /// The source's initial sequence number, from its SYN.
    isn: Option<u32>,
    pub started_at: Option<SimTime>,
    data: Sent,
    acks: Sent,
    /// The destination's highest cumulative acknowledgment sent (relative): every byte below
    /// it reached the destination's application in order.
    acked_by_receiver: u32,
    /// The relative sequence number of the source's FIN (one past its last data byte).
    fin_at: Option<u32>,
    receiver_fin: bool,
    /// When an acknowledgment of every data byte reached the source.
    pub all_acked_at: Option<SimTime>,
    /// The source's IP bytes by then.
    data_ip_bytes_then: u64,
    /// At the destination: the next in-order byte, and ranges beyond it that arrived.
    arrived_next: u32,
    arrived_beyond: Vec<(u32, u32)>,
    out_of_order: u64,
    duplicates: u64,
    /// At the source: the last acknowledgment that arrived, its window, and the duplicates.
    last_ack: Option<(u32, u16)>,
    last_ack_at: SimTime,
    dupacks: u64,
    /// A timed flow's books, closed at the end of its duration: when, the destination's
    /// acknowledgment and the source's IP bytes then.
    closed_books: Option<(SimTime, u32, u64)>,
}

impl Connection {
    fn rel(&self, seq: u32) -> u32 {
        seq.wrapping_sub(self.isn.unwrap_or(0))
    }

    /// The source sent `tcp` at `now` (its bytes count once they leave the first hop:
    /// [`Connection::left_first_hop`]).
    pub fn source_sent(&mut self, now: SimTime, tcp: &Tcp) {
        self.see_syn(now, tcp);
        if self.isn.is_none() {
            return;
        }
        let d = &mut self.data;
        d.segments += 1;
        if tcp.flags & CWR != 0 {
            d.cwr += 1;
        }
        let start = tcp.seq.wrapping_sub(self.isn.unwrap_or(0));
        let end = start.wrapping_add(tcp.seq_len());
        if tcp.payload > 0 {
            d.data_segments += 1;
            // A segment that starts below what was already sent repeats some of it.
            if start < d.next {
                d.retransmissions += 1;
            }
        } else if tcp.is_pure_ack() {
            d.pure_acks += 1;
        }
        d.next = d.next.max(end);
        if tcp.flags & FIN != 0 && self.fin_at.is_none() {
            let fin = end.wrapping_sub(1);
            self.fin_at = Some(fin);
            // Every byte may have been acknowledged before the FIN went out.
            if let (None, Some((ack, _))) = (self.all_acked_at, self.last_ack) {
                if ack >= fin {
                    self.all_acked_at = Some(self.last_ack_at);
                    self.data_ip_bytes_then = self.data.ip_bytes;
                }
            }
        }
    }

    /// An IP packet of `ip_bytes` of the connection left its sender's first hop (the source's
    /// when `from_source`), as the simulation counts a flow end's bytes: a packet its own
    /// interface's queue dropped never left.
    pub fn left_first_hop(&mut self, from_source: bool, ip_bytes: u32) {
        if self.isn.is_some() {
            let side = if from_source { &mut self.data } else { &mut self.acks };
            side.ip_bytes += ip_bytes as u64;
        }
    }

    /// The destination sent `tcp` (acknowledgments, its SYN-ACK and FIN) at `now`.
    pub fn destination_sent(&mut self, _now: SimTime, tcp: &Tcp) {
        if self.isn.is_none() {
            return;
        }
        let a = &mut self.acks;
        a.segments += 1;
        a.sack_blocks += tcp.sack_blocks as u64;
        if tcp.is_pure_ack() {
            a.pure_acks += 1;
        }
        if tcp.payload > 0 {
            a.data_segments += 1;
        }
        if tcp.flags & FIN != 0 {
            self.receiver_fin = true;
        }
        if tcp.flags & ACK != 0 {
            let acked = self.rel(tcp.ack);
            // Sequence space is compared within half its size (RFC 9293 §3.4).
            if (acked.wrapping_sub(self.acked_by_receiver) as i32) > 0 {
                self.acked_by_receiver = acked;
            }
        }
    }

    /// The source's SYN, seen leaving it or (when only the destination's side is visible)
    /// reaching the destination, starts the connection's sequence space.
    fn see_syn(&mut self, now: SimTime, tcp: &Tcp) {
        if tcp.flags & SYN != 0 && self.isn.is_none() {
            self.isn = Some(tcp.seq);
            self.started_at = Some(now);
            self.arrived_next = 1;
        }
    }

    /// `tcp` from the source reached the destination at `now`.
    pub fn destination_got(&mut self, now: SimTime, tcp: &Tcp) {
        self.see_syn(now, tcp);
        if tcp.flags & FIN != 0 && self.isn.is_some() && self.fin_at.is_none() {
            // Where the source's data ends, when only the destination's side is visible.
            self.fin_at = Some(self.rel(tcp.seq).wrapping_add(tcp.payload));
        }
        if self.isn.is_none() || tcp.payload == 0 {
            return;
        }
        let start = self.rel(tcp.seq);
        let end = start.wrapping_add(tcp.payload);
        if end <= self.arrived_next || self.arrived_beyond.iter().any(|&(a, b)| a <= start && end <= b) {
            self.duplicates += 1;
            return;
        }
        if start > self.arrived_next {
            self.out_of_order += 1;
            self.arrived_beyond.push((start, end));
            self.arrived_beyond.sort_unstable();
            return;
        }
        self.arrived_next = end;
        // Ranges that now join the in-order part.
        let mut k = 0;
        while k < self.arrived_beyond.len() {
            let (a, b) = self.arrived_beyond[k];
            if a <= self.arrived_next {
                self.arrived_next = self.arrived_next.max(b);
                self.arrived_beyond.remove(k);
            } else {
                k += 1;
            }
        }
    }

    /// `tcp` from the destination reached the source at `now`.
    pub fn source_got(&mut self, now: SimTime, tcp: &Tcp) {
        if self.isn.is_none() || tcp.flags & ACK == 0 {
            return;
        }
        let ack = self.rel(tcp.ack);
        // The destination sent it: what it acknowledges reached the destination's application
        // (seen here when only the source's side of the traffic is visible, as in a capture).
        if (ack.wrapping_sub(self.acked_by_receiver) as i32) > 0 {
            self.acked_by_receiver = ack;
        }
        // RFC 5681 §2's duplicate: no data, no SYN/FIN, the same acknowledgment and window.
        if tcp.is_pure_ack() && self.last_ack == Some((ack, tcp.window)) && ack < self.data.next {
            self.dupacks += 1;
        }
        self.last_ack = Some((ack, tcp.window));
        self.last_ack_at = now;
        if let (None, Some(fin)) = (self.all_acked_at, self.fin_at) {
            if ack >= fin {
                self.all_acked_at = Some(now);
                self.data_ip_bytes_then = self.data.ip_bytes;
            }
        }
    }

    /// A timed flow's duration is over at `now` (docs/models/network.md): its record is what
    /// the wire showed by then, as a simulated timed flow's is; the connection's aftermath (the
    /// programs close it) is left out.
    pub fn close_books(&mut self, now: SimTime) {
        if self.isn.is_some() && self.closed_books.is_none() {
            self.closed_books = Some((now, self.acked_by_receiver, self.data.ip_bytes));
        }
    }

    /// When the flow finished: every data byte acknowledged, or its books closed.
    pub fn finished_at(&self) -> Option<SimTime> {
        self.closed_books.map(|(t, _, _)| t).or(self.all_acked_at)
    }

    /// Payload bytes the destination acknowledged: delivered to its application in order.
    pub fn delivered(&self) -> u64 {
        let acked = self.closed_books.map_or(self.acked_by_receiver, |(_, a, _)| a);
        let past_data = match self.fin_at {
            Some(fin) => acked.min(fin),
            None => acked,
        };
        past_data.saturating_sub(1) as u64
    }

    /// The connection's part of the flow record, over an active time of `active_s` seconds. The
    /// counters only a stack knows (timeouts, fast retransmits) are left at zero for the caller
    /// to fill from the kernel's own.
    pub fn result(&self, active_s: f64) -> FlowResult {
        let per_s = |bits: f64| if active_s > 0.0 { bits / active_s } else { 0.0 };
        let delivered = self.delivered();
        let sender_by_end = match (self.closed_books, self.all_acked_at) {
            (Some((_, _, bytes)), _) => bytes,
            (None, Some(_)) => self.data_ip_bytes_then,
            (None, None) => self.data.ip_bytes,
        };
        FlowResult {
            bytes_delivered: delivered,
            completion_s: self.all_acked_at.filter(|_| self.closed_books.is_none()).map_or(f64::NAN, |t| t.as_secs_f64()),
            goodput_bps: per_s(delivered as f64 * 8.0),
            throughput_bps: per_s(sender_by_end as f64 * 8.0),
            segments_sent: self.data.segments,
            data_segments_sent: self.data.data_segments,
            retransmissions: self.data.retransmissions,
            timeouts: 0,
            fast_retransmits: 0,
            acks_sent: self.acks.pure_acks,
            sack_blocks_sent: self.acks.sack_blocks,
            dupacks_received: self.dupacks,
            ecn_reductions: self.data.cwr,
            route_failures: 0,
            probes_sent: 0,
            frozen_s: 0.0,
            out_of_order_segments: self.out_of_order,
            duplicate_segments: self.duplicates,
            wire_bytes_sender: self.data.ip_bytes,
            wire_bytes_receiver: self.acks.ip_bytes,
            closed: Some(self.fin_at.is_some() && self.receiver_fin),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(seq: u32, ack: u32, flags: u8, payload: u32) -> Tcp {
        Tcp { seq, ack, flags, payload, window: 100, ..Tcp::default() }
    }

    /// A 3000-byte transfer in three segments, the second lost once and sent again.
    #[test]
    fn a_transfer_with_one_retransmission_is_counted_from_its_packets() {
        let isn = 1_000;
        let mut c = Connection::default();
        let t = SimTime;
        c.source_sent(t(0), &seg(isn, 0, SYN, 0));
        c.left_first_hop(true, 60);
        c.destination_sent(t(1), &seg(9, isn + 1, SYN | ACK, 0));
        for (k, at) in [(0u32, 2), (1, 3), (2, 4)] {
            c.source_sent(t(at), &seg(isn + 1 + 1000 * k, 10, ACK, 1000));
            c.left_first_hop(true, 1040);
        }
        c.destination_got(t(5), &seg(isn + 1, 10, ACK, 1000));
        c.destination_got(t(6), &seg(isn + 2001, 10, ACK, 1000));
        c.destination_sent(t(7), &seg(10, isn + 1001, ACK, 0));
        c.destination_sent(t(8), &seg(10, isn + 1001, ACK, 0));
        c.source_got(t(9), &seg(10, isn + 1001, ACK, 0));
        c.source_got(t(10), &seg(10, isn + 1001, ACK, 0));
        c.source_sent(t(11), &seg(isn + 1001, 10, ACK, 1000));
        c.left_first_hop(true, 1040);
        c.destination_got(t(12), &seg(isn + 1001, 10, ACK, 1000));
        c.destination_sent(t(13), &seg(10, isn + 3001, ACK, 0));
        c.source_sent(t(14), &seg(isn + 3001, 10, FIN | ACK, 0));
        c.left_first_hop(true, 40);
        c.destination_sent(t(15), &seg(10, isn + 3002, FIN | ACK, 0));
        c.source_got(t(16), &seg(10, isn + 3002, FIN | ACK, 0));
        let r = c.result(1.0);
        assert_eq!((r.bytes_delivered, r.data_segments_sent, r.retransmissions, r.dupacks_received), (3000, 4, 1, 1));
        assert_eq!((r.out_of_order_segments, r.duplicate_segments, r.acks_sent, r.closed), (1, 0, 3, Some(true)));
        assert_eq!((r.wire_bytes_sender, c.all_acked_at, c.started_at), (60 + 4 * 1040 + 40, Some(t(16)), Some(t(0))));
    }
}
