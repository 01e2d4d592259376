"""Helpers for the sweep tests: tiny sweep files and store comparisons."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, Mapping, Optional

REPO = Path(__file__).resolve().parent.parent
QUICKSTART = REPO / "scenarios" / "quickstart.toml"
TINY = {"traffic.bytes": "100KB"}  # a run takes well under a millisecond


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(type(value))


def sweep_text(axes: Mapping[str, list], base: Any = QUICKSTART, repetitions: Optional[int] = None,
               seeds: Optional[list] = None, fixed: Optional[Mapping[str, Any]] = None,
               name: Optional[str] = None, extra: str = "") -> str:
    lines = [f"base = {toml_value(str(base))}"]
    if name is not None:
        lines.append(f"name = {toml_value(name)}")
    if repetitions is not None:
        lines.append(f"repetitions = {repetitions}")
    if seeds is not None:
        lines.append(f"seeds = {toml_value(seeds)}")
    lines.append(extra)
    lines.append("[axes]")
    lines += [f"{json.dumps(k)} = {toml_value(v)}" for k, v in axes.items()]
    lines.append("[set]")
    lines += [f"{json.dumps(k)} = {toml_value(v)}" for k, v in (TINY if fixed is None else fixed).items()]
    return "\n".join(lines) + "\n"


def write_sweep(path: Path, axes: Mapping[str, list], **kwargs: Any) -> Path:
    path.write_text(sweep_text(axes, **kwargs))
    return path


def stored(path: Path) -> Dict[str, Dict[str, Any]]:
    """run_key -> the stored row, without what differs between two identical sweeps."""
    import tcpenergy

    with tcpenergy.open_store(path) as store:
        rows = store.records()
    keys = [r["run_key"] for r in rows]
    assert len(keys) == len(set(keys))
    return {r["run_key"]: {k: v for k, v in r.items() if k not in ("wall_s", "created_at")}
            for r in rows}


def results(path: Path) -> Dict[str, Any]:
    """run_key -> the result record (parsed), for comparing stores."""
    return {k: (json.loads(r["result"]) if r["result"] else None, r["status"])
            for k, r in stored(path).items()}


def small_grid_store(tmp: Path) -> Path:
    """A store of a 2 x 2 grid (reno and sack, no loss and 5 % loss) with 3 repetitions."""
    import tcpenergy

    path = write_sweep(tmp / "grid.toml", {"tcp.variant": ["reno", "sack"],
                                           "path.forward.impairments.0.p": [0.0, 0.05]},
                       repetitions=3)
    return tcpenergy.sweep(path, jobs=1, progress=False).store
