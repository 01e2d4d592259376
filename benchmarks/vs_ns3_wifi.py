"""ns-3 and tcpenergy on the 802.11 3-hop chain, side by side in one invocation.

    python benchmarks/vs_ns3_wifi.py                  # ns-3 then tcpenergy, 5 seeds each
    python benchmarks/vs_ns3_wifi.py --seeds 3 --json wifi.json
    python benchmarks/vs_ns3_wifi.py --ns3-only       # only the ns-3 side

The scenario is benchmarks/wifi_chain.toml: a 5 MB TCP transfer a -> d over a -> b -> c -> d on
one 802.11b ad hoc channel (11 Mbit/s data, 2 Mbit/s ACKs, long preamble, RTS/CTS off, 50-frame
queues, everyone in range). The ns-3 side is benchmarks/ns3_wifi_chain.py, run in the ns-3 venv
(benchmarks/.ns3-venv, created by vs_ns3.py's ensure_ns3 if missing) in an empty temporary
directory, one process for all seeds; it times `Simulator::Run()` alone and takes its MAC, PHY and
TCP counters from a second, untimed run of each seed. Its channel gives every pair the same
received power by default (`--propagation fixed-rss`), so frames that overlap are both lost, as in
tcpenergy's reception model; `--propagation log-distance` lets the nearer sender capture the
receiver. The tcpenergy side loads and validates the scenario once, makes one untimed warm-up
run, then times `tcpenergy.run(...)` alone per seed.

Reported: both medians and their ratio (ns-3 / tcpenergy, target >= 50x); then, to check that
both simulated the same network, goodput (mean, standard deviation, range over seeds), completion
time, TCP retransmissions and the channel's counters (data attempts, MAC retries, drops at the
retry limit, ACK frames, airtime) side by side. Goodput is compared by tcpenergy's definition on
both sides (8 x bytes delivered / the time the sender got the ACK of the last byte); ns-3's
by the last byte at the sink is shown beside it. Exit status 1 if either side cannot run, with the
reason (a scenario the ns-3 script cannot express counts as ns-3 not running).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from run import import_tcpenergy, load_scenario, machine, machine_line, prepare, print_table
from vs_ns3 import Ns3Unavailable, _tail, ensure_ns3, run_in_ns3_venv

HERE = Path(__file__).resolve().parent
SCENARIO = HERE / "wifi_chain.toml"
NS3_SCRIPT = HERE / "ns3_wifi_chain.py"
TARGET_RATIO = 50
CHAIN_LENGTH = 4  # ns3_wifi_chain.py builds a, b, c, d


# ---------------------------------------------------------------------------------------------
# the scenario, as ns3_wifi_chain.py options


def ns3_arguments(sc: dict) -> list[str]:
    """Map the scenario onto ns3_wifi_chain.py's options; refuse what it does not model."""
    problems = []
    if sc.get("links"):
        problems.append("[[links]] must be absent (the ns-3 side has only the shared channel)")
    channels = sc.get("channels", [])
    if len(channels) != 1:
        problems.append(f"exactly one [[channels]] expected, found {len(channels)}")
        raise Ns3Unavailable("the scenario cannot be run in ns-3 as configured:\n    "
                             + "\n    ".join(problems))
    ch = channels[0]
    routes = sc.get("routes", [])
    chain = routes[0] if routes else []
    if len(chain) != CHAIN_LENGTH or routes != [chain, chain[::-1]]:
        problems.append(f"routes must be one {CHAIN_LENGTH}-node chain and its reverse "
                        "(the ns-3 side routes a -> b -> c -> d both ways)")
    if sorted(ch.get("nodes", [])) != sorted(chain):
        problems.append("channels.0.nodes must be the chain's nodes")
    if ch.get("standard") != "802.11b":
        problems.append("channels.0.standard must be '802.11b' (the ns-3 side is DSSS/HR-DSSS)")
    if ch.get("preamble", "long") != "long":
        problems.append("channels.0.preamble must be 'long' (ns-3's ad hoc MAC sends long only)")
    if ch.get("rts_threshold", "off") != "off":
        problems.append("channels.0.rts_threshold must be 'off'")
    if ch.get("impairments"):
        problems.append("channels.0.impairments must be empty")
    hears = ch.get("hears")
    if hears is not None:
        heard = {frozenset(pair) for pair in hears}
        everyone = {frozenset((x, y)) for x in chain for y in chain if x != y}
        if heard != everyone:
            problems.append("channels.0.hears must be absent or every pair (one collision domain)")
    flows = sc.get("flows", [])
    flow = flows[0] if len(flows) == 1 else {}
    if len(flows) != 1:
        problems.append(f"exactly one [[flows]] expected, found {len(flows)}")
    elif chain and (flow.get("from"), flow.get("to")) != (chain[0], chain[-1]):
        problems.append("flows.0 must go from the chain's first node to its last")
    if flow and flow.get("transport", "tcp") != "tcp":
        problems.append("flows.0.transport must be tcp")
    traffic = flow.get("traffic", {})
    if flow and traffic.get("kind") != "bulk":
        problems.append("flows.0.traffic.kind must be bulk")
    if flow.get("start", "0s") not in ("0s", "0ms", "0us", "0ns", 0) or "stop" in flow:
        problems.append("flows.0 must start at 0 and have no stop")
    tcp = {**sc.get("tcp", {}), **flow.get("tcp", {})}
    wanted = {"variant": "sack", "timestamps": False, "window_scale": False,
              "limited_transmit": False, "cwnd_growth": "per_ack"}
    for key, value in wanted.items():
        if tcp.get(key, value) != value:
            problems.append(f"tcp.{key} must be {value!r} (fixed in the ns-3 script)")
    delack = tcp.get("delayed_ack", {"every": 2, "timeout": "200ms"})
    if not delack.get("every"):
        problems.append("tcp.delayed_ack.every = 0 has no ns-3 equivalent")
    if problems:
        raise Ns3Unavailable("the scenario cannot be run in ns-3 as configured:\n    "
                             + "\n    ".join(problems))
    ssthresh = str(tcp.get("initial_ssthresh", "64KB"))
    args = ["--data-rate", str(ch["data_rate"]), "--queue", str(ch.get("queue", 50)),
            "--mtu", str(ch.get("mtu", 1500)), "--preamble", "long",
            "--retry-limit", str(ch.get("short_retry_limit", 7))]
    if "basic_rates" in ch:
        args += ["--basic-rates", *map(str, ch["basic_rates"])]
    else:
        args += ["--basic-rate", str(ch.get("basic_rate", "2Mbps"))]
    return args + [
        "--bytes", str(traffic["bytes"]),
        "--initial-window", str(tcp.get("initial_window", 2)),
        "--receive-buffer", str(tcp.get("receive_buffer", "64KB")),
        "--initial-ssthresh", "4294967295" if ssthresh == "infinite" else ssthresh,
        "--min-rto", str(tcp.get("min_rto", "1s")),
        "--delack-count", str(delack["every"]), "--delack-timeout", str(delack["timeout"]),
    ]


