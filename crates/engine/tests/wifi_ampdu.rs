//! A-MPDU aggregation with block ack on 802.11n and 802.11ac channels (IEEE 802.11-2020 10.12
//! A-MPDU, 10.25 block ack, 9.3.1.8 compressed BlockAck; docs/models/wifi.md "A-MPDU and block
//! ack"), driven directly and under TCP.

use tcpenergy_engine::config::phy::{HtFormat, HtMode};
use tcpenergy_engine::config::{Impairment, Phase};
use tcpenergy_engine::net::impair::AnyImpairment;
use tcpenergy_engine::net::wifi::dcf::{AirRole, Dcf, DcfConfig, FrameKind, Out, StationCounters, Timer};
use tcpenergy_engine::net::wifi::ht::HtPhy;
use tcpenergy_engine::net::wifi::phy::Standard;
use tcpenergy_engine::sim::queue::EventQueue;
use tcpenergy_engine::units::{SimDuration, SimTime};
use tcpenergy_engine::{run_network, Scenario};

/// IP bytes of every packet: a 1538-byte QoS data MPDU (+ 8 LLC/SNAP + 26 header + 4 FCS).
const PACKET: u32 = 1500;
const SENDER: usize = 0;
const SINK: usize = 1;

fn mode(format: HtFormat, mcs: u8, bandwidth_mhz: u16, streams: u8, short_gi: bool) -> HtMode {
    HtMode { format, mcs, bandwidth_mhz, streams, short_gi }
}

/// MCS 7, 20 MHz, one stream, long guard interval: 65 Mbit/s.
fn mcs7() -> HtMode {
    mode(HtFormat::HtMixed, 7, 20, 1, false)
}

/// Two stations on a clean channel of `mode`, `ampdu_max` MPDUs per A-MPDU (0: off), the
/// mandatory OFDM basic rates, room for 256 frames.
fn channel(mode: HtMode, ampdu_max: u32) -> DcfConfig {
    let phy = HtPhy::new(mode).unwrap();
    let mut cfg = DcfConfig::dsss(2);
    cfg.standard = if mode.format == HtFormat::Vht { Standard::Ac } else { Standard::N };
    cfg.basic_rates = vec![6_000_000, 12_000_000, 24_000_000];
    cfg.data_rate = phy.data_rate_bps();
    cfg.ht = Some(phy);
    cfg.ampdu_max = ampdu_max;
    cfg.queue = 256;
    cfg
}

#[derive(Default)]
struct Seen {
    sender: StationCounters,
    sink: StationCounters,
    /// Payload ids in the order they went up at the sink.
    delivered: Vec<u32>,
    /// Payloads the sender is done with (acknowledged or discarded), each once.
    finished: Vec<u32>,
    /// (station, role, kind, start, end) of every frame on the air.
    air: Vec<(usize, AirRole, FrameKind, SimTime, SimTime)>,
    retry_shares: u32,
}

/// The sender always holds `backlog` packets for the sink (ids 0, 1, 2, ...) until `end`.
fn saturated(cfg: DcfConfig, loss: Vec<AnyImpairment>, end: SimTime, backlog: u32) -> Seen {
    let mut dcf: Dcf<u32> = Dcf::new(cfg, loss, 1, "channels.0");
    let mut q: EventQueue<Timer> = EventQueue::with_capacity(64);
    let mut seen = Seen::default();
    let mut next = 0;
    for _ in 0..backlog {
        dcf.enqueue(SimTime::ZERO, SENDER, SINK, next, PACKET);
        next += 1;
    }
    let mut now = SimTime::ZERO;
    loop {
        for out in dcf.drain().collect::<Vec<_>>() {
            match out {
                Out::Schedule(at, t) => q.push(at, t),
                Out::Delivered { payload, .. } => seen.delivered.push(payload),
                Out::Acked { payload, .. } | Out::Dropped { payload, .. } => {
                    seen.finished.push(payload);
                    dcf.enqueue(now, SENDER, SINK, next, PACKET);
                    next += 1;
                }
                Out::Air { station, role, kind, start, end, .. } => seen.air.push((station, role, kind, start, end)),
                Out::RetryShare { .. } => seen.retry_shares += 1,
                Out::Sent { .. } | Out::Power { .. } => {}
            }
        }
        let Some((t, timer)) = q.pop() else { break };
        if t > end {
            break;
        }
        now = t;
        dcf.on_timer(t, timer);
    }
    seen.sender = dcf.counters(SENDER);
    seen.sink = dcf.counters(SINK);
    seen
}

