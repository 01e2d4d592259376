"""The emulate command of the `tcpenergy` command line: a scenario run by the machine's own TCP
(kernel mode, docs/emulation.md)."""

# No `from __future__ import annotations` here: typer reads these annotations at run time.

from pathlib import Path
from typing import Annotated, List, Optional

import typer
from rich.console import Console

from tcpenergy.cli.common import EXIT_USAGE, OutputFormat, SetOption, app, fail, print_record, reporting_errors
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
    print_record(record, fmt)
    if fmt is OutputFormat.table:
        loop = record["emulation"]["loop"]
        typer.echo(f"kernel mode: {loop['packets_taken']} packets taken, {loop['packets_written']} delivered; "
                   f"lag p50 {loop['lag_p50_ms']:.3f} ms, p99 {loop['lag_p99_ms']:.3f} ms, "
                   f"max {loop['lag_max_ms']:.3f} ms")
        if not record["complete"]:
            typer.echo(f"incomplete: {record.get('stop')}", err=True)


@app.command("analyze")
def analyze_command(
    capture: Annotated[Path, typer.Argument(help="A pcap file (raw IP, Ethernet or Linux cooked).",
                                            show_default=False, metavar="CAPTURE")],
    profile: Annotated[str, typer.Option("--profile", metavar="NAME",
                                         help="The device: a built-in profile name or a profile TOML file.")],
    node: Annotated[str, typer.Option("--node", metavar="ADDRESS",
                                      help="The IPv4 address of the node the capture was taken at.")],
    radio_policy: Annotated[str, typer.Option("--radio-policy", metavar="POLICY",
                                              help="How the radio spends its gaps: always_on, ideal, "
                                                   "timeout or psm.")] = "always_on",
    timeout: Annotated[Optional[str], typer.Option("--timeout", metavar="DURATION",
                                                   help="With --radio-policy timeout: the idle time "
                                                        "before the radio sleeps, e.g. 100ms.")] = None,
    start: Annotated[Optional[float], typer.Option("--from", metavar="SECONDS",
                                                   help="Window start on the capture's clock "
                                                        "(default: its first packet).")] = None,
    until: Annotated[Optional[float], typer.Option("--until", metavar="SECONDS",
                                                   help="Window end on the capture's clock "
                                                        "(default: the end of its last packet).")] = None,
    fmt: Annotated[OutputFormat, typer.Option("--format", help="Output format (table or json).")] = OutputFormat.table,
) -> None:
    """Meter a capture taken at one node (tcpdump on a phone or laptop, `run --node-pcap`) with a
    device profile's radio and CPU model: the node's energy record and its TCP connections."""
    from tcpenergy.emulate.capture_energy import analyze
    from tcpenergy.report import result as result_report

    if fmt is OutputFormat.csv:
        fail("--format: analyze prints table or json", EXIT_USAGE)
    with reporting_errors():
        result = analyze(capture, profile, node, radio_policy=radio_policy, timeout=timeout, window=(start, until))
    if fmt is OutputFormat.json:
        typer.echo(result_report.json_text(result))
        return
    _print_analysis(result, Console())


def _print_analysis(result: dict, console: Console) -> None:
    from rich.table import Table

    e = result["energy"]
    head = Table(title=f"{result['capture']}: node {result['node']} as {result['profile']}", show_header=False)
    rows = [("Window", f"{result['window_s']:.3f} s from {result['window_start_s']:.6f} s"),
            ("Packets sent / received / other", f"{result['packets_sent']:,} / {result['packets_received']:,} / "
                                                f"{result['packets_other']:,}"),
            ("Total energy", f"{e['total_j']:.3f} J"), ("Idealized energy", f"{e['idealized_j']:.3f} J"),
            ("Radio tx / rx", f"{e['radio_tx_s']:.3f} s / {e['radio_rx_s']:.3f} s"),
            ("CPU busy (card)", f"{e['cpu_busy_s']:.3f} s ({e['cpu_card_s']:.3f} s)")]
    rows += [(f"  {k.replace('_', ' ')}", f"{v:.3f} J") for k, v in e["breakdown_j"].items()]
    for key, value in rows:
        head.add_row(key, value)
    console.print(head)
    if result["flows"]:
        flows = Table(title="TCP connections (with their handshake in the capture)")
        for column in ("local", "remote", "role", "sent", "received", "bytes delivered", "retransmissions"):
            flows.add_column(column)
        for f in result["flows"]:
            flows.add_row(f["local"], f["remote"], f["role"], f"{f['packets_sent']:,}", f"{f['packets_received']:,}",
                          f"{f['bytes_delivered']:,}", f"{f['retransmissions']:,}")
        console.print(flows)
