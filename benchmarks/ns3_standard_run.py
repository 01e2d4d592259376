"""The standard benchmark run in ns-3, for `vs_ns3.py`.

Run with the Python of a venv that has the `ns3` wheel (3.44.x, prebuilt libraries + cppyy
bindings: `from ns import ns`); `vs_ns3.py` creates that venv and calls this script. It prints one
JSON object on stdout: the settings used and, per seed, the wall time of `Simulator::Run()` alone,
the number of events the scheduler executed (`Simulator::GetEventCount()`), and what the transfer
did (bytes delivered to the sink, time of the last delivery, packets dropped by the error model).

Topology: node 0 (sender, BulkSendApplication) --PointToPoint--> node 1 (receiver, PacketSink).
Matched to benchmarks/standard.toml: rate/delay per direction, DropTail device queue of `queue`
packets and no queue disc, a RateErrorModel (per-packet) on the receiver's device only (forward
loss), TcpNewReno congestion ops with SACK on (pipe-based recovery, RFC 6675 style), segment size
MTU - 40, initial cwnd 2, delayed ACK every 2 segments / 200 ms, min RTO 1 s, clock granularity
1 ms, receive buffer and initial ssthresh 64 KB, timestamps and window scaling off, limited
transmit off, SYN timeout 1 s (the RFC 6298 initial RTO).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time

_SIZE_UNITS = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9,
               "KIB": 2**10, "MIB": 2**20, "GIB": 2**30}


def parse_bytes(text: str | int) -> int:
    """'5MB' -> 5_000_000 (decimal SI, as in the scenario format; KiB/MiB are binary)."""
    if isinstance(text, int):
        return text
    m = re.fullmatch(r"\s*([0-9.]+)\s*([A-Za-z]*)\s*", str(text))
    if not m or m.group(2).upper() not in _SIZE_UNITS:
        raise ValueError(f"not a byte size: {text!r}")
    return int(float(m.group(1)) * _SIZE_UNITS[m.group(2).upper()])


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, default=10, help="timed runs, RngRun 1..N (default 10)")
    p.add_argument("--warmup", type=int, default=1, help="untimed runs first (default 1)")
    p.add_argument("--rate", default="2Mbps")
    p.add_argument("--delay", default="20ms", help="one-way propagation delay, each direction")
    p.add_argument("--loss", type=float, default=0.01, help="forward packet error rate")
    p.add_argument("--mtu", type=int, default=1500)
    p.add_argument("--queue", type=int, default=100, help="DropTail queue, packets")
    p.add_argument("--bytes", default="5MB", help="BulkSend MaxBytes")
    p.add_argument("--initial-window", type=int, default=2, help="segments")
    p.add_argument("--receive-buffer", default="64KB")
    p.add_argument("--initial-ssthresh", default="64KB")
    p.add_argument("--min-rto", default="1s")
    p.add_argument("--delack-count", type=int, default=2)
    p.add_argument("--delack-timeout", default="200ms")
    return p.parse_args(argv)


def load_ns3():
    """Import the ns-3 bindings and compile a tiny C++ Rx counter (no Python on the hot path)."""
    from ns import ns  # noqa: PLC0415  (slow: cppyy parses the ns-3 headers)

    ns.cppyy.cppdef(
        """
        namespace tcpbench {
        uint64_t rx_bytes = 0;
        double last_rx_s = 0.0;
        uint64_t drops = 0;
        void OnRx(ns3::Ptr<const ns3::Packet> p, const ns3::Address&) {
            rx_bytes += p->GetSize();
            last_rx_s = ns3::Simulator::Now().GetSeconds();
        }
        void OnDrop(ns3::Ptr<const ns3::Packet>) { ++drops; }
        void Reset() { rx_bytes = 0; last_rx_s = 0.0; drops = 0; }
        void Connect(ns3::Ptr<ns3::Application> sink, ns3::Ptr<ns3::NetDevice> rxDev) {
            sink->TraceConnectWithoutContext("Rx", ns3::MakeCallback(&OnRx));
            rxDev->TraceConnectWithoutContext("PhyRxDrop", ns3::MakeCallback(&OnDrop));
        }
        }
        """
    )
    return ns


def configure_tcp(ns, a: argparse.Namespace) -> None:
    """Config::SetDefault for every TCP knob that the standard scenario fixes."""
    sd = ns.Config.SetDefault
    sd("ns3::TcpL4Protocol::SocketType", ns.StringValue("ns3::TcpNewReno"))
    sd("ns3::TcpL4Protocol::RecoveryType", ns.StringValue("ns3::TcpClassicRecovery"))
    sd("ns3::TcpSocket::SegmentSize", ns.UintegerValue(a.mtu - 40))
    sd("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(a.initial_window))
    sd("ns3::TcpSocket::DelAckCount", ns.UintegerValue(a.delack_count))
    sd("ns3::TcpSocket::DelAckTimeout", ns.TimeValue(ns.Time(a.delack_timeout)))
    sd("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(parse_bytes(a.receive_buffer)))
    sd("ns3::TcpSocket::InitialSlowStartThreshold",
       ns.UintegerValue(parse_bytes(a.initial_ssthresh)))
    sd("ns3::TcpSocket::ConnTimeout", ns.TimeValue(ns.Seconds(1.0)))
    sd("ns3::TcpSocketBase::MinRto", ns.TimeValue(ns.Time(a.min_rto)))
    sd("ns3::TcpSocketBase::ClockGranularity", ns.TimeValue(ns.MilliSeconds(1)))
    sd("ns3::TcpSocketBase::Sack", ns.BooleanValue(True))
    sd("ns3::TcpSocketBase::Timestamp", ns.BooleanValue(False))
    sd("ns3::TcpSocketBase::WindowScaling", ns.BooleanValue(False))
    sd("ns3::TcpSocketBase::LimitedTransmit", ns.BooleanValue(False))


def one_run(ns, a: argparse.Namespace, run: int) -> dict:
    """Build the two-node world for RngRun `run`, time Simulator::Run(), tear it down."""
    ns.RngSeedManager.SetSeed(1)
    ns.RngSeedManager.SetRun(run)
    configure_tcp(ns, a)
    total = parse_bytes(a.bytes)

    nodes = ns.NodeContainer()
    nodes.Create(2)
    p2p = ns.PointToPointHelper()
    p2p.SetDeviceAttribute("DataRate", ns.StringValue(a.rate))
    p2p.SetDeviceAttribute("Mtu", ns.UintegerValue(a.mtu))
    p2p.SetChannelAttribute("Delay", ns.StringValue(a.delay))
    p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", ns.StringValue(f"{a.queue}p"))
    devices = p2p.Install(nodes)

    em = ns.CreateObject[ns.RateErrorModel]()
    em.SetAttribute("ErrorUnit", ns.StringValue("ERROR_UNIT_PACKET"))
    em.SetAttribute("ErrorRate", ns.DoubleValue(a.loss))
    devices.Get(1).SetAttribute("ReceiveErrorModel", ns.PointerValue(em))

    ns.InternetStackHelper().Install(nodes)
    addresses = ns.Ipv4AddressHelper()
    addresses.SetBase(ns.Ipv4Address("10.1.1.0"), ns.Ipv4Mask("255.255.255.0"))
    ifaces = addresses.Assign(devices)
    # Assign() installs a default queue disc (FqCoDel); remove it so that the only queue is the
    # device's DropTail of `queue` packets, as in the scenario.
    ns.TrafficControlHelper().Uninstall(devices)

    port = 5000
    sink_helper = ns.PacketSinkHelper(
        "ns3::TcpSocketFactory",
        ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo())
    sink_apps = sink_helper.Install(nodes.Get(1))
    bulk = ns.BulkSendHelper(
        "ns3::TcpSocketFactory", ns.InetSocketAddress(ifaces.GetAddress(1), port).ConvertTo())
    bulk.SetAttribute("MaxBytes", ns.UintegerValue(total))
    bulk.SetAttribute("SendSize", ns.UintegerValue(a.mtu - 40))
    bulk_apps = bulk.Install(nodes.Get(0))
    sink_apps.Start(ns.Seconds(0.0))
    bulk_apps.Start(ns.Seconds(0.0))
    ns.cppyy.gbl.tcpbench.Reset()
    ns.cppyy.gbl.tcpbench.Connect(sink_apps.Get(0), devices.Get(1))
    ns.Simulator.Stop(ns.Seconds(3600.0))  # safety cap, as stop_after = "1h"

    events_before = ns.Simulator.GetEventCount()
    t0 = time.perf_counter()
    ns.Simulator.Run()
    wall = time.perf_counter() - t0
    events = ns.Simulator.GetEventCount() - events_before

    tb = ns.cppyy.gbl.tcpbench
    record = {
        "run": run,
        "wall_s": wall,
        "events": int(events),
        "bytes_delivered": int(tb.rx_bytes),
        "complete": int(tb.rx_bytes) == total,
        "last_delivery_s": float(tb.last_rx_s),
        "forward_drops": int(tb.drops),
    }
    ns.Simulator.Destroy()
    return record


def main(argv: list[str] | None = None) -> int:
    a = parse_args(argv)
    t_import = time.perf_counter()
    ns = load_ns3()
    import_s = time.perf_counter() - t_import
    for w in range(a.warmup):
        one_run(ns, a, run=1000 + w)
    runs = [one_run(ns, a, run=r) for r in range(1, a.seeds + 1)]
    walls = [r["wall_s"] for r in runs]
    out = {
        "simulator": "ns-3",
        "version": "3.44",
        "import_s": import_s,
        "settings": vars(a),
        "median_wall_s": statistics.median(walls),
        "events_per_s": sum(r["events"] for r in runs) / sum(walls),
        "all_complete": all(r["complete"] for r in runs),
        "runs": runs,
    }
    json.dump(out, sys.stdout, indent=1)
    print()
    return 0 if out["all_complete"] else 2


if __name__ == "__main__":
    sys.exit(main())
