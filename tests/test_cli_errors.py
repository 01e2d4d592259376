"""Bad input gives one clear message naming the key path, exit status 2, and no output file."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tcpenergy import api
from tcpenergy.exceptions import EngineError

# (--set argument, key path the message must name)
BAD_OVERRIDES = [
    pytest.param("path.forward.colour=1", "path.forward.colour", id="unknown-key"),
    pytest.param("path.mtu=\"large\"", "path.mtu", id="wrong-type"),
    pytest.param("path.forward.rate=-2Mbps", "path.forward.rate", id="negative-rate"),
    pytest.param("path.forward.impairments.0.p=1.5", "path.forward.impairments.0.p",
                 id="probability-above-one"),
    pytest.param("path.forward.impairments.0.p=-0.1", "path.forward.impairments.0.p",
                 id="probability-below-zero"),
    pytest.param("tcp.variant=vegas-turbo", "tcp.variant", id="unknown-variant"),
    pytest.param("energy.sender=no-such-device", "energy.sender", id="unknown-profile"),
]


def assert_user_error(result, *expected_in_message):
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert result.stderr.startswith("error: ")
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "Traceback" not in result.stderr
    for text in expected_in_message:
        assert text in result.stderr


@pytest.mark.parametrize("override, key_path", BAD_OVERRIDES)
def test_bad_override_exits_2_naming_key_path_and_writes_no_trace(cli, quickstart, tmp_path,
                                                                  override, key_path):
    target = tmp_path / "trace.parquet"
    result = cli("run", quickstart, "--set", override, "--trace", target)
    assert_user_error(result, f"error: {key_path}:")
    assert not target.exists()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("override, key_path", BAD_OVERRIDES)
def test_validate_reports_same_bad_override_with_key_path(cli, quickstart, override, key_path):
    assert_user_error(cli("validate", quickstart, "--set", override), f"error: {key_path}:")


def test_unknown_key_in_scenario_file_names_key_path(cli, quickstart, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(quickstart.read_text().replace("[tcp]\n", "[tcp]\nflavour = \"cubic\"\n", 1))
    assert_user_error(cli("run", bad), "error: tcp.flavour:")


def test_missing_scenario_file_exits_2(cli, tmp_path):
    missing = tmp_path / "nowhere.toml"
    assert_user_error(cli("run", missing), "not found", str(missing))


def test_toml_syntax_error_exits_2_with_line_and_column(cli, tmp_path):
    bad = tmp_path / "broken.toml"
    bad.write_text('name = "broken"\n[path\nmtu = 1500\n')
    assert_user_error(cli("run", bad), "invalid TOML", "line 2")


def test_set_without_equals_sign_exits_2(cli, quickstart):
    assert_user_error(cli("run", quickstart, "--set", "tcp.variant"), "dotted.key=VALUE")


def test_negative_seed_exits_2_naming_seed(cli, quickstart):
    assert_user_error(cli("run", quickstart, "--seed", "-1"), "error: seed:")


def test_engine_failure_exits_1_with_one_line_message(cli, quickstart, monkeypatch):
    def broken(*args, **kwargs):
        raise EngineError("invariant violated: cwnd is zero")

    monkeypatch.setattr(api, "execute", broken)
    result = cli("run", quickstart)
    assert result.exit_code == 1
    assert "engine failure" in result.stderr and "cwnd is zero" in result.stderr
    assert "Traceback" not in result.stderr


def test_user_error_in_real_process_shows_no_traceback(quickstart, tmp_path):
    target = tmp_path / "t.csv"
    proc = subprocess.run(
        [sys.executable, "-m", "tcpenergy", "run", str(quickstart),
         "--set", "path.forward.rate=-2Mbps", "--trace", str(target)],
        capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.startswith("error: path.forward.rate:")
    assert "Traceback" not in proc.stderr
    assert not target.exists()


# A battery run of about 570 years sampled every second, nothing sent: terabytes of battery
# series (issue #24 item 4; docs/units-and-scenarios.md "Bounds").
BATTERY = Path(__file__).resolve().parent.parent / "scenarios" / "agrawal2003-battery.toml"
HUGE_BATTERY = ["--set", "nodes.sender.battery.sample=1s", "--set", "stop_after=5000000h",
                "--set", "flows.0.start=5000000h"]


def test_a_run_far_beyond_the_machine_is_refused_in_one_line_naming_the_key(cli, tmp_path):
    pcap = tmp_path / "pcap"
    result = cli("run", BATTERY, *HUGE_BATTERY, "--pcap", pcap)
    assert_user_error(result, "error: nodes.sender.battery.sample:", "of memory", "--force")
    assert not pcap.exists() or list(pcap.iterdir()) == []


def test_a_forced_run_whose_memory_runs_out_fails_in_one_line_and_does_not_abort():
    # A real process: an allocation failure used to abort it (SIGABRT and a Rust backtrace).
    proc = subprocess.run(
        [sys.executable, "-m", "tcpenergy", "run", str(BATTERY), *HUGE_BATTERY, "--force"],
        capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == "" and "Traceback" not in proc.stderr
    warning, error = proc.stderr.strip().splitlines()
    assert warning.startswith("warning: nodes.sender.battery.sample:") and "running anyway (--force)" in warning
    assert error.startswith("error: nodes.sender.battery.sample:") and "samples" in error
