"""The Python API: load a scenario, run it, collect results in a DataFrame."""

from __future__ import annotations

import copy
import json
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from tcpenergy._native import engine
from tcpenergy.capture import check_pcap_dir, write_pcap_dir
from tcpenergy.exceptions import ScenarioError, scenario_error
from tcpenergy.records import flatten
from tcpenergy.scenario import (
    Override,
    PathLike,
    Scenario,
    check_overrides,
    encode_overrides,
    make_scenario,
    read_toml,
)
from tcpenergy.scenario import validate as _validate

if TYPE_CHECKING:
    import pandas as pd

ScenarioLike = Union[Scenario, Mapping[str, Any], PathLike]
# A further profile: a profile (built-in name, profile file, or table) for every node, or a dict of
# energy overrides ({"energy.sender": ..., "nodes.ap.profile": ..., "energy.radio_policy": ...}).
ProfileLike = Union[str, PathLike, Mapping[str, Any]]

_MAX_SEED = 2**64 - 1


def load_scenario(source: Union[PathLike, Mapping[str, Any]]) -> Scenario:
    """Load and validate a scenario from a TOML file path or from a dict.

    Raises ScenarioError naming the offending key path when the scenario is not valid.
    """
    if isinstance(source, Mapping):
        return make_scenario(source)
    path = Path(source)
    return make_scenario(read_toml(path), source=path)


def as_scenario(scenario: ScenarioLike) -> Scenario:
    """A Scenario from a Scenario, a mapping or a file path."""
    return scenario if isinstance(scenario, Scenario) else load_scenario(scenario)


def check_seed(seed: Optional[int]) -> None:
    """Refuse a seed the engine cannot take (ScenarioError naming ``seed``)."""
    if seed is None:
        return
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= _MAX_SEED:
        raise scenario_error("seed", f"must be an integer in [0, 2^64-1], got {seed!r}")


class BeyondMachineWarning(RuntimeWarning):
    """A forced run that its estimate says is far beyond this machine."""


def estimate(scenario: ScenarioLike, *, trace: bool = False, pcap: bool = False, **overrides: Any) -> dict:
    """What a run would cost, estimated before it starts: ``events``, ``memory_bytes``, the
    ``parts`` each comes from (``key``, ``what``, ``events``, ``memory_bytes``, largest first),
    this machine's ``limits``, a one-line ``summary`` and, for a run far beyond the limits, the
    ``refusal`` (``path``, ``message``, and ``reason``: the message without its advice) that
    :func:`run` raises unless ``force=True``."""
    return estimate_overrides(as_scenario(scenario), list(overrides.items()), trace, pcap)


def estimate_overrides(scenario: Scenario, overrides: Sequence[Override], trace: bool, pcap: bool) -> dict:
    """:func:`estimate` with the overrides as an ordered list of (dotted key, value) pairs, as the
    command line's ``--set`` gives them."""
    return json.loads(engine.estimate(scenario.to_json(), encode_overrides(overrides), trace, pcap))


