"""The seed-003 claims that need code, and the option table; the rest are rules (rules.yaml).

Efficiency is bytes delivered per joule of sender energy (the energy analogue of the paper's bytes per
battery charge). The paper compares single battery-lifetime measurements per configuration, i.e.
values, not intervals, so comparisons are on the means over seeds (claims.MEANS) with the shared tie
tolerance; the 90 % intervals are reported beside them. Rules (also in docs/reproduce/seed-003.md):

* ``A > B``: mean bytes/J of A above B's by more than ``NEGLIGIBLE`` (= claims.TIE_REL, 1 %);
* ``A ~= B``: the means differ by at most ``NEGLIGIBLE``;
* "significant" in the paper's words means a large effect: ``>`` (a saving of at least 1 %);
* a numeric saving (25 %, 8 %) holds when ours has the same sign and lies within a factor 2 of it.

Complete runs only; every verdict counts n complete / n run. Nothing here encodes an expected outcome.
"""

from __future__ import annotations

import math
from typing import Any, Dict, List, Mapping, Sequence, Tuple

from tcpenergy.reproduce import claims as C
from tcpenergy.reproduce import seed003 as S
from tcpenergy.reproduce.seed003 import RULES
from tcpenergy.reproduce.claims import Stat, Verdict

NEGLIGIBLE = C.TIE_REL
BASIS = C.MEANS
_ATTEMPTED: List[Any] = []  # the attempted runs of the evaluation in progress (run counts)
BPJ = "s003.bytes_per_j"
QUICK_NOTE = " (quick mode: fewer seeds per setting, 1/100 of a charge for runs until the battery is empty)"


def stat(values: Sequence[float], level: float = C.LEVEL) -> Stat:
    return C.stat_of(None, values, level)


def _select(runs, sweep: str, eq: Mapping[str, Any]):
    df = runs[runs["sweep"] == sweep]
    for col, value in eq.items():
        col = col.replace("__", ".")
        df = df[df[col] == value]
    return df


def rows(runs, sweep: str, **eq: Any):
    """The complete runs of one setting; its attempted runs are noted as used by the claim."""
    if _ATTEMPTED:
        C.note(_select(_ATTEMPTED[-1], sweep, eq))
    df = _select(runs, sweep, eq)
    if len(df) == 0:
        raise KeyError(f"no complete runs in {sweep} with {eq}")
    return df


def get(runs, sweep: str, metric: str = BPJ, **eq: Any) -> Stat:
    return stat(rows(runs, sweep, **eq)[metric].tolist())


def default_runs(runs, mtu: int = 1500):
    return rows(runs, S.MTU_SACK, path__mtu=mtu, tcp__variant="sack")


def saving(a: Stat, b: Stat) -> float:
    """Bytes-per-joule ratio - 1 of a over b."""
    return a.mean / b.mean - 1


def greater(a: Stat, b: Stat) -> bool:
    return C.relation_holds(a, ">", b, BASIS)


def similar(a: Stat, b: Stat) -> bool:
    return C.relation_holds(a, "~=", b, BASIS)


def _bpj(s: Stat) -> str:
    return f"{s.text(1e-3, 4)} kB/J"


def _sig(a: Stat, b: Stat) -> str:
    return f" (significance, reported only: {C.significance_word(a, b)})"


def _pct(x: float) -> str:
    return f"{x * 100:+.2f} %"


# --------------------------------------------------------------------------------------------
# Option table (report)
# --------------------------------------------------------------------------------------------

OPTION_TABLE_HEADER = ["experiment", "setting", "MTU", "µJ/byte total", "µJ/byte idealized", "bytes/J",
                       "goodput (Mbit/s)", "retransmissions", "savings vs default (bytes/J)", "default"]


