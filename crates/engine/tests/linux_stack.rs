//! The Linux stack (`tcp.stack = "linux-6"`, `tcp::linux`): timelines of its loss detection,
//! recovery, timers and acknowledgments on two sans-I/O endpoints, each citing the RFC section
//! or the kernel function it follows. The textbook stack's behaviour in the same timeline is
//! asserted beside it where the contrast is the point.

mod common;
use common::{drop_first_tx_of, scenario, Pair};
use tcpenergy_engine::tcp::linux::cc::LinuxCaState;
use tcpenergy_engine::tcp::segment::Segment;
use tcpenergy_engine::units::{SimDuration, SimTime};

const ONE_WAY: SimDuration = SimDuration(20_000_000);
const LIMIT: SimTime = SimTime(60_000_000_000);

fn linux(variant: &str, bytes: &str, tcp: &str) -> tcpenergy_engine::config::Scenario {
    scenario(variant, bytes, "", &format!("[tcp]\nstack = \"linux-6\"\n{tcp}"))
}

/// `s` over the pair, `drop` deciding the losses, until both sides have closed.
fn transfer(s: &tcpenergy_engine::config::Scenario, drop: impl FnMut(usize, &Segment, &[common::Sent]) -> bool + 'static) -> Pair {
    let mut p = Pair::new(s, ONE_WAY, drop);
    p.run_until_closed(LIMIT);
    p
}

/// Bytes the receiving application got.
fn delivered(p: &Pair) -> u64 {
    p.eps[1].receiver.as_ref().unwrap().delivered
}

/// Drop the first `times` transmissions of data segment `index` (0-based).
fn drop_tx_of(smss: u32, index: u64, times: usize) -> impl FnMut(usize, &Segment, &[common::Sent]) -> bool {
    move |from, seg, log| {
        let seq = 1 + index * smss as u64;
        from == 0 && seg.len > 0 && seg.seq == seq && log.iter().filter(|s| s.from == 0 && s.seg.seq == seq && s.seg.len > 0).count() < times
    }
}

#[test]
fn rack_finds_a_lost_retransmission_without_a_timeout_rfc8985_s6_2() {
    // Segment 30 is lost twice: its fast retransmission is lost too. RACK judges the
    // retransmission by its send time against later deliveries and resends it again; RFC 6675
    // has no way to see it and waits for the retransmission timer.
    let s = linux("sack", "300000", "");
    let smss = s.smss().unwrap();
    let p = transfer(&s, drop_tx_of(smss, 30, 2));
    let c = p.eps[0].sender.counters();
    assert_eq!(p.sends_of(0, 1 + 30 * smss as u64).len(), 3);
    assert_eq!((c.timeouts, c.lost_retransmits), (0, 1));
    assert_eq!(delivered(&p), 300_000);
}

#[test]
fn a_tail_loss_is_repaired_by_a_probe_two_srtt_after_the_last_ack_rfc8985_s7() {
    // Forty segments; the last two (the last with the FIN) are lost. No duplicate ACK can
    // follow them, so only the probe timeout (2 SRTT plus two jiffies with more than one packet
    // out, RFC 8985 §7.2) or the RTO can repair them: the probe resends the last segment, its
    // SACK lets RACK find the other, and no timeout is taken.
    let bytes = 40 * 1448;
    let s = linux("sack", &bytes.to_string(), "");
    let smss = s.smss().unwrap();
    assert_eq!(smss, 1448);
    let mut p = Pair::new(&s, ONE_WAY, drop_first_tx_of(smss, &[38, 39]));
    p.run_until_closed(LIMIT);
    let c = p.eps[0].sender.counters();
    assert_eq!((c.loss_probes, c.timeouts), (1, 0));
    let sends = p.sends_of(0, 1 + 39 * smss as u64);
    assert_eq!(sends.len(), 2);
    assert_eq!(p.sends_of(0, 1 + 38 * smss as u64).len(), 2, "RACK repairs the other loss");
    let last_ack = p.log.iter().filter(|x| x.from == 1 && x.seg.ack == 1 + 38 * smss as u64).map(|x| x.at + ONE_WAY).min().unwrap();
    let srtt = p.eps[0].sender.as_linux().unwrap().srtt().unwrap();
    let probe_after = sends[1].at - last_ack;
    assert!(probe_after >= SimDuration(2 * srtt.0), "probe {probe_after:?} after the last ACK; srtt {srtt:?}");
    // Two SRTT plus two jiffies, rounded up to whole jiffies, fired on the jiffy after the
    // expiry (kernel/time/timer.c `calc_index`): at most four jiffies (16 ms) past 2 SRTT.
    assert!(probe_after <= SimDuration(2 * srtt.0 + 16_000_000), "two SRTT plus two jiffies, on the timer wheel");
    assert!(probe_after < p.eps[0].sender.rto(), "before the RTO");
}

