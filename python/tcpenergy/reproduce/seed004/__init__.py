"""Seed 004 (Mamatas & Tsaoussidis, "Exploiting Energy-Saving Potential in Heterogeneous Networks"):
TCP(alpha, beta) protocols judged by effort, goodput, EEE, EP, UAR, fairness and the Risk Index.

Four groups of experiments, each a set of sweeps over the TCP variant:

* §5.1 calibration, one flow between two nodes for 600 s: NewReno TCP(1, 0.5), the aggressive
  TCP(1.2, 1) with a fixed 50 ms timeout and the conservative TCP(0.3, 0.2) with a fixed 1 s timeout,
  on the path of the reading ``calibration-path``;
* §5.2 the testbed's evaluation as a simulation of its setting: NewReno, Responsive TCP(1.24, 0.25)
  and Smooth TCP(0.31, 0.875) sharing one bottleneck, 2 to 16 flows, 10 repetitions;
* §5.3 the dumbbell of the ns-2 study (`tcpenergy.topology.dumbbell`): 30 flows under PER 0.01-0.4
  (§5.3.1 and §5.3.4), 10-100 flows with 0.2 s handoffs (§5.3.2), and the contention decrease of
  §5.3.3 (flows leave, halving their number, until the last leaves at 120 s).

The dumbbell's link rates follow the reading ``bw3`` and the timeout of Responsive and Smooth
the reading ``alpha-beta-timeout``. Readings of what the paper leaves open are declared in
readings.yaml (with their evidence and procedure) and described in docs/reproduce/seed-004.md.
"""

from __future__ import annotations

import copy
import math
import re
import sys
from pathlib import Path
from typing import Any, Dict, List, Mapping, Sequence

from tcpenergy.reproduce import common, readings
from tcpenergy.reproduce.claims import paper_file
from tcpenergy.reproduce.common import Experiment, Outcome, table_section
from tcpenergy.reproduce.registry import Paper

PAPER_ID = "seed-004"
TITLE = "Reproduction of seed 004: TCP(alpha, beta) effort, goodput and energy-saving potential"

PAPER = Paper(
    id=PAPER_ID,
    description=("Mamatas & Tsaoussidis: TCP(alpha, beta) effort, goodput, EEE, EP and "
                 "Risk Index on a dumbbell"),
    citation='L. Mamatas and V. Tsaoussidis, "Exploiting Energy-Saving Potential in Heterogeneous Networks"',
)
CLAIMS = paper_file(__name__, "claims.yaml")  # each claim's text and its source in the paper
RULES = paper_file(__name__, "rules.yaml")  # the rules judging them (docs/reproduce/rules.md)

SIM_PROTOCOLS = ("newreno", "responsive", "smooth")
CALIBRATION_PROTOCOLS = ("newreno", "aggressive", "conservative")
PERS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.4)
QUICK_PERS = (0.01, 0.1, 0.4)
HANDOFF_FLOWS = (10, 20, 40, 60, 80, 100)
QUICK_HANDOFF_FLOWS = (10, 40)
DECREASE_FLOWS = tuple(range(10, 21))
QUICK_DECREASE_FLOWS = (10, 16)
TESTBED_FLOWS = (2, 4, 8, 16)
QUICK_TESTBED_FLOWS = (4, 16)
PER_FLOWS, QUICK_PER_FLOWS = 30, 10
HANDOFF_S, HANDOFF_EVERY_S = 0.2, 10.0   # §5.3.2: 0.2 s handoffs; how often is not given (reading: every 10 s)
DECREASE_PER = 0.2                        # §5.3.3
DURATION, QUICK_DURATION = "120s", "30s"  # §5.3: 120 s of simulated time
CALIBRATION_S, QUICK_CALIBRATION_S = 600, 60  # §5.1: 600 s experiments
# The §5.1 path (reading calibration-path): rate, one-way delay, drop-tail queue in packets.
CALIBRATION_PATHS = {"140M-q10": ("140Mbps", "1ms", 10), "140M-q5": ("140Mbps", "1ms", 5),
                     "140M-q20": ("140Mbps", "1ms", 20), "100M-q100": ("100Mbps", "1ms", 100)}
