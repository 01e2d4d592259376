"""One emulated run: hosts made, kernel settings applied, the engine's network running between
the hosts' devices in a thread of this process, the flows' programs run in their namespaces, and
the record assembled (the engine's, with the kernel's own counters beside it).

Everything made is removed on every way out: the ``finally`` below ends the programs and deletes
the namespaces, SIGTERM is turned into an exception while a run is on, and what a SIGKILL leaves
is removed by :func:`tcpenergy.emulate.netns.cleanup` (``tcpenergy emulate --cleanup``).
"""

from __future__ import annotations

import functools
import json
import os
import platform
import shlex
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from tcpenergy import api
from tcpenergy._native import engine
from tcpenergy.capture import check_pcap_dir, write_pcap_dir
from tcpenergy.emulate import netns, settings
from tcpenergy.exceptions import TcpEnergyError, scenario_error
from tcpenergy.scenario import Override, check_overrides, encode_overrides, validate
from tcpenergy.topology import duration_ns, rate_bps

APPS = Path(__file__).with_name("apps.py")
# The port flow i's destination listens on.
FIRST_PORT = 20000
# Traffic written as paced messages (docs/models/network.md, "Flows and traffic kinds").
PACED = ("on_off", "cbr")
# A paced flow without a stop writes until this long before the run's limit, so that it drains.
DRAIN_S = 2.0
# Time 0 of a run comes this long after its receivers are started, and this long more per
# program, so that every receiver listens and every sender runs by then.
LISTEN_S = 0.3
PROGRAM_START_S = 0.1
# A UDP receiver listens this long after its sender's last datagram.
UDP_GRACE_S = 1.0
# A run whose events ran later than this at the 99th percentile is marked incomplete.
LAG_BOUND_MS = 1.0
# Kernel counters kept in the record (/proc/net/netstat and /proc/net/snmp of each host).
KERNEL_COUNTERS = ("Tcp.RetransSegs", "Tcp.OutSegs", "Tcp.InSegs", "TcpExt.TCPTimeouts", "TcpExt.TCPLossProbes",
                   "TcpExt.TCPSackRecovery", "TcpExt.TCPRenoRecovery", "TcpExt.TCPFastRetrans",
                   "TcpExt.TCPSlowStartRetrans", "TcpExt.TCPLostRetransmit", "TcpExt.TCPSpuriousRTOs",
                   "TcpExt.TCPDSACKRecv", "TcpExt.TCPSACKReorder", "TcpExt.TCPDelivered", "TcpExt.DelayedACKs")


class EmulationError(TcpEnergyError):
    """A kernel-mode run could not be carried out (a program failed, the run timed out)."""


@functools.lru_cache(maxsize=None)
def _preset() -> dict:
    """The linux-6 preset's values, normalized."""
    probe = {"tcp": {"stack": settings.STACK}, "path": {"forward": {"rate": "1Mbps", "delay": "1ms"}},
             "traffic": {"kind": "bulk", "bytes": 1}}
    return json.loads(engine.validate(json.dumps(probe), []))["tcp"]


def _network_view(normalized: Mapping[str, Any]) -> Tuple[List[str], List[dict], int]:
    """The scenario's node names, its flows (name, from, to, transport, traffic, start) and the
    smallest MTU of its media."""
    if "flows" not in normalized:
        flow = {"name": "main", "from": "sender", "to": "receiver", "transport": "tcp",
                "traffic": normalized["traffic"], "start": "0s"}
        return ["sender", "receiver"], [flow], int(normalized["path"]["mtu"])
    media = list(normalized.get("links") or []) + list(normalized.get("channels") or [])
    mtu = min(int(m.get("mtu", 1500)) for m in media) if media else 1500
    return list(normalized["nodes"]), list(normalized["flows"]), mtu


def _check_flows(flows: Sequence[dict]) -> None:
    for i, f in enumerate(flows):
        if f.get("split"):
            raise scenario_error(f"flows.{i}.split", "a split connection cannot run in kernel mode yet: its relay "
                                                     "would be a program at the split node; run it in simulation")
        kind = f["traffic"]["kind"]
        if f.get("transport", "tcp") == "udp":
            if f.get("echo"):
                raise scenario_error(f"flows.{i}.echo", "the built-in UDP programs do not echo; run an echo "
                                                        "server with --cmd NODE=...")
            if kind not in PACED:
                raise scenario_error(f"flows.{i}.traffic.kind", f"{kind!r}: a UDP flow sends on_off or cbr traffic")


def _seconds(text: Any) -> float:
    return duration_ns(text) / 1e9


