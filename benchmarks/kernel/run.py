"""The kernel grid: the machine's own TCP (kernel mode) and tcpenergy's simulator on matched
cells; goodput, retransmissions and timeouts, and their ratios kernel / simulator.

    sudo python benchmarks/kernel/run.py                  # the full grid, 3 seeds
    sudo python benchmarks/kernel/run.py --quick          # 8 cells, 1 seed: a smoke test
    sudo python benchmarks/kernel/run.py --seeds 1 --record

Cells: congestion control reno, cubic and bbr x SACK on and off x Bernoulli loss on data 0, 1, 5,
10 % x one-way delay 5, 20, 100 ms x 2 and 20 Mbit/s; MTU 1500, queue 100 packets each way, nodes
without a PHY limit. The bulk transfer is sized to last about 15 s at the rate the cell allows (the
link's, or Mathis et al.'s MSS / RTT x 1.22 / sqrt(p) when lower): at most 1 MB at 2 Mbit/s and
5 MB at 20 Mbit/s, at least 200 kB. Kernel mode
runs the scenario with `--congestion` set to the cell's module; the simulator runs it with
`tcp.stack = "linux-6"`, the variant that matches (reno with SACK is `sack`, without it
`newreno`; cubic is `cubic`, bbr `bbr`) and `tcp.sack` as the cell says.

Kernel runs go one at a time (their timing is real) and are kept, one JSON line each, in
--out/kernel.jsonl, keyed by cell, seed, kernel release and engine version: an interrupted grid
resumes where it stopped. Writes cells.csv and summary.md to --out (default
benchmarks/kernel/out/) and prints the summary line; --record also writes LAST.md beside this
file. A run that is incomplete (the clock fell behind, the transfer did not finish) is left out
of its cell's means and counted.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import json
import platform
import random
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCHMARKS = HERE.parent
sys.path.insert(0, str(BENCHMARKS))

from fidelity.table import mean, ratio, side_means  # noqa: E402
from run import import_tcpenergy, machine_line  # noqa: E402

DEFAULT_OUT = HERE / "out"
LAST = HERE / "LAST.md"
# Agreement of the Linux stack with the kernel (issue: goodput within 10 %, timeouts within 20 %
# or one per run, in at least 90 % of cells).
GOODPUT_TOLERANCE = 0.10
TIMEOUT_TOLERANCE = 0.20
TIMEOUT_ABS_TOLERANCE = 1.0
# Draws of the bootstrap that estimates how often a twin as variable as the kernel itself agrees.
SELF_AGREEMENT_DRAWS = 2000
GOAL = 0.90


@dataclass(frozen=True)
class Cell:
    congestion: str
    sack: bool
    loss: float
    delay_ms: int
    rate_mbps: int

    def key(self) -> str:
        return (f"{self.congestion}-{'sack' if self.sack else 'nosack'}-{self.loss}-{self.delay_ms}ms-"
                f"{self.rate_mbps}M-{self.transfer_bytes()}B")

    def transfer_bytes(self) -> int:
        """About 15 s of the rate the cell allows, within 200 kB and 1 MB (2 Mbit/s) or 5 MB."""
        rate = self.rate_mbps * 1e6
        if self.loss:
            rtt = 2 * self.delay_ms / 1e3
            rate = min(rate, 1448 * 8 / rtt * 1.22 / self.loss ** 0.5)
        ceiling = 1_000_000 if self.rate_mbps <= 2 else 5_000_000
        return int(min(ceiling, max(200_000, 15 * rate / 8)) // 1000 * 1000)

    def kernel_variant(self) -> str:
        return "sack" if self.sack else "newreno"

    def simulator_variant(self) -> str | None:
        """The engine variant that matches, if there is one (SACK is set per cell)."""
        return {"reno": "sack" if self.sack else "newreno", "cubic": "cubic", "bbr": "bbr"}.get(self.congestion)


def cells(quick: bool) -> list[Cell]:
    if quick:
        grid = itertools.product(("reno", "cubic"), (True,), (0.0, 0.05), (5, 20), (2,))
    else:
        grid = itertools.product(("reno", "cubic", "bbr"), (True, False), (0.0, 0.01, 0.05, 0.10),
                                 (5, 20, 100), (2, 20))
    return [Cell(*c) for c in grid]


def scenario(cell: Cell, variant: str, **tcp) -> dict:
    """The cell's path, with `variant` (and the `tcp` keys given) and nothing else set on TCP."""
    rate = f"{cell.rate_mbps}Mbps"
    forward = {"rate": rate, "delay": f"{cell.delay_ms}ms", "queue": 100}
    if cell.loss:
        forward["impairments"] = [{"kind": "bernoulli", "p": cell.loss}]
    return {
        "name": f"kernel-grid-{cell.key()}", "seed": 1, "stop_after": "10min",
        "path": {"mtu": 1500, "forward": forward, "reverse": {"rate": rate, "delay": f"{cell.delay_ms}ms", "queue": 100}},
        "tcp": {"variant": variant, **tcp},
        "traffic": {"kind": "bulk", "bytes": cell.transfer_bytes()},
        "energy": {"sender": "ideal-nic-0.3", "receiver": "ideal-nic-0.3"},
    }


