"""Claim rules as data: the common shapes of a paper's claims, judged by one engine.

Most claims the seed papers make have one of four shapes, and a paper's checklist states them in
``rules.yaml`` of its package instead of code:

* **order**: an ordering or tie of a metric between named terms (variants, settings) in a cell,
  ``relation: "E2TCP < Tahoe; Reno ~= NewReno"``; a chain holds only when every pair it relates
  holds (claims.chain semantics);
* **trend**: how a metric (or the gap or ratio between two terms) moves along an axis;
* **ratio**: the ratio of two terms' means (or the change ``a / b - 1``) within a band, or within a
  factor of the paper's own figure;
* **value**: a term's mean within a band or a tolerance of a target.

``all`` combines rules (each sub-rule inherits its parent's keys); ``for_each`` judges a rule in
every cell of the named columns (``require``: all, most or any of them); ``not_modelled`` and
``code`` (a named evaluator, for the claims that need a trace or a computation no shape expresses)
complete the vocabulary. docs/reproduce/rules.md documents every key.

Statistics are those of claims.py: complete runs only, one replicate per seed (the mean of the
seed's runs in the selection, e.g. over an RTT sweep), the 90 % interval of ``claims.stat_of``;
orderings on the means with the shared tie tolerance unless the rule says ``basis: significance``.
Every run a rule reads is counted through ``claims.note``, so ``claims.judge`` reports n complete
of n run and refuses a verdict built on too few complete runs.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Literal, Mapping, Optional, Sequence, Tuple, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from tcpenergy.records import field_range
from tcpenergy.reproduce import claims as C
from tcpenergy.reproduce.claims import Stat, Verdict

Scalar = Union[bool, int, float, str, None]
Filter = Dict[str, Union[Scalar, List[Scalar]]]


class RuleError(ValueError):
    """A rules file that does not parse or names something that does not exist."""


# --------------------------------------------------------------------------------------------
# The rules file
# --------------------------------------------------------------------------------------------

class Metric(BaseModel):
    model_config = ConfigDict(extra="forbid")
    column: str
    label: Optional[str] = None
    unit: str = ""
    scale: float = 1.0


class PaperFigure(BaseModel):
    """A figure from the claim's ``numbers``: ``number`` (key), times ``scale``; compared within
    ``factor`` (ratio shape: same sign, ours in [paper / factor, paper * factor]) or ``tolerance``
    (relative)."""
    model_config = ConfigDict(extra="forbid")
    number: str
    scale: float = 1.0
    factor: Optional[float] = Field(default=None, gt=1)
    tolerance: Optional[float] = Field(default=None, ge=0)


class Separable(BaseModel):
    """Where the model must separate a tie claim's terms for the tie to be a test: the cells
    (``where``, one per combination of ``for_each``) whose spread between the terms is measured."""
    model_config = ConfigDict(extra="forbid")
    where: Filter = Field(default_factory=dict)
    for_each: List[str] = Field(default_factory=list)


class Rule(BaseModel):
    model_config = ConfigDict(extra="forbid")
    shape: Literal["order", "trend", "ratio", "value", "all"]
    metric: Optional[str] = None
    sweeps: Optional[List[str]] = None
    where: Filter = Field(default_factory=dict)
    terms: Dict[str, Filter] = Field(default_factory=dict)
    for_each: List[str] = Field(default_factory=list)
    require: Literal["all", "most", "any"] = "all"
    average_over: Optional[Union[str, List[str]]] = None
    exclude: List[Filter] = Field(default_factory=list)
    basis: Literal["means", "significance"] = "means"
    tie: float = Field(default=C.TIE_REL, ge=0)
    level: float = Field(default=C.LEVEL, gt=0, lt=1)
    show: List[str] = Field(default_factory=list)
    label: Optional[str] = None
    # order
    relation: Optional[str] = None
    # trend
    axis: Optional[str] = None
    axis_order: Union[Literal["ascending", "descending"], List[Scalar]] = "ascending"
    direction: Optional[Literal["increasing", "decreasing", "flat"]] = None
    steps: Literal["weak", "strict", "endpoints", "last"] = "weak"
    quantity: Union[Literal["value"], Dict[Literal["gap", "ratio"], List[str]]] = "value"
    # ratio
    numerator: Optional[str] = None
    denominator: Optional[str] = None
    numerator_metric: Optional[str] = None
    denominator_metric: Optional[str] = None
    form: Literal["ratio", "change"] = "ratio"
    # ratio and value
    band: Optional[List[Optional[float]]] = None
    target: Optional[float] = None
    tolerance: Optional[float] = Field(default=None, ge=0)
    paper: Optional[PaperFigure] = None
    # all
    of: List["Rule"] = Field(default_factory=list)
    # verdict texts
    why_not: Optional[str] = None
    note: Optional[str] = None
    remark: Optional[str] = None
    consistency: Optional[str] = None
    # A claim that the terms tie can only fail if the model can tell them apart: when no cell of
    # ``separable_in`` separates them by more than the tie tolerance, a tie that holds is reported as
    # a consistency check (it could not have failed), not as reproduced.
    separable_in: Optional[Separable] = None

    @model_validator(mode="after")
    def _shape_keys(self) -> "Rule":
        need = {"order": ("metric", "relation"), "trend": ("metric", "axis", "direction"),
                "ratio": ("metric", "numerator", "denominator"), "value": ("metric",), "all": ("of",)}
        missing = [k for k in need[self.shape] if not getattr(self, k)]
        if missing:
            raise ValueError(f"shape {self.shape!r} needs {', '.join(missing)}")
        if self.shape in ("ratio", "value") and self.band is None and self.paper is None and self.target is None:
            raise ValueError(f"shape {self.shape!r} needs band, target or paper")
        if self.band is not None and len(self.band) != 2:
            raise ValueError("band is [low, high] (null for an open end)")
        if self.shape == "ratio":
            for key in ("numerator", "denominator"):
                if getattr(self, key) not in self.terms:
                    raise ValueError(f"{key} {getattr(self, key)!r} is not a term; terms: {', '.join(self.terms)}")
        if self.shape == "order":
            for name in _relation_names(self.relation or ""):
                if name not in self.terms:
                    raise ValueError(f"relation names {name!r}, which is not a term; terms: {', '.join(self.terms)}")
        if self.shape == "trend" and isinstance(self.quantity, dict):
            for names in self.quantity.values():
                if len(names) != 2 or any(n not in self.terms for n in names):
                    raise ValueError(f"quantity needs two terms of {', '.join(self.terms)}")
        return self


Rule.model_rebuild()


class Entry(BaseModel):
    """One claim's entry: a rule, or not_modelled (why), or code (judged by a named evaluator)."""
    model_config = ConfigDict(extra="forbid")
    not_modelled: Optional[str] = None
    code: Optional[bool] = None


