//! A node's radio is on the air for its own PHY's airtime of each frame (preamble + MAC frame at
//! the PHY rate: IEEE 802.11b-1999 §18.2 for the 802.11b cards of seed 000 §5, seed 002 §5 and
//! seed 003 §III), not for the serialization time of a slower wired or shaped hop elsewhere on
//! the path (docs/models/energy.md, "Airtime").
//!
//! The expected times are rebuilt from the record's frame counts and sizes. At 11 Mbit/s a byte
//! takes 8000/11 ns, so each frame's airtime is rounded up to the ns: the sum of n frames lies in
//! [exact sum, exact sum + n ns), and the checks use that interval, in integers.

mod common;
use tcpenergy_engine::energy::airtime::check_path_rates;
use tcpenergy_engine::energy::meter::NodeEnergy;
use tcpenergy_engine::{EngineError, RunResult, Scenario};

/// 802.11b long PLCP preamble + header (ns), and MAC header + FCS + LLC/SNAP (bytes).
const PREAMBLE_NS: u64 = 192_000;
const MAC_OVERHEAD: u64 = 36;
/// Ethernet framing on the wired 2 Mbit/s hop: header 14 + FCS 4 + preamble 8 + gap 12 bytes. It
/// makes every frame's link serialization longer than its radio airtime, so no two frames of a
/// radio overlap and the radio's time is exactly the sum over its frames.
const WIRED_FRAMING: u32 = 38;
/// Link serialization per byte at 2 Mbit/s (ns).
const LINK_NS_PER_BYTE: u64 = 4_000;

fn ns(s: f64) -> u64 {
    (s * 1e9).round() as u64
}

/// A loss-free bulk transfer over a 2 Mbit/s wired hop between two radios of the given profiles,
/// an ACK per segment (so an ACK never overlaps the next data frame at the receiver).
fn run(sender: &str, receiver: &str, impairments: &str) -> RunResult {
    let extra = format!(
        "[energy]\nsender = \"{sender}\"\nreceiver = \"{receiver}\"\n[tcp]\ndelayed_ack = {{ every = 1, timeout = \"200ms\" }}"
    );
    let mut s = common::scenario("sack", "292000", impairments, &extra);
    s.path_mut().unwrap().frame_overhead = WIRED_FRAMING;
    common::run_seed(&s, 1)
}

/// The 11 Mbit/s 802.11b airtime of `frames` frames carrying `bytes` IP bytes holds `tx_ns`:
/// 11 * t lies in [11 * (n * preamble) + 8000 * (bytes + n * 36), that + 11 * n).
fn assert_80211b_airtime(what: &str, t_ns: u64, frames: u64, bytes: u64) {
    let lo = 11 * frames * PREAMBLE_NS + 8_000 * (bytes + frames * MAC_OVERHEAD);
    assert!(
        (lo..lo + 11 * frames).contains(&(11 * t_ns)),
        "{what}: {t_ns} ns on the air for {frames} frames of {bytes} bytes; expected {} ns plus under 1 ns per frame",
        lo as f64 / 11.0
    );
}

fn link_serialization_ns(frames: u64, bytes: u64) -> u64 {
    (bytes + frames * WIRED_FRAMING as u64) * LINK_NS_PER_BYTE
}

#[test]
fn sender_radio_transmits_for_the_11mbps_phy_airtime_not_the_2mbps_bottleneck_ieee_802_11b_s18_2() {
    let r = run("singh2002-toshiba-wavelan", "singh2002-toshiba-wavelan", "");
    let e = &r.energy.sender;
    // Every data segment and the SYN were transmitted within the window.
    assert!(e.radio_tx_frames > r.flow.data_segments_sent, "{} frames", e.radio_tx_frames);
    assert!(e.radio_tx_frames <= r.path.forward.packets_sent);
    assert_80211b_airtime("sender tx", ns(e.radio_tx_s), e.radio_tx_frames, e.radio_tx_bytes);
    // The 2 Mbit/s hop serializes the same frames about five times longer (6152 us against
    // 1309 us for a 1500-byte packet).
    let link = link_serialization_ns(e.radio_tx_frames, e.radio_tx_bytes);
    assert!(ns(e.radio_tx_s) * 4 < link, "radio {} ns, link {link} ns", ns(e.radio_tx_s));
}

