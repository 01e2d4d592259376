"""A short summary of a normalized scenario (what `tcpenergy validate` prints)."""

from __future__ import annotations

from typing import Any, List, Mapping, Tuple

from rich import box
from rich.console import Console
from rich.table import Table

from tcpenergy.report.units import plain


def _inline(value: Any) -> str:
    """Compact one-line form of a value: ``{kind = "bernoulli", p = 0.01}`` -> ``bernoulli(p=0.01)``."""
    if isinstance(value, Mapping):
        kind = value.get("kind")
        args = ", ".join(f"{k}={_inline(v)}" for k, v in value.items() if k != "kind")
        return f"{kind}({args})" if kind is not None else "{" + args + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_inline(v) for v in value) + "]"
    return plain(value)


def _direction(link: Mapping[str, Any]) -> str:
    parts = [plain(link.get("rate")), f"delay {plain(link.get('delay'))}",
             f"queue {plain(link.get('queue'))}"]
    impairments = link.get("impairments") or []
    parts.append(", ".join(_inline(i) for i in impairments) if impairments else "no impairments")
    return ", ".join(parts)


def _profile(value: Any) -> str:
    if isinstance(value, Mapping):
        return f"inline profile {plain(value.get('name', ''))}".strip()
    return plain(value)


def summary_rows(scenario: Mapping[str, Any]) -> List[Tuple[str, str]]:
    path = scenario.get("path") or {}
    tcp = scenario.get("tcp") or {}
    traffic = scenario.get("traffic") or {}
    energy = scenario.get("energy") or {}
    policy = energy.get("radio_policy")
    return [
        ("name", plain(scenario.get("name"))),
        ("seed", plain(scenario.get("seed"))),
        ("stop after", plain(scenario.get("stop_after"))),
        ("variant", plain(tcp.get("variant"))),
        ("mtu", plain(path.get("mtu"))),
        ("forward", _direction(path.get("forward") or {})),
        ("reverse", _direction(path.get("reverse") or {})),
        ("traffic", _inline(traffic)),
        ("sender", _profile(energy.get("sender"))),
        ("receiver", _profile(energy.get("receiver"))),
        ("radio policy", _inline(policy)),
    ]


def print_summary(scenario: Mapping[str, Any], console: Console) -> None:
    table = Table(box=box.SIMPLE, show_header=False, pad_edge=False)
    table.add_column(style="bold")
    table.add_column(overflow="fold")
    for label, value in summary_rows(scenario):
        table.add_row(label, value)
    console.print(table)
