"""Incomplete runs are a first-class outcome (docs/experiments.md, "Complete and incomplete
runs"): a run stopped by stop_after before its transfer ended is counted, listed with its reason
and left out of every statistic unless asked for; the runs frame keeps every input."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from sweep_support import write_sweep

import tcpenergy
from tcpenergy.experiments.completeness import complete_runs, left_out, run_counts, usable
from tcpenergy.experiments.frame import export_frame
from tcpenergy.experiments.stats import summarize
from tcpenergy.report.cells import cell_stats, ok_runs

LOSS = "label.path.forward.impairments.0.p"
# With 5 % loss, seeds 2 and 4 of this 100 KB transfer need more than 4 s (they take 4.7 s and
# 4.6 s, seeds 1 and 3 take 3.2 s and 3.8 s): a 4 s cap stops exactly those two.
CAP = {"traffic.bytes": "100KB", "stop_after": "4s"}


@pytest.fixture(scope="module")
def capped(tmp_path_factory):
    path = write_sweep(tmp_path_factory.mktemp("capped") / "capped.toml",
                       {"path.forward.impairments.0.p": [0.0, 0.05]}, repetitions=4, fixed=CAP)
    outcome = tcpenergy.sweep(path, jobs=1, progress=False)
    with tcpenergy.open_store(outcome.store) as store:
        runs = store.runs()
    return outcome, runs


def test_sweep_outcome_counts_the_runs_stopped_by_stop_after(capped):
    outcome, runs = capped
    assert (outcome.ran, outcome.failed, outcome.incomplete) == (8, 0, 2)
    assert "2 of the runs that ran are incomplete" in str(outcome)
    lossy = runs[runs[LOSS] == 0.05]
    assert lossy.loc[~lossy["complete"].astype(bool), "seed"].tolist() == [2, 4]


def test_usable_runs_are_ok_and_complete(capped):
    _, runs = capped
    assert usable(runs).tolist() == [True] * 4 + [True, False, True, False]
    assert len(complete_runs(runs)) == 6
    assert ok_runs(runs).equals(complete_runs(runs))


def test_a_frame_without_complete_counts_its_ok_runs_as_complete():
    frame = pd.DataFrame({"status": ["ok", "failed", "ok"], "x": [1.0, np.nan, 2.0]})
    assert usable(frame).tolist() == [True, False, True]
    assert usable(pd.DataFrame({"x": [1.0]})).tolist() == [True]
    # A missing completeness value is not taken for a complete run.
    assert usable(pd.DataFrame({"complete": [True, None, False]})).tolist() == [True, False, False]


def test_left_out_states_bytes_delivered_of_bytes_asked_and_where_the_run_stopped(capped):
    _, runs = capped
    out = left_out(runs)
    assert list(out.columns) == ["sweep", "seed", "run_key", LOSS, "status", "reason"]
    assert out["seed"].tolist() == [2, 4] and (out["status"] == "incomplete").all()
    for _, row in out.iterrows():
        run = runs[runs["run_key"] == row["run_key"]].iloc[0]
        delivered = f"{int(run['flow.bytes_delivered']):,}"
        assert row["reason"] == (f"stopped at the stop_after cap of 4s (simulated time "
                                 f"{run['sim_time_s']:,.6g} s) with {delivered} of 100,000 "
                                 "bytes delivered")
        assert run["flow.bytes_delivered"] < 100_000


def test_left_out_gives_a_failed_run_its_error_text():
    frame = pd.DataFrame({"run_key": ["k1", "k2"], "seed": [1, 2], "sweep": "s",
                          "label.v": ["a", "a"], "status": ["ok", "failed"],
                          "error": [None, "EngineError: no route"], "complete": [True, None]})
    out = left_out(frame)
    assert out.to_dict("records") == [{"sweep": "s", "seed": 2, "run_key": "k2", "label.v": "a",
                                       "status": "failed",
                                       "reason": "failed: EngineError: no route"}]


def test_run_counts_give_runs_attempted_and_complete_per_group(capped):
    _, runs = capped
    counts = run_counts(runs, [LOSS])
    assert counts.to_dict("records") == [{LOSS: 0.0, "runs": 4, "complete": 4},
                                         {LOSS: 0.05, "runs": 4, "complete": 2}]
    assert run_counts(runs, []).to_dict("records") == [{"runs": 8, "complete": 6}]


def test_summaries_use_complete_runs_unless_incomplete_ones_are_asked_for(capped):
    _, runs = capped
    summary = summarize(runs, metrics=["energy.sender.total_j"]).set_index(LOSS)
    lossy = runs[runs[LOSS] == 0.05]
    done = lossy[lossy["seed"].isin([1, 3])]["energy.sender.total_j"]
    row = summary.loc[0.05]
    assert (row["runs"], row["complete"], row["n"]) == (4, 2, 2)
    assert row["mean"] == pytest.approx(done.mean(), rel=1e-12)
    assert summary.attrs["incomplete"] == 2 and summary.attrs["include_incomplete"] is False
    assert [r["seed"] for r in summary.attrs["left_out"]] == [2, 4]
    everything = summarize(runs, metrics=["energy.sender.total_j"],
                           include_incomplete=True).set_index(LOSS).loc[0.05]
    assert (everything["runs"], everything["complete"], everything["n"]) == (4, 2, 4)
    assert everything["mean"] == pytest.approx(lossy["energy.sender.total_j"].mean(), rel=1e-12)


def test_report_cells_count_runs_and_average_complete_runs_only(capped):
    _, runs = capped
    cells = cell_stats(runs, [LOSS], "flow.goodput_bps", 0.95).set_index(LOSS)
    assert cells.loc[0.05, ["n", "runs", "complete"]].tolist() == [2, 4, 2]
    assert (cells["ci_low"] >= 0).all()


def test_summarize_command_shows_complete_of_runs_and_lists_what_it_left_out(cli, capped):
    outcome, _ = capped
    table = cli("summarize", outcome.store, "--metric", "flow.timeouts")
    assert table.exit_code == 0, table.output
    assert "complete/runs" in table.stdout and "2/4" in table.stdout and "4/4" in table.stdout
    assert "6 of 8 runs complete and summarized; left out: 0 failed, 2 incomplete" in table.stderr
    assert "stopped at the stop_after cap of 4s" in table.stderr
    assert "of 100,000 bytes delivered" in table.stderr
    included = cli("summarize", outcome.store, "--metric", "flow.timeouts", "--format", "json",
                   "--include-incomplete")
    assert included.exit_code == 0, included.output
    rows = {r[LOSS]: r for r in json.loads(included.stdout)}
    assert (rows[0.05]["n"], rows[0.05]["complete"], rows[0.05]["runs"]) == (4, 2, 4)
    assert "2 incomplete run(s) included" in included.stderr


def test_runs_frame_and_export_keep_the_scenario_name_every_set_key_and_label(capped, tmp_path):
    outcome, runs = capped
    for column in ("name", "traffic.bytes", "stop_after", "path.forward.impairments.0.p", LOSS):
        assert column in runs.columns, column
    assert (runs["name"] == "quickstart").all() and (runs["stop_after"] == "4s").all()
    assert runs.groupby("path.forward.impairments.0.p").size().to_dict() == {0.0: 4, 0.05: 4}
    exported = pd.read_csv(export_frame(runs, tmp_path / "runs.csv", "csv"))
    assert {"name", "stop_after", "traffic.bytes", "path.forward.impairments.0.p", LOSS,
            "complete"} <= set(exported.columns)
    assert exported.groupby(LOSS)["complete"].sum().to_dict() == {0.0: 4, 0.05: 2}
