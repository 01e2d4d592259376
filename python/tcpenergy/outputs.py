"""Output files: written only after a run succeeded, and atomically (temp file + rename), so a
failed or interrupted command never leaves a partial or stale-looking file behind."""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    import pandas as pd


class OutputPathError(ValueError):
    """An output path the command cannot write (bad extension, missing directory)."""


TRACE_EXTENSIONS = (".csv", ".parquet")


def check_trace_path(path: Path) -> None:
    """Reject an unusable trace path before running, so a long run is not wasted."""
    suffix = path.suffix.lower()
    if suffix not in TRACE_EXTENSIONS:
        shown = suffix or "(none)"
        raise OutputPathError(
            f"--trace: unsupported file extension {shown} for {path}; use .csv or .parquet"
        )
    if not path.parent.is_dir():
        raise OutputPathError(f"--trace: directory does not exist: {path.parent}")


def atomic_write(path: Path, write: Callable[[Path], None]) -> None:
    """Call ``write`` on a temporary file beside ``path``, then rename it into place."""
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        try:
            tmp.unlink()
        except FileNotFoundError:
            pass
        raise


def write_trace(frame: "pd.DataFrame", path: Path) -> None:
    """The trace as CSV or Parquet, chosen by the file extension."""
    check_trace_path(path)
    if path.suffix.lower() == ".csv":
        atomic_write(path, lambda tmp: frame.to_csv(tmp, index=False))
    else:
        atomic_write(path, lambda tmp: frame.to_parquet(tmp, index=False, engine="pyarrow"))
