"""A result record as a rich table, JSON or CSV."""

from __future__ import annotations

import csv
import io
import json
from typing import Any, Mapping

from rich import box
from rich.console import Console, Group
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


def _title(record: Mapping[str, Any]) -> Text:
    title = Text()
    title.append(str(record.get("scenario", "scenario")), style="bold")
    title.append(f"  variant {plain(record.get('variant'))}  seed {plain(record.get('seed'))}")
    title.append(f"  simulated {fixed(record.get('sim_time_s'), 's')}")
    title.append(f"  events {count(record.get('events'))}")
    if record.get("complete") is False:
        title.append("\nINCOMPLETE: the run reached stop_after before the transfer finished",
                     style="bold red")
    return title


def _flow_table(flow: Mapping[str, Any]) -> Table:
    table = Table(title="Flow", box=box.SIMPLE_HEAD, title_justify="left")
    table.add_column("Metric")
    table.add_column("Value", justify="right")
    for label, key, fmt in _FLOW_ROWS:
        if key in flow:
            table.add_row(label, fmt(flow[key]))
    return table


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


def print_table(record: Mapping[str, Any], console: Console) -> None:
    console.print(Group(_title(record), _flow_table(record.get("flow") or {}),
                        _energy_table(record.get("energy") or {})))


def json_text(record: Mapping[str, Any]) -> str:
    return json.dumps(record, indent=2)


def csv_text(record: Mapping[str, Any]) -> str:
    """A header line of dotted keys and one line of values."""
    flat = flatten(record)
    row = [json.dumps(v) if isinstance(v, (list, dict)) else v for v in flat.values()]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(flat.keys())
    writer.writerow(row)
    return out.getvalue()
