"""Helpers shared by the benchmark scripts (not a test module: benchmarks are run by hand)."""

from __future__ import annotations

import contextlib
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def machine() -> dict:
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    import torch

    return {"cpus": os.cpu_count(), "torch_threads": torch.get_num_threads(), "load_avg_1m": round(load[0], 2),
            "python": platform.python_version(), "when": time.strftime("%Y-%m-%d %H:%M:%S")}


def dataset_rows(datasets=("published",), attributes=None):
    """(pairs, files): the pair table of ``datasets`` and, per dataset file (attribute), its
    (name, candidates, references) rows: both candidates, each row's own reference."""
    import pandas as pd

    from metricbias.datasets import load

    tables = [load(d, attributes).assign(attribute=lambda f, d=d: d + "/" + f["attribute"],
                                         pair_id=lambda f, d=d: d + "/" + f["pair_id"])
              for d in datasets]
    pairs = pd.concat(tables, ignore_index=True)
    return pairs, files_of(pairs)


def files_of(pairs):
    """Per attribute of a pair table: (name, candidates, references), both candidates, each row's own reference."""
    return [(attribute, group["candidate_1"].tolist() + group["candidate_2"].tolist(),
             group["reference_1"].tolist() + group["reference_2"].tolist())
            for attribute, group in pairs.groupby("attribute", sort=False)]


def published_rows(attributes=None):
    """(attribute, candidates, references) per released dataset: both candidates, each row's own reference."""
    from metricbias.datasets import published

    data = published.load(attributes)
    out = []
    for attribute, group in data.groupby("attribute", sort=False):
        out.append((attribute, group["candidate_1"].tolist() + group["candidate_2"].tolist(),
                    group["reference"].tolist() + group["reference_2"].tolist()))
    return out


def save(name: str, result: dict) -> Path:
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(result, indent=2) + "\n")
    return path


class Timer:
    def __enter__(self):
        self.start, self.cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self.start
        self.cpu_seconds = time.process_time() - self.cpu


@contextlib.contextmanager
def fresh_cache_env():
    """Environment for child processes with a new, empty score cache (the trained regression model ships
    under models/)."""
    with tempfile.TemporaryDirectory() as tmp:
        yield {**os.environ, "METRICBIAS_CACHE": tmp}


def run_child(code: str, args: list[str], env: dict) -> dict:
    """Run ``code`` in a fresh Python process; its last stdout line is JSON. Adds the process wall time."""
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True)
    if proc.returncode:
        raise SystemExit(proc.stderr[-3000:])
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["process_seconds"] = time.perf_counter() - start
    return out
