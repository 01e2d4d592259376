"""Means with Student-t confidence intervals, per group of runs.

For a group of n values with mean m and sample standard deviation s (ddof = 1), the interval at
level L is m ± t_{(1+L)/2, n-1} · s / sqrt(n); NaN when n < 2. The t quantile is computed here
(regularized incomplete beta + Newton), so the package does not need scipy at run time; the tests
check it against scipy.stats.t.
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from typing import TYPE_CHECKING, Optional, Sequence, Tuple

from tcpenergy.experiments.frame import label_columns

if TYPE_CHECKING:
    import pandas as pd

DEFAULT_METRICS = (
    "flow.goodput_bps",
    "flow.completion_s",
    "flow.retransmissions",
    "flow.timeouts",
    "energy.sender.total_j",
    "energy.sender.idealized_j",
    "energy.sender.per_bit_total_uj",
    "energy.sender.per_bit_idealized_uj",
)
LEVELS = (0.90, 0.95)


# ---------------------------------------------------------------------------------------------
# the t distribution


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 1000):
        m2 = 2 * m
        for aa in (m * (b - m) * x / ((qam + m2) * (a + m2)),
                   -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + aa / c
            c = c if abs(c) > tiny else tiny
            delta = c * d
            h *= delta
        if abs(delta - 1.0) < 1e-16:
            break
    return h


def _lbeta_inv(a: float, b: float) -> float:
    """log(1 / B(a, b)). For t quantiles b = 1/2; with a large, lgamma(a + 1/2) - lgamma(a)
    cancels badly, so its asymptotic series is used instead."""
    if b == 0.5 and a > 500:
        return (0.5 * math.log(a) - 1 / (8 * a) + 1 / (192 * a**3) + 1 / (640 * a**5)
                - math.lgamma(0.5))
    return math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)


def _betainc(a: float, b: float, x: float, y: float) -> float:
    """Regularized incomplete beta I_x(a, b); ``y`` = 1 - x, passed in to keep its precision."""
    if x <= 0.0:
        return 0.0
    if y <= 0.0:
        return 1.0
    log_x = math.log1p(-y) if y < 0.5 else math.log(x)
    log_y = math.log1p(-x) if x < 0.5 else math.log(y)
    front = math.exp(_lbeta_inv(a, b) + a * log_x + b * log_y)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, y) / b


def t_sf(t: float, df: float) -> float:
    """P(T > t) for t >= 0."""
    tt = t * t
    return 0.5 * _betainc(df / 2.0, 0.5, df / (df + tt), tt / (df + tt))


def _t_pdf(t: float, df: float) -> float:
    return math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)
                    - 0.5 * math.log(df * math.pi) - (df + 1) / 2 * math.log1p(t * t / df))


@lru_cache(maxsize=4096)
def t_quantile(p: float, df: float) -> float:
    """The p-quantile of Student's t with df degrees of freedom, for 0.5 <= p < 1."""
    if not 0.5 <= p < 1.0 or df <= 0:
        raise ValueError(f"t_quantile needs 0.5 <= p < 1 and df > 0, got p={p}, df={df}")
    if p == 0.5:
        return 0.0
    if df == 1:
        return math.tan(math.pi * (p - 0.5))
    if df == 2:
        return (2 * p - 1) * math.sqrt(2 / (4 * p * (1 - p)))
    q = 1.0 - p
    lo, hi = 0.0, 1.0
    while t_sf(hi, df) > q:  # bracket the root
        lo, hi = hi, hi * 2.0
    t = (lo + hi) / 2
    for _ in range(200):
        # Newton on sf(t) = q, falling back to bisection when a step leaves the bracket.
        f = t_sf(t, df) - q
        if f > 0:
            lo = t
        else:
            hi = t
        step = f / _t_pdf(t, df)
        nxt = t + step
        if not lo < nxt < hi:
            nxt = (lo + hi) / 2
        if abs(nxt - t) <= 1e-15 * max(1.0, abs(t)):
            return nxt
        t = nxt
    return t


def t_interval(level: float, n: int, mean: float, std: float) -> Tuple[float, float]:
    """The two-sided Student-t interval of a mean at ``level``; NaN bounds when n < 2."""
    half = _half_width(level, n, std)
    return mean - half, mean + half


def level_name(level: float) -> str:
    """0.9 -> "ci90", 0.975 -> "ci97.5"."""
    return f"ci{round(level * 100, 6):g}"


# ---------------------------------------------------------------------------------------------
# summaries


def summarize(df: "pd.DataFrame", by: Optional[Sequence[str]] = None,
              metrics: Optional[Sequence[str]] = None,
              levels: Sequence[float] = LEVELS) -> "pd.DataFrame":
    """One row per (group, metric): n, mean, std, and ci<L>_low / ci<L>_high per level.

    ``by`` defaults to the frame's ``label.*`` columns (the sweep's axes), ``metrics`` to the
    default metrics the frame has. Groups keep the order in which they first appear. Only runs
    with status ok count; ``result.attrs`` carries ``runs`` (ok runs) and ``failed`` (failed runs
    left out).
    """
    import pandas as pd

    by = list(label_columns(df) if by is None else by)
    metrics = [m for m in DEFAULT_METRICS if m in df.columns] if metrics is None else list(metrics)
    missing = [c for c in by + metrics if c not in df.columns]
    if missing:
        raise KeyError(f"no column {missing[0]!r} in the runs frame")
    failed = 0
    if "status" in df.columns:
        failed = int((df["status"] == "failed").sum())
        df = df[df["status"] == "ok"]
    columns = by + ["metric", "n", "mean", "std"] + [
        f"{level_name(lv)}_{side}" for lv in levels for side in ("low", "high")]
    if not metrics:
        out = pd.DataFrame(columns=columns)
        out.attrs.update(runs=int(len(df)), failed=failed)
        return out
    values = pd.DataFrame({m: pd.to_numeric(df[m], errors="coerce") for m in metrics},
                          index=df.index, dtype=float)
    if by:
        keys = [df[c].map(_hashable).rename(c) for c in by]
        table = values.groupby(keys, sort=False, dropna=False).agg(["count", "mean", "std"])
    else:
        table = pd.DataFrame([values.agg(["count", "mean", "std"]).T.stack()])
    parts = []
    for order, metric in enumerate(metrics):
        part = table[metric].reset_index(drop=not by)
        part.insert(len(by), "metric", metric)
        part["_group"], part["_metric"] = range(len(part)), order
        parts.append(part)
    out = pd.concat(parts, ignore_index=True).sort_values(["_group", "_metric"], kind="stable")
    out = out.rename(columns={"count": "n"})[columns[:len(by) + 4]].reset_index(drop=True)
    out["n"] = out["n"].astype(int)
    for level in levels:
        half = [_half_width(level, n, std) for n, std in zip(out["n"], out["std"])]
        out[f"{level_name(level)}_low"] = out["mean"] - half
        out[f"{level_name(level)}_high"] = out["mean"] + half
    out.attrs.update(runs=int(len(df)), failed=failed)
    return out


def _hashable(value: object) -> object:
    """Group keys must be hashable: a list or table label (an axis over impairment lists, say)
    groups by its JSON text."""
    return json.dumps(value, sort_keys=True) if isinstance(value, (list, dict)) else value


def _half_width(level: float, n: int, std: float) -> float:
    if n < 2 or std != std:
        return math.nan
    return t_quantile((1.0 + level) / 2.0, n - 1) * std / math.sqrt(n)