def summary_of(record: dict) -> dict:
    flow = record["flow"]
    return {"complete": bool(record["complete"]), "goodput_bps": flow["goodput_bps"],
            "retransmissions": flow["retransmissions"], "timeouts": flow["timeouts"],
            "stop": record.get("stop"), "lag_p99_ms": (record.get("emulation") or {}).get("loop", {}).get("lag_p99_ms")}


class KernelRuns:
    """Finished kernel runs, one JSON line each, appended as they finish. A run whose clock fell
    behind (a busy machine) is not kept: the next invocation runs it again."""

    def __init__(self, path: Path, tag: str):
        self.path, self.tag, self.runs = path, tag, {}
        if path.exists():
            for line in path.read_text().splitlines():
                entry = json.loads(line)
                if not self.fell_behind(entry["run"]):
                    self.runs[entry["key"]] = entry["run"]

    def key(self, cell: Cell, seed: int) -> str:
        return f"{cell.key()}/{seed}/{self.tag}"

    @staticmethod
    def fell_behind(run: dict) -> bool:
        """An incomplete run whose clock fell behind its bound (kernel mode's default, 1 ms)."""
        return not run["complete"] and (run.get("lag_p99_ms") or 0.0) > 1.0

    def add(self, key: str, run: dict) -> None:
        self.runs[key] = run
        with self.path.open("a") as f:
            f.write(json.dumps({"key": key, "run": run}) + "\n")


def run_grid(tcpenergy, grid: list[Cell], seeds: range, out: Path, kernel_engine: str | None = None) -> list[dict]:
    from tcpenergy import api
    from tcpenergy.emulate.run import emulate

    tag = f"{platform.release()}/{kernel_engine or tcpenergy.engine_version()}"
    kernel = KernelRuns(out / "kernel.jsonl", tag)
    rows = []
    todo = sum(kernel.key(c, s) not in kernel.runs for c in grid for s in seeds)
    done, started = 0, time.monotonic()
    for cell in grid:
        k_runs, s_runs = [], []
        for seed in seeds:
            key = kernel.key(cell, seed)
            if key not in kernel.runs:
                record = emulate(api.load_scenario(scenario(cell, cell.kernel_variant())), seed,
                                 congestion=cell.congestion)
                kernel.add(key, summary_of(record))
                done += 1
                print(f"[{done}/{todo}, {time.monotonic() - started:.0f} s] {key}: "
                      f"{kernel.runs[key]['goodput_bps'] / 1e3:.0f} kbit/s", file=sys.stderr, flush=True)
            k_runs.append(kernel.runs[key])
            variant = cell.simulator_variant()
            if variant is not None:
                sim = scenario(cell, variant, stack="linux-6", sack=cell.sack)
                record, _ = api.execute(api.load_scenario(sim), seed, [])
                s_runs.append(summary_of(record))
        rows.append(row_of(cell, k_runs, s_runs))
    return rows


def standard_error(runs: list[dict], metric: str) -> float:
    """Standard error of a side's mean over its complete runs (0 with fewer than two)."""
    xs = [r[metric] for r in runs if r["complete"]]
    if len(xs) < 2:
        return 0.0
    m = sum(xs) / len(xs)
    return (sum((x - m) ** 2 for x in xs) / (len(xs) - 1) / len(xs)) ** 0.5


