"""The declarative claim rules (tcpenergy.reproduce.rules, docs/reproduce/rules.md): each shape
holds and fails where its definition says, incomplete runs are counted but never averaged in, and
every packaged rules file parses and covers its paper's claims."""

from __future__ import annotations

import pandas as pd
import pytest

from tcpenergy.reproduce import claims as C
from tcpenergy.reproduce import registry
from tcpenergy.reproduce import rules as R

ENTRY = {"id": "X-C01", "claim": "test claim", "numbers": {"saving_pct": 20}}


def frame(values, seeds=(1, 2, 3), status=None, complete=None):
    """Runs of sweep 's' with columns v (variant), x (axis) and m (metric): values[(v, x)] = [per seed]."""
    rows = []
    for (v, x), per_seed in values.items():
        for seed, m in zip(seeds, per_seed):
            rows.append({"sweep": "s", "seed": seed, "tcp.variant": v, "label.tcp.variant": v, "label.x": x, "x": x, "m": m,
                         "status": "ok", "complete": True})
    df = pd.DataFrame(rows)
    if status:
        for i, s in status.items():
            df.loc[i, "status"] = s
    if complete:
        for i, c in complete.items():
            df.loc[i, "complete"] = c
    return df


def judge(rule, df, entry=ENTRY):
    ruleset = R.parse_rules({"rules": {entry["id"]: rule}})
    return R.evaluate(df, [entry], ruleset)[0]


ORDER = {"shape": "order", "metric": "m", "sweeps": ["s"], "where": {"x": 1},
         "terms": {"A": {"tcp.variant": "a"}, "B": {"tcp.variant": "b"}, "C": {"tcp.variant": "c"}}}


def test_order_holds_when_means_are_ordered_beyond_the_tie_tolerance():
    df = frame({("a", 1): [1.0, 1.0, 1.0], ("b", 1): [2.0, 2.1, 1.9], ("c", 1): [2.0, 2.0, 2.0]})
    assert judge({**ORDER, "relation": "A < B"}, df)["status"] == C.HOLDS
    assert judge({**ORDER, "relation": "B < A"}, df)["status"] == C.DOES_NOT_HOLD


def test_order_tie_is_within_the_shared_one_percent_unless_the_rule_sets_its_own():
    df = frame({("a", 1): [100.0] * 3, ("b", 1): [105.0] * 3, ("c", 1): [100.5] * 3})
    assert judge({**ORDER, "relation": "A ~= C"}, df)["status"] == C.HOLDS
    assert judge({**ORDER, "relation": "A ~= B"}, df)["status"] == C.DOES_NOT_HOLD
    assert judge({**ORDER, "relation": "A ~= B", "tie": 0.10}, df)["status"] == C.HOLDS


def test_a_chain_holds_only_when_the_pairs_it_implies_hold_too():
    # A ~= B ~= C implies A ~= C: each neighbour pair is within 1 %, A and C are 1.6 % apart.
    df = frame({("a", 1): [1.000] * 3, ("b", 1): [1.008] * 3, ("c", 1): [1.016] * 3})
    rec = judge({**ORDER, "relation": "A ~= B ~= C"}, df)
    assert rec["status"] == C.DOES_NOT_HOLD
    assert "A ~= C fails" in rec["evidence"] and "A ~= B fails" not in rec["evidence"]
    assert judge({**ORDER, "relation": "A ~= B; B ~= C"}, df)["status"] == C.HOLDS


def test_significance_basis_needs_disjoint_intervals():
    df = frame({("a", 1): [1.0, 1.5, 0.5], ("b", 1): [1.2, 1.7, 0.7], ("c", 1): [5.0, 5.1, 4.9]})
    assert judge({**ORDER, "relation": "A < B"}, df)["status"] == C.HOLDS
    assert judge({**ORDER, "relation": "A < B", "basis": "significance"}, df)["status"] == C.DOES_NOT_HOLD
    assert judge({**ORDER, "relation": "A < C", "basis": "significance"}, df)["status"] == C.HOLDS


