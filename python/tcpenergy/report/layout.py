"""Which sweep axis goes where in a report: x axis, one line per value, one panel per condition.

The runs frame carries one ``label.<axis>`` column per sweep axis. The x axis is ``label.rtt``
when present, else the first numeric axis (numbers, or durations shown in ms), else the first
non-variant axis as categories. Lines are ``label.tcp.variant`` when present, else the first
remaining axis. Every other axis splits the runs into panels (conditions).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Tuple

import pandas as pd

LABEL_PREFIX = "label."
RTT = "label.rtt"
VARIANT = "label.tcp.variant"
MISSING = "-"

# The order the papers list variants in, so colours and tables stay stable across reports.
VARIANT_ORDER = ("tahoe", "reno", "newreno", "sack", "ecn-elfn", "e2tcp", "gaimd", "cubic")

# Every known axis's display name and unit lives here, so figures, tables and titles agree.
_NAMES = {"rtt": "RTT", "rtt_range": "RTT range", "loss": "loss", "path.mtu": "MTU",
          "tcp.variant": "variant", "tcp.stack": "TCP stack", "traffic.bytes": "transfer size",
          "energy.radio_policy": "radio policy", "energy.sender": "sender profile",
          "energy.receiver": "receiver profile"}
# RTT ranges carry their unit in each tick ("10-20 ms"), so the title has none.
_UNITS = {"rtt": "ms", "loss": "%", "path.mtu": "bytes", "traffic.bytes": "bytes"}
# A single path's or a network link's impairment probability (path.forward..., links.3.forward...).
_IMPAIRMENT_P = re.compile(r"(?:path|links\.\d+)\.(forward|reverse)\.impairments\.\d+\.p$")
# An 802.11 channel's or a pipe's impairment probability (channels.0.impairments.0.p, pipes.1...).
_MEDIUM_P = re.compile(r"(channels|pipes)\.(\d+)\.impairments\.\d+\.p$")
# The last part of a key in words, for keys without a name of their own.
_LEAF_NAMES = {"p": "loss", "mtu": "MTU", "rate": "rate", "delay": "delay", "queue": "queue",
               "variant": "variant", "bytes": "transfer size", "rts_threshold": "RTS threshold",
               "profile": "device profile", "radio_policy": "radio policy", "stack": "TCP stack",
               "every": "interval", "duration": "duration", "capacity": "battery capacity",
               "min_rto": "minimum RTO", "max_rto": "maximum RTO", "initial_rto": "initial RTO",
               "initial_window": "initial window", "receive_buffer": "receive buffer",
               "initial_ssthresh": "initial ssthresh"}
_CONTAINERS = {"links": "link", "channels": "channel", "pipes": "pipe", "flows": "flow", "nodes": "node"}
_RANGE = re.compile(r"^\s*\[?\s*([0-9.]+)\s*[,-]\s*([0-9.]+)\s*\]?\s*(ms)?\s*$")
_DURATION = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(ns|us|µs|ms|s|min|h)\s*$")
_MS_PER_UNIT = {"ns": 1e-6, "us": 1e-3, "µs": 1e-3, "ms": 1.0, "s": 1e3, "min": 6e4, "h": 3.6e6}


@dataclass(frozen=True)
class Layout:
    x: Optional[str]            # label column on the x axis (None: a single point per line)
    line: Optional[str]         # label column giving one line per value (None: one line)
    panels: Tuple[str, ...]     # label columns whose combinations are the panels (conditions)


def label_columns(runs: pd.DataFrame) -> List[str]:
    return [c for c in runs.columns if c.startswith(LABEL_PREFIX)]


def infer_layout(runs: pd.DataFrame) -> Layout:
    labels = label_columns(runs)
    line = VARIANT if VARIANT in labels else None
    candidates = [c for c in labels if c != line]
    x = RTT if RTT in candidates else next(
        (c for c in candidates if is_numeric_axis(runs[c])), candidates[0] if candidates else None)
    if line is None:
        line = next((c for c in labels if c != x), None)
    return Layout(x=x, line=line, panels=tuple(c for c in labels if c not in (x, line)))


def normalize_labels(runs: pd.DataFrame) -> pd.DataFrame:
    """Label values that can be grouped by: a list or table (a whole impairment list swept as one
    axis) becomes its JSON text; a label a run lacks (a store holding sweeps with different axes)
    becomes ``MISSING``."""
    columns = {}
    for column in label_columns(runs):
        values = runs[column]
        if values.map(lambda v: isinstance(v, (list, dict))).any():
            values = values.map(lambda v: json.dumps(v, sort_keys=True)
                                if isinstance(v, (list, dict)) else v)
        if values.isna().any():
            values = values.astype(object).where(values.notna(), MISSING)
        if values is not runs[column]:
            columns[column] = values
    return runs.assign(**columns) if columns else runs


def duration_ms(value: Any) -> Optional[float]:
    """``"15ms"`` -> 15.0, ``"7500us"`` -> 7.5; None when not a duration string."""
    if not isinstance(value, str):
        return None
    match = _DURATION.match(value)
    return float(match.group(1)) * _MS_PER_UNIT[match.group(2)] if match else None


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and not math.isnan(value)


def _values(series: pd.Series) -> list:
    return [v for v in series.tolist() if v is not None and not (isinstance(v, float) and math.isnan(v))]


def is_duration_axis(series: pd.Series) -> bool:
    values = _values(series)
    return bool(values) and all(duration_ms(v) is not None for v in values)


def is_numeric_axis(series: pd.Series) -> bool:
    values = _values(series)
    return bool(values) and (all(_is_number(v) for v in values) or is_duration_axis(series))


def numeric_values(series: pd.Series) -> pd.Series:
    """An axis as floats (durations in ms), for plotting and sorting."""
    if is_duration_axis(series):
        return series.map(duration_ms).astype(float)
    return pd.to_numeric(series, errors="coerce").astype(float)


def ordered_values(series: pd.Series) -> list:
    """Distinct values of an axis in display order: numeric order, paper order for variants,
    else first appearance."""
    values = list(dict.fromkeys(_values(series)))
    if values and all(_range_text(v) is not None for v in values):
        return sorted(values, key=lambda v: tuple(float(x) for x in _range_text(v)[:-3].split("-")))
    if is_numeric_axis(series):
        return sorted(values, key=lambda v: duration_ms(v) if isinstance(v, str) else float(v))
    if series.name == VARIANT:
        rank = {name: i for i, name in enumerate(VARIANT_ORDER)}
        return sorted(values, key=lambda v: (rank.get(v, len(rank)), values.index(v)))
    return values


def _key(column: str) -> str:
    return column[len(LABEL_PREFIX):] if column.startswith(LABEL_PREFIX) else column


def is_loss_axis(column: str) -> bool:
    """A loss probability: ``label.loss`` or an impairment's ``p`` (stored as 0..1, shown in %)."""
    key = _key(column)
    return key == "loss" or bool(_IMPAIRMENT_P.match(key)) or bool(_MEDIUM_P.match(key))


