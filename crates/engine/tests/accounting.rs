//! Packets, bytes and datagrams are counted when they move: a packet is sent when its last bit
//! leaves the interface, delivered when it arrives; a run ends at its end, not at its last event
//! (docs/units-and-scenarios.md, "Result record"; docs/models/network.md, "Counting").

mod common;

use common::{run_seed, scenario};
use tcpenergy_engine::result::network::NetRunResult;
use tcpenergy_engine::units::parse_duration;
use tcpenergy_engine::{run_captured, run_network, run_network_captured, RunOptions, Scenario};

fn net(text: &str) -> Scenario {
    Scenario::from_toml(text).unwrap_or_else(|e| panic!("bad test scenario: {e}\n{text}"))
}

fn run_net(text: &str) -> NetRunResult {
    run_network(&net(text), 1).expect("run succeeds")
}

/// Two nodes joined by one link of `rate`, one flow; `flow` is the flow table's body.
fn two_nodes(rate: &str, stop_after: &str, flow: &str) -> String {
    format!(
        r#"
name = "two-nodes"
stop_after = "{stop_after}"
[nodes]
a = {{}}
b = {{}}
[[links]]
between = ["a", "b"]
rate = "{rate}"
delay = "1ms"
[[flows]]
name = "f"
from = "a"
to = "b"
{flow}
"#
    )
}