# Fig 1's small rate (reading bw3) and the small fixed timeout (reading alpha-beta-timeout).
BW3 = "1Mbps"
SMALL_FIXED_RTO = {"fixed-300ms": "300ms", "fixed-50ms": "50ms", "standard": None}
# A real path is nearly, not perfectly, error-free (the reading seed 003's reproduction makes too):
# the testbed settings (§5.1, §5.2) get this packet error rate.
TESTBED_PER = 0.001
REPETITIONS = {True: 2, False: 3}
TESTBED_REPETITIONS = {True: 3, False: 10}  # §5.2: averages over 10 repetitions

CALIBRATION = "s004-calibration"
TESTBED = "s004-testbed"          # + "-<flows>"
PER_SWEEP = "s004-per"            # + "-<per>"
HANDOFF = "s004-handoff"          # + "-<flows>"
DECREASE = "s004-decrease"        # + "-<flows>"


def _variant_free(scenario: Dict[str, Any]) -> Dict[str, Any]:
    """The dumbbell with its flows' variant removed, so that the scenario-wide tcp.variant (a sweep
    axis) applies to every flow."""
    out = copy.deepcopy(scenario)
    for flow in out["flows"]:
        flow.get("tcp", {}).pop("variant", None)
        if not flow.get("tcp"):
            flow.pop("tcp", None)
    return out


def dumbbell(flows: int, per: float, duration: str, name: str, testbed: bool = False) -> Dict[str, Any]:
    """The §5.3 dumbbell (``testbed``: the §5.2 setting on it) with Fig 1's bw_3 placed by the
    reading ``bw3``: the sink access links (r2 -> di) of every dumbbell, the bottleneck (r1 - r2)
    of the §5.2 setting only, or nowhere (every link 10 Mbit/s)."""
    from tcpenergy import topology

    out = _variant_free(topology.dumbbell(flows=flows, per=per, duration=duration, name=name))
    place = readings.in_force(__name__, "bw3")
    for link in out["links"]:
        a, b = link["between"]
        if (place == "sink-access" and a == "r2" and b != "r1") or \
                (place == "bottleneck" and testbed and {a, b} == {"r1", "r2"}):
            link["rate"] = BW3
    return out


def variant_axis(base: Dict[str, Any], variants: Sequence[str]) -> Dict[str, List[Any]]:
    """The sweep axis over the TCP variant. Under a fixed reading of ``alpha-beta-timeout``,
    Responsive and Smooth carry the small fixed timeout, NewReno keeps RFC 6298's: the axis is then
    the whole ``tcp`` table (the base's settings plus variant and timeout), one value per protocol."""
    fixed = SMALL_FIXED_RTO[readings.in_force(__name__, "alpha-beta-timeout")]
    if fixed is None:
        return {"tcp.variant": list(variants)}
    tables = []
    for v in variants:
        table = {**copy.deepcopy(base.get("tcp", {})), "variant": v}
        if v in ("responsive", "smooth"):
            table["fixed_rto"] = fixed
        tables.append(table)
    return {"tcp": tables}


def with_handoffs(scenario: Dict[str, Any]) -> Dict[str, Any]:
    """§5.3.2: each sink's access link (r2 -> di) is down 0.2 s every HANDOFF_EVERY_S, each at its own
    random phase (mobile hosts hand off independently)."""
    out = copy.deepcopy(scenario)
    for link in out["links"]:
        if link["between"][0] == "r2":
            forward = link.setdefault("forward", {})
            outage = common.random_phase({"kind": "outage", "down": f"{round(HANDOFF_S * 1000)}ms",
                                          "every": f"{HANDOFF_EVERY_S:g}s"})
            forward["impairments"] = [*forward.get("impairments", []), outage]
    return out


