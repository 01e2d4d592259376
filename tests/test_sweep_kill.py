"""A sweep killed (kill -9) or interrupted (Ctrl-C) mid-way leaves a store that opens, holds every
committed run, and completes when the same sweep runs again."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest
from sweep_support import results, write_sweep

import tcpenergy

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and process groups")

AXES = {"tcp.variant": ["reno", "newreno", "sack"], "path.forward.impairments.0.p": [0.0, 0.02],
        "rtt": ["10ms", "30ms"]}
REPETITIONS = 100  # 12 cells x 100 = 1200 runs: long enough to be caught mid-way
TOTAL = 12 * REPETITIONS

# Says on stderr how many runs each committed batch held, then runs what follows.
ANNOUNCE = """
import signal
import sys
from tcpenergy.experiments import store

# Ctrl-C as a terminal delivers it, even when the test suite itself was started in the background
# (a shell starts background jobs with SIGINT ignored, and Python then keeps it ignored).
signal.signal(signal.SIGINT, signal.default_int_handler)

write = store.Store.write
def announcing_write(self, rows, **kwargs):
    n = write(self, rows, **kwargs)
    print("committed", n, file=sys.stderr, flush=True)
    return n
store.Store.write = announcing_write
"""
# A sweep on a process pool, from the API.
SCRIPT = ANNOUNCE + """
import tcpenergy
tcpenergy.sweep(sys.argv[1], jobs=2, progress=False)
print("finished", file=sys.stderr, flush=True)
"""
# The sweep command.
COMMAND = ANNOUNCE + """
from tcpenergy.cli import main
sys.argv = ["tcpenergy", "sweep", sys.argv[1], "--jobs", "2"]
main()
"""


def _wait_for_commits(proc, runs):
    """Read stderr until ``runs`` runs are committed; the number committed, and whether the
    sweep finished first."""
    committed = 0
    for line in proc.stderr:
        if line.startswith("committed"):
            committed += int(line.split()[1])
            if committed >= runs:
                return committed, False
        if line.startswith("finished"):
            return committed, True
    return committed, True


def _start(args, **kwargs):
    # A session of its own, so the pool workers die with the sweep.
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL, start_new_session=True, **kwargs)


def test_kill_9_mid_sweep_keeps_every_committed_run_and_rerun_completes(tmp_path):
    path = write_sweep(tmp_path / "grid.toml", AXES, repetitions=REPETITIONS)
    proc = _start([sys.executable, "-c", SCRIPT, str(path)])
    try:
        committed, finished = _wait_for_commits(proc, 200)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    assert 0 < committed < TOTAL and not finished, "the sweep ended before it could be killed"

    with tcpenergy.open_store(path.with_suffix(".duckdb")) as store:
        assert store.count() >= committed
        assert store.count("ok") == store.count()
        runs = store.runs()
    assert runs["run_key"].is_unique

    again = tcpenergy.sweep(path, jobs=2, progress=False)
    assert again.skipped >= committed and again.ran + again.skipped == again.total == TOTAL
    tcpenergy.sweep(path, store=tmp_path / "whole.duckdb", jobs=2, progress=False)
    assert results(path.with_suffix(".duckdb")) == results(tmp_path / "whole.duckdb")


def test_ctrl_c_stops_the_sweep_command_with_130_and_keeps_finished_runs(tmp_path):
    path = write_sweep(tmp_path / "grid.toml", AXES, repetitions=REPETITIONS)
    proc = _start([sys.executable, "-c", COMMAND, str(path)])
    try:
        committed, finished = _wait_for_commits(proc, 200)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert not finished, "the sweep ended before it could be interrupted"
    assert proc.returncode == 130, stderr
    assert "run the same command again to resume" in stderr
    with tcpenergy.open_store(path.with_suffix(".duckdb")) as store:
        kept = store.count()
    assert kept >= committed
    outcome = tcpenergy.sweep(path, jobs=2, progress=False)
    assert outcome.skipped == kept and outcome.ran + kept == TOTAL
