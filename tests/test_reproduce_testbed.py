"""`tcpenergy reproduce seed-000|seed-002 --network testbed`: the seeds' 802.11b chain with Dummynet at
node c (seed 000 §5, seed 002 §5), the sweep keys and result columns of the two networks, and claim
S000-C42 (RTS/CTS on "quite similar" to off, seed 000 §5.1 and footnote 3) judged from runs."""

from __future__ import annotations

import dataclasses
import itertools
from pathlib import Path

import pandas as pd
import pytest

import tcpenergy
from tcpenergy.experiments.spec import expand, load_sweep
from tcpenergy.reproduce import claims as C
from tcpenergy.reproduce import common, networks
from tcpenergy.reproduce import seed000 as S0
from tcpenergy.reproduce.seed000 import claims as E0
from tcpenergy.reproduce import seed002 as S2

REPO = Path(__file__).resolve().parent.parent


def _tiny(scenario, size="30KB"):
    return tcpenergy.run(scenario, seed=1, **{"flows.0.traffic.bytes": size})


# --------------------------------------------------------------------------------------------
# Base scenarios and sweeps
# --------------------------------------------------------------------------------------------

def test_seed000_table1_testbed_base_is_the_shipped_testbed_scenario_seed_000_s5():
    shipped = tcpenergy.validate(tcpenergy.load_scenario(REPO / "scenarios" / "singh2002-testbed.toml"))
    built = tcpenergy.validate(S0.testbed_random_loss_base())
    shipped.pop("name"), built.pop("name")
    assert built == shipped


def test_rts_cts_sweep_differs_from_table1_only_in_the_threshold_seed_000_s5_1():
    exps = {e.name: e for e in S0.experiments(quick=True, network=networks.TESTBED)}
    off, on = exps[S0.RANDOM], exps[S0.RANDOM_RTS]
    assert off.axes == on.axes and off.repetitions == on.repetitions
    assert off.base["channels"][0]["rts_threshold"] == "off"
    assert on.base["channels"][0]["rts_threshold"] == S0.RTS_ON == 0
    strip = lambda b: {**b, "name": None, "channels": [{**b["channels"][0], "rts_threshold": None}]}  # noqa: E731
    assert strip(off.base) == strip(on.base)
    assert S0.RANDOM_RTS not in {e.name for e in S0.experiments(quick=True, network=networks.PATH)}


@pytest.mark.parametrize("paper", [S0, S2])
def test_every_testbed_sweep_validates_and_varies_the_pipes_and_the_channel(paper):
    path_only = {S0.DROPS, S0.CITED7} | {e.name for e in S2.experiments() if e.name.startswith("s002-congestion")}
    for exp in paper.experiments(quick=True, network=networks.TESTBED):
        runs = expand(load_sweep(exp.sweep_document(exp.base)))
        assert len(runs) == exp.cells() * len(exp.seed_list()), exp.name
        keys = set(exp.axes) | set(exp.fixed)
        if exp.name in path_only:
            assert "path" in exp.base, exp.name
            continue
        assert "channels" in exp.base and not any(k.startswith("path.") or k == "rtt" for k in keys), exp.name
        assert "pipes.0.delay" in exp.axes, exp.name  # the RTT is Dummynet's delay on c -> d


def test_seed002_rtt_range_is_the_pipe_delay_plus_fifo_jitter_and_congestion_stays_on_the_path_seed_002_t2():
    exps = {e.name: e for e in S2.experiments(network=networks.TESTBED)}
    rand = exps[S2.sweep_name(S2.RANDOM, (30, 50))]
    pipe = rand.base["pipes"][0]
    assert (pipe["from"], pipe["to"]) == ("c", "d") and rand.axes["pipes.0.delay"] == ["30ms"]
    assert pipe["impairments"][0] == {"kind": "jitter", "min": "0ms", "max": "20ms", "keep_order": True}
    assert networks.testbed_key(S2.LOSS_KEY) in rand.axes and pipe["impairments"][1]["kind"] == "bernoulli"
    route = exps[S2.sweep_name(S2.ROUTE, (10, 20))].base
    assert route["pipes"][0]["impairments"][2]["notify"]["restore"] is True
    assert route["pipes"][1]["to"] == "b" and route["pipes"][1]["impairments"][0]["kind"] == "outage"
    assert route["stop_after"] == S2.ROUTE_STOP_AFTER
    cong = exps[S2.sweep_name(S2.CONGESTION, (10, 20))]
    assert cong.base["path"]["forward"]["red"]["ecn"] is True


