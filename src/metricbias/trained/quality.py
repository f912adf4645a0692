"""A paraphraser's quality as an evaluation metric, measured the way the book measures every metric's.

BARTScore-F on the paraphraser, through :func:`metricbias.mitigation.evaluation.quality`:
Flickr8k expert judgements (Kendall tau, max over references), WMT19 kk-en DARR
(Kendall-like tau), REALSumm (system-level Spearman with LitePyramid recall) and STS-B dev
(Pearson). On a CPU each set is drawn down (:data:`CPU_SAMPLE_SIZES`, seeded; 0 keeps a set
whole); :func:`record` writes the figures, sample sizes and seed into the parts'
``provenance.json`` under ``quality``.
"""

from __future__ import annotations

import json
import time

import pandas as pd

#: items per quality set on a CPU: Flickr8k images, WMT DARR pairs, REALSumm documents, STS-B dev pairs
CPU_SAMPLE_SIZES = {"flickr8k": 20, "wmt19-kk-en": 200, "realsumm": 5, "stsb-dev": 200}


def measure(backbone: str, *, sizes: dict | None = None, seed: int = 0, variant: str = "F", device: str = "auto",
            cache=None) -> pd.DataFrame:
    """``dataset, statistic, value, n, sample_size`` of BARTScore-``variant`` on ``backbone``."""
    from .. import metrics
    from ..mitigation import evaluation

    sizes = CPU_SAMPLE_SIZES if sizes is None else sizes
    metric = metrics.get("bartscore", backbone=backbone, variant=variant, device=device)
    frames = []
    for name, size in sizes.items():
        sets = evaluation.load_quality_sets((name,), sample_size=size, seed=seed)
        frames.append(evaluation.quality(metric, sets, cache=cache).assign(sample_size=size))
    out = pd.concat(frames, ignore_index=True)
    out["signature"] = metric.signature
    return out


def record(backbone: str, table: pd.DataFrame, *, seed: int = 0, seconds: float | None = None) -> None:
    """Add ``table`` under ``quality`` in the provenance of trained backbone ``backbone`` (written atomically)."""
    from .. import backbones
    from ..paths import atomic_path

    folder = backbones.resolve(backbone)
    path = folder / backbones.PROVENANCE_FILE
    info = json.loads(path.read_text(encoding="utf-8"))
    info["quality"] = {"metric": "bartscore F", "seed": seed, "seconds": seconds,
                       "rows": table.drop(columns="signature").to_dict("records")}
    with atomic_path(path, suffix=".json") as tmp:
        tmp.write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")


def measure_and_record(backbone: str, *, sizes: dict | None = None, seed: int = 0, device: str = "auto"):
    start = time.perf_counter()
    table = measure(backbone, sizes=sizes, seed=seed, device=device)
    record(backbone, table, seed=seed, seconds=round(time.perf_counter() - start, 1))
    return table


__all__ = ["CPU_SAMPLE_SIZES", "measure", "measure_and_record", "record"]