fn secs(s: f64) -> SimTime {
    SimTime((s * 1e9) as u64)
}

/// Delivered IP bits per second over `[0, end)`.
fn throughput(seen: &Seen, end: SimTime) -> f64 {
    seen.delivered.len() as f64 * 8.0 * PACKET as f64 / (end.0 as f64 * 1e-9)
}

#[test]
fn one_saturated_station_reaches_the_hand_computed_a_mpdu_throughput_10_12() {
    // MCS 7, 20 MHz, 1 stream, long GI (N_DBPS 260). The A-MPDU is cut by aPPDUMaxTime (5.484
    // ms): 28 subframes of 1544 bytes, the last unpadded: 27 x 1544 + 1542 = 43,230 bytes.
    // TXTIME = 36 us (HT-mixed preamble, one HT-LTF) + 4 us x ceil((16 + 8 x 43230 + 6) / 260)
    //        = 36 + 4 x 1331 = 5360 us.
    // BlockAck: 32 bytes at 24 Mbit/s (the highest basic rate not above MCS 7's non-HT
    // reference rate, 54): 20 + 4 x ceil((16 + 256 + 6) / 96) = 32 us.
    // One cycle: DIFS 34 + mean backoff 7.5 x 9 = 67.5 + 5360 + SIFS 16 + 32 = 5509.5 us,
    // carrying 28 x 1500 x 8 = 336,000 bits: 60.99 Mbit/s.
    let phy = HtPhy::new(mcs7()).unwrap();
    assert_eq!(phy.txtime(43_230), SimDuration(5_360_000));
    let expected = 336_000.0 / 5509.5e-6;
    let end = secs(20.0);
    let got = saturated(channel(mcs7(), 64), Vec::new(), end, 100);
    assert_eq!(got.sender.ampdu_mpdus, 28 * got.sender.ampdus_sent, "{:?}", got.sender);
    assert_eq!((got.sender.retries, got.sender.collisions), (0, 0));
    // The backoff's mean over ~3600 cycles has a standard error of 4.6 slots / 60 = 0.7 us.
    let err = (throughput(&got, end) - expected).abs() / expected;
    assert!(err < 0.001, "{:.0} vs {:.0} bit/s", throughput(&got, end), expected);

    // Without aggregation: DATA = 36 + 4 x ceil(12326 / 260) = 36 + 192 = 228 us, ACK (14 bytes
    // at 24 Mbit/s) = 20 + 4 x ceil(134 / 96) = 28 us; a cycle of 34 + 67.5 + 228 + 16 + 28 =
    // 373.5 us carries 12,000 bits: 32.13 Mbit/s, about half.
    let expected_off = 12_000.0 / 373.5e-6;
    let off = saturated(channel(mcs7(), 0), Vec::new(), end, 100);
    let err = (throughput(&off, end) - expected_off).abs() / expected_off;
    assert!(err < 0.003, "{:.0} vs {:.0} bit/s", throughput(&off, end), expected_off);
    eprintln!("A-MPDU {:.3} Mbit/s, one MPDU per PPDU {:.3} Mbit/s", throughput(&got, end) / 1e6, throughput(&off, end) / 1e6);
    assert!(throughput(&got, end) > 1.85 * throughput(&off, end));
}

