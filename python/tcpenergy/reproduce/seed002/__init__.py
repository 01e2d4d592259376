"""Seed 002 (TCP-SACK vs TCP-ECN-ELFN, energy over a 4-node ad hoc chain with Dummynet).

The experiments (seed 002 Tables 2-3) as sweeps over one results store; every S002 claim judged
from the stored runs (claims.py); a report with per-condition tables in the style of the
paper's Tables 4, 6 and 7 and Table 5's transmission and timeout counts next to the paper's.

Modelling choices (docs/reproduce/seed-002.md):

* RTT ranges: each packet's RTT uniform in [low, high] and FIFO. Both one-way delays are low/2
  (the sweep's ``rtt`` axis set to ``low``) and the forward direction carries a jitter impairment
  {min = 0, max = high - low, keep_order = true}. A sweep cannot couple two keys, so there is one
  sweep per condition and RTT range; the range is recovered from the sweep name.
* Two networks (``network``): ``testbed``, the measured 4-node 802.11b chain with Dummynet at node
  c (scenarios/singh2002-testbed.toml): the RTT range's low end is the delay of the pipe c -> d,
  which also holds the jitter and the condition's impairments, and a pipe c -> b holds those that
  hit ACKs too; or ``path``, the 2 Mbit/s abstraction of seed 000 (scenarios/seed002-*.toml). The
  congestion condition needs RED with ECN marking at router B, which the 802.11 MAC's drop-tail
  queue does not have, so it runs on the path on both networks.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import AbstractSet, Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from tcpenergy.reproduce import common, networks, readings
from tcpenergy.reproduce.claims import paper_file
from tcpenergy.reproduce.common import FREEBSD43, Experiment, Outcome, Transform, random_phase, table_section
from tcpenergy.reproduce.networks import PATH, TESTBED
from tcpenergy.reproduce.registry import Paper

PAPER_ID = "seed-002"
TITLE = "Reproduction of seed 002: energy of TCP-SACK and TCP-ECN-ELFN over a 4-node ad hoc chain"

PAPER = Paper(
    id=PAPER_ID,
    description="energy of TCP-SACK vs TCP-ECN-ELFN over a 4-node ad hoc chain",
    # The paper's author names are lost in the project's copy.
    citation='seed 002, "energy cost and goodput of TCP-SACK and TCP-ECN-ELFN in ad hoc networks"',
    networks=True,
)
CLAIMS = paper_file(__name__, "claims.yaml")  # each claim's text and its source in the paper
RULES = paper_file(__name__, "rules.yaml")  # the rules judging them (docs/reproduce/rules.md)

VARIANTS = ("sack", "ecn-elfn")
VARIANT_NAMES = {"sack": "TCP-SACK", "ecn-elfn": "TCP-ECN-ELFN"}
RTT_RANGES: Tuple[Tuple[int, int], ...] = ((10, 20), (30, 50), (60, 80), (90, 110), (120, 140))  # Table 2, ms
CONGESTION_RTT_RANGES: Tuple[Tuple[int, int], ...] = ((10, 20), (120, 140))  # Table 3: average 15 and 130 ms
MTUS = (512, 1500)
LOSS_RATES = (0.01, 0.05, 0.10)
REORDER_FRACTIONS = (0.01, 0.05)
FULL_REPETITIONS = 10  # seed 002: at least 10 runs per point, 95 % confidence intervals
QUICK_REPETITIONS = 3
LEVEL = 0.95
DEVICE = "singh2002-toshiba-wavelan"  # the same Toshiba laptops and WaveLAN cards as seed 000

# Forward impairment 0 is always the RTT jitter; the condition's own impairments follow. Path-form
# names (on the testbed networks.testbed_key gives the pipes' keys; networks.logical_columns maps back).
JITTER_MAX_KEY = "path.forward.impairments.0.max"
LOSS_KEY = "path.forward.impairments.1.p"
REORDER_KEYS = ("path.forward.impairments.1.fraction", "path.reverse.impairments.0.fraction")

# Condition names (the middle of the sweep names, s002-<condition>-rtt<low>-<high>).
ROUTE = "route-failure"
REORDER = "reordering"  # + "-1pct" / "-5pct"
RANDOM = "random-loss"
BURSTY = "bursty-loss"
CONGESTION = "congestion"
CONDITION_ORDER = (ROUTE, REORDER + "-1pct", REORDER + "-5pct", RANDOM, BURSTY, CONGESTION)

_SWEEP_NAME = re.compile(r"^s002-(?P<condition>[a-z0-9-]+?)-rtt(?P<low>\d+)-(?P<high>\d+)$")

# The paper's Table 5 (total transmissions and, in parentheses, timeouts, averaged over RTTs; loss case).
PAPER_TABLE5: Dict[Tuple[str, int, float], Tuple[float, float]] = {
    ("sack", 512, 0.01): (11004, 0.51), ("ecn-elfn", 512, 0.01): (11661, 0.52),
    ("sack", 512, 0.10): (11538, 104), ("ecn-elfn", 512, 0.10): (14150, 6.48),
    ("sack", 1500, 0.01): (3642, 0.64), ("ecn-elfn", 1500, 0.01): (4067, 0.16),
    ("sack", 1500, 0.10): (4111, 340), ("ecn-elfn", 1500, 0.10): (5551, 40),
}


def sweep_name(condition: str, rtt_range: Tuple[int, int]) -> str:
    return f"s002-{condition}-rtt{rtt_range[0]}-{rtt_range[1]}"


def parse_sweep_name(name: str) -> Optional[Tuple[str, Tuple[int, int]]]:
    """(condition, (low, high)) of a seed-002 sweep name, or None."""
    m = _SWEEP_NAME.match(str(name))
    if not m:
        return None
    return m["condition"], (int(m["low"]), int(m["high"]))


def range_label(rtt_range: Tuple[int, int]) -> str:
    return f"{rtt_range[0]}-{rtt_range[1]} ms"


# --------------------------------------------------------------------------------------------
# Base scenarios (scenarios/seed002-*.toml, built in code; the wheel does not ship scenarios/)
# --------------------------------------------------------------------------------------------

def jitter(rtt_range: Tuple[int, int]) -> Dict[str, Any]:
    low, high = rtt_range
    return {"kind": "jitter", "min": "0ms", "max": f"{high - low}ms", "keep_order": True}


# Route failures: the 6 h cap (see route_failure_base).
ROUTE_STOP_AFTER = "6h"


def _direction(impairments: Sequence[Mapping[str, Any]], queue: int = 100) -> Dict[str, Any]:
    return {"rate": "2Mbps", "delay": "20ms", "queue": queue, "impairments": [dict(i) for i in impairments]}


def _scenario(name: str, forward: Sequence[Mapping[str, Any]], reverse: Sequence[Mapping[str, Any]],
              rtt_range: Tuple[int, int], *, tcp: Optional[Mapping[str, Any]] = None,
              forward_extra: Optional[Mapping[str, Any]] = None, queue: int = 100) -> Dict[str, Any]:
    fwd = _direction([jitter(rtt_range), *forward], queue)
    fwd.update(dict(forward_extra or {}))
    return {
        "name": name,
        "seed": 1,
        "path": {"mtu": 1500, "forward": fwd, "reverse": _direction(reverse)},
        "tcp": {"variant": "ecn-elfn", **FREEBSD43, **dict(tcp or {})},
        "traffic": {"kind": "bulk", "bytes": "5MB"},
        "energy": {"sender": DEVICE, "receiver": DEVICE, "radio_policy": "always_on"},
    }


def route_failure_base(rtt_range: Tuple[int, int]) -> Dict[str, Any]:
    """Route down 5 s every 15 s in both directions at once (notify on the forward one), at a random
    phase per run, plus random loss."""
    outage = random_phase({"kind": "outage", "down": "5s", "every": "15s"}, "route")
    notified = dict(outage, notify={"delay": "10ms", "restore": True})
    scenario = _scenario("seed002-route-failure", [{"kind": "bernoulli", "p": 0.01}, notified], [outage], rtt_range,
                         tcp={"elfn_probe_interval": "1s"})
    # TCP-SACK at MTU 512 and 10 % loss with the route down a third of the time progresses
    # steadily (about 1 MB per 20 min at RTT 120-140 ms; hundreds of timeouts) and needs up to
    # about 2.3 h for 5 MB; ttcp ran each transfer to its end, so the run may too. The 1 h
    # default cap would cut these runs short; a run that stops progressing still ends here.
    scenario["stop_after"] = ROUTE_STOP_AFTER
    return scenario


def reordering_base(rtt_range: Tuple[int, int], fraction: float) -> Dict[str, Any]:
    """A fraction of data and ACK packets held back 20 ms (as scenarios/singh2002-reordering.toml)."""
    reorder = {"kind": "reorder", "fraction": fraction, "extra_delay": "20ms"}
    return _scenario("seed002-reordering", [reorder], [reorder], rtt_range)


def random_loss_base(rtt_range: Tuple[int, int]) -> Dict[str, Any]:
    return _scenario("seed002-random-loss", [{"kind": "bernoulli", "p": 0.01}], [], rtt_range)


def bursty_loss_base(rtt_range: Tuple[int, int]) -> Dict[str, Any]:
    """85 % loss for 1 s every 12 s, both directions at once at a random phase, nothing else (as
    seed 000's bursty case)."""
    burst = random_phase({"kind": "periodic_burst", "p": 0.85, "on": "1s", "every": "12s"}, "burst")
    return _scenario("seed002-bursty-loss", [burst], [burst], rtt_range)


def congestion_base(rtt_range: Tuple[int, int]) -> Dict[str, Any]:
    """Router B congested 5 s every 30 s by cross traffic, RED with ECN marking (scenarios/seed002-congestion.toml)."""
    extra = {"red": {"min_th": 15, "max_th": 45, "max_p": 0.1, "weight": 0.002, "ecn": True},
             "cross_traffic": {"rate": "1.8Mbps", "on": "5s", "every": "30s", "offset": "5s"}}
    return _scenario("seed002-congestion", [{"kind": "bernoulli", "p": 0.01}], [], rtt_range,
                     tcp={"receive_buffer": "16KB"}, forward_extra=extra, queue=60)


def _testbed(name: str, forward: Sequence[Mapping[str, Any]], reverse: Sequence[Mapping[str, Any]],
             rtt_range: Tuple[int, int], *, tcp: Optional[Mapping[str, Any]] = None,
             stop_after: Optional[str] = None) -> Dict[str, Any]:
    """A seed-002 scenario on the testbed chain: the pipe c -> d holds the range's low end as its
    delay (the whole RTT: the pipe c -> b has none) and the jitter, then the condition's impairments;
    the tcp section as ``_scenario``'s."""
    return networks.testbed_scenario(name, [jitter(rtt_range), *forward], reverse, delay=f"{rtt_range[0]}ms",
                                   device=DEVICE, stop_after=stop_after,
                                   tcp={"variant": "ecn-elfn", **FREEBSD43, **dict(tcp or {})})


def testbed_route_failure_base(rtt_range: Tuple[int, int]) -> Dict[str, Any]:
    """Route failure on the chain: Dummynet at c cuts both pipes at once (notifying the sender from
    the data direction), plus random loss on c -> d."""
    outage = random_phase({"kind": "outage", "down": "5s", "every": "15s"}, "route")
    notified = dict(outage, notify={"delay": "10ms", "restore": True})
    return _testbed("seed002-testbed-route-failure", [{"kind": "bernoulli", "p": 0.01}, notified], [outage],
                    rtt_range, tcp={"elfn_probe_interval": "1s"}, stop_after=ROUTE_STOP_AFTER)


def testbed_reordering_base(rtt_range: Tuple[int, int], fraction: float) -> Dict[str, Any]:
    reorder = {"kind": "reorder", "fraction": fraction, "extra_delay": "20ms"}
    return _testbed("seed002-testbed-reordering", [reorder], [reorder], rtt_range)


def testbed_random_loss_base(rtt_range: Tuple[int, int]) -> Dict[str, Any]:
    return _testbed("seed002-testbed-random-loss", [{"kind": "bernoulli", "p": 0.01}], [], rtt_range)


def testbed_bursty_loss_base(rtt_range: Tuple[int, int]) -> Dict[str, Any]:
    burst = random_phase({"kind": "periodic_burst", "p": 0.85, "on": "1s", "every": "12s"}, "burst")
    return _testbed("seed002-testbed-bursty-loss", [burst], [burst], rtt_range)


def congestion_trace(seed: int = 1):
    """The sender's traced cwnd in seed 002's Fig 8 setting (congestion, MTU 1500, 1 % loss, RTT
    10-20 ms, ECN-ELFN): the record and the trace frame, for the cwnd check of S002-C60."""
    from tcpenergy import api

    low = CONGESTION_RTT_RANGES[0][0]
    scenario = congestion_base(CONGESTION_RTT_RANGES[0])
    for direction in ("forward", "reverse"):
        scenario["path"][direction]["delay"] = f"{low / 2}ms"
    scenario["path"]["mtu"] = 1500
    return api.run_traced(scenario, seed=seed, **{"tcp.variant": "ecn-elfn", LOSS_KEY: 0.01})


# --------------------------------------------------------------------------------------------
# Sweeps
# --------------------------------------------------------------------------------------------

def repetitions(quick: bool) -> int:
    return QUICK_REPETITIONS if quick else FULL_REPETITIONS


def experiments(quick: bool = False, network: str = PATH) -> List[Experiment]:
    """Every sweep: one per network condition (Table 3) and RTT range (Table 2), on ``network``
    (congestion on the path either way: it needs RED/ECN at router B)."""
    networks.check_network(network)
    exps = _path_experiments(quick)
    if network == PATH:
        return exps
    out = []
    for exp in exps:
        condition, rtt_range = parse_sweep_name(exp.name)
        if condition == CONGESTION:
            out.append(dataclasses.replace(exp, description=exp.description + " (path: RED/ECN needs router B's "
                                                                              "queue)"))
            continue
        if condition == ROUTE:
            base = testbed_route_failure_base(rtt_range)
        elif condition.startswith(REORDER):
            base = testbed_reordering_base(rtt_range, exp.fixed[REORDER_KEYS[0]])
        elif condition == RANDOM:
            base = testbed_random_loss_base(rtt_range)
        else:
            base = testbed_bursty_loss_base(rtt_range)
        out.append(networks.testbed_experiment(exp, base, exp.description + " (testbed chain)"))
    return out


def _path_experiments(quick: bool) -> List[Experiment]:
    reps = repetitions(quick)
    variants, mtus, losses = list(VARIANTS), list(MTUS), list(LOSS_RATES)
    out: List[Experiment] = []

    def axes(rtt_range, **more):
        return {"tcp.variant": variants, "path.mtu": mtus, **more, "rtt": [f"{rtt_range[0]}ms"]}

    for r in RTT_RANGES:
        out.append(Experiment(sweep_name(ROUTE, r), f"Route failure 5 s every 15 s + random loss, RTT {range_label(r)}",
                              route_failure_base(r), axes(r, **{LOSS_KEY: losses}), reps))
    for fraction in REORDER_FRACTIONS:
        cond = f"{REORDER}-{round(fraction * 100)}pct"
        for r in RTT_RANGES:
            out.append(Experiment(sweep_name(cond, r),
                                  f"{fraction:.0%} of data and ACKs reordered, RTT {range_label(r)}",
                                  reordering_base(r, fraction), axes(r), reps,
                                  fixed={key: fraction for key in REORDER_KEYS}))
    for r in RTT_RANGES:
        out.append(Experiment(sweep_name(RANDOM, r), f"Random loss, RTT {range_label(r)}",
                              random_loss_base(r), axes(r, **{LOSS_KEY: losses}), reps))
    for r in RTT_RANGES:
        out.append(Experiment(sweep_name(BURSTY, r), f"Bursty loss 85 % for 1 s every 12 s, RTT {range_label(r)}",
                              bursty_loss_base(r), axes(r), reps))
    for r in CONGESTION_RTT_RANGES:
        out.append(Experiment(sweep_name(CONGESTION, r),
                              f"Congestion 5 s every 30 s (RED/ECN, cross traffic) + random loss, RTT {range_label(r)}",
                              congestion_base(r), axes(r, **{LOSS_KEY: losses}), reps))
    return out


def write_experiment(exp: Experiment, directory: Path) -> Path:
    """Write ``<name>.base.toml`` and ``<name>.sweep.toml``; returns the sweep file."""
    return common.write_experiment(exp, directory, PAPER_ID)


# --------------------------------------------------------------------------------------------
# Frame helpers
# --------------------------------------------------------------------------------------------

CONDITION = "label.condition"
RANGE = "label.rtt_range"
LOSS = "label.loss"


def annotate(runs):
    """Add the condition, RTT range ('10-20 ms') and loss-rate (or None) columns, in paper order."""
    frame = runs.copy()
    parsed = [parse_sweep_name(s) for s in frame["sweep"]]
    frame = frame[[p is not None for p in parsed]].copy()
    parsed = [p for p in parsed if p is not None]
    frame[CONDITION] = [p[0] for p in parsed]
    frame[RANGE] = [range_label(p[1]) for p in parsed]
    frame["_low"] = [p[1][0] for p in parsed]
    if LOSS_KEY in frame.columns:
        frame[LOSS] = [float(v) if c in (ROUTE, RANDOM, CONGESTION) else None
                       for c, v in zip(frame[CONDITION], frame[LOSS_KEY])]
    else:
        frame[LOSS] = None
    frame["_order"] = frame[CONDITION].map({c: i for i, c in enumerate(CONDITION_ORDER)})
    frame = frame.sort_values(["_order", "path.mtu", LOSS, "_low"], kind="stable", na_position="first")
    return frame.drop(columns=["_order", "_low"]).reset_index(drop=True)


def _mean_ci(values, level: float = LEVEL) -> Tuple[float, float, float, int]:
    """Mean, interval bounds and n of ``values``: Student-t where it stays non-negative, else the
    project's non-negative interval (``experiments.stats.interval``); every metric here is a count,
    a rate or an energy."""
    import math

    from tcpenergy.experiments.stats import interval

    xs = [float(v) for v in values if v is not None and v == v]
    n = len(xs)
    if n == 0:
        return math.nan, math.nan, math.nan, 0
    _, [(low, high)] = interval(xs, (level,), non_negative=True)
    return sum(xs) / n, low, high, n


def over_rtt(frame, column: str):
    """Per (condition, MTU, loss, variant): per seed, the mean over the RTT ranges; then mean and CI
    over seeds (the replicates). Returns {(condition, mtu, loss, variant): (mean, low, high, n)}."""
    out = {}
    keys = [CONDITION, "path.mtu", LOSS, "tcp.variant"]
    f = frame.copy()
    f[LOSS] = f[LOSS].astype(object).where(f[LOSS].notna(), None)
    for key, part in f.groupby(keys, dropna=False, sort=False):
        per_seed = part.groupby("seed")[column].mean()
        loss = key[2] if key[2] is not None and key[2] == key[2] else None
        out[(key[0], int(key[1]), loss, key[3])] = _mean_ci(per_seed.tolist())
    return out


def _fmt(mean: float, low: float, high: float, digits: int = 3) -> str:
    if mean != mean:
        return "n/a"
    if low != low:
        return f"{mean:.{digits}g}"
    return f"{mean:.{digits}g} [{low:.{digits}g}, {high:.{digits}g}]"


# --------------------------------------------------------------------------------------------
# Report sections
# --------------------------------------------------------------------------------------------

METRIC_COLUMNS = (("E_I", "energy.sender.per_bit_idealized_uj", False),
                  ("E_A", "energy.sender.per_bit_total_uj", False),
                  ("tau", "flow.goodput_bps", True))


def _condition_text(condition: str, mtu: int, loss: Optional[float]) -> str:
    names = {ROUTE: "route failure", REORDER + "-1pct": "reordering 1 %", REORDER + "-5pct": "reordering 5 %",
             RANDOM: "random loss", BURSTY: "bursty loss", CONGESTION: "congestion"}
    text = names.get(condition, condition)
    if loss is not None:
        text += f" + {loss * 100:g} % loss"
    return f"{text} · MTU {mtu}"


def summary_section(frame):
    """Tables 4, 6 and 7 style: per condition x MTU (x loss), which variant is better on E_I, E_A and
    goodput (mean over the RTT ranges, 95 % CI; '≈' when the intervals overlap)."""
    stats = {m: over_rtt(frame, col) for m, col, _ in METRIC_COLUMNS}
    cells = sorted({k[:3] for k in stats["E_A"]},
                   key=lambda k: (CONDITION_ORDER.index(k[0]) if k[0] in CONDITION_ORDER else 99, k[1],
                                  -1 if k[2] is None else k[2]))
    rows = []
    for cond, mtu, loss in cells:
        row = [_condition_text(cond, mtu, loss)]
        for metric, _, higher in METRIC_COLUMNS:
            s = stats[metric].get((cond, mtu, loss, "sack"))
            e = stats[metric].get((cond, mtu, loss, "ecn-elfn"))
            if s is None or e is None:
                row += ["n/a", "n/a", "n/a"]
                continue
            scale = 1e-3 if metric == "tau" else 1.0
            row += [_fmt(*(v * scale for v in s[:3])), _fmt(*(v * scale for v in e[:3])),
                    better(s, e, higher)]
        rows.append(row)
    header = ["condition"]
    for metric, _, _ in METRIC_COLUMNS:
        unit = "kbit/s" if metric == "tau" else "µJ/bit"
        header += [f"{metric} SACK ({unit})", f"{metric} ECN-ELFN ({unit})", f"{metric} better"]
    intro = ("The paper's Tables 4, 6 and 7 as measured here: per condition, each variant's mean over the "
             "RTT ranges (per seed, averaged over the ranges; 95 % Student-t interval over seeds). "
             "'better' names the variant with the lower energy or higher goodput; '≈' when the "
             "intervals overlap.")
    return table_section(header, rows, intro, "Tables 4, 6, 7: SACK vs ECN-ELFN per condition")


def better(sack: Tuple[float, float, float, int], ecn: Tuple[float, float, float, int],
           higher_is_better: bool) -> str:
    (ms, ls, hs, _), (me, le, he, _) = sack, ecn
    if ms != ms or me != me:
        return "n/a"
    # No interval (one replicate): the mean stands alone.
    ls, hs = (ms, ms) if ls != ls else (ls, hs)
    le, he = (me, me) if le != le else (le, he)
    if ls <= he and le <= hs:
        return "≈"
    ecn_better = (me > ms) if higher_is_better else (me < ms)
    return "ECN-ELFN" if ecn_better else "SACK"


def table5_rows(frame) -> List[List[Any]]:
    """Table 5: total transmissions (timeouts) per variant x MTU x loss 1 %/10 %, ours next to the paper's."""
    loss_frame = frame[frame[CONDITION] == RANDOM]
    tx = over_rtt(loss_frame, "flow.segments_sent")
    to = over_rtt(loss_frame, "flow.timeouts")
    rows = []
    for variant in VARIANTS:
        row: List[Any] = [VARIANT_NAMES[variant]]
        for mtu in MTUS:
            for loss in (0.01, 0.10):
                paper = PAPER_TABLE5[(variant, mtu, loss)]
                ours_tx, ours_to = tx.get((RANDOM, mtu, loss, variant)), to.get((RANDOM, mtu, loss, variant))
                ours = "n/a" if ours_tx is None else f"{ours_tx[0]:.0f} ({ours_to[0]:.2f})"
                row.append(f"{ours} | paper {paper[0]:g} ({paper[1]:g})")
        rows.append(row)
    return rows


def table5_section(frame):
    header = ["variant"] + [f"MTU {m}, {int(p * 100)} % loss" for m in MTUS for p in (0.01, 0.10)]
    intro = ("Table 5: total transmissions (flow.segments_sent; timeouts in parentheses), random-loss case, "
             "averaged over the five RTT ranges, ours next to the paper's tcpdump/netstat counts.")
    return table_section(header, table5_rows(frame), intro, "Table 5: transmissions and timeouts")


def network_text(network: str) -> str:
    """How the paper's chain and its RTT ranges are run, in words (report and docs)."""
    if network == TESTBED:
        return ("Network: the testbed chain (--network testbed): four 802.11b stations in one collision domain "
                "(11 Mbit/s data, 2 Mbit/s control frames, RTS/CTS off), static routes a -> b -> c -> d, and "
                "Dummynet at node c. Each packet's RTT is uniform in the range: the pipe c -> d delays every "
                "data packet by the range's low end and adds a FIFO jitter of 0 to (high - low); the chain "
                "adds its own few milliseconds. Conditions that hit ACKs too (route failure, reordering, bursty "
                "loss) also act in a pipe c -> b. Congestion runs on the path: it needs RED with ECN marking at "
                "router B, and the 802.11 MAC's queue is drop-tail.")
    return ("Network: the path abstraction (--network path), a 2 Mbit/s end-to-end link. Each packet's RTT is "
            "uniform in the range: both one-way delays are the range's low end / 2 and the forward direction "
            "adds a FIFO jitter of 0 to (high - low). Every run is the paper's RTS/CTS-off case.")


def setup_section(exps: Sequence[Experiment], runs, quick: bool, network: str = PATH):
    rows = []
    for exp in exps:
        n = int((runs["sweep"] == exp.name).sum()) if len(runs) else 0
        rows.append([exp.name, exp.description, exp.cells(), len(exp.seed_list()), n,
                     f"sweeps/{exp.name}.sweep.toml"])
    intro = ("What was run: one sweep per network condition (seed 002 Table 3) and RTT range (Table 2). "
             + network_text(network) + " docs/reproduce/seed-002.md explains every modelling choice."
             + (f" Quick mode: {QUICK_REPETITIONS} seeds per setting instead of {FULL_REPETITIONS}." if quick else ""))
    return table_section(["sweep", "what", "settings", "seeds", "runs stored", "file"], rows, intro, "Experiments")


def write_report(runs, out_dir: Path, exps: Sequence[Experiment], quick: bool = False,
                 extra: Sequence[Any] = (), summary: Optional[Any] = None, network: str = PATH) -> List[Path]:
    from tcpenergy.report import write_report as _write_report
    from tcpenergy.report.layout import Layout

    frame = annotate(runs)
    sections = [setup_section(exps, runs, quick, network), *extra, summary_section(frame), table5_section(frame)]
    plot = frame.copy()
    plot[CONDITION] = [_condition_text(c, int(m), None if l is None or l != l else float(l))
                       for c, m, l in zip(plot[CONDITION], plot["path.mtu"], plot[LOSS])]
    keep = [c for c in plot.columns if not c.startswith("label.")
            or c in (CONDITION, RANGE, "label.tcp.variant")]
    plot = plot[keep]
    layout = Layout(x=RANGE, line="label.tcp.variant", panels=(CONDITION,))
    paths = _write_report(plot, Path(out_dir) / "report", title=TITLE, level=LEVEL, layout=layout, all_runs=len(runs),
                          summary_sections=[summary] if summary is not None else (), extra_sections=sections)
    return [paths.html, paths.markdown, *paths.figures, *paths.tables]


# --------------------------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------------------------

def run(out_dir: Path, quick: bool = False, jobs: Optional[int] = None, progress: bool = True,
        log: Callable[[str], None] = print, *, transform: Optional[Transform] = None,
        keep: Optional[AbstractSet[str]] = None, report: bool = True, network: Optional[str] = None) -> Outcome:
    """Run (or resume) every sweep into OUT/runs.duckdb, judge the claims, write the report.

    ``network``: ``testbed`` or ``path`` (None: the one OUT's reproduction ran on, else
    ``networks.DEFAULT_NETWORK``, the testbed). ``transform``: applied to each experiment before it
    runs (None: run them as defined); ``keep``: the sweeps to run (None: all); ``report=False``:
    judge the claims without writing the report."""
    from tcpenergy.reproduce.seed002 import claims as seed002_claims

    network = networks.choose_network(network, out_dir)

    def report_files(runs, results, out, exps, quick: bool):
        return write_claims_report(runs, results, out, exps, quick=quick, network=network)

    process = readings.in_force(__name__, "loss-process")  # readings.yaml
    exps = [networks.with_loss_process(exp, process) for exp in experiments(quick, network)]
    return common.run_and_judge(PAPER_ID, exps, out_dir, quick=quick, jobs=jobs,
                                progress=progress, log=log, transform=transform, keep=keep, report=report,
                                evaluate=seed002_claims.evaluate, claims=CLAIMS, write_report=report_files,
                                prepare=lambda out: networks.record_network(out, network),
                                view=networks.logical_columns)


def write_claims_report(runs, results: Sequence[Mapping[str, Any]], out_dir: Path, exps: Sequence[Experiment],
                        quick: bool = False, network: str = PATH) -> List[Path]:
    """The report with the claims: their summary first, the checklist after the experiments."""
    from tcpenergy.reproduce import claims as claims_mod

    intro = (f"Every claim of {PAPER.citation} that the project lists (text and source shipped "
             "with the package), judged from the complete runs by an explicit rule (stated in each evidence "
             "text and in docs/reproduce/seed-002.md): relations compare each variant's mean over the RTT ranges "
             "within a cell; the paper reports statistically significant results with 95 % intervals, so '<' "
             "needs disjoint 95 % intervals. 'consistency': holds, but could not fail in the model (not counted "
             "as reproduced). The same list is in claims.json.")
    return write_report(runs, out_dir, exps, quick=quick, extra=[claims_mod.checklist_section(results, intro)],
                        summary=claims_mod.summary_section(results), network=network)
