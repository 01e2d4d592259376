"""The `calibrate` command of the tcpenergy CLI (registered on `tcpenergy.cli.common.app`): fit device
profile figures to power-meter measurements (docs/calibration.md)."""

# No `from __future__ import annotations`: typer reads these annotations at run time (see common.py).
# numpy, scipy and pandas are imported inside the command, so other commands start fast.

import math
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich import box
from rich.console import Console
from rich.table import Table

from tcpenergy.cli.common import EXIT_FAILURE, EXIT_USAGE, app, fail, reporting_errors
from tcpenergy.outputs import OutputPathError, atomic_write


def _check_output(path: Path, option: str, suffix: str) -> None:
    """Refuse an unusable output path before the work starts."""
    if path.suffix.lower() != suffix:
        raise OutputPathError(f"{option}: expected a {suffix} file, got {path}")
    if not path.parent.is_dir():
        raise OutputPathError(f"{option}: directory does not exist: {path.parent}")


def _number(value: Optional[float], digits: int = 6) -> str:
    return "-" if value is None or not math.isfinite(value) else f"{value:.{digits}g}"


def _percent(value: Optional[float]) -> str:
    return "-" if value is None or not math.isfinite(value) else f"{value * 100:+.2f}%"


def _rms(value: Optional[float]) -> str:
    return "- (no rows)" if value is None else f"{value * 100:.2f} %"


def _print(result, console: Console) -> None:
    figures = Table(title="Fitted figures", box=box.SIMPLE_HEAD, title_justify="left", pad_edge=False)
    figures.add_column("Figure", no_wrap=True)
    figures.add_column("Unit")
    for column in ("Start", "Fitted", "95% CI"):
        figures.add_column(column, justify="right", no_wrap=True)
    for f in result.figures:
        figures.add_row(f.key, f.unit, _number(f.start), _number(f.fitted),
                        f"[{_number(f.low)}, {_number(f.high)}]")
    console.print(figures)

    rows = Table(title="Rows: the quantity simulated with the starting and the fitted profile; "
                       "Δ = (simulated - measured) / measured",
                 box=box.SIMPLE_HEAD, title_justify="left", pad_edge=False, collapse_padding=True)
    rows.add_column("Row", no_wrap=True)
    rows.add_column("Node", no_wrap=True)
    for column in ("Measured", "Start", "Fitted", "Δ start", "Δ fitted"):
        rows.add_column(column, justify="right", no_wrap=True)
    rows.add_column("Role", no_wrap=True)
    for r in result.rows.itertuples(index=False):
        rows.add_row(str(r.id), r.node, f"{_number(r.measured, 5)} {r.unit}", _number(r.start, 5),
                     _number(r.fitted, 5), _percent(r.rel_error_start), _percent(r.rel_error),
                     "fit" if r.role == "fit" else "held")
    console.print(rows)

    console.print(f"RMS relative error, fit rows ({result.n_fit}): {_rms(result.rms('fit'))} "
                  f"(starting profile {_rms(result.rms('fit', 'rel_error_start'))})")
    console.print(f"RMS relative error, held-out rows ({result.n_holdout}): "
                  f"{_rms(result.rms('holdout'))} (starting profile "
                  f"{_rms(result.rms('holdout', 'rel_error_start'))})")
    console.print(f"Fit: non-negative least squares on relative residuals. Intervals: "
                  f"{result.method}; seed {result.seed}.")
    for note in result.notes:
        console.print(f"Note: {note}")


@app.command("calibrate")
def calibrate_command(
    measurements: Annotated[Path, typer.Argument(
        help="Measurements, CSV or Parquet: one row per (run, node) with one of energy_j, "
             "energy_per_bit_uj, power_w.", show_default=False, metavar="MEASUREMENTS")],
    profile: Annotated[str, typer.Option(
        "--profile", metavar="NAME", show_default=False,
        help="Starting profile: a built-in profile name or a profile TOML file.")],
    out: Annotated[Path, typer.Option(
        "--out", metavar="PROFILE.toml", show_default=False,
        help="Write the calibrated profile here (replaced if it exists).")],
    fit: Annotated[Optional[str], typer.Option(
        "--fit", metavar="KEYS",
        help="Comma-separated dotted profile keys to fit (cpu.cycles.* globs allowed); default: "
             "the profile's estimated figures the energy is affine in.")] = None,
    holdout: Annotated[Optional[float], typer.Option(
        "--holdout", metavar="FRACTION",
        help="Hold this fraction of rows, drawn with --seed, out of the fit.")] = None,
    holdout_rows: Annotated[Optional[str], typer.Option(
        "--holdout-rows", metavar="IDS", help="Comma-separated ids of rows to hold out.")] = None,
    seed: Annotated[int, typer.Option(
        "--seed", metavar="N", help="Seed of the holdout draw and the bootstrap.")] = 1,
    name: Annotated[Optional[str], typer.Option(
        "--name", metavar="NEWNAME", help="Name of the calibrated profile "
                                          "(default: <profile>-calibrated).")] = None,
    report: Annotated[Optional[Path], typer.Option(
        "--report", metavar="FILE.csv", help="Also write the per-row table as CSV.")] = None,
) -> None:
    """Fit device-profile figures to power-meter measurements (NNLS, bootstrap intervals)."""
    from tcpenergy.calibration.pipeline import calibrate

    if holdout is not None and holdout_rows is not None:
        fail("--holdout and --holdout-rows exclude each other; give one", EXIT_USAGE)
    chosen = holdout if holdout_rows is None else holdout_rows.split(",")
    with reporting_errors():
        _check_output(out, "--out", ".toml")
        if report is not None:
            _check_output(report, "--report", ".csv")
        result = calibrate(measurements, profile, fit=fit, holdout=chosen, seed=seed, name=name)
        text = result.toml()
    try:
        atomic_write(out, lambda tmp: tmp.write_text(text, encoding="utf-8"))
        if report is not None:
            atomic_write(report, lambda tmp: result.rows.to_csv(tmp, index=False))
    except OSError as exc:
        fail(f"cannot write {exc.filename or out}: {exc.strerror or exc}", EXIT_FAILURE)
    _print(result, Console())
    written = f"wrote {out} (profile {result.profile['name']})"
    typer.echo(written + (f" and {report}" if report is not None else ""))
