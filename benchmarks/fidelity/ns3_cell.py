"""One ns-3 3.44 worker for the fidelity grid (benchmarks/fidelity/run.py starts it).

Run with the Python of the venv that holds the `ns3` wheel (benchmarks/.ns3-venv), in an empty
working directory (the wheel's loader refuses to start if it finds a second copy of its libraries
below the working directory). The worker imports the bindings once (about 11 s), then reads one
JSON task per line on stdin and answers each with one line on stdout:

    task:   {"key": ..., "cell": {variant, loss, delay_ms, mtu, ...matched settings}, "seed": N}
    answer: RESULT {"key": ..., "result": {...}}   or   FAILED {"key": ..., "error": "..."}

It exits at the end of its input. `--defaults` prints the ns-3 version and the defaults of every
attribute the grid sets, so that the README's mapping table can be checked against the wheel;
`--verify` runs each task with extra probes that check the counters and settings (below).

What one run measures (C++ trace sinks, no Python on the per-packet path), up to the moment the
sender sees the ACK of the last data byte (`completion_s`, as tcpenergy's `flow.completion_s`):
- retransmissions: the sender socket's "Retransmission" trace (one call per data segment sent
  again), plus one per SYN lost on the forward link (ns-3 resends a SYN from its connection timer,
  which that trace does not report; tcpenergy counts a resent SYN as a retransmission);
- timeouts: retransmission-timer expiries with data outstanding. ns-3 3.44 has no trace for the
  expiry itself; TcpSocketBase::ReTxTimeout doubles m_rto (the "RTO" trace) and then resends the
  first unacknowledged segment in the same instant, so an expiry is an RTO change to exactly
  min(2 x old, 60 s) followed, at the same simulated time, by a "Retransmission" call. The one
  case this misses is an expiry with the RTO already at its 60 s cap (no change to trace). SYN
  expiries are counted from the SYNs lost on the forward link, one expiry each;
- fast_recoveries: CongState entries into CA_RECOVERY; loss_entries: entries into CA_LOSS (a
  lower bound of the timeouts, which the harness checks);
- data_segments: "Tx" calls with payload; drops: the error model's drops (PhyRxDrop of the
  receiver's device), split into SYN / data / other by the dropped packet's TCP header.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
import time
import traceback

# Attributes whose ns-3 3.44 defaults the grid overrides (the --defaults output lists them).
PROBED = [
    ("ns3::TcpL4Protocol", ["SocketType", "RecoveryType", "RttEstimatorType"]),
    ("ns3::TcpSocket", ["SndBufSize", "RcvBufSize", "SegmentSize", "InitialSlowStartThreshold",
                        "InitialCwnd", "ConnTimeout", "ConnCount", "DataRetries",
                        "DelAckTimeout", "DelAckCount", "TcpNoDelay"]),
    ("ns3::TcpSocketBase", ["MaxWindowSize", "WindowScaling", "Sack", "Timestamp", "MinRto",
                            "ClockGranularity", "ReTxThreshold", "LimitedTransmit", "UseEcn"]),
    ("ns3::TcpSocketState", ["EnablePacing"]),
    ("ns3::RttEstimator", ["InitialEstimation"]),
    ("ns3::RttMeanDeviation", ["Alpha", "Beta"]),
    ("ns3::TcpCubic", ["HyStart", "FastConvergence", "TcpFriendliness", "Beta", "C"]),
    ("ns3::DropTailQueue<Packet>", ["MaxSize"]),
]

CONGESTION_OPS = {"TcpNewReno": "ns3::TcpNewReno", "TcpLinuxReno": "ns3::TcpLinuxReno",
                  "TcpCubic": "ns3::TcpCubic"}

SINKS = r"""
namespace fidelity {
using namespace ns3;

struct Counters {
    uint64_t retx = 0, timeouts = 0, fast_recoveries = 0, loss_entries = 0, data_segments = 0;
    uint64_t drops = 0, syn_drops = 0, data_drops = 0, other_drops = 0;
    uint64_t rx_bytes = 0;
    bool done = false, hooked = false;
    double completion_s = -1.0;
    int64_t pending_rto_ns = -1;  // time of the last RTO doubling not yet matched to a resend
    uint32_t last_ack = 0;
};
Counters c;
uint32_t target_ack = 0;  // ISN 0, SYN takes one sequence number: data bytes are 1..N

void Reset(uint32_t bytes) { c = Counters(); target_ack = bytes + 1; }

void OnRto(Time oldRto, Time newRto) {
    if (c.done) return;
    Time doubled = Min(oldRto + oldRto, Seconds(60));
    if (newRto == doubled && newRto != oldRto) c.pending_rto_ns = Simulator::Now().GetNanoSeconds();
}
void OnRetransmission(Ptr<const Packet>, const TcpHeader&, const Address&, const Address&,
                      Ptr<const TcpSocketBase>) {
    if (c.done) return;
    ++c.retx;
    if (c.pending_rto_ns == Simulator::Now().GetNanoSeconds()) { ++c.timeouts; c.pending_rto_ns = -1; }
}
void OnTx(Ptr<const Packet> p, const TcpHeader&, Ptr<const TcpSocketBase>) {
    if (!c.done && p->GetSize() > 0) ++c.data_segments;
}
void OnCongState(TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t now) {
    if (c.done) return;
    if (now == TcpSocketState::CA_RECOVERY) ++c.fast_recoveries;
    if (now == TcpSocketState::CA_LOSS) ++c.loss_entries;
}
void OnHighestRxAck(SequenceNumber32, SequenceNumber32 ack) {
    c.last_ack = ack.GetValue();
    if (!c.done && ack.GetValue() >= target_ack) {
        c.done = true;
        c.completion_s = Simulator::Now().GetSeconds();
    }
}
void OnSinkRx(Ptr<const Packet> p, const Address&) { c.rx_bytes += p->GetSize(); }
void OnDrop(Ptr<const Packet> p) {
    if (c.done) return;
    ++c.drops;
    Ptr<Packet> q = p->Copy();
    PppHeader ppp; q->RemoveHeader(ppp);
    Ipv4Header ip; q->RemoveHeader(ip);
    TcpHeader tcp; q->RemoveHeader(tcp);
    bool syn = (tcp.GetFlags() & TcpHeader::SYN) && !(tcp.GetFlags() & TcpHeader::ACK);
    if (syn) { ++c.syn_drops; }
    else if (q->GetSize() > 0) { ++c.data_drops; }
    else { ++c.other_drops; }
}

// The sender's socket exists once BulkSendApplication::StartApplication has run (t = 0); hook
// its traces 1 ns later, before anything but the SYN has been sent.
void Hook(Ptr<Application> app) {
    Ptr<Socket> s = DynamicCast<BulkSendApplication>(app)->GetSocket();
    NS_ABORT_MSG_IF(!s, "fidelity: no sender socket at t = 1 ns");
    bool ok = s->TraceConnectWithoutContext("RTO", MakeCallback(&OnRto))
        && s->TraceConnectWithoutContext("Retransmission", MakeCallback(&OnRetransmission))
        && s->TraceConnectWithoutContext("Tx", MakeCallback(&OnTx))
        && s->TraceConnectWithoutContext("CongState", MakeCallback(&OnCongState))
        && s->TraceConnectWithoutContext("HighestRxAck", MakeCallback(&OnHighestRxAck));
    NS_ABORT_MSG_IF(!ok, "fidelity: a sender trace source is missing");
    c.hooked = true;
}
void Arm(Ptr<Application> bulk, Ptr<Application> sink, Ptr<NetDevice> rxDev) {
    Simulator::Schedule(NanoSeconds(1), &Hook, bulk);
    sink->TraceConnectWithoutContext("Rx", MakeCallback(&OnSinkRx));
    rxDev->TraceConnectWithoutContext("PhyRxDrop", MakeCallback(&OnDrop));
}
}  // namespace fidelity
"""


def load_ns3():
    """Import the bindings (slow: cppyy parses the headers) and compile the trace sinks."""
    from ns import ns  # noqa: PLC0415

    ns.cppyy.include("ns3/point-to-point-module.h")
    ns.cppyy.cppdef(SINKS)
    return ns


def ns3_version() -> str:
    import importlib.metadata as md  # noqa: PLC0415

    return md.version("ns3")


def configure(ns, cell: dict) -> None:
    """Config::SetDefault for every attribute the matched settings fix (README, mapping table)."""
    sd = ns.Config.SetDefault
    smss = cell["mtu"] - 40
    sd("ns3::TcpL4Protocol::SocketType", ns.StringValue(CONGESTION_OPS[cell["ns3_cc"]]))
    sd("ns3::TcpL4Protocol::RecoveryType", ns.StringValue("ns3::TcpClassicRecovery"))
    sd("ns3::TcpL4Protocol::RttEstimatorType", ns.StringValue("ns3::RttMeanDeviation"))
    sd("ns3::RttEstimator::InitialEstimation", ns.TimeValue(ns.Time(cell["initial_rto"])))
    sd("ns3::RttMeanDeviation::Alpha", ns.DoubleValue(0.125))
    sd("ns3::RttMeanDeviation::Beta", ns.DoubleValue(0.25))
    sd("ns3::TcpSocket::SegmentSize", ns.UintegerValue(smss))
    sd("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(cell["initial_window"]))
    sd("ns3::TcpSocket::InitialSlowStartThreshold", ns.UintegerValue(cell["initial_ssthresh"]))
    sd("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(cell["receive_buffer"]))
    # All application data is ready at once (tcpenergy: no send-buffer limit).
    sd("ns3::TcpSocket::SndBufSize", ns.UintegerValue(cell["bytes"]))
    sd("ns3::TcpSocket::DelAckCount", ns.UintegerValue(cell["delack_every"]))
    sd("ns3::TcpSocket::DelAckTimeout", ns.TimeValue(ns.Time(cell["delack_timeout"])))
    sd("ns3::TcpSocket::ConnTimeout", ns.TimeValue(ns.Time(cell["initial_rto"])))
    # tcpenergy never abandons a connection; ns-3 would after 6 expiries without progress.
    sd("ns3::TcpSocket::ConnCount", ns.UintegerValue(1000))
    sd("ns3::TcpSocket::DataRetries", ns.UintegerValue(1000))
    sd("ns3::TcpSocket::TcpNoDelay", ns.BooleanValue(True))
    sd("ns3::TcpSocketBase::MaxWindowSize", ns.UintegerValue(65535))
    sd("ns3::TcpSocketBase::MinRto", ns.TimeValue(ns.Time(cell["min_rto"])))
    sd("ns3::TcpSocketBase::ClockGranularity", ns.TimeValue(ns.Time(cell["clock_granularity"])))
    sd("ns3::TcpSocketBase::Sack", ns.BooleanValue(cell["sack"]))
    sd("ns3::TcpSocketBase::Timestamp", ns.BooleanValue(False))
    sd("ns3::TcpSocketBase::WindowScaling", ns.BooleanValue(False))
    sd("ns3::TcpSocketBase::ReTxThreshold", ns.UintegerValue(3))
    sd("ns3::TcpSocketBase::LimitedTransmit", ns.BooleanValue(cell["limited_transmit"]))
    sd("ns3::TcpSocketBase::UseEcn", ns.StringValue("Off"))
    sd("ns3::TcpSocketState::EnablePacing", ns.BooleanValue(False))
    if cell["ns3_cc"] == "TcpCubic":
        # tcpenergy's CUBIC has no HyStart; the rest are RFC 9438's constants.
        sd("ns3::TcpCubic::HyStart", ns.BooleanValue(False))
        sd("ns3::TcpCubic::FastConvergence", ns.BooleanValue(True))
        sd("ns3::TcpCubic::TcpFriendliness", ns.BooleanValue(True))
        sd("ns3::TcpCubic::Beta", ns.DoubleValue(0.7))
        sd("ns3::TcpCubic::C", ns.DoubleValue(0.4))


def one_run(ns, cell: dict, seed: int, probe=None) -> dict:
    """Build the two-node world for RngRun `seed`, run it, return the counters.

    `probe` (the --verify checks) gets `arm(bulk_app, devices)` just before Simulator::Run()
    and `finish(result, sink_app)` after it, before the world is destroyed."""
    ns.RngSeedManager.SetSeed(1)
    ns.RngSeedManager.SetRun(seed)
    configure(ns, cell)

    nodes = ns.NodeContainer()
    nodes.Create(2)
    p2p = ns.PointToPointHelper()
    p2p.SetDeviceAttribute("DataRate", ns.StringValue(cell["rate"]))
    p2p.SetDeviceAttribute("Mtu", ns.UintegerValue(cell["mtu"]))
    p2p.SetChannelAttribute("Delay", ns.TimeValue(ns.MicroSeconds(int(cell["delay_ms"] * 1000))))
    p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", ns.StringValue(f"{cell['queue']}p"))
    devices = p2p.Install(nodes)

    # Forward loss: every packet arriving at the receiver's device (SYN, data, the sender's
    # ACKs), after serialization and propagation, as tcpenergy's bernoulli on path.forward.
    em = ns.CreateObject[ns.RateErrorModel]()
    em.SetAttribute("ErrorUnit", ns.StringValue("ERROR_UNIT_PACKET"))
    em.SetAttribute("ErrorRate", ns.DoubleValue(cell["loss"]))
    # A fixed stream: otherwise ns-3 numbers streams from a counter that lives as long as the
    # process, and a run's losses would depend on how many runs its worker made before it.
    em.AssignStreams(0)
    devices.Get(1).SetAttribute("ReceiveErrorModel", ns.PointerValue(em))

    ns.InternetStackHelper().Install(nodes)
    addresses = ns.Ipv4AddressHelper()
    addresses.SetBase(ns.Ipv4Address("10.1.1.0"), ns.Ipv4Mask("255.255.255.0"))
    ifaces = addresses.Assign(devices)
    # Assign() installs FqCoDel; without it the device's DropTail queue is the only queue.
    ns.TrafficControlHelper().Uninstall(devices)

    port = 5000
    sink_apps = ns.PacketSinkHelper(
        "ns3::TcpSocketFactory",
        ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo()).Install(nodes.Get(1))
    bulk = ns.BulkSendHelper(
        "ns3::TcpSocketFactory", ns.InetSocketAddress(ifaces.GetAddress(1), port).ConvertTo())
    bulk.SetAttribute("MaxBytes", ns.UintegerValue(cell["bytes"]))
    bulk.SetAttribute("SendSize", ns.UintegerValue(cell["mtu"] - 40))
    bulk_apps = bulk.Install(nodes.Get(0))
    sink_apps.Start(ns.Seconds(0.0))
    bulk_apps.Start(ns.Seconds(0.0))

    fid = ns.cppyy.gbl.fidelity
    fid.Reset(cell["bytes"])
    fid.Arm(bulk_apps.Get(0), sink_apps.Get(0), devices.Get(1))
    ns.Simulator.Stop(ns.Time(cell["stop_after"]))
    if probe is not None:
        probe.arm(bulk_apps.Get(0), devices)

    t0 = time.perf_counter()
    ns.Simulator.Run()
    wall = time.perf_counter() - t0
    c = fid.c
    complete = bool(c.done)
    out = {
        "complete": complete,
        "completion_s": float(c.completion_s) if complete else None,
        "goodput_bps": 8 * cell["bytes"] / float(c.completion_s) if complete else None,
        "retransmissions": int(c.retx) + int(c.syn_drops),
        "timeouts": int(c.timeouts) + int(c.syn_drops),
        "data_retransmissions": int(c.retx),
        "data_timeouts": int(c.timeouts),
        "loss_entries": int(c.loss_entries),
        "fast_recoveries": int(c.fast_recoveries),
        "data_segments": int(c.data_segments),
        "drops": int(c.drops),
        "syn_drops": int(c.syn_drops),
        "data_drops": int(c.data_drops),
        "other_drops": int(c.other_drops),
        "sink_bytes": int(c.rx_bytes),
        "hooked": bool(c.hooked),
        "wall_s": wall,
    }
    if probe is not None:
        probe.finish(out, sink_apps.Get(0))
    ns.Simulator.Destroy()
    return out


def result_digest() -> str:
    """A digest of everything in this file that determines a run's result (the C++ sinks, the
    settings, the world): part of the harness's cache key, so a change here reruns ns-3."""
    import hashlib  # noqa: PLC0415
    import inspect  # noqa: PLC0415

    text = SINKS + inspect.getsource(configure) + inspect.getsource(one_run) + repr(CONGESTION_OPS)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def attribute_defaults(ns) -> dict:
    """The ns-3 version and the defaults of every attribute the grid sets."""
    defaults = {}
    for type_name, names in PROBED:
        tid = ns.TypeId.LookupByName(type_name)
        for name in names:
            info = ns.TypeId.AttributeInformation()
            if not tid.LookupAttributeByName(name, info):
                defaults[f"{type_name}::{name}"] = "<missing>"
                continue
            value = info.initialValue.SerializeToString(info.checker)
            defaults[f"{type_name}::{name}"] = str(value)
    return {"version": ns3_version(), "defaults": defaults}


