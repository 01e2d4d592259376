"""The huang-2012 claims are all rules (rules.yaml): orderings of the radios' transfer energy,
ratios of its parts, and trends over transfer size and the tail timer; none needs code."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Mapping, Sequence

from tcpenergy.reproduce import rules
from tcpenergy.reproduce.claims import Verdict
from tcpenergy.reproduce.huang2012 import RULES

QUICK_NOTE = " (quick mode: fewer sizes, T_tail values and seeds)"

CODE: Dict[str, Callable[[Any, Any, Mapping[str, Any]], Verdict]] = {}

# Every judged claim reads the phone's meter (H12-C04's promotion count aside, which the profile's
# timers, not its powers, decide).
ENERGY_CLAIMS: frozenset = frozenset({"H12-C01", "H12-C02", "H12-C03", "H12-C04", "H12-C06"})


def evaluate(runs, entries: Sequence[Mapping[str, Any]], quick: bool = False) -> List[Dict[str, Any]]:
    """One claims.json record per entry. ``runs``: every attempted run (with huang2012.add_metrics)."""
    return rules.evaluate(runs, entries, RULES, {}, quick, quick_note=QUICK_NOTE)
