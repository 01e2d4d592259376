"""Bad input gives one clear message naming the key path, exit status 2, and no output file."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tcpenergy import api
from tcpenergy.exceptions import EngineError, ScenarioError
from tcpenergy.scenario import validate

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


# A list and an item inside it: applied in order, the later would undo or amend the earlier,
# and the record's `parameters` (so `to_frame`'s columns) would not say what ran.
WHOLE = 'path.forward.impairments=[{kind="bernoulli", p=0.01}]'
PART = "path.forward.impairments.0.p=0.05"


@pytest.mark.parametrize("first, second", [(WHOLE, PART), (PART, WHOLE)],
                         ids=["whole-then-part", "part-then-whole"])
@pytest.mark.parametrize("command", ["run", "validate"])
def test_set_of_a_key_and_a_key_inside_it_exits_2_naming_both(cli, quickstart, tmp_path,
                                                              first, second, command):
    trace = ["--trace", tmp_path / "trace.csv"] if command == "run" else []
    result = cli(command, quickstart, "--set", first, "--set", second, *trace)
    assert_user_error(result, "--set path.forward.impairments.0.p",
                      "--set path.forward.impairments ")
    assert list(tmp_path.iterdir()) == []


def test_overrides_of_a_key_and_a_key_inside_it_are_refused_by_the_api(quickstart):
    import tcpenergy

    overrides = {"path.forward.impairments": [{"kind": "bernoulli", "p": 0.01}],
                 "path.forward.impairments.0.p": 0.05}
    with pytest.raises(tcpenergy.ScenarioError, match="path.forward.impairments.0.p"):
        tcpenergy.run(quickstart, **overrides)
    with pytest.raises(tcpenergy.ScenarioError, match="path.forward.impairments.0.p"):
        tcpenergy.validate(quickstart, **overrides)


def test_keys_that_share_only_the_start_of_a_name_do_not_overlap():
    from tcpenergy.scenario import check_overrides

    check_overrides([("stop", "battery_empty:sender"), ("stop_after", "1h"),
                     ("path.forward.delay", "5ms"), ("path.forward.delay_x", 1)])
    with pytest.raises(ScenarioError, match="--set path.forward "):
        check_overrides([("path.forward.delay", "5ms"), ("path.forward", {})], "--set")


def test_a_key_set_twice_runs_and_is_recorded_with_its_last_value(quickstart):
    overrides = [("tcp.initial_window", 2), ("traffic.bytes", "20KB"), ("tcp.initial_window", 3)]
    record, _ = api.execute(api.load_scenario(quickstart), None, overrides)
    assert record["parameters"]["tcp.initial_window"] == 3
    assert validate(api.load_scenario(quickstart), overrides)["tcp"]["initial_window"] == 3


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
