"""`tcpenergy reproduce seed-001` (E2TCP, seed 001 §3): end to end in quick mode, the packaged claims
and rules, the channel of §3.2 and the paper's metrics as the claims read them."""

from __future__ import annotations

import json

import pytest
from tcpenergy.reproduce import claims as C
from tcpenergy.reproduce import rules as R
from tcpenergy.reproduce import seed001 as S
from tcpenergy.reproduce.seed001 import claims as E
from reproduce_support import quick_reproduction


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    return quick_reproduction(tmp_path_factory, "seed-001")


def _records(out):
    return {r["id"]: r for r in json.loads((out / "claims.json").read_text(encoding="utf-8"))}


def test_quick_reproduction_judges_all_31_claims_with_evidence(quick_run):
    out, result = quick_run
    assert result.exit_code == 0, result.output
    assert "31 claims" in result.stdout
    records = _records(out)
    assert sorted(records) == [f"S001-C{i:02d}" for i in range(1, 32)]
    for r in records.values():
        assert r["status"] in C.STATUSES and r["evidence"], r
        if r["status"] != C.HOLDS:
            assert r["explanation"], r
    # Only the unspecified maximum-rate sender is outside the model.
    assert [i for i, r in records.items() if r["status"] == C.NOT_MODELLED] == ["S001-C30"]


def test_every_run_based_verdict_counts_its_runs_and_none_averages_an_incomplete_run(quick_run):
    out, _ = quick_run
    for cid, r in _records(out).items():
        # C29 reads header sizes, C28 its own replay of §2.2's example: neither reads the sweeps.
        if r["status"] in (C.HOLDS, C.DOES_NOT_HOLD) and cid not in ("S001-C28", "S001-C29"):
            assert r["runs"] >= r["complete"] > 0, cid
            assert r["indicative"] is True


def test_e2tcp_has_lower_data_and_time_overhead_than_tahoe_at_every_quick_condition(quick_run):
    """Seed 001 §3.3, Figs 1-4: the model's E2TCP result the whole reproduction rests on."""
    from tcpenergy.reproduce import common

    out, _ = quick_run
    records = _records(out)
    assert records["S001-C01"]["status"] == C.HOLDS, records["S001-C01"]["evidence"]
    runs = S.add_metrics(common.load_runs(out / "runs.duckdb"))
    bulk = runs[runs["sweep"].str.startswith("s001-overhead-")]
    means = bulk.groupby(["s001.scenario", "s001.good_s", "tcp.variant"])["s001.time_overhead_pct"].mean().unstack()
    assert len(means) == 6
    assert (means["e2tcp"] < means[["tahoe", "reno", "newreno"]].min(axis=1)).all(), means


def test_report_has_table_1_and_the_checklist(quick_run):
    out, _ = quick_run
    md = (out / "report" / "report.md").read_text(encoding="utf-8")
    assert "Table 1" in md and "Claims checklist" in md
    for exp in S.experiments(quick=True):
        assert (out / "sweeps" / f"{exp.name}.sweep.toml").is_file()


def test_rules_cover_every_claim_and_code_only_where_marked():
    ids = {e["id"] for e in C.load_claims(S.CLAIMS)}
    ruleset = R.load_rules(S.RULES)
    assert set(ruleset.rules) == ids
    assert {cid for cid, r in ruleset.rules.items() if getattr(r, "code", None)} == set(E.CODE)


def test_scenario_a_and_b_channels_follow_section_3_2():
    """Seed 001 §3.2: good PER 0.05 %, bad PER 80 %; A: bad 0.1 s, good 300 s -> 1 s; B: bad = good / 10."""
    a = S.conditions("A", quick=False)
    b = S.conditions("B", quick=False)
    assert [c[0]["good"]["min"] for c in a] == ["300000ms", "100000ms", "30000ms", "10000ms", "5000ms", "2000ms", "1000ms"]
    assert {c[0]["bad"]["min"] for c in a} == {"100ms"}
    assert [(c[0]["good"]["min"], c[0]["bad"]["min"]) for c in b][0] == ("20000ms", "2000ms")
    for c in a + b:
        assert c[0]["good"]["per"] == 0.0005 and c[0]["bad"]["per"] == 0.8
        assert c[0]["good"]["min"] == c[0]["good"]["max"] and c[0]["phase_group"] == "wlan"


