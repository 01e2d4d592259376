//! A TCP endpoint, sans-I/O: segments and the current time go in, segments come out, and it
//! reports its next deadline. It never touches the event queue (as in smoltcp and quinn-proto),
//! so unit tests can drive it by hand on a timeline. Nor does it touch a CPU meter: the work its
//! parts do is reported in order into its [`OpLog`], which the world drains ([`Endpoint::ops`])
//! into the node's meter after every call.

use super::linux::receive::LinuxReceiveParams;
use super::receiver::{Receiver, ReceiverParams};
use super::recipe::Recipe;
pub use super::send_half::AnySender;
use super::send_half::SendHalf;
use super::segment::{max_sack_blocks, Flags, Segment, SynOptions, Timestamps};
use super::sender::{timestamp_ms, OutSegment};
use crate::config::{HeaderPrediction, Scenario, TcpConfig};
use crate::energy::cpu::{Op, OpLog};
use crate::units::{SimDuration, SimTime};

/// Which side opens the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Sends the SYN (the data sender in a bulk transfer).
    Active,
    /// Waits for a SYN.
    Passive,
}

/// Counters of what the endpoint put on the wire.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EndpointCounters {
    /// Segments without payload, SYN or FIN.
    pub pure_acks_sent: u64,
    pub sack_blocks_sent: u64,
    pub segments_out: u64,
}

#[derive(Debug, Clone)]
pub struct Endpoint {
    pub role: Role,
    pub sender: AnySender,
    pub receiver: Option<Receiver>,
    receiver_params: ReceiverParams,
    timestamps: bool,
    sack: bool,
    window_scale: Option<u8>,
    mss_option: u16,
    /// E2TCP's compact headers on every segment sent (seed 001 §2.3).
    compact_headers: bool,
    /// Since when the application has had data written and not yet acknowledged, if it has.
    busy_since: Option<SimTime>,
    busy_ns: u64,
    /// CPU operations of this endpoint and its parts, in the order performed.
    ops: OpLog,
    pub counters: EndpointCounters,
}

impl Endpoint {
    /// An endpoint with the TCP settings of `scenario`, on its single path, that will send
    /// `app_bytes` and then close; `None` for a network scenario, whose connections each have
    /// their own path MTU ([`Endpoint::with_settings`]).
    pub fn new(scenario: &Scenario, role: Role, app_bytes: u64) -> Option<Self> {
        scenario.path().map(|p| Self::with_settings(&scenario.tcp, p.mtu, role, app_bytes, true))
    }

