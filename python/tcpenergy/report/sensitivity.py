"""Sensitivity results in a reproduction's report: the figure (claims x swept values, coloured by
status), the sweep's summary, the report's "Sensitivity" section, and the "holds if ..." notes on
the claims checklist.

The input is the ``sensitivity.json`` that ``tcpenergy reproduce SEED --sensitivity KEY`` writes
into OUT/sensitivity/KEY/ (see tcpenergy.reproduce.sensitivity). A report written into OUT/report of
a reproduction (OUT/claims.json present) picks up every such file whose claims are its own.
"""

from __future__ import annotations

import html
import json
import math
import re
import textwrap
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple
from tcpenergy.report.markup import inline

Section = Tuple[str, str, str]  # (heading, HTML body, Markdown body), as in document.py

HEADING = "Sensitivity"
CHECKLIST = "Claims checklist"  # the heading of tcpenergy.reproduce.claims.checklist_section
# The report's status colours (document.STYLE), darker so that small cells read at a glance.
COLOURS = {"holds": "#3c9d4e", "consistency": "#4a86c5", "fit": "#8e5bb5", "does_not_hold": "#d0473c", "not_modelled": "#b5b5b5"}
WORDS = {"holds": "holds", "consistency": "consistency", "fit": "fit", "does_not_hold": "does not hold",
         "not_modelled": "not modelled"}
FOLD_ROWS = 12
INDICATIVE = " (indicative: a --quick sweep)"


def _num(x: float) -> str:
    x = float(x)
    if x == 0:
        return "0"
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    return f"{x:.4g}"


def energy_rows(document: Mapping[str, Any]) -> List[Mapping[str, Any]]:
    return [c for c in document["claims"] if c.get("energy")]


def _profile_index(document: Mapping[str, Any]) -> Optional[int]:
    base = float(document["profile"]["value"])
    for i, v in enumerate(document["values"]):
        if math.isclose(float(v), base, rel_tol=1e-6, abs_tol=1e-12):
            return i
    return None


# --------------------------------------------------------------------------------------------
# Figure
# --------------------------------------------------------------------------------------------

def _edges(values: Sequence[float], log: bool) -> List[float]:
    """Cell edges around each swept value: midpoints (geometric on a log axis), the ends extended
    by half a step."""
    xs = [math.log10(v) for v in values] if log else [float(v) for v in values]
    if len(xs) == 1:
        half = 0.5 if log else max(abs(xs[0]) * 0.5, 0.5)
        out = [xs[0] - half, xs[0] + half]
    else:
        mids = [(a + b) / 2 for a, b in zip(xs, xs[1:])]
        out = [xs[0] - (mids[0] - xs[0])] + mids + [xs[-1] + (xs[-1] - mids[-1])]
    return [10 ** e for e in out] if log else out


