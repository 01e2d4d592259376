"""A CPU's DVFS operating points (docs/models/energy.md, "Operating points"): a run uses one of
the profile's points, chosen by setting a figure of the named built-in profile; the protocol's
cycles take longer at a slower clock and cost what the point's power says."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from tcpenergy import api
from tcpenergy.exceptions import ScenarioError

REPO = Path(__file__).resolve().parents[1]
DOWNLOAD = REPO / "scenarios" / "phone-bulk-download.toml"
DREAM = "zhang2010-htc-dream-3g"
# Zhang et al. (CODES+ISSS 2010), the HTC Dream as PowerTutor restates it: busy power at 100 %.
SLOW, FAST = (245.36e6, 0.34169), (383.38e6, 0.43388)


def _dream(tmp_path, point=None):
    scenario = tmp_path / "dream.toml"
    scenario.write_text(DOWNLOAD.read_text().replace('receiver = "huang2012-lte-phone"', f'receiver = "{DREAM}"'))
    overrides = {} if point is None else {"energy.receiver.cpu.frequency_hz": point[0],
                                          "energy.receiver.cpu.active_power_w": point[1]}
    return api.run(scenario, **overrides)


def test_the_same_protocol_work_takes_longer_at_the_slower_point_and_costs_its_power(tmp_path):
    fast, slow = _dream(tmp_path), _dream(tmp_path, SLOW)
    f, s = fast["energy"]["receiver"], slow["energy"]["receiver"]
    # The run itself is the same (the CPU does not pace the transfer), and so are the cycles.
    assert fast["flow"]["completion_s"] == slow["flow"]["completion_s"]
    # Each operation's time is rounded to the ns: the busy times agree within one ns per operation.
    ops = sum(fast["cpu"]["receiver_ops"].values())
    assert ops == sum(slow["cpu"]["receiver_ops"].values()) > 1000
    assert s["cpu_busy_s"] == pytest.approx(f["cpu_busy_s"] * FAST[0] / SLOW[0], abs=ops * 1e-9)
    # Energy per cycle is power / clock: 1.393 nJ at 245 MHz against 1.132 nJ at 383 MHz, so on
    # this CPU the faster point does the same work for less (it races to idle).
    ratio = (SLOW[1] / SLOW[0]) / (FAST[1] / FAST[0])
    assert s["breakdown_j"]["cpu"] == pytest.approx(f["breakdown_j"]["cpu"] * ratio, abs=ops * 1e-9 * SLOW[1])
    assert ratio > 1.2
    assert math.isclose(sum(s["breakdown_j"].values()), s["total_j"], rel_tol=1e-12)


def test_a_clock_and_power_that_are_not_one_operating_point_are_refused_naming_the_points(tmp_path):
    with pytest.raises(ScenarioError, match=r"energy\.receiver\.cpu\.frequency_hz.*operating points: 245360000 Hz at 0\.34169 W"):
        _dream(tmp_path, (SLOW[0], FAST[1]))
