"""Network records outside the engine: the `run` tables, flattening into columns, the runs and
flows frames, `export --per flow`, sweeps and summaries over a network scenario, `validate`.

The record's shape is the contract of DESIGN.md "Networks" and "The result record": a network
record adds `flows` (a list), `nodes`, `links` and `network`; flattened, flows are keyed by name
(docs/experiments.md "Network runs in the frames").
"""

from __future__ import annotations

import io
import json
import re

import pandas as pd
import pytest
from rich.console import Console

import tcpenergy
from conftest import QUICKSTART
from tcpenergy.experiments.frame import flows_frame
from tcpenergy.records import flatten
from tcpenergy.report.result import print_table
from tcpenergy.report.units import count, fixed, si

NETWORK = """\
name = "tiny-chain"
stop_after = "60s"
[nodes]
a = {}
b = {}
c = {}
[[links]]
between = ["a", "b"]
rate = "11Mbps"
delay = "1ms"
queue = 50
[[links]]
between = ["b", "c"]
rate = "11Mbps"
delay = "1ms"
forward = { delay = "5ms", impairments = [{ kind = "bernoulli", p = 0.02 }] }
[[flows]]
name = "bulk"
from = "a"
to = "c"
transport = "tcp"
tcp = { variant = "sack" }
traffic = { kind = "bulk", bytes = "200kB" }
[[flows]]
name = "voice"
from = "c"
to = "a"
transport = "udp"
traffic = { kind = "cbr", rate = "64kbps", packet = 200 }
start = "0.1s"
stop = "1s"
"""
FLOWS = ("bulk", "voice")
NODES = ("a", "b", "c")
DIRECTIONS = ("a->b", "b->a", "b->c", "c->b")


@pytest.fixture
def network(tmp_path):
    path = tmp_path / "tiny-chain.toml"
    path.write_text(NETWORK)
    return path


@pytest.fixture
def record(network):
    return tcpenergy.run(network)


def rendered(record, width=200) -> str:
    out = io.StringIO()
    print_table(record, Console(file=out, width=width, color_system=None))
    return out.getvalue()


def row_of(text: str, first: str) -> str:
    """The table line whose first cell is ``first``."""
    [line] = [ln for ln in text.splitlines() if re.match(rf"\s*{re.escape(first)}\s", ln)]
    return line


def sweep_file(tmp_path, network, axes: str, repetitions: int = 2):
    path = tmp_path / "net-sweep.toml"
    path.write_text(f'base = "{network.name}"\nrepetitions = {repetitions}\n[axes]\n{axes}\n')
    return path


# ---------------------------------------------------------------------------------------------
# the record the tables and frames are built from


def test_network_record_has_a_table_per_flow_node_and_link_direction(record):
    # DESIGN.md "Networks": flows by name, nodes by name, links "A->B" per direction.
    assert [f["name"] for f in record["flows"]] == list(FLOWS)
    assert set(record["nodes"]) == set(NODES)
    assert set(record["links"]) == set(DIRECTIONS)
    assert "path" not in record and "cpu" not in record and "flow" not in record
    assert record["network"]["flows"] == 2 and record["network"]["nodes"] == 3


# ---------------------------------------------------------------------------------------------
# tcpenergy run: tables


def test_run_table_has_a_row_per_flow_with_the_records_values(record):
    text = rendered(record)
    for flow in record["flows"]:
        row = row_of(text, flow["name"])
        assert f"{flow['from']} -> {flow['to']}" in row
        assert count(flow["bytes_delivered"]) in row
        assert si(flow["goodput_bps"], "bit/s") in row
        if flow["traffic"] == "bulk":  # one message: its "latency" is the completion time, not shown
            assert re.search(r"-\s+-\s*$", row), row
        else:
            assert fixed(flow["latency_ms"]["mean"]) in row
            assert fixed(flow["latency_ms"]["p95"]) in row
    assert "tcp sack" in row_of(text, "bulk") and " udp " in row_of(text, "voice")
    assert re.search(rf"\b{record['flows'][0]['retransmissions']}\b.*\b"
                     rf"{record['flows'][0]['timeouts']}\b", row_of(text, "bulk"))


def test_run_table_has_a_row_per_node_with_its_energy_and_forwarded_packets(record):
    text = rendered(record)
    for name in NODES:
        node = record["nodes"][name]
        row = row_of(text, name)
        for key in ("total_j", "idealized_j", "per_bit_total_uj", "radio_tx_s", "radio_rx_s"):
            assert fixed(node[key]) in row, key
        assert row.rstrip().endswith(count(node["forwarded_packets"]))
    # The middle node relays both flows; the end nodes relay nothing.
    assert record["nodes"]["b"]["forwarded_packets"] > 0
    assert record["nodes"]["a"]["forwarded_packets"] == 0


