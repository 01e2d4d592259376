"""tcpenergy.topology: the seed-004 dumbbell (§5.3, spec d.5) and the seed-000/002 chain as
scenario dicts, their TOML form and the generator's command line. No engine run: structure only."""

from __future__ import annotations

import sys

import pytest

from tcpenergy import topology

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def _us(text: str) -> int:
    assert text.endswith("us"), text
    return int(text[:-2])


def _impaired_directions(scenario: dict) -> list:
    """(from, to) of every link direction that carries an impairment."""
    out = []
    for link in scenario["links"]:
        a, b = link["between"]
        if link.get("forward", {}).get("impairments"):
            out.append((a, b))
        if link.get("reverse", {}).get("impairments"):
            out.append((b, a))
    return out


# --------------------------------------------------------------------------------------------
# dumbbell


@pytest.mark.parametrize("n", [1, 10, 30, 100])
def test_dumbbell_has_n_sources_two_routers_n_sinks_and_2n_plus_1_links_seed004_s5_3(n):
    sc = topology.dumbbell(flows=n)
    assert list(sc["nodes"]) == ([f"s{i}" for i in range(1, n + 1)] + ["r1", "r2"]
                                 + [f"d{i}" for i in range(1, n + 1)])
    pairs = [tuple(link["between"]) for link in sc["links"]]
    assert pairs == ([(f"s{i}", "r1") for i in range(1, n + 1)] + [("r1", "r2")]
                     + [("r2", f"d{i}") for i in range(1, n + 1)])
    assert [(f["name"], f["from"], f["to"]) for f in sc["flows"]] == [
        (f"f{i}", f"s{i}", f"d{i}") for i in range(1, n + 1)]


def test_dumbbell_every_flow_is_timed_tcp_of_the_variant_and_ends_when_the_run_stops():
    sc = topology.dumbbell(flows=5, variant="sack", duration="60s")
    assert sc["stop_after"] == "60s"
    for flow in sc["flows"]:
        assert flow["transport"] == "tcp"
        assert flow["tcp"] == {"variant": "sack"}
        start_us = int(flow["start"].removesuffix("us"))
        assert flow["traffic"] == {"kind": "timed", "duration": f"{60_000_000 - start_us}us"}


def test_dumbbell_link_rates_delays_queue_and_mtu_follow_the_arguments():
    sc = topology.dumbbell(flows=2, access_rate="100Mbps", bottleneck_rate="5Mbps",
                           access_delay="2ms", bottleneck_delay="30ms", queue=40, mtu=576)
    by_pair = {tuple(link["between"]): link for link in sc["links"]}
    assert (by_pair[("r1", "r2")]["rate"], by_pair[("r1", "r2")]["delay"]) == ("5Mbps", "30ms")
    for pair in [("s1", "r1"), ("s2", "r1"), ("r2", "d1"), ("r2", "d2")]:
        assert (by_pair[pair]["rate"], by_pair[pair]["delay"]) == ("100Mbps", "2ms")
    assert {link["queue"] for link in sc["links"]} == {40}
    assert {link["mtu"] for link in sc["links"]} == {576}


def test_dumbbell_packet_errors_only_on_r2_to_sink_directions_seed004_s5_3():
    # Seed 004 §5.3: Bernoulli PER "on the access links at the sink nodes"; the data direction.
    sc = topology.dumbbell(flows=4, per=0.05)
    assert _impaired_directions(sc) == [("r2", f"d{i}") for i in range(1, 5)]
    for link in sc["links"]:
        if link["between"][0] == "r2":
            assert link["forward"] == {"impairments": [{"kind": "bernoulli", "p": 0.05}]}
        assert "reverse" not in link


def test_dumbbell_without_packet_errors_has_no_impairment_at_all():
    sc = topology.dumbbell(flows=4, per=0)
    assert _impaired_directions(sc) == []
    assert not any("forward" in link for link in sc["links"])


