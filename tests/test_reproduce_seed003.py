"""`tcpenergy reproduce seed-003 --part options`: end to end in quick mode, the packaged claims, --part."""

from __future__ import annotations

import json
import math

import pytest
from tcpenergy.reproduce import claims as C
from tcpenergy.reproduce import seed003 as S
from tcpenergy.reproduce.seed003 import claims as E
from reproduce_support import quick_reproduction



@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    return quick_reproduction(tmp_path_factory, "seed-003", "--part", "options")


def test_quick_reproduction_exits_0(quick_run):
    out, result = quick_run
    assert result.exit_code == 0, result.output
    assert "22 claims" in result.stdout


def test_claims_json_lists_every_s003_claim_exactly_once_with_a_valid_status(quick_run):
    out, _ = quick_run
    records = json.loads((out / "claims.json").read_text(encoding="utf-8"))
    ids = [r["id"] for r in records]
    expected = [f"S003-C{i:02d}" for i in range(1, 23)]
    assert sorted(ids) == expected
    for r in records:
        assert r["status"] in C.STATUSES, r
        assert r["claim"] and r["where"] and r["evidence"], r
        if r["status"] != C.HOLDS:
            assert r["explanation"], r


def test_claims_of_parts_that_did_not_run_say_which_part_to_run(quick_run):
    out, _ = quick_run
    records = {r["id"]: r for r in json.loads((out / "claims.json").read_text(encoding="utf-8"))}
    for cid in ["S003-C01", "S003-C03", "S003-C11", "S003-C14"] + [f"S003-C{i}" for i in range(15, 22)]:
        assert records[cid]["status"] == C.NOT_MODELLED, cid
        assert "did not run" in records[cid]["explanation"] and "--part" in records[cid]["explanation"], cid
    for cid in ["S003-C02", "S003-C04", "S003-C07", "S003-C09", "S003-C10", "S003-C12"]:
        assert records[cid]["status"] in (C.HOLDS, C.DOES_NOT_HOLD), cid
    # Arithmetic on the paper's numbers and an option with no modelled cost cannot fail: consistency.
    assert records["S003-C22"]["status"] == C.CONSISTENCY
    assert records["S003-C06"]["status"] in (C.CONSISTENCY, C.DOES_NOT_HOLD)


@pytest.fixture(scope="module")
def all_parts(tmp_path_factory):
    return quick_reproduction(tmp_path_factory, "seed-003")


def test_without_part_every_part_runs_and_only_distance_stays_not_modelled(all_parts):
    """Seed 003 §III-A, B.7, C: the battery benchmark, RTS/CTS and Tables I/II are judged."""
    out, result = all_parts
    assert result.exit_code == 0, result.output
    records = {r["id"]: r for r in json.loads((out / "claims.json").read_text(encoding="utf-8"))}
    assert [cid for cid, r in records.items() if r["status"] == C.NOT_MODELLED] == ["S003-C13"]
    for cid in ["S003-C01", "S003-C03", "S003-C11", "S003-C14"] + [f"S003-C{i}" for i in range(15, 22)]:
        assert records[cid]["runs"] >= records[cid]["complete"] > 0, cid
    md = (out / "report" / "report.md").read_text(encoding="utf-8")
    assert "Battery lifetime" in md and "Interfering traffic (Tables I and II)" in md and "RTS/CTS" in md


def test_the_idle_sender_lasts_the_calibrated_223_minutes_per_full_charge(all_parts):
    """Seed 003 §III-A: the battery is calibrated on the idle lifetime; runs on a share of the charge
    are reported per full charge, so the idle benchmark must give back 223 min."""
    out, _ = all_parts
    c01 = next(r for r in json.loads((out / "claims.json").read_text(encoding="utf-8")) if r["id"] == "S003-C01")
    assert c01["data"]["part1"]["no traffic"] == pytest.approx(223, rel=2e-3)


def test_report_and_sweep_files_exist(quick_run):
    out, _ = quick_run
    assert (out / "report" / "index.html").is_file()
    assert (out / "report" / "report.md").is_file()
    assert (out / "runs.duckdb").is_file()
    md = (out / "report" / "report.md").read_text(encoding="utf-8")
    assert "Option tuning" in md and "Claims checklist" in md
    for exp in S.part_experiments(S.OPTIONS, quick=True):
        assert (out / "sweeps" / f"{exp.name}.sweep.toml").is_file()