#[test]
fn prr_sends_one_segment_per_two_delivered_while_more_than_ssthresh_is_in_flight_rfc6937_s3() {
    // One loss in a window of about 130 packets: Reno's ssthresh is half of cwnd, and while the
    // pipe exceeds ssthresh PRR releases ssthresh/RecoverFS = 1/2 segment per segment
    // delivered, so cwnd falls by one every second ACK and ends at ssthresh.
    let s = linux("sack", "400000", "initial_window = 60");
    let smss = s.smss().unwrap() as u64;
    let mut p = Pair::new(&s, ONE_WAY, drop_first_tx_of(smss as u32, &[70]));
    let (mut sent, mut ssthresh, mut span) = (0u64, 0u32, (SimTime::ZERO, SimTime::ZERO));
    loop {
        let before = p.eps[0].sender.counters().clone();
        let in_recovery = p.eps[0].sender.as_linux().unwrap().ca_state() == LinuxCaState::Recovery;
        if !p.step() {
            break;
        }
        let linux = p.eps[0].sender.as_linux().unwrap();
        if linux.ca_state() == LinuxCaState::Recovery && !in_recovery {
            span.0 = p.now;
        }
        if in_recovery && linux.ca_state() == LinuxCaState::Recovery {
            ssthresh = linux.ssthresh_packets();
            span.1 = p.now;
            let after = p.eps[0].sender.counters();
            sent += (after.data_segments_sent - after.retransmissions) - (before.data_segments_sent - before.retransmissions);
        }
    }
    // ACKs that reached the sender during recovery, after the one that started it.
    let acks = p.log.iter().filter(|x| x.from == 1 && x.at + ONE_WAY > span.0 && x.at + ONE_WAY <= span.1).count();
    let ratio = sent as f64 / acks as f64;
    assert!((0.4..=0.6).contains(&ratio), "{sent} new segments for {acks} ACKs in recovery");
    assert!(ssthresh >= 30, "a window of {ssthresh} packets after the reduction");
    assert_eq!(p.eps[0].sender.counters().timeouts, 0);
    assert_eq!(delivered(&p), 400_000);
}

#[test]
fn the_rto_is_srtt_plus_the_200ms_floor_on_a_steady_path_tcp_rtt_estimator() {
    let s = linux("sack", "200000", "");
    let mut p = Pair::new(&s, ONE_WAY, |_, _, _| false);
    p.run_until_closed(LIMIT);
    let srtt = p.eps[0].sender.as_linux().unwrap().srtt().unwrap();
    let rto = p.eps[0].sender.rto();
    let expect = (srtt.0 + 200_000_000).div_ceil(4_000_000) * 4_000_000;
    assert!(rto.0 >= expect && rto.0 <= expect + 8_000_000, "rto {rto:?}, srtt {srtt:?}");
}

#[test]
fn a_reordered_segment_undoes_the_reduction_when_the_dsack_arrives_rfc2883_rfc3708() {
    // Segment 40 arrives 15 ms late, after more than three later ones: the sender marks it lost
    // (the duplicate-ACK threshold zeroes RACK's reordering window) and retransmits; the
    // receiver then holds two copies and reports the second as a D-SACK, which proves the
    // retransmission spurious: the window is restored and reordering is remembered.
    let s = linux("sack", "300000", "");
    let smss = s.smss().unwrap() as u64;
    let mut p = Pair::new(&s, ONE_WAY, |_, _, _| false);
    let late = 1 + 40 * smss;
    p.extra_delay = Some(Box::new(move |from, seg: &Segment, log: &[common::Sent]| {
        // The log already holds this transmission: the first is the only one.
        let first = log.iter().filter(|s| s.from == 0 && s.seg.seq == late && s.seg.len > 0).count() == 1;
        if from == 0 && seg.seq == late && seg.len > 0 && first && !seg.retransmission {
            SimDuration::from_millis(15)
        } else {
            SimDuration::ZERO
        }
    }));
    p.run_until_closed(LIMIT);
    let dsacks = p.log.iter().filter(|x| x.from == 1 && x.seg.sack.as_slice().first().is_some_and(|&(_, r)| r <= x.seg.ack)).count();
    assert!(dsacks >= 1, "the receiver reports the duplicate as a D-SACK (RFC 2883 §4)");
    assert_eq!(p.sends_of(0, late).len(), 2, "one spurious retransmission");
    let c = p.eps[0].sender.counters();
    assert_eq!((c.fast_retransmits, c.timeouts), (1, 0));
    assert!(c.undos >= 1, "the D-SACK undoes the reduction (tcp_try_undo_dsack)");
    assert!(p.eps[0].sender.as_linux().unwrap().reordering() > 3, "reordering is remembered (tcp_check_sack_reordering)");
}

