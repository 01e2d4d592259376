"""Where runs execute: in this process, on a local process pool, or on a Dask cluster.

Each executor takes the base scenario once per worker and a stream of run items (plan index,
seed, overrides), sends them in chunks so that the per-run cost of the machinery stays small, and
yields the results of each chunk as it completes: dicts with the plan index, status, error, the
result record as JSON text, and the run's wall time. A run the engine refuses is a result with
status "failed", never an exception that stops the sweep.
"""

from __future__ import annotations

import logging
import math
import multiprocessing
import os
import signal
import threading
import time
from collections import deque
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

from tcpenergy._native import engine
from tcpenergy.experiments.errors import ExecutorError, SweepAborted

Item = Tuple[int, int, List[Tuple[str, str]]]  # (plan index, seed, overrides as (key, JSON text))
Result = Dict[str, Any]

EXECUTORS = ("local", "dask")
MAX_CHUNK = 200

# ---------------------------------------------------------------------------------------------
# the worker side

_BASE: Optional[str] = None


def _init_pool_worker(base_json: str) -> None:
    global _BASE
    _BASE = base_json
    # Ctrl-C reaches the whole process group; the parent alone decides what to do about it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # A parent killed outright (kill -9) cannot shut the pool down: leave with it.
    parent = multiprocessing.parent_process()
    if parent is not None:
        threading.Thread(target=_exit_with, args=(parent.sentinel,), daemon=True).start()


def _exit_with(sentinel: int) -> None:
    from multiprocessing.connection import wait as wait_for

    wait_for([sentinel])
    os._exit(1)


def run_profile_items(items: Sequence[Tuple[int, int, List[Tuple[str, str]], list]],
                      base_json: Optional[str] = None) -> List[Result]:
    """Like :func:`run_items` for items that also carry further profiles (overrides of energy
    settings): each run is simulated once, and its result holds ``results``, the whole record
    under the scenario's own profiles and then under each further one."""
    base = base_json if base_json is not None else _BASE
    out = []
    for index, seed, overrides, profiles in items:
        start = time.perf_counter()
        try:
            texts, status, error = engine.run_each_profile(base, seed, overrides, profiles, False), "ok", None
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # the engine's errors, and a panic (a BaseException)
            texts, status, error = None, "failed", f"{type(exc).__name__}: {exc}"
        out.append({"index": index, "status": status, "error": error, "results": texts,
                    "wall_s": time.perf_counter() - start})
    return out


def run_items(items: Sequence[Item], base_json: Optional[str] = None) -> List[Result]:
    """Run a chunk; the scenario is the worker's (pool) or passed once per worker (dask)."""
    base = base_json if base_json is not None else _BASE
    out = []
    for index, seed, overrides in items:
        start = time.perf_counter()
        try:
            text, status, error = engine.run(base, seed, overrides, False), "ok", None
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # the engine's errors, and a panic (a BaseException)
            text, status, error = None, "failed", f"{type(exc).__name__}: {exc}"
        out.append({"index": index, "status": status, "error": error, "result": text,
                    "wall_s": time.perf_counter() - start})
    return out


def run_emulated_items(items: Sequence[Item], base_json: Optional[str] = None) -> List[Result]:
    """Run a chunk in kernel mode (docs/emulation.md), one run after another in this process."""
    import json

    from tcpenergy import api
    from tcpenergy.emulate.run import emulate

    base = api.load_scenario(json.loads(base_json if base_json is not None else _BASE))
    out = []
    for index, seed, overrides in items:
        start = time.perf_counter()
        try:
            record = emulate(base, seed, [(key, json.loads(text)) for key, text in overrides])
            text, status, error = json.dumps(record, separators=(",", ":")), "ok", None
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:
            text, status, error = None, "failed", f"{type(exc).__name__}: {exc}"
        out.append({"index": index, "status": status, "error": error, "result": text,
                    "wall_s": time.perf_counter() - start})
    return out


# ---------------------------------------------------------------------------------------------
# chunking


class Chunker:
    """Hands out chunks sized to take about ``target_s`` each, learnt from the runs seen so far;
    smaller near the end, so the last chunks spread over every worker."""

    def __init__(self, items: Sequence[Item], workers: int, target_s: float) -> None:
        self._items = deque(items)
        self.workers = max(1, workers)
        self._target_s = target_s
        self._runs = 0
        self._seconds = 0.0

    def __bool__(self) -> bool:
        return bool(self._items)

    def observe(self, results: Sequence[Result]) -> None:
        self._runs += len(results)
        self._seconds += sum(r["wall_s"] for r in results)

    def size(self) -> int:
        if self._runs == 0:
            by_time = 4  # nothing measured yet: small, so the first results come back fast
        else:
            by_time = int(self._target_s / max(self._seconds / self._runs, 1e-9))
        tail = math.ceil(len(self._items) / (2 * self.workers))
        return max(1, min(by_time, MAX_CHUNK, tail))

    def next(self) -> List[Item]:
        return [self._items.popleft() for _ in range(min(self.size(), len(self._items)))]


# ---------------------------------------------------------------------------------------------
# executors


class SerialExecutor:
    """Runs in this process: no start-up cost, for one job (and for tests)."""

    workers = 1

    def run(self, base_json: str, items: Sequence[Item], work: Any = run_items) -> Iterator[List[Result]]:
        chunks = Chunker(items, 1, target_s=0.1)
        while chunks:
            results = work(chunks.next(), base_json)
            chunks.observe(results)
            yield results

    def close(self) -> None:
        pass


