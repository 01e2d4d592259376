//! RFC 2018 §4: the receiver acknowledges out-of-order data at once with SACK blocks; the first
//! block holds the most recent arrival, the others repeat the most recently reported blocks.

mod common;
use common::{drop_first_tx_of, scenario, Pair};
use tcpenergy_engine::units::{SimDuration, SimTime};

#[test]
fn out_of_order_data_gets_an_immediate_duplicate_ack_with_correct_sack_blocks() {
    let s = scenario("sack", "100000", "", "");
    let m = s.smss().unwrap() as u64;
    let seg = |i: u64| 1 + i * m;
    let mut p = Pair::new(&s, SimDuration::from_millis(20), drop_first_tx_of(s.smss().unwrap(), &[10, 13]));
    p.run_until_closed(SimTime(30_000_000_000));

    // The receiver's answers to the arrivals of segments 11, 12 and 14 (first transmissions).
    let reply_to = |i: u64| {
        let arrival = p.sends_of(0, seg(i))[0].at + SimDuration::from_millis(20);
        // Segments sent back to back arrive together; the last reply at that instant answers `i`.
        p.log.iter().rfind(|x| x.from == 1 && x.at == arrival && x.seg.ack == seg(10)).copied()
    };
    let r11 = reply_to(11).expect("immediate ACK for segment 11");
    assert_eq!(r11.seg.sack.as_slice(), &[(seg(11), seg(12))]);
    let r12 = reply_to(12).expect("immediate ACK for segment 12");
    assert_eq!(r12.seg.sack.as_slice(), &[(seg(11), seg(13))]);
    let r14 = reply_to(14).expect("immediate ACK for segment 14");
    assert_eq!(r14.seg.sack.as_slice(), &[(seg(14), seg(15)), (seg(11), seg(13))]);
    assert_eq!(r14.seg.wire_len(), 40 + 4 + 2 * 8);
}

#[test]
fn no_sack_blocks_are_sent_when_sack_is_not_negotiated() {
    let s = scenario("newreno", "100000", "", "");
    let mut p = Pair::new(&s, SimDuration::from_millis(20), drop_first_tx_of(s.smss().unwrap(), &[10]));
    p.run_until_closed(SimTime(30_000_000_000));
    assert!(p.log.iter().all(|x| x.seg.sack.is_empty()));
}
