"""Means with confidence intervals, per group of runs, over complete runs.

For a group of n values with mean m and sample standard deviation s (ddof = 1), the Student-t
interval at level L is m ± t_{(1+L)/2, n-1} · s / sqrt(n); NaN when n < 2. The t quantile is
computed here (regularized incomplete beta + Newton), so the package does not need scipy at run
time; the tests check it against scipy.stats.t.

A metric may be declared to lie in a range [low, high] (:func:`declared_range`, from the table of
result fields :data:`tcpenergy.records.FIELD_RANGES`: a fraction such as Jain's index in [0, 1];
a count, time, rate or energy in [0, inf); UAR at most 1; EEE and EP signed; any column the table
does not name unbounded), read from the record's definition, not guessed from the data. It keeps
the Student-t interval when that lies within the range at every level asked for; otherwise the
row gets, from :data:`BOOTSTRAP_MIN_N` values on, a BCa bootstrap interval of the mean (percentile
bootstrap where BCa is undefined), whose bounds lie within the data's range and so within the
declared range, and with fewer values the t interval cut at the range's bounds (the true mean lies
in the range, so the cut keeps t's coverage). The resamples come from a generator with a fixed
seed (:data:`BOOTSTRAP_SEED`) over the sorted values: the same values always give the same
interval. Every interval contains the group's mean: where the mean itself lies beyond an end of
the declared range (the declaration does not hold for those values, or rounding put it an ulp
past), that end is not used. The column ``ci_method`` says which method gave each row, and for a
cut which end was cut. See docs/experiments.md for the equations.
"""

from __future__ import annotations

import math
from functools import lru_cache
from statistics import NormalDist
from typing import TYPE_CHECKING, Collection, List, Mapping, Optional, Sequence, Tuple, Union

from tcpenergy.experiments.completeness import hashable, ok, usable
from tcpenergy.experiments.frame import label_columns
from tcpenergy.records import (FRACTION, NON_NEGATIVE, UNBOUNDED, Range,  # noqa: F401
                               field_range)

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
    # A network run's totals (a network of one flow also has the single-flow metrics above): the
    # columns of the report's NETWORK_TOTALS (report.metrics, which sits above this package; a
    # test checks that the two name the same columns).
    "network.goodput_bps",
    "network.total_j",
    "network.idealized_j",
    "network.per_bit_total_uj",
    "network.per_bit_idealized_uj",
    "network.jain_fairness",
)
LEVELS = (0.90, 0.95)

STUDENT_T = "student-t"
STUDENT_T_CUT = "student-t-cut-at-zero"  # the lower end raised to a declared low of 0
STUDENT_T_CUT_LOW = "student-t-cut-at-lower-bound"  # ... to a declared low other than 0
STUDENT_T_CUT_HIGH = "student-t-cut-at-upper-bound"  # the upper end lowered to the declared high
STUDENT_T_CUT_BOTH = "student-t-cut-at-both-bounds"
BOOTSTRAP_BCA = "bootstrap-bca"
BOOTSTRAP_PERCENTILE = "bootstrap-percentile"
NO_INTERVAL = "none"  # fewer than two values
BOOTSTRAP_SEED = 20260808
BOOTSTRAP_RESAMPLES = 9999
BOOTSTRAP_MIN_N = 10  # fewer values: the t interval cut at the range (see _bounded_interval)
_NORMAL = NormalDist()


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
# intervals


def declared_range(metric: str) -> Range:
    """The range [low, high] that ``metric`` (a runs-frame column) is declared to lie in: the
    range of the result field it is (:func:`tcpenergy.records.field_range`), :data:`UNBOUNDED`
    for any other column."""
    found = field_range(metric)
    return UNBOUNDED if found is None else found


def is_non_negative(metric: str) -> bool:
    """Whether ``metric`` (a runs-frame column) is declared non-negative (a fraction is too)."""
    return declared_range(metric)[0] >= 0


def interval(values: Sequence[float], levels: Sequence[float] = LEVELS,
             non_negative: bool = False,
             within: Optional[Range] = None) -> Tuple[str, List[Tuple[float, float]]]:
    """The confidence intervals of the mean of ``values`` (NaNs dropped) at each level, and the
    method that gave them: Student-t, unless some level's t interval leaves the range the mean
    is declared to lie in; then, from BOOTSTRAP_MIN_N values on, the BCa bootstrap (percentile
    bootstrap where BCa is undefined), and with fewer values the t interval cut at the range's
    bounds. The range is ``within`` (low, high) when given, else [0, inf) if ``non_negative``,
    else unbounded."""
    import numpy as np

    declared = _checked_range(within) if within is not None else (
        NON_NEGATIVE if non_negative else UNBOUNDED)
    x = np.asarray(values, dtype=float)
    x = x[~np.isnan(x)]
    n = len(x)
    if n < 2:
        return NO_INTERVAL, [(math.nan, math.nan) for _ in levels]
    mean, std = float(x.mean()), float(x.std(ddof=1))
    return _fitted(x, mean, [t_interval(level, n, mean, std) for level in levels], levels,
                   declared)


