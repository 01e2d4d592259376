"""Claims checklist machinery: load a paper's claims, judge relations from runs, write the results.

A claim entry (from a paper package's ``claims.yaml``, which carries each claim's text and its source
in the paper) is judged by an evaluator that returns a :class:`Verdict`; this module supplies what
evaluators share:

* statistics per variant: the mean over the RTT sweep with its confidence interval, computed the
  way the report's rank table computes it (``tcpenergy.report.ranking.variant_means``: per seed,
  the runs of a cell are averaged over RTT; the per-seed averages are the replicates);
* the comparison rules (see :func:`relation_holds`): on the means with a tie tolerance declared
  once (``TIE_REL``) where the paper compared means, on the confidence intervals where it claimed
  significance; which pairs a chain of relations such as ``a < b ~= c`` relates
  (:func:`implied_relation`);
* the four statuses, among them ``consistency`` for a claim that cannot fail in the model;
* which runs a verdict used (:func:`judge`): settings and n complete / n run, and the rule that a
  setting with too few complete runs cannot make a claim hold;
* writing OUT/claims.json, the colour-coded claims summary and the checklist section of the report.
"""

from __future__ import annotations

import html
import json
import math
from contextvars import ContextVar
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from tcpenergy.report.anchors import claim_anchor as anchor
from tcpenergy.report.markup import inline
from tcpenergy.reproduce.statuses import (  # noqa: F401  (re-exported: claims.HOLDS, ...)
    CONSISTENCY,
    DOES_NOT_HOLD,
    FIT,
    HOLDS,
    NOT_MODELLED,
    STATUSES,
)

# How an ordering is judged. MEANS: the paper compared mean values (seed 000's Table 4 says so), so
# a < b when mean a is below mean b by more than the tie tolerance, a ~= b when the means are within
# it; whether the intervals overlap is reported beside the verdict, not required. SIGNIFICANCE: the
# paper claims a significant difference: a < b needs disjoint confidence intervals.
MEANS = "means"
SIGNIFICANCE = "significance"
BASES = (MEANS, SIGNIFICANCE)

# Tie tolerance for comparisons of means, fixed before any claim was re-judged and the same for every
# claim and paper: two means within 1 % of the larger are a tie. 1 % is below what a testbed's energy
# or goodput comparison over 10-15 runs resolves (seed 003 calls differences under 1 % negligible),
# and well above the model's numerical noise (a few header bytes). docs/reproduce/*.md justify it.
TIE_REL = 0.01

# A setting (one sweep point, all seeds) supports a verdict only when at least this share of its runs
# ended complete, and at least MIN_COMPLETE_RUNS of them (an interval needs two): otherwise the claim
# cannot hold, whatever the means say.
MIN_COMPLETE_FRACTION = 2 / 3
MIN_COMPLETE_RUNS = 2

# The confidence level of intervals where a paper states none of its own (seed 002 states 95 %).
LEVEL = 0.90

RELATIONS = ("<", ">", "~=", "<=", ">=")

# --------------------------------------------------------------------------------------------
# Claims data
# --------------------------------------------------------------------------------------------

def paper_file(package: str, name: str):
    """A file shipped in a paper's package (``claims.yaml``, ``rules.yaml``), as a Traversable
    (use ``.read_text()``)."""
    return resources.files(package).joinpath(name)


