"""ns-3 and tcpenergy on the seed-004 dumbbell, side by side in one invocation.

    python benchmarks/vs_ns3_dumbbell.py                 # 30 flows, PER 0.01, 120 s, 3 seeds
    python benchmarks/vs_ns3_dumbbell.py --flows 10 --seeds 1
    python benchmarks/vs_ns3_dumbbell.py --ns3-only      # only the ns-3 side

The scenario is tcpenergy.topology.dumbbell(flows=N, per=P, variant=V, duration=D) (README.md,
"The dumbbell"). The ns-3 side is benchmarks/ns3_dumbbell.py, run in the ns-3 venv
(benchmarks/.ns3-venv, created by vs_ns3.py's ensure_ns3 if missing) in an empty temporary
directory, one process for all seeds; it times `Simulator::Run()` alone. The tcpenergy side loads
and validates the scenario once, makes one untimed warm-up run, then times `tcpenergy.run(...)`
alone per seed. Reported: both medians, their ratio (ns-3 / tcpenergy, target >= 50x), and the
aggregate goodput of both (all bytes delivered x 8 / duration) with the per-flow spread, to check
that both simulated the same network. Exit status 1 if either side cannot run.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from run import import_tcpenergy, machine, machine_line, print_table
from vs_ns3 import Ns3Unavailable, _tail, ensure_ns3, run_in_ns3_venv

HERE = Path(__file__).resolve().parent
NS3_SCRIPT = HERE / "ns3_dumbbell.py"
TARGET_RATIO = 50


def jain(xs: list[float]) -> float | None:
    """Jain's fairness index (sum x)^2 / (n sum x^2); 1 = all equal."""
    square_sum = sum(x * x for x in xs)
    return sum(xs) ** 2 / (len(xs) * square_sum) if square_sum else None


def dumbbell_arguments(a: argparse.Namespace) -> dict:
    """The tcpenergy.topology.dumbbell keyword arguments both sides are built from."""
    return {"flows": a.flows, "per": a.per, "variant": a.variant, "duration": a.duration}


def run_ns3(python: Path, a: argparse.Namespace, seeds: list[int]) -> list[dict]:
    """Run ns3_dumbbell.py in the ns-3 venv; one report per seed."""
    cmd = [str(python), str(NS3_SCRIPT), "--flows", str(a.flows), "--per", str(a.per),
           "--duration", a.duration, "--variant", a.variant, "--seed", *map(str, seeds)]
    p = run_in_ns3_venv(python, cmd, timeout_s=3600, prefix="ns3-dumbbell-")
    reports = []
    for line in p.stdout.splitlines():
        if line.startswith("{"):
            reports.append(json.loads(line))
    if p.returncode != 0 or len(reports) != len(seeds):
        raise Ns3Unavailable(f"the ns-3 run failed (exit {p.returncode}) after {len(reports)} of "
                             f"{len(seeds)} seeds:\n{_tail(p.stderr + p.stdout)}")
    return reports


def check_same_starts(scenario: dict, ns3_reports: list[dict]) -> None:
    """Both simulators must start flow i at the same instant (whole microseconds)."""
    ours = [int(f["start"].removesuffix("us")) for f in scenario["flows"]]
    for r in ns3_reports:
        if r["starts_us"] != ours:
            raise Ns3Unavailable("ns3_dumbbell.py and tcpenergy.topology disagree on the flows' "
                                 f"start times: {r['starts_us'][:5]}... vs {ours[:5]}...")


def ns3_row(r: dict) -> dict:
    return {"seed": r["seed"], "wall_s": r["wall_s"], "events": r["events"],
            "goodput_bps": r["goodput_bps"], "flow_goodput_bps": r["flow_goodput_bps"]}


def time_ours(tcpenergy, topology, scenario: dict, seeds: list[int], warmup: int) -> list[dict]:
    """Load the scenario once, `warmup` untimed runs, then one timed `tcpenergy.run` per seed."""
    prepared = tcpenergy.load_scenario(scenario)
    for w in range(warmup):
        tcpenergy.run(prepared, seed=10_000 + w)
    duration_s = topology.duration_ns(scenario["stop_after"]) / 1e9
    active_s = [duration_s - topology.duration_ns(f["start"]) / 1e9 for f in scenario["flows"]]
    rows = []
    for seed in seeds:
        t0 = time.perf_counter()
        rec = tcpenergy.run(prepared, seed=seed)
        wall = time.perf_counter() - t0
        flows = rec["flows"]
        rows.append({
            "seed": seed,
            "wall_s": wall,
            "events": int(rec["events"]),
            # The same definition as the ns-3 side: all bytes delivered x 8 / duration.
            "goodput_bps": 8 * sum(f["bytes_delivered"] for f in flows) / duration_s,
            # Per flow as on the ns-3 side: bytes delivered x 8 / (duration - start).
            "flow_goodput_bps": [8 * f["bytes_delivered"] / t for f, t in zip(flows, active_s)],
            "record_flow_goodput_bps": [f.get("goodput_bps") for f in flows],
            "network_goodput_bps": rec.get("network", {}).get("goodput_bps"),
            "jain_fairness": rec.get("network", {}).get("jain_fairness"),
        })
    return rows


