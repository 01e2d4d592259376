"""Errors of sweeps and stores; both are the user's to fix (the CLI exits with status 2)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from tcpenergy.exceptions import TcpEnergyError


class SweepSpecError(TcpEnergyError):
    """A sweep file that cannot be run: ``.path`` names the field, ``.message`` says why."""

    def __init__(self, path: str, message: str, source: Optional[Path] = None) -> None:
        text = f"{path}: {message}" if path else message
        # Name the sweep file too, when there is one: a sweep may be one of many.
        super().__init__(f"{source}: {text}" if source is not None else text)
        self.path = path
        self.message = message
        self.source = source


class StoreError(TcpEnergyError):
    """A results store that cannot be opened or written: not a store, another schema, locked."""


class RunsNotStored(TcpEnergyError):
    """A sweep ran its runs, but its store does not hold them all after writing (the file was
    removed or replaced while the sweep wrote it)."""


class SweepAborted(TcpEnergyError):
    """The sweep stopped before its end (a worker died); every run stored so far is kept."""


class ExecutorError(TcpEnergyError):
    """An executor that cannot be used as asked: unknown name, bad job count, no scheduler."""
