"""What a report says in tables: run counts, per-cell means with CI half-widths, the settings
every run shares, and the runs left out (failed or incomplete) with their reasons."""

from __future__ import annotations

import math
import re
from typing import Any, Dict, List, Sequence, Tuple

import pandas as pd

from tcpenergy.experiments import completeness
from tcpenergy.report import metrics as catalogue
from tcpenergy.report.cells import cell_stats
from tcpenergy.report.layout import Layout, axis_name, conditions, format_value, label_columns, ordered_values
from tcpenergy.report.metrics import Metric

MAX_FAILURE_ROWS = 20


def cell_columns(layout: Layout) -> List[str]:
    """Panels, then lines, then x: the order a reader scans a cell's description."""
    return [*layout.panels, *(c for c in (layout.line, layout.x) if c is not None)]


def format_mean_ci(mean: float, low: float, high: float, scale: float = 1.0) -> str:
    """``12.918, 12.765, 13.071`` -> ``12.92 ± 0.15``: the half-width to two significant digits
    and the mean to the same decimals; the mean alone (4 significant digits) without an interval.
    An interval that is not centred on the mean (cut at a bound of the metric's range, or a
    bootstrap) is shown as its ends: ``0.920 [0.031, 1.000]``."""
    if mean is None or pd.isna(mean):
        return "-"
    mean *= scale
    half = (high - low) / 2 * scale if not (pd.isna(low) or pd.isna(high)) else math.nan
    if not half > 0:
        return f"{mean:.4g}"
    decimals = min(6, max(0, 1 - math.floor(math.log10(half))))
    centre = (low + high) / 2 * scale
    if abs(centre - mean) > 0.5 * 10 ** -decimals:
        return f"{mean:.{decimals}f} [{low * scale:.{decimals}f}, {high * scale:.{decimals}f}]"
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
    """Header and rows of the summary table: cell labels, complete / run counts, mean ± CI (over
    complete runs only)."""
    by = cell_columns(layout)
    metrics = [m for m in metrics if m.column in runs.columns]
    stats = long_stats(runs, layout, metrics, level)
    lookup: Dict[Tuple[str, tuple], Any] = {}
    for record in stats.to_dict("records"):
        lookup[(record["metric"], tuple(record[c] for c in by))] = record
    counts = {tuple(r[c] for c in by): (int(r["complete"]), int(r["runs"]))
              for r in completeness.run_counts(runs, by).to_dict("records")}
    header = [axis_name(c) for c in by] + ["complete / runs"]
    header += [f"{m.symbol} ({m.unit})" for m in metrics]
    rows = []
    for cell in conditions(runs, by):
        complete, total = counts.get(cell, (0, 0))
        row = [format_value(c, v) for c, v in zip(by, cell)] + [f"{complete}/{total}"]
        for m in metrics:
            r = lookup.get((m.key, cell))
            row.append(format_mean_ci(r["mean"], r["ci_low"], r["ci_high"], m.scale) if r else "-")
        rows.append(row)
    return header, rows


def run_status_counts(runs: pd.DataFrame) -> Tuple[int, int, int]:
    """(complete, incomplete, failed) run counts."""
    good = completeness.usable(runs)
    failed = ~completeness.ok(runs)
    return int(good.sum()), int((~good & ~failed).sum()), int(failed.sum())


def overview(runs: pd.DataFrame, layout: Layout) -> List[Tuple[str, str]]:
    """(label, value) pairs: run, seed and cell counts, axes, engine versions."""
    complete, incomplete, failed = run_status_counts(runs)
    items = [("Runs", f"{len(runs)} ({complete} complete, {incomplete} incomplete, {failed} failed)")]
    seeds = sorted(runs["seed"].dropna().unique().tolist()) if "seed" in runs.columns else []
    if seeds:
        span = f"{seeds[0]}–{seeds[-1]}" if len(seeds) > 1 else f"{seeds[0]}"
        items.append(("Seeds", f"{len(seeds)} distinct ({span})"))
    by = cell_columns(layout)
    if by:
        counts = completeness.run_counts(runs, by)
        items.append(("Cells", f"{len(counts)} ({' × '.join(axis_name(c) for c in by)})"))
        if len(counts):
            low, high = int(counts["complete"].min()), int(counts["complete"].max())
            items.append(("Complete runs per cell", f"{low}" if low == high else f"{low}–{high}"))
    roles = {layout.x: "x axis", layout.line: "lines"}
    for column in label_columns(runs):
        values = ", ".join(format_value(column, v) for v in ordered_values(runs[column]))
        items.append((f"Axis {axis_name(column)}", f"{values} ({roles.get(column, 'panels')})"))
    for column, label in (("sweep", "Sweeps"), ("engine_version", "Engine version")):
        if column in runs.columns:
            values = [str(v) for v in runs[column].dropna().unique().tolist()]
            if values:
                items.append((label, ", ".join(values)))
    return items


