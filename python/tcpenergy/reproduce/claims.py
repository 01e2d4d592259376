"""Claims checklist machinery: load a paper's claims, judge relations from runs, write the results.

A claim entry (from ``data/claims_<paper>.yaml``, a copy of the paper's entries in
shared/spec/claims.yaml) is judged by an evaluator that returns a :class:`Verdict`; this module
supplies what evaluators share:

* statistics per variant: the mean over the RTT sweep with its confidence interval, computed the
  way the report's rank table computes it (``tcpenergy.report.ranking.variant_means``: per seed,
  the runs of a cell are averaged over RTT; the per-seed averages are the replicates);
* the comparison rules (see :func:`relation_holds`), and the parser for chains such as
  ``E[SACK] < E[NewReno] ~= E[Reno]``;
* writing OUT/claims.json and the checklist section of the report.
"""

from __future__ import annotations

import html
import json
import math
import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

HOLDS = "holds"
DOES_NOT_HOLD = "does_not_hold"
NOT_MODELLED = "not_modelled"
STATUSES = (HOLDS, DOES_NOT_HOLD, NOT_MODELLED)

LEVEL = 0.90  # seed 000 §5: 90 % confidence intervals

# Protocol names as claims.yaml writes them -> engine variant names.
PROTOCOLS = {"reno": "reno", "newreno": "newreno", "sack": "sack", "tahoe": "tahoe"}
DISPLAY = {"reno": "Reno", "newreno": "NewReno", "sack": "SACK", "tahoe": "Tahoe"}

# Metric symbols of claims.yaml -> result column, unit for evidence, scale, higher is better.
METRICS: Dict[str, Tuple[str, str, float]] = {
    "E": ("energy.sender.per_bit_total_uj", "µJ/bit", 1.0),
    "E_I": ("energy.sender.per_bit_idealized_uj", "µJ/bit", 1.0),
    "tau": ("flow.goodput_bps", "kbit/s", 1e-3),
    "Timeouts": ("flow.timeouts", "timeouts/run", 1.0),
    "Retx": ("flow.retransmissions", "retransmissions/run", 1.0),
}

RELATIONS = ("<", ">", "~=", "<=", ">=")


# --------------------------------------------------------------------------------------------
# Claims data
# --------------------------------------------------------------------------------------------

def claims_file(name: str = "claims_s000.yaml"):
    """The packaged claims file (a Traversable; use ``.read_text()``)."""
    return resources.files("tcpenergy.reproduce").joinpath("data", name)


def load_claims(name: str = "claims_s000.yaml") -> List[Dict[str, Any]]:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    entries = yaml.load(claims_file(name).read_text(encoding="utf-8"), Loader=loader)
    if not isinstance(entries, list) or not all(isinstance(e, dict) and "id" in e for e in entries):
        raise ValueError(f"{name}: expected a list of claim entries with ids")
    return entries


# --------------------------------------------------------------------------------------------
# Verdicts
# --------------------------------------------------------------------------------------------

@dataclass
class Verdict:
    status: str
    evidence: str
    explanation: Optional[str] = None
    data: Dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"unknown claim status {self.status!r}")
        if self.status != HOLDS and not self.explanation:
            raise ValueError("a claim that does not hold or is not modelled needs an explanation")


def verdict(ok: bool, evidence: str, why_not: str, data: Optional[Dict[str, Any]] = None,
            note: Optional[str] = None) -> Verdict:
    """holds / does_not_hold from a boolean; ``note`` is kept as the explanation when it holds."""
    if ok:
        return Verdict(HOLDS, evidence, note, data or {})
    return Verdict(DOES_NOT_HOLD, evidence, why_not, data or {})


def not_modelled(reason: str, evidence: str = "No runs: the simulator does not model what this claim needs.") -> Verdict:
    return Verdict(NOT_MODELLED, evidence, reason)


def claim_record(entry: Mapping[str, Any], result: Verdict) -> Dict[str, Any]:
    record = {
        "id": entry["id"],
        "status": result.status,
        "claim": str(entry.get("claim", "")).strip(),
        "where": entry.get("where"),
        "kind": entry.get("kind"),
        "metric": entry.get("metric"),
        "uncertain": bool(entry.get("uncertain", False)),
        "evidence": result.evidence,
        "explanation": result.explanation,
    }
    if result.data:
        record["data"] = _jsonable(result.data)
    return record


def _jsonable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        try:
            value = value.item()
        except (TypeError, ValueError):
            pass
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return None
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def tally(records: Iterable[Mapping[str, Any]]) -> Dict[str, int]:
    counts = {status: 0 for status in STATUSES}
    for record in records:
        counts[record["status"]] += 1
    return counts


