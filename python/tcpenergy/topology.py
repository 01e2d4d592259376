"""Network scenarios built in code: the seed-004 dumbbell and the seed-000/002 chain.

    from tcpenergy import topology
    scenario = topology.dumbbell(flows=30, per=0.01)       # a plain dict in the scenario format
    tcpenergy.run(scenario, seed=1)
    print(topology.to_toml(scenario))                     # the same scenario as a TOML file

    python -m tcpenergy.topology dumbbell --flows 30 --per 0.01 > dumbbell.toml
    python -m tcpenergy.topology chain --hops 3 --per 0.05 -o chain.toml

The generators only build dicts in the network form of a scenario (``[nodes]``, ``[[links]]``,
``[[flows]]``); nothing here runs the engine, which validates everything again when the scenario
is loaded. Arguments are checked here too, so that a mistake names the argument
(``ValueError: per: ...``) rather than a key deep inside the generated scenario.
"""

from __future__ import annotations

import argparse
import copy
import shlex
import sys
from fractions import Fraction
from typing import Any, Dict, List, Mapping, Optional, Sequence

from tcpenergy import toml_writer

DEFAULT_PROFILE = "singh2002-toshiba-wavelan"

# The scenario-wide TCP settings both generators write out: the engine's defaults, spelled out so
# that a generated file says what it runs and so that benchmarks/ns3_dumbbell.py, which mirrors
# them attribute by attribute, has one place to be checked against.
TCP_DEFAULTS: Dict[str, Any] = {
    "initial_window": 2,
    "initial_ssthresh": "64KB",
    "receive_buffer": "64KB",
    "min_rto": "1s",
    "timestamps": False,
    "window_scale": False,
    "limited_transmit": False,
    "delayed_ack": {"every": 2, "timeout": "200ms"},
}

ENERGY = {"default_profile": DEFAULT_PROFILE, "radio_policy": "always_on"}

# The engine's bounds on a link's MTU (bytes), as for path.mtu.
MTU_RANGE = (128, 65_535)

_DURATION_NS = {"ns": 1, "us": 10**3, "µs": 10**3, "ms": 10**6, "s": 10**9, "min": 60 * 10**9,
                "h": 3600 * 10**9}
_RATE_BPS = {"bps": 1, "kbps": 10**3, "Kbps": 10**3, "Mbps": 10**6, "Gbps": 10**9}
_SIZE_B = {"": 1, "B": 1, "KB": 10**3, "kB": 10**3, "MB": 10**6, "GB": 10**9, "KiB": 2**10,
           "MiB": 2**20, "GiB": 2**30}


# ---------------------------------------------------------------------------------------------
# argument checks: each raises ValueError("<argument>: <what is wrong>")


def _quantity(arg: str, text: Any, units: Mapping[str, int], example: str) -> Fraction:
    """``"1.5ms"`` -> Fraction(3, 2) * units["ms"]: exact, as the engine's own unit parser."""
    allowed = ", ".join(u for u in units if u)
    if not isinstance(text, str):
        raise ValueError(f"{arg}: expected a string with a unit ({allowed}), e.g. {example!r}; "
                         f"got {text!r}")
    body = text.strip()
    end = len(body) - len(body.lstrip("0123456789._"))
    number, unit = body[:end].replace("_", ""), body[end:].strip()
    if unit not in units or number in ("", ".") or number.count(".") > 1:
        raise ValueError(f"{arg}: expected a number with a unit ({allowed}), e.g. {example!r}; "
                         f"got {text!r}")
    return Fraction(number) * units[unit]


def _duration_ns(arg: str, text: Any, *, positive: bool) -> int:
    ns = _quantity(arg, text, _DURATION_NS, "120s")
    if ns.denominator != 1:
        raise ValueError(f"{arg}: {text!r} is not a whole number of nanoseconds")
    if positive and ns <= 0:
        raise ValueError(f"{arg}: must be longer than zero, got {text!r}")
    return int(ns)


def duration_ns(text: str) -> int:
    """A scenario duration in nanoseconds: ``"120s"`` -> 120_000_000_000 (ValueError if not one)."""
    return _duration_ns("duration", text, positive=False)


def rate_bps(text: str) -> int:
    """A scenario rate in bits per second: ``"64kbps"`` -> 64_000 (ValueError if not one)."""
    return _rate_bps("rate", text)


def _rate_bps(arg: str, text: Any) -> int:
    bps = _quantity(arg, text, _RATE_BPS, "10Mbps")
    if bps <= 0 or bps.denominator != 1:
        raise ValueError(f"{arg}: must be a whole, positive number of bits per second, got {text!r}")
    return int(bps)


