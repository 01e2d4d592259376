//! Times the standard run (5 MB, sack, 2 Mbit/s, 20 ms each way, 1 % forward loss, MTU 1500)
//! over 50 seeds and prints the median wall time and events per second.
//! `cargo run --release -p tcpenergy-engine --example standard_run [variant]`

use std::time::Instant;
use tcpenergy_engine::{run, RunOptions, Scenario};

const STANDARD: &str = r#"
name = "standard"
[path]
mtu = 1500
[path.forward]
rate = "2Mbps"
delay = "20ms"
queue = 100
impairments = [{ kind = "bernoulli", p = 0.01 }]
[path.reverse]
rate = "2Mbps"
delay = "20ms"
queue = 100
[tcp]
variant = "sack"
[traffic]
kind = "bulk"
bytes = "5MB"
"#;

fn main() {
    let mut s = Scenario::from_toml(STANDARD).expect("standard scenario");
    if let Some(v) = std::env::args().nth(1) {
        s = Scenario::from_json(&s.to_json(), &[("tcp.variant".into(), format!("\"{v}\""))]).expect("variant");
    }
    for seed in 1..=5 {
        run(&s, seed, RunOptions::default()).unwrap();
    }
    let mut times = Vec::new();
    let (mut events, mut total) = (0u64, 0f64);
    let n: u64 = std::env::var("RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(50);
    for seed in 1..=n {
        let t = Instant::now();
        let r = run(&s, seed, RunOptions::default()).unwrap();
        let dt = t.elapsed().as_secs_f64();
        times.push(dt);
        events += r.events;
        total += dt;
    }
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!(
        "{}: median {:.3} ms per run, {:.0} events per run, {:.2} M events/s",
        s.tcp.variant.name(),
        times[times.len() / 2] * 1e3,
        events as f64 / n as f64,
        events as f64 / total / 1e6
    );
}
