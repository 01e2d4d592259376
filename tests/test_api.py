"""The Python API: load_scenario, run, run_traced, to_frame, and the exception tree."""

from __future__ import annotations

import copy
import json
import os
import re
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

import tcpenergy
from tcpenergy import _engine

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def quickstart_dict(quickstart):
    return tomllib.loads(quickstart.read_text())


def test_load_scenario_from_path_keeps_dict_name_and_source(quickstart):
    scenario = tcpenergy.load_scenario(quickstart)
    assert isinstance(scenario, tcpenergy.Scenario)
    assert scenario.name == "quickstart"
    assert scenario.source == quickstart
    assert scenario.data["tcp"]["variant"] == "sack"
    assert scenario.normalized["tcp"]["variant"] == "sack"


def test_load_scenario_from_dict_has_no_source(quickstart_dict):
    scenario = tcpenergy.load_scenario(quickstart_dict)
    assert scenario.source is None
    assert scenario.name == "quickstart"
    assert scenario.data == quickstart_dict


def test_load_scenario_validates_and_names_key_path(quickstart_dict):
    quickstart_dict["path"]["forward"]["rate"] = "-2Mbps"
    with pytest.raises(tcpenergy.ScenarioError) as info:
        tcpenergy.load_scenario(quickstart_dict)
    assert info.value.path == "path.forward.rate"
    assert info.value.message


def test_load_scenario_missing_file_raises_scenario_error(tmp_path):
    with pytest.raises(tcpenergy.ScenarioError, match="not found"):
        tcpenergy.load_scenario(tmp_path / "missing.toml")


def test_run_accepts_scenario_dict_or_path_alike(quickstart, quickstart_dict):
    from_path = tcpenergy.run(quickstart)
    assert tcpenergy.run(tcpenergy.load_scenario(quickstart)) == from_path
    assert tcpenergy.run(str(quickstart)) == from_path
    assert tcpenergy.run(quickstart_dict) == from_path


def test_run_returns_plain_dict_record_with_contract_keys(quickstart):
    record = tcpenergy.run(quickstart)
    assert type(record) is dict
    assert {"scenario", "seed", "variant", "complete", "sim_time_s", "events", "flow",
            "energy"} <= set(record)
    assert {"bytes_delivered", "completion_s", "goodput_bps", "throughput_bps", "segments_sent",
            "retransmissions", "timeouts", "fast_retransmits", "acks_sent",
            "sack_blocks_sent"} <= set(record["flow"])
    for node in ("sender", "receiver"):
        assert {"total_j", "idle_j", "idealized_j", "per_bit_total_uj", "per_bit_idealized_uj",
                "breakdown_j"} <= set(record["energy"][node])


def test_run_with_dotted_overrides_changes_variant_and_loss(quickstart):
    record = tcpenergy.run(quickstart, **{"tcp.variant": "newreno",
                                          "path.forward.impairments.0.p": 0.0})
    assert record["variant"] == "newreno"
    assert record["flow"]["retransmissions"] == 0


def test_run_does_not_modify_the_scenario(quickstart):
    scenario = tcpenergy.load_scenario(quickstart)
    before = copy.deepcopy(scenario.data)
    tcpenergy.run(scenario, seed=3, **{"tcp.variant": "reno"})
    assert scenario.data == before


def test_run_with_bad_override_raises_scenario_error_with_path(quickstart):
    with pytest.raises(tcpenergy.ScenarioError) as info:
        tcpenergy.run(quickstart, **{"path.forward.impairments.0.p": 2.0})
    assert info.value.path == "path.forward.impairments.0.p"


def test_same_seed_gives_identical_records(quickstart):
    assert tcpenergy.run(quickstart, seed=11) == tcpenergy.run(quickstart, seed=11)


def test_different_seeds_draw_different_loss_patterns(quickstart):
    records = [tcpenergy.run(quickstart, seed=seed) for seed in range(1, 6)]
    assert [r["seed"] for r in records] == [1, 2, 3, 4, 5]
    assert len({r["flow"]["completion_s"] for r in records}) > 1


def test_scenario_seed_is_the_default_seed(quickstart_dict):
    quickstart_dict["seed"] = 5
    assert tcpenergy.run(quickstart_dict)["seed"] == 5


