"""E2TCP capture files (link type 147, LINKTYPE_USER0) read by tshark with the Lua dissector the
package ships (docs/capture.md#e2tcp-files): every field tshark decodes is the one the engine
wrote (docs/models/e2tcp.md#header-format, seed 001 §2.3), and the packets add up to the record."""

from __future__ import annotations

import json
import math
import shutil
import struct
import subprocess
from importlib.resources import files
from pathlib import Path

import pytest

from tcpenergy.capture import e2tcp_dissector

BYTES = 300_000
PACKET = 1460  # E2TCP's packet size on a 1500-byte path: 1500 - 40, as TCP's MSS
SENDER, RECEIVER = ("10.0.0.1", 40000), ("10.0.0.2", 5001)

# 5 % random loss on the data path, deep queues: every packet the sender built leaves its
# interface, some are lost after the capture point, so the receiver's ACKs carry SACK blocks and
# the sender retransmits.
SCENARIO = f"""
name = "e2tcp-capture"
seed = 3
[path]
mtu = 1500
[path.forward]
rate = "2Mbps"
delay = "20ms"
queue = 1000
impairments = [{{ kind = "bernoulli", p = 0.05 }}]
[path.reverse]
rate = "2Mbps"
delay = "20ms"
queue = 1000
[tcp]
variant = "e2tcp"
[traffic]
kind = "bulk"
bytes = {BYTES}
"""

FILES = ("sender-receiver.e2tcp.pcap", "receiver-sender.e2tcp.pcap")

needs_tshark = pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark missing: ./test.sh installs it")