def execute(
    scenario: ScenarioLike,
    seed: Optional[int] = None,
    overrides: Sequence[Override] = (),
    trace: bool = False,
    pcap: Optional[PathLike] = None,
    pcap_option: str = "pcap",
    force: bool = False,
    profiles: Sequence[ProfileLike] = (),
    on_pcap: Optional[Callable[[List[Path]], None]] = None,
    trace_flows: Optional[Sequence[str]] = None,
    trace_nodes: Sequence[str] = (),
    node_pcap: Optional[PathLike] = None,
) -> Tuple[dict, Optional[dict]]:
    """Run once; returns the result record and, when asked, the trace columns.

    With ``trace``, a single path gives its sender's columns; a network gives the flows named in
    ``trace_flows`` (every flow when None) and the nodes in ``trace_nodes``, one table with a
    ``flow`` and a ``node`` column (:func:`trace_columns`; docs/models/energy.md, "Traces").

    ``overrides`` is an ordered list of (dotted key, value) pairs, applied in order; two of which
    one sets a part of the other (``a.b`` and ``a.b.0.p``) raise ScenarioError. The record gains
    ``parameters`` (see :func:`parameters`): the scenario's name, each override and the seed.
    With ``pcap`` a directory, each interface's packets are written there as ``<from>-<to>.pcap``
    (``sender-receiver.pcap``, ``receiver-sender.pcap`` for a single path) once the run succeeded; an unusable
    directory raises OutputPathError naming ``pcap_option`` before anything runs. An interface that
    sent no packet gets no file; ``on_pcap``, if given, receives the paths written. With
    ``node_pcap`` a directory, each node's own view is written there as ``<node>.pcap``: what it
    sent, stamped as it began on the wire, and what reached it, stamped as it arrived (the
    capture ``tcpenergy analyze`` meters; docs/emulation.md).
    A run whose estimate (:func:`estimate`) is far beyond this machine raises ScenarioError
    naming the key that drives it, unless ``force``; then it warns (BeyondMachineWarning) and runs.
    ``profiles``: further profiles to price the same run under (see :func:`run`).
    """
    scenario = as_scenario(scenario)
    check_seed(seed)
    check_overrides(overrides)
    encoded = encode_overrides(overrides)
    sets = encode_profiles(scenario, overrides, profiles)
    if force:
        refusal = estimate_overrides(scenario, overrides, trace, pcap is not None).get("refusal")
        if refusal:
            where = f"{refusal['path']}: " if refusal["path"] else ""
            warnings.warn(f"{where}{refusal['reason']}; running anyway (forced)", BeyondMachineWarning,
                          stacklevel=2)
    if pcap is None and node_pcap is None:
        text = engine.run(scenario.to_json(), seed, encoded, trace, force, sets,
                          _names(trace_flows), list(trace_nodes))
    else:
        for directory, option in ((pcap, pcap_option), (node_pcap, "node_pcap")):
            if directory is not None:
                check_pcap_dir(Path(directory), option)
        text, files, node_files = engine.run_captured(scenario.to_json(), seed, encoded, trace, force, sets,
                                                      _names(trace_flows), list(trace_nodes))
        written = write_pcap_dir(Path(pcap), files, pcap_option) if pcap is not None else []
        if node_pcap is not None:
            written += write_pcap_dir(Path(node_pcap), node_files, "node_pcap")
        if on_pcap is not None:
            on_pcap(written)
    record = json.loads(text)
    columns = trace_columns(record) if trace else None
    record["parameters"] = parameters(scenario, seed, overrides)
    return record, columns


def run_each_profile(scenario: ScenarioLike, seed: Optional[int] = None, overrides: Sequence[Override] = (),
                     profiles: Sequence[ProfileLike] = (), force: bool = False) -> list:
    """Run once and return the whole record under the scenario's own profiles, then under each of
    ``profiles`` (see :func:`run`): each is the record a separate :func:`execute` with that profile
    gives (with ``parameters``), from one simulation."""
    scenario = as_scenario(scenario)
    check_seed(seed)
    check_overrides(overrides)
    encoded = encode_overrides(overrides)
    sets = encode_profiles(scenario, overrides, profiles)
    texts = engine.run_each_profile(scenario.to_json(), seed, encoded, sets, force)
    records = [json.loads(text) for text in texts]
    for record in records:
        record["parameters"] = parameters(scenario, seed, overrides)
    return records


def _names(names: Optional[Sequence[str]]) -> Optional[List[str]]:
    return None if names is None else list(names)


