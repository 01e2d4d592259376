"""`tcpenergy reproduce seed-000`: end to end in quick mode, the packaged claims, and the claim rules."""

from __future__ import annotations

import json
import math
import sys
from importlib.resources import files

import pandas as pd
import pytest

from tcpenergy.reproduce import claims as C
from tcpenergy.reproduce import common
from tcpenergy.reproduce import seed000 as S
from tcpenergy.reproduce.seed000 import chains as K
from tcpenergy.reproduce.seed000 import claims as E
from reproduce_support import quick_reproduction

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

# --------------------------------------------------------------------------------------------
# End to end (one quick reproduction shared by the tests below)
# --------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    # On the path: the claims' judging is the same on both networks, and the testbed's own runs are
    # checked in test_reproduce_testbed.py (the path keeps the suite within its time budget).
    return quick_reproduction(tmp_path_factory, "seed-000", "--network", "path")


def test_quick_reproduction_exits_0(quick_run):
    out, result = quick_run
    assert result.exit_code == 0, result.output
    assert "49 claims" in result.stdout


def test_claims_json_lists_every_s000_claim_exactly_once_with_a_valid_status(quick_run):
    out, result = quick_run
    records = json.loads((out / "claims.json").read_text(encoding="utf-8"))
    ids = [r["id"] for r in records]
    expected = [e["id"] for e in C.load_claims(S.CLAIMS)]
    assert len(expected) == 49
    assert sorted(ids) == sorted(expected)
    assert len(set(ids)) == len(ids)
    for r in records:
        assert r["status"] in C.STATUSES, r
        assert r["claim"] and r["where"] and r["evidence"], r
        if r["status"] != C.HOLDS:
            assert r["explanation"], r
        assert r["indicative"] is True, r  # --quick verdicts are indicative
        assert r["source"].startswith("H. Singh and S. Singh"), r
    by_id = {r["id"]: r for r in records}
    # RTS/CTS needs an 802.11 MAC: never judged from runs.
    assert by_id["S000-C42"]["status"] == C.NOT_MODELLED
    # Identities of the energy model cannot fail: consistency, not reproduced.
    assert by_id["S000-C02"]["status"] in (C.CONSISTENCY, C.DOES_NOT_HOLD)
    table4 = by_id["S000-C14"]
    assert table4["runs"] == 45 and "complete of 45 run" in table4["evidence"]  # 3 variants x 5 RTTs x 3 seeds


def test_report_and_sweep_files_are_written(quick_run):
    out, _ = quick_run
    report = out / "report"
    for name in ("index.html", "report.md", "summary.csv", "ranking.csv"):
        assert (report / name).is_file(), name
    assert list((report / "figures").glob("*.png"))
    text = (report / "report.md").read_text(encoding="utf-8")
    assert "Claims checklist" in text and "S000-C49" in text and "Table 4: paper vs reproduction" in text
    assert "Claims summary" in text and "Indicative verdicts" in text and "shared/" not in text
    html = (report / "index.html").read_text(encoding="utf-8")
    assert 'class="status-holds"' in html or 'class="status-does_not_hold"' in html
    assert 'href="#claim-S000-C11"' in html and 'id="claim-S000-C11"' in html
    assert "RTS/CTS" in text
    for exp in S.experiments(quick=True):
        spec = tomllib.loads((out / "sweeps" / f"{exp.name}.sweep.toml").read_text())
        assert spec.get("repetitions") == 3 or spec.get("seeds") == [1]
        assert (out / "sweeps" / spec["base"]).is_file()
    assert (out / "runs.duckdb").is_file()


def test_rerunning_a_sweep_skips_the_stored_runs(quick_run):
    out, _ = quick_run
    outcome = common._run_sweep(out / "sweeps" / f"{S.BURSTY}.sweep.toml", out / "runs.duckdb", 1, False)
    assert outcome.ran == 0 and outcome.skipped == outcome.total == 45


def test_unknown_paper_is_a_usage_error_listing_the_known_ones(cli, tmp_path):
    result = cli("reproduce", "seed-999", "--out", tmp_path / "x")
    assert result.exit_code == 2
    assert "seed-000" in result.stderr
    assert not (tmp_path / "x").exists()


# --------------------------------------------------------------------------------------------
# Packaged claims
# --------------------------------------------------------------------------------------------

