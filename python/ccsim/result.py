"""A run's results as pandas DataFrames, read from its results directory."""

from __future__ import annotations

import json
from functools import cached_property
from pathlib import Path
from typing import Any, Optional

import pandas as pd

from . import _ccsim


class Result:
    """The results of one run: the directory ``ccsim run`` writes, as Python objects.

    Attributes:
        directory: the results directory.
        summary: ``summary.json`` as a dict.
    """

    def __init__(self, directory: "str | Path", _keep: Any = None) -> None:
        self.directory = Path(directory)
        # A temporary directory lives as long as the Result that reads it.
        self._keep = _keep
        with open(self.directory / "summary.json", encoding="utf-8") as f:
            self.summary: dict[str, Any] = json.load(f)

    def _csv(self, name: str, columns: list[str]) -> pd.DataFrame:
        path = self.directory / name
        if not path.exists():
            return pd.DataFrame({c: [] for c in columns})
        return pd.read_csv(path)

    @cached_property
    def flows(self) -> pd.DataFrame:
        """One row per flow: goodput, retransmissions, RTOs, ... (``summary.json``'s flows)."""
        return pd.DataFrame(self.summary.get("flows", []))

    @cached_property
    def queue_stats(self) -> pd.DataFrame:
        """One row per monitored port: percentiles, utilisation, drops, marks."""
        return pd.DataFrame(self.summary.get("queues", []))

    @cached_property
    def queues(self) -> pd.DataFrame:
        """Queue occupancy over time, one row per (port, sample): t_s, port, packets, bytes."""
        frames = []
        for q in self.summary.get("queues", []):
            path = self.directory / q.get("csv", _ccsim.queue_csv_name(q["port"]))
            if path.exists():
                df = pd.read_csv(path)
                df.insert(1, "port", q["port"])
                frames.append(df)
        if not frames:
            return pd.DataFrame({"t_s": [], "port": [], "packets": [], "bytes": []})
        return pd.concat(frames, ignore_index=True)

    @cached_property
    def series(self) -> pd.DataFrame:
        """Per-flow sender state over time (``flows.csv``): t_s, flow, cwnd, goodput_mbps, srtt_us,
        ssthresh, inflight, pacing_rate_bps, delivery_rate_bps, alpha (DCTCP)."""
        return self._csv("flows.csv", ["t_s", "flow", "cwnd", "goodput_mbps", "srtt_us", "ssthresh", "inflight",
                                       "pacing_rate_bps", "delivery_rate_bps", "alpha"])

    @cached_property
    def pings(self) -> pd.DataFrame:
        """Answered pings (``pings.csv``): probe, seq, sent_s, rtt_ms."""
        return self._csv("pings.csv", ["probe", "seq", "sent_s", "rtt_ms"])

    @cached_property
    def fct(self) -> pd.DataFrame:
        """One row per workload flow (``fct.csv``): sizes, start/end, FCT, ideal FCT, slowdown."""
        return self._csv(
            "fct.csv",
            ["id", "workload", "group", "src", "dst", "size_bytes", "start_s", "end_s", "fct_s",
             "ideal_fct_s", "slowdown", "retransmits", "rtos", "cc"],
        )

    def __repr__(self) -> str:
        return f"Result({str(self.directory)!r})"


def scalars(summary: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """A summary flattened to scalar columns (``queue.s->c.p99``, ``flow.a.goodput_mbps``), one
    row of a sweep's table."""
    out: dict[str, Any] = {}
    for key, value in summary.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(scalars(value, name + "."))
        elif isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, dict):
                    label = next((str(item[k]) for k in ("name", "port", "switch", "bin") if k in item), str(i))
                    singular = {"queues": "queue", "flows": "flow", "pings": "ping", "buffers": "buffer"}.get(key, key)
                    out.update(scalars({k: v for k, v in item.items() if k not in ("name", "port", "bin")},
                                       f"{prefix}{singular}.{label}."))
        elif value is None or isinstance(value, (int, float, str, bool)):
            out[name] = value
    return out
