//! Properties that hold for every variant under any impairment: every byte is delivered exactly
//! once and in order; the energy breakdown sums to the total; idealized <= total; idle energy is
//! idle power times idle time under `always_on`; the same seed gives the same record.

mod common;
use proptest::prelude::*;
use tcpenergy_engine::config::RadioPolicy;
use tcpenergy_engine::{run, RunOptions, Scenario};

/// A period that divides a stack's max_rto (60 s default, 64 s FreeBSD, 120 s Linux) can
/// phase-lock with a fully backed-off timer (see the outage note below).
fn no_lock(every: &u64) -> bool {
    [60_000, 64_000, 120_000].iter().all(|m| m % every != 0)
}

fn phase(random: bool) -> &'static str {
    if random {
        r#", offset="random""#
    } else {
        ""
    }
}

fn impairment() -> impl Strategy<Value = String> {
    prop_oneof![
        (0.0..0.15f64).prop_map(|p| format!(r#"{{kind="bernoulli", p={p}}}"#)),
        (0.0..2e-5f64).prop_map(|ber| format!(r#"{{kind="bit_error", ber={ber}}}"#)),
        (0.5..1.0f64, 100..1000u64, (2001..6000u64).prop_filter("divides max_rto", no_lock), any::<bool>())
            .prop_map(|(p, on, every, random)| format!(r#"{{kind="periodic_burst", p={p}, on="{on}ms", every="{every}ms"{}}}"#, phase(random))),
        (0.0..0.02f64, 0.3..0.9f64, 500..3000u64, 20..300u64).prop_map(|(gp, bp, g, b)| format!(
            r#"{{kind="gilbert_elliott", good={{per={gp}, min="{g}ms", max="{}ms"}}, bad={{per={bp}, min="{b}ms", max="{}ms"}}}}"#,
            g * 2,
            b * 2
        )),
        (0.0..0.1f64, 1..60u64).prop_map(|(f, d)| format!(r#"{{kind="reorder", fraction={f}, extra_delay="{d}ms"}}"#)),
        (0..20u64, 0..40u64, any::<bool>())
            .prop_map(|(lo, w, k)| format!(r#"{{kind="jitter", min="{lo}ms", max="{}ms", keep_order={k}}}"#, lo + w)),
        // A period that divides max_rto (60 s) can phase-lock with a fully backed-off timer so
        // that every retransmission falls into an outage or burst: a real (if pathological)
        // behaviour of deterministic periodic impairments, excluded here so transfers finish.
        (100..1500u64, (3001..8000u64).prop_filter("divides max_rto", no_lock), any::<bool>(), 0..3u8, any::<bool>())
            .prop_map(|(d, e, n, mode, random)| {
                let notify = if n { r#", notify={delay="5ms"}"# } else { "" };
                let mode = match mode {
                    0 => "",
                    1 => r#", mode="hold""#,
                    _ => r#", mode="hold", hold_limit=5"#,
                };
                format!(r#"{{kind="outage", down="{d}ms", every="{e}ms"{notify}{mode}{}}}"#, phase(random))
            }),
    ]
}

prop_compose! {
    fn scenario()(
        variant in prop::sample::select(vec![
            "tahoe", "reno", "newreno", "sack", "gaimd", "responsive", "smooth", "aggressive", "conservative", "cubic", "ecn", "elfn", "ecn-elfn",
        ]),
        bytes in 1..300_000u64,
        mtu in prop::sample::select(vec![512u32, 1500, 2296]),
        fwd in prop::collection::vec(impairment(), 0..3),
        rev in prop::collection::vec(impairment(), 0..2),
        timestamps in any::<bool>(),
        every in 0..3u32,
        limited in any::<bool>(),
        per_byte in any::<bool>(),
        policy in prop::sample::select(vec!["always_on", "ideal", "idle_timeout"]),
        rate_kbps in prop::sample::select(vec![500u64, 2000, 11000]),
        stack in prop::sample::select(vec!["", "freebsd-4.3", "linux-2.2", "linux-6"]),
        ticks in prop::sample::select(vec![(0u64, 0u64), (10, 10), (500, 200)]),
    ) -> Scenario {
        // The Linux stack runs Linux's variants and has no textbook knobs: draw among its
        // variants and leave limited transmit and cwnd growth to it.
        let linux = stack == "linux-6";
        let linux_variants = ["reno", "newreno", "sack", "cubic", "ecn", "bbr"];
        let variant = if linux { linux_variants[variant.len() % linux_variants.len()] } else { variant };
        let knobs = if linux {
            String::new()
        } else {
            format!("limited_transmit = {limited}\ncwnd_growth = \"{}\"", if per_byte { "per_byte" } else { "per_ack" })
        };
        // A preset brings its own ticks; without one, draw them (exact, callout-like, 4.4BSD-like).
        let stack_lines = if stack.is_empty() {
            format!("timer_tick = \"{}ms\"\ndelayed_ack_tick = \"{}ms\"", ticks.0, ticks.1)
        } else {
            format!("stack = \"{stack}\"")
        };
        // A long cap: under heavy impairment a fully backed-off timer (60 s) makes slow progress.
        let text = format!(r#"
            stop_after = "24h"
            [path]
            mtu = {mtu}
            [path.forward]
            rate = "{rate_kbps}kbps"
            delay = "20ms"
            impairments = [{}]
            [path.reverse]
            rate = "{rate_kbps}kbps"
            delay = "20ms"
            impairments = [{}]
            [tcp]
            variant = "{variant}"
            {stack_lines}
            timestamps = {timestamps}
            delayed_ack = {{ every = {every}, timeout = "200ms" }}
            {knobs}
            [traffic]
            kind = "bulk"
            bytes = {bytes}
            [energy]
            radio_policy = "{policy}"
            timeout = "50ms"
        "#, fwd.join(", "), rev.join(", "));
        Scenario::from_toml(&text).unwrap()
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

proptest! {
    // A fixed seed keeps CI reproducible; set PROPTEST_RNG_SEED / PROPTEST_CASES to explore more.
    #![proptest_config(ProptestConfig {
        cases: 128,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x7ce9),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn every_byte_is_delivered_exactly_once_and_in_order(s in scenario(), seed in 1..1000u64) {
        let r = run(&s, seed, RunOptions { record_deliveries: true, ..Default::default() }).unwrap();
        prop_assert!(r.complete, "transfer did not complete");
        let log = r.deliveries.unwrap();
        let mut next = 1u64;
        for (start, end) in log {
            prop_assert_eq!(start, next, "gap or overlap in delivery");
            prop_assert!(end > start);
            next = end;
        }
        prop_assert_eq!(next, 1 + s.traffic().unwrap().bytes);
        prop_assert_eq!(r.flow.bytes_delivered, s.traffic().unwrap().bytes);
    }

    #[test]
    fn energy_breakdown_sums_to_total_and_idealized_is_at_most_total(s in scenario(), seed in 1..1000u64) {
        let r = run(&s, seed, RunOptions::default()).unwrap();
        for e in [&r.energy.sender, &r.energy.receiver] {
            prop_assert!(close(e.breakdown_j.total(), e.total_j));
            prop_assert!(e.idle_j >= 0.0);
            prop_assert!(e.idealized_j <= e.total_j + 1e-9);
            prop_assert!(e.idealized_j >= -1e-9);
            prop_assert!(close(e.idealized_j + e.idle_j, e.total_j));
        }
    }

    #[test]
    fn idle_energy_is_idle_power_times_idle_time_under_always_on(mut s in scenario(), seed in 1..1000u64) {
        s.energy.radio_policy = RadioPolicy::AlwaysOn;
        let r = run(&s, seed, RunOptions::default()).unwrap();
        for (e, p) in [(&r.energy.sender, &s.energy.sender.profile), (&r.energy.receiver, &s.energy.receiver.profile)] {
            let idle_power = p.platform.base_power_w + p.radio.idle_power_w;
            prop_assert!(close(e.idle_j, idle_power * e.idle_s), "{} vs {}", e.idle_j, idle_power * e.idle_s);
        }
    }

    #[test]
    fn same_seed_gives_identical_records(s in scenario(), seed in 1..1000u64) {
        let a = run(&s, seed, RunOptions::default()).unwrap().to_json();
        let b = run(&s, seed, RunOptions::default()).unwrap().to_json();
        prop_assert_eq!(a, b);
    }
}

#[test]
fn adding_a_component_does_not_shift_another_components_random_stream() {
    // Common random numbers: a zero-delay jitter appended after the loss process must leave the
    // loss pattern, and so the whole record, unchanged.
    let base = common::scenario("sack", "500000", r#"{kind="bernoulli", p=0.05}"#, "");
    let more = common::scenario("sack", "500000", r#"{kind="bernoulli", p=0.05}, {kind="jitter", min="0ms", max="0ms"}"#, "");
    let a = common::run_seed(&base, 7);
    let b = common::run_seed(&more, 7);
    assert_eq!(a.flow, b.flow);
}

#[test]
fn different_seeds_give_different_loss_patterns() {
    let s = common::scenario("sack", "500000", r#"{kind="bernoulli", p=0.05}"#, "");
    assert_ne!(common::run_seed(&s, 1).flow, common::run_seed(&s, 2).flow);
}

#[test]
fn a_run_that_hits_stop_after_is_marked_incomplete() {
    let mut s = common::scenario("newreno", "5MB", "", "");
    s.stop_after = tcpenergy_engine::units::SimDuration::from_secs(2);
    let r = common::run_seed(&s, 1);
    assert!(!r.complete);
    assert!(r.flow.bytes_delivered < 5_000_000);
    assert!(r.flow.completion_s.is_nan());
    assert!(r.sim_time_s <= 2.0);
}