def _testbed_bases():
    yield "s000 random", S0.testbed_random_loss_base()
    yield "s000 rts/cts", S0.testbed_random_loss_base(S0.RTS_ON)
    yield "s000 bursty", S0.testbed_bursty_loss_base()
    yield "s000 reordering", S0.testbed_reordering_base(0.05)
    yield "s000 what-if", S0.testbed_whatif_base()
    yield "s002 route failure", S2.testbed_route_failure_base((10, 20))
    yield "s002 reordering", S2.testbed_reordering_base((10, 20), 0.05)
    yield "s002 random", S2.testbed_random_loss_base((10, 20))
    yield "s002 bursty", S2.testbed_bursty_loss_base((10, 20))


@pytest.mark.parametrize("name,base", list(_testbed_bases()), ids=[n for n, _ in _testbed_bases()])
def test_testbed_base_completes_a_tiny_transfer_across_the_chain_and_dummynet(name, base):
    record = _tiny(base)
    assert record["complete"], name
    assert record["flow"]["bytes_delivered"] == 30_000
    # Every data packet crosses Dummynet at c on its way to d; ACKs cross the pipe towards b when
    # the condition hits them too.
    assert record["pipes"]["c->d"]["packets"] >= record["flow"]["data_segments_sent"] - record["pipes"]["c->d"]["dropped"] > 0
    assert ("c->b" in record["pipes"]) == (len(base["pipes"]) == 2)
    assert record["nodes"]["b"]["forwarded_packets"] > 0 and record["nodes"]["c"]["forwarded_packets"] > 0
    rts = record["channels"]["adhoc"]["rts_sent"]
    assert (rts > 0) == (base["channels"][0]["rts_threshold"] == 0)


# --------------------------------------------------------------------------------------------
# Keys and columns: the one place the two forms meet
# --------------------------------------------------------------------------------------------

def test_path_keys_translate_to_the_dummynet_pipes_the_channel_and_the_flows_nodes():
    assert networks.testbed_key("rtt") == "pipes.0.delay"
    assert networks.testbed_key("path.mtu") == "channels.0.mtu"
    assert networks.testbed_key(S0.LOSS_KEY) == "pipes.0.impairments.0.p"
    assert [networks.testbed_key(k) for k in S0.REORDER_KEYS] == ["pipes.0.impairments.0.fraction",
                                                                "pipes.1.impairments.0.fraction"]
    assert networks.testbed_key(S0.BASE_POWER_KEY) == "nodes.a.profile.platform.base_power_w"
    assert networks.testbed_key("tcp.variant") == "tcp.variant"
    with pytest.raises(ValueError, match="path.forward.rate"):
        networks.testbed_key("path.forward.rate")


def test_logical_columns_name_testbed_runs_as_path_runs_and_leave_path_runs_alone():
    frame = pd.DataFrame([
        {"sweep": "s", "path.mtu": 512, S0.LOSS_KEY: 0.01, "label.rtt": "15ms",
         "path.forward.dropped_channel": 3, "path.forward.packets_sent": 100},
        {"sweep": "s", "channels.0.mtu": 1500, "pipes.0.impairments.0.p": 0.05, "label.pipes.0.delay": "40ms",
         "pipes.0.delay": "40ms", "pipes.c->d.dropped": 7, "pipes.c->d.packets": 200, "pipes.c->b.dropped": 1,
         "label.nodes.a.profile.platform.base_power_w": 0.0},
    ])
    out = networks.logical_columns(frame)
    assert out["path.mtu"].tolist() == [512, 1500]
    assert out[S0.LOSS_KEY].tolist() == [0.01, 0.05]
    assert out["label.rtt"].tolist() == ["15ms", "40ms"]
    assert out["path.forward.dropped_channel"].tolist() == [3, 7]
    assert out["path.forward.packets_sent"].tolist() == [100, 200]
    assert out["path.reverse.dropped_channel"].iloc[1] == 1 and pd.isna(out["path.reverse.dropped_channel"].iloc[0])
    assert out["label." + S0.BASE_POWER_KEY].iloc[1] == 0.0
    assert "rtt" not in out.columns  # an axis, not a scenario key
    assert list(frame.columns) == list(out.columns)[:len(frame.columns)]  # the input is not modified


