"""The energy of a capture: one node's packets, as a capture taken at that node shows them (a
phone's or laptop's ``tcpdump``, a kernel-mode run's device, a simulated run's ``--node-pcap``),
metered by a device profile's radio and CPU model (docs/emulation.md, "Energy of a capture")."""

from __future__ import annotations

import ipaddress
import json
from pathlib import Path
from typing import Optional, Tuple, Union

from tcpenergy import api
from tcpenergy._native import engine
from tcpenergy.exceptions import ScenarioError, scenario_error

# Where a scenario's key is an option of this function.
_OPTION_OF = {"energy.sender": "profile", "energy.radio_policy": "radio_policy", "energy.timeout": "timeout"}


def _meter(profile: Union[str, dict], radio_policy: str, timeout: Optional[str]) -> api.Scenario:
    """A scenario that carries only the meter: the profile (a built-in name, a profile file or a
    table) and the radio policy, read as any scenario's energy table is."""
    energy = {"sender": profile, "receiver": profile, "radio_policy": radio_policy}
    if timeout is not None:
        energy["timeout"] = timeout
    data = {"name": "analyze", "path": {"forward": {"rate": "1kbps", "delay": "0s"}},
            "traffic": {"kind": "bulk", "bytes": 1}, "energy": energy}
    try:
        return api.load_scenario(data)
    except ScenarioError as exc:
        path = getattr(exc, "path", "") or ""
        option = next((o for k, o in _OPTION_OF.items() if path.startswith(k)), None)
        if option is None:
            raise
        raise scenario_error(option, getattr(exc, "message", None) or str(exc)) from None


def analyze(capture: Union[str, Path], profile: Union[str, dict], node: str, *, radio_policy: str = "always_on",
            timeout: Optional[str] = None, window: Tuple[Optional[float], Optional[float]] = (None, None)) -> dict:
    """Meter node ``node``'s (an IPv4 address) packets in the pcap file ``capture`` under
    ``profile``; ``window`` (start, end) in seconds on the capture's clock, each None for the
    capture's own span. Returns the analysis: the node's energy record, its CPU operations, and
    each TCP connection whose handshake the capture holds."""
    try:
        address = ipaddress.IPv4Address(node).packed
    except ValueError:
        raise scenario_error("node", f"{node!r} is not an IPv4 address") from None
    path = Path(capture)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise scenario_error("capture", f"cannot read {path}: {exc.strerror or exc}") from None
    meter = _meter(profile, radio_policy, timeout)
    start, end = (None if w is None else round(w * 1e9) for w in window)
    for name, value in (("window start", start), ("window end", end)):
        if value is not None and value < 0:
            raise scenario_error("window", f"the {name} is before the capture's clock began")
    result = json.loads(engine.analyze(meter.to_json(), data, list(address), start, end))
    result["capture"] = str(path)
    result["profile"] = profile if isinstance(profile, str) else meter.normalized["energy"]["sender"]
    result["radio_policy"] = radio_policy
    return result


__all__ = ["analyze"]