def decrease_schedule(flows: int, duration_s: float = 120.0, start_within_s: float = 2.0) -> List[float]:
    """§5.3.3: every flow starts within the first 2 s; the number of flows then halves every step,
    the step chosen so that the last flow leaves at the end (reading of parameters.md d.5:
    step = (duration - start_within) / ceil(log2 N + 1)). The stop time of each flow, flow 1 first;
    flows leave from the last one."""
    halvings = math.ceil(math.log2(flows) + 1)
    step = (duration_s - start_within_s) / halvings
    stops = [duration_s] * flows
    remaining, k = flows, 1
    while remaining > 1:
        keep = math.ceil(remaining / 2)
        for i in range(keep, remaining):
            stops[i] = start_within_s + k * step
        remaining, k = keep, k + 1
    return stops


def with_decrease(scenario: Dict[str, Any], duration_s: float) -> Dict[str, Any]:
    """The dumbbell with each flow's sending time ending at its leave time (a timed flow that has
    sent for its whole duration is complete, as the paper's leaving flows are)."""
    out = copy.deepcopy(scenario)
    for flow, stop in zip(out["flows"], decrease_schedule(len(out["flows"]), duration_s)):
        start_us = int(str(flow.get("start", "0us")).removesuffix("us") or 0)
        flow["traffic"]["duration"] = f"{round(stop * 1e6) - start_us}us"
    return out


def calibration_base(seconds: int) -> Dict[str, Any]:
    """§5.1: one flow from the laptop to a desktop for the experiment's length, on the path of the
    reading ``calibration-path``."""
    rate, delay, queue = CALIBRATION_PATHS[readings.in_force(__name__, "calibration-path")]
    return {
        "name": "seed004-calibration", "seed": 1, "stop_after": f"{seconds}s",
        "tcp": {"variant": "newreno"},
        "energy": {"default_profile": "ideal-nic-0.3", "radio_policy": "always_on"},
        "nodes": {"laptop": {}, "desktop": {}},
        "links": [{"between": ["laptop", "desktop"], "rate": rate, "delay": delay, "queue": queue,
                   "forward": {"impairments": [{"kind": "bernoulli", "p": TESTBED_PER}]}}],
        "flows": [{"name": "f1", "from": "laptop", "to": "desktop", "transport": "tcp",
                   "traffic": {"kind": "timed", "duration": f"{seconds}s"}}],
    }


def experiments(quick: bool = False) -> List[Experiment]:
    reps, duration = REPETITIONS[quick], QUICK_DURATION if quick else DURATION
    seconds = QUICK_CALIBRATION_S if quick else CALIBRATION_S
    path = readings.in_force(__name__, "calibration-path")
    rate, delay, queue = CALIBRATION_PATHS[path]
    out = [Experiment(CALIBRATION, f"§5.1: one flow, {seconds} s, a {rate} {delay} path with a {queue}-packet queue "
                                   "(reading calibration-path): NewReno, aggressive TCP(1.2, 1) with a fixed 50 ms "
                                   "timeout, conservative TCP(0.3, 0.2) with a fixed 1 s",
                      calibration_base(seconds), {"tcp.variant": list(CALIBRATION_PROTOCOLS)}, reps)]

    def sim(name: str, description: str, base: Dict[str, Any], repetitions: int) -> Experiment:
        return Experiment(name, description, base, variant_axis(base, SIM_PROTOCOLS), repetitions)

    for n in (QUICK_TESTBED_FLOWS if quick else TESTBED_FLOWS):
        out.append(sim(f"{TESTBED}-{n}", f"§5.2 as a simulation: {n} flows share the bottleneck, PER "
                                         f"{TESTBED_PER:g} on the sink access links",
                       dumbbell(n, TESTBED_PER, duration, "seed004", testbed=True), TESTBED_REPETITIONS[quick]))
    flows = QUICK_PER_FLOWS if quick else PER_FLOWS
    for per in (QUICK_PERS if quick else PERS):
        out.append(sim(f"{PER_SWEEP}-{per:g}", f"§5.3.1 and §5.3.4: {flows} flows, PER {per:g} on the sink "
                                                "access links", dumbbell(flows, per, duration, "seed004"), reps))
    for n in (QUICK_HANDOFF_FLOWS if quick else HANDOFF_FLOWS):
        out.append(sim(f"{HANDOFF}-{n}", f"§5.3.2: {n} flows, 0.2 s handoffs every {HANDOFF_EVERY_S:g} s on each "
                                         "sink's access link", with_handoffs(dumbbell(n, 0.0, duration, "seed004")),
                       reps))
    seconds_sim = float(duration[:-1])
    for n in (QUICK_DECREASE_FLOWS if quick else DECREASE_FLOWS):
        out.append(sim(f"{DECREASE}-{n}", f"§5.3.3: {n} flows, PER {DECREASE_PER:g}, the number of flows halving "
                                          "until the last leaves at the end",
                       with_decrease(dumbbell(n, DECREASE_PER, duration, "seed004"), seconds_sim), reps))
    return out


