"""Confidence intervals that respect the quantity (docs/experiments.md, "Confidence intervals"):
Student-t where it lies within the metric's declared range; where a t bound would leave it (below
zero for a non-negative metric, above 1 for Jain's fairness index), a BCa bootstrap (Efron 1987)
from 10 values on, the t interval cut at the range's bounds below that; never a bound outside the
declared range."""

from __future__ import annotations

import io
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats

from tcpenergy.experiments import stats
from tcpenergy.experiments.stats import (BOOTSTRAP_BCA, NO_INTERVAL, STUDENT_T, STUDENT_T_CUT,
                                         STUDENT_T_CUT_BOTH, STUDENT_T_CUT_HIGH,
                                         STUDENT_T_CUT_LOW, declared_range, interval,
                                         is_non_negative, summarize)
from tcpenergy.report.cells import cell_stats

REPO = Path(__file__).resolve().parent.parent

# Counts with many zeros and rare large values (timeouts, retransmissions), and small or huge
# magnitudes (goodput in bit/s, energy per bit in uJ): the shapes that gave negative t bounds.
_VALUES = st.one_of(
    st.integers(0, 3).map(float),
    st.floats(0, 1e-3, allow_nan=False),
    st.floats(0, 1e-120, allow_nan=False),  # tiny values: no underflow in the jackknife
    st.floats(0, 1e7, allow_nan=False),
    st.sampled_from([0.0, 0.0, 250000.0]),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_VALUES, min_size=0, max_size=16),
       st.sampled_from([(0.90, 0.95), (0.95,), (0.99,), (0.5, 0.999)]))
def test_no_reported_bound_is_negative_for_non_negative_data(values, levels):
    method, bounds = interval(values, levels, non_negative=True)
    for low, high in bounds:
        if len(values) < 2:
            assert method == NO_INTERVAL and math.isnan(low) and math.isnan(high)
            continue
        assert low >= 0.0 and high >= low
        if method.startswith("bootstrap"):
            # A bootstrap bound is a quantile of resampled means: inside the data's range.
            assert min(values) <= low and high <= max(values)


@settings(max_examples=100, deadline=None)
@given(st.lists(_VALUES, min_size=2, max_size=12))
def test_summarize_never_reports_a_negative_bound_for_a_declared_metric(values):
    frame = pd.DataFrame({"label.v": "a", "status": "ok", "complete": True,
                          "flow.timeouts": values})
    row = summarize(frame).iloc[0]
    assert row["ci90_low"] >= 0 and row["ci95_low"] >= 0


def test_student_t_is_unchanged_where_its_lower_bound_is_not_negative():
    rng = np.random.default_rng(11)
    for values in (list(rng.normal(100, 5, size=10)), [3.0, 4.0, 5.0], [0.0, 1.0, 1.0, 1.0, 2.0]):
        mean, sem, n = np.mean(values), scipy_stats.sem(values), len(values)
        method, bounds = interval(values, (0.90, 0.95), non_negative=True)
        assert method == STUDENT_T
        for (low, high), level in zip(bounds, (0.90, 0.95)):
            expected = scipy_stats.t.interval(level, n - 1, loc=mean, scale=sem)
            assert low == pytest.approx(expected[0], rel=1e-9, abs=1e-12)
            assert high == pytest.approx(expected[1], rel=1e-9)


def test_a_t_interval_crossing_zero_is_replaced_by_the_bootstrap_and_named():
    # Nine runs without a timeout and one with 9: t gives [-1.14, 2.94] at 95 %.
    values = [0.0] * 9 + [9.0]
    t_low, _ = stats.t_interval(0.95, 10, np.mean(values), np.std(values, ddof=1))
    assert t_low < 0
    method, [(low, high)] = interval(values, (0.95,), non_negative=True)
    assert method == BOOTSTRAP_BCA and 0.0 <= low <= 0.9 <= high <= 9.0


def test_bca_interval_agrees_with_scipy_bootstrap():
    # Independent implementation, other random numbers: they agree to the Monte Carlo error of
    # a tail quantile from ~10^4 resamples, a few per cent of the interval's width.
    data = np.random.default_rng(3).exponential(1.0, size=20)
    method, [(low, high)] = stats.bootstrap_interval(data, (0.95,))
    ref = scipy_stats.bootstrap((data,), np.mean, confidence_level=0.95, n_resamples=99999,
                                method="BCa", random_state=1).confidence_interval
    width = ref.high - ref.low
    assert method == BOOTSTRAP_BCA
    assert abs(low - ref.low) < 0.05 * width and abs(high - ref.high) < 0.05 * width


