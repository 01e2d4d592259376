//! 802.11 power save in infrastructure mode (IEEE 802.11-2020 11.2.3; docs/models/wifi.md "Power
//! save"): beacons with a TIM, PS-Polls, dozing between beacons, and its cost in delay
//! (Krashinsky and Balakrishnan, MobiCom 2002) and its saving in radio energy.

mod common;
use common::radio_seconds;

use tcpenergy_engine::net::wifi::dcf::{Dcf, DcfConfig, FrameKind, Infrastructure, Out, Timer};
use tcpenergy_engine::result::network::NetRunResult;
use tcpenergy_engine::sim::queue::EventQueue;
use tcpenergy_engine::units::{SimDuration, SimTime};
use tcpenergy_engine::{run_network, Scenario};

const AP: usize = 0;
const STA: usize = 1;
const BEACON: SimDuration = SimDuration(102_400_000);
const PING: u32 = 84;

fn ms(t: u64) -> SimDuration {
    SimDuration(t * 1_000_000)
}

/// An AP and one station in power-save mode that stays awake `timeout` after its last data
/// frame (adaptive power save).
fn adaptive_bss(timeout: SimDuration) -> Dcf<u32> {
    let mut cfg = DcfConfig::dsss(2);
    cfg.infrastructure = Some(Infrastructure {
        ap: AP,
        beacon_interval: BEACON,
        listen_interval: 1,
        power_save: vec![false, true],
        psm_timeout: timeout,
    });
    Dcf::new(cfg, Vec::new(), 7, "channels.0")
}

/// An AP and one station; `power_save` puts the station in power-save mode.
fn bss(power_save: bool, listen_interval: u32) -> Dcf<u32> {
    let mut cfg = DcfConfig::dsss(2);
    cfg.infrastructure = Some(Infrastructure {
        ap: AP,
        beacon_interval: BEACON,
        listen_interval,
        power_save: vec![false, power_save],
        psm_timeout: SimDuration::ZERO,
    });
    Dcf::new(cfg, Vec::new(), 7, "channels.0")
}

#[derive(PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    Mac(Timer),
    /// The station sends a ping (payload id) to the AP.
    Ping(u32),
    /// The wired side's answer reaches the AP, for the station.
    Reply(u32),
}

/// What the harness saw: when each payload reached the AP and the station, the station's doze
/// and wake times, and every frame the station sent.
#[derive(Default)]
struct Seen {
    at_ap: Vec<(u32, SimTime)>,
    at_sta: Vec<(u32, SimTime)>,
    power: Vec<(bool, SimTime)>,
    sta_frames: Vec<FrameKind>,
}

/// Run the BSS until `end`: pings leave the station at `pings`, and each one the AP receives is
/// answered by the wired side `wired_rtt` later (an echo server behind the AP).
fn run(dcf: &mut Dcf<u32>, pings: &[SimTime], wired_rtt: SimDuration, end: SimTime) -> Seen {
    run_with_downlink(dcf, pings, &[], wired_rtt, end)
}

/// [`run`], and frames for the station reach the AP from the wire at `downlink` (ids 1000, ...).
fn run_with_downlink(dcf: &mut Dcf<u32>, pings: &[SimTime], downlink: &[SimTime], wired_rtt: SimDuration, end: SimTime) -> Seen {
    let mut q: EventQueue<Ev> = EventQueue::with_capacity(64);
    for (k, &t) in pings.iter().enumerate() {
        q.push(t, Ev::Ping(k as u32));
    }
    for (k, &t) in downlink.iter().enumerate() {
        q.push(t, Ev::Reply(1000 + k as u32));
    }
    let mut seen = Seen::default();
    let mut now = SimTime::ZERO;
    loop {
        for out in dcf.drain().collect::<Vec<_>>() {
            match out {
                Out::Schedule(at, t) => q.push(at, Ev::Mac(t)),
                Out::Delivered { to, payload, .. } if to == AP => {
                    seen.at_ap.push((payload, now));
                    q.push(now + wired_rtt, Ev::Reply(payload));
                }
                Out::Delivered { payload, .. } => seen.at_sta.push((payload, now)),
                Out::Power { station, awake, at } => {
                    assert_eq!(station, STA, "only the station dozes");
                    seen.power.push((awake, at));
                }
                Out::Air { station: STA, role: tcpenergy_engine::net::wifi::dcf::AirRole::Transmit, kind, .. } => seen.sta_frames.push(kind),
                _ => {}
            }
        }
        let Some((t, ev)) = q.pop() else { break };
        if t > end {
            break;
        }
        now = t;
        match ev {
            Ev::Mac(timer) => dcf.on_timer(t, timer),
            Ev::Ping(id) => dcf.enqueue(t, STA, AP, id, PING),
            Ev::Reply(id) => dcf.enqueue(t, AP, STA, id, PING),
        }
    }
    seen
}

