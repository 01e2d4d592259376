//! The data sender's RTT and timer state after every event of a [`Pair`] run, for timeline tests
//! of RTT sampling and the retransmission timer (RFC 6298). Include it with
//! `#[path = "common/rtt_trace.rs"] mod rtt_trace;` next to `mod common;`.
#![allow(dead_code)]

use crate::common::{Pair, Sent};
use tcpenergy_engine::tcp::segment::Segment;
use tcpenergy_engine::tcp::send_half::SendHalf;
use tcpenergy_engine::units::{SimDuration, SimTime};

/// The data sender just after one event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    pub at: SimTime,
    pub snd_una: u64,
    /// RTT samples taken so far.
    pub samples: u64,
    pub timeouts: u64,
    /// RFC 6298 §5.5 backoff exponent.
    pub backoff: u32,
    pub srtt: Option<SimDuration>,
    /// The RTO the timer would be armed with now (backoff included).
    pub rto: SimDuration,
    /// When the retransmission timer expires, if armed.
    pub deadline: Option<SimTime>,
    /// The timer was (re)armed by this event: its deadline changed and lies ahead.
    pub armed: Option<SimDuration>,
}

/// Run `p` until both ends close (or `limit`), recording the data sender after every event.
pub fn trace(p: &mut Pair, limit: SimTime) -> Vec<Step> {
    let mut out = Vec::new();
    let mut last_deadline = p.eps[0].sender.deadline();
    while p.now < limit && !(p.eps[0].is_closed() && p.eps[1].is_closed()) {
        if !p.step() {
            break;
        }
        let s = p.eps[0].sender.as_tcp().expect("a TCP sender");
        let deadline = s.deadline();
        let armed = match deadline {
            Some(d) if deadline != last_deadline => Some(d - p.now),
            _ => None,
        };
        last_deadline = deadline;
        out.push(Step {
            at: p.now,
            snd_una: s.tcb.snd_una,
            samples: s.counters.rtt_samples,
            timeouts: s.counters.timeouts,
            backoff: s.rto_backoff(),
            srtt: s.srtt(),
            rto: s.rto(),
            deadline,
            armed,
        });
    }
    out
}

/// An event at the data sender that advanced SND.UNA or gave an RTT sample (an ACK's arrival).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AckEvent {
    pub at: SimTime,
    /// SND.UNA before and after: the ACK newly acknowledged `[from, to)`.
    pub from: u64,
    pub to: u64,
    pub sampled: bool,
    /// The sender after the ACK.
    pub after: Step,
}

/// The ACK arrivals of a trace that moved SND.UNA or gave a sample, after time `since`.
pub fn ack_events(steps: &[Step], since: SimTime) -> Vec<AckEvent> {
    steps
        .windows(2)
        .filter(|w| w[1].at > since && (w[1].snd_una > w[0].snd_una || w[1].samples > w[0].samples))
        .map(|w| AckEvent { at: w[1].at, from: w[0].snd_una, to: w[1].snd_una, sampled: w[1].samples > w[0].samples, after: w[1] })
        .collect()
}

/// The first step after the first retransmission timeout.
pub fn first_timeout(steps: &[Step]) -> Step {
    *steps.iter().find(|s| s.timeouts > 0).expect("the sender timed out")
}

/// When the sender emitted the first transmission of the data segment starting at `seq`: the
/// last arrival of a segment from the receiver (`one_way` after it left) at or before its
/// departure. The [`Pair`] logs departures, which a burst's later segments make 1 ms apart per
/// segment; the sender's own send time, from which it measures, is the ACK that released it.
/// (Valid while no timer expiry released it.)
pub fn emitted_at(p: &Pair, seq: u64, one_way: SimDuration) -> SimTime {
    let depart = p.sends_of(0, seq)[0].at;
    p.log.iter().filter(|x| x.from == 1).map(|x| x.at + one_way).filter(|&t| t <= depart).max().unwrap()
}

/// Whether the data segment starting at `seq` was sent more than once.
pub fn retransmitted(p: &Pair, seq: u64) -> bool {
    p.sends_of(0, seq).len() > 1
}

/// Drops the first transmission of every data segment from index `from` on until the sender
/// times out (so no duplicate ACK can arrive and only the timer repairs the window); after that
/// nothing, or (with `and_first_new`) the first transmission of the first segment of new data,
/// the one starting at snd_max as it was at the timeout.
pub fn lose_window_until_timeout(smss: u32, from: u64, and_first_new: bool) -> impl FnMut(usize, &Segment, &[Sent]) -> bool {
    let first_lost = 1 + from * smss as u64;
    let mut first_new: Option<u64> = None;
    move |sender, seg, log| {
        if sender != 0 || seg.len == 0 {
            return false;
        }
        let first_tx = !log.iter().any(|s| s.from == 0 && s.seg.seq == seg.seq && s.seg.len > 0);
        match first_new {
            None if first_tx => seg.seq >= first_lost,
            None => {
                // The first retransmission: the timer has fired; new data starts at snd_max.
                first_new = log.iter().filter(|s| s.from == 0).map(|s| s.seg.seq + s.seg.len as u64).max();
                false
            }
            Some(n) => and_first_new && first_tx && seg.seq == n,
        }
    }
}

/// Drops the first `n` transmissions of the data segment with index `index` (0-based).
pub fn lose_first_transmissions(smss: u32, index: u64, n: usize) -> impl FnMut(usize, &Segment, &[Sent]) -> bool {
    let seq = 1 + index * smss as u64;
    move |sender, seg, log| {
        sender == 0
            && seg.len > 0
            && seg.seq == seq
            && log.iter().filter(|s| s.from == 0 && s.seg.seq == seq && s.seg.len > 0).count() < n
    }
}
