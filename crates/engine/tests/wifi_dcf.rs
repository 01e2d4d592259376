//! The 802.11 DCF (IEEE 802.11-2020 10.3) on one channel, driven directly: saturation against
//! Bianchi's model (JSAC 2000) and the single-station closed form.

use tcpenergy_engine::net::wifi::bianchi;
use tcpenergy_engine::net::wifi::dcf::{AirRole, Dcf, DcfConfig, FrameKind, Out, Timer};
use tcpenergy_engine::net::wifi::phy::{self, Preamble, Standard};
use tcpenergy_engine::sim::queue::EventQueue;
use tcpenergy_engine::units::{SimDuration, SimTime};

/// IP bytes of every frame in the saturation runs.
const PACKET: u32 = 1500;

struct Outcome {
    /// IP payload bits per second that reached the sink.
    throughput_bps: f64,
    /// Share of data (or RTS) attempts that failed.
    failed_share: f64,
}

/// `n` stations that always have a frame for the sink (station n), all in range of each other,
/// for `secs` simulated seconds.
fn saturated(n: usize, mut cfg: DcfConfig, secs: u64, seed: u64) -> Outcome {
    cfg.hears = (0..=n).map(|a| (0..=n).map(|b| a != b).collect()).collect();
    let rts = cfg.rts_threshold.is_some();
    let mut dcf: Dcf<u32> = Dcf::new(cfg, Vec::new(), seed, "channels.0");
    let mut q: EventQueue<Timer> = EventQueue::with_capacity(64);
    let end = SimTime(secs * 1_000_000_000);
    let mut delivered_bits = 0u64;
    let mut now = SimTime::ZERO;
    for i in 0..n {
        for _ in 0..2 {
            dcf.enqueue(SimTime::ZERO, i, n, 0, PACKET);
        }
    }
    loop {
        for out in dcf.drain().collect::<Vec<_>>() {
            match out {
                Out::Schedule(at, t) => q.push(at, t),
                Out::Delivered { .. } => delivered_bits += 8 * PACKET as u64,
                // A saturated station has its next frame at once.
                Out::Acked { from, .. } | Out::Dropped { from, .. } => {
                    dcf.enqueue(now, from, n, 0, PACKET)
                }
                Out::Sent { .. } | Out::Air { .. } | Out::Power { .. } | Out::RetryShare { .. } => {}
            }
        }
        let Some((t, timer)) = q.pop() else { break };
        if t > end {
            break;
        }
        now = t;
        dcf.on_timer(t, timer);
    }
    let (mut attempts, mut succeeded) = (0u64, 0u64);
    for i in 0..n {
        let c = dcf.counters(i);
        attempts += if rts { c.rts_sent } else { c.data_attempts };
        succeeded += if rts {
            c.data_attempts
        } else {
            c.data_attempts - c.retries - c.drops_retry_limit
        };
    }
    Outcome {
        throughput_bps: delivered_bits as f64 / secs as f64,
        failed_share: 1.0 - succeeded as f64 / attempts as f64,
    }
}

fn us(d: SimDuration) -> f64 {
    d.0 as f64 * 1e-9
}

#[test]
fn one_station_on_a_clean_channel_sends_one_frame_per_difs_backoff_data_sifs_ack() {
    // 802.11-2020 10.3.4.3 with no contention: each frame costs DIFS + mean backoff (CWmin/2
    // slots) + DATA + SIFS + ACK, so throughput = payload / that, exactly in the mean.
    let cfg = DcfConfig::dsss(2);
    let t = Standard::B.timing();
    let data = phy::airtime(
        Standard::B,
        cfg.preamble,
        11_000_000,
        PACKET + phy::LLC_SNAP + phy::DATA_MAC_OVERHEAD,
    );
    let ack = phy::airtime(Standard::B, cfg.preamble, 2_000_000, phy::ACK_BYTES);
    let cycle = us(t.difs()) + t.cw_min as f64 / 2.0 * us(t.slot) + us(data) + us(t.sifs) + us(ack);
    let expected = 8.0 * PACKET as f64 / cycle;
    let secs = 100;
    let got = saturated(1, cfg, secs, 1);
    assert_eq!(got.failed_share, 0.0);
    // The backoff is uniform on 0..=CWmin slots: the mean cycle over N frames has standard error
    // sd(backoff) / sqrt(N); allow three of them.
    let frames = secs as f64 / cycle;
    let sd = ((((t.cw_min + 1) * (t.cw_min + 1) - 1) as f64) / 12.0).sqrt() * us(t.slot);
    let tolerance = 3.0 * sd / frames.sqrt() / cycle;
    let err = (got.throughput_bps - expected).abs() / expected;
    assert!(
        err < tolerance,
        "throughput {:.0} vs {:.0} bit/s ({:.3} % > {:.3} %)",
        got.throughput_bps,
        expected,
        100.0 * err,
        100.0 * tolerance
    );
}

