"""Reading and checking a measurements table: one row per (run, node) with one measured quantity.

Columns: ``id`` (optional), ``scenario`` (path, relative to the table's directory), ``overrides``
(optional; ``--set`` assignments separated by ``;``), ``seed`` (optional), ``node`` (``sender`` or
``receiver``) and exactly one of ``energy_j``, ``energy_per_bit_uj``, ``power_w`` per row.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple, Union

from tcpenergy import api
from tcpenergy.calibration.errors import describe, input_error
from tcpenergy.exceptions import ScenarioError
from tcpenergy.scenario import Override, PathLike, Scenario, parse_assignment
from tcpenergy.scenario import validate as validate_scenario

if TYPE_CHECKING:
    import pandas as pd

# Measured quantity -> (unit, what it is); all three are affine in the fitted figures.
QUANTITIES = {
    "energy_j": ("J", "energy over the run's measurement window"),
    "energy_per_bit_uj": ("µJ/bit", "energy per bit of goodput"),
    "power_w": ("W", "mean power over the measurement window"),
}
NODES = ("sender", "receiver")


def per_joule(record: Dict[str, Any], quantity: str) -> float:
    """How many units of ``quantity`` one joule of the run's energy makes (NaN when the run
    delivered nothing or took no time): 1 for J, 10^6 / (8 · delivered bytes) for µJ/bit,
    1 / window for W. Every measured quantity is energy times this factor."""
    if quantity == "energy_j":
        return 1.0
    if quantity == "energy_per_bit_uj":
        delivered = float(record["flow"]["bytes_delivered"])
        return 1e6 / (8.0 * delivered) if delivered > 0 else math.nan
    window = float(record["energy"]["window_s"])
    return 1.0 / window if window > 0 else math.nan


def quantity_of(record: Dict[str, Any], node: str, quantity: str) -> float:
    """The run's ``quantity`` (a key of QUANTITIES) at ``node``, as a meter would have read it."""
    return float(record["energy"][node]["total_j"]) * per_joule(record, quantity)
COLUMNS = ("id", "scenario", "overrides", "seed", "node") + tuple(QUANTITIES)
_MAX_SEED = 2**64 - 1


@dataclass(frozen=True)
class Row:
    id: str
    scenario: Scenario
    scenario_text: str  # as written in the table
    overrides: Tuple[Override, ...]
    overrides_text: str
    seed: Optional[int]
    node: str
    quantity: str
    measured: float


@dataclass(frozen=True)
class Measurements:
    rows: Tuple[Row, ...]
    label: str  # the file's name, for messages and the profile's sources


def _cell(value: Any) -> str:
    """A cell as stripped text; empty for missing (None, NaN, "")."""
    if value is None:
        return ""
    if isinstance(value, float) and math.isnan(value):
        return ""
    try:
        import pandas as pd

        if value is pd.NA or value is pd.NaT:
            return ""
    except ImportError:  # pragma: no cover - pandas is a dependency
        pass
    if isinstance(value, float) and value.is_integer():
        return str(int(value)) if abs(value) < 2**63 else repr(value)
    return str(value).strip()


def split_overrides(text: str) -> List[str]:
    """Split ``a=1; b=[1, 2]`` at the semicolons that are not inside a quoted string or
    brackets, so a TOML value may itself hold a ';'."""
    parts, current, depth, quote, escaped = [], [], 0, "", False
    for ch in text:
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\" and quote == '"':
                escaped = True
            elif ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        elif ch == ";" and depth <= 0:
            parts.append("".join(current))
            current = []
            continue
        current.append(ch)
    parts.append("".join(current))
    return [part.strip() for part in parts if part.strip()]


def _read_table(source: Union[PathLike, "pd.DataFrame"]) -> "pd.DataFrame":
    import pandas as pd

    if isinstance(source, pd.DataFrame):
        return source
    path = Path(source)
    where = "measurements"
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".parquet"):
        raise input_error(where, f"unsupported file extension {suffix or '(none)'} for {path}; "
                                 f"use .csv or .parquet")
    if not path.exists():
        raise input_error(where, f"file not found: {path}")
    try:
        if suffix == ".csv":
            return pd.read_csv(path, dtype=str, keep_default_na=False, skipinitialspace=True)
        return pd.read_parquet(path)
    except Exception as exc:  # any failure to parse the user's file is the user's error
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise input_error(where, f"cannot read {path}: {first}") from None


def _where(row_id: str) -> str:
    return f"row {row_id}"


