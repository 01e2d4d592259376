"""Calibrating a device profile against power-meter measurements (docs/calibration.md).

numpy, scipy and pandas are imported when a calibration runs, not with the package."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tcpenergy.calibration.pipeline import CalibrationResult


def calibrate(measurements: Any, profile: Any, fit: Any = None, holdout: Any = None, seed: int = 1,
              **options: Any) -> "CalibrationResult":
    """Fit profile figures to measured energies. See
    :func:`tcpenergy.calibration.pipeline.calibrate` for the arguments."""
    from tcpenergy.calibration.pipeline import calibrate as run

    return run(measurements, profile, fit=fit, holdout=holdout, seed=seed, **options)


__all__ = ["calibrate"]
