//! Seed 003 §II option tunings: each changes the bytes on the wire by an exact amount and the CPU
//! work charged.

mod common;
use common::{scenario, Pair};
use tcpenergy_engine::units::{SimDuration, SimTime};

fn first_segments(extra: &str) -> (u32, u32, u32) {
    let s = scenario("sack", "30000", "", extra);
    let mut p = Pair::new(&s, SimDuration::from_millis(20), |_, _, _| false);
    p.run_until_closed(SimTime(30_000_000_000));
    let syn = p.log.iter().find(|x| x.from == 0 && x.seg.syn.is_some()).unwrap().seg.header_len();
    let data = p.log.iter().find(|x| x.from == 0 && x.seg.len > 0).unwrap().seg.header_len();
    let ack = p.log.iter().find(|x| x.from == 1 && x.seg.is_pure_ack()).unwrap().seg.header_len();
    (syn, data, ack)
}

#[test]
fn timestamps_add_twelve_bytes_to_every_segment_and_ten_to_the_syn() {
    let (syn0, data0, ack0) = first_segments("");
    let (syn1, data1, ack1) = first_segments("[tcp]\ntimestamps = true");
    assert_eq!((data1 - data0, ack1 - ack0), (12, 12));
    // SYN: MSS 4 + SACK-permitted 2 = 6 -> 8; with timestamps 16.
    assert_eq!((syn0, syn1), (48, 56));
}

#[test]
fn window_scale_adds_its_option_to_the_syn_only() {
    let (syn0, data0, ack0) = first_segments("");
    let (syn1, data1, ack1) = first_segments("[tcp]\nwindow_scale = true");
    assert_eq!((data1, ack1), (data0, ack0));
    // MSS 4 + SACK-permitted 2 + window scale 3 = 9 -> 12.
    assert_eq!(syn1 - syn0, 4);
}

#[test]
fn sack_off_removes_the_sack_permitted_option() {
    let (syn_on, _, _) = first_segments("");
    let (syn_off, _, _) = first_segments("[tcp]\nsack = false");
    assert_eq!(syn_on - syn_off, 4);
}

#[test]
fn prediction_first_skips_the_paws_test_on_predicted_segments() {
    let imp = r#"{kind="bernoulli", p=0.02}"#;
    let standard = common::run_seed(&scenario("newreno", "1MB", imp, "[tcp]\ntimestamps = true"), 3);
    let first = common::run_seed(
        &scenario("newreno", "1MB", imp, "[tcp]\ntimestamps = true\nheader_prediction = \"predict_first\""),
        3,
    );
    let (rs, rf) = (&standard.cpu.receiver_ops, &first.cpu.receiver_ops);
    assert_eq!(standard.flow, first.flow, "the protocol's behaviour does not change");
    // Standard: every arriving segment with a timestamp is PAWS-checked.
    assert_eq!(rs["paws_check"], rs["fast_path"] + rs["slow_path"] - slow_path_without_timestamps(rs));
    // Prediction first: only the segments that miss the fast path.
    assert!(rf["paws_check"] < rs["paws_check"]);
    assert!(rf["paws_check"] <= rf["slow_path"]);
    assert!(first.energy.receiver.breakdown_j.cpu < standard.energy.receiver.breakdown_j.cpu);
    assert!(first.cpu.sender_ops["paws_check"] < standard.cpu.sender_ops["paws_check"]);
}

/// Slow-path charges for segments that carry no timestamp check (none here: every segment has one).
fn slow_path_without_timestamps(_ops: &std::collections::BTreeMap<&'static str, u64>) -> u64 {
    0
}

/// The largest stretch of sequence space one receiver ACK covers, over a 1 MB transfer with the
/// given delayed-ACK table (no loss, 64 KB receive buffer, a first window that fills it).
fn largest_ack_stretch(delayed_ack: &str) -> (u64, u32, SimTime) {
    let extra = format!("[tcp]\nreceive_buffer = 65535\ninitial_window = 44\ndelayed_ack = {delayed_ack}");
    let s = scenario("newreno", "1000000", "", &extra);
    let mut p = Pair::new(&s, SimDuration::from_millis(20), |_, _, _| false);
    p.run_until_closed(SimTime(600_000_000_000));
    let acks: Vec<u64> = p.log.iter().filter(|x| x.from == 1 && x.seg.is_pure_ack()).map(|x| x.seg.ack).collect();
    let stretch = acks.windows(2).map(|w| w[1] - w[0]).max().unwrap();
    (stretch, acks.len() as u32, p.now)
}

#[test]
fn window_update_test_acks_once_half_the_window_has_arrived_linux22_tcp_raise_window() {
    // Seed 003 §II-F removes Linux's two-segment test; Linux 2.2's __tcp_ack_snd_check still ACKs
    // at once when tcp_raise_window holds: the window it could offer is more than twice the one
    // the peer knows, i.e. more than half of the 65535-byte window arrived since the last ACK.
    let mss = 1460;
    let (with_update, acks_with, end_with) =
        largest_ack_stretch(r#"{ every = 0, timeout = "500ms", window_update = true }"#);
    let (timer_only, acks_without, end_without) = largest_ack_stretch(r#"{ every = 0, timeout = "500ms" }"#);
    assert!(with_update > 65535 / 2, "an ACK covers more than half the window: {with_update}");
    assert!(with_update <= 65535 / 2 + mss, "and no more than one segment past it: {with_update}");
    assert!(timer_only > 65535 / 2 + mss, "the timer alone lets a whole window go unacknowledged: {timer_only}");
    assert!(acks_with > acks_without);
    assert!(end_with < end_without, "the transfer ends sooner: {end_with:?} vs {end_without:?}");
}

#[test]
fn window_update_is_off_unless_asked_and_leaves_the_two_segment_rule_alone() {
    let (default, acks_default, _) = largest_ack_stretch(r#"{ every = 2, timeout = "200ms" }"#);
    let (both, acks_both, _) = largest_ack_stretch(r#"{ every = 2, timeout = "200ms", window_update = true }"#);
    assert_eq!((default, acks_default), (both, acks_both));
}
