"""The kernel grid's verdicts on canned runs (benchmarks/kernel/run.py; no kernel runs needed), and
the agreement between what kernel mode runs and what the simulator's Linux stack runs.

The bounds are those the Linux stack is judged by (docs/models/tcp.md#the-linux-stack): goodput
within 10 % of the kernel's, timeouts within 20 % or one per run.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from tcpenergy import api
from tcpenergy.emulate.settings import VARIANTS
from tcpenergy.exceptions import ScenarioError

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
_spec = importlib.util.spec_from_file_location("kernel_grid", ROOT / "benchmarks" / "kernel" / "run.py")
grid = importlib.util.module_from_spec(_spec)
sys.modules["kernel_grid"] = grid
_spec.loader.exec_module(grid)


def run(goodput=1e6, timeouts=2.0, retx=10):
    return {"complete": True, "goodput_bps": goodput, "retransmissions": retx, "timeouts": timeouts}


CELL = grid.Cell("reno", True, 0.05, 20, 2)


def test_a_cell_agrees_within_ten_percent_of_goodput_and_a_fifth_or_one_timeout():
    kernel = [run(1.00e6, 10), run(1.00e6, 10)]
    assert grid.row_of(CELL, kernel, [run(0.95e6, 11.5), run(0.95e6, 11.5)])["agrees"]
    # 11 % off in goodput: the goodput bound misses.
    row = grid.row_of(CELL, kernel, [run(1.124e6, 10), run(1.124e6, 10)])
    assert (row["agrees"], row["goodput_ok"], row["timeouts_ok"]) == (False, False, True)
    # Small counts: one timeout per run is allowed even above 20 %.
    assert grid.row_of(CELL, [run(1e6, 1.0)] * 2, [run(1e6, 2.0)] * 2)["timeouts_ok"]
    assert not grid.row_of(CELL, [run(1e6, 1.0)] * 2, [run(1e6, 2.5)] * 2)["timeouts_ok"]


def test_a_miss_within_two_standard_errors_of_the_seeds_spread_is_called_noise():
    # Kernel seeds spread widely (standard error 0.2e6): a 15 % gap is within noise.
    kernel = [run(0.8e6), run(1.2e6), run(1.0e6), run(1.4e6), run(0.6e6)]
    row = grid.row_of(CELL, kernel, [run(0.87e6)] * 5)
    assert (row["agrees"], row["within_noise"]) == (False, True)
    assert grid.verdict(row) == "no (goodput; within noise)"
    # The same gap with tight seeds is a real miss.
    tight = [run(1.0e6)] * 5
    row = grid.row_of(CELL, tight, [run(0.87e6)] * 5)
    assert (row["agrees"], row["within_noise"]) == (False, False)
    assert grid.verdict(row) == "no (goodput)"


def test_the_summary_counts_agreeing_cells_against_the_goal():
    rows = [grid.row_of(CELL, [run()] * 2, [run()] * 2), grid.row_of(CELL, [run(1e6)] * 2, [run(2e6)] * 2)]
    line = grid.summary_line(rows)
    assert "in 1/2 (50%; goal 90%)" in line


def test_a_twin_as_variable_as_the_kernel_agrees_less_often_the_wider_the_kernel_seeds_spread():
    """The summary's yardstick: a simulator that drew from the kernel's own run-to-run spread,
    seeded independently, would agree with it only as often as two resamples of the kernel's
    runs agree with each other."""
    steady = grid.row_of(CELL, [run(1.0e6, 2.0)] * 5, [run(1.0e6, 2.0)] * 5)
    assert steady["kernel_self_agreement"] == 1.0
    spread = [run(0.5e6, 0.0), run(1.5e6, 6.0), run(1.0e6, 1.0), run(0.7e6, 4.0), run(1.3e6, 2.0)]
    wide = grid.row_of(CELL, spread, [run(1.0e6, 2.0)] * 5)["kernel_self_agreement"]
    assert 0.05 < wide < 0.6
    # Deterministic: the same runs give the same estimate.
    assert grid.row_of(CELL, spread, [run(1.0e6, 2.0)] * 5)["kernel_self_agreement"] == wide
    assert grid.row_of(CELL, [run()], [run()])["kernel_self_agreement"] is None
    line = grid.summary_line([steady, grid.row_of(CELL, spread, [run(1.0e6, 2.0)] * 5)])
    assert "seeded independently would agree in about" in line


def test_kernel_mode_runs_exactly_the_variants_the_linux_stack_runs():
    """A variant kernel mode runs has its simulated twin on `tcp.stack = "linux-6"`, and a
    variant it refuses is refused by the Linux stack too."""
    accepted = {v for v in ("tahoe", "reno", "newreno", "sack", "cubic", "ecn", "elfn", "ecn-elfn", "gaimd",
                            "responsive", "smooth", "aggressive", "conservative", "e2tcp", "bbr")
                if _linux_stack_accepts(v)}
    assert accepted == set(VARIANTS)


def _linux_stack_accepts(variant: str) -> bool:
    extra = {"timestamps": False, "window_scale": False} if variant == "e2tcp" else {}
    try:
        api.load_scenario({"tcp": {"variant": variant, "stack": "linux-6", **extra}})
    except ScenarioError as err:
        assert err.path == "tcp.variant", err
        return False
    return True


@pytest.mark.parametrize("variant", ["bbr", "cubic"])
def test_the_grid_gives_every_cell_a_simulated_twin_on_the_linux_stack(variant):
    cell = grid.Cell(variant, False, 0.0, 5, 2)
    assert cell.simulator_variant() == variant
    scenario = grid.scenario(cell, cell.simulator_variant(), stack="linux-6", sack=cell.sack)
    assert api.load_scenario(scenario)