def _settings() -> List[Tuple[str, str, int, str, Dict[str, Any], str, Dict[str, Any]]]:
    """(experiment, setting, mtu, sweep, filter, reference sweep, reference filter)."""
    out = []
    for mtu in S.MTUS:
        ref = (S.MTU_SACK, {"path__mtu": 1500, "tcp__variant": "sack"})
        out.append(("MTU sweep (SACK on)", f"MTU {mtu}", mtu, S.MTU_SACK, {"path__mtu": mtu, "tcp__variant": "sack"},
                    *ref))
    for mtu in S.MTUS:
        ref = (S.MTU_SACK, {"path__mtu": mtu, "tcp__variant": "sack"})
        out.append(("SACK off vs on", "SACK off (newreno)", mtu, S.MTU_SACK,
                    {"path__mtu": mtu, "tcp__variant": "newreno"}, *ref))
    ts_ref = (S.TIMESTAMPS, {"tcp__timestamps": True, "tcp__header_prediction": "standard"})
    out += [("timestamps", "TS off", 2296, S.TIMESTAMPS,
             {"tcp__timestamps": False, "tcp__header_prediction": "standard"}, *ts_ref),
            ("timestamps", "TS on + predict_first", 2296, S.TIMESTAMPS,
             {"tcp__timestamps": True, "tcp__header_prediction": "predict_first"}, *ts_ref),
            ("timestamps", "TS off + predict_first", 2296, S.TIMESTAMPS,
             {"tcp__timestamps": False, "tcp__header_prediction": "predict_first"}, *ts_ref),
            ("window scale", "WS off", 1500, S.WSCALE, {"tcp__window_scale": False},
             S.WSCALE, {"tcp__window_scale": True}),
            ("header prediction", "predict_first", 1500, S.HEADER, {"tcp__header_prediction": "predict_first"},
             S.HEADER, {"tcp__header_prediction": "standard"}),
            ("delayed ACK", f"time-based ({S.reading('delayed-ack')})", 1500, S.DELACK, {"tcp__delayed_ack__every": 0},
             S.DELACK, {"tcp__delayed_ack__every": 2})]
    for mtu in (2296, 1500):
        out.append(("cumulative", f"all modifications, MTU {mtu}", mtu, S.CUMULATIVE,
                    {"path__mtu": mtu, "tcp__delayed_ack__every": 0},
                    S.MTU_SACK, {"path__mtu": 1500, "tcp__variant": "sack"}))
    for mtu in (2296, 1500):
        out.append(("cumulative (diagnostic)", f"all but the time-only ACK (every 2), MTU {mtu}", mtu, S.CUMULATIVE,
                    {"path__mtu": mtu, "tcp__delayed_ack__every": 2},
                    S.MTU_SACK, {"path__mtu": 1500, "tcp__variant": "sack"}))
    return out


def option_rows(runs) -> List[List[Any]]:
    out = []
    for exp, setting, mtu, sweep, eq, rsweep, req in _settings():
        try:
            df = rows(runs, sweep, **eq)
            ref = get(runs, rsweep, **req)
        except (KeyError, ValueError):
            out.append([exp, setting, mtu, "missing", "", "", "", "", "", ""])
            continue
        bpj = stat(df[BPJ].tolist())
        out.append([exp, setting, mtu, f"{df['s003.uj_per_byte'].mean():.4g}",
                    f"{df['s003.uj_per_byte_idealized'].mean():.4g}", f"{bpj.mean:.0f}",
                    f"{df['flow.goodput_bps'].mean() / 1e6:.3g}", f"{df['flow.retransmissions'].mean():.1f}",
                    _pct(saving(bpj, ref)),
                    ", ".join(f"{k.split('__')[-1]}={v}" for k, v in req.items()) + f" ({rsweep})"])
    return out


# --------------------------------------------------------------------------------------------
# Evaluators
# --------------------------------------------------------------------------------------------

def c08(runs, entry) -> Verdict:
    pf = get(runs, S.HEADER, tcp__header_prediction="predict_first")
    std = get(runs, S.HEADER, tcp__header_prediction="standard")
    on = get(runs, S.TIMESTAMPS, tcp__timestamps=True, tcp__header_prediction="standard")
    off = get(runs, S.TIMESTAMPS, tcp__timestamps=False, tcp__header_prediction="standard")
    g, gts = saving(pf, std), saving(off, on)
    comparable = g > 0 and gts > 0 and 0.5 <= g / gts <= 2
    ok = greater(pf, std) and g >= NEGLIGIBLE and comparable
    ev = (f"MTU 1500: predict_first {_bpj(pf)} vs standard {_bpj(std)}: savings {_pct(g)}; timestamps-off "
          f"savings (MTU 2296) {_pct(gts)}. Rule: '>' with savings >= 1 %, and the two savings within a factor 2."
          f"{_sig(pf, std)}")
    return C.verdict(ok, ev, "The header-prediction gain is not significant (>= 1 %) or not comparable to the "
                     "timestamps-off gain in our model.", {"saving_hp": g, "saving_ts_off": gts})