# --verify: independent checks of the counters and of the settings on the live sockets.
CHECKS = r"""
namespace fidcheck {
using namespace ns3;
uint64_t tx_retx = 0, tx_syn = 0;
uint32_t highest_end = 0;
bool described = false;
std::string sender;
Ptr<Socket> sock;

std::string Describe(Ptr<Socket> s) {
    std::ostringstream o;
    UintegerValue u; BooleanValue b; TimeValue t; PointerValue p;
    for (const char* n : {"SegmentSize", "InitialCwnd", "InitialSlowStartThreshold", "RcvBufSize",
                          "SndBufSize", "DelAckCount", "DataRetries", "ReTxThreshold",
                          "MaxWindowSize"}) {
        s->GetAttribute(n, u); o << n << "=" << u.Get() << ";";
    }
    for (const char* n : {"Sack", "Timestamp", "WindowScaling", "LimitedTransmit", "TcpNoDelay"}) {
        s->GetAttribute(n, b); o << n << "=" << (b.Get() ? "true" : "false") << ";";
    }
    for (const char* n : {"MinRto", "ClockGranularity", "DelAckTimeout", "ConnTimeout"}) {
        s->GetAttribute(n, t); o << n << "=" << t.Get().GetMilliSeconds() << "ms;";
    }
    s->GetAttribute("CongestionOps", p);
    o << "CongestionOps=" << p.Get<Object>()->GetInstanceTypeId().GetName() << ";";
    s->GetAttribute("RecoveryOps", p);
    o << "RecoveryOps=" << p.Get<Object>()->GetInstanceTypeId().GetName() << ";";
    return o.str();
}
// A data segment that starts below the highest byte already sent is a retransmission: counted
// from the sequence numbers alone, independently of ns-3's "Retransmission" trace.
void OnTx(Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>) {
    if (fidelity::c.done) return;
    uint8_t f = h.GetFlags();
    // A SYN seen here is a resent one: the first leaves before the hook.
    if ((f & TcpHeader::SYN) && !(f & TcpHeader::ACK)) { ++tx_syn; return; }
    uint32_t size = p->GetSize();
    if (size == 0) return;
    if (!described) { sender = Describe(sock); described = true; }  // after the SYN exchange
    uint32_t seq = h.GetSequenceNumber().GetValue();
    if (seq < highest_end) ++tx_retx;
    highest_end = std::max(highest_end, seq + size);
}
void Hook(Ptr<Application> app) {
    sock = DynamicCast<BulkSendApplication>(app)->GetSocket();
    sock->TraceConnectWithoutContext("Tx", MakeCallback(&OnTx));
}
void Arm(Ptr<Application> bulk) {
    tx_retx = 0; tx_syn = 0; highest_end = 0; described = false; sender = "";
    Simulator::Schedule(NanoSeconds(2), &Hook, bulk);
    // ReTxTimeout logs "RTO. Reset cwnd to ..." at DEBUG level on every data timeout.
    LogComponentEnable("TcpSocketBase",
                       LogLevel(LOG_LEVEL_DEBUG | LOG_PREFIX_TIME | LOG_PREFIX_NODE));
}
void Disarm() {
    std::clog.flush();
    LogComponentDisable("TcpSocketBase", LogLevel(LOG_ALL | LOG_PREFIX_ALL));
}
std::string Receiver(Ptr<Application> sink) {
    auto accepted = DynamicCast<PacketSink>(sink)->GetAcceptedSockets();
    return accepted.empty() ? std::string() : Describe(accepted.front());
}
}  // namespace fidcheck
"""

