//! The congestion-control interface is enough for a delay-based controller: a toy Vegas-like
//! controller (Brakmo & Peterson 1995: keep a few segments queued, judged from the RTT above its
//! minimum) is written here against `CongestionControl` alone and run in the unchanged TCP
//! sender. On the same bottleneck the delivery-rate samples it is given converge on the
//! bottleneck rate (draft-cheng-iccrg-delivery-rate-estimation §2: absent ACK compression the
//! samples do not overestimate the path).

use std::collections::VecDeque;
use tcpenergy_engine::config::TcpConfig;
use tcpenergy_engine::tcp::cc::{AckEvent, AimdCc, CongestionControl};
use tcpenergy_engine::tcp::recipe::Recipe;
use tcpenergy_engine::tcp::recovery::{AnyRecovery, NewRenoRecovery};
use tcpenergy_engine::tcp::segment::{Flags, Segment};
use tcpenergy_engine::tcp::send_half::SendHalf;
use tcpenergy_engine::tcp::sender::Sender;
use tcpenergy_engine::tcp::tcb::Tcb;
use tcpenergy_engine::units::{SimDuration, SimTime};

const SMSS: u32 = 1000;
/// Bottleneck: 1 Mbit/s, so one full segment takes 8 ms; 40 ms of propagation round trip.
const RATE_BYTES_PER_S: u64 = 125_000;
const PROPAGATION: SimDuration = SimDuration(40_000_000);

/// Vegas-like: per ACK, one segment more while fewer than two segments sit in the queue, one
/// less above four (queue = cwnd x (1 - base RTT / RTT)).
#[derive(Debug, Clone, Default)]
struct DelayTarget {
    base_rtt: Option<SimDuration>,
    last_rtt: Option<SimDuration>,
    last_now: SimTime,
    acks_seen: u64,
    delivered: u64,
    rates: Vec<f64>,
}

impl CongestionControl for DelayTarget {
    fn on_ack_sample(&mut self, _tcb: &Tcb, ack: &AckEvent) {
        assert!(ack.now >= self.last_now, "time runs forward");
        self.last_now = ack.now;
        self.acks_seen += 1;
        self.delivered += ack.rate.newly_delivered;
        if let Some(r) = ack.rate.rtt {
            self.base_rtt = Some(self.base_rtt.map_or(r, |b| b.min(r)));
            self.last_rtt = Some(r);
        }
        if let (Some(rate), false) = (ack.rate.rate_bytes_per_s(), ack.rate.app_limited) {
            self.rates.push(rate);
        }
    }

    fn on_ack(&mut self, tcb: &mut Tcb, _ack: &AckEvent) {
        let (Some(base), Some(rtt)) = (self.base_rtt, self.last_rtt) else { return };
        let queued = tcb.cwnd as f64 * (1.0 - base.0 as f64 / rtt.0 as f64) / tcb.smss as f64;
        if queued < 2.0 {
            tcb.cwnd += tcb.smss;
        } else if queued > 4.0 {
            tcb.cwnd = (tcb.cwnd - tcb.smss).max(2 * tcb.smss);
        }
    }

    fn on_congestion_event(&mut self, tcb: &Tcb) -> u64 {
        (tcb.cwnd / 2).max(2 * tcb.smss)
    }
}

/// What a run through the bottleneck showed.
struct Run {
    acks_sent: u64,
    bytes_acked: u64,
    /// Round-trip times of the segments sent after the first second.
    late_rtts: Vec<SimDuration>,
}

/// Send `bytes` through a lossless FIFO bottleneck with an unbounded queue; the receiver
/// acknowledges every segment on arrival. Returns what the run showed and the controller.
fn run<C: CongestionControl>(cc: C, bytes: u64) -> (Run, Sender<C>) {
    let params = Recipe::for_tcp(&TcpConfig::default(), SMSS).sender;
    let mut s = Sender::new(params, cc, AnyRecovery::NewReno(NewRenoRecovery::default()), bytes);
    s.stream_mut().open(1 << 30);
    s.stream_mut().close();
    let (mut now, mut link_free) = (SimTime::ZERO, SimTime::ZERO);
    // (arrival of the ACK at the sender, cumulative ACK, send time)
    let mut acks: VecDeque<(SimTime, u64, SimTime)> = VecDeque::new();
    let mut out = Run { acks_sent: 0, bytes_acked: 0, late_rtts: Vec::new() };
    loop {
        while let Some(seg) = s.poll_segment(now) {
            assert!(!seg.retransmission, "nothing is lost on this path");
            let wire = seg.len.max(1) as u64;
            link_free = now.max(link_free) + SimDuration(wire * 1_000_000_000 / RATE_BYTES_PER_S);
            let end = seg.seq + seg.len as u64 + (seg.syn || seg.fin) as u64;
            acks.push_back((link_free + PROPAGATION, end, now));
        }
        let Some((at, ack, sent)) = acks.pop_front() else { break };
        now = at;
        if sent >= SimTime(1_000_000_000) {
            out.late_rtts.push(at - sent);
        }
        out.acks_sent += 1;
        let a = Segment::new(1, ack, 0, Flags::ACK, 1 << 20);
        s.on_ack(now, &a);
    }
    assert!(s.stream().fin_acked, "the transfer completes");
    out.bytes_acked = s.stream().data_end() - 1;
    (out, s)
}

#[test]
fn a_delay_based_controller_needs_only_the_ack_events_the_sender_gives_every_controller() {
    let (delay, _) = run(DelayTarget::default(), 300_000);
    let (reno, _) = run(AimdCc { growth: Default::default(), alpha: 1.0, beta: 0.5 }, 300_000);
    // The toy keeps two to four segments queued (16-32 ms above the 48 ms base round trip);
    // Reno, with nothing to stop it on a lossless path, fills the queue without bound.
    let worst = |r: &Run| r.late_rtts.iter().max().copied().unwrap();
    assert!(worst(&delay) <= SimDuration::from_millis(48 + 6 * 8), "delay-based: worst RTT {:?}", worst(&delay));
    assert!(worst(&reno) > SimDuration::from_millis(200), "Reno: worst RTT {:?}", worst(&reno));
    assert_eq!(delay.bytes_acked, 300_000);
}

#[test]
fn every_ack_reaches_the_controller_with_the_bytes_it_delivered_and_rates_at_most_the_bottleneck_draft_cheng_s2() {
    let (r, s) = run(DelayTarget::default(), 300_000);
    let cc = s.congestion_control();
    assert_eq!(cc.acks_seen, r.acks_sent, "one AckEvent per ACK");
    assert_eq!(cc.delivered, r.bytes_acked, "payload bytes, each delivered once");
    let best = cc.rates.iter().copied().fold(0.0, f64::max);
    let bottleneck = RATE_BYTES_PER_S as f64;
    assert!(best <= bottleneck * 1.001, "no sample above the bottleneck: {best}");
    assert!(best >= bottleneck * 0.95, "samples reach the bottleneck rate once the queue holds data: {best}");
}
