"""Shared fixtures: the repository, the `ccsim` binary the CLI comparisons run."""

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def ccsim_bin() -> Path:
    """The command-line binary (CCSIM_BIN, else target/release/ccsim, built if missing)."""
    path = Path(os.environ.get("CCSIM_BIN", REPO / "target" / "release" / "ccsim"))
    if not path.exists():
        subprocess.run(["cargo", "build", "--release", "--locked", "--bin", "ccsim"], cwd=REPO, check=True)
    return path


@pytest.fixture(scope="session")
def dctcp_toml(repo) -> Path:
    return repo / "scenarios" / "mininet-dctcp.toml"