def test_every_receiver_window_is_ns2s_20_packets_and_e2tcp_s_maximum_is_the_reading_taken():
    """Seed 001 §3.1 (ns-2's agents, readings tcp-window and e2tcp-window): Tahoe, Reno and NewReno
    run with ns-2's default window_ of 20 packets; E2TCP with the maximum window taken, below it."""
    from tcpenergy.reproduce import readings

    declared = readings.load("tcpenergy.reproduce.seed001")
    tahoe, e2tcp = S.tcp("tahoe"), S.tcp("e2tcp")
    assert tahoe["receive_buffer"] == e2tcp["receive_buffer"] == 20 * S.PACKET
    assert "e2tcp" not in tahoe
    assert e2tcp["e2tcp"]["max_window"] == int(declared["e2tcp-window"].taken) <= 20
    assert e2tcp["e2tcp"]["after_timeout"] == "reduce_to_min"
    # Another alternative changes the setup it names and nothing else.
    choice = readings.check("seed-001", "tcpenergy.reproduce.seed001", {"tcp-window": "64KB"})
    with readings.active(choice):
        assert S.tcp("tahoe")["receive_buffer"] == 64_000
        assert S.tcp("e2tcp")["e2tcp"]["max_window"] == int(declared["e2tcp-window"].taken)


def test_time_overhead_of_a_paced_session_is_what_it_left_undelivered_seed001_s1_2():
    """Seed 001 §1.2: time overhead is the extra time a protocol needs to move the same data. An
    ideal protocol delivers each message of a paced session as it is written, so a run that
    delivered every message has none, and one that delivered 3 of 4 needed a third more time."""
    import pandas as pd

    channel = repr(S.channel(10, 0.1))
    frame = pd.DataFrame({
        "sweep": ["s001-cbr-a", "s001-interactive-b", "s001-overhead-a"],
        f"label.{S.CHANNEL_KEY}": [channel] * 3,
        "tcp.variant": ["tahoe", "e2tcp", "tahoe"],
        "flows.f.efficiency.data_overhead": [0.08, 0.02, 0.10],
        "flows.f.efficiency.time_overhead": [3.0, 10.0, 0.50],
        "flows.f.efficiency.overhead": [1.54, 5.01, 0.30],
        "flows.f.goodput_bps": [250e3, 16e3, 900e3],
        "flows.f.messages_sent": [4000, 240, 0],
        "flows.f.messages_delivered": [3000, 240, 0],
    })
    out = S.add_metrics(frame)
    assert out["s001.time_overhead_pct"].tolist() == pytest.approx([100 / 3, 0.0, 50.0])
    assert out["s001.overhead_pct"].tolist() == pytest.approx([0.5 * 8 + 0.5 * 100 / 3, 1.0, 30.0])


def test_the_headers_share_verdict_names_the_papers_own_inconsistency(quick_run):
    """Seed 001 §4 against Table 1: the text's 75 % + 12 % split fails on the paper's own table."""
    out, _ = quick_run
    c26 = _records(out)["S001-C26"]
    assert "86.6 %" in c26["evidence"]
    if c26["status"] == C.DOES_NOT_HOLD:
        assert "Paper inconsistency" in c26["explanation"]


def test_claims_whose_numbers_chose_a_reading_are_fit(quick_run):
    """Readings (readings.yaml): Table 1's E2TCP rows and the reported latency chose E2TCP's window."""
    out, _ = quick_run
    records = _records(out)
    for cid in ("S001-C21", "S001-C23", "S001-C24"):
        assert records[cid]["status"] == C.FIT and records[cid]["judged"] in (C.HOLDS, C.DOES_NOT_HOLD)


def test_the_two_timer_example_of_section_2_2_is_replayed_through_the_engine():
    """Seed 001 §2.2: a retransmission at unit 1 and a new packet at unit 5, both lost, timeout 6:
    E2TCP's retransmission timer acts at unit 7, where one timer restarted at unit 5 waits to 11."""
    v = E.c28(None, None, {})
    assert v.status == C.HOLDS, v.evidence
    d = v.data
    assert d["detected_s"] - d["retransmission_s"] == pytest.approx(E.TWO_TIMER_TIMEOUT_S, abs=0.002)
    assert d["retransmission_s"] < d["new_s"] < d["detected_s"] < d["single_timer_s"]