def _size_bytes(arg: str, text: Any) -> int:
    size = _quantity(arg, text, _SIZE_B, "5MB")
    if size <= 0 or size.denominator != 1:
        raise ValueError(f"{arg}: must be a whole, positive number of bytes, got {text!r}")
    return int(size)


def _integer(arg: str, value: Any, low: int, high: Optional[int] = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{arg}: expected an integer, got {value!r}")
    if value < low or (high is not None and value > high):
        bound = f"at least {low}" if high is None else f"between {low} and {high}"
        raise ValueError(f"{arg}: must be {bound}, got {value}")
    return value


def _probability(arg: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise ValueError(f"{arg}: must be a packet error rate in [0, 1], got {value!r}")
    return float(value)


def _text(arg: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{arg}: expected a non-empty string, got {value!r}")
    return value


# ---------------------------------------------------------------------------------------------
# generators


def _link(a: str, b: str, rate: str, delay: str, queue: int, mtu: int, per: float = 0.0) -> dict:
    """One point-to-point link, both directions alike; ``per`` > 0 adds Bernoulli packet errors
    to the forward direction (a -> b) only."""
    link: Dict[str, Any] = {"between": [a, b], "rate": rate, "delay": delay, "queue": queue,
                            "mtu": mtu}
    if per > 0:
        link["forward"] = {"impairments": [{"kind": "bernoulli", "p": per}]}
    return link


def start_times_us(flows: int, start_within_ns: int) -> List[int]:
    """Start of flow k (k = 0 .. flows-1) in whole microseconds: floor(k x start_within / flows).

    Evenly spread over [0, start_within), the first at 0; benchmarks/ns3_dumbbell.py uses the
    same formula so that both simulators start every flow at the same instant."""
    return [k * start_within_ns // (flows * 1000) for k in range(flows)]


def dumbbell(flows: int = 30, per: float = 0.01, variant: str = "newreno",
             duration: str = "120s", access_rate: str = "10Mbps", bottleneck_rate: str = "10Mbps",
             access_delay: str = "1ms", bottleneck_delay: str = "20ms", queue: int = 100,
             mtu: int = 1500, start_within: str = "2s", name: Optional[str] = None) -> dict:
    """The single-bottleneck dumbbell of seed 004 §5.3 (spec parameters.md d.5), as a scenario dict.

    Nodes ``s1..sN`` (sources), routers ``r1`` and ``r2``, ``d1..dN`` (sinks), in that order.
    Links, each written with both directions alike:

    - ``si - r1``, the source access links: ``access_rate``, ``access_delay``;
    - ``r1 - r2``, the bottleneck: ``bottleneck_rate``, ``bottleneck_delay``;
    - ``r2 - di``, the sink access links: ``access_rate``, ``access_delay``, and Bernoulli packet
      errors with probability ``per`` on ``r2 -> di`` only (``forward``), the paper's "errors on
      the access links at the sink nodes". ACKs (``di -> r2``) are not lost. With ``per == 0``
      the impairment is left out.

    Every link has a drop-tail queue of ``queue`` packets per direction and the given ``mtu``.
    The paper gives bw_1 = bw_2 = 10 Mbit/s and a 10 Mbit/s bottleneck in its text (its Fig 1's
    1 Mbit/s for bw_3 is inconsistent with the text, which is followed here); delays, queue and
    packet size are unspecified there, so 1 ms access, 20 ms bottleneck (RTT about 44 ms plus
    queueing), 100 packets and MTU 1500 are this project's choices.

    Flows ``f1..fN`` go from ``si`` to ``di``: TCP ``variant`` (per flow, over the scenario-wide
    ``[tcp]`` below), traffic ``timed`` until t = ``duration`` (always data to send; a flow that
    starts later runs for correspondingly less). Flow ``fi`` starts
    at (i-1) x ``start_within`` / N, in whole microseconds (``start_times_us``): evenly spread over
    [0, start_within), the paper's "all flows start within the first 2 s" (§5.3.3). The run
    stops at ``stop_after = duration``, the paper's 120 s, so every flow ends at t = duration
    whenever it started; the paper's ns-2 runs likewise stop all flows at the end.

    Scenario-wide: ``seed = 1``; ``[tcp]`` = TCP_DEFAULTS (the engine's defaults written out:
    initial window 2, 64 KB receive buffer and initial ssthresh, min RTO 1 s, delayed ACK every 2
    segments / 200 ms, no timestamps, window scaling or limited transmit); ``[energy]`` =
    profile ``singh2002-toshiba-wavelan`` on every node (routers included), radio always on.

    ``name`` defaults to ``"dumbbell-<N>-flows-per-<per>"``. Raises ValueError naming the
    argument when one is out of range: ``flows`` >= 1, ``per`` in [0, 1], durations and rates
    with units ("120s", "10Mbps"), ``queue`` >= 1, ``mtu`` in [128, 65535], ``start_within``
    either 0 (all flows start together) or at least ``flows`` microseconds (so that start times
    are distinct) and no longer than ``duration``. ``variant`` must be a non-empty string; the
    engine checks the name when the scenario is loaded.
    """
    n = _integer("flows", flows, 1)
    per = _probability("per", per)
    variant = _text("variant", variant)
    stop_ns = _duration_ns("duration", duration, positive=True)
    _rate_bps("access_rate", access_rate)
    _rate_bps("bottleneck_rate", bottleneck_rate)
    _duration_ns("access_delay", access_delay, positive=False)
    _duration_ns("bottleneck_delay", bottleneck_delay, positive=False)
    queue = _integer("queue", queue, 1)
    mtu = _integer("mtu", mtu, *MTU_RANGE)
    within_ns = _duration_ns("start_within", start_within, positive=False)
    if within_ns > stop_ns:
        raise ValueError(f"start_within: must not exceed duration ({duration}), got {start_within!r}")
    if 0 < within_ns < n * 1000:
        raise ValueError(f"start_within: must be 0 or at least {n}us ({n} flows x 1us) so that "
                         f"start times are distinct, got {start_within!r}")
    if name is None:
        name = f"dumbbell-{n}-flows-per-{per:g}"
    name = _text("name", name)

    sources = [f"s{i}" for i in range(1, n + 1)]
    sinks = [f"d{i}" for i in range(1, n + 1)]
    nodes: Dict[str, dict] = {s: {} for s in sources}
    nodes.update({"r1": {}, "r2": {}})
    nodes.update({d: {} for d in sinks})

    links = [_link(s, "r1", access_rate, access_delay, queue, mtu) for s in sources]
    links.append(_link("r1", "r2", bottleneck_rate, bottleneck_delay, queue, mtu))
    links += [_link("r2", d, access_rate, access_delay, queue, mtu, per) for d in sinks]

    flow_list = [
        {"name": f"f{i}", "from": s, "to": d, "transport": "tcp", "tcp": {"variant": variant},
         "traffic": {"kind": "timed", "duration": f"{stop_ns // 1000 - start}us"}, "start": f"{start}us"}
        for i, (s, d, start) in enumerate(zip(sources, sinks, start_times_us(n, within_ns)), 1)
    ]
    return {"name": name, "seed": 1, "stop_after": duration, "tcp": copy.deepcopy(TCP_DEFAULTS),
            "energy": dict(ENERGY), "nodes": nodes, "links": links, "flows": flow_list}


def node_names(count: int) -> List[str]:
    """``a, b, ..., z, aa, ab, ...``: spreadsheet-column names for a chain's nodes."""
    names = []
    for k in range(count):
        label, k = "", k + 1
        while k:
            k, rem = divmod(k - 1, 26)
            label = chr(ord("a") + rem) + label
        names.append(label)
    return names


def chain(hops: int = 3, rate: str = "11Mbps", delay: str = "1ms", queue: int = 50,
          mtu: int = 1500, per: float = 0.0, variant: str = "sack", bytes: str = "5MB",
          name: Optional[str] = None) -> dict:
    """A linear chain ``a - b - c - d ...`` of ``hops`` links with one bulk TCP flow end to end.

    The shape of the seed 000 and seed 002 testbeds (spec parameters.md d.1, d.3): four laptops
    with 11 Mbit/s 802.11b cards, sender A -> B -> C -> receiver D, Dummynet on C, one 5 MB
    ttcp transfer per run. Here each hop is a point-to-point link of ``rate`` and ``delay`` each
    way (a shared-medium channel is a separate, later model), with a drop-tail queue of ``queue``
    packets and the given ``mtu``. ``per`` > 0 puts Bernoulli packet errors on the forward
    direction of the last hop only (the node before the receiver, where the testbeds ran
    Dummynet, towards the receiver); ACKs are not lost.

    One flow, ``bulk``, from the first node to the last: TCP ``variant`` (default ``sack``, the
    baseline of both papers), ``bytes`` of bulk data (the papers' 5 MB). ``stop_after = "1h"``
    is a safety cap, as in the shipped single-path scenarios; ``seed = 1``, ``[tcp]`` and
    ``[energy]`` as in :func:`dumbbell`. Nodes are named ``a, b, ..., z, aa, ab, ...``.

    ``name`` defaults to ``"chain-<hops>-hops-per-<per>"``. Raises ValueError naming the
    argument when one is out of range (``hops`` >= 1, the rest as in :func:`dumbbell`, ``bytes``
    a positive size such as "5MB").
    """
    hops = _integer("hops", hops, 1)
    _rate_bps("rate", rate)
    _duration_ns("delay", delay, positive=False)
    queue = _integer("queue", queue, 1)
    mtu = _integer("mtu", mtu, *MTU_RANGE)
    per = _probability("per", per)
    variant = _text("variant", variant)
    _size_bytes("bytes", bytes)
    if name is None:
        name = f"chain-{hops}-hops-per-{per:g}"
    name = _text("name", name)

    names = node_names(hops + 1)
    links = [_link(a, b, rate, delay, queue, mtu, per if k == hops - 1 else 0.0)
             for k, (a, b) in enumerate(zip(names, names[1:]))]
    flow = {"name": "bulk", "from": names[0], "to": names[-1], "transport": "tcp",
            "tcp": {"variant": variant}, "traffic": {"kind": "bulk", "bytes": bytes}}
    return {"name": name, "seed": 1, "stop_after": "1h", "tcp": copy.deepcopy(TCP_DEFAULTS),
            "energy": dict(ENERGY), "nodes": {n: {} for n in names}, "links": links,
            "flows": [flow]}


# ---------------------------------------------------------------------------------------------
# TOML


def _is_table_array(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and bool(value) and all(
        isinstance(v, Mapping) for v in value)


def _is_table_of_tables(value: Any) -> bool:
    return isinstance(value, Mapping) and bool(value) and all(
        isinstance(v, Mapping) for v in value.values())


def to_toml(scenario: Mapping[str, Any], header: str = "") -> str:
    """TOML text for a scenario dict, readable by ``tcpenergy.load_scenario`` and ``tomllib``.

    Written with the reproductions' TOML writer (``tcpenergy.toml_writer``): top-level keys
    and tables through its ``dumps``; the network parts it has no layout for through its value
    encoder, one entry per line: ``[nodes]`` as ``name = { ... }`` lines, and each list of tables
    (``links``, ``flows``) as ``[[links]]`` blocks whose nested tables are inline.
    """
    plain = {k: v for k, v in scenario.items()
             if not _is_table_array(v) and not _is_table_of_tables(v)}
    text = toml_writer.dumps(plain, header)
    parts = [text.rstrip("\n")] if text.strip() else []
    for key, value in scenario.items():
        if _is_table_of_tables(value):
            lines = [f"[{toml_writer.key(key)}]"]
            lines += [f"{toml_writer.key(k)} = {toml_writer.value(v) if v else '{}'}" for k, v in value.items()]
            parts.append("\n".join(lines))
        elif _is_table_array(value):
            for entry in value:
                lines = [f"[[{toml_writer.key(key)}]]"]
                lines += [f"{toml_writer.key(k)} = {toml_writer.value(v)}" for k, v in entry.items()]
                parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n"


# ---------------------------------------------------------------------------------------------
# command line


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m tcpenergy.topology",
        description="Write a network scenario (TOML) built by tcpenergy.topology.")
    sub = p.add_subparsers(dest="shape", required=True)

    d = sub.add_parser("dumbbell", help="the seed-004 single-bottleneck dumbbell")
    d.add_argument("--flows", type=int, default=30)
    d.add_argument("--per", type=float, default=0.01, help="packet error rate on r2 -> di")
    d.add_argument("--variant", default="newreno")
    d.add_argument("--duration", default="120s")
    d.add_argument("--access-rate", default="10Mbps")
    d.add_argument("--bottleneck-rate", default="10Mbps")
    d.add_argument("--access-delay", default="1ms")
    d.add_argument("--bottleneck-delay", default="20ms")
    d.add_argument("--queue", type=int, default=100, help="drop-tail queue, packets")
    d.add_argument("--mtu", type=int, default=1500)
    d.add_argument("--start-within", default="2s")

    c = sub.add_parser("chain", help="a linear chain with one bulk TCP flow end to end")
    c.add_argument("--hops", type=int, default=3)
    c.add_argument("--rate", default="11Mbps")
    c.add_argument("--delay", default="1ms")
    c.add_argument("--queue", type=int, default=50, help="drop-tail queue, packets")
    c.add_argument("--mtu", type=int, default=1500)
    c.add_argument("--per", type=float, default=0.0, help="packet error rate on the last hop")
    c.add_argument("--variant", default="sack")
    c.add_argument("--bytes", default="5MB")

    for q in (d, c):
        q.add_argument("--name", default=None)
        q.add_argument("-o", "--output", metavar="FILE",
                       help="write here instead of stdout (only once the scenario is built)")
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = vars(_parser().parse_args(argv))
    shape, output = args.pop("shape"), args.pop("output")
    build = {"dumbbell": dumbbell, "chain": chain}[shape]
    command = shlex.join(["python", "-m", "tcpenergy.topology", *argv])
    try:
        text = to_toml(build(**args), header=f"Written by: {command}")
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if output is None:
        sys.stdout.write(text)
        return 0
    try:
        with open(output, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as exc:
        print(f"error: --output: cannot write {output}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
