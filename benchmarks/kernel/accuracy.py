"""How closely kernel mode keeps real time: loss-free bulk transfers at several link rates through
the engine's links, each run's throughput, event lag (p50, p99, max) and per-link rate error.

    sudo python benchmarks/kernel/accuracy.py                    # 10, 50, 100 Mbit/s, 3 runs each
    sudo python benchmarks/kernel/accuracy.py --rates 20 50 --runs 5

Path: 5 ms each way, queue 1000 packets, MTU 1500, CUBIC (the kernel's), nodes without a PHY
limit; 20 MB at 50 Mbit/s and above, 10 MB below. Prints a table of medians over the runs.
Run it on an idle machine: the lag it reports is the machine's too (docs/emulation.md, "Honest
real time").
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BENCHMARKS))

from run import import_tcpenergy, machine_line, print_table  # noqa: E402


def scenario(rate_mbps: int) -> dict:
    link = {"rate": f"{rate_mbps}Mbps", "delay": "5ms", "queue": 1000}
    return {"name": f"accuracy-{rate_mbps}M", "seed": 1, "stop_after": "2min",
            "path": {"mtu": 1500, "forward": dict(link), "reverse": dict(link)},
            "tcp": {"variant": "cubic"},
            "traffic": {"kind": "bulk", "bytes": "20MB" if rate_mbps >= 50 else "10MB"},
            "energy": {"sender": "ideal-nic-0.3", "receiver": "ideal-nic-0.3"}}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rates", type=int, nargs="+", default=[10, 50, 100], metavar="MBPS")
    p.add_argument("--runs", type=int, default=3)
    args = p.parse_args(argv)
    import_tcpenergy()
    from tcpenergy import api
    from tcpenergy.emulate import netns
    from tcpenergy.emulate.run import emulate

    reason = netns.unavailable()
    if reason:
        print(f"error: kernel mode unavailable: {reason}", file=sys.stderr)
        return 2
    rows = []
    for rate in args.rates:
        runs = [emulate(api.load_scenario(scenario(rate)), seed) for seed in range(1, args.runs + 1)]
        loops = [r["emulation"]["loop"] for r in runs]
        errors = [abs(e) for r in runs for e in r["emulation"]["rate_error"].values()]
        median = lambda xs: statistics.median(xs)  # noqa: E731
        rows.append([f"{rate} Mbit/s", median([r["flow"]["throughput_bps"] / 1e6 for r in runs]),
                     median([l["lag_p50_ms"] for l in loops]), median([l["lag_p99_ms"] for l in loops]),
                     median([l["lag_max_ms"] for l in loops]), 100 * max(errors),
                     sum(r["complete"] for r in runs), median([r["flow"]["retransmissions"] for r in runs])])
    print(f"kernel mode accuracy, medians over {args.runs} runs; {machine_line()}")
    print_table(["link", "throughput Mbit/s", "lag p50 ms", "lag p99 ms", "lag max ms", "rate error % (max)",
                 "complete", "retransmissions"], rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