    /// An endpoint with TCP settings `tcp` on a path of MTU `mtu`. The active side opens at
    /// once; with `close_after`, it closes after `app_bytes` (more may be written with
    /// [`Endpoint::write`] otherwise).
    pub fn with_settings(tcp: &TcpConfig, mtu: u32, role: Role, app_bytes: u64, close_after: bool) -> Self {
        let smss = super::segment::smss(mtu, tcp.timestamps);
        let recipe = Recipe::for_tcp(tcp, smss);
        let linux = tcp.stack == Some(crate::config::Stack::Linux6) && recipe.info.linux.is_some();
        let window_scale = if tcp.window_scale { Some(window_scale_shift(scale_space(tcp, linux))) } else { None };
        let max_window = tcp.max_window();
        let linux_receive = linux.then(|| LinuxReceiveParams {
            mss: smss,
            rcvbuf: if tcp.receive_autotune { LINUX_RMEM_DEFAULT } else { tcp.receive_buffer * 256 / LINUX_SCALING_RATIO },
            rcvbuf_max: if tcp.receive_autotune { LINUX_RMEM_MAX } else { tcp.receive_buffer * 256 / LINUX_SCALING_RATIO },
            window_clamp: Some(tcp.receive_buffer.min(max_window)),
            scaling_ratio: LINUX_SCALING_RATIO,
            wscale: window_scale.unwrap_or(0),
            sack: recipe.ack.sack,
            dsack: recipe.ack.sack,
            quickack_always: tcp.delayed_ack.every == 1,
            jiffy: tcp.delayed_ack_tick,
        });
        let receiver_params = ReceiverParams {
            sack: recipe.ack.sack,
            max_sack_blocks: recipe.ack.max_sack_blocks.unwrap_or_else(|| max_sack_blocks(tcp.timestamps)),
            ack_every_packet: recipe.ack.ack_every_packet,
            timestamps: tcp.timestamps,
            delack_every: tcp.delayed_ack.every,
            delack_timeout: tcp.delayed_ack.timeout,
            delack_window_update: tcp.delayed_ack.window_update,
            delack_tick: tcp.delayed_ack_tick,
            // Linux offers its initial window in the SYN: whole segments, at most 64 KiB.
            window: match &linux_receive {
                Some(l) => (l.rcvbuf * LINUX_SCALING_RATIO / 256).min(65_535).min(tcp.receive_buffer) / smss as u64 * smss as u64,
                None => tcp.receive_buffer.min(max_window),
            } as u32,
            mss: smss,
            ecn: tcp.ecn_enabled(),
            predict_first: tcp.header_prediction == HeaderPrediction::PredictFirst,
            read_on_demand: false,
            linux: linux_receive,
        };
        let mut sender = recipe.build_sender(tcp, app_bytes);
        if role == Role::Active {
            sender.open(smss as u64);
            if close_after {
                sender.close();
            }
        }
        Self {
            role,
            sender,
            receiver: None,
            receiver_params,
            timestamps: tcp.timestamps,
            sack: recipe.ack.sack,
            window_scale,
            mss_option: super::segment::mss_option(mtu),
            compact_headers: recipe.ack.compact_headers,
            busy_since: None,
            busy_ns: 0,
            ops: OpLog::default(),
            counters: EndpointCounters::default(),
        }
    }

    /// Follow whether written data awaits acknowledgment (seed 001's time overhead of paced
    /// traffic: how long the connection keeps the radio busy).
    fn track_busy(&mut self, now: SimTime) {
        let busy = self.sender.state().snd_una < self.sender.data_end();
        match (busy, self.busy_since) {
            (true, None) => self.busy_since = Some(now),
            (false, Some(since)) => {
                self.busy_ns += (now - since).0;
                self.busy_since = None;
            }
            _ => {}
        }
    }

    /// The CPU operations performed since the world last drained them, oldest first.
    #[inline]
    pub fn ops(&mut self) -> &mut OpLog {
        &mut self.ops
    }

    /// Move what the sender and the receiver reported to the endpoint's log. Called after every
    /// call into one of them, so the log keeps the order in which the work was done.
    #[inline]
    fn collect_ops(&mut self) {
        self.ops.append(self.sender.ops());
        if let Some(r) = &mut self.receiver {
            self.ops.append(&mut r.ops);
        }
    }

    /// Total time with written data not yet acknowledged, up to `now`.
    pub fn busy_time(&self, now: SimTime) -> SimDuration {
        SimDuration(self.busy_ns + self.busy_since.map_or(0, |s| (now.max(s) - s).0))
    }