@dataclass(frozen=True)
class RuleSet:
    metrics: Dict[str, Metric]
    rules: Dict[str, Union[Rule, Entry]]


_INHERITED = set(Rule.model_fields) - {"of", "shape"}


def _inherit(parent: Mapping[str, Any], child: Mapping[str, Any]) -> Dict[str, Any]:
    """A sub-rule of ``all``: the parent's keys (but ``of`` and ``shape``), overridden by its own."""
    merged = {k: v for k, v in parent.items()
              if k in _INHERITED and k not in ("why_not", "note", "consistency", "remark")}
    merged.update(child)
    if merged.get("shape") == "all":
        merged["of"] = [_inherit(merged, sub) for sub in merged.get("of", [])]
    return merged


def parse_rules(data: Mapping[str, Any], source: str = "rules") -> RuleSet:
    """Validate a rules mapping ({metrics: ..., rules: {claim id: rule}}); errors name the claim and key."""
    if not isinstance(data, Mapping) or not isinstance(data.get("rules"), Mapping):
        raise RuleError(f"{source}: expected a mapping with 'rules' (claim id -> rule)")
    unknown = set(data) - {"metrics", "defaults", "rules"}
    if unknown:
        raise RuleError(f"{source}: unknown top-level key(s) {', '.join(sorted(unknown))}; "
                        "allowed: metrics, defaults, rules")
    defaults = dict(data.get("defaults") or {})
    bad = set(defaults) - _INHERITED
    if bad:
        raise RuleError(f"{source}: defaults: unknown key(s) {', '.join(sorted(bad))}")
    try:
        metrics = {name: Metric.model_validate(m) for name, m in (data.get("metrics") or {}).items()}
    except ValidationError as exc:
        raise RuleError(f"{source}: metrics: {_first_error(exc)}") from None
    rules: Dict[str, Union[Rule, Entry]] = {}
    for claim_id, raw in data["rules"].items():
        if not isinstance(raw, Mapping):
            raise RuleError(f"{source}: rules.{claim_id}: expected a mapping")
        try:
            if "shape" in raw:
                raw = {**defaults, **raw}
                if raw["shape"] == "all":
                    raw["of"] = [_inherit(raw, sub) for sub in raw.get("of", [])]
                rule = Rule.model_validate(raw)
                rules[str(claim_id)] = rule
            else:
                entry = Entry.model_validate(raw)
                if bool(entry.not_modelled) == bool(entry.code):
                    raise ValueError("give a shape, not_modelled (the reason) or code: true")
                rules[str(claim_id)] = entry
        except (ValidationError, ValueError) as exc:
            text = _first_error(exc) if isinstance(exc, ValidationError) else str(exc)
            raise RuleError(f"{source}: rules.{claim_id}: {text}") from None
    return RuleSet(metrics, rules)


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err.get("loc", ()))
    return f"{where}: {err.get('msg')}" if where else str(err.get("msg"))