def load_claims(source) -> List[Dict[str, Any]]:
    """The claim entries of a packaged claims file (see :func:`paper_file`)."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    entries = yaml.load(source.read_text(encoding="utf-8"), Loader=loader)
    if not isinstance(entries, list) or not all(isinstance(e, dict) and "id" in e for e in entries):
        raise ValueError(f"{source}: expected a list of claim entries with ids")
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
            raise ValueError("a claim that does not hold, is not modelled or is a consistency check "
                             "needs an explanation")


def verdict(ok: bool, evidence: str, why_not: str, data: Optional[Dict[str, Any]] = None,
            note: Optional[str] = None) -> Verdict:
    """holds / does_not_hold from a boolean; ``note`` is kept as the explanation when it holds."""
    if ok:
        return Verdict(HOLDS, evidence, note, data or {})
    return Verdict(DOES_NOT_HOLD, evidence, why_not, data or {})


def consistency(ok: bool, evidence: str, reason: str, why_not: str,
                data: Optional[Dict[str, Any]] = None) -> Verdict:
    """A claim that cannot fail in the model: ``consistency`` (with ``reason``, why it cannot fail)
    when the check passes, does_not_hold when it does not (then the model itself is inconsistent)."""
    if ok:
        return Verdict(CONSISTENCY, evidence, "Consistency check, not a reproduction: " + reason, data or {})
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
    source = claim_source(entry)
    if source:
        record["source"] = source
    if result.data:
        record["data"] = _jsonable(result.data)
    return record


def claim_source(entry: Mapping[str, Any]) -> str:
    """Where the claim is in its paper, in words: "<paper>, <section/table/figure>"."""
    return ", ".join(str(entry[k]) for k in ("paper", "where") if entry.get(k))


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
    """A mean with its confidence interval (low, high); n replicates (seeds); ``settings``: the
    keys (see :func:`mark_settings`) of the sweep points it aggregates, for run counting."""

    mean: float
    low: float
    high: float
    n: int
    settings: frozenset = field(default=frozenset(), compare=False, repr=False)

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


# Means closer than this (relative) count as equal even on the significance basis: deterministic runs
# give zero-width intervals, and differences at the level of a few header bytes are not a ranking.
EQUAL_REL = 1e-4


def overlap(a: Stat, b: Stat) -> bool:
    """The confidence intervals overlap (closed), or the means are equal to within EQUAL_REL."""
    (al, ah), (bl, bh) = a.bounds, b.bounds
    scale = max(abs(a.mean), abs(b.mean))
    return (al <= bh and bl <= ah) or abs(a.mean - b.mean) <= EQUAL_REL * scale


def tied(a: Stat, b: Stat, tol: float = TIE_REL) -> bool:
    """The means differ by at most ``tol`` of the larger magnitude (both zero: tied)."""
    scale = max(abs(a.mean), abs(b.mean))
    return abs(a.mean - b.mean) <= tol * scale


def significant(a: Stat, b: Stat) -> bool:
    """The difference is significant: the confidence intervals are disjoint."""
    return not overlap(a, b)


def relation_holds(a: Stat, op: str, b: Stat, basis: str = SIGNIFICANCE, tol: float = TIE_REL) -> bool:
    """The comparison rules (documented in docs/reproduce/seed-00X.md).

    basis MEANS (the paper compared means):
      * ``a ~= b``: the means are within TIE_REL of each other;
      * ``a < b``: mean a < mean b and not tied (``>`` likewise);
    basis SIGNIFICANCE (the paper claims a significant difference):
      * ``a ~= b``: the confidence intervals overlap;
      * ``a < b``: mean a < mean b and the intervals do not overlap (``>`` likewise);
    either basis: ``a <= b`` is ``not a > b`` (``>=`` likewise).
    ``tol``: the tie tolerance on the means basis (a claim that says "about the same" may set its own).
    """
    if basis not in BASES:
        raise ValueError(f"unknown comparison basis {basis!r}; allowed: {', '.join(BASES)}")
    same = tied(a, b, tol) if basis == MEANS else overlap(a, b)
    if op == "~=":
        return same
    if op == "<":
        return a.mean < b.mean and not same
    if op == ">":
        return a.mean > b.mean and not same
    if op == "<=":
        return not relation_holds(a, ">", b, basis, tol)
    if op == ">=":
        return not relation_holds(a, "<", b, basis, tol)
    raise ValueError(f"unknown relation {op!r}; allowed: {', '.join(RELATIONS)}")


def found_relation(a: Stat, b: Stat, basis: str = SIGNIFICANCE, tol: float = TIE_REL) -> str:
    """The relation the data show between a and b: '<', '>' or '~='."""
    if (tied(a, b, tol) if basis == MEANS else overlap(a, b)):
        return "~="
    return "<" if a.mean < b.mean else ">"


def significance_word(a: Stat, b: Stat) -> str:
    """'disjoint' or 'overlap' (90 % intervals), for evidence texts on the means basis."""
    if a.n < 2 or b.n < 2:
        return "no interval (n < 2)"
    return "CIs disjoint" if significant(a, b) else "CIs overlap"


def implied_relation(ops: Sequence[str]) -> Optional[str]:
    """The relation a chain states between two of its terms, from the operators between them:
    all ``~=``: ``~=``; only ``<``/``<=``/``~=`` with a ``<``: ``<``; only ``<=``/``~=`` with a
    ``<=``: ``<=`` (``>`` likewise); directions mixed: None (the chain says nothing about the pair)."""
    ops = set(ops)
    if ops == {"~="}:
        return "~="
    for strict, weak in (("<", "<="), (">", ">=")):
        if ops <= {strict, weak, "~="}:
            return strict if strict in ops else weak
    return None


def variant_stats(runs, conditions: Sequence[str], metric_column: str, x_col: Optional[str] = "label.rtt",
                  variant_col: str = "tcp.variant", level: float = LEVEL,
                  settings_from=None) -> Dict[tuple, Dict[str, Stat]]:
    """{condition values: {variant: Stat}} of ``metric_column``, mean over ``x_col`` per seed
    (None: no averaging axis), with the report's rank-table statistics. ``settings_from``: the
    attempted runs the complete ``runs`` were taken from (same filter), so that each Stat also
    knows the settings none of whose runs completed (default: ``runs``)."""
    from tcpenergy.report.ranking import variant_means

    if len(runs) == 0:
        return {}
    table = variant_means(runs, list(conditions), x_col, variant_col, [metric_column], level)
    settings = settings_by(runs if settings_from is None else settings_from, [*conditions, variant_col])
    out: Dict[tuple, Dict[str, Stat]] = {}
    for row in table.to_dict("records"):
        key = tuple(row[c] for c in conditions)
        out.setdefault(key, {})[row[variant_col]] = Stat(
            float(row["mean"]), float(row["ci_low"]), float(row["ci_high"]), int(row["n"]),
            settings.get(group_key(key + (row[variant_col],)), frozenset()))
    return out


# --------------------------------------------------------------------------------------------
# Which runs a verdict used: settings, n complete / n run, and the minimum of complete runs
# --------------------------------------------------------------------------------------------

SETTING = "_setting"  # column added by mark_settings: the sweep point a run belongs to


def _norm(value: Any) -> Any:
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)) or hasattr(value, "item"):
        try:
            x = float(value)
        except (TypeError, ValueError):
            return str(value)
        return None if math.isnan(x) else round(x, 12)
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)


def group_key(values: Sequence[Any]) -> tuple:
    """A group's values as a key that matches however the frame typed them (1 and 1.0 alike)."""
    return tuple(_norm(v) for v in values)


