"""Result records: flattening nested records into one level of dotted keys.

A network scenario's record lists its flows (``"flows": [{"name": "bulk", ...}, ...]``); a list
has no stable column names, so flattening keys each flow by its name: ``flows.bulk.goodput_bps``.
Node and link tables are keyed by name already: ``nodes.a.total_j``, ``links.a->b.dropped_queue``.
docs/units-and-scenarios.md "Network records" lists the keys; docs/experiments.md the columns.
"""

from __future__ import annotations

import math
from typing import Any, Dict, Mapping, Optional, Tuple

FLOWS = "flows"

# ---------------------------------------------------------------------------------------------
# the range of each field

Range = Tuple[float, float]
UNBOUNDED: Range = (-math.inf, math.inf)
NON_NEGATIVE: Range = (0.0, math.inf)
FRACTION: Range = (0.0, 1.0)
AT_MOST_ONE: Range = (-math.inf, 1.0)

# The operations a node's CPU is charged for: `cpu.<end>.<op>`, `nodes.<node>.cpu_ops.<op>`.
CPU_OPERATIONS = ("ack_received", "ack_sent", "fast_path", "ooo_queued", "paws_check",
                  "sack_block_generated", "sack_block_processed", "scoreboard_update",
                  "segment_received", "segment_sent", "slow_path", "timer_expired", "timer_set")
_NON_NEGATIVE_FIELDS = (
    # the run
    "seed", "sim_time_s", "events", "wall_s",
    # a flow (`flow.*`, `flows.<name>.*`): counts, bytes, seconds, rates
    "bytes_delivered", "completion_s", "goodput_bps", "throughput_bps", "segments_sent",
    "data_segments_sent", "retransmissions", "timeouts", "fast_retransmits", "acks_sent",
    "sack_blocks_sent", "dupacks_received", "ecn_reductions", "route_failures", "probes_sent",
    "frozen_s", "out_of_order_segments", "duplicate_segments", "wire_bytes_sender",
    "wire_bytes_receiver", "window_probes", "zero_windows_sent", "beyond_window_segments",
    "messages_sent", "messages_delivered", "datagrams_sent", "datagrams_delivered",
    "arrived_after_stop", "busy_s", "start_s", "stop_s",
    # an end's or a node's energy (`energy.<end>.*`, `nodes.<node>.*`)
    "total_j", "idle_j", "idealized_j", "per_bit_total_uj", "per_bit_idealized_uj", "idle_s",
    "cpu_busy_s", "cpu_card_s", "radio_idle_s", "radio_overhear_s", "radio_rx_bytes", "radio_rx_frames",
    "radio_rx_s", "radio_sleep_s", "radio_tx_bytes", "radio_tx_frames", "radio_tx_s",
    "radio_wakeups", "radio_waking_s", "window_s", "forward_cycles", "forwarded_packets",
    "originated_packets", "received_packets",
    # a link direction (`path.<dir>.*`, `links.<a->b>.*`, a channel's interfaces), a pipe
    "bytes_sent", "packets_sent", "packets_delivered", "dropped_queue", "dropped_channel",
    "dropped_red", "marked_ce", "held_outage", "cross_offered", "cross_dropped", "queued",
    "packets", "dropped",
    # a channel (`channels.<name>.*`)
    "data_attempts", "delivered", "retries", "collisions", "rts_collisions", "rts_sent",
    "cts_sent", "beacons_sent", "ps_polls_sent", "drops_queue", "drops_retry_limit",
    "duplicates", "data_rate_bps", "ampdus_sent", "ampdu_mpdus", "block_acks_sent",
    "block_ack_reqs_sent", "nulls_sent",
    # the network (`network.*`)
    "flows", "nodes", "wire_bytes", "packets_in_flight", "unfavored_flows",
    # seed 001's overheads (docs/models/metrics.md): bytes sent >= bytes delivered, transfer time
    # >= the payload's serialization time at the bottleneck
    "efficiency.data_overhead", "efficiency.time_overhead", "efficiency.overhead",
    "efficiency.tmax_bps",
    # a node's battery (docs/models/battery.md)
    "battery.capacity_j", "battery.capacity_mah", "battery.lifetime_s", "battery.remaining_j",
    # a split connection's relay
    "split.buffer_bytes", "split.relay_max_bytes", "split.relayed_bytes",
    # groups whose every field is an energy, a count or a latency
    "breakdown_j.*", "cpu_ops.*", "latency_ms.*", "packet_latency_ms.*",
    *CPU_OPERATIONS,
)
_FRACTION_FIELDS = (
    # Jain's index (Σx)² / (n Σx²) lies in [1/n, 1]; the others are shares
    "jain_fairness", "risk_index", "busy_fraction", "idle_fraction", "battery.remaining_fraction",
    # seed 001's efficiency 1 / (1 + O), O >= 0
    "efficiency.energy_efficiency",
    # booleans: a mean of them is a share
    "complete", "unfavored", "closed",
)
# The range [low, high] each numeric field of a result record is defined to lie in
# (docs/units-and-scenarios.md "Result record" and "Network records", docs/models/metrics.md), by
# the field's name: its last dotted part; for a field of a group in the record, the group and its
# name (`efficiency.uar`), or the group alone (`breakdown_j.*`). A field not named here has no
# declared range.
FIELD_RANGES: Dict[str, Range] = {
    **{name: NON_NEGATIVE for name in _NON_NEGATIVE_FIELDS},
    **{name: FRACTION for name in _FRACTION_FIELDS},
    # seed 004's efficiency metrics (docs/models/metrics.md) are signed: EEE(a, b) = a (T - G) /
    # Tmax + b (Tmax - T) / Tmax is negative once the throughput T exceeds Tmax enough, EP =
    # 1 - EEE(1, 0.3) then exceeds 1 and is negative when EEE(1, 0.3) exceeds 1, and
    # UAR = 1 - [k T / Tmax + l G / T] (k, l in [0, 1]) is at most 1 and negative when T > Tmax.
    "efficiency.eee": UNBOUNDED,
    "efficiency.eee_ideal": UNBOUNDED,
    "efficiency.energy_potential": UNBOUNDED,
    "efficiency.uar": AT_MOST_ONE,
}


