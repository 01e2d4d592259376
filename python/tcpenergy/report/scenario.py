"""A short summary of a normalized scenario (what `tcpenergy validate` prints): the path and
traffic of a single-path scenario; the nodes, each link direction, channels and flows of a
network."""

from __future__ import annotations

from typing import Any, List, Mapping, Tuple

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from tcpenergy.report.units import plain
from tcpenergy.trace_files import label, mean_rate_bps


def _inline(value: Any) -> str:
    """Compact one-line form of a value: ``{kind = "bernoulli", p = 0.01}`` -> ``bernoulli(p=0.01)``."""
    if isinstance(value, Mapping):
        kind = value.get("kind")
        args = ", ".join(f"{k}={_inline(v)}" for k, v in value.items() if k != "kind")
        return f"{kind}({args})" if kind is not None else "{" + args + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_inline(v) for v in value) + "]"
    return plain(value)


def _capacity(link: Mapping[str, Any]) -> str:
    trace = link.get("trace")
    if trace is None:
        return plain(link.get("rate"))
    ms = (trace.get("ms") or []) if isinstance(trace, Mapping) else []
    count = f"{len(ms)} opportunit{'y' if len(ms) == 1 else 'ies'}"
    return (f"trace {label(trace)} ({count}, period {ms[-1] if ms else 0} ms, "
            f"mean {mean_rate_bps(trace) / 1e6:.3f} Mbit/s)")


def _direction(link: Mapping[str, Any]) -> str:
    parts = [_capacity(link), f"delay {plain(link.get('delay'))}",
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


# ---------------------------------------------------------------------------------------------
# the network form: nodes, links (each direction), channels, flows


def _link_rows(index: int, link: Mapping[str, Any]) -> List[Tuple[str, str]]:
    """One row per direction (a link with ``oneway`` has only its forward one)."""
    a, b = (list(link.get("between") or []) + ["?", "?"])[:2]
    oneway = bool(link.get("oneway")) or link.get("reverse") is None
    head = f"link {index}: {a} {'->' if oneway else '<->'} {b}"
    shared = f"mtu {plain(link.get('mtu'))}"
    if link.get("frame_overhead"):
        shared += f", frame overhead {plain(link.get('frame_overhead'))} B"
    rows = [(head, shared)]
    for src, dst, key in ((a, b, "forward"), (b, a, "reverse")):
        if link.get(key) is not None:
            rows.append((f"  {src} -> {dst}", _direction(link[key])))
    return rows


def _flow_row(flow: Mapping[str, Any]) -> Tuple[str, str]:
    transport = plain(flow.get("transport"))
    if flow.get("transport") == "tcp":
        transport += f" {plain((flow.get('tcp') or {}).get('variant'))}"
    window = f"from {plain(flow.get('start'))}"
    if flow.get("stop") is not None:
        window += f" to {plain(flow.get('stop'))}"
    route = f"{plain(flow.get('from'))} -> {plain(flow.get('to'))}"
    return (f"flow {plain(flow.get('name'))}",
            f"{route}, {transport}, {_inline(flow.get('traffic'))}, {window}")


def _node_rows(nodes: Mapping[str, Any]) -> List[Tuple[str, str]]:
    """Nodes grouped by their profile: ``a, b, c, d: singh2002-toshiba-wavelan``."""
    by_profile: dict = {}
    for name, node in nodes.items():
        settings = node if isinstance(node, Mapping) else {}
        extra = {k: v for k, v in settings.items() if k != "profile"}
        what = _profile(settings.get("profile"))
        if extra:
            what += f", {_inline(extra)[1:-1]}"
        by_profile.setdefault(what, []).append(str(name))
    return [("nodes", "; ".join(f"{', '.join(names)}: {what}"
                                for what, names in by_profile.items()))]


def network_summary_rows(scenario: Mapping[str, Any]) -> List[Tuple[str, str]]:
    tcp = scenario.get("tcp") or {}
    energy = scenario.get("energy") or {}
    rows = [
        ("name", plain(scenario.get("name"))),
        ("seed", plain(scenario.get("seed"))),
        ("stop after", plain(scenario.get("stop_after"))),
        ("variant", plain(tcp.get("variant"))),
        ("radio policy", _inline(energy.get("radio_policy"))),
    ]
    rows += _node_rows(scenario.get("nodes") or {})
    for i, link in enumerate(scenario.get("links") or []):
        rows += _link_rows(i, link)
    for channel in scenario.get("channels") or []:
        rest = {k: v for k, v in channel.items() if k != "name"}
        rows.append((f"channel {plain(channel.get('name'))}", _inline(rest)[1:-1]))
    rows += [_flow_row(flow) for flow in scenario.get("flows") or []]
    return rows


def is_network(scenario: Mapping[str, Any]) -> bool:
    return "nodes" in scenario and "path" not in scenario


def print_summary(scenario: Mapping[str, Any], console: Console) -> None:
    table = Table(box=box.SIMPLE, show_header=False, pad_edge=False)
    table.add_column(style="bold")
    table.add_column(overflow="fold")
    rows = network_summary_rows(scenario) if is_network(scenario) else summary_rows(scenario)
    for label, value in rows:
        # Text, not str: names and values are the user's, and may hold rich markup such as "[b]".
        table.add_row(Text(label), Text(value))
    console.print(table)
