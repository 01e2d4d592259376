"""Huang et al. 2012 ("A Close Examination of Performance and Power Characteristics of 4G LTE
Networks", MobiSys 2012): the energy of LTE, 3G and Wi-Fi downloads on a phone with the paper's
RRC power model (the profiles huang2012-lte-phone, -3g-phone and -wifi-phone), and the tradeoff of
LTE's tail timer on intermittent traffic.

Two groups of experiments:

* **Transfers.** A server sends one download of 10 kB to 50 MB to the phone, which starts in
  RRC_IDLE; one sweep per technology (its profile and link rates, reading ``link-rates``). The
  meter runs on for AFTER_COMPLETION after the transfer completes, longer than any radio's tail,
  so each download is charged its promotion, its data and its whole tail. A transfer's energy
  is the one of the reading ``transfer-energy``.
* **Tail timer.** The web-like fetches and UDP keep-alive of scenarios/phone-web-keepalive.toml
  (the traffic of the reading ``tail-traffic``) on the LTE phone, with T_tail = 1 to 11.576 s set
  through the long-DRX stage's duration ``radio.rrc.tail.2.duration`` of the phone's profile as an
  inline table; the phone's radio energy over the session and its number of promotions.

The runs of a transfer are deterministic (a loss-free link has no random component): every seed
gives the same run. The tail-timer runs differ by seed (exponential fetch intervals).
docs/reproduce/huang-2012.md describes the setup, readings and rules.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence

from tcpenergy.reproduce import common, readings
from tcpenergy.reproduce.claims import paper_file
from tcpenergy.reproduce.common import Experiment, Outcome, table_section
from tcpenergy.reproduce.registry import Paper

PAPER_ID = "huang-2012"
TITLE = "Reproduction of Huang et al. 2012: LTE, 3G and Wi-Fi transfer energy and LTE's tail timer"

PAPER = Paper(
    id=PAPER_ID,
    description=("Huang et al.: energy of LTE, 3G and Wi-Fi downloads on a phone (promotion, data, "
                 "tail) and LTE's tail-timer tradeoff"),
    citation=('J. Huang, F. Qian, A. Gerber, Z. M. Mao, S. Sen and O. Spatscheck, "A Close Examination of '
              'Performance and Power Characteristics of 4G LTE Networks", MobiSys 2012'),
)
CLAIMS = paper_file(__name__, "claims.yaml")  # each claim's text and its source in the paper
RULES = paper_file(__name__, "rules.yaml")  # the rules judging them (docs/reproduce/rules.md)

PROFILES = {"lte": "huang2012-lte-phone", "3g": "huang2012-3g-phone", "wifi": "huang2012-wifi-phone"}
TECH_NAMES = {"lte": "LTE", "3g": "3G", "wifi": "Wi-Fi"}
SERVER = "wired-host"
# Link rates per technology (reading link-rates): (downlink, uplink). LTE's are those of the
# project's phone scenarios; the uplink carries only ACKs and changes no transfer's energy.
LINK_RATES = {
    "mid": {"lte": ("13Mbps", "6Mbps"), "3g": ("1.5Mbps", "0.5Mbps"), "wifi": ("15Mbps", "15Mbps")},
    "low": {"lte": ("13Mbps", "6Mbps"), "3g": ("1Mbps", "0.5Mbps"), "wifi": ("10Mbps", "10Mbps")},
    "high": {"lte": ("13Mbps", "6Mbps"), "3g": ("2Mbps", "0.5Mbps"), "wifi": ("20Mbps", "20Mbps")},
}
ONE_WAY_DELAY = "35ms"  # LTE's ~70 ms round trip, for every technology: only the radio and its rate differ
QUEUE = 200
# Longer than the longest tail (LTE: 11.576 s from the last packet, which is the FIN exchange just
# after completion), so every transfer is charged its whole tail.
AFTER_COMPLETION = "15s"
SIZES = (10_000, 100_000, 1_000_000, 10_000_000, 50_000_000)  # bytes
QUICK_SIZES = (10_000, 1_000_000, 10_000_000)
# Which transfers the claims call short (promotion and tail dominate) and bulk: the sizes at both
# ends of the sweep, two decades apart from the 1 MB in between.
SHORT_MAX, BULK_MIN = 100_000, 10_000_000
TRANSFER_SEEDS = {True: 2, False: 3}  # deterministic runs: the framework's minimum of 2, 3 on a full run

# The tail timer T_tail (from the last packet to RRC_IDLE, Table 1: 11.576 s) is swept by the
# long-DRX stage's duration: T_tail = continuous reception + short DRX + long DRX.
TAIL_S = (1.0, 3.0, 5.0, 8.0, 11.576)
QUICK_TAIL_S = (1.0, 5.0, 11.576)
TAIL_KEY = "nodes.phone.profile.radio.rrc.tail.2.duration"
TAIL_REPETITIONS = {True: 3, False: 10}
SESSION_START_S, SESSION_STOP_S = 1, 121  # as scenarios/phone-web-keepalive.toml
TAIL_AFTER = "12s"  # the last burst's tail, up to the longest T_tail swept, is charged

TRANSFER = "h12-transfer"  # + "-<tech>"
TAIL = "h12-tail"


def reading(key: str) -> str:
    """The alternative in force for one of readings.yaml's readings (the taken one outside a reproduction)."""
    return readings.in_force(__name__, key)


