"""`tcpenergy validate`, `tcpenergy profiles` and `tcpenergy --version`."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import tcpenergy
from tcpenergy import devices

QUICKSTART_PROFILE = "singh2002-toshiba-wavelan"


def test_validate_prints_ok_and_normalized_summary(cli, quickstart):
    result = cli("validate", quickstart)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("OK")
    for text in ("quickstart", "sack", "bernoulli", QUICKSTART_PROFILE, "always_on"):
        assert text in result.stdout


def test_validate_prints_the_estimate_of_the_run(cli, quickstart):
    result = cli("validate", quickstart)
    assert result.exit_code == 0, result.output
    assert re.search(r"Estimated run: about [0-9.]+e[0-9]+ events and [0-9.]+ MB of memory", result.stdout), result.stdout
    assert result.stderr == ""


def test_validate_warns_of_a_run_far_beyond_the_machine_but_succeeds(cli, quickstart):
    result = cli("validate", quickstart, "--set", 'traffic.bytes="900000GB"', "--set", 'stop_after="5000000h"',
                 "--set", 'energy.sender="ideal-nic-0.3"', "--set", 'energy.receiver="ideal-nic-0.3"',
                 "--set", 'path.forward.rate="1000Gbps"', "--set", 'path.reverse.rate="1000Gbps"')
    assert result.exit_code == 0, result.output
    assert result.stderr.startswith("warning: traffic.bytes: the run would process about"), result.stderr


def test_validate_json_fills_in_defaults(cli, tmp_path):
    minimal = tmp_path / "minimal.toml"
    minimal.write_text('[traffic]\nkind = "bulk"\nbytes = "100KB"\n')
    result = cli("validate", minimal, "--json")
    assert result.exit_code == 0, result.output
    normalized = json.loads(result.stdout)
    assert normalized["name"] == "minimal"
    for section in ("path", "tcp", "traffic", "energy"):
        assert section in normalized
    assert "variant" in normalized["tcp"]


def test_validate_applies_overrides(cli, quickstart):
    result = cli("validate", quickstart, "--json", "--set", "tcp.variant=reno")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["tcp"]["variant"] == "reno"


def test_profiles_lists_builtin_profiles_with_descriptions(cli):
    result = cli("profiles")
    assert result.exit_code == 0, result.output
    assert QUICKSTART_PROFILE in result.stdout
    for name in devices.names():
        assert name in result.stdout
    assert devices.description(devices.get(QUICKSTART_PROFILE))[:20] in result.stdout


def test_profile_show_prints_every_figure_with_source_and_estimate_marks(cli):
    result = cli("profiles", QUICKSTART_PROFILE)
    assert result.exit_code == 0, result.output
    out = result.stdout
    figures = devices.figures(devices.get(QUICKSTART_PROFILE))
    assert figures
    for figure in figures:
        assert figure.key in out
        if figure.source:
            assert figure.source.split()[0] in out
    assert "radio.tx_power_w" in out
    marked = [line for line in out.splitlines() if line.rstrip().endswith("(estimated)")]
    assert len(marked) == sum(f.estimated for f in figures) > 0
    # Published figures carry their source and no estimate mark.
    assert not next(line for line in out.splitlines() if "radio.tx_power_w" in line).endswith(
        "(estimated)")


def test_unknown_profile_name_exits_2_listing_known_profiles(cli):
    result = cli("profiles", "no-such-device")
    assert result.exit_code == 2
    assert "no-such-device" in result.stderr and QUICKSTART_PROFILE in result.stderr


def test_version_prints_package_and_engine_versions(cli):
    result = cli("--version")
    assert result.exit_code == 0
    assert tcpenergy.__version__ in result.stdout
    assert f"engine {tcpenergy.engine_version()}" in result.stdout


def test_console_script_module_entry_point_runs(quickstart):
    proc = subprocess.run([sys.executable, "-m", "tcpenergy", "--version"], capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, timeout=60)
    assert proc.returncode == 0
    assert proc.stdout.startswith("tcpenergy ")
