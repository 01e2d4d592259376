"""Pieces shared by every paper's reproduction: the sweep description, writing and running sweeps
into the results store, loading the runs back, and report tables."""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import AbstractSet, Any, Callable, Dict, List, Mapping, Optional, Sequence

from tcpenergy import toml_writer

# The testbeds' TCP stacks as `tcp.stack` presets (docs/models/tcp.md, "Stack presets"): the
# timer ticks, RTO bounds, delayed ACK, initial window and the default socket buffers, which ttcp
# leaves alone (FreeBSD's 32 KiB send buffer holds every unacknowledged byte, so no more than
# 32 KiB is ever in flight). Seeds 000 and 002 ran ttcp on FreeBSD 4.3; seed 003 ran RedHat 6.1
# (Linux 2.2).
FREEBSD43 = {"stack": "freebsd-4.3"}
LINUX22 = {"stack": "linux-2.2"}


def random_phase(impairment: Dict[str, Any], group: Optional[str] = None) -> Dict[str, Any]:
    """A periodic impairment (``periodic_burst``, ``outage``) with a per-run random phase in
    [0, every): a testbed's script never starts in lock-step with a transfer, and a perfectly
    periodic channel can phase-lock with a doubled retransmission timer. Impairments given the
    same ``group`` share one phase (one route failing in both directions at once)."""
    out = dict(impairment, offset="random")
    if group is not None:
        out["phase_group"] = group
    return out


@dataclass
class Experiment:
    """One sweep: a base scenario and the axes varied over it (the sweep TOML contract)."""

    name: str
    description: str
    base: Dict[str, Any]
    axes: Dict[str, List[Any]]
    repetitions: int
    fixed: Dict[str, Any] = field(default_factory=dict)
    seeds: Optional[List[int]] = None

    def seed_list(self) -> List[int]:
        return list(self.seeds) if self.seeds is not None else list(range(1, self.repetitions + 1))

    def sweep_document(self, base_file: str) -> Dict[str, Any]:
        doc: Dict[str, Any] = {"base": base_file, "name": self.name}
        if self.seeds is not None:
            doc["seeds"] = list(self.seeds)
        else:
            doc["repetitions"] = self.repetitions
        doc["axes"] = {k: list(v) for k, v in self.axes.items()}
        if self.fixed:
            doc["set"] = dict(self.fixed)
        return doc

    def cells(self) -> int:
        return math.prod(len(v) for v in self.axes.values())


@dataclass
class Outcome:
    """What a paper's ``run`` returns."""

    out_dir: Path
    claims: List[Dict[str, Any]]
    tally: Dict[str, int]
    runs: int
    wall_s: float
    report_files: List[Path]
    failed_runs: int = 0
    incomplete_runs: int = 0  # ran to the stop_after cap; counted and listed, never averaged in
    skipped: List[str] = field(default_factory=list)  # sweeps left out by ``keep`` (run(..., keep=...))


def incomplete_count(runs) -> int:
    """How many of these (ok) runs stopped before their transfer completed."""
    from tcpenergy.experiments.completeness import usable

    return int((~usable(runs)).sum()) if len(runs) else 0


def write_experiment(exp: Experiment, directory: Path, paper_id: str) -> Path:
    """Write ``<name>.base.toml`` and ``<name>.sweep.toml``; returns the sweep file."""
    directory.mkdir(parents=True, exist_ok=True)
    base_file = directory / f"{exp.name}.base.toml"
    sweep_file = directory / f"{exp.name}.sweep.toml"
    # TOML is UTF-8 by definition, and descriptions hold non-ASCII text such as "§".
    base_file.write_text(toml_writer.dumps(exp.base, header=f"{exp.description}\nBase scenario written by "
                                                     f"`tcpenergy reproduce {paper_id}`."), encoding="utf-8")
    sweep_file.write_text(toml_writer.dumps(exp.sweep_document(base_file.name),
                                      header=f"{exp.description}\nRerun alone with: tcpenergy sweep "
                                             f"{sweep_file.name} --store ../runs.duckdb"), encoding="utf-8")
    return sweep_file


def output_layout(out_dir: Path):
    """Create OUT and return (OUT, OUT/sweeps, OUT/runs.duckdb), the layout every reproduction writes.
    The store of an earlier reproduction into OUT is checked first (StoreError if it is not an intact
    store), so a damaged one is refused before anything is written."""
    from tcpenergy.experiments.store import check_store

    out_dir = Path(out_dir)
    store_path = out_dir / "runs.duckdb"
    if store_path.exists():
        check_store(store_path)
    out_dir.mkdir(parents=True, exist_ok=True)
    return out_dir, out_dir / "sweeps", store_path


