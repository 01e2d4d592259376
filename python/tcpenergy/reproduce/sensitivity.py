"""Where would each energy claim hold? A reproduction re-run over the values of one device-profile figure.

    tcpenergy reproduce seed-000 --sensitivity cpu.cycles.sack_block_processed --out OUT
    result = run_sensitivity("seed-000", "OUT", "cpu.cycles.sack_block_processed", quick=True)

Several energy claims depend on figures the papers never give and the profiles estimate
(docs/models/profiles.md): CPU cycles per operation and per byte, the platform's base power, the
radio's idle power, the CPU's active power. A sweep sets one such figure (KEY, a dotted profile key)
to each of a list of values in BOTH nodes' profiles of every run of the reproduction (the named
profile becomes an inline table with that one figure changed), judges the claims at each value with
the reproduction's own pipeline, and says for each energy claim where it holds: "holds for
cpu.cycles.sack_block_processed >= 40,000 cycles (>= 560 µJ per SACK block processed at 7 W / 500 MHz)".

What is written (docs/reproduce/README.md, "Sensitivity"):

* OUT/sensitivity/KEY/VALUE/: one reproduction per value (runs.duckdb, sweeps/, claims.json); a
  rerun resumes it. No per-value report: the report is a third of a reproduction's wall time.
* OUT/sensitivity/KEY/sensitivity.csv (claim, value, status, energy), sensitivity.json (everything
  the report needs), summary.md and sensitivity.png/.svg (claims x values, coloured by status).
* OUT/report/ is rewritten with a Sensitivity section when OUT holds the reproduction itself.

Which claims are energy claims is declared beside their rules (``ENERGY_CLAIMS`` in
seed00X_claims.py). The energy meter does not feed back into the protocol, so every other claim must
come out the same at every value: the sweep checks that and fails loudly when it does not. The
profile's own value is always swept (first, with every experiment): it is the reference, and it
tells which sweeps each claim reads; the other values run only the sweeps some energy claim reads.
"""

from __future__ import annotations

import copy
import csv
import dataclasses
import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import AbstractSet, Any, Callable, Dict, List, Mapping, Optional, Sequence, Set, Tuple

from tcpenergy.exceptions import TcpEnergyError
from tcpenergy.reproduce.claims import CONSISTENCY, HOLDS, NOT_MODELLED
from tcpenergy.reproduce.common import node_profile

GEOMETRIC = "geometric"
LINEAR = "linear"
SUBDIR = "sensitivity"  # OUT/sensitivity/<KEY>/
HOLDING = (HOLDS, CONSISTENCY)  # a consistency check holds too (it just could not have failed)


class SensitivityError(TcpEnergyError):
    """A sweep whose results cannot be trusted: a claim declared independent of the profile changed."""


# --------------------------------------------------------------------------------------------
# The registry: each supported key, its default sweep and its physical reading
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Knob:
    """One profile figure that can be swept."""

    key: str                 # dotted profile key, e.g. "cpu.cycles.sack_block_processed"
    unit: str                # unit of the figure
    scale: str               # GEOMETRIC or LINEAR (the default sweep and the figure's x axis)
    range_text: str          # the default range in words
    conversion: str          # how a value reads physically, in words (docs, help)
    why: str                 # why that range
    points: Callable[[Mapping[str, Any]], List[float]] = field(repr=False)
    physical: Callable[[float, Mapping[str, Any]], Tuple[float, str]] = field(repr=False)
    context: Callable[[Mapping[str, Any]], str] = field(repr=False)


def profile_value(profile: Mapping[str, Any], key: str) -> float:
    node: Any = profile
    for part in key.split("."):
        if not isinstance(node, Mapping) or part not in node:
            raise KeyError(f"profile {profile.get('name')!r} has no figure {key!r}")
        node = node[part]
    return float(node)


def round_sig(x: float, digits: int = 3) -> float:
    """``x`` to ``digits`` significant digits (sweep points read as figures one would write down)."""
    if x == 0 or not math.isfinite(x):
        return x
    return round(x, digits - 1 - int(math.floor(math.log10(abs(x)))))


