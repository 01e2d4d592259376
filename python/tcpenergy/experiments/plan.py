"""Run identity: every run of a sweep gets its normalized scenario, scenario hash and run key.

scenario_hash = sha256 of the normalized scenario JSON (keys sorted; ``name`` and ``seed`` left out,
so renaming the base file or changing its default seed does not change what a run is), first 16 hex
digits. run_key = "<scenario_hash>-<seed>-<engine version>": a stored run with that key is the same
computation, so a re-run may skip it. An emulated run's key ends in "-emulated" (the kernel ran
it; docs/emulation.md).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Tuple

from tcpenergy._version import engine_version
from tcpenergy.exceptions import ScenarioError
from tcpenergy.experiments.errors import SweepSpecError
from tcpenergy.experiments.spec import SweepSpec, expand
from tcpenergy.scenario import encode_overrides, validate

_NOT_IDENTITY = ("name", "seed")


@dataclass(frozen=True)
class Cell:
    """One point of the grid: its labels, the overrides as the engine takes them, its scenario."""

    index: int
    labels: Dict[str, Any]
    overrides: List[Tuple[str, str]]  # (dotted key, JSON text)
    scenario_json: str  # normalized, without the seed (each run has its own)
    scenario_hash: str
    labels_json: str


@dataclass(frozen=True)
class PlannedRun:
    run_key: str
    seed: int
    cell: Cell


@dataclass(frozen=True)
class Plan:
    name: str
    base_json: str
    engine_version: str
    runs: List[PlannedRun]
    duplicates: int  # runs of two cells that turned out to be the same scenario; run once
    mode: str = "simulated"


def scenario_hash(normalized: Mapping[str, Any]) -> str:
    identity = {k: v for k, v in normalized.items() if k not in _NOT_IDENTITY}
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


EMULATED_SUFFIX = "-emulated"


def run_key(hash_: str, seed: int, version: str, mode: str = "simulated") -> str:
    return f"{hash_}-{seed}-{version}" + (EMULATED_SUFFIX if mode == "emulated" else "")


def mode_of(key: str) -> str:
    """Whether the run of ``key`` was simulated or emulated."""
    return "emulated" if str(key).endswith(EMULATED_SUFFIX) else "simulated"


def make_plan(spec: SweepSpec) -> Plan:
    """Every run of the sweep, each once; raises SweepSpecError for a cell the engine rejects."""
    base = spec.base_scenario
    version = engine_version()
    cells: Dict[int, Cell] = {}
    runs: List[PlannedRun] = []
    seen = set()
    for item in expand(spec):
        cell = cells.get(item.cell)
        if cell is None:
            cell = cells[item.cell] = _make_cell(base, item.cell, item.overrides, item.labels, spec)
        key = run_key(cell.scenario_hash, item.seed, version, spec.mode)
        if key not in seen:
            seen.add(key)
            runs.append(PlannedRun(key, item.seed, cell))
    total = spec.cells() * len(spec.seed_list)
    return Plan(spec.sweep_name, base.to_json(), version, runs, total - len(runs), spec.mode)


def _make_cell(base, index: int, overrides: Dict[str, Any], labels: Dict[str, Any],
               spec: SweepSpec) -> Cell:
    pairs = list(overrides.items())
    try:
        normalized = validate(base, pairs)
    except ScenarioError as exc:
        # Each axis was checked with its first value; a later value (or a combination) can still
        # be invalid, and is reported before anything runs.
        where = getattr(exc, "path", "") or ""
        message = getattr(exc, "message", None) or str(exc)
        shown = ", ".join(f"{k} = {v!r}" for k, v in labels.items())
        raise SweepSpecError("axes", f"cell ({shown}): {where}: {message}", spec.source) from None
    normalized.pop("seed", None)
    return Cell(index, dict(labels), encode_overrides(pairs),
                json.dumps(normalized, sort_keys=True), scenario_hash(normalized),
                json.dumps(labels, default=str))
