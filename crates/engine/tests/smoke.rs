mod common;
#[test]
fn smoke() {
    for v in ["tahoe", "reno", "newreno", "sack"] {
        for p in ["", "{kind=\"bernoulli\", p=0.01}", "{kind=\"bernoulli\", p=0.1}"] {
            let s = common::scenario(v, "5MB", p, "");
            let t = std::time::Instant::now();
            let r = common::run_seed(&s, 1);
            println!("{v} {p}: complete={} delivered={} t={:.2}s goodput={:.0} rexmit={} to={} fr={} events={} E={:.2} EI={:.2} wall={:?}", r.complete, r.flow.bytes_delivered, r.flow.completion_s, r.flow.goodput_bps, r.flow.retransmissions, r.flow.timeouts, r.flow.fast_retransmits, r.events, r.energy.sender.total_j, r.energy.sender.idealized_j, t.elapsed());
        }
    }
}
