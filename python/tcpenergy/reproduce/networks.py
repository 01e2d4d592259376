"""The two networks seeds 000 and 002 run on: the measured 802.11b chain (the testbed) and the
single-path abstraction of it, and the one table between their keys (to write a testbed sweep from
a path sweep's axes, and to read testbed runs under the path form's column names)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Dict, Mapping, Optional, Sequence

from tcpenergy.reproduce.common import Experiment

# The measured chain: four 802.11b stations in one collision domain, static routes a -> b -> c -> d,
# a Dummynet at node c (scenarios/singh2002-testbed.toml); or the single-path abstraction of that
# chain (a 2 Mbit/s end-to-end link with delays and impairments per direction).
TESTBED = "testbed"
PATH = "path"
NETWORKS = (TESTBED, PATH)
NETWORK_FILE = "network"  # OUT/network: the network OUT's reproduction ran on (a rerun resumes it)
# The default of `tcpenergy reproduce` and of the papers' run (docs/reproduce/seed-000.md,
# "Network"): the testbed, the 802.11b chain with Dummynet that the papers measured. The path is
# the faster abstraction (each chain run simulates every 802.11 frame on four stations), kept as
# `--network path` for comparison and for the profile sensitivity sweeps.
DEFAULT_NETWORK = TESTBED

# The testbed's pipes at node c: index 0 towards d (the data direction, always present: it holds the
# delay), index 1 towards b (the ACK direction, present when the condition impairs ACKs too).
FORWARD_PIPE = ("c", "d")
REVERSE_PIPE = ("c", "b")
SENDER_NODE, RECEIVER_NODE = "a", "d"

# Path-form keys -> the testbed's keys, exact and by prefix; one table read both ways: to write a
# testbed sweep from a path sweep's axes, and to give testbed runs the path-form column names the
# claims read (``logical_columns``).
RTT_AXIS = "rtt"
_EXACT_KEYS = {
    RTT_AXIS: "pipes.0.delay",  # the whole average RTT is Dummynet's delay on c -> d
    "path.mtu": "channels.0.mtu",
    "traffic.bytes": "flows.0.traffic.bytes",
    "energy.sender": f"nodes.{SENDER_NODE}.profile",
    "energy.receiver": f"nodes.{RECEIVER_NODE}.profile",
}
_PREFIX_KEYS = (
    ("path.forward.impairments.", "pipes.0.impairments."),
    ("path.reverse.impairments.", "pipes.1.impairments."),
    ("energy.sender.", f"nodes.{SENDER_NODE}.profile."),
    ("energy.receiver.", f"nodes.{RECEIVER_NODE}.profile."),
)
# What the testbed's records call the path form's per-direction counters (the Dummynet pipes).
_RESULT_COLUMNS = {
    "path.forward.packets_sent": "pipes.{}->{}.packets".format(*FORWARD_PIPE),
    "path.forward.dropped_channel": "pipes.{}->{}.dropped".format(*FORWARD_PIPE),
    "path.reverse.packets_sent": "pipes.{}->{}.packets".format(*REVERSE_PIPE),
    "path.reverse.dropped_channel": "pipes.{}->{}.dropped".format(*REVERSE_PIPE),
}


def check_network(network: str) -> str:
    if network not in NETWORKS:
        raise ValueError(f"network must be one of {', '.join(NETWORKS)}, got {network!r}")
    return network


def choose_network(network: Optional[str], out_dir: Path) -> str:
    """The network a reproduction runs on: ``network`` when given, else the one OUT's reproduction
    ran on, else ``DEFAULT_NETWORK``."""
    return check_network(network or recorded_network(Path(out_dir)) or DEFAULT_NETWORK)


def testbed_key(key: str) -> str:
    """The testbed's key for a path-form sweep key (``path.mtu`` -> ``channels.0.mtu``); keys that do
    not name the path (``tcp.variant``) are the same in both forms."""
    if key in _EXACT_KEYS:
        return _EXACT_KEYS[key]
    for path_prefix, testbed_prefix in _PREFIX_KEYS:
        if key.startswith(path_prefix):
            return testbed_prefix + key[len(path_prefix):]
    if key.startswith("path.") or key.startswith("energy.sender") or key.startswith("energy.receiver"):
        raise ValueError(f"{key} has no counterpart on the testbed chain")
    return key


def _path_key(key: str) -> Optional[str]:
    """The path-form name of a testbed key or result column, or None."""
    for path_key, testbed in _EXACT_KEYS.items():
        if key == testbed:
            return path_key
    for path_key, testbed in _RESULT_COLUMNS.items():
        if key == testbed:
            return path_key
    for path_prefix, testbed_prefix in _PREFIX_KEYS:
        if key.startswith(testbed_prefix):
            return path_prefix + key[len(testbed_prefix):]
    return None


def logical_columns(frame):
    """``frame`` with the testbed runs' columns also under the path-form names the claims and reports
    read (``channels.0.mtu`` -> ``path.mtu``, ``label.pipes.0.delay`` -> ``label.rtt``,
    ``pipes.c->d.dropped`` -> ``path.forward.dropped_channel``, ...): filled only where the path-form
    column has no value, so path runs are left as they are. The one place the two forms meet."""
    import pandas as pd

    filled: Dict[str, Any] = {}
    for column in frame.columns:
        label = column.startswith("label.")
        name = _path_key(column[len("label."):] if label else column)
        if name is None or (name == RTT_AXIS and not label):  # rtt is an axis, never a scenario key
            continue
        target = ("label." + name) if label else name
        filled[target] = (frame[target].where(frame[target].notna(), frame[column])
                          if target in frame.columns else frame[column])
    if not filled:
        return frame
    kept = frame.drop(columns=[c for c in filled if c in frame.columns])
    out = pd.concat([kept, pd.DataFrame(filled, index=frame.index)], axis=1)
    return out[[c for c in frame.columns] + [c for c in filled if c not in frame.columns]]


def testbed_experiment(exp: Experiment, base: Dict[str, Any], description: Optional[str] = None) -> Experiment:
    """``exp`` on the testbed chain: ``base`` (a network scenario) and every axis and fixed key
    translated by :func:`testbed_key`."""
    return Experiment(exp.name, description or exp.description, base,
                      {testbed_key(k): list(v) for k, v in exp.axes.items()}, exp.repetitions,
                      {testbed_key(k): v for k, v in exp.fixed.items()},
                      list(exp.seeds) if exp.seeds is not None else None)


def testbed_scenario(name: str, forward: Sequence[Mapping[str, Any]], reverse: Sequence[Mapping[str, Any]], *,
                     delay: str, tcp: Mapping[str, Any], device: str, mtu: int = 1500, transfer: str = "5MB",
                     sender: Any = None, radio_policy: str = "always_on", rts_threshold: Any = "off",
                     stop_after: Optional[str] = None) -> Dict[str, Any]:
    """Seeds 000/002's testbed (scenarios/singh2002-testbed.toml) as a network scenario: four laptops
    with 11 Mbit/s 802.11b cards in one collision domain (control frames at 2 Mbit/s, long
    preamble), static routes a -> b -> c -> d and back, one bulk transfer a -> d, and Dummynet at c:
    a pipe towards d with ``delay`` and the ``forward`` impairments (data packets), and, when
    ``reverse`` is not empty, a pipe towards b with those impairments (ACKs). ``sender``: the
    profile of node a when it is not ``device``."""
    pipes = [{"from": FORWARD_PIPE[0], "to": FORWARD_PIPE[1], "delay": delay,
              "impairments": [dict(i) for i in forward]}]
    if reverse:
        pipes.append({"from": REVERSE_PIPE[0], "to": REVERSE_PIPE[1], "delay": "0ms",
                      "impairments": [dict(i) for i in reverse]})
    nodes: Dict[str, Any] = {n: {} for n in "abcd"}
    if sender is not None:
        nodes[SENDER_NODE] = {"profile": copy.deepcopy(sender)}
    scenario: Dict[str, Any] = {
        "name": name,
        "seed": 1,
        "routes": [["a", "b", "c", "d"], ["d", "c", "b", "a"]],
        "tcp": dict(tcp),
        "energy": {"default_profile": device, "radio_policy": radio_policy},
        "nodes": nodes,
        "channels": [{"name": "adhoc", "standard": "802.11b", "nodes": ["a", "b", "c", "d"],
                      "data_rate": "11Mbps", "basic_rate": "2Mbps", "preamble": "long",
                      "rts_threshold": rts_threshold, "mtu": mtu}],
        "pipes": pipes,
        "flows": [{"name": "ttcp", "from": SENDER_NODE, "to": RECEIVER_NODE, "transport": "tcp",
                   "traffic": {"kind": "bulk", "bytes": transfer}}],
    }
    if stop_after is not None:
        scenario["stop_after"] = stop_after
    return scenario


def recorded_network(out_dir: Path) -> Optional[str]:
    """The network OUT's reproduction ran on (OUT/network), or None."""
    marker = Path(out_dir) / NETWORK_FILE
    try:
        text = marker.read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return text if text in NETWORKS else None


