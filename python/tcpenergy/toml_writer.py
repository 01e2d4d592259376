"""A small TOML writer: the scenario and sweep files the reproductions write next to their results,
the topology files and calibrated profiles.

Only what those files need: nested tables of strings, numbers, booleans, lists and inline tables.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, List, Mapping

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def key(name: str) -> str:
    """``name`` as a TOML key: bare when it can be, else quoted."""
    return name if _BARE_KEY.match(name) else json.dumps(name)


def value(item: Any) -> str:
    """``item`` as TOML text: a scalar, an inline table or an array."""
    if isinstance(item, bool):
        return "true" if item else "false"
    if isinstance(item, int):
        return str(item)
    if isinstance(item, float):
        if math.isnan(item) or math.isinf(item):
            raise ValueError(f"cannot write {item!r} as TOML")
        return repr(item)
    if isinstance(item, str):
        return json.dumps(item, ensure_ascii=False)
    if isinstance(item, Mapping):
        return "{ " + ", ".join(f"{key(k)} = {value(v)}" for k, v in item.items()) + " }"
    if isinstance(item, (list, tuple)):
        return "[" + ", ".join(value(v) for v in item) + "]"
    raise TypeError(f"cannot write {type(item).__name__} as TOML")


def dumps(data: Mapping[str, Any], header: str = "") -> str:
    """TOML text for ``data``; mappings become [tables], everything else inline."""
    lines: List[str] = [f"# {line}".rstrip() for line in header.splitlines()]
    if lines:
        lines.append("")

    def table(prefix: str, mapping: Mapping[str, Any]) -> None:
        scalars = [(k, v) for k, v in mapping.items() if not isinstance(v, Mapping)]
        tables = [(k, v) for k, v in mapping.items() if isinstance(v, Mapping)]
        if prefix and (scalars or not tables):
            lines.append(f"[{prefix}]")
        for k, v in scalars:
            lines.append(f"{key(k)} = {value(v)}")
        if scalars:
            lines.append("")
        for k, v in tables:
            table(f"{prefix}.{key(k)}" if prefix else key(k), v)

    table("", data)
    return "\n".join(lines).rstrip() + "\n"
