"""Parameter sweeps on Dask: each run once, stored under a content hash, resumable.

A sweep is a base scenario and a list of override sets (a grid's cross product, an explicit list,
times seeds). Each run's results directory is ``OUT/runs/<hash>``, the hash of ccsim's version
and the run's *resolved* scenario, so two spellings of one configuration are one run. A worker
runs into a temporary directory and renames it into place when the run is complete, so a
directory under ``runs/`` is always a finished run: a rerun skips what is there, and an
interrupted sweep (Ctrl-C, the client killed, a worker killed) resumes where it stopped.
At the end ``OUT/results.parquet`` has one row per run (the overrides as columns, then the
summary's scalars) and, when the scenario has workloads, ``OUT/fct.parquet`` one row per flow.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Sequence, Union

import pandas as pd

from . import _ccsim
from .result import scalars
from .scenario import PathLike, Scenario, as_scenario, product


def run_key(resolved: str) -> str:
    """The content hash a run is stored under: ccsim's version and the resolved scenario."""
    h = hashlib.sha256()
    h.update(f"ccsim {_ccsim.version()}\n".encode())
    h.update(resolved.encode())
    return h.hexdigest()[:24]


@dataclass
class SweepResult:
    """What a sweep did and where its tables are."""

    out: Path
    runs: pd.DataFrame
    ran: int
    skipped: int
    failed: list = field(default_factory=list)

    def fct(self) -> pd.DataFrame:
        """Every workload flow of every run, with the run's overrides as columns."""
        path = self.out / "fct.parquet"
        return pd.read_parquet(path) if path.exists() else pd.DataFrame()


def _run_one(text: str, name: str, base_dir: Optional[str], sets: list, overrides_json: str, final: str) -> str:
    """Run one configuration into ``final``, atomically (on a Dask worker)."""
    final_dir = Path(final)
    if (final_dir / "summary.json").exists():
        return "skipped"
    tmp = final_dir.parent / f".tmp-{final_dir.name}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        _ccsim.run(text, name, str(tmp), base_dir, sets)
        (tmp / "overrides.json").write_text(overrides_json, encoding="utf-8")
        try:
            os.rename(tmp, final_dir)
        except OSError:
            # Another worker finished the same run first (a retried task): keep the first.
            if not (final_dir / "summary.json").exists():
                raise
            shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return "ran"


class _Lock:
    """One sweep at a time per output directory."""

    def __init__(self, out: Path) -> None:
        self.f = open(out / "sweep.lock", "w")
        try:
            fcntl.flock(self.f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self.f.close()
            raise RuntimeError(f"{out}: another sweep is writing to this directory") from None

    def release(self) -> None:
        fcntl.flock(self.f, fcntl.LOCK_UN)
        self.f.close()


def _client(client: Any, scheduler: Optional[str], workers: Optional[int]):
    """The Dask client to use and whether this sweep owns it (and its local cluster)."""
    from dask.distributed import Client, LocalCluster

    if client is not None:
        return client, None
    if scheduler:
        c = Client(scheduler)
        return c, c
    n = workers or os.cpu_count() or 1
    cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None)
    c = Client(cluster)
    return c, (c, cluster)


def sweep(
    base: Union[Scenario, PathLike],
    grid: Optional[Mapping[str, Iterable[Any]]] = None,
    runs: Optional[Sequence[Mapping[str, Any]]] = None,
    seeds: Optional[Iterable[int]] = None,
    out: PathLike = "sweep",
    scheduler: Optional[str] = None,
    workers: Optional[int] = None,
    client: Any = None,
    progress: bool = True,
) -> SweepResult:
    """Run ``base`` once per configuration on Dask and gather the results.

    Args:
        base: the scenario every run starts from.
        grid: dotted paths to lists of values; their cross product is run.
        runs: an explicit list of override dicts (instead of, or combined with, ``grid``).
        seeds: values for ``run.seed``; every configuration runs once per seed.
        out: the sweep's directory (``runs/``, ``results.parquet``, ``fct.parquet``).
        scheduler: a Dask scheduler's address (``tcp://host:8786``) to run on an existing cluster.
        workers: the local cluster's worker processes (default: one per core).
        client: a ``dask.distributed.Client`` to use (e.g. on a dask-jobqueue SLURMCluster).
        progress: show runs done/left and an ETA on stderr.

    Every configuration is validated before anything runs: a bad override raises
    :class:`ccsim.ScenarioError` naming the field, as the TOML would.
    """
    base = as_scenario(base)
    configs = [dict(r) for r in runs] if runs is not None else []
    if grid:
        grid_runs = product(grid)
        configs = [{**c, **g} for c in (configs or [{}]) for g in grid_runs]
    if not configs:
        configs = [{}]
    if seeds is not None:
        seeds = list(seeds)
        configs = [{**c, "run.seed": int(s)} for c in configs for s in seeds]

    out = Path(out)
    (out / "runs").mkdir(parents=True, exist_ok=True)
    lock = _Lock(out)
    try:
        return _sweep(base, configs, out, scheduler, workers, client, progress)
    finally:
        lock.release()


