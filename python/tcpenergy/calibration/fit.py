"""Fitting the figures: non-negative least squares on relative residuals, a case bootstrap for
confidence intervals, and the choice of held-out rows.

Row i's residual is (predicted_i − measured_i) / measured_i, so a 1 J run and a 500 J run weigh
alike. With the affine design q_i(θ) = b0_i + A_i·θ this is the linear problem

    minimize  Σ_i ((A_i·θ − (m_i − b0_i)) / m_i)²   subject to θ ≥ 0,

solved by scipy.optimize.nnls (Lawson-Hanson): a figure the data push below zero stops at zero.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple, Union

import numpy as np

from tcpenergy.calibration.errors import input_error

RESAMPLES = 2000
LEVEL = 0.95
# Singular values of the column-normalized weighted design below this fraction of the largest
# mean the rows cannot tell some fitted figures apart.
_RANK_TOLERANCE = 1e-9


def weighted_system(slopes: np.ndarray, offset: np.ndarray,
                    measured: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """(A/m, (m − b0)/m): the relative-residual least-squares problem."""
    measured = np.asarray(measured, dtype=float)
    return slopes / measured[:, None], (measured - offset) / measured


def nnls(matrix: np.ndarray, target: np.ndarray) -> np.ndarray:
    from scipy.optimize import nnls as scipy_nnls

    # Scale columns to unit norm: watts and cycles differ by orders of magnitude, and NNLS's
    # stopping tolerance is absolute.
    norms = np.linalg.norm(matrix, axis=0)
    norms[norms == 0] = 1.0
    solution, _ = scipy_nnls(matrix / norms, target)
    return solution / norms


def unused_keys(matrix: np.ndarray, keys: Sequence[str]) -> List[str]:
    """Keys no fit row's quantity depends on (an all-zero column)."""
    return [key for j, key in enumerate(keys) if not np.any(matrix[:, j])]


def _separable(matrix: np.ndarray) -> Tuple[bool, np.ndarray]:
    """Whether the columns are linearly independent, and the direction in which they are least so
    (a right singular vector of the column-normalized matrix)."""
    norms = np.linalg.norm(matrix, axis=0)
    if matrix.shape[0] < matrix.shape[1] or not np.all(norms > 0):
        return False, (norms == 0).astype(float)
    _, singular, vt = np.linalg.svd(matrix / norms, full_matrices=False)
    return bool(singular[-1] > _RANK_TOLERANCE * singular[0]), vt[-1]


def check_identifiable(matrix: np.ndarray, keys: Sequence[str]) -> None:
    """Refuse a design whose columns are linearly dependent: the rows cannot separate them."""
    rows, cols = matrix.shape
    if rows < cols:
        raise input_error("--fit", f"{rows} fit rows cannot determine {cols} figures "
                                   f"({', '.join(keys)}); add measurements or fit fewer keys")
    zero = unused_keys(matrix, keys)
    if zero:
        raise input_error("--fit", f"{zero[0]}: no fit row's measured quantity depends on it (as "
                                   f"for a sleep power when the radio never sleeps, the cost of an "
                                   f"operation no run performs, or any cycle cost when "
                                   f"cpu.active_power_w is 0); leave it out of --fit")
    separable, direction = _separable(matrix)
    if not separable:
        weights = np.abs(direction)
        tied = [key for key, weight in zip(keys, weights) if weight > 0.1 * weights.max()]
        raise input_error("--fit", f"the fit rows cannot tell {', '.join(tied)} apart: their effects "
                                   f"on every measured quantity are in the same proportion; add rows "
                                   f"that change them differently or fit fewer keys")


@dataclass(frozen=True)
class Bootstrap:
    low: np.ndarray
    high: np.ndarray
    resamples: int
    used: int  # resamples whose rows determine every figure
    level: float

    @property
    def method(self) -> str:
        dropped = self.resamples - self.used
        left_out = (f"; {dropped} resamples whose rows could not determine every figure left out"
                    if dropped else "")
        return (f"{self.level:.0%} percentile intervals of a case bootstrap over the fit rows "
                f"({self.resamples} resamples of the rows with replacement, NNLS on each{left_out})")


def bootstrap(matrix: np.ndarray, target: np.ndarray, seed: int,
              resamples: int = RESAMPLES, level: float = LEVEL) -> Bootstrap:
    """Case bootstrap: refit on rows drawn with replacement; percentile interval per figure.

    A resample that misses every row a figure depends on (or leaves two figures inseparable)
    says nothing about that figure, and NNLS would report an arbitrary value for it (zero): such
    resamples are left out and counted."""
    rng = np.random.default_rng([seed, 2])
    n = matrix.shape[0]
    draws = []
    for _ in range(resamples):
        pick = rng.integers(0, n, size=n)
        if _separable(matrix[pick])[0]:
            draws.append(nnls(matrix[pick], target[pick]))
    if not draws:
        nan = np.full(matrix.shape[1], np.nan)
        return Bootstrap(low=nan, high=nan, resamples=resamples, used=0, level=level)
    tail = (1.0 - level) / 2.0 * 100.0
    low, high = np.percentile(np.array(draws), [tail, 100.0 - tail], axis=0)
    return Bootstrap(low=low, high=high, resamples=resamples, used=len(draws), level=level)


Holdout = Union[None, float, Sequence[str]]


def choose_holdout(ids: Sequence[str], holdout: Holdout, seed: int) -> List[bool]:
    """Which rows are held out of the fit: a fraction of them drawn with ``seed`` (the same seed
    gives the same rows), or the rows named."""
    n = len(ids)
    if holdout is None:
        return [False] * n
    if isinstance(holdout, (int, float)) and not isinstance(holdout, bool):
        fraction = float(holdout)
        if not 0.0 <= fraction < 1.0:
            raise input_error("--holdout", f"must be a fraction in [0, 1), got {holdout!r}")
        count = int(np.floor(fraction * n + 0.5))
        chosen = set(np.random.default_rng([seed, 1]).permutation(n)[:count].tolist())
        return [i in chosen for i in range(n)]
    names = [str(name).strip() for name in holdout if str(name).strip()]
    known = set(ids)
    for name in names:
        if name not in known:
            raise input_error("--holdout-rows", f"no row has id {name!r}; ids: {', '.join(ids)}")
    held = set(names)
    return [row_id in held for row_id in ids]


def rms(values: np.ndarray) -> Optional[float]:
    values = np.asarray(values, dtype=float)
    return float(np.sqrt(np.mean(values**2))) if values.size else None
