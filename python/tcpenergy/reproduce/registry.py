"""The one list of reproductions. Each paper is a package under ``tcpenergy.reproduce`` holding its
claims (``claims.yaml``), their rules (``rules.yaml``), its setup and run (``__init__.py``) and the
claims judged by code (``claims.py``); its ``__init__`` declares the paper as ``PAPER``. Adding a
paper is one package and one line in ``PACKAGES``."""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import import_module
from types import ModuleType
from typing import Dict, List, Mapping, Tuple

# The paper packages, by module name under tcpenergy.reproduce.
PACKAGES = ("seed000", "seed001", "seed002", "seed003", "seed004", "huang2012")


@dataclass(frozen=True)
class Paper:
    """What the command line and the shared pipeline need to know of a paper."""

    id: str  # "seed-000", as `tcpenergy reproduce` names it
    description: str  # one line, for --help and error messages
    citation: str  # authors and title, for the reports' claims sections
    # Runs on either the 802.11b testbed chain or the path abstraction (`--network`).
    networks: bool = False
    # The parts a paper is split into (`--part`), and the parts not yet built with why.
    parts: Tuple[str, ...] = ()
    unbuilt_parts: Mapping[str, str] = field(default_factory=dict)


def _packages() -> Dict[str, ModuleType]:
    modules = [import_module(f"tcpenergy.reproduce.{name}") for name in PACKAGES]
    return {module.PAPER.id: module for module in modules}


def known_papers() -> List[str]:
    return sorted(_packages())


def package(paper: str) -> ModuleType:
    """The paper's package (its ``run``, ``experiments``, ``PAPER``); KeyError for an unknown id."""
    found = _packages()
    if paper not in found:
        raise KeyError(f"unknown paper {paper!r}; known: {', '.join(sorted(found))}")
    return found[paper]


def paper(paper_id: str) -> Paper:
    return package(paper_id).PAPER


def claims_module(paper_id: str) -> ModuleType:
    """The paper's claims judged by code, with ``evaluate`` and ``ENERGY_CLAIMS``."""
    return import_module(package(paper_id).__name__ + ".claims")


def network_papers() -> Tuple[str, ...]:
    """The papers that run on either network (`--network testbed|path`)."""
    return tuple(p for p in known_papers() if paper(p).networks)


__all__ = ["PACKAGES", "Paper", "known_papers", "package", "paper", "claims_module", "network_papers"]
