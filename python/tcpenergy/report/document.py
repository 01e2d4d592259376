"""The report document: figures, rank orders and summary tables as HTML (index.html) and Markdown
(report.md), plus the numbers behind them as CSV, written into one directory all at once.

    paths = write_report(store.runs(), "out/report", title="My sweep",
                         summary_sections=[("Claims summary", "<p>...</p>", "...")],
                         extra_sections=[("Claims", "<p>...</p>", "...")])

The page is meant to be scanned in a minute: a table of contents, the caller's summary first,
the settings every run shares, rank orders and one grid figure per metric; long tables (per-x
rank orders, the per-cell summary, the runs left out) are folded in ``<details>``.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Optional, Sequence, Tuple, Union

import pandas as pd

from tcpenergy._version import __version__
from tcpenergy.report import metrics as catalogue
from tcpenergy.report.cells import node_stats
from tcpenergy.report.figures import FigureFile, write_figures
from tcpenergy.report.metrics import Metric, View
from tcpenergy.report.markup import details, html_table, inline
from tcpenergy.report.layout import (
    VARIANT,
    Layout,
    axis_name,
    conditions,
    format_value,
    infer_layout,
    normalize_labels,
    ordered_values,
)
from tcpenergy.report.ranking import rank_table, short_names
from tcpenergy.report import sensitivity
from tcpenergy.report.staging import staged_directory
from tcpenergy.report.summary import (
    cell_columns,
    fixed_settings,
    format_mean_ci,
    left_out_rows,
    long_stats,
    overview,
    run_status_counts,
    summary_rows,
)

Section = Tuple[str, str, str]  # (heading, HTML body, Markdown body)

STYLE = """
body { font-family: system-ui, sans-serif; max-width: 72rem; margin: 2rem auto; padding: 0 1rem;
       color: #222; line-height: 1.45; }
table { border-collapse: collapse; margin: 0.5rem 0 1.5rem; font-size: 0.9rem; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.6rem; text-align: left; }
th { background: #f3f3f3; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
figure { margin: 1rem 0.75rem 1.5rem 0; display: inline-block; vertical-align: top; max-width: 100%; }
figure img { max-width: 100%; height: auto; }
figure figcaption { width: 0; min-width: 100%; }  /* the caption never widens its figure */
figcaption { font-size: 0.9rem; color: #555; }
footer { margin-top: 3rem; font-size: 0.8rem; color: #777; }
nav.toc { font-size: 0.9rem; margin: 0 0 1.5rem; }
nav.toc a { margin-right: 0.9rem; white-space: nowrap; }
details { margin: 0.4rem 0 1.2rem; }
details > summary { cursor: pointer; color: #1a4d8f; font-weight: 600; }
details[open] > summary { margin-bottom: 0.4rem; }
details.evidence > summary { font-weight: normal; }
/* Claim statuses, for table cells and badges (.status-<status>). */
.status-holds { background: #d9f2dd; color: #145a22; }
.status-does_not_hold { background: #f8d7d5; color: #8a1c13; }
.status-not_modelled { background: #e6e6e6; color: #444; }
.status-consistency { background: #d7e7f8; color: #143f73; }
.status-fit { background: #efe3f7; color: #4b1f66; }
span[class^="status-"] { padding: 0.05rem 0.4rem; border-radius: 0.3rem; white-space: nowrap; }
/* "holds if KEY ..." under a claim's status, from sensitivity sweeps (report/sensitivity.py). */
.sensitivity-note { font-size: 0.8rem; margin-top: 0.3rem; }
"""
# Tables longer than this are folded into <details> so the page stays short.
FOLD_ROWS = 12


@dataclass(frozen=True)
class ReportPaths:
    out_dir: Path
    html: Path
    markdown: Path
    figures: List[Path] = field(default_factory=list)   # every PNG and SVG
    tables: List[Path] = field(default_factory=list)    # the CSV files


# Both renderings are built from the same (header, rows) tables and paragraphs.

def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _md_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(_md_cell(h) for h in header) + " |",
             "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _table_section(heading: str, intro: str, header, rows, numeric_from: int = 0,
                   fold: Optional[str] = None) -> Section:
    """A table with its intro; folded under ``fold`` (a summary line) when it has more than
    FOLD_ROWS rows."""
    table = html_table(header, rows, numeric_from)
    if fold is not None and len(rows) > FOLD_ROWS:
        table = details(fold, table)
    return (heading, f"<p>{inline(intro)}</p>\n{table}", f"{intro}\n\n{_md_table(header, rows)}")


def _overview_section(runs: pd.DataFrame, layout: Layout, level: float, all_runs: Optional[int]) -> Section:
    items = overview(runs, layout)
    if all_runs is not None and all_runs != len(runs):
        # A reproduction draws its figures from some sweeps; the others serve single claims.
        items[0] = ("Runs", f"{items[0][1]} in the figures and tables below, of {all_runs} in this "
                            "reproduction (the others are read by single claims, in the checklist)")
    items.append(("Confidence level", f"{level * 100:g} % (Student t intervals over the per-seed means). "
                  "Sweep reports default to 95 % (tcpenergy report --level); reproductions use the level "
                  "their claims are judged at: the paper's own where it states one, else 90 %"))
    return ("Overview",
            html_table(None, [[k, v] for k, v in items]),
            "\n".join(f"- **{k}**: {v}" for k, v in items))


def _fixed_section(runs: pd.DataFrame) -> Optional[Section]:
    common, per_sweep = fixed_settings(runs)
    if not common and not per_sweep:
        return None
    intro = ("Settings shared by every run in this report (scenario keys as written in a scenario "
             "file; the swept axes are listed in the overview).")
    rows = [[k, v] for k, v in common]
    # Three settings per row: the list is long (30-odd keys) but each entry is short.
    wide = [sum(([k, v] for k, v in common[i:i + 3]), []) for i in range(0, len(common), 3)]
    wide = [row + [""] * (6 - len(row)) for row in wide]
    body = f"<p>{inline(intro)}</p>\n{html_table(['setting', 'value'] * 3, wide)}"
    md = f"{intro}\n\n{_md_table(['setting', 'value'], rows)}"
    if per_sweep:
        sweep_rows = [[name, "; ".join(f"{k} = {v}" for k, v in own) or "-"] for name, own in per_sweep]
        note = "Settings that differ between sweeps, constant within each sweep:"
        table = html_table(["sweep", "settings"], sweep_rows)
        body += f"\n<p>{html.escape(note)}</p>\n" + (
            details(f"Settings of the {len(sweep_rows)} sweeps", table) if len(sweep_rows) > 3 else table)
        md += f"\n\n{note}\n\n{_md_table(['sweep', 'settings'], sweep_rows)}"
    return ("Fixed settings", body, md)


def _rank_rows(table: pd.DataFrame, group_cols: Sequence[str], names, metrics) -> List[List[str]]:
    rows = []
    for _, group in table.groupby(list(group_cols), sort=False) if group_cols else [((), table)]:
        first = group.iloc[0]
        row = [format_value(c, first[c]) for c in group_cols]
        for m in metrics:
            r = group[group["metric"] == m.key].iloc[0]
            missing = ", ".join(names[v] for v in r["missing"])
            note = f" (no complete seed: {missing})" if missing else ""
            row.append((r["ordering"] or "-") + note)
        row.append(str(int(group["seeds"].min())))
        rows.append(row)
    return rows


def _rank_section(table: Optional[pd.DataFrame], per_x: Optional[pd.DataFrame], runs: pd.DataFrame,
                  layout: Layout, metrics: Sequence[Metric], level: float) -> Optional[Section]:
    if table is None:
        return None
    names = short_names(ordered_values(runs[layout.line]))
    metric_header = [f"{m.symbol} ({'higher' if m.higher_is_better else 'lower'} is better)"
                     for m in metrics]
    header = [axis_name(c) for c in layout.panels] + metric_header + ["seeds"]
    rows = _rank_rows(table, layout.panels, names, metrics)
    over = f"their mean over {axis_name(layout.x)}" if layout.x else "their mean"
    ranked = "the variants" if layout.line == VARIANT else f"the {axis_name(layout.line)} values"
    legend = ", ".join(f"{short} = {format_value(layout.line, v)}" for v, short in names.items()
                       if short != format_value(layout.line, v))
    intro = (f"Per condition, {ranked} ordered best first by {over} (pooled over "
             f"{axis_name(layout.x) if layout.x else 'the runs'}); "
             f"neighbours are joined by ≈ when their {level * 100:g} % confidence intervals "
             f"overlap (intervals from the per-seed means of complete runs; seeds = complete seeds "
             f"behind the least-replicated mean)." + (f" {legend}." if legend else "")
             + " Symbols: " + "; ".join(f"{m.symbol} = {m.title[0].lower() + m.title[1:]} ({m.unit})"
                                       for m in metrics) + ".")
    body = f"<p>{inline(intro)}</p>\n{html_table(header, rows)}"
    md = f"{intro}\n\n{_md_table(header, rows)}"
    if per_x is not None and len(per_x):
        x_cols = [*layout.panels, layout.x]
        x_header = [axis_name(c) for c in x_cols] + metric_header + ["seeds"]
        x_rows = _rank_rows(per_x, x_cols, names, metrics)
        x_intro = (f"The same orders at each {axis_name(layout.x)} value: a pooled order can hide "
                   f"a change of order along {axis_name(layout.x)}.")
        table_html = html_table(x_header, x_rows)
        if len(x_rows) > FOLD_ROWS:
            table_html = details(f"Rank order per {axis_name(layout.x)} ({len(x_rows)} rows)", table_html)
        body += f"\n<h3 id=\"rank-per-x\">Per {html.escape(axis_name(layout.x))}</h3>\n" \
                f"<p>{html.escape(x_intro)}</p>\n{table_html}"
        md += f"\n\n### Per {axis_name(layout.x)}\n\n{x_intro}\n\n{_md_table(x_header, x_rows)}"
    return ("Rank order", body, md)


def _whole_network(metrics: Sequence[Metric]) -> List[Metric]:
    return [m for m in metrics if m.column.startswith("network.")]


def _figure_section(figures: Sequence[FigureFile], view: View) -> Section:
    blocks, md = [], []
    for f in figures:
        png, svg, caption = f.png.as_posix(), f.svg.as_posix(), html.escape(f.caption)
        # Shown at 88 px per inch, so two small (2 x 2 panel) figures sit side by side.
        width = f' width="{round(f.width_in * 88)}"' if f.width_in else ""
        blocks.append(f'<figure id="fig-{html.escape(f.png.stem)}">\n<a href="{svg}"><img src="{png}"{width} '
                      f'alt="{caption}"></a>\n'
                      f'<figcaption>{caption} (<a href="{svg}">SVG</a>)</figcaption>\n</figure>')
        md.append(f"![{f.caption}]({png})\n\n{f.caption} ([SVG]({svg}))")
    if view.name == catalogue.NETWORK.name:
        shown = "One figure per metric of the whole network (every node, every flow)"
    elif _whole_network(view.figures):
        shown = "One figure per metric, sender and receiver, and all nodes (relays included)"
    else:
        shown = "One figure per metric, sender and receiver"
    intro = (f"{shown}; every panel of a figure shares its "
             "y scale, which is logarithmic when the values span more than a decade.")
    return ("Figures", f"<p>{inline(intro)}</p>\n" + "\n".join(blocks),
            intro + "\n\n" + "\n\n".join(md))


def _symbols(metrics: Sequence[Metric]) -> str:
    """``E_net = Total energy per bit (all nodes); ...``: what each column symbol stands for."""
    return "; ".join(f"{m.symbol} = {m.title}" for m in metrics)


def _summary_section(runs: pd.DataFrame, layout: Layout, level: float, view: View) -> Section:
    header, rows = summary_rows(runs, layout, view.summary, level)
    if view.name == catalogue.NETWORK.name:
        legend = (f"the whole network: {_symbols(view.summary)}; per-bit energies divide by the "
                  f"application bits all flows delivered")
    else:
        legend = "sender and receiver energy; E_R = receiver"
        if _whole_network(view.summary):
            legend += "; E_net, E_I,net = all nodes, relays included"
    intro = (f"Per cell: complete runs out of runs made, and the mean ± half-width of its "
             f"{level * 100:g} % confidence interval over the complete runs ({legend}).")
    first_number = header.index("complete / runs")
    return _table_section("Summary", intro, header, rows, numeric_from=first_number,
                          fold=f"Summary table ({len(rows)} cells)")


def _node_table(runs: pd.DataFrame, layout: Layout, level: float) -> pd.DataFrame:
    """Per cell, node and field of ``NODE_FIELDS``: n, mean and interval (empty without nodes)."""
    return node_stats(runs, cell_columns(layout), [f for f, _, _ in catalogue.NODE_FIELDS], level)


def _node_section(runs: pd.DataFrame, table: pd.DataFrame, layout: Layout,
                  level: float) -> Optional[Section]:
    """Per cell and node, the mean energy: where a network spends it (ends, relays, routers)."""
    if table.empty:
        return None
    by = cell_columns(layout)
    fields = [(f, title, unit) for f, title, unit in catalogue.NODE_FIELDS if f in set(table["field"])]
    found = {(tuple(r[c] for c in by), r["node"], r["field"]): r for r in table.to_dict("records")}
    nodes = list(dict.fromkeys(table["node"]))
    header = [axis_name(c) for c in by] + ["node"] + [f"{title} ({unit})" for _, title, unit in fields]
    rows = []
    for cell in conditions(runs, by):
        for node in nodes:
            stats = [found.get((cell, node, f)) for f, _, _ in fields]
            if any(stats):
                rows.append([format_value(c, v) for c, v in zip(by, cell)] + [node] + [
                    format_mean_ci(r["mean"], r["ci_low"], r["ci_high"]) if r else "-" for r in stats])
    intro = (f"Per cell and node: the mean ± half-width of its {level * 100:g} % confidence "
             f"interval over the complete runs; a node serves the flows it sends, receives or "
             f"relays (- where they delivered nothing).")
    return _table_section("Energy per node", intro, header, rows, numeric_from=len(by) + 1,
                          fold=f"Energy per node ({len(rows)} rows)")


def _left_out_section(runs: pd.DataFrame) -> Optional[Section]:
    header, rows = left_out_rows(runs)
    if not rows:
        return None
    _, incomplete, failed = run_status_counts(runs)
    intro = (f"{len(rows)} runs are left out of every mean, interval, rank order and figure: "
             f"{incomplete} incomplete (the transfer did not end) and {failed} failed.")
    return _table_section("Runs left out", intro, header, rows,
                          fold=f"The {len(rows)} runs left out and why")


def slug(heading: str) -> str:
    """The anchor of a section: ``Runs left out`` -> ``runs-left-out``."""
    return re.sub(r"[^a-z0-9]+", "-", heading.lower()).strip("-") or "section"


def _anchors(sections: Sequence[Section]) -> List[str]:
    seen: dict = {}
    out = []
    for heading, _, _ in sections:
        base = slug(heading)
        seen[base] = seen.get(base, 0) + 1
        out.append(base if seen[base] == 1 else f"{base}-{seen[base]}")
    return out


def _render_html(title: str, sections: Sequence[Section]) -> str:
    anchors = _anchors(sections)
    body = "\n".join(f"<section id=\"{a}\">\n<h2>{html.escape(h)}</h2>\n{content}\n</section>"
                     for a, (h, content, _) in zip(anchors, sections))
    toc = " ".join(f'<a href="#{a}">{html.escape(h)}</a>' for a, (h, _, _) in zip(anchors, sections))
    return (f"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>{html.escape(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
            f"<h1>{html.escape(title)}</h1>\n<nav class=\"toc\">Contents: {toc}</nav>\n{body}\n"
            f"<footer>Written by tcpenergy {html.escape(__version__)}.</footer>\n</body>\n</html>\n")


def _render_markdown(title: str, sections: Sequence[Section]) -> str:
    parts = [f"# {title}"] + [f"## {h}\n\n{md}" for h, _, md in sections]
    return "\n\n".join(parts) + f"\n\n---\nWritten by tcpenergy {__version__}.\n"


def _write_tables(runs: pd.DataFrame, layout: Layout, ranking: Optional[pd.DataFrame],
                  per_x: Optional[pd.DataFrame], nodes: pd.DataFrame, stage: Path, level: float,
                  view: View) -> List[Path]:
    paths = [Path("summary.csv")]
    long_stats(runs, layout, view.summary, level).to_csv(stage / paths[0], index=False)
    if not nodes.empty:
        paths.append(Path("nodes.csv"))
        columns = [*cell_columns(layout), "node", "field", "column", "n", "mean", "ci_low", "ci_high"]
        nodes[columns].assign(level=level).to_csv(stage / paths[-1], index=False)
    for name, table in (("ranking.csv", ranking), ("ranking_per_x.csv", per_x)):
        if table is not None:
            # Tuples as space-separated text, so the CSV reads back without parsing Python.
            flat = table.assign(**{c: table[c].map(lambda t: " ".join(map(str, t)))
                                   for c in ("order", "relations", "missing")})
            paths.append(Path(name))
            flat.to_csv(stage / name, index=False)
    return paths


def write_report(runs_df: pd.DataFrame, out_dir: Union[str, Path], title: str = "tcpenergy report",
                 extra_sections: Sequence[Section] = (), level: float = 0.95,
                 layout: Optional[Layout] = None,
                 summary_sections: Sequence[Section] = (),
                 figure_metrics: Optional[Sequence[catalogue.Metric]] = None,
                 all_runs: Optional[int] = None) -> ReportPaths:
    """Write index.html, report.md, figures/*.png|svg, summary.csv, ranking.csv and
    ranking_per_x.csv into out_dir, and nodes.csv for network runs.

    ``runs_df`` is the flat runs frame of ``Store.runs()`` (failed and incomplete runs included:
    they are counted and listed with their reasons, never averaged). ``summary_sections`` are
    (heading, HTML, Markdown) triples rendered at the very top, before the overview (e.g. a
    colour-coded claims summary using the ``status-*`` CSS classes); ``extra_sections`` come
    right after the overview and the fixed settings, e.g. a claims checklist. ``level`` is the
    confidence level of every interval. ``layout`` overrides the inferred axis roles;
    ``figure_metrics`` the metrics drawn (a reproduction draws its paper's axes); ``all_runs``: how
    many runs the whole reproduction holds when ``runs_df`` is the part its figures draw.

    The metrics are those of ``metrics.view_of(runs_df)``: the sender and receiver of a single
    flow, or the whole network's totals when some run has several flows. Runs of a network also
    get a table of each node's energy per cell (nodes.csv).

    A reproduction's report (out_dir is OUT/report and OUT/claims.json exists) also shows the
    sensitivity sweeps found in OUT/sensitivity/ (report/sensitivity.py): a Sensitivity section
    after ``extra_sections``, and "holds if ..." under each claims checklist row they speak for.
    """
    if runs_df is None or len(runs_df) == 0:
        raise ValueError("no runs to report")
    if not 0 < level < 1:
        raise ValueError(f"confidence level must be between 0 and 1, got {level}")
    runs_df = normalize_labels(runs_df)
    layout = layout or infer_layout(runs_df)
    out = Path(out_dir)
    # A store whose runs all failed has no result columns: the view keeps what there is.
    view = catalogue.view_of(runs_df)
    ranked, plotted = list(view.ranked), list(figure_metrics or view.figures)
    nodes = _node_table(runs_df, layout, level)
    ranking = per_x = None
    if layout.line is not None and ranked:
        ranking = rank_table(runs_df, layout.panels, layout.x, layout.line, ranked, level)
        if layout.x is not None:
            per_x = rank_table(runs_df, [*layout.panels, layout.x], None, layout.line, ranked, level)
    sweeps = sensitivity.results_beside(out)
    with staged_directory(out) as stage:
        figures = write_figures(runs_df, layout, stage, plotted, level)
        sensitivity_section, sensitivity_files = sensitivity.section(sweeps, stage) if sweeps else (None, [])
        if sweeps:
            extra_sections = sensitivity.annotate_checklist(extra_sections, sweeps)
        sections = [*summary_sections, _overview_section(runs_df, layout, level, all_runs), _fixed_section(runs_df),
                    *extra_sections, sensitivity_section,
                    _rank_section(ranking, per_x, runs_df, layout, ranked, level),
                    _figure_section(figures, view) if figures else None,
                    _summary_section(runs_df, layout, level, view),
                    _node_section(runs_df, nodes, layout, level), _left_out_section(runs_df)]
        sections = [s for s in sections if s is not None]
        (stage / "index.html").write_text(_render_html(title, sections), encoding="utf-8")
        (stage / "report.md").write_text(_render_markdown(title, sections), encoding="utf-8")
        tables = _write_tables(runs_df, layout, ranking, per_x, nodes, stage, level, view)
    figure_paths = [out / p for f in figures for p in (f.png, f.svg)] + [out / p for p in sensitivity_files]
    return ReportPaths(out, out / "index.html", out / "report.md", figure_paths,
                       [out / t for t in tables])
