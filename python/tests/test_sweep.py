"""Sweeps on Dask: every run once, nothing lost when a worker or the client dies, reruns free."""

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

import ccsim

K = "queues.dctcp.classes[0].k"
GRID = {K: [5, 10, 20, 40, 60, 80]}
SEEDS = [1, 2]  # 6 x 2 = 12 runs


def base(dctcp_toml, duration="40s"):
    return ccsim.Scenario.from_toml(dctcp_toml).set("run.duration", duration)


def finished(out: Path) -> int:
    return sum(1 for d in (out / "runs").iterdir() if (d / "summary.json").exists() and not d.name.startswith("."))


def test_a_killed_worker_loses_no_run_and_a_rerun_does_no_work(dctcp_toml, tmp_path):
    from dask.distributed import Client, LocalCluster

    out = tmp_path / "sweep"
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        pids = list(client.run(os.getpid).values())
        assert len(pids) == 2
        killed = []

        def kill_one_mid_way():
            # Once some runs are done and others still to do, kill -9 one worker.
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                if (out / "runs").exists() and 2 <= finished(out) < 10:
                    os.kill(pids[0], signal.SIGKILL)
                    killed.append(finished(out))
                    return
                time.sleep(0.02)

        t = threading.Thread(target=kill_one_mid_way)
        t.start()
        r = ccsim.sweep(base(dctcp_toml), grid=GRID, seeds=SEEDS, out=out, client=client, progress=False)
        t.join()
    assert killed, "the worker was not killed mid-way"
    assert r.ran + r.skipped == 12 and not r.failed
    assert finished(out) == 12
    table = pd.read_parquet(out / "results.parquet")
    assert len(table) == 12
    assert sorted(set(table[K])) == GRID[K] and sorted(set(table["run.seed"])) == SEEDS
    assert not list((out / "runs").glob(".tmp-*"))
    # Larger K, longer queue (the mean over seeds).
    p99 = table.groupby(K)["queue.s->c.p99"].mean()
    assert p99[80] > p99[5]

    # A rerun finds everything done: no run, no directory touched.
    mtimes = {d.name: d.stat().st_mtime_ns for d in (out / "runs").iterdir()}
    again = ccsim.sweep(base(dctcp_toml), grid=GRID, seeds=SEEDS, out=out, progress=False)
    assert (again.ran, again.skipped) == (0, 12)
    assert {d.name: d.stat().st_mtime_ns for d in (out / "runs").iterdir()} == mtimes
    pd.testing.assert_frame_equal(pd.read_parquet(out / "results.parquet"), table)


SWEEP_CLIENT = """
import sys, ccsim
if __name__ == "__main__":
    s = ccsim.Scenario.from_toml(sys.argv[1]).set("run.duration", "40s")
    ccsim.sweep(s, grid={%r: %r}, seeds=%r, out=sys.argv[2], workers=2, progress=False)
"""


def test_a_killed_client_resumes_where_it_stopped(dctcp_toml, tmp_path):
    out = tmp_path / "sweep"
    script = tmp_path / "client.py"
    script.write_text(SWEEP_CLIENT % (K, GRID[K], SEEDS))
    p = subprocess.Popen([sys.executable, script, dctcp_toml, out], start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not ((out / "runs").exists() and finished(out) >= 3):
            time.sleep(0.02)
        done_before = finished(out)
        assert 3 <= done_before < 12, done_before
    finally:
        # kill -9 the client and everything it started (its local cluster).
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
    done_at_kill = finished(out)
    r = ccsim.sweep(base(dctcp_toml), grid=GRID, seeds=SEEDS, out=out, workers=2, progress=False)
    assert r.skipped == done_at_kill and r.ran == 12 - done_at_kill
    assert len(pd.read_parquet(out / "results.parquet")) == 12
    assert not list((out / "runs").glob(".tmp-*"))


def test_a_bad_grid_value_fails_before_anything_runs(dctcp_toml, tmp_path):
    with pytest.raises(ccsim.ScenarioError) as e:
        ccsim.sweep(base(dctcp_toml), grid={K: [10, -1]}, out=tmp_path / "s", progress=False)
    assert e.value.field == K
    assert finished(tmp_path / "s") == 0


def test_same_configuration_is_one_run(dctcp_toml, tmp_path):
    # The same overrides twice are one configuration, run once.
    r = ccsim.sweep(base(dctcp_toml, "2s"), runs=[{K: 10}, {K: 10}, {K: 20}], out=tmp_path / "s", workers=1,
                    progress=False)
    assert r.ran == 2 and len(r.runs) == 2


def test_the_command_line_sweep(ccsim_bin, dctcp_toml, tmp_path):
    sweep_file = tmp_path / "k.toml"
    sweep_file.write_text(
        f'scenario = "{dctcp_toml}"\nseeds = 2\n[grid]\n"{K}" = [10, 40]\n"run.duration" = ["2s"]\n'
        "[dask]\nworkers = 2\n"
    )
    env = {**os.environ, "CCSIM_PYTHON": sys.executable}
    p = subprocess.run([ccsim_bin, "sweep", sweep_file, "--out", tmp_path / "out"], env=env, capture_output=True,
                       text=True)
    assert p.returncode == 0, p.stderr
    table = pd.read_parquet(tmp_path / "out" / "results.parquet")
    assert len(table) == 4 and set(table["run.seed"]) == {1, 2}
    bad = tmp_path / "bad.toml"
    bad.write_text(f'scenario = "{dctcp_toml}"\nseeds = 0\n')
    p = subprocess.run([ccsim_bin, "sweep", bad, "--out", tmp_path / "o2"], env=env, capture_output=True, text=True)
    assert p.returncode == 2 and "field `seeds`" in p.stderr
