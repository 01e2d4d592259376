"""The `reproduce` command of the tcpenergy CLI (registered on `tcpenergy.cli.common.app`)."""

# No `from __future__ import annotations`: typer reads these annotations at run time (see common.py).
# The reproductions import pandas, DuckDB and matplotlib inside the command, so other commands start fast.

from pathlib import Path
from typing import Annotated, List, Optional

import typer

from tcpenergy.cli.common import EXIT_FAILURE, EXIT_USAGE, app, fail, reporting_errors
from tcpenergy.reproduce import describe, known_papers, readings, registry
from tcpenergy.reproduce.networks import DEFAULT_NETWORK, NETWORKS, PATH, TESTBED, recorded_network


def _known() -> str:
    return "; ".join(f"{p} ({describe(p)})" for p in known_papers())


@app.command("reproduce")
def reproduce_command(
    paper: Annotated[str, typer.Argument(help=f"Paper to reproduce: {', '.join(known_papers())}.", show_default=False,
                                         metavar="PAPER")],
    out: Annotated[Path, typer.Option("--out", metavar="DIR", show_default=False,
                                      help="Output directory: runs.duckdb (resumable), sweeps/, "
                                           "claims.json, report/.")],
    quick: Annotated[bool, typer.Option("--quick", help="Fewer seeds per setting, and for some papers fewer "
                                                        "settings (docs/reproduce/PAPER.md says which): a smoke "
                                                        "test in well under a minute.")] = False,
    jobs: Annotated[Optional[int], typer.Option("--jobs", "-j", metavar="N",
                                                help="Parallel workers (default: every core).")] = None,
    part: Annotated[Optional[str], typer.Option("--part", metavar="PART",
                                                help="Run one part of a paper split into parts (seed-003: options, "
                                                     "battery-lifetime, rts-cts, interference; default: every part).")] = None,
    sensitivity: Annotated[Optional[str], typer.Option(
        "--sensitivity", metavar="KEY",
        help="Sweep one device-profile figure (a dotted profile key such as cpu.cycles.sack_block_processed, "
             "platform.base_power_w) in both nodes' profiles and say where each energy claim holds; writes "
             "OUT/sensitivity/KEY/. See docs/reproduce/README.md.")] = None,
    values: Annotated[Optional[str], typer.Option(
        "--values", metavar="V1,V2,...",
        help="With --sensitivity: the values to sweep (non-negative numbers; default: the key's registered "
             "sweep). The profile's own value is always added.")] = None,
    network: Annotated[Optional[str], typer.Option(
        "--network", metavar="testbed|path", show_default=False,
        help=f"seed-000 and seed-002: 'testbed' runs the paper's experiments on the 802.11b chain with Dummynet "
             "at node c (and seed 000's Table 1 also with RTS/CTS on), 'path' on the 2 Mbit/s path abstraction "
             f"(default: {DEFAULT_NETWORK}; the path is 2-4x faster). A rerun into the same --out keeps its network unless "
             "this is given. See docs/reproduce/seed-000.md.")] = None,
    reading: Annotated[Optional[List[str]], typer.Option(
        "--reading", metavar="KEY=ALT",
        help="Run on another reading of what the paper leaves open (its Readings table in "
             "docs/reproduce/seed-00N.md; repeatable). Default: the readings taken.")] = None,
    alternatives: Annotated[bool, typer.Option(
        "--alternatives",
        help="Also run every other alternative of each reading (one changed at a time) into "
             "OUT/alternatives/ and write OUT/alternatives.json: the claims each one flips.")] = False,
) -> None:
    """Run a seed paper's experiments, check its claims, and write a report.

    Re-running with the same --out resumes: runs already stored are not run again. With --sensitivity
    KEY, the reproduction is run once per value of that profile figure instead.
    """
    if paper not in known_papers():
        fail(f"unknown paper {paper!r}; known papers: {_known()}", EXIT_USAGE)
    facts = registry.paper(paper)
    network_papers = registry.network_papers()
    if facts.parts:
        built, unbuilt = facts.parts, facts.unbuilt_parts
        if part is not None and part not in built:
            why = (f"the {part} part {unbuilt[part]}" if part in unbuilt else f"unknown part {part!r}")
            fail(f"{paper} --part {part}: {why}. Available parts: {', '.join(built)}", EXIT_USAGE)
    elif part is not None:
        fail(f"{paper} has no parts; drop --part", EXIT_USAGE)
    if jobs is not None and jobs < 1:
        fail(f"--jobs must be at least 1, got {jobs}", EXIT_USAGE)
    if out.exists() and not out.is_dir():
        fail(f"--out: {out} exists and is not a directory", EXIT_USAGE)
    if values is not None and sensitivity is None:
        fail("--values needs --sensitivity KEY (the profile figure the values are for)", EXIT_USAGE)
    if network is not None and network not in NETWORKS:
        fail(f"--network must be one of {', '.join(NETWORKS)}, got {network!r}", EXIT_USAGE)
    if network is not None and paper not in network_papers:
        fail(f"{paper} has no --network; it applies to {', '.join(network_papers)}", EXIT_USAGE)
    try:
        chosen = readings.parse_assignments(reading)
        readings.check(paper, registry.package(paper).__name__, chosen)
    except readings.ReadingError as err:
        fail(str(err), EXIT_USAGE)
    if chosen and (alternatives or sensitivity is not None):
        fail("--reading cannot be combined with --alternatives or --sensitivity (they run the taken "
             "readings)", EXIT_USAGE)
    if alternatives and sensitivity is not None:
        fail("--alternatives and --sensitivity are separate runs; give one", EXIT_USAGE)
    if sensitivity is not None:
        # The profile sweep sets the single-path form's sender and receiver profiles, and rewrites
        # OUT's report from a path reproduction: neither fits a testbed reproduction.
        if paper in network_papers and network == TESTBED:
            fail("--sensitivity runs on the path network only; drop --network testbed", EXIT_USAGE)
        if paper in network_papers and recorded_network(out) == TESTBED:
            fail(f"--sensitivity runs on the path network only, and {out} holds a testbed reproduction; "
                  "use another --out", EXIT_USAGE)
        _sensitivity(paper, out, sensitivity, values, quick, jobs, part)
        return

    with reporting_errors():
        try:
            if alternatives:
                _alternatives(paper, out, quick, jobs, part, network)
                return
            outcome = _reproduce(paper, out, quick, jobs, part, network, chosen)
        except KeyboardInterrupt:
            typer.echo("interrupted: every run that ended so far is stored in "
                       f"{out / 'runs.duckdb'}; run the same command again to resume", err=True)
            raise typer.Exit(130) from None
    tally = outcome.tally
    typer.echo(f"{paper}: {sum(tally.values())} claims: {tally['holds']} hold, "
               f"{tally['does_not_hold']} do not hold, {tally.get('consistency', 0)} consistency checks, "
               f"{tally.get('fit', 0)} fit, "
               f"{tally['not_modelled']} not modelled "
               f"({outcome.runs} runs, {_completeness(outcome)}, {outcome.wall_s:.1f} s)")
    typer.echo(f"claims: {out / 'claims.json'}")
    typer.echo(f"report: {out / 'report' / 'index.html'}")
    if outcome.incomplete_runs:
        typer.echo(f"{outcome.incomplete_runs} runs stopped at their stop_after cap before the transfer "
                   "completed: they are left out of every statistic and listed in the report", err=True)
    if outcome.failed_runs:
        typer.echo(f"{outcome.failed_runs} runs failed (stored with their error; re-run to retry them)",
                   err=True)
        raise typer.Exit(EXIT_FAILURE)


