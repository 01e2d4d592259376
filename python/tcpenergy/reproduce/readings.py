"""Readings: how a reproduction reads what its paper leaves open, and on what evidence.

A paper rarely states every parameter of its setup. Each open parameter, or each sentence that can be
read more than one way, is a *reading* declared in the paper package's ``readings.yaml``:

    readings:
      ping:                                     # the key, used on the command line
        parameter: '§III-A: "the sender sent out pings continuously"'
        taken: flood                            # the alternative the reproduction uses
        alternatives:                           # every alternative, the taken one included
          flood: the next echo request as soon as the reply is in (ping -f)
          one-per-second: ping's default interval, one echo request a second
        evidence: >-                            # the paper's own numbers the choice rests on
          Lifetime under ping 101 min against 223 min idle (Sec III-A).
        procedure: >-                           # how the numbers chose it
          Both alternatives run; the one within the paper's band is taken.
        fit: [S003-C01]                         # claims whose numbers were used for the choice

A reading is chosen from the paper's *setup evidence*, never claim by claim for its verdict. Claims
whose numbers made a choice are marked ``fit`` in claims.json: they are judged as usual (the verdict
stays in the record as ``judged``) but never counted as reproduced.

A reproduction runs on the taken alternatives unless told otherwise (``reproduce(...,
readings={"ping": "one-per-second"})``, ``--reading ping=one-per-second``). The paper's code asks for
the alternative in force with :func:`chosen`. ``tcpenergy reproduce PAPER --alternatives`` runs each
alternative in turn (one reading changed at a time) and writes which claims each one flips
(OUT/readings.json); the paper's document shows them in its Readings table (``reproduce/docs.py``).
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Iterator, List, Mapping, Optional, Tuple

# The file a reproduction's output directory records its readings in: a rerun into the same
# directory resumes the runs stored there, which only makes sense under the same readings.
RECORD = "readings.json"
FLIPS = "alternatives.json"


class ReadingError(ValueError):
    """A reading or alternative that the paper does not declare; the message lists the allowed ones."""


@dataclass(frozen=True)
class Reading:
    key: str
    parameter: str
    taken: str
    alternatives: Mapping[str, str]
    evidence: str
    procedure: str
    fit: Tuple[str, ...] = ()

    def describe(self, name: str) -> str:
        return self.alternatives[name]


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ReadingError(f"{where}: expected a non-empty text")
    return " ".join(value.split())


def parse(document: Mapping[str, Any], source: str = "readings.yaml") -> Dict[str, Reading]:
    """The readings of a parsed ``readings.yaml``, checked (every error names the key at fault)."""
    table = document.get("readings") if isinstance(document, Mapping) else None
    if not isinstance(table, Mapping):
        raise ReadingError(f"{source}: expected a top-level 'readings' table")
    known = {"parameter", "taken", "alternatives", "evidence", "procedure", "fit"}
    out: Dict[str, Reading] = {}
    for key, entry in table.items():
        where = f"{source}: readings.{key}"
        if not isinstance(entry, Mapping):
            raise ReadingError(f"{where}: expected a table")
        unknown = sorted(set(entry) - known)
        if unknown:
            raise ReadingError(f"{where}: unknown key(s) {', '.join(unknown)}; allowed: {', '.join(sorted(known))}")
        alternatives = entry.get("alternatives")
        if not isinstance(alternatives, Mapping) or len(alternatives) < 2:
            raise ReadingError(f"{where}.alternatives: expected a table of at least two alternatives")
        alts = {str(name): _text(text, f"{where}.alternatives.{name}") for name, text in alternatives.items()}
        taken = str(entry.get("taken"))
        if taken not in alts:
            raise ReadingError(f"{where}.taken: {taken!r} is not one of its alternatives ({', '.join(alts)})")
        fit = entry.get("fit", [])
        if not isinstance(fit, list) or not all(isinstance(c, str) for c in fit):
            raise ReadingError(f"{where}.fit: expected a list of claim ids")
        out[str(key)] = Reading(str(key), _text(entry.get("parameter"), f"{where}.parameter"), taken, alts,
                                _text(entry.get("evidence"), f"{where}.evidence"),
                                _text(entry.get("procedure"), f"{where}.procedure"), tuple(fit))
    return out


def load(package: str) -> Dict[str, Reading]:
    """The readings a paper package declares (none when it ships no ``readings.yaml``)."""
    from importlib import resources

    import yaml

    source = resources.files(package).joinpath("readings.yaml")
    if not source.is_file():
        return {}
    return parse(yaml.safe_load(source.read_text(encoding="utf-8")) or {}, f"{package}/readings.yaml")


# --------------------------------------------------------------------------------------------
# The alternatives in force while a reproduction runs
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Choice:
    paper: str
    readings: Mapping[str, Reading]
    overrides: Mapping[str, str]
    package: str = ""  # the paper package's module name

    def of(self, key: str) -> str:
        if key not in self.readings:
            raise ReadingError(f"{self.paper} declares no reading {key!r}; declared: "
                               f"{', '.join(self.readings) or 'none'}")
        return self.overrides.get(key, self.readings[key].taken)

    def in_force(self) -> Dict[str, str]:
        return {key: self.of(key) for key in self.readings}

    def fit_claims(self) -> Dict[str, List[str]]:
        """claim id -> the readings whose choice used its numbers."""
        out: Dict[str, List[str]] = {}
        for reading in self.readings.values():
            for claim in reading.fit:
                out.setdefault(claim, []).append(reading.key)
        return out


_ACTIVE: ContextVar[Optional[Choice]] = ContextVar("tcpenergy_readings", default=None)


def check(paper: str, package: str, overrides: Optional[Mapping[str, str]]) -> Choice:
    """The choice of ``overrides`` (reading key -> alternative) for a paper; ReadingError naming the
    allowed keys and alternatives for anything it does not declare."""
    declared = load(package)
    overrides = dict(overrides or {})
    for key, alt in overrides.items():
        if key not in declared:
            raise ReadingError(f"{paper} declares no reading {key!r}; declared: {', '.join(declared) or 'none'}")
        if alt not in declared[key].alternatives:
            raise ReadingError(f"{paper} reading {key!r}: unknown alternative {alt!r}; allowed: "
                               f"{', '.join(declared[key].alternatives)}")
    return Choice(paper, declared, overrides, package)


@contextmanager
def active(choice: Choice) -> Iterator[Choice]:
    token = _ACTIVE.set(choice)
    try:
        yield choice
    finally:
        _ACTIVE.reset(token)


def chosen(key: str) -> str:
    """The alternative in force for reading ``key`` of the paper being reproduced."""
    choice = _ACTIVE.get()
    if choice is None:
        raise ReadingError(f"no reproduction is running, so no reading {key!r} is in force")
    return choice.of(key)


def current() -> Optional[Choice]:
    return _ACTIVE.get()


def in_force(package: str, key: str) -> str:
    """The alternative of reading ``key`` of the paper package ``package`` (its ``__name__``): the one
    the running reproduction of that paper was given, else the taken one (outside a reproduction, e.g.
    when a test builds the paper's experiments)."""
    choice = _ACTIVE.get()
    declared = load(package)
    if key not in declared:
        raise ReadingError(f"{package} declares no reading {key!r}; declared: {', '.join(declared) or 'none'}")
    if choice is not None and choice.package == package:
        return choice.of(key)
    return declared[key].taken


def parse_assignments(items: Optional[List[str]]) -> Dict[str, str]:
    """``--reading KEY=ALT`` options as a mapping (ReadingError for a malformed one)."""
    out: Dict[str, str] = {}
    for item in items or []:
        key, sep, alt = item.partition("=")
        if not sep or not key.strip() or not alt.strip():
            raise ReadingError(f"--reading expects KEY=ALTERNATIVE, got {item!r}")
        out[key.strip()] = alt.strip()
    return out


# --------------------------------------------------------------------------------------------
# Output directory record and fit marking
# --------------------------------------------------------------------------------------------

def record_in(out_dir: Path, choice: Choice) -> None:
    """Write OUT/readings.json, or refuse (ReadingError) when OUT holds runs made under other readings."""
    path = Path(out_dir) / RECORD
    wanted = choice.in_force()
    if path.exists():
        stored = json.loads(path.read_text(encoding="utf-8"))
        if stored != wanted:
            differ = sorted(k for k in set(stored) | set(wanted) if stored.get(k) != wanted.get(k))
            raise ReadingError(f"{out_dir} holds a reproduction under other readings ("
                               + ", ".join(f"{k}: {stored.get(k)} there, {wanted.get(k)} now" for k in differ)
                               + "); use another --out")
    elif (Path(out_dir) / "runs.duckdb").exists() and any(choice.overrides.get(k, r.taken) != r.taken
                                                           for k, r in choice.readings.items()):
        raise ReadingError(f"{out_dir} holds runs made before readings were recorded (the taken ones); "
                           "use another --out for an alternative")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(wanted, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def mark_fit(records: List[Dict[str, Any]], choice: Optional[Choice]) -> List[Dict[str, Any]]:
    """Claims whose numbers chose a reading become ``fit``; their verdict stays as ``judged``. A claim
    with no verdict (not modelled, or its part did not run) stays as it is: there is nothing to withhold."""
    from tcpenergy.reproduce.statuses import FIT, NOT_MODELLED

    if choice is None:
        return records
    used = choice.fit_claims()
    for record in records:
        keys = used.get(record["id"])
        if not keys or record["status"] == NOT_MODELLED:
            continue
        record["judged"] = record["status"]
        record["status"] = FIT
        names = ", ".join(keys)
        record["explanation"] = (f"Fit: its numbers chose the reading{'s' if len(keys) > 1 else ''} {names} "
                                 f"(see the Readings table); judged {record['judged'].replace('_', ' ')}, not "
                                 "counted as reproduced." + (f" {record['explanation']}" if record.get("explanation") else ""))
    return records


def judged_status(record: Mapping[str, Any]) -> str:
    """The verdict of the claim's rule, whether or not the claim is marked fit."""
    return str(record.get("judged", record["status"]))


def flips(taken: List[Mapping[str, Any]], alternative: List[Mapping[str, Any]]) -> List[Dict[str, str]]:
    """The claims whose judged verdict differs between two claims.json lists."""
    before = {r["id"]: judged_status(r) for r in taken}
    out = []
    for record in alternative:
        now, was = judged_status(record), before.get(record["id"])
        if was is not None and now != was:
            out.append({"id": record["id"], "taken": was, "alternative": now})
    return out


__all__ = ["Reading", "Choice", "ReadingError", "parse", "load", "check", "active", "chosen", "current", "in_force",
           "parse_assignments", "record_in", "mark_fit", "judged_status", "flips", "RECORD", "FLIPS"]