def summarize(rows: list[dict]) -> dict:
    """Medians over seeds: wall time, events, aggregate goodput; per-flow spread pooled."""
    flows = [g for r in rows for g in r["flow_goodput_bps"]]
    return {
        "runs": len(rows),
        "median_wall_s": statistics.median(r["wall_s"] for r in rows),
        "median_events": statistics.median(r["events"] for r in rows),
        "median_goodput_bps": statistics.median(r["goodput_bps"] for r in rows),
        "flow_goodput_min_bps": min(flows),
        "flow_goodput_median_bps": statistics.median(flows),
        "flow_goodput_max_bps": max(flows),
        "median_jain": statistics.median(jain(r["flow_goodput_bps"]) or 0.0 for r in rows),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--flows", type=int, default=30, help="flows N (default 30)")
    ap.add_argument("--per", type=float, default=0.01, help="packet error rate r2 -> di")
    ap.add_argument("--duration", default="120s", help="simulated time (default 120s)")
    ap.add_argument("--variant", default="newreno", choices=["newreno", "sack"])
    ap.add_argument("--seeds", type=int, default=3, help="timed runs on each side (default 3)")
    ap.add_argument("--warmup", type=int, default=1, help="untimed tcpenergy runs first")
    ap.add_argument("--venv", default=str(HERE / ".ns3-venv"), help="venv for the ns-3 wheel")
    ap.add_argument("--ns3-only", action="store_true", help="skip the tcpenergy side")
    ap.add_argument("--json", metavar="PATH", help="also write both reports as JSON")
    args = ap.parse_args(argv)

    tcpenergy = import_tcpenergy()
    try:
        from tcpenergy import topology  # noqa: PLC0415
        scenario = topology.dumbbell(**dumbbell_arguments(args))
    except (ImportError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2 if isinstance(exc, ValueError) else 1
    seeds = list(range(1, args.seeds + 1))
    print(f"dumbbell: {args.flows} flows, PER {args.per}, {args.variant}, {args.duration}, "
          f"{args.seeds} seeds")
    print(f"machine: {machine_line()}")

    try:
        python = ensure_ns3(Path(args.venv))
        ns3_reports = run_ns3(python, args, seeds)
        check_same_starts(scenario, ns3_reports)
    except Ns3Unavailable as exc:
        print(f"error: ns-3 unavailable: {exc}", file=sys.stderr)
        return 1
    ns3_sum = summarize([ns3_row(r) for r in ns3_reports])

    ours_rows, ours_sum, version = None, None, None
    if not args.ns3_only:
        version = getattr(tcpenergy, "__version__", "?")
        print(f"running tcpenergy {version}: {args.seeds} seeds", flush=True)
        try:
            ours_rows = time_ours(tcpenergy, topology, scenario, seeds, args.warmup)
        except tcpenergy.TcpEnergyError as exc:
            print(f"error: tcpenergy cannot run the dumbbell: {exc}", file=sys.stderr)
            return 1
        ours_sum = summarize(ours_rows)

    print()
    table = [["ns-3 3.44 (PyPI)", ns3_sum]]
    if ours_sum:
        table.append([f"tcpenergy {version}", ours_sum])
    print_table(
        ["simulator", "median s/run", "events/run", "goodput Mb/s", "flow min", "flow median",
         "flow max", "Jain"],
        [[name, s["median_wall_s"], int(s["median_events"]), s["median_goodput_bps"] / 1e6,
          s["flow_goodput_min_bps"] / 1e6, s["flow_goodput_median_bps"] / 1e6,
          s["flow_goodput_max_bps"] / 1e6, s["median_jain"]] for name, s in table])
    print("(goodput: all bytes delivered x 8 / duration, median over seeds; flow columns: each "
          "flow's goodput over its active time, pooled over seeds, Mb/s; ns-3 events: "
          "Simulator::GetEventCount(), cancelled timers included)")
    ratio = None
    if ours_sum:
        ratio = ns3_sum["median_wall_s"] / ours_sum["median_wall_s"]
        print(f"\nns-3 / tcpenergy, median wall time per run: {ratio:.1f}x "
              f"(target >= {TARGET_RATIO}x)")
    if args.json:
        Path(args.json).write_text(json.dumps(
            {"benchmark": "vs_ns3_dumbbell", "machine": machine(),
             "dumbbell": dumbbell_arguments(args), "seeds": args.seeds,
             "ns3": ns3_reports, "ns3_summary": ns3_sum, "tcpenergy": ours_rows,
             "tcpenergy_summary": ours_sum, "tcpenergy_version": version,
             "ratio_ns3_over_ours": ratio}, indent=1) + "\n")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
