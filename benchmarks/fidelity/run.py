"""ns-3 3.44 and tcpenergy on a grid of matched cells: goodput, retransmissions, timeouts.

    python benchmarks/fidelity/run.py                 # the full grid, 5 seeds, 2 ns-3 workers
    python benchmarks/fidelity/run.py --quick         # a subset: 2 seeds, 2 losses, 2 delays
    python benchmarks/fidelity/run.py --seeds 10 --jobs 2 --out DIR
    python benchmarks/fidelity/run.py --verify-ns3    # check the ns-3 counters and settings
    python benchmarks/fidelity/run.py --record        # also write benchmarks/fidelity/LAST.md

The ns-3 side runs in the venv of benchmarks/vs_ns3.py (created on first use) in `--jobs` worker
processes; its results are cached on disk, keyed by cell, seed, ns-3 version and the worker code
that determines a result, so a rerun after a tcpenergy change only runs tcpenergy. tcpenergy runs
in this process.
Writes `cells.csv` and `summary.md` to --out (default benchmarks/fidelity/out/) and prints the
summary line. See benchmarks/fidelity/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCHMARKS = HERE.parent
# benchmarks/ first: `import run` inside vs_ns3 must find benchmarks/run.py, not this file.
sys.path.insert(0, str(BENCHMARKS))

import vs_ns3  # noqa: E402  (the ns-3 venv installer and its subprocess environment)
from run import import_tcpenergy, machine_line  # noqa: E402

from fidelity import grid, ns3_cell, table, verify  # noqa: E402

REPO = BENCHMARKS.parent
NS3_WORKER = HERE / "ns3_cell.py"
LAST = HERE / "LAST.md"
DEFAULT_OUT = HERE / "out"
DEFAULT_CACHE = HERE / "out" / "ns3-cache"


def fail(message: str, status: int = 2) -> int:
    print(f"error: {message}", file=sys.stderr)
    return status


# ---------------------------------------------------------------------------------------------
# ns-3 side


class Ns3Cache:
    """Finished ns-3 runs, one JSON line each, appended as they arrive (an interrupted grid
    keeps what it finished). Only this process writes it."""

    def __init__(self, path: Path):
        self.path = path
        self.entries: dict[str, dict] = {}
        self.lock = threading.Lock()
        if path.exists():
            for line in path.read_text().splitlines():
                try:
                    e = json.loads(line)
                    self.entries[e["key"]] = e["result"]
                except (json.JSONDecodeError, KeyError):
                    continue  # a line cut short by an interruption

    def add(self, key: str, cell: grid.Cell, seed: int, result: dict) -> None:
        with self.lock:
            self.entries[key] = result
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "a") as f:
                f.write(json.dumps({"key": key, "cell": cell.__dict__, "seed": seed,
                                    "result": result}) + "\n")


def ns3_version(python: Path) -> str:
    p = subprocess.run([str(python), "-c",
                        "import importlib.metadata as m; print(m.version('ns3'))"],
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise vs_ns3.Ns3Unavailable(f"cannot read the ns3 version:\n{vs_ns3._tail(p.stderr)}")
    return p.stdout.strip()


def run_ns3(python: Path, tasks: list[dict], jobs: int, on_result, labels: dict,
            worker_args: tuple = ()) -> list[str]:
    """Run `tasks` on `jobs` ns-3 workers fed from one queue; `on_result(task, result)` gets
    each result as it arrives. Returns the failures, one message each."""
    todo: queue.Queue = queue.Queue()
    for t in tasks:
        todo.put(t)
    failures: list[str] = []
    lock = threading.Lock()
    done = [0]
    t0 = time.perf_counter()

    def worker() -> None:
        with tempfile.TemporaryDirectory(prefix="ns3-fidelity-") as cwd, \
                tempfile.TemporaryFile("w+") as err:
            p = subprocess.Popen([str(python), str(NS3_WORKER), *worker_args],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
                                 text=True, cwd=cwd, env=vs_ns3._ns3_environment(python))
            try:
                while True:
                    try:
                        task = todo.get_nowait()
                    except queue.Empty:
                        break
                    p.stdin.write(json.dumps(task) + "\n")
                    p.stdin.flush()
                    answer = None
                    for line in p.stdout:
                        if line.startswith(("RESULT ", "FAILED ")):
                            answer = line
                            break
                    label = labels[task["key"]]
                    if answer is None:
                        err.seek(0)
                        with lock:
                            failures.append(f"{label}: the ns-3 worker exited (status "
                                            f"{p.wait()}):\n{vs_ns3._tail(err.read())}")
                        return
                    kind, payload = answer.split(" ", 1)
                    data = json.loads(payload)
                    with lock:
                        if kind == "FAILED":
                            failures.append(f"{label}:\n{data['error']}")
                            continue
                        on_result(task, data["result"])
                        done[0] += 1
                        if done[0] % 50 == 0 or done[0] == len(tasks):
                            print(f"  ns-3: {done[0]}/{len(tasks)} runs "
                                  f"({time.perf_counter() - t0:.0f} s)", flush=True)
            finally:
                if p.stdin and not p.stdin.closed:
                    p.stdin.close()
                p.wait()

    threads = [threading.Thread(target=worker) for _ in range(min(jobs, len(tasks)))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return failures


# ---------------------------------------------------------------------------------------------
# tcpenergy side


def rtt_sampling_setting(tcpenergy) -> str | None:
    """"every_ack" where the engine has `tcp.rtt_sampling` (ns-3 samples every ACK that
    covers a never-retransmitted segment); None for an engine without the key."""
    probe = grid.tcpenergy_scenario(grid.Cell("newreno", 0.01, 20, 1500), "every_ack")
    try:
        tcpenergy.load_scenario(probe)
    except tcpenergy.ScenarioError as exc:
        if "rtt_sampling" in str(exc):
            return None
        raise
    return "every_ack"


def run_tcpenergy(tcpenergy, cells: list[grid.Cell], seeds: range,
                  rtt_sampling: str | None) -> dict:
    out = {}
    for cell in cells:
        scenario = tcpenergy.load_scenario(grid.tcpenergy_scenario(cell, rtt_sampling))
        runs = []
        for seed in seeds:
            rec = tcpenergy.run(scenario, seed=seed)
            flow = rec["flow"]
            runs.append({"complete": bool(rec["complete"]),
                         "goodput_bps": flow["goodput_bps"] if rec["complete"] else None,
                         "retransmissions": flow["retransmissions"],
                         "timeouts": flow["timeouts"],
                         "fast_recoveries": flow["fast_retransmits"]})
        out[cell] = runs
    return out


# ---------------------------------------------------------------------------------------------
# --verify-ns3


def verify_ns3(python: Path) -> int:
    """Run the checks of verify.py; print one line per run; status 1 if any fails."""
    runs = [(c, verify.SEED) for c in verify.NO_LOSS] + verify.LOSSY + [verify.REPEATED]
    tasks = [{"key": str(i), "cell": grid.ns3_cell(c), "seed": seed}
             for i, (c, seed) in enumerate(runs)]
    results: dict[str, dict] = {}
    print(f"verifying the ns-3 side on {len(runs)} runs (DEBUG logging on: slower)", flush=True)
    # One worker, so that the repeated run comes after all the others in the same process.
    failures = run_ns3(python, tasks, 1, lambda t, r: results.__setitem__(t["key"], r),
                       {str(i): f"{c.label} seed {seed}" for i, (c, seed) in enumerate(runs)},
                       ("--verify",))
    if failures:
        for f in failures:
            print(f"error: ns-3 run failed: {f}", file=sys.stderr)
        return 1
    tcpenergy = import_tcpenergy()
    rtt = rtt_sampling_setting(tcpenergy)
    bad = 0
    first, last = results[str(runs.index(verify.REPEATED))], results[str(len(runs) - 1)]
    same = verify.outcome(first) == verify.outcome(last)
    bad += not same
    rc, rs = verify.REPEATED
    print(f"{'ok  ' if same else 'FAIL'} {rc.label} seed {rs}: the same result when run again "
          f"after {len(runs) - 2} other runs in the same worker"
          + ("" if same else f"\n     - first {verify.outcome(first)}\n     - again "
                              f"{verify.outcome(last)}"))
    for i, (cell, seed) in enumerate(runs[:-1]):
        r = results[str(i)]
        if cell in verify.NO_LOSS:
            te = run_tcpenergy(tcpenergy, [cell], range(seed, seed + 1), rtt)
            te_goodput = te[cell][0]["goodput_bps"]
            problems = verify.check_no_loss(cell, r, te_goodput)
            what = (f"goodput ns-3 {r['goodput_bps'] / 1e3:.1f} kbit/s = "
                    f"{r['goodput_bps'] / verify.payload_rate_bps(cell):.3f} of the payload rate; "
                    f"tcpenergy {te_goodput / 1e3:.1f} kbit/s")
        else:
            problems = verify.check_counters(cell, r)
            c = r["checks"]
            what = (f"data timeouts {r['data_timeouts']} (ns-3 log {c['log_data_timeouts']}, "
                    f"CA_LOSS entries {r['loss_entries']}) + SYNs lost {r['syn_drops']} = "
                    f"timeouts {r['timeouts']}; retransmissions {r['retransmissions']} (Tx trace "
                    f"{c['tx_retransmissions']})")
        bad += bool(problems)
        print(f"{'ok  ' if not problems else 'FAIL'} {cell.label} seed {seed}: {what}")
        for p in problems:
            print(f"     - {p}")
    print("settings read back from both sockets: "
          + ("as matched" if not bad else "see the failures above"))
    return 1 if bad else 0


# ---------------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="a subset: MTU 1500, loss 1/5 %%, delay 20/100 ms, 2 seeds")
    ap.add_argument("--seeds", type=int, help="runs per cell on each side (default 5; "
                    "--quick: 2)")
    ap.add_argument("--jobs", type=int, default=2, help="ns-3 worker processes (default 2)")
    ap.add_argument("--out", default=str(DEFAULT_OUT), help="output directory")
    ap.add_argument("--cache", default=str(DEFAULT_CACHE), help="ns-3 result cache directory")
    ap.add_argument("--venv", default=str(BENCHMARKS / ".ns3-venv"), help="venv of the ns3 wheel")
    ap.add_argument("--variants", help="comma-separated subset of: " + ", ".join(grid.VARIANTS))
    ap.add_argument("--ns3-only", action="store_true", help="fill the ns-3 cache and stop")
    ap.add_argument("--record", action="store_true",
                    help="also write the summary to benchmarks/fidelity/LAST.md")
    ap.add_argument("--verify-ns3", action="store_true",
                    help="check the ns-3 counters and settings on a few runs, then stop")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    a = parse_args(argv)
    seeds = a.seeds if a.seeds is not None else (grid.QUICK_SEEDS if a.quick else grid.SEEDS)
    if seeds < 1:
        return fail(f"--seeds must be at least 1, got {seeds}")
    if a.jobs < 1:
        return fail(f"--jobs must be at least 1, got {a.jobs}")
    variants = None
    if a.variants:
        variants = [v.strip() for v in a.variants.split(",") if v.strip()]
        unknown = [v for v in variants if v not in grid.VARIANTS]
        if unknown or not variants:
            return fail(f"--variants: unknown {', '.join(unknown) or '(empty)'}; allowed: "
                        + ", ".join(grid.VARIANTS))
    cells = grid.cells(quick=a.quick, variants=variants)
    seed_range = range(1, seeds + 1)
    out_dir = Path(a.out)
    print(f"machine: {machine_line()}")
    print(f"grid: {len(cells)} cells x {seeds} seeds on each side")
    walls = {}

    try:
        python = vs_ns3.ensure_ns3(Path(a.venv))
        version = ns3_version(python)
    except vs_ns3.Ns3Unavailable as exc:
        return fail(f"ns-3 unavailable: {exc}", 1)
    if a.verify_ns3:
        return verify_ns3(python)
    digest = ns3_cell.result_digest()
    cache = Ns3Cache(Path(a.cache) / f"ns3-{version}.jsonl")
    keys = {(c, s): grid.ns3_key(c, s, version, digest) for c in cells for s in seed_range}
    pending = [{"key": k, "cell": grid.ns3_cell(c), "seed": s}
               for (c, s), k in keys.items() if k not in cache.entries]
    print(f"ns-3 {version}: {len(keys) - len(pending)} runs cached, {len(pending)} to run"
          + (f" on {min(a.jobs, len(pending))} workers" if pending else ""), flush=True)
    t0 = time.perf_counter()
    if pending:
        by_key = {k: cs for cs, k in keys.items()}
        labels = {k: f"{c.label} seed {s}" for (c, s), k in keys.items()}
        failures = run_ns3(python, pending, a.jobs,
                           lambda task, result: cache.add(task["key"], *by_key[task["key"]],
                                                          result),
                           labels)
        if failures:
            for f in failures[:5]:
                print(f"error: ns-3 run failed: {f}", file=sys.stderr)
            return fail(f"{len(failures)} ns-3 runs failed (finished runs are cached)", 1)
    walls["ns3_s"] = time.perf_counter() - t0
    print(f"ns-3 side: {walls['ns3_s']:.1f} s wall ({len(pending)} runs)", flush=True)
    if a.ns3_only:
        return 0

    tcpenergy = import_tcpenergy()
    te_version = tcpenergy.engine_version()
    rtt_sampling = rtt_sampling_setting(tcpenergy)
    t0 = time.perf_counter()
    te = run_tcpenergy(tcpenergy, cells, seed_range, rtt_sampling)
    walls["tcpenergy_s"] = time.perf_counter() - t0
    print(f"tcpenergy {te_version} side: {walls['tcpenergy_s']:.1f} s wall "
          f"({len(cells) * seeds} runs, tcp.rtt_sampling = {rtt_sampling or 'not in engine'})")

    rows = [table.build_row(c.variant, c.loss, c.delay_ms, c.mtu,
                            [cache.entries[keys[(c, s)]] for s in seed_range], te[c])
            for c in cells]
    summary = table.summarize(rows)
    header = "\n".join([
        "# ns-3 3.44 vs tcpenergy: fidelity grid", "",
        f"- command: `{' '.join(['python benchmarks/fidelity/run.py', *(argv or sys.argv[1:])])}`",
        f"- machine: {machine_line()}",
        f"- tcpenergy engine {te_version} (`tcp.rtt_sampling` = "
        f"{rtt_sampling or 'not in this engine: one timed segment at a time'}); "
        f"ns-3 {version} (PyPI wheel)",
        f"- {len(cells)} cells x {seeds} seeds per side; ratios are tcpenergy / ns-3 of the "
        "means over seeds; settings: benchmarks/fidelity/README.md",
        f"- wall time: ns-3 {walls['ns3_s']:.1f} s ({len(pending)} runs, "
        f"{len(keys) - len(pending)} from the cache), tcpenergy {walls['tcpenergy_s']:.1f} s",
        "", ""])
    out_dir.mkdir(parents=True, exist_ok=True)
    files = [(out_dir / "cells.csv", table.to_csv(rows)),
             (out_dir / "summary.md", header + table.markdown(rows, summary, doc_href(out_dir)))]
    if a.record:
        files.append((LAST, header + table.markdown(rows, summary, doc_href(HERE))))
    # Write each file whole, then move it into place: no half-written outputs.
    for path, text in files:
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(text)
        tmp.replace(path)
    print()
    print(table.summary_line(summary))
    print("\nwrote " + ", ".join(str(p) for p, _ in files))
    return 0


def doc_href(directory: Path) -> str:
    """The link to the documented ns-3 deviations from a file written in `directory`."""
    target = REPO / table.DOC.split("#")[0]
    return os.path.relpath(target, directory.resolve()) + "#" + table.DOC.split("#")[1]


if __name__ == "__main__":
    sys.exit(main())
