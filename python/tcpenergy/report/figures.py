"""Report figures: one metric against the x axis, one line per variant, one panel per condition,
error bars = the confidence interval of each cell's mean. Written as PNG and SVG."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Sequence, Tuple

import pandas as pd
from matplotlib import rc_context
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from tcpenergy.report import metrics as catalogue
from tcpenergy.report.cells import cell_stats
from tcpenergy.report.layout import (
    Layout,
    axis_name,
    axis_title,
    condition_title,
    conditions,
    format_value,
    is_numeric_axis,
    numeric_values,
    ordered_values,
    select,
)
from tcpenergy.report.metrics import Metric

STEMS = {"E": "energy_per_bit", "E_I": "idealized_energy_per_bit", "goodput": "goodput"}
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
# Neighbouring lines are shifted by this fraction of the x range so error bars do not hide
# each other; small enough not to misplace a point visibly.
DODGE = 0.012
PANEL_SIZE = (3.8, 2.9)  # inches per panel
MIN_WIDTH = 4.6         # inches: room for the title above a single panel


@dataclass(frozen=True)
class FigureFile:
    metric: Metric
    caption: str
    png: Path   # relative to the report directory
    svg: Path


def stem(metric: Metric) -> str:
    return STEMS.get(metric.key) or re.sub(r"[^A-Za-z0-9]+", "_", metric.key).strip("_").lower()


def _grid(runs: pd.DataFrame, panels: Sequence[str]) -> Tuple[int, int, List[Tuple[int, int, tuple]]]:
    """Panel positions: a rows x columns table for two condition axes (the one with more values
    across), else the conditions wrapped three to a row."""
    combos = conditions(runs, panels)
    if len(panels) == 2:
        first, second = (ordered_values(runs[c]) for c in panels)
        transpose = len(first) > len(second)
        rows, cols = (second, first) if transpose else (first, second)
        places = [(rows.index(c[1] if transpose else c[0]), cols.index(c[0] if transpose else c[1]), c)
                  for c in combos]
        return len(rows), len(cols), places
    cols = min(len(combos), 3)
    return math.ceil(len(combos) / cols), cols, [(i // cols, i % cols, c) for i, c in enumerate(combos)]


def _x_positions(runs: pd.DataFrame, layout: Layout) -> Tuple[Dict[Any, float], List[str]]:
    """Where each x value sits, and tick labels when the axis is categorical."""
    if layout.x is None:
        return {None: 0.0}, [""]
    values = ordered_values(runs[layout.x])
    if is_numeric_axis(runs[layout.x]):
        numbers = numeric_values(pd.Series(values, dtype=object))
        return dict(zip(values, numbers)), []
    return {v: float(i) for i, v in enumerate(values)}, [format_value(layout.x, v) for v in values]


def _few_and_spread(xs: Sequence[float], span: float) -> bool:
    return 1 < len(xs) <= 6 and min(b - a for a, b in zip(xs, xs[1:])) >= 0.08 * span


def plot_metric(runs: pd.DataFrame, layout: Layout, metric: Metric, level: float = 0.95):
    """The figure for one metric: a Figure on an Agg canvas, leaving pyplot's state alone."""
    by = [*layout.panels, *(c for c in (layout.line, layout.x) if c is not None)]
    stats = cell_stats(runs, by, metric.column, level)
    lines = ordered_values(runs[layout.line]) if layout.line else [None]
    positions, ticks = _x_positions(runs, layout)
    span = (max(positions.values()) - min(positions.values())) or 1.0
    n_rows, n_cols, places = _grid(runs, layout.panels)
    fig = Figure(figsize=(max(PANEL_SIZE[0] * n_cols, MIN_WIDTH), PANEL_SIZE[1] * n_rows + 0.9),
                 constrained_layout=True)
    FigureCanvasAgg(fig)
    axes = fig.subplots(n_rows, n_cols, squeeze=False, sharex=True)
    for ax in axes.flat:
        ax.set_visible(False)
    for row, col, values in places:
        ax = axes[row][col]
        ax.set_visible(True)
        panel = select(stats, layout.panels, values)
        for i, line in enumerate(lines):
            cells = panel if line is None else panel[panel[layout.line] == line]
            cells = cells.assign(_x=[positions[v] for v in cells[layout.x]] if layout.x else 0.0)
            cells = cells.sort_values("_x")
            mean = cells["mean"].astype(float) * metric.scale
            low = (mean - cells["ci_low"].astype(float) * metric.scale).fillna(0.0)
            high = (cells["ci_high"].astype(float) * metric.scale - mean).fillna(0.0)
            shift = DODGE * span * (i - (len(lines) - 1) / 2)
            ax.errorbar(cells["_x"] + shift, mean, yerr=[low, high], marker=MARKERS[i % len(MARKERS)],
                        color=f"C{i % 10}", capsize=3, linewidth=1.4, markersize=4,
                        label=format_value(layout.line or "", line) if line is not None else None)
        if layout.panels:
            ax.set_title(condition_title(layout.panels, values), fontsize=10)
        if ticks:
            ax.set_xticks(range(len(ticks)))
            ax.set_xticklabels(ticks)
        elif _few_and_spread(sorted(positions.values()), span):
            ax.set_xticks(sorted(positions.values()))  # the swept values themselves
        ax.grid(True, alpha=0.3)
        if col == 0:
            ax.set_ylabel(f"{metric.symbol} ({metric.unit})")
        if row == n_rows - 1 or not axes[row + 1][col].get_visible():
            ax.set_xlabel(axis_title(layout.x, runs[layout.x]) if layout.x else "")
            ax.tick_params(labelbottom=True)
    if layout.line:
        first = axes[places[0][0]][places[0][1]]
        first.legend(title=axis_name(layout.line), fontsize=8, title_fontsize=8)
    fig.suptitle(f"{metric.title}\nmean ± {level * 100:g} % confidence interval over seeds",
                 fontsize=11)
    return fig


def write_figures(runs: pd.DataFrame, layout: Layout, out_dir: Path,
                  metrics: Sequence[Metric] = catalogue.RANKED, level: float = 0.95,
                  subdir: str = "figures") -> List[FigureFile]:
    """Every metric's figure as ``<out_dir>/<subdir>/<stem>.png`` and ``.svg``."""
    if metrics:
        (out_dir / subdir).mkdir(parents=True, exist_ok=True)
    x_name = axis_name(layout.x) if layout.x else "condition"
    files = []
    for metric in metrics:
        fig = plot_metric(runs, layout, metric, level)
        png, svg = (Path(subdir) / f"{stem(metric)}.{ext}" for ext in ("png", "svg"))
        fig.savefig(out_dir / png, dpi=120, metadata={"Software": None})
        # No date and a fixed id salt: the same data gives byte-identical SVG.
        with rc_context({"svg.hashsalt": "tcpenergy"}):
            fig.savefig(out_dir / svg, metadata={"Date": None})
        caption = f"{metric.title} ({metric.unit}) against {x_name}"
        files.append(FigureFile(metric, caption, png, svg))
    return files
