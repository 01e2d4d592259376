"""Sweeps started at the same moment into the same new store: one creates it, and no sweep says
it ran runs that the store does not hold."""

from __future__ import annotations

import errno
import json
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

SWEEPS = 3  # processes racing
RACES = 6  # races they run, one after the other, each into a new store

# One racing process: for each race, says it is ready, waits for the go file, then runs the sweep
# command into that race's store and writes what it printed and its exit status. The processes
# reach the store within a millisecond or two of each other.
RACER = """
import contextlib, io, json, os, sys, time, traceback
from tcpenergy.cli import app
import tcpenergy.experiments.runner, tcpenergy.experiments.store, duckdb
directory, racer, races = sys.argv[1], sys.argv[2], int(sys.argv[3])
for race in range(races):
    here = os.path.join(directory, f"race{race}")
    open(os.path.join(here, f"ready{racer}"), "w").close()
    while not os.path.exists(os.path.join(here, "go")):
        time.sleep(0.001)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            app(["sweep", os.path.join(here, f"s{racer}.toml"), "--jobs", "1", "--store",
                 os.path.join(here, "shared.duckdb")], prog_name="tcpenergy")
            status = 0
        except SystemExit as exc:
            status = exc.code if isinstance(exc.code, int) else 1
        except Exception:
            traceback.print_exc()
            status = 1
    result = os.path.join(here, f"result{racer}.json")
    with open(result + ".part", "w") as f:
        json.dump({"status": status, "stdout": out.getvalue(), "stderr": err.getvalue()}, f)
    os.replace(result + ".part", result)
"""


def _wait_for(paths, procs, what):
    """Wait until each process has written its file of ``paths``."""
    # Starting Python and importing takes a fraction of a second, or much longer on a machine
    # busy with builds: the wait is generous; each race starts only when every sweep is ready.
    deadline = time.monotonic() + 300
    while not all(p.exists() for p in paths):
        assert time.monotonic() < deadline, f"the sweeps did not {what}"
        for path, proc in zip(paths, procs):
            if proc.poll() is not None and not path.exists():
                assert path.exists(), proc.communicate()  # it may have written it meanwhile
        time.sleep(0.005)


def _races(tmp_path):
    """SWEEPS processes race RACES times, each time all starting a sweep (each its own seeds, so
    its own runs) into the same new store at once. Per race: the store, and per sweep its file,
    exit status, stdout and stderr."""
    races = []
    for race in range(RACES):
        here = tmp_path / f"race{race}"
        here.mkdir()
        sweeps = [write_sweep(here / f"s{i}.toml", {"tcp.variant": ["reno", "sack"]},
                              seeds=list(range(100 * i + 1, 100 * i + 6)), name=f"s{i}")
                  for i in range(SWEEPS)]
        races.append((here, sweeps))
    procs = [subprocess.Popen([sys.executable, "-c", RACER, str(tmp_path), str(i), str(RACES)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              stdin=subprocess.DEVNULL, text=True)
             for i in range(SWEEPS)]
    out = []
    try:
        for here, sweeps in races:
            _wait_for([here / f"ready{i}" for i in range(SWEEPS)], procs, "start")
            (here / "go").touch()
            results = [here / f"result{i}.json" for i in range(SWEEPS)]
            _wait_for(results, procs, "finish")
            out.append((here / "shared.duckdb",
                        [(path, json.loads(result.read_text()))
                         for path, result in zip(sweeps, results)]))
        for proc in procs:
            proc.communicate(timeout=60)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    return out


def test_sweeps_creating_the_same_store_at_once_store_every_run_they_report(tmp_path):
    races = _races(tmp_path)
    # Each racer runs the same sweep in every race, into another store.
    plans = [make_plan(load_sweep(path)) for path, _ in races[0][1]]
    for store, outcomes in races:
        with tcpenergy.open_store(store) as opened:
            held = {(r["sweep"], r["run_key"]) for r in opened.records()}
        succeeded = 0
        for plan, (path, outcome) in zip(plans, outcomes):
            status, stdout, stderr = outcome["status"], outcome["stdout"], outcome["stderr"]
            assert "Traceback" not in stderr, stderr
            if status == 0:
                assert f"{len(plan.runs)} runs: {len(plan.runs)} ran" in stdout, stdout
                missing = [r.run_key for r in plan.runs if (plan.name, r.run_key) not in held]
                assert not missing, (f"{store.parent.name}: {plan.name} reported "
                                     f"{len(plan.runs)} runs, the store lacks {len(missing)}")
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


def test_a_sweep_waits_for_a_store_another_process_releases_soon(tmp_path, monkeypatch):
    from tcpenergy.experiments import store as store_module

    # A wait far longer than the hold: on a busy machine the holder may take a while to exit.
    monkeypatch.setattr(store_module, "LOCK_WAIT_SECONDS", 60.0)
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
    holder = _hold(path.with_suffix(".duckdb"), 120)
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
