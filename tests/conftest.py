"""Shared fixtures: the quickstart scenario and a CLI runner."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tcpenergy.cli import app

REPO = Path(__file__).resolve().parent.parent
QUICKSTART = REPO / "scenarios" / "quickstart.toml"


@pytest.fixture
def quickstart() -> Path:
    return QUICKSTART


@pytest.fixture
def cli():
    """Invoke the CLI in-process: cli("run", path, "--format", "json") -> click Result."""
    try:
        runner = CliRunner(mix_stderr=False)  # click < 8.2 mixes stderr into stdout by default
    except TypeError:
        runner = CliRunner()  # click >= 8.2 always keeps them apart

    def invoke(*args: object):
        return runner.invoke(app, [str(a) for a in args])

    return invoke