def test_run_table_shows_the_network_totals(record):
    text = rendered(record)
    network = record["network"]
    assert si(network["goodput_bps"], "bit/s") in row_of(text, "Goodput")
    assert count(network["wire_bytes"]) in row_of(text, "Wire bytes")
    assert fixed(network["total_j"], "J") in row_of(text, "Total energy")
    assert fixed(network["idealized_j"], "J") in row_of(text, "Idealized energy")
    assert fixed(network["jain_fairness"]) in row_of(text, "Jain's fairness")


def test_run_table_on_a_narrow_console_splits_the_flow_columns_but_keeps_every_value(record):
    text = rendered(record, width=80)
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "…" not in text  # nothing cut short
    assert "Flows: losses and latency" in text
    for flow in record["flows"]:
        assert si(flow["goodput_bps"], "bit/s") in text
        if flow["traffic"] != "bulk":  # a bulk flow shows no message latency
            assert fixed(flow["latency_ms"]["p95"]) in text


def test_run_command_prints_the_network_tables_and_marks_an_incomplete_run(cli, network):
    result = cli("run", network, "--set", 'stop_after="50ms"')
    assert result.exit_code == 0, result.stderr
    assert "INCOMPLETE: the run reached stop_after before every flow finished" in result.stdout
    for title in ("Flows", "Nodes", "Network"):
        assert re.search(rf"^{title}\b", result.stdout, re.M), title


def test_run_json_and_csv_of_a_network_run_are_the_record(cli, network, record):
    as_json = cli("run", network, "--format", "json")
    assert as_json.exit_code == 0
    assert json.loads(as_json.stdout) == record
    as_csv = cli("run", network, "--format", "csv")
    header, values = as_csv.stdout.splitlines()
    row = dict(zip(header.split(","), values.split(",")))
    assert float(row["flows.bulk.goodput_bps"]) == record["flows"][0]["goodput_bps"]
    assert float(row["nodes.b.total_j"]) == record["nodes"]["b"]["total_j"]


def test_single_path_run_table_is_the_flow_and_two_node_energy_table(cli, quickstart):
    result = cli("run", quickstart, "--set", 'traffic.bytes="100kB"')
    assert result.exit_code == 0
    assert re.search(r"^Flow\s*$", result.stdout, re.M)
    assert re.search(r"^Energy\s*$", result.stdout, re.M)
    assert re.search(r"Metric\s+Sender\s+Receiver", result.stdout)
    assert "Nodes" not in result.stdout and "Jain" not in result.stdout


# ---------------------------------------------------------------------------------------------
# flattening


def test_flattened_network_record_keys_flows_by_name_and_nodes_and_links_by_theirs(record):
    flat = flatten(record)
    assert flat["flows.bulk.goodput_bps"] == record["flows"][0]["goodput_bps"]
    assert flat["flows.voice.latency_ms.p95"] == record["flows"][1]["latency_ms"]["p95"]
    assert flat["flows.voice.transport"] == "udp"
    assert "flows.bulk.name" not in flat and "flows" not in flat  # the name is the key
    assert flat["nodes.b.forwarded_packets"] == record["nodes"]["b"]["forwarded_packets"]
    assert flat["nodes.a.breakdown_j.cpu"] == record["nodes"]["a"]["breakdown_j"]["cpu"]
    assert flat["links.b->c.dropped_channel"] == record["links"]["b->c"]["dropped_channel"]
    assert flat["network.jain_fairness"] == record["network"]["jain_fairness"]


def _leaves(tree, prefix=""):
    if isinstance(tree, dict) and tree:
        for key, value in tree.items():
            yield from _leaves(value, f"{prefix}{key}.")
    else:
        yield prefix[:-1], tree


def test_flattened_single_path_record_is_every_leaf_under_its_dotted_path():
    single = tcpenergy.run(QUICKSTART, **{"traffic.bytes": "100kB"})
    assert flatten(single) == dict(_leaves(single))
    network_keys = ("flows.", "nodes.", "links.", "network.")
    assert not any(k.startswith(network_keys) for k in flatten(single))


# ---------------------------------------------------------------------------------------------
# flows frame


