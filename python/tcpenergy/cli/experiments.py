"""The `sweep`, `summarize` and `export` commands of the tcpenergy CLI (registered on `tcpenergy.cli.common.app`)."""

# No `from __future__ import annotations`: typer reads these annotations at run time (see common.py).

import math
import sys
from enum import Enum
from pathlib import Path
from typing import Annotated, List, Optional

import typer
from rich.console import Console
from rich.table import Table

from tcpenergy.cli.common import EXIT_FAILURE, EXIT_USAGE, app, fail, reporting_errors


class ExecutorName(str, Enum):
    local = "local"
    dask = "dask"


class SummaryFormat(str, Enum):
    table = "table"
    csv = "csv"
    json = "json"


class ExportFormat(str, Enum):
    parquet = "parquet"
    csv = "csv"


class ExportPer(str, Enum):
    run = "run"
    flow = "flow"


StoreArgument = Annotated[
    Path, typer.Argument(help="Results store (.duckdb) written by `tcpenergy sweep`.",
                         show_default=False, metavar="STORE")]


@app.command("sweep")
def sweep_command(
    spec: Annotated[Path, typer.Argument(help="Sweep TOML file.", show_default=False, metavar="SWEEP")],
    jobs: Annotated[Optional[int], typer.Option(
        "--jobs", "-j", metavar="N", help="Parallel workers (default: every core).")] = None,
    executor: Annotated[ExecutorName, typer.Option(
        "--executor", help="Where runs execute: a local process pool, or Dask.")] = ExecutorName.local,
    scheduler: Annotated[Optional[str], typer.Option(
        "--scheduler", metavar="ADDR",
        help="Dask scheduler address (tcp://host:port); without it, a local Dask cluster.")] = None,
    store: Annotated[Optional[Path], typer.Option(
        "--store", metavar="FILE",
        help="Results store (default: the sweep file with the suffix .duckdb).")] = None,
) -> None:
    """Run every cell x seed of a sweep into a results store; re-running resumes it."""
    from tcpenergy.experiments.runner import sweep

    if jobs is not None and jobs < 1:
        fail(f"--jobs must be at least 1, got {jobs}", EXIT_USAGE)
    if scheduler and executor is not ExecutorName.dask:
        fail("--scheduler needs --executor dask", EXIT_USAGE)
    with reporting_errors():
        try:
            outcome = sweep(spec, store=store, jobs=jobs, executor=executor.value,
                            scheduler=scheduler, progress=True)
        except KeyboardInterrupt:
            typer.echo("interrupted: every run done so far is stored; run the same command "
                       "again to resume", err=True)
            raise typer.Exit(130) from None
    typer.echo(str(outcome))
    for run_key, error in outcome.errors:
        typer.echo(f"  failed: {run_key}: {error}", err=True)
    if outcome.failed:
        more = outcome.failed - len(outcome.errors)
        if more > 0:
            typer.echo(f"  ... and {more} more failed runs", err=True)
        typer.echo("failed runs are stored with their error and retried on the next sweep",
                   err=True)
        raise typer.Exit(EXIT_FAILURE)


@app.command("summarize")
def summarize_command(
    store: StoreArgument,
    by: Annotated[Optional[List[str]], typer.Option(
        "--by", metavar="COLUMN",
        help="Group by this column (repeatable; default: the sweep's label.* columns).")] = None,
    metric: Annotated[Optional[List[str]], typer.Option(
        "--metric", metavar="COLUMN", help="Summarize this column (repeatable).")] = None,
    fmt: Annotated[SummaryFormat, typer.Option("--format", help="Output format.")] = SummaryFormat.table,
    include_incomplete: Annotated[bool, typer.Option(
        "--include-incomplete",
        help="Also average runs stopped by stop_after before their transfer ended "
             "(default: complete runs only).")] = False,
) -> None:
    """Mean and 90 % / 95 % confidence intervals per cell of a store, over complete runs."""
    from tcpenergy.experiments.stats import summarize
    from tcpenergy.experiments.store import open_store

    with reporting_errors():
        with open_store(store) as st:
            frame = st.runs()
    try:
        summary = summarize(frame, by=by or None, metrics=metric or None,
                            include_incomplete=include_incomplete)
    except KeyError as exc:
        columns = ", ".join(c for c in frame.columns if c.startswith("label.")) or "(none)"
        fail(f"{exc.args[0]}; label columns: {columns}", EXIT_USAGE)
    if fmt is SummaryFormat.csv:
        typer.echo(summary.to_csv(index=False), nl=False)
    elif fmt is SummaryFormat.json:
        typer.echo(summary.to_json(orient="records", indent=2))
    else:
        _print_summary(summary, Console())
    sys.stdout.flush()  # the notes on stderr come after the table, also when both are piped
    for line in summary_notes(summary.attrs):
        typer.echo(line, err=True)


_SHOWN_LEFT_OUT = 5


