"""Scenarios: reading TOML, turning values into the JSON the engine takes, and the Scenario object."""

from __future__ import annotations

import copy
import datetime
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence, Tuple, Union

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python < 3.11 only
    import tomli as tomllib

from tcpenergy._native import engine
from tcpenergy.exceptions import scenario_error

PathLike = Union[str, "os.PathLike[str]"]
Override = Tuple[str, Any]


@dataclass(frozen=True)
class Scenario:
    """A validated scenario.

    ``data`` is the scenario as written (a dict shaped like the TOML document), ``normalized`` the
    engine's view of it with every default filled in, ``source`` the file it came from, if any.
    """

    data: dict
    name: str
    source: Optional[Path] = None
    normalized: dict = field(default_factory=dict, repr=False, compare=False)

    def to_json(self) -> str:
        return to_json(self.data, "")


def read_toml_file(path: PathLike, what: str, make_error: Callable[[str], Exception]) -> dict:
    """Read a TOML file; I/O and syntax problems become ``make_error(message)``."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise make_error(f"{what} file not found: {path}") from None
    except IsADirectoryError:
        raise make_error(f"{what} path is a directory, not a file: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise make_error(f"cannot read {what} file {path}: {exc}") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        # The decoder's message carries "(at line L, column C)".
        raise make_error(f"{path}: invalid TOML: {exc}") from None


def read_toml(path: PathLike) -> dict:
    """Read a scenario file; I/O and syntax problems become ScenarioError."""
    return read_toml_file(path, "scenario", lambda message: scenario_error("", message))


def parse_cli_value(text: str) -> Any:
    """A ``--set`` value: a TOML value when it parses as one, else the bare text as a string.

    So ``--set tcp.variant=newreno`` and ``--set tcp.variant='"newreno"'`` mean the same.
    """
    try:
        return tomllib.loads("v = " + text)["v"]
    except tomllib.TOMLDecodeError:
        return text


def parse_assignment(text: str) -> Tuple[str, Any]:
    """Split ``dotted.key=VALUE`` into the key and its parsed value."""
    key, sep, value = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise scenario_error("", f"--set expects dotted.key=VALUE, got {text!r}")
    return key, parse_cli_value(value.strip())


def check_overrides(overrides: Sequence[Override], what: str = "override") -> None:
    """Refuse two overrides of which one sets a part of what the other sets (``a.b`` and
    ``a.b.0.p``): applied in order, the later would undo or amend the earlier, and the run's
    ``parameters`` would list a value that did not run. A key given twice is not refused: the
    last value runs and is the one recorded. ``what`` names an override in the message
    (``"--set"`` on the command line)."""
    keys = list(dict.fromkeys(key for key, _ in overrides if isinstance(key, str)))
    for outer in keys:
        for inner in keys:
            if inner.startswith(outer + "."):
                raise scenario_error("", f"{what} {inner} and {what} {outer} overlap ({outer} sets "
                                         f"it too); give either {outer} or keys inside it, not "
                                         "both")


def _json_default(value: Any) -> Any:
    # TOML has date and time values; the engine reads text.
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    raise TypeError(type(value).__name__)


def to_json(value: Any, path: str) -> str:
    """JSON text of a scenario value; a value JSON cannot carry is an error at ``path``."""
    try:
        return json.dumps(value, default=_json_default, allow_nan=False)
    except TypeError as exc:
        raise scenario_error(path, f"a value of type {exc} cannot be used in a scenario") from None
    except ValueError:
        raise scenario_error(path, "NaN and infinite numbers are not allowed") from None


def encode_overrides(overrides: Iterable[Override]) -> list:
    """(dotted key, Python value) pairs as the engine takes them: (dotted key, JSON text)."""
    from tcpenergy import profile_files, trace_files

    encoded = []
    for key, value in overrides:
        if not isinstance(key, str) or not key:
            raise scenario_error("", f"override keys must be non-empty dotted strings, got {key!r}")
        value = trace_files.resolve_override(key, profile_files.resolve_override(key, value))
        encoded.append((key, to_json(value, key)))
    return encoded


def _scenario_name(data: Mapping, normalized: Mapping, source: Optional[Path]) -> str:
    name = data.get("name") or normalized.get("name")
    if isinstance(name, str) and name:
        return name
    return source.stem if source is not None else "scenario"


def make_scenario(data: Mapping, source: Optional[Path] = None) -> Scenario:
    """Validate ``data`` with the engine and wrap it in a Scenario."""
    if not isinstance(data, Mapping):
        raise scenario_error("", f"a scenario must be a table (dict), got {type(data).__name__}")
    from tcpenergy import profile_files, trace_files

    data = copy.deepcopy(dict(data))
    # Profiles and traces named by file are read now: relative to the scenario file, else the
    # current directory.
    base_dir = source.parent if source is not None else None
    profile_files.resolve_in_document(data, base_dir)
    trace_files.resolve_in_document(data, base_dir)
    if source is not None and "name" not in data:
        # A scenario file without a name is named after the file, so its records say where they came from.
        data["name"] = source.stem
    normalized = json.loads(engine.validate(to_json(data, ""), []))
    return Scenario(data=data, name=_scenario_name(data, normalized, source), source=source,
                    normalized=normalized)


def validate(scenario: Scenario, overrides: Sequence[Override] = ()) -> dict:
    """The normalized scenario after overrides, as the engine will run it."""
    return json.loads(engine.validate(scenario.to_json(), encode_overrides(overrides)))