def test_fewer_than_ten_values_crossing_zero_get_the_t_interval_cut_at_zero():
    # A bootstrap of three values is far too narrow; the t interval cut at zero keeps t's
    # coverage, since the true mean of a non-negative quantity is never below zero.
    values = [0.0, 0.0, 3.0]
    method, bounds = interval(values, (0.90, 0.95), non_negative=True)
    assert method == STUDENT_T_CUT
    for (low, high), level in zip(bounds, (0.90, 0.95)):
        t_low, t_high = scipy_stats.t.interval(level, 2, loc=1.0, scale=scipy_stats.sem(values))
        assert t_low < 0 and low == 0.0 and high == pytest.approx(t_high, rel=1e-9)


@pytest.mark.parametrize("value", [0.0, 4.25, 1e6])
def test_all_equal_values_give_a_zero_width_interval(value):
    method, bounds = interval([value] * 5, (0.90, 0.95), non_negative=True)
    assert method == STUDENT_T and bounds == [(value, value), (value, value)]
    row = summarize(pd.DataFrame({"flow.timeouts": [value] * 5})).iloc[0]
    assert row["ci95_low"] == row["ci95_high"] == value


def test_same_values_give_the_same_interval_whatever_their_order():
    values = [0.0, 0.0, 1.0, 0.0, 14.0, 0.0, 2.0, 0.0, 0.0, 3.0, 0.0]
    first = interval(values, (0.90, 0.95), non_negative=True)
    assert first[0] == BOOTSTRAP_BCA
    assert interval(values, (0.90, 0.95), non_negative=True) == first
    assert interval(values[::-1], (0.90, 0.95), non_negative=True) == first


def test_a_metric_not_declared_non_negative_keeps_student_t_below_zero():
    # A difference can be negative: its t interval is the right one, crossing zero or not.
    assert not is_non_negative("saving_difference")
    values = [-1.0, 0.5, 3.0]
    method, [(low, _)] = interval(values, (0.95,), non_negative=False)
    assert method == STUDENT_T and low < 0
    frame = pd.DataFrame({"x": values})
    assert summarize(frame, metrics=["x"]).loc[0, "ci_method"] == STUDENT_T
    assert summarize(frame, metrics=["x"], non_negative=True).loc[0, "ci_method"] == STUDENT_T_CUT


def test_every_default_metric_and_result_field_is_declared_non_negative():
    for metric in stats.DEFAULT_METRICS + ("energy.receiver.per_bit_total_uj",
                                           "energy.sender.breakdown_j.cpu", "sim_time_s"):
        assert is_non_negative(metric), metric


def test_a_single_value_has_no_interval_and_says_so():
    row = summarize(pd.DataFrame({"flow.timeouts": [3.0]})).iloc[0]
    assert row["n"] == 1 and row["ci_method"] == NO_INTERVAL and math.isnan(row["ci95_low"])


def test_report_cell_stats_bounds_are_not_negative_and_carry_the_method():
    frame = pd.DataFrame({"g": ["a"] * 10 + ["b"] * 3, "status": "ok", "complete": True,
                          "flow.timeouts": [0.0] * 9 + [9.0] + [5.0, 6.0, 7.0]})
    cells = cell_stats(frame, ["g"], "flow.timeouts", 0.95).set_index("g")
    assert (cells["ci_low"] >= 0).all()
    assert cells.loc["a", "ci_method"] == BOOTSTRAP_BCA
    assert cells.loc["b", "ci_method"] == STUDENT_T
    # A derived column (a per-seed mean, say) says what it is derived from.
    derived = frame.rename(columns={"flow.timeouts": "_value"})
    assert cell_stats(derived, ["g"], "_value", 0.95).set_index("g").loc["a", "ci_low"] < 0
    assert (cell_stats(derived, ["g"], "_value", 0.95, non_negative=True)["ci_low"] >= 0).all()


# --- metrics bounded above too: Jain's fairness index lies in [1/n, 1] (Jain, Chiu & Hawe,
# DEC-TR-301, 1984; docs/units-and-scenarios.md, "Network records").

JAIN = "network.jain_fairness"


