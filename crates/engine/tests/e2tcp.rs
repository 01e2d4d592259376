//! E2TCP (seed 001 §2): immediate retransmission on the first gap, the loss-driven window (random
//! errors, bursts, timeouts), compact headers on the wire, and exactly-once in-order delivery.

mod common;

use common::{drop_first_tx_of, Pair, Sent};
use proptest::prelude::*;
use tcpenergy_engine::capture::Capture;
use tcpenergy_engine::tcp::segment::Segment;
use tcpenergy_engine::units::{SimDuration, SimTime};
use tcpenergy_engine::{run, run_captured, RunOptions, Scenario};

const SMSS: u32 = 1460;
const ONE_WAY: SimDuration = SimDuration(20_000_000);

fn e2tcp(bytes: &str, impairments: &str, extra: &str) -> Scenario {
    common::scenario("e2tcp", bytes, impairments, extra)
}

fn window(p: &Pair) -> u32 {
    p.eps[0].sender.as_e2tcp().expect("an E2TCP sender").window_packets()
}

/// Step until `done` holds (or the transfer ends); panics if it never does.
fn step_until(p: &mut Pair, mut done: impl FnMut(&Pair) -> bool) {
    while !done(p) {
        assert!(p.step(), "ran out of events first");
    }
}

/// When the first ACK carrying a SACK block reached the sender.
fn first_sack_arrival(p: &Pair) -> SimTime {
    p.log.iter().find(|s: &&Sent| s.from == 1 && !s.seg.sack.is_empty()).map(|s| s.at + ONE_WAY).expect("a SACK was sent")
}

#[test]
fn a_gap_is_retransmitted_on_the_first_ack_that_reports_it_seed001_s2_2() {
    let s = e2tcp("100kB", "", "");
    let mut p = Pair::new(&s, ONE_WAY, drop_first_tx_of(SMSS, &[6]));
    p.run_until_closed(SimTime(60_000_000_000));
    let lost = 1 + 6 * SMSS as u64;
    let sends = p.sends_of(0, lost);
    assert_eq!(sends.len(), 2, "one loss, one retransmission");
    let reported = first_sack_arrival(&p);
    // No duplicate-ACK threshold and no timer: the retransmission is queued the moment the
    // report arrives (it departs once the segment being serialized is out, 1 ms per segment).
    assert!(sends[1].at >= reported && sends[1].at <= reported + SimDuration::from_millis(1), "sent at {:?}, reported {:?}", sends[1].at, reported);
    let c = p.eps[0].sender.counters();
    assert_eq!((c.timeouts, c.retransmissions), (0, 1));
    assert!(p.eps[1].is_closed() && p.eps[0].is_closed());
}

#[test]
fn a_random_error_shrinks_the_window_by_the_decrease_step_seed001_s2_2() {
    let s = e2tcp("300kB", "", "");
    let mut p = Pair::new(&s, ONE_WAY, drop_first_tx_of(SMSS, &[40]));
    let mut before = 0;
    step_until(&mut p, |p| {
        let reported = p.eps[0].sender.counters().fast_retransmits > 0;
        if !reported {
            before = window(p);
        }
        reported
    });
    assert!(before > 4, "the window had grown past the minimum ({before})");
    assert_eq!(window(&p), before - 1, "one loss, one packet less");
}

#[test]
fn a_burst_of_losses_drops_to_the_burst_window_seed001_s2_2() {
    let s = e2tcp("300kB", "", "");
    let mut p = Pair::new(&s, ONE_WAY, drop_first_tx_of(SMSS, &[30, 31, 32, 33, 34]));
    step_until(&mut p, |p| p.eps[0].sender.counters().fast_retransmits > 0);
    assert_eq!(window(&p), 1, "five new losses >= error limit 3: burst-error window");
    assert_eq!(p.eps[0].sender.as_e2tcp().unwrap().bursts_detected, 1);
    p.run_until_closed(SimTime(60_000_000_000));
    assert!(p.eps[1].is_closed(), "recovers and completes");
    assert_eq!(p.eps[0].sender.counters().timeouts, 0, "SACK found every loss");
}

#[test]
fn an_error_limit_above_the_burst_keeps_it_a_random_error_seed001_s2_2() {
    let s = e2tcp("300kB", "", "[tcp]\ne2tcp = { error_limit = 6 }\n");
    let mut p = Pair::new(&s, ONE_WAY, drop_first_tx_of(SMSS, &[30, 31, 32, 33, 34]));
    let mut before = 0;
    step_until(&mut p, |p| {
        let reported = p.eps[0].sender.counters().fast_retransmits > 0;
        if !reported {
            before = window(p);
        }
        reported
    });
    assert!(before >= 9);
    assert_eq!(window(&p), before - 5, "five losses below the limit: five packets less, no burst");
    assert_eq!(p.eps[0].sender.as_e2tcp().unwrap().bursts_detected, 0);
}