/// Time the station spent dozing in `[0, end)`.
fn dozing(power: &[(bool, SimTime)], end: SimTime) -> u64 {
    let (mut total, mut since) = (0, None);
    for &(awake, at) in power {
        match (awake, since) {
            (false, None) => since = Some(at),
            (true, Some(s)) => {
                total += at.0 - s.0;
                since = None;
            }
            _ => panic!("doze and wake alternate: {power:?}"),
        }
    }
    total + since.map_or(0, |s: SimTime| end.0 - s.0)
}

/// The first TBTT at or after `t`.
fn next_tbtt(t: SimTime) -> SimTime {
    SimTime(t.0.div_ceil(BEACON.0) * BEACON.0)
}

#[test]
fn an_idle_station_in_power_save_dozes_over_90_percent_of_the_time_11_2_3() {
    let end = SimTime(10_000_000_000);
    let seen = run(&mut bss(true, 1), &[], ms(0), end);
    let share = dozing(&seen.power, end) as f64 / end.0 as f64;
    assert!(share >= 0.9, "dozed {:.1} % of the time", 100.0 * share);
    // It woke for every beacon (TBTTs at 0, 102.4 ms, ...; awake from the start) and for nothing else.
    let wakes: Vec<SimTime> = seen.power.iter().filter(|p| p.0).map(|p| p.1).collect();
    assert_eq!(wakes.len() as u64, end.0 / BEACON.0, "{wakes:?}");
    assert!(wakes.iter().all(|t| t.0 % BEACON.0 == 0), "{wakes:?}");
    assert!(seen.sta_frames.is_empty(), "an idle station sends nothing: {:?}", seen.sta_frames);
    // A listen interval of 3 beacons: a third of the wake-ups, a longer doze.
    let seen3 = run(&mut bss(true, 3), &[], ms(0), end);
    let wakes3 = seen3.power.iter().filter(|p| p.0).count() as u64;
    assert_eq!(wakes3, end.0 / BEACON.0 / 3);
    assert!(dozing(&seen3.power, end) > dozing(&seen.power, end));
}

#[test]
fn a_ping_answered_after_idle_waits_at_the_ap_for_the_next_beacon_krashinsky_2002() {
    // Pings from an idle station at phases spread over the beacon interval; the wired side
    // answers 20 ms after the AP has the request.
    let wired = ms(20);
    let pings: Vec<SimTime> = (0..20).map(|k| SimTime(1_000_000_000 + k * 1_013_000_000)).collect();
    let end = SimTime(25_000_000_000);
    let seen = run(&mut bss(true, 1), &pings, wired, end);
    assert_eq!(seen.at_sta.len(), pings.len(), "every answer arrives");
    for (&(id, reply_at_ap), &(id2, got)) in seen.at_ap.iter().zip(&seen.at_sta) {
        assert_eq!(id, id2);
        let ready = reply_at_ap + wired;
        let tbtt = next_tbtt(ready);
        // Announced in the next beacon, fetched with a PS-Poll: the beacon, the PS-Poll and its
        // ACK, the frame and the contention between them take a few milliseconds.
        assert!(got >= tbtt && got.0 - tbtt.0 < 5_000_000, "ping {id}: answer ready at {ready:?}, next TBTT {tbtt:?}, delivered {got:?}");
        let rtt = got.0 - pings[id as usize].0;
        assert!(rtt > wired.0, "ping {id}: {rtt} ns");
    }
    // The round trips spread over one beacon interval; always awake, they would not.
    let rtts: Vec<u64> = seen.at_sta.iter().map(|&(id, t)| t.0 - pings[id as usize].0).collect();
    let spread = rtts.iter().max().unwrap() - rtts.iter().min().unwrap();
    assert!(spread > BEACON.0 / 2, "spread {spread} ns");
    let awake = run(&mut bss(false, 1), &pings, wired, end);
    for (&(_, sent), &(id, got)) in awake.at_ap.iter().zip(&awake.at_sta) {
        let rtt = got.0 - pings[id as usize].0;
        assert!(rtt < wired.0 + 5_000_000, "awake station, ping {id}: {rtt} ns (at the AP {sent:?})");
    }
    assert!(awake.power.is_empty(), "a station not in power-save mode never dozes");
}

