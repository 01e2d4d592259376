"""Device profiles as tables: the list, and one profile's figures with their sources."""

from __future__ import annotations

from typing import Any, Mapping

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from tcpenergy import devices
from tcpenergy.report.units import plain

ESTIMATE_MARK = "*"


def print_list(console: Console) -> None:
    table = Table(box=box.SIMPLE_HEAD)
    table.add_column("Profile", no_wrap=True)
    table.add_column("Description", overflow="fold")
    for name in devices.names():
        table.add_row(name, devices.description(devices.get(name) or {}))
    console.print(table)


def print_profile(profile: Mapping[str, Any], console: Console) -> None:
    console.print(Text(str(profile.get("name", "")), style="bold"))
    if devices.description(profile):
        console.print(devices.description(profile))
    table = Table(box=box.SIMPLE_HEAD)
    table.add_column("Figure", overflow="fold")
    table.add_column("Value", justify="right")
    table.add_column("Est.", justify="center")
    table.add_column("Source", overflow="fold")
    for figure in devices.figures(profile):
        table.add_row(
            figure.key,
            plain(figure.value),
            ESTIMATE_MARK if figure.estimated else "",
            figure.source or "(no source given)",
        )
    console.print(table)
    console.print(f"{ESTIMATE_MARK} estimated: not a published figure; "
                  "docs/models/profiles.md explains each estimate.")
