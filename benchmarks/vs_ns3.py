"""ns-3 and tcpenergy on the standard run, side by side in one invocation.

    python benchmarks/vs_ns3.py              # ns-3 then tcpenergy, 10 seeds each, and the ratio
    python benchmarks/vs_ns3.py --ns3-only   # only the ns-3 side

The ns-3 side needs the `ns3` wheel from PyPI (3.44.x: prebuilt libraries and cppyy bindings).
It is installed once into its own venv, benchmarks/.ns3-venv (about 500 MB, git-ignored), and
benchmarks/ns3_standard_run.py runs there in a subprocess, timing `Simulator::Run()` alone.
tcpenergy then runs the same scenario (benchmarks/standard.toml) in this interpreter, timing
`tcpenergy.run(...)` alone. Both report the median wall time per run over the same seed count;
the ratio of the medians is the headline. If ns-3 cannot be installed or run, the script says
why and exits with status 1; if tcpenergy cannot be imported, status 1 as well.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from run import (STANDARD, import_tcpenergy, load_scenario, machine, machine_line, prepare,
                 print_table, summarize, time_runs)

HERE = Path(__file__).resolve().parent
NS3_REQUIREMENT = "ns3>=3.44,<3.45"
NS3_SCRIPT = HERE / "ns3_standard_run.py"
# cppyy prints this for a static initialiser in ns-3's time.h that the ns-3 libraries already
# ran; it does not affect the simulation (checked: identical event counts to a compiled C++
# program linked against the same libraries).
CPPYY_NOISE = "Failed to materialize symbols"


class Ns3Unavailable(Exception):
    """ns-3 could not be installed or run; the message says exactly why."""


def _tail(text: str, lines: int = 25) -> str:
    """The informative end of a failed command's output, indented.

    After a C++ abort, cppyy's crash handler prints a gdb backtrace below " *** Break *** ";
    the reason (e.g. ns-3's `msg="..." NS_FATAL`) is above it, so the backtrace is cut off.
    """
    text = text.split(" *** Break *** ", 1)[0]
    kept = [ln for ln in text.splitlines() if ln.strip() and CPPYY_NOISE not in ln]
    return "\n".join("    " + ln for ln in kept[-lines:])


def _ns3_environment(python: Path) -> dict:
    """Environment for the ns-3 subprocess.

    The wheel's loader globs PATH, LD_LIBRARY_PATH and the working directory (recursively) for
    libns3*.so and refuses to start if it finds two copies, so the subprocess gets a minimal PATH,
    no LD_LIBRARY_PATH, and an empty working directory (see run_ns3).
    """
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    env["PATH"] = os.pathsep.join([str(python.parent), "/usr/bin", "/bin"])
    return env


def ensure_ns3(venv: Path) -> Path:
    """Create `venv` and pip-install the ns-3 wheel into it if needed; return its python."""
    python = venv / "bin" / "python"
    if not python.exists():
        print(f"creating venv {venv}")
        p = subprocess.run([sys.executable, "-m", "venv", str(venv)], capture_output=True,
                           text=True)
        if p.returncode != 0:
            raise Ns3Unavailable(f"`{sys.executable} -m venv {venv}` failed "
                                 f"(exit {p.returncode}):\n{_tail(p.stderr + p.stdout)}")
    probe = subprocess.run(
        [str(python), "-c", "import importlib.metadata as m; print(m.version('ns3'))"],
        capture_output=True, text=True)
    installed = probe.stdout.strip() if probe.returncode == 0 else None
    if not (installed and installed.startswith("3.44")):
        print(f"installing {NS3_REQUIREMENT} into {venv} (once; ~500 MB) ...", flush=True)
        p = subprocess.run([str(python), "-m", "pip", "install", "--disable-pip-version-check",
                            NS3_REQUIREMENT], capture_output=True, text=True)
        if p.returncode != 0:
            raise Ns3Unavailable(f"`pip install {NS3_REQUIREMENT}` into {venv} failed "
                                 f"(exit {p.returncode}):\n{_tail(p.stderr + p.stdout)}")
    return python


def ns3_arguments(sc: dict) -> list[str]:
    """Map the scenario onto ns3_standard_run.py's options; refuse what it does not model."""
    path, tcp = sc["path"], sc.get("tcp", {})
    fwd, rev = path["forward"], path["reverse"]
    problems = []
    for key in ("rate", "delay", "queue"):
        if fwd.get(key) != rev.get(key):
            problems.append(f"path.forward.{key} != path.reverse.{key} (ns-3 side is symmetric)")
    imp = fwd.get("impairments", [])
    if len(imp) != 1 or imp[0].get("kind") != "bernoulli":
        problems.append("path.forward.impairments must be exactly one bernoulli")
    if rev.get("impairments"):
        problems.append("path.reverse.impairments must be empty")
    wanted = {"variant": "sack", "timestamps": False, "window_scale": False,
              "limited_transmit": False, "cwnd_growth": "per_ack"}
    for key, value in wanted.items():
        if tcp.get(key, value) != value:
            problems.append(f"tcp.{key} must be {value!r} (fixed in the ns-3 script)")
    delack = tcp.get("delayed_ack", {"every": 2, "timeout": "200ms"})
    if not delack.get("every"):
        problems.append("tcp.delayed_ack.every = 0 has no ns-3 equivalent")
    if sc.get("traffic", {}).get("kind") != "bulk":
        problems.append("traffic.kind must be bulk")
    if problems:
        raise Ns3Unavailable("the scenario cannot be run in ns-3 as configured:\n    "
                             + "\n    ".join(problems))
    ssthresh = str(tcp.get("initial_ssthresh", "64KB"))
    return [
        "--rate", str(fwd["rate"]), "--delay", str(fwd["delay"]), "--queue", str(fwd["queue"]),
        "--loss", str(imp[0]["p"]), "--mtu", str(path.get("mtu", 1500)),
        "--bytes", str(sc["traffic"]["bytes"]),
        "--initial-window", str(tcp.get("initial_window", 2)),
        "--receive-buffer", str(tcp.get("receive_buffer", "64KB")),
        "--initial-ssthresh", "4294967295" if ssthresh == "infinite" else ssthresh,
        "--min-rto", str(tcp.get("min_rto", "1s")),
        "--delack-count", str(delack["every"]), "--delack-timeout", str(delack["timeout"]),
    ]


def run_in_ns3_venv(python: Path, cmd: list[str], timeout_s: int, prefix: str) -> subprocess.CompletedProcess:
    """Run `cmd` (the venv's python and a script) in an empty temporary directory, as the ns-3
    wheel's loader needs; Ns3Unavailable if it does not finish within `timeout_s`."""
    print(f"running ns-3: {' '.join(cmd[1:])}", flush=True)
    try:
        with tempfile.TemporaryDirectory(prefix=prefix) as cwd:
            return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, cwd=cwd,
                                  env=_ns3_environment(python))
    except subprocess.TimeoutExpired:
        raise Ns3Unavailable(f"the ns-3 run did not finish within {timeout_s // 60} minutes") from None


