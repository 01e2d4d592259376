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
