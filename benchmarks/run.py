"""Speed benchmarks of the tcpenergy engine.

    python benchmarks/run.py standard   # the standard run: median wall time, events/s, per variant
    python benchmarks/run.py grid       # the seed-000 random-loss grid (900 runs) on a process pool

Only the engine call is timed: `time.perf_counter()` around `tcpenergy.run(...)`, with the
scenario already loaded and validated (no TOML parsing inside the timed region) and after warm-up
runs. Figures are medians over seeds, because a shared machine has noisy neighbours.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import platform
import statistics
import sys
import time
import tomllib
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
STANDARD = HERE / "standard.toml"
VARIANTS = ("tahoe", "reno", "newreno", "sack")

# The seed-000 random-loss grid: variants x forward loss x RTT x MTU x seeds.
GRID_VARIANTS = ("reno", "newreno", "sack")
GRID_LOSS = (0.01, 0.05, 0.10)
GRID_RTT_MS = (15, 40, 70, 100, 130)  # both one-way delays = RTT / 2
GRID_MTU = (512, 1500)


# ---------------------------------------------------------------------------------------------
# shared helpers (vs_ns3.py imports these)


def import_tcpenergy():
    """Import the package or exit with the reason (the engine is a compiled extension)."""
    try:
        import tcpenergy  # noqa: PLC0415
    except Exception as exc:  # ImportError, or a broken native module
        sys.exit(f"error: cannot import tcpenergy ({type(exc).__name__}: {exc}).\n"
                 "Build and install it first, from the repository root: pip install .")
    return tcpenergy


def load_scenario(path: Path = STANDARD) -> dict:
    """The scenario file as a plain dict (for reading settings; see `prepare` for running)."""
    with open(path, "rb") as f:
        return tomllib.load(f)


def prepare(tcpenergy, path: Path = STANDARD):
    """The scenario loaded and validated once, outside any timed region.

    `tcpenergy.run` accepts a path, a dict or a loaded Scenario; a path is read and a dict is
    validated on every call, so the benchmarks hand it the loaded Scenario.
    """
    return tcpenergy.load_scenario(str(path))


def time_runs(tcpenergy, scenario, seeds, warmup: int = 3, **overrides) -> list[dict]:
    """Run `scenario` (from `prepare`) once per seed; return one row per run with its wall time.

    `warmup` untimed runs (seeds far from the timed ones) come first, so that one-off costs
    (lazy initialisation, cold caches, page faults) do not land in the first timed run.
    """
    for w in range(warmup):
        tcpenergy.run(scenario, seed=10_000 + w, **overrides)
    rows = []
    for seed in seeds:
        t0 = time.perf_counter()
        rec = tcpenergy.run(scenario, seed=seed, **overrides)
        wall = time.perf_counter() - t0
        rows.append(_row(rec, seed, wall))
    return rows


def _row(rec: dict, seed: int, wall: float) -> dict:
    flow = rec.get("flow", {})
    return {
        "seed": seed,
        "wall_s": wall,
        "events": int(rec["events"]),
        "complete": bool(rec.get("complete", True)),
        "completion_s": flow.get("completion_s"),
        "retransmissions": flow.get("retransmissions"),
    }


def summarize(rows: list[dict]) -> dict:
    """Median wall time per run and simulated events per second (sum of events / sum of time)."""
    walls = [r["wall_s"] for r in rows]
    done = [r["completion_s"] for r in rows if r["completion_s"] is not None]
    return {
        "runs": len(rows),
        "median_wall_s": statistics.median(walls),
        "p10_wall_s": _quantile(walls, 0.10),
        "p90_wall_s": _quantile(walls, 0.90),
        "median_events": statistics.median(r["events"] for r in rows),
        "events_per_s": sum(r["events"] for r in rows) / sum(walls),
        "median_completion_s": statistics.median(done) if done else None,
        "incomplete": sum(not r["complete"] for r in rows),
    }


def _quantile(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, round(q * (len(xs) - 1))))]


def machine() -> dict:
    """What the numbers were measured on."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(),
            "date": time.strftime("%Y-%m-%d %H:%M %Z")}


def machine_line() -> str:
    m = machine()
    return f"{m['cpu']}, {m['cores']} cores, Python {m['python']}, {m['date']}"


