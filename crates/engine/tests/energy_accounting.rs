//! The energy meter integrates exactly (docs/models/energy.md; seed 000 §2, seed 002 §3).

mod common;
use tcpenergy_engine::config::RadioPolicy;
use tcpenergy_engine::energy::cpu::{CpuMeter, Op};
use tcpenergy_engine::energy::meter::{node_energy, radio_timeline, FrameCounts, RadioLog};
use tcpenergy_engine::energy::profile;
use tcpenergy_engine::units::{SimDuration, SimTime};

fn toshiba() -> profile::DeviceProfile {
    profile::builtin("singh2002-toshiba-wavelan").unwrap().unwrap()
}

#[test]
fn an_idle_node_draws_base_plus_radio_idle_power() {
    // Seed 000 §5: the laptop draws 18 W when idle, radio on.
    let p = toshiba();
    let mut cpu = CpuMeter::new(&p.cpu.cycles, p.cpu.frequency_hz, p.cpu.active_power_w);
    let w = SimTime(10_000_000_000);
    let tl = radio_timeline(RadioLog::default(), w, RadioPolicy::AlwaysOn, SimDuration::ZERO, &p.radio);
    let e = node_energy(&p, &tl, &mut cpu, w, 1, FrameCounts::default());
    assert!((e.total_j - 180.0).abs() < 1e-9, "{}", e.total_j);
    assert!((e.idle_j - e.total_j).abs() < 1e-9);
    assert!(e.idealized_j.abs() < 1e-9);
}

#[test]
fn an_idle_node_s_idealized_energy_is_zero_never_negative_by_rounding() {
    // E_I = E - E_idle (seed 000 §2) cannot be negative. A node that only idles and sleeps has
    // E and E_idle summed in different orders, and the difference used to come out at -5.6e-17
    // to -4.4e-16 J (the Samsung profile under idle_timeout, issue #24).
    let p = profile::builtin("agrawal2003-samsung-wavelan-turbo").unwrap().unwrap();
    for k in 1..200u64 {
        let w = SimTime(k * 7_919_000 + 100_000_000);
        let mut cpu = CpuMeter::new(&p.cpu.cycles, p.cpu.frequency_hz, p.cpu.active_power_w);
        let tl = radio_timeline(RadioLog::default(), w, RadioPolicy::IdleTimeout, SimDuration::from_millis(100), &p.radio);
        let e = node_energy(&p, &tl, &mut cpu, w, 1, FrameCounts::default());
        assert!(e.idealized_j >= 0.0 && e.per_bit_idealized_uj >= 0.0, "window {w}: E_I = {} J", e.idealized_j);
        assert!(e.idealized_j <= 1e-12 * e.total_j && (e.idle_j - e.total_j).abs() <= 1e-12 * e.total_j);
    }
}

#[test]
fn transmit_and_receive_time_cost_their_state_power() {
    let p = toshiba();
    let mut cpu = CpuMeter::disabled();
    let mut log = RadioLog::default();
    log.transmit(SimTime(1_000_000_000), SimTime(2_000_000_000));
    log.receive(SimTime(3_000_000_000), SimTime(3_500_000_000));
    let w = SimTime(4_000_000_000);
    let tl = radio_timeline(log, w, RadioPolicy::AlwaysOn, SimDuration::ZERO, &p.radio);
    let e = node_energy(&p, &tl, &mut cpu, w, 1, FrameCounts::default());
    let b = e.breakdown_j;
    assert!((b.radio_tx - p.radio.tx_power_w).abs() < 1e-12);
    assert!((b.radio_rx - 0.5 * p.radio.rx_power_w).abs() < 1e-12);
    assert!((b.radio_idle - 2.5 * p.radio.idle_power_w).abs() < 1e-12);
    // Idealized = base and radio power during the 1.5 s of tx/rx.
    let expected_ei = 1.0 * (p.platform.base_power_w + p.radio.tx_power_w) + 0.5 * (p.platform.base_power_w + p.radio.rx_power_w);
    assert!((e.idealized_j - expected_ei).abs() < 1e-9, "{} vs {expected_ei}", e.idealized_j);
}