_RTO_LOG = re.compile(r"^\+([0-9.eE+-]+)s 0 .*RTO\. Reset cwnd to")


def _settings(text: str) -> dict:
    return dict(kv.split("=", 1) for kv in str(text).split(";") if "=" in kv)


class Checks:
    """One run with the --verify probes: data timeouts counted from ns-3's own DEBUG log line
    in ReTxTimeout, retransmissions counted from sequence numbers in the "Tx" trace, and the
    settings read back from the live sender and receiver sockets after the handshake."""

    def __init__(self, ns):
        self.ns = ns
        self.fc = ns.cppyy.gbl.fidcheck

    def run(self, cell: dict, seed: int) -> dict:
        return one_run(self.ns, cell, seed, probe=self)

    def arm(self, bulk_app, devices) -> None:
        self.fc.Arm(bulk_app)
        sys.stderr.flush()
        self.log = tempfile.TemporaryFile("w+b")
        self.saved_stderr = os.dup(2)
        os.dup2(self.log.fileno(), 2)

    def finish(self, result: dict, sink_app) -> None:
        self.fc.Disarm()
        os.dup2(self.saved_stderr, 2)
        os.close(self.saved_stderr)
        self.log.seek(0)
        end = result["completion_s"] if result["complete"] else float("inf")
        log_timeouts = 0
        for raw in self.log:
            m = _RTO_LOG.match(raw.decode(errors="replace"))
            if m and float(m.group(1)) <= end:
                log_timeouts += 1
        self.log.close()
        result["checks"] = {
            "log_data_timeouts": log_timeouts,
            "tx_retransmissions": int(self.fc.tx_retx) + int(self.fc.tx_syn),
            "sender": _settings(self.fc.sender),
            "receiver": _settings(self.fc.Receiver(sink_app)),
        }



def main(argv: list[str]) -> int:
    ns = load_ns3()
    if "--defaults" in argv:
        print("DEFAULTS " + json.dumps(attribute_defaults(ns)), flush=True)
        return 0
    verify = "--verify" in argv
    if verify:
        ns.cppyy.cppdef(CHECKS)
    for line in sys.stdin:
        if not line.strip():
            continue
        task = json.loads(line)
        try:
            if verify:
                result = Checks(ns).run(task["cell"], task["seed"])
            else:
                result = one_run(ns, task["cell"], task["seed"])
            print("RESULT " + json.dumps({"key": task["key"], "result": result}), flush=True)
        except Exception:  # a Python-level failure: report it and go on with the next task
            print("FAILED " + json.dumps({"key": task["key"], "error": traceback.format_exc()}),
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