def test_flows_frame_of_records_has_one_row_per_flow_with_the_runs_parameters(network):
    records = [tcpenergy.run(network, seed=s) for s in (1, 2)]
    frame = flows_frame(records)
    assert len(frame) == 4
    assert list(zip(frame["seed"], frame["flow.name"])) == [
        (1, "bulk"), (1, "voice"), (2, "bulk"), (2, "voice")]
    assert set(frame["parameters.seed"]) == {1, 2}
    row = frame[(frame["seed"] == 2) & (frame["flow.name"] == "voice")].iloc[0]
    assert row["flow.goodput_bps"] == records[1]["flows"][1]["goodput_bps"]
    assert row["flow.latency_ms.p99"] == records[1]["flows"][1]["latency_ms"]["p99"]
    assert (row["flow.from"], row["flow.to"], row["flow.transport"]) == ("c", "a", "udp")


def test_flows_frame_of_a_single_path_record_is_its_one_flow_main():
    single = tcpenergy.run(QUICKSTART, **{"traffic.bytes": "100kB"})
    [row] = flows_frame([single]).to_dict("records")
    assert (row["flow.name"], row["flow.from"], row["flow.to"]) == ("main", "sender", "receiver")
    assert row["flow.goodput_bps"] == single["flow"]["goodput_bps"]
    assert row["flow.variant"] == single["variant"]


def test_flows_frame_keeps_a_failed_run_as_one_row_per_declared_flow_without_results(network):
    normalized = tcpenergy.validate(network)
    stored = {"run_key": "k-1-x", "seed": 1, "status": "failed", "error": "boom",
              "sweep": "s", "cell": 0, "labels": json.dumps({"tcp.variant": "reno"}),
              "scenario": json.dumps(normalized), "result": None}
    frame = flows_frame([stored])
    assert list(frame["flow.name"]) == list(FLOWS)
    assert set(frame["status"]) == {"failed"} and set(frame["label.tcp.variant"]) == {"reno"}
    assert "flow.goodput_bps" not in frame.columns


# ---------------------------------------------------------------------------------------------
# sweeps over a network scenario, the stores they write, summaries and exports


@pytest.fixture
def swept(cli, tmp_path, network):
    """2 x 2 cells x 2 seeds over the tiny chain, via the CLI."""
    spec = sweep_file(tmp_path, network,
                      '"flows.0.traffic.bytes" = ["100kB", "200kB"]\n'
                      '"links.1.forward.impairments" = [[], [{kind = "bernoulli", p = 0.05}]]')
    result = cli("sweep", spec, "--jobs", "1")
    assert result.exit_code == 0, result.stderr
    assert "8 runs: 8 ran (0 failed)" in result.stdout
    return spec.with_suffix(".duckdb")


def test_network_sweep_stores_one_wide_row_per_run_matching_a_direct_run(swept, network):
    with tcpenergy.open_store(swept) as store:
        runs = store.runs()
    assert len(runs) == 8 and set(runs["status"]) == {"ok"}
    for column in ("flows.bulk.goodput_bps", "flows.voice.latency_ms.p95", "nodes.b.total_j",
                   "nodes.b.forwarded_packets", "links.b->c.dropped_channel",
                   "network.jain_fairness", "flows.0.traffic.bytes",
                   "label.flows.0.traffic.bytes"):
        assert column in runs.columns, column
    row = runs[(runs["label.flows.0.traffic.bytes"] == "100kB") & (runs["seed"] == 2)
               & (runs["links.1.forward.impairments.0.p"] == 0.05)].iloc[0]
    direct = tcpenergy.run(network, seed=2, **{
        "flows.0.traffic.bytes": "100kB",
        "links.1.forward.impairments": [{"kind": "bernoulli", "p": 0.05}]})
    assert row["flows.bulk.goodput_bps"] == direct["flows"][0]["goodput_bps"]
    assert row["links.b->c.dropped_channel"] == direct["links"]["b->c"]["dropped_channel"]
    assert row["flows.0.traffic.bytes"] == 100_000


def test_export_per_flow_writes_one_row_per_run_and_flow(cli, swept, tmp_path):
    result = cli("export", swept, "--format", "csv", "--per", "flow")
    assert result.exit_code == 0, result.stderr
    path = swept.with_name(f"{swept.stem}-flows.csv")
    assert f"16 flow rows of 8 runs -> {path}" in result.stdout
    flows = pd.read_csv(path)
    with tcpenergy.open_store(swept) as store:
        runs = store.runs()
    assert len(flows) == len(runs) * len(FLOWS)
    assert sorted(flows.groupby("run_key")["flow.name"].apply(tuple).unique()) == [FLOWS]
    assert {"label.flows.0.traffic.bytes", "seed", "status", "complete"} <= set(flows.columns)
    wide = runs.set_index("run_key")
    for row in flows.to_dict("records"):
        name = row["flow.name"]
        assert row["flow.goodput_bps"] == pytest.approx(
            wide.loc[row["run_key"], f"flows.{name}.goodput_bps"], rel=1e-15)
        assert row["seed"] == wide.loc[row["run_key"], "seed"]
    parquet = cli("export", swept, "--format", "parquet", "--per", "flow",
                  "--out", tmp_path / "flows.parquet")
    assert parquet.exit_code == 0, parquet.stderr
    assert len(pd.read_parquet(tmp_path / "flows.parquet")) == 16