/// Bianchi's collision time Tc is taken as the time until the stations that were not involved
/// may count again: the colliding frame (data, or RTS with RTS/CTS) plus EIFS, since they heard a
/// frame they could not decode (802.11-2020 10.3.2.3.7). The colliding stations themselves resume
/// after their ACK (CTS) timeout, a little earlier; the model has one Tc for all.
#[test]
fn saturation_throughput_matches_bianchis_model_basic_access_and_rts_cts() {
    for rts in [false, true] {
        for n in [1usize, 2, 5, 10, 20, 50] {
            let mut cfg = DcfConfig::dsss(n + 1);
            // The model retries until success; a large limit keeps drops out of the comparison.
            cfg.short_retry_limit = 1_000;
            cfg.long_retry_limit = 1_000;
            if rts {
                cfg.rts_threshold = Some(0);
            }
            let t = Standard::B.timing();
            let pre = cfg.preamble;
            let data = us(phy::airtime(
                Standard::B,
                pre,
                11_000_000,
                PACKET + phy::LLC_SNAP + phy::DATA_MAC_OVERHEAD,
            ));
            let ctl = |bytes| us(phy::airtime(Standard::B, pre, 2_000_000, bytes));
            let ack1 = us(phy::airtime(Standard::B, pre, 1_000_000, phy::ACK_BYTES));
            let (sifs, difs) = (us(t.sifs), us(t.difs()));
            let eifs = sifs + difs + ack1;
            let (ts, tc) = if rts {
                (
                    ctl(phy::RTS_BYTES)
                        + ctl(phy::CTS_BYTES)
                        + data
                        + ctl(phy::ACK_BYTES)
                        + 3.0 * sifs
                        + difs,
                    ctl(phy::RTS_BYTES) + eifs,
                )
            } else {
                (data + sifs + ctl(phy::ACK_BYTES) + difs, data + eifs)
            };
            let model = bianchi::saturation(n as u32, &t, ts, tc, 8.0 * PACKET as f64);
            let got = saturated(n, cfg, 100, 7);
            let err = (got.throughput_bps - model.throughput_bps) / model.throughput_bps;
            let line = format!(
                "rts {rts} n {n:2}: sim {:.3} Mbit/s model {:.3} ({:+.2} %), p sim {:.3} model {:.3}",
                got.throughput_bps / 1e6,
                model.throughput_bps / 1e6,
                100.0 * err,
                got.failed_share,
                model.p
            );
            println!("{line}");
            assert!(err.abs() < 0.03, "{line}");
            assert!((got.failed_share - model.p).abs() < 0.02, "{line}");
        }
    }
}

/// Drive `dcf` until `end`, handing each station's next frame in as soon as its last one left the
/// MAC (`sources`: (station, destination)); returns the outputs seen.
fn drive(
    dcf: &mut Dcf<u32>,
    sources: &[(usize, usize)],
    frames_each: u32,
    end: SimTime,
) -> Vec<Out<u32>> {
    let mut q: EventQueue<Timer> = EventQueue::with_capacity(64);
    let mut seen = Vec::new();
    let mut next_id = 0u32;
    let mut left: Vec<u32> = vec![frames_each; sources.len()];
    for (k, &(from, to)) in sources.iter().enumerate() {
        dcf.enqueue(SimTime::ZERO, from, to, next_id, PACKET);
        next_id += 1;
        left[k] -= 1;
    }
    let mut now = SimTime::ZERO;
    loop {
        // Handing in the next frame may schedule timers: drain until nothing is left.
        while let Some(batch) = Some(dcf.drain().collect::<Vec<_>>()).filter(|b| !b.is_empty()) {
            for out in batch {
                match out {
                    Out::Schedule(at, t) => q.push(at, t),
                    Out::Acked { from, .. } | Out::Dropped { from, .. } => {
                        let k = sources.iter().position(|s| s.0 == from).unwrap();
                        if left[k] > 0 {
                            left[k] -= 1;
                            dcf.enqueue(now, from, sources[k].1, next_id, PACKET);
                            next_id += 1;
                        }
                        seen.push(out);
                    }
                    other => seen.push(other),
                }
            }
        }
        let Some((t, timer)) = q.pop() else { break };
        if t > end {
            break;
        }
        now = t;
        dcf.on_timer(t, timer);
    }
    seen
}