# Scenario inputs among the runs frame's columns; every other column is a result or run metadata.
_INPUT_ROOTS = ("name", "stop_after", "seed_base")
_INPUT_PREFIXES = ("path.", "tcp.", "traffic.", "energy.", "cpu.")
# A network scenario's inputs: its media and flows by index (links.0.forward.rate, flows.1.traffic.kind,
# channels.0.impairments.0.p) and each node's device profile and battery; the records name media by
# their ends (links.a->b.packets_sent) and flows by name, so these patterns select inputs only.
_NETWORK_INPUT = re.compile(r"^((links|channels|pipes|flows)\.\d+\.|nodes\.[^.]+\.(profile|battery\.))")
_RESULT = re.compile(
    r"^(path\.(forward|reverse)\.(packets_sent|bytes_sent|packets_delivered|dropped_\w+|marked_ce|"
    r"cross_\w+|held_outage)|energy\.(sender|receiver)\..+|energy\.window_s|cpu\.\w+_ops\..+)$")


PARAMETERS = "parameters."


def input_columns(runs: pd.DataFrame) -> List[str]:
    """The scenario settings among the frame's columns (``path.mtu``, ``tcp.min_rto``, ...;
    ``parameters.<key>`` columns count as ``<key>`` and are preferred when both exist)."""
    chosen: Dict[str, str] = {}
    for c in runs.columns:
        key = c[len(PARAMETERS):] if c.startswith(PARAMETERS) else c
        if ((key in _INPUT_ROOTS or key.startswith(_INPUT_PREFIXES) or _NETWORK_INPUT.match(key))
                and not _RESULT.match(key)):
            if key not in chosen or c.startswith(PARAMETERS):
                chosen[key] = c
    return list(chosen.values())


def _constant(values: pd.Series) -> Tuple[bool, Any]:
    texts = {completeness.hashable(v) if not (isinstance(v, float) and math.isnan(v)) else None
             for v in values.tolist()}
    return len(texts) == 1, values.iloc[0] if len(values) else None


def _unset(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _setting_name(column: str) -> str:
    return column[len(PARAMETERS):] if column.startswith(PARAMETERS) else column


def _setting_text(value: Any) -> str:
    """As a scenario file would write it: 5000000, not 5e+06 or 5,000,000."""
    if _unset(value):
        return "(unset)"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(completeness.hashable(value))


Settings = List[Tuple[str, str]]   # (scenario key, value as written in a scenario file)


def fixed_settings(runs: pd.DataFrame) -> Tuple[Settings, List[Tuple[str, Settings]]]:
    """The settings every run shares as (key, value) pairs, and per sweep the settings that are
    constant within that sweep but differ between sweeps (an empty list when there is one sweep).
    Settings that vary within a sweep are its axes and are shown there."""
    columns = input_columns(runs)
    common, varying = [], []
    for column in columns:
        same, value = _constant(runs[column])
        if same and _unset(value):
            continue   # a key no run sets says nothing
        if same:
            common.append((_setting_name(column), _setting_text(value)))
        else:
            varying.append(column)
    per_sweep: List[Tuple[str, Settings]] = []
    if "sweep" in runs.columns and runs["sweep"].nunique() > 1:
        for sweep, group in runs.groupby("sweep", sort=False):
            own = []
            for column in varying:
                same, value = _constant(group[column])
                if same and not _unset(value):   # keys other sweeps set and this one does not
                    own.append((_setting_name(column), _setting_text(value)))
            per_sweep.append((str(sweep), own))
    return common, per_sweep


def left_out_rows(runs: pd.DataFrame) -> Tuple[List[str], List[List[str]]]:
    """Every failed or incomplete run: sweep, seed, cell labels, status and reason."""
    table = completeness.left_out(runs)
    if table.empty:
        return [], []
    labels = [c for c in label_columns(runs) if c in table.columns]
    header = ["sweep", "seed"] + [axis_name(c) for c in labels] + ["status", "reason"]
    rows = []
    for r in table.to_dict("records"):
        seed = r.get("seed")
        rows.append([str(r.get("sweep") or "-"), "-" if seed is None or seed != seed else str(int(seed))]
                    + [format_value(c, r[c]) for c in labels] + [str(r["status"]), str(r["reason"])])
    return header, rows


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