def row_of(cell: Cell, kernel_runs: list[dict], sim_runs: list[dict]) -> dict:
    k, s = side_means(kernel_runs), side_means(sim_runs)
    row = {**asdict(cell), "bytes": cell.transfer_bytes(), "kernel_complete": f"{k['complete']}/{k['runs']}",
           "sim_complete": f"{s['complete']}/{s['runs']}" if sim_runs else "-"}
    for m in ("goodput_bps", "retransmissions", "timeouts"):
        row[f"kernel_{m}"] = k[m]
        row[f"sim_{m}"] = s[m] if sim_runs else None
        row[f"{m}_ratio"] = ratio(k[m], s[m]) if sim_runs else None
    row.update(judge(row, kernel_runs, sim_runs))
    row["kernel_self_agreement"] = self_agreement(kernel_runs, cell.key())
    return row


def within_bounds(kg: float, sg: float, kt: float, st: float) -> tuple[bool, bool]:
    """Goodput within 10 % and timeouts within 20 % (or one per run) of the kernel's."""
    goodput_ok = abs(kg / sg - 1) <= GOODPUT_TOLERANCE + 1e-9
    timeouts_ok = abs(kt - st) <= max(TIMEOUT_ABS_TOLERANCE, TIMEOUT_TOLERANCE * kt) + 1e-9
    return goodput_ok, timeouts_ok


def self_agreement(kernel_runs: list[dict], key: str) -> float | None:
    """How often a twin exactly as variable as the kernel meets the bounds: the mean of two
    independent draws of the cell's run count from the kernel's own complete runs (with
    replacement), judged against each other. It is what a perfect but independently seeded
    simulator could expect; resampling few runs understates the spread, so it is an upper
    estimate. None with fewer than two complete runs."""
    xs = [(r["goodput_bps"], r["timeouts"]) for r in kernel_runs if r["complete"]]
    if len(xs) < 2:
        return None
    rng = random.Random(key)
    n, hits = len(kernel_runs), 0
    for _ in range(SELF_AGREEMENT_DRAWS):
        a = [rng.choice(xs) for _ in range(n)]
        b = [rng.choice(xs) for _ in range(n)]
        kg, kt = sum(x[0] for x in a) / n, sum(x[1] for x in a) / n
        sg, st = sum(x[0] for x in b) / n, sum(x[1] for x in b) / n
        hits += sg > 0 and all(within_bounds(kg, sg, kt, st))
    return hits / SELF_AGREEMENT_DRAWS


def judge(row: dict, kernel_runs: list[dict], sim_runs: list[dict]) -> dict:
    """Whether the cell agrees (goodput within 10 %, timeouts within 20 % or one per run) and,
    if not, whether the gap is within measurement noise: two standard errors of the difference
    of the means, from the seeds' spread on each side."""
    kg, sg, kt, st = (row["kernel_goodput_bps"], row["sim_goodput_bps"], row["kernel_timeouts"], row["sim_timeouts"])
    if None in (kg, sg, kt, st) or not sg:
        return {"goodput_ok": None, "timeouts_ok": None, "agrees": None, "within_noise": None}
    goodput_ok, timeouts_ok = within_bounds(kg, sg, kt, st)
    noise = {}
    for metric, gap in (("goodput_bps", abs(kg - sg)), ("timeouts", abs(kt - st))):
        se = (standard_error(kernel_runs, metric) ** 2 + standard_error(sim_runs, metric) ** 2) ** 0.5
        noise[metric] = gap <= 2 * se
    within = (goodput_ok or noise["goodput_bps"]) and (timeouts_ok or noise["timeouts"])
    return {"goodput_ok": goodput_ok, "timeouts_ok": timeouts_ok, "agrees": goodput_ok and timeouts_ok,
            "within_noise": within}