def test_jain_fairness_is_declared_a_fraction_and_other_fields_only_non_negative():
    assert declared_range(JAIN) == (0.0, 1.0)
    assert declared_range("groups.left.jain_fairness") == (0.0, 1.0)
    assert is_non_negative(JAIN) and is_non_negative("groups.left.jain_fairness")
    for metric in ("flow.goodput_bps", "network.goodput_bps", "sim_time_s"):
        assert declared_range(metric) == (0.0, math.inf), metric
    assert declared_range("saving_difference") == (-math.inf, math.inf)


def test_two_seeds_of_jain_index_near_one_give_an_interval_cut_at_one_and_named_so():
    # t with 1 df: 0.92 ± 0.89 at 95 %, an upper bound of 1.81 that no fairness index can have.
    values = [0.85, 0.99]
    t_low, t_high = scipy_stats.t.interval(0.95, 1, loc=0.92, scale=scipy_stats.sem(values))
    assert 0 < t_low and t_high > 1.8
    method, [(low, high)] = interval(values, (0.95,), within=(0.0, 1.0))
    assert method == STUDENT_T_CUT_HIGH
    assert low == pytest.approx(t_low, rel=1e-9) and high == 1.0
    # The same through summarize, from the declaration alone, at both default levels.
    row = summarize(pd.DataFrame({"label.v": "a", JAIN: values})).iloc[0]
    assert row["ci_method"] == STUDENT_T_CUT_HIGH
    assert row["ci90_high"] == row["ci95_high"] == 1.0
    assert 0 < row["ci95_low"] <= row["ci90_low"] <= row["mean"]


def test_twelve_values_of_jain_index_near_one_are_bootstrapped_and_stay_at_most_one():
    # Eleven equal shares and one unfair run: t reaches 1.05 at 95 %; 12 >= 10 values, so BCa.
    values = [1.0] * 11 + [0.5]
    _, t_high = stats.t_interval(0.95, 12, np.mean(values), np.std(values, ddof=1))
    assert t_high > 1.0
    method, bounds = interval(values, (0.90, 0.95), within=stats.FRACTION)
    assert method.startswith("bootstrap")
    for low, high in bounds:
        assert 0.5 <= low <= np.mean(values) <= high <= 1.0
    row = summarize(pd.DataFrame({JAIN: values})).iloc[0]
    assert row["ci_method"] == method and row["ci95_high"] <= 1.0 and row["ci90_high"] <= 1.0


@pytest.mark.parametrize("values, method, bounds", [
    ([0.01, 0.05], STUDENT_T_CUT, (0.0, None)),        # t from -0.22: the existing name
    ([0.85, 0.99], STUDENT_T_CUT_HIGH, (None, 1.0)),   # t up to 1.81
    ([0.30, 0.99], STUDENT_T_CUT_BOTH, (0.0, 1.0)),    # t from -3.7 to 5.0
])
def test_the_method_column_names_which_end_of_the_range_was_cut(values, method, bounds):
    frame = pd.DataFrame({JAIN: values})
    row = summarize(frame, levels=(0.95,)).iloc[0]
    assert row["ci_method"] == method
    t_low, t_high = scipy_stats.t.interval(0.95, 1, loc=np.mean(values),
                                           scale=scipy_stats.sem(values))
    want_low, want_high = bounds
    assert row["ci95_low"] == (want_low if want_low is not None else pytest.approx(t_low))
    assert row["ci95_high"] == (want_high if want_high is not None else pytest.approx(t_high))


def test_a_declared_low_other_than_zero_gets_its_own_cut_name():
    method, [(low, high)] = interval([1.0, 1.1, 4.0], (0.95,), within=(1.0, math.inf))
    assert method == STUDENT_T_CUT_LOW and low == 1.0 and high > 4.0



@pytest.mark.parametrize("n_equal", [4, 11])
def test_a_jain_index_rounded_above_one_still_gets_bounds_at_most_one(n_equal):
    # (Σx)² / (n Σx²) of equal shares can come out as 1 + 2 ulp in floating point.
    above_one = 1.0 + 2 * 2.0 ** -52
    values = [above_one] * n_equal + [0.5]
    method, bounds = interval(values, (0.90, 0.95), within=stats.FRACTION)
    assert method != STUDENT_T
    for low, high in bounds:
        assert 0.0 <= low <= high <= 1.0