#[test]
fn a_station_fetches_every_buffered_frame_with_one_ps_poll_each_while_more_data_is_set_11_2_3_8() {
    // Three answers reach the AP together: the TIM announces them, the station polls three
    // times in one wake-up (More Data on the first two) and dozes after the last.
    let mut dcf = bss(true, 1);
    let end = SimTime(1_000_000_000);
    let mut q: EventQueue<Timer> = EventQueue::with_capacity(16);
    let mut got = Vec::new();
    let mut power = Vec::new();
    let mut polls = 0;
    let mut now = SimTime::ZERO;
    let mut handed = false;
    loop {
        for out in dcf.drain().collect::<Vec<_>>() {
            match out {
                Out::Schedule(at, t) => q.push(at, t),
                Out::Delivered { payload, .. } => got.push((payload, now)),
                Out::Power { awake, at, .. } => power.push((awake, at)),
                Out::Air { station: STA, kind: FrameKind::PsPoll, role: tcpenergy_engine::net::wifi::dcf::AirRole::Transmit, .. } => polls += 1,
                _ => {}
            }
        }
        let Some((t, timer)) = q.pop() else { break };
        if t > end {
            break;
        }
        if !handed && t > SimTime(150_000_000) {
            // Between the second and third beacons, while the station dozes.
            for id in 0..3 {
                dcf.enqueue(SimTime(150_000_000), AP, STA, id, 1500);
            }
            handed = true;
            assert_eq!(dcf.queued(AP), 3, "held for the dozing station");
        }
        now = t;
        dcf.on_timer(t, timer);
    }
    assert_eq!(got.iter().map(|g| g.0).collect::<Vec<_>>(), vec![0, 1, 2], "in order");
    assert_eq!(polls, 3);
    let tbtt = SimTime(2 * BEACON.0);
    assert!(got.iter().all(|g| g.1 > tbtt && g.1.0 < tbtt.0 + 10_000_000), "{got:?}");
    // One wake-up for that beacon, and a doze right after the last frame's ACK.
    let doze_after = power.iter().find(|p| !p.0 && p.1 > tbtt).expect("dozes again").1;
    assert!(doze_after > got[2].1 && doze_after.0 - got[2].1.0 < 1_000_000, "{power:?}");
    assert!(!power.iter().any(|p| p.0 && p.1 > tbtt && p.1 < doze_after), "{power:?}");
}

// ---- in a network -------------------------------------------------------------------------------

/// A laptop behind an AP, a server 10 ms behind the AP on a wire; a ping every `interval`.
fn psm_net(policy: &str, interval: &str, stop: &str) -> Scenario {
    let text = format!(
        r#"
stop_after = "{stop}"
[energy]
default_profile = "singh2002-toshiba-wavelan"
radio_policy = "{policy}"
[nodes]
laptop = {{}}
ap = {{}}
server = {{}}
[[channels]]
name = "bss"
nodes = ["ap", "laptop"]
ap = "ap"
data_rate = "11Mbps"
[[links]]
between = ["ap", "server"]
rate = "10Mbps"
delay = "10ms"
[[flows]]
name = "ping"
from = "laptop"
to = "server"
transport = "udp"
echo = true
traffic = {{ kind = "on_off", message = 56, interval = "{interval}", distribution = "fixed" }}
start = "1s"
stop = "{stop}"
"#
    );
    Scenario::from_toml(&text).unwrap_or_else(|e| panic!("{e}"))
}


