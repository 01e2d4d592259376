"""The calibrated profile: the starting profile with the fitted figures, their sources and
intervals, as a dict and as TOML text in the layout of the built-in profile files."""

from __future__ import annotations

import copy
import json
import math
import sys
from typing import Any, Dict, List, Mapping, Sequence, Tuple

from tcpenergy.calibration.design import with_figures
from tcpenergy.calibration.keys import is_estimated, profile_keys
from tcpenergy import toml_writer

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python < 3.11 only
    import tomli as tomllib

# Significant digits of a written figure: far below any meter's accuracy, short enough to read.
DIGITS = 6


def rounded(value: float) -> float:
    return float(f"{value:.{DIGITS}g}")


def number(value: float) -> str:
    return f"{value:.{DIGITS}g}"


def source_text(label: str, n_fit: int, n_holdout: int, interval: Tuple[float, float],
                start: float, start_profile: str) -> str:
    low, high = interval
    ci = (f"95% CI [{number(low)}, {number(high)}] (case bootstrap)"
          if math.isfinite(low) and math.isfinite(high)
          else "95% CI not determined (no bootstrap resample determined every figure)")
    return (f"calibrated: tcpenergy calibrate on {label} ({n_fit} fit rows, {n_holdout} held out); "
            f"{ci}; starting value {number(start)} from {start_profile}")


def calibrated_profile(start: Mapping[str, Any], fitted: Mapping[str, float], sources: Mapping[str, str],
                       name: str, label: str) -> dict:
    """``start`` with the fitted figures, a sources entry per fitted key, each fitted key listed as
    an estimate (a calibrated figure is not a published one), and the new name."""
    profile = with_figures(start, fitted)
    profile["name"] = name
    keys = list(fitted)
    description = str(start.get("description", "")).rstrip(". ")
    note = f"{', '.join(keys)} calibrated to measurements in {label} (tcpenergy calibrate)"
    profile["description"] = f"{description}; {note}" if description else note
    estimated: List[str] = list(start.get("estimated") or [])
    for key in keys:
        if not is_estimated(start, key):
            estimated.append(key)
    profile["estimated"] = estimated
    merged = dict(start.get("sources") or {})
    merged.update(sources)
    # In the order of the figures, as in the built-in profile files.
    order = {key: i for i, key in enumerate(profile_keys(start))}
    profile["sources"] = dict(sorted(merged.items(), key=lambda item: (order.get(item[0], len(order)), item[0])))
    return copy.deepcopy(profile)


def to_toml(profile: Mapping[str, Any], header: Sequence[str] = ()) -> str:
    """TOML text of a profile; the text is read back and compared, so it loads as written."""
    text = toml_writer.dumps(profile, header="\n".join(header))
    if tomllib.loads(text) != json.loads(json.dumps(profile)):
        raise AssertionError("the calibrated profile's TOML does not read back as written")
    return text


def header_lines(label: str, keys: Sequence[str], start_profile: str, method: str) -> List[str]:
    return [
        f"Device profile calibrated by `tcpenergy calibrate` from {label}, starting from "
        f"{start_profile}.",
        f"Fitted: {', '.join(keys)}. Intervals: {method}.",
        "See docs/calibration.md.",
    ]


def figures_dict(keys: Sequence[str], values: Sequence[float]) -> Dict[str, float]:
    return {key: rounded(float(value)) for key, value in zip(keys, values)}
