"""The fidelity table's arithmetic on canned runs (benchmarks/fidelity/table.py; no ns-3 needed).

Each test names the rule of benchmarks/fidelity/README.md it checks ("Tolerances", "Cell
classes", "Outputs").
"""

from __future__ import annotations

import csv
import io
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from fidelity import table  # noqa: E402


def run(goodput=1e6, retx=10, timeouts=1, complete=True, fast=5):
    return {"complete": complete, "goodput_bps": goodput if complete else None,
            "retransmissions": retx, "timeouts": timeouts, "fast_recoveries": fast}


def test_ratios_are_tcpenergy_over_ns3_of_the_means_over_seeds():
    ns3 = [run(goodput=1.0e6, retx=10, timeouts=2), run(goodput=1.2e6, retx=30, timeouts=4)]
    te = [run(goodput=1.21e6, retx=20, timeouts=3), run(goodput=1.21e6, retx=20, timeouts=3)]
    row = table.build_row("cubic", 0.01, 20, 1500, ns3, te)
    assert row["ns3_goodput_bps"] == pytest.approx(1.1e6)
    assert row["goodput_ratio"] == pytest.approx(1.1)
    assert row["retransmissions_ratio"] == pytest.approx(1.0)
    assert row["timeouts_ratio"] == pytest.approx(1.0)
    assert row["goodput_ok"] and row["timeouts_ok"]


def test_incomplete_runs_are_left_out_of_the_means_and_counted():
    ns3 = [run(goodput=1e6, retx=10), run(complete=False, retx=1000)]
    te = [run(goodput=1e6, retx=10), run(goodput=1e6, retx=10)]
    row = table.build_row("cubic", 0.01, 20, 1500, ns3, te)
    assert row["ns3_complete"] == 1 and row["te_complete"] == 2 and row["runs"] == 2
    assert row["ns3_retransmissions"] == 10


def test_goodput_agrees_within_15_percent_and_not_beyond():
    ns3 = [run(goodput=1e6)]
    assert table.build_row("cubic", 0.01, 20, 1500, ns3, [run(goodput=1.15e6)])["goodput_ok"]
    assert table.build_row("cubic", 0.01, 20, 1500, ns3, [run(goodput=0.85e6)])["goodput_ok"]
    assert not table.build_row("cubic", 0.01, 20, 1500, ns3, [run(goodput=1.16e6)])["goodput_ok"]
    assert not table.build_row("cubic", 0.01, 20, 1500, ns3, [run(goodput=0.84e6)])["goodput_ok"]


def test_timeouts_agree_within_20_percent_when_counts_are_large():
    ns3 = [run(timeouts=10)]
    assert table.build_row("cubic", 0.05, 20, 1500, ns3, [run(timeouts=12)])["timeouts_ok"]
    assert not table.build_row("cubic", 0.05, 20, 1500, ns3, [run(timeouts=13)])["timeouts_ok"]


def test_timeouts_within_one_per_run_agree_whatever_their_ratio():
    # 0.5 vs 1.5 timeouts per run: ratio 3, difference 1.
    ns3 = [run(timeouts=0), run(timeouts=1)]
    te = [run(timeouts=1), run(timeouts=2)]
    row = table.build_row("cubic", 0.01, 20, 1500, ns3, te)
    assert row["timeouts_ratio"] == pytest.approx(3.0)
    assert row["timeouts_ok"]
    # No ns-3 timeouts at all: the ratio is undefined, the absolute tolerance decides.
    row = table.build_row("cubic", 0.01, 20, 1500, [run(timeouts=0)], [run(timeouts=1)])
    assert row["timeouts_ratio"] is None and row["timeouts_ok"]
    row = table.build_row("cubic", 0.01, 20, 1500, [run(timeouts=0)], [run(timeouts=2)])
    assert not row["timeouts_ok"]