/// The window E2TCP is left with by its first timeout when everything it sends in [0.5 s, 1.5 s)
/// is lost (nothing is reported, so the window is above the minimum when the timer expires);
/// `extra` is appended to the scenario. The transfer must still complete after the blackout.
fn window_left_by_a_blackout_timeout(extra: &str) -> u32 {
    let s = e2tcp("2MB", "", extra);
    let blackout = |from: usize, _: &Segment, log: &[Sent]| {
        let t = log.last().map_or(SimTime::ZERO, |l| l.at);
        from == 0 && t >= SimTime(500_000_000) && t < SimTime(1_500_000_000)
    };
    let mut p = Pair::new(&s, ONE_WAY, blackout);
    step_until(&mut p, |p| window(p) > 8);
    step_until(&mut p, |p| p.eps[0].sender.counters().timeouts > 0);
    let left = window(&p);
    p.run_until_closed(SimTime(120_000_000_000));
    assert!(p.eps[1].is_closed(), "{extra}: completes after the blackout");
    left
}

#[test]
fn a_timeout_restarts_from_the_minimum_window_seed001_s2_2() {
    assert_eq!(window_left_by_a_blackout_timeout(""), 4);
}

#[test]
fn the_window_a_timeout_leaves_follows_the_after_timeout_reading_seed001_s2_2() {
    // reduce_to_min (default) and min_window both leave the minimum window; burst_window leaves
    // the one-packet probe.
    for (extra, expected) in [
        ("[tcp]\ne2tcp = { after_timeout = \"reduce_to_min\" }\n", 4),
        ("[tcp]\ne2tcp = { after_timeout = \"min_window\" }\n", 4),
        ("[tcp]\ne2tcp = { after_timeout = \"burst_window\" }\n", 1),
    ] {
        assert_eq!(window_left_by_a_blackout_timeout(extra), expected, "{extra}");
    }
}

#[test]
fn timeouts_track_the_round_trip_with_a_margin_seed001_s2_2() {
    let s = e2tcp("200kB", "", "[tcp]\ne2tcp = { timer_margin = 0.5 }\n");
    let mut p = Pair::new(&s, ONE_WAY, |_: usize, _: &Segment, _: &[Sent]| false);
    p.run_until_closed(SimTime(60_000_000_000));
    let snd = p.eps[0].sender.as_e2tcp().unwrap();
    let srtt = snd.srtt().expect("sampled");
    let t = snd.timeout();
    assert!(t.0 as f64 >= 1.5 * srtt.0 as f64 - 1.0, "timeout {t:?} under SRTT {srtt:?} x 1.5");
    assert!(t < SimDuration::from_millis(200), "a few tens of ms on a 40 ms path, not the 1 s RTO floor: {t:?}");
}

/// Capture records as (nanoseconds, bytes), any link type.
fn records(file: &[u8]) -> (u32, Vec<Vec<u8>>) {
    let linktype = u32::from_le_bytes(file[20..24].try_into().unwrap());
    let (mut i, mut out) = (24, Vec::new());
    while i < file.len() {
        let len = u32::from_le_bytes(file[i + 8..i + 12].try_into().unwrap()) as usize;
        out.push(file[i + 16..i + 16 + len].to_vec());
        i += 16 + len;
    }
    (linktype, out)
}

fn captured(s: &Scenario) -> Capture {
    let (r, cap) = run_captured(s, 3, RunOptions { capture: true, ..Default::default() }).unwrap();
    assert!(r.complete);
    cap.expect("capture asked for")
}

