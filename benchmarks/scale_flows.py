"""tcpenergy alone on the seed-004 dumbbell as the number of flows grows: time and memory.

    python benchmarks/scale_flows.py                       # N = 10, 30, 100, 300; 120 s; PER 0.01
    python benchmarks/scale_flows.py --flows 10 100 --json scale.json

For each N, a fresh child process (this script with --child) imports tcpenergy, builds
tcpenergy.topology.dumbbell(flows=N, per=P, duration=D), loads and validates it once, then times
`tcpenergy.run(...)` alone for seeds 1..R (default 3) and reports the median. The child also
reports its peak resident set size twice, from getrusage(RUSAGE_SELF).ru_maxrss: after the import
and the load (the baseline) and after the runs (the peak), so the table shows what the runs
themselves add. Targets: 100 flows in <= 0.5 s per run on one core (the engine runs on one
thread); memory linear in N (the least-squares slope in KB per flow and the largest departure of
the measured increments from that line are printed).
"""

from __future__ import annotations

import argparse
import json
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

    scenario = topology.dumbbell(flows=a.child, per=a.per, variant=a.variant,
                                 duration=a.duration)
    walls, events = [], []
    try:
        prepared = tcpenergy.load_scenario(scenario)
        baseline_kb = peak_rss_kb()
        for seed in range(1, a.repeats + 1):
            t0 = time.perf_counter()
            rec = tcpenergy.run(prepared, seed=seed)
            walls.append(time.perf_counter() - t0)
            events.append(int(rec["events"]))
    except tcpenergy.TcpEnergyError as exc:
        print(f"error: tcpenergy cannot run the dumbbell: {exc}", file=sys.stderr)
        return 1
    print(json.dumps({"flows": a.child, "walls_s": walls, "median_wall_s": statistics.median(walls),
                      "median_events": statistics.median(events),
                      "baseline_rss_kb": baseline_kb, "peak_rss_kb": peak_rss_kb()}))
    return 0


def measure(a: argparse.Namespace, n: int) -> dict:
    """Run the child for `n` flows; its JSON line, or exit with its error."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", str(n), "--per", str(a.per),
           "--variant", a.variant, "--duration", a.duration, "--repeats", str(a.repeats)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
    if p.returncode != 0 or not lines:
        tail = "\n".join("    " + ln for ln in (p.stderr + p.stdout).strip().splitlines()[-15:])
        sys.exit(f"error: the {n}-flow run failed (exit {p.returncode}):\n{tail}")
    return json.loads(lines[-1])


def linear_fit(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """Least-squares slope and intercept of ys on xs."""
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx else 0.0
    return slope, my - slope * mx


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--flows", type=int, nargs="+", default=list(DEFAULT_FLOWS), metavar="N")
    ap.add_argument("--per", type=float, default=0.01, help="packet error rate r2 -> di")
    ap.add_argument("--variant", default="newreno")
    ap.add_argument("--duration", default="120s", help="simulated time (default 120s)")
    ap.add_argument("--repeats", type=int, default=3, help="timed runs per N (seeds 1..R)")
    ap.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    ap.add_argument("--child", type=int, metavar="N", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child is not None:
        return child(a)
    if any(n < 1 for n in a.flows) or a.repeats < 1:
        ap.error("--flows and --repeats must be at least 1")

    print(f"dumbbell: PER {a.per}, {a.variant}, {a.duration}; {a.repeats} runs per N, "
          "one fresh process per N")
    print(f"machine: {machine_line()}\n", flush=True)
    results = [measure(a, n) for n in sorted(set(a.flows))]

    for r in results:
        r["run_rss_kb"] = r["peak_rss_kb"] - r["baseline_rss_kb"]
    print_table(
        ["flows", "median s/run", "events/run", "Mevents/s", "peak RSS MB", "runs add MB",
         "KB/flow"],
        [[r["flows"], r["median_wall_s"], int(r["median_events"]),
          r["median_events"] / r["median_wall_s"] / 1e6, r["peak_rss_kb"] / 1024,
          r["run_rss_kb"] / 1024, r["run_rss_kb"] / r["flows"]]
         for r in results])

    fit = None
    if len(results) >= 2:
        xs = [float(r["flows"]) for r in results]
        ys = [float(r["run_rss_kb"]) for r in results]
        slope, intercept = linear_fit(xs, ys)
        worst = max(abs(y - (slope * x + intercept)) for x, y in zip(xs, ys))
        fit = {"kb_per_flow": slope, "intercept_kb": intercept, "max_residual_kb": worst}
        print(f"\nmemory added by the runs: {slope:,.1f} KB per flow {intercept:+,.0f} KB; "
              f"largest departure from that line {worst:,.0f} KB (linear in N if small)")
    at100 = next((r for r in results if r["flows"] == 100), None)
    if at100:
        print(f"100 flows: median {at100['median_wall_s']:.3f} s per run "
              f"(target <= {TARGET_S_AT_100} s on one core)")
    if a.json:
        Path(a.json).write_text(json.dumps(
            {"benchmark": "scale_flows", "machine": machine(),
             "settings": {"per": a.per, "variant": a.variant, "duration": a.duration,
                          "repeats": a.repeats},
             "results": results, "memory_fit": fit}, indent=1) + "\n")
        print(f"\nwrote {a.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
