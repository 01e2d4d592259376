"""tcpenergy alone on the seed-004 dumbbell as the number of flows grows: time and memory.

    python benchmarks/scale_flows.py                       # N = 10, 30, 100, 300; 120 s; PER 0.01
    python benchmarks/scale_flows.py --flows 10 100 --json scale.json
    python benchmarks/scale_flows.py --flows 1000 3000 10000 --against /tmp/before/python

For each N, a fresh child process (this script with --child) imports tcpenergy, builds
tcpenergy.topology.dumbbell(flows=N, per=P, duration=D), loads and validates it once (timed:
`load s`), then times `tcpenergy.run(...)` alone for seeds 1..R (default 3) and reports the
median. The child also reports its peak resident set size three times, from
getrusage(RUSAGE_SELF).ru_maxrss: after the import, after the load (the baseline) and after the
runs (the peak), so the table shows what loading and the runs themselves add; `process s` is the
child's whole wall time, import included. Targets: 100 flows in <= 0.5 s per run on one core
(the engine runs on one thread); memory linear in N (the least-squares slope in KB per flow and
the largest departure of the measured increments from that line are printed).

`--against DIR` measures a second tcpenergy too, the package found in DIR (e.g. the `python/`
folder of another checkout with its engine built and copied in): for each N the two run one
after the other, in fresh processes, and both tables are printed with the ratios of their wall
times and peak memory.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from run import import_tcpenergy, machine, machine_line, print_table

HERE = Path(__file__).resolve().parent
DEFAULT_FLOWS = (10, 30, 100, 300)
TARGET_S_AT_100 = 0.5


def peak_rss_kb() -> int:
    """Peak resident set size of this process so far, KB (Linux reports ru_maxrss in KB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def child(a: argparse.Namespace) -> int:
    """One N in this (fresh) process: print one JSON line with the timings and the RSS."""
    tcpenergy = import_tcpenergy()
    from tcpenergy import topology  # noqa: PLC0415

    import_kb = peak_rss_kb()
    scenario = topology.dumbbell(flows=a.child, per=a.per, variant=a.variant,
                                 duration=a.duration)
    walls, events = [], []
    try:
        t0 = time.perf_counter()
        prepared = tcpenergy.load_scenario(scenario)
        load_s = time.perf_counter() - t0
        baseline_kb = peak_rss_kb()
        for seed in range(1, a.repeats + 1):
            t0 = time.perf_counter()
            rec = tcpenergy.run(prepared, seed=seed)
            walls.append(time.perf_counter() - t0)
            events.append(int(rec["events"]))
    except tcpenergy.TcpEnergyError as exc:
        print(f"error: tcpenergy cannot run the dumbbell: {exc}", file=sys.stderr)
        return 1
    print(json.dumps({"flows": a.child, "load_s": load_s, "walls_s": walls,
                      "median_wall_s": statistics.median(walls),
                      "median_events": statistics.median(events), "import_rss_kb": import_kb,
                      "baseline_rss_kb": baseline_kb, "peak_rss_kb": peak_rss_kb(),
                      "tcpenergy": str(Path(tcpenergy.__file__).parent),
                      "engine_version": tcpenergy.engine_version()}))
    return 0


def measure(a: argparse.Namespace, n: int, against: str | None = None) -> dict:
    """Run the child for `n` flows (with the tcpenergy found in `against`, if given); its JSON
    line with the child's whole wall time, or exit with its error."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", str(n), "--per", str(a.per),
           "--variant", a.variant, "--duration", a.duration, "--repeats", str(a.repeats)]
    env = dict(os.environ)
    if against:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (against, env.get("PYTHONPATH")) if p)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    process_s = time.perf_counter() - t0
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
    if p.returncode != 0 or not lines:
        tail = "\n".join("    " + ln for ln in (p.stderr + p.stdout).strip().splitlines()[-15:])
        sys.exit(f"error: the {n}-flow run failed (exit {p.returncode}):\n{tail}")
    return {**json.loads(lines[-1]), "process_s": process_s}


def linear_fit(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """Least-squares slope and intercept of ys on xs."""
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx else 0.0
    return slope, my - slope * mx


def report(results: list[dict]) -> dict | None:
    """Print one build's table and its memory fit; returns the fit."""
    for r in results:
        r["run_rss_kb"] = r["peak_rss_kb"] - r["baseline_rss_kb"]
    print_table(
        ["flows", "load s", "median s/run", "process s", "events/run", "Mevents/s",
         "peak RSS MB", "load adds MB", "runs add MB", "KB/flow"],
        [[r["flows"], r["load_s"], r["median_wall_s"], r["process_s"], int(r["median_events"]),
          r["median_events"] / r["median_wall_s"] / 1e6, r["peak_rss_kb"] / 1024,
          (r["baseline_rss_kb"] - r["import_rss_kb"]) / 1024, r["run_rss_kb"] / 1024,
          r["run_rss_kb"] / r["flows"]]
         for r in results])
    if len(results) < 2:
        return None
    xs = [float(r["flows"]) for r in results]
    ys = [float(r["run_rss_kb"]) for r in results]
    slope, intercept = linear_fit(xs, ys)
    worst = max(abs(y - (slope * x + intercept)) for x, y in zip(xs, ys))
    print(f"memory added by the runs: {slope:,.1f} KB per flow {intercept:+,.0f} KB; "
          f"largest departure from that line {worst:,.0f} KB (linear in N if small)")
    return {"kb_per_flow": slope, "intercept_kb": intercept, "max_residual_kb": worst}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--flows", type=int, nargs="+", default=list(DEFAULT_FLOWS), metavar="N")
    ap.add_argument("--per", type=float, default=0.01, help="packet error rate r2 -> di")
    ap.add_argument("--variant", default="newreno")
    ap.add_argument("--duration", default="120s", help="simulated time (default 120s)")
    ap.add_argument("--repeats", type=int, default=3, help="timed runs per N (seeds 1..R)")
    ap.add_argument("--against", metavar="DIR",
                    help="also measure the tcpenergy package in DIR (another build), side by side")
    ap.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    ap.add_argument("--child", type=int, metavar="N", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child is not None:
        return child(a)
    if any(n < 1 for n in a.flows) or a.repeats < 1:
        ap.error("--flows and --repeats must be at least 1")

    print(f"dumbbell: PER {a.per}, {a.variant}, {a.duration}; {a.repeats} runs per N, "
          "one fresh process per N")
    print(f"machine: {machine_line()}", flush=True)
    flows = sorted(set(a.flows))
    results, others = [], []
    for n in flows:
        results.append(measure(a, n))
        if a.against:
            others.append(measure(a, n, a.against))

    print(f"\nthis tcpenergy ({results[0]['tcpenergy']}, engine {results[0]['engine_version']}):")
    fit = report(results)
    other_fit = None
    if a.against:
        print(f"\nagainst ({others[0]['tcpenergy']}, engine {others[0]['engine_version']}):")
        other_fit = report(others)
        print("\nside by side ((a): against; ratios: against / this):")
        print_table(
            ["flows", "load s (a)", "load s", "s/run (a)", "s/run", "process s (a)", "process s",
             "peak MB (a)", "peak MB", "ratio s/run", "ratio RSS"],
            [[r["flows"], o["load_s"], r["load_s"], o["median_wall_s"], r["median_wall_s"],
              o["process_s"], r["process_s"], o["peak_rss_kb"] / 1024, r["peak_rss_kb"] / 1024,
              o["median_wall_s"] / r["median_wall_s"], o["peak_rss_kb"] / r["peak_rss_kb"]]
             for r, o in zip(results, others)])
    at100 = next((r for r in results if r["flows"] == 100), None)
    if at100:
        print(f"100 flows: median {at100['median_wall_s']:.3f} s per run "
              f"(target <= {TARGET_S_AT_100} s on one core)")
    if a.json:
        Path(a.json).write_text(json.dumps(
            {"benchmark": "scale_flows", "machine": machine(),
             "settings": {"per": a.per, "variant": a.variant, "duration": a.duration,
                          "repeats": a.repeats},
             "results": results, "memory_fit": fit, "against": a.against,
             "against_results": others, "against_memory_fit": other_fit}, indent=1) + "\n")
        print(f"\nwrote {a.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