def draw_figure(document: Mapping[str, Any]):
    """The figure (a matplotlib Figure): one row per energy claim, one column per swept value, each
    cell coloured by the claim's status there; log x for geometric sweeps of positive values; the
    profile's own value marked by a dashed line and "(profile)" under its tick."""
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.colors import ListedColormap
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    rows = energy_rows(document)
    values = [float(v) for v in document["values"]]
    order = list(COLOURS)
    grid = np.full((max(len(rows), 1), len(values)), np.nan)
    for i, row in enumerate(rows):
        for j, status in enumerate(row["statuses"]):
            if status in COLOURS:
                grid[i, j] = order.index(status)
    log = document.get("scale") == "geometric" and all(v > 0 for v in values)
    fig = Figure(figsize=(max(4.6, 2.2 + 0.62 * len(values)), 1.5 + 0.2 * max(len(rows), 1)),
                 layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    edges_x = _edges(values, log)
    ax.pcolormesh(edges_x, np.arange(grid.shape[0] + 1), np.ma.masked_invalid(grid),
                  cmap=ListedColormap([COLOURS[s] for s in order]), vmin=-0.5, vmax=len(order) - 0.5,
                  edgecolors="white", linewidth=0.8)
    if log:
        ax.set_xscale("log")
    ax.set_xlim(edges_x[0], edges_x[-1])
    ax.set_xticks(values)
    ax.minorticks_off()
    base = _profile_index(document)
    ax.set_xticklabels([_num(v) + ("\n(profile)" if j == base else "") for j, v in enumerate(values)],
                       rotation=0 if len(values) <= 8 else 45)
    if base is not None:
        ax.axvline(values[base], color="black", linestyle="--", linewidth=0.9)
    ax.set_yticks(np.arange(len(rows)) + 0.5)
    ax.set_yticklabels([r["id"] for r in rows])
    ax.set_ylim(grid.shape[0], 0)
    ax.set_xlabel(f"{document['key']} ({document.get('unit', '')}{', log scale' if log else ''})")
    quick = " (indicative, --quick)" if document.get("quick") else ""
    # Wrapped to the figure's width (about 11 characters an inch at this size): a long profile key
    # would otherwise run past the image's edge.
    width = fig.get_figwidth()
    ax.set_title(textwrap.fill(f"{document['paper']}: energy claims vs {document['key']}{quick}", int(width * 11)))
    present = [s for s in order if any(s in r["statuses"] for r in rows)]
    ax.legend(handles=[Patch(color=COLOURS[s], label=WORDS[s]) for s in present], loc="upper left",
              bbox_to_anchor=(1.01, 1.0), frameon=False)
    return fig


def write_figure(document: Mapping[str, Any], directory: Path, stem: str) -> Tuple[Path, Path]:
    """:func:`draw_figure` as ``stem``.png and ``stem``.svg in ``directory``."""
    from matplotlib import rc_context

    with rc_context({"font.size": 8, "svg.hashsalt": "tcpenergy", "svg.fonttype": "none"}):
        fig = draw_figure(document)
        directory.mkdir(parents=True, exist_ok=True)
        png, svg = directory / f"{stem}.png", directory / f"{stem}.svg"
        fig.savefig(png, dpi=120)
        fig.savefig(svg, metadata={"Date": None})
    return png, svg


# --------------------------------------------------------------------------------------------
# Text
# --------------------------------------------------------------------------------------------

def _intro(document: Mapping[str, Any]) -> str:
    values = document["values"]
    physical = document.get("physical") or []
    reading = "; ".join(f"{_num(v)} {document['unit']} = {_num(float(f'{float(p[0]):.3g}'))} {p[1]}"
                        for v, p in zip(values, physical)) if physical else ""
    skipped = document.get("skipped_sweeps") or []
    text = (f"{document['key']} set in both nodes' profiles of every run, at {len(values)} values "
            f"({document['scale']} sweep, {_num(values[0])} to {_num(values[-1])} {document['unit']}); the "
            f"profile value is {_num(document['profile']['value'])} {document['unit']} "
            f"({document['profile']['name']}). Physical reading ({document['context']}): {reading}. "
            "A threshold is known to the sweep's resolution: it lies between the last swept value where "
            "the verdict differs and the first where it holds.")
    if skipped:
        text += (" Sweeps no energy claim reads were run at the profile value only: "
                 + ", ".join(skipped) + ".")
    checked = document.get("non_energy_checked") or []
    if checked:
        text += (f" The {len(checked)} other claims, which read no energy metric, were checked to keep their "
                 "verdict at every value.")
    for note in document.get("notes") or []:
        text += f" Note: {note}."
    if document.get("quick"):
        text += " Verdicts are indicative: a --quick sweep, 3 seeds per setting."
    return text


def _rows(document: Mapping[str, Any]) -> List[List[str]]:
    return [[c["id"], WORDS.get(c["base_status"], c["base_status"]), c.get("statement", "")]
            for c in energy_rows(document)]


_HEADER = ["claim", "at the profile value", "where it holds"]


def _md_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    def cell(text: str) -> str:
        return str(text).replace("|", "\\|").replace("\n", " ")
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows])


def summary_markdown(document: Mapping[str, Any], figure: str) -> str:
    """OUT/sensitivity/KEY/summary.md: what was swept, the figure, and where each energy claim holds."""
    title = f"# Sensitivity of {document['paper']}'s energy claims to {document['key']}"
    runs = document.get("runs") or []
    timing = (f"Wall time {document.get('wall_s', 0):.0f} s; runs per value: "
              + ", ".join(f"{_num(r['value'])}: {r['runs']}" for r in runs) + ".") if runs else ""
    return "\n\n".join([title, _intro(document), timing,
                        f"![claims x {document['key']}]({figure})",
                        _md_table(_HEADER, _rows(document))]).rstrip()


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def section(documents: Sequence[Mapping[str, Any]], stage: Path) -> Tuple[Section, List[Path]]:
    """The report's Sensitivity section (one sub-section per swept key) and its figure files,
    written into ``stage``/figures/ (paths relative to the report directory)."""
    from tcpenergy.report.markup import details, html_table

    intro = ("Energy claims judged again with one device-profile figure swept in both nodes' profiles "
             "(tcpenergy reproduce --sensitivity KEY): where each holds, and how that reads physically. "
             "The other claims read no energy metric and keep their verdict.")
    body, md, files = [f"<p>{inline(intro)}</p>"], [intro], []
    for document in documents:
        stem = f"sensitivity-{_slug(document['key'])}"
        png, svg = write_figure(document, stage / "figures", stem)
        rel_png, rel_svg = Path("figures") / png.name, Path("figures") / svg.name
        files += [rel_png, rel_svg]
        rows = _rows(document)
        table = html_table(_HEADER, rows)
        if len(rows) > FOLD_ROWS:
            table = details(f"Where each of the {len(rows)} energy claims holds", table)
        caption = (f"Energy claims of {document['paper']} (rows) at each swept {document['key']} (columns), "
                   "coloured by status; dashed: the profile value.")
        body.append(f'<h3 id="{stem}">{html.escape(document["key"])}</h3>\n<p>{html.escape(_intro(document))}</p>\n'
                    f'<figure id="fig-{stem}">\n<a href="{rel_svg.as_posix()}"><img src="{rel_png.as_posix()}" '
                    f'alt="{html.escape(caption)}"></a>\n<figcaption>{html.escape(caption)} '
                    f'(<a href="{rel_svg.as_posix()}">SVG</a>)</figcaption>\n</figure>\n{table}')
        md.append(f"### {document['key']}\n\n{_intro(document)}\n\n![{caption}]({rel_png.as_posix()})\n\n"
                  + _md_table(_HEADER, rows))
    return (HEADING, "\n".join(body), "\n\n".join(md)), files


