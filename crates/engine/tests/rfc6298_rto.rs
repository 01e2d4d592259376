//! RFC 6298: the retransmission timer's initial value, its computation from RTT samples, the
//! exponential backoff, and Karn's rule.

mod common;
use common::{scenario, Pair, Sent};
use tcpenergy_engine::tcp::segment::Segment;
use tcpenergy_engine::units::{SimDuration, SimTime};

#[test]
fn rto_after_the_first_sample_is_srtt_plus_four_rttvar() {
    // The SYN is timed: R = 100 ms -> SRTT = 100 ms, RTTVAR = 50 ms, RTO = 300 ms (RFC 6298 §2.2).
    let s = scenario("newreno", "1000", "", "[tcp]\nmin_rto = \"100ms\"");
    let mut p = Pair::new(&s, SimDuration::from_millis(50), |_, _, _| false);
    while p.eps[0].sender.state().snd_una == 0 {
        assert!(p.step());
    }
    assert_eq!(p.eps[0].sender.rto(), SimDuration::from_millis(300));
}

#[test]
fn initial_rto_is_one_second_and_syn_loss_backs_it_off() {
    let s = scenario("newreno", "1000", "", "");
    let mut drops = 2;
    let mut p = Pair::new(&s, SimDuration::from_millis(20), move |from, seg: &Segment, _: &[Sent]| {
        let syn = from == 0 && seg.seq == 0 && seg.len == 0 && seg.syn.is_some();
        if syn && drops > 0 {
            drops -= 1;
            return true;
        }
        false
    });
    p.run_until_closed(SimTime(60_000_000_000));
    let syns: Vec<SimTime> = p.log.iter().filter(|x| x.from == 0 && x.seg.syn.is_some()).map(|x| x.at).collect();
    assert_eq!(syns, vec![SimTime(0), SimTime(1_000_000_000), SimTime(3_000_000_000)]);
}

#[test]
fn rto_doubles_on_repeated_timeouts_and_karn_keeps_the_backoff() {
    let s = scenario("reno", "60000", "", "");
    let lost = 1 + 10 * s.smss().unwrap() as u64;
    // Lose the first five transmissions of segment 10.
    let mut p = Pair::new(&s, SimDuration::from_millis(20), move |from, seg: &Segment, log: &[Sent]| {
        from == 0 && seg.seq == lost && seg.len > 0 && log.iter().filter(|x| x.from == 0 && x.seg.seq == lost && x.seg.len > 0).count() < 5
    });
    let mut rto_when_repaired = None;
    while p.step() {
        if rto_when_repaired.is_none() && p.eps[0].sender.state().snd_una > lost {
            rto_when_repaired = Some(p.eps[0].sender.rto());
        }
        if p.eps[0].is_closed() && p.eps[1].is_closed() {
            break;
        }
    }
    let t: Vec<SimTime> = p.sends_of(0, lost).iter().map(|x| x.at).collect();
    assert_eq!(t.len(), 6, "original, fast retransmit, four timeouts");
    let gaps: Vec<u64> = t.windows(2).skip(2).map(|w| (w[1] - w[0]).0).collect();
    assert_eq!(gaps[1], 2 * gaps[0], "{gaps:?}");
    assert_eq!(gaps[2], 2 * gaps[1], "{gaps:?}");
    // Karn: the ACK of a retransmitted segment gives no sample, so the backed-off RTO stays.
    assert!(rto_when_repaired.unwrap() >= SimDuration::from_secs(16), "{rto_when_repaired:?}");
    assert_eq!(p.eps[0].sender.counters().timeouts, 4);
}
