"""Built-in device profiles: the figures each profile holds, where each comes from, which are estimates."""

from __future__ import annotations

import fnmatch
import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, List, Mapping, Optional

from tcpenergy._native import engine
from tcpenergy.records import flatten

# Keys of a profile that describe it rather than hold a figure.
_META_KEYS = ("name", "description", "estimated", "sources")
# Display order of a profile's sections; the engine's JSON has its keys sorted alphabetically.
_SECTION_ORDER = ("platform", "radio", "cpu")


@dataclass(frozen=True)
class Figure:
    key: str  # dotted, e.g. "radio.tx_power_w"
    value: Any
    source: Optional[str]
    estimated: bool


@lru_cache(maxsize=1)
def _catalog() -> dict:
    return json.loads(engine.profiles())


def names() -> List[str]:
    return sorted(_catalog())


def get(name: str) -> Optional[dict]:
    return _catalog().get(name)


def description(profile: Mapping[str, Any]) -> str:
    return str(profile.get("description", "")).strip()


def _matches(key: str, pattern: str) -> bool:
    # A pattern names a key, a glob of keys ("cpu.*"), or a table holding the key ("cpu.cycles").
    return fnmatch.fnmatchcase(key, pattern) or key.startswith(pattern + ".")


def _source(key: str, sources: Mapping[str, str]) -> Optional[str]:
    if key in sources:
        return sources[key]
    # Otherwise the most specific pattern or enclosing table that covers the key.
    covering = [pattern for pattern in sources if _matches(key, pattern)]
    return sources[max(covering, key=len)] if covering else None


def _display_rank(key: str) -> tuple:
    section = key.split(".", 1)[0]
    rank = _SECTION_ORDER.index(section) if section in _SECTION_ORDER else len(_SECTION_ORDER)
    # Within a section, its own figures come before those of its sub-tables (cpu.cycles.*).
    return rank, section, key.count("."), key


def _index_lists(value: Any) -> Any:
    """Lists of tables (an RRC machine's tail states) as tables keyed by position, so each of
    their figures is listed as ``radio.rrc.tail.0.duration``."""
    if isinstance(value, Mapping):
        return {key: _index_lists(v) for key, v in value.items()}
    if isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
        return {str(i): _index_lists(v) for i, v in enumerate(value)}
    return value


def figures(profile: Mapping[str, Any]) -> List[Figure]:
    """Every figure of a profile: platform, then radio, then CPU."""
    estimated = list(profile.get("estimated") or [])
    sources = dict(profile.get("sources") or {})
    body = _index_lists({key: value for key, value in profile.items() if key not in _META_KEYS})
    return [
        Figure(
            key=key,
            value=value,
            source=_source(key, sources),
            estimated=any(_matches(key, pattern) for pattern in estimated),
        )
        for key, value in sorted(flatten(body).items(), key=lambda item: _display_rank(item[0]))
    ]