def _geometric(key: str, low: float = 0.1, high: float = 100.0, per_decade: int = 2):
    """Profile value x 10^(k / per_decade) from ``low`` x to ``high`` x: 0.1x, 0.32x, 1x, ... 100x."""
    def points(profile: Mapping[str, Any]) -> List[float]:
        p = profile_value(profile, key)
        if p <= 0:
            raise ValueError(f"the profile's {key} is {p:g}: a geometric sweep around it is empty; "
                             "give --values")
        ks = range(round(math.log10(low) * per_decade), round(math.log10(high) * per_decade) + 1)
        return [p if k == 0 else round_sig(p * 10 ** (k / per_decade)) for k in ks]
    return points


def _linear(key: str, low: Callable[[Mapping[str, Any]], float], high: Callable[[Mapping[str, Any]], float],
            n: int = 7):
    """``n`` evenly spaced points from low(profile) to high(profile), plus the profile's own value."""
    def points(profile: Mapping[str, Any]) -> List[float]:
        a, b, p = low(profile), high(profile), profile_value(profile, key)
        xs = [a + (b - a) * i / (n - 1) for i in range(n)]
        return [p if math.isclose(x, p, rel_tol=1e-6) else round_sig(x) for x in xs] + [p]
    return points


def _cpu_context(profile: Mapping[str, Any]) -> str:
    cpu = profile["cpu"]
    return f"at {figure_text(cpu['active_power_w'])} W / {figure_text(cpu['frequency_hz'] / 1e6)} MHz"


def _joules_per_cycle(profile: Mapping[str, Any]) -> float:
    return float(profile["cpu"]["active_power_w"]) / float(profile["cpu"]["frequency_hz"])


# Cycle-cost keys: what one charge of each is, for "µJ per <operation>" (docs/models/energy.md table).
CYCLE_OPERATIONS = {
    "segment_sent": "data segment sent",
    "segment_received": "data segment received",
    "ack_sent": "pure ACK sent",
    "ack_received": "pure ACK received",
    "fast_path": "segment on the input fast path",
    "slow_path": "segment on the input slow path",
    "ooo_queued": "out-of-order segment queued",
    "sack_block_generated": "SACK block generated",
    "sack_block_processed": "SACK block processed",
    "scoreboard_update": "scoreboard update",
    "timer_set": "timer set or cancelled",
    "timer_expired": "timer expiry",
    "paws_check": "PAWS check",
}

_CYCLES_WHY = ("1/10 of the estimate is a hand-tuned path (Clark et al. 1989: ~200 instructions for TCP's "
               "common path); 100x covers what the papers' measurements would imply if processing, not "
               "airtime, explained them (e.g. seed 000 §6 attributes SACK's higher E_I to its processing)")


def _cycle_knob(op: str, what: str) -> Knob:
    key = f"cpu.cycles.{op}"
    return Knob(key, "cycles", GEOMETRIC, "0.1x to 100x the profile value, 2 points per decade (7 points)",
                "cycles x active_power_w / frequency_hz = µJ per " + what, _CYCLES_WHY, _geometric(key),
                lambda v, p: (v * _joules_per_cycle(p) * 1e6, f"µJ per {what}"), _cpu_context)