#[test]
fn mac_retransmission_hides_frame_loss_until_the_retry_limit_10_3_4_4() {
    use tcpenergy_engine::config::Impairment;
    use tcpenergy_engine::net::impair::AnyImpairment;
    // Each attempt loses the data frame with p and, if it arrived, the ACK with p: an attempt
    // fails with 1 - (1 - p)^2. With r retries (r + 1 attempts) the sender discards a frame with
    // probability (1 - (1 - p)^2)^(r + 1); the receiver never gets it with probability p^(r + 1).
    let (p, r, frames) = (0.3, 3u32, 20_000u32);
    let mut cfg = DcfConfig::dsss(2);
    cfg.short_retry_limit = r + 1;
    let loss = vec![AnyImpairment::new(
        &Impairment::Bernoulli { p, reference_bytes: None },
        5,
        "channels.0.impairments.0",
    )];
    let mut dcf: Dcf<u32> = Dcf::new(cfg, loss, 5, "channels.0");
    let outs = drive(&mut dcf, &[(0, 1)], frames, SimTime(1_000 * 1_000_000_000));
    let discarded = outs
        .iter()
        .filter(|o| matches!(o, Out::Dropped { .. }))
        .count() as f64;
    let mut delivered: Vec<u32> = outs
        .iter()
        .filter_map(|o| {
            if let Out::Delivered { payload, .. } = o {
                Some(*payload)
            } else {
                None
            }
        })
        .collect();
    let delivered_count = delivered.len();
    delivered.sort_unstable();
    delivered.dedup();
    assert_eq!(
        delivered.len(),
        delivered_count,
        "a duplicate (lost MAC ACK) reached the layer above"
    );
    assert!(
        dcf.counters(1).duplicates > 0,
        "lost ACKs made the sender repeat delivered frames"
    );
    let n = frames as f64;
    for (what, got, q) in [
        (
            "discarded by the sender",
            discarded / n,
            (1.0 - (1.0 - p) * (1.0 - p)).powi(r as i32 + 1),
        ),
        (
            "never received",
            1.0 - delivered_count as f64 / n,
            p.powi(r as i32 + 1),
        ),
    ] {
        let se = (q * (1.0 - q) / n).sqrt();
        assert!(
            (got - q).abs() < 3.0 * se,
            "{what}: {got:.4} vs {q:.4} (3 se = {:.4})",
            3.0 * se
        );
    }
}

#[test]
fn rts_cts_resolves_hidden_terminals_10_3_2_4() {
    // a and b cannot hear each other; both send to c, which hears both. Without RTS/CTS their
    // data frames overlap at c; with it, c's CTS sets the hidden sender's NAV, so only the short
    // RTS frames can still collide.
    let hidden = vec![vec![false, false, true], vec![false, false, true], vec![true, true, false]];
    let run = |rts: Option<u32>| {
        let mut cfg = DcfConfig::dsss(3);
        cfg.hears = hidden.clone();
        cfg.rts_threshold = rts;
        let mut dcf: Dcf<u32> = Dcf::new(cfg, Vec::new(), 9, "channels.0");
        let outs = drive(&mut dcf, &[(0, 2), (1, 2)], u32::MAX, SimTime(20 * 1_000_000_000));
        let delivered = outs.iter().filter(|o| matches!(o, Out::Delivered { .. })).count();
        let (a, b) = (dcf.counters(0), dcf.counters(1));
        let data_collided = (a.collisions + b.collisions) as f64 / (a.data_attempts + b.data_attempts) as f64;
        (data_collided, delivered)
    };
    let (without, delivered_without) = run(None);
    let (with, delivered_with) = run(Some(0));
    assert!(without > 0.3, "hidden senders' data frames collide at c: {without:.3}");
    assert!(with < 0.02, "behind RTS/CTS data frames are protected: {with:.3}");
    assert!(delivered_with > delivered_without, "{delivered_with} vs {delivered_without} frames");
}

