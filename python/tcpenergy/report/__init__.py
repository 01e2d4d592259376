"""Human-readable renderings of results, scenarios and profiles, and sweep reports.

``write_report`` and ``rank_table`` load pandas and matplotlib, so they are imported on first use:
the CLI's table helpers in this package stay quick to import.
"""

from typing import Any

_LAZY = {
    "write_report": "tcpenergy.report.document",
    "ReportPaths": "tcpenergy.report.document",
    "rank_table": "tcpenergy.report.ranking",
    "variant_means": "tcpenergy.report.ranking",
}

__all__ = list(_LAZY)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from importlib import import_module

        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'tcpenergy.report' has no attribute {name!r}")