def _registry() -> Dict[str, Knob]:
    knobs = [_cycle_knob(op, what) for op, what in CYCLE_OPERATIONS.items()]
    knobs.append(Knob(
        "cpu.cycles.per_byte", "cycles/byte", GEOMETRIC, "0.1x to 100x the profile value (0.3 to 300 "
        "cycles/byte on both laptops), 2 points per decade",
        "cycles/byte x active_power_w / frequency_hz = nJ per payload byte",
        "the low end is a copy and checksum folded into one cached pass; the high end is every payload "
        "byte costing what the card's bus costs it again (docs/models/profiles.md#per-byte-cost; the "
        "transfer to the card itself is the card interface's, card.byte_ns)",
        _geometric("cpu.cycles.per_byte"),
        lambda v, p: (v * _joules_per_cycle(p) * 1e9, "nJ per payload byte"), _cpu_context))
    knobs.append(Knob(
        "platform.base_power_w", "W", LINEAR, "0 to 1.5x the profile value, 7 points",
        "W; read as the idle-node draw base + radio idle",
        "0 W is the papers' own limit 'idle power -> 0' (seed 000 §6.4); 1.5x is a heavier machine (display "
        "lit, disk spinning) than the measured idle draw",
        _linear("platform.base_power_w", lambda p: 0.0, lambda p: 1.5 * profile_value(p, "platform.base_power_w")),
        lambda v, p: (v + float(p["radio"]["idle_power_w"]), "W idle-node draw"),
        lambda p: f"with the radio idle at {figure_text(p['radio']['idle_power_w'])} W"))
    knobs.append(Knob(
        "radio.idle_power_w", "W", LINEAR, "the profile's sleep power to its receive power, 7 points",
        "W; read as the idle-node draw base + radio idle",
        "an awake radio draws at least its sleep power and at most its receive power (the mode order "
        "sleep <= idle <= receive of seed 001 §1.2); 802.11b cards of the time measured 0.8-0.9x receive",
        _linear("radio.idle_power_w", lambda p: float(p["radio"]["sleep_power_w"]),
                lambda p: float(p["radio"]["rx_power_w"])),
        lambda v, p: (v + float(p["platform"]["base_power_w"]), "W idle-node draw"),
        lambda p: f"with base power {figure_text(p['platform']['base_power_w'])} W"))
    knobs.append(Knob(
        "cpu.active_power_w", "W", LINEAR, "0 to 2x the profile value, 7 points",
        "W / frequency_hz = nJ per cycle",
        "0 W makes protocol processing free; 2x is a core drawing its full rated power while the stack "
        "runs (docs/models/profiles.md puts the increment at 5-9 W for the Toshiba)",
        _linear("cpu.active_power_w", lambda p: 0.0, lambda p: 2 * profile_value(p, "cpu.active_power_w")),
        lambda v, p: (v / float(p["cpu"]["frequency_hz"]) * 1e9, "nJ per cycle"),
        lambda p: f"at {figure_text(p['cpu']['frequency_hz'] / 1e6)} MHz"))
    knobs.append(Knob(
        "card.frame_us", "µs", GEOMETRIC, "0.1x to 10x the profile value, 2 points per decade (5 points)",
        "µs x active_power_w = µJ per packet crossing between host and card",
        "the low end is a card with a register interface as quick as memory; the high end is a driver "
        "that waits on the card's commands for most of a millisecond per frame "
        "(docs/models/profiles.md#card-interface)",
        _geometric("card.frame_us", high=10.0),
        lambda v, p: (v * float(p["cpu"]["active_power_w"]), "µJ per packet to or from the card"),
        lambda p: f"at {figure_text(p['cpu']['active_power_w'])} W"))
    knobs.append(Knob(
        "card.byte_ns", "ns/byte", GEOMETRIC, "0.1x to 10x the profile value, 2 points per decade (5 points)",
        "ns/byte x active_power_w = nJ per byte moved to or from the card",
        "0.1x is a bus-mastering (DMA) card whose transfers cost the CPU almost nothing; 10x a 16-bit PC "
        "Card bus at 0.33 MB/s, slower than any measured (docs/models/profiles.md#card-interface)",
        _geometric("card.byte_ns", high=10.0),
        lambda v, p: (v * float(p["cpu"]["active_power_w"]), "nJ per byte to or from the card"),
        lambda p: f"at {figure_text(p['cpu']['active_power_w'])} W"))
    return {k.key: k for k in knobs}


KNOBS: Dict[str, Knob] = _registry()


def supported_keys() -> List[str]:
    return list(KNOBS)


def knob(key: str) -> Knob:
    """The registry entry of ``key``; ValueError (one line, listing the supported keys) otherwise."""
    if key not in KNOBS:
        raise ValueError(f"--sensitivity: unknown key {key!r}; supported keys: {', '.join(KNOBS)}")
    return KNOBS[key]


def parse_values(text: str) -> List[float]:
    """``"40,400,4e3"`` -> [40.0, 400.0, 4000.0]; ValueError naming the bad item otherwise."""
    items = [t.strip() for t in str(text).split(",")]
    if not any(items):
        raise ValueError("--values: empty; give non-negative numbers separated by commas, e.g. --values 40,400,4000")
    out = []
    for item in items:
        try:
            value = float(item)
        except ValueError:
            value = math.nan
        if not item or not math.isfinite(value):
            raise ValueError(f"--values: {item!r} is not a number; give non-negative numbers separated by "
                             "commas, e.g. --values 40,400,4000")
        if value < 0:
            raise ValueError(f"--values: {item} is negative; every value must be >= 0")
        out.append(value)
    return out


def sweep_values(points: Sequence[float], base: float) -> List[float]:
    """Sorted, without duplicates, and always holding the profile's own value ``base``."""
    out: List[float] = []
    for v in sorted([*points, base]):
        if not out or not _same(v, out[-1]):
            out.append(v)
        elif _same(v, base):
            out[-1] = base
    return out


def _same(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-12)


