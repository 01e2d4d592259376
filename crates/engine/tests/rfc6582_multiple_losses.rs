//! Several losses in one window (seed 000 §3 after Fall & Floyd): Reno needs a timeout, NewReno
//! repairs one hole per RTT with partial ACKs (RFC 6582), SACK repairs them all within about one
//! RTT of detection (RFC 6675).

mod common;
use common::{drop_first_tx_of, scenario, Pair, Sent};
use tcpenergy_engine::tcp::segment::Segment;
use tcpenergy_engine::units::{SimDuration, SimTime};

const ONE_WAY: SimDuration = SimDuration(20_000_000);
const RTT: SimDuration = SimDuration(40_000_000);
const LOST: &[u64] = &[30, 31, 32];

fn run(variant: &str) -> Pair {
    let s = scenario(variant, "200000", "", "");
    let mut p = Pair::new(&s, ONE_WAY, drop_first_tx_of(s.smss().unwrap(), LOST));
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
    assert!(p.eps[0].sender.counters().timeouts >= 1);
}

#[test]
fn newreno_recovers_three_losses_with_partial_acks_and_no_timeout() {
    let p = run("newreno");
    let c = p.eps[0].sender.counters();
    assert_eq!(c.timeouts, 0);
    assert_eq!(c.fast_retransmits, 1, "one recovery episode for the whole window");
    let t = repair_times(&p);
    // One hole per round trip.
    assert!(t[1] - t[0] >= RTT && t[2] - t[1] >= RTT, "{t:?}");
}

#[test]
fn sack_recovers_three_losses_within_about_one_rtt_of_detection() {
    let p = run("sack");
    let c = p.eps[0].sender.counters();
    assert_eq!(c.timeouts, 0);
    assert_eq!(c.fast_retransmits, 1);
    let t = repair_times(&p);
    assert!(t[2] - t[0] <= RTT, "all holes retransmitted within one RTT of the first: {t:?}");
}

#[test]
fn tahoe_slow_starts_from_one_segment_after_fast_retransmit() {
    let s = scenario("tahoe", "200000", "", "");
    let mut p = Pair::new(&s, ONE_WAY, drop_first_tx_of(s.smss().unwrap(), &[30]));
    let smss = s.smss().unwrap() as u64;
    let mut cwnd_after = None;
    while p.step() {
        if p.eps[0].sender.counters().fast_retransmits == 1 && cwnd_after.is_none() {
            cwnd_after = Some(p.eps[0].sender.state().cwnd);
        }
        if p.eps[0].is_closed() && p.eps[1].is_closed() {
            break;
        }
    }
    assert_eq!(cwnd_after, Some(smss));
    assert_eq!(p.eps[0].sender.counters().timeouts, 0);
}

/// Loses the first transmission of every data segment from index `from_index` on until the sender
/// times out (so no duplicate ACK can arrive and the whole window waits for the retransmission
/// timer), then the first transmission of the first segment sent after the timeout that carries
/// new data, i.e. the one starting at `recover` (snd_max at the timeout).
fn lose_window_then_first_new_segment(smss: u32, from_index: u64) -> impl FnMut(usize, &Segment, &[Sent]) -> bool {
    let mut recover: Option<u64> = None;
    let mut lost_new = false;
    move |from, seg, log| {
        if from != 0 || seg.len == 0 {
            return false;
        }
        let first_tx = !log.iter().any(|s| s.from == 0 && s.seg.seq == seg.seq && s.seg.len > 0);
        match recover {
            None if first_tx => seg.seq >= 1 + from_index * smss as u64,
            None => {
                // The first retransmission: the timeout has fired.
                recover = log.iter().filter(|s| s.from == 0).map(|s| s.seg.seq + s.seg.len as u64).max();
                false
            }
            Some(r) if first_tx && seg.seq == r && !lost_new => {
                lost_new = true;
                true
            }
            Some(_) => false,
        }
    }
}

/// RFC 6582 §3.2 step 1 and RFC 6675 §5.1: a new recovery may start once the cumulative ACK covers
/// `recover`, the highest sequence number sent before the timeout. A whole window is lost, so the
/// sender times out; go-back-N repairs it, and the first new segment, which starts just past
/// `recover`, is lost too. The duplicate ACKs the following segments provoke all acknowledge
/// exactly up to it: the third must trigger a fast retransmit, not leave the hole to a backed-off
/// retransmission timer. (Before engine 0.5.0 the guard required the ACK to pass `recover` by one
/// more byte, and both variants waited for a second timeout here.)
#[test]
fn a_loss_of_the_first_new_segment_after_a_timeout_is_fast_retransmitted_rfc6582_s3_2() {
    for variant in ["newreno", "sack"] {
        let s = scenario(variant, "200000", "", "");
        let mut p = Pair::new(&s, ONE_WAY, lose_window_then_first_new_segment(s.smss().unwrap(), 20));
        p.run_until_closed(SimTime(60_000_000_000));
        assert_eq!(p.eps[1].receiver.as_ref().unwrap().delivered, 200_000, "{variant} delivers everything");
        let c = p.eps[0].sender.counters();
        assert_eq!(c.timeouts, 1, "{variant}: only the timeout for the lost window");
        assert_eq!(c.fast_retransmits, 1, "{variant}: the new segment's loss is repaired by fast retransmit");
        // The timeline: the lost new segment is resent when the third duplicate ACK for it arrives.
        let hole = p.log.iter().filter(|x| x.dropped).last().unwrap().seg.seq;
        let resent = p.sends_of(0, hole)[1].at;
        let acks: Vec<SimTime> = p
            .log
            .iter()
            .filter(|x| x.from == 1 && x.seg.ack == hole && x.seg.len == 0)
            .map(|x| x.at + ONE_WAY)
            .collect();
        assert!(acks.len() >= 4, "{variant}: the ACK up to the hole and three duplicates: {acks:?}");
        // Every one of these ACKs was provoked by a segment above the hole. NewReno counts three
        // duplicates after the ACK that first reached the hole (RFC 5681 §3.2); SACK also counts
        // that first ACK, since it reports new SACKed data, and starts once three segments above
        // the hole are SACKed (RFC 6675 §5, IsLost).
        let third = if variant == "sack" { 2 } else { 3 };
        assert_eq!(resent, acks[third], "{variant}: resent on the third duplicate ACK's arrival");
    }
}