def transfer_base(tech: str) -> Dict[str, Any]:
    """One download from a wired server to the phone on ``tech``'s radio, at the rates of the
    reading link-rates; the phone starts in RRC_IDLE, and the meter runs AFTER_COMPLETION past the
    transfer's completion."""
    down, up = LINK_RATES[reading("link-rates")][tech]
    return {
        "name": f"huang2012-transfer-{tech}", "seed": 1, "stop_after": "30min",
        "path": {"mtu": 1500,
                 "forward": {"rate": down, "delay": ONE_WAY_DELAY, "queue": QUEUE},   # server -> phone
                 "reverse": {"rate": up, "delay": ONE_WAY_DELAY, "queue": QUEUE}},
        "tcp": {"stack": "linux-6"},
        "traffic": {"kind": "bulk", "bytes": SIZES[0]},
        "energy": {"sender": SERVER, "receiver": PROFILES[tech], "after_completion": AFTER_COMPLETION},
    }


def _seconds(text: str) -> float:
    from tcpenergy.topology import duration_ns

    return duration_ns(text) / 1e9


def lte_profile() -> Dict[str, Any]:
    """The LTE phone's profile as an inline table, so that its timers can be set per run."""
    return common.profile_table(PROFILES["lte"])


def long_drx_duration(t_tail_s: float, profile: Optional[Mapping[str, Any]] = None) -> str:
    """The long-DRX stage's duration that makes the tail last ``t_tail_s`` from the last packet:
    T_tail minus the stages before it (continuous reception, short DRX), in whole microseconds."""
    tails = (profile or lte_profile())["radio"]["rrc"]["tail"]
    before = sum(_seconds(stage["duration"]) for stage in tails[:2])
    if t_tail_s <= before:
        raise ValueError(f"T_tail {t_tail_s:g} s must be longer than the stages before long DRX ({before:g} s)")
    return f"{round((t_tail_s - before) * 1e6)}us"


def tail_base() -> Dict[str, Any]:
    """scenarios/phone-web-keepalive.toml: a web-like client fetching 30 kB about every 20 s and a
    56-byte UDP echo every 30 s for two minutes (reading tail-traffic: both, or one of them), the
    phone on the LTE profile as an inline table, its last burst's tail charged (TAIL_AFTER). The
    keep-alive flow is listed first: the phone is then the first flow's source, the node the
    reproduction's tools (``--sensitivity``) take as the reference."""
    web = {"name": "web", "from": "server", "to": "phone", "transport": "tcp",
           "traffic": {"kind": "on_off", "message": 30000, "interval": "20s"},
           "start": f"{SESSION_START_S}s", "stop": f"{SESSION_STOP_S}s"}
    keepalive = {"name": "keepalive", "from": "phone", "to": "server", "transport": "udp", "echo": True,
                 "traffic": {"kind": "on_off", "message": 56, "interval": "30s", "distribution": "fixed"},
                 "start": f"{SESSION_START_S + 1}s", "stop": f"{SESSION_STOP_S}s"}
    flows = {"web-keepalive": [keepalive, web], "web": [web], "keepalive": [keepalive]}[reading("tail-traffic")]
    down, up = LINK_RATES[reading("link-rates")]["lte"]
    return {
        "name": f"huang2012-tail-{reading('tail-traffic')}", "seed": 1, "stop_after": "150s",
        "energy": {"radio_policy": "always_on", "after_completion": TAIL_AFTER},
        "nodes": {"phone": {"profile": lte_profile()}, "server": {"profile": SERVER}},
        "links": [{"between": ["server", "phone"], "rate": down, "delay": ONE_WAY_DELAY, "queue": QUEUE,
                   "reverse": {"rate": up, "delay": ONE_WAY_DELAY, "queue": QUEUE}}],
        "flows": flows,
    }