def test_select_runs_keeps_each_experiments_own_network_when_a_store_holds_both():
    exp = next(e for e in S0.experiments(quick=True, network=networks.TESTBED) if e.name == S0.RANDOM)
    frame = pd.DataFrame({"sweep": [S0.RANDOM] * 2, "seed": [1, 1], "status": ["ok", "ok"],
                          "name": [exp.base["name"], S0.random_loss_base()["name"]],
                          "engine_version": [tcpenergy.engine_version()] * 2})
    picked = common.select_runs(frame, [exp])
    assert picked["name"].tolist() == [exp.base["name"]]


def test_the_papers_testbed_is_the_default_network_and_the_path_is_asked_for(tmp_path):
    # Issue #26: seeds 000 and 002 are judged on what the papers measured, the 802.11b chain with
    # Dummynet at node c (seed 000 §5, seed 002 §5); `--network path` runs the abstraction.
    assert networks.choose_network(None, tmp_path) == networks.TESTBED
    assert networks.choose_network(networks.PATH, tmp_path) == networks.PATH
    networks.record_network(tmp_path, networks.PATH)
    assert networks.choose_network(None, tmp_path) == networks.PATH  # a rerun keeps OUT's network


def test_a_rerun_without_network_resumes_the_network_out_was_made_with(tmp_path):
    assert networks.recorded_network(tmp_path) is None
    networks.record_network(tmp_path, networks.TESTBED)
    assert networks.recorded_network(tmp_path) == networks.TESTBED
    (tmp_path / networks.NETWORK_FILE).write_text("wifi\n", encoding="utf-8")
    assert networks.recorded_network(tmp_path) is None  # not a network: the default applies


def test_the_sender_profile_of_a_testbed_scenario_is_node_as():
    assert common.node_profile(S0.testbed_whatif_base(), "sender")["name"] == S0.sleeping_radio_profile()["name"]
    assert common.node_profile(S0.testbed_whatif_base(), "receiver")["name"] == S0.DEVICE


# --------------------------------------------------------------------------------------------
# S000-C42: RTS/CTS on "quite similar" to off (seed 000 §5.1, footnote 3)
# --------------------------------------------------------------------------------------------

_E = {"sack": 10.0, "newreno": 10.6, "reno": 11.2}  # µJ/bit, ordered beyond the tie tolerance
_G = {"sack": 900e3, "newreno": 850e3, "reno": 800e3}  # bit/s


def _table1_runs(on_e=lambda v, e: e, on_g=lambda v, g: g):
    rows = []
    for sweep, (v, mtu, loss, rtt, seed) in itertools.product(
            (S0.RANDOM, S0.RANDOM_RTS), itertools.product(S0.VARIANTS, S0.MTUS, S0.LOSS_RATES, S0.RTTS, (1, 2))):
        on = sweep == S0.RANDOM_RTS
        e, g = _E[v] * (1 + 0.001 * seed), _G[v] * (1 - 0.001 * seed)
        rows.append({"sweep": sweep, "seed": seed, "status": "ok", "complete": True, "tcp.variant": v,
                     "label.tcp.variant": v, "path.mtu": mtu, S0.LOSS_KEY: loss, "label.rtt": rtt,
                     "energy.sender.per_bit_total_uj": on_e(v, e) if on else e,
                     "energy.sender.per_bit_idealized_uj": (on_e(v, e) if on else e) / 5,
                     "flow.goodput_bps": on_g(v, g) if on else g})
    return pd.DataFrame(rows)


def _c42(frame, network=networks.TESTBED):
    attempted = C.mark_settings(frame)
    ctx = E0.Context(runs=C.usable_runs(attempted), claims=[], attempted=attempted, network=network)
    return E0.c42(ctx, {"id": "S000-C42"})


