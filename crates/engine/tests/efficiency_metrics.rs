//! The seeds' efficiency metrics in network records (docs/models/metrics.md): seed 004's Tmax,
//! EEE, ideal EEE, EP, UAR, unfavored flows and Risk Index; seed 001's data and time overheads.

use tcpenergy_engine::{run_network, EngineError, Scenario};

fn scenario(text: &str) -> Scenario {
    Scenario::from_toml(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// `n` bulk flows s<i> -> d over one shared 2 Mbit/s link r -> d (10 Mbit/s access links).
fn shared(n: usize, metrics: &str) -> String {
    let mut t = String::from("stop_after = \"600s\"\n[tcp]\nvariant = \"newreno\"\ntimestamps = false\nwindow_scale = false\n");
    t += metrics;
    t += "\n[nodes]\nr = {}\nd = {}\n";
    for i in 0..n {
        t += &format!("s{i} = {{}}\n");
    }
    t += "[[links]]\nbetween = [\"r\", \"d\"]\nrate = \"2Mbps\"\ndelay = \"5ms\"\n";
    for i in 0..n {
        t += &format!("[[links]]\nbetween = [\"s{i}\", \"r\"]\nrate = \"10Mbps\"\ndelay = \"1ms\"\n");
    }
    for i in 0..n {
        t += &format!("[[flows]]\nname = \"f{i}\"\nfrom = \"s{i}\"\nto = \"d\"\ntraffic = {{ kind = \"bulk\", bytes = \"{}KB\" }}\n", 200 * (i + 1));
    }
    t
}

#[test]
fn each_flows_tmax_is_its_fair_share_of_its_bottleneck_and_eee_uar_ep_follow_seed_004() {
    let r = run_network(&scenario(&shared(3, "")), 1).unwrap();
    for f in &r.flows {
        let e = &f.efficiency;
        assert!((e.tmax_bps - 2e6 / 3.0).abs() < 1e-6, "{}: {}", f.name, e.tmax_bps);
        let (t, g, m) = (f.flow.throughput_bps, f.flow.goodput_bps, e.tmax_bps);
        assert!((e.eee - (5.0 * (t - g) / m + 0.72 * (m - t) / m)).abs() < 1e-12);
        assert!((e.eee_ideal - ((t - g) / m + 0.3 * (m - t) / m)).abs() < 1e-12);
        assert!((e.energy_potential - (1.0 - e.eee_ideal)).abs() < 1e-15);
        assert!((e.uar - (1.0 - (0.5 * t / m + 0.5 * g / t))).abs() < 1e-12);
    }
    let n = &r.network;
    assert!((n.efficiency.tmax_bps - 2e6).abs() < 1e-6);
    // Flows of 200, 400 and 600 KB: none falls below half the mean goodput here, or the record says
    // which; the Risk Index is their share.
    let mean = r.flows.iter().map(|f| f.flow.goodput_bps).sum::<f64>() / 3.0;
    for f in &r.flows {
        assert_eq!(f.unfavored, f.flow.goodput_bps < 0.5 * mean);
    }
    assert_eq!(n.risk_index, n.unfavored_flows as f64 / 3.0);
    // A Tmax given for the network is split evenly among the flows.
    let r = run_network(&scenario(&shared(3, "[metrics]\ntmax = \"3Mbps\"\neee_a = 1\neee_b = 0.3\n")), 1).unwrap();
    assert!((r.flows[0].efficiency.tmax_bps - 1e6).abs() < 1e-6);
    assert!((r.flows[0].efficiency.eee - r.flows[0].efficiency.eee_ideal).abs() < 1e-15);
}

#[test]
fn on_an_error_free_path_the_data_overhead_is_the_header_and_ack_bytes_over_the_payload_seed_001() {
    let r = run_network(&scenario(&shared(1, "")), 1).unwrap();
    let f = &r.flows[0];
    let payload = f.flow.bytes_delivered as f64;
    assert_eq!(f.flow.retransmissions, 0);
    // Without options every segment carries 40 header bytes; only the SYN adds its MSS option.
    // Besides its own segments the source sends one pure ACK, for the destination's FIN
    // (RFC 9293 §3.6; the handshake's ACK rides on the first data segment).
    assert_eq!(f.flow.wire_bytes_sender, f.flow.bytes_delivered + 40 * (f.flow.segments_sent + 1) + 4);
    let headers_and_acks = (f.flow.wire_bytes_sender + f.flow.wire_bytes_receiver) as f64 - payload;
    assert!((f.efficiency.data_overhead - headers_and_acks / payload).abs() < 1e-15);
    // 200 KB over 2 Mbit/s take 0.8 s at least; slow start and the RTT add the time overhead.
    let transfer = f.flow.completion_s;
    let minimum = payload * 8.0 / 2e6;
    assert!((f.efficiency.time_overhead - (transfer - minimum) / minimum).abs() < 1e-9, "{:?}", f.efficiency);
    // The intermediate radio (default) weighs both halves; seed 001's efficiency is 1 / (1 + O).
    let o = 0.5 * f.efficiency.data_overhead + 0.5 * f.efficiency.time_overhead;
    assert!((f.efficiency.overhead - o).abs() < 1e-15 && (f.efficiency.energy_efficiency - 1.0 / (1.0 + o)).abs() < 1e-15);
    let ideal = run_network(&scenario(&shared(1, "[metrics]\nradio = \"ideal\"\n")), 1).unwrap();
    assert_eq!(ideal.flows[0].efficiency.overhead, ideal.flows[0].efficiency.data_overhead);
}

#[test]
fn metric_weights_outside_their_ranges_are_refused_with_the_key_path() {
    let err = |m: &str| match Scenario::from_toml(&shared(1, m)) {
        Err(EngineError::Config { path, message }) => (path, message),
        other => panic!("expected an error for {m}, got {other:?}"),
    };
    assert_eq!(err("[metrics]\nuar_k = 1.5\n"), ("metrics.uar_k".into(), "must be between 0 and 1, got 1.5".into()));
    assert_eq!(err("[metrics]\noverhead_time = -0.1\n").0, "metrics.overhead_time");
    assert_eq!(err("[metrics]\neee_b = -1\n").0, "metrics.eee_b");
    assert!(err("[metrics]\nradio = \"wavelan\"\n").1.contains("always_on, intermediate, ideal"));
    assert_eq!(err("[metrics]\ntmax = \"0Mbps\"\n").0, "metrics.tmax");
}

/// One 1 Mbit/s hop with 50 ms delay (seed 001's default), a TCP flow of `traffic`.
fn hop(variant: &str, traffic: &str, impairments: &str) -> String {
    format!(
        "stop_after = \"120s\"\n[tcp]\nvariant = \"{variant}\"\ndelayed_ack = {{ every = 1, timeout = \"100ms\" }}\n\
         [nodes]\nbs = {{}}\nmh = {{}}\n[[links]]\nbetween = [\"bs\", \"mh\"]\nrate = \"1Mbps\"\ndelay = \"50ms\"\nmtu = 1040\n\
         impairments = [{impairments}]\n[[flows]]\nname = \"f\"\nfrom = \"bs\"\nto = \"mh\"\ntraffic = {traffic}\n"
    )
}

#[test]
fn packet_latency_runs_from_first_transmission_to_in_order_delivery_seed001_s3_3() {
    // Error-free: each packet takes its serialization (1040 B at 1 Mbit/s = 8.32 ms) plus the
    // 50 ms delay, and waits in the queue behind earlier ones.
    let r = run_network(&scenario(&hop("tahoe", "{ kind = \"bulk\", bytes = \"200KB\" }", "")), 1).unwrap();
    let f = &r.flows[0];
    let l = f.packet_latency_ms;
    assert!((l.min - 58.32).abs() < 0.01, "{l:?}");
    assert!(l.mean > l.min && l.max < 1000.0);
    // Losses add the wait for the retransmission to the packets behind the gap (head-of-line).
    let lossy = run_network(&scenario(&hop("tahoe", "{ kind = \"bulk\", bytes = \"200KB\" }", "{ kind = \"bernoulli\", p = 0.05 }")), 1).unwrap();
    assert!(lossy.flows[0].flow.retransmissions > 0);
    assert!(lossy.flows[0].packet_latency_ms.max > l.max + 100.0, "{:?}", lossy.flows[0].packet_latency_ms);
    assert!(lossy.flows[0].packet_latency_ms.min >= 58.32 - 1e-9);
}

#[test]
fn busy_time_is_the_transfer_for_bulk_and_the_unacknowledged_periods_for_paced_traffic_seed001_s3_3() {
    let bulk = run_network(&scenario(&hop("sack", "{ kind = \"bulk\", bytes = \"100KB\" }", "")), 1).unwrap();
    let f = &bulk.flows[0];
    assert!((f.busy_s - f.flow.completion_s).abs() < 1e-9, "{} vs {}", f.busy_s, f.flow.completion_s);
    // One 1000-byte message a second for 20 s: each keeps data unacknowledged for about one
    // round trip (8.32 ms + 50 ms, ACK 0.32 ms + 50 ms) after the handshake.
    let paced = run_network(&scenario(&(hop("sack", "{ kind = \"on_off\", message = 1000, interval = \"1s\", distribution = \"fixed\" }", "") + "stop = \"20s\"\n")), 1).unwrap();
    let f = &paced.flows[0];
    let per_message = f.busy_s / f.messages_delivered as f64;
    assert!(f.messages_delivered >= 19, "{}", f.messages_delivered);
    assert!(per_message > 0.108 && per_message < 0.125, "{per_message} s busy per message");
    let minimum = f.flow.bytes_delivered as f64 * 8.0 / 1e6;
    assert!((f.efficiency.time_overhead - (f.busy_s - minimum) / minimum).abs() < 1e-9);
}
