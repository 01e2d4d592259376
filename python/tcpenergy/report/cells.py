"""Per-group means and confidence intervals for the report.

The statistics themselves live in ``tcpenergy.experiments.stats`` (Student-t intervals; where a
t bound of a non-negative metric would fall below zero, a bootstrap or the t interval cut at
zero, named in ``ci_method``); this module only asks
it for one metric at one level and renames the columns the report needs. Every statistic is over
complete runs only (:func:`ok_runs`); ``runs`` and ``complete`` say how many were attempted and
used.
"""

from __future__ import annotations

from typing import Optional, Sequence

import pandas as pd

from tcpenergy.experiments import stats
from tcpenergy.experiments.completeness import usable

STATS_COLUMNS = ["n", "mean", "ci_low", "ci_high", "ci_method", "runs", "complete"]


def ok_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """The runs a statistic may use: status ok and a transfer that ended (``complete``); failed
    runs carry no results and incomplete ones describe a transfer cut short."""
    return runs[usable(runs)]


def cell_stats(frame: pd.DataFrame, by: Sequence[str], column: str, level: float,
               non_negative: Optional[bool] = None) -> pd.DataFrame:
    """One row per group of ``by`` with at least one value of ``column`` among its complete runs:
    the group's values, n, mean, ci_low, ci_high, ci_method, runs (attempted), complete (usable).

    ``non_negative``: whether ``column`` cannot be negative (its interval then never goes below
    zero); None decides from its name (``stats.is_non_negative``). A derived column, such as a
    per-seed mean of a result field, should pass the answer for the field it came from.
    """
    by = list(by)
    if frame.empty:
        return pd.DataFrame(columns=by + STATS_COLUMNS)
    summary = stats.summarize(frame, by=by, metrics=[column], levels=(level,),
                              non_negative=non_negative)
    summary = summary[summary["n"] > 0]
    if summary.empty:
        return pd.DataFrame(columns=by + STATS_COLUMNS)
    tag = stats.level_name(level)
    summary = summary.rename(columns={f"{tag}_low": "ci_low", f"{tag}_high": "ci_high"})
    out = summary[by + STATS_COLUMNS].reset_index(drop=True)
    out.attrs = {}  # what was left out is the report's to list (completeness.left_out), once
    return out