#[test]
fn under_the_psm_policy_a_mostly_idle_laptop_radio_sleeps_over_90_percent_and_its_times_sum_to_the_window() {
    let r = run_network(&psm_net("psm", "10s", "60s"), 1).unwrap();
    let w = r.energy.window_s;
    let e = &r.nodes["laptop"].energy;
    assert!(e.radio_sleep_s / w >= 0.9, "sleep {:.2} of {w} s", e.radio_sleep_s);
    assert!(e.radio_waking_s > 0.0 && e.radio_wakeups > 500, "{e:?}");
    for node in ["laptop", "ap", "server"] {
        assert!((radio_seconds(&r, node) - w).abs() < 1e-6, "{node}: {} vs {w}", radio_seconds(&r, node));
    }
    // The AP and the wired server never doze.
    assert_eq!(r.nodes["ap"].energy.radio_sleep_s, 0.0);
    assert_eq!(r.nodes["server"].energy.radio_sleep_s, 0.0);
    let b = &e.breakdown_j;
    let parts = b.base + b.radio_tx + b.radio_rx + b.radio_overhear + b.mac_control + b.retries + b.radio_idle + b.radio_sleep + b.radio_transitions + b.cpu;
    assert!((parts - e.total_j).abs() < 1e-9 * e.total_j);
    let always_on = run_network(&psm_net("always_on", "10s", "60s"), 1).unwrap();
    let radio = |r: &NetRunResult| {
        let b = &r.nodes["laptop"].energy.breakdown_j;
        b.radio_tx + b.radio_rx + b.radio_overhear + b.mac_control + b.retries + b.radio_idle + b.radio_sleep + b.radio_transitions
    };
    assert!(radio(&r) < 0.2 * radio(&always_on), "psm {} J vs always on {} J", radio(&r), radio(&always_on));
}

#[test]
fn under_the_psm_policy_ping_round_trips_stretch_up_to_one_beacon_interval_krashinsky_2002() {
    let wired_rtt = 20.0; // ms: 10 ms each way on the wire
    let psm = run_network(&psm_net("psm", "1s", "61s"), 1).unwrap();
    let cam = run_network(&psm_net("always_on", "1s", "61s"), 1).unwrap();
    let (p, c) = (&psm.flows[0], &cam.flows[0]);
    assert!(p.echo && p.messages_delivered == 60 && c.messages_delivered == 60);
    let (lp, lc) = (&p.latency_ms, &c.latency_ms);
    assert!(lc.min > wired_rtt && lc.p95 < wired_rtt + 2.0, "always on: {lc:?}");
    assert!(lp.min > wired_rtt && lp.max < wired_rtt + 102.4 + 5.0, "psm: {lp:?}");
    // Phases of 1 s against 102.4 ms beacons spread the wait over the interval: half a beacon
    // interval on average.
    assert!((lp.mean - lc.mean - 51.2).abs() < 15.0, "psm {lp:?} vs {lc:?}");
    let polls = psm.channels["bss"].stations["laptop"].ps_polls_sent;
    assert_eq!(polls, 60, "one PS-Poll per answer");
    assert_eq!(cam.channels["bss"].stations["laptop"].ps_polls_sent, 0);
}

/// What the station sent other than MAC ACKs.
fn own_frames(seen: &Seen) -> Vec<FrameKind> {
    seen.sta_frames.iter().copied().filter(|&k| k != FrameKind::Ack).collect()
}

/// The station's doze (false) and wake (true) times from `from` on.
fn power_after(seen: &Seen, from: SimTime) -> Vec<(bool, SimTime)> {
    seen.power.iter().copied().filter(|p| p.1 >= from).collect()
}

