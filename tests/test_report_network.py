"""Reports of stores of multi-flow network runs: the whole network's metrics (energy of all nodes
per delivered bit, goodput of all flows, Jain's fairness index, energy of all nodes) in the
figures, rank orders and summary, and each node's energy per cell (docs/experiments.md
"Reports"; the columns are those of docs/units-and-scenarios.md "Network records")."""

from __future__ import annotations

import pandas as pd
import pytest

import tcpenergy
from tcpenergy.experiments import stats
from tcpenergy.report import metrics, write_report
from tcpenergy.report.figures import plot_metric
from tcpenergy.report.layout import Layout

VARIANT = "label.tcp.variant"
LOSS = "label.links.3.forward.impairments.0.p"
FLOWS = ("f1", "f2", "f3")
NODES = ("d1", "d2", "d3", "r1", "r2", "s1", "s2", "s3")
NETWORK_STEMS = ("network_energy_per_bit", "network_idealized_energy_per_bit", "network_goodput",
                 "jain_fairness", "network_energy")
SINGLE_FLOW_STEMS = ("energy_per_bit", "receiver_energy_per_bit", "idealized_energy_per_bit",
                     "receiver_idealized_energy_per_bit", "goodput")


def dumbbell_toml(flows=FLOWS) -> str:
    """A 3-flow dumbbell: sources s1..s3 -> r1 -> 2 Mbit/s bottleneck -> r2 -> sinks d1..d3,
    100 kB bulk transfers (a run takes milliseconds); the bottleneck's loss is swept."""
    lines = ['name = "tiny-dumbbell"', 'stop_after = "60s"', "[tcp]", 'variant = "newreno"',
             "[energy]", 'default_profile = "singh2002-toshiba-wavelan"', "[nodes]"]
    lines += [f"{node} = {{}}" for node in NODES]
    links = [(f"s{i}", "r1", "10Mbps", "1ms") for i in range(1, len(flows) + 1)]
    links.append(("r1", "r2", "2Mbps", "10ms"))
    links += [("r2", f"d{i}", "10Mbps", "1ms") for i in range(1, len(flows) + 1)]
    for a, b, rate, delay in links:
        lines += ["[[links]]", f'between = ["{a}", "{b}"]', f'rate = "{rate}"', f'delay = "{delay}"']
        if (a, b) == ("r1", "r2"):   # links.3: the bottleneck
            lines += ["queue = 20", 'forward = { impairments = [{ kind = "bernoulli", p = 0.0 }] }']
    for i, name in enumerate(flows, start=1):
        lines += ["[[flows]]", f'name = "{name}"', f'from = "s{i}"', f'to = "d{i}"',
                  'traffic = { kind = "bulk", bytes = "100kB" }']
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """2 variants x 2 bottleneck loss rates x 2 seeds of the 3-flow dumbbell."""
    root = tmp_path_factory.mktemp("network-store")
    base = root / "dumbbell.toml"
    base.write_text(dumbbell_toml())
    spec = {"base": str(base), "name": "dumbbell", "repetitions": 2,
            "axes": {"tcp.variant": ["newreno", "sack"],
                     "links.3.forward.impairments.0.p": [0.0, 0.03]}}
    outcome = tcpenergy.sweep(spec, store=root / "dumbbell.duckdb", jobs=1, progress=False)
    assert outcome.store.is_file()
    return outcome.store


@pytest.fixture(scope="module")
def runs(store):
    with tcpenergy.open_store(store) as opened:
        frame = opened.runs()
    assert len(frame) == 8 and set(frame["status"]) == {"ok"} and frame["complete"].all()
    assert set(frame["network.flows"]) == {len(FLOWS)}
    return frame


@pytest.fixture(scope="module")
def report(runs, tmp_path_factory):
    return write_report(runs, tmp_path_factory.mktemp("report") / "out", title="Dumbbell")


def test_a_multi_flow_store_gets_a_figure_per_whole_network_metric_and_none_per_single_flow(
        report):
    # With several flows there is no single sender or receiver: flow.* and energy.sender.* are
    # absent, the network.* totals stand in for them.
    stems = {p.stem for p in report.figures}
    assert stems == set(NETWORK_STEMS)
    for stem in NETWORK_STEMS:
        for ext in ("png", "svg"):
            path = report.out_dir / "figures" / f"{stem}.{ext}"
            assert path.stat().st_size > 1000, path
    html = report.html.read_text(encoding="utf-8")
    for stem in NETWORK_STEMS:
        assert f"figures/{stem}.png" in html
    assert "One figure per metric of the whole network" in html


def test_rank_order_names_the_network_metrics_with_goodput_and_jain_fairness_higher_is_better(
        report):
    # Jain, Chiu & Hawe (1984): 1 when every flow gets the same goodput, so higher is better.
    ranking = pd.read_csv(report.out_dir / "ranking.csv")
    assert list(ranking["metric"]) == [m.key for m in metrics.NETWORK_RANKED]
    better = dict(zip(ranking["metric"], ranking["better"]))
    assert better == {"E_network": "lower", "E_I_network": "lower", "goodput_network": "higher",
                      "jain_fairness": "higher"}
    assert all(set(order.split()) == {"newreno", "sack"} for order in ranking["order"])
    per_loss = pd.read_csv(report.out_dir / "ranking_per_x.csv")
    assert len(per_loss) == 2 * len(metrics.NETWORK_RANKED)
    markdown = report.markdown.read_text(encoding="utf-8")
    for header in ("E_net (lower is better)", "E_I,net (lower is better)",
                   "τ_net (higher is better)", "J (higher is better)"):
        assert header in markdown