def mark_settings(frame):
    """A copy of ``frame`` with SETTING: (sweep, its label.* values), the same for every seed of
    one sweep point. Frames derived from it carry the column, so statistics know their settings."""
    frame = frame.copy()
    if not len(frame):
        frame[SETTING] = []
        return frame
    labels = sorted(c for c in frame.columns if c.startswith("label."))
    sweeps = frame["sweep"] if "sweep" in frame.columns else [""] * len(frame)
    keys = []
    for sweep, values in zip(sweeps, frame[labels].itertuples(index=False, name=None) if labels
                             else [()] * len(frame)):
        keys.append((str(sweep),) + tuple((c, _norm(v)) for c, v in zip(labels, values) if _norm(v) is not None))
    frame[SETTING] = keys
    return frame


def usable_runs(frame):
    """The complete runs (status ok and transfer complete) that every statistic uses."""
    from tcpenergy.experiments.completeness import complete_runs

    return complete_runs(frame)


def settings_by(frame, by: Sequence[str]) -> Dict[tuple, frozenset]:
    """{group key: the settings of the group} for a marked frame (empty without SETTING)."""
    if SETTING not in getattr(frame, "columns", ()) or not len(frame):
        return {}
    out: Dict[tuple, set] = {}
    cols = list(by)
    values = frame[cols].itertuples(index=False, name=None) if cols else [()] * len(frame)
    for key, setting in zip(values, frame[SETTING]):
        out.setdefault(group_key(key), set()).add(setting)
    return {k: frozenset(v) for k, v in out.items()}