#[test]
fn receiver_radio_hears_each_frame_for_its_phy_airtime_ending_at_arrival() {
    let r = run("singh2002-toshiba-wavelan", "singh2002-toshiba-wavelan", "");
    let (snd, rcv) = (&r.energy.sender, &r.energy.receiver);
    // No loss: the receiver heard, within the window, exactly the frames the sender sent in it.
    assert_eq!((rcv.radio_rx_frames, rcv.radio_rx_bytes), (snd.radio_tx_frames, snd.radio_tx_bytes));
    assert_80211b_airtime("receiver rx", ns(rcv.radio_rx_s), rcv.radio_rx_frames, rcv.radio_rx_bytes);
    // And its ACKs cost it their own 11 Mbit/s airtime.
    assert!(rcv.radio_tx_frames > r.flow.data_segments_sent / 2);
    assert_80211b_airtime("receiver tx", ns(rcv.radio_tx_s), rcv.radio_tx_frames, rcv.radio_tx_bytes);
}

#[test]
fn an_abstract_radio_is_on_the_air_for_the_link_serialization_seed_004_s3() {
    // ideal-nic-0.3 has no PHY: seed 004's device is defined by a power ratio only, so its radio
    // is the link itself.
    let r = run("ideal-nic-0.3", "ideal-nic-0.3", "");
    let (snd, rcv) = (&r.energy.sender, &r.energy.receiver);
    assert_eq!(ns(snd.radio_tx_s), link_serialization_ns(snd.radio_tx_frames, snd.radio_tx_bytes));
    assert_eq!(ns(rcv.radio_tx_s), link_serialization_ns(rcv.radio_tx_frames, rcv.radio_tx_bytes));
    // Back to back at the link rate, data frames keep the abstract receiver in rx without a gap,
    // so each of its ACKs overlaps a reception, and tx takes precedence: rx time is what is left.
    let heard = link_serialization_ns(rcv.radio_rx_frames, rcv.radio_rx_bytes);
    assert!(ns(rcv.radio_rx_s) < heard && heard <= ns(rcv.radio_rx_s) + ns(rcv.radio_tx_s));
    // Same transfer, same frames as with the 802.11b radios: only the radio time differs.
    let phy = run("singh2002-toshiba-wavelan", "singh2002-toshiba-wavelan", "");
    assert_eq!(phy.energy.sender.radio_tx_frames, snd.radio_tx_frames);
    assert_eq!(phy.flow.completion_s, r.flow.completion_s);
}

#[test]
fn a_frame_is_heard_for_the_airtime_of_the_radio_that_sent_it() {
    // An 802.11b sender and an abstract receiver: data frames occupy both radios for the 802.11b
    // airtime; the receiver's ACKs occupy both for the link serialization.
    let r = run("singh2002-toshiba-wavelan", "ideal-nic-0.3", "");
    let (snd, rcv) = (&r.energy.sender, &r.energy.receiver);
    assert_80211b_airtime("receiver rx", ns(rcv.radio_rx_s), rcv.radio_rx_frames, rcv.radio_rx_bytes);
    assert_eq!(ns(rcv.radio_tx_s), link_serialization_ns(rcv.radio_tx_frames, rcv.radio_tx_bytes));
    assert_80211b_airtime("sender tx", ns(snd.radio_tx_s), snd.radio_tx_frames, snd.radio_tx_bytes);
}

#[test]
fn a_frame_lost_on_the_channel_costs_phy_airtime_at_the_sender_only() {
    // Every frame leaving during 50 ms from t = 0.5 s is lost, long before the end of the transfer.
    let burst = r#"{kind="periodic_burst", p=1.0, on="50ms", every="1000s", offset="500ms"}"#;
    let r = run("singh2002-toshiba-wavelan", "singh2002-toshiba-wavelan", burst);
    let (snd, rcv) = (&r.energy.sender, &r.energy.receiver);
    assert!(r.path.forward.dropped_channel > 0);
    assert_eq!(snd.radio_tx_frames - rcv.radio_rx_frames, r.path.forward.dropped_channel);
    assert_80211b_airtime("sender tx", ns(snd.radio_tx_s), snd.radio_tx_frames, snd.radio_tx_bytes);
    assert_80211b_airtime("receiver rx", ns(rcv.radio_rx_s), rcv.radio_rx_frames, rcv.radio_rx_bytes);
}

