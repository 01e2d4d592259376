"""Summaries: means with Student-t confidence intervals, equal to scipy's, per group
(docs/experiments.md, "Summaries")."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats
from sweep_support import write_sweep

import tcpenergy
from tcpenergy.experiments.stats import summarize, t_quantile


@pytest.mark.parametrize("df", [1, 2, 3, 4, 7, 9, 19, 29, 99, 999, 12345])
@pytest.mark.parametrize("p", [0.95, 0.975, 0.995, 0.6])
def test_t_quantile_equals_scipy(p, df):
    assert t_quantile(p, df) == pytest.approx(scipy_stats.t.ppf(p, df), rel=1e-10)


def test_confidence_intervals_equal_scipy_t_interval_on_known_data():
    rng = np.random.default_rng(7)
    groups = {"a": [1.0, 2.0, 4.0], "b": list(rng.normal(10, 3, size=10)), "c": [5.0, 5.5]}
    frame = pd.DataFrame([{"label.g": g, "status": "ok", "x": v} for g, vs in groups.items()
                          for v in vs])
    summary = summarize(frame, metrics=["x"]).set_index("label.g")
    for group, values in groups.items():
        row = summary.loc[group]
        mean, sem = np.mean(values), scipy_stats.sem(values)
        assert row["n"] == len(values)
        assert row["mean"] == pytest.approx(mean, rel=1e-12)
        assert row["std"] == pytest.approx(np.std(values, ddof=1), rel=1e-12)
        for level, name in ((0.90, "ci90"), (0.95, "ci95")):
            low, high = scipy_stats.t.interval(level, len(values) - 1, loc=mean, scale=sem)
            assert row[f"{name}_low"] == pytest.approx(low, rel=1e-9)
            assert row[f"{name}_high"] == pytest.approx(high, rel=1e-9)


def test_interval_is_nan_for_a_single_run_and_groups_keep_first_seen_order():
    frame = pd.DataFrame({"label.v": ["sack", "reno", "reno"], "x": [1.0, 2.0, 3.0]})
    summary = summarize(frame, metrics=["x"], levels=(0.99,))
    assert summary["label.v"].tolist() == ["sack", "reno"]
    assert math.isnan(summary.loc[0, "ci99_low"]) and math.isnan(summary.loc[0, "std"])
    assert not math.isnan(summary.loc[1, "ci99_high"])


def test_only_ok_runs_count_and_failed_ones_are_reported():
    frame = pd.DataFrame({"label.v": ["a", "a", "a"], "status": ["ok", "ok", "failed"],
                          "x": [1.0, 3.0, np.nan], "error": [None, None, "EngineError: boom"]})
    summary = summarize(frame, metrics=["x"])
    assert summary.loc[0, "n"] == 2 and summary.loc[0, "mean"] == 2.0
    assert (summary.loc[0, "runs"], summary.loc[0, "complete"]) == (3, 2)
    attrs = summary.attrs
    assert (attrs["runs"], attrs["complete"], attrs["failed"], attrs["incomplete"]) == (3, 2, 1, 0)
    assert [(r["status"], r["reason"]) for r in attrs["left_out"]] == [
        ("failed", "failed: EngineError: boom")]


def test_unknown_group_column_is_a_key_error():
    with pytest.raises(KeyError, match="label.nope"):
        summarize(pd.DataFrame({"x": [1.0]}), by=["label.nope"], metrics=["x"])


@pytest.fixture(scope="module")
def store_path(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("stats")
    path = write_sweep(tmp / "g.toml", {"tcp.variant": ["reno", "sack"], "rtt": ["15ms", "40ms"]},
                       repetitions=3)
    return tcpenergy.sweep(path, jobs=1, progress=False).store


def test_store_summary_defaults_to_label_columns_and_default_metrics(store_path):
    with tcpenergy.open_store(store_path) as store:
        summary = store.summarize()
        runs = store.runs()
    assert list(summary.columns[:2]) == ["label.tcp.variant", "label.rtt"]
    assert summary["metric"].unique().tolist()[:2] == ["flow.goodput_bps", "flow.completion_s"]
    assert len(summary) == 4 * summary["metric"].nunique()
    assert (summary["n"] == 3).all()
    assert tcpenergy.summarize(runs).equals(summary)


def test_summarize_command_prints_csv_json_and_table(cli, store_path):
    result = cli("summarize", store_path, "--by", "label.rtt", "--metric", "flow.goodput_bps",
                 "--format", "csv")
    assert result.exit_code == 0, result.output
    lines = result.stdout.strip().splitlines()
    assert lines[0] == ("label.rtt,metric,runs,complete,n,mean,std,ci90_low,ci90_high,"
                        "ci95_low,ci95_high,ci_method")
    assert len(lines) == 3
    assert "12 of 12 runs complete" in result.stderr and "0 failed, 0 incomplete" in result.stderr
    as_json = json.loads(cli("summarize", store_path, "--format", "json").stdout)
    assert {"label.tcp.variant", "label.rtt", "metric", "n", "mean", "ci95_low"} <= set(as_json[0])
    table = cli("summarize", store_path)
    assert table.exit_code == 0 and "flow.goodput_bps" in table.stdout and "95 %" in table.stdout
    assert "complete/runs" in table.stdout and "3/3" in table.stdout


def test_summarize_command_with_an_unknown_column_exits_2(cli, store_path):
    result = cli("summarize", store_path, "--by", "label.colour")
    assert result.exit_code == 2
    assert "label.colour" in result.stderr and "label.rtt" in result.stderr
