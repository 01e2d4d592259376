//! Bad channel and pipe settings give one error naming the key path and what is allowed
//! (docs/models/wifi.md "The channel in a scenario").

use tcpenergy_engine::{EngineError, Scenario};

fn base() -> String {
    r#"
[nodes]
a = {}
b = {}
c = {}
[[channels]]
name = "adhoc"
standard = "802.11b"
nodes = ["a", "b", "c"]
data_rate = "11Mbps"
basic_rate = "2Mbps"
rts_threshold = 1000
[[flows]]
name = "bulk"
from = "a"
to = "c"
traffic = { kind = "bulk", bytes = "1MB" }
"#
    .to_string()
}

fn err_of(text: &str) -> (String, String) {
    match Scenario::from_toml(text) {
        Err(EngineError::Config { path, message }) => (path, message),
        other => panic!("expected a config error for {text}, got {other:?}"),
    }
}

fn edit(old: &str, new: &str) -> String {
    let b = base();
    assert!(b.contains(old), "{old}");
    b.replacen(old, new, 1)
}

#[test]
fn a_channel_network_needs_no_links_and_round_trips_through_its_normal_form() {
    let s = Scenario::from_toml(&base()).unwrap();
    let json = s.to_json();
    assert!(json.contains("\"rts_threshold\":1000") && json.contains("\"basic_rates\":[\"2Mbps\"]"), "{json}");
    let again = Scenario::from_json(&json, &[]).unwrap();
    assert_eq!(again.to_json(), json);
    let off = Scenario::from_toml(&edit("rts_threshold = 1000", "rts_threshold = \"off\"")).unwrap();
    assert!(off.to_json().contains("\"rts_threshold\":\"off\""));
}

#[test]
fn a_channel_naming_an_unknown_node_is_refused_with_the_nodes_there_are() {
    let (path, msg) = err_of(&edit("nodes = [\"a\", \"b\", \"c\"]", "nodes = [\"a\", \"b\", \"x\"]"));
    assert_eq!(path, "channels.0.nodes.2");
    assert_eq!(msg, "unknown node \"x\"; nodes are a, b, c");
    let (path, msg) = err_of(&edit("rts_threshold = 1000", "rts_threshold = 1000\nhears = [[\"a\", \"d\"]]"));
    assert_eq!(path, "channels.0.hears.0.1");
    assert!(msg.contains("unknown node \"d\""), "{msg}");
}

#[test]
fn a_rate_outside_the_standard_is_refused_with_the_standards_rates() {
    let (path, msg) = err_of(&edit("data_rate = \"11Mbps\"", "data_rate = \"54Mbps\""));
    assert_eq!(path, "channels.0.data_rate");
    assert_eq!(msg, "54Mbps is not a rate of 802.11b; one of 1Mbps, 2Mbps, 5500kbps, 11Mbps");
    let (path, _) = err_of(&edit("basic_rate = \"2Mbps\"", "basic_rate = \"6Mbps\""));
    assert_eq!(path, "channels.0.basic_rate");
    let (path, msg) = err_of(&edit("standard = \"802.11b\"", "standard = \"802.11ax\""));
    assert_eq!(path, "channels.0.standard");
    assert!(msg.contains("802.11b, 802.11a, 802.11g, 802.11n, 802.11ac"), "{msg}");
}

/// An 802.11n channel of the base scenario with `keys` in place of its legacy rates.
fn ht(standard: &str, keys: &str) -> String {
    // A profile without radio.phy: its radio takes whatever rate the channel has.
    "[energy]\ndefault_profile = \"ideal-nic-0.3\"\n".to_string() + &edit("standard = \"802.11b\"\nnodes = [\"a\", \"b\", \"c\"]\ndata_rate = \"11Mbps\"\nbasic_rate = \"2Mbps\"", &format!("standard = \"{standard}\"\nnodes = [\"a\", \"b\", \"c\"]\n{keys}"))
}

