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
    runner = CliRunner()

    def invoke(*args: object):
        return runner.invoke(app, [str(a) for a in args])

    return invoke