#[test]
fn without_sack_the_head_is_lost_at_the_third_duplicate_and_again_at_each_partial_ack_tcp_newreno_mark_lost() {
    let s = linux("newreno", "300000", "sack = false");
    let smss = s.smss().unwrap() as u64;
    let mut p = Pair::new(&s, ONE_WAY, drop_first_tx_of(smss as u32, &[30, 33]));
    p.run_until_closed(LIMIT);
    let first = p.sends_of(0, 1 + 30 * smss);
    let second = p.sends_of(0, 1 + 33 * smss);
    assert_eq!((first.len(), second.len()), (2, 2));
    let dups: Vec<_> = p.log.iter().filter(|x| x.from == 1 && x.seg.ack == 1 + 30 * smss && x.seg.is_pure_ack()).collect();
    assert_eq!(first[1].at, dups[3].at + ONE_WAY, "the third duplicate ACK starts recovery");
    let partial = p.log.iter().find(|x| x.from == 1 && x.seg.ack == 1 + 33 * smss).unwrap();
    assert_eq!(second[1].at, partial.at + ONE_WAY, "the partial ACK marks the new head lost at once");
    assert_eq!(p.eps[0].sender.counters().timeouts, 0);
}

#[test]
fn the_linux_receiver_acknowledges_the_first_segments_at_once_then_every_second_tcp_ack_snd_check() {
    let s = linux("sack", "400000", "");
    let mut p = Pair::new(&s, ONE_WAY, |_, _, _| false);
    p.run_until_closed(LIMIT);
    let data: Vec<_> = p.log.iter().filter(|x| x.from == 0 && x.seg.len > 0).collect();
    let acks = p.log.iter().filter(|x| x.from == 1 && x.seg.is_pure_ack() && x.seg.ack > 1).count();
    // Quick ACKs at first and while the window grows, delayed ACKs after: between one ACK per
    // segment and one per two.
    assert!(acks * 2 >= data.len() && acks < data.len(), "{acks} ACKs for {} segments", data.len());
    // The first ten segments (the initial window) are each acknowledged at once.
    let first_acks = p.log.iter().filter(|x| x.from == 1 && x.seg.is_pure_ack() && x.seg.ack > 1 && x.seg.ack <= 1 + 10 * 1448).count();
    assert_eq!(first_acks, 10);
}

#[test]
fn bbr_paces_its_segments_at_the_pacing_rate_tcp_bbr() {
    let s = linux("bbr", "2000000", "");
    let mut p = Pair::new(&s, ONE_WAY, |_, _, _| false);
    p.run_until_closed(LIMIT);
    let sender = p.eps[0].sender.as_linux().unwrap();
    let rate = sender.pacing_rate();
    assert!(rate > 0);
    assert_eq!(delivered(&p), 2_000_000);
    // The path's sender takes 1 ms per segment: BBR's estimate settles near 1448 B/ms, and it
    // paces rather than bursting, so no two data segments share a departure time.
    assert!((1_000_000..=3_500_000).contains(&rate), "pacing rate {rate} B/s");
    assert_eq!(p.eps[0].sender.counters().timeouts, 0);
}


#[test]
fn f_rto_finds_a_timeout_caused_by_a_delay_spike_spurious_rfc5682_s3_1() {
    // The ACKs sent between 150 ms and 750 ms are all held until 750 ms (a delay spike longer
    // than the RTO): the timer fires and the head is resent; then the late ACKs arrive. F-RTO sends new data on the
    // first ACK that advances, and when the next one acknowledges data never retransmitted the
    // timeout is declared spurious and its reduction undone. Timestamps are off, so Eifel's
    // test (the echo) cannot decide it.
    let s = linux("sack", "600000", "timestamps = false");
    let mut p = Pair::new(&s, ONE_WAY, |_, _, _| false);
    p.extra_delay = Some(Box::new(|from, seg: &Segment, log: &[common::Sent]| {
        let at = log.last().map_or(SimTime::ZERO, |x| x.at);
        let (start, end) = (SimTime(150_000_000), SimTime(750_000_000));
        if from == 1 && seg.is_pure_ack() && (start..end).contains(&at) {
            end - at
        } else {
            SimDuration::ZERO
        }
    }));
    p.run_until_closed(LIMIT);
    let c = p.eps[0].sender.counters();
    assert!(c.timeouts >= 1, "the spike outlasts the RTO");
    assert_eq!(c.spurious_timeouts, 1, "F-RTO undoes it");
    assert_eq!(delivered(&p), 600_000);
}