#[test]
fn an_a_mpdu_holds_at_most_64_mpdus_65535_bytes_and_5484_us_10_12_2() {
    let end = secs(0.5);
    let per_ampdu = |mode: HtMode, max: u32| {
        let c = saturated(channel(mode, max), Vec::new(), end, 200).sender;
        assert!(c.ampdus_sent > 10);
        assert_eq!(c.ampdu_mpdus % c.ampdus_sent, 0, "{c:?}");
        c.ampdu_mpdus / c.ampdus_sent
    };
    // 65 Mbit/s: the PPDU's duration binds (28, as computed above).
    assert_eq!(per_ampdu(mcs7(), 64), 28);
    // 300 Mbit/s (MCS 7, 2 streams, 40 MHz, short GI): HT's 65,535 bytes bind: 41 x 1544 +
    // 1542 = 64,846 bytes; a 43rd subframe would reach 66,390.
    assert_eq!(per_ampdu(mode(HtFormat::HtMixed, 7, 40, 2, true), 64), 42);
    // 866.7 Mbit/s VHT: the block ack window binds (64 x 1544 bytes take 0.95 ms).
    assert_eq!(per_ampdu(mode(HtFormat::Vht, 9, 80, 2, true), 64), 64);
    // The configured maximum binds below all of them.
    assert_eq!(per_ampdu(mode(HtFormat::Vht, 9, 80, 2, true), 16), 16);
    assert_eq!(per_ampdu(mcs7(), 1), 1);
}

#[test]
fn per_mpdu_loss_retransmits_only_the_lost_mpdus_and_each_goes_up_once_in_order_10_25_6() {
    // A bit error rate that loses a 1538-byte MPDU with probability 0.1 (1 - 0.9^(1/12304)) and
    // a 32-byte BlockAck with probability 0.002. Retransmitting only the lost MPDUs costs about
    // 0.1 retries per attempt; retransmitting whole A-MPDUs would cost 1 - 0.9^28 = 0.95.
    let ber = 1.0 - 0.9f64.powf(1.0 / 12_304.0);
    let loss = vec![AnyImpairment::new(&Impairment::BitError { ber }, 1, "channels.0.impairments.0")];
    let end = secs(5.0);
    let got = saturated(channel(mcs7(), 64), loss, end, 100);
    let share = got.sender.retries as f64 / got.sender.data_attempts as f64;
    assert!((0.09..0.115).contains(&share), "retries per attempt {share:.3}: {:?}", got.sender);
    assert_eq!(got.sender.drops_retry_limit, 0);
    // The recipient's reordering buffer passes every MPDU up once, in sequence order.
    assert!(got.delivered.len() > 10_000);
    assert!(got.delivered.iter().enumerate().all(|(k, &id)| k as u32 == id), "out of order or twice");
    // The sender frees each payload once: its own copy at the BlockAck, or the recipient's
    // held copy when it goes up.
    let mut finished = got.finished.clone();
    finished.sort_unstable();
    finished.dedup();
    assert_eq!(finished.len(), got.finished.len());
    assert!(got.retry_shares > 0, "retransmitted MPDUs are charged as retries");
}

#[test]
fn a_lost_block_ack_makes_the_originator_send_the_whole_a_mpdu_again_and_the_recipient_drops_the_copies_10_25_6() {
    let end = secs(0.05);
    let clean = saturated(channel(mcs7(), 64), Vec::new(), end, 100);
    let first_ba = clean.air.iter().find(|a| a.0 == SINK && a.1 == AirRole::Transmit && a.2 == FrameKind::BlockAck).expect("a BlockAck").4;
    // Lose exactly that BlockAck at the sender (frames are judged when they end).
    let window = Impairment::PeriodicBurst {
        p: 1.0,
        on: SimDuration(2_000),
        every: SimDuration(1_000_000_000_000),
        offset: Phase::At(SimDuration(first_ba.0 - 1_000)),
        phase_group: None,
    };
    let got = saturated(channel(mcs7(), 64), vec![AnyImpairment::new(&window, 1, "channels.0.impairments.0")], end, 100);
    // The first A-MPDU's 28 MPDUs all went again; the sink had them and acknowledged them again.
    assert_eq!(got.sender.retries, 28, "{:?}", got.sender);
    assert_eq!(got.sink.duplicates, 28, "{:?}", got.sink);
    assert_eq!(got.sender.drops_retry_limit, 0);
    assert!(got.delivered.iter().enumerate().all(|(k, &id)| k as u32 == id));
    assert_eq!(got.delivered.len(), clean.delivered.len() - 28, "one A-MPDU's time lost to the repeat");
    // The repeat is charged as retries, the BlockAcks as control frames.
    assert!(got.retry_shares >= 2, "sender and recipient");
}

