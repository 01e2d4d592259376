"""`tcpenergy analyze`: the energy of a capture taken at one node (docs/emulation.md, "Energy of
a capture"). A simulated run's own node capture (`--node-pcap`), metered with the run's profile
over the run's window, must give back the run's radio energy and its per-packet CPU work."""

from __future__ import annotations

import json
import struct

import pytest

from tcpenergy import api
from tcpenergy.emulate.capture_energy import analyze
from tcpenergy.exceptions import ScenarioError

PROFILE = "singh2002-toshiba-wavelan"
# The simulator's capture addresses: node i is 10.0.0.(i + 1) (docs/capture.md).
ADDRESS = {"sender": "10.0.0.1", "receiver": "10.0.0.2"}
# Operations one per packet, read off its headers; the rest (timers, header prediction, the
# reassembly queue) are invisible on the wire.
PACKET_OPS = ("segment_sent", "segment_received", "sack_block_generated", "sack_block_processed")


@pytest.fixture(scope="module")
def simulated(tmp_path_factory):
    out = tmp_path_factory.mktemp("nodes")
    scenario = api.load_scenario("scenarios/quickstart.toml")
    record = api.run(scenario, node_pcap=out, **{"traffic.bytes": 500_000})
    return record, out


@pytest.mark.parametrize("side", ["sender", "receiver"])
def test_a_simulated_runs_node_capture_gives_back_its_radio_energy_and_per_packet_cpu(simulated, side):
    record, out = simulated
    window = record["energy"]["window_s"]
    result = analyze(out / f"{side}.pcap", PROFILE, ADDRESS[side], window=(0, window))
    ran, seen = record["energy"][side], result["energy"]
    for key in ("radio_tx_s", "radio_rx_s", "radio_tx_frames", "radio_rx_frames", "radio_tx_bytes", "cpu_card_s"):
        assert seen[key] == pytest.approx(ran[key], rel=1e-12), key
    for part in ("radio_tx", "radio_rx", "radio_idle", "base"):
        assert seen["breakdown_j"][part] == pytest.approx(ran["breakdown_j"][part], rel=1e-12), part
    for op in PACKET_OPS:
        assert result["cpu_ops"][op] == record["cpu"][f"{side}_ops"][op], op


def test_the_connection_is_followed_from_either_end(simulated):
    _, out = simulated
    sender = analyze(out / "sender.pcap", PROFILE, ADDRESS["sender"])["flows"]
    receiver = analyze(out / "receiver.pcap", PROFILE, ADDRESS["receiver"])["flows"]
    assert [f["role"] for f in sender] == ["source"] and [f["role"] for f in receiver] == ["destination"]
    assert sender[0]["bytes_delivered"] == receiver[0]["bytes_delivered"] == 500_000


def test_packets_of_other_nodes_are_counted_and_left_out(simulated):
    _, out = simulated
    result = analyze(out / "sender.pcap", PROFILE, "10.9.9.9")
    assert result["packets_sent"] == result["packets_received"] == 0
    assert result["packets_other"] == result["packets"] > 0


def test_an_ethernet_capture_in_microseconds_reads_as_raw_ip(simulated, tmp_path):
    # tcpdump's default: LINKTYPE_ETHERNET, microsecond stamps. Same packets, same radio time.
    _, out = simulated
    raw = (out / "sender.pcap").read_bytes()
    ether = bytearray(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
    at = 24
    while at + 16 <= len(raw):
        sec, ns, caplen, _ = struct.unpack_from("<IIII", raw, at)
        packet = raw[at + 16:at + 16 + caplen]
        frame = bytes(12) + b"\x08\x00" + packet
        ether += struct.pack("<IIII", sec, ns // 1000, len(frame), len(frame)) + frame
        at += 16 + caplen
    (tmp_path / "eth.pcap").write_bytes(bytes(ether))
    a = analyze(tmp_path / "eth.pcap", PROFILE, ADDRESS["sender"])
    b = analyze(out / "sender.pcap", PROFILE, ADDRESS["sender"])
    assert (a["packets_sent"], a["packets_received"]) == (b["packets_sent"], b["packets_received"])
    assert a["energy"]["radio_tx_s"] == pytest.approx(b["energy"]["radio_tx_s"], rel=1e-12)


@pytest.mark.parametrize("kwargs, path", [
    ({"profile": "no-such-profile"}, "profile"),
    ({"node": "10.0.0"}, "node"),
    ({"radio_policy": "sometimes"}, "radio_policy"),
    ({"profile": "ideal-nic-0.3"}, "profile"),  # no PHY: airtime unknown
])
def test_bad_input_names_its_option(simulated, kwargs, path):
    _, out = simulated
    args = {"profile": PROFILE, "node": ADDRESS["sender"], **kwargs}
    with pytest.raises(ScenarioError) as err:
        analyze(out / "sender.pcap", args.pop("profile"), args.pop("node"), **args)
    assert err.value.path == path


def test_a_pcapng_file_is_refused_with_what_to_do(tmp_path):
    bad = tmp_path / "x.pcapng"
    bad.write_bytes(bytes.fromhex("0a0d0d0a") + bytes(40))
    with pytest.raises(ScenarioError, match="editcap"):
        analyze(bad, PROFILE, "10.0.0.1")


def test_node_captures_are_written_beside_the_interface_captures(tmp_path):
    record = api.run("scenarios/quickstart.toml", pcap=tmp_path / "ifaces", node_pcap=tmp_path / "nodes",
                     **{"traffic.bytes": 50_000})
    assert sorted(p.name for p in (tmp_path / "nodes").iterdir()) == ["receiver.pcap", "sender.pcap"]
    assert sorted(p.name for p in (tmp_path / "ifaces").iterdir()) == ["receiver-sender.pcap", "sender-receiver.pcap"]
    json.dumps(record)