def load_rules(source) -> RuleSet:
    """A paper package's rules file (``claims.paper_file(package, "rules.yaml")``)."""
    import yaml

    text = source.read_text(encoding="utf-8")
    return parse_rules(yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)), str(source))


# --------------------------------------------------------------------------------------------
# Data: selections and statistics
# --------------------------------------------------------------------------------------------

def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b or a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-12)
    return a == b


def _column_mask(series, want: Any):
    """Rows of one column equal to ``want`` (numbers to 1e-9 relative), as a boolean array."""
    import numpy as np

    from pandas.api.types import is_bool_dtype, is_numeric_dtype

    if (isinstance(want, (int, float)) and not isinstance(want, bool) and is_numeric_dtype(series)
            and not is_bool_dtype(series)):
        values = series.to_numpy(dtype=float, na_value=np.nan)
        return np.isclose(values, float(want), rtol=1e-9, atol=1e-12)
    return series.map(lambda v: _same(v, want)).to_numpy(dtype=bool)


class Selector:
    """Row selections of one frame by column filters; each column's mask is computed once."""

    def __init__(self, frame) -> None:
        self.frame = frame
        self._masks: Dict[Tuple[str, str], Any] = {}

    def mask(self, filt: Mapping[str, Any]):
        import numpy as np

        mask = np.ones(len(self.frame), dtype=bool)
        for col, want in filt.items():
            if col not in self.frame.columns:
                raise KeyError(f"no column {col!r} in the runs")
            key = (col, repr(want))
            if key not in self._masks:
                wants = want if isinstance(want, list) else [want]
                m = np.zeros(len(self.frame), dtype=bool)
                for w in wants:
                    m |= _column_mask(self.frame[col], w)
                self._masks[key] = m
            mask &= self._masks[key]
        return mask

    def rows(self, filt: Mapping[str, Any], columns: Optional[Sequence[str]] = None):
        """The matching rows (only ``columns``, when given: a narrow copy is much faster to take)."""
        frame = self.frame if columns is None else self.frame[[c for c in columns if c in self.frame.columns]]
        return frame[self.mask(filt)]


def select(frame, filt: Mapping[str, Any]):
    """The rows of ``frame`` matching every column = value (a list: any of its values); numbers
    match to 1e-9 relative, so values read back from the store compare as written."""
    return Selector(frame).rows(filt)


