"""The fidelity grid: which cells run, and the matched settings each side runs them with.

A cell is (variant, forward loss, one-way delay, MTU); every cell runs `seeds` times on each side.
`MATCHED` holds the settings shared by both simulators; `ns3_cell` and `tcpenergy_scenario`
express one cell in each simulator's terms (the README's mapping table lists them side by side).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

# Variant name -> (ns-3 congestion ops, ns-3 Sack, tcpenergy variant, tcpenergy cwnd_growth).
VARIANTS = {
    "newreno": ("TcpNewReno", False, "newreno", "per_ack"),
    "newreno-sack": ("TcpNewReno", True, "sack", "per_ack"),
    "linuxreno": ("TcpLinuxReno", False, "newreno", "per_byte"),
    "linuxreno-sack": ("TcpLinuxReno", True, "sack", "per_byte"),
    # ns-3's TcpCubic (like Linux) grows slow start by the segments each ACK covers, which
    # tcpenergy's CUBIC follows with cwnd_growth = "per_byte" (RFC 3465, L = 2).
    "cubic": ("TcpCubic", True, "cubic", "per_byte"),
}
LOSSES = (0.005, 0.01, 0.02, 0.05, 0.10)
DELAYS_MS = (5, 20, 65, 100)
MTUS = (512, 1500)
SEEDS = 5

# --quick: a subset that finishes in a couple of minutes.
QUICK_LOSSES = (0.01, 0.05)
QUICK_DELAYS_MS = (20, 100)
QUICK_MTUS = (1500,)
QUICK_SEEDS = 2

# Settings both simulators use in every cell (README: "Matched settings").
MATCHED = {
    "rate": "2Mbps",
    "queue": 1000,               # packets, drop-tail, each direction
    "bytes": 5_000_000,
    "initial_window": 2,         # segments
    "initial_ssthresh": 65535,   # bytes, = the largest window the receiver can advertise
    "receive_buffer": 65535,     # bytes; no window scaling, so also the advertised maximum
    "initial_rto": "1s",
    "min_rto": "1s",
    "max_rto": "60s",            # ns-3 3.44 caps its backoff at 60 s (not an attribute)
    "clock_granularity": "1ms",
    "delack_every": 2,
    "delack_timeout": "200ms",
    "limited_transmit": True,    # ns-3's default
    "stop_after": "3600s",
    "frame_overhead": 2,         # ns-3's PointToPointNetDevice adds a 2-byte PPP header
}


@dataclass(frozen=True, order=True)
class Cell:
    variant: str
    loss: float
    delay_ms: int
    mtu: int

    @property
    def label(self) -> str:
        return f"{self.variant} loss={self.loss * 100:g}% delay={self.delay_ms}ms mtu={self.mtu}"


def cells(quick: bool = False, variants=None) -> list[Cell]:
    """Every cell of the grid (or of the quick subset), in a fixed order."""
    losses, delays, mtus = ((QUICK_LOSSES, QUICK_DELAYS_MS, QUICK_MTUS) if quick
                            else (LOSSES, DELAYS_MS, MTUS))
    return [Cell(v, p, d, m) for v in (variants or VARIANTS) for m in mtus for d in delays
            for p in losses]


def ns3_cell(cell: Cell) -> dict:
    """What the ns-3 worker (ns3_cell.py) needs to build this cell."""
    cc, sack, _, _ = VARIANTS[cell.variant]
    return {**MATCHED, "variant": cell.variant, "ns3_cc": cc, "sack": sack, "loss": cell.loss,
            "delay_ms": cell.delay_ms, "mtu": cell.mtu}


def ns3_key(cell: Cell, seed: int, ns3_version: str, script_digest: str) -> str:
    """Cache key of one ns-3 run: everything that determines its result."""
    text = json.dumps({"cell": ns3_cell(cell), "seed": seed, "ns3": ns3_version,
                       "script": script_digest}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def tcpenergy_scenario(cell: Cell, rtt_sampling: str | None) -> dict:
    """The cell as a tcpenergy scenario dict (`rtt_sampling` None: the engine has no such key)."""
    _, _, variant, growth = VARIANTS[cell.variant]
    m = MATCHED
    delay = f"{cell.delay_ms}ms"
    tcp = {
        "variant": variant,
        "sack": VARIANTS[cell.variant][1],
        "cwnd_growth": growth,
        "initial_window": m["initial_window"],
        "initial_ssthresh": m["initial_ssthresh"],
        "initial_rto": m["initial_rto"],
        "min_rto": m["min_rto"],
        "max_rto": m["max_rto"],
        "clock_granularity": m["clock_granularity"],
        "delayed_ack": {"every": m["delack_every"], "timeout": m["delack_timeout"]},
        "timestamps": False,
        "window_scale": False,
        "receive_buffer": m["receive_buffer"],
        "limited_transmit": m["limited_transmit"],
        "dupack_threshold": 3,
    }
    if rtt_sampling is not None:
        tcp["rtt_sampling"] = rtt_sampling
    return {
        "name": f"fidelity-{cell.variant}-{cell.loss:g}-{cell.delay_ms}ms-{cell.mtu}",
        "stop_after": m["stop_after"],
        "path": {
            "mtu": cell.mtu,
            "frame_overhead": m["frame_overhead"],
            "forward": {"rate": m["rate"], "delay": delay, "queue": m["queue"],
                        "impairments": [{"kind": "bernoulli", "p": cell.loss}]},
            "reverse": {"rate": m["rate"], "delay": delay, "queue": m["queue"]},
        },
        "tcp": tcp,
        "traffic": {"kind": "bulk", "bytes": m["bytes"]},
    }