def _over(flow: Mapping[str, Any], t0: float) -> Optional[float]:
    """When a flow is over, on the monotonic clock, if it has an end of its own: a timed flow's
    duration, or its ``stop`` (both ends stop then, as in simulation)."""
    ends = [_seconds(flow["start"]) + _seconds(flow["traffic"]["duration"])] if flow["traffic"]["kind"] == "timed" else []
    if flow.get("stop") is not None:
        ends.append(_seconds(flow["stop"]))
    return t0 + min(ends) if ends else None


def _until(flow: Mapping[str, Any], t0: float, limit: float) -> float:
    """When a paced flow stops writing, on the monotonic clock: when it is over, else shortly
    before the run's limit (it then closes and drains)."""
    over = _over(flow, t0)
    return over if over is not None else t0 + max(0.0, limit - DRAIN_S)


def _traffic_args(flow: Mapping[str, Any], t0: float, limit: float, seed: int) -> List[str]:
    """The sender program's options for the flow's traffic."""
    t = flow["traffic"]
    over = _over(flow, t0)
    end = ["--abort-at", repr(over)] if over is not None and flow.get("transport", "tcp") == "tcp" else []
    if t["kind"] == "bulk":
        return ["--bytes", str(t["bytes"]), *end]
    if t["kind"] == "timed":
        return end
    until = ["--until", repr(_until(flow, t0, limit)), "--seed", str(seed), *end]
    if t["kind"] == "cbr":
        return ["--message", str(t["packet"]), "--rate", str(rate_bps(t["rate"])), *until]
    return ["--message", str(t["message"]), "--interval", str(_seconds(t["interval"])),
            "--distribution", "fixed" if t.get("distribution") == "fixed" else "exponential", *until]


def _counters(namespace: str) -> Dict[str, int]:
    """The namespace's TCP counters since it was made (pairs of header and value lines)."""
    done = subprocess.run(["ip", "netns", "exec", namespace, "cat", "/proc/net/snmp", "/proc/net/netstat"],
                          capture_output=True, text=True)
    values: Dict[str, int] = {}
    lines = done.stdout.splitlines()
    for head, vals in zip(lines[::2], lines[1::2]):
        prefix, _, names = head.partition(":")
        for name, value in zip(names.split(), vals.partition(":")[2].split()):
            key = f"{prefix}.{name}"
            if key in KERNEL_COUNTERS:
                values[key] = int(value)
    return values