def _pool_context() -> Any:
    # Not fork: the parent has threads (DuckDB, the progress display) by the time a pool starts.
    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    ctx = multiprocessing.get_context(method)
    if method == "forkserver":
        ctx.set_forkserver_preload([__name__])
    return ctx


class PoolExecutor:
    """A local process pool; each worker gets the base scenario once, at start."""

    def __init__(self, jobs: int) -> None:
        self.workers = jobs

    def run(self, base_json: str, items: Sequence[Item], work: Any = run_items) -> Iterator[List[Result]]:
        chunks = Chunker(items, self.workers, target_s=0.2)
        pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=_pool_context(),
                                   initializer=_init_pool_worker, initargs=(base_json,))
        pending = set()
        try:
            while chunks or pending:
                while chunks and len(pending) < 2 * self.workers:
                    pending.add(pool.submit(work, chunks.next()))
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    try:
                        results = future.result()
                    except Exception as exc:  # BrokenProcessPool: a worker died
                        raise SweepAborted(
                            f"a worker process died ({exc}); the runs done so far are "
                            "stored. (A script that calls tcpenergy.sweep needs "
                            "`if __name__ == \"__main__\":`.)") from exc
                    chunks.observe(results)
                    yield results
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def close(self) -> None:
        pass


class DaskExecutor:
    """Dask: a scheduler address, a ``distributed.Client``, or a LocalCluster of ``jobs``
    workers."""

    def __init__(self, jobs: int, scheduler: Any = None) -> None:
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            raise ExecutorError("the dask executor needs dask.distributed: "
                                "pip install 'dask[distributed]'") from None
        self._cluster = None
        self._own_client = not isinstance(scheduler, Client)
        if isinstance(scheduler, Client):
            self._client = scheduler
        elif scheduler:
            try:
                self._client = Client(scheduler, timeout="20s")
            except (OSError, TimeoutError, ValueError) as exc:
                raise ExecutorError(f"cannot connect to the Dask scheduler {scheduler}: {exc}"
                                    ) from None
        else:
            self._cluster = LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True,
                                         dashboard_address=":0", silence_logs=logging.ERROR)
            self._client = Client(self._cluster)
        self.workers = max(1, sum(self._client.nthreads().values()))

    def run(self, base_json: str, items: Sequence[Item], work: Any = run_items) -> Iterator[List[Result]]:
        from distributed import as_completed

        client = self._client
        # Each worker receives the scenario once; tasks refer to it.
        base = client.scatter(base_json, broadcast=True)
        chunks = Chunker(items, self.workers, target_s=1.0)
        futures = as_completed()
        in_flight, checked = 0, time.monotonic()
        try:
            while True:
                if time.monotonic() - checked > 1.0:
                    # Workers may join (or leave) during the sweep, e.g. as SLURM jobs start.
                    chunks.workers = max(1, sum(client.nthreads().values()))
                    checked = time.monotonic()
                while chunks and in_flight < 2 * chunks.workers:
                    futures.add(client.submit(work, chunks.next(), base, pure=False))
                    in_flight += 1
                if in_flight == 0:
                    break
                future = next(futures)
                in_flight -= 1
                try:
                    results = future.result()
                except Exception as exc:  # a worker died (KilledWorker) or the cluster went away
                    raise SweepAborted(f"a Dask task failed ({exc}); the runs done so far "
                                       "are stored") from exc
                chunks.observe(results)
                yield results
        finally:
            for future in list(futures.futures):
                future.cancel()
            base.release()

    def close(self) -> None:
        if self._own_client:
            self._client.close()
        if self._cluster is not None:
            self._cluster.close()


def check_options(kind: str, jobs: Optional[int], scheduler: Any, mode: str = "simulated") -> None:
    """Refuse unusable executor options before anything is started or created."""
    if kind not in EXECUTORS:
        raise ExecutorError(f"unknown executor {kind!r}; use one of {', '.join(EXECUTORS)}")
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise ExecutorError(f"jobs must be an integer >= 1, got {jobs!r}")
    if kind == "local" and scheduler:
        raise ExecutorError("a scheduler is only used with the dask executor")
    if mode == "emulated" and (kind != "local" or (jobs or 1) != 1):
        raise ExecutorError("an emulated sweep runs one run at a time on this machine (its timing is "
                            "real): use the local executor with one job (--jobs 1)")


class EmulatedExecutor(SerialExecutor):
    """Kernel-mode runs, one at a time in this process: their timing is real, so two at once
    would share the cores and distort each other."""

    def run(self, base_json: str, items: Sequence[Item], work: Any = run_emulated_items) -> Iterator[List[Result]]:
        return super().run(base_json, items, work)


def make_executor(kind: str = "local", jobs: Optional[int] = None, scheduler: Any = None,
                  mode: str = "simulated") -> Any:
    """``local`` (in this process for one job, else a process pool) or ``dask``; emulated runs
    only in this process, one at a time."""
    check_options(kind, jobs, scheduler, mode)
    if mode == "emulated":
        return EmulatedExecutor()
    jobs = jobs or default_jobs()
    if kind == "local":
        return SerialExecutor() if jobs == 1 else PoolExecutor(jobs)
    return DaskExecutor(jobs, scheduler)


def default_jobs() -> int:
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return multiprocessing.cpu_count() or 1
