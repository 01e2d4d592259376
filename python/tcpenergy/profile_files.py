"""Device profiles named by file: wherever a scenario takes a profile name (``energy.sender``,
``energy.receiver``, ``energy.default_profile``, ``nodes.NAME.profile``), it also takes the path of
a profile TOML file, such as ``tcpenergy calibrate`` writes. The file is read here and handed to
the engine as an inline table, so results depend on what the file holds, not on its name.

A value is read as a path when it is not a built-in profile name and ends in ``.toml`` or holds a
path separator. A path in a scenario file is relative to that file; one given as an override or in
a scenario dict, to the current directory.
"""

from __future__ import annotations

import copy
import json
import os
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any, FrozenSet, Iterator, List, Optional, Tuple

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python < 3.11 only
    import tomli as tomllib

from tcpenergy._native import engine
from tcpenergy.exceptions import ScenarioError, read_scenario_file, scenario_error

_ENERGY_SLOTS = ("sender", "receiver", "default_profile")


@lru_cache(maxsize=1)
def _builtin_names() -> FrozenSet[str]:
    return frozenset(json.loads(engine.profiles()))


def is_profile_path(value: Any) -> bool:
    if isinstance(value, os.PathLike):
        return True
    if not isinstance(value, str) or value in _builtin_names():
        return False
    return value.lower().endswith(".toml") or "/" in value or os.sep in value


def _slots(doc: Any) -> Iterator[Tuple[dict, str, str]]:
    """(table, key, dotted path) of every profile slot of a scenario document."""
    if not isinstance(doc, dict):
        return
    energy = doc.get("energy")
    if isinstance(energy, dict):
        for key in _ENERGY_SLOTS:
            if key in energy:
                yield energy, key, f"energy.{key}"
    nodes = doc.get("nodes")
    if isinstance(nodes, dict):
        for name, node in nodes.items():
            if isinstance(node, dict) and "profile" in node:
                yield node, "profile", f"nodes.{name}.profile"


def read_profile_file(path: Path, key: str) -> dict:
    """The profile table in ``path``, checked by the engine; ScenarioError at ``key`` naming the file
    when it is missing, not TOML, or not a valid profile."""
    text = read_scenario_file(path, key, "profile")
    try:
        table = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise scenario_error(key, f"{path}: invalid TOML: {exc}") from None
    try:
        engine.validate(json.dumps({"energy": {"sender": table}}, default=str), [])
    except ScenarioError as exc:
        inner = getattr(exc, "path", "") or ""
        inner = inner[len("energy.sender."):] if inner.startswith("energy.sender.") else ""
        message = getattr(exc, "message", None) or str(exc)
        where = f"{inner}: " if inner else ""
        raise scenario_error(key, f"profile file {path}: {where}{message}") from None
    return table


def resolve_in_document(doc: Any, base_dir: Optional[Path], prefix: str = "") -> Any:
    """``doc`` with every profile given as a path replaced by the file's table (paths relative to
    ``base_dir``, or the current directory when None). ``prefix``: where ``doc`` sits, for errors."""
    if not isinstance(doc, dict):
        return doc
    for table, key, dotted in list(_slots(doc)):
        value = table[key]
        if is_profile_path(value):
            path = Path(value)
            if base_dir is not None and not path.is_absolute():
                path = base_dir / path
            table[key] = read_profile_file(path, prefix + dotted)
    return doc


def resolve_override(key: str, value: Any) -> Any:
    """The value of override ``key`` with any profile path in it read (relative to the current
    directory): ``energy.sender=calibrated.toml``, or a whole ``energy`` or ``nodes.NAME`` table."""
    parts: List[str] = key.split(".")
    if not parts or parts[0] not in ("energy", "nodes") or any(p.isdigit() or not p for p in parts):
        return value
    if not (is_profile_path(value) or isinstance(value, dict)):
        return value
    doc: Any = copy.deepcopy(value)
    for part in reversed(parts):
        doc = {part: doc}
    resolve_in_document(doc, None)
    for part in parts:
        doc = doc[part]
    return doc
