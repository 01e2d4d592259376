"""`tcpenergy run NETWORK --pcap DIR`: one pcap file per interface, read back by real dissectors
(tshark and scapy), whose retransmissions are the ones the record counts (docs/capture.md)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from scapy.layers.inet import IP, TCP, UDP
from scapy.utils import rdpcap

# Two TCP flows from a and b meet at router r and cross a lossy 4 Mbit/s hop to d; a UDP voice
# flow goes back from d to a. Queues are deep, so every loss is on the r -> d channel: every
# segment a source sent is in its first interface's file.
NETWORK = """
name = "capture-network"
seed = 3
stop_after = "120s"

[nodes]
a = {}
b = {}
d = {}
r = {}

[[links]]
between = ["a", "r"]
rate = "10Mbps"
delay = "2ms"
queue = 1000

[[links]]
between = ["b", "r"]
rate = "10Mbps"
delay = "5ms"
queue = 1000

[[links]]
between = ["r", "d"]
rate = "4Mbps"
delay = "10ms"
forward = { queue = 1000, impairments = [{ kind = "bernoulli", p = 0.02 }] }

[[flows]]
name = "sack"
from = "a"
to = "d"
tcp = { variant = "sack", timestamps = true, window_scale = true }
traffic = { kind = "bulk", bytes = "1MB" }

[[flows]]
name = "newreno"
from = "b"
to = "d"
tcp = { variant = "newreno" }
traffic = { kind = "bulk", bytes = "1MB" }

[[flows]]
name = "voice"
from = "d"
to = "a"
transport = "udp"
traffic = { kind = "cbr", rate = "64kbps", packet = 160 }
stop = "5s"
"""

# Nodes are numbered in name order (a, b, d, r: 10.0.0.1-4); flow k sends from port 40000 + k.
ADDRESS = {"a": "10.0.0.1", "b": "10.0.0.2", "d": "10.0.0.3", "r": "10.0.0.4"}
FILES = sorted(f"{x}-{y}.pcap" for x, y in (("a", "r"), ("b", "r"), ("r", "d")) for x, y in ((x, y), (y, x)))


def tshark(path, display_filter: str, *fields: str) -> list:
    """The packets of `path` matching `display_filter` (one line each, or the fields asked for),
    with checksum validation on for IP, TCP and UDP."""
    args = ["tshark", "-r", str(path), "-o", "ip.check_checksum:TRUE", "-o", "tcp.check_checksum:TRUE",
            "-o", "udp.check_checksum:TRUE", "-Y", display_filter]
    if fields:
        args += ["-T", "fields"] + [a for f in fields for a in ("-e", f)]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def captured(tmp_path_factory):
    """The record and capture directory of the network run."""
    from typer.testing import CliRunner

    from tcpenergy.cli import app

    tmp = tmp_path_factory.mktemp("netcap")
    scenario = tmp / "network.toml"
    scenario.write_text(NETWORK)
    out = tmp / "cap"
    try:
        runner = CliRunner(mix_stderr=False)  # stderr lists the files written; keep it off stdout
    except TypeError:
        runner = CliRunner()  # click >= 8.2 always keeps them apart
    result = runner.invoke(app, ["run", str(scenario), "--pcap", str(out), "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout), out


def test_one_file_per_interface_named_by_its_nodes(captured):
    record, out = captured
    assert sorted(p.name for p in out.iterdir()) == FILES
    for key, link in record["links"].items():
        packets = rdpcap(str(out / (key.replace("->", "-") + ".pcap")))
        assert len(packets) == link["packets_sent"], key


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark missing: ./test.sh installs it")
def test_tshark_finds_no_malformed_packet_or_bad_checksum_rfc791_rfc9293_rfc768(captured):
    _, out = captured
    bad = ("_ws.malformed || _ws.expert.severity >= error || ip.checksum.status == \"Bad\" || "
           "tcp.checksum.status == \"Bad\" || udp.checksum.status == \"Bad\"")
    for name in FILES:
        assert tshark(out / name, bad) == [], name
        # Every packet was dissected down to its transport header.
        assert len(tshark(out / name, "tcp || udp")) == len(rdpcap(str(out / name))), name


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark missing: ./test.sh installs it")
def test_retransmissions_tshark_flags_at_each_source_match_the_record(captured):
    record, out = captured
    flows = {f["name"]: f for f in record["flows"]}
    for k, (name, source) in enumerate((("sack", "a"), ("newreno", "b"))):
        assert flows[name]["retransmissions"] > 0, "the lossy hop makes the comparison non-trivial"
        # The source's only interface carries every segment it sent (no queue drops there).
        flagged = tshark(out / f"{source}-r.pcap", f"tcp.analysis.retransmission && tcp.srcport == {40000 + k}")
        assert len(flagged) == flows[name]["retransmissions"], name


def test_routers_take_one_off_the_ttl_and_udp_datagrams_carry_their_length_rfc791_rfc768(captured):
    _, out = captured
    first_hop = [p[IP] for p in rdpcap(str(out / "a-r.pcap"))]
    last_hop = [p[IP] for p in rdpcap(str(out / "r-d.pcap")) if p[IP].src == ADDRESS["a"]]
    assert {ip.ttl for ip in first_hop} == {64} and {ip.ttl for ip in last_hop} == {63}
    assert {ip.id for ip in last_hop} <= {ip.id for ip in first_hop}, "routers keep the source's IP ID"
    voice = [p[IP] for p in rdpcap(str(out / "d-r.pcap")) if UDP in p]
    assert voice and all(ip.src == ADDRESS["d"] and ip.dst == ADDRESS["a"] for ip in voice)
    assert all(ip[UDP].len == 8 + 160 == len(bytes(ip[UDP])) for ip in voice)
    assert all((ip[UDP].sport, ip[UDP].dport) == (40002, 5001) for ip in voice)
    syns = [p[TCP] for p in rdpcap(str(out / "a-r.pcap")) if int(p[TCP].flags) & 0x02]
    assert syns and "WScale" in dict(syns[0].options), "the SACK flow offered window scaling"


# Four stations in one 802.11 collision domain relay a -> b -> c -> d (the engine tests use it too).
CHANNEL_CHAIN = (Path(__file__).resolve().parents[1] / "crates/engine/tests/data/wifi-relay4.toml").read_text()


def test_channel_pairs_that_never_exchange_a_frame_get_no_file_and_the_command_lists_the_files(cli, tmp_path):
    scenario = tmp_path / "channel.toml"
    scenario.write_text(CHANNEL_CHAIN)
    out = tmp_path / "cap"
    result = cli("run", scenario, "--pcap", out, "--format", "json")
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    interfaces = record["channels"]["adhoc"]["interfaces"]
    talking = sorted(k.replace("->", "-") + ".pcap" for k, i in interfaces.items() if i["packets_sent"] > 0)
    assert talking == sorted(f"{x}-{y}.pcap" for x, y in ("ab", "ba", "bc", "cb", "cd", "dc"))
    # Six of the twelve pairs (a-c, a-d, b-d and back) sent nothing: no empty files for them.
    assert sorted(p.name for p in out.iterdir()) == talking
    for key, i in interfaces.items():
        assert len(rdpcap(str(out / (key.replace("->", "-") + ".pcap")))) == i["packets_sent"], key
    assert f"wrote 6 files in {out}: " in result.stderr and all(n in result.stderr for n in talking), result.stderr
