"""Seed 003 (Agrawal & Singh, TCP's energy over one 802.11b hop), part "options": the Linux option tuning.

The paper measures bytes delivered per battery charge. We have no battery model yet, so each option
experiment is a fixed-size bulk transfer over one 11 Mbit/s hop with the paper's WaveLAN Turbo /
Samsung laptop profile, and efficiency is bytes delivered per joule of sender energy (the energy
analogue of bytes per charge). "x % savings" = bytes-per-joule ratio - 1 (the paper's bytes per battery charge).

Modelling choices are explained in docs/reproduce/seed-003.md; the cumulative configuration is the
shipped scenarios/seed003-options.toml (built here, since scenarios/ is not in the wheel).
"""

from __future__ import annotations

import math

from pathlib import Path
from typing import AbstractSet, Any, Callable, Dict, List, Mapping, Optional, Sequence

from tcpenergy.reproduce import common
from tcpenergy.reproduce.claims import paper_file
from tcpenergy.reproduce.common import LINUX22, Experiment, Outcome, Transform, table_section
from tcpenergy.reproduce.registry import Paper

PAPER_ID = "seed-003"
TITLE = "Reproduction of seed 003 (options part): Linux TCP option tuning over one 11 Mbit/s 802.11b hop"
OPTIONS, LIFETIME, RTS_CTS, INTERFERENCE = "options", "battery-lifetime", "rts-cts", "interference"
PARTS = (OPTIONS, LIFETIME, RTS_CTS, INTERFERENCE)

PAPER = Paper(
    id=PAPER_ID,
    description=("Agrawal & Singh: Linux TCP options, battery lifetime, RTS/CTS and "
                 "interference on one 802.11b hop"),
    citation=('S. Agrawal and S. Singh, "An Experimental Study of TCP\'s Energy Consumption over a '
              'Wireless Link"'),
    parts=PARTS,
)
CLAIMS = paper_file(__name__, "claims.yaml")  # each claim's text and its source in the paper
RULES = paper_file(__name__, "rules.yaml")  # the rules judging them (docs/reproduce/rules.md)

DEVICE = "agrawal2003-samsung-wavelan-turbo"
# The options part's residual random loss on data frames, one of the readings (readings.yaml:
# options-loss). retx-matched: the paper's ~50 TCP retransmissions per battery life (S003-C14) over
# the 3-4 GB a life carries (Tables I and II), 50 / (3.5 GB / 1448 B per segment) = 2e-5.
OPTIONS_LOSS = {"retx-matched": 2e-5, "one-per-mille": 0.001, "none": 0.0}
TRANSFER = "20MB"
MTUS = (500, 1000, 1500, 2296)
FULL_REPETITIONS = 10
QUICK_REPETITIONS = 3

DEFAULT_ACK = {"every": 2, "timeout": "200ms"}   # Linux: an ACK per two full segments, plus the timer

# §II-F / §III-B.6: delayed ACK "based only on time", one of its readings (readings.yaml: delayed-ack).
# Every alternative drops the two-segment count (every = 0); they differ in the timer and in whether
# Linux 2.2's window-update test (an ACK at once when more than half the window arrived since the
# last one, tcp_raise_window) stays in force.
TIMED_ACKS = {
    "linux-timer": {"every": 0, "timeout": "20ms", "window_update": True},
    "half-window": {"every": 0, "timeout": "500ms", "window_update": True},
    "timer-only": {"every": 0, "timeout": "500ms"},
}

# §III-A: the benchmark's "pings sent continuously", one of its readings (readings.yaml: ping).
# A 56-byte echo request (ping's default payload) to the receiver, which echoes it (RFC 862 / ICMP
# echo as a UDP echo). Flood: the model's UDP source has no closed loop, so requests go out every
# 1.5 ms, the longest echo round trip on the idle channel in the model (0.87-1.49 ms); with requests
# and replies contending, the channel carries about 640 round trips a second (a closed loop, the next
# request once the reply is in as ping -f does, would make about 840).
PINGS = {
    "flood": {"kind": "on_off", "message": 56, "interval": "1.5ms", "distribution": "fixed"},
    "one-per-second": {"kind": "on_off", "message": 56, "interval": "1s", "distribution": "fixed"},
}