# ---------------------------------------------------------------------------------------------
# the two sides


def run_ns3(python: Path, scenario: dict, a: argparse.Namespace) -> dict:
    """Run ns3_wifi_chain.py in the ns-3 venv and return its JSON report."""
    cmd = [str(python), str(NS3_SCRIPT), "--seeds", str(a.seeds), "--warmup", str(a.warmup),
           "--propagation", a.propagation, *ns3_arguments(scenario)]
    if a.no_counters:
        cmd.append("--no-counters")
    p = run_in_ns3_venv(python, cmd, timeout_s=3600, prefix="ns3-wifi-")
    try:
        report = json.loads(p.stdout)
    except json.JSONDecodeError:
        raise Ns3Unavailable(f"the ns-3 run failed (exit {p.returncode}) without a report:\n"
                             f"{_tail(p.stderr + p.stdout)}") from None
    if not report.get("all_complete"):
        bad = [r["run"] for r in report["runs"] if not r["complete"]]
        raise Ns3Unavailable(f"ns-3 did not deliver all the bytes in RngRun {bad}; its timings "
                             "would not be comparable")
    return report


def ns3_rows(report: dict) -> list[dict]:
    """One row per seed, in the harness's common vocabulary (None where ns-3 has no figure)."""
    rows = []
    for r in report["runs"]:
        c = r.get("counters") or {}
        mac = c.get("mac", {})
        rows.append({
            "seed": r["run"],
            "wall_s": r["wall_s"],
            "events": r["events"],
            "complete": r["complete"],
            "goodput_bps": c.get("sender_goodput_bps"),
            "completion_s": c.get("sender_completion_s"),
            "sink_goodput_bps": r["goodput_bps"],
            "sink_completion_s": r["completion_s"],
            "retransmissions": c.get("tcp_retransmissions"),
            "data_attempts": mac.get("data_tx"),
            "mac_retries": mac.get("data_retry_tx"),
            "drops_retry_limit": mac.get("drop_retry"),
            "drops_queue": mac.get("drop_queue"),
            "acks_sent": mac.get("ack_tx"),
            "collisions": None,
            "collision_periods": c.get("collisions"),
            "overlapped_frames": mac.get("overlapped_tx"),
            "busy_s": c.get("busy_s"),
        })
    return rows