def _fitted(x, mean: float, t_bounds: Sequence[Tuple[float, float]], levels: Sequence[float],
            declared: Range) -> Tuple[str, List[Tuple[float, float]]]:
    """The method and bounds for values ``x`` with mean ``mean`` (as reported) and Student-t
    bounds ``t_bounds``, for a metric declared to lie in ``declared``: the bounds always contain
    the mean (see :func:`_kept_range`)."""
    within = _kept_range(declared, mean)
    if within == UNBOUNDED:
        return STUDENT_T, list(t_bounds)
    low, high = within
    if all(lo >= low and hi <= high for lo, hi in t_bounds):
        return STUDENT_T, list(t_bounds)
    method, bounds = _bounded_interval(x, t_bounds, levels, within)
    # A t bound cut at a range that holds the mean still has the mean inside; a bootstrap bound
    # is a quantile of resampled means, which rounding may put an ulp past the sample mean.
    return method, [(min(lo, mean), max(hi, mean)) for lo, hi in bounds]


def _kept_range(declared: Range, mean: float) -> Range:
    """The declared range, without an end the mean lies beyond: such a mean says the declaration
    does not hold for these values (or, by an ulp, that rounding put it there), and cutting the
    interval at that end would leave the mean out."""
    low, high = declared
    return (-math.inf if mean < low else low), (math.inf if mean > high else high)


def _bounded_interval(x, t_bounds: Sequence[Tuple[float, float]], levels: Sequence[float],
                      within: Range) -> Tuple[str, List[Tuple[float, float]]]:
    """For a metric declared to lie in ``within`` whose t interval leaves it. A bootstrap of a
    few values takes only a few distinct means and is far too narrow (for three values, [min,
    max] covers the median only 75 % of the time), so below BOOTSTRAP_MIN_N values the t interval
    is cut at the range's bounds instead: the true mean lies within the range, so the cut
    interval contains it exactly when the t interval does, and keeps t's coverage."""
    low, high = within
    if len(x) >= BOOTSTRAP_MIN_N:
        method, bounds = bootstrap_interval(x, levels)
        # Inside [min x, max x], so inside the range; the clamp only matters for a value that
        # oversteps the range by rounding (a Jain's index computed as 1 + 2 ulp).
        return method, [_clamped(lo, hi, within) for lo, hi in bounds]
    cut_low = any(lo < low for lo, _ in t_bounds)
    cut_high = any(hi > high for _, hi in t_bounds)
    if cut_low and cut_high:
        method = STUDENT_T_CUT_BOTH
    elif cut_high:
        method = STUDENT_T_CUT_HIGH
    else:
        method = STUDENT_T_CUT if low == 0 else STUDENT_T_CUT_LOW
    return method, [_clamped(lo, hi, within) for lo, hi in t_bounds]


def _clamped(lo: float, hi: float, within: Range) -> Tuple[float, float]:
    """Both bounds moved into ``within`` (monotone, so ``lo <= hi`` stays true)."""
    low, high = within
    return (low if lo < low else high if lo > high else lo,
            high if hi > high else low if hi < low else hi)


def _checked_range(within) -> Range:
    try:
        low, high = (float(v) for v in within)
    except (TypeError, ValueError):
        raise ValueError(f"a declared range is (low, high), got {within!r}") from None
    if not low <= high:  # also refuses NaN
        raise ValueError(f"a declared range needs low <= high, got ({low}, {high})")
    return low, high


