//! Bad network scenarios give one error naming the key path and what is allowed (issue "Networks",
//! DESIGN.md "Networks").

use tcpenergy_engine::{EngineError, Scenario};

/// The chain a - b - c - d with one bulk flow from a to d.
fn base() -> String {
    format!("{}[[flows]]\nname = \"bulk\"\nfrom = \"a\"\nto = \"d\"\ntraffic = {{ kind = \"bulk\", bytes = \"5MB\" }}\n", include_str!("data/chain4.toml"))
}

fn err_of(text: &str) -> (String, String) {
    match Scenario::from_toml(text) {
        Err(EngineError::Config { path, message }) => (path, message),
        other => panic!("expected a config error for {text}, got {other:?}"),
    }
}

/// The base network with `old` replaced by `new` (which must occur).
fn edit(old: &str, new: &str) -> String {
    let base = base();
    assert!(base.contains(old), "{old}");
    base.replacen(old, new, 1)
}

#[test]
fn the_base_network_is_valid() {
    assert!(Scenario::from_toml(&base()).unwrap().network().is_some());
}

#[test]
fn an_unknown_node_in_a_flow_is_named_with_the_nodes_there_are() {
    let (path, msg) = err_of(&edit("to = \"d\"", "to = \"e\""));
    assert_eq!(path, "flows.0.to");
    assert_eq!(msg, "unknown node \"e\"; nodes are a, b, c, d");
}

#[test]
fn an_unknown_node_in_a_link_or_route_is_named() {
    let (path, _) = err_of(&edit("between = [\"b\", \"c\"]", "between = [\"b\", \"x\"]"));
    assert_eq!(path, "links.1.between.1");
    let (path, msg) = err_of(&format!("routes = [[\"a\", \"q\", \"d\"]]\n{}", base()));
    assert_eq!(path, "routes.0.1");
    assert!(msg.contains("unknown node \"q\""), "{msg}");
}

#[test]
fn a_flow_with_no_route_is_refused() {
    // c -> d one way only: d cannot answer a.
    let (path, msg) = err_of(&edit("between = [\"c\", \"d\"]", "between = [\"c\", \"d\"]\noneway = true"));
    assert_eq!(path, "flows.0.to");
    assert!(msg.contains("no route from \"d\" to \"a\""), "{msg}");
}

#[test]
fn duplicate_links_and_flows_are_refused() {
    let (path, msg) = err_of(&format!("{}[[links]]\nbetween = [\"b\", \"a\"]\n", base()));
    assert_eq!(path, "links.3.between");
    assert!(msg.contains("duplicate link") && msg.contains("links.0"), "{msg}");
    let (path, msg) = err_of(&format!("{}[[flows]]\nname = \"bulk\"\nfrom = \"b\"\nto = \"c\"\ntraffic = {{ kind = \"bulk\", bytes = \"1kB\" }}\n", base()));
    assert_eq!(path, "flows.1.name");
    assert!(msg.contains("duplicate flow name"), "{msg}");
}

#[test]
fn duplicate_node_names_are_refused_by_the_toml_reader() {
    // TOML itself forbids a key defined twice; the message says where.
    match Scenario::from_toml(&edit("b = {}", "b = {}\nb = {}")) {
        Err(EngineError::Config { message, .. }) => assert!(message.contains("duplicate key"), "{message}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_link_from_a_node_to_itself_is_refused() {
    let (path, msg) = err_of(&edit("between = [\"b\", \"c\"]", "between = [\"b\", \"b\"]"));
    assert_eq!(path, "links.1.between");
    assert!(msg.contains("two different nodes"), "{msg}");
}

#[test]
fn stop_before_start_is_refused() {
    let (path, msg) = err_of(&format!("{}start = \"10s\"\nstop = \"5s\"\n", base()));
    assert_eq!(path, "flows.0.stop");
    assert!(msg.contains("after start"), "{msg}");
}

#[test]
fn a_traffic_kinds_missing_or_negative_field_is_named() {
    let (path, msg) = err_of(&edit("traffic = { kind = \"bulk\", bytes = \"5MB\" }", "traffic = { kind = \"cbr\", packet = 200 }"));
    assert_eq!(path, "flows.0.traffic");
    assert!(msg.contains("missing field `rate`"), "{msg}");
    let (path, _) = err_of(&edit("traffic = { kind = \"bulk\", bytes = \"5MB\" }", "traffic = { kind = \"on_off\", message = -5, interval = \"1s\" }"));
    assert_eq!(path, "flows.0.traffic.message");
    let (path, msg) = err_of(&edit("traffic = { kind = \"bulk\", bytes = \"5MB\" }", "traffic = { kind = \"poisson\" }"));
    assert_eq!(path, "flows.0.traffic.kind");
    assert!(msg.contains("bulk, timed, on_off, cbr"), "{msg}");
}

#[test]
fn mixing_the_single_path_and_network_forms_is_refused() {
    let (path, msg) = err_of(&format!("{}[path]\nmtu = 512\n", base()));
    assert_eq!(path, "path");
    assert!(msg.contains("single-path form"), "{msg}");
    let (path, _) = err_of(&format!("{}[energy]\nsender = \"ideal-nic-0.3\"\n", base()));
    assert_eq!(path, "energy.sender");
}

#[test]
fn udp_needs_a_traffic_kind_with_its_own_pace_and_datagrams_that_fit_the_path_mtu() {
    let (path, _) = err_of(&edit("traffic = { kind = \"bulk\", bytes = \"5MB\" }", "transport = \"udp\"\ntraffic = { kind = \"bulk\", bytes = \"5MB\" }"));
    assert_eq!(path, "flows.0.traffic.kind");
    let text = edit("traffic = { kind = \"bulk\", bytes = \"5MB\" }", "transport = \"udp\"\ntraffic = { kind = \"cbr\", rate = \"1Mbps\", packet = 1480 }")
        .replacen("between = [\"b\", \"c\"]", "between = [\"b\", \"c\"]\nmtu = 1000", 1);
    let (path, msg) = err_of(&text);
    assert_eq!(path, "flows.0.traffic.packet");
    assert!(msg.contains("path MTU 1000") && msg.contains("at most 972"), "{msg}");
}

#[test]
fn a_link_faster_than_its_senders_radio_is_refused() {
    let (path, msg) = err_of(&edit("rate = \"10Mbps\"", "rate = \"54Mbps\""));
    assert_eq!(path, "links.0.forward.rate");
    assert!(msg.contains("node \"a\"") && msg.contains("11Mbps"), "{msg}");
}

#[test]
fn a_flows_own_tcp_settings_are_checked_under_its_key() {
    let (path, _) = err_of(&edit("traffic = { kind = \"bulk\"", "tcp = { variant = \"vegas\" }\ntraffic = { kind = \"bulk\""));
    assert_eq!(path, "flows.0.tcp.variant");
    let (path, _) = err_of(&edit("traffic = { kind = \"bulk\"", "tcp = { min_rto = \"0s\" }\ntraffic = { kind = \"bulk\""));
    assert_eq!(path, "flows.0.tcp.min_rto");
}

#[test]
fn flow_names_must_be_usable_as_column_names() {
    let (path, msg) = err_of(&edit("name = \"bulk\"", "name = \"a.b\""));
    assert_eq!(path, "flows.0.name");
    assert!(msg.contains("letters, digits"), "{msg}");
}