def test_claims_data_ships_in_the_installed_package():
    shipped = files("tcpenergy.reproduce.seed000") / "claims.yaml"
    assert shipped.is_file()
    entries = C.load_claims(S.CLAIMS)
    assert [e["id"] for e in entries] == [f"S000-C{i:02d}" for i in range(1, 50)]
    from tcpenergy.reproduce import rules

    ruleset = rules.load_rules(S.RULES)
    assert set(ruleset.rules) == {e["id"] for e in entries}
    assert {cid for cid, r in ruleset.rules.items() if getattr(r, "code", None)} == set(E.EVALUATORS)


def test_packaged_claims_cite_the_paper_by_authors_and_title():
    for e in C.load_claims(S.CLAIMS):
        assert e["paper"].startswith("H. Singh and S. Singh"), e["id"]
        assert e["where"], e["id"]


# --------------------------------------------------------------------------------------------
# Claim rules on synthetic numbers
# --------------------------------------------------------------------------------------------

def stat(mean, half=1.0, n=10):
    return C.Stat(mean, mean - half, mean + half, n)


def test_relations_on_the_significance_basis_use_interval_overlap_for_ties_and_disjoint_intervals_for_order():
    a, b, c = stat(10), stat(11.5), stat(20)
    assert C.relation_holds(a, "~=", b) and not C.relation_holds(a, "<", b)
    assert C.relation_holds(a, "<", c) and not C.relation_holds(c, "<", a)
    assert C.relation_holds(c, ">", a)
    assert C.relation_holds(a, "<=", b) and C.relation_holds(a, "<=", c) and not C.relation_holds(c, "<=", a)
    # Zero-width intervals (deterministic runs) tie only at (nearly) equal means.
    assert C.relation_holds(stat(5, 0), "~=", stat(5 * (1 + 1e-6), 0))
    assert C.relation_holds(stat(5, 0), "<", stat(5.1, 0))


def test_parse_chain_reads_the_claims_notation():
    chain = K.parse_chain("E[SACK] < E[NewReno] ~= E[Reno]")
    assert chain == K.Chain("E", ("sack", "newreno", "reno"), ("<", "~="))
    assert K.parse_chain("tau[NewReno] > tau[Reno] > tau[SACK]").ops == (">", ">")
    with pytest.raises(ValueError):
        K.parse_chain("E[SACK] < tau[Reno]")
    with pytest.raises(ValueError):
        K.parse_chain("E[SACK]")


def test_chain_with_a_tie_holds_only_when_the_strict_parts_are_significant():
    chain = K.parse_chain("E[SACK] < E[NewReno] ~= E[Reno]")
    assert K.check_chain(chain, {"sack": stat(5), "newreno": stat(10), "reno": stat(10.5)})[0]
    # tie broken: NewReno clearly below Reno
    ok, why = K.check_chain(chain, {"sack": stat(5), "newreno": stat(10), "reno": stat(15)})
    assert not ok and "NewReno ~= Reno" in why[0]
    # SACK overlaps NewReno: '<' fails even though its mean is lower
    assert not K.check_chain(chain, {"sack": stat(9.5), "newreno": stat(10), "reno": stat(10.2)})[0]


def test_chain_checks_the_order_implied_across_a_tie_on_every_pair():
    chain = K.parse_chain("E_I[NewReno] < E_I[Reno] ~= E_I[SACK]")
    # NewReno < Reno holds, Reno ~= SACK holds, but SACK's mean is below NewReno's
    ok, why = K.check_chain(chain, {"newreno": stat(10, 0.5), "reno": stat(11.2, 0.5), "sack": stat(9.9, 2)})
    assert not ok and any("implied" in w for w in why)


def synthetic_random_loss(means, spread=0.2, seeds=5):
    """A random-loss runs frame whose per-bit energy has the given mean per (variant, mtu, loss)."""
    rows = []
    for (variant, mtu, loss), mean in means.items():
        for rtt in S.RTTS:
            for seed in range(1, seeds + 1):
                value = mean + spread * math.sin(seed * 1.7 + len(rtt))
                rows.append({"sweep": S.RANDOM, "seed": seed, "status": "ok", "tcp.variant": variant,
                             "path.mtu": mtu, S.LOSS_KEY: loss, "label.rtt": rtt,
                             "label.tcp.variant": variant,
                             "energy.sender.per_bit_total_uj": value})
    return pd.DataFrame(rows)


