//! ELFN and TCP-ECN-ELFN (seed 002 §4 and Table 1): freeze on a route-failure notice, probe,
//! resume with the old state; keep cwnd on duplicate ACKs and timeouts; halve on ECN-Echo.

mod common;
use common::{drop_first_tx_of, scenario, Pair, Sent};
use std::cell::Cell;
use std::rc::Rc;
use tcpenergy_engine::tcp::segment::Segment;
use tcpenergy_engine::units::{SimDuration, SimTime};

const ONE_WAY: SimDuration = SimDuration(20_000_000);

#[test]
fn an_elfn_sender_is_silent_while_frozen_and_resumes_at_its_old_window() {
    let s = scenario("elfn", "2MB", "", "");
    let route_down = Rc::new(Cell::new(false));
    let down = route_down.clone();
    let mut p = Pair::new(&s, ONE_WAY, move |_, _: &Segment, _: &[Sent]| down.get());
    while p.eps[0].sender.state().snd_una < 100_000 {
        assert!(p.step());
    }
    // The route breaks; the node before the break reports it.
    route_down.set(true);
    let frozen_at = p.now;
    p.eps[0].on_route_notice(frozen_at, false);
    let log_start = p.log.len();
    // ACKs already on their way are still processed; after them the state stays as it is.
    while p.now < frozen_at + SimDuration::from_millis(500) && p.step() {}
    let (cwnd, ssthresh) = (p.eps[0].sender.state().cwnd, p.eps[0].sender.state().ssthresh);
    let until = frozen_at + SimDuration::from_secs(5);
    while p.now < until && p.step() {}
    // Segments queued before the freeze may still leave at its instant; after it, only probes.
    let after: Vec<&Sent> = p.log[log_start..].iter().filter(|x| x.from == 0 && x.at > frozen_at).collect();
    assert!(!after.is_empty(), "probes are sent while frozen");
    assert!(after.iter().all(|x| x.seg.len == 1 && x.seg.seq < p.eps[0].sender.state().snd_una), "only probes while frozen");
    assert_eq!(p.eps[0].sender.counters().timeouts, 0, "no RTO while frozen");
    assert!(p.eps[0].sender.as_tcp().is_some_and(|s| s.is_frozen()));
    assert_eq!((p.eps[0].sender.state().cwnd, p.eps[0].sender.state().ssthresh), (cwnd, ssthresh));
    // The route comes back: the next probe is answered and the sender resumes with its state.
    route_down.set(false);
    while p.eps[0].sender.as_tcp().is_some_and(|s| s.is_frozen()) {
        assert!(p.step());
    }
    // The answering ACK may acknowledge data whose ACKs the outage swallowed, which grows cwnd by
    // at most one segment in slow start; nothing is reset.
    let resumed = p.eps[0].sender.state().cwnd;
    assert!(resumed >= cwnd && resumed <= cwnd + s.smss().unwrap() as u64, "resumes at its old cwnd: {cwnd} -> {resumed}");
    p.run_until_closed(SimTime(600_000_000_000));
    assert_eq!(p.eps[1].receiver.as_ref().unwrap().delivered, 2_000_000);
}

#[test]
fn ecn_elfn_keeps_cwnd_on_three_duplicate_acks() {
    let s = scenario("ecn-elfn", "300000", "", "");
    let mut p = Pair::new(&s, ONE_WAY, drop_first_tx_of(s.smss().unwrap(), &[30]));
    let mut min_ssthresh = u64::MAX;
    let mut cwnd_before = 0;
    while p.step() {
        let snd = p.eps[0].sender.as_tcp().expect("a TCP sender");
        min_ssthresh = min_ssthresh.min(snd.tcb.ssthresh);
        if snd.counters.fast_retransmits == 0 {
            cwnd_before = snd.tcb.cwnd;
        } else {
            assert!(snd.tcb.cwnd >= cwnd_before, "cwnd reduced on duplicate ACKs");
        }
        if p.eps[0].is_closed() && p.eps[1].is_closed() {
            break;
        }
    }
    assert!(p.eps[0].sender.counters().fast_retransmits >= 1);
    assert_eq!(min_ssthresh, 64_000, "ssthresh untouched");
}

#[test]
fn ecn_elfn_keeps_cwnd_on_timeout() {
    let s = scenario("ecn-elfn", "100000", "", "");
    let lost = 1 + 10 * s.smss().unwrap() as u64;
    let mut p = Pair::new(&s, ONE_WAY, move |from, seg: &Segment, log: &[Sent]| {
        from == 0 && seg.seq == lost && seg.len > 0 && log.iter().filter(|x| x.from == 0 && x.seg.seq == lost).count() < 4
    });
    let mut cwnd_at_timeout = None;
    while p.step() {
        let snd = p.eps[0].sender.as_tcp().expect("a TCP sender");
        if snd.counters.timeouts >= 1 && cwnd_at_timeout.is_none() {
            cwnd_at_timeout = Some(snd.tcb.cwnd);
        }
        if p.eps[0].is_closed() && p.eps[1].is_closed() {
            break;
        }
    }
    assert!(p.eps[0].sender.counters().timeouts >= 1);
    assert!(cwnd_at_timeout.unwrap() > s.smss().unwrap() as u64, "cwnd not reset to one segment");
    assert_eq!(p.eps[0].sender.state().ssthresh, 64_000);
}