def test_for_each_judges_every_cell_and_require_most_needs_more_than_half():
    df = frame({("a", 1): [1.0] * 3, ("b", 1): [2.0] * 3, ("a", 2): [1.0] * 3, ("b", 2): [2.0] * 3,
                ("a", 3): [3.0] * 3, ("b", 3): [2.0] * 3})
    rule = {**ORDER, "where": {}, "for_each": ["x"], "relation": "A < B"}
    rule["terms"] = {k: v for k, v in ORDER["terms"].items() if k != "C"}
    assert judge(rule, df)["status"] == C.DOES_NOT_HOLD
    assert judge({**rule, "require": "most"}, df)["status"] == C.HOLDS
    assert "2 of 3 cells hold" in judge(rule, df)["evidence"]


TREND = {"shape": "trend", "metric": "m", "sweeps": ["s"], "terms": {"A": {"tcp.variant": "a"}}, "axis": "x"}


def test_weak_trend_allows_ties_but_not_a_step_against_and_needs_first_to_last():
    df = frame({("a", 1): [1.0] * 3, ("a", 2): [1.0] * 3, ("a", 3): [2.0] * 3})
    assert judge({**TREND, "direction": "increasing"}, df)["status"] == C.HOLDS
    assert judge({**TREND, "direction": "increasing", "steps": "strict"}, df)["status"] == C.DOES_NOT_HOLD
    df = frame({("a", 1): [1.0] * 3, ("a", 2): [3.0] * 3, ("a", 3): [2.0] * 3})
    assert judge({**TREND, "direction": "increasing"}, df)["status"] == C.DOES_NOT_HOLD
    assert judge({**TREND, "direction": "decreasing"}, df)["status"] == C.DOES_NOT_HOLD


def test_trend_follows_the_declared_axis_order():
    df = frame({("a", 1): [3.0] * 3, ("a", 2): [2.0] * 3, ("a", 3): [1.0] * 3})
    assert judge({**TREND, "direction": "increasing", "axis_order": [3, 2, 1]}, df)["status"] == C.HOLDS


def test_trend_of_a_gap_between_two_terms():
    df = frame({("a", 1): [1.0] * 3, ("b", 1): [2.0] * 3, ("a", 2): [1.0] * 3, ("b", 2): [4.0] * 3})
    rule = {**TREND, "terms": {"A": {"tcp.variant": "a"}, "B": {"tcp.variant": "b"}}, "quantity": {"gap": ["B", "A"]},
            "direction": "increasing"}
    assert judge(rule, df)["status"] == C.HOLDS
    assert judge({**rule, "quantity": {"gap": ["A", "B"]}}, df)["status"] == C.DOES_NOT_HOLD


def test_flat_trend_holds_only_within_the_tolerance_of_the_first_point():
    df = frame({("a", 1): [1.0] * 3, ("a", 2): [1.05] * 3})
    assert judge({**TREND, "direction": "flat", "tie": 0.10}, df)["status"] == C.HOLDS
    assert judge({**TREND, "direction": "flat"}, df)["status"] == C.DOES_NOT_HOLD


RATIO = {"shape": "ratio", "metric": "m", "sweeps": ["s"], "where": {"x": 1},
         "terms": {"A": {"tcp.variant": "a"}, "B": {"tcp.variant": "b"}}, "numerator": "A", "denominator": "B"}


