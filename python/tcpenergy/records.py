"""Result records: flattening nested records into one level of dotted keys.

A network scenario's record lists its flows (``"flows": [{"name": "bulk", ...}, ...]``); a list
has no stable column names, so flattening keys each flow by its name: ``flows.bulk.goodput_bps``.
Node and link tables are keyed by name already: ``nodes.a.total_j``, ``links.a->b.dropped_queue``.
docs/units-and-scenarios.md "Network records" lists the keys; docs/experiments.md the columns.
"""

from __future__ import annotations

from typing import Any, Mapping

FLOWS = "flows"


def _named_tables(value: Any) -> bool:
    """A non-empty list of tables, each with a distinct string ``name``."""
    if not isinstance(value, list) or not value:
        return False
    if not all(isinstance(item, Mapping) and isinstance(item.get("name"), str) for item in value):
        return False
    return len({item["name"] for item in value}) == len(value)


def flows_by_name(record: Mapping[str, Any]) -> Mapping[str, Any]:
    """The record with its ``flows`` list as a table keyed by flow name (each flow without its
    ``name``, which is now the key); a record without such a list is returned as it is."""
    flows = record.get(FLOWS)
    if not _named_tables(flows):
        return record
    out = dict(record)
    out[FLOWS] = {flow["name"]: {k: v for k, v in flow.items() if k != "name"} for flow in flows}
    return out


def _flatten_tables(table: Mapping[str, Any], prefix: str) -> dict:
    flat: dict = {}
    for key, value in table.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            flat.update(_flatten_tables(value, dotted + "."))
        else:
            flat[dotted] = value
    return flat


def flatten(record: Mapping[str, Any], prefix: str = "") -> dict:
    """``{"flow": {"goodput_bps": 1}}`` -> ``{"flow.goodput_bps": 1}``.

    Non-empty tables are flattened; other values, lists included, stay values, except a
    record's top-level ``flows`` list, which is keyed by flow name (:func:`flows_by_name`).
    """
    return _flatten_tables(flows_by_name(record), prefix)