def write_experiment(exp: Experiment, directory: Path) -> Path:
    return common.write_experiment(exp, directory, PAPER_ID)


_NUMBER = re.compile(r"-(\d+(?:\.\d+)?)$")


def add_metrics(runs):
    """Per run: the experiment group and its x value (PER or flows, from the sweep name), effort
    (throughput T, from the ideal EEE: T = (EEE_ideal Tmax - 0.3 Tmax + G) / 0.7), goodput, the
    effort and goodput shares of Tmax, and the laptop's energy (in all, and per delivered byte)."""
    import pandas as pd

    runs = runs.copy()
    sweep = runs["sweep"].astype(str)
    runs["s004.group"] = sweep.map(lambda s: _NUMBER.sub("", s))
    runs["s004.x"] = sweep.map(lambda s: float(_NUMBER.search(s).group(1)) if _NUMBER.search(s) else float("nan"))
    num = lambda c: pd.to_numeric(runs[c], errors="coerce").astype(float) if c in runs else float("nan")  # noqa: E731
    tmax, g, ideal = num("network.efficiency.tmax_bps"), num("network.goodput_bps"), num("network.efficiency.eee_ideal")
    runs["s004.throughput_bps"] = (ideal * tmax - 0.3 * tmax + g) / 0.7
    runs["s004.goodput_share"] = g / tmax
    runs["s004.throughput_share"] = runs["s004.throughput_bps"] / tmax
    runs["s004.data_overhead"] = num("network.efficiency.data_overhead")
    runs["s004.sender_j"] = num("nodes.laptop.total_j")
    # The laptop's energy per useful byte delivered: what sending the same data costs (§5.1's
    # "an extra minute" argument, S004-C12).
    runs["s004.sender_j_per_byte"] = runs["s004.sender_j"] / num("network.bytes_delivered")
    return runs


def run(out_dir: Path, **options: Any) -> Outcome:
    """Run (or resume) every sweep into OUT/runs.duckdb, judge the claims, write the report
    (``options``: those of ``common.run_package``)."""
    return common.run_package(sys.modules[__name__], out_dir, **options)


# --------------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------------

COLUMNS = (("network.goodput_bps", "goodput (Mbit/s)", 1e-6), ("s004.throughput_bps", "effort T (Mbit/s)", 1e-6),
           ("network.efficiency.eee", "EEE(5, 0.72)", 1.0), ("network.efficiency.energy_potential", "EP", 1.0),
           ("network.efficiency.uar", "UAR", 1.0), ("network.jain_fairness", "fairness", 1.0),
           ("network.risk_index", "Risk Index", 1.0))


def group_rows(runs, group: str) -> List[List[Any]]:
    part = runs[runs["s004.group"] == group]
    if not len(part):
        return []
    means = part.groupby(["s004.x", "tcp.variant"])[[c for c, _, _ in COLUMNS]].mean()
    return [[f"{x:g}", v] + [f"{row[c] * s:.3g}" for c, _, s in COLUMNS] for (x, v), row in means.iterrows()]