#[test]
fn headers_on_the_wire_are_8_bytes_for_data_and_8_12_16_for_acks_seed001_s2_3() {
    let s = e2tcp("400kB", r#"{ kind = "bernoulli", p = 0.05 }"#, "");
    let files: std::collections::BTreeMap<String, Vec<u8>> = captured(&s).pcap_files().into_iter().collect();
    let (lt, data) = records(&files["sender-receiver.e2tcp"]);
    assert_eq!(lt, 147, "LINKTYPE_USER0");
    let (_, acks) = records(&files["receiver-sender.e2tcp"]);
    assert!(!files.contains_key("sender-receiver"), "nothing left in IP form, so no IP file");
    assert_eq!(data[0].len(), 20, "SYN: addresses and ports, once");
    assert_eq!(acks[0].len(), 22, "SYN-ACK");
    for d in &data[1..] {
        assert_eq!(d[0] & 0x03, 0, "no SACK blocks from the data sender");
        // Data: presence, id, packet number, ACK number, checksum; a pure ACK (for the peer's
        // FIN) has no packet number but a window.
        assert_eq!(d.len() <= 8 + SMSS as usize, true, "data packet of {} bytes", d.len());
        assert!(d.len() > 8 || d[0] & 0x80 == 0, "an 8-byte packet from the sender is a pure ACK");
    }
    let full = data.iter().filter(|d| d.len() == 8 + SMSS as usize).count();
    assert!(full >= 400_000 / SMSS as usize, "{full} full-sized packets");
    let mut by_len = std::collections::BTreeMap::new();
    for a in &acks[1..] {
        *by_len.entry(a.len()).or_insert(0) += 1;
        assert_eq!(a.len(), 8 + 4 * (a[0] & 0x03) as usize, "8 bytes plus 4 per SACK block");
    }
    for len in [8, 12, 16] {
        assert!(by_len.get(&len).copied().unwrap_or(0) > 0, "some {len}-byte ACKs: {by_len:?}");
    }
    assert!(by_len.keys().all(|l| [8, 12, 16].contains(l)), "{by_len:?}");
}

#[test]
fn without_header_compression_e2tcp_sends_standard_tcp_ip_headers_seed001_table1() {
    let s = e2tcp("200kB", "", "[tcp]\ne2tcp = { header_compression = false }\n");
    let files: std::collections::BTreeMap<String, Vec<u8>> = captured(&s).pcap_files().into_iter().collect();
    assert!(!files.contains_key("sender-receiver.e2tcp"));
    let (lt, data) = records(&files["sender-receiver"]);
    assert_eq!(lt, 101);
    assert!(data[1..].iter().all(|d| d[0] == 0x45 && d.len() <= 40 + SMSS as usize));
    let r = run(&s, 3, RunOptions::default()).unwrap();
    let compact = run(&e2tcp("200kB", "", ""), 3, RunOptions::default()).unwrap();
    // Same packets; 32 bytes more per data packet (40 vs 8), 28 more for the SYN (40 + MSS and
    // SACK-permitted options = 48, vs 20 with addresses and ports) and 32 more for the one pure
    // ACK, of the receiver's FIN (40 vs 8).
    assert_eq!(r.flow.segments_sent, compact.flow.segments_sent);
    assert_eq!(r.flow.wire_bytes_sender - compact.flow.wire_bytes_sender, 32 * (r.flow.segments_sent - 1) + 28 + 32);
}

#[test]
fn e2tcp_settings_out_of_range_name_their_key() {
    for (extra, key) in [
        ("e2tcp = { min_window = 40, max_window = 8 }", "tcp.e2tcp.min_window"),
        ("e2tcp = { error_limit = 0 }", "tcp.e2tcp.error_limit"),
        ("e2tcp = { burst_window = 0 }", "tcp.e2tcp.burst_window"),
        ("e2tcp = { timer_margin = -1.0 }", "tcp.e2tcp.timer_margin"),
        ("e2tcp = { after_timeout = \"never\" }", "after_timeout"),
        ("timestamps = true", "tcp.timestamps"),
        ("sack = false", "tcp.sack"),
    ] {
        let text = format!("[path]\nmtu = 1500\n[path.forward]\nrate = \"1Mbps\"\ndelay = \"1ms\"\n[path.reverse]\nrate = \"1Mbps\"\ndelay = \"1ms\"\n[tcp]\nvariant = \"e2tcp\"\n{extra}\n[traffic]\nkind = \"bulk\"\nbytes = \"1kB\"\n");
        let err = Scenario::from_toml(&text).expect_err(extra).to_string();
        assert!(err.contains(key), "{extra}: {err}");
    }
    let text = "[path.forward]\nrate = \"1Mbps\"\ndelay = \"1ms\"\n[path.reverse]\nrate = \"1Mbps\"\ndelay = \"1ms\"\n[tcp]\nvariant = \"sack\"\ne2tcp = { min_window = 2 }\n[traffic]\nkind = \"bulk\"\nbytes = \"1kB\"\n";
    let err = Scenario::from_toml(text).unwrap_err().to_string();
    assert!(err.contains("tcp.e2tcp") && err.contains("e2tcp"), "{err}");
}

fn impairment() -> impl Strategy<Value = String> {
    prop_oneof![
        (0.0..0.3f64).prop_map(|p| format!("{{ kind = \"bernoulli\", p = {p} }}")),
        (1..20u64, 50..500u64, 0.3..0.9f64).prop_map(|(good_s, bad_ms, per)| format!(
            "{{ kind = \"gilbert_elliott\", good = {{ per = 0.0005, min = \"{good_s}s\", max = \"{good_s}s\" }}, bad = {{ per = {per}, min = \"{bad_ms}ms\", max = \"{bad_ms}ms\" }} }}"
        )),
        (0.0..0.1f64).prop_map(|f| format!("{{ kind = \"reorder\", fraction = {f}, extra_delay = \"15ms\" }}")),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 64,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0xe2),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn every_byte_is_delivered_exactly_once_and_in_order(
        fwd in impairment(), rev in impairment(), bytes in 1u64..400_000, seed in 1..1000u64,
        compress in any::<bool>(), limit in 1..5u32,
    ) {
        let extra = format!("[tcp]\ne2tcp = {{ header_compression = {compress}, error_limit = {limit} }}\n");
        let mut s = e2tcp(&bytes.to_string(), &fwd, &extra);
        s.path_mut().unwrap().reverse.impairments = e2tcp("1", &rev, "").path().unwrap().forward.impairments.clone();
        let r = run(&s, seed, RunOptions { record_deliveries: true, ..Default::default() }).unwrap();
        prop_assert!(r.complete, "transfer did not complete");
        let mut next = 1u64;
        for (start, end) in r.deliveries.unwrap() {
            prop_assert_eq!(start, next, "gap or overlap in delivery");
            next = end;
        }
        prop_assert_eq!(next, 1 + bytes);
    }
}