def c22(runs, entry) -> Verdict:
    mss = int(entry["numbers"]["mss_bytes"])
    p = mss / 2 ** 32
    ev = (f"MSS/2^32 = {mss}/2^32 = {p:.3g} = 2^{math.log2(p):.2f} (the paper rounds 2296 to 2^11: 2^-21); "
          f"checksum 2^-16 = {2 ** -16:.3g}. Analytical check: {p:.3g} < {2 ** -16:.3g}.")
    return C.consistency(p < 2 ** -16, ev, "arithmetic on the paper's own numbers, no runs: it checks the "
                         "paper's reasoning, not a measured result.", "The hazard is not below the checksum's.",
                         {"p_hazard": p})


# The claims judged by code (rules.yaml marks them `code: true`): C08 compares two savings,
# C22 is arithmetic.
CODE = {"S003-C08": c08, "S003-C22": c22}

# The part whose runs each claim reads (the others: the options part; C13 and C22 read none).
CLAIM_PARTS = {"S003-C01": S.LIFETIME, "S003-C03": S.LIFETIME, "S003-C14": S.LIFETIME, "S003-C11": S.RTS_CTS,
               **{f"S003-C{i}": S.INTERFERENCE for i in range(15, 22)}, "S003-C13": None, "S003-C22": None}


# The energy claims: those whose rule reads an energy metric of the runs (bytes per joule, the
# savings computed from it, anything measured over a battery's lifetime, which the energy drawn
# sets). Only these can change when a device-profile figure changes (`tcpenergy reproduce
# --sensitivity`); the others are not modelled or arithmetic, and the sensitivity sweep checks that
# their verdicts stay put.
ENERGY_CLAIMS = frozenset({"S003-C01", "S003-C02", "S003-C03", "S003-C04", "S003-C05", "S003-C06", "S003-C07",
                           "S003-C08", "S003-C09", "S003-C10", "S003-C11", "S003-C12", "S003-C14", "S003-C15", "S003-C16",
                           "S003-C17", "S003-C18", "S003-C19", "S003-C20", "S003-C21"})

def evaluate(runs, entries: Sequence[Mapping[str, Any]], quick: bool = False,
             parts: Sequence[str] = S.PARTS) -> List[Dict[str, Any]]:
    """One claims.json record per entry, judged by its rule in rules.yaml. ``runs``: every
    attempted run (with add_metrics); statistics use the complete runs, each record counts n
    complete / n run. ``parts``: the parts that ran; a claim of another part is reported as not
    judged in this output (not_modelled, saying which part to run)."""
    judged = [e for e in entries if CLAIM_PARTS.get(e["id"], S.OPTIONS) in (*parts, None)]
    skipped = {e["id"]: CLAIM_PARTS.get(e["id"], S.OPTIONS) for e in entries if e not in judged}
    records = {r["id"]: r for r in _evaluate(runs, judged, quick)}
    for e in entries:
        if e["id"] in skipped:
            part = skipped[e["id"]]
            records[e["id"]] = C.claim_record(e, C.not_modelled(
                f"Not judged in this output: the claim reads the '{part}' part, which did not run "
                f"(run `tcpenergy reproduce seed-003 --part {part}`, or without --part for every part).",
                "No runs of its part in this output."))
    return [records[e["id"]] for e in entries]


def _evaluate(runs, entries: Sequence[Mapping[str, Any]], quick: bool) -> List[Dict[str, Any]]:
    from tcpenergy.reproduce import rules

    attempted = C.mark_settings(runs)
    usable = C.usable_runs(attempted)
    _ATTEMPTED.append(attempted)
    try:
        def judged(fn):
            def one(entry):
                result = fn(usable, entry)
                if quick and result.status not in (C.NOT_MODELLED, C.CONSISTENCY) and entry.get("kind") != "analytical":
                    result.evidence += QUICK_NOTE
                return result
            return one

        code = {cid: judged(fn) for cid, fn in CODE.items()}
        return rules.evaluate(runs, entries, RULES, code, quick, quick_note=QUICK_NOTE)
    finally:
        _ATTEMPTED.pop()