#[test]
fn aggregation_off_is_the_plain_dcf_exchange_data_sifs_ack_10_3() {
    let end = secs(0.05);
    let got = saturated(channel(mcs7(), 0), Vec::new(), end, 10);
    assert_eq!((got.sender.ampdus_sent, got.sink.block_acks_sent), (0, 0));
    assert_eq!(got.sink.acks_sent, got.delivered.len() as u64);
    let tx = |who: usize, kind: FrameKind| got.air.iter().filter(move |a| a.0 == who && a.1 == AirRole::Transmit && a.2 == kind);
    for ((_, _, _, start, end), (_, _, _, ack_start, ack_end)) in tx(SENDER, FrameKind::Data).zip(tx(SINK, FrameKind::Ack)) {
        // DATA 228 us, SIFS 16 us, ACK 28 us (computed in the throughput test).
        assert_eq!(end.0 - start.0, 228_000);
        assert_eq!(ack_start.0 - end.0, 16_000);
        assert_eq!(ack_end.0 - ack_start.0, 28_000);
    }
    assert_eq!(tx(SENDER, FrameKind::Ampdu).count(), 0);
}

fn tcp_over(keys: &str, loss: f64) -> String {
    format!(
        r#"
stop_after = "120s"
[energy]
default_profile = "ideal-nic-0.3"
[nodes]
s = {{}}
r = {{}}
[[channels]]
name = "air"
standard = "802.11n"
nodes = ["s", "r"]
bandwidth = "20MHz"
mcs = 7
queue = 128
impairments = [{{ kind = "bernoulli", p = {loss} }}]
{keys}
[tcp]
variant = "sack"
receive_buffer = "1MB"
window_scale = true
[[flows]]
name = "bulk"
from = "s"
to = "r"
traffic = {{ kind = "bulk", bytes = "4MB" }}
"#
    )
}

#[test]
fn under_tcp_mpdu_losses_stay_below_ip_every_byte_arrives_once_and_in_order_10_25_6() {
    // 10 % loss on every MPDU, BlockAck and TCP ACK frame: the MAC repeats the lost MPDUs and
    // the recipient's reordering buffer hands TCP its segments in order, so the TCP sender never
    // sees a duplicate ACK or a timeout.
    let r = run_network(&Scenario::from_toml(&tcp_over("", 0.1)).unwrap(), 1).unwrap();
    assert!(r.complete);
    let f = r.flow.as_ref().unwrap();
    assert_eq!(f.bytes_delivered, 4_000_000);
    assert_eq!((f.retransmissions, f.fast_retransmits, f.timeouts), (0, 0, 0), "{f:?}");
    let ch = &r.channels["air"];
    assert!(ch.totals.retries > 200 && ch.totals.ampdus_sent > 0 && ch.totals.block_acks_sent > 0, "{:?}", ch.totals);
    assert_eq!(ch.totals.drops_retry_limit, 0);
    // BlockAcks are control frames to the meters; the repeats are retries.
    let s = &r.nodes["s"].energy.breakdown_j;
    assert!(s.mac_control > 0.0 && s.retries > 0.0, "{s:?}");
    // Aggregation off: the same transfer, slower on the air.
    let off = run_network(&Scenario::from_toml(&tcp_over("ampdu = false", 0.1)).unwrap(), 1).unwrap();
    assert!(off.complete);
    assert_eq!(off.channels["air"].totals.ampdus_sent, 0);
    eprintln!("TCP 4 MB at MCS 7 with 10 % loss: {:.3} s aggregated, {:.3} s not", f.completion_s, off.flow.as_ref().unwrap().completion_s);
    assert!(off.flow.as_ref().unwrap().completion_s > f.completion_s, "{} vs {}", off.flow.as_ref().unwrap().completion_s, f.completion_s);
}

