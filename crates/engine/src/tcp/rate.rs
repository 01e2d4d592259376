//! Delivery-rate sampling (draft-cheng-iccrg-delivery-rate-estimation-02, as Linux's
//! tcp_rate.c): each transmission records how much the connection had delivered and when
//! (`TxRecord`); when an ACK newly delivers data, the newest packet it covers gives a sample of
//! the bytes delivered over the interval since that packet was sent. Congestion controllers get
//! one `RateSample` per ACK, so rate- and delay-based ones (BBR, Vegas) need nothing else.
//!
//! The sampler only observes: it never changes what the sender does.

use crate::units::{SimDuration, SimTime};

/// What a packet remembers of the connection when it is (re)transmitted (draft §3.2:
/// P.delivered, P.delivered_time, P.first_sent_time, P.is_app_limited, P.send_time).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TxRecord {
    pub delivered: u64,
    pub delivered_time: SimTime,
    pub first_sent_time: SimTime,
    pub sent_time: SimTime,
    pub app_limited: bool,
}

/// What one ACK newly delivered (cumulatively or by SACK): its bytes, and the record of the
/// most recently sent packet among them (with its end sequence number, to break ties).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Delivery {
    pub bytes: u64,
    newest: Option<(TxRecord, u64)>,
}

impl Delivery {
    /// A packet ending at `end` with `bytes` of payload, sent as `tx` says, was delivered.
    pub fn add(&mut self, tx: TxRecord, end: u64, bytes: u64) {
        self.bytes += bytes;
        // Draft §3.3 IsNewestPacket: the latest send, the higher sequence on a tie.
        if self.newest.is_none_or(|(n, e)| (tx.sent_time, end) > (n.sent_time, e)) {
            self.newest = Some((tx, end));
        }
    }

    pub fn merge(&mut self, other: Delivery) {
        self.bytes += other.bytes;
        if let Some((tx, end)) = other.newest {
            if self.newest.is_none_or(|(n, e)| (tx.sent_time, end) > (n.sent_time, e)) {
                self.newest = Some((tx, end));
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.newest.is_none()
    }
}

/// One ACK's rate sample (draft §3.3 GenerateRateSample).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RateSample {
    /// Payload bytes this ACK newly delivered.
    pub newly_delivered: u64,
    /// Bytes delivered over `interval` (rs.delivered), when the ACK gives a valid sample.
    pub delivered: u64,
    /// rs.interval = max(send_elapsed, ack_elapsed); `None` when the ACK delivered nothing or
    /// the interval is shorter than the minimum RTT seen (draft §3.3: not a valid sample).
    pub interval: Option<SimDuration>,
    /// The RTT sample this ACK gave the RFC 6298 estimator, if any.
    pub rtt: Option<SimDuration>,
    /// The packet the sample comes from was sent while the application, not the network,
    /// limited the sending rate (draft §3.4): the rate is a lower bound of the path's.
    pub app_limited: bool,
}

impl RateSample {
    /// delivered / interval in bytes per second, for a valid sample.
    pub fn rate_bytes_per_s(&self) -> Option<f64> {
        self.interval.filter(|i| i.0 > 0).map(|i| self.delivered as f64 / i.as_secs_f64())
    }
}

/// The connection's delivery state (draft §3.1: C.delivered, C.delivered_time,
/// C.first_sent_time, C.app_limited).
#[derive(Debug, Clone, Default)]
pub struct DeliveryRate {
    delivered: u64,
    delivered_time: SimTime,
    first_sent_time: SimTime,
    /// C.app_limited: the delivered count at which the application-limited phase ends, 0 if none.
    app_limited_until: u64,
    min_rtt: Option<SimDuration>,
}

impl DeliveryRate {
    /// A packet is (re)transmitted at `now`; `nothing_in_flight`: no packet is outstanding, so a
    /// new flight starts (draft §3.2).
    pub fn on_send(&mut self, now: SimTime, nothing_in_flight: bool) -> TxRecord {
        if nothing_in_flight {
            self.first_sent_time = now;
            self.delivered_time = now;
        }
        TxRecord {
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            first_sent_time: self.first_sent_time,
            sent_time: now,
            app_limited: self.app_limited_until != 0,
        }
    }

    /// The sender has no data to send and room in its window (draft §3.4
    /// CheckIfApplicationLimited): samples from packets sent until what is in flight now is
    /// delivered are marked application-limited.
    pub fn on_app_limited(&mut self, in_flight: u64) {
        self.app_limited_until = (self.delivered + in_flight).max(1);
    }

