"""Kernel mode end to end: the machine's own TCP between network namespaces, carried by the
engine's links in real time (docs/emulation.md). Runs are short (10 Mbit/s, a few MB) so the
file stays within seconds; each test states the property it checks and where it comes from."""

from __future__ import annotations

import json
import math
import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from tcpenergy import api
from tcpenergy.emulate import netns
from tcpenergy.emulate.run import emulate
from tcpenergy.exceptions import ScenarioError

REPO = Path(__file__).resolve().parents[1]
# These tests check what kernel mode counts and does, not how closely a shared machine keeps
# time (benchmarks/kernel/accuracy.py measures that): a run is judged honest up to 20 ms of lag.
LAG_BOUND_MS = 20.0


def path_scenario(rate="10Mbps", delay="5ms", queue=1000, loss=0.0, bytes_="2MB", tcp=None):
    """A single path; loss (Bernoulli, RFC-free: seed 000 §4's random loss) on data only."""
    forward = {"rate": rate, "delay": delay, "queue": queue}
    if loss:
        forward["impairments"] = [{"kind": "bernoulli", "p": loss}]
    return api.load_scenario({
        "name": "kernel-test", "seed": 1, "stop_after": "60s",
        "path": {"mtu": 1500, "forward": forward, "reverse": {"rate": rate, "delay": delay, "queue": queue}},
        "tcp": dict(tcp or {"variant": "sack"}),
        "traffic": {"kind": "bulk", "bytes": bytes_},
    })


def pcap_lengths(path: Path) -> list:
    """The length of each record of a pcap file (24-byte header, then 16-byte record headers)."""
    data = path.read_bytes()
    at, lengths = 24, []
    while at + 16 <= len(data):
        caplen = struct.unpack_from("<I", data, at + 8)[0]
        at += 16 + caplen
        lengths.append(caplen)
    return lengths


@pytest.fixture(scope="module")
def clean_run(tmp_path_factory):
    """A loss-free 2.5 MB transfer at 10 Mbit/s, captured."""
    pcap = tmp_path_factory.mktemp("pcap")
    record = emulate(path_scenario(bytes_="2500000"), pcap=pcap, lag_bound_ms=LAG_BOUND_MS)
    return record, pcap


@pytest.fixture(scope="module")
def lossy_run():
    """A 1.5 MB transfer with 5 % Bernoulli loss on data, 20 ms each way."""
    return emulate(path_scenario(loss=0.05, delay="20ms", bytes_="1500000"), lag_bound_ms=LAG_BOUND_MS)


def test_a_loss_free_transfer_fills_the_link_to_within_two_percent(clean_run):
    # The link's rate counts IP bytes (frame_overhead 0): the sender's IP throughput over its
    # active time is the link's rate less the handshake and the last ACK's round trip.
    record, _ = clean_run
    assert record["complete"], record.get("stop")
    assert record["flow"]["bytes_delivered"] == 2_500_000
    assert record["flow"]["retransmissions"] == 0
    assert record["flow"]["throughput_bps"] == pytest.approx(10e6, rel=0.02)


def test_the_links_keep_their_rate_on_the_wall_clock(clean_run):
    # The real span of each link's arrivals against the modelled one (docs/emulation.md).
    emulation = clean_run[0]["emulation"]
    assert emulation["loop"]["write_errors"] == 0
    for name, error in emulation["rate_error"].items():
        assert abs(error) < 0.01, name


def test_bernoulli_loss_drops_data_at_its_probability(lossy_run):
    # 5 % of the packets the link sent are lost, within the binomial 99.9 % interval.
    forward = lossy_run["path"]["forward"]
    n, lost = forward["packets_sent"], forward["dropped_channel"]
    half = 3.29 * math.sqrt(0.05 * 0.95 / n)
    assert abs(lost / n - 0.05) <= half, (lost, n)
    assert lossy_run["path"]["reverse"]["dropped_channel"] == 0


def test_the_kernels_rtt_is_the_configured_delay_and_serialization(lossy_run):
    # 2 x 20 ms of propagation; a full segment takes 1.2 ms at 10 Mbit/s and its ACK 0.05 ms.
    info = lossy_run["kernel"]["flows"]["main"]["sender"]["tcp_info"]
    assert 40_000 <= info["min_rtt_us"] <= 42_500


def test_the_wire_and_the_kernel_count_the_same_retransmissions(lossy_run):
    # What the packets show (a segment starting below the highest sequence sent) is what the
    # stack counted (TCP_INFO total_retrans, the namespace's RetransSegs).
    flow = lossy_run["flow"]
    kernel = lossy_run["kernel"]
    assert flow["retransmissions"] > 0
    assert flow["retransmissions"] == kernel["flows"]["main"]["sender"]["tcp_info"]["total_retrans"]
    assert flow["retransmissions"] == kernel["nodes"]["sender"]["Tcp.RetransSegs"]
    assert flow["bytes_delivered"] == 1_500_000


