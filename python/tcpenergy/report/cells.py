"""Per-group means and confidence intervals for the report.

The statistics themselves live in ``tcpenergy.experiments.stats`` (Student-t intervals; where a
t bound of a non-negative metric would fall below zero, a bootstrap or the t interval cut at
zero, named in ``ci_method``); this module only asks
it for metrics at one level and renames the columns the report needs. Every statistic is over
complete runs only (:func:`ok_runs`); ``runs`` and ``complete`` say how many were attempted and
used.
"""

from __future__ import annotations

import re
from typing import List, Optional, Sequence, Tuple, Union

import pandas as pd

from tcpenergy.experiments import stats
from tcpenergy.experiments.completeness import usable

STATS_COLUMNS = ["n", "mean", "ci_low", "ci_high", "ci_method", "runs", "complete"]
NODE_PREFIX = "nodes."


def ok_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """The runs a statistic may use: status ok and a transfer that ended (``complete``); failed
    runs carry no results and incomplete ones describe a transfer cut short."""
    return runs[usable(runs)]


def cell_stats(frame: pd.DataFrame, by: Sequence[str], column: str, level: float,
               non_negative: Optional[bool] = None,
               within: Optional[Tuple[float, float]] = None) -> pd.DataFrame:
    """One row per group of ``by`` with at least one value of ``column`` among its complete runs:
    the group's values, n, mean, ci_low, ci_high, ci_method, runs (attempted), complete (usable).

    ``non_negative``: whether ``column`` cannot be negative (its interval then never goes below
    zero); None decides from its name (``stats.is_non_negative``). A derived column, such as a
    per-seed mean of a result field, should pass the answer for the field it came from, or its
    declared range as ``within`` (``stats.declared_range``), which takes precedence.
    """
    by = list(by)
    return _stats(frame, by, [column], level, non_negative, within)[by + STATS_COLUMNS]


def _stats(frame: pd.DataFrame, by: List[str], columns: List[str], level: float,
           non_negative: Optional[bool] = None,
           within: Optional[Tuple[float, float]] = None) -> pd.DataFrame:
    """``cell_stats`` of several columns in one pass, with a ``metric`` column naming each."""
    if frame.empty or not columns:
        return pd.DataFrame(columns=by + ["metric"] + STATS_COLUMNS)
    if within is not None:
        summary = stats.summarize(frame, by=by, metrics=columns, levels=(level,), within=within)
    else:
        summary = stats.summarize(frame, by=by, metrics=columns, levels=(level,),
                                  non_negative=non_negative)
    summary = summary[summary["n"] > 0]
    if summary.empty:
        return pd.DataFrame(columns=by + ["metric"] + STATS_COLUMNS)
    tag = stats.level_name(level)
    summary = summary.rename(columns={f"{tag}_low": "ci_low", f"{tag}_high": "ci_high"})
    out = summary[by + ["metric"] + STATS_COLUMNS].reset_index(drop=True)
    out.attrs = {}  # what was left out is the report's to list (completeness.left_out), once
    return out


def _natural(name: str) -> Tuple[Tuple[int, Union[int, str]], ...]:
    """``s2`` before ``s10``: digit runs compare as numbers."""
    return tuple((0, int(part)) if part.isdigit() else (1, part)
                 for part in re.split(r"(\d+)", name) if part)


def node_names(frame: pd.DataFrame, field: str = "total_j") -> List[str]:
    """The nodes of a network store (columns ``nodes.<name>.<field>``) in natural order
    (``s1, s2, s10``): the record keeps its nodes by name, not in file order."""
    prefix, suffix = NODE_PREFIX, f".{field}"
    names = [c[len(prefix):-len(suffix)] for c in frame.columns
             if c.startswith(prefix) and c.endswith(suffix) and len(c) > len(prefix) + len(suffix)]
    return sorted(dict.fromkeys(names), key=_natural)


def node_stats(frame: pd.DataFrame, by: Sequence[str], fields: Sequence[str],
               level: float) -> pd.DataFrame:
    """One row per cell, node and field (``nodes.<node>.<field>`` columns) with a value among
    the cell's complete runs: the cell's values, node, field, column, n, mean, ci_low, ci_high,
    ci_method, runs, complete. Cells first, then nodes in record order, then ``fields`` order."""
    by = list(by)
    nodes = node_names(frame)
    columns = {f"{NODE_PREFIX}{node}.{field}": (node, field) for node in nodes for field in fields
               if f"{NODE_PREFIX}{node}.{field}" in frame.columns}
    table = _stats(frame, by, list(columns), level)
    table.insert(len(by), "node", [columns[c][0] for c in table["metric"]])
    table.insert(len(by) + 1, "field", [columns[c][1] for c in table["metric"]])
    return table.rename(columns={"metric": "column"})
