"""Result records: flattening nested records into one level of dotted keys."""

from __future__ import annotations

from typing import Any, Mapping


def flatten(record: Mapping[str, Any], prefix: str = "") -> dict:
    """``{"flow": {"goodput_bps": 1}}`` -> ``{"flow.goodput_bps": 1}``.

    Only tables are flattened; lists (e.g. per-flow results of multi-flow topologies) stay values.
    """
    flat: dict = {}
    for key, value in record.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            flat.update(flatten(value, dotted + "."))
        else:
            flat[dotted] = value
    return flat
