"""Per-group means and confidence intervals for the report.

The statistics themselves (Student-t intervals) live in ``tcpenergy.experiments.stats``; this
module only asks it for one metric at one level and renames the columns the report needs.
"""

from __future__ import annotations

from typing import Sequence

import pandas as pd

from tcpenergy.experiments import stats

STATS_COLUMNS = ["n", "mean", "ci_low", "ci_high"]


def ok_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """Failed runs carry no results; every statistic is over the runs that finished."""
    return runs[runs["status"] == "ok"] if "status" in runs.columns else runs


def cell_stats(frame: pd.DataFrame, by: Sequence[str], column: str, level: float) -> pd.DataFrame:
    """One row per group of ``by``: the group's values, n, mean, ci_low, ci_high of ``column``."""
    by = list(by)
    frame = ok_runs(frame)
    frame = frame[frame[column].notna()]
    if frame.empty:
        return pd.DataFrame(columns=by + STATS_COLUMNS)
    summary = stats.summarize(frame, by=by, metrics=[column], levels=(level,))
    tag = stats.level_name(level)
    summary = summary.rename(columns={f"{tag}_low": "ci_low", f"{tag}_high": "ci_high"})
    return summary[by + STATS_COLUMNS].reset_index(drop=True)