def test_table4_rule_judges_the_papers_cell_on_the_means_over_rtt():
    """Seed 000 Table 4, MTU 512 / 5 % loss: E[SACK] < E[NewReno] ~= E[Reno], on the means over RTT."""
    from tcpenergy.reproduce import rules

    entry = next(e for e in C.load_claims(S.CLAIMS) if e["id"] == "S000-C14")
    ruleset = rules.load_rules(S.RULES)
    holds = synthetic_random_loss({("sack", 512, 0.05): 100.0, ("newreno", 512, 0.05): 120.0,
                                   ("reno", 512, 0.05): 120.1})
    record = rules.evaluate(holds, [entry], ruleset)[0]
    assert record["status"] == C.HOLDS, record["evidence"]
    assert "CIs" in record["evidence"] and "MTU 512 / 5 % loss" in record["evidence"]
    reversed_ = synthetic_random_loss({("sack", 512, 0.05): 130.0, ("newreno", 512, 0.05): 120.0,
                                       ("reno", 512, 0.05): 120.1})
    record = rules.evaluate(reversed_, [entry], ruleset)[0]
    assert record["status"] == C.DOES_NOT_HOLD and record["explanation"]
    assert "SACK < NewReno fails" in record["evidence"]


def test_scenario_writer_round_trips_through_toml(tmp_path):
    for exp in S.experiments(quick=True):
        sweep_file = S.write_experiment(exp, tmp_path)
        spec = tomllib.loads(sweep_file.read_text())
        assert spec["axes"] == exp.axes and spec["name"] == exp.name
        base = tomllib.loads((tmp_path / spec["base"]).read_text())
        assert base == exp.base


def test_leading_tie_is_empty_without_a_tie_for_best():
    assert E._leading_tie(K.parse_chain("tau[NewReno] > tau[Reno] > tau[SACK]")) == set()
    assert E._leading_tie(K.parse_chain("tau[SACK] ~= tau[NewReno] > tau[Reno]")) == {"sack", "newreno"}


def test_table4_puts_our_relations_and_means_beside_the_papers_chain():
    # Issue #26 (reports): the "ours" columns of the Table 4 comparison were empty in every row.
    from tcpenergy.reproduce.seed000 import _table4_section, table4_ours

    same, ranked = table4_ours("E_I[NewReno] < E_I[Reno] ~= E_I[SACK]",
                               {"SACK": 3.775, "NewReno": 3.774, "Reno": 3.772})
    assert same == "E_I[NewReno] ~= E_I[Reno] ~= E_I[SACK] (NewReno 3.774, Reno 3.772, SACK 3.775)"
    assert ranked == "E_I[Reno] ~= E_I[NewReno] ~= E_I[SACK]"
    same, ranked = table4_ours("tau[SACK] > tau[NewReno] > tau[Reno]", {"SACK": 33.4, "NewReno": 31.5, "Reno": 30.4})
    assert same.startswith("tau[SACK] > tau[NewReno] > tau[Reno]") and ranked == "tau[Reno] < tau[NewReno] < tau[SACK]"
    record = {"id": "S000-C13", "where": "Table 4, MTU 512 / 1% loss, row E_I", "status": "does_not_hold",
              "claim": "E_I[NewReno] < E_I[Reno] ~= E_I[SACK]",
              "data": {"SACK": 3.775, "NewReno": 3.774, "Reno": 3.772}}
    _, _, markdown = _table4_section([record])
    row = markdown.splitlines()[-1].split(" | ")
    assert all(cell.strip() for cell in row), row


def test_the_reproduction_report_in_a_browser_has_no_empty_column_no_markdown_source_and_nothing_clipped(
        quick_run, tmp_path):
    # Issue #26 (reports): Table 4's "ours" columns were empty, Markdown showed as backticks.
    from browser_check import probe

    out, _ = quick_run
    seen = probe(out / "report", tmp_path)
    assert seen["emptyColumns"] == []
    assert seen["backticks"] == []
    assert seen["clipped"] == []
    assert all(image["loaded"] for image in seen["images"])
