"""Sweeps started at the same moment into the same new store: one creates it, and no sweep says
it ran runs that the store does not hold."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import time

import pytest
from sweep_support import write_sweep

import tcpenergy
from tcpenergy.experiments.plan import make_plan
from tcpenergy.experiments.spec import load_sweep

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX file locks")

SWEEPS = 3  # processes per trial
TRIALS = 3

# Imports everything, says it is ready, waits for the go file, then runs the sweep command: the
# sweeps reach the store within a millisecond or two of each other.
RACER = """
import os, sys, time
from tcpenergy.cli import main
import tcpenergy.experiments.runner, tcpenergy.experiments.store, duckdb
sweep, store, ready, go = sys.argv[1:5]
open(ready, "w").close()
while not os.path.exists(go):
    time.sleep(0.001)
sys.argv = ["tcpenergy", "sweep", sweep, "--jobs", "1", "--store", store]
main()
"""


def _race(tmp_path, trial):
    """Start SWEEPS sweeps (each its own seeds, so its own runs) into one new store at once;
    (sweep file, exit status, stdout, stderr) per sweep, and the store."""
    directory = tmp_path / f"trial{trial}"
    directory.mkdir()
    store = directory / "shared.duckdb"
    go = directory / "go"
    procs = []
    for i in range(SWEEPS):
        path = write_sweep(directory / f"s{i}.toml", {"tcp.variant": ["reno", "sack"]},
                           seeds=list(range(100 * i + 1, 100 * i + 6)), name=f"s{i}")
        ready = directory / f"ready{i}"
        procs.append((path, ready, subprocess.Popen(
            [sys.executable, "-c", RACER, str(path), str(store), str(ready), str(go)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)))
    deadline = time.monotonic() + 60
    while not all(ready.exists() for _, ready, _ in procs):
        assert time.monotonic() < deadline, "the sweeps did not start"
        assert all(p.poll() is None for _, _, p in procs), [p.communicate() for _, _, p in procs]
        time.sleep(0.005)
    go.touch()
    out = []
    for path, _, proc in procs:
        stdout, stderr = proc.communicate(timeout=120)
        out.append((path, proc.returncode, stdout, stderr))
    return out, store


@pytest.mark.parametrize("trial", range(TRIALS))
def test_sweeps_creating_the_same_store_at_once_store_every_run_they_report(tmp_path, trial):
    outcomes, store = _race(tmp_path, trial)
    with tcpenergy.open_store(store) as opened:
        rows = opened.records()
    held = {(r["sweep"], r["run_key"]) for r in rows}
    succeeded = 0
    for path, status, stdout, stderr in outcomes:
        assert "Traceback" not in stderr, stderr
        if status == 0:
            plan = make_plan(load_sweep(path))
            assert f"{len(plan.runs)} runs: {len(plan.runs)} ran" in stdout, stdout
            missing = [r.run_key for r in plan.runs if (plan.name, r.run_key) not in held]
            assert not missing, f"{plan.name} reported {len(plan.runs)} runs, the store lacks {len(missing)}"
            succeeded += 1
        else:
            # The loser is told, in one line naming the store, and claims no runs.
            assert status == 2, (status, stdout, stderr)
            lines = [line for line in stderr.splitlines() if line.strip()]
            assert lines[-1].startswith("error: ") and str(store) in lines[-1], stderr
            assert "ran" not in stdout
    assert succeeded >= 1
    leftovers = sorted(p.name for p in store.parent.iterdir() if ".creating" in p.name)
    assert leftovers == []


# Opens the store for writing, says so, and keeps it open for the given seconds.
HOLDER = """
import sys, time
import tcpenergy
with tcpenergy.open_store(sys.argv[1], create=True):
    print("holding", flush=True)
    time.sleep(float(sys.argv[2]))
"""


def _hold(store, seconds):
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(store), str(seconds)],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "holding"
    return proc


def test_a_sweep_waits_for_a_store_another_process_releases_soon(tmp_path):
    path = write_sweep(tmp_path / "grid.toml", {"tcp.variant": ["reno", "sack"]}, repetitions=2)
    holder = _hold(path.with_suffix(".duckdb"), 0.5)
    try:
        outcome = tcpenergy.sweep(path, jobs=1, progress=False)
    finally:
        holder.wait(timeout=30)
    assert (outcome.ran, outcome.total) == (4, 4)


def test_a_sweep_into_a_store_held_longer_than_the_wait_fails_in_one_line(cli, tmp_path,
                                                                          monkeypatch):
    from tcpenergy.experiments import store as store_module

    monkeypatch.setattr(store_module, "LOCK_WAIT_SECONDS", 0.2)
    path = write_sweep(tmp_path / "grid.toml", {"tcp.variant": ["reno", "sack"]}, repetitions=2)
    holder = _hold(path.with_suffix(".duckdb"), 5)
    try:
        result = cli("sweep", path, "--jobs", "1")
    finally:
        holder.kill()
        holder.wait(timeout=30)
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: store ")
    assert str(path.with_suffix(".duckdb")) in result.stderr and "in use" in result.stderr


def test_a_sweep_whose_store_is_replaced_while_it_writes_says_its_runs_are_not_stored(tmp_path):
    path = write_sweep(tmp_path / "grid.toml", {"tcp.variant": ["reno", "sack"]}, repetitions=3)
    other = write_sweep(tmp_path / "other.toml", {"path.mtu": [512]})
    tcpenergy.sweep(other, jobs=1, progress=False)
    store = path.with_suffix(".duckdb")

    def replace_the_store(done, total):
        if not replaced:
            os.replace(other.with_suffix(".duckdb"), store)
            replaced.append(done)

    replaced = []
    with pytest.raises(tcpenergy.TcpEnergyError, match="replaced by another file"):
        tcpenergy.sweep(path, jobs=1, progress=replace_the_store)


def test_a_store_is_created_where_the_file_system_has_no_hard_links(tmp_path, monkeypatch):
    def no_links(src, dst, *args, **kwargs):
        raise PermissionError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    path = write_sweep(tmp_path / "grid.toml", {"tcp.variant": ["reno", "sack"]})
    outcome = tcpenergy.sweep(path, jobs=1, progress=False)
    with tcpenergy.open_store(outcome.store) as store:
        assert store.count() == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["grid.duckdb", "grid.toml"]
