"""Seed 003 (Agrawal & Singh, TCP's energy over one 802.11b hop), part "options": the Linux option tuning.

The paper measures bytes delivered per battery charge. We have no battery model yet, so each option
experiment is a fixed-size bulk transfer over one 11 Mbit/s hop with the paper's WaveLAN Turbo /
Samsung laptop profile, and efficiency is bytes delivered per joule of sender energy (the energy
analogue of bytes per charge). "x % savings" = bytes-per-joule ratio - 1 (the paper's bytes per battery charge).

Modelling choices are explained in docs/reproduce/seed-003.md; the cumulative configuration is the
shipped scenarios/seed003-options.toml (built here, since scenarios/ is not in the wheel).
"""

from __future__ import annotations

from pathlib import Path
from typing import AbstractSet, Any, Callable, Dict, List, Mapping, Optional, Sequence

from tcpenergy.reproduce import common
from tcpenergy.reproduce.common import LINUX22, Experiment, Outcome, Transform, table_section

PAPER_ID = "seed-003"
TITLE = "Reproduction of seed 003 (options part): Linux TCP option tuning over one 11 Mbit/s 802.11b hop"
PARTS = ("options",)  # the parts not built yet are listed in tcpenergy.reproduce.PARTS

DEVICE = "agrawal2003-samsung-wavelan-turbo"
LOSS = 0.001  # small random loss: the paper's link is nearly error-free (~50 TCP retransmissions per lifetime)
TRANSFER = "20MB"
MTUS = (500, 1000, 1500, 2296)
FULL_REPETITIONS = 10
QUICK_REPETITIONS = 3

DEFAULT_ACK = {"every": 2, "timeout": "200ms"}   # Linux: an ACK per two full segments, plus the timer
TIMED_ACK = {"every": 0, "timeout": "500ms"}     # seed 003 §II-F: one ACK per 500 ms

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
        "path": {"mtu": mtu, "forward": direction([{"kind": "bernoulli", "p": LOSS}]), "reverse": direction([])},
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
    return base("seed003-options", mtu=mtu, tcp={"variant": "newreno", "header_prediction": "predict_first",
                                                  "delayed_ack": dict(TIMED_ACK)})


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
        Experiment(DELACK, "§III-B.6: delayed ACK every 2 (200 ms timer) / time-only 500 ms, MTU 1500", base(),
                   {"tcp.delayed_ack": [dict(DEFAULT_ACK), dict(TIMED_ACK)]}, reps),
        Experiment(CUMULATIVE, "§III-B.7: all modifications (SACK off, predict_first, 500 ms time-only ACK) "
                               "at MTU 2296 (Fig 8a) and MTU 1500 (Fig 9); baseline = defaults at MTU 1500. "
                               "Diagnostic: the same with the default delayed ACK (every 2) instead of time-only",
                   optimized(), {"path.mtu": [2296, 1500], "tcp.delayed_ack": [dict(TIMED_ACK), dict(DEFAULT_ACK)]},
                   reps),
    ]


def write_experiment(exp: Experiment, directory: Path) -> Path:
    """Write ``<name>.base.toml`` and ``<name>.sweep.toml``; returns the sweep file."""
    return common.write_experiment(exp, directory, PAPER_ID)


def add_metrics(runs):
    """Per-run efficiency columns: µJ per delivered byte (total, idealized) and bytes per joule."""
    runs = runs.copy()
    b = runs["flow.bytes_delivered"].astype(float)
    runs["s003.uj_per_byte"] = runs["energy.sender.total_j"].astype(float) / b * 1e6
    runs["s003.uj_per_byte_idealized"] = runs["energy.sender.idealized_j"].astype(float) / b * 1e6
    runs["s003.bytes_per_j"] = b / runs["energy.sender.total_j"].astype(float)
    runs["s003.bytes_per_j_idealized"] = b / runs["energy.sender.idealized_j"].astype(float)
    runs["s003.sender_power_w"] = runs["energy.sender.total_j"].astype(float) / runs["flow.completion_s"].astype(float)
    return runs