def _sweep(base: Scenario, configs: list, out: Path, scheduler, workers, client, progress) -> SweepResult:
    runs_dir = out / "runs"
    _remove_partial(runs_dir)
    planned = []  # (key, overrides, scenario)
    seen = set()
    for overrides in configs:
        s = base.with_overrides(overrides)
        key = run_key(s.resolved())
        planned.append((key, overrides, s))
    todo = []
    for key, overrides, s in planned:
        if key in seen or (runs_dir / key / "summary.json").exists():
            seen.add(key)
            continue
        seen.add(key)
        todo.append((key, overrides, s))
    unique = len(seen)
    skipped = unique - len(todo)
    failed = []
    ran = 0
    if todo:
        from dask.distributed import as_completed

        c, owned = _client(client, scheduler, workers)
        bar = None
        if progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=unique, initial=skipped, unit="run", desc="ccsim sweep", file=sys.stderr)
        try:
            futures = {}
            for key, overrides, s in todo:
                text, name, base_dir, sets = s._run_args()
                f = c.submit(_run_one, text, name, base_dir, sets, json.dumps(overrides, default=str),
                             str(runs_dir / key), key=f"ccsim-run-{key}", pure=False, retries=2)
                futures[f] = key
            for f in as_completed(list(futures)):
                try:
                    f.result()
                    ran += 1
                except Exception as e:  # a run that fails is reported, the others go on
                    failed.append((futures[f], repr(e)))
                if bar is not None:
                    bar.update(1)
        finally:
            if bar is not None:
                bar.close()
            if owned is not None:
                if isinstance(owned, tuple):
                    owned[0].close()
                    owned[1].close()
                else:
                    owned.close()
    # A worker killed mid-run left its temporary directory; its run was done again elsewhere.
    _remove_partial(runs_dir)
    table = _gather(planned, runs_dir, out)
    result = SweepResult(out, table, ran, skipped, failed)
    if failed:
        lines = "\n".join(f"  {k}: {e}" for k, e in failed)
        raise RuntimeError(f"{len(failed)} of {unique} runs failed (the others are in {out}):\n{lines}")
    return result


def _remove_partial(runs_dir: Path) -> None:
    """What a killed worker or client left half-written is never a result."""
    for leftover in runs_dir.glob(".tmp-*"):
        shutil.rmtree(leftover, ignore_errors=True)


def _atomic_parquet(df: pd.DataFrame, path: Path) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    df.to_parquet(tmp, index=False)
    os.replace(tmp, path)


def _gather(planned: list, runs_dir: Path, out: Path) -> pd.DataFrame:
    """One row per planned run that finished (overrides, then summary scalars); fct.parquet."""
    rows = []
    fct_frames = []
    done = set()
    for key, overrides, _ in planned:
        d = runs_dir / key
        if key in done or not (d / "summary.json").exists():
            continue
        done.add(key)
        with open(d / "summary.json", encoding="utf-8") as f:
            summary = json.load(f)
        params = {k: v for k, v in overrides.items()}
        rows.append({"run": key, **params, **scalars(summary)})
        fct_path = d / "fct.csv"
        if fct_path.exists():
            fct = pd.read_csv(fct_path)
            for i, (k, v) in enumerate(params.items()):
                fct.insert(i, k, [v] * len(fct))
            fct.insert(0, "run", key)
            fct_frames.append(fct)
    table = pd.DataFrame(rows)
    if not table.empty:
        _atomic_parquet(_parquet_safe(table), out / "results.parquet")
    if fct_frames:
        _atomic_parquet(_parquet_safe(pd.concat(fct_frames, ignore_index=True)), out / "fct.parquet")
    return table