# --------------------------------------------------------------------------------------------
# Numbers and statements
# --------------------------------------------------------------------------------------------

def figure_text(x: float) -> str:
    """A swept figure as one would write it down: 40000 -> '40,000'; 17.26 -> '17.26'; 0.316 -> '0.316'."""
    x = float(x)
    if x == 0:
        return "0"
    if abs(x) >= 1000:
        return f"{round_sig(x, 4):,.0f}"
    return f"{x:.4g}"


def value_name(value: float) -> str:
    """The directory of one value: 40000 -> '40000', 17.26 -> '17.26', 0.0316 -> '0.0316'."""
    return f"{value:.6g}"


@dataclass(frozen=True)
class Band:
    """A run of neighbouring swept values at which a claim holds. ``below``/``above``: the swept
    values just outside it, where it does not hold (None: the band reaches that end of the sweep)."""

    low: float
    high: float
    below: Optional[float]
    above: Optional[float]


def holding_bands(values: Sequence[float], statuses: Sequence[Optional[str]]) -> List[Band]:
    """The bands of ``values`` (ascending) where the status holds (holds or consistency)."""
    if len(values) != len(statuses):
        raise ValueError("one status per value")
    bands, start = [], None
    for i, status in enumerate(statuses):
        ok = status in HOLDING
        if ok and start is None:
            start = i
        if start is not None and (not ok or i == len(values) - 1):
            end = i if ok else i - 1
            bands.append(Band(values[start], values[end], values[start - 1] if start > 0 else None,
                              values[end + 1] if end + 1 < len(values) else None))
            start = None
    return bands


@dataclass(frozen=True)
class Reading:
    """How to write one sweep's values: the key, its unit and its physical reading."""

    key: str                                    # e.g. "cpu.cycles.sack_block_processed"
    unit: str
    physical: Callable[[float], Tuple[float, str]]
    context: str                                # e.g. "at 7 W / 500 MHz"

    @property
    def short(self) -> str:
        return self.key.rsplit(".", 1)[-1]

    def value(self, v: float) -> str:
        return f"{figure_text(v)} {self.unit}"

    def phys(self, op: str, v: float) -> str:
        number, text = self.physical(v)
        return f"({op} {figure_text(round_sig(number))} {text} {self.context})"


def _where(reading: Reading, name: str, values: Sequence[float], statuses: Sequence[Optional[str]]) -> str:
    """The swept values where the claim holds, as a condition on ``name``, or a sentence saying
    it holds at none or at all of them, or is not modelled."""
    span = f"[{figure_text(values[0])}, {figure_text(values[-1])}] {reading.unit}"
    if statuses and all(s == NOT_MODELLED for s in statuses):
        return "not modelled at any value"
    bands = holding_bands(values, statuses)
    if not bands:
        return f"holds at no swept value of {name} in {span}"
    if len(bands) == 1 and bands[0].below is None and bands[0].above is None:
        return f"holds at every swept value of {name} in {span}"
    parts = []
    for b in bands:
        if b.below is None:
            parts.append(f"{name} <= {reading.value(b.high)} {reading.phys('<=', b.high)}")
        elif b.above is None:
            parts.append(f"{name} >= {reading.value(b.low)} {reading.phys('>=', b.low)}")
        elif b.low == b.high:
            parts.append(f"{name} = {reading.value(b.low)} {reading.phys('=', b.low)}")
        else:
            (lo, text), hi = reading.physical(b.low), reading.physical(b.high)[0]
            parts.append(f"{name} in [{figure_text(b.low)}, {figure_text(b.high)}] {reading.unit} "
                         f"([{figure_text(round_sig(lo))}, {figure_text(round_sig(hi))}] {text} {reading.context})")
    return " or ".join(parts)


def condition(reading: Reading, values: Sequence[float], statuses: Sequence[Optional[str]]) -> str:
    """For a claims checklist row, naming the full key: "holds if cpu.cycles.sack_block_processed
    >= 40,000 cycles (>= 560 µJ per SACK block processed at 7 W / 500 MHz)", or "holds at no swept
    value of cpu.cycles.sack_block_processed in [40, 40,000] cycles", "holds at every ...",
    "not modelled at any value"."""
    text = _where(reading, reading.key, values, statuses)
    return text if text.startswith(("holds at", "not modelled")) else "holds if " + text


