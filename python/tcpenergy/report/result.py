"""A result record as a rich table, JSON or CSV.

A single-path record is two tables (the flow's metrics; the sender's and receiver's energy); a
network record is a row per flow, a row per node and the network's totals.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any, List, Mapping, Optional, Sequence

from rich import box
from rich.console import Console, Group
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from tcpenergy.records import flatten
from tcpenergy.report.units import count, fixed, plain, si

# (label, key in record["flow"], formatter)
_FLOW_ROWS = (
    ("Goodput", "goodput_bps", lambda v: si(v, "bit/s")),
    ("Throughput", "throughput_bps", lambda v: si(v, "bit/s")),
    ("Completion time", "completion_s", lambda v: fixed(v, "s")),
    ("Bytes delivered", "bytes_delivered", count),
    ("Segments sent", "segments_sent", count),
    ("Retransmissions", "retransmissions", count),
    ("Timeouts", "timeouts", count),
    ("Fast retransmits", "fast_retransmits", count),
    ("ACKs sent", "acks_sent", count),
    ("SACK blocks sent", "sack_blocks_sent", count),
)

# Why "Idle energy" is much larger than the breakdown's "radio idle": it is a whole-node figure.
IDLE_NOTE = ("* Idle energy: the whole node's energy (platform, radio and CPU together) during the "
             "time the transfer waits, i.e. while the radio neither sends nor receives and the CPU "
             "is not busy; not the radio's idle state alone, which is 'radio idle' in the "
             "breakdown. Idealized energy = total - idle energy.")

# (label, key in an energy record, formatter)
_ENERGY_ROWS = (
    ("Total energy", "total_j", lambda v: fixed(v, "J")),
    ("Idle energy *", "idle_j", lambda v: fixed(v, "J")),
    ("Idealized energy", "idealized_j", lambda v: fixed(v, "J")),
    ("Energy per bit", "per_bit_total_uj", lambda v: fixed(v, "µJ")),
    ("Idealized per bit", "per_bit_idealized_uj", lambda v: fixed(v, "µJ")),
)


def is_network(record: Mapping[str, Any]) -> bool:
    """A record of the network form of scenario (per-flow, per-node and network tables)."""
    return isinstance(record.get("flows"), list) or isinstance(record.get("nodes"), Mapping)


def _title(record: Mapping[str, Any]) -> Text:
    title = Text()
    title.append(str(record.get("scenario", "scenario")), style="bold")
    title.append(f"  variant {plain(record.get('variant'))}  seed {plain(record.get('seed'))}")
    title.append(f"  simulated {fixed(record.get('sim_time_s'), 's')}")
    title.append(f"  events {count(record.get('events'))}")
    if record.get("complete") is False:
        what = "every flow finished" if is_network(record) else "the transfer finished"
        title.append(f"\nINCOMPLETE: the run reached stop_after before {what}",
                     style="bold red")
    return title


def _metric_table(title: str, rows: Any, values: Mapping[str, Any]) -> Table:
    """A two-column Metric / Value table of the `rows` (label, key, format) present in `values`."""
    table = Table(title=title, box=box.SIMPLE_HEAD, title_justify="left")
    table.add_column("Metric")
    table.add_column("Value", justify="right")
    for label, key, fmt in rows:
        if key in values:
            table.add_row(label, fmt(values[key]))
    return table


def _flow_table(flow: Mapping[str, Any]) -> Table:
    return _metric_table("Flow", _FLOW_ROWS, flow)


def _energy_table(energy: Mapping[str, Any]) -> Table:
    sender = energy.get("sender") or {}
    receiver = energy.get("receiver") or {}
    table = Table(title="Energy", box=box.SIMPLE_HEAD, title_justify="left",
                  caption=IDLE_NOTE, caption_justify="left")
    table.add_column("Metric")
    table.add_column("Sender", justify="right")
    table.add_column("Receiver", justify="right")
    for label, key, fmt in _ENERGY_ROWS:
        table.add_row(label, fmt(sender.get(key)), fmt(receiver.get(key)))
    parts = list(sender.get("breakdown_j") or {})
    parts += [p for p in receiver.get("breakdown_j") or {} if p not in parts]
    if parts:
        table.add_section()
        table.add_row(Text("Breakdown", style="italic"), "", "")
        for part in parts:
            table.add_row(
                "  " + part.replace("_", " "),
                fixed((sender.get("breakdown_j") or {}).get(part), "J"),
                fixed((receiver.get("breakdown_j") or {}).get(part), "J"),
            )
    return table


# ---------------------------------------------------------------------------------------------
# network records: a row per flow, a row per node, the network's totals


def _latency(flow: Mapping[str, Any], key: str) -> str:
    """A flow's message latency. A bulk transfer is a single message, so the record's latency of a
    bulk flow is its completion time, not a latency: shown as "-" (docs/models/metrics.md)."""
    if flow.get("traffic") == "bulk":
        return "-"
    return fixed((flow.get("latency_ms") or {}).get(key))


def _transport(flow: Mapping[str, Any]) -> str:
    transport, variant = flow.get("transport"), flow.get("variant")
    if transport is None or variant in (None, transport):
        return plain(transport if transport is not None else variant)
    return f"{transport} {variant}"


# (header, cell of a flow of record["flows"], right-aligned). Units sit in the headers, which
# take two lines, to keep the rows narrow. A console too narrow for one row per flow gets the
# delivery columns and the loss and latency columns as two tables.
_FLOW_NAME = ("Flow", lambda f: plain(f.get("name")), False)
_FLOWS_DELIVERY = (
    _FLOW_NAME,
    ("Route", lambda f: f"{plain(f.get('from'))} -> {plain(f.get('to'))}", False),
    ("Transport", _transport, False),
    ("Traffic", lambda f: plain(f.get("traffic")), False),
    ("Delivered\n(bytes)", lambda f: count(f.get("bytes_delivered")), True),
    ("Goodput", lambda f: si(f.get("goodput_bps"), "bit/s"), True),
    ("Complete", lambda f: plain(f.get("complete")), False),
)
_FLOWS_LOSS = (
    ("Retrans-\nmissions", lambda f: count(f.get("retransmissions")), True),
    ("Time-\nouts", lambda f: count(f.get("timeouts")), True),
    ("Latency\nmean (ms)", lambda f: _latency(f, "mean"), True),
    ("Latency\np95 (ms)", lambda f: _latency(f, "p95"), True),
)

# (header, key in a node's table of record["nodes"], formatter)
_NODES_COLUMNS = (
    ("Total\nenergy (J)", "total_j", fixed),
    ("Idealized\nenergy (J)", "idealized_j", fixed),
    ("Energy per\nbit (µJ)", "per_bit_total_uj", fixed),
    ("Radio\ntx (s)", "radio_tx_s", fixed),
    ("Radio\nrx (s)", "radio_rx_s", fixed),
    ("Forwarded\npackets", "forwarded_packets", count),
)

# (label, key in record["network"], formatter)
_NETWORK_ROWS = (
    ("Goodput", "goodput_bps", lambda v: si(v, "bit/s")),
    ("Wire bytes", "wire_bytes", count),
    ("Total energy", "total_j", lambda v: fixed(v, "J")),
    ("Idealized energy", "idealized_j", lambda v: fixed(v, "J")),
    ("Jain's fairness", "jain_fairness", lambda v: fixed(v)),
    ("Flows", "flows", count),
    ("Nodes", "nodes", count),
)

# What a relay's "energy per bit" divides by: every flow's delivered bits, not its own.
NODE_ENERGY_NOTE = ("Energy per bit: the node's energy per application bit delivered by the "
                    "flows it serves (those it is an end of or relays). Idealized energy = total - idle energy (the node's energy "
                    "while its radio neither sends nor receives and its CPU is not busy).")


def _flows_table(flows: Sequence[Mapping[str, Any]], columns: Sequence[tuple],
                 title: str) -> Table:
    table = Table(title=title, box=box.SIMPLE_HEAD, title_justify="left")
    for header, _, right in columns:
        table.add_column(header, justify="right" if right else "left")
    for flow in flows:
        # Text, not str: a flow's name is the user's, and may hold rich markup such as "[b]".
        table.add_row(*(Text(cell(flow)) for _, cell, _ in columns))
    return table


def _flows_tables(flows: Sequence[Mapping[str, Any]], console: Console) -> List[Table]:
    """One table, a row per flow; cut in two (each row led by the flow's name) when that table
    is wider than the console, rather than let every cell be squeezed and cut short."""
    whole = _flows_table(flows, _FLOWS_DELIVERY + _FLOWS_LOSS, "Flows")
    natural = Measurement.get(console, console.options.update_width(1_000_000), whole).maximum
    if natural <= console.width:
        return [whole]
    return [_flows_table(flows, _FLOWS_DELIVERY, "Flows"),
            _flows_table(flows, (_FLOW_NAME,) + _FLOWS_LOSS, "Flows: losses and latency")]


def _nodes_table(nodes: Mapping[str, Mapping[str, Any]]) -> Table:
    table = Table(title="Nodes", box=box.SIMPLE_HEAD, title_justify="left",
                  caption=NODE_ENERGY_NOTE, caption_justify="left")
    table.add_column("Node")
    for header, _, _ in _NODES_COLUMNS:
        table.add_column(header, justify="right")
    for name, node in nodes.items():
        table.add_row(Text(str(name)), *(fmt(node.get(key)) for _, key, fmt in _NODES_COLUMNS))
    return table


def _network_table(network: Mapping[str, Any]) -> Table:
    return _metric_table("Network", _NETWORK_ROWS, network)


# (header, key in record["channels"][name], formatter): what each shared 802.11 channel's MAC did.
_CHANNEL_COLUMNS = (
    ("Data\nattempts", "data_attempts", count),
    ("MAC\nretries", "retries", count),
    ("Colli-\nsions", "collisions", count),
    ("Retry-\nlimit\ndrops", "drops_retry_limit", count),
    ("Queue\ndrops", "drops_queue", count),
    ("RTS\nsent", "rts_sent", count),
    ("Busy", "busy_fraction", lambda v: "" if v is None else f"{100 * float(v):.1f} %"),
)


def _channels_table(channels: Mapping[str, Mapping[str, Any]]) -> Table:
    table = Table(title="Channels", box=box.SIMPLE_HEAD, title_justify="left",
                  caption="Busy: share of the run during which some station was transmitting.",
                  caption_justify="left")
    table.add_column("Channel")
    for header, _, _ in _CHANNEL_COLUMNS:
        table.add_column(header, justify="right")
    for name, channel in channels.items():
        table.add_row(Text(str(name)), *(fmt(channel.get(key)) for _, key, fmt in _CHANNEL_COLUMNS))
    return table


def _power_save_table(channels: Mapping[str, Mapping[str, Any]],
                      nodes: Mapping[str, Mapping[str, Any]]) -> Optional[Table]:
    """Stations of channels with an access point (which beacons): what power save did."""
    rows = [(name, station, counters) for name, channel in channels.items()
            if (channel.get("beacons_sent") or 0) > 0
            for station, counters in (channel.get("stations") or {}).items()]
    if not rows:
        return None
    table = Table(title="Access points and power save", box=box.SIMPLE_HEAD, title_justify="left",
                  caption="Radio sleep: time the station's radio dozed (radio_policy = \"psm\").",
                  caption_justify="left")
    for header in ("Channel", "Station", "Beacons", "PS-Polls", "Radio sleep (s)", "Wake-ups"):
        table.add_column(header, justify="left" if header in ("Channel", "Station") else "right")
    for name, station, counters in rows:
        node = nodes.get(station) or {}
        table.add_row(Text(str(name)), Text(str(station)), count(counters.get("beacons_sent")),
                      count(counters.get("ps_polls_sent")), fixed(node.get("radio_sleep_s")),
                      count(node.get("radio_wakeups")))
    return table


def _minutes(seconds: Any) -> str:
    return "" if seconds is None else f"{float(seconds) / 60:,.1f}"


def _battery_table(record: Mapping[str, Any]) -> Optional[Table]:
    """Nodes with a battery: its model, capacity, lifetime and what is left."""
    nodes = {name: node["battery"] for name, node in (record.get("nodes") or {}).items() if node.get("battery")}
    if not nodes:
        return None
    stop = record.get("stop")
    caption = ("Lifetime: when the battery was empty; blank if it lasted the run." +
               (f" The run ran until {stop.split(':', 1)[1]}'s battery was empty." if stop else ""))
    table = Table(title="Batteries", box=box.SIMPLE_HEAD, title_justify="left", caption=caption,
                  caption_justify="left")
    for header in ("Node", "Model", "Capacity (mAh)", "Capacity (J)", "Lifetime (min)", "Remaining (J)"):
        table.add_column(header, justify="left" if header in ("Node", "Model") else "right")
    for name, b in nodes.items():
        table.add_row(Text(str(name)), str(b.get("model", "")), fixed(b.get("capacity_mah")),
                      fixed(b.get("capacity_j")), _minutes(b.get("lifetime_s")), fixed(b.get("remaining_j")))
    return table


def _network_group(record: Mapping[str, Any], console: Console) -> Group:
    parts = [_title(record), *_flows_tables(record.get("flows") or [], console),
             _nodes_table(record.get("nodes") or {})]
    batteries = _battery_table(record)
    if batteries is not None:
        parts.append(batteries)
    if record.get("channels"):
        parts.append(_channels_table(record["channels"]))
        power_save = _power_save_table(record["channels"], record.get("nodes") or {})
        if power_save is not None:
            parts.append(power_save)
    parts.append(_network_table(record.get("network") or {}))
    return Group(*parts)


def print_table(record: Mapping[str, Any], console: Console) -> None:
    if is_network(record):
        console.print(_network_group(record, console))
        return
    console.print(Group(_title(record), _flow_table(record.get("flow") or {}),
                        _energy_table(record.get("energy") or {})))


def json_text(record: Mapping[str, Any]) -> str:
    return json.dumps(record, indent=2)


def csv_text(record: Mapping[str, Any]) -> str:
    """A header line of dotted keys and one line of values (a network record's flows keyed by
    name: ``flows.<name>.goodput_bps``, as in the runs frame)."""
    flat = flatten(record)
    row = [json.dumps(v) if isinstance(v, (list, dict)) else v for v in flat.values()]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(flat.keys())
    writer.writerow(row)
    return out.getvalue()
