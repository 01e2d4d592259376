"""`tcpenergy run` shows a long run as alive on a terminal, and changes nothing off one."""

from __future__ import annotations

import io
import threading
import time

import pytest
from rich.console import Console

from tcpenergy import api
from tcpenergy.cli import progress
from tcpenergy.exceptions import ScenarioError
from tcpenergy.report import result as result_report


def _terminal() -> Console:
    return Console(file=io.StringIO(), force_terminal=True, width=100)


def test_run_output_off_a_terminal_is_unchanged_when_the_spinner_would_show(cli, quickstart, monkeypatch):
    monkeypatch.setattr(progress, "DELAY_S", 0.0)  # any run is "long"
    shown = cli("run", quickstart, "--format", "json")
    assert shown.exit_code == 0, shown.stderr
    record, _ = api.execute(api.load_scenario(quickstart))
    assert shown.stdout == result_report.json_text(record) + "\n"
    assert shown.stderr == ""


def test_off_a_terminal_the_work_runs_in_the_calling_thread_and_nothing_is_written():
    off = Console(file=io.StringIO(), force_terminal=False)
    assert progress.run_with_progress(threading.current_thread, "running x", off, delay_s=0.0) \
        is threading.current_thread()
    assert off.file.getvalue() == ""


def test_a_long_call_on_a_terminal_shows_what_runs_and_the_wall_time_spent():
    console = _terminal()

    def work():
        time.sleep(0.4)
        return 42

    assert progress.run_with_progress(work, "running quickstart.toml", console, delay_s=0.05) == 42
    assert "running quickstart.toml (0 s)" in console.file.getvalue()


def test_a_call_shorter_than_the_delay_shows_nothing_on_a_terminal():
    console = _terminal()
    assert progress.run_with_progress(lambda: "done", "running x", console, delay_s=5.0) == "done"
    assert console.file.getvalue() == ""


def test_a_failing_call_raises_its_own_error_in_the_caller():
    def work():
        time.sleep(0.1)
        raise ScenarioError("tcp.variant: unknown variant")

    with pytest.raises(ScenarioError, match="unknown variant"):
        progress.run_with_progress(work, "running x", _terminal(), delay_s=0.01)


def test_scenario_names_with_brackets_are_shown_as_written():
    console = _terminal()
    progress.run_with_progress(lambda: time.sleep(0.3), "running [bold]x[/].toml", console, delay_s=0.05)
    assert "running [bold]x[/].toml" in console.file.getvalue()
