"""The seed-004 dumbbell in ns-3 3.44, for `vs_ns3_dumbbell.py`.

    benchmarks/.ns3-venv/bin/python benchmarks/ns3_dumbbell.py --flows 30 --per 0.01 --seed 1 2 3

Run with the Python of the venv that holds the `ns3` wheel (3.44.x, prebuilt libraries and cppyy
bindings); `vs_ns3_dumbbell.py` calls it in an empty temporary working directory with a minimal
PATH, as `vs_ns3.py` does (the wheel's loader searches the working directory, PATH and
LD_LIBRARY_PATH for `libns3*.so` and refuses to start if it finds two copies). Run by hand from
elsewhere, the script moves itself into an empty temporary directory and trims PATH before it
imports the bindings, for the same reason.

It prints one JSON line per seed on stdout: `wall_s` (`Simulator::Run()` alone, perf_counter),
`events` (`Simulator::GetEventCount()`, cancelled timers included), per-flow bytes delivered to
each sink (`PacketSink::GetTotalRx`), per-flow goodput over the flow's active time, the aggregate
goodput (all bytes delivered x 8 / duration), the error model's drops, and `n_flows`.

The world is tcpenergy.topology.dumbbell's, setting by setting:
- nodes s1..sN, r1, r2, d1..dN; PointToPoint links si-r1 and r2-di at `--access-rate` /
  `--access-delay`, r1-r2 at `--bottleneck-rate` / `--bottleneck-delay`, device MTU `--mtu`, a
  DropTail device queue of `--queue` packets on every device and no queue disc (the FqCoDel that
  Ipv4AddressHelper::Assign installs is removed); one /24 per link, global routing;
- a per-packet RateErrorModel of rate `--per` on each sink's device (the r2 -> di direction only:
  data is lost, ACKs are not), each on its own fixed random stream;
- TCP as tcpenergy.topology.TCP_DEFAULTS: TcpNewReno congestion ops with classic recovery, SACK
  off for `newreno` and on for `sack`, segment size MTU - 40, initial cwnd 2, RcvBufSize and
  initial ssthresh 64000 bytes, window at most 65535 bytes (no window scaling), delayed ACK every
  2 segments / 200 ms, min RTO 1 s, initial RTO 1 s, clock granularity 1 ms, no timestamps, no
  limited transmit, no pacing, connection never abandoned;
- per flow, a BulkSendApplication with no byte limit (always data to send, tcpenergy's `timed`
  traffic) to a PacketSink on its sink; flow k (0-based) starts at floor(k x start_within / N)
  microseconds (tcpenergy.topology.start_times_us) and stops, like the simulation, at
  `--duration`.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import re
import sys
import tempfile
import time

# tcpenergy.topology.TCP_DEFAULTS, as ns-3 attribute values.
INITIAL_WINDOW = 2
RECEIVE_BUFFER = 64_000
INITIAL_SSTHRESH = 64_000
MAX_WINDOW = 65_535
DELACK_COUNT = 2
DELACK_TIMEOUT = "200ms"
MIN_RTO = "1s"
INITIAL_RTO = "1s"
CLOCK_GRANULARITY = "1ms"

SACK_BY_VARIANT = {"newreno": False, "sack": True}

_DURATION_NS = {"ns": 1, "us": 10**3, "ms": 10**6, "s": 10**9, "min": 60 * 10**9,
                "h": 3600 * 10**9}

SINKS = r"""
namespace dumbbell {
using namespace ns3;
uint64_t error_drops = 0;
void Reset() { error_drops = 0; }
void OnErrorDrop(Ptr<const Packet>) { ++error_drops; }
void Watch(Ptr<NetDevice> sinkDevice) {
    sinkDevice->TraceConnectWithoutContext("PhyRxDrop", MakeCallback(&OnErrorDrop));
}
uint64_t TotalRx(Ptr<Application> sink) { return DynamicCast<PacketSink>(sink)->GetTotalRx(); }
}
"""


def duration_ns(text: str) -> int:
    """'120s' -> 120_000_000_000 (the units of the scenario format)."""
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]*)?)\s*([a-z]+)\s*", text)
    if not m or m.group(2) not in _DURATION_NS:
        raise ValueError(f"not a duration: {text!r} (expected e.g. '120s', '2s', '20ms')")
    whole, _, frac = m.group(1).partition(".")
    scale = _DURATION_NS[m.group(2)]
    return int(whole) * scale + (int(frac) * scale // 10 ** len(frac) if frac else 0)


def start_times_us(flows: int, start_within_ns: int) -> list[int]:
    """As tcpenergy.topology.start_times_us (the harness checks the two agree)."""
    return [k * start_within_ns // (flows * 1000) for k in range(flows)]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--flows", type=int, default=30)
    p.add_argument("--per", type=float, default=0.01, help="packet error rate on r2 -> di")
    p.add_argument("--duration", default="120s")
    p.add_argument("--seed", type=int, nargs="+", default=[1],
                   help="RngRun value(s); one timed run and one JSON line each")
    p.add_argument("--variant", default="newreno", choices=sorted(SACK_BY_VARIANT))
    p.add_argument("--access-rate", default="10Mbps")
    p.add_argument("--bottleneck-rate", default="10Mbps")
    p.add_argument("--access-delay", default="1ms")
    p.add_argument("--bottleneck-delay", default="20ms")
    p.add_argument("--queue", type=int, default=100, help="DropTail device queue, packets")
    p.add_argument("--mtu", type=int, default=1500)
    p.add_argument("--start-within", default="2s")
    a = p.parse_args(argv)
    if a.flows < 1:
        p.error("--flows: must be at least 1")
    if not 0 <= a.per <= 1:
        p.error("--per: must be a packet error rate in [0, 1]")
    for option in ("duration", "access_delay", "bottleneck_delay", "start_within"):
        try:
            duration_ns(getattr(a, option))
        except ValueError as exc:
            p.error(f"--{option.replace('_', '-')}: {exc}")
    if duration_ns(a.duration) <= 0:
        p.error("--duration: must be longer than zero")
    return a


def isolate_from_other_ns3_copies(prefix: str = "ns3-dumbbell-") -> None:
    """Leave a non-empty working directory and the caller's PATH before the bindings load (the
    wheel's loader refuses to start when it finds a second copy of libns3*.so there)."""
    if os.listdir("."):
        empty = tempfile.mkdtemp(prefix=prefix)
        os.chdir(empty)
        atexit.register(os.rmdir, empty)
    os.environ["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), "/usr/bin", "/bin"])
    os.environ.pop("LD_LIBRARY_PATH", None)


def load_ns3():
    """Import the bindings (slow: cppyy parses the ns-3 headers) and compile the C++ helpers."""
    from ns import ns  # noqa: PLC0415

    ns.cppyy.include("ns3/point-to-point-module.h")
    ns.cppyy.cppdef(SINKS)
    return ns


def configure_tcp(ns, a: argparse.Namespace) -> None:
    """Config::SetDefault for every TCP attribute tcpenergy.topology.TCP_DEFAULTS fixes."""
    sd = ns.Config.SetDefault
    sd("ns3::TcpL4Protocol::SocketType", ns.StringValue("ns3::TcpNewReno"))
    sd("ns3::TcpL4Protocol::RecoveryType", ns.StringValue("ns3::TcpClassicRecovery"))
    sd("ns3::RttEstimator::InitialEstimation", ns.TimeValue(ns.Time(INITIAL_RTO)))
    sd("ns3::TcpSocket::SegmentSize", ns.UintegerValue(a.mtu - 40))
    sd("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(INITIAL_WINDOW))
    sd("ns3::TcpSocket::InitialSlowStartThreshold", ns.UintegerValue(INITIAL_SSTHRESH))
    sd("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(RECEIVE_BUFFER))
    sd("ns3::TcpSocket::DelAckCount", ns.UintegerValue(DELACK_COUNT))
    sd("ns3::TcpSocket::DelAckTimeout", ns.TimeValue(ns.Time(DELACK_TIMEOUT)))
    sd("ns3::TcpSocket::ConnTimeout", ns.TimeValue(ns.Time(INITIAL_RTO)))
    # tcpenergy never abandons a connection; ns-3 would after 6 expiries without progress.
    sd("ns3::TcpSocket::ConnCount", ns.UintegerValue(1000))
    sd("ns3::TcpSocket::DataRetries", ns.UintegerValue(1000))
    sd("ns3::TcpSocket::TcpNoDelay", ns.BooleanValue(True))
    sd("ns3::TcpSocketBase::MaxWindowSize", ns.UintegerValue(MAX_WINDOW))
    sd("ns3::TcpSocketBase::MinRto", ns.TimeValue(ns.Time(MIN_RTO)))
    sd("ns3::TcpSocketBase::ClockGranularity", ns.TimeValue(ns.Time(CLOCK_GRANULARITY)))
    sd("ns3::TcpSocketBase::Sack", ns.BooleanValue(SACK_BY_VARIANT[a.variant]))
    sd("ns3::TcpSocketBase::Timestamp", ns.BooleanValue(False))
    sd("ns3::TcpSocketBase::WindowScaling", ns.BooleanValue(False))
    sd("ns3::TcpSocketBase::LimitedTransmit", ns.BooleanValue(False))
    sd("ns3::TcpSocketBase::UseEcn", ns.StringValue("Off"))
    sd("ns3::TcpSocketState::EnablePacing", ns.BooleanValue(False))


def one_run(ns, a: argparse.Namespace, seed: int) -> dict:
    """Build the dumbbell for RngRun `seed`, time Simulator::Run(), read the sinks, tear down."""
    t_build = time.perf_counter()
    ns.RngSeedManager.SetSeed(1)
    ns.RngSeedManager.SetRun(seed)
    configure_tcp(ns, a)
    n = a.flows
    stop_ns = duration_ns(a.duration)
    starts = start_times_us(n, duration_ns(a.start_within))

    sources, routers, sinks = ns.NodeContainer(), ns.NodeContainer(), ns.NodeContainer()
    sources.Create(n)
    routers.Create(2)
    sinks.Create(n)
    ns.InternetStackHelper().Install(sources)
    ns.InternetStackHelper().Install(routers)
    ns.InternetStackHelper().Install(sinks)

    def p2p(rate: str, delay: str):
        helper = ns.PointToPointHelper()
        helper.SetDeviceAttribute("DataRate", ns.StringValue(rate))
        helper.SetDeviceAttribute("Mtu", ns.UintegerValue(a.mtu))
        helper.SetChannelAttribute("Delay", ns.StringValue(delay))
        helper.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", ns.StringValue(f"{a.queue}p"))
        return helper

    access = p2p(a.access_rate, a.access_delay)
    bottleneck = p2p(a.bottleneck_rate, a.bottleneck_delay)
    addresses = ns.Ipv4AddressHelper()
    addresses.SetBase(ns.Ipv4Address("10.0.0.0"), ns.Ipv4Mask("255.255.255.0"))
    tc = ns.TrafficControlHelper()

    def connect(helper, x, y):
        devices = helper.Install(x, y)
        ifaces = addresses.Assign(devices)
        addresses.NewNetwork()
        tc.Uninstall(devices)  # the device's DropTail queue is the only queue
        return devices, ifaces

    r1, r2 = routers.Get(0), routers.Get(1)
    for i in range(n):
        connect(access, sources.Get(i), r1)
    connect(bottleneck, r1, r2)
    sink_addresses = []
    helpers = ns.cppyy.gbl.dumbbell
    for i in range(n):
        devices, ifaces = connect(access, r2, sinks.Get(i))
        em = ns.CreateObject[ns.RateErrorModel]()
        em.SetAttribute("ErrorUnit", ns.StringValue("ERROR_UNIT_PACKET"))
        em.SetAttribute("ErrorRate", ns.DoubleValue(a.per))
        # A fixed stream per sink: losses then depend on RngRun and the flow, nothing else.
        em.AssignStreams(i)
        devices.Get(1).SetAttribute("ReceiveErrorModel", ns.PointerValue(em))
        helpers.Watch(devices.Get(1))
        sink_addresses.append(ifaces.GetAddress(1))
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()

    port = 5000
    sink_apps = []
    for i in range(n):
        sink = ns.PacketSinkHelper(
            "ns3::TcpSocketFactory",
            ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo()).Install(sinks.Get(i))
        sink.Start(ns.Seconds(0.0))
        sink_apps.append(sink.Get(0))
        bulk = ns.BulkSendHelper("ns3::TcpSocketFactory",
                                 ns.InetSocketAddress(sink_addresses[i], port).ConvertTo())
        bulk.SetAttribute("MaxBytes", ns.UintegerValue(0))  # no limit
        bulk.SetAttribute("SendSize", ns.UintegerValue(a.mtu - 40))
        app = bulk.Install(sources.Get(i))
        app.Start(ns.MicroSeconds(starts[i]))
        app.Stop(ns.NanoSeconds(stop_ns))
    helpers.Reset()
    ns.Simulator.Stop(ns.NanoSeconds(stop_ns))
    build_s = time.perf_counter() - t_build

    events_before = ns.Simulator.GetEventCount()
    t0 = time.perf_counter()
    ns.Simulator.Run()
    wall = time.perf_counter() - t0
    events = ns.Simulator.GetEventCount() - events_before

    received = [int(helpers.TotalRx(s)) for s in sink_apps]
    stop_s = stop_ns / 1e9
    out = {
        "simulator": "ns-3",
        "version": "3.44",
        "seed": seed,
        "n_flows": n,
        "per": a.per,
        "variant": a.variant,
        "duration_s": stop_s,
        "wall_s": wall,
        "build_s": build_s,
        "events": int(events),
        "bytes_received": received,
        "starts_us": starts,
        "flow_goodput_bps": [8 * b / (stop_s - s / 1e6) for b, s in zip(received, starts)],
        "goodput_bps": 8 * sum(received) / stop_s,
        "error_drops": int(helpers.error_drops),
    }
    ns.Simulator.Destroy()
    return out


def main(argv: list[str] | None = None) -> int:
    a = parse_args(argv)
    isolate_from_other_ns3_copies()
    t_import = time.perf_counter()
    ns = load_ns3()
    import_s = time.perf_counter() - t_import
    for seed in a.seed:
        record = one_run(ns, a, seed)
        record["import_s"] = import_s
        print(json.dumps(record), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
