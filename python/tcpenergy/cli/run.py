"""The run, validate and profiles commands of the `tcpenergy` command line."""

# No `from __future__ import annotations` here: typer reads these annotations at run time, and
# older typer releases (the newest on Python 3.9) cannot resolve them from strings.

import warnings
from pathlib import Path
from typing import Annotated, List, Optional

import typer
from rich.console import Console

from tcpenergy import api, devices
from tcpenergy.capture import check_pcap_dir, describe_written
from tcpenergy.cli.common import (EXIT_FAILURE, EXIT_USAGE, OutputFormat, SetOption, app, fail, print_record,
                                  reporting_errors)
from tcpenergy.cli.progress import run_with_progress
from tcpenergy.outputs import check_trace_path, write_trace
from tcpenergy.report import profiles as profiles_report
from tcpenergy.report import result as result_report
from tcpenergy.report import scenario as scenario_report
from tcpenergy.scenario import check_overrides, parse_assignment
from tcpenergy.scenario import validate as validate_scenario


@app.command("run")
def run_command(
    scenario: Annotated[Path, typer.Argument(help="Scenario TOML file.", show_default=False, metavar="SCENARIO")],
    seed: Annotated[Optional[int], typer.Option("--seed", metavar="N", help="Run seed (default: the scenario's).")] = None,
    set_: SetOption = None,
    fmt: Annotated[OutputFormat, typer.Option("--format", help="Output format.")] = OutputFormat.table,
    trace: Annotated[
        Optional[Path],
        typer.Option("--trace", help="Write the time series to FILE (.csv or .parquet): the "
                                     "sender's for a single path; for a network every flow's, "
                                     "or those --trace-flow and --trace-node name.",
                     metavar="FILE"),
    ] = None,
    trace_flow: Annotated[
        Optional[List[str]],
        typer.Option("--trace-flow", help="With --trace, a network flow to trace (its source's "
                                          "protocol state and power). Repeatable.", metavar="NAME"),
    ] = None,
    trace_node: Annotated[
        Optional[List[str]],
        typer.Option("--trace-node", help="With --trace, a network node whose radio state and "
                                          "power to trace. Repeatable.", metavar="NAME"),
    ] = None,
    pcap: Annotated[
        Optional[Path],
        typer.Option("--pcap", help="Write each interface's packets to DIR/<from>-<to>.pcap "
                                    "(sender-receiver.pcap and receiver-sender.pcap for a single "
                                    "path; DIR is created if missing). An interface that sent "
                                    "no packet gets no file; stderr lists the files written.",
                     metavar="DIR"),
    ] = None,
    node_pcap: Annotated[
        Optional[Path],
        typer.Option("--node-pcap", help="Write each node's own view to DIR/<node>.pcap: what it sent, "
                                         "stamped as it began on the wire, and what reached it, "
                                         "stamped as it arrived (what `tcpenergy analyze` meters).",
                     metavar="DIR"),
    ] = None,
    force: Annotated[
        bool,
        typer.Option("--force", help="Run even when the estimate says the run is far beyond this "
                                     "machine (too many events or too much memory); warn instead."),
    ] = False,
) -> None:
    """Run one scenario and print its result."""
    if (trace_flow or trace_node) and trace is None:
        fail("--trace-flow and --trace-node choose what --trace FILE writes; give --trace FILE", EXIT_USAGE)
    with reporting_errors():
        if trace is not None:
            check_trace_path(trace)
        if pcap is not None:
            check_pcap_dir(pcap, "--pcap")
        if node_pcap is not None:
            check_pcap_dir(node_pcap, "--node-pcap")
        overrides = [parse_assignment(item) for item in set_ or []]
        check_overrides(overrides, "--set")
        loaded = api.load_scenario(scenario)
        notes: List[str] = []
        if force:
            # Say so before a run that may take long; the API's own warning would come after.
            refusal = api.estimate_overrides(loaded, overrides, trace is not None, pcap is not None)["refusal"]
            if refusal:
                where = f"{refusal['path']}: " if refusal["path"] else ""
                typer.echo(f"warning: {where}{refusal['reason']}; running anyway (--force)", err=True)

        # Naming nodes alone traces no flow.
        flows = trace_flow if trace_flow or not trace_node else []

        def execute():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", api.BeyondMachineWarning)
                return api.execute(loaded, seed, overrides, trace=trace is not None,
                                   trace_flows=flows, trace_nodes=trace_node or [],
                                   pcap=pcap, pcap_option="--pcap", force=force, node_pcap=node_pcap,
                                   on_pcap=lambda written: notes.extend(
                                       line for d in (pcap, node_pcap) if d is not None
                                       for line in describe_written(d, [p for p in written if p.parent == Path(d)])))

        record, columns = run_with_progress(execute, f"running {scenario}")
        # On stderr, so that stdout stays the record (--format json or csv).
        for line in notes:
            typer.echo(line, err=True)
    if trace is not None:
        import pandas as pd

        try:
            write_trace(pd.DataFrame(columns or {}), trace)
        except OSError as exc:
            fail(f"cannot write trace file {trace}: {exc}", EXIT_FAILURE)
    print_record(record, fmt)


@app.command("validate")
def validate_command(
    scenario: Annotated[Path, typer.Argument(help="Scenario TOML file.", show_default=False, metavar="SCENARIO")],
    set_: SetOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the full normalized scenario as JSON.")] = False,
) -> None:
    """Check a scenario; print OK and a summary of it with every default filled in."""
    with reporting_errors():
        overrides = [parse_assignment(item) for item in set_ or []]
        check_overrides(overrides, "--set")
        loaded = api.load_scenario(scenario)
        normalized = validate_scenario(loaded, overrides)
        cost = api.estimate_overrides(loaded, overrides, False, False)
    if as_json:
        typer.echo(result_report.json_text(normalized))
        return
    typer.echo(f"OK: {scenario}")
    scenario_report.print_summary(normalized, Console())
    typer.echo(f"Estimated run: {cost['summary']}")
    if cost["refusal"]:
        where = f"{cost['refusal']['path']}: " if cost["refusal"]["path"] else ""
        typer.echo(f"warning: {where}{cost['refusal']['reason']}; tcpenergy run refuses it without --force", err=True)


@app.command("profiles")
def profiles_command(
    name: Annotated[Optional[str], typer.Argument(help="Show this profile's figures and sources.", metavar="NAME")] = None,
) -> None:
    """List the built-in device profiles, or show one with the source of every figure."""
    console = Console()
    if name is None:
        profiles_report.print_list(console)
        return
    profile = devices.get(name)
    if profile is None:
        fail(f"unknown profile {name!r}; built-in profiles: {', '.join(devices.names())}", EXIT_USAGE)
    profiles_report.print_profile(profile, console)
