"""The calibration as a whole: measurements -> design -> NNLS fit -> bootstrap -> profile."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Dict, Optional, Sequence, Tuple, Union

import numpy as np

from tcpenergy.calibration import fit as fitting
from tcpenergy.calibration.design import build_design, simulate_all
from tcpenergy.calibration.errors import input_error, premise_error
from tcpenergy.calibration.keys import is_busy_time_key, resolve_fit, unit
from tcpenergy.calibration.measurements import QUANTITIES, read_measurements
from tcpenergy.calibration.profile_in import ProfileLike, check_profile, load_profile
from tcpenergy.calibration.profile_out import (
    calibrated_profile,
    figures_dict,
    header_lines,
    source_text,
    to_toml,
)
from tcpenergy.scenario import PathLike

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class Figure:
    key: str
    unit: str
    start: float
    fitted: float
    low: float
    high: float


@dataclass(frozen=True)
class CalibrationResult:
    """Fitted figures with intervals, the per-row comparison and the new profile.

    ``rows`` has one row per measurement: ``id, scenario, overrides, seed, node, quantity, unit,
    measured, start, fitted, rel_error_start, rel_error, role`` (``fit`` or ``holdout``), where
    ``start`` and ``fitted`` are the simulated quantity with the starting and the fitted profile
    and the relative errors are (simulated − measured) / measured."""

    start_profile: str
    figures: Tuple[Figure, ...]
    rows: "pd.DataFrame"
    profile: dict
    source: str
    seed: int
    method: str
    notes: Tuple[str, ...] = field(default=())

    @property
    def fitted(self) -> Dict[str, float]:
        return {f.key: f.fitted for f in self.figures}

    @property
    def intervals(self) -> Dict[str, Tuple[float, float]]:
        return {f.key: (f.low, f.high) for f in self.figures}

    @property
    def n_fit(self) -> int:
        return int((self.rows["role"] == "fit").sum())

    @property
    def n_holdout(self) -> int:
        return int((self.rows["role"] == "holdout").sum())

    def rms(self, role: str, column: str = "rel_error") -> Optional[float]:
        """RMS relative error of the ``fit`` or ``holdout`` rows (None without such rows);
        ``column="rel_error_start"`` gives it for the starting profile."""
        return fitting.rms(self.rows.loc[self.rows["role"] == role, column].to_numpy())

    def toml(self) -> str:
        keys = [f.key for f in self.figures]
        return to_toml(self.profile, header_lines(self.source, keys, self.start_profile, self.method))


def calibrate(
    measurements: Union[PathLike, "pd.DataFrame"],
    profile: ProfileLike,
    fit: Optional[Union[str, Sequence[str]]] = None,
    holdout: Union[None, float, Sequence[str]] = None,
    seed: int = 1,
    name: Optional[str] = None,
    resamples: int = fitting.RESAMPLES,
    base_dir: Optional[PathLike] = None,
) -> CalibrationResult:
    """Fit profile figures to measured energies; see docs/calibration.md.

    ``measurements``: a CSV or Parquet file, or a DataFrame with the same columns. ``profile``: a
    built-in profile name, a profile TOML file or a dict, the starting figures. ``fit``: dotted
    keys (``cpu.cycles.*`` globs allowed), comma-separated or a list; default: the profile's
    estimated figures the energy is affine in. ``holdout``: a fraction of rows drawn with
    ``seed``, or a list of row ids, kept out of the fit. ``seed`` also seeds the bootstrap.
    """
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise input_error("--seed", f"must be a non-negative integer, got {seed!r}")
    if resamples < 1:
        raise input_error("resamples", f"must be at least 1, got {resamples!r}")
    start = load_profile(profile)
    start_name = str(start.get("name"))
    new_name = name if name is not None else f"{start_name}-calibrated"
    if not isinstance(new_name, str) or not new_name.strip():
        raise input_error("--name", f"must be a non-empty string, got {new_name!r}")
    keys, notes = resolve_fit(fit, start)
    table = read_measurements(measurements, base_dir)
    rows = table.rows
    held = fitting.choose_holdout([r.id for r in rows], holdout, seed)
    fit_rows = [i for i, h in enumerate(held) if not h]
    if len(fit_rows) < len(keys):
        raise input_error("--fit", f"{len(fit_rows)} fit rows cannot determine {len(keys)} figures "
                                   f"({', '.join(keys)}); add measurements, hold out fewer rows or "
                                   f"fit fewer keys")

    design = build_design(rows, start, keys)
    measured = np.array([r.measured for r in rows])
    matrix, target = fitting.weighted_system(design.slopes, design.offset, measured)
    matrix, target = matrix[fit_rows], target[fit_rows]
    if fit is None:
        # Default keys: a figure no fit row depends on (the sleep power with the radio always
        # on) is left as it is, with a note; a named one is an error (check_identifiable).
        unused = fitting.unused_keys(matrix, keys)
        if unused and len(unused) < len(keys):
            notes = notes + [f"{k} not fitted: no fit row's measured quantity depends on it"
                             for k in unused]
            kept = [j for j, k in enumerate(keys) if k not in unused]
            keys = [keys[j] for j in kept]
            matrix = matrix[:, kept]
            design = design.subset(kept)
    fitting.check_identifiable(matrix, keys)

    theta = fitting.nnls(matrix, target)
    boot = fitting.bootstrap(matrix, target, seed, resamples)
    fitted = figures_dict(keys, theta)
    n_fit, n_holdout = len(fit_rows), len(rows) - len(fit_rows)
    sources = {
        key: source_text(table.label, n_fit, n_holdout, (boot.low[j], boot.high[j]),
                         design.theta0[j], start_name)
        for j, key in enumerate(keys)
    }
    new_profile = calibrated_profile(start, fitted, sources, new_name, table.label)
    check_profile(new_profile, "calibrated profile")  # the engine must accept what is written

    # Predictions with the fitted profile come from simulating it, not from the linear model;
    # the two must agree, or the affine premise is broken.
    simulated = np.array(simulate_all(rows, new_profile))
    theta = np.array([fitted[k] for k in keys])
    modelled = design.predict(theta)
    excess = np.abs(simulated - modelled) - design.prediction_tolerance(theta)
    if np.any(excess > 0):
        worst = int(np.argmax(excess))
        if simulated[worst] < modelled[worst] and any(is_busy_time_key(k) for k in keys):
            # CPU busy time is capped at the measurement window (docs/models/energy.md#cpu): cycle
            # costs or card times this large keep the CPU busy for the whole run, and energy stops
            # growing.
            raise input_error(
                f"row {rows[worst].id}",
                f"no cycle cost or card time explains {measured[worst]:.6g} {QUANTITIES[rows[worst].quantity][0]}: "
                f"the fitted costs ({', '.join(f'{k} = {fitted[k]:.6g}' for k in keys)}) would keep the CPU "
                f"busy for the whole run, where CPU energy stops growing (simulated {simulated[worst]:.6g}); "
                "the measurement needs more power than a fully busy CPU draws: fit a power figure instead")
        raise premise_error(f"row {rows[worst].id}: the fitted profile's simulated {rows[worst].quantity} "
                            f"{simulated[worst]:.9g} differs from the affine model's {modelled[worst]:.9g}. "
                            f"This is a bug; please report it with the measurements")

    import pandas as pd

    frame = pd.DataFrame({
        "id": [r.id for r in rows],
        "scenario": [r.scenario_text for r in rows],
        "overrides": [r.overrides_text for r in rows],
        "seed": pd.array([r.seed for r in rows], dtype="Int64"),
        "node": [r.node for r in rows],
        "quantity": [r.quantity for r in rows],
        "unit": [QUANTITIES[r.quantity][0] for r in rows],
        "measured": measured,
        "start": design.start,
        "fitted": simulated,
        "rel_error_start": (design.start - measured) / measured,
        "rel_error": (simulated - measured) / measured,
        "role": ["holdout" if h else "fit" for h in held],
    })
    figures = tuple(
        Figure(key=key, unit=unit(key), start=float(design.theta0[j]), fitted=fitted[key],
               low=float(boot.low[j]), high=float(boot.high[j]))
        for j, key in enumerate(keys)
    )
    return CalibrationResult(start_profile=start_name, figures=figures, rows=frame,
                             profile=new_profile, source=table.label, seed=seed,
                             method=boot.method, notes=tuple(notes))
