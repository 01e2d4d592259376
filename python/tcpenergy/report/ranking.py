"""Rank orders in the style of seed 000's Table 4: per condition and metric, variants best first,
written like ``S < N ≈ R`` (energy: lower is better) or ``S > N ≈ R`` (goodput: higher is better).

What is compared is each variant's mean over the x axis (RTT) within the condition, as the paper
compares "means over RTTs". Its confidence interval comes from the seeds: for every seed, the
variant's runs in the condition are averaged over the x values, and these per-seed averages are
the replicates whose mean and Student-t interval ``experiments.stats`` computes. Why per seed,
rather than pooling every run or propagating the per-RTT intervals:
- RTT is a fixed design factor, not noise: pooling all runs would count the RTT effect as
  spread and declare nearly everything a tie;
- the engine uses common random numbers, so one seed's runs at different RTTs share a channel and
  are correlated; averaging per seed keeps that correlation, propagation would assume independence.
A seed that lacks a complete run at some x value of the condition (a failed or incomplete run) is left out for
that variant, so every replicate averages the same x values.

Ties: neighbours in the order (sorted by mean, best first) are joined by ``≈`` when their confidence
intervals overlap (closed intervals), else by ``<`` or ``>``. Only neighbours are compared, as in
the paper's chains. With fewer than two replicates there is no interval: the mean stands alone and
ties only with an equal mean.
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Union

import pandas as pd

from tcpenergy.experiments.stats import declared_range
from tcpenergy.report import metrics as catalogue
from tcpenergy.report.cells import cell_stats, ok_runs
from tcpenergy.report.layout import conditions, format_value, normalize_labels, ordered_values, select
from tcpenergy.report.metrics import Metric

LETTERS = {"tahoe": "T", "reno": "R", "newreno": "N", "sack": "S", "cubic": "C"}
TIE = "≈"
_VALUE = "_value"


def as_metric(metric: Union[Metric, str]) -> Metric:
    """A catalogue metric by key or column; any other column ranks with lower as better."""
    if isinstance(metric, Metric):
        return metric
    for known in catalogue.KNOWN:
        if metric in (known.key, known.column):
            return known
    return Metric(metric, metric, metric, metric, "")


def _per_seed(runs: pd.DataFrame, group: List[str], x_col: Optional[str],
              column: str) -> pd.DataFrame:
    """One row per (group, seed): the seed's mean over the x values, complete seeds only."""
    data = ok_runs(runs)
    data = data[data[column].notna()]
    if x_col is None:
        return data.groupby(group + ["seed"], sort=False)[column].mean().rename(_VALUE).reset_index()
    # Average replicated cells first (axes outside the group), then over x.
    per_x = data.groupby(group + [x_col, "seed"], sort=False)[column].mean().reset_index()
    per_seed = (per_x.groupby(group + ["seed"], sort=False)[column]
                .agg([(_VALUE, "mean"), ("_xs", "count")]).reset_index())
    # The x values of the design come from every run, failed ones included.
    condition_cols = group[:-1]
    if condition_cols:
        design = runs.groupby(condition_cols, sort=False)[x_col].nunique().rename("_expected")
        per_seed = per_seed.merge(design.reset_index(), on=condition_cols)
    else:
        per_seed["_expected"] = runs[x_col].nunique()
    complete = per_seed["_xs"] == per_seed["_expected"]
    return per_seed[complete].drop(columns=["_xs", "_expected"])


def variant_means(runs_df: pd.DataFrame, condition_cols: Sequence[str], x_col: Optional[str],
                  variant_col: str, metrics: Iterable[Union[Metric, str]] = catalogue.RANKED,
                  level: float = 0.95) -> pd.DataFrame:
    """Per condition, variant and metric: n (complete seeds), mean over x, ci_low, ci_high."""
    group = [*condition_cols, variant_col]
    runs_df = normalize_labels(runs_df)
    parts = []
    for metric in map(as_metric, metrics):
        per_seed = _per_seed(runs_df, group, x_col, metric.column)
        # Per-seed means of a field lie in the field's declared range: their interval must too.
        stats = cell_stats(per_seed, group, _VALUE, level,
                           within=declared_range(metric.column))
        parts.append(stats.assign(metric=metric.key))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def short_names(variants: Sequence[Any], letters: Optional[Mapping[str, str]] = None) -> Dict[Any, str]:
    """Paper letters (R, N, S, T) when every variant has a distinct one, else the names."""
    letters = LETTERS if letters is None else letters
    short = [letters.get(v) if isinstance(v, str) else None for v in variants]
    if all(short) and len(set(short)) == len(short):
        return dict(zip(variants, short))
    return {v: format_value("", v) for v in variants}


