"""The starting profile: a built-in name, a profile TOML file or a dict, checked by the engine."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping, Union

from tcpenergy import devices
from tcpenergy._native import engine
from tcpenergy.calibration.errors import input_error
from tcpenergy.exceptions import ScenarioError
from tcpenergy.scenario import PathLike, read_toml_file, to_json

ProfileLike = Union[str, PathLike, Mapping[str, Any]]

_SLOT = "energy.sender"


def check_profile(data: Mapping[str, Any], where: str = "--profile") -> dict:
    """The profile as the engine reads it (every field, in the engine's order), or an error
    naming the offending key inside the profile."""
    if not isinstance(data, Mapping):
        raise input_error(where, f"a profile must be a table, got {type(data).__name__}")
    try:
        normalized = json.loads(engine.validate(to_json({"energy": {"sender": dict(data)}}, ""), []))
    except ScenarioError as exc:
        path = getattr(exc, "path", "") or ""
        inner = path[len(_SLOT) + 1:] if path.startswith(_SLOT + ".") else path
        message = getattr(exc, "message", None) or str(exc)
        raise input_error(where, f"{inner}: {message}" if inner else message) from None
    return normalized["energy"]["sender"]


def load_profile(spec: ProfileLike) -> dict:
    """A built-in profile by name, a profile TOML file, or a profile dict."""
    if isinstance(spec, Mapping):
        return check_profile(spec)
    text = str(spec)
    builtin = devices.get(text)
    if builtin is not None:
        return check_profile(builtin)
    path = Path(text)
    if path.is_file() or path.suffix.lower() == ".toml":
        data = read_toml_file(path, "profile", lambda message: input_error("--profile", message))
        return check_profile(data, f"--profile {path}")
    raise input_error("--profile", f"unknown profile {text!r}: not a built-in profile "
                                   f"({', '.join(devices.names())}) and not a profile file")