def bootstrap_interval(values: Sequence[float],
                       levels: Sequence[float]) -> Tuple[str, List[Tuple[float, float]]]:
    """BCa bootstrap intervals of the mean (Efron 1987), from BOOTSTRAP_RESAMPLES resamples of
    the sorted values drawn with the fixed BOOTSTRAP_SEED; the percentile bootstrap when the bias
    correction or the acceleration is undefined. Every bound is a quantile of resampled means,
    so it lies within [min(values), max(values)]."""
    import numpy as np

    x = np.sort(np.asarray(values, dtype=float))  # sorted: the order of the runs does not matter
    n = len(x)
    rng = np.random.Generator(np.random.PCG64(BOOTSTRAP_SEED))
    means = np.empty(BOOTSTRAP_RESAMPLES)
    chunk = max(1, 1_000_000 // n)  # bounds the index array's memory for large groups
    for start in range(0, BOOTSTRAP_RESAMPLES, chunk):
        stop = min(start + chunk, BOOTSTRAP_RESAMPLES)
        means[start:stop] = x[rng.integers(0, n, size=(stop - start, n))].mean(axis=1)
    mean = x.mean()
    # Bias correction: the share of resampled means below the sample mean (ties count half).
    below = (np.sum(means < mean) + 0.5 * np.sum(means == mean)) / BOOTSTRAP_RESAMPLES
    # Acceleration from the jackknife means.
    jack = (x.sum() - x) / (n - 1)
    d = jack.mean() - jack
    scale = float(np.max(np.abs(d)))
    d = d / scale if scale > 0 else d  # a is scale-free; scaling keeps tiny values from underflow
    ss = float(np.sum(d * d))
    bounds: List[Tuple[float, float]] = []
    if 0.0 < below < 1.0 and ss > 0.0:
        z0 = _NORMAL.inv_cdf(float(below))
        a = float(np.sum(d ** 3)) / (6.0 * ss ** 1.5)
        for level in levels:
            alpha = (1.0 - level) / 2.0
            qs = []
            for z in (_NORMAL.inv_cdf(alpha), _NORMAL.inv_cdf(1.0 - alpha)):
                denominator = 1.0 - a * (z0 + z)
                if denominator <= 0.0:
                    break
                qs.append(_NORMAL.cdf(z0 + (z0 + z) / denominator))
            if len(qs) < 2:
                bounds = []
                break
            low, high = _within(np.quantile(means, qs), x)
            bounds.append((low, high))
        if bounds:
            return BOOTSTRAP_BCA, bounds
    for level in levels:
        alpha = (1.0 - level) / 2.0
        low, high = _within(np.quantile(means, [alpha, 1.0 - alpha]), x)
        bounds.append((low, high))
    return BOOTSTRAP_PERCENTILE, bounds


def _within(quantiles, x) -> Tuple[float, float]:
    """A mean of values in [min, max] lies in [min, max]; floating-point rounding of the
    resampled means may overstep it by an ulp, which must not put a bound outside the range."""
    low, high = (min(max(float(q), float(x[0])), float(x[-1])) for q in quantiles)
    return low, high


# ---------------------------------------------------------------------------------------------
# summaries

NonNegative = Union[None, bool, Collection[str]]
Within = Union[None, Range, Mapping[str, Range]]


def summarize(df: "pd.DataFrame", by: Optional[Sequence[str]] = None,
              metrics: Optional[Sequence[str]] = None,
              levels: Sequence[float] = LEVELS, include_incomplete: bool = False,
              non_negative: NonNegative = None, within: Within = None) -> "pd.DataFrame":
    """One row per (group, metric): runs, complete, n, mean, std, ci<L>_low / ci<L>_high per
    level, and ci_method.

    ``by`` defaults to the frame's ``label.*`` columns (the sweep's axes), ``metrics`` to the
    default metrics the frame has. Groups keep the order in which they first appear; a group
    whose runs all failed or are incomplete is kept, with n = 0. ``runs`` counts the runs
    attempted (failed included), ``complete`` the usable ones (status ok and complete), ``n``
    the values the statistics use: complete runs only, unless ``include_incomplete`` (then every
    ok run). The range each metric's interval keeps to: ``within`` (low, high) for every
    metric, or a mapping from metric to (low, high) for the metrics it names; for the others,
    ``non_negative``: None uses the declared ranges (:func:`declared_range`); True or False
    applies [0, inf) or no range to every metric; a collection names the metrics to treat as
    non-negative.
    ``result.attrs``: ``runs``, ``complete``, ``failed``, ``incomplete``, ``include_incomplete``
    and ``left_out`` (one dict per run not used: sweep, seed, run_key, labels, status, reason).
    """
    import pandas as pd

    from tcpenergy.experiments.completeness import left_out

    by = list(label_columns(df) if by is None else by)
    metrics = [m for m in DEFAULT_METRICS if m in df.columns] if metrics is None else list(metrics)
    missing = [c for c in by + metrics if c not in df.columns]
    if missing:
        raise KeyError(f"no column {missing[0]!r} in the runs frame")
    good = usable(df)
    used = ok(df) if include_incomplete else good
    n_failed = int((~ok(df)).sum())
    dropped = left_out(df)
    if include_incomplete:
        dropped = dropped[dropped["status"] == "failed"]
    attrs = dict(runs=int(len(df)), complete=int(good.sum()), failed=n_failed,
                 incomplete=int(len(df) - good.sum()) - n_failed,
                 include_incomplete=bool(include_incomplete),
                 left_out=dropped.to_dict("records"))
    ci_columns = [f"{level_name(lv)}_{side}" for lv in levels for side in ("low", "high")]
    columns = by + ["metric", "runs", "complete", "n", "mean", "std"] + ci_columns + ["ci_method"]
    if not metrics or df.empty:
        out = pd.DataFrame(columns=columns)
        out.attrs.update(attrs)
        return out
    keys = ([df[c].map(hashable).rename(c) for c in by] if by
            else [pd.Series(0, index=df.index, name="_all")])
    group = df.groupby(keys, sort=False, dropna=False).ngroup().to_numpy()
    firsts = pd.Series(range(len(df))).groupby(group, sort=True).first().to_numpy()
    labels = pd.DataFrame({k.name: k.to_numpy()[firsts] for k in keys}) if by else pd.DataFrame(
        index=range(len(firsts)))
    runs = pd.Series(1, index=range(len(df))).groupby(group).sum().to_numpy()
    complete = pd.Series(good.to_numpy().astype(int)).groupby(group).sum().to_numpy()
    parts = []
    for order, metric in enumerate(metrics):
        values = pd.to_numeric(df[metric], errors="coerce").astype(float).to_numpy(copy=True)
        values[~used.to_numpy()] = math.nan
        series = pd.Series(values)
        agg = series.groupby(group).agg(["count", "mean", "std"])
        part = labels.copy()
        part["metric"] = metric
        part["runs"], part["complete"] = runs, complete
        part["n"] = agg["count"].to_numpy().astype(int)
        part["mean"], part["std"] = agg["mean"].to_numpy(), agg["std"].to_numpy()
        methods, bounds = _intervals(part, values, group, levels,
                                     _declared(metric, non_negative, within))
        part["ci_method"] = methods
        for i, level in enumerate(levels):
            part[f"{level_name(level)}_low"] = bounds[:, i, 0]
            part[f"{level_name(level)}_high"] = bounds[:, i, 1]
        part["_group"], part["_metric"] = range(len(part)), order
        parts.append(part)
    out = pd.concat(parts, ignore_index=True).sort_values(["_group", "_metric"], kind="stable")
    out = out[columns].reset_index(drop=True)
    out.attrs.update(attrs)
    return out


def _intervals(part: "pd.DataFrame", values, group, levels: Sequence[float], within: Range):
    """Per row of ``part`` (one per group): the method and the (low, high) bounds per level.
    Student-t from the group's n, mean and std; the rows where that would put a bound outside
    the metric's declared range ``within`` are redone from the group's values."""
    import numpy as np

    n, mean, std = part["n"].to_numpy(), part["mean"].to_numpy(), part["std"].to_numpy()
    bounds = np.full((len(part), len(levels), 2), np.nan)
    methods = np.where(n >= 2, STUDENT_T, NO_INTERVAL).astype(object)
    for i, level in enumerate(levels):
        half = np.array([_half_width(level, k, s) for k, s in zip(n, std)])
        bounds[:, i, 0], bounds[:, i, 1] = mean - half, mean + half
    if within == UNBOUNDED:
        return list(methods), bounds
    low, high = within
    # Each group's range: the declared one without an end its mean lies beyond (_kept_range).
    lows = np.where(mean < low, -np.inf, low)
    highs = np.where(mean > high, np.inf, high)
    outside = (bounds[:, :, 0] < lows[:, None]) | (bounds[:, :, 1] > highs[:, None])
    redo = np.flatnonzero((n >= 2) & outside.any(axis=1))
    if len(redo):
        order = np.argsort(group, kind="stable")
        starts = np.searchsorted(group[order], redo)
        stops = np.searchsorted(group[order], redo, side="right")
        for row, start, stop in zip(redo, starts, stops):
            sample = values[order[start:stop]]
            method, rows = _fitted(sample[~np.isnan(sample)], float(mean[row]),
                                   [tuple(b) for b in bounds[row]], levels, within)
            methods[row], bounds[row] = method, rows
    return list(methods), bounds


def _declared(metric: str, non_negative: NonNegative, within: Within) -> Range:
    if within is not None:
        if not isinstance(within, Mapping):
            return _checked_range(within)
        if metric in within:
            return _checked_range(within[metric])
    if non_negative is None:
        return declared_range(metric)
    if isinstance(non_negative, bool):
        return NON_NEGATIVE if non_negative else UNBOUNDED
    return NON_NEGATIVE if metric in non_negative else UNBOUNDED


def _half_width(level: float, n: int, std: float) -> float:
    if n < 2 or std != std:
        return math.nan
    return t_quantile((1.0 + level) / 2.0, n - 1) * std / math.sqrt(n)