def experiments(quick: bool = False) -> List[Experiment]:
    sizes = QUICK_SIZES if quick else SIZES
    rates = LINK_RATES[reading("link-rates")]
    tails = QUICK_TAIL_S if quick else TAIL_S
    profile = lte_profile()
    # The tail-timer sweep comes first: its first flow leaves the phone, the node the generic
    # tools (``--sensitivity``) read the reference profile from.
    out = [Experiment(TAIL, f"§6: {reading('tail-traffic')} traffic on the LTE phone for two minutes, "
                            f"T_tail = {', '.join(f'{t:g}' for t in tails)} s (the long-DRX stage's duration)",
                      tail_base(), {TAIL_KEY: [long_drx_duration(t, profile) for t in tails]},
                      TAIL_REPETITIONS[quick])]
    out += [Experiment(f"{TRANSFER}-{tech}",
                       f"One download of {_size_text(sizes[0])} to {_size_text(sizes[-1])} to the phone on "
                       f"{TECH_NAMES[tech]} ({PROFILES[tech]}), {rates[tech][0]} down and {rates[tech][1]} up, "
                       f"35 ms one way, from RRC_IDLE, metered {AFTER_COMPLETION} past completion",
                       transfer_base(tech), {"traffic.bytes": list(sizes)}, TRANSFER_SEEDS[quick])
            for tech in PROFILES]
    return out


def write_experiment(exp: Experiment, directory: Path) -> Path:
    return common.write_experiment(exp, directory, PAPER_ID)


def size_class(size: float) -> str:
    """"short" (the claims' small transfers, up to SHORT_MAX bytes), "bulk" (from BULK_MIN) or "mid"."""
    return "short" if size <= SHORT_MAX else "bulk" if size >= BULK_MIN else "mid"


