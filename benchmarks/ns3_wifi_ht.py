"""One saturated 802.11n station in ns-3 3.44, for `vs_ns3_wifi_ht.py`.

    benchmarks/.ns3-venv/bin/python benchmarks/ns3_wifi_ht.py --mcs 7 --seconds 10

Run with the Python of the venv that holds the `ns3` wheel (3.44.x); like ns3_wifi_chain.py it
moves into an empty temporary directory and trims PATH before the bindings load. It prints one
JSON object: the settings, and per A-MPDU setting the UDP goodput at the sink over the
measurement window, the PSDUs the sender put on the air, and the MPDUs they carried.

The world, setting by setting (vs_ns3_wifi_ht.py builds tcpenergy's the same way):
- two nodes 5 m apart, one YansWifiChannel with the same received power both ways
  (FixedRssLossModel, -50 dBm: no frame is lost to noise), constant-speed delay;
- WifiHelper with WIFI_STANDARD_80211n on a 20 MHz channel in 5 GHz (channel 36), the long guard
  interval, one spatial stream, AdhocWifiMac (QoS: the best-effort access category, AIFSN 3),
  ConstantRateWifiManager with DataMode HtMcs`--mcs` (control answers at the highest basic rate
  not above the data frame's non-HT reference rate: 24 Mbit/s for MCS 7);
- A-MPDU: BE_MaxAmpduSize 65,535 bytes (ns-3's default for HT), or 0 with `--no-ampdu` (every
  MPDU in its own PPDU, answered by an ACK); RTS/CTS off;
- a UDP OnOff source at `--offered` (default 200 Mbit/s, far above the channel) writing
  `--packet` bytes (1472: 1500-byte IP packets), a PacketSink; no queue disc (the Wifi MAC queue
  of 1000 MPDUs is the only queue);
- goodput: UDP payload bytes the sink got during [`--warmup`, `--warmup` + `--seconds`).
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from ns3_dumbbell import isolate_from_other_ns3_copies

HELPERS = r"""
namespace wifiht {
using namespace ns3;
uint64_t rx_bytes = 0;
int64_t window_start_ns = 0;
int64_t window_end_ns = 0;
uint64_t psdus = 0;
uint64_t mpdus = 0;
void OnSinkRx(Ptr<const Packet> p, const Address&) {
    int64_t now = Simulator::Now().GetNanoSeconds();
    if (now >= window_start_ns && now < window_end_ns) rx_bytes += p->GetSize();
}
void OnPsduTx(WifiConstPsduMap psdus_map, WifiTxVector, double) {
    int64_t now = Simulator::Now().GetNanoSeconds();
    if (now < window_start_ns || now >= window_end_ns) return;
    for (const auto& kv : psdus_map) {
        if (!kv.second->GetHeader(0).IsQosData()) continue;
        ++psdus;
        mpdus += kv.second->GetNMpdus();
    }
}
void Watch(Ptr<Application> sink, Ptr<NetDevice> sender) {
    rx_bytes = 0; psdus = 0; mpdus = 0;
    sink->TraceConnectWithoutContext("Rx", MakeCallback(&OnSinkRx));
    DynamicCast<WifiNetDevice>(sender)->GetPhy()->TraceConnectWithoutContext(
        "PhyTxPsduBegin", MakeCallback(&OnPsduTx));
}
}
"""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mcs", type=int, default=7, choices=range(8), help="HT MCS, one stream")
    p.add_argument("--seconds", type=float, default=10.0, help="measurement window")
    p.add_argument("--warmup", type=float, default=1.0, help="seconds before the window")
    p.add_argument("--packet", type=int, default=1472, help="UDP payload bytes")
    p.add_argument("--offered", default="200Mbps", help="the source's rate")
    p.add_argument("--run", type=int, default=1, help="RngRun")
    return p.parse_args(argv)


def one_run(ns, a: argparse.Namespace, ampdu: bool) -> dict:
    ns.RngSeedManager.SetSeed(1)
    ns.RngSeedManager.SetRun(a.run)
    sd = ns.Config.SetDefault
    sd("ns3::WifiMacQueue::MaxSize", ns.QueueSizeValue(ns.QueueSize("1000p")))
    sd("ns3::WifiRemoteStationManager::RtsCtsThreshold", ns.UintegerValue(4692480))
    helpers = ns.cppyy.gbl.wifiht

    nodes = ns.NodeContainer()
    nodes.Create(2)
    positions = ns.CreateObject[ns.ListPositionAllocator]()
    positions.Add(ns.Vector(0.0, 0.0, 0.0))
    positions.Add(ns.Vector(5.0, 0.0, 0.0))
    mobility = ns.MobilityHelper()
    mobility.SetPositionAllocator(positions)
    mobility.SetMobilityModel("ns3::ConstantPositionMobilityModel")
    mobility.Install(nodes)

    loss = ns.CreateObject[ns.FixedRssLossModel]()
    loss.SetAttribute("Rss", ns.DoubleValue(-50.0))
    channel = ns.CreateObject[ns.YansWifiChannel]()
    channel.SetPropagationLossModel(loss)
    channel.SetPropagationDelayModel(ns.CreateObject[ns.ConstantSpeedPropagationDelayModel]())
    phy = ns.YansWifiPhyHelper()
    phy.SetChannel(channel)
    phy.Set("ChannelSettings", ns.StringValue("{36, 20, BAND_5GHZ, 0}"))
    wifi = ns.WifiHelper()
    wifi.SetStandard(ns.WIFI_STANDARD_80211n)
    wifi.SetRemoteStationManager("ns3::ConstantRateWifiManager",
                                 "DataMode", ns.StringValue(f"HtMcs{a.mcs}"),
                                 "ControlMode", ns.StringValue("OfdmRate24Mbps"))
    mac = ns.WifiMacHelper()
    mac.SetType("ns3::AdhocWifiMac", "BE_MaxAmpduSize", ns.UintegerValue(65535 if ampdu else 0))
    devices = wifi.Install(phy, mac, nodes)
    ns.Config.Set("/NodeList/*/DeviceList/*/$ns3::WifiNetDevice/HtConfiguration/ShortGuardIntervalSupported",
                  ns.BooleanValue(False))

    ns.InternetStackHelper().Install(nodes)
    addresses = ns.Ipv4AddressHelper()
    addresses.SetBase(ns.Ipv4Address("10.0.0.0"), ns.Ipv4Mask("255.255.255.0"))
    ifaces = addresses.Assign(devices)
    ns.TrafficControlHelper().Uninstall(devices)
    ns.NeighborCacheHelper().PopulateNeighborCache()
    wifi.AssignStreams(devices, 0)
    channel.AssignStreams(1000)

    port = 9
    sink = ns.PacketSinkHelper("ns3::UdpSocketFactory",
                               ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo())
    sink_apps = sink.Install(nodes.Get(1))
    source = ns.OnOffHelper("ns3::UdpSocketFactory",
                            ns.InetSocketAddress(ifaces.GetAddress(1), port).ConvertTo())
    source.SetConstantRate(ns.DataRate(a.offered), a.packet)
    source_apps = source.Install(nodes.Get(0))
    end = a.warmup + a.seconds
    sink_apps.Start(ns.Seconds(0.0))
    source_apps.Start(ns.Seconds(0.0))
    source_apps.Stop(ns.Seconds(end))
    helpers.window_start_ns = int(a.warmup * 1e9)
    helpers.window_end_ns = int(end * 1e9)
    helpers.Watch(sink_apps.Get(0), devices.Get(0))
    ns.Simulator.Stop(ns.Seconds(end + 0.1))
    t0 = time.perf_counter()
    ns.Simulator.Run()
    wall = time.perf_counter() - t0
    out = {
        "ampdu": ampdu,
        "goodput_bps": 8 * int(helpers.rx_bytes) / a.seconds,
        "psdus": int(helpers.psdus),
        "mpdus": int(helpers.mpdus),
        "mpdus_per_psdu": int(helpers.mpdus) / max(1, int(helpers.psdus)),
        "wall_s": wall,
    }
    ns.Simulator.Destroy()
    return out


def main(argv: list[str] | None = None) -> int:
    a = parse_args(argv)
    isolate_from_other_ns3_copies("ns3-wifi-ht-")
    from ns import ns  # noqa: PLC0415

    for header in ("core", "network", "internet", "applications", "mobility", "wifi",
                   "propagation", "traffic-control"):
        ns.cppyy.include(f"ns3/{header}-module.h")
    ns.cppyy.cppdef(HELPERS)
    runs = [one_run(ns, a, ampdu=True), one_run(ns, a, ampdu=False)]
    print(json.dumps({"ns3_version": "3.44", "mcs": a.mcs, "seconds": a.seconds,
                      "packet": a.packet, "runs": runs}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