def axis_name(column: str) -> str:
    """``label.path.mtu`` -> ``MTU``; impairment probabilities read as loss rates."""
    key = _key(column)
    match = _IMPAIRMENT_P.match(key)
    if match:
        prefix = key.split(".")
        where = f"link {prefix[1]} " if prefix[0] == "links" else ""
        return f"{where}{'loss' if match.group(1) == 'forward' else 'reverse loss'}"
    match = _MEDIUM_P.match(key)
    if match:
        return f"{_CONTAINERS[match.group(1)]} {match.group(2)} loss"
    return _NAMES.get(key) or _key_in_words(key)


def _key_in_words(key: str) -> str:
    """A scenario key read out: ``links.2.forward.delay`` -> ``link 2 forward delay``,
    ``nodes.a.profile`` -> ``node a device profile``; keys that are not dotted stay as they are."""
    parts = key.split(".")
    if len(parts) == 1:
        return key
    words: List[str] = []
    i = 0
    while i < len(parts):
        part = parts[i]
        if part in _CONTAINERS and i + 1 < len(parts):
            words.append(f"{_CONTAINERS[part]} {parts[i + 1]}")
            i += 2
            continue
        if part in ("path", "tcp", "traffic", "energy", "impairments") or part.isdigit():
            i += 1
            continue
        words.append(_LEAF_NAMES.get(part, part.replace("_", " ")) if i == len(parts) - 1 else part.replace("_", " "))
        i += 1
    return " ".join(words) or key