#[test]
fn a_datagram_still_queued_when_the_flow_stops_is_neither_sent_nor_delivered() {
    // 64 kbit/s of 200-byte datagrams into a 1 kbit/s link for 1 s: the first 228-byte packet
    // needs 1.824 s on the wire, so nothing leaves the interface before the flow stops.
    let r = run_net(&two_nodes("1kbps", "10s", r#"transport = "udp"
traffic = { kind = "cbr", rate = "64kbps", packet = 200 }
stop = "1s""#));
    let f = &r.flows[0];
    let l = &r.links["a->b"];
    assert_eq!(f.datagrams_sent, 40, "the application wrote 40 datagrams");
    assert_eq!((l.packets_sent, l.bytes_sent, l.packets_delivered), (0, 0, 0), "{l:?}");
    assert_eq!(f.datagrams_delivered, 0);
    assert_eq!(f.flow.throughput_bps, 0.0);
    assert_eq!(f.flow.wire_bytes_sender, 0);
    assert_eq!(r.network.wire_bytes, 0);
}

#[test]
fn a_slow_link_carries_at_most_its_rate_over_the_flow() {
    // The same flow for 20 s: 10 packets leave (10 x 1.824 s); the throughput stays under 1 kbit/s.
    let r = run_net(&two_nodes("1kbps", "60s", r#"transport = "udp"
traffic = { kind = "cbr", rate = "64kbps", packet = 200 }
stop = "20s""#));
    let f = &r.flows[0];
    let l = &r.links["a->b"];
    assert_eq!(l.packets_sent, 10, "{l:?}");
    assert_eq!(l.bytes_sent, 10 * 228);
    assert!(f.flow.throughput_bps <= 1000.0, "{}", f.flow.throughput_bps);
    // Delivered 1 ms after each leaves: the tenth left at 18.24 s and arrived by 20 s.
    assert_eq!(f.datagrams_delivered, 10);
    assert_eq!(l.packets_delivered, 10);
}

#[test]
fn a_timed_flow_of_one_microsecond_sends_nothing_it_could_not_serialize() {
    // A 40-byte SYN takes 32 us at 10 Mbit/s: a flow over after 1 us put nothing on the wire.
    let r = run_net(&two_nodes("10Mbps", "1s", r#"traffic = { kind = "timed", duration = "1us" }"#));
    let f = &r.flows[0];
    assert!(f.flow.throughput_bps <= 10e6, "{}", f.flow.throughput_bps);
    assert_eq!(f.flow.throughput_bps, 0.0);
}

#[test]
fn a_capture_holds_only_frames_that_left_the_interface_within_the_run() {
    let s = net(&two_nodes("1kbps", "10s", r#"transport = "udp"
traffic = { kind = "cbr", rate = "8kbps", packet = 100 }
stop = "5s""#));
    let (r, capture) = run_network_captured(&s, 1, true).expect("run succeeds");
    let capture = capture.expect("captured");
    let frames = &capture.links.iter().find(|l| l.name == "a-b").expect("a-b").frames;
    assert_eq!(frames.len() as u64, r.links["a->b"].packets_sent);
    assert!(frames.len() >= 3, "{}", frames.len());
    for f in frames {
        assert!(f.at.as_secs_f64() <= r.sim_time_s, "frame at {} s in a {} s run", f.at.as_secs_f64(), r.sim_time_s);
    }
}

#[test]
fn the_single_path_capture_and_counters_stop_at_stop_after() {
    // 100 % loss: the sender retransmits until stop_after; what it queued past then is not sent.
    let mut s = scenario("sack", "1MB", r#"{ kind = "bernoulli", p = 1.0 }"#, "");
    s.stop_after = parse_duration("7s").unwrap();
    s.path_mut().unwrap().forward.capacity = tcpenergy_engine::config::Capacity::Rate(10_000);
    let (r, capture) = run_captured(&s, 1, RunOptions { capture: true, ..Default::default() }).expect("run succeeds");
    let frames = &capture.expect("captured").links[0].frames;
    assert_eq!(frames.len() as u64, r.path.forward.packets_sent);
    assert_eq!(r.path.forward.packets_delivered, 0);
    assert_eq!(r.path.forward.dropped_channel, r.path.forward.packets_sent);
    assert!(r.flow.wire_bytes_sender as f64 <= 10_000.0 / 8.0 * 7.0, "{}", r.flow.wire_bytes_sender);
}

#[test]
fn an_incomplete_run_ends_at_stop_after_not_at_its_last_event() {
    // Every packet lost: the RTO backs off, so the last event comes well before stop_after.
    for stop in [30.0, 60.0, 64.0] {
        let mut s = scenario("newreno", "100KB", r#"{ kind = "bernoulli", p = 1.0 }"#, "");
        s.stop_after = parse_duration(&format!("{stop}s")).unwrap();
        let r = run_seed(&s, 1);
        assert!(!r.complete);
        assert_eq!(r.sim_time_s, stop, "sim_time_s");
        assert_eq!(r.energy.window_s, stop, "energy window");
        let e = &r.energy.sender;
        let radio = e.radio_tx_s + e.radio_rx_s + e.radio_idle_s + e.radio_sleep_s + e.radio_waking_s + e.radio_overhear_s;
        assert!((radio - stop).abs() < 1e-9, "radio times sum to the window: {radio}");
    }
}

#[test]
fn an_incomplete_network_run_ends_at_stop_after() {
    let text = two_nodes("1Mbps", "30s", r#"traffic = { kind = "bulk", bytes = "100KB" }"#)
        .replace("delay = \"1ms\"", "delay = \"1ms\"\nimpairments = [{ kind = \"bernoulli\", p = 1.0 }]");
    let r = run_net(&text);
    assert!(!r.complete);
    assert_eq!(r.sim_time_s, 30.0);
    assert_eq!(r.energy.window_s, 30.0);
}

#[test]
fn a_transfer_whose_data_arrived_is_complete_while_its_teardown_still_retransmits() {
    // The forward path dies after the last data byte reached the receiver (completion minus
    // a one-way delay, 20 ms): the sender's last ACK of the receiver's FIN never arrives, so the
    // receiver retransmits its FIN until stop_after. The transfer is complete; `closed` says the
    // connection was not.
    let clean = run_seed(&scenario("newreno", "100KB", "", ""), 1);
    assert!(clean.complete && clean.flow.closed == Some(true));
    let dies_at = clean.flow.completion_s - 0.005;
    let outage = format!(r#"{{ kind = "outage", down = "1000s", every = "2000s", offset = "{}ns" }}"#, (dies_at * 1e9).round() as u64);
    let mut s = scenario("newreno", "100KB", &outage, "");
    s.stop_after = parse_duration("60s").unwrap();
    let r = run_seed(&s, 1);
    assert_eq!(r.flow.completion_s, clean.flow.completion_s, "the data was acknowledged as before");
    assert!(r.complete, "complete: the last data byte was delivered and acknowledged");
    assert_eq!(r.flow.closed, Some(false), "the teardown was still going on");
    assert_eq!(r.sim_time_s, 60.0);
    assert_eq!(r.energy.window_s, clean.energy.window_s, "the energy window ends with the transfer");
}

#[test]
fn a_run_ends_when_the_last_ack_of_the_teardown_arrives_rfc9293_3_6() {
    // The receiver's FIN comes with the ACK of the last data byte (completion); the sender's
    // ACK of that FIN arrives one transmission and one 20 ms delay later, and both ends are then
    // closed: the acknowledged SYN is not a FIN.
    let r = run_seed(&scenario("newreno", "100KB", "", ""), 1);
    assert_eq!(r.flow.closed, Some(true));
    assert!(r.sim_time_s >= r.flow.completion_s + 0.020, "{} vs {}", r.sim_time_s, r.flow.completion_s);
    let f = &r.path.forward;
    assert_eq!((f.packets_delivered, f.queued), (f.packets_sent, 0), "{f:?}");
}
