"""Package and engine versions."""

from importlib.metadata import PackageNotFoundError, version

from tcpenergy._native import engine

try:
    __version__ = version("tcpenergy")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without metadata
    __version__ = engine.__version__


def engine_version() -> str:
    """Version of the compiled simulation engine."""
    return engine.version()