#[test]
fn an_rts_without_a_cts_lets_overhearing_stations_reset_their_nav_10_3_2_4() {
    // a sends to b, which cannot hear it: a's RTS frames are never answered. x hears a and b. The
    // NAV each RTS sets at x would last 3 SIFS + CTS + DATA + ACK; with no frame starting within
    // 2 SIFS + CTS + aRxPHYStartDelay + 2 slots of the RTS end, x may reset it and contend.
    let hears = vec![vec![false, true, false], vec![true, false, true], vec![false, true, false]];
    let mut cfg = DcfConfig::dsss(3);
    cfg.hears = hears;
    cfg.rts_threshold = Some(0);
    let mut dcf: Dcf<u32> = Dcf::new(cfg, Vec::new(), 5, "channels.0");
    let outs = drive(&mut dcf, &[(0, 2), (1, 2)], u32::MAX, SimTime(5 * 1_000_000_000));
    let micros = |d: SimDuration| d.0 as f64 / 1e3;
    let cts = micros(phy::airtime(Standard::B, Preamble::Long, 2_000_000, phy::CTS_BYTES));
    let ack = cts;
    let data = micros(phy::airtime(Standard::B, Preamble::Long, 11_000_000, PACKET + phy::LLC_SNAP + phy::DATA_MAC_OVERHEAD));
    let nav = 30.0 + cts + data + ack; // the RTS's duration field, us
    let reset_wait = 20.0 + cts + 192.0 + 40.0;
    let (mut last_rts_end, mut early, mut later) = (None::<f64>, 0, 0);
    for o in &outs {
        if let Out::Air { station, role: AirRole::Transmit, kind, start, end, .. } = *o {
            let (start, end) = (start.0 as f64 / 1e3, end.0 as f64 / 1e3);
            match (station, kind) {
                (0, FrameKind::Rts) => last_rts_end = Some(end),
                (1, _) => {
                    // (x may pick the same slot as a: both start together, not after the RTS.)
                    if let Some(r) = last_rts_end.take().filter(|r| start >= *r) {
                        if start < r + nav {
                            // Never before the reset could have happened, plus DIFS.
                            assert!(start >= r + reset_wait + 50.0, "x sent {:.1} us after a's RTS", start - r);
                            early += 1;
                        } else {
                            later += 1;
                        }
                    }
                }
                _ => last_rts_end = None,
            }
        }
    }
    assert!(early > 100, "x went ahead inside an unanswered RTS's NAV {early} times ({later} after it)");
    assert!(dcf.counters(1).delivered + dcf.counters(2).delivered > 0);
}

mod random_channels {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// Any `hears` graph, RTS threshold and load: no panic, and every frame handed in leaves
        /// the MAC acknowledged or dropped, or is still queued, exactly once.
        #[test]
        fn every_frame_is_acked_dropped_or_queued_on_any_channel(
            n in 2usize..7,
            links in proptest::collection::vec(any::<bool>(), 49),
            rts in prop_oneof![Just(None), (0u32..2400).prop_map(Some)],
            senders in proptest::collection::vec((0usize..7, 0usize..7), 1..6),
            seed in any::<u64>(),
        ) {
            let mut cfg = DcfConfig::dsss(n);
            cfg.hears = (0..n).map(|a| (0..n).map(|b| a != b && (links[a * 7 + b] || links[b * 7 + a])).collect()).collect();
            cfg.rts_threshold = rts;
            cfg.queue = 5;
            let mut sources: Vec<(usize, usize)> = senders.iter().map(|&(a, b)| (a % n, b % n)).filter(|(a, b)| a != b).collect();
            sources.sort_unstable();
            sources.dedup_by_key(|s| s.0);
            prop_assume!(!sources.is_empty());
            let mut dcf: Dcf<u32> = Dcf::new(cfg, Vec::new(), seed, "channels.0");
            let frames = 40u32;
            let outs = drive(&mut dcf, &sources, frames, SimTime(2 * 1_000_000_000));
            let mut finished = std::collections::HashMap::new();
            let mut finished_by = vec![0u32; n];
            for o in &outs {
                if let Out::Acked { payload, from } | Out::Dropped { payload, from, .. } = o {
                    *finished.entry(*payload).or_insert(0) += 1;
                    finished_by[*from] += 1;
                }
            }
            prop_assert!(finished.values().all(|&c| c == 1), "a frame left the MAC twice");
            // The driver hands in one frame at a time: it is in the queue until it leaves.
            for &(from, _) in &sources {
                let expected = usize::from(finished_by[from] < frames);
                prop_assert_eq!(dcf.queued(from), expected, "station {}", from);
            }
        }
    }
}