#[test]
fn cpu_busy_time_is_not_system_idle_and_costs_active_power() {
    let p = toshiba();
    let mut cpu = CpuMeter::new(&p.cpu.cycles, p.cpu.frequency_hz, p.cpu.active_power_w);
    for _ in 0..1000 {
        cpu.charge(SimTime(1_000_000), Op::SegmentReceived { bytes: 1460 });
    }
    let cycles = 1000.0 * (p.cpu.cycles.get("segment_received").unwrap() + 1460.0 * p.cpu.cycles.get("per_byte").unwrap());
    let busy_s = cycles / p.cpu.frequency_hz;
    let w = SimTime(10_000_000_000);
    let tl = radio_timeline(RadioLog::default(), w, RadioPolicy::AlwaysOn, SimDuration::ZERO, &p.radio);
    let e = node_energy(&p, &tl, &mut cpu, w, 1, FrameCounts::default());
    assert!((e.cpu_busy_s - busy_s).abs() < 1e-6);
    assert!((e.breakdown_j.cpu - p.cpu.active_power_w * busy_s).abs() < 1e-6);
    assert!((e.idle_s - (10.0 - busy_s)).abs() < 1e-6);
}

#[test]
fn the_ideal_policy_spends_no_radio_idle_energy() {
    let s = common::scenario("sack", "1MB", r#"{kind="bernoulli", p=0.02}"#, "[energy]\nradio_policy = \"ideal\"");
    let r = common::run_seed(&s, 3);
    for e in [&r.energy.sender, &r.energy.receiver] {
        assert_eq!(e.breakdown_j.radio_idle, 0.0);
        assert!(e.breakdown_j.radio_sleep > 0.0);
    }
}

#[test]
fn a_frame_lost_on_the_channel_costs_transmit_energy_but_no_receive_energy() {
    // Abstract radios (no PHY): airtime = link serialization, so the link's byte counters give
    // it. The same rule with an 802.11b PHY: tests/radio_airtime.rs.
    let abstract_radios = "[energy]\nsender = \"ideal-nic-0.3\"\nreceiver = \"ideal-nic-0.3\"";
    let clean = common::scenario("sack", "200KB", "", abstract_radios);
    let lossy = common::scenario("sack", "200KB", r#"{kind="bernoulli", p=0.05}"#, abstract_radios);
    let (a, b) = (common::run_seed(&clean, 1), common::run_seed(&lossy, 1));
    // Same delivered data, more frames sent by the sender, and the receiver heard only the
    // frames that arrived: receive airtime = delivered frames' airtime.
    assert!(b.flow.segments_sent > a.flow.segments_sent);
    let airtime_s = |bytes: u64| bytes as f64 * 8.0 / 2e6;
    let delivered_bytes = b.path.forward.bytes_sent - lost_bytes(&b);
    assert!(b.energy.receiver.radio_rx_s <= airtime_s(delivered_bytes) + 1e-9);
    assert!((b.energy.sender.radio_tx_s - airtime_s(b.path.forward.bytes_sent)).abs() < 1e-3);
}

/// Bytes of the forward frames lost on the channel (every lost frame is a full data segment here
/// except possibly the last, so use the average frame size).
fn lost_bytes(r: &tcpenergy_engine::RunResult) -> u64 {
    let f = &r.path.forward;
    f.bytes_sent * f.dropped_channel / f.packets_sent
}

#[test]
fn both_nodes_are_metered_over_the_same_window() {
    let s = common::scenario("newreno", "500KB", "", "");
    let r = common::run_seed(&s, 1);
    let p = toshiba();
    for e in [&r.energy.sender, &r.energy.receiver] {
        assert!((e.breakdown_j.base - p.platform.base_power_w * r.energy.window_s).abs() < 1e-9);
    }
    assert_eq!(r.energy.window_s, r.flow.completion_s);
}
