//! RFC 3168 ECN end to end: ECT on new data, CE -> ECE echoed until CWR, at most one window
//! reduction per window of data, no retransmission for a mark.

mod common;
use common::{scenario, Pair, Sent};
use tcpenergy_engine::config::RedConfig;
use tcpenergy_engine::tcp::segment::{Ecn, Flags, Segment};
use tcpenergy_engine::units::{SimDuration, SimTime};

fn marked_pair(indices: &'static [u64]) -> Pair {
    let s = scenario("ecn", "200000", "", "");
    let smss = s.smss().unwrap() as u64;
    let mut p = Pair::new(&s, SimDuration::from_millis(20), |_, _, _| false);
    p.mark = Some(Box::new(move |from, seg: &Segment, _: &[Sent]| {
        from == 0 && indices.iter().any(|&i| seg.seq == 1 + i * smss)
    }));
    p.run_until_closed(SimTime(60_000_000_000));
    p
}

#[test]
fn new_data_is_ect_and_retransmissions_and_acks_are_not() {
    let p = marked_pair(&[]);
    for x in &p.log {
        let expect_ect = x.from == 0 && x.seg.len > 0 && !x.seg.retransmission;
        assert_eq!(x.seg.ecn == Ecn::Ect, expect_ect, "{:?}", x.seg);
    }
}

#[test]
fn ce_is_echoed_until_cwr_and_the_sender_reduces_once_per_window() {
    // Three marks in one window: one reduction, one CWR, no retransmission.
    let p = marked_pair(&[20, 21, 22]);
    let c = p.eps[0].sender.counters();
    assert_eq!(c.ecn_reductions, 1);
    assert_eq!(c.retransmissions, 0);
    let cwr: Vec<&Sent> = p.log.iter().filter(|x| x.from == 0 && x.seg.flags.contains(Flags::CWR)).collect();
    assert_eq!(cwr.len(), 1, "CWR on exactly one segment");
    let cwr_arrival = cwr[0].at + SimDuration::from_millis(20);
    let first_mark_arrival = p.log.iter().find(|x| x.from == 0 && x.seg.ecn == Ecn::Ce).unwrap().at + SimDuration::from_millis(20);
    for x in p.log.iter().filter(|x| x.from == 1 && x.seg.flags.contains(Flags::ACK)) {
        let echoing = x.seg.flags.contains(Flags::ECE);
        let in_echo_period = x.at >= first_mark_arrival && x.at < cwr_arrival;
        assert_eq!(echoing, in_echo_period, "ACK at {:?}: ECE {echoing}", x.at);
    }
}

#[test]
fn marks_in_separate_windows_each_reduce_the_window() {
    let p = marked_pair(&[20, 100]);
    assert_eq!(p.eps[0].sender.counters().ecn_reductions, 2);
}

#[test]
fn red_marks_instead_of_dropping_for_an_ecn_sender() {
    // A 1 Mbit/s bottleneck with RED and a large receive window builds a standing queue.
    let build = |v: &str| {
        let mut s = scenario(v, "2MB", "", "[tcp]\nreceive_buffer = \"256KB\"");
        s.path_mut().unwrap().forward.capacity = tcpenergy_engine::config::Capacity::Rate(1_000_000);
        s.path_mut().unwrap().reverse.capacity = tcpenergy_engine::config::Capacity::Rate(1_000_000);
        s.path_mut().unwrap().forward.queue = 60;
        s.path_mut().unwrap().forward.red = Some(RedConfig { min_th: 5.0, max_th: 30.0, max_p: 0.1, weight: 0.02, ecn: true });
        s
    };
    let sack = common::run_seed(&build("sack"), 1);
    let ecn = common::run_seed(&build("ecn"), 1);
    assert!(sack.path.forward.dropped_red > 0 && sack.path.forward.marked_ce == 0);
    assert!(ecn.path.forward.marked_ce > 0, "{:?}", ecn.path.forward);
    assert!(ecn.flow.ecn_reductions > 0);
    assert!(ecn.path.forward.dropped_red + ecn.path.forward.dropped_queue < sack.path.forward.dropped_red + sack.path.forward.dropped_queue);
    assert!(ecn.flow.retransmissions < sack.flow.retransmissions);
}

#[test]
fn congestion_episodes_mark_ecn_capable_packets_only_while_they_last() {
    // Seed 002 Table 3: a router congested 5 s every 30 s, with RED/ECN. Our flow alone keeps
    // the queue below min_th (16 KB window); cross traffic during episodes pushes it over.
    let build = |cross: bool| {
        let mut s = scenario("ecn", "5MB", "", "[tcp]\nreceive_buffer = \"16KB\"");
        s.path_mut().unwrap().forward.queue = 60;
        s.path_mut().unwrap().forward.red = Some(RedConfig { min_th: 15.0, max_th: 45.0, max_p: 0.1, weight: 0.02, ecn: true });
        if cross {
            s.path_mut().unwrap().forward.cross_traffic = Some(tcpenergy_engine::config::CrossTraffic {
                rate: 1_800_000,
                on: SimDuration::from_secs(5),
                every: SimDuration::from_secs(30),
                offset: Some(SimDuration::from_secs(5)),
                packet: 1500,
            });
        }
        s
    };
    let quiet = common::run_seed(&build(false), 1);
    let busy = common::run_seed(&build(true), 1);
    assert_eq!(quiet.path.forward.marked_ce, 0);
    assert!(busy.path.forward.marked_ce > 0 && busy.flow.ecn_reductions > 0);
    assert!(busy.path.forward.cross_offered > 0);
    assert!(busy.flow.completion_s > quiet.flow.completion_s);
}