def trace_columns(record: dict) -> Optional[dict]:
    """Take the traces out of a record: the single path's sender columns as they are; a
    network's flow and node traces stacked into one table, each row naming its ``flow`` (empty
    for a node's power trace) and ``node``, the columns a trace lacks left empty (None)."""
    if "trace" in record:
        return record.pop("trace")
    parts = []
    for flow in record.get("flows", []):
        if "trace" in flow:
            parts.append((flow["name"], flow["from"], flow.pop("trace")))
    for name, node in record.get("nodes", {}).items():
        if "trace" in node:
            parts.append(("", name, node.pop("trace")))
    if not parts:
        return None
    keys: List[str] = []
    for _, _, columns in parts:
        keys.extend(k for k in columns if k not in keys)
    out: dict = {"flow": [], "node": [], **{k: [] for k in keys}}
    for flow, node, columns in parts:
        rows = len(columns["t_s"])
        out["flow"].extend([flow] * rows)
        out["node"].extend([node] * rows)
        for k in keys:
            out[k].extend(columns.get(k, [None] * rows))
    return out


def parameters(scenario: Scenario, seed: Optional[int] = None,
               overrides: Sequence[Override] = ()) -> dict:
    """The inputs that set a run apart: ``{"scenario": name, <dotted key>: value for each
    override, "seed": seed}`` (seed only when given). A record carries it under ``parameters``,
    so a frame of records has a column per varied key ("parameters.tcp.variant") to group by."""
    out: dict = {"scenario": scenario.name}
    for key, value in overrides:
        out[key] = value  # applied in order: the last value of a key is the one that ran
    if seed is not None:
        out["seed"] = seed
    return out


def _is_overrides(profile: Any) -> bool:
    # A profile table's keys are plain names (platform, radio, cpu, ...); overrides are dotted.
    return isinstance(profile, Mapping) and any(isinstance(k, str) and "." in k for k in profile)


def encode_profiles(scenario: Scenario, overrides: Sequence[Override],
                    profiles: Sequence[ProfileLike]) -> list:
    """Further profiles as the engine takes them: per profile, (dotted key, JSON text) overrides.
    A dict with dotted keys is taken as such overrides (the engine accepts energy settings only);
    any other profile (a name, a file, a table) is set on every node."""
    if isinstance(profiles, (str, bytes, Mapping)) or not isinstance(profiles, Sequence):
        raise scenario_error("profiles", f"must be a list of profiles, got {type(profiles).__name__}")
    slots: Optional[list] = None
    out = []
    for i, profile in enumerate(profiles):
        if _is_overrides(profile):
            pairs = list(profile.items())
        elif isinstance(profile, (str, Mapping)) or hasattr(profile, "__fspath__"):
            if slots is None:
                normalized = _validate(scenario, list(overrides))
                slots = ([f"nodes.{name}.profile" for name in normalized["nodes"]] if "nodes" in normalized
                         else ["energy.sender", "energy.receiver"])
            pairs = [(slot, profile) for slot in slots]
        else:
            raise scenario_error(f"profiles.{i}", "expected a profile (a built-in name, a profile file or a "
                                                  f"table) or a dict of energy overrides, got {type(profile).__name__}")
        try:
            out.append(encode_overrides(pairs))
        except ScenarioError as exc:
            raise scenario_error(f"profiles.{i}.{exc.path}" if getattr(exc, "path", "") else f"profiles.{i}",
                                 getattr(exc, "message", None) or str(exc)) from None
    return out


def profile_records(record: Mapping[str, Any]) -> list:
    """The records of runs under each further profile of ``record`` (see :func:`run`), in order:
    each is ``record`` with that profile's keys in place of its own (and no ``profiles``)."""
    base = {k: v for k, v in record.items() if k != "profiles"}
    return [_overlay(copy.deepcopy(base), part) for part in record.get("profiles", [])]


def _overlay(record: dict, part: Mapping[str, Any]) -> dict:
    for key, value in part.items():
        if isinstance(value, Mapping) and isinstance(record.get(key), dict):
            _overlay(record[key], value)
        else:
            record[key] = copy.deepcopy(value)
    return record