def _parquet_safe(df: pd.DataFrame) -> pd.DataFrame:
    """Columns of mixed Python types (e.g. a grid of "1s" and 2) stored as strings."""
    df = df.copy()
    for c in df.columns:
        if df[c].dtype == object:
            kinds = {type(v) for v in df[c] if v is not None and not (isinstance(v, float) and v != v)}
            if len(kinds) > 1 or (kinds and not kinds <= {str}):
                df[c] = df[c].map(lambda v: v if isinstance(v, str) or v is None else json.dumps(v))
    return df


def load_sweep_file(path: PathLike) -> dict:
    """A sweep file (TOML): ``scenario``, ``seeds``, ``[grid]`` or ``[[runs]]``, ``[dask]``."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python < 3.11
        import tomli as tomllib  # type: ignore[no-redef]
    path = Path(path)
    try:
        with open(path, "rb") as f:
            spec = tomllib.load(f)
    except OSError as e:
        raise ValueError(f"{path}: cannot read: {e.strerror}") from None
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"{path}: {e}") from None
    known = {"scenario", "seeds", "grid", "runs", "dask"}
    for k in spec:
        if k not in known:
            raise ValueError(f"{path}: field `{k}`: unknown; a sweep file has {', '.join(sorted(known))}")
    if "scenario" not in spec or not isinstance(spec["scenario"], str):
        raise ValueError(f"{path}: field `scenario`: the base scenario's file, relative to the sweep file")
    seeds = spec.get("seeds")
    if isinstance(seeds, int) and not isinstance(seeds, bool):
        if not 1 <= seeds <= 1_000_000:
            raise ValueError(f"{path}: field `seeds`: a count from 1 to 1000000, or a list of seeds")
        seeds = list(range(1, seeds + 1))
    elif seeds is not None and not (isinstance(seeds, list) and all(isinstance(s, int) for s in seeds)):
        raise ValueError(f"{path}: field `seeds`: a count, or a list of integer seeds")
    grid = spec.get("grid", {})
    if not isinstance(grid, dict) or not all(isinstance(v, list) and v for v in grid.values()):
        raise ValueError(f"{path}: field `grid`: each dotted path maps to a non-empty list of values")
    runs = spec.get("runs")
    if runs is not None and not (isinstance(runs, list) and all(isinstance(r, dict) for r in runs)):
        raise ValueError(f"{path}: field `runs`: a list of tables of overrides ([[runs]])")
    dask = spec.get("dask", {})
    for k in dask:
        if k not in ("scheduler", "workers"):
            raise ValueError(f"{path}: field `dask.{k}`: unknown; [dask] has scheduler and workers")
    workers = dask.get("workers")
    if workers is not None and not (isinstance(workers, int) and 1 <= workers <= 4096):
        raise ValueError(f"{path}: field `dask.workers`: a number of worker processes from 1 to 4096")
    return {
        "scenario": str(path.parent / spec["scenario"]),
        "seeds": seeds,
        "grid": grid,
        "runs": runs,
        "scheduler": dask.get("scheduler"),
        "workers": workers,
    }


def main(argv: Optional[list] = None) -> int:
    """``ccsim sweep SWEEP.toml --out DIR``."""
    import argparse

    p = argparse.ArgumentParser(prog="ccsim sweep", description="Run a parameter sweep on Dask.")
    p.add_argument("sweep", help="the sweep file (TOML: scenario, seeds, [grid] or [[runs]], [dask])")
    p.add_argument("--out", required=True, help="the sweep's directory (resumable)")
    p.add_argument("--scheduler", help="a Dask scheduler's address, e.g. tcp://host:8786")
    p.add_argument("--workers", type=int, help="local worker processes (default: one per core)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    a = p.parse_args(argv)
    from .errors import ScenarioError

    try:
        spec = load_sweep_file(a.sweep)
        started = time.monotonic()
        r = sweep(spec["scenario"], grid=spec["grid"], runs=spec["runs"], seeds=spec["seeds"], out=a.out,
                  scheduler=a.scheduler or spec["scheduler"], workers=a.workers or spec["workers"],
                  progress=not a.no_progress and sys.stderr.isatty())
    except (ValueError, ScenarioError, RuntimeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    took = time.monotonic() - started
    print(f"sweep: {r.ran} runs done, {r.skipped} already done, in {took:.1f} s; "
          f"table: {r.out / 'results.parquet'}", file=sys.stderr)
    return 0