def _run_sweep(sweep_file: Path, store_path: Path, jobs: Optional[int], progress: bool):
    from tcpenergy.experiments import sweep

    return sweep(sweep_file, store=store_path, jobs=jobs, progress=progress)


# What a paper's ``run`` may be given besides where and how fast to run (all default to the
# plain reproduction): ``transform`` maps each experiment to the one actually run (the sensitivity
# sweep sets a profile figure with it), ``keep`` names the sweeps to run (None: all), ``report``
# False skips the report.
Transform = Callable[[Experiment], Experiment]


def run_experiments(exps: Sequence[Experiment], sweeps_dir: Path, store_path: Path, jobs: Optional[int],
                    progress: bool, log: Callable[[str], None],
                    write: Callable[[Experiment, Path], Path], transform: Optional[Transform] = None,
                    keep: Optional[AbstractSet[str]] = None) -> int:
    """Write each experiment's sweep file with ``write`` (the paper's ``write_experiment``) and run
    (or resume) it into the store; returns the number of failed runs. Only the experiments named in
    ``keep`` run (None: all), each as ``transform(exp)`` when a transform is given."""
    failed = 0
    for exp in exps:
        if not kept(exp.name, keep):
            continue
        if transform is not None:
            exp = transform(exp)
        log(f"sweep {exp.name}: {exp.cells()} settings x {len(exp.seed_list())} seeds")
        failed += _run_sweep(write(exp, sweeps_dir), store_path, jobs, progress).failed
    return failed


def kept(name: str, keep: Optional[AbstractSet[str]]) -> bool:
    """Whether the sweep ``name`` runs under ``keep`` (None keeps every sweep)."""
    return keep is None or name in keep


def left_out(exps: Sequence[Experiment], keep: Optional[AbstractSet[str]]) -> List[str]:
    """The names of the experiments ``keep`` leaves out, in order (for ``Outcome.skipped``)."""
    return [exp.name for exp in exps if not kept(exp.name, keep)]


def profile_table(spec: Any) -> Dict[str, Any]:
    """A profile as an inline table without its metadata: a name is looked up among the built-in profiles."""
    from tcpenergy import devices

    if isinstance(spec, Mapping):
        table = copy.deepcopy(dict(spec))
    else:
        found = devices.get(str(spec))
        if found is None:  # pragma: no cover - the scenario validated, so the name exists
            raise ValueError(f"unknown device profile {spec!r}")
        table = copy.deepcopy(found)
    for meta in ("description", "estimated", "sources"):
        table.pop(meta, None)
    return table


def node_profile(scenario: Mapping[str, Any], node: str) -> Dict[str, Any]:
    """The profile ``node`` ("sender" or "receiver") of ``scenario`` runs with, as a table (engine
    defaults filled in by validation); in a network scenario, the profile of the first flow's source
    or destination node."""
    from tcpenergy import api

    valid = api.validate(dict(scenario))
    if "nodes" in valid and "flows" in valid:
        name = valid["flows"][0]["from" if node == "sender" else "to"]
        return profile_table(valid["nodes"][name]["profile"])
    return profile_table(valid["energy"][node])


def load_runs(store_path: Path):
    """Every run in the store, as a DataFrame."""
    from tcpenergy.experiments import open_store

    store = open_store(store_path)
    try:
        return store.runs()
    finally:
        close = getattr(store, "close", None)
        if close is not None:
            close()


def select_runs(frame, exps: Sequence[Experiment], all_runs: bool = False):
    """The ok runs of these sweeps with their seeds, by this engine version (a store may hold more:
    a full run's seeds, or runs of an older engine). ``all_runs``: every attempted run, failed ones
    included (the claims count n complete / n run from it)."""
    import pandas as pd

    from tcpenergy._version import engine_version

    if "engine_version" in frame.columns:
        frame = frame[frame["engine_version"] == engine_version()]
    parts = []
    for exp in exps:
        part = frame[(frame["sweep"] == exp.name) & frame["seed"].isin(exp.seed_list())]
        # A store may hold the same sweep on both networks (seeds 000/002 --network): the runs of
        # this experiment are those of its base scenario.
        if exp.base.get("name") and "name" in part.columns:
            part = part[part["name"] == exp.base["name"]]
        if "status" in part and not all_runs:
            part = part[part["status"] == "ok"]
        parts.append(part)
    return pd.concat(parts, ignore_index=True) if parts else frame.iloc[0:0]