def test_an_unknown_part_exits_2_listing_the_parts(tmp_path):
    from typer.testing import CliRunner

    from tcpenergy.cli import app

    result = CliRunner().invoke(app, ["reproduce", "seed-003", "--part", "nonsense", "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    output = " ".join(result.output.split())
    assert "unknown part" in output and "Available parts: options, battery-lifetime, rts-cts, interference" in output
    assert not (tmp_path / "o").exists()


def test_seed000_rejects_a_part(tmp_path):
    from typer.testing import CliRunner

    from tcpenergy.cli import app

    result = CliRunner().invoke(app, ["reproduce", "seed-000", "--part", "options", "--out", str(tmp_path / "o")])
    assert result.exit_code == 2


def test_packaged_claims_cite_the_paper_and_every_id_has_a_rule():
    from tcpenergy.reproduce import rules

    packaged = C.load_claims(S.CLAIMS)
    assert [e["id"] for e in packaged] == [f"S003-C{i:02d}" for i in range(1, 23)]
    ruleset = rules.load_rules(S.RULES)
    assert set(ruleset.rules) == {e["id"] for e in packaged}
    coded = {cid for cid, r in ruleset.rules.items() if getattr(r, "code", None)}
    assert coded == set(E.CODE)
    for e in packaged:
        assert e["paper"].startswith("S. Agrawal and S. Singh") and e["where"], e["id"]


def test_hazard_arithmetic_is_a_consistency_check_not_a_reproduction():
    entry = next(e for e in C.load_claims(S.CLAIMS) if e["id"] == "S003-C22")
    v = E.c22(None, entry)
    assert v.status == C.CONSISTENCY
    assert math.isclose(v.data["p_hazard"], 2296 / 2 ** 32)


def test_readings_declare_the_benchmark_ping_the_time_based_ack_and_the_residual_loss_with_their_fit_claims():
    """Seed 003 §III-A (continuous ping), §II-F / §III-B.6 (delayed ACK based only on time) and
    §III-B (the options part's residual loss, unstated) are open: each is a declared reading whose
    fit claims exist."""
    from tcpenergy.reproduce import readings

    declared = readings.load("tcpenergy.reproduce.seed003")
    assert set(declared) == {"ping", "delayed-ack", "options-loss"}
    assert set(declared["ping"].alternatives) == set(S.PINGS)
    assert set(declared["delayed-ack"].alternatives) == set(S.TIMED_ACKS)
    assert set(declared["options-loss"].alternatives) == set(S.OPTIONS_LOSS)
    ids = {e["id"] for e in C.load_claims(S.CLAIMS)}
    for reading in declared.values():
        assert reading.fit and set(reading.fit) <= ids, reading.key


def test_the_options_loss_is_the_papers_retransmissions_per_byte_carried_seed003_s3b9():
    # §III-B.9: about 50 TCP retransmissions in a battery life; Tables I and II: 3-4 GB per life.
    per_segment = 50 / (3.5e9 / 1448)
    assert S.OPTIONS_LOSS["retx-matched"] == pytest.approx(per_segment, rel=0.05)
    assert S.base()["path"]["forward"]["impairments"] == [{"kind": "bernoulli", "p": S.OPTIONS_LOSS["retx-matched"]}]


def _benchmark_ping(quick=True):
    bench = next(e for e in S.part_experiments(S.LIFETIME, quick) if e.name == S.BENCHMARK)
    return bench.base["flows"][0]["traffic"]


def _interference_ack():
    exp = S.part_experiments(S.INTERFERENCE, True)[0]
    return exp.base["tcp"]["delayed_ack"]


def test_continuous_ping_is_a_flood_of_echo_requests_one_round_trip_apart_seed003_3a():
    """§III-A: "pings continuously" read as ping -f; the alternative is ping's default, one a second."""
    from tcpenergy.reproduce import readings

    flood = _benchmark_ping()
    assert flood["message"] == 56 and flood["interval"] == "1.5ms"
    with readings.active(readings.check(S.PAPER_ID, "tcpenergy.reproduce.seed003", {"ping": "one-per-second"})):
        assert _benchmark_ping()["interval"] == "1s"


def test_time_based_ack_drops_only_linux22s_two_segment_count_seed003_2f():
    """§II-F: the modified receiver keeps Linux 2.2's delayed-ACK timer (its interarrival estimate,
    two 10 ms jiffies on a flowing stream, tcp_delack_estimator) and window-update test
    (tcp_raise_window); the literal 500 ms timer-only reading is an alternative."""
    from tcpenergy.reproduce import readings

    assert _interference_ack() == {"every": 0, "timeout": "20ms", "window_update": True}
    assert all(e.base["tcp"]["delayed_ack"]["every"] == 0 for e in S.part_experiments(S.INTERFERENCE, True))
    with readings.active(readings.check(S.PAPER_ID, "tcpenergy.reproduce.seed003", {"delayed-ack": "timer-only"})):
        assert _interference_ack() == {"every": 0, "timeout": "500ms"}
        cumulative = next(e for e in S.experiments(True) if e.name == S.CUMULATIVE)
        assert {"every": 0, "timeout": "500ms"} in cumulative.axes["tcp.delayed_ack"]


def test_timestamps_claim_c05_tests_that_prediction_first_takes_away_the_timestamps_off_gain():
    """§III-B.2: no gain from timestamps off once PAWS is off the fast path, and that gain must
    shrink from standard prediction to predict_first: a gain equal under both orders fails."""
    from tcpenergy.reproduce import rules

    rule = rules.load_rules(S.RULES).rules["S003-C05"]
    shapes = sorted(sub.shape for sub in rule.of)
    assert shapes == ["order", "trend"]
    trend = next(sub for sub in rule.of if sub.shape == "trend")
    assert trend.direction == "decreasing" and list(trend.axis_order) == ["standard", "predict_first"]