/// The most data segments endpoint 0 emitted in one event, once its first RTT sample is in.
fn largest_burst(p: &mut Pair) -> usize {
    let mut largest = 0;
    loop {
        let before = p.log.len();
        let sampled = p.eps[0].sender.as_linux().unwrap().srtt().is_some();
        if !p.step() {
            return largest;
        }
        if sampled {
            largest = largest.max(p.log[before..].iter().filter(|x| x.from == 0 && x.seg.len > 0).count());
        }
    }
}

#[test]
fn with_pacing_cubic_sends_bursts_of_one_tso_packet_at_the_pacing_rate_tcp_tso_autosize() {
    // Unpaced, an ACK releases what the window allows at once (slow start doubles, so bursts
    // grow). With pacing (as under the fq qdisc) new data leaves in bursts of one TSO packet's
    // segments, about a millisecond of the pacing rate (2 x cwnd / SRTT in slow start) but at
    // least `tcp_min_tso_segs` = 2, each burst spaced by its size over the pacing rate.
    let mut bursty = Pair::new(&linux("cubic", "500000", ""), ONE_WAY, |_, _, _| false);
    assert!(largest_burst(&mut bursty) > 2);
    let mut paced = Pair::new(&linux("cubic", "500000", "pacing = true"), ONE_WAY, |_, _, _| false);
    assert_eq!(largest_burst(&mut paced), 2, "this path's rate is under one segment per millisecond");
    assert_eq!(paced.eps[1].receiver.as_ref().unwrap().delivered, 500_000);
}

#[test]
fn the_pacer_lets_the_first_ten_data_segments_out_together_tcp_update_skb_after_send() {
    // The handshake's RTT sample already sets a pacing rate, but the pacer spaces packets only
    // from the eleventh data packet on (as sch_fq does): the initial window of ten leaves in
    // the event that completes the handshake, and later ones in paced bursts of two.
    let mut p = Pair::new(&linux("cubic", "500000", "pacing = true"), ONE_WAY, |_, _, _| false);
    loop {
        let before = p.log.len();
        assert!(p.step(), "the transfer starts");
        let data = p.log[before..].iter().filter(|x| x.from == 0 && x.seg.len > 0).count();
        if data > 0 {
            assert_eq!(data, 10, "the initial window leaves unpaced");
            break;
        }
    }
    assert!(p.eps[0].sender.as_linux().unwrap().pacing_rate() > 0, "a pacing rate was set");
    assert_eq!(largest_burst(&mut p), 2, "then a TSO packet's two segments at a time");
}

#[test]
fn an_ack_with_nothing_outstanding_is_no_duplicate_ack_tcp_ack_no_queue() {
    // The receiver's own sending half has nothing outstanding: each data segment's unchanged
    // acknowledgment field reaches tcp_ack's no_queue path, which neither counts a duplicate
    // ACK nor touches the reordering degree (a duplicate counted against zero packets out
    // would set it to zero, and the first later duplicate would trigger a fast retransmit).
    let s = linux("reno", "300000", "sack = false");
    let smss = s.smss().unwrap();
    let p = transfer(&s, drop_tx_of(smss, 40, 1));
    assert_eq!(p.eps[1].sender.counters().dupacks_received, 0);
    assert!(p.eps[0].sender.counters().dupacks_received >= 3, "the data sender did see duplicates");
    assert_eq!(delivered(&p), 300_000);
}

#[test]
fn without_sack_a_recovery_held_at_high_seq_is_not_undone_by_the_next_ack_tcp_packet_delayed() {
    // The peer's window (about 20 segments) keeps the sender from sending past the loss during
    // recovery, so the retransmission's ACK lands exactly on high_seq: the state is held
    // (tcp_is_non_sack_preventing_reopen) and the record of the retransmission forgotten. The
    // next ACK must not read that as "nothing was retransmitted" and undo the reduction.
    let s = linux("reno", "400000", "sack = false\nreceive_autotune = false\nreceive_buffer = 32768");
    let smss = s.smss().unwrap();
    let p = transfer(&s, drop_tx_of(smss, 60, 1));
    let c = p.eps[0].sender.counters();
    assert_eq!((c.fast_retransmits, c.timeouts), (1, 0));
    assert_eq!(c.undos, 0, "a real loss is not undone");
    assert!(p.eps[0].sender.as_linux().unwrap().ssthresh_packets() < 1000, "the reduction stands");
    assert_eq!(delivered(&p), 400_000);
}