    /// Handle one arriving segment.
    pub fn on_segment(&mut self, now: SimTime, seg: &Segment) {
        if seg.is_pure_ack() {
            self.ops.report(now, Op::AckReceived);
        }
        if seg.flags.contains(Flags::SYN) {
            match &mut self.receiver {
                None => {
                    self.receiver = Some(Receiver::new(self.receiver_params.clone(), seg.seq, seg.ts.map(|t| t.val)));
                    if self.role == Role::Passive {
                        self.sender.open(seg.window as u64);
                    }
                }
                // A repeated SYN: our acknowledgment was lost; acknowledge again.
                Some(r) => r.request_ack(),
            }
        }
        if seg.flags.contains(Flags::ACK) {
            self.sender.on_ack(now, seg);
            self.collect_ops();
        }
        if let Some(r) = &mut self.receiver {
            if !seg.flags.contains(Flags::SYN) {
                r.sender_rto = self.sender.rto();
                if let (Some(l), Some(s)) = (&mut r.linux, self.sender.as_linux()) {
                    l.srtt = s.srtt();
                }
                r.on_segment(now, seg);
                self.ops.append(&mut r.ops);
            }
            // The application reads EOF and closes its side at once (ttcp-like); one that reads
            // on demand, once it has read every byte before the FIN.
            if r.eof_read() && !self.sender.is_closing() {
                self.sender.close();
            }
        }
        self.track_busy(now);
    }

    /// The next segment to transmit now, if any.
    pub fn poll_transmit(&mut self, now: SimTime) -> Option<Segment> {
        let seg = self.next_segment(now);
        self.track_busy(now);
        seg
    }

    fn next_segment(&mut self, now: SimTime) -> Option<Segment> {
        let out = self.sender.poll_segment(now);
        self.collect_ops();
        if let Some(out) = out {
            return Some(self.build(now, out));
        }
        let due = self.receiver.as_ref().is_some_and(|r| r.ack_due(now));
        if due {
            let st = self.sender.state();
            let seq = st.snd_nxt.max(st.snd_una);
            let out = OutSegment { seq, len: 0, syn: false, fin: false, retransmission: false, ect: false, cwr: false, first_sent: now };
            self.ops.report(now, Op::AckSent);
            self.counters.pure_acks_sent += 1;
            return Some(self.build(now, out));
        }
        None
    }

    fn build(&mut self, now: SimTime, out: OutSegment) -> Segment {
        let mut flags = Flags::default();
        if out.syn {
            flags = flags.with(Flags::SYN);
        }
        if out.fin {
            flags = flags.with(Flags::FIN);
        }
        if out.cwr {
            flags = flags.with(Flags::CWR);
        }
        let mut seg = Segment::new(out.seq, 0, out.len, flags, self.receiver_params.window);
        if let Some(r) = &mut self.receiver {
            seg.flags = seg.flags.with(Flags::ACK);
            if r.ece {
                seg.flags = seg.flags.with(Flags::ECE);
            }
            (seg.ack, seg.window) = r.build_ack(now, &mut seg.sack);
            self.ops.append(&mut r.ops);
        }
        seg.retransmission = out.retransmission;
        seg.compact = self.compact_headers;
        seg.first_sent = out.first_sent;
        if out.ect {
            seg.ecn = super::segment::Ecn::Ect;
        }
        if self.timestamps {
            let ecr = self.receiver.as_ref().map_or(0, |r| r.ts_recent());
            seg.ts = Some(Timestamps { val: timestamp_ms(now), ecr });
        }
        if out.syn {
            seg.syn = Some(SynOptions {
                mss: self.mss_option,
                sack_permitted: self.sack,
                timestamps: self.timestamps,
                window_scale: self.window_scale,
            });
        }
        self.counters.sack_blocks_sent += seg.sack.len() as u64;
        self.counters.segments_out += 1;
        seg
    }

