"""What every command of the `tcpenergy` command line shares: the Typer application, the exit
statuses and the turning of a user's errors into one line on stderr. Command modules import this
module only, never each other."""

# No `from __future__ import annotations` here: typer reads these annotations at run time, and
# older typer releases (the newest on Python 3.9) cannot resolve them from strings.

from contextlib import contextmanager
from enum import Enum
from typing import Annotated, Iterator, List, NoReturn, Optional

import typer

from tcpenergy._version import __version__, engine_version
from tcpenergy.exceptions import EngineError, ScenarioError, TcpEnergyError
from tcpenergy.experiments.errors import ExecutorError, StoreError, SweepSpecError
from tcpenergy.outputs import OutputPathError

# Exit statuses: bad input (scenario, options, paths) vs. a failure while running.
EXIT_USAGE = 2
EXIT_FAILURE = 1

app = typer.Typer(
    name="tcpenergy",
    help="Energy cost of TCP variants over impaired wireless paths.",
    add_completion=False,
    no_args_is_help=True,
    # User errors are caught and printed as one line; anything else is a bug: plain traceback.
    pretty_exceptions_enable=False,
)


class OutputFormat(str, Enum):
    """How `run` and `emulate` print a record."""

    table = "table"
    json = "json"
    csv = "csv"


SetOption = Annotated[
    Optional[List[str]],
    typer.Option("--set", metavar="KEY=VALUE",
                 help="Override a scenario key, e.g. --set tcp.variant=newreno "
                      "(VALUE is read as TOML, else as a string). Repeatable; a key and a key "
                      "inside it (a.b and a.b.0.p) cannot both be set."),
]


def print_record(record: dict, fmt: OutputFormat) -> None:
    """A run's record on stdout, as JSON, one CSV row or tables."""
    from rich.console import Console

    from tcpenergy.report import result as result_report

    if fmt is OutputFormat.json:
        typer.echo(result_report.json_text(record))
    elif fmt is OutputFormat.csv:
        typer.echo(result_report.csv_text(record), nl=False)
    else:
        result_report.print_table(record, Console())


def fail(message: str, status: int) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(status)


def _describe(exc: ScenarioError) -> str:
    path = getattr(exc, "path", "") or ""
    message = getattr(exc, "message", None) or str(exc)
    return f"{path}: {message}" if path else message


@contextmanager
def reporting_errors() -> Iterator[None]:
    """Turn the errors a user can cause into one line on stderr and an exit status."""
    try:
        yield
    except ScenarioError as exc:
        fail(_describe(exc), EXIT_USAGE)
    except (OutputPathError, SweepSpecError, StoreError, ExecutorError) as exc:
        fail(str(exc), EXIT_USAGE)
    except EngineError as exc:
        fail(f"engine failure: {exc} (this is a bug; please report it with the scenario and seed)",
             EXIT_FAILURE)
    except TcpEnergyError as exc:
        fail(str(exc), EXIT_FAILURE)


def _show_version(value: bool) -> None:
    if value:
        typer.echo(f"tcpenergy {__version__} (engine {engine_version()})")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_show_version, is_eager=True,
                     help="Print the package and engine versions and exit."),
    ] = False,
) -> None:
    """Simulate TCP transfers over impaired wireless paths and account the energy they cost."""
