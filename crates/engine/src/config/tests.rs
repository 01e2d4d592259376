//! Scenario parsing: the two forms a scenario takes; `tcp.rtt_sampling`, its stack presets and
//! its error message.

use super::*;

fn tcp(text: &str) -> Result<TcpConfig, EngineError> {
    Scenario::from_toml(&format!("[tcp]\n{text}")).map(|s| s.tcp)
}

#[test]
fn rtt_sampling_defaults_to_every_ack_and_follows_the_stack_presets() {
    assert_eq!(tcp("").unwrap().rtt_sampling, RttSampling::EveryAck);
    // FreeBSD 4.x times one segment (t_rtttime / t_rtseq); Linux samples every clean ACK.
    assert_eq!(tcp("stack = \"freebsd-4.3\"").unwrap().rtt_sampling, RttSampling::OneSegment);
    assert_eq!(tcp("stack = \"linux-2.2\"").unwrap().rtt_sampling, RttSampling::EveryAck);
    assert_eq!(tcp("stack = \"linux-6\"").unwrap().rtt_sampling, RttSampling::EveryAck);
}

#[test]
fn an_explicit_rtt_sampling_overrides_the_stack_preset() {
    let t = tcp("stack = \"freebsd-4.3\"\nrtt_sampling = \"every_ack\"").unwrap();
    assert_eq!((t.rtt_sampling, t.min_rto), (RttSampling::EveryAck, SimDuration::from_secs(1)));
    let t = tcp("stack = \"linux-2.2\"\nrtt_sampling = \"one_segment\"").unwrap();
    assert_eq!(t.rtt_sampling, RttSampling::OneSegment);
    // A `--set` override too, and the normalized scenario shows the value.
    let s = Scenario::from_json("{\"tcp\": {\"stack\": \"linux-2.2\"}}", &[("tcp.rtt_sampling".into(), "\"one_segment\"".into())]).unwrap();
    assert_eq!(s.tcp.rtt_sampling, RttSampling::OneSegment);
    assert!(s.to_json().contains("\"rtt_sampling\":\"one_segment\""), "{}", s.to_json());
}

/// The Linux stack runs Linux's mechanisms: the textbook stack's knobs, set to anything else,
/// and variants Linux lacks are refused with the key named (as kernel mode refuses them).
#[test]
fn the_linux_stack_refuses_textbook_knobs_and_variants_linux_lacks() {
    for (text, key) in [
        ("rtt_sampling = \"one_segment\"", "tcp.rtt_sampling"),
        ("limited_transmit = false", "tcp.limited_transmit"),
        ("cwnd_growth = \"per_ack\"", "tcp.cwnd_growth"),
        ("fixed_rto = \"1s\"", "tcp.fixed_rto"),
        ("variant = \"tahoe\"", "tcp.variant"),
        ("variant = \"e2tcp\"\ntimestamps = false\nwindow_scale = false", "tcp.variant"),
    ] {
        let e = tcp(&format!("stack = \"linux-6\"\n{text}")).unwrap_err().to_string();
        assert!(e.contains(key), "{text}: {e}");
    }
    // Linux's own values are accepted, and bbr needs the Linux stack.
    assert!(tcp("stack = \"linux-6\"\nlimited_transmit = true\nvariant = \"bbr\"").is_ok());
    let e = tcp("variant = \"bbr\"").unwrap_err().to_string();
    assert!(e.contains("tcp.variant") && e.contains("linux-6"), "{e}");
}

#[test]
fn a_bad_rtt_sampling_names_the_key_and_the_allowed_values() {
    for text in ["rtt_sampling = \"every_segment\"", "stack = \"linux-6\"\nrtt_sampling = 1"] {
        let e = tcp(text).unwrap_err().to_string();
        assert!(e.contains("tcp.rtt_sampling"), "{e}");
        if text.contains("every_segment") {
            assert!(e.contains("every_ack") && e.contains("one_segment"), "{e}");
        }
    }
}

#[test]
fn a_scenario_is_either_the_single_path_form_or_the_network_form() {
    let single = Scenario::from_toml("[path]\nmtu = 1000\n[traffic]\nkind = \"bulk\"\nbytes = \"1MB\"\n").unwrap();
    assert!(matches!(&single.topology, Topology::SinglePath { path, traffic } if path.mtu == 1000 && traffic.bytes == 1_000_000));
    assert_eq!((single.path().map(|p| p.mtu), single.traffic().map(|t| t.bytes), single.network()), (Some(1000), Some(1_000_000), None));
    // Its network is the two-node one it stands for, and has no single path.
    let as_net = single.as_network().unwrap();
    assert_eq!((as_net.path(), as_net.traffic(), as_net.network().map(|n| n.links[0].mtu)), (None, None, Some(1000)));
    assert_eq!(Scenario::from_json(&single.to_json(), &[]).unwrap(), single, "the normalized JSON reads back as the scenario");

    let text = "[nodes]\na = {}\nb = {}\n[[links]]\nbetween = [\"a\", \"b\"]\n\
                [[flows]]\nname = \"f\"\nfrom = \"a\"\nto = \"b\"\ntraffic = { kind = \"bulk\", bytes = \"1kB\" }\n";
    let network = Scenario::from_toml(text).unwrap();
    assert!(matches!(&network.topology, Topology::Network(n) if n.flows.len() == 1));
    assert_eq!((network.path(), network.traffic(), network.smss()), (None, None, None));
    assert!(matches!(network.as_network().unwrap(), std::borrow::Cow::Borrowed(_)));
    assert_eq!(Scenario::from_json(&network.to_json(), &[]).unwrap(), network);
    assert_eq!(network.into_network().map(|n| n.nodes.len()), Some(2));
}