def _figure_metrics():
    from tcpenergy.report.metrics import Metric

    return (Metric("ep", "network.efficiency.energy_potential", "EP", "Energy-saving potential (Figs 5d, 6a)", "1 - EEE_ideal",
                   higher_is_better=True, linear=True),
            Metric("uar", "network.efficiency.uar", "UAR", "Unexploited resources (Figs 5c, 6b)", "share", linear=True),
            Metric("fairness", "network.jain_fairness", "J", "Jain's fairness (Figs 4c, 6c)", "1 = equal shares",
                   higher_is_better=True, linear=True),
            Metric("goodput", "network.goodput_bps", "G", "Goodput (Figs 4b, 6d)", "Mbit/s", 1e-6, True),
            Metric("risk", "network.risk_index", "RI", "Risk Index (Fig 5a)", "share of flows", linear=True))


FIGURES = _figure_metrics()


def write_report(runs, results: Sequence[Mapping[str, Any]], out_dir: Path, exps: Sequence[Experiment],
                 quick: bool = False) -> List[Path]:
    from tcpenergy.report import write_report as _write_report
    from tcpenergy.report.layout import Layout
    from tcpenergy.reproduce import claims as claims_mod

    rows = [[e.name, e.description, e.cells(), len(e.seed_list()), int((runs["sweep"] == e.name).sum())] for e in exps]
    sections = [table_section(["sweep", "what", "settings", "seeds", "runs stored"], rows,
                              "The dumbbell of §5.3 (10 Mbit/s links and bottleneck, Fig 1's 1 Mbit/s bw_3 placed by the "
                              f"reading bw3 = {readings.in_force(__name__, 'bw3')}; 20 ms bottleneck, 100-packet queues, errors on the "
                              "sink access links), the §5.2 evaluation on it, and the §5.1 calibration on one path "
                              f"(reading calibration-path = {readings.in_force(__name__, 'calibration-path')}); Responsive and Smooth "
                              f"timeouts: alpha-beta-timeout = {readings.in_force(__name__, 'alpha-beta-timeout')}."
                              + (" Quick mode: fewer points and seeds, 30 s runs." if quick else ""),
                              "Experiments")]
    header = ["x", "protocol", *[label for _, label, _ in COLUMNS]]
    for group, what in ((CALIBRATION, "§5.1 calibration (x: none)"), (TESTBED, "§5.2 (x: flows)"),
                        (PER_SWEEP, "§5.3.1/§5.3.4 (x: PER)"), (HANDOFF, "§5.3.2 handoffs (x: flows)"),
                        (DECREASE, "§5.3.3 contention decrease (x: initial flows)")):
        sections.append(table_section(header, group_rows(runs, group), f"{what}: mean over seeds.", what))
    intro = (f"Every claim of {PAPER.citation} that the project lists (text and source shipped with "
             "the package). Rules are in each evidence text, in rules.yaml and docs/reproduce/seed-004.md; "
             "the same list is in claims.json.")
    sections.append(claims_mod.checklist_section(results, intro))
    frame = runs[runs["s004.group"] == PER_SWEEP]
    frame = frame.assign(**{"label.tcp.variant": frame["tcp.variant"].astype(str)})  # the axis may be the tcp table
    keep = [c for c in frame.columns if not c.startswith("label.")] + ["label.tcp.variant"]
    layout = Layout(x="s004.x", line="label.tcp.variant", panels=())
    paths = _write_report(frame[keep].reset_index(drop=True), Path(out_dir) / "report", title=TITLE,
                          level=claims_mod.LEVEL, layout=layout,
                          summary_sections=[claims_mod.summary_section(results)], extra_sections=sections,
                          figure_metrics=FIGURES)
    return [paths.html, paths.markdown, *paths.figures, *paths.tables]
