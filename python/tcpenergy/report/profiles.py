"""Device profiles for the terminal: the list, and one profile's figures with their sources."""

from __future__ import annotations

from typing import Any, Mapping

from rich import box
from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from tcpenergy import devices
from tcpenergy.report.units import plain

ESTIMATE_MARK = "(estimated)"


def print_list(console: Console) -> None:
    table = Table(box=box.SIMPLE_HEAD)
    table.add_column("Profile", no_wrap=True)
    table.add_column("Description")
    for name in devices.names():
        table.add_row(name, devices.description(devices.get(name) or {}))
    console.print(table)


def print_profile(profile: Mapping[str, Any], console: Console) -> None:
    """One line per figure (key, value, estimate mark) with its source indented below it:
    sources are sentences, too long for a table column in an 80-column terminal."""
    console.print(Text(str(profile.get("name", "")), style="bold"))
    if devices.description(profile):
        console.print(devices.description(profile))
    figures = devices.figures(profile)
    key_width = max((len(f.key) for f in figures), default=0)
    value_width = max((len(plain(f.value)) for f in figures), default=0)
    section = None
    for figure in figures:
        if figure.key.split(".", 1)[0] != section:
            section = figure.key.split(".", 1)[0]
            console.print()
        line = Text(f"  {figure.key:<{key_width}}  {plain(figure.value):>{value_width}}")
        if figure.estimated:
            line.append(f"  {ESTIMATE_MARK}", style="yellow")
        console.print(line)
        source = figure.source or "no source given"
        console.print(Padding(Text(f"source: {source}", style="dim"), (0, 0, 0, 6), expand=False))
    console.print()
    console.print(f"{ESTIMATE_MARK}: not a published figure; "
                  "docs/models/profiles.md explains each estimate.")
