"""The flat runs frame: one row per stored run (and per sweep it belongs to, when sweeps of one
store share runs), every scenario key and result field a column.

Columns: run_key, seed, status, error, sweep, wall_s (and scenario_hash, engine_version, cell,
created_at); each scenario key in dotted form ("tcp.variant", "path.forward.impairments.0.p"; a
device profile given inline appears as its name, and so does a link's trace); each result field as the record nests it
("flow.goodput_bps", "energy.sender.breakdown_j.cpu"; of a network run also
"flows.<flow name>.goodput_bps", "nodes.<node>.total_j", "links.<from>-><to>.dropped_queue",
"network.jain_fairness"); and "label.<axis>" for each axis label.

The flows frame (:func:`flows_frame`) is the long form of the per-flow results: one row per run and
flow, the run's identity and labels beside the flow's own fields ("flow.name", "flow.goodput_bps").
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Mapping, Optional, Sequence, Union

from tcpenergy.experiments.plan import mode_of
from tcpenergy.outputs import OutputPathError, atomic_write
from tcpenergy.records import flatten, flows_by_name
from tcpenergy.trace_files import labelled

if TYPE_CHECKING:
    import pandas as pd

    from tcpenergy.experiments.store import Store

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


def _profile_keys(scenario: Mapping[str, Any]) -> List[str]:
    nodes = scenario.get("nodes")
    names = list(nodes) if isinstance(nodes, Mapping) else []
    return [*_PROFILE_KEYS, "energy.default_profile", *(f"nodes.{n}.profile" for n in names)]


def flatten_scenario(scenario: Mapping[str, Any]) -> Dict[str, Any]:
    # A link's trace is one column, its name, not one per timestamp.
    scenario = labelled(scenario)
    flat = flatten(_index_lists({k: v for k, v in scenario.items() if k != "seed"}))
    for key in _profile_keys(scenario):
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
    fraction of the cost for the thousands of rows of a store. Result records go through
    :func:`records.flows_by_name` first, as :func:`records.flatten` does."""
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
    results = flatten_columns([flows_by_name(json.loads(r["result"])) if r.get("result")
                               else None for r in records])
    for key, values in results.items():
        if key in RUN_COLUMNS or key == "mode":
            continue  # seed and engine_version: the same values, already there; mode below
        columns[f"result.{key}" if key in columns else key] = values
    columns.update(_mode_columns(records))
    return pd.DataFrame(columns)


def _mode_columns(records: Sequence[Mapping[str, Any]]) -> Dict[str, List[Any]]:
    """``mode`` of each run (simulated or emulated, read off its key); where a frame holds both,
    also ``label.mode``, so that a cell's simulated and emulated runs are two groups, side by
    side in summaries and reports."""
    modes = [mode_of(r.get("run_key", "")) for r in records]
    columns: Dict[str, List[Any]] = {"mode": modes}
    if len(set(modes)) > 1:
        columns[LABEL_PREFIX + "mode"] = modes
    return columns


def _label_columns(records: Sequence[Mapping[str, Any]]) -> Dict[str, List[Any]]:
    parsed = [json.loads(r.get("labels") or "{}") for r in records]
    axes = dict.fromkeys(k for p in parsed for k in p)
    return {LABEL_PREFIX + axis: [p.get(axis) for p in parsed] for axis in axes}


def label_columns(frame: "pd.DataFrame") -> list:
    return [c for c in frame.columns if c.startswith(LABEL_PREFIX)]


# ---------------------------------------------------------------------------------------------
# the flows frame: one row per (run, flow)

FLOW_PREFIX = "flow."
# The run-level fields each row of the flows frame repeats: which scenario, and whether the run
# as a whole is complete (so completeness.usable() selects the same runs as in the runs frame).
_RUN_RESULT_COLUMNS = ("scenario", "complete", "sim_time_s")
# The one flow of a single-path scenario (DESIGN.md "Networks": the shorthand's flow "main").
_SINGLE_PATH_FLOW = {"name": "main", "from": "sender", "to": "receiver", "transport": "tcp"}
_FLOW_IDENTITY = ("name", "from", "to", "transport")

# A store, its path, stored runs (Store.records()) or result records (tcpenergy.run).
RunSource = Union["Store", str, "os.PathLike[str]", Iterable[Mapping[str, Any]]]