def _size_text(n: float) -> str:
    for unit, scale in (("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:g} {unit}"
    return f"{n:g} B"


# The radio's energy by component in the record's breakdown (docs/models/cellular.md).
PROMOTION, TAIL_PART, SLEEP = "radio_transitions", "radio_idle", "radio_sleep"
DATA = ("radio_tx", "radio_rx")
RADIO = (*DATA, TAIL_PART, SLEEP, PROMOTION)


def add_metrics(runs):
    """Per run: the technology and transfer size (transfers), T_tail (tail timer); the phone's
    radio energy by component (promotion, data, tail), its transfer energy (reading
    transfer-energy), that energy per delivered bit, its whole radio energy and its promotions."""
    import pandas as pd

    runs = runs.copy()
    sweep = runs["sweep"].astype(str)
    transfer = sweep.str.startswith(TRANSFER + "-")
    tail = sweep == TAIL

    def num(column: str):
        return (pd.to_numeric(runs[column], errors="coerce").astype(float) if column in runs
                else pd.Series(math.nan, index=runs.index))

    def phone(field: str):
        # the phone is the path's receiver in a transfer and node "phone" in the tail-timer network
        return num(f"energy.receiver.{field}").where(transfer, num(f"nodes.phone.{field}"))

    runs["huang.tech"] = sweep.where(transfer).str.removeprefix(TRANSFER + "-")
    runs["huang.bytes"] = num("label.traffic.bytes").where(transfer)
    # the size in MB for the claims' evidence, and as a label for the figures' categorical axis
    runs["huang.size_mb"] = runs["huang.bytes"] / 1e6
    runs["huang.size"] = runs["huang.bytes"].map(lambda b: _size_text(b) if b == b else None)
    runs["huang.size_class"] = runs["huang.bytes"].map(lambda b: size_class(b) if b == b else None)
    long_drx = runs[f"label.{TAIL_KEY}"].map(lambda v: _seconds(v) if isinstance(v, str) else math.nan) \
        if f"label.{TAIL_KEY}" in runs else pd.Series(math.nan, index=runs.index)
    before = sum(_seconds(stage["duration"]) for stage in lte_profile()["radio"]["rrc"]["tail"][:2])
    runs["huang.t_tail_s"] = (long_drx + before).where(tail).round(6)
    part = {name: phone(f"breakdown_j.{name}") for name in RADIO}
    runs["huang.promotion_j"] = part[PROMOTION]
    runs["huang.data_j"] = part["radio_tx"] + part["radio_rx"]
    runs["huang.tail_j"] = part[TAIL_PART]
    runs["huang.tail_s"] = phone("radio_idle_s")
    runs["huang.radio_j"] = sum(part.values())
    runs["huang.phone_j"] = phone("total_j")
    runs["huang.promotions"] = phone("radio_wakeups")
    charged = {"promotion-data-tail": runs["huang.promotion_j"] + runs["huang.data_j"] + runs["huang.tail_j"],
               "radio": runs["huang.radio_j"], "phone": runs["huang.phone_j"]}[reading("transfer-energy")]
    runs["huang.transfer_j"] = charged.where(transfer)
    bits = num("flow.bytes_delivered") * 8
    runs["huang.uj_per_bit"] = (runs["huang.transfer_j"] / bits * 1e6).where(transfer & (bits > 0))
    return runs


def run(out_dir: Path, **options: Any) -> Outcome:
    """Run (or resume) every sweep into OUT/runs.duckdb, judge the claims, write the report
    (``options``: those of ``common.run_package``)."""
    return common.run_package(sys.modules[__name__], out_dir, **options)


# --------------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------------

def transfer_rows(runs) -> List[List[Any]]:
    """Per technology and size, means over seeds: transfer energy and its parts, per bit, tail time."""
    part = runs[runs["sweep"].astype(str).str.startswith(TRANSFER + "-")]
    if not len(part):
        return []
    cols = ["huang.transfer_j", "huang.promotion_j", "huang.data_j", "huang.tail_j", "huang.tail_s",
            "huang.uj_per_bit", "flow.completion_s"]
    means = part.groupby(["huang.tech", "huang.bytes"])[cols].mean()
    rows = []
    for tech in PROFILES:
        for size in sorted({b for t, b in means.index if t == tech}):
            row = means.loc[(tech, size)]
            rows.append([TECH_NAMES[tech], _size_text(size)] + [f"{row[c]:.4g}" for c in cols])
    return rows


def tail_rows(runs) -> List[List[Any]]:
    part = runs[runs["sweep"] == TAIL]
    if not len(part):
        return []
    cols = ["huang.radio_j", "huang.promotions", "huang.tail_s"]
    means = part.groupby("huang.t_tail_s")[cols].mean()
    return [[f"{t:g}"] + [f"{means.loc[t, c]:.4g}" for c in cols] for t in sorted(means.index)]


def _figure_metrics():
    from tcpenergy.report.metrics import Metric

    return (Metric("transfer_energy_per_bit", "huang.uj_per_bit", "E/bit",
                    "Transfer energy per bit (reading transfer-energy)", "µJ/bit"),
            Metric("transfer_energy", "huang.transfer_j", "E", "Transfer energy of the phone's radio", "J"),
            Metric("goodput", "flow.goodput_bps", "τ", "Goodput", "Mbit/s", 1e-6, True))


FIGURES = _figure_metrics()


def write_report(runs, results: Sequence[Mapping[str, Any]], out_dir: Path, exps: Sequence[Experiment],
                 quick: bool = False) -> List[Path]:
    from tcpenergy.report import write_report as _write_report
    from tcpenergy.report.layout import Layout
    from tcpenergy.reproduce import claims as claims_mod

    rows = [[e.name, e.description, e.cells(), len(e.seed_list()), int((runs["sweep"] == e.name).sum())]
            for e in exps]
    in_force = ", ".join(f"{key} = {reading(key)}" for key in readings.load(__name__))
    sections = [
        table_section(["sweep", "what", "settings", "seeds", "runs stored"], rows,
                      f"Profiles {', '.join(PROFILES.values())} (Huang et al. 2012, Tables 1, 3 and 4) for the "
                      f"phone, {SERVER} for the server. Readings in force: {in_force}."
                      + (" Quick mode: fewer sizes, T_tail values and seeds." if quick else ""), "Experiments"),
        table_section(["radio", "size", "transfer energy (J)", "promotion (J)", "data (J)", "tail (J)", "tail (s)",
                       "per bit (µJ)", "completion (s)"], transfer_rows(runs),
                      "Each download's energy by part, mean over seeds: promotion (radio_transitions), data "
                      "(radio_tx + radio_rx), tail (radio_idle: connected without data, the gaps between "
                      "packets and waits for the link included); transfer energy by the reading transfer-energy.", "Transfers"),
        table_section(["T_tail (s)", "radio energy (J)", "promotions", "tail time (s)"], tail_rows(runs),
                      "The LTE phone's radio energy over the session and its promotions, by tail timer, "
                      "mean over seeds.", "Tail timer"),
    ]
    intro = (f"Every claim of {PAPER.citation} that the project lists (text and source shipped with the "
             "package). Rules are in each evidence text, in rules.yaml and docs/reproduce/huang-2012.md; the "
             "same list is in claims.json.")
    sections.append(claims_mod.checklist_section(results, intro))
    frame = runs[runs["sweep"].astype(str).str.startswith(TRANSFER + "-")].sort_values("huang.bytes")
    frame = frame.assign(**{"huang.radio": frame["huang.tech"].map(TECH_NAMES)})
    keep = [c for c in frame.columns if not c.startswith("label.")]
    layout = Layout(x="huang.size", line="huang.radio", panels=())
    paths = _write_report(frame[keep].reset_index(drop=True), Path(out_dir) / "report", title=TITLE,
                          level=claims_mod.LEVEL, layout=layout,
                          summary_sections=[claims_mod.summary_section(results)], extra_sections=sections,
                          figure_metrics=FIGURES, all_runs=len(runs))
    return [paths.html, paths.markdown, *paths.figures, *paths.tables]
