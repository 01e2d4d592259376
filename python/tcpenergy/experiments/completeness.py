"""Which runs a statistic may use: complete runs only.

A run is *usable* when it succeeded (status "ok") and its transfer ended (the record's
``complete`` is true). A run that hit ``stop_after`` first is *incomplete*: its goodput, times and
energies describe a transfer cut short, and averaging them with finished transfers would mix two
different things. Failed runs have no results at all. Both kinds are left out of every mean and
interval by default, counted (``runs`` attempted, ``complete`` usable) and listed with the reason
(:func:`left_out`).
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any, List, Sequence

from tcpenergy.experiments.frame import label_columns

if TYPE_CHECKING:
    import pandas as pd

LEFT_OUT_COLUMNS = ("sweep", "seed", "run_key")


def ok(frame: "pd.DataFrame") -> "pd.Series":
    """True for runs with status "ok" (every run of a frame without a status column)."""
    import pandas as pd

    if "status" not in frame.columns:
        return pd.Series(True, index=frame.index, dtype=bool)
    return frame["status"].eq("ok").astype(bool)


def usable(frame: "pd.DataFrame") -> "pd.Series":
    """True for runs with status "ok" whose record says ``complete``; a frame without a
    ``complete`` column counts its ok runs as complete."""
    mask = ok(frame)
    if "complete" in frame.columns:
        # Identity with True, not truthiness: a missing value (NaN, None) is not a complete run.
        import numpy as np

        mask &= frame["complete"].map(lambda v: isinstance(v, (bool, np.bool_)) and bool(v)
                                      ).astype(bool)
    return mask


def complete_runs(frame: "pd.DataFrame") -> "pd.DataFrame":
    return frame[usable(frame)]


def left_out(frame: "pd.DataFrame") -> "pd.DataFrame":
    """One row per run that is not usable: sweep, seed, run_key, the label.* columns, status
    ("failed" or "incomplete") and the reason in plain words."""
    import pandas as pd

    labels = label_columns(frame)
    columns = list(LEFT_OUT_COLUMNS) + labels + ["status", "reason"]
    bad = frame[~usable(frame)]
    rows = []
    for _, run in bad.iterrows():
        failed = run.get("status", "ok") != "ok"
        row = {c: run.get(c) for c in LEFT_OUT_COLUMNS}
        row.update({c: run[c] for c in labels})
        row["status"] = "failed" if failed else "incomplete"
        row["reason"] = _failure(run) if failed else _incompleteness(run)
        rows.append(row)
    return pd.DataFrame(rows, columns=columns)


def run_counts(frame: "pd.DataFrame", by: Sequence[str]) -> "pd.DataFrame":
    """Per group of ``by`` (in order of first appearance): ``runs`` attempted (failed included)
    and ``complete`` (usable runs)."""
    import pandas as pd

    by = list(by)
    missing = [c for c in by if c not in frame.columns]
    if missing:
        raise KeyError(f"no column {missing[0]!r} in the runs frame")
    counts = pd.DataFrame({"runs": 1, "complete": usable(frame).astype(int)}, index=frame.index)
    if not by:
        return pd.DataFrame({"runs": [int(len(frame))],
                             "complete": [int(counts["complete"].sum())]})
    keys = [frame[c].map(hashable).rename(c) for c in by]
    out = counts.groupby(keys, sort=False, dropna=False).sum().reset_index()
    return out.astype({"runs": int, "complete": int})


def hashable(value: Any) -> Any:
    """Group keys must be hashable: a list or table label (an axis over impairment lists, say)
    groups by its JSON text."""
    return json.dumps(value, sort_keys=True) if isinstance(value, (list, dict)) else value


# ---------------------------------------------------------------------------------------------
# reasons


def _failure(run: "pd.Series") -> str:
    error = run.get("error")
    return f"failed: {error}" if _present(error) else "failed (no error text stored)"


def _incompleteness(run: "pd.Series") -> str:
    """E.g. "stopped at the stop_after cap of 1h (simulated time 3600 s) with 63,248 of
    5,000,000 bytes delivered"."""
    parts: List[str] = []
    cap, at = run.get("stop_after"), run.get("sim_time_s")
    if _present(cap):
        parts.append(f"stopped at the stop_after cap of {cap}")
    else:
        parts.append("stopped before the transfer ended")
    if _present(at):
        parts.append(f"(simulated time {_number(at)} s)")
    delivered, asked = run.get("flow.bytes_delivered"), run.get("traffic.bytes")
    if _present(delivered) and _present(asked):
        parts.append(f"with {_count(delivered)} of {_count(asked)} bytes delivered")
    elif _present(delivered):
        parts.append(f"with {_count(delivered)} bytes delivered")
    else:
        parts.extend(_unfinished_flows(run))
    return " ".join(parts)


_SHOWN_FLOWS = 3


def _unfinished_flows(run: "pd.Series") -> List[str]:
    """A network run's flows that had not finished (columns ``flows.<name>.complete`` false),
    e.g. ["with flows not finished: bulk (63,248 bytes delivered)"]."""
    prefix, suffix = "flows.", ".complete"
    names = [str(k)[len(prefix):-len(suffix)] for k, v in run.items()
             if str(k).startswith(prefix) and str(k).endswith(suffix) and _is_false(v)]
    if not names:
        return []
    shown = []
    for name in names[:_SHOWN_FLOWS]:
        delivered = run.get(f"{prefix}{name}.bytes_delivered")
        shown.append(f"{name} ({_count(delivered)} bytes delivered)" if _present(delivered)
                     else name)
    more = f", and {len(names) - _SHOWN_FLOWS} more" if len(names) > _SHOWN_FLOWS else ""
    return [f"with flows not finished: {', '.join(shown)}{more}"]


def _is_false(value: Any) -> bool:
    """A false boolean; a missing value (a run without this flow) is not."""
    import numpy as np

    return isinstance(value, (bool, np.bool_)) and not bool(value)


def _present(value: Any) -> bool:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return False
    return value != ""


def _count(value: Any) -> str:
    try:
        return f"{int(value):,}"
    except (TypeError, ValueError):
        return str(value)


def _number(value: Any) -> str:
    try:
        return f"{float(value):,.6g}"
    except (TypeError, ValueError):
        return str(value)