def record_network(out_dir: Path, network: str) -> None:
    (Path(out_dir) / NETWORK_FILE).write_text(network + "\n", encoding="utf-8")


# --------------------------------------------------------------------------------------------
# The loss process (the "loss-process" reading of seeds 000 and 002)
# --------------------------------------------------------------------------------------------

PER_PACKET, PER_BIT = "per-packet", "per-bit"
# Under the per-bit reading a condition's loss rate is the loss of a packet of this size, the
# papers' largest MTU; smaller packets and ACKs are lost as under independent bit errors.
LOSS_REFERENCE_BYTES = 1500


def with_loss_process(exp: Experiment, process: str) -> Experiment:
    """``exp`` with its random packet losses read as ``process``: ``per-packet`` (Dummynet's packet
    loss rate, whatever the size: the experiment as defined) or ``per-bit`` (every ``bernoulli``
    impairment of its base scenario gets ``reference_bytes``, so its rate is that of a
    ``LOSS_REFERENCE_BYTES`` packet)."""
    import dataclasses

    if process == PER_PACKET:
        return exp
    if process != PER_BIT:
        raise ValueError(f"loss process must be {PER_PACKET} or {PER_BIT}, got {process!r}")
    base = copy.deepcopy(exp.base)

    def size(node):
        if isinstance(node, dict):
            if node.get("kind") == "bernoulli":
                node["reference_bytes"] = LOSS_REFERENCE_BYTES
            for value in node.values():
                size(value)
        elif isinstance(node, list):
            for value in node:
                size(value)

    size(base)
    return dataclasses.replace(exp, base=base)

