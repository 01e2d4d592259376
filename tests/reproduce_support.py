"""Shared by the reproduction tests: one quick `tcpenergy reproduce` run through the CLI."""

from pathlib import Path
from typing import Tuple


def quick_reproduction(tmp_path_factory, paper: str, *extra: str) -> Tuple[Path, object]:
    """Run `tcpenergy reproduce PAPER [EXTRA...] --quick` on 2 jobs; returns (out dir, CLI result)."""
    from typer.testing import CliRunner

    from tcpenergy.cli import app

    out = tmp_path_factory.mktemp("repro") / paper
    result = CliRunner().invoke(app, ["reproduce", paper, *extra, "--quick", "--out", str(out), "--jobs", "2"])
    return out, result
