"""Seed-000-Table-4-style rank orders: means over RTT, best first, ≈ exactly when CIs overlap."""

from __future__ import annotations

import math

import pytest
from report_data import E_COL, LOSS, sweep_frame, synthetic_frame
from scipy import stats as scipy_stats

from tcpenergy.report import rank_table, variant_means
from tcpenergy.report.metrics import E, E_I, GOODPUT

COND, X, VARIANT = ["label.path.mtu"], "label.rtt", "label.tcp.variant"
# Three seeds at -s, 0, +s around the mean: sample std = s, n = 3.
OFFSETS = (-1.0, 0.0, 1.0)
HALF_WIDTH_95 = scipy_stats.t.ppf(0.975, 2) * 1.0 / math.sqrt(3)


def one_row(table, metric, mtu=1500):
    rows = table[(table["metric"] == metric) & (table["label.path.mtu"] == mtu)]
    assert len(rows) == 1
    return rows.iloc[0]


def test_orders_variants_by_mean_over_rtt_lowest_energy_and_highest_goodput_first():
    frame = synthetic_frame({(1500, "reno"): 30.0, (1500, "newreno"): 20.0, (1500, "sack"): 10.0},
                            [o * 0.01 for o in OFFSETS])
    table = rank_table(frame, COND, X, VARIANT, [E, GOODPUT])
    energy, goodput = one_row(table, "E"), one_row(table, "goodput")
    assert energy["order"] == ("sack", "newreno", "reno")
    assert energy["ordering"] == "S < N < R"
    assert goodput["order"] == ("reno", "newreno", "sack")
    assert goodput["ordering"] == "R > N > S"


def test_variant_means_are_the_means_over_rtt_with_the_per_seed_t_interval():
    frame = synthetic_frame({(1500, "reno"): 12.0, (1500, "sack"): 10.0}, OFFSETS)
    means = variant_means(frame, COND, X, VARIANT, [E])
    reno = means[means[VARIANT] == "reno"].iloc[0]
    assert reno["n"] == 3
    assert reno["mean"] == pytest.approx(12.0)
    assert reno["ci_high"] - reno["mean"] == pytest.approx(HALF_WIDTH_95)


@pytest.mark.parametrize("gap_over_two_half_widths, relation", [
    (0.95, "≈"),   # intervals overlap
    (1.05, "<"),   # intervals are disjoint
])
def test_tie_is_declared_exactly_when_confidence_intervals_overlap(gap_over_two_half_widths,
                                                                   relation):
    gap = 2 * HALF_WIDTH_95 * gap_over_two_half_widths
    frame = synthetic_frame({(1500, "sack"): 10.0, (1500, "reno"): 10.0 + gap}, OFFSETS)
    row = one_row(rank_table(frame, COND, X, VARIANT, [E]), "E")
    assert row["order"] == ("sack", "reno")
    assert row["relations"] == (relation,)
    assert row["ordering"] == f"S {relation} R"


def test_a_wider_confidence_level_turns_a_near_separation_into_a_tie():
    gap = 2 * HALF_WIDTH_95 * 1.05
    frame = synthetic_frame({(1500, "sack"): 10.0, (1500, "reno"): 10.0 + gap}, OFFSETS)
    assert one_row(rank_table(frame, COND, X, VARIANT, [E], level=0.95), "E")["ordering"] == "S < R"
    assert one_row(rank_table(frame, COND, X, VARIANT, [E], level=0.99), "E")["ordering"] == "S ≈ R"


def test_the_rtt_effect_is_not_counted_as_noise():
    # Energy grows strongly with RTT for every variant; seed-to-seed spread is small. Pooling all
    # runs would call everything a tie; the per-seed means over RTT separate the variants.
    frame = synthetic_frame({(1500, "reno"): 11.0, (1500, "sack"): 10.0},
                            [o * 0.1 for o in OFFSETS], rtt_effect=50.0)
    assert one_row(rank_table(frame, COND, X, VARIANT, [E]), "E")["ordering"] == "S < R"


def test_each_condition_is_ranked_on_its_own():
    frame = synthetic_frame({(512, "reno"): 10.0, (512, "sack"): 20.0,
                             (1500, "reno"): 20.0, (1500, "sack"): 10.0}, OFFSETS)
    table = rank_table(frame, COND, X, VARIANT, [E_I])
    assert list(table["label.path.mtu"]) == [512, 1500]
    assert one_row(table, "E_I", 512)["ordering"] == "R < S"
    assert one_row(table, "E_I", 1500)["ordering"] == "S < R"


def test_a_seed_missing_a_failed_rtt_is_left_out_and_a_variant_without_complete_seeds_is_missing():
    frame = synthetic_frame({(1500, "reno"): 12.0, (1500, "newreno"): 11.0,
                             (1500, "sack"): 10.0}, OFFSETS)
    fail = (frame[VARIANT] == "reno") & (frame["seed"] == 1) & (frame[X] == "50ms")
    fail |= (frame[VARIANT] == "newreno") & (frame[X] == "100ms")
    frame.loc[fail, "status"] = "failed"
    frame.loc[fail, E_COL] = float("nan")
    means = variant_means(frame, COND, X, VARIANT, [E]).set_index(VARIANT)
    assert means.loc["reno", "n"] == 2
    assert means.loc["reno", "mean"] == pytest.approx(12.5)  # seeds 2 and 3 only
    assert "newreno" not in means.index
    row = one_row(rank_table(frame, COND, X, VARIANT, [E]), "E")
    assert row["order"] == ("sack", "reno")
    assert row["missing"] == ("newreno",)
    assert row["seeds"] == 2


def test_variants_without_a_paper_letter_are_written_by_name():
    frame = synthetic_frame({(1500, "sack"): 10.0, (1500, "ecn-elfn"): 20.0}, OFFSETS)
    assert one_row(rank_table(frame, COND, X, VARIANT, [E]), "E")["ordering"] == "sack < ecn-elfn"


def test_ranks_a_small_sweep_of_real_runs():
    frame = sweep_frame()
    conditions = [LOSS, "label.path.mtu"]
    table = rank_table(frame, conditions, X, VARIANT)
    assert len(table) == 2 * 2 * 3  # loss x MTU conditions, three metrics
    assert set(table["metric"]) == {"E", "E_I", "goodput"}
    means = variant_means(frame, conditions, X, VARIANT)
    for _, row in table.iterrows():
        assert sorted(row["order"]) == ["newreno", "reno", "sack"]
        assert sorted(row["ordering"].split()[::2]) == ["N", "R", "S"]
        assert row["seeds"] == 3
        cell = means[(means[LOSS] == row[LOSS]) & (means["label.path.mtu"] == row["label.path.mtu"])
                     & (means["metric"] == row["metric"])].set_index(VARIANT)["mean"]
        ordered = [cell[v] for v in row["order"]]
        assert ordered == sorted(ordered, reverse=row["better"] == "higher")