def statement(reading: Reading, values: Sequence[float], statuses: Sequence[Optional[str]],
              base: float) -> str:
    """For the sweep's summary (one key): "holds for sack_block_processed >= 40,000 cycles (...);
    does not hold at the profile value 400 cycles"."""
    text = _where(reading, reading.short, values, statuses)
    if text.startswith(("holds at", "not modelled")):
        return text
    at = [s for v, s in zip(values, statuses) if _same(v, base)]
    if not at or at[0] is None:
        return f"holds for {text}"
    word = "holds" if at[0] in HOLDING else ("is not modelled" if at[0] == NOT_MODELLED else "does not hold")
    return f"holds for {text}; {word} at the profile value {reading.value(base)}"


# --------------------------------------------------------------------------------------------
# Profiles of a reproduction and the experiment transform
# --------------------------------------------------------------------------------------------

NODES = ("sender", "receiver")


def node_profiles(base: Mapping[str, Any]) -> Dict[str, Dict[str, Any]]:
    """{node: profile table} of a scenario, defaults filled in by the engine's validation."""
    return {node: node_profile(base, node) for node in NODES}


def set_figure(profile: Dict[str, Any], key: str, value: float) -> Dict[str, Any]:
    """A copy of ``profile`` with ``key`` set to ``value`` and a name saying so."""
    out = copy.deepcopy(profile)
    profile_value(out, key)  # KeyError when the profile has no such figure
    node = out
    *path, last = key.split(".")
    for part in path:
        node = node[part]
    node[last] = float(value)
    out["name"] = f"{profile.get('name', 'profile')}+{key}={value:g}"
    out["description"] = f"{profile.get('name', 'profile')} with {key} = {value:g} (tcpenergy reproduce --sensitivity)"
    return out


def with_figure(exp, key: str, value: float):
    """The experiment with both nodes' profiles (in a network, every node's) as inline tables holding
    ``key`` = ``value``."""
    base = copy.deepcopy(exp.base)
    if "nodes" in base:
        from tcpenergy import api
        from tcpenergy.reproduce.common import profile_table

        valid = api.validate(dict(exp.base))
        for name in base["nodes"]:
            profile = profile_table(valid["nodes"][name]["profile"])
            base["nodes"][name] = {**(base["nodes"][name] or {}), "profile": set_figure(profile, key, value)}
        return dataclasses.replace(exp, base=base)
    energy = base.setdefault("energy", {})
    for node, profile in node_profiles(exp.base).items():
        energy[node] = set_figure(profile, key, value)
    return dataclasses.replace(exp, base=base)


def overridden(exp, key: str) -> List[str]:
    """Notes on the sweep keys of ``exp`` that replace the swept figure for a node (an axis over it,
    or over the whole profile)."""
    notes = []
    keys = {**{k: "axis" for k in exp.axes}, **{k: "fixed setting" for k in exp.fixed}}
    for node in NODES:
        for k, how in keys.items():
            if k == f"energy.{node}.{key}":
                notes.append(f"{exp.name} varies the {node}'s {key} itself ({how}); the swept value applies to "
                             f"its other node only")
            elif k == f"energy.{node}":
                notes.append(f"{exp.name} sets the {node}'s whole profile ({how}); the swept value does not reach it")
    return notes


# --------------------------------------------------------------------------------------------
# One value: the reproduction's own run(), with its experiments transformed
# --------------------------------------------------------------------------------------------

def energy_claims(paper: str) -> frozenset:
    from tcpenergy.reproduce import registry

    return frozenset(registry.claims_module(paper).ENERGY_CLAIMS)


def _paper_module(paper: str):
    from tcpenergy.reproduce import registry

    return registry.package(paper)


@dataclass
class ValueRun:
    value: float
    directory: Path
    records: Dict[str, Dict[str, Any]]   # claim id -> claims.json record
    skipped: List[str]                   # sweeps not run at this value
    runs: int
    failed_runs: int
    wall_s: float


def sweeps_by_claim(run: ValueRun) -> Dict[str, Set[str]]:
    """{claim id: the sweeps its verdict read}, as each claims.json record lists them (``sweeps``)."""
    return {cid: set(record.get("sweeps", ())) for cid, record in run.records.items()}