def test_default_export_of_a_network_store_is_still_one_row_per_run(cli, swept):
    result = cli("export", swept, "--format", "csv")
    assert result.exit_code == 0, result.stderr
    assert f"8 runs -> {swept.with_suffix('.csv')}" in result.stdout
    exported = pd.read_csv(swept.with_suffix(".csv"))
    assert len(exported) == 8 and "flows.bulk.goodput_bps" in exported.columns


def test_summarize_a_network_store_gives_the_network_metrics_per_cell(cli, swept):
    result = cli("summarize", swept, "--format", "json")
    assert result.exit_code == 0, result.stderr
    rows = json.loads(result.stdout)
    assert {r["metric"] for r in rows} == {"network.goodput_bps", "network.total_j",
                                           "network.idealized_j", "network.per_bit_total_uj",
                                           "network.per_bit_idealized_uj", "network.jain_fairness"}
    assert len(rows) == 4 * 6 and all(r["n"] == 2 for r in rows)
    chosen = cli("summarize", swept, "--metric", "flows.bulk.goodput_bps", "--metric",
                 "nodes.b.forwarded_packets")
    assert chosen.exit_code == 0, chosen.stderr
    assert "flows.bulk.goodput_bps" in chosen.stdout


def test_an_incomplete_network_run_is_left_out_naming_the_flows_that_had_not_finished(
        cli, tmp_path, network):
    spec = sweep_file(tmp_path, network, '"stop_after" = ["50ms"]', repetitions=1)
    assert cli("sweep", spec, "--jobs", "1").exit_code == 0
    result = cli("summarize", spec.with_suffix(".duckdb"))
    assert result.exit_code == 0, result.stderr
    assert "0 of 1 runs complete" in result.stderr
    assert re.search(r"with flows not finished: bulk \([\d,]+ bytes delivered\), voice",
                     result.stderr)


def test_export_per_flow_of_a_single_path_store_names_its_flow_main(cli, tmp_path):
    spec = tmp_path / "single.toml"
    spec.write_text(f'base = "{QUICKSTART}"\nrepetitions = 2\n[axes]\n'
                    '"tcp.variant" = ["reno", "sack"]\n[set]\n"traffic.bytes" = "100kB"\n')
    assert cli("sweep", spec, "--jobs", "1").exit_code == 0
    store = spec.with_suffix(".duckdb")
    assert cli("export", store, "--format", "csv", "--per", "flow").exit_code == 0
    flows = pd.read_csv(store.with_name("single-flows.csv"))
    assert len(flows) == 4 and set(flows["flow.name"]) == {"main"}
    runs = cli("export", store, "--format", "csv")
    assert "4 runs ->" in runs.stdout
    exported = pd.read_csv(store.with_suffix(".csv"))
    assert "flow.goodput_bps" in exported.columns
    assert not any(c.startswith(("flows.", "nodes.", "network.")) for c in exported.columns)


# ---------------------------------------------------------------------------------------------
# tcpenergy validate


def test_validate_summarizes_nodes_each_link_direction_and_flows(cli, network):
    result = cli("validate", network)
    assert result.exit_code == 0, result.stderr
    text = result.stdout
    assert re.search(r"nodes\s+a, b, c: singh2002-toshiba-wavelan", text)
    assert re.search(r"link 1: b <-> c\s+mtu 1500", text)
    assert re.search(r"b -> c\s+11Mbps, delay 5ms, queue 100, bernoulli\(p=0.02\)", text)
    assert re.search(r"c -> b\s+11Mbps, delay 1ms, queue 100, no impairments", text)
    assert re.search(r"a -> b\s+11Mbps, delay 1ms, queue 50, no impairments", text)
    assert re.search(r"flow bulk\s+a -> c, tcp sack, bulk\(bytes=200000\), from 0s", text)
    assert re.search(r"flow voice\s+c -> a, udp, cbr\(rate=64kbps, packet=200\), from 100ms to 1s",
                     text)