def test_ratio_within_a_band_and_change_within_a_factor_of_the_papers_figure():
    df = frame({("a", 1): [3.0] * 3, ("b", 1): [2.0] * 3})
    assert judge({**RATIO, "band": [1.4, 1.6]}, df)["status"] == C.HOLDS
    assert judge({**RATIO, "band": [None, 1.4]}, df)["status"] == C.DOES_NOT_HOLD
    paper = {"number": "saving_pct", "scale": 0.01, "factor": 2}  # paper +20 %: ours +50 % is outside x2
    assert judge({**RATIO, "form": "change", "paper": paper}, df)["status"] == C.DOES_NOT_HOLD
    paper["factor"] = 3
    assert judge({**RATIO, "form": "change", "paper": paper}, df)["status"] == C.HOLDS
    df = frame({("a", 1): [1.0] * 3, ("b", 1): [2.0] * 3})  # change -50 %: the sign differs
    assert judge({**RATIO, "form": "change", "paper": paper}, df)["status"] == C.DOES_NOT_HOLD


def test_value_within_a_relative_tolerance_of_a_target():
    df = frame({("a", 1): [70.0, 80.0, 75.0]})
    rule = {"shape": "value", "metric": "m", "sweeps": ["s"], "terms": {"A": {"tcp.variant": "a"}}, "target": 70}
    assert judge({**rule, "tolerance": 0.1}, df)["status"] == C.HOLDS
    assert judge({**rule, "tolerance": 0.05}, df)["status"] == C.DOES_NOT_HOLD


def test_all_holds_only_when_every_sub_rule_holds_and_sub_rules_inherit_the_parent():
    df = frame({("a", 1): [1.0] * 3, ("b", 1): [2.0] * 3, ("c", 1): [2.0] * 3})
    rule = {**ORDER, "shape": "all", "of": [{"shape": "order", "relation": "A < B"},
                                           {"shape": "order", "relation": "B ~= C"}]}
    assert judge(rule, df)["status"] == C.HOLDS
    rule["of"][1]["relation"] = "B < C"
    assert judge(rule, df)["status"] == C.DOES_NOT_HOLD


def test_incomplete_runs_are_counted_but_never_averaged_in():
    # One run of A completes with an outlier value only if it were averaged in; it did not complete.
    df = frame({("a", 1): [1.0, 1.0, 1.0, 50.0], ("b", 1): [2.0] * 4}, seeds=(1, 2, 3, 4), complete={3: False})
    rec = judge({**ORDER, "terms": {k: v for k, v in ORDER["terms"].items() if k != "C"}, "relation": "A < B"}, df)
    assert rec["status"] == C.HOLDS
    assert (rec["runs"], rec["complete"]) == (8, 7)
    # Too few complete runs in a setting: the claim cannot hold, whatever the means say.
    df = frame({("a", 1): [1.0, 1.0, 1.0], ("b", 1): [2.0] * 3}, complete={0: False, 1: False})
    rec = judge({**ORDER, "terms": {k: v for k, v in ORDER["terms"].items() if k != "C"}, "relation": "A < B"}, df)
    assert rec["status"] == C.DOES_NOT_HOLD


def test_consistency_rule_reports_consistency_when_it_passes_and_does_not_hold_when_it_fails():
    df = frame({("a", 1): [1.0] * 3, ("b", 1): [1.0] * 3, ("c", 1): [3.0] * 3})
    rule = {**ORDER, "relation": "A ~= B", "consistency": "identical by construction"}
    assert judge(rule, df)["status"] == C.CONSISTENCY
    assert judge({**rule, "relation": "A ~= C"}, df)["status"] == C.DOES_NOT_HOLD


def test_several_runs_per_seed_need_a_declared_averaging_axis():
    df = frame({("a", 1): [1.0] * 3, ("a", 2): [3.0] * 3, ("b", 1): [5.0] * 3, ("b", 2): [5.0] * 3})
    rule = {**ORDER, "where": {}, "terms": {"A": {"tcp.variant": "a"}, "B": {"tcp.variant": "b"}}, "relation": "A < B"}
    with pytest.raises(R.RuleError, match="average_over"):
        judge(rule, df)
    rec = judge({**rule, "average_over": "x"}, df)
    assert rec["status"] == C.HOLDS and rec["data"]["A"] == pytest.approx(2.0)