_FRACTIONS = st.one_of(st.floats(0, 1, allow_nan=False), st.sampled_from([1.0, 1.0, 0.5, 0.05]))


@settings(max_examples=300, deadline=None)
@given(st.lists(_FRACTIONS, min_size=0, max_size=16),
       st.sampled_from([(0.90, 0.95), (0.95,), (0.99,), (0.5, 0.999)]))
def test_no_reported_bound_of_a_fraction_leaves_zero_to_one(values, levels):
    method, bounds = interval(values, levels, within=stats.FRACTION)
    for low, high in bounds:
        if len(values) < 2:
            assert method == NO_INTERVAL and math.isnan(low) and math.isnan(high)
            continue
        assert 0.0 <= low <= high <= 1.0
        if method.startswith("bootstrap"):
            assert min(values) <= low and high <= max(values)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0, 1, allow_nan=False), min_size=2, max_size=9),
       st.floats(0, 1, allow_nan=False))
def test_cutting_at_the_range_keeps_the_t_intervals_coverage(values, true_mean):
    # Any mean a fraction can have lies in [0, 1]: the cut interval holds it exactly when the
    # t interval does, so cutting changes no coverage (below 10 values, where it is used).
    level = 0.95
    t_low, t_high = stats.t_interval(level, len(values), float(np.mean(values)),
                                     float(np.std(values, ddof=1)))
    _, [(low, high)] = interval(values, (level,), within=stats.FRACTION)
    assert (low <= true_mean <= high) == (t_low <= true_mean <= t_high)


def test_a_non_negative_metric_is_not_cut_at_one():
    # The same values as a count: only non-negative, so its t interval above 1 is the answer.
    values = [0.85, 0.99]
    row = summarize(pd.DataFrame({"flow.timeouts": values}), levels=(0.95,)).iloc[0]
    assert row["ci_method"] == STUDENT_T and row["ci95_high"] > 1.8
    assert interval(values, (0.95,), non_negative=True) == interval(values, (0.95,),
                                                                    within=stats.NON_NEGATIVE)
    # non_negative=True forces [0, inf) on every metric, Jain's index included (as before).
    forced = summarize(pd.DataFrame({JAIN: values}), levels=(0.95,), non_negative=True).iloc[0]
    assert forced["ci_method"] == STUDENT_T and forced["ci95_high"] > 1.8


def test_summarize_takes_a_range_per_metric_for_derived_columns():
    # A per-seed mean of Jain's index is a fraction too; its column name does not say so.
    frame = pd.DataFrame({"_value": [0.85, 0.99], "_count": [0.85, 0.99]})
    table = summarize(frame, metrics=["_value", "_count"], levels=(0.95,),
                      within={"_value": stats.FRACTION}).set_index("metric")
    assert table.loc["_value", "ci_method"] == STUDENT_T_CUT_HIGH
    assert table.loc["_value", "ci95_high"] == 1.0
    assert table.loc["_count", "ci_method"] == STUDENT_T  # not named: undeclared, signed


@pytest.mark.parametrize("within", [(1.0, 0.0), (0.0, math.nan), (0.0,), "ab"])
def test_a_malformed_range_is_refused_with_its_value(within):
    with pytest.raises(ValueError, match="declared range"):
        interval([0.1, 0.2], (0.95,), within=within)


# --- every metric's range is declared where the record defines it; intervals hold their mean.

SIGNED = ("efficiency.eee", "efficiency.eee_ideal", "efficiency.energy_potential")


def test_seed_004_efficiency_metrics_are_declared_signed_and_uar_at_most_one():
    for column in ("network.efficiency.eee", "flows.bulk.efficiency.eee_ideal",
                   "flow.efficiency.energy_potential"):
        assert declared_range(column) == (-math.inf, math.inf), column
    assert declared_range("network.efficiency.uar") == (-math.inf, 1.0)
    assert declared_range("flows.download.efficiency.uar") == (-math.inf, 1.0)
    assert declared_range("network.efficiency.energy_efficiency") == (0.0, 1.0)
    assert declared_range("network.risk_index") == (0.0, 1.0)


def test_a_column_is_declared_by_its_field_not_by_its_prefix():
    for column in ("network.not_a_field", "flow.some_new_count", "energy.sender.new_thing",
                   "nodes.a.mystery", "path.forward.what"):
        assert declared_range(column) == (-math.inf, math.inf), column


