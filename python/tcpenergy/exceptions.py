"""One exception tree across the Rust/Python boundary.

The classes are defined by the engine, so an error raised in Rust and one raised here are the same
type: catching ``TcpEnergyError`` catches both.
"""

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
