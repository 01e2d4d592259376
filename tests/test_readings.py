"""Readings of what a paper leaves open (reproduce/readings.py) and the documents generated from a
reproduction's results (reproduce/docs.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tcpenergy.reproduce import claims as C
from tcpenergy.reproduce import docs, readings, registry

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs" / "reproduce"

DOCUMENT = {
    "readings": {
        "ping": {
            "parameter": "the sender sent out pings continuously",
            "taken": "flood",
            "alternatives": {"flood": "the next request when the reply is in",
                             "one-per-second": "one request a second"},
            "evidence": "Lifetime 101 min under ping against 223 idle.",
            "procedure": "Both run; the one inside the paper's band is taken.",
            "fit": ["X-C01"],
        }
    }
}


def test_a_reading_file_is_checked_and_errors_name_the_key():
    parsed = readings.parse(DOCUMENT)
    assert parsed["ping"].taken == "flood" and parsed["ping"].fit == ("X-C01",)
    bad = yaml.safe_load(yaml.safe_dump(DOCUMENT))
    bad["readings"]["ping"]["taken"] = "sometimes"
    with pytest.raises(readings.ReadingError, match=r"readings\.ping\.taken: 'sometimes' is not one of its "
                                                    r"alternatives \(flood, one-per-second\)"):
        readings.parse(bad)
    bad["readings"]["ping"]["taken"] = "flood"
    bad["readings"]["ping"]["colour"] = "red"
    with pytest.raises(readings.ReadingError, match=r"readings\.ping: unknown key\(s\) colour"):
        readings.parse(bad)


def test_claims_whose_numbers_chose_a_reading_are_fit_and_keep_their_verdict():
    choice = readings.Choice("X", readings.parse(DOCUMENT), {})
    records = [{"id": "X-C01", "status": C.HOLDS, "explanation": None},
               {"id": "X-C02", "status": C.DOES_NOT_HOLD, "explanation": "no"}]
    marked = readings.mark_fit(records, choice)
    assert marked[0]["status"] == C.FIT and marked[0]["judged"] == C.HOLDS
    assert "ping" in marked[0]["explanation"]
    assert marked[1]["status"] == C.DOES_NOT_HOLD and "judged" not in marked[1]
    assert C.tally(marked)[C.FIT] == 1 and C.tally(marked)[C.HOLDS] == 0


def test_a_fit_claim_without_a_verdict_stays_not_modelled():
    # A claim whose part did not run (or that is not modelled) has no verdict to withhold.
    choice = readings.Choice("X", readings.parse(DOCUMENT), {})
    records = [{"id": "X-C01", "status": C.NOT_MODELLED, "explanation": "its part did not run"}]
    marked = readings.mark_fit(records, choice)
    assert marked[0]["status"] == C.NOT_MODELLED and "judged" not in marked[0]


def test_flips_compare_the_rules_verdicts_fit_or_not():
    taken = [{"id": "A", "status": C.FIT, "judged": C.HOLDS}, {"id": "B", "status": C.HOLDS}]
    other = [{"id": "A", "status": C.FIT, "judged": C.DOES_NOT_HOLD}, {"id": "B", "status": C.HOLDS}]
    assert readings.flips(taken, other) == [{"id": "A", "taken": C.HOLDS, "alternative": C.DOES_NOT_HOLD}]


def test_an_output_directory_keeps_the_readings_it_was_run_under(tmp_path):
    declared = readings.parse(DOCUMENT)
    readings.record_in(tmp_path, readings.Choice("X", declared, {}))
    readings.record_in(tmp_path, readings.Choice("X", declared, {}))  # the same readings: resumes
    with pytest.raises(readings.ReadingError, match="ping: flood there, one-per-second now"):
        readings.record_in(tmp_path, readings.Choice("X", declared, {"ping": "one-per-second"}))


@pytest.mark.parametrize("paper", registry.known_papers())
def test_every_declared_reading_file_parses_and_fits_only_its_own_claims(paper):
    package = registry.package(paper).__name__
    declared = readings.load(package)
    ids = {entry["id"] for entry in C.load_claims(C.paper_file(package, "claims.yaml"))}
    for reading in declared.values():
        assert set(reading.fit) <= ids, f"{paper} reading {reading.key} fits unknown claims"


def test_an_unknown_reading_on_the_command_line_is_refused_with_the_allowed_ones(tmp_path):
    from typer.testing import CliRunner

    from tcpenergy.cli import app

    result = CliRunner().invoke(app, ["reproduce", "seed-003", "--out", str(tmp_path / "o"),
                                      "--reading", "no-such=thing"])
    assert result.exit_code == 2
    assert "declares no reading 'no-such'" in result.output
    assert not (tmp_path / "o").exists()


def test_generated_sections_are_replaced_between_their_markers():
    doc = "intro\n<!-- generated: verdicts -->\nold\n<!-- end generated: verdicts -->\nafter\n"
    assert docs.splice(doc, "verdicts", "new", "d.md") == (
        "intro\n<!-- generated: verdicts -->\nnew\n<!-- end generated: verdicts -->\nafter\n")
    with pytest.raises(ValueError, match="no generated section 'readings'"):
        docs.splice(doc, "readings", "x", "d.md")


def _sweep(key, statuses, statements):
    claims = [{"id": cid, "energy": True, "base_status": st, "statement": statements[cid]}
              for cid, st in statuses.items()]
    claims.append({"id": "X-C09", "energy": False, "base_status": "does_not_hold", "statement": "-"})
    return {"key": key, "unit": "µs", "quick": False, "engine_version": "9.9.9",
            "profile": {"name": "p", "value": 60.0}, "values": [6.0, 60.0, 600.0],
            "physical": [[21.0, "µJ per packet"], [210.0, "µJ per packet"], [2100.0, "µJ per packet"]],
            "claims": claims}


def test_the_sensitivity_section_lists_energy_claims_that_do_not_hold_and_where_they_would():
    """docs/reproduce/README.md "Sensitivity": one column per swept figure, a row per energy claim
    that does not hold at the profile figures, and the count of those that hold somewhere."""
    a = _sweep("card.frame_us", {"X-C01": "does_not_hold", "X-C02": "holds", "X-C03": "does_not_hold"},
               {"X-C01": "holds for frame_us >= 600 µs", "X-C02": "holds at every swept value",
                "X-C03": "holds at no swept value of frame_us in [6, 600] µs"})
    b = _sweep("card.byte_ns", {"X-C01": "does_not_hold", "X-C03": "does_not_hold"},
               {"X-C01": "holds at no swept value", "X-C03": "holds at no swept value"})
    text = docs.sensitivity_section("seed-009", [a, b])
    assert "| claim | `card.frame_us` | `card.byte_ns` |" in text
    assert "| X-C01 | holds for frame_us >= 600 µs | holds at no swept value |" in text
    assert "X-C02" not in text and "X-C09" not in text  # holds at the profile value; not an energy claim
    assert "2 energy claims do not hold at the profile figures; 1 of them hold somewhere in these sweeps (X-C01)" in text
    assert "engine 9.9.9" in text and "profile value 60 in `p`" in text
    assert "No sensitivity sweep recorded" in docs.sensitivity_section("seed-009", [])


def test_recording_a_reproduction_copies_its_sweeps_from_out_or_from_another_directory(tmp_path):
    """`python -m tcpenergy.reproduce.docs PAPER OUT [--sweeps DIR]`: the claims from OUT, each
    DIR/sensitivity/KEY/sensitivity.json to results/PAPER/sensitivity/KEY.json, and the document's
    Sensitivity section made from them."""
    paper = "seed-003"
    recorded = DOCS / docs.RESULTS / paper
    docs_dir, out, swept = tmp_path / "docs", tmp_path / "out", tmp_path / "swept"
    docs_dir.mkdir()
    (docs_dir / f"{paper}.md").write_text((DOCS / f"{paper}.md").read_text())
    out.mkdir()
    (out / "claims.json").write_text((recorded / "claims.json").read_text())
    sweep = json.loads((recorded / "sensitivity" / "card.frame_us.json").read_text())
    (swept / "sensitivity" / "card.frame_us").mkdir(parents=True)
    (swept / "sensitivity" / "card.frame_us" / "sensitivity.json").write_text(json.dumps(sweep))
    docs.main([paper, str(out), "--docs", str(docs_dir), "--sweeps", str(swept)])
    assert json.loads((docs_dir / docs.RESULTS / paper / "sensitivity" / "card.frame_us.json").read_text()) == sweep
    text = (docs_dir / f"{paper}.md").read_text()
    assert "| claim | `card.frame_us` |" in text and "`cpu.active_power_w`" not in text.split("generated: sensitivity")[1]


def test_reproduction_documents_match_their_recorded_results_and_shipped_claims():
    """docs/reproduce/seed-00N.md's tallies, verdicts and Readings tables are generated from
    docs/reproduce/results/seed-00N/ (python -m tcpenergy.reproduce.docs); the recorded results
    judge exactly the claims the package ships."""
    assert docs.stale(DOCS) == []
    for paper in registry.known_papers():
        recorded = DOCS / docs.RESULTS / paper / "claims.json"
        if not recorded.exists():
            continue
        package = registry.package(paper).__name__
        shipped = [e["id"] for e in C.load_claims(C.paper_file(package, "claims.yaml"))]
        assert [r["id"] for r in json.loads(recorded.read_text())] == shipped, paper


def test_a_reports_claims_summary_names_the_readings_it_was_judged_under():
    # Issue #26 item 8: a reader checking the report against the paper sees the readings taken.
    declared = readings.parse(DOCUMENT)
    records = [{"id": "X-C01", "status": C.HOLDS}]
    assert "Readings in force" not in C.summary_section(records)[2]
    with readings.active(readings.Choice("seed-00x", declared, {"ping": "one-per-second"})):
        _, body, markdown = C.summary_section(records)
    assert "`ping` = `one-per-second` (not the taken one)" in markdown
    assert "<code>ping</code>" in body
