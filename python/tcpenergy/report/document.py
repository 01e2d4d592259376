"""The report document: figures, rank orders and summary tables as HTML (index.html) and Markdown
(report.md), plus the numbers behind them as CSV, written into one directory all at once.

    paths = write_report(store.runs(), "out/report", title="My sweep",
                         extra_sections=[("Claims", "<p>...</p>", "...")])
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Optional, Sequence, Tuple, Union

import pandas as pd

from tcpenergy._version import __version__
from tcpenergy.report import metrics as catalogue
from tcpenergy.report.figures import FigureFile, write_figures
from tcpenergy.report.metrics import Metric
from tcpenergy.report.layout import (
    VARIANT,
    Layout,
    axis_name,
    format_value,
    infer_layout,
    normalize_labels,
    ordered_values,
)
from tcpenergy.report.ranking import rank_table, short_names
from tcpenergy.report.staging import staged_directory
from tcpenergy.report.summary import failure_rows, long_stats, overview, summary_rows

Section = Tuple[str, str, str]  # (heading, HTML body, Markdown body)

STYLE = """
body { font-family: system-ui, sans-serif; max-width: 72rem; margin: 2rem auto; padding: 0 1rem;
       color: #222; line-height: 1.45; }
table { border-collapse: collapse; margin: 0.5rem 0 1.5rem; font-size: 0.9rem; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.6rem; text-align: left; }
th { background: #f3f3f3; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
figure { margin: 1rem 0 2rem; }
figure img { max-width: 100%; height: auto; }
figcaption { font-size: 0.9rem; color: #555; }
footer { margin-top: 3rem; font-size: 0.8rem; color: #777; }
"""


@dataclass(frozen=True)
class ReportPaths:
    out_dir: Path
    html: Path
    markdown: Path
    figures: List[Path] = field(default_factory=list)   # every PNG and SVG
    tables: List[Path] = field(default_factory=list)    # the CSV files


# Both renderings are built from the same (header, rows) tables and paragraphs.

def _html_table(header: Optional[Sequence[str]], rows: Sequence[Sequence[str]],
                numeric_from: int = 0) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header or ())
    body = "\n".join(
        "<tr>" + "".join(
            f'<td{" class=num" if numeric_from and i >= numeric_from else ""}>{html.escape(c)}</td>'
            for i, c in enumerate(row)) + "</tr>"
        for row in rows)
    thead = f"<thead><tr>{head}</tr></thead>\n" if head else ""
    return f"<table>\n{thead}<tbody>\n{body}\n</tbody>\n</table>"


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _md_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(_md_cell(h) for h in header) + " |",
             "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _table_section(heading: str, intro: str, header, rows, numeric_from: int = 0) -> Section:
    return (heading,
            f"<p>{html.escape(intro)}</p>\n{_html_table(header, rows, numeric_from)}",
            f"{intro}\n\n{_md_table(header, rows)}")


def _overview_section(runs: pd.DataFrame, layout: Layout) -> Section:
    items = overview(runs, layout)
    return ("Overview",
            _html_table(None, [[k, v] for k, v in items]),
            "\n".join(f"- **{k}**: {v}" for k, v in items))


def _rank_section(table: Optional[pd.DataFrame], runs: pd.DataFrame, layout: Layout,
                  metrics: Sequence[Metric], level: float) -> Optional[Section]:
    if table is None:
        return None
    names = short_names(ordered_values(runs[layout.line]))
    header = [axis_name(c) for c in layout.panels]
    header += [f"{m.symbol} ({'higher' if m.higher_is_better else 'lower'} is better)" for m in metrics]
    header += ["seeds"]
    rows = []
    for _, group in table.groupby(list(layout.panels), sort=False) if layout.panels else [((), table)]:
        first = group.iloc[0]
        row = [format_value(c, first[c]) for c in layout.panels]
        for m in metrics:
            r = group[group["metric"] == m.key].iloc[0]
            missing = ", ".join(names[v] for v in r["missing"])
            note = f" (no complete seed: {missing})" if missing else ""
            row.append((r["ordering"] or "-") + note)
        row.append(str(int(group["seeds"].min())))
        rows.append(row)
    over = f"their mean over {axis_name(layout.x)}" if layout.x else "their mean"
    ranked = "the variants" if layout.line == VARIANT else f"the {axis_name(layout.line)} values"
    legend = ", ".join(f"{short} = {format_value(layout.line, v)}" for v, short in names.items()
                       if short != format_value(layout.line, v))
    intro = (f"Per condition, {ranked} ordered best first by {over}; "
             f"neighbours are joined by ≈ when their {level * 100:g} % confidence intervals "
             f"overlap (intervals from the per-seed means; seeds = complete seeds behind the "
             f"least-replicated mean)." + (f" {legend}." if legend else ""))
    return _table_section("Rank order", intro, header, rows)


def _figure_section(figures: Sequence[FigureFile]) -> Section:
    blocks, md = [], []
    for f in figures:
        png, svg, caption = f.png.as_posix(), f.svg.as_posix(), html.escape(f.caption)
        blocks.append(f'<figure>\n<a href="{svg}"><img src="{png}" alt="{caption}"></a>\n'
                      f'<figcaption>{caption} (<a href="{svg}">SVG</a>)</figcaption>\n</figure>')
        md.append(f"![{f.caption}]({png})\n\n{f.caption} ([SVG]({svg}))")
    return ("Figures", "\n".join(blocks), "\n\n".join(md))


def _summary_section(runs: pd.DataFrame, layout: Layout, level: float) -> Section:
    header, rows = summary_rows(runs, layout, catalogue.SUMMARY, level)
    intro = (f"Per cell: finished runs and the mean ± half-width of its {level * 100:g} % "
             f"confidence interval (Student t over seeds).")
    first_number = header.index("runs")
    return _table_section("Summary", intro, header, rows, numeric_from=first_number)


def _failure_section(runs: pd.DataFrame) -> Optional[Section]:
    header, rows = failure_rows(runs)
    if not rows:
        return None
    return _table_section("Failed runs", "Failed runs, grouped by error message; they are left "
                          "out of every mean.", header, rows)


def _render_html(title: str, sections: Sequence[Section]) -> str:
    body = "\n".join(f"<section>\n<h2>{html.escape(h)}</h2>\n{content}\n</section>"
                     for h, content, _ in sections)
    return (f"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>{html.escape(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
            f"<h1>{html.escape(title)}</h1>\n{body}\n"
            f"<footer>Written by tcpenergy {html.escape(__version__)}.</footer>\n</body>\n</html>\n")


def _render_markdown(title: str, sections: Sequence[Section]) -> str:
    parts = [f"# {title}"] + [f"## {h}\n\n{md}" for h, _, md in sections]
    return "\n\n".join(parts) + f"\n\n---\nWritten by tcpenergy {__version__}.\n"


def _write_tables(runs: pd.DataFrame, layout: Layout, ranking: Optional[pd.DataFrame],
                  stage: Path, level: float) -> List[Path]:
    paths = [Path("summary.csv")]
    long_stats(runs, layout, catalogue.SUMMARY, level).to_csv(stage / paths[0], index=False)
    if ranking is not None:
        # Tuples as space-separated text, so the CSV reads back without parsing Python.
        flat = ranking.assign(**{c: ranking[c].map(lambda t: " ".join(map(str, t)))
                                 for c in ("order", "relations", "missing")})
        paths.append(Path("ranking.csv"))
        flat.to_csv(stage / paths[1], index=False)
    return paths


def write_report(runs_df: pd.DataFrame, out_dir: Union[str, Path], title: str = "tcpenergy report",
                 extra_sections: Sequence[Section] = (), level: float = 0.95,
                 layout: Optional[Layout] = None) -> ReportPaths:
    """Write index.html, report.md, figures/*.png|svg, summary.csv and ranking.csv into out_dir.

    ``runs_df`` is the flat runs frame of ``Store.runs()`` (failed runs included: they are
    counted and listed, never averaged). ``extra_sections`` are (heading, HTML, Markdown)
    triples placed right after the overview, e.g. a claims checklist. ``level`` is the
    confidence level of every interval. ``layout`` overrides the inferred axis roles.
    """
    if runs_df is None or len(runs_df) == 0:
        raise ValueError("no runs to report")
    if not 0 < level < 1:
        raise ValueError(f"confidence level must be between 0 and 1, got {level}")
    runs_df = normalize_labels(runs_df)
    layout = layout or infer_layout(runs_df)
    out = Path(out_dir)
    # A store whose runs all failed has no result columns: show what there is.
    shown = [m for m in catalogue.RANKED if m.column in runs_df.columns]
    ranking = (rank_table(runs_df, layout.panels, layout.x, layout.line, shown, level)
               if layout.line is not None and shown else None)
    with staged_directory(out) as stage:
        figures = write_figures(runs_df, layout, stage, shown, level)
        sections = [_overview_section(runs_df, layout), *extra_sections,
                    _rank_section(ranking, runs_df, layout, shown, level),
                    _figure_section(figures) if figures else None,
                    _summary_section(runs_df, layout, level), _failure_section(runs_df)]
        sections = [s for s in sections if s is not None]
        (stage / "index.html").write_text(_render_html(title, sections), encoding="utf-8")
        (stage / "report.md").write_text(_render_markdown(title, sections), encoding="utf-8")
        tables = _write_tables(runs_df, layout, ranking, stage, level)
    figure_paths = [out / p for f in figures for p in (f.png, f.svg)]
    return ReportPaths(out, out / "index.html", out / "report.md", figure_paths,
                       [out / t for t in tables])
