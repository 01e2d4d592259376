"""Which sweep axis becomes the x axis, the lines and the panels of a report."""

from __future__ import annotations

import pandas as pd
import pytest

from tcpenergy.report.layout import (
    axis_name,
    axis_title,
    condition_title,
    duration_ms,
    format_value,
    infer_layout,
    normalize_labels,
    numeric_values,
    ordered_values,
    tick_text,
)


def frame(**labels) -> pd.DataFrame:
    return pd.DataFrame({f"label.{k}": v for k, v in labels.items()})


def test_rtt_is_the_x_axis_variants_the_lines_and_every_other_axis_a_panel():
    layout = infer_layout(frame(**{"tcp.variant": ["reno", "sack"], "path.forward.impairments.0.p": [0.01, 0.05],
                                   "rtt": ["15ms", "40ms"], "path.mtu": [512, 1500]}))
    assert layout.x == "label.rtt"
    assert layout.line == "label.tcp.variant"
    assert layout.panels == ("label.path.forward.impairments.0.p", "label.path.mtu")


def test_without_rtt_the_first_numeric_axis_is_x_and_without_variant_the_next_axis_gives_lines():
    layout = infer_layout(frame(**{"energy.radio_policy": ["ideal", "always_on"],
                                   "path.mtu": [512, 1500], "tcp.min_rto": ["200ms", "1s"]}))
    assert layout.x == "label.path.mtu"
    assert layout.line == "label.energy.radio_policy"
    assert layout.panels == ("label.tcp.min_rto",)


def test_a_sweep_of_categories_only_puts_the_first_non_variant_axis_on_x():
    layout = infer_layout(frame(**{"tcp.variant": ["reno"], "energy.radio_policy": ["ideal"]}))
    assert (layout.x, layout.line, layout.panels) == ("label.energy.radio_policy", "label.tcp.variant", ())


@pytest.mark.parametrize("text, ms", [("15ms", 15.0), ("7500us", 7.5), ("1s", 1000.0),
                                      ("250000ns", 0.25), ("1min", 60000.0), ("fast", None)])
def test_durations_read_as_milliseconds(text, ms):
    assert duration_ms(text) == ms


def test_axes_sort_numerically_and_variants_in_paper_order():
    assert ordered_values(pd.Series(["100ms", "20ms", "1s"], name="label.rtt")) == ["20ms", "100ms", "1s"]
    assert list(numeric_values(pd.Series(["100ms", "7500us"]))) == [100.0, 7.5]
    variants = pd.Series(["sack", "reno", "cubic", "tahoe"], name="label.tcp.variant")
    assert ordered_values(variants) == ["tahoe", "reno", "sack", "cubic"]


def test_titles_carry_units_and_loss_reads_as_a_percentage():
    assert axis_title("label.rtt", pd.Series(["15ms"])) == "RTT (ms)"
    loss = "label.path.forward.impairments.0.p"
    assert axis_title(loss, pd.Series([0.01])) == "loss (%)"
    assert condition_title([loss, "label.path.mtu"], [0.05, 1500]) == "loss 5 % · MTU 1500"


def test_a_network_links_impairment_probability_reads_as_that_links_loss():
    assert axis_title("label.links.3.forward.impairments.0.p", pd.Series([0.2])) == "link 3 loss (%)"
    assert axis_title("label.links.0.reverse.impairments.1.p", pd.Series([0.2])) == "link 0 reverse loss (%)"


def test_other_network_keys_are_named_in_words_not_as_raw_keys():
    # Issue #26 (reports): axes were labelled `channels.0.impairments.0.p`.
    assert axis_title("label.channels.0.impairments.0.p", pd.Series([0.01])) == "channel 0 loss (%)"
    assert axis_name("label.links.2.forward.delay") == "link 2 forward delay"
    assert axis_name("label.nodes.a.profile") == "node a device profile"
    assert axis_name("label.flows.0.tcp.variant") == "flow 0 variant"


def test_labels_that_are_lists_or_missing_become_groupable_values():
    runs = pd.DataFrame({"label.path.forward.impairments": [[{"kind": "bernoulli", "p": 0.01}], None],
                         "label.rtt": ["10ms", None]})
    labels = normalize_labels(runs)
    assert labels["label.path.forward.impairments"].tolist() == ['[{"kind": "bernoulli", "p": 0.01}]', "-"]
    assert labels["label.rtt"].tolist() == ["10ms", "-"]


@pytest.mark.parametrize("column, series, title", [
    ("label.path.forward.impairments.0.p", [0.01], "loss (%)"),
    ("label.path.reverse.impairments.1.p", [0.01], "reverse loss (%)"),
    ("label.loss", [0.05], "loss (%)"),
    ("label.rtt", ["15ms"], "RTT (ms)"),
    ("label.rtt_range", ["10-20 ms"], "RTT range"),
    ("label.path.mtu", [512], "MTU (bytes)"),
    ("label.tcp.min_rto", ["200ms"], "minimum RTO (ms)"),
])
def test_known_axes_are_named_with_their_unit(column, series, title):
    assert axis_title(column, pd.Series(series)) == title


def test_ticks_are_written_in_the_axis_unit():
    assert [tick_text("label.loss", p) for p in (0.01, 0.05, 0.1)] == ["1", "5", "10"]
    assert tick_text("label.rtt", "7500us") == "7.5"
    assert [tick_text("label.rtt_range", v) for v in ("[10, 20]", "10-20 ms")] == ["10-20 ms"] * 2
    assert format_value("label.rtt_range", [120, 140]) == "120-140 ms"


def test_rtt_ranges_sort_by_their_bounds_not_as_text():
    ranges = pd.Series(["120-140 ms", "30-50 ms", "10-20 ms"], name="label.rtt_range")
    assert ordered_values(ranges) == ["10-20 ms", "30-50 ms", "120-140 ms"]


def test_a_free_text_condition_panel_is_titled_by_its_value_alone():
    assert condition_title(["label.condition", "label.path.mtu"], ["route failure", 512]) == \
        "route failure · MTU 512"