def test_every_numeric_field_of_the_shipped_scenarios_records_has_a_declared_range_it_holds():
    from tcpenergy.api import run
    from tcpenergy.records import FIELD_RANGES, field_range, flatten

    scenarios = sorted((REPO / "scenarios").glob("*.toml"))
    assert len(scenarios) > 10
    seen = set()
    for path in scenarios:
        for key, value in flatten(run(path, seed=1)).items():
            if key.startswith("parameters.") or isinstance(value, bool):
                continue
            if not isinstance(value, (int, float)):
                continue
            declared = field_range(key)
            assert declared is not None, f"{path.name}: {key} has no declared range"
            low, high = declared
            assert low <= value <= high, f"{path.name}: {key} = {value} outside {declared}"
            seen.add(key)
    # The signed fields are declared so, and the runs show why: each is negative somewhere.
    assert all(FIELD_RANGES[name] == (-math.inf, math.inf) for name in SIGNED)
    assert any(k.endswith("efficiency.uar") for k in seen)


_ANY_VALUES = st.one_of(
    st.floats(-1e6, 1e6, allow_nan=False),
    st.sampled_from([-0.2143, -0.2121, 0.0, 1.0, 0.999, 1e-9]),
    st.integers(-3, 3).map(float),
)
_METRICS = ["network.efficiency.uar", "network.efficiency.eee", "network.jain_fairness",
            "flow.timeouts", "flow.goodput_bps", "network.risk_index", "some_derived_column"]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("ab"), _ANY_VALUES), min_size=0, max_size=24),
       st.sampled_from(_METRICS),
       st.sampled_from([None, True, (0.0, 1.0), (-1.0, 0.5)]),
       st.sampled_from([(0.90, 0.95), (0.95,), (0.5, 0.999)]))
def test_every_interval_contains_its_mean_whatever_the_metric_and_data(rows, metric, declared,
                                                                      levels):
    # Data need not keep to the declared range: a wrong declaration must not move an interval
    # off its mean (as a UAR of -0.21 declared non-negative got [0, 0]).
    frame = pd.DataFrame({"label.g": [g for g, _ in rows], metric: [v for _, v in rows],
                          "status": "ok", "complete": True})
    kwargs = ({} if declared is None else {"non_negative": True} if declared is True
              else {"within": declared})
    table = summarize(frame, metrics=[metric], levels=levels, **kwargs)
    for row in table.to_dict("records"):
        if row["n"] < 2:
            continue
        for level in levels:
            low, high = row[f"{stats.level_name(level)}_low"], row[f"{stats.level_name(level)}_high"]
            assert low <= row["mean"] <= high, (row, level)
    for group in "ab":
        values = [v for g, v in rows if g == group]
        if len(values) < 2:
            continue
        within = declared_range(metric) if declared is None else (
            stats.NON_NEGATIVE if declared is True else declared)
        _, bounds = interval(values, levels, within=within)
        mean = float(np.mean(values))
        assert all(low <= mean <= high for low, high in bounds), (values, bounds)


def test_summarize_of_uar_over_split_connection_runs_gives_an_interval_around_its_mean(
        cli, tmp_path):
    # The scenario's UAR is about -0.21 (its throughput exceeds its fair share): summarized,
    # it used to get the interval [0, 0], cut at a zero it was wrongly declared not to pass.
    sweep = tmp_path / "split.toml"
    sweep.write_text(f'base = "{REPO / "scenarios" / "split-connection.toml"}"\nrepetitions = 3\n')
    assert cli("sweep", sweep, "--jobs", "1").exit_code == 0
    result = cli("summarize", sweep.with_suffix(".duckdb"), "--metric", "network.efficiency.uar",
                 "--format", "csv")
    assert result.exit_code == 0, result.output
    row = pd.read_csv(io.StringIO(result.stdout)).iloc[0]
    assert row["mean"] < 0 and row["ci_method"] == STUDENT_T
    assert row["ci95_low"] < row["ci90_low"] < row["mean"] < row["ci90_high"] < row["ci95_high"]
    t_low, t_high = scipy_stats.t.interval(0.95, 2, loc=row["mean"],
                                           scale=row["std"] / math.sqrt(3))
    assert row["ci95_low"] == pytest.approx(t_low) and row["ci95_high"] == pytest.approx(t_high)
