"""Reproductions of the seed papers: each paper's experiments as sweeps, its claims checked.

    from tcpenergy.reproduce import reproduce
    outcome = reproduce("seed-000", "out/seed-000", quick=True)
    outcome.tally        # {"holds": ..., "does_not_hold": ..., "consistency": ..., "not_modelled": ...}

Writes OUT/runs.duckdb (resumable), OUT/sweeps/*.toml, OUT/claims.json and OUT/report/.
"""

from __future__ import annotations

from pathlib import Path
from typing import AbstractSet, Any, Callable, Dict, List, Mapping, Optional, Union

from tcpenergy.reproduce.registry import known_papers, paper


def describe(paper_id: str) -> str:
    return paper(paper_id).description


def reproduce(paper: str, out_dir: Union[str, Path], quick: bool = False, jobs: Optional[int] = None,
              progress: bool = True, log: Callable[[str], None] = print, part: Optional[str] = None, *,
              transform: Optional[Callable[[Any], Any]] = None, keep: Optional[AbstractSet[str]] = None,
              report: bool = True, network: Optional[str] = None,
              readings: Optional[Mapping[str, str]] = None) -> Any:
    """Run (or resume) a paper's reproduction into ``out_dir``; returns the paper module's Outcome.

    ``part``: for papers split into parts (``Paper.parts``), which one (default: every part).
    ``network``: for seeds 000 and 002, "testbed" (the 802.11b chain) or "path" (the single path);
    default: the network ``out_dir``'s reproduction ran on, else "path".
    ``readings``: reading key -> alternative, for the paper's open readings (``readings.yaml``; default:
    the taken ones); a directory keeps the readings it was first run under.
    ``transform``, ``keep``, ``report``: passed to the paper's ``run`` (each experiment as
    ``transform(exp)``; only the sweeps named in ``keep``; no report when False); the defaults run
    the reproduction as defined.
    """
    from tcpenergy.reproduce import readings as readings_mod
    from tcpenergy.reproduce import registry

    module = registry.package(paper)
    choice = readings_mod.check(paper, module.__name__, readings)
    with readings_mod.active(choice):
        return _run_package(module, paper, Path(out_dir), quick, jobs, progress, log, part, transform, keep,
                            report, network)


def _run_package(module, paper, out_dir, quick, jobs, progress, log, part, transform, keep, report, network):
    from tcpenergy.reproduce import networks, registry

    facts = module.PAPER
    hooks: Dict[str, Any] = {"transform": transform, "keep": keep, "report": report}
    if facts.networks:
        if network is not None:
            networks.check_network(network)
        hooks["network"] = networks.choose_network(network, Path(out_dir))
    elif network is not None:
        raise ValueError(f"{paper} has no network choice; it applies to {', '.join(registry.network_papers())}")
    if facts.parts:
        if part is not None and part not in facts.parts:
            why = facts.unbuilt_parts.get(part, "unknown part")
            raise ValueError(f"{paper} part {part!r} is not available ({why}); available: {', '.join(facts.parts)}")
        return module.run(Path(out_dir), quick=quick, jobs=jobs, progress=progress, log=log, part=part, **hooks)
    if part is not None:
        raise ValueError(f"{paper} has no parts")
    return module.run(Path(out_dir), quick=quick, jobs=jobs, progress=progress, log=log, **hooks)


def alternatives(paper: str, out_dir: Union[str, Path], quick: bool = False, jobs: Optional[int] = None,
                 progress: bool = True, log: Callable[[str], None] = print, **options: Any) -> Dict[str, Any]:
    """Run the reproduction on its taken readings into ``out_dir`` and, for each declared reading and
    each of its other alternatives, once more with that one reading changed, into
    ``out_dir/alternatives/KEY=ALT``; write ``out_dir/alternatives.json`` with the claims each
    alternative flips (their rules' verdicts, fit or not) and return it. ``options``: as for
    :func:`reproduce` (``network``, ``part``)."""
    import json

    from tcpenergy.reproduce import readings as readings_mod
    from tcpenergy.reproduce import registry

    declared = readings_mod.load(registry.package(paper).__name__)
    if not declared:
        raise readings_mod.ReadingError(f"{paper} declares no readings (no readings.yaml), so it has no alternatives")
    out_dir = Path(out_dir)
    taken = reproduce(paper, out_dir, quick=quick, jobs=jobs, progress=progress, log=log, **options)
    summary: Dict[str, Any] = {"paper": paper, "quick": quick,
                               "taken": {key: r.taken for key, r in declared.items()}, "alternatives": []}
    for key, reading in declared.items():
        for alt in reading.alternatives:
            if alt == reading.taken:
                continue
            log(f"reading {key} = {alt}")
            where = out_dir / "alternatives" / f"{key}={alt}"
            other = reproduce(paper, where, quick=quick, jobs=jobs, progress=progress, log=log,
                              readings={key: alt}, report=False, **options)
            summary["alternatives"].append({
                "reading": key, "alternative": alt, "tally": other.tally,
                "flips": readings_mod.flips(taken.claims, other.claims)})
    path = out_dir / readings_mod.FLIPS
    path.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return summary


__all__ = ["known_papers", "describe", "reproduce", "alternatives"]
