"""`tcpenergy reproduce seed-004` (TCP(alpha, beta), EEE, EP, UAR, Risk Index; seed 004 §5): end to
end in quick mode, the packaged claims and rules, and the experiments' settings."""

from __future__ import annotations

import json

import pytest
from tcpenergy.reproduce import claims as C
from tcpenergy.reproduce import rules as R
from tcpenergy.reproduce import seed004 as S
from tcpenergy.reproduce.seed004 import claims as E
from reproduce_support import quick_reproduction


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    return quick_reproduction(tmp_path_factory, "seed-004")


def test_quick_reproduction_judges_all_30_claims_with_evidence(quick_run):
    out, result = quick_run
    assert result.exit_code == 0, result.output
    records = {r["id"]: r for r in json.loads((out / "claims.json").read_text(encoding="utf-8"))}
    assert sorted(records) == [f"S004-C{i:02d}" for i in range(1, 31)]
    for r in records.values():
        assert r["status"] in C.STATUSES and r["evidence"], r
        if r["status"] != C.HOLDS:
            assert r["explanation"], r
    # Only the testbed laptop's own power and battery figures are outside the model.
    assert sorted(i for i, r in records.items() if r["status"] == C.NOT_MODELLED) == ["S004-C06", "S004-C08"]
    for cid in ("S004-C07", "S004-C23", "S004-C27"):
        assert records[cid]["runs"] >= records[cid]["complete"] > 0, cid
    md = (out / "report" / "report.md").read_text(encoding="utf-8")
    assert "Claims checklist" in md and "§5.3.3 contention decrease" in md


def test_rules_cover_every_claim_and_code_only_where_marked():
    ids = {e["id"] for e in C.load_claims(S.CLAIMS)}
    ruleset = R.load_rules(S.RULES)
    assert set(ruleset.rules) == ids
    assert {cid for cid, r in ruleset.rules.items() if getattr(r, "code", None)} == set(E.CODE)


def test_equation_1_gives_the_tcp_friendly_alpha_seed004_s2():
    """Seed 004 Eq. (1): alpha = 4 (1 - beta^2) / 3; beta = 0.5 gives NewReno's alpha = 1."""
    assert E.alpha_of(0.5) == pytest.approx(1.0)
    assert E.alpha_of(0.875) == pytest.approx(0.3125)
    assert E.alpha_of(1.0) == 0


def test_ideal_eee_is_0_3_when_idle_and_0_when_every_byte_is_goodput_at_tmax_seed004_s3():
    assert E.eee(100, 0, 0) == pytest.approx(0.3)
    assert E.eee(100, 100, 100) == pytest.approx(0.0)


def test_contention_decrease_halves_the_flows_until_the_last_leaves_at_the_end_seed004_s5_3_3():
    for n in range(10, 21):
        stops = S.decrease_schedule(n)
        assert max(stops) == 120.0 and stops.count(120.0) == 1
        assert all(2.0 < s <= 120.0 for s in stops)
        times = sorted(set(stops))
        # after each leave time, the number of flows still sending is at most half of the one before
        alive = [sum(1 for s in stops if s > t) for t in [0.0, *times[:-1]]]
        assert all(b <= (a + 1) // 2 for a, b in zip(alive, alive[1:]))


def test_handoffs_take_each_sink_link_down_for_0_2_s_at_its_own_phase_seed004_s5_3_2():
    scenario = S.with_handoffs(S.dumbbell(4, 0.0, "10s", "x"))
    outages = [imp for link in scenario["links"] if link["between"][0] == "r2"
               for imp in link["forward"]["impairments"] if imp["kind"] == "outage"]
    assert len(outages) == 4
    assert all(o["down"] == "200ms" and o["offset"] == "random" for o in outages)
