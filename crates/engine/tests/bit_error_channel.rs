//! A bit-error channel loses large frames more often than small ones (seed 001 §2.3), unlike
//! per-packet (Bernoulli) loss.

mod common;

#[test]
fn larger_frames_are_lost_more_often_under_bit_errors() {
    let imp = r#"{kind="bit_error", ber=2e-5}"#;
    let loss_rate = |mtu: u32| {
        let mut s = common::scenario("sack", "2MB", imp, "");
        s.path_mut().unwrap().mtu = mtu;
        let r = common::run_seed(&s, 5);
        assert!(r.complete);
        let f = &r.path.forward;
        (f.dropped_channel as f64 / f.packets_sent as f64, 1.0 - (1.0 - 2e-5f64).powf(8.0 * mtu as f64))
    };
    let (small, small_expected) = loss_rate(512);
    let (large, large_expected) = loss_rate(1500);
    assert!(large > 2.0 * small, "512: {small}, 1500: {large}");
    // Full-sized data segments dominate, so the measured rates sit near the per-frame formula.
    assert!((small - small_expected).abs() < 0.35 * small_expected, "{small} vs {small_expected}");
    assert!((large - large_expected).abs() < 0.25 * large_expected, "{large} vs {large_expected}");
}

/// Seeds 000 and 002 name Dummynet's packet loss (per packet, whatever the size); their "loss
/// process" reading's alternative reads the same nominal rate per bit: `reference_bytes` makes `p`
/// the loss of a frame of that size, so smaller frames are lost less often.
#[test]
fn a_loss_rate_with_a_reference_size_loses_small_packets_less_often_than_per_packet_loss() {
    let loss_rate = |imp: &str, mtu: u32| {
        let mut s = common::scenario("sack", "2MB", imp, "");
        s.path_mut().unwrap().mtu = mtu;
        let r = common::run_seed(&s, 5);
        assert!(r.complete);
        r.path.forward.dropped_channel as f64 / r.path.forward.packets_sent as f64
    };
    let per_packet = r#"{kind="bernoulli", p=0.05}"#;
    let per_bit = r#"{kind="bernoulli", p=0.05, reference_bytes=1500}"#;
    let (pp512, pb512, pb1500) = (loss_rate(per_packet, 512), loss_rate(per_bit, 512), loss_rate(per_bit, 1500));
    assert!((pp512 - 0.05).abs() < 0.01, "per packet at 512: {pp512}");
    assert!((pb1500 - 0.05).abs() < 0.01, "per bit at the reference size: {pb1500}");
    // 1 - 0.95^(552/1500) = 0.0187 for a full 512-byte segment.
    assert!(pb512 < 0.5 * pp512 && pb512 > 0.01, "per bit at 512: {pb512}");
}

#[test]
fn a_reference_size_is_written_back_only_when_given_and_zero_is_refused() {
    let plain = common::scenario("sack", "1MB", r#"{kind="bernoulli", p=0.01}"#, "");
    assert!(!plain.to_json().contains("reference_bytes"));
    let sized = common::scenario("sack", "1MB", r#"{kind="bernoulli", p=0.01, reference_bytes=1500}"#, "");
    assert!(sized.to_json().contains("\"reference_bytes\":1500"), "{}", sized.to_json());
    let toml = "[path]\nforward = { rate = \"2Mbps\", delay = \"1ms\", impairments = [{kind=\"bernoulli\", p=0.01, reference_bytes=0}] }\n\
                reverse = { rate = \"2Mbps\", delay = \"1ms\" }\n[traffic]\nkind = \"bulk\"\nbytes = \"1MB\"\n";
    let err = tcpenergy_engine::Scenario::from_toml(toml).unwrap_err().to_string();
    assert!(err.contains("path.forward.impairments.0.reference_bytes"), "{err}");
}
