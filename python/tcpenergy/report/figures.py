"""Report figures: one metric against the x axis, one line per variant, one panel per condition,
error bars = the confidence interval of each cell's mean. Written as PNG and SVG."""

from __future__ import annotations

import math
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Sequence, Tuple

import pandas as pd
from matplotlib import rc_context
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import NullLocator

from tcpenergy.report import metrics as catalogue
from tcpenergy.report.cells import cell_stats
from tcpenergy.report.layout import (
    Layout,
    axis_name,
    axis_scale,
    axis_title,
    condition_title,
    conditions,
    format_value,
    is_numeric_axis,
    numeric_values,
    ordered_values,
    select,
    tick_text,
)
from tcpenergy.report.metrics import Metric

STEMS = {"E": "energy_per_bit", "E_I": "idealized_energy_per_bit", "goodput": "goodput",
         "E_receiver": "receiver_energy_per_bit", "E_I_receiver": "receiver_idealized_energy_per_bit",
         "E_network": "network_energy_per_bit", "E_I_network": "network_idealized_energy_per_bit",
         "goodput_network": "network_goodput", "energy_network": "network_energy",
         "idealized_energy_network": "network_idealized_energy", "jain_fairness": "jain_fairness"}
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
# Neighbouring lines are shifted by this fraction of the x range so error bars do not hide
# each other; small enough not to misplace a point visibly.
DODGE = 0.012
PANEL_SIZE = (3.0, 2.3)  # inches per panel
MIN_WIDTH = 4.6         # inches: room for the title above a single panel
MAX_COLUMNS = 6         # panels per row: a figure stays about as wide as it is tall
# The y axis is logarithmic when the figure's values span more than this factor (a decade):
# a linear axis would flatten every line but the highest to the floor.
LOG_SPAN = 10.0
# Categorical tick labels are turned when they would not fit side by side: about this many
# characters fit across one panel at the tick font size.
CHARS_PER_PANEL = 30
TITLE_CHARS = 34        # panel titles wrap at this many characters
MAX_VALUE_TICKS = 8     # numeric axes with this many values or fewer get a tick at each value


@dataclass(frozen=True)
class FigureFile:
    metric: Metric
    caption: str
    png: Path   # relative to the report directory
    svg: Path
    width_in: float = 0.0   # the figure's width in inches (the HTML sizes it from this)


def stem(metric: Metric) -> str:
    return STEMS.get(metric.key) or re.sub(r"[^A-Za-z0-9]+", "_", metric.key).strip("_").lower()


def grid_columns(n_panels: int) -> int:
    """Panels per row when conditions are wrapped: near-square grids (1.5 x as many columns as
    rows), never more than MAX_COLUMNS, never a single tall column when there are several."""
    if n_panels <= 3:
        return max(n_panels, 1)
    return min(MAX_COLUMNS, max(3, math.ceil(math.sqrt(1.5 * n_panels))))