def table_section(header: Sequence[str], rows: Sequence[Sequence[Any]], intro: str, heading: str):
    """A report section holding one table: ``(heading, html body, markdown)``."""
    from tcpenergy.report.markup import inline

    md = [intro, "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    md += ["| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |" for row in rows]
    body = (f"<p>{inline(intro)}</p>\n<table>\n<thead><tr>"
            + "".join(f"<th>{inline(h)}</th>" for h in header) + "</tr></thead>\n<tbody>\n"
            + "\n".join("<tr>" + "".join(f"<td>{inline(c)}</td>" for c in row) + "</tr>"
                        for row in rows) + "\n</tbody>\n</table>")
    return (heading, body, "\n".join(md))


@dataclass(frozen=True)
class FollowUp:
    """A sweep built from the runs before it (seed 000 matches a random loss rate to the loss its
    bursty runs measured): ``build`` gets the ok runs of the experiments so far and returns the
    experiment; it runs after them, and only when ``keep`` keeps ``name``."""

    name: str
    build: Callable[[Any], Experiment]


def run_package(package: Any, out_dir: Path, quick: bool = False, jobs: Optional[int] = None, progress: bool = True,
                log: Callable[[str], None] = print, *, transform: Optional[Transform] = None,
                keep: Optional[AbstractSet[str]] = None, report: bool = True) -> Outcome:
    """[`run_and_judge`] for a paper whose experiments need no choice of network or part: its
    package (``PAPER_ID``, ``experiments``, ``add_metrics``, ``CLAIMS``, ``write_report``) and its
    claims judged by code (the package's ``claims`` module) say everything."""
    from importlib import import_module

    judged = import_module(package.__name__ + ".claims")
    return run_and_judge(package.PAPER_ID, package.experiments(quick), out_dir, quick=quick, jobs=jobs,
                         progress=progress, log=log, transform=transform, keep=keep, report=report,
                         add_metrics=package.add_metrics, evaluate=judged.evaluate, claims=package.CLAIMS,
                         write_report=package.write_report)


def run_and_judge(paper_id: str, exps: Sequence[Experiment], out_dir: Path, *, quick: bool, jobs: Optional[int],
                  progress: bool, log: Callable[[str], None], transform: Optional[Transform],
                  keep: Optional[AbstractSet[str]], report: bool, evaluate: Callable[..., List[Dict[str, Any]]],
                  claims: Any, write_report: Callable[..., List[Path]],
                  add_metrics: Optional[Callable[[Any], Any]] = None,
                  prepare: Optional[Callable[[Path], None]] = None, view: Optional[Callable[[Any], Any]] = None,
                  follow_ups: Sequence[FollowUp] = ()) -> Outcome:
    """The steps every reproduction shares: run (or resume) its experiments into OUT/runs.duckdb,
    judge its claims (the packaged file ``claims``) over every attempted run (so verdicts count
    n complete / n run), write OUT/claims.json and, when ``report``, the report from the complete
    runs. ``add_metrics``: the paper's per-run columns (None: none); ``prepare``: called with OUT
    once it exists, before anything runs (seeds 000 and 002 record their network there);
    ``view``: how the stored runs are read (seeds 000 and 002: the testbed's columns under the
    path form's names, ``networks.logical_columns``); ``follow_ups``: sweeps built from the runs
    before them."""
    import time

    from tcpenergy.reproduce import claims as claims_mod
    from tcpenergy.reproduce import readings

    started = time.perf_counter()
    add = add_metrics or (lambda runs: runs)
    out_dir, sweeps_dir, store_path = output_layout(out_dir)
    choice = readings.current()
    if choice is not None:
        readings.record_in(out_dir, choice)
    if prepare is not None:
        prepare(out_dir)

    def stored_runs():
        frame = load_runs(store_path)
        return view(frame) if view is not None else frame

    exps = list(exps)
    write = lambda exp, directory: write_experiment(exp, directory, paper_id)  # noqa: E731
    failed = run_experiments(exps, sweeps_dir, store_path, jobs, progress, log, write, transform, keep)
    skipped = left_out(exps, keep)
    for follow_up in follow_ups:
        if not kept(follow_up.name, keep):
            skipped.append(follow_up.name)
            continue
        extra = follow_up.build(select_runs(stored_runs(), exps))
        failed += run_experiments([extra], sweeps_dir, store_path, jobs, progress, log, write, transform)
        exps.append(extra)
    frame = stored_runs()
    runs = add(select_runs(frame, exps))
    results = evaluate(add(select_runs(frame, exps, all_runs=True)), claims_mod.load_claims(claims), quick=quick)
    results = readings.mark_fit(results, choice)
    claims_mod.write_claims_json(results, out_dir / "claims.json")
    files = write_report(runs, results, out_dir, exps, quick=quick) if report else []
    return Outcome(out_dir, results, claims_mod.tally(results), len(runs), time.perf_counter() - started,
                   files, failed, incomplete_count(runs), skipped)
