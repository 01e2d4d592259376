"""Sweeps that differ only in device profiles, run together: each run is simulated once and priced
under every sweep's profiles (docs/experiments.md, "Sweeps that differ only in profiles").

A profile never changes a run (docs/units-and-scenarios.md, "Several profiles in one run"), so the
sweeps' runs pair up cell by cell and seed by seed, and one simulation gives each store the record a
run of its own sweep would have stored. A later ``sweep()`` of any of them finds its runs stored.
"""

from __future__ import annotations

import copy
from contextlib import ExitStack
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from tcpenergy.experiments.errors import SweepSpecError
from tcpenergy.experiments.executors import check_options, make_executor, run_profile_items
from tcpenergy.experiments.plan import Plan, make_plan
from tcpenergy.experiments.runner import SweepOutcome, _BatchWriter, _check_stored, _Progress
from tcpenergy.experiments.spec import SweepSpec, load_sweep
from tcpenergy.experiments.store import open_store
from tcpenergy.scenario import PathLike, to_json

_ENERGY_SLOTS = ("sender", "receiver", "default_profile", "radio_policy", "timeout")


def _slots(data: Dict[str, Any]) -> Dict[str, Any]:
    """The energy settings a profile may set, by dotted key, as the base scenario writes them."""
    out: Dict[str, Any] = {}
    energy = data.get("energy") or {}
    for key in _ENERGY_SLOTS:
        if key in energy:
            out[f"energy.{key}"] = energy[key]
    for name, node in (data.get("nodes") or {}).items():
        if isinstance(node, dict) and "profile" in node:
            out[f"nodes.{name}.profile"] = node["profile"]
    return out


def _without_slots(data: Dict[str, Any]) -> Dict[str, Any]:
    out = copy.deepcopy(data)
    for key in _slots(data):
        *tables, last = key.split(".")
        node = out
        for part in tables:
            node = node[part]
        node.pop(last)
    return out


def _profile_overrides(main: Dict[str, Any], other: Dict[str, Any], name: str) -> List[Tuple[str, str]]:
    """The overrides that turn the base ``main`` into ``other``: the energy settings that differ.
    SweepSpecError when the two differ elsewhere, or in a setting only one of them writes."""
    a, b = _slots(main), _slots(other)
    if set(a) != set(b) or _without_slots(main) != _without_slots(other):
        raise SweepSpecError("base", f"sweep {name}: the base scenarios differ beyond their device profiles "
                                     f"(energy settings {sorted(a)} and {sorted(b)}); run the sweeps apart")
    return [(key, to_json(b[key], key)) for key in a if a[key] != b[key]]


def _aligned(plans: Sequence[Plan]) -> None:
    first = plans[0]
    for plan in plans[1:]:
        same = len(plan.runs) == len(first.runs) and all(
            r.seed == s.seed and r.cell.overrides == s.cell.overrides for r, s in zip(plan.runs, first.runs))
        if not same:
            raise SweepSpecError("axes", f"sweeps {first.name} and {plan.name} do not have the same cells and "
                                         "seeds; run them apart")


def sweep_profiles(specs: Sequence[Union[SweepSpec, PathLike]], stores: Sequence[PathLike],
                   jobs: Optional[int] = None, executor: str = "local", scheduler: Any = None,
                   progress: bool = True) -> List[SweepOutcome]:
    """Run sweeps whose base scenarios differ only in device profiles and energy meter settings,
    sweep ``specs[k]`` into ``stores[k]``: each run any store lacks is simulated once and priced
    under the profiles of every sweep that lacks it. Returns each sweep's outcome."""
    if len(specs) != len(stores) or not specs:
        raise ValueError("one store per sweep, and at least one sweep")
    loaded = [load_sweep(s) for s in specs]
    plans = [make_plan(s) for s in loaded]
    _aligned(plans)
    check_options(executor, jobs, scheduler)
    data = [s.base_scenario.data for s in loaded]
    outcomes = [SweepOutcome(p.name, Path(st), len(p.runs), duplicates=p.duplicates) for p, st in zip(plans, stores)]
    with ExitStack() as stack:
        opened = [stack.enter_context(open_store(Path(st), create=True)) for st in stores]
        stored = []
        for st, plan in zip(opened, plans):
            st.add_to_sweep(plan.name, [(r.run_key, r.cell.index, r.cell.labels_json) for r in plan.runs])
            stored.append(st.ok_keys())
        # Runs grouped by the sweep simulated (the first that lacks them), with the others priced.
        groups: Dict[Tuple[int, ...], List[int]] = {}
        for i in range(len(plans[0].runs)):
            lacking = tuple(k for k, plan in enumerate(plans) if plan.runs[i].run_key not in stored[k])
            for k in range(len(plans)):
                if k not in lacking:
                    outcomes[k].skipped += 1
            if lacking:
                groups.setdefault(lacking, []).append(i)
        writers = [_BatchWriter(st, plan, out, st.keys() - ok)
                   for st, plan, out, ok in zip(opened, plans, outcomes, stored)]
        todo = sum(len(v) for v in groups.values())
        try:
            with _Progress(progress, todo, " + ".join(sorted({p.name for p in plans})), 0) as bar:
                for lacking, indices in groups.items():
                    main = lacking[0]
                    extra = [_profile_overrides(data[main], data[k], plans[k].name) for k in lacking[1:]]
                    items = []
                    for i in indices:
                        run = plans[main].runs[i]
                        # A cell that sets a profile itself keeps it: its overrides go after the sweep's.
                        again = [(key, v) for key, v in run.cell.overrides if any(
                            key == s or key.startswith(s + ".") or s.startswith(key + ".") for s, _ in _flat(extra))]
                        items.append((i, run.seed, run.cell.overrides, [e + again for e in extra]))
                    runner = make_executor(executor, jobs, scheduler)
                    try:
                        for results in runner.run(plans[main].base_json, items, work=run_profile_items):
                            for r in results:
                                share = r["wall_s"] / len(lacking)
                                texts = r["results"] or [None] * len(lacking)
                                for k, text in zip(lacking, texts):
                                    writers[k].add([{"index": r["index"], "status": r["status"], "error": r["error"],
                                                     "result": text, "wall_s": share}])
                            bar.advance(len(results))
                    finally:
                        runner.close()
        finally:
            for w in writers:
                w.flush()
        for st, plan, out in zip(opened, plans, outcomes):
            _check_stored(st, plan, out)
    return outcomes


def _flat(extra: Sequence[Sequence[Tuple[str, str]]]):
    for overrides in extra:
        yield from overrides


__all__ = ["sweep_profiles"]