def _grid(runs: pd.DataFrame, panels: Sequence[str]) -> Tuple[int, int, List[Tuple[int, int, tuple]]]:
    """Panel positions: a rows x columns table for two condition axes (the one with more values
    across), else the conditions wrapped onto a near-square grid."""
    combos = conditions(runs, panels)
    if len(panels) == 2:
        first, second = (ordered_values(runs[c]) for c in panels)
        transpose = len(first) > len(second)
        rows, cols = (second, first) if transpose else (first, second)
        places = [(rows.index(c[1] if transpose else c[0]), cols.index(c[0] if transpose else c[1]), c)
                  for c in combos]
        return len(rows), len(cols), places
    cols = grid_columns(len(combos))
    return math.ceil(len(combos) / cols), cols, [(i // cols, i % cols, c) for i, c in enumerate(combos)]


def _x_positions(runs: pd.DataFrame, layout: Layout) -> Tuple[Dict[Any, float], List[str]]:
    """Where each x value sits (in the axis's unit, e.g. loss in %), and tick labels when the
    axis is categorical."""
    if layout.x is None:
        return {None: 0.0}, [""]
    values = ordered_values(runs[layout.x])
    if is_numeric_axis(runs[layout.x]):
        numbers = numeric_values(pd.Series(values, dtype=object)) * axis_scale(layout.x)
        return dict(zip(values, numbers)), []
    return {v: float(i) for i, v in enumerate(values)}, [tick_text(layout.x, v) for v in values]


def _few_and_spread(xs: Sequence[float], span: float) -> bool:
    return 1 < len(xs) <= MAX_VALUE_TICKS and min(b - a for a, b in zip(xs, xs[1:])) >= 0.04 * span


def _fits(ticks: Sequence[str]) -> bool:
    widest = max((max(len(line) for line in t.split("\n")) for t in ticks), default=0)
    return (widest + 2) * len(ticks) <= CHARS_PER_PANEL


def _fitted_ticks(ticks: List[str]) -> Tuple[List[str], Dict[str, Any]]:
    """Categorical tick labels that do not overlap: on one line when they fit side by side, else
    value over unit ("10-20" above "ms"), else turned upright."""
    if not ticks or _fits(ticks):
        return ticks, {}
    stacked = [t.replace(" ", "\n", 1) for t in ticks]
    if _fits(stacked):
        return stacked, {"linespacing": 1.0}
    return ticks, {"rotation": 90}


def use_log_scale(values: Sequence[float]) -> bool:
    """True when the positive values span more than LOG_SPAN (one decade)."""
    positive = [v for v in values if v > 0 and math.isfinite(v)]
    return len(positive) > 1 and max(positive) / min(positive) > LOG_SPAN


def plot_metric(runs: pd.DataFrame, layout: Layout, metric: Metric, level: float = 0.95):
    """The figure for one metric: a Figure on an Agg canvas, leaving pyplot's state alone.

    Each panel has its own y scale: the conditions differ by orders of magnitude (1 % against 10 %
    loss) while the lines within a panel, the variants a claim compares, differ by a few per cent,
    which one shared scale would flatten (the summary tables compare across conditions). A panel's
    scale is logarithmic when its values span more than a decade (``use_log_scale``), unless the
    metric asks for a linear axis (``Metric.linear``)."""
    by = [*layout.panels, *(c for c in (layout.line, layout.x) if c is not None)]
    stats = cell_stats(runs, by, metric.column, level)
    lines = ordered_values(runs[layout.line]) if layout.line else [None]
    positions, ticks = _x_positions(runs, layout)
    x_values = sorted(positions.values())
    span = (x_values[-1] - x_values[0]) or 1.0
    n_rows, n_cols, places = _grid(runs, layout.panels)
    fig = Figure(figsize=(max(PANEL_SIZE[0] * n_cols, MIN_WIDTH), PANEL_SIZE[1] * n_rows + 1.4),
                 constrained_layout=True)
    FigureCanvasAgg(fig)
    axes = fig.subplots(n_rows, n_cols, squeeze=False, sharex=True, sharey=False)
    for ax in axes.flat:
        ax.set_visible(False)
    plotted: Dict[Tuple[int, int], List[float]] = {}
    used = {(row, col) for row, col, _ in places}
    # Panels whose x axis is labelled: the lowest one in each column.
    bottom = {(row, col): (row + 1, col) not in used for row, col in used}
    for row, col, values in places:
        ax = axes[row][col]
        ax.set_visible(True)
        panel = select(stats, layout.panels, values)
        for i, line in enumerate(lines):
            cells = panel if line is None else panel[panel[layout.line] == line]
            cells = cells.assign(_x=[positions[v] for v in cells[layout.x]] if layout.x else 0.0)
            cells = cells.sort_values("_x")
            mean = cells["mean"].astype(float) * metric.scale
            ci_low = cells["ci_low"].astype(float) * metric.scale
            ci_high = cells["ci_high"].astype(float) * metric.scale
            plotted.setdefault((row, col), []).extend([*mean.dropna(), *ci_low.dropna(), *ci_high.dropna()])
            low = (mean - ci_low).clip(lower=0.0).fillna(0.0)
            high = (ci_high - mean).clip(lower=0.0).fillna(0.0)
            shift = DODGE * span * (i - (len(lines) - 1) / 2)
            ax.errorbar(cells["_x"] + shift, mean, yerr=[low, high], marker=MARKERS[i % len(MARKERS)],
                        color=f"C{i % 10}", capsize=3, linewidth=1.4, markersize=4,
                        label=format_value(layout.line or "", line) if line is not None else None)
        if layout.panels:
            # Wrapped so a long condition name stays within its panel.
            ax.set_title(textwrap.fill(condition_title(layout.panels, values), TITLE_CHARS), fontsize=10)
        ax.grid(True, alpha=0.3)
        if col == 0:
            ax.set_ylabel(f"{metric.symbol} ({metric.unit})")
    # Ticks at the swept values, in the axis's unit (loss 0.05 -> 5); set on every panel so
    # each keeps its own label styling.
    first = axes[places[0][0]][places[0][1]]
    ticks, style = _fitted_ticks(ticks)
    for row, col, _ in places:
        ax = axes[row][col]
        if ticks:
            ax.set_xticks(range(len(ticks)), ticks, **style)
        elif layout.x and _few_and_spread(x_values, span):
            ax.set_xticks(x_values, [tick_text(layout.x, v) for v in ordered_values(runs[layout.x])])
    for row, col, _ in places:   # after every set_xticks: the shared ticker shows labels again
        ax = axes[row][col]
        ax.tick_params(labelbottom=bottom[(row, col)])
        if bottom[(row, col)]:
            ax.set_xlabel(axis_title(layout.x, runs[layout.x]) if layout.x else "")
    # A bounded index stays linear: only a wide interval (few seeds) could make it span decades.
    for (row, col), values in plotted.items():
        if not metric.linear and use_log_scale(values):
            axes[row][col].set_yscale("log")
            # Labelled decades are enough; a log axis's minor ticks cost most of a figure's drawing.
            axes[row][col].yaxis.set_minor_locator(NullLocator())
    if layout.line:
        handles, labels = first.get_legend_handles_labels()
        fig.legend(handles, labels, title=axis_name(layout.line), loc="outside lower center",
                   ncols=min(len(labels), 6), fontsize=9, title_fontsize=9, frameon=False)
    scales = "; each panel has its own y scale" if len(places) > 1 else ""
    # Wrapped to the figure's width (about 12 characters an inch at 11 pt) so that a narrow,
    # single-panel figure does not clip its subtitle.
    subtitle = textwrap.fill(f"mean ± {level * 100:g} % confidence interval over seeds (complete runs "
                             f"only){scales}", int(fig.get_figwidth() * 12))
    fig.suptitle(f"{metric.title}\n{subtitle}", fontsize=11)
    return fig


def write_figures(runs: pd.DataFrame, layout: Layout, out_dir: Path,
                  metrics: Sequence[Metric] = catalogue.FIGURES, level: float = 0.95,
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
        # The layout the PNG was drawn with serves the SVG too: solving it again would double the
        # cost of a many-panel figure.
        fig.set_layout_engine("none")
        # No date and a fixed id salt: the same data gives byte-identical SVG.
        with rc_context({"svg.hashsalt": "tcpenergy"}):
            fig.savefig(out_dir / svg, metadata={"Date": None})
        caption = f"{metric.title} ({metric.unit}) against {x_name}"
        logs = [ax for ax in fig.axes if ax.get_visible() and ax.get_yscale() == "log"]
        if logs:
            caption += (" (log scale: the values span more than a decade)" if len(logs) == len(
                [ax for ax in fig.axes if ax.get_visible()]) else " (log scale in the panels whose values span more than a decade)")
        files.append(FigureFile(metric, caption, png, svg, float(fig.get_figwidth())))
    return files
