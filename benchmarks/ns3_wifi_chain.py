"""The 802.11 3-hop chain benchmark in ns-3 3.44, for `vs_ns3_wifi.py`.

    benchmarks/.ns3-venv/bin/python benchmarks/ns3_wifi_chain.py --seeds 3

Run with the Python of the venv that holds the `ns3` wheel (3.44.x, prebuilt libraries and cppyy
bindings); `vs_ns3_wifi.py` calls it in an empty temporary working directory with a minimal PATH,
as `vs_ns3.py` does (the wheel's loader searches the working directory, PATH and LD_LIBRARY_PATH
for `libns3*.so` and refuses to start if it finds two copies). Run by hand from elsewhere, the
script moves itself into an empty temporary directory and trims PATH before it imports the
bindings, for the same reason.

It prints one JSON object on stdout: the settings (including what was read back from the built
objects: slot, SIFS, contention window, queue, the control-response rate) and, per seed (RngRun
1..N, after `--warmup` untimed runs), the wall time of `Simulator::Run()` alone, the events the
scheduler executed (`Simulator::GetEventCount()`, cancelled timers included), the bytes delivered
to the sink, the completion time (last byte at the sink) and goodput. The timed run carries one
trace hook, on the sink. MAC, PHY and TCP counters come from a second, untimed run of the same
seed with more hooks (same seed, so the same run: the script checks that events, bytes and
completion agree), unless `--no-counters`.

The world is benchmarks/wifi_chain.toml's, setting by setting:
- four nodes a, b, c, d on a line `--spacing` metres apart, one YansWifiChannel with
  constant-speed delay and, by default, the same received power (`--rss`, -60 dBm) between every
  pair (FixedRssLossModel): everyone decodes everyone, a single collision domain, and two frames
  that overlap at a receiver are both lost (SINR 0 dB), which is tcpenergy's reception model
  (protocol interference, no capture). `--propagation log-distance` uses
  YansWifiChannelHelper::Default's loss instead: everyone still in range (-52 to -66 dBm at 5 m
  spacing, sensitivity -101 dBm), but the nearer of two overlapping senders is often decoded;
- WifiHelper with WIFI_STANDARD_80211b (slot 20 us, SIFS 10 us, CW 31..1023), YansWifiPhy,
  AdhocWifiMac (no QoS: one DCF queue), ConstantRateWifiManager with DataMode `--data-rate`
  (DsssRate11Mbps) and ControlMode the highest basic rate (DsssRate2Mbps; it only sets the RTS
  rate), RTS/CTS off (RtsCtsThreshold at its maximum, 4692480 bytes, above any frame), at most
  `--retry-limit` attempts per frame (WifiMac::FrameRetryLimit, 7 = dot11ShortRetryLimit; ns-3
  3.44 has one limit for every frame size), long preamble (the ad hoc MAC never enables short
  preambles; the counter run tallies every frame by kind, mode and preamble);
- the control-response rate: ns-3 sends an ACK at the highest rate of the station manager's
  BSSBasicRateSet that is not above the data frame's rate and of a compatible modulation class
  (WifiRemoteStationManager::GetControlAnswerMode, IEEE 802.11-2012 9.7); ControlMode does not
  enter into it. AdhocWifiMac::Enqueue, on the first frame to a new peer, calls
  AddAllSupportedModes, which adds every mandatory mode to the basic set, and ns-3 marks all
  four DSSS/HR-DSSS rates mandatory: left alone, ACKs to 11 Mbit/s data would go at 11 Mbit/s.
  So before the run every station is told its three peers' rates and marked as knowing them
  (RecordDisassociated: no longer brand new, so Enqueue skips AddAllSupportedModes), and its
  basic set is the DSSS rates up to `--basic-rate` ({1, 2} Mbit/s). The script checks the
  resulting ACK TXVECTOR before the run and counts the modes of every ACK sent in the counter run;
- Wifi MAC queue of `--queue` MPDUs (the MPDU in service stays in it until acknowledged) with its
  500 ms lifetime raised to 1 h (tcpenergy expires nothing), no queue disc (the FqCoDel that
  Ipv4AddressHelper::Assign installs is removed), device MTU `--mtu`;
- fixed random stream numbers (WifiHelper, channel and InternetStackHelper AssignStreams), so a
  run depends on RngRun alone, not on the worlds built before it in the same process;
- one /24, ARP caches filled before the run (NeighborCacheHelper: no ARP frames), and
  Ipv4StaticRouting host routes forcing the chain both ways (a and b reach d via the next node
  towards d, d and c reach a via the next node towards a, and so on), which win over the /24;
- TCP as benchmarks/ns3_standard_run.py matches standard.toml: TcpNewReno congestion ops, classic
  recovery, SACK on, segment size MTU - 40, initial cwnd 2, delayed ACK every 2 segments / 200 ms,
  min RTO 1 s, initial RTO and SYN timeout 1 s, clock granularity 1 ms, receive buffer and
  initial ssthresh 64 KB, window at most 65535 bytes, timestamps, window scaling, limited
  transmit and pacing off, connection never abandoned;
- a BulkSendApplication on a sending `--bytes` (5 MB = 5,000,000 bytes) to a PacketSink on d.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time

from ns3_dumbbell import isolate_from_other_ns3_copies

NODES = ("a", "b", "c", "d")
SAFETY_STOP_S = 3600.0  # the scenario's stop_after = "1h"
MAC_QUEUE_LIFETIME = "3600s"

# The rates of 802.11b (IEEE 802.11-2020 clauses 15 and 16) and their ns-3 mode names.
DSSS_MODES = {1_000_000: "DsssRate1Mbps", 2_000_000: "DsssRate2Mbps",
              5_500_000: "DsssRate5_5Mbps", 11_000_000: "DsssRate11Mbps"}

_SIZE_UNITS = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9,
               "KIB": 2**10, "MIB": 2**20, "GIB": 2**30}
_RATE_UNITS = {"bps": 1, "kbps": 10**3, "Mbps": 10**6, "Gbps": 10**9}

HELPERS = r"""
namespace wifichain {
using namespace ns3;

// --- the timed run: the sink's deliveries only -----------------------------------------------
uint64_t rx_bytes = 0;
int64_t last_rx_ns = 0;
void OnSinkRx(Ptr<const Packet> p, const Address&) {
    rx_bytes += p->GetSize();
    last_rx_ns = Simulator::Now().GetNanoSeconds();
}
void WatchSink(Ptr<Application> sink) {
    sink->TraceConnectWithoutContext("Rx", MakeCallback(&OnSinkRx));
}

// --- rates -----------------------------------------------------------------------------------
// Every station knows its peers' rates before the first frame, so AdhocWifiMac::Enqueue never
// calls AddAllSupportedModes (which would put all four mandatory DSSS rates in the basic set),
// and its basic set is exactly `basic`.
void SetRates(NetDeviceContainer devices, std::vector<std::string> basic) {
    for (uint32_t i = 0; i < devices.GetN(); ++i) {
        Ptr<WifiNetDevice> dev = DynamicCast<WifiNetDevice>(devices.Get(i));
        Ptr<WifiRemoteStationManager> manager = dev->GetRemoteStationManager();
        for (uint32_t j = 0; j < devices.GetN(); ++j) {
            if (j == i) continue;
            Mac48Address peer = Mac48Address::ConvertFrom(devices.Get(j)->GetAddress());
            for (const auto& mode : dev->GetPhy()->GetModeList()) {
                manager->AddSupportedMode(peer, mode);
            }
            manager->RecordDisassociated(peer);
        }
        for (const auto& name : basic) {
            manager->AddBasicMode(WifiMode(name));
        }
    }
}

// The TXVECTOR station i would answer a data frame from station j with (mode and preamble).
std::string AckTxVector(NetDeviceContainer devices, uint32_t i, uint32_t j, std::string dataMode) {
    Ptr<WifiNetDevice> dev = DynamicCast<WifiNetDevice>(devices.Get(i));
    Mac48Address peer = Mac48Address::ConvertFrom(devices.Get(j)->GetAddress());
    WifiTxVector data;
    data.SetMode(WifiMode(dataMode));
    data.SetPreambleType(WIFI_PREAMBLE_LONG);
    data.SetChannelWidth(22);
    WifiTxVector ack = dev->GetRemoteStationManager()->GetAckTxVector(peer, data);
    std::ostringstream out;
    out << ack.GetMode().GetUniqueName() << " "
        << (ack.GetPreambleType() == WIFI_PREAMBLE_LONG ? "long" : "short");
    return out.str();
}

std::string MacSettings(Ptr<NetDevice> device) {
    Ptr<WifiNetDevice> dev = DynamicCast<WifiNetDevice>(device);
    Ptr<WifiPhy> phy = dev->GetPhy();
    Ptr<Txop> txop = dev->GetMac()->GetTxop();
    Ptr<WifiMacQueue> queue = txop->GetWifiMacQueue();
    std::ostringstream out;
    out << "slot_us=" << phy->GetSlot().GetMicroSeconds()
        << " sifs_us=" << phy->GetSifs().GetMicroSeconds()
        << " cw_min=" << txop->GetMinCw() << " cw_max=" << txop->GetMaxCw()
        << " aifsn=" << +txop->GetAifsn()
        << " queue=" << queue->GetMaxSize()
        << " queue_lifetime_s=" << queue->GetMaxDelay().GetSeconds()
        << " retry_limit=" << dev->GetMac()->GetFrameRetryLimit()
        << " qos=" << dev->GetMac()->GetQosSupported()
        << " tx_power_dbm=" << phy->GetTxPowerStart()
        << " rx_sensitivity_dbm=" << phy->GetRxSensitivity()
        << " cca_ed_dbm=" << phy->GetCcaEdThreshold();
    return out.str();
}

// --- the counter run -------------------------------------------------------------------------
struct NodeCounters {
    uint64_t data_tx = 0;          // data frames put on the air
    uint64_t data_retry_tx = 0;    // ... of which retransmissions (Retry bit set)
    uint64_t ack_tx = 0;           // MAC ACK frames
    uint64_t data_failed = 0;      // attempts that got no ACK (MacTxDataFailed)
    uint64_t final_failed = 0;     // MPDUs given up at the retry limit (MacTxFinalDataFailed)
    uint64_t drop_queue = 0;       // DroppedMpdu: failed enqueue (queue full)
    uint64_t drop_lifetime = 0;    // DroppedMpdu: lifetime expired
    uint64_t drop_retry = 0;       // DroppedMpdu: retry limit
    uint64_t phy_rx_drop = 0;      // PhyRxDrop (any reason, frames for anyone)
    uint64_t phy_tx_drop = 0;      // PhyTxDrop
    uint64_t overlapped_tx = 0;    // frames whose airtime overlapped another station's frame
};
std::vector<NodeCounters> nodes;
std::map<std::string, uint64_t> frames;  // "ACK DsssRate2Mbps long" -> count
int64_t busy_until_ns = 0;
int64_t busy_ns = 0;                     // union of every transmission's airtime
uint64_t collisions = 0;                 // busy periods in which two or more frames overlapped
struct OnAir { uint32_t node; int64_t end_ns; bool overlapped; };
std::vector<OnAir> on_air;               // frames on the air now (at most one per station)
uint64_t tcp_segments = 0, tcp_retransmissions = 0;
uint32_t tcp_high_end = 0;               // highest sequence number sent + 1
uint32_t ack_target = 0;                 // the ACK number that covers the last byte
int64_t sender_done_ns = -1;             // when that ACK reached the sender's IP layer

void ResetCounters(uint32_t n, uint32_t lastByteAck) {
    nodes.assign(n, NodeCounters());
    frames.clear();
    busy_until_ns = busy_ns = 0;
    collisions = 0;
    on_air.clear();
    tcp_segments = tcp_retransmissions = tcp_high_end = 0;
    ack_target = lastByteAck;
    sender_done_ns = -1;
}

void OnPsduTx(uint32_t node, WifiConstPsduMap psdus, WifiTxVector txVector, double) {
    int64_t now = Simulator::Now().GetNanoSeconds();
    int64_t end = now + WifiPhy::CalculateTxDuration(psdus, txVector, WIFI_PHY_BAND_2_4GHZ)
                            .GetNanoSeconds();
    if (end > busy_until_ns) busy_ns += end - std::max(now, busy_until_ns);
    // Overlaps: a frame that starts while another is on the air overlaps it (both count once).
    on_air.erase(std::remove_if(on_air.begin(), on_air.end(),
                                [now](const OnAir& f) { return f.end_ns <= now; }),
                 on_air.end());
    bool overlap = !on_air.empty();
    if (overlap) {
        bool fresh = true;  // the first overlap of this busy period
        for (auto& f : on_air) {
            if (f.overlapped) fresh = false;
            if (!f.overlapped) { f.overlapped = true; ++nodes[f.node].overlapped_tx; }
        }
        if (fresh) ++collisions;
        ++nodes[node].overlapped_tx;
    }
    on_air.push_back({node, end, overlap});
    busy_until_ns = std::max(busy_until_ns, end);
    for (const auto& kv : psdus) {
        const WifiMacHeader& hdr = kv.second->GetHeader(0);
        std::string kind = hdr.IsAck() ? "ACK" : hdr.IsData() ? "DATA" : hdr.IsRts() ? "RTS"
                         : hdr.IsCts() ? "CTS" : "OTHER";
        if (hdr.IsData()) {
            ++nodes[node].data_tx;
            if (hdr.IsRetry()) ++nodes[node].data_retry_tx;
        } else if (hdr.IsAck()) {
            ++nodes[node].ack_tx;
        }
        std::ostringstream key;
        key << kind << " " << txVector.GetMode().GetUniqueName() << " "
            << (txVector.GetPreambleType() == WIFI_PREAMBLE_LONG ? "long" : "short");
        ++frames[key.str()];
    }
}
void OnDataFailed(uint32_t node, Mac48Address) { ++nodes[node].data_failed; }
void OnFinalDataFailed(uint32_t node, Mac48Address) { ++nodes[node].final_failed; }
void OnDropped(uint32_t node, WifiMacDropReason reason, Ptr<const WifiMpdu>) {
    if (reason == WIFI_MAC_DROP_FAILED_ENQUEUE) ++nodes[node].drop_queue;
    else if (reason == WIFI_MAC_DROP_EXPIRED_LIFETIME) ++nodes[node].drop_lifetime;
    else if (reason == WIFI_MAC_DROP_REACHED_RETRY_LIMIT) ++nodes[node].drop_retry;
}
void OnPhyRxDrop(uint32_t node, Ptr<const Packet>, WifiPhyRxfailureReason) {
    ++nodes[node].phy_rx_drop;
}
void OnPhyTxDrop(uint32_t node, Ptr<const Packet>) { ++nodes[node].phy_tx_drop; }

// The sender's TCP, seen at its IP layer: data segments out, ACKs in.
void OnSenderIpTx(Ptr<const Packet> packet, Ptr<Ipv4>, uint32_t) {
    Ptr<Packet> p = packet->Copy();
    Ipv4Header ip;
    p->RemoveHeader(ip);
    if (ip.GetProtocol() != 6) return;
    TcpHeader tcp;
    p->RemoveHeader(tcp);
    uint32_t len = p->GetSize();
    if (len == 0) return;
    uint32_t seq = tcp.GetSequenceNumber().GetValue();
    ++tcp_segments;
    if (seq < tcp_high_end) ++tcp_retransmissions;
    tcp_high_end = std::max(tcp_high_end, seq + len);
}
void OnSenderIpRx(Ptr<const Packet> packet, Ptr<Ipv4>, uint32_t) {
    Ptr<Packet> p = packet->Copy();
    Ipv4Header ip;
    p->RemoveHeader(ip);
    if (ip.GetProtocol() != 6) return;
    TcpHeader tcp;
    p->RemoveHeader(tcp);
    if (sender_done_ns < 0 && (tcp.GetFlags() & TcpHeader::ACK)
            && tcp.GetAckNumber().GetValue() >= ack_target) {
        sender_done_ns = Simulator::Now().GetNanoSeconds();
    }
}

void WatchEverything(NetDeviceContainer devices, Ptr<Node> sender) {
    for (uint32_t i = 0; i < devices.GetN(); ++i) {
        Ptr<WifiNetDevice> dev = DynamicCast<WifiNetDevice>(devices.Get(i));
        dev->GetPhy()->TraceConnectWithoutContext("PhyTxPsduBegin",
                                                  MakeBoundCallback(&OnPsduTx, i));
        dev->GetPhy()->TraceConnectWithoutContext("PhyRxDrop", MakeBoundCallback(&OnPhyRxDrop, i));
        dev->GetPhy()->TraceConnectWithoutContext("PhyTxDrop", MakeBoundCallback(&OnPhyTxDrop, i));
        dev->GetRemoteStationManager()->TraceConnectWithoutContext(
            "MacTxDataFailed", MakeBoundCallback(&OnDataFailed, i));
        dev->GetRemoteStationManager()->TraceConnectWithoutContext(
            "MacTxFinalDataFailed", MakeBoundCallback(&OnFinalDataFailed, i));
        dev->GetMac()->TraceConnectWithoutContext("DroppedMpdu", MakeBoundCallback(&OnDropped, i));
    }
    Ptr<Ipv4L3Protocol> ip = sender->GetObject<Ipv4L3Protocol>();
    ip->TraceConnectWithoutContext("Tx", MakeCallback(&OnSenderIpTx));
    ip->TraceConnectWithoutContext("Rx", MakeCallback(&OnSenderIpRx));
}

std::string FrameTally() {
    std::ostringstream out;
    for (const auto& kv : frames) out << kv.first << "=" << kv.second << ";";
    return out.str();
}
}
"""


def parse_bytes(text: str | int) -> int:
    """'5MB' -> 5_000_000 (decimal SI, as in the scenario format; KiB/MiB are binary)."""
    if isinstance(text, int):
        return text
    m = re.fullmatch(r"\s*([0-9.]+)\s*([A-Za-z]*)\s*", str(text))
    if not m or m.group(2).upper() not in _SIZE_UNITS:
        raise ValueError(f"not a byte size: {text!r} (expected e.g. '5MB', '64KB', 1500)")
    return int(float(m.group(1)) * _SIZE_UNITS[m.group(2).upper()])


def parse_rate(text: str) -> int:
    """'11Mbps' -> 11_000_000, '5.5Mbps' -> 5_500_000."""
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]+)\s*", str(text))
    if not m or m.group(2) not in _RATE_UNITS:
        raise ValueError(f"not a rate: {text!r} (expected e.g. '11Mbps', '2Mbps')")
    return round(float(m.group(1)) * _RATE_UNITS[m.group(2)])


def dsss_mode(text: str, option: str) -> str:
    rate = parse_rate(text)
    if rate not in DSSS_MODES:
        raise ValueError(f"{option}: {text!r} is not an 802.11b rate "
                         f"(allowed: 1Mbps, 2Mbps, 5.5Mbps, 11Mbps)")
    return DSSS_MODES[rate]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, default=3, help="timed runs, RngRun 1..N (default 3)")
    p.add_argument("--warmup", type=int, default=1, help="untimed runs first (default 1)")
    p.add_argument("--no-counters", action="store_true",
                   help="skip the untimed counter run after each timed run")
    p.add_argument("--data-rate", default="11Mbps")
    p.add_argument("--basic-rate", default="2Mbps",
                   help="highest rate of the basic set (the DSSS rates up to it)")
    p.add_argument("--basic-rates", nargs="+", metavar="RATE",
                   help="the basic rate set itself (instead of --basic-rate)")
    p.add_argument("--retry-limit", type=int, default=7,
                   help="attempts per frame before the MAC gives up (dot11ShortRetryLimit)")
    p.add_argument("--preamble", default="long", choices=["long"],
                   help="ns-3's ad hoc MAC only sends long DSSS preambles")
    p.add_argument("--queue", type=int, default=50, help="Wifi MAC queue, MPDUs")
    p.add_argument("--mtu", type=int, default=1500)
    p.add_argument("--bytes", default="5MB", help="BulkSend MaxBytes")
    p.add_argument("--spacing", type=float, default=5.0, help="metres between neighbours")
    p.add_argument("--propagation", default="fixed-rss", choices=["fixed-rss", "log-distance"],
                   help="fixed-rss (default): every pair receives at --rss dBm, so two frames "
                        "that overlap are both lost, as in tcpenergy's model (no capture); "
                        "log-distance: YansWifiChannelHelper::Default's loss, where the nearer "
                        "of two overlapping senders may still get through")
    p.add_argument("--rss", type=float, default=-60.0, help="dBm, with --propagation fixed-rss")
    p.add_argument("--initial-window", type=int, default=2, help="segments")
    p.add_argument("--receive-buffer", default="64KB")
    p.add_argument("--initial-ssthresh", default="64KB")
    p.add_argument("--min-rto", default="1s")
    p.add_argument("--delack-count", type=int, default=2)
    p.add_argument("--delack-timeout", default="200ms")
    a = p.parse_args(argv)
    try:
        a.data_mode = dsss_mode(a.data_rate, "--data-rate")
        if a.basic_rates:
            for rate in a.basic_rates:
                dsss_mode(rate, "--basic-rates")
            a.basic_modes = [DSSS_MODES[r] for r in sorted({parse_rate(x) for x in a.basic_rates})]
        else:
            basic = parse_rate(a.basic_rate)
            dsss_mode(a.basic_rate, "--basic-rate")
            a.basic_modes = [m for r, m in sorted(DSSS_MODES.items()) if r <= basic]
        a.total_bytes = parse_bytes(a.bytes)
        parse_bytes(a.receive_buffer)
        parse_bytes(a.initial_ssthresh)
    except ValueError as exc:
        p.error(str(exc))
    if a.seeds < 1:
        p.error("--seeds: must be at least 1")
    if not 1 <= a.retry_limit <= 65535:
        p.error("--retry-limit: must be in [1, 65535]")
    if not 1 <= a.queue:
        p.error("--queue: must be at least 1 MPDU")
    if not 68 <= a.mtu <= 2296:
        p.error("--mtu: must be in [68, 2296] (the largest 802.11 MSDU is 2304 bytes)")
    if a.spacing <= 0:
        p.error("--spacing: must be positive")
    return a


def load_ns3():
    """Import the bindings (slow: cppyy parses the ns-3 headers) and compile the C++ helpers."""
    from ns import ns  # noqa: PLC0415

    for header in ("core", "network", "internet", "applications", "mobility", "wifi",
                   "propagation"):
        ns.cppyy.include(f"ns3/{header}-module.h")
    ns.cppyy.include("sstream")
    ns.cppyy.include("algorithm")
    ns.cppyy.cppdef(HELPERS)
    return ns


def configure_tcp(ns, a: argparse.Namespace) -> None:
    """Config::SetDefault for every TCP knob of the scenario's [tcp] table."""
    sd = ns.Config.SetDefault
    sd("ns3::TcpL4Protocol::SocketType", ns.StringValue("ns3::TcpNewReno"))
    sd("ns3::TcpL4Protocol::RecoveryType", ns.StringValue("ns3::TcpClassicRecovery"))
    sd("ns3::RttEstimator::InitialEstimation", ns.TimeValue(ns.Seconds(1.0)))
    sd("ns3::TcpSocket::SegmentSize", ns.UintegerValue(a.mtu - 40))
    sd("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(a.initial_window))
    sd("ns3::TcpSocket::DelAckCount", ns.UintegerValue(a.delack_count))
    sd("ns3::TcpSocket::DelAckTimeout", ns.TimeValue(ns.Time(a.delack_timeout)))
    sd("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(parse_bytes(a.receive_buffer)))
    sd("ns3::TcpSocket::InitialSlowStartThreshold",
       ns.UintegerValue(parse_bytes(a.initial_ssthresh)))
    sd("ns3::TcpSocket::ConnTimeout", ns.TimeValue(ns.Seconds(1.0)))
    # tcpenergy never abandons a connection; ns-3 would after 6 expiries without progress.
    sd("ns3::TcpSocket::ConnCount", ns.UintegerValue(1000))
    sd("ns3::TcpSocket::DataRetries", ns.UintegerValue(1000))
    sd("ns3::TcpSocket::TcpNoDelay", ns.BooleanValue(True))
    sd("ns3::TcpSocketBase::MaxWindowSize", ns.UintegerValue(65535))
    sd("ns3::TcpSocketBase::MinRto", ns.TimeValue(ns.Time(a.min_rto)))
    sd("ns3::TcpSocketBase::ClockGranularity", ns.TimeValue(ns.MilliSeconds(1)))
    sd("ns3::TcpSocketBase::Sack", ns.BooleanValue(True))
    sd("ns3::TcpSocketBase::Timestamp", ns.BooleanValue(False))
    sd("ns3::TcpSocketBase::WindowScaling", ns.BooleanValue(False))
    sd("ns3::TcpSocketBase::LimitedTransmit", ns.BooleanValue(False))
    sd("ns3::TcpSocketBase::UseEcn", ns.StringValue("Off"))
    sd("ns3::TcpSocketState::EnablePacing", ns.BooleanValue(False))


def configure_mac(ns, a: argparse.Namespace) -> None:
    """Config::SetDefault for the MAC knobs the helpers do not expose."""
    sd = ns.Config.SetDefault
    sd("ns3::WifiMacQueue::MaxSize", ns.QueueSizeValue(ns.QueueSize(f"{a.queue}p")))
    sd("ns3::WifiMacQueue::MaxDelay", ns.TimeValue(ns.Time(MAC_QUEUE_LIFETIME)))
    sd("ns3::WifiRemoteStationManager::RtsCtsThreshold", ns.UintegerValue(4692480))
    sd("ns3::WifiRemoteStationManager::FragmentationThreshold", ns.UintegerValue(65535))
    # dot11ShortRetryLimit: 7 attempts, then the MPDU is dropped (ns-3 3.44 has one limit for
    # every frame size; with RTS/CTS off the standard's long limit never applies anyway).
    sd("ns3::WifiMac::FrameRetryLimit", ns.UintegerValue(a.retry_limit))


class World:
    """The chain for one RngRun: nodes, devices, routes, applications (built, not yet run)."""

    def __init__(self, ns, a: argparse.Namespace, run: int):
        ns.RngSeedManager.SetSeed(1)
        ns.RngSeedManager.SetRun(run)
        configure_tcp(ns, a)
        configure_mac(ns, a)
        helpers = ns.cppyy.gbl.wifichain

        self.nodes = ns.NodeContainer()
        self.nodes.Create(len(NODES))
        positions = ns.CreateObject[ns.ListPositionAllocator]()
        for i in range(len(NODES)):
            positions.Add(ns.Vector(i * a.spacing, 0.0, 0.0))
        mobility = ns.MobilityHelper()
        mobility.SetPositionAllocator(positions)
        mobility.SetMobilityModel("ns3::ConstantPositionMobilityModel")
        mobility.Install(self.nodes)

        if a.propagation == "log-distance":
            self.loss = ns.CreateObject[ns.LogDistancePropagationLossModel]()
        else:
            self.loss = ns.CreateObject[ns.FixedRssLossModel]()
            self.loss.SetAttribute("Rss", ns.DoubleValue(a.rss))
        channel = ns.CreateObject[ns.YansWifiChannel]()
        channel.SetPropagationLossModel(self.loss)
        channel.SetPropagationDelayModel(ns.CreateObject[ns.ConstantSpeedPropagationDelayModel]())
        phy = ns.YansWifiPhyHelper()
        phy.SetChannel(channel)
        mac = ns.WifiMacHelper()
        mac.SetType("ns3::AdhocWifiMac")
        wifi = ns.WifiHelper()
        wifi.SetStandard(ns.WIFI_STANDARD_80211b)
        wifi.SetRemoteStationManager("ns3::ConstantRateWifiManager",
                                     "DataMode", ns.StringValue(a.data_mode),
                                     "ControlMode", ns.StringValue(a.basic_modes[-1]))
        self.devices = wifi.Install(phy, mac, self.nodes)
        for i in range(self.devices.GetN()):
            self.devices.Get(i).SetMtu(a.mtu)

        ns.InternetStackHelper().Install(self.nodes)
        addresses = ns.Ipv4AddressHelper()
        addresses.SetBase(ns.Ipv4Address("10.0.0.0"), ns.Ipv4Mask("255.255.255.0"))
        self.ifaces = addresses.Assign(self.devices)
        # Assign() installs a default queue disc (FqCoDel); remove it so that the only queue is
        # the Wifi MAC's, as in the scenario.
        ns.TrafficControlHelper().Uninstall(self.devices)
        ns.NeighborCacheHelper().PopulateNeighborCache()
        self._route_chain(ns)

        # Fixed stream numbers: ns-3 numbers automatic streams process-wide, so without this a
        # run's random draws (backoff, PHY) would depend on how many worlds were built before it
        # in this process (warm-up, counter runs), not on RngRun alone.
        wifi.AssignStreams(self.devices, 0)
        channel.AssignStreams(1000)
        ns.InternetStackHelper().AssignStreams(self.nodes, 2000)

        basic = ns.cppyy.gbl.std.vector[ns.cppyy.gbl.std.string](a.basic_modes)
        helpers.SetRates(self.devices, basic)

        port = 5000
        sink_helper = ns.PacketSinkHelper(
            "ns3::TcpSocketFactory",
            ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo())
        self.sink_apps = sink_helper.Install(self.nodes.Get(len(NODES) - 1))
        bulk = ns.BulkSendHelper(
            "ns3::TcpSocketFactory",
            ns.InetSocketAddress(self.ifaces.GetAddress(len(NODES) - 1), port).ConvertTo())
        bulk.SetAttribute("MaxBytes", ns.UintegerValue(a.total_bytes))
        bulk.SetAttribute("SendSize", ns.UintegerValue(a.mtu - 40))
        self.bulk_apps = bulk.Install(self.nodes.Get(0))
        self.sink_apps.Start(ns.Seconds(0.0))
        self.bulk_apps.Start(ns.Seconds(0.0))
        helpers.rx_bytes = 0
        helpers.last_rx_ns = 0
        helpers.WatchSink(self.sink_apps.Get(0))
        ns.Simulator.Stop(ns.Seconds(SAFETY_STOP_S))

    def _route_chain(self, ns) -> None:
        """Host routes along the chain both ways: node i reaches node k (k != i +- 0) through
        its neighbour towards k; they override the /24's direct route (longest prefix)."""
        routing = ns.Ipv4StaticRoutingHelper()
        n = len(NODES)
        for i in range(n):
            table = routing.GetStaticRouting(self.nodes.Get(i).GetObject[ns.Ipv4]())
            for k in range(n):
                if abs(k - i) < 2:
                    continue  # itself, or a neighbour: the /24 route is the chain's next hop
                hop = i + 1 if k > i else i - 1
                table.AddHostRouteTo(self.ifaces.GetAddress(k), self.ifaces.GetAddress(hop), 1)

    def rx_power_dbm(self, ns, tx_power_dbm: float) -> dict:
        """Received power between every pair, from the channel's own loss model."""
        out = {}
        for i in range(len(NODES)):
            for k in range(i + 1, len(NODES)):
                mi = self.nodes.Get(i).GetObject[ns.MobilityModel]()
                mk = self.nodes.Get(k).GetObject[ns.MobilityModel]()
                rx = self.loss.CalcRxPower(tx_power_dbm, mi, mk)
                out[f"{NODES[i]}-{NODES[k]}"] = round(rx, 2)
        return out


def one_run(ns, a: argparse.Namespace, run: int, counters: bool = False) -> dict:
    """Build the chain for RngRun `run`, time Simulator::Run(), read the hooks, tear down."""
    world = World(ns, a, run)
    helpers = ns.cppyy.gbl.wifichain
    if counters:
        helpers.ResetCounters(len(NODES), 1 + a.total_bytes)  # ns-3's ISN is 0; the SYN takes 1
        helpers.WatchEverything(world.devices, world.nodes.Get(0))

    events_before = ns.Simulator.GetEventCount()
    t0 = time.perf_counter()
    ns.Simulator.Run()
    wall = time.perf_counter() - t0
    events = ns.Simulator.GetEventCount() - events_before

    delivered = int(helpers.rx_bytes)
    done_s = int(helpers.last_rx_ns) / 1e9
    record = {
        "run": run,
        "wall_s": wall,
        "events": int(events),
        "bytes_delivered": delivered,
        "complete": delivered == a.total_bytes,
        "completion_s": done_s,
        "goodput_bps": 8 * delivered / done_s if done_s > 0 else 0.0,
    }
    if counters:
        record["counters"] = read_counters(ns, a, delivered)
    ns.Simulator.Destroy()
    return record


def read_counters(ns, a: argparse.Namespace, delivered: int) -> dict:
    helpers = ns.cppyy.gbl.wifichain
    fields = ("data_tx", "data_retry_tx", "ack_tx", "data_failed", "final_failed", "drop_queue",
              "drop_lifetime", "drop_retry", "phy_rx_drop", "phy_tx_drop", "overlapped_tx")
    per_node = {name: {f: int(getattr(helpers.nodes[i], f)) for f in fields}
                for i, name in enumerate(NODES)}
    total = {f: sum(n[f] for n in per_node.values()) for f in fields}
    tally = {}
    for item in str(helpers.FrameTally()).split(";"):
        if item:
            key, _, count = item.rpartition("=")
            tally[key] = int(count)
    sender_done_s = int(helpers.sender_done_ns) / 1e9 if helpers.sender_done_ns >= 0 else None
    return {
        "mac": total,
        "mac_per_node": per_node,
        "frames_by_mode": tally,
        "busy_s": int(helpers.busy_ns) / 1e9,
        "collisions": int(helpers.collisions),
        "tcp_data_segments": int(helpers.tcp_segments),
        "tcp_retransmissions": int(helpers.tcp_retransmissions),
        # tcpenergy's definitions: completion = the ACK of the last byte back at the sender.
        "sender_completion_s": sender_done_s,
        "sender_goodput_bps": 8 * delivered / sender_done_s if sender_done_s else None,
    }


def describe(ns, a: argparse.Namespace) -> dict:
    """What the built world really is: read back from the objects of one (unrun) build."""
    world = World(ns, a, run=1)
    helpers = ns.cppyy.gbl.wifichain
    mac = dict(kv.split("=", 1) for kv in str(helpers.MacSettings(world.devices.Get(0))).split())
    n = len(NODES)
    acks = {f"{NODES[i]}<-{NODES[j]}": str(helpers.AckTxVector(world.devices, i, j, a.data_mode))
            for i in range(n) for j in range(n) if abs(i - j) == 1}
    out = {
        "nodes": list(NODES),
        "spacing_m": a.spacing,
        "propagation": a.propagation,
        "rx_power_dbm": world.rx_power_dbm(ns, float(mac["tx_power_dbm"])),
        "mac": mac,
        "data_mode": a.data_mode,
        "basic_modes": a.basic_modes,
        "ack_txvector": acks,
    }
    ns.Simulator.Destroy()
    return out


def main(argv: list[str] | None = None) -> int:
    a = parse_args(argv)
    isolate_from_other_ns3_copies("ns3-wifi-chain-")
    t_import = time.perf_counter()
    ns = load_ns3()
    import_s = time.perf_counter() - t_import
    built = describe(ns, a)
    for w in range(a.warmup):
        one_run(ns, a, run=1000 + w)
    runs = []
    for run in range(1, a.seeds + 1):
        record = one_run(ns, a, run)
        if not a.no_counters:
            again = one_run(ns, a, run, counters=True)
            record["counters"] = again["counters"]
            # Same seed, same run: the hooks only count (no events, no random draws).
            record["counter_run_identical"] = all(
                again[k] == record[k] for k in ("events", "bytes_delivered", "completion_s"))
        runs.append(record)
    walls = [r["wall_s"] for r in runs]
    settings = {k: v for k, v in vars(a).items() if k != "no_counters"}
    out = {
        "simulator": "ns-3",
        "version": "3.44",
        "import_s": import_s,
        "settings": settings,
        "built": built,
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
