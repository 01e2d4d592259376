"""Running sweeps: every cell x seed stored once, re-runs skip, resumption, failures, the flat frame."""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest
from sweep_support import QUICKSTART, results, stored, write_sweep

import tcpenergy
from tcpenergy.experiments import executors

AXES = {"tcp.variant": ["reno", "sack"], "rtt": ["15ms", "40ms"]}


@pytest.fixture
def grid(tmp_path):
    return write_sweep(tmp_path / "grid.toml", AXES, repetitions=3)


def test_sweep_stores_one_ok_row_per_cell_and_seed_next_to_the_sweep_file(grid):
    outcome = tcpenergy.sweep(grid, jobs=1, progress=False)
    assert (outcome.total, outcome.ran, outcome.skipped, outcome.failed) == (12, 12, 0, 0)
    assert outcome.store == grid.with_suffix(".duckdb")
    with tcpenergy.open_store(outcome.store) as store:
        runs = store.runs()
    assert len(runs) == 12 and set(runs["status"]) == {"ok"}
    assert runs["run_key"].is_unique
    assert sorted(zip(runs["label.tcp.variant"], runs["label.rtt"], runs["seed"])) == sorted(
        (v, r, s) for v in ("reno", "sack") for r in ("15ms", "40ms") for s in (1, 2, 3))


def test_runs_frame_is_flat_and_matches_a_direct_run(grid):
    outcome = tcpenergy.sweep(grid, jobs=1, progress=False)
    with tcpenergy.open_store(outcome.store) as store:
        runs = store.runs()
    for column in ("run_key", "seed", "status", "error", "sweep", "wall_s", "tcp.variant",
                   "path.forward.delay", "path.forward.impairments.0.p", "energy.sender",
                   "flow.goodput_bps", "energy.sender.total_j", "energy.sender.breakdown_j.cpu",
                   "label.rtt", "label.tcp.variant"):
        assert column in runs.columns, column
    row = runs[(runs["label.tcp.variant"] == "reno") & (runs["label.rtt"] == "40ms")
               & (runs["seed"] == 2)].iloc[0]
    direct = tcpenergy.run(QUICKSTART, seed=2, **{"traffic.bytes": "100KB", "tcp.variant": "reno",
                                                  "path.forward.delay": "20ms",
                                                  "path.reverse.delay": "20ms"})
    assert row["flow.goodput_bps"] == direct["flow"]["goodput_bps"]
    assert row["energy.sender.breakdown_j.cpu"] == direct["energy"]["sender"]["breakdown_j"]["cpu"]
    assert row["tcp.variant"] == "reno" and row["sweep"] == "grid"
    assert row["energy.sender"] == "singh2002-toshiba-wavelan"
    assert row["traffic.bytes"] == 100_000


def test_rerunning_a_finished_sweep_skips_every_run(grid):
    first = tcpenergy.sweep(grid, jobs=1, progress=False)
    before = stored(first.store)
    again = tcpenergy.sweep(grid, jobs=1, progress=False)
    assert (again.ran, again.skipped) == (0, 12)
    assert stored(again.store) == before


def test_partial_then_full_sweep_equals_an_uninterrupted_one(tmp_path):
    whole = write_sweep(tmp_path / "whole.toml", AXES, repetitions=4, name="g")
    part = write_sweep(tmp_path / "part.toml", AXES, seeds=[1, 3], name="g")
    tcpenergy.sweep(whole, jobs=1, progress=False)
    first = tcpenergy.sweep(part, store=tmp_path / "resumed.duckdb", jobs=2, progress=False)
    assert first.ran == 8
    rest = tcpenergy.sweep(whole, store=tmp_path / "resumed.duckdb", jobs=2, progress=False)
    assert (rest.ran, rest.skipped, rest.failed) == (8, 8, 0)
    resumed, uninterrupted = stored(tmp_path / "resumed.duckdb"), stored(tmp_path / "whole.duckdb")
    assert set(resumed) == set(uninterrupted)
    assert resumed == uninterrupted


def test_pool_and_serial_executors_store_the_same_results(tmp_path, grid):
    tcpenergy.sweep(grid, jobs=1, progress=False)
    tcpenergy.sweep(grid, store=tmp_path / "pool.duckdb", jobs=2, progress=False)
    assert results(tmp_path / "pool.duckdb") == results(grid.with_suffix(".duckdb"))