#[test]
fn ht_and_vht_settings_out_of_range_name_the_key_and_the_allowed_values_19_5_21_5() {
    let (path, msg) = err_of(&ht("802.11n", "mcs = 15"));
    assert_eq!(path, "channels.0.mcs");
    assert_eq!(msg, "must be 0-7 (the modulation and coding of each stream), got 15 (HT MCS 15 is mcs = 7 with spatial_streams = 2)");
    let (path, msg) = err_of(&ht("802.11n", "bandwidth = \"80MHz\""));
    assert_eq!(path, "channels.0.bandwidth");
    assert_eq!(msg, "unknown bandwidth \"80MHz\" for 802.11n; one of \"20MHz\", \"40MHz\"");
    let (path, msg) = err_of(&ht("802.11ac", "bandwidth = \"20MHz\"\nmcs = 9"));
    assert_eq!(path, "channels.0.mcs");
    assert_eq!(msg, "MCS 9 is not defined for 1 spatial stream(s) at 20 MHz (802.11-2020 21.5)");
    let (path, msg) = err_of(&ht("802.11ac", "spatial_streams = 8"));
    assert_eq!(path, "channels.0.spatial_streams");
    assert_eq!(msg, "must be 1-4 spatial streams, got 8");
    let (path, msg) = err_of(&ht("802.11n", "guard_interval = \"medium\""));
    assert_eq!(path, "channels.0.guard_interval");
    assert!(msg.contains("one of \"long\" (800 ns), \"short\" (400 ns)"), "{msg}");
    let (path, msg) = err_of(&ht("802.11n", "ampdu_max_mpdus = 65"));
    assert_eq!(path, "channels.0.ampdu_max_mpdus");
    assert_eq!(msg, "must be 1-64 MPDUs (the block ack window), got 65");
    // A data rate must be one these settings give; it then picks the MCS.
    let (path, msg) = err_of(&ht("802.11n", "data_rate = \"50Mbps\""));
    assert_eq!(path, "channels.0.data_rate");
    assert!(msg.starts_with("50Mbps is not a rate of 1 spatial stream(s) at 40 MHz with the long guard interval; one of 13500kbps (mcs 0)"), "{msg}");
    let (path, _) = err_of(&ht("802.11n", "mcs = 3\ndata_rate = \"135Mbps\""));
    assert_eq!(path, "channels.0.data_rate");
    let s = Scenario::from_toml(&ht("802.11n", "bandwidth = \"20MHz\"\ndata_rate = \"65Mbps\"")).unwrap();
    assert!(s.to_json().contains("\"mcs\":7"), "{}", s.to_json());
    // The legacy standards have no MCS, and no DSSS preamble on OFDM ones.
    let (path, msg) = err_of(&edit("rts_threshold = 1000", "mcs = 3"));
    assert_eq!(path, "channels.0.mcs");
    assert!(msg.starts_with("only 802.11n and 802.11ac channels have it"), "{msg}");
    let (path, _) = err_of(&ht("802.11ac", "preamble = \"short\""));
    assert_eq!(path, "channels.0.preamble");
    // Adaptive power save needs an access point.
    let (path, msg) = err_of(&edit("rts_threshold = 1000", "psm_timeout = \"200ms\""));
    assert_eq!(path, "channels.0.psm_timeout");
    assert!(msg.contains("set ap = \"<node>\""), "{msg}");
}

#[test]
fn an_ht_channel_defaults_to_its_highest_mcs_and_round_trips_through_its_normal_form() {
    let s = Scenario::from_toml(&ht("802.11ac", "spatial_streams = 2\nguard_interval = \"short\"")).unwrap();
    let json = s.to_json();
    // 80 MHz, 2 streams, MCS 9, short GI: 866.7 Mbit/s (N_DBPS 3120 / 3.6 us).
    assert!(json.contains("\"mcs\":9") && json.contains("\"bandwidth\":\"80MHz\"") && json.contains("\"data_rate\":\"866666666bps\""), "{json}");
    assert!(json.contains("\"basic_rates\":[\"6Mbps\",\"12Mbps\",\"24Mbps\"]") && json.contains("\"ampdu\":true"), "{json}");
    let again = Scenario::from_json(&json, &[]).unwrap();
    assert_eq!(again.to_json(), json);
}

