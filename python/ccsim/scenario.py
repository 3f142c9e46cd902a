"""Scenarios: a ccsim scenario file (TOML) with dotted-path overrides, validated by ccsim itself."""

from __future__ import annotations

import json
import numbers
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Iterable, Optional, Union

from . import _ccsim

PathLike = Union[str, "os.PathLike[str]"]


def toml_literal(value: Any) -> str:
    """``value`` written as a TOML literal (``30``, ``true``, ``"10us"``, ``[1, 2]``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        return repr(float(value))
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{json.dumps(str(k))} = {toml_literal(v)}" for k, v in value.items()) + " }"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_literal(v) for v in value) + "]"
    raise TypeError(f"a scenario value is a bool, number, string, list or dict, not {type(value).__name__}")


class Scenario:
    """A ccsim scenario: its TOML text and the overrides set on it.

    Every override is checked when it is set, exactly as if the file held the value: a bad one
    raises :class:`ccsim.ScenarioError` with the message ``ccsim check`` prints for the file.

    >>> s = Scenario.from_toml("scenarios/mininet-dctcp.toml").set("run.seed", 7)
    >>> s.overrides
    {'run.seed': 7}
    """

    def __init__(
        self,
        text: str,
        name: str = "<scenario>",
        base_dir: Optional[PathLike] = None,
        overrides: Optional[Mapping[str, Any]] = None,
    ) -> None:
        self._text = text
        self.name = name
        self.base_dir = None if base_dir is None else str(base_dir)
        self._overrides: dict[str, Any] = dict(overrides or {})

    @classmethod
    def from_toml(cls, path_or_text: PathLike) -> "Scenario":
        """A scenario from a file's path or from TOML text; the scenario is validated."""
        s = str(path_or_text)
        if "\n" not in s and ("=" not in s or Path(s).exists()):
            path = Path(s)
            try:
                text = path.read_text(encoding="utf-8")
            except OSError as e:
                from .errors import ScenarioError

                raise ScenarioError(f"{path}: cannot read: {e.strerror}", str(path), "") from None
            scenario = cls(text, str(path), path.parent)
        else:
            scenario = cls(s)
        scenario.resolved()
        return scenario

    @classmethod
    def from_dict(cls, tables: Mapping[str, Any], name: str = "<dict>") -> "Scenario":
        """A scenario from a dictionary of its tables (``{"run": {...}, "topology": {...}}``)."""
        text = _ccsim.toml_from_json(json.dumps(tables), )
        scenario = cls(text, name)
        scenario.resolved()
        return scenario

    @property
    def overrides(self) -> dict[str, Any]:
        """The overrides set so far, by dotted path."""
        return dict(self._overrides)

    def _sets(self, overrides: Optional[Mapping[str, Any]] = None) -> list[str]:
        o = self._overrides if overrides is None else overrides
        return [f"{path}={toml_literal(v)}" for path, v in o.items()]

    def set(self, path: str, value: Any) -> "Scenario":
        """A copy with the field at ``path`` (``"run.seed"``, ``"queues.q.classes[0].k"``,
        ``"flows[1].start"``) set to ``value``; validated at once."""
        return self.with_overrides({path: value})

    def with_overrides(self, overrides: Mapping[str, Any]) -> "Scenario":
        """A copy with several fields set (later paths win); validated at once."""
        merged = {**self._overrides, **overrides}
        scenario = Scenario(self._text, self.name, self.base_dir, merged)
        scenario.resolved()
        return scenario

    def resolved(self) -> str:
        """The scenario with every default filled in, as ``ccsim check`` prints it."""
        return _ccsim.resolve(self._text, self.name, self.base_dir, self._sets())

    def to_toml(self) -> str:
        """The scenario's own text with the overrides written into it."""
        return _ccsim.apply_overrides(self._text, self.name, self._sets())

    def _run_args(self) -> tuple[str, str, Optional[str], list[str]]:
        return self._text, self.name, self.base_dir, self._sets()

    def __repr__(self) -> str:
        extra = f", overrides={self._overrides!r}" if self._overrides else ""
        return f"Scenario({self.name!r}{extra})"


def as_scenario(scenario: Union[Scenario, PathLike]) -> Scenario:
    """A Scenario as given, or read from a path or TOML text."""
    return scenario if isinstance(scenario, Scenario) else Scenario.from_toml(scenario)


def product(grid: Mapping[str, Iterable[Any]]) -> list[dict[str, Any]]:
    """The cross product of a grid of overrides, in order (the last path varies fastest)."""
    runs: list[dict[str, Any]] = [{}]
    for path, values in grid.items():
        values = list(values)
        if not values:
            raise ValueError(f"grid: `{path}` has no values")
        runs = [{**r, path: v} for r in runs for v in values]
    return runs
