"""Running a sweep: skip what the store already holds, run the rest, store results in batches.

Order matters for the guarantees: the sweep file is checked and every run planned before the store
is created or opened, so a bad sweep leaves no file behind; results are committed every
``BATCH_RUNS`` runs or ``BATCH_SECONDS`` seconds, so an interrupted sweep loses at most the runs
of the last second, and a re-run skips every run stored with status ok.
"""

from __future__ import annotations

import multiprocessing
import time
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Set, Tuple, Union

from tcpenergy.experiments.errors import RunsNotStored
from tcpenergy.experiments.executors import Result, check_options, make_executor
from tcpenergy.experiments.plan import Plan, make_plan
from tcpenergy.experiments.spec import SweepSpec, load_sweep
from tcpenergy.experiments.store import Store, open_store
from tcpenergy.scenario import PathLike

BATCH_RUNS = 200
BATCH_SECONDS = 1.0
_KEPT_ERRORS = 5

ProgressCallback = Callable[[int, int], None]


@dataclass
class SweepOutcome:
    """What a sweep did: ``ran`` runs executed now (``failed`` of them failed, ``incomplete`` of
    them stopped by stop_after before their transfer ended), ``skipped`` found already stored with
    status ok, out of ``total`` distinct runs."""

    name: str
    store: Path
    total: int
    ran: int = 0
    skipped: int = 0
    failed: int = 0
    wall_s: float = 0.0
    duplicates: int = 0
    incomplete: int = 0
    errors: List[Tuple[str, str]] = field(default_factory=list)  # (run_key, error), the first few

    @property
    def complete(self) -> bool:
        """Every planned run is stored (ran now or before); says nothing of the transfers."""
        return self.ran + self.skipped == self.total

    def __str__(self) -> str:
        text = (f"sweep {self.name}: {self.total} runs: {self.ran} ran ({self.failed} failed), "
                f"{self.skipped} skipped (already stored); store: {self.store}")
        if self.incomplete:
            text += (f"; {self.incomplete} of the runs that ran are incomplete (stopped by "
                     "stop_after before the transfer ended; left out of summaries)")
        return text


class _BatchWriter:
    """Buffers results and commits them in one transaction per batch."""

    def __init__(self, store: Store, plan: Plan, outcome: SweepOutcome,
                 stored: Set[str]) -> None:
        self._store, self._plan, self._outcome = store, plan, outcome
        self._stored = stored  # keys already in the store (failed runs being retried)
        self._replace = False
        self._rows: List[Dict[str, Any]] = []
        self._last = time.monotonic()

    def add(self, results: List[Result]) -> None:
        for result in results:
            row = self._row(result)
            self._replace = self._replace or row["run_key"] in self._stored
            self._rows.append(row)
        if len(self._rows) >= BATCH_RUNS or time.monotonic() - self._last >= BATCH_SECONDS:
            self.flush()

    def flush(self) -> None:
        if self._rows:
            try:
                self._store.write(self._rows, new=not self._replace)
            except BaseException:
                # Interrupted around COMMIT, the batch may be stored or not: replace on retry.
                self._replace = True
                raise
        self._rows = []
        self._replace = False
        self._last = time.monotonic()

    def _row(self, result: Result) -> Dict[str, Any]:
        run = self._plan.runs[result["index"]]
        cell = run.cell
        outcome = self._outcome
        outcome.ran += 1
        if result["status"] == "ok" and '"complete":false' in (result["result"] or ""):
            # The engine writes compact JSON; a substring test spares parsing every record.
            outcome.incomplete += 1
        if result["status"] != "ok":
            outcome.failed += 1
            if len(outcome.errors) < _KEPT_ERRORS:
                outcome.errors.append((run.run_key, result["error"]))
        return {"run_key": run.run_key, "scenario_hash": cell.scenario_hash, "seed": run.seed,
                "engine_version": self._plan.engine_version, "status": result["status"],
                "error": result["error"], "sweep": self._plan.name, "cell": cell.index,
                "labels": cell.labels_json, "scenario": cell.scenario_json,
                "result": result["result"], "wall_s": result["wall_s"]}