def test_rank_order_follows_the_variants_mean_jain_index_over_the_loss_rates(runs, report):
    # The order compares each variant's mean over the x axis (here the loss rates).
    means = runs.groupby(VARIANT)["network.jain_fairness"].mean()
    ranking = pd.read_csv(report.out_dir / "ranking.csv").set_index("metric")
    assert ranking.loc["jain_fairness", "order"].split()[0] == means.idxmax()


def test_summary_csv_holds_each_cells_mean_of_the_per_run_network_columns(runs, report):
    summary = pd.read_csv(report.out_dir / "summary.csv")
    assert list(dict.fromkeys(summary["metric"])) == [m.key for m in metrics.NETWORK_SUMMARY]
    assert not summary["column"].str.startswith(("flow.", "energy.")).any()
    for metric in metrics.NETWORK_SUMMARY:
        expected = runs.groupby([VARIANT, LOSS])[metric.column].agg(["mean", "count"])
        rows = summary[summary["metric"] == metric.key]
        assert len(rows) == len(expected) == 4, metric.key
        for row in rows.to_dict("records"):
            mean, count = expected.loc[(row[VARIANT], row[LOSS])]
            assert row["mean"] == pytest.approx(mean, rel=1e-12), metric.key
            assert row["n"] == count == 2
    markdown = report.markdown.read_text(encoding="utf-8")
    assert "| E_net (µJ/bit) | E_I,net (µJ/bit) | τ_net (Mbit/s) | ΣE (J) | ΣE_I (J) | " \
           "J (1 = equal shares) |" in markdown


def test_the_node_table_gives_each_nodes_mean_energy_per_cell(runs, report):
    nodes = pd.read_csv(report.out_dir / "nodes.csv")
    assert set(nodes["node"]) == set(NODES)
    assert set(nodes["field"]) == {field for field, _, _ in metrics.NODE_FIELDS}
    assert len(nodes) == 4 * len(NODES) * len(metrics.NODE_FIELDS)
    for row in nodes.to_dict("records"):
        cell = runs[(runs[VARIANT] == row[VARIANT]) & (runs[LOSS] == row[LOSS])]
        assert row["column"] == f"nodes.{row['node']}.{row['field']}"
        assert row["mean"] == pytest.approx(cell[row["column"]].mean(), rel=1e-12)
    # The relays spend energy too: the routers' share is in the table, ends' beside it.
    markdown = report.markdown.read_text(encoding="utf-8")
    assert "## Energy per node" in markdown
    assert "| newreno | 0 % | r1 |" in markdown
    assert report.out_dir / "nodes.csv" in report.tables


def test_the_jain_index_figure_keeps_a_linear_axis_when_its_values_span_a_decade():
    # With 30 flows Jain's index ranges from 1/30 to 1: two cells a decade apart would make any
    # other metric's axis logarithmic.
    runs = pd.DataFrame({VARIANT: "sack", LOSS: [0.0, 0.0, 0.05, 0.05], "seed": [1, 2, 1, 2],
                         "status": "ok", "complete": True,
                         "network.jain_fairness": [0.98, 0.99, 0.04, 0.05]})
    layout = Layout(x=LOSS, line=VARIANT, panels=())
    assert plot_metric(runs, layout, metrics.FAIRNESS).axes[0].get_yscale() == "linear"
    as_energy = metrics.FAIRNESS._replace(linear=False)
    assert plot_metric(runs, layout, as_energy).axes[0].get_yscale() == "log"


def test_single_flow_runs_keep_the_sender_receiver_view_and_a_one_flow_network_adds_all_nodes():
    single_path = pd.DataFrame({m.column: [1.0] for m in metrics.SUMMARY})
    assert metrics.view_of(single_path) == metrics.SINGLE_FLOW
    # A network of one flow has the flow.* and energy.sender.* aliases: the papers' metrics stay,
    # and its relays' energy is shown beside them (not ranked: seed 000's Table 4 ranks three).
    one_flow = single_path.assign(**{m.column: 1.0 for m in metrics.NETWORK_SUMMARY},
                                  **{"network.flows": 1})
    view = metrics.view_of(one_flow)
    assert view.ranked == metrics.RANKED
    assert view.figures == (*metrics.FIGURES, metrics.E_NETWORK, metrics.E_I_NETWORK)
    # A store mixing one- and three-flow runs is a network store: flow.* covers part of it only.
    mixed = pd.concat([one_flow, one_flow.assign(**{"network.flows": 3})], ignore_index=True)
    assert metrics.view_of(mixed).ranked == metrics.NETWORK_RANKED


def test_summarize_defaults_and_the_report_name_the_same_network_totals(runs):
    # One definition: `tcpenergy summarize` shows the report's network totals by default.
    network_defaults = [m for m in stats.DEFAULT_METRICS if m.startswith("network.")]
    assert network_defaults == [m.column for m in metrics.NETWORK_TOTALS]
    assert set(metrics.NETWORK_TOTALS) <= set(metrics.NETWORK_SUMMARY)
    summary = stats.summarize(runs)
    assert list(dict.fromkeys(summary["metric"])) == network_defaults


def test_an_interval_cut_at_a_bound_is_shown_by_its_ends_not_a_half_width():
    from tcpenergy.report.summary import format_mean_ci

    # Jain's index of two seeds: the t interval cut at 1 is not centred on the mean.
    assert format_mean_ci(0.92, 0.031, 1.0) == "0.92 [0.03, 1.00]"
    assert format_mean_ci(12.918, 12.765, 13.071) == "12.92 ± 0.15"
