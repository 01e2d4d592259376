"""Experiments at scale: sweeps over a grid of scenarios and seeds, a DuckDB results store that
makes sweeps resumable, local and Dask executors, and summaries over complete runs (means with
confidence intervals that never go below zero for quantities that cannot).

    import tcpenergy
    outcome = tcpenergy.sweep("sweeps/loss.toml", jobs=4)
    with tcpenergy.open_store(outcome.store) as store:
        runs = store.runs()                      # one flat row per run
        flows = flows_frame(store)               # from tcpenergy.experiments: a row per run and flow
    tcpenergy.summarize(runs)                    # mean, 90 % and 95 % CIs per cell

Submodules are imported on first use, so ``import tcpenergy`` stays light.
"""

from __future__ import annotations

import importlib
from typing import Any

from tcpenergy.experiments.errors import (ExecutorError, RunsNotStored, StoreError, SweepAborted,
                                         SweepSpecError)

_LAZY = {
    "sweep": "runner",
    "SweepOutcome": "runner",
    "open_store": "store",
    "Store": "store",
    "load_sweep": "spec",
    "expand": "spec",
    "SweepSpec": "spec",
    "RunSpec": "spec",
    "summarize": "stats",
    "flows_frame": "frame",
}

__all__ = sorted(_LAZY) + ["ExecutorError", "RunsNotStored", "StoreError", "SweepAborted",
                           "SweepSpecError"]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list:
    return sorted(set(globals()) | set(_LAZY))