@pytest.mark.parametrize("rule, message", [
    ({"shape": "order", "metric": "m", "terms": {"A": {}}, "relation": "A < Z"}, "relation names 'Z'"),
    ({"shape": "order", "metric": "m", "terms": {"A": {}}}, "needs relation"),
    ({"shape": "ratio", "metric": "m", "terms": {"A": {}}, "numerator": "A", "denominator": "A"}, "band, target or paper"),
    ({"shape": "sideways", "metric": "m"}, "shape"),
    ({"shape": "value", "metric": "m", "band": [0, 1], "colour": "red"}, "colour"),
    ({"not_modelled": "why", "code": True}, "not_modelled"),
])
def test_a_bad_rule_is_rejected_naming_the_claim_and_the_key(rule, message):
    with pytest.raises(R.RuleError) as err:
        R.parse_rules({"rules": {"X-C09": rule}}, "rules_x.yaml")
    assert "rules.X-C09" in str(err.value) and message in str(err.value)


@pytest.mark.parametrize("paper_id", registry.known_papers())
def test_every_packaged_rules_file_parses_and_covers_each_claim(paper_id):
    package = registry.package(paper_id)
    ruleset = R.load_rules(package.RULES)
    ids = {e["id"] for e in C.load_claims(package.CLAIMS)}
    assert ids == set(ruleset.rules)


def test_endpoint_and_last_step_trends_judge_only_what_they_name():
    df = frame({("a", 1): [1.0] * 3, ("a", 2): [5.0] * 3, ("a", 3): [3.0] * 3})
    # first to last rises although the last step falls; the last step alone falls
    assert judge({**TREND, "direction": "increasing", "steps": "endpoints"}, df)["status"] == C.HOLDS
    assert judge({**TREND, "direction": "increasing"}, df)["status"] == C.DOES_NOT_HOLD
    assert judge({**TREND, "direction": "decreasing", "steps": "last"}, df)["status"] == C.HOLDS
    assert judge({**TREND, "direction": "increasing", "steps": "last"}, df)["status"] == C.DOES_NOT_HOLD


def test_a_signed_metric_is_judged_on_intervals_around_its_negative_means():
    # UAR is negative when the flows send more than their fair share; each term's interval must
    # hold its mean (not be cut at zero), so that disjoint intervals are seen as disjoint.
    df = frame({("a", 1): [-0.20, -0.21, -0.19], ("b", 1): [-0.50, -0.52, -0.48],
                ("c", 1): [-0.35, -0.30, -0.40]}).rename(columns={"m": "network.efficiency.uar"})
    rule = {**ORDER, "metric": "network.efficiency.uar", "basis": "significance"}
    assert judge({**rule, "relation": "B < A"}, df)["status"] == C.HOLDS
    assert judge({**rule, "relation": "B < C"}, df)["status"] == C.HOLDS


def test_a_signed_metric_interval_crossing_zero_is_not_cut_there():
    # A's UAR averages 0 over three seeds: its 90 % t interval is [-0.6743, 0.6743], and UAR may
    # be negative, so nothing cuts it at zero.
    df = frame({("a", 1): [-0.4, 0.0, 0.4], ("b", 1): [-0.1, -0.1, -0.1],
                ("c", 1): [0.5, 0.5, 0.5]}).rename(columns={"m": "network.efficiency.uar"})
    rule = {**ORDER, "metric": "network.efficiency.uar", "basis": "significance"}
    rec = judge({**rule, "relation": "B < A"}, df)
    assert "A 0 [-0.6743, 0.6743]" in rec["evidence"], rec["evidence"]
    assert rec["status"] == C.DOES_NOT_HOLD
    # The same values as a count (never negative) are cut at zero.
    counts = df.rename(columns={"network.efficiency.uar": "flow.timeouts"})
    rec = judge({**rule, "metric": "flow.timeouts", "relation": "B < A"}, counts)
    assert "A 0 [0, 0.6743]" in rec["evidence"], rec["evidence"]