def sweep(
    spec: Union[SweepSpec, Mapping[str, Any], PathLike],
    store: Optional[PathLike] = None,
    jobs: Optional[int] = None,
    executor: str = "local",
    scheduler: Any = None,
    progress: Union[bool, ProgressCallback] = True,
) -> SweepOutcome:
    """Run every cell x seed of a sweep not already in the store; return what was done.

    ``spec``: a sweep file path, a dict shaped like one, or a :class:`SweepSpec`. ``store``:
    the DuckDB file (default: ``<sweep stem>.duckdb`` beside the sweep file). ``executor``:
    "local" (a process pool of ``jobs`` workers, default all cores) or "dask" (``scheduler``: an
    address such as "tcp://host:8786", a ``distributed.Client``, or None for a LocalCluster of
    ``jobs`` workers). ``progress``: a live progress bar, False, or a callable(done, total).
    """
    if getattr(multiprocessing.current_process(), "_inheriting", False):
        # A pool worker importing a script that calls sweep() at top level.
        raise RuntimeError("tcpenergy.sweep() was called while a worker process was starting: "
                           "protect the script's entry point with `if __name__ == \"__main__\":`")
    started = time.perf_counter()
    spec = load_sweep(spec)
    plan = make_plan(spec)
    check_options(executor, jobs, scheduler, plan.mode)
    store_path = Path(store) if store is not None else spec.default_store()
    outcome = SweepOutcome(plan.name, store_path, len(plan.runs), duplicates=plan.duplicates)
    with open_store(store_path, create=True) as st:
        st.add_to_sweep(plan.name, [(run.run_key, run.cell.index, run.cell.labels_json)
                                    for run in plan.runs])
        stored = st.ok_keys()
        todo = [(i, run.seed, run.cell.overrides) for i, run in enumerate(plan.runs)
                if run.run_key not in stored]
        outcome.skipped = len(plan.runs) - len(todo)
        if todo:
            writer = _BatchWriter(st, plan, outcome, st.keys() - stored)
            _execute(writer, plan, todo, make_executor(executor, jobs, scheduler, plan.mode), progress,
                     outcome.skipped)
        _check_stored(st, plan, outcome)
    outcome.wall_s = time.perf_counter() - started
    return outcome


def _check_stored(store: Store, plan: Plan, outcome: SweepOutcome) -> None:
    """The outcome says every planned run is stored (ran now, or before): check that the store
    holds them, and that the file at its path is still the one written."""
    gone = store.gone()
    held = store.held([run.run_key for run in plan.runs]) if gone is None else 0
    if gone is None and held == outcome.total:
        return
    what = (f"store {store.path} was {gone} while the sweep wrote it" if gone is not None else
            f"store {store.path} holds {held} of its {outcome.total} runs after writing")
    raise RunsNotStored(f"sweep {plan.name}: {outcome.ran} runs ran, but {what}; run the sweep "
                        "again to store the missing runs")


def _execute(writer: _BatchWriter, plan: Plan, todo: list, runner: Any,
             progress: Union[bool, ProgressCallback], skipped: int) -> None:
    try:
        with _Progress(progress, len(todo), plan.name, skipped) as bar:
            with closing(runner.run(plan.base_json, todo)) as chunks:
                for results in chunks:
                    writer.add(results)
                    bar.advance(len(results))
    finally:
        # Whatever stopped the sweep (Ctrl-C, a dead worker), what came back is kept.
        try:
            writer.flush()
        finally:
            runner.close()


class _Progress:
    """A rich progress bar on stderr (done/total, rate, ETA), a callback, or nothing."""

    def __init__(self, progress: Union[bool, ProgressCallback], total: int, name: str,
                 skipped: int) -> None:
        self._callback = progress if callable(progress) else None
        self._bar = None
        self._done, self._total = 0, total
        if progress and self._callback is None:
            from rich.console import Console
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                                       TimeElapsedColumn, TimeRemainingColumn)

            description = f"{name}" + (f" ({skipped} already stored)" if skipped else "")
            self._bar = Progress(
                TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                TextColumn("{task.fields[rate]}"), TimeElapsedColumn(), TextColumn("ETA"),
                TimeRemainingColumn(), console=Console(stderr=True))
            self._task = self._bar.add_task(description, total=total, rate="")
            self._started = time.perf_counter()

    def __enter__(self) -> "_Progress":
        if self._bar is not None:
            self._bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()

    def advance(self, n: int) -> None:
        self._done += n
        if self._bar is not None:
            rate = self._done / max(time.perf_counter() - self._started, 1e-9)
            self._bar.update(self._task, advance=n, rate=f"{rate:,.0f} runs/s")
        if self._callback is not None:
            self._callback(self._done, self._total)
