//! `tcp.stack` presets, tick-driven timers and per-run random phases of periodic impairments
//! (docs/models/tcp.md "Stack presets" and "Timer ticks", docs/units-and-scenarios.md).

mod common;
use common::{drop_first_tx_of, run_seed, scenario, Pair};
use tcpenergy_engine::config::{Phase, RttSampling, Ssthresh, Stack};
use tcpenergy_engine::net::impair::phase;
use tcpenergy_engine::units::{SimDuration, SimTime};
use tcpenergy_engine::Scenario;

const MS: u64 = 1_000_000;

/// Time of the first retransmission of data segment 0 by timeout, and of its first transmission.
fn first_data_rexmit(tick: &str) -> (SimTime, SimTime) {
    // Segment 0 is lost once: with one segment in flight there are no duplicate ACKs, so only the
    // retransmission timer (RTO = min_rto = 1 s after the SYN's 40 ms sample) can repair it.
    let s = scenario("newreno", "1000", "", &format!("[tcp]\ntimer_tick = \"{tick}\"\ninitial_window = 1"));
    let mut p = Pair::new(&s, SimDuration::from_millis(20), drop_first_tx_of(s.smss().unwrap(), &[0]));
    p.run_until_closed(SimTime(30_000 * MS));
    let sends = p.sends_of(0, 1);
    assert_eq!(sends.len(), 2, "one loss, one retransmission: {:?}", sends.iter().map(|x| x.at).collect::<Vec<_>>());
    (sends[0].at, sends[1].at)
}

#[test]
fn a_bsd_retransmit_timer_expires_on_a_500ms_slow_timer_tick() {
    // 4.4BSD counts the retransmit timer in PR_SLOWHZ = 2 ticks per second: a 1 s RTO is two
    // ticks, so it fires on the second 500 ms boundary after it was set, up to one tick early.
    let (sent, rexmit) = first_data_rexmit("500ms");
    assert_eq!(rexmit.0 % (500 * MS), 0, "on a tick boundary: {rexmit}");
    let waited = rexmit - sent;
    assert!(waited.0 > 500 * MS && waited.0 <= 1_000 * MS, "between (n-1) and n ticks: {waited:?}");
    // Exact timers (the default) wait the full 1 s RTO from the timer's last restart, which is
    // off the tick grid here, and later than the ticked timer.
    let (sent_exact, exact) = first_data_rexmit("0s");
    assert_eq!(sent_exact, sent);
    assert!((exact - sent).0 >= 1_000 * MS && exact > rexmit, "{exact}");
    assert_ne!(exact.0 % (500 * MS), 0, "the exact timer is off the tick grid here");
}

#[test]
fn a_bsd_delayed_ack_goes_out_at_the_next_200ms_fast_timer_tick() {
    // 4.4BSD's delayed ACK is a flag that the 200 ms fast timer turns into an ACK: a lone segment
    // is acknowledged at the next fast-timer tick, not 200 ms after it arrived.
    let acks = |tick: &str| {
        let s = scenario(
            "newreno",
            "3000",
            "",
            &format!("[tcp]\ninitial_window = 1\ndelayed_ack_tick = \"{tick}\"\ndelayed_ack = {{every = 2, timeout = \"200ms\"}}"),
        );
        let mut p = Pair::new(&s, SimDuration::from_millis(20), |_, _, _| false);
        p.run_until_closed(SimTime(30_000 * MS));
        let arrival = p.sends_of(0, 1)[0].at + SimDuration::from_millis(20);
        let ack = p.log.iter().find(|x| x.from == 1 && x.seg.len == 0 && x.seg.syn.is_none() && x.seg.ack > 1).unwrap().at;
        (arrival, ack)
    };
    let (arrival, ack) = acks("200ms");
    assert_eq!(ack.0 % (200 * MS), 0, "on the fast-timer tick: {ack}");
    assert!(ack > arrival && (ack - arrival).0 <= 200 * MS, "the next tick after {arrival}: {ack}");
    let (arrival, ack) = acks("0s");
    assert_eq!((ack - arrival).0, 200 * MS, "exact: the full timeout");
}

