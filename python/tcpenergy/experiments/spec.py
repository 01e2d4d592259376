"""The sweep file: a base scenario, axes whose cartesian product gives the cells, and seeds.

    base = "../scenarios/quickstart.toml"   # relative to the sweep file
    repetitions = 10                        # seeds 1..10, unless seeds = [...] is given
    [axes]                                  # cartesian product, in file order
    "tcp.variant" = ["reno", "sack"]
    rtt = ["15ms", "40ms"]                  # both one-way delays = rtt / 2
    [set]                                   # fixed overrides for every run
    "traffic.bytes" = "1MB"

Everything wrong with a sweep file is found here, before anything runs or any store is created,
and reported as one SweepSpecError naming the field.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from pathlib import Path
from typing import Annotated, Any, Dict, List, Literal, Mapping, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, StrictInt, ValidationError

from tcpenergy.api import load_scenario
from tcpenergy.exceptions import ScenarioError
from tcpenergy.experiments.errors import SweepSpecError
from tcpenergy.scenario import PathLike, Scenario, make_scenario, read_toml_file, validate

RTT = "rtt"
DELAY_KEYS = ("path.forward.delay", "path.reverse.delay")
SWEEP_KEYS = ("base", "name", "repetitions", "seeds", "axes", "set")
# The store keeps seeds as a signed 64-bit integer.
MAX_SEED = 2**63 - 1


@dataclass(frozen=True)
class RunSpec:
    """One run of a sweep: cell ``cell`` of the grid with one seed.

    ``overrides`` maps dotted scenario keys to values (``rtt`` already expanded into both delays);
    ``labels`` maps each axis to its value as written in the sweep file.
    """

    cell: int
    seed: int
    overrides: Dict[str, Any]
    labels: Dict[str, Any]


class SweepSpec(BaseModel):
    """A parsed sweep file. Build it with :func:`load_sweep`, which also checks it against the
    engine."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)

    base: Union[str, Dict[str, Any]]
    name: Optional[str] = None
    repetitions: StrictInt = Field(1, ge=1)
    seeds: Optional[List[StrictInt]] = Field(None, min_length=1)
    axes: Dict[str, Annotated[List[Any], Field(min_length=1)]] = Field(default_factory=dict)
    fixed: Dict[str, Any] = Field(default_factory=dict, alias="set")
    # "emulated": each run is the machine's own TCP in kernel mode (docs/emulation.md), one at
    # a time; "simulated" (the default): the engine's.
    mode: Literal["simulated", "emulated"] = "simulated"

    _source: Optional[Path] = PrivateAttr(None)
    _base: Optional[Scenario] = PrivateAttr(None)

    @property
    def source(self) -> Optional[Path]:
        """The sweep file, when the spec came from one."""
        return self._source

    @property
    def sweep_name(self) -> str:
        if self.name:
            return self.name
        return self._source.stem if self._source is not None else "sweep"

    @property
    def seed_list(self) -> List[int]:
        return list(self.seeds) if self.seeds is not None else list(range(1, self.repetitions + 1))

    @property
    def base_scenario(self) -> Scenario:
        if self._base is None:
            self._base = _load_base(self)
        return self._base

    def default_store(self) -> Path:
        """``<sweep stem>.duckdb`` beside the sweep file (in the working directory without one)."""
        if self._source is not None:
            return self._source.with_suffix(".duckdb")
        return Path(f"{self.sweep_name}.duckdb")

    def cells(self) -> int:
        count = 1
        for values in self.axes.values():
            count *= len(values)
        return count


# ---------------------------------------------------------------------------------------------
# loading and checking


def load_sweep(source: Union[PathLike, Mapping[str, Any], SweepSpec]) -> SweepSpec:
    """Read a sweep file (or take a dict shaped like one) and check it; raises SweepSpecError."""
    if isinstance(source, SweepSpec):
        spec = source
    elif isinstance(source, Mapping):
        spec = _parse(source, None)
    else:
        path = Path(source)
        spec = _parse(_read_toml(path), path)
    _check(spec)
    return spec


def _read_toml(path: Path) -> dict:
    return read_toml_file(path, "sweep", lambda message: SweepSpecError("", message))


def _parse(data: Mapping[str, Any], path: Optional[Path]) -> SweepSpec:
    try:
        spec = SweepSpec.model_validate(dict(data))
    except ValidationError as exc:
        raise _from_pydantic(exc, path) from None
    spec._source = path
    return spec