def stat_of(frame, values: Sequence[float], level: float = LEVEL,
            within: Optional[Tuple[float, float]] = None) -> Stat:
    """Mean and interval of ``values`` (one per replicate; ``experiments.stats.interval``:
    Student-t where it stays within ``within``, the range the metric is declared to lie in, else
    the project's bounded interval; without ``within``, [0, inf): a claim's own derived metrics
    are counts, rates, energies and shares), carrying the settings of ``frame`` (the runs they came
    from)."""
    from tcpenergy.experiments.stats import NON_NEGATIVE, interval

    vals = [float(v) for v in values if v is not None and not math.isnan(float(v))]
    settings = frozenset(frame[SETTING]) if SETTING in getattr(frame, "columns", ()) else frozenset()
    n = len(vals)
    if n == 0:
        raise ValueError("no complete runs for this setting")
    mean = sum(vals) / n
    if n < 2:
        return Stat(mean, math.nan, math.nan, n, settings)
    _, [(low, high)] = interval(vals, (level,), within=NON_NEGATIVE if within is None else within)
    return Stat(mean, low, high, n, settings)


class Usage:
    """The settings one claim's evaluator read (collected through :func:`note`)."""

    def __init__(self) -> None:
        self.settings: set = set()


_USAGE: ContextVar[Optional[Usage]] = ContextVar("claims_usage", default=None)


def note(*items: Any) -> Any:
    """Record that the current claim used these Stats, {variant: Stat} cells or (marked) frames;
    returns the first item so that lookups can be wrapped: ``cell = note(stats[key])``."""
    usage = _USAGE.get()
    if usage is not None:
        for item in items:
            _collect(item, usage.settings)
    return items[0] if items else None


def _collect(item: Any, into: set) -> None:
    if item is None:
        return
    if isinstance(item, Stat):
        into.update(item.settings)
    elif isinstance(item, Mapping):
        for v in item.values():
            _collect(v, into)
    elif hasattr(item, "columns"):
        if SETTING in item.columns and len(item):
            into.update(item[SETTING])
    elif isinstance(item, (set, frozenset)):  # a set of settings
        into.update(item)
    elif isinstance(item, (list, tuple)):
        for v in item:
            _collect(v, into)


def _setting_text(setting: tuple) -> str:
    sweep, *labels = setting
    parts = [f"{k[len('label.'):] if k.startswith('label.') else k}={v}" for k, v in labels]
    return f"{sweep} ({', '.join(parts)})" if parts else str(sweep)


def enough_complete(runs: int, complete: int) -> bool:
    """The minimum a setting needs to support a claim: 2/3 of its runs and at least 2 complete."""
    return complete >= MIN_COMPLETE_RUNS and complete >= MIN_COMPLETE_FRACTION * runs


def run_counts(attempted, settings: Iterable[tuple]) -> Tuple[int, int, List[Tuple[tuple, int, int]]]:
    """(runs, complete, [(setting, runs, complete) for settings with an incomplete or failed run])."""
    settings = set(settings)
    if not settings or attempted is None or SETTING not in attempted.columns:
        return 0, 0, []
    from tcpenergy.experiments.completeness import usable

    part = attempted[attempted[SETTING].isin(settings)]
    ok = usable(part)
    per: Dict[tuple, List[int]] = {}
    for setting, good in zip(part[SETTING], ok):
        c = per.setdefault(setting, [0, 0])
        c[0] += 1
        c[1] += int(bool(good))
    short = sorted(((s, r, c) for s, (r, c) in per.items() if c < r), key=lambda t: str(t[0]))
    return int(len(part)), int(ok.sum()), short