@pytest.mark.parametrize("n", [1, 3, 30, 300])
def test_dumbbell_starts_are_distinct_whole_microseconds_within_the_window_seed004_s5_3_3(n):
    # Seed 004 §5.3.3: all flows start within the first 2 s; here evenly, the first at 0.
    starts = [_us(f["start"]) for f in topology.dumbbell(flows=n, start_within="2s")["flows"]]
    assert starts[0] == 0
    assert all(0 <= s < 2_000_000 for s in starts)
    assert len(set(starts)) == n
    assert starts == sorted(starts)
    assert starts == [k * 2_000_000 // n for k in range(n)]


def test_dumbbell_start_of_flow_i_is_i_minus_1_times_window_over_n_rounded_down():
    starts = [f["start"] for f in topology.dumbbell(flows=3, start_within="2s")["flows"]]
    assert starts == ["0us", "666666us", "1333333us"]


def test_dumbbell_zero_start_window_starts_every_flow_at_once():
    starts = {f["start"] for f in topology.dumbbell(flows=10, start_within="0s")["flows"]}
    assert starts == {"0us"}


def test_dumbbell_writes_the_matched_tcp_defaults_and_one_energy_profile():
    sc = topology.dumbbell(flows=2)
    assert sc["tcp"] == topology.TCP_DEFAULTS
    assert sc["energy"] == {"default_profile": "singh2002-toshiba-wavelan",
                            "radio_policy": "always_on"}
    assert all(settings == {} for settings in sc["nodes"].values())
    sc["tcp"]["initial_window"] = 10  # each scenario owns its tables, nested ones included
    sc["tcp"]["delayed_ack"]["every"] = 1
    fresh = topology.dumbbell(flows=2)["tcp"]
    assert (fresh["initial_window"], fresh["delayed_ack"]["every"]) == (2, 2)


def test_dumbbell_name_says_flows_and_per_unless_given():
    assert topology.dumbbell(flows=30, per=0.01)["name"] == "dumbbell-30-flows-per-0.01"
    assert topology.dumbbell(name="mine")["name"] == "mine"


@pytest.mark.parametrize("kwargs, argument", [
    ({"flows": 0}, "flows"),
    ({"flows": 2.5}, "flows"),
    ({"flows": True}, "flows"),
    ({"per": -0.1}, "per"),
    ({"per": 1.5}, "per"),
    ({"per": "0.01"}, "per"),
    ({"variant": ""}, "variant"),
    ({"duration": "0s"}, "duration"),
    ({"duration": "120"}, "duration"),
    ({"duration": 120}, "duration"),
    ({"access_rate": "10MBps"}, "access_rate"),
    ({"bottleneck_rate": "0Mbps"}, "bottleneck_rate"),
    ({"access_delay": "-1ms"}, "access_delay"),
    ({"bottleneck_delay": "20 parsecs"}, "bottleneck_delay"),
    ({"queue": 0}, "queue"),
    ({"mtu": 100}, "mtu"),
    ({"mtu": 70_000}, "mtu"),
    ({"start_within": "121s"}, "start_within"),
    ({"flows": 30, "start_within": "29us"}, "start_within"),
    ({"name": ""}, "name"),
])
def test_dumbbell_bad_argument_raises_value_error_naming_it(kwargs, argument):
    with pytest.raises(ValueError, match=rf"^{argument}: "):
        topology.dumbbell(**kwargs)


# --------------------------------------------------------------------------------------------
# chain


def test_chain_of_three_hops_is_a_b_c_d_with_one_bulk_flow_end_to_end_seed000_s5():
    # Seed 000 / 002 testbeds: sender A -> B -> C -> receiver D, one 5 MB transfer.
    sc = topology.chain()
    assert list(sc["nodes"]) == ["a", "b", "c", "d"]
    assert [link["between"] for link in sc["links"]] == [["a", "b"], ["b", "c"], ["c", "d"]]
    assert {(link["rate"], link["delay"]) for link in sc["links"]} == {("11Mbps", "1ms")}
    [flow] = sc["flows"]
    assert (flow["from"], flow["to"], flow["transport"]) == ("a", "d", "tcp")
    assert flow["traffic"] == {"kind": "bulk", "bytes": "5MB"}
    assert flow["tcp"] == {"variant": "sack"}


def test_chain_packet_errors_only_on_the_last_hop_towards_the_receiver():
    assert _impaired_directions(topology.chain(hops=4, per=0.05)) == [("d", "e")]
    assert _impaired_directions(topology.chain(hops=4, per=0.0)) == []


def test_chain_node_names_continue_past_z():
    names = topology.chain(hops=27)["nodes"]
    assert list(names)[-3:] == ["z", "aa", "ab"]
    assert len(set(names)) == 28


@pytest.mark.parametrize("kwargs, argument", [
    ({"hops": 0}, "hops"), ({"rate": "fast"}, "rate"), ({"delay": "1"}, "delay"),
    ({"queue": -1}, "queue"), ({"mtu": 64}, "mtu"), ({"per": 2}, "per"),
    ({"variant": None}, "variant"), ({"bytes": "0MB"}, "bytes"), ({"bytes": "5 lots"}, "bytes"),
])
def test_chain_bad_argument_raises_value_error_naming_it(kwargs, argument):
    with pytest.raises(ValueError, match=rf"^{argument}: "):
        topology.chain(**kwargs)


# --------------------------------------------------------------------------------------------
# TOML and the command line


@pytest.mark.parametrize("scenario", [topology.dumbbell(flows=7, per=0.02), topology.chain(per=0.1)],
                         ids=["dumbbell", "chain"])
def test_to_toml_reads_back_as_the_same_scenario(scenario):
    assert tomllib.loads(topology.to_toml(scenario)) == scenario


def test_to_toml_writes_links_and_flows_as_arrays_of_tables_and_nodes_one_per_line():
    text = topology.to_toml(topology.dumbbell(flows=2, per=0.01))
    assert text.count("[[links]]") == 5
    assert text.count("[[flows]]") == 2
    assert "\n[nodes]\ns1 = {}\ns2 = {}\nr1 = {}\n" in text


def test_cli_writes_the_dumbbell_as_toml_on_stdout(capsys):
    assert topology.main(["dumbbell", "--flows", "30", "--per", "0.01"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# Written by: python -m tcpenergy.topology dumbbell --flows 30")
    assert tomllib.loads(out) == topology.dumbbell(flows=30, per=0.01)


def test_cli_bad_argument_exits_2_with_one_line_naming_it_and_writes_no_file(tmp_path, capsys):
    target = tmp_path / "out.toml"
    assert topology.main(["dumbbell", "--per", "1.5", "-o", str(target)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: per: ") and err.count("\n") == 1
    assert not target.exists()


def test_to_toml_keeps_the_header_as_comments():
    text = topology.to_toml(topology.chain(), header="line one\nline two")
    assert text.startswith("# line one\n# line two\n\n")


def test_cli_output_option_writes_the_chain(tmp_path):
    target = tmp_path / "chain.toml"
    assert topology.main(["chain", "--hops", "2", "-o", str(target)]) == 0
    assert tomllib.loads(target.read_text()) == topology.chain(hops=2)
