"""`tcpenergy report STORE --out DIR`: a report from a store; bad input exits 2 writing nothing."""

from __future__ import annotations

import itertools
import json

import pytest
from report_data import QUICKSTART

import tcpenergy
from tcpenergy.experiments.store import open_store


def assert_user_error(result, *expected):
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("error: ")
    assert "Traceback" not in result.stderr
    for text in expected:
        assert text in result.stderr


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """A store holding a small variant x RTT sweep, two seeds, one failed run."""
    path = tmp_path_factory.mktemp("store") / "small.duckdb"
    scenario = tcpenergy.load_scenario(QUICKSTART)
    rows = []
    for cell, (variant, rtt) in enumerate(itertools.product(("reno", "sack"), ("20ms", "60ms"))):
        one_way = f"{int(rtt[:-2]) // 2}ms"
        overrides = {"tcp.variant": variant, "path.forward.delay": one_way,
                     "path.reverse.delay": one_way, "traffic.bytes": "100KB"}
        for seed in (1, 2):
            failed = (cell, seed) == (3, 2)
            result = None if failed else tcpenergy.run(scenario, seed=seed, **overrides)
            rows.append({
                "run_key": f"cell{cell}-{seed}", "scenario_hash": f"cell{cell}", "seed": seed,
                "engine_version": tcpenergy.engine_version(), "sweep": "small", "cell": cell,
                "status": "failed" if failed else "ok", "error": "boom" if failed else None,
                "labels": json.dumps({"tcp.variant": variant, "rtt": rtt}),
                "scenario": json.dumps(tcpenergy.validate(scenario, **overrides)),
                "result": None if failed else json.dumps(result), "wall_s": 0.001})
    with open_store(path, create=True) as created:
        created.write(rows)
    return path


def test_report_command_writes_the_report_of_a_store(cli, store, tmp_path):
    out = tmp_path / "report"
    result = cli("report", store, "--out", out, "--level", "0.9", "--title", "Small sweep")
    assert result.exit_code == 0, result.output + result.stderr
    assert "index.html" in result.stdout
    for name in ("index.html", "report.md", "summary.csv", "ranking.csv",
                 "figures/energy_per_bit.png", "figures/goodput.svg"):
        assert (out / name).is_file(), name
    text = (out / "report.md").read_text(encoding="utf-8")
    assert text.startswith("# Small sweep")
    assert "**Runs**: 8 (7 complete, 0 incomplete, 1 failed)" in text
    assert "90 % confidence interval" in text


def test_missing_store_exits_2_and_writes_nothing(cli, tmp_path):
    result = cli("report", tmp_path / "nope.duckdb", "--out", tmp_path / "report")
    assert_user_error(result, "nope.duckdb")
    assert list(tmp_path.iterdir()) == []


def test_a_file_that_is_not_a_store_exits_2_is_left_untouched_and_nothing_is_written(cli, tmp_path):
    bogus = tmp_path / "results.duckdb"
    bogus.write_text("not a database")
    result = cli("report", bogus, "--out", tmp_path / "report")
    assert_user_error(result, "not a tcpenergy store")
    assert bogus.read_text() == "not a database"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.duckdb"]


def test_an_empty_store_exits_2(cli, tmp_path):
    path = tmp_path / "empty.duckdb"
    open_store(path, create=True).close()
    result = cli("report", path, "--out", tmp_path / "report")
    assert_user_error(result, "no runs")
    assert not (tmp_path / "report").exists()


@pytest.mark.parametrize("level", ["0", "1", "95"])
def test_a_confidence_level_outside_0_1_exits_2(cli, store, tmp_path, level):
    result = cli("report", store, "--out", tmp_path / "report", "--level", level)
    assert_user_error(result, "--level")
    assert list(tmp_path.iterdir()) == []


def test_an_out_path_that_is_a_file_exits_2(cli, store, tmp_path):
    target = tmp_path / "report"
    target.write_text("keep")
    result = cli("report", store, "--out", target)
    assert_user_error(result, "not a directory")
    assert target.read_text() == "keep"


def test_an_unknown_sweep_name_exits_2_naming_the_sweeps_the_store_holds(cli, store, tmp_path):
    result = cli("report", store, "--out", tmp_path / "report", "--sweep", "other")
    assert_user_error(result, "'other'", "small")
    assert list(tmp_path.iterdir()) == []


def test_report_of_a_real_sweep_ranks_its_variants_per_condition(cli, tmp_path):
    from tcpenergy.experiments.runner import sweep

    spec = {"base": str(QUICKSTART), "repetitions": 2, "name": "rank-check",
            "axes": {"tcp.variant": ["reno", "sack"], "rtt": ["20ms", "60ms"], "path.mtu": [512, 1500]},
            "set": {"traffic.bytes": "100KB"}}
    store_path = tmp_path / "sweep.duckdb"
    sweep(spec, store=store_path, jobs=1, progress=False)
    out = tmp_path / "report"
    result = cli("report", store_path, "--out", out)
    assert result.exit_code == 0, result.output + result.stderr
    ranking = (out / "ranking.csv").read_text(encoding="utf-8").splitlines()
    assert ranking[0].startswith("label.path.mtu,metric,")
    assert len(ranking) == 1 + 2 * 3  # two MTU conditions x three metrics
    text = (out / "report.md").read_text(encoding="utf-8")
    assert "**Axis RTT**: 20ms, 60ms (x axis)" in text
    assert "**Axis MTU**: 512, 1500 (panels)" in text
