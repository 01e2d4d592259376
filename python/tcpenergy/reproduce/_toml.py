"""A small TOML writer for the scenario and sweep files the reproductions write next to their results.

Only what those files need: nested tables of strings, numbers, booleans, lists and inline tables.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, List, Mapping

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def _key(key: str) -> str:
    return key if _BARE_KEY.match(key) else json.dumps(key)


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            raise ValueError(f"cannot write {value!r} as TOML")
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} as TOML")


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
            lines.append(f"{_key(k)} = {_value(v)}")
        if scalars:
            lines.append("")
        for k, v in tables:
            table(f"{prefix}.{_key(k)}" if prefix else _key(k), v)

    table("", data)
    return "\n".join(lines).rstrip() + "\n"
