"""The claim-judging machinery (tcpenergy.reproduce.claims) and the rules issue #8 strengthened, on
synthetic numbers: chains hold only pairwise, means vs significance, the consistency status, the
minimum of complete runs, indicative quick verdicts, the colour-coded summary, self-contained data."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from tcpenergy.reproduce import claims as C
from tcpenergy.reproduce import registry
from tcpenergy.reproduce import seed000 as S0
from tcpenergy.reproduce import seed002 as S2
from tcpenergy.reproduce.seed000 import chains as K
from tcpenergy.reproduce.seed000 import claims as E0
from tcpenergy.reproduce.seed002 import claims as E2


def stat(mean, half=1.0, n=10):
    return C.Stat(mean, mean - half, mean + half, n)


# --------------------------------------------------------------------------------------------
# Chains: every pair they relate (issue #8: S000-C11 "S ~= N ~= R" held with S and R apart)
# --------------------------------------------------------------------------------------------

def test_tie_chain_fails_when_its_ends_differ_although_each_neighbour_pair_ties():
    chain = K.parse_chain("E[SACK] ~= E[NewReno] ~= E[Reno]")
    # neighbours 0.8 % apart (ties at 1 %), ends 1.6 % apart: not a three-way tie
    st = {"sack": stat(50.0), "newreno": stat(50.4), "reno": stat(50.8)}
    ok, why = K.check_chain(chain, st, C.MEANS)
    assert not ok and any("implied SACK ~= Reno" in w for w in why)
    # on significance the same holds for intervals: S000-C11's numbers (SACK and Reno disjoint)
    c11 = {"sack": C.Stat(50.06, 48.47, 51.65, 10), "newreno": C.Stat(50.34, 48.61, 52.06, 10),
           "reno": C.Stat(53.89, 51.68, 56.10, 10)}
    ok, why = K.check_chain(chain, c11, C.SIGNIFICANCE)
    assert not ok and any("SACK ~= Reno" in w for w in why)


def test_strict_order_across_a_tie_is_required_between_the_ends():
    chain = K.parse_chain("E[SACK] < E[NewReno] ~= E[Reno]")
    assert C.implied_relation(("<", "~=")) == "<" and C.implied_relation(("<", ">")) is None
    assert K.check_chain(chain, {"sack": stat(90), "newreno": stat(100), "reno": stat(100.5)}, C.MEANS)[0]
    # Reno ties NewReno but is below SACK: the implied SACK < Reno fails
    ok, why = K.check_chain(chain, {"sack": stat(99.2), "newreno": stat(100), "reno": stat(99.1)}, C.MEANS)
    assert not ok and any("implied SACK < Reno" in w for w in why)


# --------------------------------------------------------------------------------------------
# Means (seed 000 Table 4: "a comparison of the mean values") vs significance
# --------------------------------------------------------------------------------------------

def test_order_on_means_does_not_need_disjoint_intervals_but_significance_does():
    a, b = stat(10.0, 2.0), stat(11.0, 2.0)
    assert C.relation_holds(a, "<", b, C.MEANS)
    assert not C.relation_holds(a, "<", b, C.SIGNIFICANCE)
    assert C.significance_word(a, b) == "CIs overlap"
    assert C.significance_word(stat(10, 0.1), stat(11, 0.1)) == "CIs disjoint"


def test_means_within_the_declared_tie_tolerance_are_equal_and_beyond_it_ordered():
    assert C.TIE_REL == 0.01
    assert C.relation_holds(stat(100.0, 0.01), "~=", stat(100.9, 0.01), C.MEANS)
    assert not C.relation_holds(stat(100.0, 0.01), "<", stat(100.9, 0.01), C.MEANS)
    assert C.relation_holds(stat(100.0, 5), "<", stat(101.2, 5), C.MEANS)
    assert not C.relation_holds(stat(100.0, 5), "~=", stat(101.2, 5), C.MEANS)
    with pytest.raises(ValueError, match="basis"):
        C.relation_holds(stat(1), "<", stat(2), "median")


# --------------------------------------------------------------------------------------------
# consistency: holds but cannot fail in the model; not counted as reproduced
# --------------------------------------------------------------------------------------------

def test_consistency_check_that_passes_is_its_own_status_with_the_reason():
    v = C.consistency(True, "r = 1.000", "E_I is E minus idle energy by definition.", "inconsistent")
    assert v.status == C.CONSISTENCY and "by definition" in v.explanation
    assert C.consistency(False, "r = 0.2", "by definition", "inconsistent").status == C.DOES_NOT_HOLD
    records = [{"status": C.CONSISTENCY}, {"status": C.HOLDS}, {"status": C.DOES_NOT_HOLD}]
    assert C.tally(records) == {C.HOLDS: 1, C.DOES_NOT_HOLD: 1, C.CONSISTENCY: 1, C.FIT: 0, C.NOT_MODELLED: 0}
    with pytest.raises(ValueError):
        C.Verdict(C.CONSISTENCY, "evidence")  # needs the reason it cannot fail


def test_energy_identities_of_seed_000_are_consistency_checks():
    # S000-C02: E -> E_I as idle power -> 0 holds by the definition of E_I.
    rows = []
    for power, idle_j in ((18.0, 40.0), (6.0, 12.0), (0.0, 0.0)):
        for seed in (1, 2):
            rows.append({"sweep": S0.WHATIF, "seed": seed, "status": "ok", E0.POWER_COL: power,
                         "energy.sender.total_j": 60.0 + idle_j, "energy.sender.idealized_j": 60.0})
    v = E0.c02(E0.Context(runs=pd.DataFrame(rows), claims=[]), {})
    assert v.status == C.CONSISTENCY, v.evidence


# --------------------------------------------------------------------------------------------
# Complete runs: counted per verdict; too few complete runs cannot make a claim hold
# --------------------------------------------------------------------------------------------

def _attempted(complete_flags):
    rows = []
    for setting, flags in complete_flags.items():
        for seed, done in enumerate(flags, start=1):
            rows.append({"sweep": "s", "seed": seed, "status": "ok", "complete": done,
                         "label.x": setting, "value": 1.0 + 0.01 * seed})
    return C.mark_settings(pd.DataFrame(rows))


def _judge_on(attempted, quick=False):
    usable = C.usable_runs(attempted)

    def evaluate():
        st = C.stat_of(C.note(attempted), usable["value"])  # uses every setting of the frame
        return C.verdict(st.mean > 0, f"mean {st.mean:.3f}", "not positive")

    return C.judge({"id": "T-C01", "claim": "value > 0", "where": "test"}, evaluate, attempted, quick)


def test_verdict_counts_complete_and_attempted_runs_and_names_incomplete_settings():
    record = _judge_on(_attempted({"a": [True] * 3, "b": [True, True, False]}))
    assert record["status"] == C.HOLDS
    assert (record["runs"], record["complete"]) == (6, 5)
    assert "5 complete of 6 run" in record["evidence"] and "x=b) 2/3 complete" in record["evidence"]


def test_setting_with_fewer_than_two_thirds_complete_runs_cannot_make_a_claim_hold():
    assert C.enough_complete(3, 2) and not C.enough_complete(3, 1) and not C.enough_complete(1, 1)
    record = _judge_on(_attempted({"a": [True] * 3, "b": [True, False, False]}))
    assert record["status"] == C.DOES_NOT_HOLD
    assert "fewer complete runs than required" in record["explanation"]


def test_quick_verdicts_are_marked_indicative_in_the_record_and_the_report():
    full = _judge_on(_attempted({"a": [True] * 3}))
    quick = _judge_on(_attempted({"a": [True] * 3}), quick=True)
    assert "indicative" not in full and quick["indicative"] is True
    heading, body, md = C.summary_section([quick])
    assert "Indicative" in body and "Indicative" in md
    assert "Indicative" not in C.summary_section([full])[1]


def test_summary_is_colour_coded_and_links_each_claim_to_its_evidence_row():
    records = [{"id": "S9-C1", "status": C.HOLDS, "claim": "x", "evidence": "e" * 500, "explanation": None},
               {"id": "S9-C2", "status": C.CONSISTENCY, "claim": "y", "evidence": "e", "explanation": "why"},
               {"id": "S9-C3", "status": C.DOES_NOT_HOLD, "claim": "z", "evidence": "e", "explanation": "why"},
               {"id": "S9-C4", "status": C.NOT_MODELLED, "claim": "w", "evidence": "e", "explanation": "why"}]
    _, summary, summary_md = C.summary_section(records)
    _, checklist, _ = C.checklist_section(records, "intro")
    for r in records:
        assert f'class="status-{r["status"]}" href="#{C.anchor(r["id"])}"' in summary
        assert f'<tr id="{C.anchor(r["id"])}">' in checklist
    assert "1 hold, 1 do not hold, 1 consistency" in summary
    assert "<details><summary>" in checklist  # the 500-character evidence is folded
    assert "(#claim-S9-C1)" in summary_md


# --------------------------------------------------------------------------------------------
# Self-contained claims data
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("paper_id, prefix, count", [("seed-000", "S000", 49), ("seed-002", "S002", 66),
                                                     ("seed-003", "S003", 22)])
def test_packaged_claims_carry_every_id_of_the_paper_with_text_and_source(paper_id, prefix, count):
    claims_file = registry.package(paper_id).CLAIMS
    entries = C.load_claims(claims_file)
    assert [e["id"] for e in entries] == [f"{prefix}-C{i:02d}" for i in range(1, count + 1)]
    paper = registry.paper(paper_id).citation
    for e in entries:
        assert str(e["claim"]).strip() and str(e["where"]).strip(), e["id"]
        assert e["paper"] == paper, e["id"]
        assert C.claim_source(e).startswith(paper) and str(e["where"]) in C.claim_source(e)
    text = claims_file.read_text(encoding="utf-8")
    assert "shared/" not in text and "parameters.md" not in text and ".txt" not in text


# --------------------------------------------------------------------------------------------
# Seed 002 rules issue #8 found weaker than their claims (seed 002 §6-7, Tables 5-6)
# --------------------------------------------------------------------------------------------

class FakeData:
    """Stands in for seed002_claims.Data: fixed statistics per (metric, condition, mtu, loss, variant)."""

    def __init__(self, values, default=None):
        self.values, self.default = values, default

    def stat(self, metric, cond, mtu, loss, variant):
        got = self.values.get((metric, cond, mtu, loss, variant))
        if got is None and self.default is not None:
            got = self.default(metric, cond, mtu, loss, variant)
        return got


def test_s002_c54_a_bound_on_an_improvement_that_does_not_exist_is_not_reproduced():
    # ECN-ELFN's E_I is never below SACK's: every "improvement" is <= 0, so the 33 % bound is vacuous.
    worse = FakeData({}, lambda m, c, mtu, l, v: stat(10.0 if v == E2.K else 12.0, 0.1))
    v = E2.c54(worse)
    assert v.status == C.DOES_NOT_HOLD and "nothing to bound" in v.explanation
    better = FakeData({}, lambda m, c, mtu, l, v: stat(10.0 if v == E2.K else 8.0, 0.1))  # 20 % better
    assert E2.c54(better).status == C.HOLDS


def test_s002_c31_timeouts_must_be_within_a_factor_3_without_an_escape_below_one():
    tx = {v: S2.PAPER_TABLE5[(v, 1500, 0.01)][0] for v in S2.VARIANTS}

    def table(timeouts):
        return FakeData({}, lambda m, c, mtu, l, v: stat(tx[v] if m == "Tx" else timeouts[v], 0.01))

    # paper: SACK 0.64, ECN-ELFN 0.16 timeouts per run; 0.60 is 3.75x 0.16, below 1 but outside the factor 3
    assert E2._table5(1500, 0.01)(table({"sack": 0.64, "ecn-elfn": 0.60})).status == C.DOES_NOT_HOLD
    assert E2._table5(1500, 0.01)(table({"sack": 0.64, "ecn-elfn": 0.40})).status == C.HOLDS


def test_s002_c01_counts_only_real_wins_and_tests_the_500_percent_upper_bound():
    def cells(saving):
        def f(m, c, mtu, l, v):
            if m == "tau":
                return stat(2.0e6 if v == E2.E else 1.0e6, 1e4)
            return stat(100.0 * (1 + saving) if v == E2.K else 100.0, 0.5)
        return FakeData({}, f)

    assert E2.c01(cells(1.0)).status == C.HOLDS          # 100 % savings everywhere
    v = E2.c01(cells(40.0))                               # 4000 % savings: far above 500 %
    assert v.status == C.DOES_NOT_HOLD and "outside" in v.evidence
    # ECN-ELFN merely not significantly worse (equal) is not a win
    even = FakeData({}, lambda m, c, mtu, l, v: stat(1.0e6 if m == "tau" else 100.0, 1.0))
    assert E2.c01(even).status == C.DOES_NOT_HOLD


def test_s002_c07_no_route_failure_timeouts_is_tested_in_every_route_cell():
    def f(timeouts_ecn_route):
        def g(m, c, mtu, l, v):
            if m == "Timeouts":
                if v == E2.K:
                    return stat(40.0 if c == S2.ROUTE else 4.0, 1.0)
                return stat(timeouts_ecn_route if c == S2.ROUTE else 2.0, 0.5)
            return stat(100.0, 5.0)  # retransmissions alike with and without route failure
        return FakeData({}, g)

    assert E2.c07(f(2.0)).status == C.HOLDS
    v = E2.c07(f(6.0))  # ECN-ELFN times out during outages too
    assert v.status == C.DOES_NOT_HOLD and "fails: significantly more" in v.evidence


# --------------------------------------------------------------------------------------------
# Seed 000 §6.1.1 (S000-C35): the SACK-specific mechanism, not a change every variant shares
# --------------------------------------------------------------------------------------------

def _bursty_vs_matched(change):
    rows = []
    for sweep, model in ((S0.BURSTY, "bursty"), (S0.MATCHED, "uniform")):
        for v in S0.VARIANTS:
            base = 10.0 * (1 + change[v]) if model == "bursty" else 10.0
            for rtt in S0.RTTS:
                for seed in (1, 2, 3):
                    rows.append({"sweep": sweep, "seed": seed, "status": "ok", "tcp.variant": v, "label.rtt": rtt,
                                 "label.tcp.variant": v, "energy.sender.per_bit_idealized_uj":
                                     base + 0.001 * math.sin(seed + len(rtt)),
                                 "path.forward.impairments.0.p": 0.006, "path.reverse.impairments.0.p": 0.004,
                                 "flow.sack_blocks_sent": 28 if model == "bursty" else 239,
                                 "flow.dupacks_received": 0 if model == "bursty" else 220})
    return E0.Context(runs=pd.DataFrame(rows), claims=[])


def test_s000_c35_fails_when_every_variant_moves_the_same_way():
    shared = _bursty_vs_matched({"sack": -0.0027, "reno": -0.0016, "newreno": -0.0016})  # the baseline's
    v = E0.c35(shared, {})
    assert v.status == C.DOES_NOT_HOLD, v.evidence
    specific = _bursty_vs_matched({"sack": -0.05, "reno": -0.001, "newreno": 0.0})
    assert E0.c35(specific, {}).status == C.HOLDS
