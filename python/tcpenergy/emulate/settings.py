"""A scenario's TCP settings as the kernel takes them, or refused.

The kernel runs its own TCP: what a scenario can ask of it is what Linux lets a user set per
network namespace (sysctls), per route (``ip route`` attributes) or per socket (``setsockopt``).
Keys a scenario leaves unset take the ``linux-6`` stack preset, which describes the kernel's own
defaults, so the simulated twin of an emulated run is the scenario as written plus
``tcp.stack = "linux-6"``. A key the scenario sets to something the kernel cannot do is refused
with the key, the value and what the kernel supports (docs/emulation.md, "Settings").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from tcpenergy.exceptions import scenario_error
from tcpenergy.topology import duration_ns

STACK = "linux-6"

# Engine variants the kernel can run: its congestion-control module and whether the variant
# implies SACK and ECN. Linux's loss recovery is NewReno's (RFC 6582) without SACK, and SACK-based
# (RFC 6675 with RACK) with it, whatever the module.
VARIANTS: Dict[str, Tuple[str, bool, bool]] = {
    "reno": ("reno", False, False),
    "newreno": ("reno", False, False),
    "sack": ("reno", True, False),
    "cubic": ("cubic", True, False),
    "ecn": ("reno", True, True),
    "bbr": ("bbr", True, False),
}

# Keys that describe how a model works, not a setting: accepted only at the kernel's own value
# (that of the linux-6 preset), with what the kernel does instead.
FIXED: Dict[str, str] = {
    "initial_rto": "the kernel's initial RTO is 1 s (TCP_TIMEOUT_INIT)",
    "timer_tick": "the kernel's timers count jiffies (4 ms at HZ=250)",
    "delayed_ack_tick": "the kernel's timers count jiffies (4 ms at HZ=250)",
    "clock_granularity": "the kernel floors RTTVAR at 200 ms (its RTO is SRTT + max(200 ms, 4 RTTVAR))",
    "cwnd_growth": "the kernel grows cwnd per segment acknowledged (per_byte)",
    "limited_transmit": "the kernel always sends new data on the first duplicate ACKs (RFC 3042)",
    "rtt_sampling": "the kernel samples the RTT from every ACK (every_ack)",
    "header_prediction": "the kernel's fast path is the standard one",
    "receive_autotune": "the kernel autotunes its receive buffer (tcp_moderate_rcvbuf); "
                        "receive_buffer sets the window clamp",
    "pacing": "kernel mode leaves the namespaces' qdisc as it is (no fq), so only bbr paces",
}


@dataclass
class FlowSettings:
    """One flow's settings in kernel terms."""

    congestion: str
    initcwnd: int
    ssthresh: Optional[int]
    rto_min_ms: float
    quickack: bool
    window_clamp: Optional[int]
    send_buffer: Optional[int]


@dataclass
class KernelSettings:
    """What to set in each host's namespace, and for each flow."""

    sysctls: Dict[str, Dict[str, str]] = field(default_factory=dict)
    flows: List[Optional[FlowSettings]] = field(default_factory=list)


def _refuse(path: str, value: Any, why: str) -> None:
    raise scenario_error(path, f"{value!r} cannot run in kernel mode: {why}")


def explicit_keys(data: Mapping[str, Any], overrides: Sequence[Tuple[str, Any]], flows: int) -> List[Dict[str, str]]:
    """For each flow, the ``tcp`` keys the scenario or an override writes (the rest take the
    preset), each with the dotted path it is written at: the flow's own ``tcp`` table's, else the
    scenario-wide one's."""
    common = {key: f"tcp.{key}" for key in (data.get("tcp") or {})}
    own = [{key: f"flows.{i}.tcp.{key}" for key in ((f or {}).get("tcp") or {})} for i, f in enumerate(data.get("flows") or [])]
    own += [{} for _ in range(flows - len(own))]
    for key, _ in overrides:
        parts = key.split(".")
        if parts[0] == "tcp" and len(parts) > 1:
            common[parts[1]] = f"tcp.{parts[1]}"
        elif parts[0] == "flows" and len(parts) > 3 and parts[2] == "tcp" and parts[1].isdigit() and int(parts[1]) < flows:
            own[int(parts[1])][parts[3]] = ".".join(parts[:4])
    return [{**common, **mine} for mine in own[:flows]]


def with_stack(data: Mapping[str, Any], overrides: Sequence[Tuple[str, Any]] = ()) -> List[Tuple[str, Any]]:
    """The override that gives the scenario the kernel's preset where it names no stack, after
    checking the stacks it names (in its tables or ``overrides``): any other preset is another
    system's constants."""
    stacks = {"tcp.stack": (data.get("tcp") or {}).get("stack")}
    stacks.update({f"flows.{i}.tcp.stack": ((f or {}).get("tcp") or {}).get("stack")
                   for i, f in enumerate(data.get("flows") or [])})
    stacks.update({key: value for key, value in overrides if key in stacks or key.endswith(".tcp.stack")})
    for path, stack in stacks.items():
        if stack is not None and stack != STACK:
            _refuse(path, stack, f"the kernel is Linux; use {STACK!r} or leave tcp.stack unset")
    return [] if stacks["tcp.stack"] is not None else [("tcp.stack", STACK)]