def test_the_capture_holds_what_each_link_sent_and_no_packet_exceeds_the_mtu(clean_run):
    # A TUN device offers no segmentation offload: the stack hands it MTU-sized packets.
    record, pcap = clean_run
    for direction, (a, b) in {"forward": ("sender", "receiver"), "reverse": ("receiver", "sender")}.items():
        lengths = pcap_lengths(pcap / f"{a}-{b}.pcap")
        assert len(lengths) == record["path"][direction]["packets_sent"]
        assert max(lengths) <= 1500


def test_the_energy_breakdown_sums_to_the_total(clean_run):
    for side in ("sender", "receiver"):
        e = clean_run[0]["energy"][side]
        assert sum(e["breakdown_j"].values()) == pytest.approx(e["total_j"], rel=1e-9)


def test_nothing_the_run_made_is_left_behind(clean_run):
    pid = os.getpid()
    assert not [n for n in netns.ours() if n.startswith(f"{netns.PREFIX}{pid}-")]
    # The devices were created in the host's namespace before being moved: none is left there.
    links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True).stdout
    assert f"te{pid % 10**7}r" not in links


def test_the_programs_report_the_cpu_time_they_used(clean_run):
    programs = clean_run[0]["kernel"]["flows"]["main"]
    for side in ("sender", "receiver"):
        assert programs[side]["cpu_user_s"] + programs[side]["cpu_system_s"] > 0


@pytest.mark.parametrize("tcp, key", [
    ({"variant": "tahoe"}, "tcp.variant"),
    ({"variant": "sack", "delayed_ack": {"every": 2, "timeout": "200ms"}}, "tcp.delayed_ack"),
    ({"variant": "sack", "cwnd_growth": "per_ack"}, "tcp.cwnd_growth"),
    ({"variant": "sack", "stack": "freebsd-4.3"}, "tcp.stack"),
    ({"variant": "elfn"}, "tcp.variant"),
    ({"variant": "cubic", "pacing": True}, "tcp.pacing"),
    ({"variant": "sack", "receive_autotune": False}, "tcp.receive_autotune"),
])
def test_a_setting_the_kernel_cannot_honour_is_refused_by_its_key(tcp, key):
    with pytest.raises(ScenarioError) as err:
        emulate(path_scenario(tcp=tcp))
    assert err.value.path == key


def test_the_command_line_refuses_in_one_line_with_exit_2(tmp_path):
    scenario = tmp_path / "s.toml"
    scenario.write_text('[path.forward]\nrate = "1Mbps"\ndelay = "1ms"\n[tcp]\nvariant = "tahoe"\n'
                        '[traffic]\nkind = "bulk"\nbytes = 1000\n')
    out = tmp_path / "r.json"
    done = subprocess.run([sys.executable, "-m", "tcpenergy", "emulate", str(scenario), "--out", str(out)],
                          capture_output=True, text=True, cwd=REPO, env={**os.environ})
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "tcp.variant" in done.stderr
    assert not out.exists()


def test_cleanup_removes_what_a_killed_run_left(tmp_path):
    # A namespace named for a process that no longer exists is what a SIGKILL leaves.
    dead = subprocess.Popen(["true"])
    dead.wait()
    name = f"{netns.PREFIX}{dead.pid}-1-0"
    subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        done = subprocess.run([sys.executable, "-m", "tcpenergy", "emulate", "--cleanup"], capture_output=True,
                              text=True, cwd=REPO, env={**os.environ})
        assert done.returncode == 0, done.stderr
        assert name in done.stdout and name not in netns.ours()
    finally:
        subprocess.run(["ip", "netns", "del", name], capture_output=True)


def test_the_record_is_written_with_mode_and_parameters(clean_run):
    record, _ = clean_run
    assert record["mode"] == "emulated"
    # Keys the scenario leaves unset run as the kernel does: the linux-6 preset, recorded.
    assert record["parameters"]["tcp.stack"] == "linux-6"
    json.dumps(record)


