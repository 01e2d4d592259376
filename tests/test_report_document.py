"""The report directory: HTML + Markdown + every figure as PNG and SVG, links that resolve,
written all at once."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest
from report_data import E_COL, sweep_frame

from tcpenergy.report import document, write_report

FIGURE_STEMS = ("energy_per_bit", "receiver_energy_per_bit", "idealized_energy_per_bit",
                "receiver_idealized_energy_per_bit", "goodput")
CLAIMS = ("Claims checklist", "<p id=claims>3 of 4 claims hold</p>", "3 of 4 claims hold")
SUMMARY = ("Claims summary", '<p><span class="status-holds">holds</span> 3</p>', "holds: 3")


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.targets = []

    def handle_starttag(self, tag, attrs):
        self.targets += [value for name, value in attrs if name in ("href", "src")]


def html_links(path: Path) -> list:
    parser = _Links()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser.targets


@pytest.fixture(scope="module")
def runs():
    frame = sweep_frame(seeds=(1, 2, 3))
    failed = frame.index[0]
    frame.loc[failed, "status"] = "failed"
    frame.loc[failed, "error"] = "engine failure: example"
    frame.loc[failed, E_COL] = float("nan")
    frame.loc[frame.index[1], "complete"] = False   # stopped at stop_after: left out, with why
    return frame


@pytest.fixture(scope="module")
def report(runs, tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "out"
    return write_report(runs, out, title="Small sweep", extra_sections=[CLAIMS],
                        summary_sections=[SUMMARY])


def test_report_writes_html_markdown_tables_and_every_figure_as_png_and_svg(report):
    out = report.out_dir
    assert report.html == out / "index.html" and report.html.is_file()
    assert report.markdown == out / "report.md" and report.markdown.is_file()
    expected = {out / "figures" / f"{stem}.{ext}" for stem in FIGURE_STEMS for ext in ("png", "svg")}
    assert set(report.figures) == expected
    for path in expected:
        assert path.stat().st_size > 1000
    assert {p.name for p in report.tables} == {"summary.csv", "ranking.csv", "ranking_per_x.csv"}
    assert all(p.is_file() for p in report.tables)


def test_html_references_every_figure_file_and_every_reference_exists(report):
    html_text = report.html.read_text(encoding="utf-8")
    links = html_links(report.html)
    assert links, "the report links nothing"
    ids = set(re.findall(r'\bid="([^"]+)"', html_text))
    for link in links:
        assert not link.startswith(("/", "http:", "https:", "file:")), link  # relative only
        if link.startswith("#"):
            assert link[1:] in ids, link  # a table-of-contents anchor names a section
        else:
            assert (report.out_dir / link).is_file(), link
    referenced = {(report.out_dir / link).resolve() for link in links if not link.startswith("#")}
    assert {p.resolve() for p in report.figures} <= referenced


def test_markdown_images_and_links_resolve_relative_to_the_report(report):
    targets = re.findall(r"\]\(([^)]+)\)", report.markdown.read_text(encoding="utf-8"))
    assert {Path(t).name for t in targets} >= {p.name for p in report.figures}
    for target in targets:
        assert (report.out_dir / target).is_file(), target


def test_report_shows_rank_orders_summary_counts_and_the_runs_left_out(report):
    text = report.markdown.read_text(encoding="utf-8")
    assert "## Rank order" in text and "R = reno, N = newreno, S = sack" in text
    assert "**Runs**: 72 (70 complete, 1 incomplete, 1 failed)" in text
    assert "finished" not in text  # a run is complete, incomplete or failed
    assert "**Seeds**: 3 distinct (1–3)" in text
    assert "## Runs left out" in text and "failed: engine failure: example" in text
    assert "| incomplete | stopped at the stop_after cap of 1h" in text
    assert re.search(r"\| 1 % \| 512 \| [RNS] [<≈] [RNS] [<≈] [RNS] \|", text)
    assert " ± " in text  # means with CI half-widths
    html = report.html.read_text(encoding="utf-8")
    assert "µJ/bit" in html and "Mbit/s" in html


def test_summary_sections_come_first_and_extra_sections_after_the_fixed_settings(report):
    html = report.html.read_text(encoding="utf-8")
    headings = re.findall(r"<h2>(.*?)</h2>", html)
    assert headings[:5] == ["Claims summary", "Overview", "Fixed settings", "Claims checklist",
                            "Rank order"]
    assert CLAIMS[1] in html and SUMMARY[1] in html
    md = report.markdown.read_text(encoding="utf-8")
    assert re.findall(r"^## (.*)$", md, re.M)[:4] == ["Claims summary", "Overview", "Fixed settings",
                                                      "Claims checklist"]


def section(text: str, heading: str) -> str:
    """One Markdown section's body."""
    return text.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]


