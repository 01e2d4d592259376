"""`tcpenergy reproduce seed-004` (TCP(alpha, beta), EEE, EP, UAR, Risk Index; seed 004 §5): end to
end in quick mode, the packaged claims and rules, and the experiments' settings."""

from __future__ import annotations

import json

import pytest
from tcpenergy.reproduce import claims as C
from tcpenergy.reproduce import readings
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


def under(**overrides):
    """The seed-004 readings in force: the taken ones, with ``overrides`` (key -> alternative)."""
    return readings.active(readings.check("seed-004", S.__name__, {k.replace("_", "-"): v for k, v in overrides.items()}))


def test_handoffs_take_each_sink_link_down_for_0_2_s_at_its_own_phase_seed004_s5_3_2():
    with under():
        scenario = S.with_handoffs(S.dumbbell(4, 0.0, "10s", "x"))
    outages = [imp for link in scenario["links"] if link["between"][0] == "r2"
               for imp in link["forward"]["impairments"] if imp["kind"] == "outage"]
    assert len(outages) == 4
    assert all(o["down"] == "200ms" and o["offset"] == "random" for o in outages)


def _rates(scenario):
    return {tuple(link["between"]): link["rate"] for link in scenario["links"]}


def test_fig1_bw3_is_the_sink_access_links_and_the_bottleneck_stays_10_mbit_seed004_s4_1():
    """Fig 1: bw_1 = bw_2 = 10, bw_3 = 1 Mbit/s; read left to right (reading bw3 = sink-access), the
    bottleneck keeps §5.3's 10 Mbit/s."""
    with under():
        rates = _rates(S.dumbbell(4, 0.01, "10s", "x"))
    assert rates[("r1", "r2")] == "10Mbps"
    assert all(rates[("s%d" % i, "r1")] == "10Mbps" and rates[("r2", "d%d" % i)] == "1Mbps" for i in range(1, 5))
    with under(bw3="bottleneck"):
        testbed, sim = _rates(S.dumbbell(4, 0.0, "10s", "x", testbed=True)), _rates(S.dumbbell(4, 0.0, "10s", "x"))
    assert testbed[("r1", "r2")] == "1Mbps" and sim[("r1", "r2")] == "10Mbps"
    with under(bw3="set-aside"):
        assert set(_rates(S.dumbbell(4, 0.0, "10s", "x", testbed=True)).values()) == {"10Mbps"}


def test_responsive_and_smooth_carry_the_small_fixed_timeout_and_newreno_the_standard_one_seed004_s2():
    """§2: the alpha/beta adjustments come with a small fixed timeout; NewReno is standard TCP(1, 1/2)."""
    with under():
        base = S.dumbbell(2, 0.0, "10s", "x")
        axis = S.variant_axis(base, S.SIM_PROTOCOLS)["tcp"]
    by_variant = {t["variant"]: t for t in axis}
    assert "fixed_rto" not in by_variant["newreno"]
    assert by_variant["responsive"]["fixed_rto"] == by_variant["smooth"]["fixed_rto"] == "300ms"
    # every other tcp setting of the dumbbell is kept
    assert all(t["receive_buffer"] == base["tcp"]["receive_buffer"] for t in axis)
    with under(alpha_beta_timeout="standard"):
        assert S.variant_axis(base, S.SIM_PROTOCOLS) == {"tcp.variant": list(S.SIM_PROTOCOLS)}


def test_calibration_path_is_140_mbit_with_a_10_packet_queue_seed004_s5_1():
    """Eq. (8), a = 5, with the aggressive TCP's 8.4 GB in 600 s: Tmax = 112 / 0.8 = 140 Mbit/s."""
    with under():
        link = S.calibration_base(60)["links"][0]
    assert (link["rate"], link["delay"], link["queue"]) == ("140Mbps", "1ms", 10)
    with under(calibration_path="100M-q100"):
        link = S.calibration_base(60)["links"][0]
    assert (link["rate"], link["queue"]) == ("100Mbps", 100)


def test_descent_counts_the_responses_that_bring_a_large_window_to_the_2_segment_floor_seed004_s2():
    """§2: multiple drops, not one, shrink window and ssthresh to 2 segments."""
    # cwnd 10 -> 3 -> 1 with ssthresh 20 -> 9 -> 2: two responses
    assert E.descent([10, 3, 1, 1], [20, 9, 2, 2], smss=1) == 2
    # one response straight to the floor counts 1; later responses at the floor do not add
    assert E.descent([10, 1, 1, 1], [20, 2, 2, 2], smss=1) == 1
    # never below the floor from a large window
    assert E.descent([10, 9, 8], [20, 18, 16], smss=1) == 0