def _measured(row_id: str, cells: Dict[str, str]) -> Tuple[str, float]:
    given = [q for q in QUANTITIES if cells.get(q, "")]
    if not given:
        raise input_error(_where(row_id), f"no measured value: give one of {', '.join(QUANTITIES)}")
    if len(given) > 1:
        raise input_error(_where(row_id), f"more than one measured value ({', '.join(given)}); "
                                          f"give exactly one of {', '.join(QUANTITIES)} per row")
    quantity = given[0]
    text = cells[quantity]
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        unit = QUANTITIES[quantity][0]
        raise input_error(_where(row_id), f"{quantity}: must be a positive number ({unit}), got {text!r}")
    return quantity, value


def _seed(row_id: str, text: str) -> Optional[int]:
    if not text:
        return None
    try:
        seed = int(text)
    except ValueError:
        seed = -1
    if not 0 <= seed <= _MAX_SEED:
        raise input_error(_where(row_id), f"seed: must be an integer in [0, 2^64-1], got {text!r}")
    return seed


def _overrides(row_id: str, text: str) -> Tuple[Override, ...]:
    try:
        return tuple(parse_assignment(item) for item in split_overrides(text))
    except ScenarioError as exc:
        raise input_error(_where(row_id), f"overrides: {describe(exc)}") from None


def _scenario(row_id: str, text: str, base: Path, cache: Dict[Path, Scenario]) -> Scenario:
    if not text:
        raise input_error(_where(row_id), "scenario: missing; give the path of a scenario TOML file")
    path = Path(text)
    if not path.is_absolute():
        path = base / path
    if path not in cache:
        try:
            cache[path] = api.load_scenario(path)
        except ScenarioError as exc:
            raise input_error(_where(row_id), f"scenario {text}: {describe(exc)}") from None
    return cache[path]


def read_measurements(source: Union[PathLike, "pd.DataFrame"],
                      base_dir: Optional[PathLike] = None) -> Measurements:
    """Read and check every row: columns, ids, node, the one measured value, overrides, seed, and
    that each row's scenario with its overrides passes the engine's validation.

    Scenario paths are relative to ``base_dir``, by default the table's directory (the current
    directory for a DataFrame)."""
    import pandas as pd

    table = _read_table(source)
    if isinstance(source, pd.DataFrame):
        label, default_base = "measurements table", Path.cwd()
    else:
        label, default_base = Path(source).name, Path(source).resolve().parent
    base = Path(base_dir) if base_dir is not None else default_base
    columns = [str(c).strip() for c in table.columns]
    unknown = [c for c in columns if c not in COLUMNS]
    if unknown:
        raise input_error("measurements", f"unknown column {unknown[0]!r}; allowed columns: "
                                          f"{', '.join(COLUMNS)}")
    for required in ("scenario", "node"):
        if required not in columns:
            raise input_error("measurements", f"missing column {required!r}; columns: "
                                              f"{', '.join(COLUMNS)} (id, overrides, seed optional)")
    if not any(q in columns for q in QUANTITIES):
        raise input_error("measurements", f"no measured column: give one of {', '.join(QUANTITIES)}")
    if table.empty:
        raise input_error("measurements", f"{label} has no rows")

    rows: List[Row] = []
    seen: Dict[str, int] = {}
    cache: Dict[Path, Scenario] = {}
    for number, values in enumerate(table.itertuples(index=False, name=None), start=1):
        cells = {column: _cell(value) for column, value in zip(columns, values)}
        row_id = cells.get("id") or str(number)
        if row_id in seen:
            raise input_error(_where(row_id), f"id used twice (data rows {seen[row_id]} and {number})")
        seen[row_id] = number
        node = cells.get("node", "")
        if node not in NODES:
            raise input_error(_where(row_id), f"node: must be \"sender\" or \"receiver\", got {node!r}")
        quantity, measured = _measured(row_id, cells)
        seed = _seed(row_id, cells.get("seed", ""))
        overrides = _overrides(row_id, cells.get("overrides", ""))
        scenario = _scenario(row_id, cells.get("scenario", ""), base, cache)
        try:
            # Overrides in order (a key may repeat), as `tcpenergy run --set` applies them.
            validate_scenario(scenario, list(overrides))
        except ScenarioError as exc:
            raise input_error(_where(row_id), f"scenario {cells['scenario']}: {describe(exc)}") from None
        rows.append(Row(id=row_id, scenario=scenario, scenario_text=cells["scenario"],
                        overrides=overrides, overrides_text=cells.get("overrides", ""), seed=seed,
                        node=node, quantity=quantity, measured=measured))
    return Measurements(rows=tuple(rows), label=label)