def run_value(paper: str, directory: Path, key: str, value: float, *, keep: Optional[AbstractSet[str]] = None,
              quick: bool = False, jobs: Optional[int] = None, progress: bool = True,
              log: Callable[[str], None] = print, part: Optional[str] = None,
              also: Sequence[float] = ()) -> ValueRun:
    """The reproduction at one value of ``key``, into ``directory`` (resumable): the paper's own
    pipeline with every experiment through :func:`with_figure`, only the sweeps in ``keep`` (None:
    all), and no report. ``also``: values whose reproductions (beside ``directory``) get each
    experiment's runs from the same simulations, priced under their profiles."""
    from tcpenergy.reproduce import reproduce

    together: Set[str] = set()

    def transform(exp):
        # A paper may transform an experiment again (to read its profile): run it together once.
        if also and exp.name not in together:
            together.add(exp.name)
            run_together(paper, exp, key, [value, *also], Path(directory).parent, jobs, progress, log)
        return with_figure(exp, key, value)

    started = time.perf_counter()
    outcome = reproduce(paper, directory, quick=quick, jobs=jobs, progress=progress, log=log, part=part,
                        transform=transform, keep=keep, report=False)
    return ValueRun(value, Path(directory), {r["id"]: r for r in outcome.claims}, list(outcome.skipped),
                    outcome.runs, outcome.failed_runs, time.perf_counter() - started)


def run_together(paper: str, exp, key: str, values: Sequence[float], parent: Path, jobs: Optional[int],
                 progress: bool, log: Callable[[str], None]) -> None:
    """Run ``exp`` at every value at once: its copies differ only in the swept profile figure, so each
    run is simulated once and priced under every value's profile (tcpenergy.experiments.profiles),
    into each value's store (``parent``/VALUE/runs.duckdb). Each value's reproduction then finds
    these runs stored; should the copies differ in more than profiles, they run apart."""
    import tempfile

    from tcpenergy.experiments.errors import SweepSpecError
    from tcpenergy.experiments.profiles import sweep_profiles
    from tcpenergy.reproduce.common import write_experiment

    log(f"sweep {exp.name}: {len(values)} values of {key} priced in one simulation per run")
    with tempfile.TemporaryDirectory() as tmp:
        files, stores = [], []
        for v in values:
            files.append(write_experiment(with_figure(exp, key, v), Path(tmp) / value_name(v), paper))
            (parent / value_name(v)).mkdir(parents=True, exist_ok=True)
            stores.append(parent / value_name(v) / "runs.duckdb")
        try:
            sweep_profiles(files, stores, jobs=jobs, progress=progress)
        except SweepSpecError as exc:
            log(f"sweep {exp.name}: runs apart at each value ({exc.message})")


# --------------------------------------------------------------------------------------------
# The sanity check: claims that read no energy metric do not move
# --------------------------------------------------------------------------------------------

def check_non_energy_unchanged(base: ValueRun, others: Sequence[ValueRun], energy: frozenset,
                               sweeps_read: Mapping[str, Set[str]], key: str) -> List[str]:
    """Raise SensitivityError when a claim outside ``energy`` has another status at some value than
    at the profile value (the energy meter does not feed back into the protocol, so it cannot;
    if it does, the declaration or the model is wrong). Returns the ids compared. Claims that read
    a sweep not run at a value are not compared there."""
    compared, changed = set(), []
    for run in others:
        for cid, record in base.records.items():
            if cid in energy or cid not in run.records:
                continue
            if set(sweeps_read.get(cid, ())) & set(run.skipped):
                continue
            compared.add(cid)
            if run.records[cid]["status"] != record["status"]:
                changed.append(f"{cid} {record['status']} at {figure_text(base.value)} but {run.records[cid]['status']} "
                               f"at {figure_text(run.value)}")
    if changed:
        raise SensitivityError(
            f"--sensitivity {key}: claims declared independent of the energy profile changed verdict: "
            + "; ".join(changed) + ". Either they read an energy metric (add them to ENERGY_CLAIMS beside their "
            "rules) or the profile now changes the protocol's behaviour; the sweep's results are not trusted.")
    return sorted(compared)


# --------------------------------------------------------------------------------------------
# The whole sweep
# --------------------------------------------------------------------------------------------

@dataclass
class SensitivityResult:
    paper: str
    key: str
    directory: Path                    # OUT/sensitivity/<KEY>
    document: Dict[str, Any]           # what sensitivity.json holds
    files: List[Path]
    failed_runs: int
    wall_s: float
    report: Optional[Path] = None      # OUT/report/index.html when it was rewritten

    @property
    def claims(self) -> List[Dict[str, Any]]:
        return self.document["claims"]