def field_range(column: str) -> Optional[Range]:
    """The declared range of a result field, given as its flat column (``network.efficiency.uar``,
    ``flows.bulk.latency_ms.p95``, ``energy.sender.total_j``); None for a column that is not a
    declared field of a record."""
    parts = column.split(".")
    keys = [column] if len(parts) == 1 else [".".join(parts[-2:]), parts[-2] + ".*", parts[-1]]
    for key in keys:
        found = FIELD_RANGES.get(key)
        if found is not None:
            return found
    return None


def _named_tables(value: Any) -> bool:
    """A non-empty list of tables, each with a distinct string ``name``."""
    if not isinstance(value, list) or not value:
        return False
    if not all(isinstance(item, Mapping) and isinstance(item.get("name"), str) for item in value):
        return False
    return len({item["name"] for item in value}) == len(value)


def flows_by_name(record: Mapping[str, Any]) -> Mapping[str, Any]:
    """The record with its ``flows`` list as a table keyed by flow name (each flow without its
    ``name``, which is now the key); a record without such a list is returned as it is."""
    flows = record.get(FLOWS)
    if not _named_tables(flows):
        return record
    out = dict(record)
    out[FLOWS] = {flow["name"]: {k: v for k, v in flow.items() if k != "name"} for flow in flows}
    return out


def _flatten_tables(table: Mapping[str, Any], prefix: str) -> dict:
    flat: dict = {}
    for key, value in table.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            flat.update(_flatten_tables(value, dotted + "."))
        else:
            flat[dotted] = value
    return flat


def flatten(record: Mapping[str, Any], prefix: str = "") -> dict:
    """``{"flow": {"goodput_bps": 1}}`` -> ``{"flow.goodput_bps": 1}``.

    Non-empty tables are flattened; other values, lists included, stay values, except a
    record's top-level ``flows`` list, which is keyed by flow name (:func:`flows_by_name`).
    """
    return _flatten_tables(flows_by_name(record), prefix)