def run(scenario: ScenarioLike, seed: Optional[int] = None, *, pcap: Optional[PathLike] = None,
        node_pcap: Optional[PathLike] = None, force: bool = False, profiles: Sequence[ProfileLike] = (),
        trace: Union[bool, Mapping[str, Sequence[str]]] = False, **overrides: Any) -> dict:
    """Run a scenario (a Scenario, a dict or a path) and return its result record as a dict.

    ``seed`` replaces the scenario's seed; keyword overrides use dotted keys, e.g.
    ``run(s, **{"tcp.variant": "newreno", "path.forward.impairments.0.p": 0.05})``.
    ``pcap=DIR`` also writes each interface's packets to ``DIR/<from>-<to>.pcap``
    (``sender-receiver.pcap`` and ``receiver-sender.pcap`` for a single path; docs/capture.md);
    ``node_pcap=DIR`` each node's own view to ``DIR/<node>.pcap`` (:func:`execute`).
    A run far beyond this machine (:func:`estimate`) raises ScenarioError unless ``force=True``.

    ``profiles=[A, B, ...]`` prices the same run under further profiles too: each a profile (a
    built-in name, a profile TOML file or a table) for every node, or a dict of energy overrides
    (``{"energy.sender": ..., "energy.radio_policy": "ideal"}``, ``{"nodes.ap.profile": ...}``).
    The record then has ``profiles``: per profile, the keys that depend on it (the energy
    sections, each node's energy, the network totals), and :func:`profile_records` gives each
    profile's whole record, the one a separate run under it gives. A profile that would change the
    run itself (802.11 power save on or off, another radio PHY, the profile of a node whose battery
    ends the run) raises ScenarioError naming it (docs/units-and-scenarios.md).

    ``trace=True`` adds the record's ``trace`` columns (:func:`execute`): the sender's for a
    single path, every flow's for a network; ``trace={"flows": [...], "nodes": [...]}`` names
    the flows and nodes of a network to trace.
    """
    flows, nodes = _trace_selection(trace)
    record, columns = execute(scenario, seed, list(overrides.items()), trace=bool(trace), pcap=pcap,
                              force=force, profiles=profiles, trace_flows=flows,
                              trace_nodes=nodes, node_pcap=node_pcap)
    if trace:
        record["trace"] = columns or {}
    return record


def _trace_selection(trace: Union[bool, Mapping[str, Sequence[str]]]) -> Tuple[Optional[List[str]], List[str]]:
    if isinstance(trace, bool):
        return None, []
    if not isinstance(trace, Mapping) or set(trace) - {"flows", "nodes"}:
        raise scenario_error("trace", "must be True, False or a mapping with 'flows' and/or 'nodes' (lists of names)")
    # Naming nodes alone traces no flow.
    flows = trace.get("flows", [] if "nodes" in trace else None)
    return (None if flows is None else [str(f) for f in flows]), [str(n) for n in trace.get("nodes", [])]


def run_traced(
    scenario: ScenarioLike, seed: Optional[int] = None, *, force: bool = False, **overrides: Any
) -> Tuple[dict, "pd.DataFrame"]:
    """Like :func:`run`, and also return the sender's time series (cwnd, RTO, radio state, power...)."""
    import pandas as pd

    record, columns = execute(scenario, seed, list(overrides.items()), trace=True, force=force)
    return record, pd.DataFrame(columns or {})


def validate(scenario: ScenarioLike, **overrides: Any) -> dict:
    """The normalized scenario (every default filled in) after overrides."""
    check_overrides(list(overrides.items()))
    return _validate(as_scenario(scenario), list(overrides.items()))


def to_frame(results: Union[Mapping[str, Any], Iterable[Mapping[str, Any]]]) -> "pd.DataFrame":
    """One flat row per result record; nested keys become dotted columns such as
    ``"flow.goodput_bps"`` or ``"energy.sender.breakdown_j.cpu"``, and each run's inputs become
    ``"parameters.scenario"``, ``"parameters.<dotted key>"`` and ``"parameters.seed"``, so
    ``frame.groupby("parameters.path.forward.impairments.0.p")`` groups by what was varied."""
    import pandas as pd

    records = [results] if isinstance(results, Mapping) else list(results)
    return pd.DataFrame([flatten(record) for record in records])
