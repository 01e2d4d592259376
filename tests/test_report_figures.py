"""Report figures rendered to PNG and checked on their matplotlib artists: axes named with the
swept quantity and its unit, ticks in that unit, one shared y scale per figure (log when the
values span decades), panels on a grid (issue #8, "Figures")."""

from __future__ import annotations

import itertools
from typing import Dict, Sequence

import pandas as pd
import pytest
from report_data import E_COL, EI_COL, LOSS, TAU_COL

from tcpenergy.report import metrics
from tcpenergy.report.figures import grid_columns, plot_metric, write_figures
from tcpenergy.report.layout import Layout, infer_layout

RECEIVER_COL = "energy.receiver.per_bit_total_uj"
RECEIVER_EI_COL = "energy.receiver.per_bit_idealized_uj"


def frame(axes: Dict[str, Sequence], value=lambda cell, seed: 10.0 + seed, seeds=(1, 2, 3)) -> pd.DataFrame:
    """One complete run per combination of the axes' values and seed; every metric column is
    ``value(cell, seed)`` with ``cell`` the dict of label values."""
    rows = []
    for combo in itertools.product(*axes.values()):
        cell = dict(zip(axes, combo))
        for seed in seeds:
            v = value(cell, seed)
            rows.append({**cell, "seed": seed, "status": "ok", "complete": True, "error": None,
                         E_COL: v, EI_COL: v, TAU_COL: v * 1e5, RECEIVER_COL: v * 0.9,
                         RECEIVER_EI_COL: v * 0.8})
    return pd.DataFrame(rows)


def visible_axes(fig):
    return [ax for ax in fig.axes if ax.get_visible()]


def tick_texts(ax):
    ax.figure.canvas.draw()
    return [t.get_text() for t in ax.get_xticklabels() if t.get_text()]


def bottom_axes(fig):
    return [ax for ax in visible_axes(fig) if ax.get_xlabel()]


def test_a_loss_axis_is_named_loss_in_percent_with_ticks_at_the_swept_percentages():
    # Seed 000 section 4 sweeps the loss rate 1, 5 and 10 %; the run stores it as p in [0, 1].
    runs = frame({"label.tcp.variant": ["reno", "sack"], LOSS: [0.01, 0.05, 0.10],
                  "label.path.mtu": [512, 1500]})
    fig = plot_metric(runs, Layout(x=LOSS, line="label.tcp.variant", panels=("label.path.mtu",)),
                      metrics.E)
    for ax in bottom_axes(fig):
        assert ax.get_xlabel() == "loss (%)"
        assert tick_texts(ax) == ["1", "5", "10"]


def test_a_label_loss_column_reads_as_a_percentage_too():
    runs = frame({"label.tcp.variant": ["sack"], "label.loss": [0.01, 0.1]})
    fig = plot_metric(runs, Layout(x="label.loss", line="label.tcp.variant", panels=()), metrics.E)
    (ax,) = visible_axes(fig)
    assert ax.get_xlabel() == "loss (%)" and tick_texts(ax) == ["1", "10"]


def test_rtt_ranges_are_ticked_as_10_20_ms_without_overlapping_labels():
    # Seed 002 Table 2: RTT ranges 10-20 ... 120-140 ms, one per sweep, on 24 panels.
    ranges = ["10-20 ms", "30-50 ms", "60-80 ms", "90-110 ms", "120-140 ms"]
    runs = frame({"label.tcp.variant": ["sack", "ecn-elfn"], "label.rtt_range": ranges,
                  "label.condition": [f"condition {i}" for i in range(24)]}, seeds=(1, 2))
    fig = plot_metric(runs, Layout(x="label.rtt_range", line="label.tcp.variant",
                                   panels=("label.condition",)), metrics.E)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for ax in bottom_axes(fig):
        assert ax.get_xlabel() == "RTT range"
        labels = [t for t in ax.get_xticklabels() if t.get_text()]
        assert [t.get_text().replace("\n", " ") for t in labels] == ranges
        boxes = [t.get_window_extent(renderer) for t in labels]
        for a, b in zip(boxes, boxes[1:]):
            assert not a.overlaps(b), (a, b)


def test_rtt_ranges_stored_as_lists_show_as_ranges_in_order():
    runs = frame({"label.tcp.variant": ["sack"], "label.rtt_range": ["[30, 50]", "[10, 20]"]})
    fig = plot_metric(runs, Layout(x="label.rtt_range", line="label.tcp.variant", panels=()),
                      metrics.E)
    assert [t.replace("\n", " ") for t in tick_texts(visible_axes(fig)[0])] == ["10-20 ms", "30-50 ms"]


def test_an_mtu_axis_is_in_bytes_with_a_tick_at_each_mtu():
    # Seed 003 section 4 varies the MTU: 500, 1000, 1500 and 2296 bytes.
    runs = frame({"label.tcp.variant": ["newreno", "sack"], "label.path.mtu": [500, 1000, 1500, 2296]})
    fig = plot_metric(runs, infer_layout(runs), metrics.GOODPUT)
    (ax,) = visible_axes(fig)
    assert ax.get_xlabel() == "MTU (bytes)"
    assert tick_texts(ax) == ["500", "1000", "1500", "2296"]