#[test]
fn ecn_elfn_timeout_goes_back_to_the_hole_and_resends_its_window_seed002_table5() {
    // BSD's timeout mechanics stay (snd_nxt back to snd_una, RFC 6298 §5.4); only the window
    // collapse is gone, so one RTO resends a burst from the hole rather than one segment.
    let s = scenario("ecn-elfn", "100000", "", "");
    let lost = 1 + 10 * s.smss().unwrap() as u64;
    let mut p = Pair::new(&s, ONE_WAY, move |from, seg: &Segment, log: &[Sent]| {
        from == 0 && seg.seq == lost && seg.len > 0 && log.iter().filter(|x| x.from == 0 && x.seg.seq == lost).count() < 4
    });
    let mut fired_at = None;
    while fired_at.is_none() {
        let log_before = p.log.len();
        assert!(p.step());
        if p.eps[0].sender.counters().timeouts == 1 {
            fired_at = Some((p.now, log_before));
        }
    }
    let (at, from_log) = fired_at.expect("a timeout");
    while p.now < at + SimDuration::from_millis(30) && p.step() {}
    let burst: Vec<&Sent> = p.log[from_log..].iter().filter(|x| x.from == 0 && x.seg.len > 0 && x.at < at + SimDuration::from_millis(30)).collect();
    assert_eq!(burst.first().map(|x| x.seg.seq), Some(lost), "starts at the hole");
    assert!(burst.len() >= 4, "a window's worth resent after one timeout, got {}", burst.len());
    assert!(burst.windows(2).all(|w| w[1].seg.seq > w[0].seg.seq), "in sequence order");
}

#[test]
fn ecn_elfn_halves_cwnd_on_ecn_echo() {
    let s = scenario("ecn-elfn", "300000", "", "");
    let smss = s.smss().unwrap() as u64;
    let mut p = Pair::new(&s, ONE_WAY, |_, _, _| false);
    p.mark = Some(Box::new(move |from, seg: &Segment, _: &[Sent]| from == 0 && seg.seq == 1 + 40 * smss));
    let mut before = 0;
    let mut after = None;
    while p.step() {
        let snd = p.eps[0].sender.as_tcp().expect("a TCP sender");
        if snd.counters.ecn_reductions == 0 {
            before = snd.tcb.cwnd;
        } else if after.is_none() {
            after = Some(snd.tcb.cwnd);
        }
        if p.eps[0].is_closed() && p.eps[1].is_closed() {
            break;
        }
    }
    assert_eq!(p.eps[0].sender.counters().ecn_reductions, 1);
    let after = after.unwrap();
    // Half the flight size, which is the window here (the sender is window-limited).
    assert!(after <= before / 2 + smss && after >= before / 2 - 2 * smss, "before {before}, after {after}");
}

#[test]
fn an_outage_with_notification_freezes_elfn_and_spares_its_timeouts() {
    let outage = r#"{kind="outage", down="5s", every="15s", offset="5s", notify={delay="10ms"}}"#;
    let mut elfn = scenario("elfn", "3MB", outage, "");
    let mut newreno = scenario("newreno", "3MB", outage, "");
    for s in [&mut elfn, &mut newreno] {
        // The broken route carries no ACKs either.
        let path = s.path_mut().unwrap();
        path.reverse.impairments = path.forward.impairments.clone();
    }
    let (e, n) = (common::run_seed(&elfn, 1), common::run_seed(&newreno, 1));
    assert!(e.complete && n.complete);
    assert!(e.flow.route_failures >= 1 && e.flow.probes_sent >= 1 && e.flow.frozen_s > 0.0);
    assert_eq!(n.flow.route_failures, 0, "standard TCP ignores the notice");
    assert!(e.flow.timeouts < n.flow.timeouts, "elfn {} vs newreno {}", e.flow.timeouts, n.flow.timeouts);
}

#[test]
fn an_outage_in_hold_mode_delays_what_crosses_it_instead_of_dropping_it() {
    // The node before the break buffers packets until the route is back (seed 002 §4 leaves open
    // whether data in flight is lost; `mode = "hold"` is the buffering alternative).
    let held = r#"{kind="outage", down="2s", every="1h", offset="1s", mode="hold"}"#;
    let r = common::run_seed(&scenario("newreno", "1MB", held, ""), 1);
    assert!(r.complete);
    assert_eq!(r.path.forward.dropped_channel, 0, "nothing is lost");
    assert!(r.path.forward.held_outage > 0);

    // With a limit, the buffer keeps that many packets per episode and the rest are lost.
    let limited = r#"{kind="outage", down="2s", every="1h", offset="1s", mode="hold", hold_limit=3}"#;
    let r = common::run_seed(&scenario("newreno", "1MB", limited, ""), 1);
    assert!(r.complete);
    assert_eq!(r.path.forward.held_outage, 3);
    assert!(r.path.forward.dropped_channel > 0);
}

#[test]
fn a_held_packet_triggers_the_route_failure_notice_too() {
    let outage = r#"{kind="outage", down="5s", every="1h", offset="2s", mode="hold", notify={delay="10ms"}}"#;
    let r = common::run_seed(&scenario("elfn", "1MB", outage, ""), 1);
    assert!(r.complete);
    assert_eq!(r.flow.route_failures, 1);
    assert_eq!(r.path.forward.dropped_channel, 0);
}