def axis_unit(column: str, series: Optional[pd.Series] = None) -> str:
    """The unit an axis is shown in ("" when it has none): durations in ms, loss in %."""
    if is_loss_axis(column):
        return "%"
    if series is not None and is_duration_axis(series):
        return "ms"
    return _UNITS.get(_key(column), "")


def axis_scale(column: str) -> float:
    """Stored value * scale = value in the axis's unit (loss: probability -> %)."""
    return 100.0 if is_loss_axis(column) else 1.0


def axis_title(column: str, series: Optional[pd.Series] = None) -> str:
    """Axis title with its unit, e.g. ``RTT (ms)``, ``loss (%)``, ``MTU (bytes)``."""
    name, unit = axis_name(column), axis_unit(column, series)
    return f"{name} ({unit})" if unit else name


def _range_text(value: Any) -> Optional[str]:
    """An RTT range as ``10-20 ms`` from ``[10, 20]``, ``"[10, 20]"`` or ``"10-20 ms"``."""
    if isinstance(value, (list, tuple)) and len(value) == 2 and all(map(_is_number, value)):
        low, high = value
    elif isinstance(value, str) and _RANGE.match(value):
        low, high = (float(g) for g in _RANGE.match(value).groups()[:2])
    else:
        return None
    return f"{float(low):g}-{float(high):g} ms"


def format_value(column: str, value: Any) -> str:
    """A label value for panel titles and tables: loss 0.05 -> ``5 %``, RTT range ``10-20 ms``,
    else as written."""
    if is_loss_axis(column) and _is_number(value):
        return f"{value * 100:g} %"
    if _key(column) == "rtt_range":
        text = _range_text(value)
        if text is not None:
            return text
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def tick_text(column: str, value: Any) -> str:
    """A tick label in the axis's unit (the unit itself is in the axis title): loss 0.05 -> ``5``,
    a duration ``"15ms"`` -> ``15``; an RTT range keeps its unit (``10-20 ms``) as each tick is
    a range, not a point."""
    if is_loss_axis(column) and _is_number(value):
        return f"{value * 100:g}"
    ms = duration_ms(value)
    if ms is not None:
        return f"{ms:g}"
    return format_value(column, value)


def condition_title(columns: Sequence[str], values: Sequence[Any]) -> str:
    """``MTU 512 · loss 1 %``; a free-text condition column (``label.condition``) is its value."""
    return " · ".join(format_value(c, v) if _key(c) == "condition"
                      else f"{axis_name(c)} {format_value(c, v)}" for c, v in zip(columns, values))


def conditions(runs: pd.DataFrame, columns: Sequence[str]) -> List[tuple]:
    """Every combination of the condition columns' values present in the runs, in display order."""
    if not columns:
        return [()]
    present = set(runs[list(columns)].itertuples(index=False, name=None))
    combos: List[tuple] = [()]
    for column in columns:
        combos = [c + (v,) for c in combos for v in ordered_values(runs[column])]
    return [c for c in combos if c in present]


def select(runs: pd.DataFrame, columns: Sequence[str], values: Sequence[Any]) -> pd.DataFrame:
    mask = pd.Series(True, index=runs.index)
    for column, value in zip(columns, values):
        mask &= runs[column] == value
    return runs[mask]