def test_window_limited_when_the_window_after_a_halving_is_below_the_bdp():
    # 1 % loss: peak window sqrt(8 / (3 * 2 * 0.01)) = 11.5 segments, 5.8 after a halving.
    # MTU 1500 at 5 ms one way: BDP = 2 Mbit/s x 16.2 ms / 1502 B = 2.7 segments -> not limited;
    # at 100 ms one way: 34 segments -> limited.
    assert not table.window_limited(0.01, 5, 1500)
    assert table.window_limited(0.01, 100, 1500)
    # Low loss: the window is capped by the 65,535-byte receive window (44.9 segments of 1460 B;
    # 22.4 after a halving) while the BDP at 65 ms is 22.7 segments.
    assert table.window_limited(0.001, 65, 1500)
    assert not table.window_limited(0.001, 20, 1500)
    assert not table.window_limited(0.0, 100, 1500)


def test_classes_name_every_documented_ns3_deviation_that_applies():
    assert table.classify("linuxreno", 0.01, 5, 1500, 0.0) == "ns3-linuxreno-exit-inflation"
    assert table.classify("linuxreno-sack", 0.05, 5, 1500, 8.0) == (
        "ns3-linuxreno-exit-inflation+ns3-rto-recompute")
    assert table.classify("newreno-sack", 0.01, 100, 1500, 0.4) == "ns3-newreno-pipe-ssthresh"
    assert table.classify("newreno-sack", 0.01, 5, 1500, 0.4) == "rfc"  # not window-limited
    # Without SACK ns-3's pipe is FlightSize - SMSS there, within half a segment of the RFC.
    assert table.classify("newreno", 0.01, 100, 1500, 0.4) == "rfc"
    # CUBIC's ssthresh comes from cwnd in ns-3, so the pipe deviation does not apply to it.
    assert table.classify("cubic", 0.01, 100, 1500, 0.4) == "rfc"
    assert table.classify("cubic", 0.10, 5, 1500, 2.0) == "rfc"
    assert table.classify("cubic", 0.10, 5, 1500, 2.2) == "ns3-rto-recompute"


def _rows():
    ok = [run(goodput=1e6, timeouts=0)]
    rows = [table.build_row("cubic", 0.005, 5, 1500, ok, ok) for _ in range(9)]
    rows.append(table.build_row("cubic", 0.005, 5, 1500, ok, [run(goodput=2e6, timeouts=0)]))
    rows.append(table.build_row("linuxreno", 0.01, 5, 1500, [run(goodput=1e6, timeouts=0)],
                                [run(goodput=0.8e6, timeouts=0)]))
    rows.append(table.build_row("linuxreno", 0.01, 5, 1500, [run(goodput=1e6, timeouts=0)],
                                [run(goodput=0.6e6, timeouts=0)]))
    return rows


def test_summary_counts_rfc_cells_against_the_90_percent_goal():
    s = table.summarize(_rows())
    assert s["cells"] == 12 and s["rfc_cells"] == 10
    assert s["rfc_goodput_ok"] == 9 and s["rfc_timeouts_ok"] == 10 and s["rfc_both_ok"] == 9
    assert s["rfc_both_share"] == pytest.approx(0.9) and s["goal_met"]
    rows = _rows()
    rows[0] = table.build_row("cubic", 0.005, 5, 1500, [run(goodput=1e6)], [run(goodput=3e6)])
    assert not table.summarize(rows)["goal_met"]


def test_summary_gives_each_deviation_its_cells_and_median_gap():
    s = table.summarize(_rows())
    c = s["classes"]["ns3-linuxreno-exit-inflation"]
    assert c["cells"] == 2 and c["both_ok"] == 0
    assert c["median_goodput_ratio"] == pytest.approx(0.7)
    line = table.summary_line(s)
    assert line.startswith("rfc cells: 9/10 (90 %) within 15% on goodput")
    assert "goal >= 90%: met" in line
    assert "ns3-linuxreno-exit-inflation: 2 cells, median ratio goodput 0.70" in line


def test_outputs_have_one_row_per_cell_with_the_class_column():
    rows = _rows()
    parsed = list(csv.DictReader(io.StringIO(table.to_csv(rows))))
    assert len(parsed) == len(rows)
    assert list(parsed[0]) == table.CSV_COLUMNS
    assert parsed[-1]["class"] == "ns3-linuxreno-exit-inflation"
    assert parsed[0]["timeouts_ratio"] == ""  # undefined ratio: empty, not 0
    md = table.markdown(rows, table.summarize(rows))
    assert md.count("\n| cubic |") == 10 and md.count("\n| linuxreno |") == 2
    assert "no: goodput off" in md
