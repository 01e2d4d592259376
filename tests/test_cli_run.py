"""`tcpenergy run`: output formats, overrides, seeds and trace files."""

from __future__ import annotations

import csv
import io
from pathlib import Path
import json

import pandas as pd
import pytest

TRACE_COLUMNS = ["t_s", "cwnd_bytes", "ssthresh_bytes", "in_flight_bytes", "rto_s",
                 "ca_state", "ecn_reductions", "radio_state", "power_w"]


def run_json(cli, *args):
    result = cli("run", *args, "--format", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_run_prints_table_with_flow_and_both_nodes_energy(cli, quickstart):
    result = cli("run", quickstart)
    assert result.exit_code == 0, result.output
    out = result.stdout
    for label in ("Goodput", "Completion time", "Segments sent", "Retransmissions", "Timeouts",
                  "Total energy", "Idealized energy", "Energy per bit", "Breakdown",
                  "Sender", "Receiver", "cpu", "quickstart", "sack"):
        assert label in out, f"{label!r} missing from the table:\n{out}"


def test_run_json_prints_the_result_record(cli, quickstart):
    record = run_json(cli, quickstart)
    assert record["scenario"] == "quickstart"
    assert record["variant"] == "sack"
    assert record["complete"] is True
    assert record["flow"]["bytes_delivered"] == 5_000_000
    assert record["flow"]["goodput_bps"] > 0
    for node in ("sender", "receiver"):
        energy = record["energy"][node]
        assert energy["total_j"] > 0
        assert energy["idealized_j"] <= energy["total_j"]
        assert set(energy["breakdown_j"]) >= {"base", "radio_tx", "radio_rx", "radio_idle", "cpu"}
    assert "trace" not in record


def test_run_csv_prints_header_and_one_flat_row(cli, quickstart):
    result = cli("run", quickstart, "--format", "csv")
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert len(rows) == 1
    row = rows[0]
    assert row["variant"] == "sack"
    assert float(row["flow.goodput_bps"]) > 0
    assert float(row["energy.sender.total_j"]) > 0
    assert "energy.receiver.breakdown_j.cpu" in row


def test_set_variant_override_shows_in_record(cli, quickstart):
    record = run_json(cli, quickstart, "--set", "tcp.variant=newreno")
    assert record["variant"] == "newreno"


def test_set_override_accepts_toml_values_and_changes_result(cli, quickstart):
    base = run_json(cli, quickstart)
    lossy = run_json(cli, quickstart, "--set",
                     'path.forward.impairments=[{kind="bernoulli", p=0.05}]')
    assert lossy["flow"]["retransmissions"] > base["flow"]["retransmissions"]
    assert lossy["flow"]["completion_s"] > base["flow"]["completion_s"]


def test_set_override_of_list_element_changes_result(cli, quickstart):
    base = run_json(cli, quickstart)
    lossless = run_json(cli, quickstart, "--set", "path.forward.impairments.0.p=0.0")
    assert lossless["flow"]["retransmissions"] == 0
    assert base["flow"]["retransmissions"] > 0


def test_seed_option_is_recorded_and_reproducible(cli, quickstart):
    first = run_json(cli, quickstart, "--seed", 7)
    second = run_json(cli, quickstart, "--seed", 7)
    assert first["seed"] == 7
    assert first == second


@pytest.mark.parametrize("suffix", ["csv", "parquet"])
def test_trace_file_has_expected_columns_and_monotone_time(cli, quickstart, tmp_path, suffix):
    target = tmp_path / f"trace.{suffix}"
    result = cli("run", quickstart, "--trace", target, "--format", "json")
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(target) if suffix == "csv" else pd.read_parquet(target)
    assert list(frame.columns) == TRACE_COLUMNS
    assert len(frame) > 10
    assert frame["t_s"].is_monotonic_increasing
    assert (frame["cwnd_bytes"] > 0).all()
    # Only the trace file itself is left: the temporary file was renamed into place.
    assert [p.name for p in tmp_path.iterdir()] == [target.name]


def test_trace_with_unknown_extension_is_rejected_before_running(cli, quickstart, tmp_path):
    target = tmp_path / "trace.txt"
    result = cli("run", quickstart, "--trace", target)
    assert result.exit_code == 2
    assert ".csv or .parquet" in result.stderr
    assert result.stdout == ""
    assert not target.exists()


def test_failed_run_leaves_existing_trace_file_untouched(cli, quickstart, tmp_path):
    target = tmp_path / "trace.csv"
    target.write_text("previous contents\n")
    result = cli("run", quickstart, "--trace", target, "--set", "tcp.variant=bogus")
    assert result.exit_code == 2
    assert target.read_text() == "previous contents\n"
    assert [p.name for p in tmp_path.iterdir()] == ["trace.csv"]


def test_run_cut_short_by_stop_after_is_marked_incomplete(cli, quickstart):
    record = run_json(cli, quickstart, "--set", "stop_after=2s")
    assert record["complete"] is False
    table = cli("run", quickstart, "--set", "stop_after=2s")
    assert table.exit_code == 0
    assert "INCOMPLETE" in table.stdout


def test_wifi_psm_scenario_shows_the_power_save_table_and_ping_round_trips(cli, quickstart):
    """docs/models/wifi.md "Power save": the README's wifi-psm example runs; its ping (a UDP echo)
    round trips wait for the next beacon under psm and not with the radio always on."""
    scenario = str(quickstart.parent / "wifi-psm.toml")
    result = cli("run", scenario)
    assert result.exit_code == 0, result.output
    for label in ("Access points and power save", "Beacons", "PS-Polls", "Radio sleep (s)", "laptop"):
        assert label in result.stdout, f"{label!r} missing:\n{result.stdout}"
    psm = run_json(cli, scenario)
    cam = run_json(cli, scenario, "--set", 'energy.radio_policy="always_on"')
    ping = {r: next(f for f in rec["flows"] if f["name"] == "ping") for r, rec in (("psm", psm), ("cam", cam))}
    assert ping["psm"]["echo"] is True and ping["psm"]["messages_delivered"] == 60
    # 20 ms of wire; under psm the answer waits at the AP for the next 102.4 ms beacon.
    assert 20 < ping["cam"]["latency_ms"]["max"] < 25
    assert 20 < ping["psm"]["latency_ms"]["min"] and ping["psm"]["latency_ms"]["max"] < 20 + 102.4 + 5
    assert ping["psm"]["latency_ms"]["mean"] > ping["cam"]["latency_ms"]["mean"] + 30
    laptop = psm["nodes"]["laptop"]
    assert laptop["radio_sleep_s"] > 0.9 * psm["energy"]["window_s"]
    assert cam["nodes"]["laptop"]["radio_sleep_s"] == 0


def test_battery_scenario_runs_until_empty_and_prints_the_batteries_table(cli, quickstart):
    """docs/models/battery.md: seed 003's benchmark laptop, its ideal battery calibrated to the
    223-min idle lifetime (3.74 W x 223 min); with no traffic it lasts exactly that."""
    scenario = str(quickstart.parent / "agrawal2003-battery.toml")
    result = cli("run", scenario)
    assert result.exit_code == 0, result.output
    for label in ("Batteries", "Lifetime", "ideal", "sender"):
        assert label in result.stdout, f"{label!r} missing:\n{result.stdout}"
    idle = run_json(cli, scenario, "--set", 'flows.0.start="10h"')
    battery = idle["nodes"]["sender"]["battery"]
    assert idle["complete"] is True and idle["stop"] == "battery_empty:sender"
    assert abs(battery["lifetime_s"] / 60 - 223.0) < 0.01
    assert battery["series_remaining_mah"][0] == battery["capacity_mah"]
    assert "battery" not in idle["nodes"]["receiver"]
    short = run_json(cli, scenario, "--set", 'stop_after="1h"')
    assert short["complete"] is False and short["nodes"]["sender"]["battery"]["lifetime_s"] is None


def test_network_trace_file_stacks_the_named_flows_and_nodes(cli, tmp_path):
    # docs/units-and-scenarios.md "Network records": one table, a flow and a node column.
    chain = Path(__file__).resolve().parents[1] / "scenarios" / "chain-3hop.toml"
    target = tmp_path / "trace.csv"
    result = cli("run", chain, "--trace", target, "--trace-flow", "bulk", "--trace-node", "b",
                 "--format", "json")
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(target, keep_default_na=False)
    assert list(frame.columns[:2]) == ["flow", "node"]
    assert set(zip(frame["flow"], frame["node"])) == {("bulk", "a"), ("", "b")}
    record = json.loads(result.stdout)
    assert all("trace" not in f for f in record["flows"])


def test_unknown_trace_node_exits_2_naming_the_key(cli, tmp_path):
    chain = Path(__file__).resolve().parents[1] / "scenarios" / "chain-3hop.toml"
    result = cli("run", chain, "--trace", tmp_path / "t.csv", "--trace-node", "nowhere")
    assert result.exit_code == 2
    assert "trace.nodes" in result.stderr


def test_trace_selection_without_a_trace_file_exits_2_naming_trace(cli, quickstart):
    result = cli("run", quickstart, "--trace-node", "sender")
    assert result.exit_code == 2
    assert "--trace FILE" in result.stderr