#[test]
fn an_rts_threshold_outside_0_to_2347_is_refused_ieee_802_11_dot11rtsthreshold() {
    for bad in ["2348", "-1", "\"sometimes\""] {
        let (path, msg) = err_of(&edit("rts_threshold = 1000", &format!("rts_threshold = {bad}")));
        assert_eq!(path, "channels.0.rts_threshold");
        assert!(msg.starts_with("must be 0-2347 bytes or \"off\""), "{msg}");
    }
    assert!(Scenario::from_toml(&edit("rts_threshold = 1000", "rts_threshold = 0")).is_ok());
    assert!(Scenario::from_toml(&edit("rts_threshold = 1000", "rts_threshold = 2347")).is_ok());
}

#[test]
fn an_mtu_above_the_largest_msdu_is_refused_seed_003_s3() {
    let (path, msg) = err_of(&edit("rts_threshold = 1000", "rts_threshold = 1000\nmtu = 2297"));
    assert_eq!(path, "channels.0.mtu");
    assert!(msg.contains("between 128 and 2296 bytes"), "{msg}");
    // 2296, the seeds' largest MTU, is allowed, and the flow's segments follow it.
    let s = Scenario::from_toml(&edit("rts_threshold = 1000", "rts_threshold = 1000\nmtu = 2296")).unwrap();
    assert_eq!(tcpenergy_engine::plan::Plan::of(&s).unwrap().flows[0].first.path_mtu, 2296);
}

#[test]
fn a_node_on_two_channels_with_conflicting_rates_is_refused() {
    let second = "[[channels]]\nname = \"other\"\nnodes = [\"b\", \"c\"]\ndata_rate = \"5.5Mbps\"\n";
    let (path, msg) = err_of(&format!("{}{second}", base()));
    assert_eq!(path, "channels.1.data_rate");
    assert!(msg.contains("node \"b\" is also on channels.0 (802.11b at 11Mbps)"), "{msg}");
    let same = second.replace("5.5Mbps", "11Mbps");
    assert!(Scenario::from_toml(&format!("{}{same}", base())).is_ok());
}

#[test]
fn impairments_that_delay_or_reorder_belong_in_a_pipe_not_a_channel() {
    let (path, msg) = err_of(&edit("rts_threshold = 1000", "rts_threshold = 1000\nimpairments = [{ kind = \"reorder\", fraction = 0.1, extra_delay = \"5ms\" }]"));
    assert_eq!(path, "channels.0.impairments.0.kind");
    assert!(msg.contains("[[pipes]]"), "{msg}");
    let (path, _) = err_of(&edit("rts_threshold = 1000", "rts_threshold = 1000\nimpairments = [{ kind = \"bernoulli\", p = 1.5 }]"));
    assert_eq!(path, "channels.0.impairments.0.p");
}

#[test]
fn a_pipe_must_sit_between_neighbours_and_a_channel_needs_two_nodes() {
    let hears = edit("rts_threshold = 1000", "rts_threshold = 1000\nhears = [[\"a\", \"b\"], [\"b\", \"c\"]]");
    let (path, msg) = err_of(&format!("{hears}[[pipes]]\nfrom = \"a\"\nto = \"c\"\ndelay = \"10ms\"\n"));
    assert_eq!(path, "pipes.0.to");
    assert!(msg.contains("no link or channel carries packets from \"a\" to \"c\""), "{msg}");
    let (path, _) = err_of(&format!("{}[[pipes]]\nfrom = \"a\"\nto = \"b\"\ndelay = 5\n", base()));
    assert_eq!(path, "pipes.0.delay");
    let (path, msg) = err_of(&edit("nodes = [\"a\", \"b\", \"c\"]", "nodes = [\"a\"]"));
    assert_eq!(path, "channels.0.nodes");
    assert!(msg.contains("at least two nodes"), "{msg}");
    let (path, _) = err_of(&edit("rts_threshold = 1000", "rts_threshold = 1000\nshort_retry_limit = 0"));
    assert_eq!(path, "channels.0.short_retry_limit");
    let (path, _) = err_of(&edit("rts_threshold = 1000", "rts_threshold = 1000\nwidth = 20"));
    assert_eq!(path, "channels.0.width");
}