def summary_notes(attrs) -> List[str]:
    """What the summary used and what it left out, with the first few reasons."""
    runs, complete = attrs.get("runs", 0), attrs.get("complete", 0)
    failed, incomplete = attrs.get("failed", 0), attrs.get("incomplete", 0)
    if attrs.get("include_incomplete"):
        lines = [f"{complete} of {runs} runs complete; {incomplete} incomplete run(s) included "
                 f"(--include-incomplete); {failed} failed run(s) left out"]
    else:
        lines = [f"{complete} of {runs} runs complete and summarized; left out: {failed} failed, "
                 f"{incomplete} incomplete (stopped by stop_after; --include-incomplete "
                 f"averages them in)"]
    left = attrs.get("left_out", [])
    for row in left[:_SHOWN_LEFT_OUT]:
        labels = ", ".join(f"{k[len('label.'):]}={v}" for k, v in row.items()
                           if k.startswith("label."))
        key = row.get("run_key") or ""
        where = f"{key} ({labels})" if labels else key
        lines.append(f"  {row['status']}: {where.strip()} seed {row.get('seed')}: {row['reason']}")
    if len(left) > _SHOWN_LEFT_OUT:
        lines.append(f"  ... and {len(left) - _SHOWN_LEFT_OUT} more")
    return lines


def _num(value: object) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:.4g}" if isinstance(value, (int, float)) else str(value)


_METHODS = {"student-t": "t", "student-t-cut-at-zero": "t0", "student-t-cut-at-upper-bound": "t1",
            "student-t-cut-at-both-bounds": "t01", "student-t-cut-at-lower-bound": "tL",
            "bootstrap-bca": "BCa", "bootstrap-percentile": "pct", "none": "-"}


def _print_summary(summary, console: Console) -> None:
    """One small table per metric, a row per group: complete/runs, n, mean and each interval
    as [low, high] (bootstrap intervals are not symmetric), and the interval method; readable in
    an 80-column terminal (csv and json give every column)."""
    levels = [c[:-4] for c in summary.columns if c.startswith("ci") and c.endswith("_low")]
    keys = [c for c in summary.columns if c not in ("metric", "runs", "complete", "n", "mean",
                                                    "std", "ci_method")
            and not c.startswith("ci")]
    # n is the number of values used: shown only where it is not the complete runs
    # (--include-incomplete, or a metric missing from some runs).
    show_n = bool((summary["n"] != summary["complete"]).any()) if len(summary) else False
    for metric, rows in summary.groupby("metric", sort=False):
        table = Table(title=metric, title_justify="left", title_style="bold")
        for key in keys:
            table.add_column(key.removeprefix("label."))
        table.add_column("complete/runs", justify="right", no_wrap=True)
        if show_n:
            table.add_column("n", justify="right", no_wrap=True)
        table.add_column("mean", justify="right", no_wrap=True)
        for lv in levels:
            table.add_column(f"{lv[2:]} % CI", justify="right")
        table.add_column("CI", no_wrap=True)
        for row in rows.to_dict("records"):
            intervals = [f"[{_num(row[f'{lv}_low'])}, {_num(row[f'{lv}_high'])}]"
                         if row["n"] >= 2 else "-" for lv in levels]
            n = [str(row["n"])] if show_n else []
            table.add_row(*[str(row[k]) for k in keys], f"{row['complete']}/{row['runs']}",
                          *n, _num(row["mean"]), *intervals,
                          _METHODS.get(row["ci_method"], str(row["ci_method"])))
        console.print(table)
    if len(summary):
        console.print("CI: t = Student-t; where a t bound would leave the metric's declared "
                      "range (below 0 for a count, time, rate or energy; above 1 for a fraction "
                      "or UAR): BCa = bootstrap (bias-corrected and accelerated), pct = "
                      "percentile bootstrap, t0/t1/t01 = t cut at 0 / the upper bound / both "
                      "(fewer than 10 values); - = n < 2", style="dim")


@app.command("export")
def export_command(
    store: StoreArgument,
    fmt: Annotated[ExportFormat, typer.Option("--format", help="File format.", case_sensitive=False)],
    out: Annotated[Optional[Path], typer.Option(
        "--out", metavar="FILE",
        help="Output file (default: STORE with the format's suffix; with --per flow, "
             "STORE-flows with it).")] = None,
    per: Annotated[ExportPer, typer.Option(
        "--per", case_sensitive=False,
        help="run: one row per run, every scenario key and result field a column; flow: one "
             "row per run and flow (the run's columns and labels, then flow.*).")] = ExportPer.run,
) -> None:
    """Write the flat runs frame (one row per run) or the flows frame (one row per run and
    flow) as Parquet or CSV."""
    from tcpenergy.experiments.frame import default_export_path, export_frame, flows_frame
    from tcpenergy.experiments.store import open_store

    target = out if out is not None else default_export_path(store, fmt.value, per.value)
    with reporting_errors():
        with open_store(store) as st:
            frame = flows_frame(st) if per is ExportPer.flow else st.runs()
        try:
            export_frame(frame, target, fmt.value)
        except OSError as exc:
            fail(f"cannot write {target}: {exc}", EXIT_FAILURE)
    if per is ExportPer.flow:
        runs = frame["run_key"].nunique() if len(frame) else 0
        typer.echo(f"{len(frame)} flow rows of {runs} runs -> {target}")
    else:
        typer.echo(f"{len(frame)} runs -> {target}")