def _sysctl(hosts: netns.Namespaces, node: str, key: str, value: str) -> None:
    # Written to /proc/sys inside the namespace: its net.* entries are the namespace's own.
    path = "/proc/sys/" + key.replace(".", "/")
    done = subprocess.run(hosts.command(node, ["sh", "-c", f"echo {shlex.quote(value)} > {path}"]),
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise netns.NamespaceError(f"sysctl {key}={value} in node {node!r}: {done.stderr.strip()}")


def _route(hosts: netns.Namespaces, node: str, peer: str, attrs: Sequence[str]) -> None:
    n, p = hosts.nodes[node], hosts.nodes[peer]
    done = subprocess.run(["ip", "-n", n.namespace, "route", "replace", f"{p.address}/32", "dev", n.device, *attrs],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise netns.NamespaceError(f"route {node}->{peer} {' '.join(attrs)}: {done.stderr.strip()}")


class _Programs:
    """The processes of a run, ended on every way out."""

    def __init__(self) -> None:
        self.procs: List[subprocess.Popen] = []

    def start(self, argv: Sequence[str], **kw: Any) -> subprocess.Popen:
        proc = subprocess.Popen(list(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
        self.procs.append(proc)
        return proc

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
        for proc in self.procs:
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass


def _finish(proc: subprocess.Popen, what: str, deadline: float) -> dict:
    """The JSON report a program printed last, once it exits by ``deadline``."""
    try:
        out, err = proc.communicate(timeout=max(0.1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return {"error": f"{what} did not finish in time"}
    lines = [line for line in out.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        return {"error": f"{what} failed (exit {proc.returncode}): {err.strip()[-500:]}"}
    return json.loads(lines[-1])


def _sigterm_raises():
    """While a run is on, SIGTERM unwinds it (so its namespaces are removed) instead of killing
    the process outright; only possible in the main thread."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def handler(signum, frame):
        raise SystemExit(128 + signum)

    return signal.signal(signal.SIGTERM, handler)


def emulate(scenario: api.ScenarioLike, seed: Optional[int] = None, overrides: Sequence[Override] = (), *,
            congestion: Optional[str] = None, commands: Optional[Mapping[str, str]] = None,
            limit_s: Optional[float] = None, lag_bound_ms: float = LAG_BOUND_MS,
            pcap: Optional[Path] = None, pcap_option: str = "pcap",
            on_pcap: Optional[Callable[[List[Path]], None]] = None) -> dict:
    """Run ``scenario`` in kernel mode; returns its record (the keys of :func:`tcpenergy.api.run`'s,
    plus ``mode``, ``kernel`` and ``emulation``). ``congestion`` runs every flow with that kernel
    module instead of the variant's; ``commands`` runs a shell command in a node's namespace
    beside the flows' programs (the run waits for it). ``limit_s`` bounds the run's length
    (default: the scenario's ``stop_after``, at most one hour). With ``pcap`` a directory, each
    interface's frames are written there as ``<from>-<to>.pcap``, as :func:`tcpenergy.api.run`
    writes a simulated run's; ``on_pcap`` receives the paths written."""
    loaded = api.as_scenario(scenario)
    api.check_seed(seed)
    overrides = list(overrides)
    check_overrides(overrides)
    stack = settings.with_stack(loaded.data, overrides)
    overrides = stack + overrides
    normalized = validate(loaded, overrides)
    nodes, flows, mtu = _network_view(normalized)
    _check_flows(flows)
    commands = dict(commands or {})
    for node in commands:
        if node not in nodes:
            raise scenario_error("--cmd", f"no node named {node!r}; the scenario has {', '.join(nodes)}")
    explicit = settings.explicit_keys(loaded.data, overrides[len(stack):], len(flows))
    tcp_tables = settings.flow_tcp(normalized)
    mss = [mtu - 40 - (12 if tcp and tcp["timestamps"] else 0) for _, tcp in tcp_tables]
    kernel = settings.kernel_settings(normalized, explicit, _preset(), [(f["from"], f["to"]) for f in flows], mss)
    if congestion:
        available = Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split()
        if congestion not in available:
            raise scenario_error("--congestion", f"{congestion!r}: this kernel has {', '.join(available)}")
    limit = limit_s if limit_s is not None else min(3600.0, _seconds(normalized.get("stop_after", "1h")))
    hosts_needed = list(dict.fromkeys([n for f in flows for n in (f["from"], f["to"])] + list(commands)))
    ports = [FIRST_PORT + i for i in range(len(flows))]
    encoded = encode_overrides(overrides)
    if pcap is not None:
        check_pcap_dir(Path(pcap), pcap_option)

    previous = _sigterm_raises()
    programs = _Programs()
    read_end, write_end = os.pipe()
    hosts = None
    runner: Optional[threading.Thread] = None
    outcome: Dict[str, Any] = {}
    try:
        hosts = netns.Namespaces(hosts_needed, mtu)
        for node in hosts_needed:
            _sysctl(hosts, node, "net.ipv6.conf.all.disable_ipv6", "1")
            for key, value in kernel.sysctls.get(node, {}).items():
                _sysctl(hosts, node, key, value)
        for f, k in zip(flows, kernel.flows):
            if k is None:
                continue
            attrs = ["initcwnd", str(k.initcwnd), "rto_min", f"{k.rto_min_ms:g}ms"]
            if k.ssthresh is not None:
                attrs += ["ssthresh", str(k.ssthresh)]
            if k.quickack:
                attrs += ["quickack", "1"]
            _route(hosts, f["from"], f["to"], attrs)
            _route(hosts, f["to"], f["from"], ["rto_min", f"{k.rto_min_ms:g}ms"] + (["quickack", "1"] if k.quickack else []))
        table = [(name, [int(x) for x in hosts.nodes[name].address.split(".")], hosts.nodes[name].fd) for name in hosts_needed]

        python = sys.executable
        # The receivers listen first; time 0 of the run comes after they can all have started, and
        # a moment more, so that the senders (started next) begin at the scenario's times.
        t0 = time.monotonic() + LISTEN_S + PROGRAM_START_S * len(flows)
        deadline = t0 + limit
        receivers = []
        for i, (f, k) in enumerate(zip(flows, kernel.flows)):
            address = hosts.nodes[f["to"]].address
            if f.get("transport", "tcp") == "udp":
                argv = [python, str(APPS), "udp-receive", "--bind", address, "--port", str(ports[i]),
                        "--until", repr(_until(f, t0, limit) + UDP_GRACE_S)]
            else:
                argv = [python, str(APPS), "receive", "--bind", address, "--port", str(ports[i])]
                if k is not None and k.window_clamp:
                    argv += ["--clamp", str(k.window_clamp)]
                if _over(f, t0) is not None:
                    argv += ["--until", repr(_over(f, t0))]
            proc = programs.start(hosts.command(f["to"], argv))
            if proc.stdout.readline().strip() != "ready":
                raise EmulationError(f"flow {f['name']!r}: the receiver did not start: {proc.stderr.read().strip()}")
            receivers.append(proc)

        def network() -> None:
            try:
                outcome["record"], outcome["pcap"] = engine.emulate(loaded.to_json(), seed, encoded, table, ports, read_end,
                                                                   limit, lag_bound_ms, pcap is not None, t0)
            except BaseException as exc:  # handed to the main thread
                outcome["error"] = exc

        runner = threading.Thread(target=network, name="tcpenergy-emulate", daemon=True)
        runner.start()
        # The engine refuses what it cannot run as it builds the network, at once: say so now
        # rather than leave the programs waiting for a network that is not there.
        runner.join(timeout=0.05)
        if "error" in outcome:
            raise outcome["error"]
        senders = []
        for i, (f, k) in enumerate(zip(flows, kernel.flows)):
            at = ["--at", repr(t0 + _seconds(f.get("start", "0s")))]
            target = ["--to", hosts.nodes[f["to"]].address, "--port", str(ports[i])]
            traffic = _traffic_args(f, t0, limit, normalized.get("seed", 1) + i)
            if f.get("transport", "tcp") == "udp":
                argv = [python, str(APPS), "udp-send", *target, *traffic, *at]
            else:
                argv = [python, str(APPS), "send", *target, *traffic, *at, "--congestion", congestion or k.congestion]
                if k.send_buffer:
                    argv += ["--sndbuf", str(k.send_buffer)]
            senders.append(programs.start(hosts.command(f["from"], argv)))
        others = {node: programs.start(hosts.command(node, ["sh", "-c", cmd])) for node, cmd in commands.items()}
        sent = [_finish(p, f"flow {f['name']!r}: the sender", deadline) for p, f in zip(senders, flows)]
        received = [_finish(p, f"flow {f['name']!r}: the receiver", deadline) for p, f in zip(receivers, flows)]
        ran = {}
        for node, proc in others.items():
            try:
                out, err = proc.communicate(timeout=max(0.1, deadline - time.monotonic()))
                ran[node] = {"exit": proc.returncode, "stdout": out[-4000:], "stderr": err[-4000:]}
            except subprocess.TimeoutExpired:
                proc.kill()
                ran[node] = {"exit": None, "error": "did not finish in time"}
        # The meter goes on after the transfers (a cellular radio's tail): so must the network.
        linger = _seconds(normalized.get("energy", {}).get("after_completion", "0s"))
        if linger > 0:
            time.sleep(min(linger, max(0.0, deadline - time.monotonic())))
        os.write(write_end, b"x")
        runner.join()
        if "error" in outcome:
            raise outcome["error"]
        # Read once the network has stopped: starting processes while it runs would slow its clock.
        counters = {node: _counters(hosts.nodes[node].namespace) for node in hosts_needed}
        addresses = {node: hosts.nodes[node].address for node in hosts_needed}
    finally:
        if runner is not None and runner.is_alive():
            os.write(write_end, b"x")
            runner.join(timeout=10)
        programs.stop()
        if hosts is not None:
            hosts.close()
        os.close(read_end)
        os.close(write_end)
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)

    record = json.loads(outcome["record"])
    record["parameters"] = api.parameters(loaded, seed, overrides)
    flows_out = record["flows"] if "flows" in record else None
    per_flow = {}
    problems = []
    for i, f in enumerate(flows):
        snd, rcv = sent[i], received[i]
        for side in (snd, rcv):
            if "error" in side:
                problems.append(side["error"])
        info = snd.get("tcp_info", {})
        k = kernel.flows[i]
        per_flow[f["name"]] = {"congestion": (congestion or k.congestion) if k else None, "sender": snd, "receiver": rcv}
        if k is None:
            continue
        # What only the stack knows: its timeouts (TCP_INFO's total_rto, Linux 6.7 and later).
        target = flows_out[i] if flows_out is not None else record["flow"]
        target["timeouts"] = info.get("total_rto", target.get("timeouts", 0))
        # A node's counters are its flows' together: they are one flow's when it sources one.
        if sum(g["from"] == f["from"] for g in flows) == 1:
            target["fast_retransmits"] = counters.get(f["from"], {}).get("TcpExt.TCPFastRetrans", 0)
    if flows_out is not None and len(flows_out) == 1 and record.get("flow") is not None:
        for key in ("timeouts", "fast_retransmits"):
            record["flow"][key] = flows_out[0][key]
    record["kernel"] = {"release": platform.release(), "addresses": addresses, "flows": per_flow, "nodes": counters,
                        "commands": ran}
    if problems:
        record["complete"] = False
        record["stop"] = "; ".join(problems)
    if pcap is not None:
        written = write_pcap_dir(Path(pcap), outcome["pcap"], pcap_option)
        if on_pcap is not None:
            on_pcap(written)
    return record


__all__ = ["EmulationError", "FIRST_PORT", "LAG_BOUND_MS", "emulate"]