@pytest.fixture(scope="module")
def captured(tmp_path_factory):
    """The record, the capture directory and the command's stderr of one E2TCP run."""
    from typer.testing import CliRunner

    from tcpenergy.cli import app

    tmp = tmp_path_factory.mktemp("e2tcpcap")
    scenario = tmp / "e2tcp.toml"
    scenario.write_text(SCENARIO)
    out = tmp / "cap"
    try:
        runner = CliRunner(mix_stderr=False)  # click < 8.2 mixes stderr into stdout by default
    except TypeError:
        runner = CliRunner()
    result = runner.invoke(app, ["run", str(scenario), "--pcap", str(out), "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout), out, result.stderr


def records(path) -> tuple:
    """A pcap file's link type and packets, read by hand (the format is 24 + 16 bytes a record)."""
    data = path.read_bytes()
    assert struct.unpack_from("<I", data, 0)[0] == 0xA1B23C4D, "nanosecond pcap"
    linktype = struct.unpack_from("<I", data, 20)[0]
    packets, i = [], 24
    while i < len(data):
        length = struct.unpack_from("<I", data, i + 8)[0]
        packets.append(data[i + 16:i + 16 + length])
        i += 16 + length
    return linktype, packets


def decode(p: bytes) -> dict:
    """The compact header as docs/models/e2tcp.md lays it out, decoded independently of the
    dissector: presence bits, connection id, then each optional field its bit announces."""
    bits, at = p[0], 2
    out = {"presence": bits, "cid": p[1], "syn": bool(bits & 0x08), "fin": bool(bits & 0x04),
           "pkt": None, "ack": None, "window": None, "sack": [], "addresses": None}

    def u16() -> int:
        nonlocal at
        at += 2
        return struct.unpack_from(">H", p, at - 2)[0]

    if bits & 0x80:
        out["pkt"] = u16()
    if bits & 0x40:
        out["ack"] = u16()
    if bits & 0x20:
        out["window"] = u16()
    for _ in range(bits & 0x03):
        out["sack"].append((u16(), u16()))
    if bits & 0x10:
        src, dst = ".".join(map(str, p[at:at + 4])), ".".join(map(str, p[at + 4:at + 8]))
        at += 8
        out["addresses"] = ((src, u16()), (dst, u16()))
    out["checksum"] = u16()
    out["hdr_len"], out["len"] = at, len(p) - at
    return out


def internet_checksum_verifies(p: bytes) -> bool:
    """RFC 1071: the one's complement sum of the packet, checksum included, is 0xffff."""
    padded = p + b"\0" * (len(p) % 2)
    total = sum(struct.unpack(f">{len(padded) // 2}H", padded))
    while total > 0xFFFF:
        total = (total & 0xFFFF) + (total >> 16)
    return total == 0xFFFF


FIELDS = ("frame.len", "e2tcp.presence", "e2tcp.cid", "e2tcp.flags.syn", "e2tcp.flags.fin", "e2tcp.pkt",
          "e2tcp.ack", "e2tcp.window", "e2tcp.sack.left", "e2tcp.sack.right", "e2tcp.sack.left_pkt",
          "e2tcp.sack.right_pkt", "e2tcp.src", "e2tcp.srcport", "e2tcp.dst", "e2tcp.dstport",
          "e2tcp.checksum", "e2tcp.checksum.status", "e2tcp.hdr_len", "e2tcp.len")


def tshark(path, *args: str) -> list:
    """tshark's output lines for `path`, with the package's E2TCP dissector loaded."""
    cmd = ["tshark", "-X", f"lua_script:{e2tcp_dissector()}", "-r", str(path), *args]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if line.strip()]


def dissected(path) -> list:
    """Each packet's fields as tshark shows them: {field: [values]} (SACK fields repeat)."""
    args = ["-T", "fields", "-E", "separator=/t", "-E", "occurrence=a", "-E", "aggregator=,"]
    rows = []
    for line in tshark(path, *args, *(a for f in FIELDS for a in ("-e", f))):
        values = line.split("\t")
        assert len(values) == len(FIELDS), line
        rows.append({f: (v.split(",") if v else []) for f, v in zip(FIELDS, values)})
    return rows


def number(values: list):
    """One field's single value as an int (tshark prints hex, decimal, booleans as 1/0), else None."""
    assert len(values) <= 1, values
    return int(values[0], 0) if values else None


def ends(row: dict):
    """(source, destination) as (address, port) of a dissected packet, None without addresses."""
    if not row["e2tcp.src"]:
        return None
    return ((row["e2tcp.src"][0], number(row["e2tcp.srcport"])), (row["e2tcp.dst"][0], number(row["e2tcp.dstport"])))


def test_the_dissector_ships_in_the_package_and_the_command_says_how_to_use_it(captured):
    _, out, stderr = captured
    script = e2tcp_dissector()
    assert script.is_file() and script == Path(str(files("tcpenergy") / "wireshark" / "e2tcp.lua"))
    # E2TCP was the only traffic: no IP file, only the two E2TCP files, and stderr names them.
    assert sorted(p.name for p in out.iterdir()) == sorted(FILES)
    assert all(name in stderr for name in FILES), stderr
    assert f"tshark -X lua_script:{script}" in stderr, stderr
    for name in FILES:
        assert records(out / name)[0] == 147, "LINKTYPE_USER0"


@needs_tshark
def test_tshark_decodes_every_field_the_engine_wrote_seed001_s2_3(captured):
    _, out, _ = captured
    for name in FILES:
        _, packets = records(out / name)
        rows = dissected(out / name)
        assert len(rows) == len(packets) > 0, name
        for i, (p, row) in enumerate(zip(packets, rows)):
            want = decode(p)
            where = f"{name} packet {i + 1}"
            assert number(row["frame.len"]) == len(p), where
            assert number(row["e2tcp.presence"]) == want["presence"], where
            assert number(row["e2tcp.cid"]) == want["cid"] == 0, where
            assert bool(number(row["e2tcp.flags.syn"])) == want["syn"], where
            assert bool(number(row["e2tcp.flags.fin"])) == want["fin"], where
            for field in ("pkt", "ack", "window"):
                assert number(row[f"e2tcp.{field}"]) == want[field], f"{where}: {field}"
            sent = [(int(a), int(b)) for a, b in zip(row["e2tcp.sack.left"], row["e2tcp.sack.right"])]
            assert sent == want["sack"], where
            # Generated fields: the same blocks as packet numbers (mod 2^16).
            absolute = [(int(a), int(b)) for a, b in zip(row["e2tcp.sack.left_pkt"], row["e2tcp.sack.right_pkt"])]
            ack = want["ack"]
            assert absolute == [((ack + a) % 65536, (ack + b) % 65536) for a, b in want["sack"]], where
            assert ends(row) == want["addresses"], where
            assert number(row["e2tcp.checksum"]) == want["checksum"], where
            assert internet_checksum_verifies(p) and number(row["e2tcp.checksum.status"]) == 1, where
            assert (number(row["e2tcp.hdr_len"]), number(row["e2tcp.len"])) == (want["hdr_len"], want["len"]), where
        bad = "_ws.malformed || _ws.expert.severity >= error || e2tcp.checksum.status == \"Bad\""
        assert tshark(out / name, "-Y", bad) == [], name


@needs_tshark
def test_a_corrupted_packet_is_flagged_by_its_checksum_rfc1071(captured, tmp_path):
    _, out, _ = captured
    data = bytearray((out / FILES[1]).read_bytes())
    data[24 + 16 + 1] ^= 0xFF  # the first packet's connection identifier
    bad = tmp_path / "bad.e2tcp.pcap"
    bad.write_bytes(bytes(data))
    assert len(tshark(bad, "-Y", "e2tcp.checksum.status == \"Bad\" && _ws.expert.severity >= error")) == 1
    # Cut the SYN-ACK (22 bytes) to 10: its presence bits announce more than the packet holds.
    syn_ack = struct.unpack_from("<I", data, 24 + 8)[0]
    assert syn_ack == 22
    cut = data[:24 + 8] + struct.pack("<II", 10, 10) + data[24 + 16:24 + 16 + 10]
    short = tmp_path / "short.e2tcp.pcap"
    short.write_bytes(bytes(cut))
    assert len(tshark(short, "-Y", "_ws.expert.severity >= error")) == 1


@needs_tshark
def test_decoded_packets_add_up_to_the_record_seed001_s2(captured):
    record, out, _ = captured
    flow, forward, reverse = record["flow"], record["path"]["forward"], record["path"]["reverse"]
    assert forward["dropped_queue"] == reverse["dropped_queue"] == 0, "every packet built left its interface"
    assert forward["dropped_channel"] > 0 and flow["retransmissions"] > 0, "the loss makes the comparison non-trivial"
    data, acks = dissected(out / FILES[0]), dissected(out / FILES[1])
    for rows, link, charged in ((data, forward, flow["wire_bytes_sender"]),
                                (acks, reverse, flow["wire_bytes_receiver"])):
        assert len(rows) == link["packets_sent"]
        assert sum(number(r["frame.len"]) for r in rows) == link["bytes_sent"] == charged

    # The handshake carries the flow's addresses and ports once each way.
    syn, syn_ack = data[0], acks[0]
    assert number(syn["e2tcp.flags.syn"]) and number(syn["e2tcp.pkt"]) == 0
    assert ends(syn) == (SENDER, RECEIVER)
    assert number(syn_ack["e2tcp.flags.syn"]) and number(syn_ack["e2tcp.ack"]) == 1
    assert ends(syn_ack) == (RECEIVER, SENDER)
    assert all(ends(r) is None for r in data[1:] + acks[1:]), "addresses only on SYNs"

    # Data: packets 1..N, the last one short; a packet number sent again is a retransmission.
    sent = [(number(r["e2tcp.pkt"]), number(r["e2tcp.len"])) for r in data if number(r["e2tcp.len"])]
    first = dict(reversed(sent))
    n = math.ceil(BYTES / PACKET)
    assert sorted(first) == list(range(1, n + 1))
    assert sum(first.values()) == BYTES == flow["bytes_delivered"]
    assert all(length == PACKET for pkt, length in sent if pkt < n)
    assert len(sent) == flow["data_segments_sent"]
    assert len(sent) - len(first) == flow["retransmissions"]
    assert sum(1 for r in data if r["e2tcp.pkt"]) == flow["segments_sent"], "data, SYN and FIN carry a packet number"

    # ACKs: cumulative numbers never go back and end past the sender's FIN; the SACK blocks
    # are the record's, each above the cumulative ACK.
    numbers = [number(r["e2tcp.ack"]) for r in acks]
    assert numbers == sorted(numbers)
    fin = [number(r["e2tcp.pkt"]) for r in data if number(r["e2tcp.flags.fin"])]
    assert fin and numbers[-1] == fin[-1] + 1
    blocks = [(int(a), int(b)) for r in acks for a, b in zip(r["e2tcp.sack.left"], r["e2tcp.sack.right"])]
    assert len(blocks) == flow["sack_blocks_sent"] > 0
    assert all(0 < left < right for left, right in blocks)
    assert sum(1 for r in acks if not r["e2tcp.pkt"]) == flow["acks_sent"]