def test_run_traced_returns_record_and_sender_time_series(quickstart):
    record, trace = tcpenergy.run_traced(quickstart)
    assert "trace" not in record
    assert {"t_s", "cwnd_bytes", "rto_s", "radio_state", "power_w"} <= set(trace.columns)
    assert trace["t_s"].is_monotonic_increasing
    assert record == tcpenergy.run(quickstart)


def test_to_frame_gives_one_flat_row_per_run(quickstart):
    records = [tcpenergy.run(quickstart, seed=s) for s in (1, 2, 3)]
    frame = tcpenergy.to_frame(records)
    assert len(frame) == 3
    for column in ("flow.goodput_bps", "energy.sender.total_j",
                   "energy.sender.breakdown_j.cpu", "energy.receiver.idealized_j", "variant"):
        assert column in frame.columns
    assert list(frame["seed"]) == [1, 2, 3]
    assert frame.loc[1, "energy.sender.total_j"] == records[1]["energy"]["sender"]["total_j"]
    assert not any(isinstance(v, dict) for v in frame.iloc[0])


def test_to_frame_accepts_a_single_record(quickstart):
    assert len(tcpenergy.to_frame(tcpenergy.run(quickstart))) == 1


def test_exceptions_are_one_tree_shared_with_the_engine():
    assert tcpenergy.ScenarioError is _engine.ScenarioError
    assert tcpenergy.EngineError is _engine.EngineError
    assert issubclass(tcpenergy.ScenarioError, tcpenergy.TcpEnergyError)
    assert issubclass(tcpenergy.EngineError, tcpenergy.TcpEnergyError)
    from tcpenergy import exceptions
    assert exceptions.TcpEnergyError is _engine.TcpEnergyError


def test_engine_raised_scenario_error_str_is_path_and_message(quickstart):
    with pytest.raises(tcpenergy.ScenarioError) as info:
        tcpenergy.run(quickstart, **{"tcp.variant": "bogus"})
    assert str(info.value) == f"{info.value.path}: {info.value.message}"


def test_versions_are_reported():
    assert tcpenergy.__version__
    assert tcpenergy.engine_version() == _engine.__version__


def test_run_record_carries_scenario_name_overrides_and_seed_as_parameters(quickstart):
    record = tcpenergy.run(quickstart, seed=4, **{"tcp.variant": "reno", "traffic.bytes": "100KB"})
    assert record["parameters"] == {"scenario": "quickstart", "tcp.variant": "reno",
                                    "traffic.bytes": "100KB", "seed": 4}
    # Without a seed argument the scenario's own seed ran: no "seed" parameter was given.
    assert tcpenergy.run(quickstart, **{"traffic.bytes": "100KB"})["parameters"] == {
        "scenario": "quickstart", "traffic.bytes": "100KB"}


def test_to_frame_has_a_column_per_parameter(quickstart):
    records = [tcpenergy.run(quickstart, seed=s, **{"path.forward.impairments.0.p": p,
                                                    "traffic.bytes": "100KB"})
               for p in (0.0, 0.02) for s in (1, 2, 3)]
    frame = tcpenergy.to_frame(records)
    assert frame["parameters.scenario"].tolist() == ["quickstart"] * 6
    assert frame["parameters.seed"].tolist() == [1, 2, 3] * 2
    sizes = frame.groupby("parameters.path.forward.impairments.0.p").size()
    assert sizes.to_dict() == {0.0: 3, 0.02: 3}


def test_cli_run_json_and_csv_records_carry_parameters(cli, quickstart):
    args = ("run", quickstart, "--seed", "3", "--set", "traffic.bytes=100KB",
            "--set", "path.forward.impairments.0.p=0.05")
    as_json = cli(*args, "--format", "json")
    assert as_json.exit_code == 0, as_json.output
    assert json.loads(as_json.stdout)["parameters"] == {
        "scenario": "quickstart", "traffic.bytes": "100KB",
        "path.forward.impairments.0.p": 0.05, "seed": 3}
    header, row = cli(*args, "--format", "csv").stdout.splitlines()
    values = dict(zip(header.split(","), row.split(",")))
    assert values["parameters.scenario"] == "quickstart"
    assert values["parameters.path.forward.impairments.0.p"] == "0.05"
    assert values["parameters.seed"] == "3"