def judge(entry: Mapping[str, Any], evaluate: Callable[[], Verdict], attempted=None,
          quick: bool = False) -> Dict[str, Any]:
    """Run one evaluator and make its claims.json record: the settings it read are counted
    (``runs``, ``complete``, said in words in the evidence) and their sweeps listed (``sweeps``); a
    setting with fewer complete runs than :func:`enough_complete` allows turns holds/consistency into
    does_not_hold; on --quick runs the record is ``indicative``."""
    usage = Usage()
    token = _USAGE.set(usage)
    try:
        result = evaluate()
    finally:
        _USAGE.reset(token)
    runs, complete, short = run_counts(attempted, usage.settings)
    if runs:
        n_settings = len(usage.settings)
        text = (f" Runs used: {complete} complete of {runs} run, over {n_settings} setting"
                f"{'s' if n_settings != 1 else ''}.")
        too_few = [(s, r, c) for s, r, c in short if not enough_complete(r, c)]
        if short:
            text += (" Incomplete or failed runs left out of the statistics: "
                     + "; ".join(f"{_setting_text(s)} {c}/{r} complete" for s, r, c in short[:6])
                     + (f"; and {len(short) - 6} more settings" if len(short) > 6 else "") + ".")
        result.evidence = result.evidence.rstrip() + ("" if result.evidence.rstrip().endswith(".") else ".") + text
        if too_few and result.status in (HOLDS, CONSISTENCY):
            result = Verdict(DOES_NOT_HOLD, result.evidence,
                             f"{len(too_few)} setting(s) this claim needs have fewer complete runs than "
                             f"required (at least {MIN_COMPLETE_FRACTION:.0%} of the runs and at least "
                             f"{MIN_COMPLETE_RUNS}), so the claim cannot hold on these runs: "
                             + "; ".join(f"{_setting_text(s)} {c}/{r}" for s, r, c in too_few[:4]) + ".",
                             result.data)
    record = claim_record(entry, result)
    # The sweeps the verdict read (a setting is (sweep, labels...)): `--sensitivity` reruns only these.
    record["sweeps"] = sorted({str(setting[0]) for setting in usage.settings})
    if runs:
        record["runs"], record["complete"] = runs, complete
    if quick:
        record["indicative"] = True
    return record


# --------------------------------------------------------------------------------------------
# Report section
# --------------------------------------------------------------------------------------------

# Each status in words, as reports and the generated documents show it.
STATUS_WORDS = {HOLDS: "holds", DOES_NOT_HOLD: "does not hold", CONSISTENCY: "consistency",
                FIT: "fit", NOT_MODELLED: "not modelled"}
_COUNTED = {HOLDS: "hold", DOES_NOT_HOLD: "do not hold", CONSISTENCY: "consistency checks (cannot fail "
            "in the model, not counted as reproduced)", FIT: "fit (their numbers chose a reading of the "
            "setup, not counted as reproduced)", NOT_MODELLED: "not modelled"}
SUMMARY_ORDER = (HOLDS, DOES_NOT_HOLD, CONSISTENCY, FIT, NOT_MODELLED)
INDICATIVE_NOTE = ("Indicative verdicts: this is a --quick run (fewer seeds per setting, and for some papers "
                   "fewer settings, than a full run; the paper's page says which); verdicts can change on a "
                   "full run.")
FOLD_AT = 240  # evidence longer than this (characters) is folded in <details>


def _badge(status: str) -> str:
    return f'<span class="status-{status}">{html.escape(STATUS_WORDS[status])}</span>'


def _is_indicative(records: Sequence[Mapping[str, Any]]) -> bool:
    return any(r.get("indicative") for r in records)


def summary_section(records: Sequence[Mapping[str, Any]], title: str = "Claims summary") -> Tuple[str, str, str]:
    """(heading, HTML, Markdown): counts per status, colour-coded (CSS classes status-<status>), and
    each claim id grouped by status, linking to its evidence row in the checklist."""
    counts = tally(records)
    line = ", ".join(f"{counts[s]} {_COUNTED[s]}" for s in SUMMARY_ORDER)
    note = INDICATIVE_NOTE if _is_indicative(records) else ""
    md = [f"**{len(records)} claims: {line}.**"] + ([f"*{note}*"] if note else []) + [""]
    md += ["| status | n | claims |", "|---|---|---|"]
    rows = []
    for status in SUMMARY_ORDER:
        ids = [r["id"] for r in records if r["status"] == status]
        md.append(f"| {STATUS_WORDS[status]} | {len(ids)} | " + ", ".join(f"[{i}](#{anchor(i)})" for i in ids) + " |")
        links = " ".join(f'<a class="status-{status}" href="#{anchor(i)}">{html.escape(i)}</a>' for i in ids)
        rows.append(f'<tr><td class="status-{status}">{html.escape(STATUS_WORDS[status])}</td>'
                    f"<td>{len(ids)}</td><td>{links}</td></tr>")
    body = (f"<p><strong>{len(records)} claims: {html.escape(line)}.</strong></p>\n"
            + (f'<p class="indicative"><em>{html.escape(note)}</em></p>\n' if note else "")
            + "<table>\n<thead><tr><th>status</th><th>n</th><th>claims</th></tr></thead>\n<tbody>\n"
            + "\n".join(rows) + "\n</tbody>\n</table>")
    readings_line = _readings_in_force()
    if readings_line:
        md += ["", readings_line]
        body += f"\n<p>{inline(readings_line)}</p>"
    return (title, body, "\n".join(md))