@dataclass
class Data:
    """What rules read: the complete runs and every attempted run, both marked (claims.mark_settings)."""
    runs: Selector
    attempted: Selector
    metrics: Mapping[str, Metric]
    entry: Mapping[str, Any]

    def metric(self, name: str) -> Metric:
        return self.metrics.get(name) or Metric(column=name, label=name)

    def base_filter(self, rule: Rule) -> Dict[str, Any]:
        filt: Dict[str, Any] = {}
        if rule.sweeps:
            filt["sweep"] = list(rule.sweeps)
        filt.update(rule.where)
        return filt

    def stat(self, rule: Rule, metric: str, term: str, cell: Mapping[str, Any]) -> Stat:
        filt = {**self.base_filter(rule), **rule.terms.get(term, {}), **cell}
        column = self.metric(metric).column
        C.note(self.attempted.rows(filt, [C.SETTING]))
        part = self.runs.rows(filt, ["seed", column, C.SETTING])
        if not len(part):
            raise KeyError(f"no complete runs for {term} {_cell_text(cell) or ''}".strip())
        if column not in part.columns:
            raise KeyError(f"no column {column!r} in the runs")
        per_seed = part.groupby("seed")[column].agg(["mean", "size"])
        if (per_seed["size"] > 1).any() and not rule.average_over:
            raise RuleError(f"{term}: the rule selects several runs per seed; name the column they differ in "
                            "as average_over, or narrow the selection")
        # A result field keeps to the range its record declares (UAR, EEE and EP are signed).
        return C.stat_of(part, per_seed["mean"].tolist(), rule.level, within=field_range(column))

    def cells(self, rule: Rule) -> List[Dict[str, Any]]:
        if not rule.for_each:
            return [{}]
        part = self.attempted.rows(self.base_filter(rule), rule.for_each)
        if not len(part):
            raise KeyError(f"no runs for {_filter_text(self.base_filter(rule))}")
        keys = part[rule.for_each].drop_duplicates().itertuples(index=False, name=None)
        cells = [dict(zip(rule.for_each, _py(k))) for k in sorted(keys, key=_sort_key)]
        return [c for c in cells if not any(all(_matches(c.get(k), v) for k, v in ex.items()) for ex in rule.exclude)]

    def axis_points(self, rule: Rule, cell: Mapping[str, Any]) -> List[Any]:
        if isinstance(rule.axis_order, list):
            return list(rule.axis_order)
        part = self.attempted.rows({**self.base_filter(rule), **cell}, [rule.axis])
        values = {v for v in _py(tuple(part[rule.axis])) if not (isinstance(v, float) and math.isnan(v))}
        return sorted(values, key=lambda v: _sort_key([v]), reverse=rule.axis_order == "descending")


def _matches(value: Any, want: Any) -> bool:
    return any(_same(value, w) for w in (want if isinstance(want, list) else [want]))


def _py(values: Sequence[Any]) -> Tuple[Any, ...]:
    return tuple(v.item() if hasattr(v, "item") else v for v in values)


def _sort_key(values: Sequence[Any]) -> Tuple[Any, ...]:
    return tuple((0, float(v)) if isinstance(v, (int, float)) and not isinstance(v, bool) else (1, str(v))
                 for v in values)


def _short(col: str) -> str:
    return col.split(".")[-1]


def _cell_text(cell: Mapping[str, Any]) -> str:
    return ", ".join(f"{_short(k)}={_val(v)}" for k, v in cell.items())


def _filter_text(filt: Mapping[str, Any]) -> str:
    return ", ".join(f"{_short(k)}={v}" for k, v in filt.items())


