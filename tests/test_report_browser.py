"""A report as a browser shows it (headless Chromium): every image loads, every in-page link has
its target, every file link resolves, and the page is short enough to scan (issue #8, "Reports a
researcher scans in a minute")."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
from browser_check import WIDTH, probe, screenshot
from report_data import sweep_frame

from tcpenergy.report import write_report

# The bound on the page's height, in CSS pixels at 1280 px wide. The synthetic sweep has 4
# conditions and 5 figures; before issue #8 such a page stacked every table and figure (the
# seed-000 page was ~29,000 px). Measured: ~4,200 px with the long tables folded and the 2 x 2
# figures side by side. 6,000 px is about six laptop screens: overview, settings, rank orders and
# figures, with headroom for the claims sections a reproduction adds.
MAX_HEIGHT = 6000

SUMMARY = ("Claims summary",
           '<p><a href="#claims-checklist"><span class="status-holds">holds</span></a> 3 '
           '<span class="status-does_not_hold">does not hold</span> 1</p>', "holds 3, does not hold 1")
CHECKLIST = ("Claims checklist", "<table><tr><td class=status-holds>holds</td>"
             "<td><details class=evidence><summary>evidence</summary>long text</details></td></tr>"
             "</table>", "holds")


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    runs = sweep_frame(seeds=(1, 2, 3))
    failed, incomplete = runs.index[0], runs.index[1]
    runs.loc[failed, "status"] = "failed"
    runs.loc[failed, "error"] = "engine failure: example"
    runs.loc[incomplete, "complete"] = False
    out = tmp_path_factory.mktemp("browser") / "report"
    write_report(runs, out, title="Browser check", summary_sections=[SUMMARY],
                 extra_sections=[CHECKLIST])
    return out


@pytest.fixture(scope="module")
def seen(report, tmp_path_factory):
    return probe(report, tmp_path_factory.mktemp("probe"))


def test_every_image_loads_in_the_browser(seen):
    assert len(seen["images"]) == 5  # one figure per metric: E, E_R, E_I, E_I,R, goodput
    broken = [i["src"] for i in seen["images"] if not i["loaded"] or i["width"] <= 0]
    assert broken == []


def test_every_in_page_link_has_a_target_and_every_file_link_exists(seen):
    assert seen["anchors"], "no table of contents"
    assert [a["href"] for a in seen["anchors"] if not a["target"]] == []
    for link in seen["links"]:
        url = urlparse(link)
        assert url.scheme == "file", link  # nothing leaves the report directory
        assert Path(unquote(url.path)).is_file(), link


def test_the_page_is_short_and_no_wider_than_the_window(seen):
    assert seen["height"] < MAX_HEIGHT
    assert seen["width"] <= WIDTH


def test_a_screenshot_of_the_whole_page_is_written(report, seen, tmp_path):
    shot = screenshot(report, tmp_path / "page.png", seen["height"])
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 50_000


def test_the_browser_check_sees_an_empty_column_markdown_source_and_clipped_text(tmp_path):
    # The checks the reproduction reports are held to (test_reproduce_seed000.py) can fail.
    page = tmp_path / "bad"
    page.mkdir()
    (page / "index.html").write_text(
        "<html><body><table><thead><tr><th>paper</th><th>ours</th></tr></thead>"
        "<tbody><tr><td>a &lt; b</td><td></td></tr><tr><td>c</td><td> </td></tr></tbody></table>"
        "<p>see `claims.json`</p>"
        "<div style='width:40px;overflow:hidden;white-space:nowrap'>a title far too long for its box</div>"
        "</body></html>", encoding="utf-8")
    seen = probe(page, tmp_path)
    assert seen["emptyColumns"] == ["ours"]
    assert seen["backticks"] == ["see `claims.json`"]
    assert len(seen["clipped"]) == 1 and seen["clipped"][0].startswith("DIV: a title")