def test_c42_holds_when_rts_cts_leaves_every_curve_within_the_tolerance_and_no_ordering_reverses():
    verdict = _c42(_table1_runs(on_e=lambda v, e: e * 1.09, on_g=lambda v, g: g * 0.92))
    assert verdict.status == C.HOLDS, verdict.evidence
    assert "orderings reversed: 0" in verdict.evidence


def test_c42_fails_when_goodput_with_rts_cts_falls_beyond_the_tolerance():
    verdict = _c42(_table1_runs(on_g=lambda v, g: g * (1 - E0.SIMILAR_REL - 0.01)))
    assert verdict.status == C.DOES_NOT_HOLD
    assert "tau" in verdict.explanation and len(verdict.data["beyond_tolerance"]) == 3 * 6


def test_c42_fails_when_an_ordering_reverses_even_if_every_mean_stays_close():
    swap = {"sack": _E["newreno"] / _E["sack"], "newreno": _E["sack"] / _E["newreno"], "reno": 1.0}
    verdict = _c42(_table1_runs(on_e=lambda v, e: e * swap[v]))
    assert verdict.status == C.DOES_NOT_HOLD
    assert verdict.data["beyond_tolerance"] == [] and verdict.data["reversals"]
    assert "NewReno > SACK off, < on" in verdict.data["reversals"][0]


def test_c42_is_not_modelled_on_the_path_and_says_where_it_is_judged():
    verdict = _c42(_table1_runs(), network=networks.PATH)
    assert verdict.status == C.NOT_MODELLED and "--network testbed" in verdict.explanation


def test_c49_counts_the_rts_cts_half_of_table1_on_the_testbed():
    runs = _table1_runs()
    entry = {"id": "S000-C49", "numbers": {"settings_random": 180, "settings_bursty": 0, "settings_reorder": 0}}
    attempted = C.mark_settings(runs)
    for network in (networks.TESTBED, networks.PATH):
        ctx = E0.Context(runs=C.usable_runs(attempted), claims=[], attempted=attempted, network=network)
        ctx.runs = ctx.runs.assign(**{E0.FRACTION_COL: 0.0})
        ctx.attempted = ctx.attempted.assign(**{E0.FRACTION_COL: 0.0})
        verdict = E0.c49(ctx, entry)
        # 90 settings per sweep: on the testbed both halves are counted; on the path the RTS/CTS-on
        # sweep does not exist, and the grid counts the off half twice.
        assert ("random loss 180 (RTS/CTS off 90 + on 90" in verdict.evidence) == (network == networks.TESTBED)


def _tiny_transform(exp):
    key = networks.testbed_key("traffic.bytes") if "channels" in exp.base else "traffic.bytes"
    return dataclasses.replace(exp, fixed={**exp.fixed, key: "20KB"}, seeds=[1])


def test_table1_on_the_testbed_with_rts_cts_off_and_on_judges_s000_c42_from_the_runs(tmp_path):
    """End to end on tiny transfers, one seed: both Table 1 sweeps into a store, then C42."""
    exps = [_tiny_transform(e) for e in S0.experiments(quick=True, network=networks.TESTBED)
            if e.name in (S0.RANDOM, S0.RANDOM_RTS)]
    out, sweeps, store = common.output_layout(tmp_path / "out")
    failed = common.run_experiments(exps, sweeps, store, 1, False, lambda m: None, S0.write_experiment)
    assert failed == 0
    frame = networks.logical_columns(common.load_runs(store))
    entries = [e for e in C.load_claims(S0.CLAIMS) if e["id"] == "S000-C42"]
    records = {r["id"]: r for r in E0.evaluate(common.select_runs(frame, exps, all_runs=True), entries,
                                               quick=True, network=networks.TESTBED)}
    c42 = records["S000-C42"]
    assert c42["status"] in (C.HOLDS, C.DOES_NOT_HOLD), c42
    assert c42["runs"] == c42["complete"] == 180 and sorted(c42["sweeps"]) == [S0.RANDOM, S0.RANDOM_RTS]
    assert "RTS/CTS off and on" in c42["evidence"]
    rts = frame[frame["sweep"] == S0.RANDOM_RTS]
    assert (rts["channels.adhoc.rts_sent"] > 0).all()
    assert (frame.loc[frame["sweep"] == S0.RANDOM, "channels.adhoc.rts_sent"] == 0).all()


# --------------------------------------------------------------------------------------------
# The command line
# --------------------------------------------------------------------------------------------

