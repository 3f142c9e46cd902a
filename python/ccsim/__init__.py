"""ccsim: Linux-faithful datacenter congestion control, simulated at packet level.

The same simulator as the ``ccsim`` command, from Python::

    import ccsim
    s = ccsim.Scenario.from_toml("scenarios/mininet-dctcp.toml").set("run.seed", 7)
    r = ccsim.run(s)
    r.queues.groupby("port").packets.quantile(0.99)

Sweeps over parameters run on Dask, from a laptop to a cluster::

    table = ccsim.sweep(s, grid={"queues.dctcp.classes[0].k": [10, 20, 40]}, seeds=range(3), out="k-sweep")
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Iterable, Optional, Union

import pandas as pd

from . import _ccsim
from .errors import RunError, ScenarioError
from .result import Result
from .scenario import PathLike, Scenario, as_scenario
from .sweep import SweepResult, sweep

__all__ = ["Scenario", "Result", "ScenarioError", "RunError", "run", "reproduce", "sweep", "SweepResult",
           "__version__"]

__version__: str = _ccsim.version()


def run(scenario: Union[Scenario, PathLike], out: Optional[PathLike] = None) -> Result:
    """Run a scenario as ``ccsim run`` does and return its results.

    Args:
        scenario: a :class:`Scenario`, or a scenario file's path or TOML text.
        out: the results directory (made if missing); ``None`` writes to a temporary directory
            removed when the Result is.

    The simulation runs in Rust with the GIL released, so threads can run several at once.
    """
    s = as_scenario(scenario)
    keep = None
    if out is None:
        keep = tempfile.TemporaryDirectory(prefix="ccsim-")
        out = keep.name
    text, name, base_dir, sets = s._run_args()
    try:
        _ccsim.run(text, name, str(out), base_dir, sets)
    except RuntimeError as e:
        raise RunError(str(e)) from None
    return Result(out, keep)


def reproduce(names: Optional[Iterable[str]] = None, quick: bool = False, out: Optional[PathLike] = None,
              jobs: Optional[int] = None) -> pd.DataFrame:
    """Reproduce the seed experiments (all, or those named) as ``ccsim reproduce`` does.

    Returns the scorecard, one row per metric: experiment, metric, seed, ccsim, verdict, note, and
    seed_value / ccsim_value, the two figures as numbers where they are one (else NaN).
    The report and each run's results go to ``out`` (default: a temporary directory).
    """
    keep = None
    if out is None:
        keep = tempfile.TemporaryDirectory(prefix="ccsim-reproduce-")
        out = keep.name
    try:
        rows = json.loads(_ccsim.reproduce(list(names or []), quick, str(out), jobs or os.cpu_count() or 1))
    finally:
        if keep is not None:
            keep.cleanup()
    return pd.DataFrame(rows, columns=["experiment", "metric", "seed", "ccsim", "verdict", "note", "seed_value",
                                       "ccsim_value"])