def run(out_dir: Path, quick: bool = False, jobs: Optional[int] = None, progress: bool = True,
        log: Callable[[str], None] = print, part: str = "options", *, transform: Optional[Transform] = None,
        keep: Optional[AbstractSet[str]] = None, report: bool = True) -> Outcome:
    """Run (or resume) every sweep of ``part`` into OUT/runs.duckdb, judge the claims, write the report.

    ``transform``: applied to each experiment before it runs (None: run them as defined); ``keep``:
    the sweeps to run (None: all); ``report=False``: judge the claims without writing the report."""
    from tcpenergy.reproduce import seed003_claims

    if part not in PARTS:
        raise ValueError(f"seed-003 part {part!r} is not built; available: {', '.join(PARTS)}")
    return common.run_and_judge(PAPER_ID, experiments(quick), out_dir, quick=quick, jobs=jobs, progress=progress,
                                log=log, transform=transform, keep=keep, report=report, add_metrics=add_metrics,
                                evaluate=seed003_claims.evaluate, claims_file="claims_s003.yaml", write_report=write_report)


# --------------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------------

def _setup_section(exps: Sequence[Experiment], runs, quick: bool):
    rows = [[e.name, e.description, e.cells(), len(e.seed_list()), int((runs["sweep"] == e.name).sum()),
             f"sweeps/{e.name}.sweep.toml"] for e in exps]
    intro = (f"One 11 Mbit/s hop (1 ms each way), {TRANSFER} bulk transfer, device profile {DEVICE} at both ends, "
             f"radio always on, {LOSS:.1%} random loss on data frames (the paper's link is nearly error-free: "
             "about 50 TCP retransmissions per battery lifetime). Efficiency is bytes delivered per joule of "
             "sender energy instead of bytes per battery charge (no battery model yet); savings = bytes-per-joule "
             "ratio - 1. Battery lifetime, RTS/CTS, interference and distance are not modelled."
             + (" Quick mode: 3 seeds per setting instead of 10." if quick else ""))
    return table_section(["sweep", "what", "settings", "seeds", "runs stored", "file"], rows, intro, "Experiments")


def _options_section(runs):
    from tcpenergy.reproduce.seed003_claims import OPTION_TABLE_HEADER, option_rows

    intro = ("Per option: mean over seeds of sender energy per delivered byte (total and idealized, idle "
             "excluded), bytes per joule, goodput, and savings vs the setting's default (bytes-per-joule ratio - 1).")
    return table_section(OPTION_TABLE_HEADER, option_rows(runs), intro, "Option tuning: energy per byte and savings")


def write_report(runs, results: Sequence[Mapping[str, Any]], out_dir: Path, exps: Sequence[Experiment],
                 quick: bool = False) -> List[Path]:
    from tcpenergy.report import write_report as _write_report
    from tcpenergy.report.layout import Layout
    from tcpenergy.reproduce import claims as claims_mod

    intro = (f"Every claim of {claims_mod.CITATIONS[PAPER_ID]} that the project lists (text and source shipped "
             "with the package). The paper compares single measurements per configuration, so orderings compare "
             "the mean bytes per joule (sender total) over seeds, complete runs only: '>' holds when the means "
             f"differ by more than {claims_mod.TIE_REL:.0%}, '~=' when they are within it; whether the 90 % "
             "confidence intervals overlap is reported in the evidence. 'consistency': holds, but could not fail "
             "in the model (not counted as reproduced). Rules are in each evidence text and in "
             "docs/reproduce/seed-003.md. The same list is in claims.json.")
    sections = [_setup_section(exps, runs, quick), _options_section(runs),
                claims_mod.checklist_section(results, intro)]
    frame = runs[runs["sweep"] == MTU_SACK]
    keep = [c for c in frame.columns if not c.startswith("label.") or c in ("label.path.mtu", "label.tcp.variant")]
    layout = Layout(x="label.path.mtu", line="label.tcp.variant", panels=())
    paths = _write_report(frame[keep].reset_index(drop=True), Path(out_dir) / "report", title=TITLE,
                          level=claims_mod.LEVEL, layout=layout,
                          summary_sections=[claims_mod.summary_section(results)], extra_sections=sections)
    return [paths.html, paths.markdown, *paths.figures, *paths.tables]
