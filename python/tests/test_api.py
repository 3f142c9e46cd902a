"""The Python API computes what the command line computes, and fails as it fails."""

import filecmp
import json
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

import ccsim


def same_files(a: Path, b: Path) -> None:
    """Two results directories hold the same files, byte for byte."""
    names = sorted(p.name for p in a.iterdir())
    assert names == sorted(p.name for p in b.iterdir())
    match, mismatch, errors = filecmp.cmpfiles(a, b, names, shallow=False)
    assert not mismatch and not errors, (mismatch, errors)


def test_run_equals_the_cli(ccsim_bin, dctcp_toml, tmp_path):
    subprocess.run([ccsim_bin, "run", dctcp_toml, "--out", tmp_path / "cli", "--quiet",
                    "--set", "run.seed=7", "--set", "run.duration=3s"], check=True)
    s = ccsim.Scenario.from_toml(dctcp_toml).set("run.seed", 7).set("run.duration", "3s")
    r = ccsim.run(s, out=tmp_path / "py")
    same_files(tmp_path / "cli", tmp_path / "py")
    cli = json.loads((tmp_path / "cli" / "summary.json").read_text())
    assert r.summary == cli
    # The DataFrames are the files' numbers.
    assert list(r.flows["goodput_mbps"]) == [f["goodput_mbps"] for f in cli["flows"]]
    assert set(r.queues["port"]) == {"s->c"}
    assert len(r.queues) > 1000 and r.queues["packets"].max() > 0
    assert {"t_s", "flow", "cwnd", "srtt_us"} <= set(r.series.columns)


def test_overrides_change_the_run(dctcp_toml):
    base = ccsim.Scenario.from_toml(dctcp_toml).set("run.duration", "2s")
    small = ccsim.run(base.set("queues.dctcp.classes[0].k", 5))
    large = ccsim.run(base.set("queues.dctcp.classes[0].k", 60))
    assert small.queues["packets"].quantile(0.99) < large.queues["packets"].quantile(0.99)


def test_a_bad_override_gives_the_files_message(ccsim_bin, dctcp_toml, tmp_path):
    text = dctcp_toml.read_text()
    assert "k = 20 }" in text
    bad = tmp_path / dctcp_toml.name
    bad.write_text(text.replace("k = 20 }", "k = -3 }"))
    cli = subprocess.run([ccsim_bin, "check", bad], capture_output=True, text=True)
    assert cli.returncode == 2
    with pytest.raises(ccsim.ScenarioError) as e:
        ccsim.Scenario.from_toml(dctcp_toml).set("queues.dctcp.classes[0].k", -3)
    assert e.value.field == "queues.dctcp.classes[0].k"
    assert e.value.file == str(dctcp_toml)
    assert "error: " + str(e.value).replace(str(dctcp_toml), str(bad)) == cli.stderr.strip()
    # And --set on the command line says the same.
    cli_set = subprocess.run([ccsim_bin, "check", dctcp_toml, "--set", "queues.dctcp.classes[0].k=-3"],
                             capture_output=True, text=True)
    assert cli_set.stderr.strip() == "error: " + str(e.value)


def test_semantic_errors_name_the_field(dctcp_toml):
    with pytest.raises(ccsim.ScenarioError) as e:
        ccsim.Scenario.from_toml(dctcp_toml).set("topology.host_jitter", "2ms")
    assert e.value.field == "topology.host_jitter"
    with pytest.raises(ccsim.ScenarioError) as e:
        ccsim.Scenario.from_toml(dctcp_toml).set("flows[5].start", "1s")
    assert e.value.field == "flows[5].start" and "out of range" in str(e.value)


def test_from_dict_and_resolved():
    s = ccsim.Scenario.from_dict({
        "run": {"duration": "1s"},
        "topology": {"type": "star", "hosts": ["a", "b"], "rate": "1Gbps"},
        "flows": [{"name": "f", "src": "a", "dst": "b", "cc": "dctcp"}],
    })
    assert 'host_jitter = "auto"' in s.resolved()
    r = ccsim.run(s)
    assert r.flows.loc[0, "cc"] == "dctcp" and r.flows.loc[0, "goodput_mbps"] > 900
    with pytest.raises(ccsim.ScenarioError) as e:
        ccsim.Scenario.from_dict({"run": {"duration": "1s"}, "topology": {"type": "ring"}})
    assert e.value.field.startswith("topology")


def test_fct_frame(repo):
    s = ccsim.Scenario.from_toml(repo / "scenarios" / "dctcp-benchmark.toml").set("run.duration", "0.3s")
    r = ccsim.run(s)
    done = r.fct.dropna(subset=["end_s"])
    assert len(done) > 100
    assert (done["slowdown"] >= 1).all()
    assert (done["fct_s"] >= done["ideal_fct_s"]).all()
    # Unfinished flows are rows without an end, as many as the summary counts.
    unfinished = sum(w["unfinished"] for w in r.summary["fct"]["workloads"])
    assert unfinished > 0 and len(r.fct) - len(done) == unfinished


def test_reproduce_returns_the_scorecard(ccsim_bin, tmp_path):
    df = ccsim.reproduce(["mininet-queue"], quick=True, out=tmp_path / "py", jobs=1)
    cli = subprocess.run([ccsim_bin, "reproduce", "mininet-queue", "--quick", "--json", "--jobs", "1",
                          "--out", tmp_path / "cli"], capture_output=True, text=True, check=True)
    rows = json.loads(cli.stdout)
    text = ["experiment", "metric", "seed", "ccsim", "verdict", "note"]
    assert df[text].to_dict("records") == [{k: r[k] for k in text} for r in rows]
    # The figures that are numbers come as numbers.
    for col in ["seed_value", "ccsim_value"]:
        assert [None if pd.isna(v) else v for v in df[col]] == [r[col] for r in rows]
    assert df["ccsim_value"].notna().any()
    assert set(df["verdict"]) <= {"reproduced", "shape", "not reproduced"}
    with pytest.raises(ValueError):
        ccsim.reproduce(["no-such-experiment"])


def test_run_releases_the_gil(dctcp_toml):
    # Two runs on two threads give the same results as one after the other.
    from concurrent.futures import ThreadPoolExecutor

    s = ccsim.Scenario.from_toml(dctcp_toml).set("run.duration", "5s")
    with ThreadPoolExecutor(2) as ex:
        a, b = ex.map(lambda seed: ccsim.run(s.set("run.seed", seed)).summary, [1, 2])
    assert a == ccsim.run(s.set("run.seed", 1)).summary
    assert b == ccsim.run(s.set("run.seed", 2)).summary
