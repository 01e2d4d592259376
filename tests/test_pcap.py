"""`tcpenergy run --pcap DIR` and `tcpenergy.run(..., pcap=DIR)`: one pcap file per link, whose
packets are the ones the engine put on each link and charged for (docs/capture.md)."""

from __future__ import annotations

import json

import pytest
from scapy.layers.inet import IP, TCP
from scapy.utils import rdpcap

import tcpenergy

# Small and lossy, with SACK and timestamps, and queues deep enough that no frame is dropped
# before its link: then every segment the endpoints built is in the capture.
LOSSY = """
name = "lossy-capture"
seed = 4

[path.forward]
rate = "2Mbps"
delay = "20ms"
queue = 1000
impairments = [{ kind = "bernoulli", p = 0.05 }]

[path.reverse]
rate = "2Mbps"
delay = "20ms"
queue = 1000

[tcp]
variant = "sack"
timestamps = true
window_scale = true

[traffic]
kind = "bulk"
bytes = "300kB"
"""

FILES = ("sender-receiver.pcap", "receiver-sender.pcap")
SENDER, RECEIVER = "10.0.0.1", "10.0.0.2"


@pytest.fixture
def lossy(tmp_path):
    path = tmp_path / "lossy.toml"
    path.write_text(LOSSY)
    return path


@pytest.fixture
def captured(cli, lossy, tmp_path):
    """Run the lossy scenario with --pcap; the record and both files' packets."""
    out = tmp_path / "cap" / "nested"
    result = cli("run", lossy, "--pcap", out, "--format", "json")
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    assert sorted(p.name for p in out.iterdir()) == sorted(FILES)
    return record, rdpcap(str(out / FILES[0])), rdpcap(str(out / FILES[1]))


def seq_len(tcp) -> int:
    """Sequence space a segment occupies: payload plus one each for SYN and FIN (RFC 9293 §3.4)."""
    flags = int(tcp.flags)
    return len(tcp.payload) + (flags & 0x02 != 0) + (flags & 0x01 != 0)


def test_one_packet_per_frame_each_link_started_serializing(captured):
    record, forward, reverse = captured
    path = record["path"]
    for link in ("forward", "reverse"):
        assert path[link]["dropped_queue"] == 0 and path[link]["dropped_red"] == 0
    assert path["forward"]["dropped_channel"] > 0, "lost frames are part of the sender's capture"
    assert len(forward) == path["forward"]["packets_sent"]
    assert len(reverse) == path["reverse"]["packets_sent"]
    # The record's per-side counts: the sender's SYN/data/FIN segments, the receiver's pure ACKs.
    assert sum(seq_len(p[TCP]) > 0 for p in forward) == record["flow"]["segments_sent"]
    assert sum(seq_len(p[TCP]) == 0 for p in reverse) == record["flow"]["acks_sent"]


def test_every_packet_is_ipv4_tcp_with_checksums_scapy_recomputes_rfc791_rfc9293(captured):
    _, forward, reverse = captured
    for packets, src, dst in ((forward, SENDER, RECEIVER), (reverse, RECEIVER, SENDER)):
        for pkt in packets:
            ip = pkt[IP]
            assert (ip.src, ip.dst, ip.proto) == (src, dst, 6)
            stripped = ip.copy()
            del stripped.chksum
            del stripped[TCP].chksum
            rebuilt = IP(bytes(stripped))
            assert rebuilt.chksum == ip.chksum
            assert rebuilt[TCP].chksum == ip[TCP].chksum
            assert bytes(rebuilt) == bytes(ip), "the options re-encode to the same bytes"


def test_ip_lengths_sum_to_the_wire_bytes_the_engine_charged(captured):
    record, forward, reverse = captured
    for pkt in list(forward) + list(reverse):
        assert pkt[IP].len == len(bytes(pkt[IP]))
    assert sum(p[IP].len for p in forward) == record["flow"]["wire_bytes_sender"]
    assert sum(p[IP].len for p in reverse) == record["flow"]["wire_bytes_receiver"]


def test_capture_times_and_tcp_timestamps_are_monotone_rfc7323_s5_4(captured):
    _, forward, reverse = captured
    for packets in (forward, reverse):
        times = [p.time for p in packets]
        assert times == sorted(times)
        tsvals = [dict(p[TCP].options)["Timestamp"][0] for p in packets]
        assert tsvals == sorted(tsvals)
        ids = [p[IP].id for p in packets]
        assert ids == list(range(1, len(packets) + 1)), "IP ID counts each sender's packets"


def test_retransmissions_seen_in_the_capture_match_the_record(captured):
    record, forward, _ = captured
    highest, resent = 0, 0
    for pkt in forward:
        tcp = pkt[TCP]
        n = seq_len(tcp)
        if n == 0:
            continue
        if tcp.seq < highest:  # this sequence range was on the wire before
            resent += 1
        highest = max(highest, tcp.seq + n)
    assert record["flow"]["retransmissions"] > 0
    assert resent == record["flow"]["retransmissions"]


def test_handshake_negotiates_the_options_the_engine_charges_rfc7323_rfc2018(captured):
    _, forward, reverse = captured
    syn, synack = forward[0][TCP], reverse[0][TCP]
    assert int(syn.flags) & 0x12 == 0x02 and int(synack.flags) & 0x12 == 0x12
    for seg in (syn, synack):
        names = [name for name, _ in seg.options if name not in ("NOP", "EOL")]
        assert names == ["MSS", "SAckOK", "Timestamp", "WScale"]
    assert any("SAck" in dict(p[TCP].options) for p in reverse), "SACK blocks reach the capture"


def test_api_run_writes_the_capture_and_the_same_record(lossy, tmp_path):
    plain = tcpenergy.run(lossy)
    with_pcap = tcpenergy.run(lossy, pcap=tmp_path / "api")
    assert plain == with_pcap
    assert sorted(p.name for p in (tmp_path / "api").iterdir()) == sorted(FILES)


@pytest.mark.parametrize("make_bad", ["file", "under_a_file"])
def test_unusable_pcap_dir_is_one_line_exit_2_and_nothing_written(cli, lossy, tmp_path, make_bad):
    blocker = tmp_path / "blocker"
    blocker.write_text("not a directory")
    target = blocker if make_bad == "file" else blocker / "sub"
    before = sorted(tmp_path.rglob("*"))
    result = cli("run", lossy, "--pcap", target)
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "--pcap" in lines[0], result.stderr
    assert sorted(tmp_path.rglob("*")) == before
    assert blocker.read_text() == "not a directory"


def test_failed_run_creates_no_capture_dir(cli, lossy, tmp_path):
    target = tmp_path / "never"
    result = cli("run", lossy, "--pcap", target, "--set", "tcp.variant=nosuch")
    assert result.exit_code == 2
    assert not target.exists()
