"""One saturated 802.11n station, A-MPDU on and off: tcpenergy against ns-3, side by side.

    python benchmarks/vs_ns3_wifi_ht.py                 # MCS 7, 20 MHz, long GI, 10 s
    python benchmarks/vs_ns3_wifi_ht.py --mcs 4 --seconds 5

Both sides: two stations on a clean 5 GHz 802.11n channel (20 MHz, one stream, long guard
interval, RTS/CTS off), a UDP source offering 200 Mbit/s of 1472-byte datagrams (1500-byte IP
packets) to the other, MAC queues of 1000 frames. The ns-3 side is benchmarks/ns3_wifi_ht.py in
the ns-3 venv (benchmarks/.ns3-venv, created by vs_ns3.py's ensure_ns3 if missing); it measures
the UDP payload the sink got over [1 s, 1 s + seconds). The tcpenergy side runs the same network
for `seconds` (the source stops with the run, so datagrams still queued are not counted) and
divides the payload delivered by that time. Reported: goodput and MPDUs per A-MPDU on each side,
with the hand-computed value (docs/models/wifi.md "A-MPDU and block ack").

Known difference: ns-3 contends with EDCA's best-effort AIFS (SIFS + 3 slots = 43 us), tcpenergy
with the DCF's DIFS (34 us): 9 us more per PPDU in ns-3 (0.16 % with aggregation at MCS 7, 2.4 %
without).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from run import import_tcpenergy, machine_line, print_table
from vs_ns3 import Ns3Unavailable, _tail, ensure_ns3, run_in_ns3_venv

HERE = Path(__file__).resolve().parent
NS3_SCRIPT = HERE / "ns3_wifi_ht.py"
PACKET = 1472


def scenario(mcs: int, seconds: float, ampdu: bool) -> str:
    return f"""
name = "ht-saturation"
stop_after = "{seconds}s"
[energy]
default_profile = "ideal-nic-0.3"
[nodes]
a = {{}}
b = {{}}
[[channels]]
name = "air"
standard = "802.11n"
nodes = ["a", "b"]
bandwidth = "20MHz"
spatial_streams = 1
guard_interval = "long"
mcs = {mcs}
ampdu = {"true" if ampdu else "false"}
queue = 1000
[[flows]]
name = "udp"
from = "a"
to = "b"
transport = "udp"
traffic = {{ kind = "cbr", rate = "200Mbps", packet = {PACKET} }}
"""


def run_tcpenergy(mcs: int, seconds: float, ampdu: bool) -> dict:
    tcpenergy = import_tcpenergy()
    import tomllib  # noqa: PLC0415

    record = tcpenergy.run(tomllib.loads(scenario(mcs, seconds, ampdu)), seed=1)
    flow = record["flows"][0]
    ch = record["channels"]["air"]
    return {
        "goodput_bps": 8 * PACKET * flow["datagrams_delivered"] / seconds,
        "mpdus_per_psdu": ch["ampdu_mpdus"] / ch["ampdus_sent"] if ch.get("ampdus_sent") else 1.0,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mcs", type=int, default=7, choices=range(8))
    ap.add_argument("--seconds", type=float, default=10.0)
    a = ap.parse_args(argv)
    try:
        python = ensure_ns3(HERE / ".ns3-venv")
        cmd = [str(python), str(NS3_SCRIPT), "--mcs", str(a.mcs), "--seconds", str(a.seconds)]
        p = run_in_ns3_venv(python, cmd, timeout_s=1800, prefix="ns3-wifi-ht-")
        try:
            ns3 = json.loads(p.stdout.strip().splitlines()[-1])
        except (json.JSONDecodeError, IndexError):
            raise Ns3Unavailable(f"the ns-3 run failed (exit {p.returncode}):\n{_tail(p.stderr + p.stdout)}") from None
    except Ns3Unavailable as exc:
        print(f"ns-3 unavailable: {exc}", file=sys.stderr)
        return 1
    print(machine_line())
    rows = []
    for ns3_run in ns3["runs"]:
        ampdu = ns3_run["ampdu"]
        ours = run_tcpenergy(a.mcs, a.seconds, ampdu)
        ratio = ours["goodput_bps"] / ns3_run["goodput_bps"]
        rows.append(["A-MPDU" if ampdu else "one MPDU per PPDU",
                     ns3_run["goodput_bps"] / 1e6, ours["goodput_bps"] / 1e6, ratio,
                     ns3_run["mpdus_per_psdu"], ours["mpdus_per_psdu"]])
    print_table(["802.11n MCS %d, 20 MHz, long GI" % a.mcs, "ns-3 Mbit/s", "tcpenergy Mbit/s",
                 "ratio", "ns-3 MPDUs/PPDU", "tcpenergy MPDUs/PPDU"], rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
