//! A flow's counters ([`FlowResult`]) assembled from what its ends did: one TCP connection, a
//! split flow's two connections (docs/models/split.md), or UDP datagrams.

use super::network::SplitHalf;
use super::FlowResult;
use crate::tcp::endpoint::Endpoint;

/// IP bytes a connection's two ends put on their first hop, counted as they left the interface.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EndBytes {
    /// The sending end's, by the time the flow finished or stopped: its throughput.
    pub sender_by_flow_end: u64,
    /// Each end's by the end of the run.
    pub sender: u64,
    pub receiver: u64,
}

impl FlowResult {
    /// One TCP connection, whose data goes from `src` (`None` before it started) to `dst`;
    /// `per_s` turns bits into a rate over the flow's active time.
    pub fn of_tcp(src: Option<&Endpoint>, dst: &Endpoint, bytes: EndBytes, per_s: &dyn Fn(f64) -> f64) -> Self {
        let rcv = dst.receiver.as_ref();
        let delivered = rcv.map_or(0, |r| r.delivered);
        let rc = rcv.map(|r| r.counters.clone()).unwrap_or_default();
        let (snd, completion) = match src {
            Some(ep) => (ep.sender.counters().clone(), ep.sender.data_acked_at().map_or(f64::NAN, |t| t.as_secs_f64())),
            None => (Default::default(), f64::NAN),
        };
        let closed = src.is_some_and(|e| e.is_closed()) && dst.is_closed();
        FlowResult {
            bytes_delivered: delivered,
            completion_s: completion,
            goodput_bps: per_s(delivered as f64 * 8.0),
            throughput_bps: per_s(bytes.sender_by_flow_end as f64 * 8.0),
            segments_sent: snd.segments_sent,
            data_segments_sent: snd.data_segments_sent,
            retransmissions: snd.retransmissions,
            timeouts: snd.timeouts,
            fast_retransmits: snd.fast_retransmits,
            acks_sent: dst.counters.pure_acks_sent,
            sack_blocks_sent: dst.counters.sack_blocks_sent,
            dupacks_received: snd.dupacks_received,
            ecn_reductions: snd.ecn_reductions,
            route_failures: snd.route_failures,
            probes_sent: snd.probes_sent,
            frozen_s: snd.frozen_ns as f64 * 1e-9,
            out_of_order_segments: rc.out_of_order_segments,
            duplicate_segments: rc.duplicate_segments,
            wire_bytes_sender: bytes.sender,
            wire_bytes_receiver: bytes.receiver,
            closed: Some(closed),
        }
    }

    /// A split flow end to end: bytes delivered at `to` and its goodput (those of the second
    /// connection `b`), `completion_s` when every byte written reached `to`, the throughput of
    /// `sent_by_flow_end` (both sending ends' bytes), and every other counter the sum over its
    /// two connections. Each connection's own record is in `split.halves`.
    pub fn of_split(a: &FlowResult, b: &FlowResult, completion_s: f64, sent_by_flow_end: u64, per_s: &dyn Fn(f64) -> f64) -> Self {
        FlowResult {
            bytes_delivered: b.bytes_delivered,
            completion_s,
            goodput_bps: b.goodput_bps,
            throughput_bps: per_s(sent_by_flow_end as f64 * 8.0),
            segments_sent: a.segments_sent + b.segments_sent,
            data_segments_sent: a.data_segments_sent + b.data_segments_sent,
            retransmissions: a.retransmissions + b.retransmissions,
            timeouts: a.timeouts + b.timeouts,
            fast_retransmits: a.fast_retransmits + b.fast_retransmits,
            acks_sent: a.acks_sent + b.acks_sent,
            sack_blocks_sent: a.sack_blocks_sent + b.sack_blocks_sent,
            dupacks_received: a.dupacks_received + b.dupacks_received,
            ecn_reductions: a.ecn_reductions + b.ecn_reductions,
            route_failures: a.route_failures + b.route_failures,
            probes_sent: a.probes_sent + b.probes_sent,
            frozen_s: a.frozen_s + b.frozen_s,
            out_of_order_segments: a.out_of_order_segments + b.out_of_order_segments,
            duplicate_segments: a.duplicate_segments + b.duplicate_segments,
            wire_bytes_sender: a.wire_bytes_sender + b.wire_bytes_sender,
            wire_bytes_receiver: a.wire_bytes_receiver + b.wire_bytes_receiver,
            closed: Some(a.closed == Some(true) && b.closed == Some(true)),
        }
    }

    /// UDP: `sent` datagrams, `delivered` payload bytes; the receiver's bytes are an echo
    /// server's answers.
    pub fn of_udp(sent: u64, delivered: u64, bytes: EndBytes, per_s: &dyn Fn(f64) -> f64) -> Self {
        FlowResult {
            bytes_delivered: delivered,
            completion_s: f64::NAN,
            goodput_bps: per_s(delivered as f64 * 8.0),
            throughput_bps: per_s(bytes.sender_by_flow_end as f64 * 8.0),
            segments_sent: sent,
            data_segments_sent: sent,
            retransmissions: 0,
            timeouts: 0,
            fast_retransmits: 0,
            acks_sent: 0,
            sack_blocks_sent: 0,
            dupacks_received: 0,
            ecn_reductions: 0,
            route_failures: 0,
            probes_sent: 0,
            frozen_s: 0.0,
            out_of_order_segments: 0,
            duplicate_segments: 0,
            wire_bytes_sender: bytes.sender,
            wire_bytes_receiver: bytes.receiver,
            closed: None,
        }
    }
}

impl SplitHalf {
    /// One connection of a split flow, `from` -> `to`, run with `variant`.
    pub fn of(from: &str, to: &str, variant: &str, src: Option<&Endpoint>, dst: &Endpoint, bytes: EndBytes, per_s: &dyn Fn(f64) -> f64) -> Self {
        let rc = dst.receiver.as_ref().map(|r| r.counters.clone()).unwrap_or_default();
        SplitHalf {
            from: from.to_string(),
            to: to.to_string(),
            variant: variant.to_string(),
            flow: FlowResult::of_tcp(src, dst, bytes, per_s),
            window_probes: src.map_or(0, |e| e.sender.counters().window_probes),
            zero_windows_sent: rc.zero_windows_sent,
            beyond_window_segments: rc.beyond_window_segments,
        }
    }
}