def write_claims_json(records: Sequence[Mapping[str, Any]], path: Path) -> Path:
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(list(records), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


# --------------------------------------------------------------------------------------------
# Statistics and relations
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Stat:
    """A mean with its confidence interval (low, high); n replicates (seeds)."""

    mean: float
    low: float
    high: float
    n: int

    @property
    def bounds(self) -> Tuple[float, float]:
        if self.n < 2 or math.isnan(self.low) or math.isnan(self.high):
            return (self.mean, self.mean)
        return (self.low, self.high)

    def text(self, scale: float = 1.0, digits: int = 4) -> str:
        if self.n < 2 or math.isnan(self.low):
            return f"{_num(self.mean * scale, digits)} (n={self.n})"
        return (f"{_num(self.mean * scale, digits)} [{_num(self.low * scale, digits)}, "
                f"{_num(self.high * scale, digits)}]")


def _num(x: float, digits: int = 4) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "nan"
    if x == 0:
        return "0"
    return f"{x:.{digits}g}"


# Means closer than this (relative) count as equal whatever their intervals: deterministic runs give
# zero-width intervals, and differences at the level of a few header bytes are not a ranking.
EQUAL_REL = 1e-4


def overlap(a: Stat, b: Stat) -> bool:
    """The 90 % intervals overlap (closed), or the means are equal to within EQUAL_REL."""
    (al, ah), (bl, bh) = a.bounds, b.bounds
    scale = max(abs(a.mean), abs(b.mean))
    return (al <= bh and bl <= ah) or abs(a.mean - b.mean) <= EQUAL_REL * scale


def relation_holds(a: Stat, op: str, b: Stat) -> bool:
    """The comparison rules (documented in docs/reproduce/seed-000.md):

    * ``a ~= b``: the confidence intervals overlap;
    * ``a < b``: mean a < mean b and the intervals do not overlap (``>`` likewise);
    * ``a <= b``: ``a < b`` or ``a ~= b``, i.e. a is not significantly above b (``>=`` likewise).
    """
    if op == "~=":
        return overlap(a, b)
    if op == "<":
        return a.mean < b.mean and not overlap(a, b)
    if op == ">":
        return a.mean > b.mean and not overlap(a, b)
    if op == "<=":
        return not relation_holds(a, ">", b)
    if op == ">=":
        return not relation_holds(a, "<", b)
    raise ValueError(f"unknown relation {op!r}")


def found_relation(a: Stat, b: Stat) -> str:
    """The relation the data show between a and b: '<', '>' or '~='."""
    if overlap(a, b):
        return "~="
    return "<" if a.mean < b.mean else ">"


_TERM = re.compile(r"(E_I|E_A|E|tau|Timeouts|Retx)\[([A-Za-z-]+)\]")
_OP = re.compile(r"\s*(~=|<=|>=|<|>|=)\s*")


@dataclass(frozen=True)
class Chain:
    metric: str
    protocols: Tuple[str, ...]  # engine variant names
    ops: Tuple[str, ...]

    def text(self) -> str:
        parts = [f"{self.metric}[{DISPLAY.get(self.protocols[0], self.protocols[0])}]"]
        for op, p in zip(self.ops, self.protocols[1:]):
            parts += [op, f"{self.metric}[{DISPLAY.get(p, p)}]"]
        return " ".join(parts)


def parse_chain(text: str) -> Chain:
    """``E[SACK] < E[NewReno] ~= E[Reno]`` -> Chain("E", ("sack", "newreno", "reno"), ("<", "~="))."""
    text = text.strip()
    pos, metric, protocols, ops = 0, None, [], []
    while True:
        m = _TERM.match(text, pos)
        if not m:
            raise ValueError(f"cannot parse a chain of relations from {text!r}")
        if metric is None:
            metric = m.group(1)
        elif m.group(1) != metric:
            raise ValueError(f"mixed metrics in {text!r}")
        name = m.group(2).lower()
        if name not in PROTOCOLS:
            raise ValueError(f"unknown protocol {m.group(2)!r} in {text!r}")
        protocols.append(PROTOCOLS[name])
        pos = m.end()
        if pos >= len(text):
            break
        o = _OP.match(text, pos)
        if not o:
            raise ValueError(f"cannot parse a chain of relations from {text!r}")
        ops.append(o.group(1))
        pos = o.end()
    if not ops:
        raise ValueError(f"no relation in {text!r}")
    return Chain(metric, tuple(protocols), tuple(ops))


def check_chain(chain: Chain, stats: Mapping[str, Stat]) -> Tuple[bool, List[str]]:
    """Judge a chain of relations against per-protocol statistics.

    Every adjacent relation must hold by :func:`relation_holds`; in addition, two protocols that
    are not neighbours but have a strict relation between them somewhere in the chain (and no
    relation pointing the other way) must have their means in that order. Returns (holds, the
    failed parts in words).
    """
    failures = []
    ps = chain.protocols
    for i, op in enumerate(chain.ops):
        a, b = stats[ps[i]], stats[ps[i + 1]]
        if not relation_holds(a, op, b):
            failures.append(f"{DISPLAY[ps[i]]} {op} {DISPLAY[ps[i + 1]]} fails (found "
                            f"{DISPLAY[ps[i]]} {found_relation(a, b)} {DISPLAY[ps[i + 1]]})")
    for i in range(len(ps)):
        for j in range(i + 2, len(ps)):
            between = set(chain.ops[i:j])
            for op, allowed in (("<", {"<", "<=", "~="}), (">", {">", ">=", "~="})):
                if op in between and between <= allowed:
                    a, b = stats[ps[i]], stats[ps[j]]
                    if not ((a.mean < b.mean) if op == "<" else (a.mean > b.mean)):
                        failures.append(f"implied {DISPLAY[ps[i]]} {op} {DISPLAY[ps[j]]} fails "
                                        f"(means in the other order)")
    return (not failures), failures


def order_text(stats: Mapping[str, Stat], higher_is_better: bool = False) -> str:
    """The ordering the data show, best first, neighbours joined by <, > or ~=."""
    items = sorted(stats.items(), key=lambda kv: -kv[1].mean if higher_is_better else kv[1].mean)
    parts = [DISPLAY.get(items[0][0], items[0][0])]
    for (_, a), (name, b) in zip(items, items[1:]):
        parts += [found_relation(a, b), DISPLAY.get(name, name)]
    return " ".join(parts)


def chain_found_text(chain: "Chain", stats: Mapping[str, Stat]) -> str:
    """The relations the data show between the chain's neighbours, in the chain's order."""
    ps = chain.protocols
    parts = [DISPLAY.get(ps[0], ps[0])]
    for a, b in zip(ps, ps[1:]):
        parts += [found_relation(stats[a], stats[b]), DISPLAY.get(b, b)]
    return " ".join(parts)


def stats_text(stats: Mapping[str, Stat], metric: str) -> str:
    unit, scale = METRICS[metric][1], METRICS[metric][2]
    return "; ".join(f"{DISPLAY.get(p, p)} {s.text(scale)}" for p, s in stats.items()) + f" {unit}"


def variant_stats(runs, conditions: Sequence[str], metric_column: str, x_col: Optional[str] = "label.rtt",
                  variant_col: str = "tcp.variant", level: float = LEVEL) -> Dict[tuple, Dict[str, Stat]]:
    """{condition values: {variant: Stat}} of ``metric_column``, mean over ``x_col`` per seed
    (None: no averaging axis), with the report's rank-table statistics."""
    from tcpenergy.report.ranking import variant_means

    if len(runs) == 0:
        return {}
    table = variant_means(runs, list(conditions), x_col, variant_col, [metric_column], level)
    out: Dict[tuple, Dict[str, Stat]] = {}
    for row in table.to_dict("records"):
        key = tuple(row[c] for c in conditions)
        out.setdefault(key, {})[row[variant_col]] = Stat(
            float(row["mean"]), float(row["ci_low"]), float(row["ci_high"]), int(row["n"]))
    return out


# --------------------------------------------------------------------------------------------
# Report section
# --------------------------------------------------------------------------------------------

_BADGE = {HOLDS: "holds", DOES_NOT_HOLD: "does not hold", NOT_MODELLED: "not modelled"}
_COUNTED = {HOLDS: "hold", DOES_NOT_HOLD: "do not hold", NOT_MODELLED: "not modelled"}


def checklist_section(records: Sequence[Mapping[str, Any]], intro: str) -> Tuple[str, str, str]:
    """(heading, HTML, Markdown) of the claims checklist for ``write_report(extra_sections=...)``."""
    counts = tally(records)
    summary = ", ".join(f"{counts[s]} {_COUNTED[s]}" for s in STATUSES)
    md = [intro, "", f"**{len(records)} claims: {summary}.**", "",
          "| id | where | claim | status | evidence | explanation |", "|---|---|---|---|---|---|"]
    rows = []
    for r in records:
        cells = [r["id"], r.get("where") or "", r["claim"], _BADGE[r["status"]], r["evidence"],
                 r.get("explanation") or ""]
        md.append("| " + " | ".join(_md(c) for c in cells) + " |")
        rows.append("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in cells) + "</tr>")
    body = (f"<p>{html.escape(intro)}</p>\n<p><strong>{len(records)} claims: {html.escape(summary)}."
            "</strong></p>\n<table>\n<thead><tr><th>id</th><th>where</th><th>claim</th><th>status</th>"
            "<th>evidence</th><th>explanation</th></tr></thead>\n<tbody>\n" + "\n".join(rows)
            + "\n</tbody>\n</table>")
    return ("Claims checklist", body, "\n".join(md))


def _md(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")
