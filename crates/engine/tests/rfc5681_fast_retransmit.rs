//! RFC 5681 §3.2 (fast retransmit) and §4.2 (generating ACKs): timelines on two sans-I/O endpoints.

mod common;
use common::{drop_first_tx_of, scenario, Pair};
use tcpenergy_engine::units::{SimDuration, SimTime};

const ONE_WAY: SimDuration = SimDuration(20_000_000);

#[test]
fn three_duplicate_acks_trigger_fast_retransmit() {
    let s = scenario("reno", "100000", "", "");
    let smss = s.smss().unwrap() as u64;
    let lost = 1 + 10 * smss;
    let mut p = Pair::new(&s, ONE_WAY, drop_first_tx_of(s.smss().unwrap(), &[10]));
    p.run_until_closed(SimTime(30_000_000_000));

    let sends = p.sends_of(0, lost);
    assert_eq!(sends.len(), 2, "one loss, one retransmission");
    // ACKs for `lost`: the first is the ordinary one, the next ones are duplicates.
    let acks: Vec<_> = p.log.iter().filter(|x| x.from == 1 && x.seg.ack == lost && x.seg.is_pure_ack()).collect();
    assert!(acks.len() >= 4, "expected at least three duplicates, got {} ACKs", acks.len());
    let third_dup_arrival = acks[3].at + ONE_WAY;
    assert_eq!(sends[1].at, third_dup_arrival, "retransmission leaves when the third duplicate arrives");
    let snd = p.eps[0].sender.counters();
    assert_eq!(snd.fast_retransmits, 1);
    assert_eq!(snd.timeouts, 0);
    assert_eq!(p.eps[1].receiver.as_ref().unwrap().delivered, 100_000);
}

#[test]
fn two_duplicate_acks_do_not_trigger_fast_retransmit() {
    // Lose the third-to-last segment: only two segments follow it, so only two duplicates come.
    let s = scenario("reno", "14600", "", "[tcp]\ninitial_window = 10\ndelayed_ack = { every = 2, timeout = \"200ms\" }");
    let mut p = Pair::new(&s, ONE_WAY, drop_first_tx_of(s.smss().unwrap(), &[7]));
    p.run_until_closed(SimTime(30_000_000_000));
    let snd = p.eps[0].sender.counters();
    assert_eq!(snd.fast_retransmits, 0);
    assert_eq!(snd.timeouts, 1, "the loss is repaired by the retransmission timer");
}

#[test]
fn delayed_ack_acknowledges_every_second_full_segment() {
    let s = scenario("newreno", "146000", "", "");
    let mut p = Pair::new(&s, ONE_WAY, |_, _, _| false);
    p.run_until_closed(SimTime(30_000_000_000));
    let smss = s.smss().unwrap() as u64;
    let mut last_ack = 1;
    for x in p.log.iter().filter(|x| x.from == 1 && x.seg.is_pure_ack()) {
        let advanced = x.seg.ack.saturating_sub(last_ack);
        assert!(advanced <= 2 * smss + 1, "an ACK covered {advanced} bytes: more than two full segments");
        last_ack = last_ack.max(x.seg.ack);
    }
    let acks = p.log.iter().filter(|x| x.from == 1 && x.seg.is_pure_ack()).count();
    assert!(acks <= 100 / 2 + 3, "{acks} pure ACKs for 100 segments");
}

#[test]
fn delayed_ack_timer_acknowledges_a_lone_segment() {
    let s = scenario("newreno", "4380", "", "[tcp]\ninitial_window = 1");
    let mut p = Pair::new(&s, ONE_WAY, |_, _, _| false);
    p.run_until_closed(SimTime(30_000_000_000));
    let first_data = p.log.iter().find(|x| x.from == 0 && x.seg.len > 0).unwrap();
    let ack = p.log.iter().find(|x| x.from == 1 && x.seg.ack > first_data.seg.seq).unwrap();
    assert_eq!(ack.at, first_data.at + ONE_WAY + SimDuration::from_millis(200));
}

#[test]
fn timer_only_delayed_ack_sends_one_ack_per_timeout_without_errors() {
    // seed 003 §II: one ACK every 500 ms when there is no error (delayed_ack.every = 0).
    let s = scenario("newreno", "50000", "", "[tcp]\ndelayed_ack = { every = 0, timeout = \"500ms\" }");
    let mut p = Pair::new(&s, ONE_WAY, |_, _, _| false);
    p.run_until_closed(SimTime(60_000_000_000));
    let acks: Vec<_> = p.log.iter().filter(|x| x.from == 1 && x.seg.is_pure_ack()).collect();
    for w in acks.windows(2) {
        assert!(w[1].at - w[0].at >= SimDuration::from_millis(500) || w[1].seg.ack == w[0].seg.ack + 1);
    }
    assert_eq!(p.eps[1].receiver.as_ref().unwrap().delivered, 50_000);
}

#[test]
fn cwnd_stops_growing_at_the_largest_window_the_peer_can_advertise_rfc7323_s2_2() {
    // Without window scaling no receiver can open more than 65,535 bytes, so cwnd growth past it
    // would never be usable (BSD clamps at TCP_MAXWIN << snd_scale); with it, the bound is 2^30.
    for (scaling, bound) in [("false", 65_535u64), ("true", 1 << 30)] {
        let s = scenario("newreno", "3000000", "", &format!("[tcp]\nwindow_scale = {scaling}\nreceive_buffer = \"64KB\""));
        let mut p = Pair::new(&s, ONE_WAY, |_, _, _| false);
        let mut largest = 0;
        while p.step() {
            largest = largest.max(p.eps[0].sender.state().cwnd);
        }
        assert!(largest <= bound, "window_scale = {scaling}: cwnd reached {largest}");
        if scaling == "false" {
            assert!(largest > bound - s.smss().unwrap() as u64, "growth reaches the bound: {largest}");
        } else {
            assert!(largest > 65_535, "with scaling cwnd may pass 64 KB: {largest}");
        }
    }
}

#[test]
fn unacknowledged_data_never_exceeds_the_send_buffer() {
    // A BSD send buffer keeps data until it is acknowledged, so it caps what is in flight even
    // when cwnd and the peer's window are larger (FreeBSD 4's default is 32 KB).
    let s = scenario("newreno", "1000000", "", "[tcp]\nsend_buffer = \"16KB\"\nreceive_buffer = \"64KB\"");
    let mut p = Pair::new(&s, ONE_WAY, |_, _, _| false);
    let mut largest = 0;
    while p.step() {
        let t = p.eps[0].sender.state();
        largest = largest.max(t.snd_max - t.snd_una);
    }
    assert!(largest <= 16_000, "in flight {largest}");
    assert!(largest > 16_000 - s.smss().unwrap() as u64, "the buffer is the binding limit: {largest}");
    assert_eq!(p.eps[1].receiver.as_ref().unwrap().delivered, 1_000_000);
}
