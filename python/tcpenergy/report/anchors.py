"""The HTML id of a claim's row in a report's claims checklist: the checklist (written by the
reproductions) and the notes the sensitivity report adds to it must name the same rows."""

from __future__ import annotations

import re


def claim_anchor(claim_id: str) -> str:
    """The HTML id of a claim's evidence row."""
    return "claim-" + re.sub(r"[^A-Za-z0-9_-]", "-", str(claim_id))
