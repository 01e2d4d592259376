"""The emulate command of the `tcpenergy` command line: a scenario run by the machine's own TCP
(kernel mode, docs/emulation.md)."""

# No `from __future__ import annotations` here: typer reads these annotations at run time.

from pathlib import Path
from typing import Annotated, List, Optional

import typer
from rich.console import Console

from tcpenergy.cli.common import EXIT_USAGE, OutputFormat, SetOption, app, fail, reporting_errors
from tcpenergy.cli.progress import run_with_progress


@app.command("emulate")
def emulate_command(
    scenario: Annotated[Optional[Path], typer.Argument(help="Scenario TOML file.", show_default=False,
                                                       metavar="SCENARIO")] = None,
    seed: Annotated[Optional[int], typer.Option("--seed", metavar="N", help="Run seed (default: the scenario's).")] = None,
    set_: SetOption = None,
    fmt: Annotated[OutputFormat, typer.Option("--format", help="Output format.")] = OutputFormat.table,
    pcap: Annotated[
        Optional[Path],
        typer.Option("--pcap", metavar="DIR", help="Write each interface's packets to DIR/<from>-<to>.pcap, "
                                                   "as `tcpenergy run --pcap` does."),
    ] = None,
    out: Annotated[Optional[Path], typer.Option("--out", metavar="FILE",
                                                help="Also write the record as JSON to FILE.")] = None,
    cmd: Annotated[
        Optional[List[str]],
        typer.Option("--cmd", metavar="NODE=COMMAND",
                     help="Run COMMAND (a shell command line) in NODE's namespace beside the flows; the "
                          "run waits for it. Repeatable. Nodes reach each other at the addresses "
                          "the record's kernel.addresses lists."),
    ] = None,
    congestion: Annotated[
        Optional[str],
        typer.Option("--congestion", metavar="NAME",
                     help="Run every flow with this kernel congestion-control module (e.g. bbr) "
                          "instead of its variant's."),
    ] = None,
    limit: Annotated[Optional[float], typer.Option("--limit", metavar="SECONDS",
                                                   help="End the run after this long (default: the "
                                                        "scenario's stop_after, at most 1 h).")] = None,
    lag_bound: Annotated[float, typer.Option("--lag-bound", metavar="MS",
                                             help="Mark the run incomplete when its events ran "
                                                  "later than this at the 99th percentile.")] = 1.0,
    cleanup: Annotated[bool, typer.Option("--cleanup", help="Remove what killed runs left (namespaces, "
                                                            "devices) and exit.")] = False,
) -> None:
    """Run a scenario with this machine's own TCP: each flow's ends are network namespaces joined
    by the scenario's links and channels, in real time, metered by the same energy model."""
    from tcpenergy.emulate import netns

    if cleanup:
        with reporting_errors():
            removed = netns.cleanup()
        typer.echo(f"removed {len(removed)} namespace{'s' if len(removed) != 1 else ''}"
                   + (f": {', '.join(removed)}" if removed else ""))
        return
    if scenario is None:
        fail("give a SCENARIO file (or --cleanup)", EXIT_USAGE)
    from tcpenergy import api
    from tcpenergy.capture import describe_written
    from tcpenergy.emulate.run import emulate
    from tcpenergy.outputs import OutputPathError, atomic_write
    from tcpenergy.report import result as result_report
    from tcpenergy.scenario import check_overrides, parse_assignment

    commands = {}
    for item in cmd or []:
        node, sep, line = item.partition("=")
        if not sep or not node or not line:
            fail(f"--cmd expects NODE=COMMAND, got {item!r}", EXIT_USAGE)
        commands[node] = line
    notes: List[str] = []
    with reporting_errors():
        if out is not None and not out.absolute().parent.is_dir():
            raise OutputPathError(f"--out: directory does not exist: {out.absolute().parent}")
        overrides = [parse_assignment(item) for item in set_ or []]
        check_overrides(overrides, "--set")
        loaded = api.load_scenario(scenario)
        unavailable = netns.unavailable()
        if unavailable:
            raise netns.NamespaceError(f"kernel mode unavailable: {unavailable}")
        record = run_with_progress(
            lambda: emulate(loaded, seed, overrides, congestion=congestion, commands=commands, limit_s=limit,
                            lag_bound_ms=lag_bound, pcap=pcap, pcap_option="--pcap",
                            on_pcap=lambda written: notes.extend(describe_written(pcap, written))),
            f"emulating {scenario}")
        if out is not None:
            atomic_write(out, lambda tmp: tmp.write_text(result_report.json_text(record) + "\n"))
    for line in notes:
        typer.echo(line, err=True)
    if fmt is OutputFormat.json:
        typer.echo(result_report.json_text(record))
    elif fmt is OutputFormat.csv:
        typer.echo(result_report.csv_text(record), nl=False)
    else:
        result_report.print_table(record, Console())
        loop = record["emulation"]["loop"]
        typer.echo(f"kernel mode: {loop['packets_taken']} packets taken, {loop['packets_written']} delivered; "
                   f"lag p50 {loop['lag_p50_ms']:.3f} ms, p99 {loop['lag_p99_ms']:.3f} ms, "
                   f"max {loop['lag_max_ms']:.3f} ms")
        if not record["complete"]:
            typer.echo(f"incomplete: {record.get('stop')}", err=True)