fn stack(extra: &str) -> Scenario {
    Scenario::from_toml(&format!("[tcp]\n{extra}")).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn each_stack_preset_sets_its_documented_constants() {
    let ms = SimDuration::from_millis;
    let secs = SimDuration::from_secs;
    // FreeBSD 4.3: tcp_timer.h (TCPTV_RTOBASE, TCPTV_MIN, TCPTV_REXMTMAX, TCPTV_DELACK) in hz = 100
    // ticks, tcp_usrreq.c buffers, one-segment initial window.
    let t = stack("stack = \"freebsd-4.3\"").tcp;
    assert_eq!(t.stack, Some(Stack::Freebsd43));
    assert_eq!((t.timer_tick, t.delayed_ack_tick, t.clock_granularity), (ms(10), ms(10), ms(10)));
    assert_eq!((t.initial_rto, t.min_rto, t.max_rto), (secs(3), secs(1), secs(64)));
    assert_eq!((t.delayed_ack.every, t.delayed_ack.timeout), (2, ms(100)));
    assert_eq!((t.initial_window, t.initial_ssthresh), (1, Ssthresh::Infinite));
    assert_eq!((t.send_buffer, t.receive_buffer), (Some(32_768), 57_344));
    assert!(t.timestamps && !t.window_scale && !t.limited_transmit);
    assert_eq!(t.rtt_sampling, RttSampling::OneSegment, "t_rtttime / t_rtseq");
    // Linux 2.2: include/net/tcp.h TCP_TIMEOUT_INIT, TCP_RTO_MIN/MAX in HZ = 100 jiffies.
    let t = stack("stack = \"linux-2.2\"").tcp;
    assert_eq!((t.timer_tick, t.delayed_ack_tick), (ms(10), ms(10)));
    assert_eq!((t.initial_rto, t.min_rto, t.max_rto), (secs(3), ms(200), secs(120)));
    assert_eq!((t.send_buffer, t.receive_buffer), (Some(65_535), 65_535));
    assert!(t.timestamps && t.window_scale);
    assert_eq!(t.rtt_sampling, RttSampling::EveryAck, "tcp_ack_no_tstamp");
    // Linux 6: TCP_TIMEOUT_INIT 1 s, TCP_RTO_MIN 200 ms (also the RTTVAR floor), TCP_RTO_MAX
    // 120 s, TCP_DELACK_MIN 40 ms, TCP_INIT_CWND 10, HZ = 250.
    let t = stack("stack = \"linux-6\"").tcp;
    assert_eq!((t.timer_tick, t.clock_granularity), (ms(4), ms(200)));
    assert_eq!((t.initial_rto, t.min_rto, t.max_rto), (secs(1), ms(200), secs(120)));
    assert_eq!((t.delayed_ack.every, t.delayed_ack.timeout), (2, ms(40)));
    // tcp_rmem[2] = 32 MiB as a window (160/256 of it), reached by autotuning from tcp_rmem[1].
    assert_eq!((t.initial_window, t.send_buffer, t.receive_buffer, t.receive_autotune), (10, None, 20_971_520, true));
    assert!(t.limited_transmit);
    assert_eq!(t.rtt_sampling, RttSampling::EveryAck, "tcp_clean_rtx_queue, tcp_sacktag_one");
    // No stack: today's engine defaults, exact timers.
    let t = stack("").tcp;
    assert_eq!((t.stack, t.timer_tick, t.delayed_ack_tick), (None, SimDuration::ZERO, SimDuration::ZERO));
    assert_eq!((t.initial_window, t.max_rto), (2, secs(60)));
}

#[test]
fn explicit_tcp_keys_override_the_stack_preset() {
    let t = stack("stack = \"freebsd-4.3\"\nmin_rto = \"200ms\"\ntimer_tick = \"0s\"\ndelayed_ack = {timeout = \"50ms\"}").tcp;
    assert_eq!(t.min_rto, SimDuration::from_millis(200));
    assert_eq!(t.timer_tick, SimDuration::ZERO);
    // A partial delayed_ack table keeps the preset's other sub-key.
    assert_eq!((t.delayed_ack.every, t.delayed_ack.timeout), (2, SimDuration::from_millis(50)));
    assert_eq!(t.max_rto, SimDuration::from_secs(64), "keys not written stay the preset's");
    // `--set` overrides take precedence over the preset too, and can name the stack itself.
    let s = Scenario::from_json(
        "{}",
        &[("tcp.stack".into(), "\"linux-6\"".into()), ("tcp.initial_window".into(), "4".into())],
    )
    .unwrap();
    assert_eq!((s.tcp.initial_window, s.tcp.min_rto), (4, SimDuration::from_millis(200)));
}

#[test]
fn a_random_phase_lies_in_0_every_differs_between_seeds_and_is_shared_by_variants_and_groups() {
    let every = SimDuration::from_secs(15);
    let name = "path.forward.impairments.1";
    let phases: Vec<SimDuration> = (1..=200).map(|seed| phase(Phase::Random, every, seed, name, None)).collect();
    assert!(phases.iter().all(|p| *p < every), "in [0, every)");
    let mut distinct = phases.clone();
    distinct.sort();
    distinct.dedup();
    assert!(distinct.len() > 190, "seeds give different phases: {} distinct of 200", distinct.len());
    // Spread over the whole period, not bunched: every third of it is hit.
    for third in 0..3 {
        let lo = every.0 / 3 * third;
        assert!(phases.iter().any(|p| p.0 >= lo && p.0 < lo + every.0 / 3), "third {third}");
    }
    // The phase depends on the seed and the component only, never on the variant: two runs of
    // different variants with one seed build the same channel.
    assert_eq!(phase(Phase::Random, every, 7, name, None), phase(Phase::Random, every, 7, name, None));
    let sack = common::scenario("sack", "1MB", "{kind = \"outage\", down = \"5s\", every = \"15s\", offset = \"random\"}", "");
    let reno = common::scenario("reno", "1MB", "{kind = \"outage\", down = \"5s\", every = \"15s\", offset = \"random\"}", "");
    assert_eq!(sack.path().unwrap().forward.impairments, reno.path().unwrap().forward.impairments);
    // Members of one phase group share the phase (a route that fails in both directions at once).
    let f = phase(Phase::Random, every, 7, "path.forward.impairments.1", Some("route"));
    let r = phase(Phase::Random, every, 7, "path.reverse.impairments.0", Some("route"));
    assert_eq!(f, r);
    assert_ne!(phase(Phase::Random, every, 7, "path.reverse.impairments.0", None), f, "ungrouped: its own stream");
    // A fixed offset stays fixed.
    assert_eq!(phase(Phase::At(SimDuration::from_secs(10)), every, 7, name, None), SimDuration::from_secs(10));
}

/// Seed 002's route-failure condition: RTT 10-20 ms, route down 5 s every 15 s in both directions
/// (notified forward) and random loss, 5 MB, SACK.
fn route_failure(mtu: u32, loss: f64, stack_and_phase: bool) -> Scenario {
    let (offset, stack) = if stack_and_phase {
        (", offset = \"random\", phase_group = \"route\"", "stack = \"freebsd-4.3\"\n")
    } else {
        ("", "send_buffer = \"32KiB\"\nreceive_buffer = \"64KiB\"\n")
    };
    let text = format!(
        r#"
[path]
mtu = {mtu}
[path.forward]
rate = "2Mbps"
delay = "5ms"
impairments = [
  {{kind = "jitter", min = "0ms", max = "10ms", keep_order = true}},
  {{kind = "bernoulli", p = {loss}}},
  {{kind = "outage", down = "5s", every = "15s", notify = {{delay = "10ms"}}{offset}}},
]
[path.reverse]
rate = "2Mbps"
delay = "5ms"
impairments = [{{kind = "outage", down = "5s", every = "15s"{offset}}}]
[tcp]
variant = "sack"
{stack}
[traffic]
kind = "bulk"
bytes = "5MB"
"#
    );
    Scenario::from_toml(&text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

#[test]
fn the_seed002_route_failure_stall_completes_with_the_freebsd_stack_and_a_random_phase() {
    // The artefact: a 60 s backed-off RTO is four outage periods, so every retransmission of
    // this run lands in an outage and the transfer never finishes within the hour.
    let stalled = run_seed(&route_failure(512, 0.1, false), 2);
    assert!(!stalled.complete, "the phase-locked run stalls: {} bytes", stalled.flow.bytes_delivered);
    let mut incomplete = vec![];
    for mtu in [512, 1500] {
        for loss in [0.01, 0.05, 0.1] {
            let s = route_failure(mtu, loss, true);
            for seed in 1..=5 {
                let r = run_seed(&s, seed);
                if !r.complete {
                    incomplete.push((mtu, loss, seed, r.flow.bytes_delivered));
                }
            }
        }
    }
    assert!(incomplete.is_empty(), "incomplete: {incomplete:?}");
}
