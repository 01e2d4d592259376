"""Reproductions of the seed papers: each paper's experiments as sweeps, its claims checked.

    from tcpenergy.reproduce import reproduce
    outcome = reproduce("seed-000", "out/seed-000", quick=True)
    outcome.tally        # {"holds": ..., "does_not_hold": ..., "consistency": ..., "not_modelled": ...}

Writes OUT/runs.duckdb (resumable), OUT/sweeps/*.toml, OUT/claims.json and OUT/report/.
"""

from __future__ import annotations

from pathlib import Path
from typing import AbstractSet, Any, Callable, Dict, Optional, Union

from tcpenergy.reproduce.registry import known_papers, paper


def describe(paper_id: str) -> str:
    return paper(paper_id).description


def reproduce(paper: str, out_dir: Union[str, Path], quick: bool = False, jobs: Optional[int] = None,
              progress: bool = True, log: Callable[[str], None] = print, part: Optional[str] = None, *,
              transform: Optional[Callable[[Any], Any]] = None, keep: Optional[AbstractSet[str]] = None,
              report: bool = True, network: Optional[str] = None) -> Any:
    """Run (or resume) a paper's reproduction into ``out_dir``; returns the paper module's Outcome.

    ``part``: for papers split into parts (``Paper.parts``), which one (default: every part).
    ``network``: for seeds 000 and 002, "testbed" (the 802.11b chain) or "path" (the single path);
    default: the network ``out_dir``'s reproduction ran on, else "path".
    ``transform``, ``keep``, ``report``: passed to the paper's ``run`` (each experiment as
    ``transform(exp)``; only the sweeps named in ``keep``; no report when False); the defaults run
    the reproduction as defined.
    """
    from tcpenergy.reproduce import networks, registry

    module = registry.package(paper)
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


__all__ = ["known_papers", "describe", "reproduce"]
