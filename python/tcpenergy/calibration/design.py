"""The affine design: each row's measured quantity as a function of the fitted figures.

With the timeline fixed, a row's quantity is q(θ) = q(θ0) + Σ_k a_k (θ_k − θ0_k): every fitted
figure multiplies a time or a count the simulation fixes (see keys.py). The slopes a_k are found
by simulating the row with each figure raised by a step h_k; a second step (2 h_k) checks that
the response is affine, and every perturbed run must reproduce the starting run's timeline.
Either failing is a defect, reported as an EngineError, never worked around.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Callable, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from tcpenergy import api
from tcpenergy.calibration.errors import describe, input_error, premise_error
from tcpenergy.calibration.keys import CYCLES_PREFIX, is_busy_time_key
from tcpenergy.calibration.measurements import Row
from tcpenergy.calibration.measurements import per_joule as quantity_per_joule
from tcpenergy.exceptions import ScenarioError

# Relative float noise allowed in an affinity check: sums of a few thousand float products.
_FLOAT_TOLERANCE = 1e-9
# The CPU meter rounds each busy interval to the nearest ns (energy/cpu.rs): up to 0.5 ns per
# interval, and there are at most as many intervals as charged operations.
_ROUNDING_NS = 0.5


@dataclass(frozen=True)
class Outcome:
    """What the design needs from one simulated run of a row."""

    value: float  # the row's quantity (J, µJ/bit or W)
    per_joule: float  # value per joule of the node's energy (1, 1/(8 D µbit), 1/W)
    timeline: Tuple  # quantities the fitted figures must not change
    operations: int  # CPU operations charged at the node (bounds the busy intervals)
    cpu_power_w: float


Simulate = Callable[[Row, Mapping], Outcome]


def get_figure(profile: Mapping, key: str) -> float:
    node = profile
    for part in key.split("."):
        node = node[part]
    return float(node)


def with_figure(profile: Mapping, key: str, value: float) -> dict:
    changed = copy.deepcopy(dict(profile))
    node = changed
    *tables, last = key.split(".")
    for part in tables:
        node = node[part]
    node[last] = value
    return changed


def with_figures(profile: Mapping, figures: Mapping[str, float]) -> dict:
    changed = copy.deepcopy(dict(profile))
    for key, value in figures.items():
        changed = with_figure(changed, key, value)
    return changed


def step(key: str, value: float) -> float:
    """A perturbation large enough that the CPU meter's ns rounding is small beside the change it
    causes, and upward so that no figure goes negative."""
    if key == CYCLES_PREFIX + "per_byte":
        floor = 10.0
    elif key.startswith(CYCLES_PREFIX):
        floor = 1000.0
    elif is_busy_time_key(key):
        floor = 10.0  # µs per packet or ns per byte
    else:
        floor = 1.0
    return max(abs(value), floor)


def simulate_row(row: Row, profile: Mapping) -> Outcome:
    """Run the row's scenario with ``profile`` on the measured node."""
    return simulate_profiles(row, [profile])[0]


def simulate_profiles(row: Row, profiles: Sequence[Mapping]) -> List[Outcome]:
    """Run the row's scenario once and price it with each of ``profiles`` on the measured node: the
    outcomes of separate runs (a profile never changes the run; docs/calibration.md)."""
    slot = f"energy.{row.node}"
    overrides = list(row.overrides) + [(slot, dict(profiles[0]))]
    try:
        records = api.run_each_profile(row.scenario, row.seed, overrides, [{slot: dict(p)} for p in profiles[1:]])
    except ScenarioError as exc:
        raise input_error(f"row {row.id}", f"scenario {row.scenario_text}: {describe(exc)}") from None
    return [_outcome(row, record, profile) for record, profile in zip(records, profiles)]


def _outcome(row: Row, record: Mapping, profile: Mapping) -> Outcome:
    if not record.get("complete", True):
        raise input_error(f"row {row.id}", f"scenario {row.scenario_text}: the run reached "
                                           f"stop_after before the transfer completed; a measured "
                                           f"run must complete (raise stop_after)")
    energy = record["energy"][row.node]
    window = float(record["energy"]["window_s"])
    total = float(energy["total_j"])
    per_joule = quantity_per_joule(record, row.quantity)
    if not np.isfinite(per_joule):
        raise input_error(f"row {row.id}", f"{row.quantity}: the simulated run delivered no data "
                                           f"or took no time, so it has no {row.quantity}")
    flow = record["flow"]
    timeline = (record.get("events"), flow.get("completion_s"), flow.get("bytes_delivered"),
                flow.get("segments_sent"), flow.get("acks_sent"), window, energy.get("radio_tx_s"),
                energy.get("radio_rx_s"), energy.get("radio_sleep_s"), energy.get("radio_wakeups"))
    operations = sum(int(n) for n in record.get("cpu", {}).get(f"{row.node}_ops", {}).values())
    return Outcome(value=total * per_joule, per_joule=per_joule, timeline=timeline,
                   operations=operations, cpu_power_w=get_figure(profile, "cpu.active_power_w"))