def test_failed_run_is_stored_with_its_error_and_the_sweep_goes_on(grid, monkeypatch):
    real = executors.engine

    class Flaky:
        @staticmethod
        def run(base, seed, overrides, trace):
            if seed == 2:
                raise tcpenergy.EngineError("boom at seed 2")
            return real.run(base, seed, overrides, trace)

    monkeypatch.setattr(executors, "engine", Flaky)
    outcome = tcpenergy.sweep(grid, jobs=1, progress=False)
    assert (outcome.ran, outcome.failed) == (12, 4)
    assert all("boom at seed 2" in error for _, error in outcome.errors)
    with tcpenergy.open_store(outcome.store) as store:
        failed = store.runs(status="failed")
        assert store.count("ok") == 8
    assert set(failed["seed"]) == {2}
    assert failed["error"].str.contains("EngineError: boom at seed 2").all()
    assert "flow.goodput_bps" not in failed.columns  # a failed run has no result

    monkeypatch.setattr(executors, "engine", real)
    retry = tcpenergy.sweep(grid, jobs=1, progress=False)
    assert (retry.ran, retry.skipped, retry.failed) == (4, 8, 0)
    with tcpenergy.open_store(outcome.store) as store:
        assert store.count() == store.count("ok") == 12


def test_failed_runs_make_the_sweep_command_exit_1_with_the_count(cli, grid, monkeypatch):
    class Broken:
        @staticmethod
        def run(*args):
            raise tcpenergy.EngineError("no")

    monkeypatch.setattr(executors, "engine", Broken)
    result = cli("sweep", grid, "--jobs", "1")
    assert result.exit_code == 1
    assert "12 ran (12 failed)" in result.stdout
    assert "EngineError: no" in result.stderr


def test_incomplete_run_is_a_result_not_a_failure(tmp_path):
    path = write_sweep(tmp_path / "cut.toml", {"tcp.variant": ["reno"]},
                       fixed={"traffic.bytes": "5MB", "stop_after": "100ms"})
    outcome = tcpenergy.sweep(path, jobs=1, progress=False)
    assert outcome.failed == 0
    with tcpenergy.open_store(outcome.store) as store:
        row = store.runs().iloc[0]
    assert row["status"] == "ok" and not row["complete"]


def test_sweep_command_reports_ran_skipped_and_failed(cli, grid):
    result = cli("sweep", grid, "--jobs", "1")
    assert result.exit_code == 0, result.output
    assert "12 runs: 12 ran (0 failed), 0 skipped" in result.stdout
    again = cli("sweep", grid, "--jobs", "2", "--store", grid.with_suffix(".duckdb"))
    assert "0 ran (0 failed), 12 skipped" in again.stdout


def test_progress_callback_sees_every_run(grid):
    seen = []
    tcpenergy.sweep(grid, jobs=1, progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (12, 12)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_labels_and_scenario_are_stored_as_json(grid):
    outcome = tcpenergy.sweep(grid, jobs=1, progress=False)
    with tcpenergy.open_store(outcome.store) as store:
        record = store.records()[0]
    assert json.loads(record["labels"]) == {"tcp.variant": "reno", "rtt": "15ms"}
    scenario = json.loads(record["scenario"])
    assert scenario["tcp"]["variant"] == "reno" and "seed" not in scenario
    assert "trace" not in json.loads(record["result"])


def test_summarize_says_how_many_failed_runs_it_left_out(cli, grid, monkeypatch):
    real = executors.engine

    class FailsSeedOne:
        @staticmethod
        def run(base, seed, overrides, trace):
            if seed == 1:
                raise tcpenergy.EngineError("seed one")
            return real.run(base, seed, overrides, trace)

    monkeypatch.setattr(executors, "engine", FailsSeedOne)
    store = tcpenergy.sweep(grid, jobs=1, progress=False).store
    result = cli("summarize", store, "--format", "csv")
    assert result.exit_code == 0, result.output
    assert "8 of 12 runs complete and summarized; left out: 4 failed, 0 incomplete" in result.stderr
    assert "seed 1: failed: EngineError: seed one" in result.stderr
    assert set(pd.read_csv(io.StringIO(result.stdout))["n"]) == {2}


def test_a_run_shared_by_two_sweeps_is_stored_once_and_listed_under_both(tmp_path):
    store = tmp_path / "both.duckdb"
    first = write_sweep(tmp_path / "first.toml", {"tcp.variant": ["reno", "sack"]}, seeds=[1, 2])
    second = write_sweep(tmp_path / "second.toml", {"tcp.variant": ["sack", "newreno"]},
                         seeds=[1, 2], name="second")
    tcpenergy.sweep(first, store=store, jobs=1, progress=False)
    outcome = tcpenergy.sweep(second, store=store, jobs=1, progress=False)
    assert (outcome.ran, outcome.skipped) == (2, 2)  # sack runs: already there
    with tcpenergy.open_store(store) as st:
        assert st.count() == 6
        runs = st.runs()
    by_sweep = {name: part for name, part in runs.groupby("sweep")}
    assert sorted(by_sweep["first"]["label.tcp.variant"]) == ["reno", "reno", "sack", "sack"]
    assert sorted(by_sweep["second"]["label.tcp.variant"]) == ["newreno", "newreno", "sack", "sack"]
    assert by_sweep["second"]["cell"].tolist() == [0, 0, 1, 1]
    shared = runs[runs["label.tcp.variant"] == "sack"]
    assert shared.groupby("run_key").size().tolist() == [2, 2]