def record_flows(record: Mapping[str, Any]) -> List[Dict[str, Any]]:
    """A result record's flows, each a table with its ``name``, ``from``, ``to``, ``transport``
    and results: a network record's ``flows`` list; for a single-path record, its one flow
    ``main`` (sender -> receiver, tcp, the record's variant and ``flow`` table)."""
    flows = record.get("flows")
    if isinstance(flows, list):
        return [dict(flow) for flow in flows if isinstance(flow, Mapping)]
    if isinstance(record.get("flow"), Mapping):
        return [{**_SINGLE_PATH_FLOW, "variant": record.get("variant"), **record["flow"]}]
    return []


def scenario_flows(scenario: Mapping[str, Any]) -> List[Dict[str, Any]]:
    """The flows a (normalized) scenario declares, each as name, from, to and transport: the
    rows a failed run, which has no record, still gets in the flows frame."""
    flows = scenario.get("flows")
    if isinstance(flows, list):
        return [{k: flow.get(k) for k in _FLOW_IDENTITY} for flow in flows
                if isinstance(flow, Mapping)]
    return [dict(_SINGLE_PATH_FLOW)] if scenario.get("path") is not None else []


def _stored_rows(record: Mapping[str, Any], labels: Mapping[str, Any]) -> List[Dict[str, Any]]:
    run = {c: record.get(c) for c in RUN_COLUMNS}
    run.update({LABEL_PREFIX + axis: value for axis, value in labels.items()})
    run["mode"] = mode_of(record.get("run_key", ""))
    result = json.loads(record["result"]) if record.get("result") else None
    if result is None:
        scenario = json.loads(record.get("scenario") or "{}")
        run["scenario"] = scenario.get("name")
        flows = scenario_flows(scenario)
    else:
        run.update({c: result.get(c) for c in _RUN_RESULT_COLUMNS})
        flows = record_flows(result)
    return [{**run, **flatten(flow, FLOW_PREFIX)} for flow in flows] or [run]


def _record_rows(record: Mapping[str, Any]) -> List[Dict[str, Any]]:
    run = flatten({"parameters": record.get("parameters") or {}})
    run.update({c: record.get(c) for c in ("seed", *_RUN_RESULT_COLUMNS)})
    return [{**run, **flatten(flow, FLOW_PREFIX)} for flow in record_flows(record)] or [run]


def flows_frame(source: RunSource) -> "pd.DataFrame":
    """The long per-flow frame: one row per run and flow (``tcpenergy export --per flow``).

    ``source``: a :class:`~tcpenergy.experiments.store.Store` or the path of one (every stored
    run, in the runs frame's order), the stored runs :meth:`Store.records` gives, or result
    records as :func:`tcpenergy.run` returns them. Each row holds the run's columns (from a
    store: ``run_key``, ``seed``, ``status``, ... and ``label.<axis>``; from records:
    ``parameters.<key>`` and ``seed``), ``scenario``, ``complete`` (the whole run's) and
    ``sim_time_s``, then the flow's fields under ``flow.``: ``flow.name``, ``flow.from``,
    ``flow.to``, ``flow.transport``, ``flow.variant``, ``flow.complete``, ``flow.goodput_bps``,
    ``flow.latency_ms.p95``, ... A single-path run is one flow, ``main`` (sender -> receiver);
    a failed run keeps one row per flow its scenario declares, without results.
    """
    import pandas as pd

    rows: List[Dict[str, Any]] = []
    for record in _run_records(source):
        if "run_key" in record and "result" in record:
            labels = json.loads(record.get("labels") or "{}")
            rows.extend(_stored_rows(record, labels))
        else:
            rows.extend(_record_rows(record))
    if len({row.get("mode") for row in rows} - {None}) > 1:
        for row in rows:
            row[LABEL_PREFIX + "mode"] = row.get("mode")
    columns = list(dict.fromkeys(k for row in rows for k in row))
    if not rows:
        columns = [*RUN_COLUMNS, *_RUN_RESULT_COLUMNS, FLOW_PREFIX + "name"]
    return pd.DataFrame(rows, columns=columns)


def _run_records(source: RunSource) -> List[Mapping[str, Any]]:
    from tcpenergy.experiments.store import Store, open_store

    if isinstance(source, Store):
        return source.records()
    if isinstance(source, (str, os.PathLike)):
        with open_store(source) as store:
            return store.records()
    if isinstance(source, Mapping):
        return [source]
    return list(source)


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


def default_export_path(store: Path, fmt: str, per: str = "run") -> Path:
    """``STORE.<fmt>`` for the runs frame, ``STORE-flows.<fmt>`` for the flows frame."""
    if per == "flow":
        return store.with_name(f"{store.stem}-flows.{fmt}")
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
