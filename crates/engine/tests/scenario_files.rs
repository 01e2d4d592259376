//! Every scenario under `scenarios/` parses and runs to completion as it is (both forms).

mod common;

use tcpenergy_engine::config::FlowTraffic;
use tcpenergy_engine::{run, run_network, RunOptions};

#[test]
fn every_example_scenario_runs_to_completion() {
    let mut n = 0;
    for path in common::scenario_files() {
        let s = common::read_scenario_file(&path);
        n += 1;
        if let Some(net) = s.network() {
            let r = run_network(&s, s.seed).unwrap();
            assert!(r.complete, "{} did not complete", path.display());
            for (cfg, f) in net.flows.iter().zip(&r.flows) {
                if let FlowTraffic::Bulk { bytes } = cfg.traffic {
                    assert_eq!(f.flow.bytes_delivered, bytes, "{}: flow {}", path.display(), cfg.name);
                }
            }
            continue;
        }
        let r = run(&s, s.seed, RunOptions::default()).unwrap();
        assert!(r.complete, "{} did not complete", path.display());
        assert_eq!(r.flow.bytes_delivered, s.traffic().unwrap().bytes);
    }
    assert!(n >= 4, "expected the example scenarios, found {n}");
}
