"""The flat runs frame: one row per stored run (and per sweep it belongs to, when sweeps of one
store share runs), every scenario key and result field a column.

Columns: run_key, seed, status, error, sweep, wall_s (and scenario_hash, engine_version, cell,
created_at); each scenario key in dotted form ("tcp.variant", "path.forward.impairments.0.p"; a
device profile given inline appears as its name); each result field as the record nests it
("flow.goodput_bps", "energy.sender.breakdown_j.cpu"); and "label.<axis>" for each axis label.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence

from tcpenergy.outputs import OutputPathError, atomic_write
from tcpenergy.records import flatten

if TYPE_CHECKING:
    import pandas as pd

RUN_COLUMNS = ("run_key", "seed", "status", "error", "sweep", "wall_s", "scenario_hash",
               "engine_version", "cell", "created_at")
LABEL_PREFIX = "label."
# Scenario keys that hold a device profile: a name, or an inline table that carries one.
_PROFILE_KEYS = ("energy.sender", "energy.receiver")
EXPORT_FORMATS = ("parquet", "csv")


def _index_lists(value: Any) -> Any:
    """Lists become tables keyed by index, so flattening gives "impairments.0.p"; empty ones go."""
    if isinstance(value, Mapping):
        return {k: _index_lists(v) for k, v in value.items() if v != []}
    if isinstance(value, list):
        return {str(i): _index_lists(v) for i, v in enumerate(value)}
    return value


def flatten_scenario(scenario: Mapping[str, Any]) -> Dict[str, Any]:
    flat = flatten(_index_lists({k: v for k, v in scenario.items() if k != "seed"}))
    for key in _PROFILE_KEYS:
        # An inline profile flattens into many columns; its name is the one that matters here.
        fields = {k: v for k, v in flat.items() if k.startswith(key + ".")}
        if fields:
            for k in fields:
                del flat[k]
            flat[key] = fields.get(f"{key}.name", json.dumps(_unflatten(fields, key)))
    return flat


def _unflatten(fields: Mapping[str, Any], prefix: str) -> Dict[str, Any]:
    return {k[len(prefix) + 1:]: v for k, v in fields.items()}


def flatten_columns(records: Sequence[Optional[Mapping[str, Any]]],
                    prefix: str = "") -> Dict[str, List[Any]]:
    """Flatten many records at once, column by column: the same columns and values as
    :func:`records.flatten` row by row (non-empty tables flattened, lists kept as values), at a
    fraction of the cost for the thousands of rows of a store."""
    keys = dict.fromkeys(k for r in records if r for k in r)
    columns: Dict[str, List[Any]] = {}
    for key in keys:
        values = [r.get(key) if r else None for r in records]
        nested = [type(v) is dict and bool(v) for v in values]  # parsed JSON: plain dicts
        if not any(nested):
            columns[prefix + key] = values
            continue
        if not all(nested) and any(v is not None for v, n in zip(values, nested) if not n):
            columns[prefix + key] = [None if n else v for v, n in zip(values, nested)]
        columns.update(flatten_columns([v if n else None for v, n in zip(values, nested)],
                                       f"{prefix}{key}."))
    return columns


def runs_frame(records: Sequence[Mapping[str, Any]]) -> "pd.DataFrame":
    """The flat frame of stored runs (as :meth:`Store.records` gives them)."""
    import pandas as pd

    records = list(records)
    if not records:
        return pd.DataFrame(columns=list(RUN_COLUMNS))
    columns: Dict[str, List[Any]] = {c: [r.get(c) for r in records] for c in RUN_COLUMNS}
    # Labels are one level deep: "tcp.variant" is one axis name, not a table to flatten.
    columns.update(_label_columns(records))
    # Every seed of a cell shares its scenario: flatten each distinct scenario once.
    scenarios: Dict[str, Dict[str, Any]] = {}
    for r in records:
        if r["scenario_hash"] not in scenarios:
            scenarios[r["scenario_hash"]] = flatten_scenario(json.loads(r["scenario"] or "{}"))
    scenario_keys = dict.fromkeys(k for flat in scenarios.values() for k in flat)
    for key in scenario_keys:
        columns[key] = [scenarios[r["scenario_hash"]].get(key) for r in records]
    results = flatten_columns([json.loads(r["result"]) if r.get("result") else None
                               for r in records])
    for key, values in results.items():
        if key in RUN_COLUMNS:
            continue  # seed and engine_version: the same values, already there
        columns[f"result.{key}" if key in columns else key] = values
    return pd.DataFrame(columns)


def _label_columns(records: Sequence[Mapping[str, Any]]) -> Dict[str, List[Any]]:
    parsed = [json.loads(r.get("labels") or "{}") for r in records]
    axes = dict.fromkeys(k for p in parsed for k in p)
    return {LABEL_PREFIX + axis: [p.get(axis) for p in parsed] for axis in axes}


def label_columns(frame: "pd.DataFrame") -> list:
    return [c for c in frame.columns if c.startswith(LABEL_PREFIX)]


# ---------------------------------------------------------------------------------------------
# export


def _arrow_safe(frame: "pd.DataFrame") -> "pd.DataFrame":
    """Parquet needs one type per column: a column mixing e.g. 64000 and "infinite" becomes text."""
    out = frame.copy()
    for column in out.columns:
        if out[column].dtype != object:
            continue
        values = out[column].dropna()
        kinds = {type(v) for v in values}
        if len(kinds) > 1 or kinds & {dict, list}:
            out[column] = out[column].map(
                lambda v: v if v is None or (isinstance(v, float) and v != v)
                else (json.dumps(v) if isinstance(v, (dict, list)) else str(v)))
    return out


def default_export_path(store: Path, fmt: str) -> Path:
    return store.with_suffix(f".{fmt}")


def export_frame(frame: "pd.DataFrame", path: Path, fmt: str) -> Path:
    """Write the frame as parquet or csv, atomically: no partial file is ever left at ``path``."""
    if fmt not in EXPORT_FORMATS:
        raise OutputPathError(f"--format: unsupported export format {fmt!r}; use parquet or csv")
    path = Path(path)
    if not path.parent.is_dir():
        raise OutputPathError(f"--out: directory does not exist: {path.parent}")
    if path.is_dir():
        raise OutputPathError(f"--out: {path} is a directory")
    if fmt == "csv":
        atomic_write(path, lambda tmp: frame.to_csv(tmp, index=False))
    else:
        safe = _arrow_safe(frame)
        atomic_write(path, lambda tmp: safe.to_parquet(tmp, index=False, engine="pyarrow"))
    return path
