"""Trace-driven links (docs/models/network.md, "Trace-driven links"): a link direction whose
delivery opportunities come from a trace in Mahimahi's format (the mahimahi repository's
traces/README; the semantics of its LinkQueue, src/frontend/link_queue.cc). The trace file is read
by the Python package, relative to the scenario file, and handed to the engine inline."""

from __future__ import annotations

import collections
import json
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

import tcpenergy
from tcpenergy.exceptions import ScenarioError

REPO = Path(__file__).resolve().parents[1]
SCENARIOS = REPO / "scenarios"
LTE = SCENARIOS / "traces" / "lte-like.down"
# Where a distribution installs the public traces (Debian's and Ubuntu's mahimahi-traces); a
# directory holding them elsewhere (the mahimahi repository's traces/) can be named instead.
PUBLIC_TRACES = Path(os.environ.get("TCPENERGY_MAHIMAHI_TRACES", "/usr/share/mahimahi/traces"))


def trace_lines(path: Path) -> list:
    return [int(line) for line in path.read_text().split()]


def copy_example(tmp_path: Path) -> Path:
    """The shipped lte-trace scenario and its traces, copied into a directory of their own."""
    shutil.copytree(SCENARIOS / "traces", tmp_path / "traces")
    return Path(shutil.copy(SCENARIOS / "lte-trace.toml", tmp_path / "lte-trace.toml"))


def test_a_trace_path_is_read_relative_to_the_scenario_file_through_the_api(tmp_path, monkeypatch):
    scenario = copy_example(tmp_path)
    monkeypatch.chdir(tmp_path.parent)  # elsewhere: the path is the file's, not the directory's
    loaded = tcpenergy.load_scenario(scenario)
    forward = loaded.normalized["path"]["forward"]
    assert "rate" not in forward
    assert forward["trace"] == {"name": "lte-like.down", "ms": trace_lines(LTE)}
    assert loaded.normalized["path"]["reverse"]["trace"] == {"name": "constant-3mbps.up", "ms": [4]}
    record = tcpenergy.run(scenario)
    assert record["complete"] and record["flow"]["bytes_delivered"] == 2_000_000
    # The trace is the bottleneck: the sender's IP bytes fit in the opportunities up to its end
    # (a 64 KB window and slow start keep it from filling them all).
    ms = trace_lines(LTE)
    seconds = record["flow"]["completion_s"]
    capacity = sum(1 for t in ms if t <= seconds * 1000) * 1504 * 8 / seconds
    assert 0.5 * capacity < record["flow"]["throughput_bps"] <= capacity