mod random_channels {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(40))]

        /// Any `hears` graph, RTS threshold, A-MPDU size, loss and senders (each keeping a few
        /// frames queued): no panic; each payload goes up at most once and, per pair, in the
        /// order it was handed in; the sender is done with each at most once; and a payload the
        /// sender is done with has gone up or was given up (10.25.6).
        #[test]
        fn every_mpdu_goes_up_once_in_order_and_is_freed_once_on_any_channel(
            n in 2usize..6,
            links in proptest::collection::vec(any::<bool>(), 36),
            rts in prop_oneof![Just(None), (0u32..70_000).prop_map(Some)],
            max in 1u32..=64,
            loss in 0.0f64..0.6,
            senders in proptest::collection::vec((0usize..6, 0usize..6), 1..5),
            seed in any::<u64>(),
        ) {
            let mut cfg = channel(mcs7(), max);
            cfg.hears = (0..n).map(|a| (0..n).map(|b| a != b && (links[a * 6 + b] || links[b * 6 + a])).collect()).collect();
            cfg.rts_threshold = rts.map(|t| t.min(2347));
            cfg.short_retry_limit = 3;
            cfg.queue = 8;
            let mut sources: Vec<(usize, usize)> = senders.iter().map(|&(a, b)| (a % n, b % n)).filter(|(a, b)| a != b).collect();
            sources.sort_unstable();
            sources.dedup_by_key(|s| s.0);
            prop_assume!(!sources.is_empty());
            let loss = vec![AnyImpairment::new(&Impairment::Bernoulli { p: loss, reference_bytes: None }, seed, "channels.0.impairments.0")];
            let mut dcf: Dcf<u32> = Dcf::new(cfg, loss, seed, "channels.0");
            let mut q: EventQueue<Timer> = EventQueue::with_capacity(64);
            // Payload id = 1000 x source index + its number.
            let mut handed = vec![0u32; sources.len()];
            for (k, &(from, to)) in sources.iter().enumerate() {
                for _ in 0..6 {
                    dcf.enqueue(SimTime::ZERO, from, to, 1000 * k as u32 + handed[k], PACKET);
                    handed[k] += 1;
                }
            }
            let (mut up, mut done) = (Vec::new(), Vec::new());
            let mut now = SimTime::ZERO;
            loop {
                for out in dcf.drain().collect::<Vec<_>>() {
                    match out {
                        Out::Schedule(at, t) => q.push(at, t),
                        Out::Delivered { payload, .. } => up.push(payload),
                        Out::Acked { from, payload } | Out::Dropped { from, payload, .. } => {
                            done.push((payload, matches!(out, Out::Acked { .. })));
                            let k = sources.iter().position(|s| s.0 == from).unwrap();
                            if handed[k] < 200 {
                                dcf.enqueue(now, from, sources[k].1, 1000 * k as u32 + handed[k], PACKET);
                                handed[k] += 1;
                            }
                        }
                        _ => {}
                    }
                }
                let Some((t, timer)) = q.pop() else { break };
                if t > SimTime(2_000_000_000) {
                    break;
                }
                now = t;
                dcf.on_timer(t, timer);
            }
            let mut once = up.clone();
            once.sort_unstable();
            once.dedup();
            prop_assert_eq!(once.len(), up.len(), "a payload went up twice");
            for k in 0..sources.len() as u32 {
                let mine: Vec<u32> = up.iter().copied().filter(|p| p / 1000 == k).collect();
                prop_assert!(mine.windows(2).all(|w| w[0] < w[1]), "out of order: {:?}", mine);
            }
            let mut freed: Vec<u32> = done.iter().map(|d| d.0).collect();
            freed.sort_unstable();
            freed.dedup();
            prop_assert_eq!(freed.len(), done.len(), "freed twice");
            // Acknowledged means it went up.
            for &(p, acked) in &done {
                prop_assert!(!acked || up.contains(&p), "{} acknowledged but never delivered", p);
            }
        }
    }
}
