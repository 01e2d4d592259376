"""One exception tree across the Rust/Python boundary, and the errors a scenario's files give.

The classes are defined by the engine, so an error raised in Rust and one raised here are the same
type: catching ``TcpEnergyError`` catches both.
"""

from pathlib import Path

from tcpenergy._native import engine

TcpEnergyError = engine.TcpEnergyError
ScenarioError = engine.ScenarioError
EngineError = engine.EngineError

__all__ = ["TcpEnergyError", "ScenarioError", "EngineError"]


def scenario_error(path: str, message: str) -> ScenarioError:
    """A ScenarioError raised on the Python side, shaped like the engine's (``.path``, ``.message``)."""
    err = ScenarioError(f"{path}: {message}" if path else message)
    err.path = path
    err.message = message
    return err


def read_scenario_file(path: Path, key: str, what: str) -> str:
    """The text of a file a scenario names at ``key`` (``what``: "profile", "trace"), or a
    ScenarioError at ``key`` naming the file when it is missing, a directory or unreadable."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise scenario_error(key, f"{what} file not found: {path}") from None
    except IsADirectoryError:
        raise scenario_error(key, f"{what} path is a directory, not a file: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise scenario_error(key, f"cannot read {what} file {path}: {exc}") from None