def _reproduce(paper: str, out: Path, quick: bool, jobs: Optional[int], part: Optional[str],
               network: Optional[str], chosen: Optional[dict] = None):
    """The reproduction; seeds 000 and 002 on ``network`` (None: the one OUT's reproduction ran on,
    else the command line's default)."""
    from tcpenergy.reproduce import reproduce

    def log(message: str) -> None:
        typer.echo(message, err=True)

    if not registry.paper(paper).networks:
        return reproduce(paper, out, quick=quick, jobs=jobs, progress=True, part=part, log=log, readings=chosen)
    net = network or recorded_network(out) or DEFAULT_NETWORK
    log(f"network: {net}" + ("" if net == PATH else " (802.11b chain a-b-c-d, Dummynet at c)"))
    return reproduce(paper, out, quick=quick, jobs=jobs, progress=True, log=log, network=net, readings=chosen)


def _alternatives(paper: str, out: Path, quick: bool, jobs: Optional[int], part: Optional[str],
                  network: Optional[str]) -> None:
    """Every alternative reading, one changed at a time; prints the claims each one flips."""
    from tcpenergy.reproduce import alternatives as run_alternatives

    def log(message: str) -> None:
        typer.echo(message, err=True)

    options = {"part": part} if part is not None else {}
    if registry.paper(paper).networks:
        options["network"] = network or recorded_network(out) or DEFAULT_NETWORK
    summary = run_alternatives(paper, out, quick=quick, jobs=jobs, progress=True, log=log, **options)
    for entry in summary["alternatives"]:
        flips = ", ".join(f"{f['id']} ({f['taken']} -> {f['alternative']})" for f in entry["flips"]) or "none"
        typer.echo(f"{entry['reading']} = {entry['alternative']}: flips {flips}")
    typer.echo(f"alternatives: {out / 'alternatives.json'}")