def test_tcpenergy_run_reads_the_trace_and_prints_the_record(tmp_path):
    scenario = copy_example(tmp_path)
    done = subprocess.run([sys.executable, "-m", "tcpenergy", "run", str(scenario), "--format", "json"],
                          capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record == tcpenergy.run(scenario) | {"engine_version": record["engine_version"]}


def test_a_trace_of_one_opportunity_per_ms_carries_12_mbps_of_ip_packets_mahimahi_traces_readme(tmp_path):
    # traces/README: a file holding "1" is a link passing one MTU-sized packet per millisecond.
    (tmp_path / "one.trace").write_text("1\n")
    scenario = {"name": "one-per-ms", "path": {"forward": {"trace": str(tmp_path / "one.trace"), "delay": "10ms",
                                                           "queue": 1000},
                                               "reverse": {"rate": "12Mbps", "delay": "10ms"}},
                "tcp": {"receive_buffer": "1MB", "window_scale": True, "initial_ssthresh": "infinite"},
                "traffic": {"kind": "bulk", "bytes": "3MB"},
                "energy": {"sender": "ideal-nic-0.3", "receiver": "ideal-nic-0.3"}}
    record = tcpenergy.run(scenario)
    # 1500 IP bytes per ms once the window is open: 12 Mbit/s of IP packets (12.032 Mbit/s of
    # the bytes Mahimahi counts, with its 4-byte TUN header), a few round trips of slow start less.
    forward = record["path"]["forward"]
    assert forward["bytes_sent"] / forward["packets_sent"] == pytest.approx(1500, rel=0.01)
    assert 0.85 * 12e6 < record["flow"]["throughput_bps"] <= 12e6


def test_a_network_link_takes_a_trace_per_direction(tmp_path, monkeypatch):
    copy_example(tmp_path)
    scenario = {"nodes": {"a": {"profile": "ideal-nic-0.3"}, "b": {"profile": "ideal-nic-0.3"}},
                "links": [{"between": ["a", "b"], "rate": "3Mbps", "delay": "5ms",
                           "forward": {"trace": "traces/lte-like.down"}}],
                "flows": [{"name": "f", "from": "a", "to": "b", "traffic": {"kind": "bulk", "bytes": "300KB"}}]}
    monkeypatch.chdir(tmp_path)  # a dict's paths are the current directory's
    loaded = tcpenergy.load_scenario(scenario)
    link = loaded.normalized["links"][0]
    assert link["forward"]["trace"]["name"] == "lte-like.down" and "rate" not in link["forward"]
    assert link["reverse"]["rate"] == "3Mbps" and "trace" not in link["reverse"]
    assert tcpenergy.run(loaded)["flows"][0]["bytes_delivered"] == 300_000


def test_an_override_names_a_trace_file_relative_to_the_current_directory(tmp_path, monkeypatch, cli):
    scenario = copy_example(tmp_path)
    monkeypatch.chdir(tmp_path / "traces")
    up = {"name": "constant-3mbps.up", "ms": [4]}
    assert tcpenergy.validate(scenario, **{"path.forward.trace": "constant-3mbps.up"})["path"]["forward"]["trace"] == up
    # A whole table too, and on the command line.
    table = {"trace": "constant-3mbps.up", "delay": "5ms"}
    assert tcpenergy.validate(scenario, **{"path.forward": table})["path"]["forward"]["trace"] == up
    result = cli("run", scenario, "--format", "json", "--set", "path.forward.trace=constant-3mbps.up",
                 "--set", "traffic.bytes=100KB")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["flow"]["bytes_delivered"] == 100_000


@pytest.mark.parametrize("lines, line, what", [
    ("0\n5\n3\n9\n", 3, "must not decrease"),
    ("1\n2.5\n", 2, "not a whole number"),
    ("1\n-4\n", 2, "not a whole number"),
    ("1\n\n2\n", 2, "is empty"),
    ("0\n0\n", None, "must be > 0"),
    ("", None, "at least one line"),
])
def test_a_bad_trace_file_is_refused_naming_the_key_and_the_line_with_no_output(tmp_path, cli, lines, line, what):
    scenario = copy_example(tmp_path)
    (tmp_path / "traces" / "lte-like.down").write_text(lines)
    with pytest.raises(ScenarioError) as refused:
        tcpenergy.load_scenario(scenario)
    message = str(refused.value)
    assert message.startswith("path.forward.trace"), message
    assert what in message and (line is None or f"line {line}" in message), message
    pcap = tmp_path / "pcap"
    result = cli("run", scenario, "--format", "json", "--pcap", pcap)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert "path.forward.trace" in result.stderr and what in result.stderr
    assert not pcap.exists()


def test_a_missing_trace_file_and_a_trace_beside_a_rate_are_refused(tmp_path):
    scenario = copy_example(tmp_path)
    (tmp_path / "traces" / "lte-like.down").unlink()
    with pytest.raises(ScenarioError, match="path.forward.trace: trace file not found"):
        tcpenergy.load_scenario(scenario)
    with pytest.raises(ScenarioError, match=r"path.forward.trace: .*either rate .* or trace .*not both"):
        tcpenergy.run(SCENARIOS / "lte-trace.toml", **{"path.forward.rate": "2Mbps"})


def arrivals_per_ms(pcap: Path) -> collections.Counter:
    """How many packets a node's capture shows arriving in each millisecond (nanosecond pcap)."""
    data, at, per_ms = pcap.read_bytes(), 24, collections.Counter()
    while at + 16 <= len(data):
        sec, ns, caplen = struct.unpack_from("<III", data, at)
        t = sec * 10**9 + ns
        assert t % 10**6 == 0, f"an arrival at {t} ns, between opportunities"
        per_ms[t // 10**6] += 1
        at += 16 + caplen
    return per_ms


def deliveries_follow(trace: Path, tmp_path: Path, seconds: float, rate: str) -> None:
    """A UDP source offering far more than the trace carries keeps the link's queue full: from
    then on each opportunity carries exactly one 1500-byte packet, delivered at its millisecond."""
    scenario = {"name": "follow", "stop_after": f"{seconds}s",
                "nodes": {"a": {"profile": "ideal-nic-0.3"}, "b": {"profile": "ideal-nic-0.3"}},
                "links": [{"between": ["a", "b"], "delay": "0s", "queue": 1_000_000,
                           "forward": {"trace": str(trace)}, "reverse": {"rate": "1Mbps"}}],
                "flows": [{"name": "f", "from": "a", "to": "b", "transport": "udp",
                           "traffic": {"kind": "cbr", "rate": rate, "packet": 1472}}]}
    pcap = tmp_path / "nodes"
    tcpenergy.run(scenario, node_pcap=pcap)
    got = arrivals_per_ms(pcap / "b.pcap")
    expected = collections.Counter(trace_lines(trace))
    # From 0.5 s on the backlog is thousands of packets; until the run's end.
    window = range(500, int(seconds * 1000))
    assert [got[m] for m in window] == [expected[m] for m in window]
    assert sum(got[m] for m in window) > 0


def test_deliveries_follow_the_trace_millisecond_by_millisecond_mahimahi_link_queue(tmp_path):
    deliveries_follow(LTE, tmp_path, 4.0, "40Mbps")


@pytest.mark.skipif(not (PUBLIC_TRACES / "TMobile-LTE-short.down").is_file(),
                    reason=f"the public Mahimahi traces are not installed ({PUBLIC_TRACES}/TMobile-LTE-short.down is "
                           "absent: they ship in the mahimahi repository's traces/ directory and, on some "
                           "distributions, the mahimahi-traces package; TCPENERGY_MAHIMAHI_TRACES=DIR names another place)")
def test_a_public_mahimahi_trace_is_read_as_it_is_and_deliveries_follow_it(tmp_path):
    trace = PUBLIC_TRACES / "TMobile-LTE-short.down"
    loaded = tcpenergy.load_scenario({"path": {"forward": {"trace": str(trace)}},
                                      "energy": {"sender": "ideal-nic-0.3", "receiver": "ideal-nic-0.3"}})
    assert len(loaded.normalized["path"]["forward"]["trace"]["ms"]) == len(trace_lines(trace))
    deliveries_follow(trace, tmp_path, 3.0, "200Mbps")


def test_kernel_mode_runs_the_kernels_tcp_through_a_trace_driven_link_at_the_simulators_goodput(tmp_path):
    # Kernel mode drives the machine's own TCP through the engine's links on the wall clock
    # (docs/emulation.md): the same trace, the same opportunities. The simulator's Linux stack on
    # the same scenario finishes the transfer within a few per cent of the kernel.
    from tcpenergy.emulate.run import emulate

    scenario = tcpenergy.load_scenario(copy_example(tmp_path))
    no_tail = {"energy.after_completion": "0s"}  # the phone's tail would run 12 s on the wall clock
    kernel = emulate(scenario, overrides=list(no_tail.items()), congestion="cubic", lag_bound_ms=20.0)
    assert kernel["complete"], kernel.get("stop")
    assert kernel["flow"]["bytes_delivered"] == 2_000_000
    for name, error in kernel["emulation"]["rate_error"].items():
        assert abs(error) < 0.01, name
    simulated = tcpenergy.run(scenario, **{"tcp.stack": "linux-6"}, **no_tail)
    assert kernel["flow"]["goodput_bps"] == pytest.approx(simulated["flow"]["goodput_bps"], rel=0.05)