def _val(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def _num(x: float) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "nan"
    return f"{x:.4g}"


# --------------------------------------------------------------------------------------------
# Comparisons
# --------------------------------------------------------------------------------------------

_OPS = re.compile(r"\s*(~=|<=|>=|<|>)\s*")


def _relation_names(text: str) -> List[str]:
    names = []
    for chain in text.split(";"):
        names += [p.strip() for p in _OPS.split(chain)[0::2] if p.strip()]
    return names


def parse_relation(text: str) -> List[Tuple[List[str], List[str]]]:
    """``"A < B ~= C; A < D"`` -> [(["A", "B", "C"], ["<", "~="]), (["A", "D"], ["<"])]."""
    chains = []
    for chain in text.split(";"):
        parts = _OPS.split(chain.strip())
        names, ops = [p.strip() for p in parts[0::2]], parts[1::2]
        if len(names) < 2 or any(not n for n in names):
            raise RuleError(f"cannot read a relation from {chain.strip()!r}")
        chains.append((names, ops))
    return chains


def relation_pairs(names: Sequence[str], ops: Sequence[str]) -> List[Tuple[str, str, str]]:
    """Every pair a chain relates (neighbours and the pairs it implies), as claims.chain_pairs."""
    out = []
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            rel = C.implied_relation(ops[i:j])
            if rel is not None:
                out.append((names[i], rel, names[j]))
    return out


def holds(a: Stat, op: str, b: Stat, rule: Rule) -> bool:
    return C.relation_holds(a, op, b, rule.basis, rule.tie)


def found(a: Stat, b: Stat, rule: Rule) -> str:
    return C.found_relation(a, b, rule.basis, rule.tie)


def _point_relation(p: float, q: float, tie: float) -> str:
    """'<', '>' or '~=' between two numbers (means, gaps, ratios): a tie within ``tie`` of the larger."""
    if abs(p - q) <= tie * max(abs(p), abs(q)):
        return "~="
    return "<" if p < q else ">"


# --------------------------------------------------------------------------------------------
# The shapes
# --------------------------------------------------------------------------------------------

@dataclass
class Outcome:
    ok: bool
    text: str
    data: Dict[str, Any]


def _stat_text(rule: Rule, data: Data, name: str, s: Stat) -> str:
    m = data.metric(rule.metric)
    return f"{name} {s.text(m.scale)}"


def _shown(rule: Rule, data: Data, cell: Mapping[str, Any]) -> str:
    """The ``show`` metrics (context, not judged) of every term in the cell."""
    parts = []
    for metric in rule.show:
        m = data.metric(metric)
        vals = []
        for term in rule.terms:
            try:
                vals.append(f"{term} {_num(data.stat(rule, metric, term, cell).mean * m.scale)}")
            except (KeyError, ValueError):
                vals.append(f"{term} missing")
        parts.append(f"{m.label or metric}{f' ({m.unit})' if m.unit else ''}: " + ", ".join(vals))
    return ("; also " + "; ".join(parts)) if parts else ""


def _order(rule: Rule, data: Data, cell: Mapping[str, Any]) -> Outcome:
    chains = parse_relation(rule.relation or "")
    names = list(dict.fromkeys(n for names, _ in chains for n in names))
    st = {n: data.stat(rule, rule.metric, n, cell) for n in names}
    fails = []
    for names_, ops in chains:
        for a, op, b in relation_pairs(names_, ops):
            if not holds(st[a], op, st[b], rule):
                fails.append(f"{a} {op} {b} fails (found {a} {found(st[a], st[b], rule)} {b})")
    text = "; ".join(_stat_text(rule, data, n, s) for n, s in st.items())
    if rule.basis == "means" and all(s.n >= 2 for s in st.values()):
        sig = ", ".join(f"{a}-{b} {C.significance_word(st[a], st[b])}" for names_, ops in chains
                        for a, _, b in relation_pairs(names_, ops))
        text += f" ({sig})"
    if fails:
        text += " — " + "; ".join(fails)
    return Outcome(not fails, text + _shown(rule, data, cell), {n: s.mean for n, s in st.items()})


def _trend_series(rule: Rule, data: Data, cell: Mapping[str, Any], term: Optional[str]) -> List[Tuple[Any, float, Optional[Stat]]]:
    out = []
    for x in data.axis_points(rule, cell):
        at = {**cell, rule.axis: x}
        if term is not None:
            s = data.stat(rule, rule.metric, term, at)
            out.append((x, s.mean, s))
        else:
            (kind, (a, b)), = rule.quantity.items()
            sa, sb = data.stat(rule, rule.metric, a, at), data.stat(rule, rule.metric, b, at)
            out.append((x, sa.mean - sb.mean if kind == "gap" else sa.mean / sb.mean, None))
    return out


def _trend_one(rule: Rule, series: List[Tuple[Any, float, Optional[Stat]]]) -> Tuple[bool, List[str]]:
    def rel(p, q):
        if p[2] is not None and q[2] is not None and rule.basis == "significance":
            return C.found_relation(p[2], q[2], rule.basis, rule.tie)
        return _point_relation(p[1], q[1], rule.tie)

    if len(series) < 2:
        return False, ["fewer than two points on the axis"]
    steps = [rel(p, q) for p, q in zip(series, series[1:])]
    want = {"increasing": "<", "decreasing": ">"}.get(rule.direction)
    fails = []
    if rule.direction == "flat":
        fails = [f"{_val(q[0])} differs from {_val(series[0][0])}" for q in series[1:] if rel(series[0], q) != "~="]
    elif rule.steps == "last":
        if steps[-1] != want:
            fails.append(f"last step {_val(series[-2][0])} -> {_val(series[-1][0])} is '{steps[-1]}', not '{want}'")
    elif rule.steps == "endpoints":
        if rel(series[0], series[-1]) != want:
            fails.append(f"first ({_val(series[0][0])}) to last ({_val(series[-1][0])}) is "
                         f"'{rel(series[0], series[-1])}', not '{want}'")
    elif rule.steps == "strict":
        fails = [f"step {_val(p[0])} -> {_val(q[0])} is '{s}'" for (p, q, s) in zip(series, series[1:], steps) if s != want]
    else:
        against = ">" if want == "<" else "<"
        fails = [f"step {_val(p[0])} -> {_val(q[0])} goes against ('{s}')" for (p, q, s) in
                 zip(series, series[1:], steps) if s == against]
        if rel(series[0], series[-1]) != want:
            fails.append(f"first ({_val(series[0][0])}) to last ({_val(series[-1][0])}) is "
                         f"'{rel(series[0], series[-1])}', not '{want}'")
    return not fails, fails


def _trend(rule: Rule, data: Data, cell: Mapping[str, Any]) -> Outcome:
    m = data.metric(rule.metric)
    if isinstance(rule.quantity, dict):
        (kind, (a, b)), = rule.quantity.items()
        subjects = [(f"{kind} {a} {'-' if kind == 'gap' else '/'} {b}", None)]
    else:
        subjects = [(t, t) for t in (rule.terms or {"all": {}})] if rule.terms else [("value", None)]
    ok, parts, data_out = True, [], {}
    for label, term in subjects:
        if term is None and not isinstance(rule.quantity, dict):
            raise RuleError("a trend of a value needs terms")
        series = _trend_series(rule, data, cell, term)
        good, fails = _trend_one(rule, series)
        ok &= good
        scale = 1.0 if isinstance(rule.quantity, dict) and "ratio" in rule.quantity else m.scale
        parts.append(f"{label}: " + ", ".join(f"{_short(rule.axis)}={_val(x)} {_num(v * scale)}" for x, v, _ in series)
                     + (" — " + "; ".join(fails) if fails else ""))
        data_out[label] = {str(x): v for x, v, _ in series}
    return Outcome(ok, "; ".join(parts), data_out)


def _paper_value(rule: Rule, data: Data) -> float:
    numbers = data.entry.get("numbers") or {}
    if rule.paper.number not in numbers:
        raise RuleError(f"the claim has no number {rule.paper.number!r}")
    return float(numbers[rule.paper.number]) * rule.paper.scale


def _in_band(x: float, band: Sequence[Optional[float]]) -> bool:
    low, high = band
    return (low is None or x >= low) and (high is None or x <= high)


def _band_text(band: Sequence[Optional[float]]) -> str:
    low, high = band
    return f"[{'-inf' if low is None else _num(low)}, {'inf' if high is None else _num(high)}]"


def _judge_number(rule: Rule, data: Data, x: float) -> Tuple[bool, str]:
    """A number (a ratio or a value) against the rule's band, target or paper figure."""
    if rule.paper is not None:
        p = _paper_value(rule, data)
        if rule.paper.factor:
            f = rule.paper.factor
            ok = x * p > 0 and abs(p) / f <= abs(x) <= abs(p) * f
            return ok, f"paper {_num(p)}: same sign and within a factor {f:g}"
        tol = rule.paper.tolerance if rule.paper.tolerance is not None else 0.0
        return abs(x - p) <= tol * abs(p), f"paper {_num(p)} ± {tol:.0%}"
    if rule.target is not None:
        tol = rule.tolerance or 0.0
        return abs(x - rule.target) <= tol * abs(rule.target), f"target {_num(rule.target)} ± {tol:.0%}"
    return _in_band(x, rule.band), f"band {_band_text(rule.band)}"


def _ratio(rule: Rule, data: Data, cell: Mapping[str, Any]) -> Outcome:
    num_metric, den_metric = rule.numerator_metric or rule.metric, rule.denominator_metric or rule.metric
    a = data.stat(rule, num_metric, rule.numerator, cell)
    b = data.stat(rule, den_metric, rule.denominator, cell)
    x = a.mean / b.mean - (1 if rule.form == "change" else 0)
    ok, against = _judge_number(rule, data, x)
    what = "change" if rule.form == "change" else "ratio"
    names = [rule.numerator, rule.denominator]
    if num_metric != den_metric:
        names = [f"{data.metric(num_metric).label or num_metric} of {rule.numerator}",
                 f"{data.metric(den_metric).label or den_metric} of {rule.denominator}"]
    text = (f"{names[0]} {a.text(data.metric(num_metric).scale)}; {names[1]} {b.text(data.metric(den_metric).scale)}; "
            f"{what}{' - 1' if rule.form == 'change' else ''} = {_num(x)} ({against})")
    return Outcome(ok, text + _shown(rule, data, cell), {what: x})


def _value(rule: Rule, data: Data, cell: Mapping[str, Any]) -> Outcome:
    m = data.metric(rule.metric)
    ok, parts, out = True, [], {}
    for term in rule.terms or {}:
        s = data.stat(rule, rule.metric, term, cell)
        good, against = _judge_number(rule, data, s.mean)
        ok &= good
        parts.append(f"{_stat_text(rule, data, term, s)}{'' if good else ' (outside)'}")
        out[term] = s.mean
    scale_note = f" (judged in the metric's own unit, ×{1 / m.scale:g} of the shown)" if m.scale != 1 else ""
    return Outcome(ok, "; ".join(parts) + f"; {against}{scale_note}", out)


SHAPES: Dict[str, Callable[[Rule, Data, Mapping[str, Any]], Outcome]] = {
    "order": _order, "trend": _trend, "ratio": _ratio, "value": _value}


def rule_text(rule: Rule, data: Data) -> str:
    """The rule in words, for the evidence."""
    m = data.metric(rule.metric) if rule.metric else None
    tie = f"means within {rule.tie:.0%} of the larger are a tie" if rule.basis == "means" else \
        f"'<' needs disjoint {rule.level:.0%} intervals, '~=' overlapping ones"
    over = f" in {rule.require} cells of {', '.join(_short(c) for c in rule.for_each)}" if rule.for_each else ""
    if rule.shape == "order":
        return f"{rule.relation} on {m.label or rule.metric}{over} ({tie})"
    if rule.shape == "trend":
        q = rule.quantity if isinstance(rule.quantity, str) else \
            next(f"the {k} {a} {'-' if k == 'gap' else '/'} {b}" for k, (a, b) in rule.quantity.items())
        how = {"weak": "no step against it beyond the tie and last vs first beyond it",
               "strict": "every step beyond the tie",
               "endpoints": "last vs first beyond the tie",
               "last": "the last step beyond the tie"}[rule.steps] if rule.direction != "flat" else \
            f"every point within {rule.tie:.0%} of the first"
        return f"{q} of {m.label or rule.metric} {rule.direction} along {_short(rule.axis)} ({how}){over}"
    if rule.shape in ("ratio", "value"):
        return f"{rule.shape} of {m.label or rule.metric}{over} (see the bound above)"
    return ""


def _judge_rule(rule: Rule, data: Data) -> Outcome:
    if rule.shape == "all":
        outs = [_judge_rule(sub, data) for sub in rule.of]
        return Outcome(all(o.ok for o in outs), " | ".join(o.text for o in outs),
                       {f"part{i + 1}": o.data for i, o in enumerate(outs)})
    shape = SHAPES[rule.shape]
    results = []
    for cell in data.cells(rule):
        try:
            results.append((cell, shape(rule, data, cell)))
        except (KeyError, ZeroDivisionError) as exc:
            results.append((cell, Outcome(False, f"cannot be judged: {exc}", {})))
    n_ok = sum(o.ok for _, o in results)
    ok = {"all": n_ok == len(results), "most": n_ok > len(results) / 2, "any": n_ok > 0}[rule.require]
    m = data.metric(rule.metric)
    head = (f"{rule.label}, " if rule.label else "") + (m.label or rule.metric) + (f" ({m.unit})" if m.unit else "")
    if rule.for_each:
        body = " · ".join(f"[{_cell_text(c)}] {o.text}" for c, o in results)
        body += f" — {n_ok} of {len(results)} cells hold (needs {rule.require})"
    else:
        body = results[0][1].text
    text = f"{head}: {body}. Rule: {rule_text(rule, data)}." + (f" {rule.remark}" if rule.remark else "")
    if not rule.for_each:
        return Outcome(ok, text, results[0][1].data)
    return Outcome(ok, text, {_cell_text(c): o.data for c, o in results})


def judge_entry(rule: Union[Rule, Entry], data: Data,
                code: Optional[Callable[[Mapping[str, Any]], Verdict]] = None) -> Verdict:
    """The verdict of one claim's rule."""
    if isinstance(rule, Entry):
        if rule.not_modelled:
            return C.not_modelled(rule.not_modelled)
        if code is None:
            return Verdict(C.NOT_MODELLED, "No evaluator.", f"{data.entry['id']} is judged by code, and "
                           "none is registered for it.")
        return code(data.entry)
    out = _judge_rule(rule, data)
    why_not = rule.why_not or _failed_parts(rule, out)
    if rule.separable_in is not None and out.ok:
        spread, where = _largest_spread(rule, data)
        if spread <= rule.tie:
            reason = (f"the model never separates {', '.join(rule.terms)} on {data.metric(rule.metric).label or rule.metric} "
                      f"by more than the {rule.tie:.0%} tie tolerance in the cells where the paper separates "
                      f"them (largest spread {spread:.2%}, {where}), so this tie could not have failed.")
            return C.consistency(True, out.text + f" Largest spread between the terms over the comparison "
                                 f"cells: {spread:.2%} ({where}).", reason, why_not, out.data)
        out = Outcome(out.ok, out.text + f" The model separates the terms elsewhere (largest spread "
                      f"{spread:.2%}, {where}), so the tie is a test.", out.data)
    if rule.consistency:
        return C.consistency(out.ok, out.text, rule.consistency, why_not, out.data)
    return C.verdict(out.ok, out.text, why_not, out.data, note=rule.note)


def _largest_spread(rule: Rule, data: Data) -> Tuple[float, str]:
    """The largest relative spread, (max - min) / max of the terms' means, over the cells of
    ``rule.separable_in``, and the cell it is found in."""
    sep = rule.separable_in
    probe = rule.model_copy(update={"where": sep.where, "for_each": sep.for_each})
    best, at = 0.0, "no cell"
    for cell in data.cells(probe):
        means = [data.stat(probe, rule.metric, term, cell).mean for term in rule.terms]
        top = max(abs(m) for m in means)
        if top > 0 and (max(means) - min(means)) / top > best:
            best, at = (max(means) - min(means)) / top, _cell_text(cell) or "the only cell"
    return best, at


def _failed_parts(rule: Rule, out: Outcome) -> str:
    return "The rule's condition fails in the runs (see the evidence)."


def evaluate(runs, entries: Sequence[Mapping[str, Any]], rules: Any,
             code: Optional[Mapping[str, Callable[[Mapping[str, Any]], Verdict]]] = None,
             quick: bool = False, quick_note: str = "") -> List[Dict[str, Any]]:
    """One claims.json record per entry, judged by its rule. ``runs``: every attempted run (with the
    paper's metric columns); ``rules``: a paper's packaged rules file (see :func:`load_rules`) or a parsed RuleSet; ``code``:
    evaluators (claim entry -> Verdict) of the claims marked ``code: true``; ``quick_note``:
    appended to the evidence of rule-judged verdicts on --quick runs (code evaluators say it themselves)."""
    ruleset = rules if isinstance(rules, RuleSet) else load_rules(rules)
    attempted = C.mark_settings(runs)
    complete = Selector(C.usable_runs(attempted))
    every = Selector(attempted)
    code = dict(code or {})
    out = []
    for entry in entries:
        rule = ruleset.rules.get(entry["id"])
        data = Data(complete, every, ruleset.metrics, entry)

        def one(rule=rule, data=data, entry=entry) -> Verdict:
            if rule is None:
                return Verdict(C.NOT_MODELLED, "No rule.", f"{entry['id']} has no rule in the rules file (a new claim?).")
            try:
                result = judge_entry(rule, data, code.get(entry["id"]))
            except (KeyError, ValueError, IndexError, ZeroDivisionError) as exc:
                if isinstance(exc, RuleError):
                    raise
                result = Verdict(C.DOES_NOT_HOLD, f"Could not be evaluated from the complete runs: {exc!r}.",
                                 "The runs this claim needs are missing, failed or incomplete.")
            if (quick and quick_note and isinstance(rule, Rule) and result.status not in (C.NOT_MODELLED, C.CONSISTENCY)
                    and entry.get("kind") != "analytical"):
                result.evidence += quick_note
            return result

        out.append(C.judge(entry, one, attempted, quick))
    return out


__all__ = ["Rule", "Entry", "Metric", "RuleSet", "RuleError", "parse_rules", "load_rules", "select",
           "parse_relation", "relation_pairs", "judge_entry", "evaluate"]
