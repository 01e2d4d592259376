"""Number formatting with units, tolerant of missing values."""

from __future__ import annotations

from typing import Any

MISSING = "-"


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def si(value: Any, unit: str, decimals: int = 2) -> str:
    """``1_870_000, "bit/s"`` -> ``"1.87 Mbit/s"``."""
    if not _is_number(value):
        return MISSING if value is None else str(value)
    magnitude = abs(value)
    for factor, prefix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if magnitude >= factor:
            return f"{value / factor:.{decimals}f} {prefix}{unit}"
    return f"{value:.{decimals}f} {unit}"


def fixed(value: Any, unit: str = "", decimals: int = 3) -> str:
    if not _is_number(value):
        return MISSING if value is None else str(value)
    text = f"{value:,.{decimals}f}"
    return f"{text} {unit}" if unit else text


def count(value: Any) -> str:
    if not _is_number(value):
        return MISSING if value is None else str(value)
    return f"{value:,}" if isinstance(value, int) else f"{value:,.0f}"


def plain(value: Any) -> str:
    if value is None:
        return MISSING
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        # Whole numbers such as 500e6 Hz read better written out than as 5e+08.
        return f"{int(value):,}" if value.is_integer() and abs(value) < 1e15 else f"{value:g}"
    return str(value)
