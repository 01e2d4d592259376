"""The `report` command of the tcpenergy CLI (registered on `tcpenergy.cli.common.app`)."""

# No `from __future__ import annotations`: typer reads these annotations at run time (see common.py).
# pandas, DuckDB and matplotlib are imported inside the command, so other commands start fast.

from pathlib import Path
from typing import Annotated, List, Optional

import typer

from tcpenergy.cli.common import EXIT_USAGE, app, fail, reporting_errors


def _read_runs(store: Path, sweeps: List[str]):
    """The store's runs (of the named sweeps, if any); a missing, foreign or empty store, or an
    unknown sweep name, is the user's error (exit 2)."""
    from tcpenergy.experiments.errors import StoreError
    from tcpenergy.experiments.store import open_store

    try:
        with open_store(store) as opened:
            runs = opened.runs()
    except StoreError as exc:
        fail(str(exc), EXIT_USAGE)
    if runs.empty:
        fail(f"store {store} holds no runs; nothing to report", EXIT_USAGE)
    if sweeps:
        known = sorted(runs["sweep"].dropna().unique())
        unknown = [s for s in sweeps if s not in known]
        if unknown:
            fail(f"--sweep: no sweep named {unknown[0]!r} in {store}; it holds: {', '.join(known)}",
                  EXIT_USAGE)
        runs = runs[runs["sweep"].isin(sweeps)]
    return runs


@app.command("report")
def report_command(
    store: Annotated[Path, typer.Argument(help="Results store written by `tcpenergy sweep`.",
                                          show_default=False, metavar="STORE")],
    out: Annotated[Path, typer.Option("--out", metavar="DIR", show_default=False,
                                      help="Report directory (created if missing; files of the "
                                           "same name in it are replaced).")],
    level: Annotated[float, typer.Option("--level", metavar="P",
                                         help="Confidence level of error bars, ties and tables.")] = 0.95,
    title: Annotated[Optional[str], typer.Option("--title", help="Report title.")] = None,
    sweep: Annotated[Optional[List[str]], typer.Option(
        "--sweep", metavar="NAME", help="Report only this sweep's runs (repeatable; default: "
                                        "every run in the store).")] = None,
) -> None:
    """Write figures (PNG, SVG), an HTML and a Markdown report, and CSV tables of a store's runs."""
    if not 0 < level < 1:
        fail(f"--level must be between 0 and 1 (e.g. 0.95), got {level}", EXIT_USAGE)
    with reporting_errors():
        from tcpenergy.report.document import write_report
        from tcpenergy.report.staging import check_destination

        check_destination(out)  # before reading the store: a bad --out fails fast
        runs = _read_runs(store, sweep or [])
        paths = write_report(runs, out, title=title or f"tcpenergy report: {store.stem}",
                             level=level)
    typer.echo(f"wrote {paths.html} and {paths.markdown.name}, "
               f"{len(paths.figures)} figure files, {len(paths.tables)} CSV tables")
