//! Which ACKs give RTT samples without timestamps (`tcp.rtt_sampling`), and what that does to the
//! backed-off retransmission timer: RFC 6298 §3 (Karn's rule), §5.5 (backoff) and the note after
//! §5.7 (a new sample collapses the backoff). `every_ack` is Linux's rule (tcp_clean_rtx_queue,
//! tcp_sacktag_one), `one_segment` BSD's single timed segment (t_rtttime / t_rtseq).
//!
//! Each test runs one scripted timeline (drops chosen per segment) over a 20 ms one-way path and
//! reads the data sender's state after every event (docs/models/tcp.md#rtt-sampling).

mod common;
#[path = "common/rtt_trace.rs"]
mod rtt_trace;
use common::{scenario, Pair};
use rtt_trace::{ack_events, emitted_at, first_timeout, lose_first_transmissions, lose_window_until_timeout, retransmitted, trace, AckEvent, Step};
use tcpenergy_engine::tcp::segment::Segment;
use tcpenergy_engine::units::{SimDuration, SimTime};
use tcpenergy_engine::Scenario;

const ONE_WAY: SimDuration = SimDuration(20_000_000);
const LIMIT: SimTime = SimTime(120_000_000_000);
/// The RTO before any backoff in these scripts: every estimate is below `min_rto` = 1 s.
const RTO: SimDuration = SimDuration(1_000_000_000);
/// The RTO after one expiry (RFC 6298 §5.5).
const BACKED_OFF: SimDuration = SimDuration(2_000_000_000);

fn scenario_with(variant: &str, sampling: &str) -> Scenario {
    scenario(variant, "100000", "", &format!("[tcp]\nrtt_sampling = \"{sampling}\""))
}

/// Run `s` with `drop`, returning the pair and the sender's trace.
fn run(s: &Scenario, drop: impl FnMut(usize, &Segment, &[common::Sent]) -> bool + 'static) -> (Pair, Vec<Step>) {
    let mut p = Pair::new(s, ONE_WAY, drop);
    let steps = trace(&mut p, LIMIT);
    assert_eq!(p.eps[1].receiver.as_ref().unwrap().delivered, s.traffic().unwrap().bytes, "the transfer completes");
    (p, steps)
}

/// Sequence number just past everything sent before `t`: `recover` at a timeout at `t`, where
/// the first segment of new data starts.
fn snd_max_before(p: &Pair, t: SimTime) -> u64 {
    p.log.iter().filter(|x| x.from == 0 && x.at < t).map(|x| x.seg.seq + x.seg.len as u64).max().unwrap()
}

/// Whether every data segment in `[from, to)` was retransmitted.
fn all_retransmitted(p: &Pair, a: &AckEvent, smss: u64) -> bool {
    (a.from..a.to).step_by(smss as usize).all(|seq| retransmitted(p, seq))
}

/// Whether no data segment in `[from, to)` was retransmitted.
fn none_retransmitted(p: &Pair, a: &AckEvent, smss: u64) -> bool {
    (a.from..a.to).step_by(smss as usize).all(|seq| !retransmitted(p, seq))
}

/// The whole window from segment 20 on is lost, so only the timer repairs it; go-back-N resends
/// it in slow start, then new data follows (NewReno, no SACK: cumulative ACKs only).
fn window_lost(sampling: &str) -> (Pair, Vec<Step>, u64, u64) {
    let s = scenario_with("newreno", sampling);
    let smss = s.smss().unwrap() as u64;
    let (p, steps) = run(&s, lose_window_until_timeout(s.smss().unwrap(), 20, false));
    let new_data = snd_max_before(&p, first_timeout(&steps).at);
    (p, steps, new_data, smss)
}

