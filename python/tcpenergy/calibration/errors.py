"""Errors of the calibration: bad input is a ScenarioError (exit 2 on the command line), a broken
modelling premise is an EngineError (a bug: exit 1)."""

from __future__ import annotations

from tcpenergy.exceptions import EngineError, ScenarioError


class CalibrationInputError(ScenarioError):
    """Bad measurements, options or profile. ``path`` says where (``row r3``, ``--fit``),
    ``message`` what is wrong and what is allowed."""


def input_error(where: str, message: str) -> CalibrationInputError:
    err = CalibrationInputError(f"{where}: {message}" if where else message)
    err.path = where
    err.message = message
    return err


def premise_error(message: str) -> EngineError:
    """The energy did not respond to a figure as the model says it must (affinely, with the
    timeline unchanged): a defect in the engine or in the calibration, never in the input."""
    return EngineError(message)


def describe(exc: BaseException) -> str:
    """``path: message`` of a ScenarioError (the engine's or ours), else its text."""
    path = getattr(exc, "path", "") or ""
    message = getattr(exc, "message", None) or str(exc)
    return f"{path}: {message}" if path else message
