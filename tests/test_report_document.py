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

FIGURE_STEMS = ("energy_per_bit", "idealized_energy_per_bit", "goodput")
CLAIMS = ("Claims checklist", "<p id=claims>3 of 4 claims hold</p>", "3 of 4 claims hold")


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
    return frame


@pytest.fixture(scope="module")
def report(runs, tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "out"
    return write_report(runs, out, title="Small sweep", extra_sections=[CLAIMS])


def test_report_writes_html_markdown_tables_and_every_figure_as_png_and_svg(report):
    out = report.out_dir
    assert report.html == out / "index.html" and report.html.is_file()
    assert report.markdown == out / "report.md" and report.markdown.is_file()
    expected = {out / "figures" / f"{stem}.{ext}" for stem in FIGURE_STEMS for ext in ("png", "svg")}
    assert set(report.figures) == expected
    for path in expected:
        assert path.stat().st_size > 1000
    assert {p.name for p in report.tables} == {"summary.csv", "ranking.csv"}
    assert all(p.is_file() for p in report.tables)


def test_html_references_every_figure_file_and_every_reference_exists(report):
    links = html_links(report.html)
    assert links, "the report links nothing"
    for link in links:
        assert not link.startswith(("/", "http:", "https:", "file:")), link  # relative only
        assert (report.out_dir / link).is_file(), link
    referenced = {(report.out_dir / link).resolve() for link in links}
    assert {p.resolve() for p in report.figures} <= referenced


def test_markdown_images_and_links_resolve_relative_to_the_report(report):
    targets = re.findall(r"\]\(([^)]+)\)", report.markdown.read_text(encoding="utf-8"))
    assert {Path(t).name for t in targets} >= {p.name for p in report.figures}
    for target in targets:
        assert (report.out_dir / target).is_file(), target


def test_report_shows_rank_orders_summary_counts_and_failed_runs(report):
    text = report.markdown.read_text(encoding="utf-8")
    assert "## Rank order" in text and "R = reno, N = newreno, S = sack" in text
    assert "**Runs**: 72 (71 finished, 1 failed)" in text
    assert "**Seeds**: 3 distinct (1–3)" in text
    assert "## Failed runs" in text and "engine failure: example" in text
    assert re.search(r"\| 1 % \| 512 \| [RNS] [<≈] [RNS] [<≈] [RNS] \|", text)
    assert " ± " in text  # means with CI half-widths
    html = report.html.read_text(encoding="utf-8")
    assert "µJ/bit" in html and "Mbit/s" in html


def test_extra_sections_come_right_after_the_overview_in_both_documents(report):
    html = report.html.read_text(encoding="utf-8")
    headings = re.findall(r"<h2>(.*?)</h2>", html)
    assert headings[:3] == ["Overview", "Claims checklist", "Rank order"]
    assert CLAIMS[1] in html
    md = report.markdown.read_text(encoding="utf-8")
    assert re.findall(r"^## (.*)$", md, re.M)[:2] == ["Overview", "Claims checklist"]


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
    assert "**Runs**: 2 (0 finished, 2 failed)" in text
    assert "| 2 | boom |" in text
    assert paths.figures == []