def run_ns3(python: Path, scenario: dict, seeds: int, warmup: int) -> dict:
    """Run ns3_standard_run.py in the ns-3 venv and return its JSON report."""
    cmd = [str(python), str(NS3_SCRIPT), "--seeds", str(seeds), "--warmup", str(warmup),
           *ns3_arguments(scenario)]
    p = run_in_ns3_venv(python, cmd, timeout_s=1800, prefix="ns3-run-")
    try:
        report = json.loads(p.stdout)
    except json.JSONDecodeError:
        raise Ns3Unavailable(f"the ns-3 run failed (exit {p.returncode}) without a report:\n"
                             f"{_tail(p.stderr + p.stdout)}") from None
    if not report.get("all_complete"):
        bad = [r["run"] for r in report["runs"] if not r["complete"]]
        raise Ns3Unavailable(f"ns-3 did not deliver all {scenario['traffic']['bytes']} in "
                             f"RngRun {bad}; its timings would not be comparable")
    return report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=10, help="timed runs on each side (default 10)")
    ap.add_argument("--warmup", type=int, default=1, help="untimed runs on each side first")
    ap.add_argument("--scenario", default=str(STANDARD))
    ap.add_argument("--venv", default=str(HERE / ".ns3-venv"), help="venv for the ns-3 wheel")
    ap.add_argument("--ns3-only", action="store_true", help="skip the tcpenergy side")
    ap.add_argument("--json", metavar="PATH", help="also write both reports as JSON")
    args = ap.parse_args(argv)

    scenario = load_scenario(Path(args.scenario))
    print(f"machine: {machine_line()}")
    try:
        python = ensure_ns3(Path(args.venv))
        ns3 = run_ns3(python, scenario, args.seeds, args.warmup)
    except Ns3Unavailable as exc:
        print(f"error: ns-3 unavailable: {exc}", file=sys.stderr)
        return 1
    ns3_runs = ns3["runs"]
    ns3_sum = {
        "median_wall_s": ns3["median_wall_s"],
        "median_events": statistics.median(r["events"] for r in ns3_runs),
        "events_per_s": ns3["events_per_s"],
        "median_completion_s": statistics.median(r["last_delivery_s"] for r in ns3_runs),
    }

    ours_sum, version = None, None
    if not args.ns3_only:
        tcpenergy = import_tcpenergy()
        version = getattr(tcpenergy, "__version__", "?")
        print(f"running tcpenergy {version}: {args.seeds} seeds", flush=True)
        prepared = prepare(tcpenergy, Path(args.scenario))
        rows = time_runs(tcpenergy, prepared, range(1, args.seeds + 1), args.warmup)
        ours_sum = summarize(rows)

    print()
    table = [["ns-3 3.44 (PyPI)", ns3_sum["median_wall_s"] * 1e3, int(ns3_sum["median_events"]),
              ns3_sum["events_per_s"] / 1e6, ns3_sum["median_completion_s"]]]
    if ours_sum:
        table.append([f"tcpenergy {version}", ours_sum["median_wall_s"] * 1e3,
                      int(ours_sum["median_events"]), ours_sum["events_per_s"] / 1e6,
                      ours_sum["median_completion_s"]])
    print_table(["simulator", "median ms/run", "events/run", "Mevents/s", "completion s"], table)
    print("(ns-3 events: Simulator::GetEventCount(), cancelled timers included; ns-3 completion:"
          " last byte at the receiver; tcpenergy: ACK of the last byte at the sender)")
    ratio = None
    if ours_sum:
        ratio = ns3_sum["median_wall_s"] / ours_sum["median_wall_s"]
        print(f"\nns-3 / tcpenergy, median wall time per run: {ratio:.1f}x (target >= 25x)")
    if args.json:
        Path(args.json).write_text(json.dumps(
            {"benchmark": "vs_ns3", "machine": machine(), "seeds": args.seeds, "ns3": ns3,
             "ns3_summary": ns3_sum, "tcpenergy": ours_sum, "tcpenergy_version": version,
             "ratio_ns3_over_ours": ratio}, indent=1) + "\n")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