def _readings_in_force() -> str:
    """The readings the running reproduction was judged under, in a sentence ("" when its paper
    declares none): a reader of the report sees which alternative each open parameter took."""
    from tcpenergy.reproduce import readings

    choice = readings.current()
    if choice is None or not choice.readings:
        return ""
    taken = "; ".join(f"`{key}` = `{alt}`" + ("" if alt == choice.readings[key].taken else " (not the taken one)")
                      for key, alt in choice.in_force().items())
    return (f"Readings in force (the paper's open parameters, docs/reproduce/{choice.paper}.md, Readings): "
            f"{taken}.")


def _fold(text: str) -> str:
    text = str(text or "")
    if len(text) <= FOLD_AT:
        return inline(text)
    head = text[:FOLD_AT].rsplit(" ", 1)[0]
    return f"<details><summary>{inline(head)} …</summary>{inline(text)}</details>"


def checklist_section(records: Sequence[Mapping[str, Any]], intro: str) -> Tuple[str, str, str]:
    """(heading, HTML, Markdown) of the claims checklist for ``write_report(extra_sections=...)``:
    one row per claim (id anchored for the summary's links), long evidence folded."""
    counts = tally(records)
    summary = ", ".join(f"{counts[s]} {_COUNTED[s]}" for s in SUMMARY_ORDER)
    note = INDICATIVE_NOTE if _is_indicative(records) else ""
    papers = sorted({_paper_of(r) for r in records} - {""})
    if len(papers) == 1:
        intro = f"{intro} Claims of {papers[0]}; 'where' is their place in it."
    md = [intro, ""] + ([f"*{note}*", ""] if note else []) + [f"**{len(records)} claims: {summary}.**", "",
          "| id | where | claim | status | runs | evidence | explanation |", "|---|---|---|---|---|---|---|"]
    rows = []
    for r in records:
        runs = f"{r['complete']}/{r['runs']}" if r.get("runs") else ""
        where = (r.get("where") or r.get("source") or "") if len(papers) == 1 else (r.get("source") or r.get("where") or "")
        cells = [r["id"], where, r["claim"], STATUS_WORDS[r["status"]], runs, r["evidence"], r.get("explanation") or ""]
        md.append("| " + " | ".join(_md(c) for c in cells) + " |")
        rows.append(f'<tr id="{anchor(r["id"])}"><td>{html.escape(r["id"])}</td>'
                    f"<td>{inline(cells[1])}</td><td>{html.escape(r['claim'])}</td>"
                    f'<td class="status-{r["status"]}">{html.escape(STATUS_WORDS[r["status"]])}</td>'
                    f"<td>{html.escape(runs)}</td><td>{_fold(r['evidence'])}</td>"
                    f"<td>{_fold(r.get('explanation') or '')}</td></tr>")
    body = (f"<p>{inline(intro)}</p>\n"
            + (f'<p class="indicative"><em>{html.escape(note)}</em></p>\n' if note else "")
            + f"<p><strong>{len(records)} claims: {html.escape(summary)}."
            "</strong></p>\n<table>\n<thead><tr><th>id</th><th>where</th><th>claim</th><th>status</th>"
            "<th>runs (complete/run)</th><th>evidence</th><th>explanation</th></tr></thead>\n<tbody>\n"
            + "\n".join(rows) + "\n</tbody>\n</table>")
    return ("Claims checklist", body, "\n".join(md))


def _paper_of(record: Mapping[str, Any]) -> str:
    """The paper a claim record comes from: its source without the place in the paper."""
    source, where = str(record.get("source") or ""), str(record.get("where") or "")
    if where and source.endswith(where):
        source = source[: -len(where)]
    return source.rstrip(", ")


def _md(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")