def time_ours(tcpenergy, path: Path, seeds: list[int], warmup: int) -> list[dict]:
    """Load the scenario once, `warmup` untimed runs, then one timed `tcpenergy.run` per seed."""
    scenario = prepare(tcpenergy, path)
    for w in range(warmup):
        tcpenergy.run(scenario, seed=10_000 + w)
    rows = []
    for seed in seeds:
        t0 = time.perf_counter()
        rec = tcpenergy.run(scenario, seed=seed)
        wall = time.perf_counter() - t0
        flow = rec["flow"]
        channel = next(iter((rec.get("channels") or {}).values()), {})
        busy = channel.get("busy_fraction")
        rows.append({
            "seed": seed,
            "wall_s": wall,
            "events": int(rec["events"]),
            "complete": bool(rec.get("complete", True)),
            "goodput_bps": flow.get("goodput_bps"),
            "completion_s": flow.get("completion_s"),
            "sink_goodput_bps": None,
            "sink_completion_s": None,
            "retransmissions": flow.get("retransmissions"),
            "data_attempts": channel.get("data_attempts", channel.get("attempts")),
            "mac_retries": channel.get("retries"),
            "drops_retry_limit": channel.get("drops_retry_limit"),
            "drops_queue": channel.get("drops_queue"),
            "acks_sent": channel.get("acks_sent"),
            "collisions": channel.get("collisions"),
            "collision_periods": None,
            "overlapped_frames": None,
            # busy_fraction is over the whole run (sim_time_s), which ends at completion here.
            "busy_s": busy * rec["sim_time_s"] if busy is not None else None,
        })
    return rows


# ---------------------------------------------------------------------------------------------
# summaries


COMPARED = [  # (row key, label, scale for display)
    ("goodput_bps", "goodput Mb/s (ACK of last byte at sender)", 1e-6),
    ("sink_goodput_bps", "goodput Mb/s (last byte at sink)", 1e-6),
    ("completion_s", "completion s (ACK of last byte at sender)", 1.0),
    ("sink_completion_s", "completion s (last byte at sink)", 1.0),
    ("retransmissions", "TCP retransmissions", 1.0),
    ("data_attempts", "MAC data frames sent (all stations)", 1.0),
    ("mac_retries", "MAC retries (data frames resent)", 1.0),
    ("drops_retry_limit", "MAC drops at the retry limit", 1.0),
    ("drops_queue", "interface queue drops", 1.0),
    ("acks_sent", "MAC ACK frames", 1.0),
    ("collisions", "collisions: data frames garbled at their addressee", 1.0),
    ("collision_periods", "collisions: busy periods with overlapping frames", 1.0),
    ("overlapped_frames", "frames that overlapped another on the air", 1.0),
    ("busy_s", "channel airtime s (union of transmissions)", 1.0),
]


def spread(values: list) -> dict | None:
    """Mean, standard deviation (n - 1) and range over seeds; None when the side lacks the key."""
    xs = [float(v) for v in values if v is not None]
    if not xs or len(xs) != len(values):
        return None
    return {"mean": statistics.fmean(xs), "sd": statistics.stdev(xs) if len(xs) > 1 else 0.0,
            "min": min(xs), "max": max(xs)}


def summarize(rows: list[dict]) -> dict:
    walls = [r["wall_s"] for r in rows]
    return {
        "runs": len(rows),
        "median_wall_s": statistics.median(walls),
        "median_events": statistics.median(r["events"] for r in rows),
        "events_per_s": sum(r["events"] for r in rows) / sum(walls),
        "incomplete": sum(not r["complete"] for r in rows),
        **{key: spread([r[key] for r in rows]) for key, _, _ in COMPARED},
    }


def _num(x: float) -> str:
    return f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.4g}"


def _cell(s: dict | None, scale: float) -> str:
    if s is None:
        return "-"
    if s["min"] == s["max"]:
        return _num(s["mean"] * scale)
    return (f"{_num(s['mean'] * scale)} ± {s['sd'] * scale:.2g} "
            f"[{_num(s['min'] * scale)}, {_num(s['max'] * scale)}]")