#[test]
fn a_channel_faster_than_a_members_radio_is_refused() {
    let text = format!("[energy]\ndefault_profile = \"singh2002-toshiba-wavelan\"\n{}", base())
        .replace("standard = \"802.11b\"", "standard = \"802.11g\"")
        .replace("data_rate = \"11Mbps\"", "data_rate = \"54Mbps\"");
    let (path, msg) = err_of(&text);
    assert_eq!(path, "channels.0.data_rate");
    assert!(msg.contains("54Mbps is faster than the radio of node \"a\"") && msg.contains("11Mbps"), "{msg}");
    // An 802.11n channel's rate comes from its MCS: the error names that key and the way out.
    let text = format!("[energy]\ndefault_profile = \"singh2002-toshiba-wavelan\"\n{}", base())
        .replace("standard = \"802.11b\"", "standard = \"802.11n\"")
        .replace("data_rate = \"11Mbps\"\nbasic_rate = \"2Mbps\"", "mcs = 2\nbandwidth = \"20MHz\"");
    let (path, msg) = err_of(&text);
    assert_eq!(path, "channels.0.mcs");
    assert!(msg.starts_with("19500kbps is faster than the radio of node \"a\"") && msg.contains("a profile without radio.phy"), "{msg}");
}

#[test]
fn power_save_settings_out_of_range_are_refused_with_the_key_path_802_11_11_2_3() {
    let (path, msg) = err_of(&edit("rts_threshold = 1000", "ap = \"x\""));
    assert_eq!(path, "channels.0.ap");
    assert!(msg.contains("unknown node \"x\""), "{msg}");
    let with_d = base().replace("c = {}\n", "c = {}\nd = {}\n");
    let (path, msg) = err_of(&with_d.replace("rts_threshold = 1000", "ap = \"d\""));
    assert_eq!(path, "channels.0.ap");
    assert_eq!(msg, "node \"d\" is not on this channel; its nodes are a, b, c");
    let (path, msg) = err_of(&edit("rts_threshold = 1000", "beacon_interval = \"100ms\""));
    assert_eq!(path, "channels.0.beacon_interval");
    assert!(msg.contains("set ap = \"<node>\""), "{msg}");
    let (path, msg) = err_of(&edit("rts_threshold = 1000", "ap = \"b\"\nlisten_interval = 0"));
    assert_eq!(path, "channels.0.listen_interval");
    assert_eq!(msg, "must be 1-65535 beacons, got 0");
    let (path, msg) = err_of(&edit("rts_threshold = 1000", "ap = \"b\"\nbeacon_interval = \"1ms\""));
    assert_eq!(path, "channels.0.beacon_interval");
    assert!(msg.contains("at least 1 time unit (1.024ms)"), "{msg}");
    let (path, msg) = err_of(&edit("rts_threshold = 1000", "ap = \"a\"\nhears = [[\"a\", \"b\"], [\"b\", \"c\"]]"));
    assert_eq!(path, "channels.0.hears");
    assert!(msg.starts_with("\"c\" does not hear the access point \"a\""), "{msg}");
}

#[test]
fn the_psm_policy_without_an_access_point_is_refused_and_names_the_other_policies() {
    let (path, msg) = err_of(&format!("[energy]\nradio_policy = \"psm\"\n{}", base()));
    assert_eq!(path, "energy.radio_policy");
    assert!(msg.contains("needs an access point") && msg.contains("always_on, ideal, idle_timeout"), "{msg}");
    let ok = format!("[energy]\nradio_policy = \"psm\"\n{}", edit("rts_threshold = 1000", "ap = \"b\""));
    Scenario::from_toml(&ok).unwrap();
}

#[test]
fn only_a_udp_flow_can_be_echoed_rfc_862() {
    let (path, msg) = err_of(&edit("traffic = { kind = \"bulk\", bytes = \"1MB\" }", "traffic = { kind = \"bulk\", bytes = \"1MB\" }\necho = true"));
    assert_eq!(path, "flows.0.echo");
    assert!(msg.contains("only a UDP flow is echoed"), "{msg}");
}
