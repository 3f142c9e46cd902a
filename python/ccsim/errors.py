"""Exceptions raised by ccsim."""

from __future__ import annotations


class ScenarioError(ValueError):
    """A scenario that is not valid: the message names the file, the field and what is allowed,
    exactly as ``ccsim check`` prints it.

    Attributes:
        file: the scenario's file name (or the name given to a scenario built from text).
        field: the dotted path of the offending field (``"queues.q.classes[0].k"``), or ``""``.
    """

    def __init__(self, message: str, file: str = "", field: str = "") -> None:
        super().__init__(message)
        self.file = file
        self.field = field


class RunError(RuntimeError):
    """A run that could not complete (its results directory could not be written, ...)."""