# --------------------------------------------------------------------------------------------
# Checklist notes
# --------------------------------------------------------------------------------------------

def checklist_notes(documents: Sequence[Mapping[str, Any]]) -> Dict[str, List[str]]:
    """{claim id: ["holds if KEY ...", ...]} for every energy claim that does not hold at the
    profile value, one note per sweep."""
    notes: Dict[str, List[str]] = {}
    for document in documents:
        for c in energy_rows(document):
            if c["base_status"] == "does_not_hold" and c.get("condition"):
                notes.setdefault(c["id"], []).append(c["condition"] + (INDICATIVE if document.get("quick") else ""))
    return notes


_DOES_NOT_HOLD_CELL = '<td class="status-does_not_hold">does not hold</td>'


def annotate_checklist(sections: Sequence[Section], documents: Sequence[Mapping[str, Any]]) -> List[Section]:
    """The sections with each noted claim's checklist status cell extended by its notes."""
    from tcpenergy.report.anchors import claim_anchor as anchor

    notes = checklist_notes(documents)
    out = []
    for heading, body, md in sections:
        if heading == CHECKLIST and notes:
            for cid, texts in notes.items():
                body = _note_html(body, anchor(cid), texts)
                md = _note_markdown(md, cid, texts)
        out.append((heading, body, md))
    return out


def _note_html(body: str, row_id: str, texts: Sequence[str]) -> str:
    start = body.find(f'<tr id="{row_id}">')
    if start < 0:
        return body
    end = body.find("</tr>", start)
    row = body[start:end]
    if _DOES_NOT_HOLD_CELL not in row:
        return body
    notes = "".join(f'<div class="sensitivity-note">{html.escape(t)}</div>' for t in texts)
    row = row.replace(_DOES_NOT_HOLD_CELL, _DOES_NOT_HOLD_CELL[:-len("</td>")] + notes + "</td>", 1)
    return body[:start] + row + body[end:]


_PIPE = re.compile(r"(?<!\\)\|")


def _note_markdown(md: str, claim_id: str, texts: Sequence[str]) -> str:
    lines = md.split("\n")
    for i, line in enumerate(lines):
        cells = _PIPE.split(line)
        # "| id | source | claim | status | ..." splits into ["", " id ", " source ", " claim ", " status ", ...]
        if len(cells) > 5 and cells[1].strip() == claim_id and cells[4].strip() == WORDS["does_not_hold"]:
            cells[4] = " does not hold; " + "; ".join(t.replace("|", "\\|") for t in texts) + " "
            lines[i] = "|".join(cells)
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# Finding results beside a report
# --------------------------------------------------------------------------------------------

def results_beside(report_dir: Path) -> List[Dict[str, Any]]:
    """The sensitivity results of the reproduction whose report goes to ``report_dir`` (OUT/report):
    OUT/sensitivity/*/sensitivity.json whose claims are those of OUT/claims.json. Empty when OUT
    holds no reproduction."""
    out = Path(report_dir).absolute().parent
    claims_json, root = out / "claims.json", out / "sensitivity"
    if not claims_json.is_file() or not root.is_dir():
        return []
    try:
        ids = {r["id"] for r in json.loads(claims_json.read_text(encoding="utf-8"))}
    except (OSError, ValueError, KeyError, TypeError):
        return []
    found = []
    for path in sorted(root.glob("*/sensitivity.json")):
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(document, dict) and {c.get("id") for c in document.get("claims", [])} & ids:
            found.append(document)
    return found
