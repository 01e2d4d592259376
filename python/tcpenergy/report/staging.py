"""Write a directory of outputs all at once: build it in a hidden sibling, then move it in.

A failure halfway leaves the destination as it was. A new destination appears in one rename; an
existing one receives each finished file by an atomic replace (other files in it are kept).
"""

from __future__ import annotations

import os
import secrets
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from tcpenergy.outputs import OutputPathError


def check_destination(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise OutputPathError(f"--out: {out} exists and is not a directory")


@contextmanager
def staged_directory(out: Path) -> Iterator[Path]:
    """Yield an empty directory beside ``out``; on success its content ends up in ``out``."""
    out = Path(out).absolute()
    check_destination(out)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        stage = out.parent / f".{out.name}.{secrets.token_hex(4)}.tmp"
        stage.mkdir()  # plain mkdir, not mkdtemp: the report gets the user's usual permissions
    except OSError as exc:
        raise OutputPathError(f"--out: cannot create {out}: {exc}") from exc
    try:
        yield stage
        _move_into(stage, out)
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def _move_into(stage: Path, out: Path) -> None:
    if not out.exists():
        os.rename(stage, out)
        return
    for source in sorted(stage.rglob("*")):
        if source.is_file():
            target = out / source.relative_to(stage)
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(source, target)