#[test]
fn the_breakdown_still_sums_to_the_total_and_radio_states_partition_the_window() {
    let r = run("singh2002-toshiba-wavelan", "singh2002-toshiba-wavelan", "");
    let p = tcpenergy_engine::energy::profile::builtin("singh2002-toshiba-wavelan").unwrap().unwrap();
    let w = r.energy.window_s;
    for e in [&r.energy.sender, &r.energy.receiver] {
        let b = &e.breakdown_j;
        let sum = b.base + b.radio_tx + b.radio_rx + b.radio_idle + b.radio_sleep + b.radio_transitions + b.cpu;
        assert_eq!(sum, e.total_j);
        // always_on: the radio is in tx, rx or idle, and idle power fills the rest of the window.
        let idle_s = w - e.radio_tx_s - e.radio_rx_s;
        assert!((b.radio_idle - p.radio.idle_power_w * idle_s).abs() < 1e-9, "{} vs {}", b.radio_idle, p.radio.idle_power_w * idle_s);
        assert_eq!(b.radio_sleep, 0.0);
        assert_rx_tx_powers(e, &p);
    }
}

fn assert_rx_tx_powers(e: &NodeEnergy, p: &tcpenergy_engine::energy::profile::DeviceProfile) {
    assert!((e.breakdown_j.radio_tx - p.radio.tx_power_w * e.radio_tx_s).abs() < 1e-12);
    assert!((e.breakdown_j.radio_rx - p.radio.rx_power_w * e.radio_rx_s).abs() < 1e-12);
}

/// Scenario TOML with both ends on 802.11b radios and the given path rates.
fn wavelan_path(forward: &str, reverse: &str) -> String {
    format!(
        "[path.forward]\nrate = \"{forward}\"\n[path.reverse]\nrate = \"{reverse}\"\n\
         [energy]\nsender = \"singh2002-toshiba-wavelan\"\nreceiver = \"agrawal2003-samsung-wavelan-turbo\"\n"
    )
}

/// The scenario is refused, whether by parsing or by the radio rule applied to the parsed path.
fn refusal(text: &str) -> (String, String) {
    let checked = Scenario::from_toml(text).and_then(|s| check_path_rates(s.path().unwrap(), &s.energy).map(|_| s));
    match checked {
        Err(EngineError::Config { path, message }) => (path, message),
        other => panic!("expected the scenario to be refused, got {other:?}"),
    }
}

#[test]
fn a_path_faster_than_the_radio_phy_is_refused_naming_the_link_the_profile_and_its_rate() {
    let (path, msg) = refusal(&wavelan_path("54Mbps", "2Mbps"));
    assert_eq!(path, "path.forward.rate");
    for part in ["54Mbps", "energy.sender", "singh2002-toshiba-wavelan", "radio.phy.rate", "11Mbps", "at most"] {
        assert!(msg.contains(part), "{part:?} missing from {msg}");
    }
    let (path, msg) = refusal(&wavelan_path("2Mbps", "11000001bps"));
    assert_eq!(path, "path.reverse.rate");
    assert!(msg.contains("energy.receiver") && msg.contains("agrawal2003-samsung-wavelan-turbo"), "{msg}");
}

#[test]
fn a_path_at_or_below_the_radio_phy_rate_is_a_wired_or_shaped_hop_and_is_accepted() {
    for (f, r) in [("11Mbps", "11Mbps"), ("2Mbps", "500kbps")] {
        let s = Scenario::from_toml(&wavelan_path(f, r)).unwrap();
        check_path_rates(s.path().unwrap(), &s.energy).unwrap();
    }
    // Abstract radios accept any rate.
    let s = Scenario::from_toml(
        "[path.forward]\nrate = \"1Gbps\"\n[energy]\nsender = \"ideal-nic-0.3\"\nreceiver = \"ideal-nic-0.3\"\n",
    )
    .unwrap();
    check_path_rates(s.path().unwrap(), &s.energy).unwrap();
}