def test_each_panel_has_its_own_y_scale_so_the_variants_differences_show():
    # Issue #26 (reports): conditions differ several-fold (1 % against 10 % loss) while the variants a
    # claim compares differ by per cent; one shared scale flattened the lines of every panel.
    runs = frame({"label.tcp.variant": ["reno", "sack"], "label.rtt": ["15ms", "130ms"],
                  LOSS: [0.01, 0.05, 0.10]},
                 value=lambda c, s: 20 + 40 * c[LOSS] * 10 + s)
    fig = plot_metric(runs, infer_layout(runs), metrics.E)
    axes = visible_axes(fig)
    assert len(axes) == 3
    limits = [ax.get_ylim() for ax in axes]
    assert len(set(limits)) == 3
    # Each panel spans its own data: the 1 % panel's top lies below the 10 % panel's bottom.
    assert limits[0][1] < limits[2][0]
    assert not any(axes[0].get_shared_y_axes().joined(axes[0], ax) for ax in axes[1:])
    assert all(ax.get_yscale() == "linear" for ax in axes)
    assert "each panel has its own y scale" in fig.get_suptitle()
    # One legend for the figure, outside the panels, naming every line.
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["reno", "sack"]
    assert all(ax.get_legend() is None for ax in axes)


def test_a_metric_spanning_decades_gets_a_log_y_axis_and_says_so_in_its_caption(tmp_path):
    # A stalled SACK run under route failure costs ~100x the energy per bit of ECN-ELFN (seed 002).
    runs = frame({"label.tcp.variant": ["sack", "ecn-elfn"], "label.rtt": ["20ms", "80ms"]},
                 value=lambda c, s: (5000.0 if c["label.tcp.variant"] == "sack" else 12.0) + s)
    fig = plot_metric(runs, infer_layout(runs), metrics.E)
    assert all(ax.get_yscale() == "log" for ax in visible_axes(fig))
    (file,) = write_figures(runs, infer_layout(runs), tmp_path, [metrics.E])
    assert "log scale" in file.caption


def test_many_conditions_are_laid_out_on_a_grid_not_a_single_column():
    runs = frame({"label.tcp.variant": ["sack"], "label.rtt": ["20ms", "80ms"],
                  "label.condition": [f"c{i}" for i in range(11)]}, seeds=(1, 2))
    fig = plot_metric(runs, infer_layout(runs), metrics.E)
    axes = visible_axes(fig)
    columns = {round(ax.get_position().x0, 3) for ax in axes}
    rows = {round(ax.get_position().y0, 3) for ax in axes}
    assert len(axes) == 11
    assert len(columns) >= 3 and len(rows) <= len(columns)
    assert [grid_columns(n) for n in (1, 3, 4, 11, 24, 60)] == [1, 3, 3, 5, 6, 6]


@pytest.mark.parametrize("metric", metrics.FIGURES, ids=lambda m: m.key)
def test_every_figure_kind_renders_to_png_with_its_metric_and_unit_on_the_y_axis(metric, tmp_path):
    runs = frame({"label.tcp.variant": ["reno", "sack"], "label.rtt": ["20ms", "80ms"],
                  "label.path.mtu": [512, 1500]})
    (file,) = write_figures(runs, infer_layout(runs), tmp_path, [metric])
    png = (tmp_path / file.png).read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
    assert (tmp_path / file.svg).is_file()
    fig = plot_metric(runs, infer_layout(runs), metric)
    assert visible_axes(fig)[0].get_ylabel() == f"{metric.symbol} ({metric.unit})"
    assert metric.title in fig.get_suptitle()
    assert "complete runs only" in fig.get_suptitle()


def test_sender_and_receiver_energy_each_get_a_figure(tmp_path):
    runs = frame({"label.tcp.variant": ["reno"], "label.rtt": ["20ms", "80ms"]})
    files = write_figures(runs, infer_layout(runs), tmp_path)
    titles = [f.metric.title for f in files]
    assert "Total energy per bit (sender)" in titles and "Total energy per bit (receiver)" in titles


def test_a_single_panel_figure_keeps_its_title_and_subtitle_inside_the_image():
    # Issue #26 (reports): the subtitle of single-panel figures ran past the image's edges.
    runs = frame({"label.tcp.variant": ["reno", "sack"], "path.mtu": [500, 1500]})
    fig = plot_metric(runs, infer_layout(runs), metrics.GOODPUT, level=0.90)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    box = fig._suptitle.get_window_extent(renderer)
    width, height = fig.canvas.get_width_height()
    assert box.x0 >= 0 and box.x1 <= width and box.y1 <= height
    assert "90 % confidence interval" in fig.get_suptitle()