def _completeness(outcome) -> str:
    if not outcome.incomplete_runs:
        return "all complete"
    return f"{outcome.runs - outcome.incomplete_runs} complete, {outcome.incomplete_runs} incomplete"


def _sensitivity(paper: str, out: Path, key: str, values: Optional[str], quick: bool, jobs: Optional[int],
                 part: Optional[str]) -> None:
    """`reproduce PAPER --sensitivity KEY`: usage errors exit 2 before anything is written."""
    from tcpenergy.reproduce import sensitivity as sens

    try:
        sens.knob(key)
        chosen = sens.parse_values(values) if values is not None else None
    except ValueError as exc:
        fail(str(exc), EXIT_USAGE)
    with reporting_errors():
        try:
            sens.plan(paper, key, chosen, quick)  # the engine checks every value's profile first
        except (KeyError, ValueError) as exc:
            fail(f"--sensitivity {key}: {exc}", EXIT_USAGE)
        try:
            result = sens.run_sensitivity(paper, out, key, chosen, quick=quick, jobs=jobs, progress=True,
                                          part=part, log=lambda message: typer.echo(message, err=True))
        except KeyboardInterrupt:
            typer.echo("interrupted: every run that ended so far is stored under "
                       f"{out / sens.SUBDIR / key}; run the same command again to resume", err=True)
            raise typer.Exit(130) from None
    _print_sensitivity(result)
    if result.failed_runs:
        typer.echo(f"{result.failed_runs} runs failed (stored with their error; re-run to retry them)", err=True)
        raise typer.Exit(EXIT_FAILURE)


def _print_sensitivity(result) -> None:
    from rich.console import Console
    from rich.table import Table

    doc = result.document
    table = Table(title=f"{result.paper}: energy claims vs {result.key} "
                        f"(profile value {doc['profile']['value']:g} {doc['unit']})"
                        + (" - indicative (--quick)" if doc["quick"] else ""), show_lines=False)
    table.add_column("claim", no_wrap=True)
    table.add_column("at the profile value", no_wrap=True)
    table.add_column("where it holds")
    colour = {"holds": "green", "consistency": "blue", "does_not_hold": "red", "not_modelled": "bright_black"}
    for claim in result.claims:
        if claim["energy"]:
            status = claim["base_status"]
            table.add_row(claim["id"], f"[{colour.get(status, 'default')}]{status.replace('_', ' ')}[/]",
                          claim["statement"])
    console = Console()
    console.print(table)
    checked = len(doc["non_energy_checked"])
    typer.echo(f"{result.key}: {len(doc['values'])} values, {sum(r['runs'] for r in doc['runs'])} runs, "
               f"{checked} non-energy claims unchanged at every value ({result.wall_s:.1f} s)")
    for path in result.files:
        if path.suffix in (".csv", ".md"):
            typer.echo(f"{path.stem}: {path}")
    if result.report is not None:
        typer.echo(f"report: {result.report}")