    /// Total bytes delivered so far (C.delivered).
    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    /// The sample of an ACK at `now` that delivered `d` and gave the RTT sample `rtt`.
    pub fn sample(&mut self, now: SimTime, d: Delivery, rtt: Option<SimDuration>) -> RateSample {
        if let Some(r) = rtt {
            self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
        }
        let Some((p, _)) = d.newest else {
            return RateSample { rtt, app_limited: self.app_limited_until != 0, ..RateSample::default() };
        };
        // Draft §3.3 UpdateRateSample, for every packet at once: they share this ACK's time.
        self.delivered += d.bytes;
        self.delivered_time = now;
        self.first_sent_time = p.sent_time;
        if self.app_limited_until != 0 && self.delivered > self.app_limited_until {
            self.app_limited_until = 0;
        }
        let send_elapsed = p.sent_time - p.first_sent_time;
        let ack_elapsed = self.delivered_time - p.delivered_time;
        // The longer phase bounds the rate: a burst of ACKs (ack compression) or of sends
        // must not make the path look faster than it is.
        let interval = send_elapsed.max(ack_elapsed);
        let valid = self.min_rtt.is_none_or(|m| interval >= m);
        RateSample {
            newly_delivered: d.bytes,
            delivered: self.delivered - p.delivered,
            interval: valid.then_some(interval),
            rtt,
            app_limited: p.app_limited,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn ms(n: u64) -> SimTime {
        SimTime(n * 1_000_000)
    }

    fn delivery(tx: TxRecord, end: u64) -> Delivery {
        let mut d = Delivery::default();
        d.add(tx, end, MSS);
        d
    }

    /// Draft §2 and §3.3: a flight of ten packets sent at once and acknowledged one by one every
    /// 10 ms, 100 ms later: each ACK's sample counts what was delivered since the flight began,
    /// over the time since then (ack_elapsed, longer than send_elapsed = 0).
    #[test]
    fn a_flight_acknowledged_packet_by_packet_gives_delivered_over_ack_elapsed_rate_draft_s3_3() {
        let mut r = DeliveryRate::default();
        let sent: Vec<TxRecord> = (0..10).map(|i| r.on_send(ms(0), i == 0)).collect();
        for (i, tx) in sent.iter().enumerate() {
            let now = ms(100 + 10 * i as u64);
            let s = r.sample(now, delivery(*tx, (i as u64 + 1) * MSS), Some(now - ms(0)));
            assert_eq!(s.newly_delivered, MSS);
            assert_eq!(s.delivered, (i as u64 + 1) * MSS);
            assert_eq!(s.interval, Some(now - ms(0)));
        }
        assert_eq!(r.delivered(), 10 * MSS);
    }

    /// Draft §3.3: a packet whose ACK comes 20 ms after the delivery before it, but which was
    /// sent 320 ms after its flight's first packet, is sampled over the longer send phase, so a
    /// compressed ACK does not make the path look faster than it is.
    #[test]
    fn compressed_acks_take_the_longer_send_phase_as_the_interval_draft_s3_3() {
        let mut r = DeliveryRate::default();
        let a = r.on_send(ms(0), true);
        let _b = r.on_send(ms(5), false);
        r.sample(ms(310), delivery(a, MSS), None);
        // B is still out (it will be lost); C is sent behind it.
        let c = r.on_send(ms(320), false);
        assert_eq!((c.first_sent_time, c.delivered_time, c.delivered), (ms(0), ms(310), MSS));
        let s = r.sample(ms(330), delivery(c, 3 * MSS), None);
        // send_elapsed = 320 - 0 = 320 ms; ack_elapsed = 330 - 310 = 20 ms.
        assert_eq!(s.interval, Some(SimDuration::from_millis(320)));
        assert_eq!(s.delivered, MSS);
        assert_eq!(s.rate_bytes_per_s(), Some(MSS as f64 / 0.32));
    }

    /// Draft §3.3: an interval shorter than the minimum RTT cannot be a delivery rate of the
    /// path (a spurious retransmission acknowledged at once): no valid sample.
    #[test]
    fn an_interval_below_the_minimum_rtt_is_not_a_valid_sample_draft_s3_3() {
        let mut r = DeliveryRate::default();
        let tx = r.on_send(ms(0), true);
        r.sample(ms(100), delivery(tx, MSS), Some(SimDuration::from_millis(100)));
        let tx = r.on_send(ms(100), true);
        let s = r.sample(ms(105), delivery(tx, 2 * MSS), None);
        assert_eq!(s.interval, None);
        assert_eq!(s.rate_bytes_per_s(), None);
        assert_eq!(s.newly_delivered, MSS);
    }

    /// Draft §3.4: packets sent after the sender ran out of data carry the app-limited mark, and
    /// the mark ends once the data in flight at that moment has been delivered.
    #[test]
    fn samples_are_application_limited_until_the_bubble_is_delivered_draft_s3_4() {
        let mut r = DeliveryRate::default();
        let a = r.on_send(ms(0), true);
        let b = r.on_send(ms(0), false);
        assert!(!a.app_limited);
        // Nothing more to send with two packets in flight.
        r.on_app_limited(2 * MSS);
        let c = r.on_send(ms(10), false);
        assert!(c.app_limited);
        let s = r.sample(ms(100), delivery(a, MSS), None);
        assert!(!s.app_limited, "sent before the application ran dry");
        r.sample(ms(110), delivery(b, 2 * MSS), None);
        let s = r.sample(ms(120), delivery(c, 3 * MSS), None);
        assert!(s.app_limited, "sent while application-limited");
        // C.delivered (3 MSS) passed the mark (2 MSS): later sends are not limited.
        assert!(!r.on_send(ms(120), true).app_limited);
    }

    /// Draft §3.3: an ACK that delivers nothing new (a duplicate ACK) gives no rate sample but
    /// still carries its RTT sample, if any.
    #[test]
    fn an_ack_delivering_nothing_gives_no_interval_draft_s3_3() {
        let mut r = DeliveryRate::default();
        r.on_send(ms(0), true);
        let s = r.sample(ms(50), Delivery::default(), Some(SimDuration::from_millis(50)));
        assert_eq!((s.newly_delivered, s.delivered, s.interval), (0, 0, None));
        assert_eq!(s.rtt, Some(SimDuration::from_millis(50)));
    }
}