def plan(paper: str, key: str, values: Optional[Sequence[float]] = None,
         quick: bool = False) -> Tuple[Knob, Dict[str, Any], List[float], List[str]]:
    """(knob, reference profile, sorted values, notes) of a sweep, validated against the engine
    before anything runs: the reference is the sender's profile of the paper's first experiment."""
    from tcpenergy import api

    k = knob(key)
    module = _paper_module(paper)
    exps = module.experiments(quick)
    reference = node_profiles(exps[0].base)["sender"]
    base = profile_value(reference, key)
    chosen = sweep_values(list(values) if values is not None else k.points(reference), base)
    notes: List[str] = []
    seen = {}
    for exp in exps:
        notes += overridden(exp, key)
        for node, profile in node_profiles(exp.base).items():
            v = profile_value(profile, key)
            if not _same(v, base):
                seen[profile.get("name")] = v
    if seen:
        notes.append("profiles whose own value differs from the reference's (each is set to the swept value): "
                     + ", ".join(f"{n} {figure_text(v)}" for n, v in seen.items()))
    for value in chosen:  # a value the engine rejects stops the sweep here, before any run
        api.validate(with_figure(exps[0], key, value).base)
    return k, reference, chosen, notes


def run_sensitivity(paper: str, out_dir, key: str, values: Optional[Sequence[float]] = None,
                    quick: bool = False, jobs: Optional[int] = None, progress: bool = True,
                    log: Callable[[str], None] = print, part: Optional[str] = None,
                    refresh_report: bool = True, shared: bool = True) -> SensitivityResult:
    """Sweep ``key`` over ``values`` (default: the registry's sweep), judge the claims at each value,
    write OUT/sensitivity/KEY/ and, when OUT holds the reproduction, rewrite its report.
    ``shared=False`` simulates every value's runs apart (the same results, slower; for comparison)."""
    started = time.perf_counter()
    k, reference, chosen, notes = plan(paper, key, values, quick)
    base_value = profile_value(reference, key)
    out_dir = Path(out_dir)
    directory = out_dir / SUBDIR / key
    energy = energy_claims(paper)
    reading = Reading(key, k.unit, lambda v: k.physical(v, reference), k.context(reference))

    def one(value: float, keep, also: Sequence[float] = ()) -> ValueRun:
        log(f"sensitivity {key} = {reading.value(value)} ({chosen.index(value) + 1}/{len(chosen)})")
        return run_value(paper, directory / value_name(value), key, value, keep=keep, quick=quick, jobs=jobs,
                         progress=progress, log=log, part=part, also=also)

    # The profile value first, with every experiment: the reference verdicts, and which sweeps each
    # claim reads.
    base = one(base_value, None)
    read = sweeps_by_claim(base)
    keep = needed_sweeps(base, energy, read)
    if keep is not None:
        log(f"other values run only the sweeps energy claims read: {', '.join(sorted(keep))}")
    # The other values share simulations: the first one's reproduction runs each experiment for all
    # of them (a profile never changes a run), and the rest find their runs stored.
    rest = [v for v in chosen if v != base_value]
    others = [one(v, keep, also=rest[1:] if i == 0 and shared else ()) for i, v in enumerate(rest)]
    compared = check_non_energy_unchanged(base, others, energy, read, key)
    by_value = {r.value: r for r in [base, *others]}
    runs = [by_value[v] for v in chosen]

    document = _document(paper, k, reference, reading, chosen, runs, base, energy, keep, compared, notes, quick)
    document["wall_s"] = round(time.perf_counter() - started, 1)
    files = write_outputs(directory, document)
    report = None
    if refresh_report:
        report = _refresh_report(paper, out_dir, base, log, jobs, part)
    return SensitivityResult(paper, key, directory, document, files, sum(r.failed_runs for r in runs),
                             time.perf_counter() - started, report)


def needed_sweeps(base: ValueRun, energy: frozenset, sweeps_read: Mapping[str, Set[str]]) -> Optional[Set[str]]:
    """The sweeps some energy claim read at the profile value (None: run every sweep, when an energy
    claim judged from runs, i.e. not 'not modelled', recorded none: the record cannot be trusted)."""
    needed: Set[str] = set()
    for cid in energy:
        read = sweeps_read.get(cid, set())
        record = base.records.get(cid)
        if not read and record is not None and record["status"] != NOT_MODELLED:
            return None
        needed |= read
    return needed or None