def print_comparison(ns3_sum: dict, ours_sum: dict | None) -> None:
    table = []
    for key, label, scale in COMPARED:
        theirs, ours = ns3_sum.get(key), (ours_sum or {}).get(key)
        if theirs is None and ours is None:
            continue
        ratio = (ours["mean"] / theirs["mean"] if ours and theirs and theirs["mean"] else None)
        table.append([label, _cell(theirs, scale), _cell(ours, scale) if ours_sum else "-",
                      f"{ratio:.3f}" if ratio is not None else "-"])
    print_table(["per run (mean ± sd [min, max] over seeds)", "ns-3 3.44",
                 "tcpenergy", "tcpenergy / ns-3"], table)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=5, help="timed runs on each side (default 5)")
    ap.add_argument("--warmup", type=int, default=1, help="untimed runs on each side first")
    ap.add_argument("--scenario", default=str(SCENARIO))
    ap.add_argument("--venv", default=str(HERE / ".ns3-venv"), help="venv for the ns-3 wheel")
    ap.add_argument("--propagation", default="fixed-rss", choices=["fixed-rss", "log-distance"],
                    help="ns-3 loss model (see ns3_wifi_chain.py; fixed-rss: no capture, as "
                         "tcpenergy)")
    ap.add_argument("--no-counters", action="store_true",
                    help="skip ns-3's untimed counter runs (halves its time; no MAC/TCP counters)")
    ap.add_argument("--ns3-only", action="store_true", help="skip the tcpenergy side")
    ap.add_argument("--json", metavar="PATH", help="also write both reports as JSON")
    args = ap.parse_args(argv)
    if args.seeds < 1:
        ap.error("--seeds: must be at least 1")

    path = Path(args.scenario)
    try:
        scenario = load_scenario(path)
    except (OSError, ValueError) as exc:
        print(f"error: cannot read {path}: {exc}", file=sys.stderr)
        return 2
    seeds = list(range(1, args.seeds + 1))
    print(f"802.11 chain: {path.name}, {args.seeds} seeds, {args.warmup} warm-up run(s)")
    print(f"machine: {machine_line()}")

    try:
        python = ensure_ns3(Path(args.venv))
        ns3 = run_ns3(python, scenario, args)
    except Ns3Unavailable as exc:
        print(f"error: ns-3 unavailable: {exc}", file=sys.stderr)
        return 1
    built = ns3["built"]
    print(f"ns-3 world: ACK TXVECTOR {sorted(set(built['ack_txvector'].values()))}, data "
          f"{built['data_mode']}, basic set {built['basic_modes']}, MAC {built['mac']}")
    ns3_rows_ = ns3_rows(ns3)
    ns3_sum = summarize(ns3_rows_)
    identical = [r.get("counter_run_identical") for r in ns3["runs"] if "counters" in r]
    if not all(identical):
        print("warning: an ns-3 counter run differed from its timed run (same RngRun); its "
              "counters describe a different run", file=sys.stderr)
    for r in ns3["runs"]:
        modes = (r.get("counters") or {}).get("frames_by_mode")
        if modes:
            print(f"ns-3 RngRun {r['run']} frames: {modes}")

    ours_rows, ours_sum, version, failure = None, None, None, None
    if not args.ns3_only:
        tcpenergy = import_tcpenergy()
        version = getattr(tcpenergy, "__version__", "?")
        print(f"running tcpenergy {version}: {args.seeds} seeds", flush=True)
        try:
            ours_rows = time_ours(tcpenergy, path, seeds, args.warmup)
        except tcpenergy.TcpEnergyError as exc:
            failure = f"tcpenergy cannot run {path.name}: {exc}"
        else:
            ours_sum = summarize(ours_rows)
            if ours_sum["incomplete"]:
                failure = (f"tcpenergy did not deliver all the bytes in "
                           f"{ours_sum['incomplete']} of {args.seeds} runs; its timings would "
                           "not be comparable")

    print()
    speed = [["ns-3 3.44 (PyPI)", ns3_sum]]
    if ours_sum:
        speed.append([f"tcpenergy {version}", ours_sum])
    print_table(["simulator", "median s/run", "events/run", "k events/s"],
                [[name, s["median_wall_s"], int(s["median_events"]), s["events_per_s"] / 1e3]
                 for name, s in speed])
    print("(ns-3: Simulator::Run() alone; events: Simulator::GetEventCount(), cancelled timers "
          "included. tcpenergy: tcpenergy.run(...) alone, scenario loaded beforehand)\n")
    print_comparison(ns3_sum, ours_sum)
    if not args.no_counters:
        print("(ns-3 counters from an untimed rerun of each seed; MAC retries: data frames sent "
              "with the Retry bit; airtime: tcpenergy busy_fraction x sim_time_s)")
    ratio = None
    if ours_sum:
        ratio = ns3_sum["median_wall_s"] / ours_sum["median_wall_s"]
        print(f"\nns-3 / tcpenergy, median wall time per run: {ratio:.1f}x "
              f"(target >= {TARGET_RATIO}x)")
    if failure:
        print(f"error: {failure}", file=sys.stderr)
        return 1
    if args.json:
        Path(args.json).write_text(json.dumps(
            {"benchmark": "vs_ns3_wifi", "machine": machine(), "scenario": str(path),
             "seeds": args.seeds, "propagation": args.propagation, "ns3": ns3,
             "ns3_rows": ns3_rows_, "ns3_summary": ns3_sum, "tcpenergy": ours_rows,
             "tcpenergy_summary": ours_sum, "tcpenergy_version": version,
             "ratio_ns3_over_ours": ratio}, indent=1) + "\n")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
