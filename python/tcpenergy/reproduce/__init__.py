"""Reproductions of the seed papers: each paper's experiments as sweeps, its claims checked.

    from tcpenergy.reproduce import reproduce
    outcome = reproduce("seed-000", "out/seed-000", quick=True)
    outcome.tally        # {"holds": ..., "does_not_hold": ..., "consistency": ..., "not_modelled": ...}

Writes OUT/runs.duckdb (resumable), OUT/sweeps/*.toml, OUT/claims.json and OUT/report/.
"""

from __future__ import annotations

from importlib import import_module
from pathlib import Path
from typing import AbstractSet, Any, Callable, Dict, List, Optional, Union

# Paper id -> (module, one-line description). The module provides
# run(out_dir, quick, jobs, progress, log, *, transform, keep, report).
PAPERS: Dict[str, tuple] = {
    "seed-000": ("tcpenergy.reproduce.seed000",
                 "Singh & Singh: energy of TCP Reno, NewReno and SACK over a 3-hop wireless chain"),
    "seed-001": ("tcpenergy.reproduce.seed001",
                 "Donckers, Havinga, Smit & Smit: E2TCP against Tahoe, Reno and NewReno on one bursty wireless hop"),
    "seed-002": ("tcpenergy.reproduce.seed002",
                 "energy of TCP-SACK vs TCP-ECN-ELFN over a 4-node ad hoc chain"),
    "seed-004": ("tcpenergy.reproduce.seed004",
                 "Mamatas & Tsaoussidis: TCP(alpha, beta) effort, goodput, EEE, EP and Risk Index on a dumbbell"),
    "seed-003": ("tcpenergy.reproduce.seed003",
                 "Agrawal & Singh: Linux TCP options, battery lifetime, RTS/CTS and interference on one 802.11b hop"),
}

# Paper id -> (parts built, {part not yet built: why}). Papers not listed have no parts.
PARTS: Dict[str, tuple] = {
    "seed-003": (("options", "battery-lifetime", "rts-cts", "interference"), {}),
}


def known_papers() -> List[str]:
    return sorted(PAPERS)


def describe(paper: str) -> str:
    return PAPERS[paper][1]


def reproduce(paper: str, out_dir: Union[str, Path], quick: bool = False, jobs: Optional[int] = None,
              progress: bool = True, log: Callable[[str], None] = print, part: Optional[str] = None, *,
              transform: Optional[Callable[[Any], Any]] = None, keep: Optional[AbstractSet[str]] = None,
              report: bool = True, network: Optional[str] = None) -> Any:
    """Run (or resume) a paper's reproduction into ``out_dir``; returns the paper module's Outcome.

    ``part``: for papers split into parts (see PARTS), which one (default: every part).
    ``network``: for seeds 000 and 002, "testbed" (the 802.11b chain) or "path" (the single path);
    default: the network ``out_dir``'s reproduction ran on, else "path".
    ``transform``, ``keep``, ``report``: passed to the paper's ``run`` (each experiment as
    ``transform(exp)``; only the sweeps named in ``keep``; no report when False); the defaults run
    the reproduction as defined.
    """
    if paper not in PAPERS:
        raise KeyError(f"unknown paper {paper!r}; known: {', '.join(known_papers())}")
    module = import_module(PAPERS[paper][0])
    hooks: Dict[str, Any] = {"transform": transform, "keep": keep, "report": report}
    from tcpenergy.reproduce.common import DEFAULT_NETWORK, NETWORK_PAPERS, NETWORKS, recorded_network
    if paper in NETWORK_PAPERS:
        if network is not None and network not in NETWORKS:
            raise ValueError(f"network must be one of {', '.join(NETWORKS)}, got {network!r}")
        hooks["network"] = network or recorded_network(Path(out_dir)) or DEFAULT_NETWORK
    elif network is not None:
        raise ValueError(f"{paper} has no network choice; it applies to {', '.join(NETWORK_PAPERS)}")
    if paper in PARTS:
        built, unbuilt = PARTS[paper]
        if part is not None and part not in built:
            why = unbuilt.get(part, "unknown part")
            raise ValueError(f"{paper} part {part!r} is not available ({why}); available: {', '.join(built)}")
        return module.run(Path(out_dir), quick=quick, jobs=jobs, progress=progress, log=log, part=part, **hooks)
    if part is not None:
        raise ValueError(f"{paper} has no parts")
    return module.run(Path(out_dir), quick=quick, jobs=jobs, progress=progress, log=log, **hooks)


__all__ = ["PAPERS", "PARTS", "known_papers", "describe", "reproduce"]
