//! Bytes on the wire are exact: IPv4 and TCP headers, options with their padding, MSS from MTU.

mod common;
use common::{scenario, Pair};
use tcpenergy_engine::units::{SimDuration, SimTime};

#[test]
fn data_segments_fill_the_mtu_with_timestamps_on() {
    let s = scenario("sack", "30000", "", "[tcp]\ntimestamps = true");
    assert_eq!(s.smss().unwrap(), 1500 - 40 - 12);
    let mut p = Pair::new(&s, SimDuration::from_millis(20), |_, _, _| false);
    p.run_until_closed(SimTime(30_000_000_000));
    let data: Vec<_> = p.log.iter().filter(|x| x.from == 0 && x.seg.len > 0).collect();
    for x in &data[..data.len() - 1] {
        assert_eq!(x.seg.wire_len(), 1500);
    }
    // SYN: MSS 4 + SACK-permitted 2 + timestamps 10 = 16 option bytes.
    let syn = p.log.iter().find(|x| x.from == 0 && x.seg.syn.is_some()).unwrap();
    assert_eq!(syn.seg.wire_len(), 40 + 16);
    // Pure ACKs carry timestamps: 52 bytes.
    let ack = p.log.iter().find(|x| x.from == 1 && x.seg.is_pure_ack()).unwrap();
    assert_eq!(ack.seg.wire_len(), 52);
}

#[test]
fn data_segments_fill_the_mtu_without_options() {
    for mtu in [512u32, 1500, 2296] {
        let mut s = scenario("newreno", "30000", "", "");
        s.path_mut().unwrap().mtu = mtu;
        let mut p = Pair::new(&s, SimDuration::from_millis(20), |_, _, _| false);
        p.run_until_closed(SimTime(30_000_000_000));
        let first = p.log.iter().find(|x| x.from == 0 && x.seg.len > 0).unwrap();
        assert_eq!(first.seg.wire_len(), mtu);
    }
}
