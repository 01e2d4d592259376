"""Seed 001 (Donckers, Havinga, Smit & Smit: E2TCP, the Energy Efficient TCP): the wireless hop of
a split connection, one 1 Mbit/s link with 50 ms delay and the two-state channel of §3.2, Tahoe,
Reno, NewReno and E2TCP compared by data, time and energy overhead, throughput and packet latency.

Each experiment is a sweep over the channel condition of Scenario A (bad state 0.1 s, good state
300 s -> 1 s) or Scenario B (bad state = good / 10, good state 20 s -> 1 s), crossed with what the
paper varies (protocol, bandwidth, delay, traffic). The channel is the `gilbert_elliott`
impairment with fixed state lengths, one timeline for both directions. Modelling choices are
explained in docs/reproduce/seed-001.md.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence

from tcpenergy.reproduce import common
from tcpenergy.reproduce import readings
from tcpenergy.reproduce.claims import paper_file
from tcpenergy.reproduce.common import Experiment, Outcome, table_section
from tcpenergy.reproduce.registry import Paper

PAPER_ID = "seed-001"
TITLE = "Reproduction of seed 001: E2TCP against Tahoe, Reno and NewReno on one bursty 1 Mbit/s hop"

PAPER = Paper(
    id=PAPER_ID,
    description=("Donckers, Havinga, Smit & Smit: E2TCP against Tahoe, Reno and NewReno "
                 "on one bursty wireless hop"),
    citation='Donckers, Havinga, Smit, Smit, "Energy Efficient TCP"',
)
CLAIMS = paper_file(__name__, "claims.yaml")  # each claim's text and its source in the paper
RULES = paper_file(__name__, "rules.yaml")  # the rules judging them (docs/reproduce/rules.md)

DEVICE = "donckers2002-wavelan-modem"
GOOD_PER, BAD_PER = 0.0005, 0.8                 # §3.2: 0.05 % and 80 % packet error rates
BAD_A_S = 0.1                                   # Scenario A: bad state fixed at 0.1 s
GOOD_A_S = (300, 100, 30, 10, 5, 2, 1)          # Scenario A: good state 300 s -> 1 s
GOOD_B_S = (20, 10, 5, 2, 1)                    # Scenario B: bad = good / 10
QUICK_GOOD_A_S = (300, 10, 1)
QUICK_GOOD_B_S = (20, 5, 1)
RATE = "1Mbps"
DELAY_MS = 50
PACKET = 1000                                   # payload bytes (ns-2's default packet size)
TRANSFER = "20MB"
SESSION_S = 120                                 # interactive and CBR flows run this long
PROTOCOLS = ("tahoe", "reno", "newreno", "e2tcp")
BANDWIDTHS = ("250kbps", "500kbps", "1Mbps", "2Mbps")  # not given (parameters.md e, S001 5); 2 Mbit/s is the modem's PHY
DELAYS_MS = (40, 50, 60, 70)
INTERDEPARTURE = ("500ms", "200ms", "100ms", "50ms")
CBR_RATES = ("250kbps", "500kbps", "1Mbps")
CHANNEL_KEY = "links.0.impairments"
WEIGHT_DATA, WEIGHT_TIME = 0.5, 0.5             # §1.2: the intermediate radio

# The retransmission timer of ns-2's TCP agents of the paper's time (tcp.cc, before minrto_ became
# 200 ms in 2004): RTO = SRTT + 4 RTTVAR counted in 100 ms ticks, at least two ticks, 3 s before the
# first sample; no 1 s floor. ns-2's default sink acknowledges every packet; E2TCP does so by design.
NS2_TIMERS = {"min_rto": "200ms", "clock_granularity": "100ms", "initial_rto": "3s"}
# The readings of readings.yaml: the window bounding every sender (bytes of receive window) and
# E2TCP's maximum window (packets), by alternative.
TCP_WINDOW_BYTES = {"ns2-20": 20 * PACKET, "64KB": 64_000}
AFTER_TIMEOUT = {"reduce-to-min": "reduce_to_min", "min-window": "min_window", "burst-window": "burst_window"}
FULL_REPETITIONS = 5
QUICK_REPETITIONS = 2


def channel(good_s: float, bad_s: float) -> List[Dict[str, Any]]:
    """The two-state channel with fixed state lengths, shared by both directions of the hop."""
    def state(per: float, s: float) -> Dict[str, Any]:
        length = f"{round(s * 1000)}ms"
        return {"per": per, "min": length, "max": length}

    return [{"kind": "gilbert_elliott", "phase_group": "wlan", "good": state(GOOD_PER, good_s),
             "bad": state(BAD_PER, bad_s)}]


def conditions(scenario: str, quick: bool) -> List[List[Dict[str, Any]]]:
    """The channel conditions of Scenario A or B, best first (the paper's left to right)."""
    if scenario == "A":
        return [channel(g, BAD_A_S) for g in (QUICK_GOOD_A_S if quick else GOOD_A_S)]
    return [channel(g, g / 10) for g in (QUICK_GOOD_B_S if quick else GOOD_B_S)]


# One scenario name for every sweep: sweeps share cells (Scenario B's worst condition is A's; the
# bandwidth and delay sweeps hold the default setting) and the store keeps a shared run under the
# name it was first stored with.
NAME = "seed001"


def reading(key: str) -> str:
    """The alternative in force for one of readings.yaml's readings (the taken one outside a reproduction)."""
    return readings.in_force(__name__, key)


def tcp(variant: str, **e2tcp: Any) -> Dict[str, Any]:
    """The transport of one protocol: ns-2's timers (above), an ACK for every packet, the receive
    window of the reading tcp-window; E2TCP with the maximum window of the reading e2tcp-window
    (docs/models/e2tcp.md for the rest) and ``e2tcp``'s further constants."""
    table: Dict[str, Any] = {"variant": variant, **NS2_TIMERS, "delayed_ack": {"every": 1, "timeout": "100ms"},
                             "receive_buffer": TCP_WINDOW_BYTES[reading("tcp-window")]}
    if variant == "e2tcp":
        table["e2tcp"] = {"max_window": int(reading("e2tcp-window")),
                          "after_timeout": AFTER_TIMEOUT[reading("e2tcp-timeout")], **e2tcp}
    return table


def protocols(names: Sequence[str]) -> List[Dict[str, Any]]:
    """A sweep axis over protocols: the whole `tcp` table of each (E2TCP's constants apply to it only)."""
    return [tcp(name) for name in names]


def base(name: str, traffic: Optional[Mapping[str, Any]] = None, variant: str = "e2tcp") -> Dict[str, Any]:
    """§3.1's default setup: base station -> mobile host over one wireless hop, a 20 MB bulk transfer."""
    return {
        "name": name,
        "seed": 1,
        "stop_after": "6h",
        "tcp": tcp(variant),
        "metrics": {"radio": "intermediate"},
        "nodes": {"bs": {"profile": DEVICE}, "mh": {"profile": DEVICE}},
        "links": [{"between": ["bs", "mh"], "rate": RATE, "delay": f"{DELAY_MS}ms", "mtu": PACKET + 40, "queue": 100,
                   "impairments": channel(GOOD_A_S[0], BAD_A_S)}],
        "flows": [{"name": "f", "from": "bs", "to": "mh", "traffic": dict(traffic or {"kind": "bulk", "bytes": TRANSFER})}],
    }


def repetitions(quick: bool) -> int:
    return QUICK_REPETITIONS if quick else FULL_REPETITIONS



def experiments(quick: bool = False) -> List[Experiment]:
    reps = repetitions(quick)
    out: List[Experiment] = []
    for sc in ("A", "B"):
        cond = conditions(sc, quick)
        low = sc.lower()
        out += [
            Experiment(f"s001-overhead-{low}", f"Figs {'1, 3, 15, 17' if sc == 'A' else '2, 4, 16, 18'}: "
                       f"Scenario {sc}, 20 MB bulk, Tahoe / Reno / NewReno / E2TCP",
                       base(NAME), {CHANNEL_KEY: cond, "tcp": protocols(PROTOCOLS)}, reps),
            Experiment(f"s001-no-compression-{low}", f"Table 1: Scenario {sc}, E2TCP without header compression",
                       {**base(NAME), "tcp": tcp("e2tcp", header_compression=False)},
                       {CHANNEL_KEY: cond}, reps),
            Experiment(f"s001-bandwidth-{low}", f"Figs {'5-6' if sc == 'A' else '7-8'}: Scenario {sc}, bandwidth "
                       "(values not given in the paper)", base(NAME),
                       {CHANNEL_KEY: cond, "links.0.rate": list(BANDWIDTHS), "tcp": protocols(["tahoe", "e2tcp"])}, reps),
            Experiment(f"s001-delay-{low}", f"Fig {'9' if sc == 'A' else '10'}: Scenario {sc}, channel delay 40-70 ms",
                       base(NAME),
                       {CHANNEL_KEY: cond, "links.0.delay": [f"{d}ms" for d in DELAYS_MS],
                        "tcp": protocols(["tahoe", "e2tcp"])}, reps),
            Experiment(f"s001-interactive-{low}", f"Fig {'11' if sc == 'A' else '12'}: Scenario {sc}, interactive "
                       f"traffic ({PACKET} B messages, exponential inter-departure), {SESSION_S} s",
                       base(NAME, {"kind": "on_off", "message": PACKET, "interval": "500ms",
                                                           "distribution": "exponential"}),
                       {CHANNEL_KEY: cond, "flows.0.traffic.interval": list(INTERDEPARTURE),
                        "tcp": protocols(["tahoe", "e2tcp"])}, reps, fixed={"flows.0.stop": f"{SESSION_S}s"}),
            Experiment(f"s001-cbr-{low}", f"Fig {'13' if sc == 'A' else '14'}: Scenario {sc}, CBR traffic "
                       f"({PACKET} B packets), {SESSION_S} s",
                       base(NAME, {"kind": "cbr", "rate": "250kbps", "packet": PACKET}),
                       {CHANNEL_KEY: cond, "flows.0.traffic.rate": list(CBR_RATES),
                        "tcp": protocols(["tahoe", "e2tcp"])}, reps, fixed={"flows.0.stop": f"{SESSION_S}s"}),
        ]
    return out


def write_experiment(exp: Experiment, directory: Path) -> Path:
    return common.write_experiment(exp, directory, PAPER_ID)


def _seconds(text: str) -> float:
    for unit, scale in (("ms", 1e-3), ("us", 1e-6), ("s", 1.0)):
        if text.endswith(unit):
            return float(text[: -len(unit)]) * scale
    return float(text)


def _kbps(text: str) -> float:
    for unit, scale in (("Gbps", 1e6), ("Mbps", 1e3), ("kbps", 1.0), ("bps", 1e-3)):
        if text.endswith(unit):
            return float(text[: -len(unit)]) * scale
    return float(text) / 1e3


def add_metrics(runs):
    """Per-run columns in the paper's terms: the condition (good-state length), overheads in %,
    throughput in kbit/s and mean packet latency in ms; the protocol label with the ablation."""
    runs = runs.copy()

    def good_s(label: Any) -> float:
        if isinstance(label, str):
            import ast
            label = ast.literal_eval(label)
        return _seconds(label[0]["good"]["min"])

    runs["s001.good_s"] = runs[f"label.{CHANNEL_KEY}"].map(good_s)
    # The figures' x axis: the good-state length as a category, best channel first (the paper's order).
    runs["s001.good_state"] = runs["s001.good_s"].map(lambda g: f"good {g:g} s")
    # The swept settings as numbers, the axes of the paper's figures (NaN where a sweep holds the default).
    for column, label, parse in (("s001.rate_kbps", "label.links.0.rate", _kbps),
                                 ("s001.delay_ms", "label.links.0.delay", lambda v: _seconds(v) * 1e3),
                                 ("s001.interval_ms", "label.flows.0.traffic.interval", lambda v: _seconds(v) * 1e3),
                                 ("s001.cbr_kbps", "label.flows.0.traffic.rate", _kbps)):
        values = runs[label] if label in runs else None
        runs[column] = (values.map(lambda v: parse(v) if isinstance(v, str) else float("nan")).astype(float)
                        if values is not None else float("nan"))
    runs["s001.scenario"] = runs["sweep"].str[-1].str.upper()
    eff = "flows.f.efficiency."
    runs["s001.data_overhead_pct"] = runs[eff + "data_overhead"].astype(float) * 100
    runs["s001.time_overhead_pct"] = runs[eff + "time_overhead"].astype(float) * 100
    runs["s001.overhead_pct"] = runs[eff + "overhead"].astype(float) * 100
    if reading("paced-time-overhead") == "session":
        # §1.2 on a paced session (readings.yaml): an ideal protocol delivers each message as the
        # application writes it, so it needs the time the application took to write the messages
        # the run delivered; the run needed the whole session.
        paced = runs["sweep"].str.startswith(("s001-interactive-", "s001-cbr-"))
        written = runs["flows.f.messages_sent"].astype(float)
        delivered = runs["flows.f.messages_delivered"].astype(float)
        session_pct = (written / delivered - 1) * 100
        runs.loc[paced, "s001.time_overhead_pct"] = session_pct[paced]
        runs.loc[paced, "s001.overhead_pct"] = (WEIGHT_DATA * runs.loc[paced, "s001.data_overhead_pct"]
                                                + WEIGHT_TIME * runs.loc[paced, "s001.time_overhead_pct"])
    runs["s001.throughput_kbps"] = runs["flows.f.goodput_bps"].astype(float) / 1e3
    if "flows.f.packet_latency_ms.mean" in runs:
        runs["s001.latency_ms"] = runs["flows.f.packet_latency_ms.mean"].astype(float)
    protocol = runs["sweep"].map(lambda s: "e2tcp-nohc" if "no-compression" in s else None)
    runs["s001.protocol"] = protocol.fillna(runs["tcp.variant"])
    return runs


def run(out_dir: Path, **options: Any) -> Outcome:
    """Run (or resume) every sweep into OUT/runs.duckdb, judge the claims, write the report
    (``options``: those of ``common.run_package``)."""
    return common.run_package(sys.modules[__name__], out_dir, **options)


# --------------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------------

def table1_rows(runs) -> List[List[Any]]:
    """Table 1: mean energy overhead (%) over every error condition, per protocol and scenario."""
    rows = []
    bulk = runs[runs["sweep"].str.startswith(("s001-overhead-", "s001-no-compression-"))]
    for protocol in ("tahoe", "reno", "newreno", "e2tcp-nohc", "e2tcp"):
        row: List[Any] = [protocol]
        for sc in ("A", "B"):
            sel = bulk[(bulk["s001.protocol"] == protocol) & (bulk["s001.scenario"] == sc)]
            row.append(f"{sel['s001.overhead_pct'].mean():.1f}" if len(sel) else "-")
        rows.append(row)
    return rows


def _setup_section(exps: Sequence[Experiment], runs, quick: bool):
    rows = [[e.name, e.description, e.cells(), len(e.seed_list()), int((runs["sweep"] == e.name).sum()),
             f"sweeps/{e.name}.sweep.toml"] for e in exps]
    intro = (f"One {RATE} hop with {DELAY_MS} ms delay, {PACKET}-byte packets, the two-state channel (good PER "
             f"{GOOD_PER:.2%}, bad PER {BAD_PER:.0%}, fixed state lengths, one timeline for both directions), "
             f"device profile {DEVICE} at both ends. Overheads follow docs/models/metrics.md (intermediate radio: "
             "O = 0.5 data + 0.5 time overhead). Readings in force (readings.yaml): "
             + ", ".join(f"{key} = {reading(key)}" for key in readings.load(__name__)) + "."
             + (" Quick mode: fewer conditions and 2 seeds per setting." if quick else ""))
    return table_section(["sweep", "what", "settings", "seeds", "runs stored", "file"], rows, intro, "Experiments")


def _figure_rows(runs, sweep: str, metric: str) -> List[List[Any]]:
    sel = runs[runs["sweep"] == sweep]
    if not len(sel):
        return []
    table = sel.groupby(["s001.good_s", "s001.protocol"])[metric].mean().unstack()
    return [[f"{g:g}"] + [f"{table.loc[g, p]:.1f}" if p in table.columns else "-" for p in PROTOCOLS]
            for g in sorted(table.index, reverse=True)]


# Figs 1-4 and 15-18: the paper's axes (overheads, throughput, latency against the channel condition).
def _figure_metrics():
    from tcpenergy.report.metrics import Metric

    return (Metric("data_overhead", "s001.data_overhead_pct", "O_d", "Data overhead (Figs 1-2)", "%"),
            Metric("time_overhead", "s001.time_overhead_pct", "O_t", "Time overhead (Figs 3-4)", "%"),
            Metric("overhead", "s001.overhead_pct", "O", "Energy overhead, intermediate radio (Table 1)", "%"),
            Metric("throughput", "s001.throughput_kbps", "τ", "Throughput (Figs 15-16)", "kbit/s",
                   higher_is_better=True),
            Metric("latency", "s001.latency_ms", "L", "Mean packet latency (Figs 17-18)", "ms"))


FIGURES = _figure_metrics()


def write_report(runs, results: Sequence[Mapping[str, Any]], out_dir: Path, exps: Sequence[Experiment],
                 quick: bool = False) -> List[Path]:
    from tcpenergy.report import write_report as _write_report
    from tcpenergy.report.layout import Layout
    from tcpenergy.reproduce import claims as claims_mod

    sections = [_setup_section(exps, runs, quick),
                table_section(["protocol", "Scenario A", "Scenario B"], table1_rows(runs),
                              "Mean energy overhead O (%) over every channel condition (the paper: Tahoe 44.5 / "
                              "54.5, E2TCP without header compression 14.7 / 22.4, E2TCP 10.1 / 17.4).", "Table 1")]
    for sc in ("a", "b"):
        for metric, what in (("s001.data_overhead_pct", "data overhead (%)"), ("s001.time_overhead_pct", "time overhead (%)"),
                             ("s001.throughput_kbps", "throughput (kbit/s)"), ("s001.latency_ms", "mean packet latency (ms)")):
            if metric in runs:
                sections.append(table_section(["good state (s)", *PROTOCOLS], _figure_rows(runs, f"s001-overhead-{sc}", metric),
                                              f"Scenario {sc.upper()}: {what} by good-state length (best channel first), "
                                              "mean over seeds.", f"Scenario {sc.upper()}: {what}"))
    intro = (f"Every claim of {PAPER.citation} that the project lists (text and source shipped with "
             "the package). Rules are in each evidence text and in docs/reproduce/seed-001.md; the same list is in "
             "claims.json.")
    sections.append(claims_mod.checklist_section(results, intro))
    frame = runs[runs["sweep"].str.startswith("s001-overhead-")].sort_values("s001.good_s", ascending=False)
    keep = [c for c in frame.columns if not c.startswith("label.")]
    layout = Layout(x="s001.good_state", line="tcp.variant", panels=("s001.scenario",))
    paths = _write_report(frame[keep].reset_index(drop=True), Path(out_dir) / "report", title=TITLE,
                          level=claims_mod.LEVEL, layout=layout,
                          summary_sections=[claims_mod.summary_section(results)], extra_sections=sections,
                          figure_metrics=FIGURES)
    return [paths.html, paths.markdown, *paths.figures, *paths.tables]
