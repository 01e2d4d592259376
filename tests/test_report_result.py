"""The `tcpenergy run` table explains its figures: idle energy is a whole-node quantity."""

from __future__ import annotations

import io
import re

from rich.console import Console

from tcpenergy.report.result import print_table

RECORD = {
    "scenario": "quickstart", "variant": "sack", "seed": 1, "sim_time_s": 40.0, "events": 10,
    "complete": True, "flow": {"goodput_bps": 1.0e6},
    "energy": {node: {"total_j": 536.9, "idle_j": 148.5, "idealized_j": 388.4,
                      "per_bit_total_uj": 13.4, "per_bit_idealized_uj": 9.7,
                      "breakdown_j": {"base": 501.3, "radio_idle": 6.1, "cpu": 0.4}}
               for node in ("sender", "receiver")},
}


def rendered(record) -> str:
    out = io.StringIO()
    print_table(record, Console(file=out, width=200, color_system=None))
    return re.sub(r"\s+", " ", out.getvalue())


def test_idle_energy_row_points_to_a_note_saying_it_is_the_whole_node_not_the_radio_idle_state():
    # docs/models/energy.md "Idle energy": the node is system-idle when the radio neither sends
    # nor receives and the CPU is not busy (seed 000 section 2, whole-system idle); the
    # breakdown's "radio idle" is one part of it, so the two figures differ by the base power.
    text = rendered(RECORD)
    assert "Idle energy * 148.500 J" in text
    assert "radio idle 6.100 J" in text
    note = text[text.index("* Idle energy:"):]
    assert "whole node's energy (platform, radio and CPU together)" in note
    assert "not the radio's idle state alone" in note
    assert "Idealized energy = total - idle energy" in note


def test_a_bulk_flow_shows_no_latency_because_its_one_message_latency_is_its_completion_time():
    # docs/models/metrics.md: latency_ms is per application message; a bulk transfer is one
    # message, so its "latency" is the completion time (issue #26, reports).
    from tcpenergy.report.result import _latency

    bulk = {"traffic": "bulk", "latency_ms": {"mean": 122717.9, "p95": 122717.9}}
    voice = {"traffic": "cbr", "latency_ms": {"mean": 71.25, "p95": 90.5}}
    assert _latency(bulk, "mean") == "-" and _latency(bulk, "p95") == "-"
    assert _latency(voice, "mean") == "71.250"
