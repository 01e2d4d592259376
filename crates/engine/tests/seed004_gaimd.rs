//! TCP(α, β) (seed 004 §2, §4.1, §5.1): presets, equivalence with NewReno at (1, 1/2), and the
//! fixed timeouts of the calibration protocols.

mod common;
use common::{scenario, Pair, Sent};
use tcpenergy_engine::tcp::segment::Segment;
use tcpenergy_engine::units::{SimDuration, SimTime};

#[test]
fn gaimd_with_one_and_a_half_behaves_as_newreno() {
    for (loss, seed) in [("0.01", 1u64), ("0.05", 2), ("0.1", 3)] {
        let imp = format!(r#"{{kind="bernoulli", p={loss}}}"#);
        let newreno = scenario("newreno", "1MB", &imp, "");
        let gaimd = scenario("gaimd", "1MB", &imp, "[tcp]\nalpha = 1.0\nbeta = 0.5");
        let (a, b) = (common::run_seed(&newreno, seed), common::run_seed(&gaimd, seed));
        assert_eq!(a.flow, b.flow, "loss {loss}");
        assert_eq!(a.energy, b.energy, "loss {loss}");
    }
}

#[test]
fn a_larger_beta_keeps_more_window_after_a_loss() {
    // Smooth (β = 0.875) holds more of its window than Responsive (β = 0.25) after each loss, so
    // at moderate loss it keeps more data in flight on average.
    let imp = r#"{kind="bernoulli", p=0.02}"#;
    let smooth = common::run_seed(&scenario("smooth", "2MB", imp, ""), 4);
    let responsive = common::run_seed(&scenario("responsive", "2MB", imp, ""), 4);
    assert!(smooth.flow.goodput_bps > responsive.flow.goodput_bps);
}

fn timeout_gaps(variant: &str, lost_transmissions: usize) -> Vec<SimDuration> {
    let s = scenario(variant, "60000", "", "");
    let lost = 1 + 10 * s.smss().unwrap() as u64;
    let mut p = Pair::new(&s, SimDuration::from_millis(20), move |from, seg: &Segment, log: &[Sent]| {
        from == 0
            && seg.seq == lost
            && seg.len > 0
            && log.iter().filter(|x| x.from == 0 && x.seg.seq == lost && x.seg.len > 0).count() < lost_transmissions
    });
    p.run_until_closed(SimTime(120_000_000_000));
    let t: Vec<SimTime> = p.sends_of(0, lost).iter().map(|x| x.at).collect();
    // Skip the original and the fast retransmission: the rest are timer-driven.
    t.windows(2).skip(2).map(|w| w[1] - w[0]).collect()
}

#[test]
fn the_aggressive_fixed_timeout_fires_at_exactly_50_ms_without_backoff() {
    let gaps = timeout_gaps("aggressive", 6);
    assert!(gaps.len() >= 3, "{gaps:?}");
    assert!(gaps.iter().all(|g| *g == SimDuration::from_millis(50)), "{gaps:?}");
}

#[test]
fn the_conservative_fixed_timeout_fires_at_exactly_one_second() {
    let gaps = timeout_gaps("conservative", 5);
    assert!(gaps.len() >= 2, "{gaps:?}");
    assert!(gaps.iter().all(|g| *g == SimDuration::from_secs(1)), "{gaps:?}");
}

#[test]
fn a_fixed_rto_can_be_set_for_any_aimd_variant() {
    let s = scenario("gaimd", "100KB", "", "[tcp]\nfixed_rto = \"300ms\"");
    let mut p = Pair::new(&s, SimDuration::from_millis(20), |_, _, _| false);
    while p.eps[0].sender.state().snd_una == 0 {
        assert!(p.step());
    }
    assert_eq!(p.eps[0].sender.rto(), SimDuration::from_millis(300));
}