def summary_line(rows: list[dict]) -> str:
    matched = [r for r in rows if r["agrees"] is not None]
    agree = [r for r in matched if r["agrees"]]
    noise = [r for r in matched if not r["agrees"] and r["within_noise"]]
    ratios = sorted(r["goodput_bps_ratio"] for r in matched)
    median = ratios[len(ratios) // 2] if ratios else None
    incomplete = sum(int(r["kernel_complete"].split("/")[1]) - int(r["kernel_complete"].split("/")[0]) for r in rows)
    shown = f"{median:.3f}" if median is not None else "-"
    share = len(agree) / len(matched) if matched else 0.0
    selfs = [r["kernel_self_agreement"] for r in matched if r["kernel_self_agreement"] is not None]
    ceiling = (f"; a twin as variable as the kernel itself but seeded independently would agree in about "
               f"{sum(selfs):.0f}/{len(selfs)} ({sum(selfs) / len(selfs):.0%}, bootstrap of the kernel's runs)") if selfs else ""
    return (f"{len(rows)} cells, {len(matched)} with a simulator twin: goodput within {GOODPUT_TOLERANCE:.0%} and "
            f"timeouts within {TIMEOUT_TOLERANCE:.0%} (or {TIMEOUT_ABS_TOLERANCE:.0f} per run) in "
            f"{len(agree)}/{len(matched)} ({share:.0%}; goal {GOAL:.0%}); of the others, {len(noise)} within two "
            f"standard errors of the seeds' spread; median goodput ratio kernel/simulator {shown}; kernel runs "
            f"left out as incomplete: {incomplete}{ceiling}")


def verdict(r: dict) -> str:
    """The table's last column: yes, or which bound a cell misses and whether noise covers it."""
    if r["agrees"] is None:
        return "-"
    if r["agrees"]:
        return "yes"
    missed = " and ".join(name for name, ok in (("goodput", r["goodput_ok"]), ("timeouts", r["timeouts_ok"])) if not ok)
    return f"no ({missed}{'; within noise' if r['within_noise'] else ''})"


def write(rows: list[dict], out: Path, seeds: range, header: str) -> str:
    out.mkdir(parents=True, exist_ok=True)
    with (out / "cells.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)

    def num(x, scale=1.0, digits=0):
        return "-" if x is None else f"{x / scale:,.{digits}f}"

    lines = [header, "", summary_line(rows), "",
             "| cc | SACK | loss | delay | rate | bytes | kernel kbit/s | sim kbit/s | ratio | kernel retx | sim retx | kernel RTOs | sim RTOs | kernel complete | agrees |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['congestion']} | {'on' if r['sack'] else 'off'} | {r['loss']:.0%} | {r['delay_ms']} ms | "
                     f"{r['rate_mbps']} Mbit/s | {r['bytes']:,} | {num(r['kernel_goodput_bps'], 1e3)} | {num(r['sim_goodput_bps'], 1e3)} | "
                     f"{num(r['goodput_bps_ratio'], 1, 3)} | {num(r['kernel_retransmissions'], 1, 1)} | "
                     f"{num(r['sim_retransmissions'], 1, 1)} | {num(r['kernel_timeouts'], 1, 1)} | "
                     f"{num(r['sim_timeouts'], 1, 1)} | {r['kernel_complete']} | {verdict(r)} |")
    text = "\n".join(lines) + "\n"
    (out / "summary.md").write_text(text)
    return text


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="8 cells, 1 seed")
    p.add_argument("--seeds", type=int, default=None, help="seeds per cell (default 3; 1 with --quick)")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT)
    p.add_argument("--record", action="store_true", help=f"also write {LAST.name}")
    p.add_argument("--kernel-engine", default=None,
                   help="reuse kernel runs recorded on this engine version (when the kernel-mode code has not "
                        "changed since; the simulator side always runs on this build)")
    args = p.parse_args(argv)
    tcpenergy = import_tcpenergy()
    from tcpenergy.emulate import netns

    reason = netns.unavailable()
    if reason:
        print(f"error: kernel mode unavailable: {reason}", file=sys.stderr)
        return 2
    seeds = range(1, (args.seeds or (1 if args.quick else 3)) + 1)
    args.out.mkdir(parents=True, exist_ok=True)
    grid = cells(args.quick)
    rows = run_grid(tcpenergy, grid, seeds, args.out, args.kernel_engine)
    reused = f" --kernel-engine {args.kernel_engine}" if args.kernel_engine else ""
    header = (f"Kernel grid: `python benchmarks/kernel/run.py{' --quick' if args.quick else ''} --seeds {len(seeds)}{reused}`, "
              f"kernel {platform.release()}, engine {tcpenergy.engine_version()}"
              f"{f' (kernel runs recorded on engine {args.kernel_engine})' if args.kernel_engine else ''}, {machine_line()}; "
              f"means over {len(seeds)} seed(s) per cell, ratios kernel / simulator; the simulator runs "
              f"`tcp.stack = \"linux-6\"` on the same seeds.")
    text = write(rows, args.out, seeds, header)
    if args.record:
        LAST.write_text(text)
    print(summary_line(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
