"""Which sweep axis becomes the x axis, the lines and the panels of a report."""

from __future__ import annotations

import pandas as pd
import pytest

from tcpenergy.report.layout import (
    axis_title,
    condition_title,
    duration_ms,
    infer_layout,
    normalize_labels,
    numeric_values,
    ordered_values,
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


def test_labels_that_are_lists_or_missing_become_groupable_values():
    runs = pd.DataFrame({"label.path.forward.impairments": [[{"kind": "bernoulli", "p": 0.01}], None],
                         "label.rtt": ["10ms", None]})
    labels = normalize_labels(runs)
    assert labels["label.path.forward.impairments"].tolist() == ['[{"kind": "bernoulli", "p": 0.01}]', "-"]
    assert labels["label.rtt"].tolist() == ["10ms", "-"]
