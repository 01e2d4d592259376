"""Delivery-opportunity traces named by file, in Mahimahi's format: wherever a link direction takes
``trace`` (``path.forward.trace``, ``path.reverse.trace``, ``links.N.trace``,
``links.N.forward.trace``, ``links.N.reverse.trace``), a string is the path of a trace file. The
file is read here and handed to the engine as an inline table ``{ name = FILE NAME, ms = [...] }``,
so results depend on what the file holds (docs/models/network.md, "Trace-driven links").

A trace file holds one whole number of milliseconds per line (traces/README of the mahimahi
repository); this module turns its lines into numbers, naming the line of any that is not one, and
the engine checks the rest (order, an empty trace, a last timestamp of 0). A path in a scenario file
is relative to that file; one given as an override or in a scenario dict, to the current directory.
"""

from __future__ import annotations

import copy
import os
import re
from pathlib import Path
from typing import Any, Iterator, Mapping, Optional, Tuple

from tcpenergy.exceptions import read_scenario_file, scenario_error

# Bytes one opportunity carries (Mahimahi's PACKET_SIZE: a 1500-byte IP packet and its 4-byte TUN
# header); the engine's config::trace::OPPORTUNITY_BYTES.
OPPORTUNITY_BYTES = 1504

# Where a link direction's trace may be set.
_SLOT = re.compile(r"^(path\.(forward|reverse)|links\.\d+(\.(forward|reverse))?)\.trace$")
_LINE = re.compile(r"\d+")


def _is_path(value: Any) -> bool:
    return isinstance(value, (str, os.PathLike))


def read_trace_file(path: Path, key: str) -> dict:
    """The trace in ``path`` as the engine takes it; ScenarioError at ``key`` naming the file
    (and the line) when it is missing, unreadable, or has a line that is not a whole number of
    milliseconds."""
    text = read_scenario_file(path, key, "trace")
    ms = []
    for number, line in enumerate(text.splitlines(), start=1):
        word = line.strip()
        if not _LINE.fullmatch(word):
            what = "is empty" if not word else f"{word!r} is not a whole number of milliseconds >= 0"
            raise scenario_error(key, f"trace file {path}, line {number}: {what} (one timestamp per line, "
                                      "in Mahimahi's format)")
        ms.append(int(word))
    return {"name": path.name, "ms": ms}


def _slots(value: Any, at: str) -> Iterator[Tuple[dict, str, str]]:
    """(table, key, dotted path) of every trace given as a path under ``value``, which sits at
    ``at``; inline traces are not descended into."""
    if isinstance(value, dict):
        for key, item in value.items():
            here = f"{at}.{key}" if at else str(key)
            if key == "trace":
                if _is_path(item) and _SLOT.match(here):
                    yield value, key, here
            else:
                yield from _slots(item, here)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _slots(item, f"{at}.{i}" if at else str(i))


def resolve_in_document(doc: Any, base_dir: Optional[Path], prefix: str = "") -> Any:
    """``doc`` with every trace given as a path replaced by the file's trace (paths relative to
    ``base_dir``, or the current directory when None). ``prefix``: where ``doc`` sits, for errors."""
    for table, key, dotted in list(_slots(doc, "")):
        path = Path(table[key])
        if base_dir is not None and not path.is_absolute():
            path = base_dir / path
        table[key] = read_trace_file(path, prefix + dotted)
    return doc


def resolve_override(key: str, value: Any) -> Any:
    """The value of override ``key`` with any trace path in it read (relative to the current
    directory): ``path.forward.trace=x.down``, or a whole ``path``, ``links.N`` ... table."""
    if not isinstance(key, str):
        return value
    if _SLOT.match(key) and _is_path(value):
        return read_trace_file(Path(value), key)
    if not isinstance(value, (dict, list)) or not any(True for _ in _slots(value, key)):
        return value
    value = copy.deepcopy(value)
    for table, slot, dotted in list(_slots(value, key)):
        table[slot] = read_trace_file(Path(table[slot]), dotted)
    return value


def mean_rate_bps(trace: Mapping[str, Any]) -> float:
    """An inline trace's mean rate (bit/s): the bytes of every opportunity over its period."""
    ms = trace.get("ms") or []
    period = ms[-1] if ms else 0
    return len(ms) * OPPORTUNITY_BYTES * 8 * 1000 / period if period else 0.0


def label(trace: Any) -> str:
    """A trace as one value in a table: its name, or the path it was given as."""
    if isinstance(trace, Mapping):
        return str(trace.get("name") or "inline trace")
    return os.fspath(trace) if _is_path(trace) else str(trace)


def labelled(doc: Mapping[str, Any]) -> Mapping[str, Any]:
    """``doc`` with each link direction's inline trace replaced by its :func:`label` (for flat
    tables of settings, where a trace's thousands of timestamps would be as many columns). Tables
    on the way are copied; ``doc`` is left as it is."""
    if not isinstance(doc, Mapping):
        return doc

    def walk(value: Any, at: str) -> Any:
        if isinstance(value, Mapping):
            out = {}
            for k, v in value.items():
                here = f"{at}.{k}" if at else str(k)
                out[k] = label(v) if k == "trace" and _SLOT.match(here) else walk(v, here)
            return out
        if isinstance(value, list):
            return [walk(v, f"{at}.{i}" if at else str(i)) for i, v in enumerate(value)]
        return value

    return walk(doc, "")
