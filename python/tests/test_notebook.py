"""The example notebook runs headless and shows what it says."""

import nbformat
from nbclient import NotebookClient


def test_the_k_sweep_notebook(repo, tmp_path, monkeypatch):
    monkeypatch.setenv("CCSIM_REPO", str(repo))
    monkeypatch.setenv("CCSIM_NOTEBOOK_OUT", str(tmp_path / "k-sweep"))
    nb = nbformat.read(repo / "examples" / "k-sweep.ipynb", as_version=4)
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"]
    figures = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(figures) == 2, "the K sweep and the FCT slowdown plots"
    assert (tmp_path / "k-sweep" / "k-sweep.png").exists() and (tmp_path / "k-sweep" / "fct-slowdown.png").exists()
    # The last cell checks the figures' claims and prints "checked".
    assert "checked" in "".join(o.get("text", "") for o in nb.cells[-1].outputs)
    # Its sweep is stored: 6 values of K x 2 seeds.
    assert len(list((tmp_path / "k-sweep" / "runs").iterdir())) == 12