#[test]
fn an_adaptive_psm_station_stays_awake_for_its_timeout_after_its_last_frame_then_dozes_between_beacons_huang_2012() {
    // A phone's power save (Huang et al., MobiSys 2012, measured a 238 ms Wi-Fi tail): awake
    // 200 ms after its last data frame, then a Null frame with PM = 1 and doze until each beacon.
    // A ping leaves at 1.05 s (between the TBTTs at 1024 and 1126.4 ms); the wire answers 20 ms
    // after the AP has it.
    let t0 = SimTime(1_050_000_000);
    let end = SimTime(2_000_000_000);
    let seen = run(&mut adaptive_bss(ms(200)), &[t0], ms(20), end);
    let answered = seen.at_sta[0].1;
    // The station's data frame said PM = 0, so the AP sends the answer at once: no beacon wait.
    assert!(answered.0 - t0.0 < ms(22).0, "round trip {} ns", answered.0 - t0.0);
    let p = power_after(&seen, SimTime(1_030_000_000));
    // Woke to send at 1.05 s; stayed awake through the TBTTs at 1126.4 and 1228.8 ms; dozed
    // after 200 ms without frames plus its Null exchange (DIFS + backoff + Null + SIFS + ACK,
    // under 2 ms at 11 Mbit/s).
    assert_eq!(p[0], (true, t0));
    let (awake, dozed) = p[1];
    assert!(!awake);
    let tail = dozed.0 - answered.0;
    assert!((ms(200).0..ms(202).0).contains(&tail), "dozed {tail} ns after the answer");
    // Then the ordinary power save: awake for each beacon, dozing again within 2 ms.
    for pair in p[2..].chunks(2) {
        assert!(pair[0].0 && pair[0].1 == next_tbtt(pair[0].1), "{pair:?}");
        if let Some(d) = pair.get(1) {
            assert!(!d.0 && d.1.0 - pair[0].1.0 < ms(2).0, "{pair:?}");
        }
    }
    assert_eq!(p.len() % 2, 0, "dozing at the end");
    assert_eq!(own_frames(&seen), [FrameKind::Data, FrameKind::Null], "the data said PM = 0; the Null says PM = 1");

    // Without the timeout (802.11's own power save) it dozes at once after its ACK, and the
    // answer waits at the AP for the next beacon.
    let plain = run(&mut bss(true, 1), &[t0], ms(20), end);
    let p = power_after(&plain, SimTime(1_030_000_000));
    assert_eq!(p[0], (true, t0));
    assert!(p[1].1.0 - t0.0 < ms(2).0);
    assert!(plain.at_sta[0].1 >= SimTime(1_126_400_000));
}

#[test]
fn with_adaptive_psm_a_tim_makes_the_station_leave_power_save_and_take_every_buffered_frame_at_once_11_2_3_2() {
    // Three frames for the dozing station reach the AP at 1.05 s: buffered, announced in the TIM
    // of the beacon at 1126.4 ms; the station answers with a Null frame (PM = 0) instead of
    // PS-Polls, and the AP sends all three; 200 ms after the last it announces PM = 1 and dozes.
    let end = SimTime(2_000_000_000);
    let t = SimTime(1_050_000_000);
    let seen = run_with_downlink(&mut adaptive_bss(ms(200)), &[], &[t, t, t], ms(20), end);
    assert_eq!(seen.at_sta.iter().map(|a| a.0).collect::<Vec<_>>(), [1000, 1001, 1002]);
    let tbtt = SimTime(1_126_400_000);
    let last = seen.at_sta[2].1;
    assert!(seen.at_sta[0].1 > tbtt && last.0 - tbtt.0 < ms(10).0, "{:?}", seen.at_sta);
    assert_eq!(own_frames(&seen), [FrameKind::Null, FrameKind::Null]);
    let p = power_after(&seen, SimTime(1_100_000_000));
    assert_eq!(p[0], (true, tbtt));
    assert!(!p[1].0 && (ms(200).0..ms(202).0).contains(&(p[1].1.0 - last.0)), "{p:?}");
}
