//! Run a scenario file of either form and print its record: `cargo run --release --example net_run FILE [SEED]`.
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let text = std::fs::read_to_string(&args[1]).expect("scenario file");
    let seed = args.get(2).map_or(1, |s| s.parse().expect("seed"));
    let s = tcpenergy_engine::Scenario::from_toml(&text).unwrap_or_else(|e| panic!("{e}"));
    let t = std::time::Instant::now();
    let json = tcpenergy_engine::run_json(&s, seed, Default::default()).unwrap_or_else(|e| panic!("{e}"));
    eprintln!("wall {:.3} ms", t.elapsed().as_secs_f64() * 1e3);
    println!("{json}");
}