    /// Earliest time at which `on_timeout` has work to do.
    pub fn poll_timeout(&self) -> Option<SimTime> {
        let r = self.receiver.as_ref().and_then(|r| r.deadline());
        match (self.sender.deadline(), r) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Run whatever timers are due at `now`.
    pub fn on_timeout(&mut self, now: SimTime) {
        self.sender.on_timeout(now);
        self.collect_ops();
        if let Some(r) = &mut self.receiver {
            r.on_timeout(now);
            self.ops.append(&mut r.ops);
        }
        self.track_busy(now);
    }

    /// A route-failure or route-restored notice (ELFN) reached this node.
    pub fn on_route_notice(&mut self, now: SimTime, restored: bool) {
        self.sender.on_route_notice(now, restored);
        self.collect_ops();
    }

    /// The application will read on demand ([`Endpoint::read`]) rather than at once, so the
    /// window advertises the space its unread bytes leave. Set before the peer's SYN arrives.
    pub fn read_on_demand(mut self) -> Self {
        self.receiver_params.read_on_demand = true;
        self
    }

    /// Reading on demand: the application reads up to `max` in-order bytes (how many it got);
    /// after the last byte before the peer's FIN it closes its side, as `on_segment` does.
    pub fn read(&mut self, max: u64) -> u64 {
        let Some(r) = &mut self.receiver else { return 0 };
        let n = r.read(max);
        if r.eof_read() && !self.sender.is_closing() {
            self.sender.close();
        }
        n
    }

    /// Reading on demand: in-order bytes the application has not read yet.
    pub fn unread(&self) -> u64 {
        self.receiver.as_ref().map_or(0, |r| r.unread())
    }

    /// The application writes `bytes` more.
    pub fn write(&mut self, bytes: u64) {
        self.sender.write(bytes);
    }

    /// The application writes nothing more: the connection closes after what was sent.
    pub fn stop_writing(&mut self, now: SimTime) {
        self.sender.stop_writing(now);
    }

    /// Both directions finished: our FIN acknowledged and the peer's FIN received.
    pub fn is_closed(&self) -> bool {
        self.sender.fin_acked() && self.receiver.as_ref().is_some_and(|r| r.fin_received)
    }
}

/// Linux's `tcp_rmem[1]` and `tcp_rmem[2]`: the receive buffer autotuning starts from and its
/// ceiling (32 MiB since Linux 6.16).
const LINUX_RMEM_DEFAULT: u64 = 131_072;
const LINUX_RMEM_MAX: u64 = 33_554_432;
/// The share of receive-buffer memory Linux counts as window (`scaling_ratio`, in 1/256): a
/// full-sized segment's payload over the memory its buffer takes, about 1448 / 2304 for a
/// 1500-byte packet (estimate; docs/models/tcp.md#the-linux-stack).
const LINUX_SCALING_RATIO: u64 = 160;

/// The space the window scale must cover: the buffer, or on the Linux stack what
/// `tcp_select_initial_window` uses (the autotuning ceiling, unless a smaller clamp is set).
fn scale_space(tcp: &TcpConfig, linux: bool) -> u64 {
    if linux && tcp.receive_autotune {
        LINUX_RMEM_MAX.min(tcp.receive_buffer * 256 / LINUX_SCALING_RATIO).max(tcp.receive_buffer.min(LINUX_RMEM_MAX))
    } else {
        tcp.receive_buffer
    }
}

/// Smallest shift that lets the 16-bit window field express `buffer` (RFC 7323 §2.3, max 14).
fn window_scale_shift(buffer: u64) -> u8 {
    let mut shift = 0u8;
    while shift < 14 && (buffer >> shift) > 65_535 {
        shift += 1;
    }
    shift
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The endpoint reports its parts' work in the order it was done: the SYN is built and sent
    /// (a segment without data), then the retransmission timer armed (RFC 6298 §5.1).
    #[test]
    fn an_endpoint_reports_the_work_of_a_send_in_the_order_done() {
        let mut ep = Endpoint::with_settings(&TcpConfig::default(), 1500, Role::Active, 10_000, true);
        let syn = ep.poll_transmit(SimTime(5)).expect("the SYN");
        assert!(syn.flags.contains(Flags::SYN));
        let ops: Vec<(SimTime, Op)> = ep.ops().drain().collect();
        assert_eq!(ops, [(SimTime(5), Op::AckSent), (SimTime(5), Op::TimerSet)]);
        assert!(ep.poll_transmit(SimTime(5)).is_none());
        assert!(ep.ops().is_empty(), "nothing sent, nothing reported");
    }
}