def print_table(header: list[str], rows: list[list]) -> None:
    cells = [header] + [[_fmt(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    for i, r in enumerate(cells):
        print("  ".join(c.rjust(w) if j else c.ljust(w) for j, (c, w) in enumerate(zip(r, widths))))
        if i == 0:
            print("  ".join("-" * w for w in widths))


def _fmt(x) -> str:
    if isinstance(x, float):
        return f"{x:,.3f}" if abs(x) < 1000 else f"{x:,.0f}"
    if isinstance(x, int):
        return f"{x:,}"
    return "-" if x is None else str(x)


def _write_json(path: str | None, obj: dict) -> None:
    if path:
        Path(path).write_text(json.dumps(obj, indent=1) + "\n")
        print(f"\nwrote {path}")


# ---------------------------------------------------------------------------------------------
# standard


def cmd_standard(args: argparse.Namespace) -> int:
    tcpenergy = import_tcpenergy()
    scenario = load_scenario(Path(args.scenario))
    prepared = prepare(tcpenergy, Path(args.scenario))
    seeds = range(1, args.seeds + 1)
    print(f"standard run: {args.scenario}, {args.seeds} seeds, {args.warmup} warm-up runs")
    print(f"machine: {machine_line()}\n")

    results = {}
    for variant in args.variants:
        rows = time_runs(tcpenergy, prepared, seeds, args.warmup, **{"tcp.variant": variant})
        results[variant] = summarize(rows)

    print_table(
        ["variant", "median ms/run", "p10 ms", "p90 ms", "events/run", "Mevents/s",
         "completion s", "incomplete"],
        [[v, s["median_wall_s"] * 1e3, s["p10_wall_s"] * 1e3, s["p90_wall_s"] * 1e3,
          int(s["median_events"]), s["events_per_s"] / 1e6, s["median_completion_s"],
          s["incomplete"]] for v, s in results.items()])
    variant = scenario.get("tcp", {}).get("variant", "sack")
    head = results.get(variant)
    if head:
        print(f"\nstandard run ({variant}): median "
              f"{head['median_wall_s'] * 1e3:.3f} ms/run (target <= 1.5 ms), "
              f"{head['events_per_s'] / 1e6:.1f} M events/s on one core (target >= 10)")
    _write_json(args.json, {"benchmark": "standard", "machine": machine(),
                            "seeds": args.seeds, "variants": results})
    return 1 if any(s["incomplete"] for s in results.values()) else 0


# ---------------------------------------------------------------------------------------------
# grid

_WORKER_SCENARIO = None
_WORKER_TCPENERGY = None


def _init_worker(scenario_path: str) -> None:
    """Per worker process: import the package and load the base scenario once."""
    global _WORKER_SCENARIO, _WORKER_TCPENERGY
    _WORKER_TCPENERGY = import_tcpenergy()
    _WORKER_SCENARIO = prepare(_WORKER_TCPENERGY, Path(scenario_path))


def grid_cells(seeds: int) -> list[tuple]:
    """(variant, loss, rtt_ms, mtu, seed) for every run of the grid."""
    return list(itertools.product(GRID_VARIANTS, GRID_LOSS, GRID_RTT_MS, GRID_MTU,
                                  range(1, seeds + 1)))


def grid_overrides(variant: str, loss: float, rtt_ms: int, mtu: int) -> dict:
    one_way = f"{rtt_ms * 1000 // 2}us"  # integer microseconds: 15 ms RTT -> "7500us"
    return {
        "tcp.variant": variant,
        "path.mtu": mtu,
        "path.forward.delay": one_way,
        "path.reverse.delay": one_way,
        "path.forward.impairments": [{"kind": "bernoulli", "p": loss}],
    }


def _grid_task(cell: tuple) -> tuple:
    variant, loss, rtt_ms, mtu, seed = cell
    t0 = time.perf_counter()
    rec = _WORKER_TCPENERGY.run(_WORKER_SCENARIO, seed=seed,
                                **grid_overrides(variant, loss, rtt_ms, mtu))
    wall = time.perf_counter() - t0
    return cell, wall, int(rec["events"]), bool(rec.get("complete", True))


def cmd_grid(args: argparse.Namespace) -> int:
    prepare(import_tcpenergy(), Path(args.scenario))  # fail early, in the parent, with the reason
    cells = grid_cells(args.seeds)
    chunksize = args.chunksize or max(1, math.ceil(len(cells) / (args.jobs * 4)))
    print(f"grid: {len(GRID_VARIANTS)} variants x {len(GRID_LOSS)} losses x {len(GRID_RTT_MS)} "
          f"RTTs x {len(GRID_MTU)} MTUs x {args.seeds} seeds = {len(cells)} runs, "
          f"{args.jobs} processes, chunksize {chunksize}")
    print(f"machine: {machine_line()}\n")

    # Timed end to end: pool start-up, task hand-out, every run, results back.
    t0 = time.perf_counter()
    with ProcessPoolExecutor(max_workers=args.jobs, initializer=_init_worker,
                             initargs=(args.scenario,)) as pool:
        results = list(pool.map(_grid_task, cells, chunksize=chunksize))
    total = time.perf_counter() - t0

    engine = sum(r[1] for r in results)
    events = sum(r[2] for r in results)
    incomplete = [r[0] for r in results if not r[3]]
    print_table(["figure", "value"], [
        ["runs", len(results)],
        ["total wall s", total],
        ["runs/s", len(results) / total],
        ["sum of engine time s", engine],
        ["parallel efficiency", engine / (args.jobs * total)],
        ["M events/s per core (engine)", events / engine / 1e6],
        ["incomplete runs", len(incomplete)],
    ])
    print(f"\n{len(cells)}-run grid: {total:.2f} s on {args.jobs} processes (target <= 10 s on 2)")
    for cell in incomplete[:10]:
        print(f"incomplete: variant={cell[0]} loss={cell[1]} rtt={cell[2]}ms mtu={cell[3]} "
              f"seed={cell[4]}")
    _write_json(args.json, {"benchmark": "grid", "machine": machine(), "runs": len(results),
                            "jobs": args.jobs, "chunksize": chunksize, "total_wall_s": total,
                            "runs_per_s": len(results) / total, "engine_s": engine,
                            "events": events, "incomplete": len(incomplete)})
    return 1 if incomplete else 0


# ---------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("standard", help="median wall time and events/s of the standard run")
    s.add_argument("--seeds", type=int, default=50, help="timed runs per variant (default 50)")
    s.add_argument("--warmup", type=int, default=3, help="untimed runs per variant first")
    s.add_argument("--variants", nargs="+", default=list(VARIANTS), metavar="V")
    s.set_defaults(func=cmd_standard)

    g = sub.add_parser("grid", help="the 900-run random-loss grid on a process pool")
    g.add_argument("--seeds", type=int, default=10, help="seeds per grid cell (default 10)")
    g.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="worker processes")
    g.add_argument("--chunksize", type=int, default=0,
                   help="runs per task (default: runs / (4 x jobs))")
    g.set_defaults(func=cmd_grid)

    for q in (s, g):
        q.add_argument("--scenario", default=str(STANDARD), help="base scenario (TOML)")
        q.add_argument("--json", metavar="PATH", help="also write the figures as JSON")

    args = p.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
