"""What the sweep machinery costs per run, on the shape of the seed-000 random-loss grid.

    python benchmarks/sweep_overhead.py            # local executor: 1 job and every core
    python benchmarks/sweep_overhead.py --dask     # also the dask executor (LocalCluster)

The grid: reno, newreno, sack x forward loss 1/5/10 % x RTT 15/40/70/100/130 ms x MTU 512/1500 x
seeds 1..10 = 900 runs, as a sweep file over benchmarks/standard.toml. First every run is timed
alone, in this process, with the engine call the sweep workers make (`_engine.run` on the base
scenario with the cell's overrides), giving the median single-run time and the sum of engine time.
Then `tcpenergy.sweep` runs the whole grid into a fresh store, timed end to end (reading the sweep
file, planning, creating the store, starting the pool, every run, every batch committed), with 1
job and with --jobs; and once more on the finished store (every run skipped). Each sweep is
repeated --repeats times and the median taken.

As a baseline measured in the same invocation (so that a busy machine slows both alike), the same
runs also go through a plain `ProcessPoolExecutor.map` with the same number of processes, nothing
stored.

Reported per executor and job count:
  overhead ratio  = sweep wall time / (runs x median single-run time)   (the headline; < 1 with
                    more than one job means the parallel speed-up outweighs the machinery)
  efficiency      = sum of engine time / (jobs x sweep wall time)
  machinery ms/run = (jobs x sweep wall time - sum of engine time) / runs
  sweep / bare    = sweep wall time / plain pool wall time
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from run import STANDARD, _write_json, import_tcpenergy, machine, machine_line, print_table

VARIANTS = ("reno", "newreno", "sack")
LOSS = (0.01, 0.05, 0.10)
RTT = ("15ms", "40ms", "70ms", "100ms", "130ms")
MTU = (512, 1500)


def sweep_file(directory: Path, seeds: int) -> Path:
    path = directory / "grid.toml"
    path.write_text(
        f'base = "{STANDARD.as_posix()}"\n'
        f"repetitions = {seeds}\n"
        "[axes]\n"
        f'"tcp.variant" = {list(VARIANTS)!r}\n'
        f'"path.forward.impairments.0.p" = {list(LOSS)!r}\n'
        f"rtt = {list(RTT)!r}\n"
        f'"path.mtu" = {list(MTU)!r}\n'.replace("'", '"'))
    return path


def single_runs(path: Path) -> list[float]:
    """Wall time of every run of the grid alone, as a sweep worker makes it."""
    from tcpenergy._native import engine
    from tcpenergy.experiments.plan import make_plan
    from tcpenergy.experiments.spec import load_sweep

    plan = make_plan(load_sweep(path))
    for run in plan.runs[:3]:  # warm-up
        engine.run(plan.base_json, run.seed + 10_000, run.cell.overrides, False)
    walls = []
    for run in plan.runs:
        t0 = time.perf_counter()
        engine.run(plan.base_json, run.seed, run.cell.overrides, False)
        walls.append(time.perf_counter() - t0)
    return walls


_BASE = None


def _init_bare(base_json: str) -> None:
    global _BASE
    _BASE = base_json


def _bare_run(item: tuple) -> None:
    from tcpenergy._native import engine

    engine.run(_BASE, item[0], item[1], False)


def time_bare_pool(path: Path, jobs: int, repeats: int) -> float:
    """The same runs on a plain process pool, nothing stored: what the sweep is compared with."""
    from tcpenergy.experiments.plan import make_plan
    from tcpenergy.experiments.spec import load_sweep

    plan = make_plan(load_sweep(path))
    items = [(run.seed, run.cell.overrides) for run in plan.runs]
    walls = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        with ProcessPoolExecutor(jobs, initializer=_init_bare, initargs=(plan.base_json,)) as pool:
            list(pool.map(_bare_run, items, chunksize=max(1, len(items) // (4 * jobs))))
        walls.append(time.perf_counter() - t0)
    return statistics.median(walls)


def time_sweep(tcpenergy, path: Path, store: Path, repeats: int, **options) -> tuple[float, float]:
    """Median wall time of a full sweep into a fresh store, and of re-running it (all skipped)."""
    full, rerun = [], []
    for _ in range(repeats):
        for leftover in (store, store.with_name(store.name + ".wal")):
            leftover.unlink(missing_ok=True)
        t0 = time.perf_counter()
        outcome = tcpenergy.sweep(path, store=store, progress=False, **options)
        full.append(time.perf_counter() - t0)
        assert outcome.ran == outcome.total and outcome.failed == 0, outcome
        t0 = time.perf_counter()
        again = tcpenergy.sweep(path, store=store, progress=False, **options)
        rerun.append(time.perf_counter() - t0)
        assert again.skipped == again.total, again
    return statistics.median(full), statistics.median(rerun)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", type=int, default=10, help="seeds per grid cell (default 10)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 2,
                   help="workers for the parallel sweeps (default: every core)")
    p.add_argument("--repeats", type=int, default=3, help="sweeps per configuration (median)")
    p.add_argument("--dask", action="store_true", help="also time the dask executor")
    p.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    args = p.parse_args(argv)

    tcpenergy = import_tcpenergy()
    with tempfile.TemporaryDirectory() as tmp:
        path = sweep_file(Path(tmp), args.seeds)
        walls = single_runs(path)
        runs, median, engine = len(walls), statistics.median(walls), sum(walls)
        print(f"sweep overhead: {runs}-run random-loss grid over {STANDARD.name}, "
              f"median of {args.repeats} sweeps each")
        print(f"machine: {machine_line()}")
        print(f"single runs: median {median * 1e3:.3f} ms, sum {engine:.2f} s\n")

        configs = [("local", 1)]
        if args.jobs > 1:
            configs.append(("local", args.jobs))
        if args.dask:
            configs.append(("dask", args.jobs))
        rows, figures = [], []
        bare = {jobs: time_bare_pool(path, jobs, args.repeats) for jobs in {j for _, j in configs}}
        for executor, jobs in configs:
            wall, rerun = time_sweep(tcpenergy, path, Path(tmp) / f"{executor}-{jobs}.duckdb",
                                     args.repeats, executor=executor, jobs=jobs)
            figure = {
                "executor": executor, "jobs": jobs, "sweep_wall_s": wall, "rerun_wall_s": rerun,
                "overhead_ratio": wall / (runs * median),
                "efficiency": engine / (jobs * wall),
                "machinery_ms_per_run": (jobs * wall - engine) / runs * 1e3,
                "bare_pool_wall_s": bare[jobs],
                "vs_bare_pool": wall / bare[jobs],
            }
            figures.append(figure)
            rows.append([executor, jobs, wall, rerun, figure["overhead_ratio"],
                         figure["efficiency"], figure["machinery_ms_per_run"], bare[jobs],
                         figure["vs_bare_pool"]])
        print_table(["executor", "jobs", "sweep s", "re-run s", "overhead ratio", "efficiency",
                     "machinery ms/run", "bare pool s", "sweep / bare"], rows)
    _write_json(args.json, {"benchmark": "sweep_overhead", "machine": machine(), "runs": runs,
                            "median_single_run_s": median, "sum_single_runs_s": engine,
                            "repeats": args.repeats, "sweeps": figures})
    return 0


if __name__ == "__main__":
    sys.exit(main())