def _field(loc: tuple) -> str:
    """A pydantic location as the field is written in TOML: ``axes."tcp.variant"``, ``seeds[2]``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif re.fullmatch(r"[A-Za-z0-9_-]+", str(part)):
            out += f".{part}" if out else str(part)
        else:
            out += f'."{part}"' if out else f'"{part}"'
    return out


def _from_pydantic(exc: ValidationError, path: Optional[Path]) -> SweepSpecError:
    err = exc.errors()[0]
    loc = tuple(p for p in err["loc"] if p not in ("str", "dict[str,any]"))
    kind = err["type"]
    if kind == "extra_forbidden":
        message = f"unknown sweep key; allowed keys: {', '.join(SWEEP_KEYS)}"
    elif kind == "missing":
        message = "required: the base scenario (a path relative to the sweep file, or a table)"
    elif loc and loc[0] == "base":
        message = "must be a scenario file path (relative to the sweep file) or a table"
    elif kind == "too_short" and loc and loc[0] == "axes":
        message = "an axis must list at least one value"
    elif kind == "list_type" and loc and loc[0] == "axes":
        message = f"an axis is a list of values, e.g. [1, 2]; got {err.get('input')!r}"
    elif kind == "too_short":
        message = "must list at least one seed"
    elif kind == "greater_than_equal" and loc == ("repetitions",):
        message = f"must be an integer >= 1, got {err['input']!r}"
    else:
        message = f"{err['msg']}, got {err.get('input')!r}"
    return _error(_field(loc), message, path)


def _error(field: str, message: str, path: Optional[Path]) -> SweepSpecError:
    return SweepSpecError(field, message, path)


def _check(spec: SweepSpec) -> None:
    """The checks pydantic cannot make: seeds, rtt values, and every key against the engine."""
    path = spec.source
    seeds = spec.seed_list
    for i, seed in enumerate(seeds):
        if not 0 <= seed <= MAX_SEED:
            raise _error(f"seeds[{i}]", f"must be in [0, 2^63-1], got {seed}", path)
    if len(set(seeds)) != len(seeds):
        raise _error("seeds", "lists a seed more than once", path)
    rtt_given = RTT in spec.axes or RTT in spec.fixed
    for key in DELAY_KEYS:
        if rtt_given and (key in spec.axes or key in spec.fixed):
            raise _error(_field(("axes", key) if key in spec.axes else ("set", key)),
                         "conflicts with rtt, which sets both one-way delays", path)
    for field, value in [(("set", RTT), spec.fixed.get(RTT))] + [
        (("axes", RTT), v) for v in spec.axes.get(RTT, [])
    ]:
        if value is not None:
            try:
                one_way(value)
            except ValueError as exc:
                raise _error(_field(field), str(exc), path) from None
    base = spec.base_scenario
    fixed = list(expand_overrides(spec.fixed).items())
    _validate(base, fixed, "set", path)
    for key, values in spec.axes.items():
        # An unknown key is found by the engine; its path is the one to report.
        _validate(base, fixed + list(expand_overrides({key: values[0]}).items()),
                  _field(("axes", key)), path)


def _validate(base: Scenario, overrides: list, field: str, path: Optional[Path]) -> None:
    try:
        validate(base, overrides)
    except ScenarioError as exc:
        where = getattr(exc, "path", "") or ""
        message = getattr(exc, "message", None) or str(exc)
        raise _error(field, f"{where}: {message}" if where else message, path) from None


def _load_base(spec: SweepSpec) -> Scenario:
    try:
        if isinstance(spec.base, str):
            root = spec.source.parent if spec.source is not None else Path.cwd()
            return load_scenario(root / spec.base)
        return make_scenario(spec.base)
    except ScenarioError as exc:
        where = getattr(exc, "path", "") or ""
        message = getattr(exc, "message", None) or str(exc)
        raise _error("base", f"{where}: {message}" if where else message, spec.source) from None


# ---------------------------------------------------------------------------------------------
# rtt and expansion

_DURATION = re.compile(r"\s*([0-9_]*\.?[0-9_]*)\s*(ns|us|µs|ms|s|min|h)\s*")
_NS_PER = {"ns": 1, "us": 10**3, "µs": 10**3, "ms": 10**6, "s": 10**9, "min": 60 * 10**9,
           "h": 3600 * 10**9}


def one_way(rtt: Any) -> str:
    """Half of a round-trip time, exactly, as a duration string in us or ns: "15ms" -> "7500us"."""
    match = _DURATION.fullmatch(rtt) if isinstance(rtt, str) else None
    number = match.group(1).replace("_", "") if match else ""
    try:
        ns = (Decimal(number) * _NS_PER[match.group(2)]).to_integral_value(ROUND_HALF_UP)
    except (InvalidOperation, AttributeError, KeyError):
        raise ValueError(f"rtt must be a duration string such as \"40ms\" (units ns, us, ms, s, "
                         f"min, h), got {rtt!r}") from None
    ns = int(ns)
    if ns % 2:
        raise ValueError(f"rtt {rtt!r} is an odd number of nanoseconds; its half is not a whole "
                         "nanosecond")
    half = ns // 2
    return f"{half // 1000}us" if half % 1000 == 0 else f"{half}ns"


def expand_overrides(values: Mapping[str, Any]) -> Dict[str, Any]:
    """Overrides as the engine takes them: ``rtt`` becomes both one-way delays."""
    out: Dict[str, Any] = {}
    for key, value in values.items():
        if key == RTT:
            for delay in DELAY_KEYS:
                out[delay] = one_way(value)
        else:
            out[key] = value
    return out


def expand(spec: SweepSpec) -> List[RunSpec]:
    """Every cell (cartesian product of the axes, first axis slowest) times every seed."""
    keys = list(spec.axes)
    fixed = expand_overrides(spec.fixed)
    runs = []
    for cell, values in enumerate(itertools.product(*(spec.axes[k] for k in keys))):
        labels = dict(zip(keys, values))
        overrides = {**fixed, **expand_overrides(labels)}
        runs.extend(RunSpec(cell, seed, overrides, labels) for seed in spec.seed_list)
    return runs
