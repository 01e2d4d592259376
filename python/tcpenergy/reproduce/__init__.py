"""Reproductions of the seed papers: each paper's experiments as sweeps, its claims checked.

    from tcpenergy.reproduce import reproduce
    outcome = reproduce("seed-000", "out/seed-000", quick=True)
    outcome.tally        # {"holds": ..., "does_not_hold": ..., "not_modelled": ...}

Writes OUT/runs.duckdb (resumable), OUT/sweeps/*.toml, OUT/claims.json and OUT/report/.
"""

from __future__ import annotations

from importlib import import_module
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Union

# Paper id -> (module, one-line description). The module provides run(out_dir, quick, jobs, progress, log).
PAPERS: Dict[str, tuple] = {
    "seed-000": ("tcpenergy.reproduce.seed000",
                 "Singh & Singh: energy of TCP Reno, NewReno and SACK over a 3-hop wireless chain"),
}


def known_papers() -> List[str]:
    return sorted(PAPERS)


def describe(paper: str) -> str:
    return PAPERS[paper][1]


def reproduce(paper: str, out_dir: Union[str, Path], quick: bool = False, jobs: Optional[int] = None,
              progress: bool = True, log: Callable[[str], None] = print) -> Any:
    """Run (or resume) a paper's reproduction into ``out_dir``; returns the paper module's Outcome."""
    if paper not in PAPERS:
        raise KeyError(f"unknown paper {paper!r}; known: {', '.join(known_papers())}")
    module = import_module(PAPERS[paper][0])
    return module.run(Path(out_dir), quick=quick, jobs=jobs, progress=progress, log=log)


__all__ = ["PAPERS", "known_papers", "describe", "reproduce"]