#[test]
fn every_ack_collapses_the_backoff_on_the_first_ack_of_only_new_data_after_a_timeout_rfc6298_s5() {
    let (p, steps, new_data, smss) = window_lost("every_ack");
    // The timeout: backoff 1, the retransmission goes out under a 2 s timer (RFC 6298 §5.5).
    let t0 = first_timeout(&steps);
    assert_eq!((t0.backoff, t0.armed), (1, Some(BACKED_OFF)));
    let acks = ack_events(&steps, t0.at);
    // Go-back-N: every ACK up to the first new segment covers retransmitted data only; no sample,
    // and each re-arms the backed-off timer (RFC 6298 §5.3 with §5.5).
    let go_back_n: Vec<&AckEvent> = acks.iter().take_while(|a| a.to <= new_data).collect();
    assert!(go_back_n.len() >= 5, "{go_back_n:?}");
    for a in &go_back_n {
        assert!(all_retransmitted(&p, a, smss) && !a.sampled && a.after.armed == Some(BACKED_OFF), "{a:?}");
    }
    // The delayed ACK that covers the last retransmission together with the first new segment:
    // Linux takes no sample from an ACK that acknowledges any retransmitted data.
    let mixed = acks[go_back_n.len()];
    assert!(mixed.from < new_data && new_data < mixed.to && retransmitted(&p, mixed.from), "{mixed:?}");
    assert!(!mixed.sampled && mixed.after.armed == Some(BACKED_OFF), "{mixed:?}");
    // The next ACK acknowledges only segments sent once: a sample, the backoff collapses, and
    // the timer it re-arms is the un-backed-off RTO.
    let clean = acks[go_back_n.len() + 1];
    assert!(clean.from >= new_data && clean.to > clean.from && none_retransmitted(&p, &clean, smss), "{clean:?}");
    assert!(clean.sampled, "{clean:?}");
    assert_eq!((clean.after.backoff, clean.after.armed), (0, Some(RTO)));
    // The sample is that ACK's earliest newly acknowledged segment's round trip.
    let sent = emitted_at(&p, clean.from, ONE_WAY);
    let before = steps.iter().rfind(|s| s.at < clean.at).unwrap().srtt.unwrap();
    assert_eq!(clean.after.srtt, Some(SimDuration((7 * before.0 + (clean.at - sent).0) / 8)));
}

/// BSD times the first segment sent after the last retransmission, so on cumulative ACKs alone
/// its sample comes no later than Linux's: here one ACK earlier, from the ACK that also covers the
/// last retransmission (unambiguous for the timed segment, which was sent after it).
#[test]
fn one_segment_samples_its_timed_segment_even_on_an_ack_that_also_covers_a_retransmission() {
    let (p, steps, new_data, _) = window_lost("one_segment");
    let t0 = first_timeout(&steps);
    assert_eq!((t0.backoff, t0.armed), (1, Some(BACKED_OFF)));
    let acks = ack_events(&steps, t0.at);
    let go_back_n = acks.iter().take_while(|a| a.to <= new_data).count();
    assert!(acks[..go_back_n].iter().all(|a| !a.sampled && a.after.armed == Some(BACKED_OFF)));
    let mixed = acks[go_back_n];
    assert!(mixed.from < new_data && retransmitted(&p, mixed.from), "{mixed:?}");
    assert!(mixed.sampled, "the timed first new segment is covered: {mixed:?}");
    assert_eq!((mixed.after.backoff, mixed.after.armed), (0, Some(RTO)));
}

#[test]
fn no_rtt_sample_from_an_ack_of_retransmitted_data_karn_rfc6298_s3() {
    for sampling in ["every_ack", "one_segment"] {
        // Segment 10 and its fast retransmission are lost; the timeout resends it, and its ACK
        // also covers segments 11.. that the receiver has held since their first transmission.
        // Their send times would measure the repair (over a second), not the path.
        let s = scenario_with("newreno", sampling);
        let hole = 1 + 10 * s.smss().unwrap() as u64;
        let (p, steps) = run(&s, lose_first_transmissions(s.smss().unwrap(), 10, 2));
        let t0 = first_timeout(&steps);
        let repair = ack_events(&steps, t0.at).into_iter().find(|a| a.from == hole).expect("the repair's ACK");
        assert!(p.sends_of(0, hole).len() == 3 && !retransmitted(&p, hole + s.smss().unwrap() as u64), "{sampling}");
        assert!(repair.to > hole + s.smss().unwrap() as u64, "{sampling}: it covers never-retransmitted data too");
        assert!(!repair.sampled, "{sampling}: {repair:?}");
        // No sample, so the backoff stays: the timer armed for the next data is still 2 s.
        assert_eq!((repair.after.backoff, repair.after.armed), (1, Some(BACKED_OFF)), "{sampling}");
        // ...and the ACKs of the go-back-N of a lost window, retransmitted data only, give none.
        let (p, steps, new_data, smss) = window_lost(sampling);
        for a in ack_events(&steps, first_timeout(&steps).at).iter().take_while(|a| a.to <= new_data) {
            assert!(all_retransmitted(&p, a, smss) && !a.sampled, "{sampling}: {a:?}");
        }
    }
}