def test_readme_python_api_example_frame_groups_by_loss():
    """The README's Python API block, run as written (5 MB quickstart transfers): its frame
    groups by the loss rate it varied, three groups of five seeds."""
    readme = (REPO / "README.md").read_text()
    block = re.search(r"## Python API\n\n```python\n(.*?)```", readme, re.S).group(1)
    cwd = os.getcwd()
    os.chdir(REPO)  # the example names scenarios/quickstart.toml relative to the repository
    try:
        namespace: dict = {}
        exec(compile(block, "README.md", "exec"), namespace)
    finally:
        os.chdir(cwd)
    frame = namespace["frame"]
    assert frame["complete"].all()
    loss = "parameters.path.forward.impairments.0.p"
    assert frame.groupby(loss).size().to_dict() == {0.0: 5, 0.01: 5, 0.05: 5}
    means = namespace["by_loss"]["flow.goodput_bps"].mean()
    assert means[0.0] > means[0.01] > means[0.05]  # more loss, less goodput
    assert frame.groupby(loss)["parameters.seed"].apply(sorted).tolist() == [[1, 2, 3, 4, 5]] * 3


# A battery run of about 570 years sampled every second, nothing sent: terabytes of battery
# series (issue #24 item 4; docs/units-and-scenarios.md "Bounds").
BATTERY = REPO / "scenarios" / "agrawal2003-battery.toml"
HUGE_BATTERY = {"nodes.sender.battery.sample": "1s", "stop_after": "5000000h", "flows.0.start": "5000000h"}


def test_estimate_reports_events_memory_their_keys_and_the_limits(quickstart):
    est = tcpenergy.estimate(quickstart)
    assert est["refusal"] is None
    assert 0 < est["events"] < est["limits"]["events"] and 0 < est["memory_bytes"] < est["limits"]["memory_bytes"]
    assert {"key", "what", "events", "memory_bytes"} <= set(est["parts"][0])
    assert "traffic.bytes" in [p["key"] for p in est["parts"]]
    assert est["summary"].startswith("about ")


def test_a_run_far_beyond_the_machine_raises_scenario_error_naming_the_key():
    est = tcpenergy.estimate(BATTERY, **HUGE_BATTERY)
    assert est["refusal"]["path"] == "nodes.sender.battery.sample"
    with pytest.raises(tcpenergy.ScenarioError) as info:
        tcpenergy.run(BATTERY, **HUGE_BATTERY)
    assert info.value.path == "nodes.sender.battery.sample"
    assert "memory" in info.value.message and "force=True" in info.value.message


def test_a_forced_run_warns_and_fails_cleanly_where_memory_runs_out():
    # Forced, the run starts; the battery's series, reserved fallibly, is then refused as an error
    # rather than aborting the interpreter on a failed allocation.
    with pytest.warns(tcpenergy.api.BeyondMachineWarning, match="nodes.sender.battery.sample"):
        with pytest.raises(tcpenergy.ScenarioError) as info:
            tcpenergy.run(BATTERY, force=True, **HUGE_BATTERY)
    assert info.value.path == "nodes.sender.battery.sample"
    assert "samples" in info.value.message


def _step_integral(t, p, w):
    return sum(p[k] * (min(t[k + 1] if k + 1 < len(t) else w, w) - t[k]) for k in range(len(t)) if t[k] < w)


def test_run_with_trace_of_a_network_node_integrates_to_its_energy():
    # docs/models/energy.md "Traces": the step integral of power_w to the window is total_j.
    chain = Path(__file__).resolve().parents[1] / "scenarios" / "chain-3hop.toml"
    record = tcpenergy.run(chain, trace={"nodes": ["b"]})
    trace = record["trace"]
    assert set(trace["node"]) == {"b"} and set(trace["flow"]) == {""}
    joules = _step_integral(trace["t_s"], trace["power_w"], record["energy"]["window_s"])
    assert joules == pytest.approx(record["nodes"]["b"]["total_j"], rel=1e-9)


def test_run_with_trace_of_a_single_path_keeps_the_senders_columns(quickstart):
    record = tcpenergy.run(quickstart, trace=True)
    trace = record.pop("trace")
    joules = _step_integral(trace["t_s"], trace["power_w"], record["energy"]["window_s"])
    assert joules == pytest.approx(record["energy"]["sender"]["total_j"], rel=1e-9)