def reading(key: str) -> str:
    """The alternative in force for one of this paper's readings (readings.yaml): the one a running
    reproduction was given, else the taken one."""
    from tcpenergy.reproduce import readings

    return readings.in_force(__name__, key)


def options_loss() -> float:
    """The options part's random loss per data frame under the reading in force."""
    return OPTIONS_LOSS[reading("options-loss")]


def timed_ack() -> Dict[str, Any]:
    """The time-based delayed ACK of the reading in force."""
    return dict(TIMED_ACKS[reading("delayed-ack")])


def all_modifications() -> Dict[str, Any]:
    return {"variant": "newreno", "header_prediction": "predict_first", "delayed_ack": timed_ack()}

# Sweep names (the `sweep` column of the store).
MTU_SACK = "s003-mtu-sack"
TIMESTAMPS = "s003-timestamps"
WSCALE = "s003-window-scale"
HEADER = "s003-header-prediction"
DELACK = "s003-delayed-ack"
CUMULATIVE = "s003-cumulative"


def base(name: str = "seed003-default", *, mtu: int = 1500, tcp: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
    """The paper's default configuration (§III): MTU 1500, SACK, window scale and timestamps on,
    standard header prediction, delayed ACK every 2 segments; one 11 Mbit/s hop, 1 ms each way."""
    def direction(impairments):
        return {"rate": "11Mbps", "delay": "1ms", "queue": 100, "impairments": impairments}

    return {
        "name": name,
        "seed": 1,
        "path": {"mtu": mtu, "forward": direction([{"kind": "bernoulli", "p": options_loss()}] if options_loss() else []),
                 "reverse": direction([])},
        # RedHat 6.1's Linux 2.2 constants (timer ticks, RTO bounds, buffers); the options under test
        # are written out and override the preset. SACK on = the Linux SACK sender (RFC 6675
        # scoreboard); SACK off = NewReno (tcp.sack follows the variant).
        "tcp": {**LINUX22, "variant": "sack", "timestamps": True, "window_scale": True, "header_prediction": "standard",
                "delayed_ack": dict(DEFAULT_ACK), **dict(tcp or {})},
        "traffic": {"kind": "bulk", "bytes": TRANSFER},
        "energy": {"sender": DEVICE, "receiver": DEVICE, "radio_policy": "always_on"},
    }


def optimized(mtu: int = 2296) -> Dict[str, Any]:
    """§III-B.7: MTU 2296 + SACK off + header prediction first + time-based delayed ACK (WS, TS stay on)."""
    return base("seed003-options", mtu=mtu, tcp=all_modifications())


# --------------------------------------------------------------------------------------------
# Parts on the 802.11b channel: battery lifetime, RTS/CTS, interference (§III-A, B.7-B.9, C)
# --------------------------------------------------------------------------------------------

# The sender's battery: the calibration of scenarios/agrawal2003-battery.toml (docs/models/battery.md),
# an ideal battery that lasts the measured 223 min at the profile's 3.74 W idle draw.
FULL_CHARGE_WH = 13.9003
FULL_CHARGE_J = FULL_CHARGE_WH * 3600
IDLE_LIFETIME_MIN = 223
# Runs until the battery is empty use this share of the charge (and scale the interferer's schedule
# with it): an ideal battery's lifetime and the bytes it carries are proportional to its charge under
# a load that is stationary after the first seconds, so results are reported per full charge.
# Measured: 1/100 and 1/10 of the charge give lifetimes 105.8 s and 1057.3 s for the same bulk run.
QUICK_CHARGE, FULL_RUN_CHARGE = 0.01, 0.1
LIFETIME_REPETITIONS = {True: 2, False: 3}
RTS_THRESHOLD_FIG8B = 1000    # §III-B.7: handshake for frames over 1000 bytes (data, not ACKs)
RTS_THRESHOLD_TABLES = 100    # §III-C: "in excess of 100 bytes"
RTS_TRANSFER = {True: "5MB", False: "20MB"}

# Sweep names of these parts.
BENCHMARK = "s003-battery-benchmark"
LIFETIME_MTU = "s003-battery-mtu"
RTS_DEFAULT = "s003-rts-default"
RTS_CUMULATIVE = "s003-rts-cumulative"
CONTINUOUS = "s003-interference-continuous"
INTERMITTENT = "s003-interference-intermittent"


def charge(quick: bool) -> float:
    return QUICK_CHARGE if quick else FULL_RUN_CHARGE


def _bulk_bytes(share: float) -> str:
    """More than a charge can carry at 11 Mbit/s (a bulk transfer's size is allocated up front)."""
    return f"{int(11e6 / 8 * 223 * 60 * share * 1.2) + 1}B"


def station_base(name: str, *, share: Optional[float], mtu: int = 1500, tcp: Optional[Mapping[str, Any]] = None,
                 rts: Any = "off", interferer: bool = False) -> Dict[str, Any]:
    """The paper's testbed: two laptops in ad hoc mode on one 802.11b channel at 11 Mbit/s (basic
    rate 2 Mbit/s), a third one when there is interfering traffic; a bulk TCP transfer from the sender.
    ``share``: the sender runs on that share of its charge until it is empty (None: no battery, a
    fixed-size transfer)."""
    nodes: Dict[str, Any] = {"sender": {}, "receiver": {}}
    scenario: Dict[str, Any] = {"name": name, "seed": 1, "stop_after": "12h"}
    if share is not None:
        nodes["sender"] = {"battery": {"capacity": f"{FULL_CHARGE_WH * share:.6f}Wh", "voltage": "10.8V",
                                       "sample": f"{max(1, round(60 * share * 10))}s"}}
        scenario["stop"] = "battery_empty:sender"
        # A battery run first simulates to stop_after to find when the battery empties (docs/models/
        # battery.md), so bound it by the longest possible life, the idle one (the idle draw is the least).
        scenario["stop_after"] = f"{math.ceil(IDLE_LIFETIME_MIN * 60 * share * 1.05)}s"
    members = ["sender", "receiver"]
    if interferer:
        nodes["interferer"] = {}
        members.append("interferer")
    scenario.update({
        "tcp": {**LINUX22, "variant": "sack", "timestamps": True, "window_scale": True, "header_prediction": "standard",
                "delayed_ack": dict(DEFAULT_ACK), **dict(tcp or {})},
        "energy": {"default_profile": DEVICE, "radio_policy": "always_on"},
        "nodes": nodes,
        "channels": [{"name": "adhoc", "standard": "802.11b", "nodes": members, "data_rate": "11Mbps",
                      "basic_rate": "2Mbps", "rts_threshold": rts, "mtu": mtu}],
        "flows": [{"name": "bulk", "from": "sender", "to": "receiver", "transport": "tcp",
                   "traffic": {"kind": "bulk", "bytes": _bulk_bytes(share) if share is not None else TRANSFER}}],
    })
    return scenario


def _interfering(schedule: str, share: float) -> Dict[str, Any]:
    """The third laptop's traffic to the receiver, with the default Linux stack (the paper's Libretto ran
    Win95): continuous (Table I) or about 5 MB every 5 minutes (Table II), the schedule scaled with the
    charge so that the sender meets the same amount of interference per charge."""
    tcp = {"variant": "sack", "header_prediction": "standard", "delayed_ack": dict(DEFAULT_ACK)}
    if schedule == "continuous":
        traffic = {"kind": "bulk", "bytes": _bulk_bytes(share)}
    else:
        traffic = {"kind": "on_off", "message": max(1, round(5e6 * share)), "interval": f"{300 * share:g}s",
                   "distribution": "fixed"}
    return {"name": "interference", "from": "interferer", "to": "receiver", "transport": "tcp", "tcp": tcp,
            "traffic": traffic}


def part_experiments(part: str, quick: bool) -> List[Experiment]:
    if part == OPTIONS:
        return experiments(quick)
    share = charge(quick)
    reps = LIFETIME_REPETITIONS[quick]
    if part == LIFETIME:
        idle = station_base("seed003-battery", share=share)
        ping = reading("ping")
        idle["flows"] = [{"name": "ping", "from": "sender", "to": "receiver", "transport": "udp", "echo": True,
                          "traffic": dict(PINGS[ping])}]
        return [
            Experiment(BENCHMARK, f"§III-A battery benchmark: no traffic vs continuous ping ({ping}: 56-byte echo "
                                  f"every {PINGS[ping]['interval']}) until the sender's battery is empty", idle,
                       {"flows.0.start": ["0s", "24h"]}, reps),
            Experiment(LIFETIME_MTU, "§III-B.1 and B.9: bulk TCP until the sender's battery is empty, MTU "
                                     "500/1000/1500/2296, default options, no RTS/CTS",
                       station_base("seed003-battery", share=share), {"channels.0.mtu": list(MTUS)}, reps),
        ]
    if part == RTS_CTS:
        transfer = RTS_TRANSFER[quick]
        default = station_base("seed003-rts", share=None)
        cumulative = station_base("seed003-rts", share=None, mtu=2296, tcp=all_modifications())
        for scenario in (default, cumulative):
            scenario["flows"][0]["traffic"]["bytes"] = transfer
        axis = {"channels.0.rts_threshold": ["off", RTS_THRESHOLD_FIG8B]}
        return [Experiment(RTS_DEFAULT, f"§III-B.7 Fig 8: defaults (MTU 1500), {transfer}, RTS/CTS off / on (1000 B)",
                           default, axis, reps),
                Experiment(RTS_CUMULATIVE, f"§III-B.7 Fig 8: all modifications at MTU 2296, {transfer}, RTS/CTS off / "
                                           "on (1000 B)", cumulative, axis, reps)]
    if part == INTERFERENCE:
        out = []
        for sweep, schedule, table in ((CONTINUOUS, "continuous", "I"), (INTERMITTENT, "intermittent", "II")):
            base_ = station_base("seed003-interference", share=share, tcp=all_modifications(), interferer=True)
            base_["flows"].append(_interfering(schedule, share))
            out.append(Experiment(sweep, f"§III-C Table {table}: all modifications, MTU 1500, {schedule} interfering "
                                         "traffic from a third station to the receiver, until the sender's battery is "
                                         "empty; RTS/CTS off / on (100 B) x SACK off (newreno) / on",
                                  base_, {"channels.0.rts_threshold": ["off", RTS_THRESHOLD_TABLES],
                                          "tcp.variant": ["newreno", "sack"]}, reps))
        return out
    raise ValueError(f"seed-003 part {part!r} is unknown; parts: {', '.join(PARTS)}")


def repetitions(quick: bool) -> int:
    return QUICK_REPETITIONS if quick else FULL_REPETITIONS


def experiments(quick: bool = False) -> List[Experiment]:
    reps = repetitions(quick)
    return [
        Experiment(MTU_SACK, "§III-B.1 and B.4: MTU 500/1000/1500/2296 x SACK on (sack) / off (newreno)",
                   base(), {"path.mtu": list(MTUS), "tcp.variant": ["sack", "newreno"]}, reps),
        Experiment(TIMESTAMPS, "§III-B.2 (and C05): timestamps on/off x header prediction, MTU 2296",
                   base(mtu=2296), {"tcp.timestamps": [True, False],
                                    "tcp.header_prediction": ["standard", "predict_first"]}, reps),
        Experiment(WSCALE, "§III-B.3: window scale on/off, MTU 1500", base(),
                   {"tcp.window_scale": [True, False]}, reps),
        Experiment(HEADER, "§III-B.5: header prediction standard / predict_first, MTU 1500", base(),
                   {"tcp.header_prediction": ["standard", "predict_first"]}, reps),
        Experiment(DELACK, f"§III-B.6: delayed ACK every 2 (200 ms timer) / time-based ({reading('delayed-ack')}), "
                           "MTU 1500", base(), {"tcp.delayed_ack": [dict(DEFAULT_ACK), timed_ack()]}, reps),
        Experiment(CUMULATIVE, "§III-B.7: all modifications (SACK off, predict_first, time-based delayed ACK "
                               f"({reading('delayed-ack')})) at MTU 2296 (Fig 8a) and MTU 1500 (Fig 9); baseline = "
                               "defaults at MTU 1500. Diagnostic: the same with the default delayed ACK (every 2) "
                               "instead of the time-based one",
                   optimized(), {"path.mtu": [2296, 1500], "tcp.delayed_ack": [timed_ack(), dict(DEFAULT_ACK)]},
                   reps),
    ]


def write_experiment(exp: Experiment, directory: Path) -> Path:
    """Write ``<name>.base.toml`` and ``<name>.sweep.toml``; returns the sweep file."""
    return common.write_experiment(exp, directory, PAPER_ID)


def _column(runs, *names: str):
    """Per run, the first of ``names`` that run has, as floats (the single-path and the network forms
    name the transfer's columns differently, and a store may hold both); NaN when none."""
    import pandas as pd

    out = pd.Series(float("nan"), index=runs.index)
    for name in names:
        if name in runs:
            out = out.fillna(pd.to_numeric(runs[name], errors="coerce").astype(float))
    return out


def add_metrics(runs):
    """Per-run efficiency columns: µJ per delivered byte (total, idealized) and bytes per joule; for runs
    until the battery is empty, the lifetime, bytes and retransmissions per full charge; the RTS/CTS
    setting as on/off."""
    runs = runs.copy()
    b = _column(runs, "flow.bytes_delivered", "flows.bulk.bytes_delivered")
    total = _column(runs, "energy.sender.total_j", "nodes.sender.total_j")
    idealized = _column(runs, "energy.sender.idealized_j", "nodes.sender.idealized_j")
    runs["s003.uj_per_byte"] = total / b * 1e6
    runs["s003.uj_per_byte_idealized"] = idealized / b * 1e6
    runs["s003.bytes_per_j"] = b / total
    runs["s003.bytes_per_j_idealized"] = b / idealized
    runs["s003.sender_power_w"] = total / _column(runs, "flow.completion_s", "flows.bulk.completion_s")
    share = _column(runs, "nodes.sender.battery.capacity_j") / FULL_CHARGE_J
    runs["s003.lifetime_min"] = _column(runs, "nodes.sender.battery.lifetime_s") / 60 / share
    runs["s003.bytes_per_charge"] = b / share
    runs["s003.retx_per_charge"] = _column(runs, "flows.bulk.retransmissions") / share
    if "label.channels.0.rts_threshold" in runs:
        runs["s003.rts"] = runs["label.channels.0.rts_threshold"].map(
            lambda v: None if v is None or v != v else ("off" if v == "off" else "on"))
    return runs


def run(out_dir: Path, quick: bool = False, jobs: Optional[int] = None, progress: bool = True,
        log: Callable[[str], None] = print, part: Optional[str] = None, *, transform: Optional[Transform] = None,
        keep: Optional[AbstractSet[str]] = None, report: bool = True) -> Outcome:
    """Run (or resume) every sweep of ``part`` (None: every part) into OUT/runs.duckdb, judge the claims,
    write the report. Claims of a part that did not run are reported as not judged in this output.

    ``transform``: applied to each experiment before it runs (None: run them as defined); ``keep``:
    the sweeps to run (None: all); ``report=False``: judge the claims without writing the report."""
    from tcpenergy.reproduce.seed003 import claims as seed003_claims

    if part is not None and part not in PARTS:
        raise ValueError(f"seed-003 part {part!r} is unknown; available: {', '.join(PARTS)}")
    parts = PARTS if part is None else (part,)
    exps = [e for p in parts for e in part_experiments(p, quick)]

    def evaluate(runs, entries, quick: bool = False):
        return seed003_claims.evaluate(runs, entries, quick=quick, parts=parts)

    return common.run_and_judge(PAPER_ID, exps, out_dir, quick=quick, jobs=jobs, progress=progress,
                                log=log, transform=transform, keep=keep, report=report, add_metrics=add_metrics,
                                evaluate=evaluate, claims=CLAIMS, write_report=write_report)


# --------------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------------

def _setup_section(exps: Sequence[Experiment], runs, quick: bool):
    rows = [[e.name, e.description, e.cells(), len(e.seed_list()), int((runs["sweep"] == e.name).sum()),
             f"sweeps/{e.name}.sweep.toml"] for e in exps]
    intro = (f"Options part: one 11 Mbit/s hop (1 ms each way), {TRANSFER} bulk transfer, {options_loss():.4%} random loss "
             f"on data frames (reading options-loss = {reading('options-loss')}); efficiency is bytes delivered per joule of sender "
             "energy, savings = bytes-per-joule ratio - 1. Battery-lifetime, RTS/CTS and interference parts: the "
             "testbed as an 802.11b channel (11 Mbit/s, basic rate 2 Mbit/s), the sender on the calibrated ideal "
             f"battery ({FULL_CHARGE_WH:g} Wh: 223 min idle), run until it is empty on {charge(quick):g} of the charge "
             "(the interferer's schedule scaled alike) and reported per full charge. Device profile "
             f"{DEVICE} at every station, radio always on. Distance is not modelled."
             + (" Quick mode: fewer seeds, 1/100 of the charge." if quick else ""))
    return table_section(["sweep", "what", "settings", "seeds", "runs stored", "file"], rows, intro, "Experiments")


def _means(runs, sweep: str, by: Sequence[str], columns: Sequence[str]):
    part = runs[runs["sweep"] == sweep]
    if not len(part):
        return None
    return part.groupby(list(by))[list(columns)].mean()


def _lifetime_section(runs):
    rows = []
    bench = _means(runs, BENCHMARK, ["label.flows.0.start"], ["s003.lifetime_min"])
    if bench is not None:
        for start, row in bench.iterrows():
            what = "no traffic" if start != "0s" else f"continuous ping ({reading('ping')})"
            paper = 223 if start != "0s" else 101
            rows.append([f"benchmark: {what}", "", f"{row['s003.lifetime_min']:.1f}", f"{paper}", "", ""])
    mtu = _means(runs, LIFETIME_MTU, ["label.channels.0.mtu"],
                 ["s003.lifetime_min", "s003.bytes_per_charge", "s003.retx_per_charge"])
    if mtu is not None:
        for m, row in mtu.iterrows():
            rows.append(["bulk TCP, defaults", m, f"{row['s003.lifetime_min']:.1f}", "",
                         f"{row['s003.bytes_per_charge'] / 1e9:.3g}", f"{row['s003.retx_per_charge']:.0f}"])
    if not rows:
        return None
    return table_section(["experiment", "MTU", "lifetime (min per charge)", "paper (min)", "GB per charge",
                          "TCP retransmissions per charge"], rows,
                         "§III-A and B.1/B.9: the sender's lifetime on a full charge, mean over seeds.",
                         "Battery lifetime")


def _rts_section(runs):
    rows = []
    for sweep, what in ((RTS_DEFAULT, "defaults, MTU 1500"), (RTS_CUMULATIVE, "all modifications, MTU 2296")):
        m = _means(runs, sweep, ["s003.rts"], ["s003.bytes_per_j", "flows.bulk.goodput_bps"])
        if m is None:
            continue
        for rts, row in m.iterrows():
            rows.append([what, rts, f"{row['s003.bytes_per_j'] / 1e3:.4g}", f"{row['flows.bulk.goodput_bps'] / 1e6:.3g}"])
    if not rows:
        return None
    return table_section(["configuration", "RTS/CTS", "kB per joule (sender)", "goodput (Mbit/s)"], rows,
                         "§III-B.7 Fig 8: bytes per joule with RTS/CTS off and on (1000-byte threshold), mean over seeds.",
                         "RTS/CTS")


PAPER_TABLES = {  # (interference, rts, sack) -> (lifetime min, bytes): Tables I and II
    ("continuous", "on", "off"): (128, 2970847921), ("continuous", "on", "on"): (132, 3058387131),
    ("continuous", "off", "off"): (124, 3811377004), ("continuous", "off", "on"): (117, 3647866576),
    ("intermittent", "on", "off"): (111, 3646355620), ("intermittent", "on", "on"): (112, 3631339254),
    ("intermittent", "off", "off"): (106, 4183867981), ("intermittent", "off", "on"): (109, 4185749921)}


def _interference_section(runs):
    rows = []
    for sweep, kind in ((CONTINUOUS, "continuous"), (INTERMITTENT, "intermittent")):
        m = _means(runs, sweep, ["s003.rts", "tcp.variant"], ["s003.lifetime_min", "s003.bytes_per_charge"])
        if m is None:
            continue
        for (rts, variant), row in m.iterrows():
            sack = "on" if variant == "sack" else "off"
            life, nbytes = PAPER_TABLES[(kind, rts, sack)]
            rows.append([kind, rts, sack, f"{row['s003.lifetime_min']:.1f}", f"{life}",
                         f"{row['s003.bytes_per_charge'] / 1e9:.3g}", f"{nbytes / 1e9:.3g}"])
    if not rows:
        return None
    return table_section(["interference", "RTS/CTS", "SACK", "lifetime (min)", "paper (min)", "GB per charge",
                          "paper (GB)"], rows,
                         "§III-C Tables I and II: all modifications at MTU 1500, a third station's traffic to the "
                         "receiver, the sender until its battery is empty; mean over seeds, per full charge.",
                         "Interfering traffic (Tables I and II)")


def _options_section(runs):
    from tcpenergy.reproduce.seed003.claims import OPTION_TABLE_HEADER, option_rows

    intro = ("Per option: mean over seeds of sender energy per delivered byte (total and idealized, idle "
             "excluded), bytes per joule, goodput, and savings vs the setting's default (bytes-per-joule ratio - 1).")
    return table_section(OPTION_TABLE_HEADER, option_rows(runs), intro, "Option tuning: energy per byte and savings")


def write_report(runs, results: Sequence[Mapping[str, Any]], out_dir: Path, exps: Sequence[Experiment],
                 quick: bool = False) -> List[Path]:
    from tcpenergy.report import write_report as _write_report
    from tcpenergy.report.layout import Layout
    from tcpenergy.reproduce import claims as claims_mod

    intro = (f"Every claim of {PAPER.citation} that the project lists (text and source shipped "
             "with the package). The paper compares single measurements per configuration, so orderings compare "
             "the mean bytes per joule (sender total) over seeds, complete runs only: '>' holds when the means "
             f"differ by more than {claims_mod.TIE_REL:.0%}, '~=' when they are within it; whether the 90 % "
             "confidence intervals overlap is reported in the evidence. 'consistency': holds, but could not fail "
             "in the model (not counted as reproduced). Rules are in each evidence text and in "
             "docs/reproduce/seed-003.md. The same list is in claims.json.")
    sections = [_setup_section(exps, runs, quick),
                _options_section(runs) if (runs["sweep"] == MTU_SACK).any() else None,
                _lifetime_section(runs), _rts_section(runs), _interference_section(runs),
                claims_mod.checklist_section(results, intro)]
    sections = [x for x in sections if x is not None]
    if (runs["sweep"] == MTU_SACK).any():
        frame = runs[runs["sweep"] == MTU_SACK]
        x, line = "label.path.mtu", "label.tcp.variant"
    else:  # a part on the 802.11 channel alone: its first sweep
        frame = runs[runs["sweep"] == exps[0].name]
        x = next((c for c in sorted(frame.columns) if c.startswith("label.")), None)
        line = None
    keep = [c for c in frame.columns if not c.startswith("label.") or c in (x, line)]
    layout = Layout(x=x, line=line, panels=())
    paths = _write_report(frame[keep].reset_index(drop=True), Path(out_dir) / "report", title=TITLE,
                          level=claims_mod.LEVEL, layout=layout,
                          summary_sections=[claims_mod.summary_section(results)], extra_sections=sections)
    return [paths.html, paths.markdown, *paths.figures, *paths.tables]