/// After a timeout and its go-back-N, the first new segment is lost too (SACK variant). The
/// segments after it reach the receiver and are SACKed.
fn first_new_segment_lost(sampling: &str) -> (Pair, Vec<Step>, u64, u64) {
    let s = scenario_with("sack", sampling);
    let smss = s.smss().unwrap() as u64;
    let (p, steps) = run(&s, lose_window_until_timeout(s.smss().unwrap(), 20, true));
    let new_data = snd_max_before(&p, first_timeout(&steps).at);
    assert_eq!(p.sends_of(0, new_data).len(), 2, "the first new segment is lost once");
    (p, steps, new_data, smss)
}

#[test]
fn a_sack_block_newly_covering_unretransmitted_data_gives_a_sample_in_every_ack_mode() {
    let (p, steps, new_data, smss) = first_new_segment_lost("every_ack");
    let t0 = first_timeout(&steps);
    let acks = ack_events(&steps, t0.at);
    // The first sample after the timeout: the ACK whose SACK block first reports the segment
    // after the lost one. Its cumulative part covers only the last retransmission, so the sample
    // comes from the SACK block: that segment's send time (Linux's sack_rtt).
    let first = acks.iter().find(|a| a.sampled).unwrap();
    let ack = p.log.iter().find(|x| x.from == 1 && x.at + ONE_WAY == first.at && !x.seg.sack.is_empty()).unwrap();
    assert_eq!(ack.seg.ack, new_data);
    assert_eq!(ack.seg.sack.as_slice(), &[(new_data + smss, new_data + 2 * smss)]);
    assert!(first.from < new_data && retransmitted(&p, first.from), "{first:?}");
    let sent = emitted_at(&p, new_data + smss, ONE_WAY);
    let before = steps.iter().rfind(|s| s.at < first.at).unwrap().srtt.unwrap();
    assert_eq!(first.after.srtt, Some(SimDuration((7 * before.0 + (first.at - sent).0) / 8)));
    // The backoff collapses and this ACK, which advanced SND.UNA, re-arms the plain RTO.
    assert_eq!((first.after.backoff, first.after.armed), (0, Some(RTO)));
    // The duplicate ACKs that follow (SND.UNA unchanged) each SACK one more new segment, and
    // each gives a sample.
    let dups: Vec<&AckEvent> = acks.iter().filter(|a| a.at > first.at && a.from == a.to).collect();
    assert!(dups.len() >= 3 && dups.iter().all(|a| a.sampled), "{dups:?}");
}

#[test]
fn one_segment_keeps_the_backed_off_timer_through_the_same_recovery() {
    // The same script: BSD's timed segment is the lost first new segment, so neither the SACKs
    // nor the ACK of its retransmission give a sample, and the timer keeps being re-armed backed
    // off where every_ack re-arms the plain RTO.
    let (_, linux, new_data, _) = first_new_segment_lost("every_ack");
    let (p, bsd, _, smss) = first_new_segment_lost("one_segment");
    let t0 = first_timeout(&bsd);
    let acks = ack_events(&bsd, t0.at);
    let linux_acks = ack_events(&linux, t0.at);
    // The ACK that advances SND.UNA to the lost segment: 1 s under every_ack, 2 s here.
    let at_hole = |acks: &[AckEvent]| *acks.iter().find(|a| a.to == new_data).unwrap();
    assert_eq!(at_hole(&linux_acks).after.armed, Some(RTO));
    assert_eq!(at_hole(&acks).after.armed, Some(BACKED_OFF));
    // The ACK that repairs the hole (covering the retransmission): still 2 s.
    let repaired = *acks.iter().find(|a| a.from == new_data && a.to > new_data).unwrap();
    assert!(p.sends_of(0, new_data).len() == 2 && !repaired.sampled, "{repaired:?}");
    assert_eq!((repaired.after.backoff, repaired.after.armed), (1, Some(BACKED_OFF)));
    let linux_repaired = *linux_acks.iter().find(|a| a.from == new_data && a.to > new_data).unwrap();
    assert_eq!((linux_repaired.at, linux_repaired.after.armed), (repaired.at, Some(RTO)));
    // BSD's first sample after the timeout is its next timed segment, sent after that
    // retransmission; only then does the backoff collapse.
    let first = acks.iter().find(|a| a.sampled).unwrap();
    assert!(first.at > repaired.at && first.from > new_data + smss, "{first:?}");
    assert_eq!((first.after.backoff, first.after.armed), (0, Some(RTO)));
}