def rounding(outcome: Outcome) -> float:
    """Bound on the CPU meter's rounding in one run's quantity: 0.5 ns of busy time per charged
    operation, at the node's CPU active power."""
    return _ROUNDING_NS * 1e-9 * outcome.cpu_power_w * outcome.operations * outcome.per_joule


@dataclass(frozen=True)
class Design:
    keys: Tuple[str, ...]
    theta0: np.ndarray  # starting figures
    start: np.ndarray  # each row's quantity with the starting figures
    slopes: np.ndarray  # rows x keys: d quantity / d figure
    steps: np.ndarray  # the perturbation h_k of each key
    rounding: np.ndarray  # per row: bound on the CPU meter's rounding in one run's quantity

    def subset(self, columns: Sequence[int]) -> "Design":
        columns = list(columns)
        return Design(keys=tuple(self.keys[j] for j in columns), theta0=self.theta0[columns],
                      start=self.start, slopes=self.slopes[:, columns], steps=self.steps[columns],
                      rounding=self.rounding)

    def prediction_tolerance(self, theta: np.ndarray) -> np.ndarray:
        """How far a simulation with ``theta`` may be from :meth:`predict`: float noise, plus the
        ns rounding of the starting run, of the run with ``theta`` and of each cycle-cost slope
        (the slope from two runs 2 h apart, extrapolated by |θ − θ0|)."""
        predicted = self.predict(theta)
        cycles = np.array([is_busy_time_key(k) for k in self.keys], dtype=bool)
        reach = float(np.sum(np.abs(np.asarray(theta) - self.theta0)[cycles] / self.steps[cycles]))
        return _FLOAT_TOLERANCE * np.abs(predicted) + self.rounding * (2.0 + reach)

    @property
    def offset(self) -> np.ndarray:
        """The part of each row's quantity the fitted figures do not explain (b0)."""
        return self.start - self.slopes @ self.theta0

    def predict(self, theta: np.ndarray) -> np.ndarray:
        return self.start + self.slopes @ (np.asarray(theta, dtype=float) - self.theta0)


def _check_affine(row: Row, key: str, h: float, base: Outcome, once: Outcome, twice: Outcome) -> None:
    for outcome in (once, twice):
        if outcome.timeline != base.timeline:
            raise premise_error(
                f"row {row.id}: changing {key} changed the simulated timeline "
                f"({base.timeline} -> {outcome.timeline}); the fitted figures must only change what "
                f"the meters charge. This is a bug; please report it with the row's scenario")
    nonlinear = abs(twice.value - 2.0 * once.value + base.value)
    tolerance = _FLOAT_TOLERANCE * (abs(base.value) + abs(once.value) + abs(twice.value))
    if is_busy_time_key(key):
        # The second difference adds the rounding of four runs' worth (q0 + 2 q1 + q2).
        tolerance += 4.0 * rounding(base)
    if nonlinear > tolerance:
        raise premise_error(
            f"row {row.id}: the {row.quantity} is not affine in {key}: raising it by {h:g} and "
            f"by {2 * h:g} changed it by {once.value - base.value:.9g} and "
            f"{twice.value - base.value:.9g}. This is a bug; please report it with the row's scenario")


def build_design(rows: Sequence[Row], profile: Mapping, keys: Sequence[str],
                 simulate: Optional[Simulate] = None) -> Design:
    """Slopes of every row's quantity in every key, by perturbation, with the affinity checks.
    Prices 1 + 2·len(keys) profiles per row: one simulation per row, priced under each
    (``simulate``, given, runs one per profile instead)."""
    keys = tuple(keys)
    theta0 = np.array([get_figure(profile, k) for k in keys], dtype=float)
    steps = np.array([step(k, v) for k, v in zip(keys, theta0)], dtype=float)
    start = np.empty(len(rows))
    bounds = np.empty(len(rows))
    slopes = np.zeros((len(rows), len(keys)))
    # The starting profile, then each key raised by h and by 2h.
    profiles = [profile]
    for j, key in enumerate(keys):
        h = steps[j]
        profiles += [with_figure(profile, key, theta0[j] + h), with_figure(profile, key, theta0[j] + 2.0 * h)]
    for i, row in enumerate(rows):
        outcomes = (simulate_profiles(row, profiles) if simulate is None
                    else [simulate(row, p) for p in profiles])
        base = outcomes[0]
        start[i] = base.value
        bounds[i] = rounding(base)
        for j, key in enumerate(keys):
            h = steps[j]
            once, twice = outcomes[1 + 2 * j], outcomes[2 + 2 * j]
            _check_affine(row, key, h, base, once, twice)
            slopes[i, j] = (twice.value - base.value) / (2.0 * h)
    return Design(keys=keys, theta0=theta0, start=start, slopes=slopes, steps=steps,
                  rounding=bounds)


def simulate_all(rows: Sequence[Row], profile: Mapping, simulate: Simulate = simulate_row) -> List[float]:
    return [simulate(row, profile).value for row in rows]
