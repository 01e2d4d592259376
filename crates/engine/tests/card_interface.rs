//! The card interface (docs/models/energy.md#card-interface): every IP packet a node hands to its
//! radio card, or takes from it, costs the CPU `frame_us + byte_ns * (bytes + link_header)`, at
//! the CPU's active power; frames the card handles alone, and packets that never reach it, cost
//! nothing. Charged per packet crossing the host's bus: a 16-bit PC Card moves frames by
//! programmed I/O (PC Card Standard; the Lucent WaveLAN cards of seed 000 §5, seed 002 §5 and
//! seed 003 §III).

mod common;
use tcpenergy_engine::energy::cpu::{CpuMeter, Op};
use tcpenergy_engine::energy::profile::{self, CardInterface, DeviceProfile};
use tcpenergy_engine::units::SimTime;
use tcpenergy_engine::RunResult;

fn samsung() -> DeviceProfile {
    profile::builtin("agrawal2003-samsung-wavelan-turbo").unwrap().unwrap()
}

/// A loss-free bulk transfer over one 11 Mbit/s hop (the seed 003 setup), both ends `profile`.
fn run(profile: &str, impairments: &str) -> RunResult {
    let extra = format!("[energy]\nsender = \"{profile}\"\nreceiver = \"{profile}\"");
    let mut s = common::scenario("newreno", "300000", impairments, &extra);
    let path = s.path_mut().unwrap();
    path.forward.capacity = tcpenergy_engine::config::Capacity::Rate(11_000_000);
    path.reverse.capacity = tcpenergy_engine::config::Capacity::Rate(11_000_000);
    common::run_seed(&s, 1)
}

#[test]
fn a_packet_costs_the_per_packet_time_plus_the_per_byte_time_of_what_crosses_the_bus() {
    let card = CardInterface { frame_us: 60.0, byte_ns: 300.0, link_header: 60 };
    let mut p = samsung();
    p.card = Some(card);
    let mut cpu = CpuMeter::for_profile(&p);
    cpu.charge_card(SimTime(1_000), 1500);
    // 60 us + 300 ns x (1500 + 60) = 528 us of busy time.
    assert_eq!(cpu.busy_intervals(), &[(SimTime(1_000), SimTime(1_000 + 528_000))]);
    assert!((cpu.card_s(SimTime(1_000_000)) - 528e-6).abs() < 1e-15);
    // Work charged at the same instant queues behind it: one interval, the sum of both.
    let mut cpu = CpuMeter::for_profile(&p);
    cpu.charge_card(SimTime(0), 40);
    cpu.charge(SimTime(0), Op::AckReceived);
    let ack_ns = (p.cpu.cycles.get("ack_received").unwrap() / 90e6 * 1e9).round() as u64;
    assert_eq!(cpu.busy_intervals(), &[(SimTime(0), SimTime(60_000 + 300 * 100 + ack_ns))]);
}

#[test]
fn without_a_card_interface_moving_a_packet_costs_nothing() {
    let mut p = samsung();
    p.card = None;
    let mut cpu = CpuMeter::for_profile(&p);
    cpu.charge_card(SimTime(5), 1500);
    assert!(cpu.busy_intervals().is_empty());
    assert_eq!(cpu.card_s(SimTime(10)), 0.0);
    let r = run("agrawal2003-samsung-wavelan-turbo-v0.12", "");
    assert_eq!(r.energy.sender.cpu_card_s, 0.0);
}

#[test]
fn each_end_pays_for_the_packets_it_sent_and_received_and_the_share_is_in_its_busy_time() {
    let r = run("agrawal2003-samsung-wavelan-turbo", "");
    let card = samsung().card.unwrap();
    for (end, e) in [("sender", &r.energy.sender), ("receiver", &r.energy.receiver)] {
        let packets = (e.radio_tx_frames + e.radio_rx_frames) as f64;
        let bytes = (e.radio_tx_bytes + e.radio_rx_bytes) as f64;
        let expected = packets * card.frame_us * 1e-6 + (bytes + packets * card.link_header as f64) * card.byte_ns * 1e-9;
        // The radio counts frames whose airtime began before the end of the window, the card the
        // packets handed over or taken before it: they differ by at most the one packet handed
        // to the card as the window closes (the FIN), at most 1,560 bytes.
        let one_packet = card.frame_us * 1e-6 + 1560.0 * card.byte_ns * 1e-9;
        assert!((e.cpu_card_s - expected).abs() <= one_packet, "{end}: {} s on the card, expected {expected} s", e.cpu_card_s);
        assert!(e.cpu_card_s > 0.0 && e.cpu_card_s < e.cpu_busy_s, "{end}: card {} s of {} s busy", e.cpu_card_s, e.cpu_busy_s);
        let b = &e.breakdown_j;
        let sum = b.base + b.radio_tx + b.radio_rx + b.radio_idle + b.radio_sleep + b.radio_transitions + b.cpu;
        assert_eq!(sum, e.total_j, "{end}: the breakdown sums to the total");
    }
}

#[test]
fn a_packet_lost_on_the_way_costs_its_sender_and_not_the_far_end() {
    let burst = r#"{kind="periodic_burst", p=1.0, on="50ms", every="1000s", offset="100ms"}"#;
    let lossy = run("agrawal2003-samsung-wavelan-turbo", burst);
    assert!(lossy.path.forward.dropped_channel > 0);
    let card = samsung().card.unwrap();
    let rcv = &lossy.energy.receiver;
    let packets = (rcv.radio_tx_frames + rcv.radio_rx_frames) as f64;
    let bytes = (rcv.radio_tx_bytes + rcv.radio_rx_bytes) as f64;
    let expected = packets * card.frame_us * 1e-6 + (bytes + packets * card.link_header as f64) * card.byte_ns * 1e-9;
    let one_packet = card.frame_us * 1e-6 + 1560.0 * card.byte_ns * 1e-9;
    // The receiver's radio heard only what arrived; its card was charged for just that.
    assert!((rcv.cpu_card_s - expected).abs() <= one_packet, "{} vs {expected}", rcv.cpu_card_s);
}