def _document(paper, k: Knob, reference, reading: Reading, values, runs: Sequence[ValueRun], base: ValueRun,
              energy: frozenset, keep, compared, notes, quick) -> Dict[str, Any]:
    from tcpenergy._version import engine_version

    base_value = base.value
    claims = []
    for cid, record in base.records.items():
        is_energy = cid in energy
        statuses = [r.records.get(cid, {}).get("status") if (is_energy or cid in compared or r is base) else None
                    for r in runs]
        entry = {"id": cid, "claim": record.get("claim", ""), "energy": is_energy, "statuses": statuses,
                 "base_status": record["status"]}
        if is_energy:
            entry["statement"] = statement(reading, values, statuses, base_value)
            entry["condition"] = condition(reading, values, statuses)
        claims.append(entry)
    skipped = sorted({s for r in runs for s in r.skipped})
    return {
        "paper": paper, "key": k.key, "unit": k.unit, "scale": k.scale,
        "quick": bool(quick), "engine_version": engine_version(),
        "profile": {"name": reference.get("name"), "value": base_value},
        "context": reading.context, "conversion": k.conversion,
        "values": list(values),
        "physical": [list(reading.physical(v)) for v in values],
        "runs": [{"value": r.value, "directory": str(Path(SUBDIR) / k.key / value_name(r.value)), "runs": r.runs,
                  "failed_runs": r.failed_runs, "skipped_sweeps": r.skipped, "wall_s": round(r.wall_s, 1)}
                 for r in runs],
        "restricted_to": sorted(keep) if keep is not None else None,
        "skipped_sweeps": skipped,
        "non_energy_checked": list(compared),
        "notes": list(notes),
        "claims": claims,
    }


def write_outputs(directory: Path, document: Mapping[str, Any]) -> List[Path]:
    """sensitivity.csv, sensitivity.json, summary.md and the figure, each replaced atomically."""
    from tcpenergy.report import sensitivity as render

    directory.mkdir(parents=True, exist_ok=True)
    rows = [[c["id"], f"{v:.6g}", s, "true" if c["energy"] else "false"]
            for c in document["claims"] for v, s in zip(document["values"], c["statuses"]) if s is not None]
    csv_path = directory / "sensitivity.csv"
    _replace(csv_path, lambda f: _write_csv(f, ["claim", "value", "status", "energy"], rows))
    json_path = directory / "sensitivity.json"
    _replace(json_path, lambda f: f.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n"))
    png, svg = render.write_figure(document, directory, "sensitivity")
    md_path = directory / "summary.md"
    _replace(md_path, lambda f: f.write(render.summary_markdown(document, png.name) + "\n"))
    return [csv_path, json_path, md_path, png, svg]


def _write_csv(f, header, rows) -> None:
    writer = csv.writer(f)
    writer.writerow(header)
    writer.writerows(rows)


def _replace(path: Path, write: Callable[[Any], None]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8", newline="") as f:
        write(f)
    tmp.replace(path)


def _refresh_report(paper: str, out_dir: Path, base: ValueRun, log, jobs, part) -> Optional[Path]:
    """Rewrite OUT's report (now with the Sensitivity section) when OUT holds the reproduction:
    rerunning it resumes, so nothing new runs. Its verdicts should equal the profile value's."""
    from tcpenergy.reproduce import reproduce

    claims_json = out_dir / "claims.json"
    if not claims_json.exists():
        log(f"no reproduction in {out_dir} (no claims.json): run `tcpenergy reproduce {paper} --out {out_dir}` "
            "for the report with the Sensitivity section")
        return None
    main = json.loads(claims_json.read_text(encoding="utf-8"))
    quick = any(r.get("indicative") for r in main)
    log(f"rewriting the report of {out_dir} with the Sensitivity section")
    outcome = reproduce(paper, out_dir, quick=quick, jobs=jobs, progress=False, log=log, part=part)
    if quick == any(r.get("indicative") for r in base.records.values()):
        differ = [r["id"] for r in outcome.claims if base.records.get(r["id"], {}).get("status") != r["status"]]
        if differ:
            log("note: at the profile value the sweep's verdicts differ from the reproduction's in "
                f"{', '.join(differ)} (same profile, inline instead of named: they should agree)")
    return out_dir / "report" / "index.html"


__all__ = ["KNOBS", "figure_text", "Knob", "Band", "SensitivityError", "SensitivityResult", "supported_keys", "knob",
           "parse_values", "sweep_values", "holding_bands", "condition", "statement", "run_sensitivity"]
