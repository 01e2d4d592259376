"""What a report says in tables: run counts, per-cell means with CI half-widths, failed runs."""

from __future__ import annotations

import math
from typing import Any, Dict, List, Sequence, Tuple

import pandas as pd

from tcpenergy.report import metrics as catalogue
from tcpenergy.report.cells import cell_stats, ok_runs
from tcpenergy.report.layout import Layout, axis_name, conditions, format_value, label_columns, ordered_values
from tcpenergy.report.metrics import Metric

MAX_FAILURE_ROWS = 20


def cell_columns(layout: Layout) -> List[str]:
    """Panels, then lines, then x: the order a reader scans a cell's description."""
    return [*layout.panels, *(c for c in (layout.line, layout.x) if c is not None)]


def format_mean_ci(mean: float, low: float, high: float, scale: float = 1.0) -> str:
    """``12.918, 12.765, 13.071`` -> ``12.92 ± 0.15``: the half-width to two significant digits
    and the mean to the same decimals; the mean alone (4 significant digits) without an interval."""
    if mean is None or pd.isna(mean):
        return "-"
    mean *= scale
    half = (high - low) / 2 * scale if not (pd.isna(low) or pd.isna(high)) else math.nan
    if not half > 0:
        return f"{mean:.4g}"
    decimals = min(6, max(0, 1 - math.floor(math.log10(half))))
    return f"{mean:.{decimals}f} ± {half:.{decimals}f}"


def long_stats(runs: pd.DataFrame, layout: Layout, metrics: Sequence[Metric] = catalogue.SUMMARY,
               level: float = 0.95) -> pd.DataFrame:
    """One row per cell and metric: n, mean, ci_low, ci_high (unscaled), for export."""
    by = cell_columns(layout)
    parts = [cell_stats(runs, by, m.column, level).assign(metric=m.key, column=m.column)
             for m in metrics if m.column in runs.columns]
    if not parts:
        return pd.DataFrame()
    table = pd.concat(parts, ignore_index=True)
    return table[[*by, "metric", "column", "n", "mean", "ci_low", "ci_high"]].assign(level=level)


def summary_rows(runs: pd.DataFrame, layout: Layout, metrics: Sequence[Metric] = catalogue.SUMMARY,
                 level: float = 0.95) -> Tuple[List[str], List[List[str]]]:
    """Header and rows of the summary table: cell labels, finished/failed runs, mean ± CI."""
    by = cell_columns(layout)
    metrics = [m for m in metrics if m.column in runs.columns]
    stats = long_stats(runs, layout, metrics, level)
    lookup: Dict[Tuple[str, tuple], Any] = {}
    for record in stats.to_dict("records"):
        lookup[(record["metric"], tuple(record[c] for c in by))] = record
    status = runs["status"] if "status" in runs.columns else pd.Series("ok", index=runs.index)
    counts = runs.assign(_ok=status == "ok", _failed=status != "ok").groupby(by, sort=False)[
        ["_ok", "_failed"]].sum() if by else None
    failed_any = bool((status != "ok").any())
    header = [axis_name(c) for c in by] + ["runs"] + (["failed"] if failed_any else [])
    header += [f"{m.symbol} ({m.unit})" for m in metrics]
    rows = []
    for cell in conditions(runs, by):
        ok, failed = (counts.loc[cell if len(cell) > 1 else cell[0]] if by
                      else ((status == "ok").sum(), (status != "ok").sum()))
        row = [format_value(c, v) for c, v in zip(by, cell)] + [str(int(ok))]
        row += [str(int(failed))] if failed_any else []
        for m in metrics:
            r = lookup.get((m.key, cell))
            row.append(format_mean_ci(r["mean"], r["ci_low"], r["ci_high"], m.scale) if r else "-")
        rows.append(row)
    return header, rows


def overview(runs: pd.DataFrame, layout: Layout) -> List[Tuple[str, str]]:
    """(label, value) pairs: run, seed and cell counts, axes, engine versions."""
    status = runs["status"] if "status" in runs.columns else pd.Series("ok", index=runs.index)
    n_failed = int((status != "ok").sum())
    items = [("Runs", f"{len(runs)} ({len(runs) - n_failed} finished, {n_failed} failed)")]
    seeds = sorted(runs["seed"].dropna().unique().tolist()) if "seed" in runs.columns else []
    if seeds:
        span = f"{seeds[0]}–{seeds[-1]}" if len(seeds) > 1 else f"{seeds[0]}"
        items.append(("Seeds", f"{len(seeds)} distinct ({span})"))
    by = cell_columns(layout)
    if by:
        per_cell = ok_runs(runs).groupby(by, sort=False).size()
        items.append(("Cells", f"{runs.groupby(by, sort=False).ngroups} "
                               f"({' × '.join(axis_name(c) for c in by)})"))
        if len(per_cell):
            low, high = int(per_cell.min()), int(per_cell.max())
            items.append(("Finished runs per cell", f"{low}" if low == high else f"{low}–{high}"))
    roles = {layout.x: "x axis", layout.line: "lines"}
    for column in label_columns(runs):
        values = ", ".join(format_value(column, v) for v in ordered_values(runs[column]))
        items.append((f"Axis {axis_name(column)}", f"{values} ({roles.get(column, 'panels')})"))
    for column, label in (("sweep", "Sweep"), ("engine_version", "Engine version")):
        if column in runs.columns:
            values = [str(v) for v in runs[column].dropna().unique().tolist()]
            if values:
                items.append((label, ", ".join(values)))
    return items


def failure_rows(runs: pd.DataFrame) -> Tuple[List[str], List[List[str]]]:
    """Failed runs grouped by error message: count and one example cell."""
    if "status" not in runs.columns:
        return [], []
    failed = runs[runs["status"] != "ok"]
    labels = label_columns(runs)
    header = ["runs", "error", "example"]
    rows = []
    errors = failed["error"].fillna("(no message)") if "error" in failed.columns else pd.Series(
        "(no message)", index=failed.index)
    for error, group in failed.groupby(errors, sort=False):
        first = group.iloc[0]
        example = ", ".join(f"{axis_name(c)} {format_value(c, first[c])}" for c in labels)
        example += f", seed {first['seed']}" if "seed" in group.columns else ""
        rows.append([str(len(group)), str(error), example.lstrip(", ")])
    rows.sort(key=lambda r: -int(r[0]))
    return header, rows[:MAX_FAILURE_ROWS]
