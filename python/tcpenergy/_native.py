"""The one place that imports the compiled engine, so a missing build fails with a clear message."""

try:
    from tcpenergy import _engine as engine
except ImportError as exc:  # pragma: no cover - only without a compiled extension
    raise ImportError(
        "the tcpenergy engine extension is not built; install the package with "
        "`pip install .` (needs a Rust toolchain)"
    ) from exc

__all__ = ["engine"]