def test_an_unknown_network_is_one_line_exit_2_and_nothing_written(cli, tmp_path):
    result = cli("reproduce", "seed-000", "--network", "wifi", "--out", tmp_path / "x")
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert lines == ["error: --network must be one of testbed, path, got 'wifi'"]
    assert not (tmp_path / "x").exists()


def test_network_is_refused_for_a_paper_without_one(cli, tmp_path):
    result = cli("reproduce", "seed-003", "--part", "options", "--network", "path", "--out", tmp_path / "x")
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == ["error: seed-003 has no --network; it applies to seed-000, "
                                                  "seed-002"]
    assert not (tmp_path / "x").exists()


def test_sensitivity_refuses_the_testbed_asked_for_or_recorded_in_out(cli, tmp_path):
    result = cli("reproduce", "seed-000", "--network", "testbed", "--sensitivity", "platform.base_power_w",
                 "--out", tmp_path / "x")
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "--sensitivity runs on the path network only" in result.stderr
    out = tmp_path / "made"
    out.mkdir()
    networks.record_network(out, networks.TESTBED)
    result = cli("reproduce", "seed-002", "--sensitivity", "platform.base_power_w", "--out", out)
    assert result.exit_code == 2 and "holds a testbed reproduction" in result.stderr
    assert sorted(p.name for p in out.iterdir()) == [networks.NETWORK_FILE]


def test_the_python_entry_point_takes_the_network_and_refuses_it_where_it_does_not_apply(tmp_path):
    from tcpenergy.reproduce import reproduce

    with pytest.raises(ValueError, match="network must be one of testbed, path"):
        reproduce("seed-000", tmp_path / "a", quick=True, network="chain")
    with pytest.raises(ValueError, match="seed-003 has no network choice"):
        reproduce("seed-003", tmp_path / "b", quick=True, network="testbed")
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def _impairments(node, kind):
    """Every impairment of ``kind`` anywhere in a scenario table."""
    if isinstance(node, dict):
        if node.get("kind") == kind:
            yield node
        for value in node.values():
            yield from _impairments(value, kind)
    elif isinstance(node, list):
        for value in node:
            yield from _impairments(value, kind)


@pytest.mark.parametrize("network", [networks.TESTBED, networks.PATH])
def test_the_per_bit_loss_process_sizes_every_dummynet_loss_and_leaves_the_per_packet_runs_alone(network):
    # Seeds 000 and 002's `loss-process` reading (readings.yaml): Dummynet's per-packet loss is taken;
    # the per-bit alternative makes each rate that of a 1500-byte packet.
    from tcpenergy.reproduce import seed000, seed002

    for exp in seed000.experiments(True, network) + seed002.experiments(True, network):
        assert networks.with_loss_process(exp, networks.PER_PACKET) is exp
        sized = networks.with_loss_process(exp, networks.PER_BIT)
        assert all(b.get("reference_bytes") == networks.LOSS_REFERENCE_BYTES for b in _impairments(sized.base, "bernoulli"))
        assert not any("reference_bytes" in b for b in _impairments(exp.base, "bernoulli")), "the experiment is not modified"
    with pytest.raises(ValueError, match="loss process must be per-packet or per-bit"):
        networks.with_loss_process(seed000.experiments(True, network)[0], "per-byte")


def test_the_burst_cycle_reading_sets_the_bursty_period_on_both_networks_seed000_table2():
    # Table 2: 1 s of 85 % loss "every 12 seconds"; the text: after 12 s of zero loss (13 s).
    from tcpenergy.reproduce import readings, seed000

    declared = readings.load("tcpenergy.reproduce.seed000")
    for alt, every in (("table-12s", "12s"), ("text-13s", "13s")):
        choice = readings.check("seed-000", "tcpenergy.reproduce.seed000", {"burst-cycle": alt})
        with readings.active(choice):
            for network in (networks.PATH, networks.TESTBED):
                bursty = next(e for e in seed000.experiments(True, network) if e.name == seed000.BURSTY)
                bursts = list(_impairments(bursty.base, "periodic_burst"))
                assert bursts and all(b["every"] == every for b in bursts), (alt, network)
    assert declared["burst-cycle"].taken == "table-12s"
