"""The files of score packs (:mod:`metricbias.book.packs`), below any text set: the format (``read``, ``write``), what
a configuration's scores depend on (:func:`fingerprint`), the tolerances and sample of a check, what a check found
(:class:`Checked`), and how checks are grouped. :mod:`metricbias.book.packs` (pair scores) and
:mod:`metricbias.book.association_packs` (r per target) both build on it."""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..paths import atomic_path, project_root
from ..signature import configuration

FORMAT = 1
PACKS_ENV = "METRICBIAS_PACKS"
#: the least a verification recomputes of each file: this fraction of its scores and this many
MIN_FRACTION = 0.01
MIN_CHECKED = 32
#: |pack - live| <= atol + rtol * |live| per family: float rounding only (storage is float64; a GPU and a CPU sum
#: in different orders). benchmarks/README.md gives the reasons for each value.
TOLERANCE = {"matching": (1e-5, 1e-6), "regression": (1e-5, 1e-5), "generation": (1e-5, 1e-5),
             "pll": (1e-5, 1e-4), "ngram": (1e-9, 1e-12), "embedding": (1e-7, 1e-9), "user": (1e-9, 1e-12)}


class PackError(RuntimeError):
    """A pack that failed a check: its content changed, or its scores differ from the live ones."""


def default_dir() -> Path:
    env = os.environ.get(PACKS_ENV)
    return Path(env).resolve() if env else project_root() / "models" / "packs"


def fingerprint(signature: str) -> str:
    """What a pack's scores depend on, as a hash: the signature less the library versions."""
    return hashlib.sha256(configuration(signature).encode("utf-8")).hexdigest()


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read(path: str | os.PathLike) -> tuple[dict, np.ndarray, np.ndarray]:
    """``(meta, scores, offsets)`` of a pack file, the scores as stored (float64 or float32)."""
    with np.load(path, allow_pickle=False) as data:
        return json.loads(str(data["meta"])), data["scores"], data["offsets"]


def write(path: Path, meta: dict, scores: np.ndarray, offsets: np.ndarray, provenance: dict,
          dtype: str = "float64") -> Path:
    """The ``.npz`` (scores as ``dtype``: float64, or float32 to halve the size) and its ``.json`` beside it, each
    written atomically (the ``.json`` last: it names the sha256)."""
    if dtype not in ("float64", "float32"):
        raise ValueError(f"pack scores are float64 or float32, not {dtype}")
    buf = io.BytesIO()
    np.savez_compressed(buf, scores=np.asarray(scores, dtype=dtype), offsets=np.asarray(offsets, np.int64),
                        meta=np.array(json.dumps(meta, sort_keys=True)))
    with atomic_path(path, suffix=".npz") as tmp:
        tmp.write_bytes(buf.getvalue())
    record = {**provenance, "sha256": hashlib.sha256(buf.getvalue()).hexdigest(), "meta": meta}
    with atomic_path(path.with_suffix(".json"), suffix=".json") as tmp:
        tmp.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return path


def device_of(config) -> str:
    import torch

    device = config.device
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    return device


@dataclass
class Checked:
    """What :func:`check_file` found for one pack file."""

    file: str
    label: str
    #: ``verified`` (checked, ready to import), ``imported before``, ``stale`` (fingerprint changed), ``texts changed``
    #: or ``unavailable`` (the configuration cannot be built here)
    status: str
    sha256: str = ""
    scores: int = 0
    checked: int = 0
    max_diff: float = 0.0
    note: str = ""


def sample_positions(n: int, fraction: float, seed: str) -> np.ndarray:
    """A seeded sample of at least ``fraction`` of ``n`` positions and at least :data:`MIN_CHECKED` (all, if fewer)."""
    k = min(n, max(MIN_CHECKED, math.ceil(fraction * n)))
    rng = np.random.default_rng(int(hashlib.sha256(seed.encode()).hexdigest()[:16], 16))
    return np.sort(rng.choice(n, size=k, replace=False))


def check_groups(files: list[Path], fraction: float) -> list[list[Path]]:
    """The pack files by text set (the prefix of their names), the set whose check is estimated longest first: the
    recorded build seconds scaled to the share of scores a check recomputes, and a model load per file."""
    groups: dict[str, list[Path]] = {}
    for path in files:
        groups.setdefault(path.stem.split("__")[0], []).append(path)

    def cost(path: Path) -> float:
        try:
            recorded = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
            n = int(recorded["meta"]["scores"])
            return 2.0 + float(recorded["seconds"]) * min(n, max(MIN_CHECKED, math.ceil(fraction * n))) / max(n, 1)
        except (OSError, ValueError, KeyError, TypeError):  # check_file reports what is wrong with it
            return 2.0

    return sorted(groups.values(), key=lambda group: -sum(cost(p) for p in group))


__all__ = ["FORMAT", "MIN_CHECKED", "MIN_FRACTION", "PACKS_ENV", "TOLERANCE", "Checked", "PackError", "check_groups",
           "default_dir", "device_of", "fingerprint", "read", "sample_positions", "write"]