def test_an_emulated_and_a_simulated_sweep_sit_side_by_side_in_one_store(tmp_path):
    # The "mode" column: one store, one summary, a cell's kernel and simulator runs as
    # two groups (label.mode), never averaged together.
    from tcpenergy.experiments.frame import runs_frame
    from tcpenergy.experiments.runner import sweep
    from tcpenergy.experiments.stats import summarize
    from tcpenergy.experiments.store import open_store

    base = path_scenario(bytes_="300000").data
    simulated = {"base": base, "name": "sim", "seeds": [1], "axes": {"tcp.variant": ["sack", "cubic"]},
                 "set": {"tcp.stack": "linux-6"}}
    store = tmp_path / "both.duckdb"
    sweep(simulated, store, jobs=1, progress=False)
    outcome = sweep({**simulated, "name": "kernel", "mode": "emulated"}, store, progress=False)
    assert (outcome.ran, outcome.failed) == (2, 0)
    with open_store(store) as st:
        frame = runs_frame(st.records())
    assert sorted(frame["mode"]) == ["emulated", "emulated", "simulated", "simulated"]
    table = summarize(frame, metrics=["flow.goodput_bps"])
    assert sorted(zip(table["label.tcp.variant"], table["label.mode"])) == [
        ("cubic", "emulated"), ("cubic", "simulated"), ("sack", "emulated"), ("sack", "simulated")]


def test_an_emulated_sweep_refuses_parallel_jobs_before_making_a_store(tmp_path):
    from tcpenergy.experiments.errors import ExecutorError
    from tcpenergy.experiments.runner import sweep

    spec = {"base": path_scenario().data, "name": "k", "mode": "emulated"}
    with pytest.raises(ExecutorError, match="one run at a time"):
        sweep(spec, tmp_path / "k.duckdb", jobs=2, progress=False)
    assert not (tmp_path / "k.duckdb").exists()


def test_a_network_with_a_router_carries_bulk_paced_and_udp_flows():
    # scenarios/mixed-traffic.toml, shortened: the access point forwards inside the engine (no
    # namespace), the voice flow is CBR over UDP (64 kbit/s of 160-byte datagrams from 2 s to
    # 5 s: 150 datagrams), the interactive flow writes 1000-byte messages.
    record = emulate("scenarios/mixed-traffic.toml", lag_bound_ms=LAG_BOUND_MS, overrides=[
        ("flows.0.traffic.bytes", 300_000), ("flows.1.stop", "5s"), ("flows.2.stop", "5s"), ("stop_after", "12s")])
    assert record["complete"], record.get("stop")
    flows = {f["name"]: f for f in record["flows"]}
    assert flows["download"]["bytes_delivered"] == 300_000
    assert flows["interactive"]["bytes_delivered"] % 1000 == 0 and flows["interactive"]["bytes_delivered"] > 0
    voice, programs = flows["voice"], record["kernel"]["flows"]["voice"]
    assert voice["datagrams_sent"] == programs["sender"]["datagrams"] == 150
    assert voice["datagrams_delivered"] == programs["receiver"]["datagrams"]
    assert record["nodes"]["ap"]["forwarded_packets"] > 0
    assert set(record["kernel"]["addresses"]) == {"server", "mobile"}


def test_a_timed_flow_ends_at_its_duration_as_in_simulation():
    # docs/models/network.md: a timed flow's ends stop at its duration; its record is what was
    # delivered by then.
    scenario = api.load_scenario({
        "name": "timed", "seed": 1, "stop_after": "20s", "nodes": {"a": {}, "b": {}},
        "links": [{"between": ["a", "b"], "rate": "10Mbps", "delay": "5ms", "queue": 200}],
        "flows": [{"name": "f", "from": "a", "to": "b", "transport": "tcp",
                   "traffic": {"kind": "timed", "duration": "1s"}, "tcp": {"variant": "cubic"}}]})
    record = emulate(scenario, lag_bound_ms=LAG_BOUND_MS)
    assert record["complete"], record.get("stop")
    assert record["energy"]["window_s"] == pytest.approx(1.0, abs=1e-9)
    flow = record["flows"][0]
    # About a second of a 10 Mbit/s link, less the handshake and the ACKs' last round trip.
    assert 0.8e6 < flow["bytes_delivered"] < 1.25e6
    # Not every byte written was acknowledged: no completion time (null), as in simulation.
    assert flow["completion_s"] is None


def test_an_80211_channel_carries_the_kernels_tcp_with_its_mac_overhead():
    # The seed 003 testbed's 802.11b ad hoc channel (scenarios/agrawal-single-hop.toml), its
    # Linux 2.2 stack constants replaced by the kernel's: the MAC's RTS/CTS and ACK frames cost
    # the radios energy as in simulation (docs/models/wifi.md).
    record = emulate("scenarios/agrawal-single-hop.toml", lag_bound_ms=LAG_BOUND_MS, overrides=[
        ("tcp.stack", "linux-6"), ("tcp.header_prediction", "standard"),
        ("tcp.delayed_ack", {"every": 2, "timeout": "40ms"}), ("flows.0.traffic.bytes", 300_000)])
    assert record["complete"], record.get("stop")
    assert record["flows"][0]["bytes_delivered"] == 300_000
    channel = record["channels"]["adhoc"]
    assert sum(i["packets_sent"] for i in channel["interfaces"].values()) > 0
    assert record["nodes"]["sender"]["breakdown_j"]["mac_control"] > 0