def _ms(text: str) -> float:
    """Milliseconds of a normalized duration (``"200ms"``, ``"1s"``, ``"2min"``)."""
    return duration_ns(text) / 1e6


def flow_tcp(normalized: Mapping[str, Any]) -> List[Tuple[str, Optional[dict]]]:
    """Each flow's key prefix and normalized ``tcp`` table (a single path's is ``tcp``); None
    for a UDP flow."""
    if "flows" not in normalized:
        return [("tcp", normalized["tcp"])]
    return [(f"flows.{i}.tcp", f["tcp"] if f.get("transport", "tcp") == "tcp" else None)
            for i, f in enumerate(normalized["flows"])]


def kernel_settings(normalized: Mapping[str, Any], explicit: Sequence[Mapping[str, str]], preset: Mapping[str, Any],
                    flow_ends: Sequence[Tuple[str, str]], mss: Sequence[int]) -> KernelSettings:
    """The kernel's settings for a scenario ``normalized`` with the linux-6 preset applied;
    ``explicit[i]`` the keys flow ``i`` sets, each with where it is written, ``preset`` the linux-6 values,
    ``flow_ends[i]`` its (source, destination) nodes, ``mss[i]`` its segment size. A UDP flow's
    entry in ``flows`` is None. Raises ScenarioError naming the first key the kernel cannot
    honour."""
    out = KernelSettings()
    for i, (prefix, tcp) in enumerate(flow_tcp(normalized)):
        if tcp is None:
            out.flows.append(None)
            continue
        keys = explicit[i] if i < len(explicit) else {}

        def at(key: str) -> str:
            # Reported where the scenario writes it (the flow's table, or the scenario-wide one).
            return keys.get(key, f"{prefix}.{key}")

        variant = tcp["variant"]
        if variant not in VARIANTS:
            supported = ", ".join(sorted(VARIANTS))
            _refuse(at("variant"), variant, f"the kernel's congestion control and recovery run {supported} "
                                            "(and any module the kernel has, with --congestion)")
        congestion, sack, ecn = VARIANTS[variant]
        for key, why in FIXED.items():
            if key in keys and tcp.get(key) != preset.get(key):
                _refuse(at(key), tcp.get(key), f"{why}; remove the key or set it to {preset.get(key)!r}")
        if tcp.get("elfn"):
            _refuse(at("elfn"), True, "the kernel has no explicit link failure notification")
        delayed = tcp["delayed_ack"]
        quickack = delayed["every"] == 1
        if not quickack and "delayed_ack" in keys and (delayed["every"] != 2 or _ms(delayed["timeout"]) != _ms(preset["delayed_ack"]["timeout"])):
            _refuse(at("delayed_ack"), delayed, "the kernel acknowledges every second segment with an adaptive "
                                                "timer (40-200 ms), or every segment (every = 1: the route's quickack)")
        max_rto = _ms(tcp["max_rto"])
        if not 1000 <= max_rto <= 120000:
            _refuse(at("max_rto"), tcp["max_rto"], "the kernel's tcp_rto_max_ms takes 1 s to 120 s")
        src, dst = flow_ends[i]
        node_sysctls = {
            "net.ipv4.tcp_sack": str(int(sack or tcp.get("sack", False))),
            "net.ipv4.tcp_timestamps": str(int(tcp["timestamps"])),
            "net.ipv4.tcp_window_scaling": str(int(tcp["window_scale"])),
            "net.ipv4.tcp_ecn": str(int(ecn or tcp.get("ecn", False))),
            "net.ipv4.tcp_reordering": str(tcp["dupack_threshold"]),
            "net.ipv4.tcp_rto_max_ms": str(int(max_rto)),
        }
        for node in (src, dst):
            mine = out.sysctls.setdefault(node, {})
            for key, value in node_sysctls.items():
                if mine.get(key, value) != value:
                    _refuse(prefix, key, f"node {node!r} has two flows that need different {key}: the kernel "
                                         "sets it per node; give them the same setting")
                mine[key] = value
        ssthresh = tcp["initial_ssthresh"]
        out.flows.append(FlowSettings(
            congestion=congestion,
            initcwnd=int(tcp["initial_window"]),
            ssthresh=None if ssthresh == "infinite" else max(2, int(ssthresh) // mss[i]),
            rto_min_ms=_ms(tcp["min_rto"]),
            quickack=quickack,
            window_clamp=int(tcp["receive_buffer"]) if "receive_buffer" in keys else None,
            send_buffer=int(tcp["send_buffer"]) if "send_buffer" in keys and tcp.get("send_buffer") is not None else None,
        ))
    return out


__all__ = ["FIXED", "FlowSettings", "KernelSettings", "STACK", "VARIANTS", "explicit_keys", "flow_tcp",
           "kernel_settings", "with_stack"]
