//! Several losses in one window (seed 000 §3 after Fall & Floyd): Reno needs a timeout, NewReno
//! repairs one hole per RTT with partial ACKs (RFC 6582), SACK repairs them all within about one
//! RTT of detection (RFC 6675).

mod common;
use common::{drop_first_tx_of, scenario, Pair};
use tcpenergy_engine::units::{SimDuration, SimTime};

const ONE_WAY: SimDuration = SimDuration(20_000_000);
const RTT: SimDuration = SimDuration(40_000_000);
const LOST: &[u64] = &[30, 31, 32];

fn run(variant: &str) -> Pair {
    let s = scenario(variant, "200000", "", "");
    let mut p = Pair::new(&s, ONE_WAY, drop_first_tx_of(s.smss(), LOST));
    p.run_until_closed(SimTime(60_000_000_000));
    assert_eq!(p.eps[1].receiver.as_ref().unwrap().delivered, 200_000, "{variant} delivers everything");
    p
}

/// Times of the retransmissions of the lost segments.
fn repair_times(p: &Pair) -> Vec<SimTime> {
    let smss = 1460u64;
    LOST.iter().map(|i| p.sends_of(0, 1 + i * smss)[1].at).collect()
}

#[test]
fn reno_with_three_losses_in_one_window_needs_a_timeout() {
    let p = run("reno");
    assert!(p.eps[0].sender.counters.timeouts >= 1);
}

#[test]
fn newreno_recovers_three_losses_with_partial_acks_and_no_timeout() {
    let p = run("newreno");
    let c = &p.eps[0].sender.counters;
    assert_eq!(c.timeouts, 0);
    assert_eq!(c.fast_retransmits, 1, "one recovery episode for the whole window");
    let t = repair_times(&p);
    // One hole per round trip.
    assert!(t[1] - t[0] >= RTT && t[2] - t[1] >= RTT, "{t:?}");
}

#[test]
fn sack_recovers_three_losses_within_about_one_rtt_of_detection() {
    let p = run("sack");
    let c = &p.eps[0].sender.counters;
    assert_eq!(c.timeouts, 0);
    assert_eq!(c.fast_retransmits, 1);
    let t = repair_times(&p);
    assert!(t[2] - t[0] <= RTT, "all holes retransmitted within one RTT of the first: {t:?}");
}

#[test]
fn tahoe_slow_starts_from_one_segment_after_fast_retransmit() {
    let s = scenario("tahoe", "200000", "", "");
    let mut p = Pair::new(&s, ONE_WAY, drop_first_tx_of(s.smss(), &[30]));
    let smss = s.smss() as u64;
    let mut cwnd_after = None;
    while p.step() {
        if p.eps[0].sender.counters.fast_retransmits == 1 && cwnd_after.is_none() {
            cwnd_after = Some(p.eps[0].sender.tcb.cwnd);
        }
        if p.eps[0].is_closed() && p.eps[1].is_closed() {
            break;
        }
    }
    assert_eq!(cwnd_after, Some(smss));
    assert_eq!(p.eps[0].sender.counters.timeouts, 0);
}