def test_fixed_settings_state_what_every_run_shares_but_not_the_swept_axes(report):
    fixed = section(report.markdown.read_text(encoding="utf-8"), "Fixed settings")
    for key, value in (("path.forward.rate", "2Mbps"), ("traffic.bytes", "200KB"),
                       ("energy.sender", "singh2002-toshiba-wavelan"), ("tcp.min_rto", "1s"),
                       ("energy.radio_policy", "always_on")):
        assert f"| {key} | {value} |" in fixed, key
    for swept in ("path.mtu", "tcp.variant", "path.forward.delay"):
        assert f"| {swept} |" not in fixed, swept


def test_rank_order_is_given_per_rtt_as_well_as_pooled_over_rtt(report):
    # Seed 000 Table 4 pools over RTT; an order can change along RTT, so each RTT gets its own.
    ranks = section(report.markdown.read_text(encoding="utf-8"), "Rank order")
    assert "### Per RTT" in ranks
    per_rtt = ranks.split("### Per RTT", 1)[1]
    for rtt in ("20ms", "80ms"):
        assert re.search(rf"\| 1 % \| 1500 \| {rtt} \| [RNS] [<≈] [RNS] [<≈] [RNS] \|", per_rtt), rtt
    assert (report.out_dir / "ranking_per_x.csv").is_file()


def test_summary_counts_complete_runs_out_of_runs_per_cell_and_shows_receiver_energy(report):
    summary = section(report.markdown.read_text(encoding="utf-8"), "Summary")
    assert "complete / runs" in summary and "E_R (µJ/bit)" in summary
    # The first cell (reno, 1 % loss, 20 ms, MTU 512) lost one run to failure and one to stop_after.
    assert re.search(r"\| 1 % \| 512 \| reno \| 20ms \| 1/3 \|", summary)
    assert re.search(r"\| 1 % \| 512 \| sack \| 20ms \| 3/3 \|", summary)


def test_long_tables_are_folded_and_claim_statuses_have_colours(report):
    html = report.html.read_text(encoding="utf-8")
    assert re.search(r"<details>\n<summary>Summary table \(24 cells\)</summary>\n<table>", html)
    for status in ("holds", "does_not_hold", "not_modelled", "consistency"):
        assert re.search(rf"\.status-{status} \{{ background: #[0-9a-f]{{6}}", html), status
    assert "details > summary" in html
    toc = re.search(r'<nav class="toc">(.*?)</nav>', html).group(1)
    assert re.findall(r'href="#([^"]+)"', toc)[:3] == ["claims-summary", "overview", "fixed-settings"]


def test_a_failure_while_writing_leaves_no_report_and_no_temporary_files(runs, tmp_path, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(document, "write_figures", broken)
    with pytest.raises(RuntimeError):
        write_report(runs, tmp_path / "out")
    assert list(tmp_path.iterdir()) == []


def test_writing_into_an_existing_directory_replaces_the_report_and_keeps_other_files(
        runs, tmp_path, monkeypatch):
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    (out / "index.html").write_text("old")
    small = runs[runs["label.path.mtu"] == 1500]
    paths = write_report(small, out, title="Again")
    assert (out / "notes.txt").read_text() == "mine"
    assert "Again" in paths.html.read_text(encoding="utf-8")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_an_empty_frame_or_a_bad_level_is_refused(runs, tmp_path):
    with pytest.raises(ValueError):
        write_report(runs.iloc[0:0], tmp_path / "out")
    with pytest.raises(ValueError):
        write_report(runs, tmp_path / "out", level=95)
    assert list(tmp_path.iterdir()) == []


def test_a_store_whose_runs_all_failed_still_gets_a_report_listing_the_failures(tmp_path):
    runs = pd.DataFrame({"run_key": ["a", "b"], "seed": [1, 2], "status": ["failed", "failed"],
                         "error": ["boom", "boom"], "label.tcp.variant": ["reno", "sack"],
                         "label.rtt": ["10ms", "10ms"]})
    paths = write_report(runs, tmp_path / "out")
    text = paths.markdown.read_text(encoding="utf-8")
    assert "**Runs**: 2 (0 complete, 0 incomplete, 2 failed)" in text
    assert "| failed | failed: boom |" in text
    assert paths.figures == []