def overlaps(a: Mapping[str, float], b: Mapping[str, float]) -> bool:
    """Closed confidence intervals overlap; a missing interval is the mean alone."""
    def bounds(row):
        low, high = row["ci_low"], row["ci_high"]
        return (row["mean"], row["mean"]) if pd.isna(low) or pd.isna(high) else (low, high)

    (a_low, a_high), (b_low, b_high) = bounds(a), bounds(b)
    return a_low <= b_high and b_low <= a_high


def _chain(stats: pd.DataFrame, variant_col: str, metric: Metric, rank: Dict[Any, int]):
    rows = sorted(stats.to_dict("records"), key=lambda r: (
        -r["mean"] if metric.higher_is_better else r["mean"], rank[r[variant_col]]))
    strict = ">" if metric.higher_is_better else "<"
    relations = tuple(TIE if overlaps(a, b) else strict for a, b in zip(rows, rows[1:]))
    return tuple(r[variant_col] for r in rows), relations


def ordering_text(order: Sequence[Any], relations: Sequence[str], names: Mapping[Any, str]) -> str:
    """``("sack", "newreno", "reno"), ("<", "≈")`` -> ``S < N ≈ R``."""
    parts = [names[order[0]]] if order else []
    for relation, variant in zip(relations, order[1:]):
        parts += [relation, names[variant]]
    return " ".join(parts)


def rank_table(runs_df: pd.DataFrame, condition_cols: Sequence[str], x_col: Optional[str],
               variant_col: str, metrics: Iterable[Union[Metric, str]] = catalogue.RANKED,
               level: float = 0.95, letters: Optional[Mapping[str, str]] = None) -> pd.DataFrame:
    """One row per condition and metric.

    Columns: the condition columns; ``metric`` (key: "E", "E_I", "goodput"), ``symbol``,
    ``column``, ``better`` ("lower"/"higher"); ``order`` (variant values, best first) and
    ``relations`` ("<", ">" or "≈" between neighbours); ``ordering`` (the text, e.g. "S < N ≈ R");
    ``seeds`` (fewest complete seeds behind any variant's mean); ``missing`` (variants with runs
    in the condition but no complete seed, left out of the order).
    """
    condition_cols = list(condition_cols)
    metrics = [as_metric(m) for m in metrics]
    runs_df = normalize_labels(runs_df)
    variants = ordered_values(runs_df[variant_col])
    rank = {v: i for i, v in enumerate(variants)}
    names = short_names(variants, letters)
    means = variant_means(runs_df, condition_cols, x_col, variant_col, metrics, level)
    rows = []
    for values in conditions(runs_df, condition_cols):
        present = set(select(runs_df, condition_cols, values)[variant_col])
        cell = select(means, condition_cols, values) if len(means) else means
        for metric in metrics:
            stats = cell[(cell["metric"] == metric.key) & cell["mean"].notna()] if len(cell) else cell
            order, relations = _chain(stats, variant_col, metric, rank) if len(stats) else ((), ())
            rows.append({
                **dict(zip(condition_cols, values)),
                "metric": metric.key, "symbol": metric.symbol, "column": metric.column,
                "better": "higher" if metric.higher_is_better else "lower",
                "order": order, "relations": relations,
                "ordering": ordering_text(order, relations, names),
                "seeds": int(stats["n"].min()) if len(stats) else 0,
                "missing": tuple(v for v in variants if v in present and v not in order),
            })
    return pd.DataFrame(rows)
