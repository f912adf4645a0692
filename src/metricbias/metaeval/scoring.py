"""Score a meta-evaluation set with a metric: every (hypothesis, reference) pair in one batched, cached job
(:func:`metricbias.scoring.score_texts`: in this process or on a Dask cluster).

Metrics score one candidate against one reference. For a multi-reference set
each hypothesis is scored against each of its references and the scores are
combined by ``max`` and by ``mean`` (the "-max" / "-mean" rows of Gao & Wan,
Tables 5, 6 and 9); a single-reference set has one aggregation, ``single``.
For a metric where lower is better (TER) ``max`` is its worst reference.
"""

from __future__ import annotations

import numpy as np

from ..datasets.meta_eval import JudgedSet, PairSet
from ..scoring import score_texts
from .correlation import AGGREGATIONS, aggregate


def aggregations(dataset: JudgedSet) -> tuple[str, ...]:
    """``("single",)`` when every hypothesis has one reference, else ``("max", "mean")``."""
    if int(dataset.frame["references"].map(len).max()) == 1:
        return ("single",)
    return AGGREGATIONS


def reference_pairs(hypotheses, references) -> tuple[list[str], list[str], list[int]]:
    """The (hypothesis, reference) pairs a metric scores: each hypothesis against each of its references, and where
    each hypothesis's pairs start (the last bound is the total)."""
    cands, refs, bounds = [], [], [0]
    for hyp, rs in zip(hypotheses, references):
        cands.extend([hyp] * len(rs))
        refs.extend(rs)
        bounds.append(len(cands))
    return cands, refs, bounds


def scored_texts(dataset: JudgedSet | PairSet) -> tuple[list[str], list[str]]:
    """The (candidate, reference) pairs of the one metric call that scores ``dataset``."""
    if isinstance(dataset, PairSet):
        f = dataset.frame
        return list(f["better"]) + list(f["worse"]), list(f["reference"]) * 2
    return reference_pairs(dataset.frame["hypothesis"], dataset.frame["references"])[:2]


def reference_scores(metric, hypotheses, references, cache=None, what: str = "") -> list[np.ndarray]:
    """Per hypothesis, the array of its scores against each of its references (one metric call; ``what`` names the
    set in the job log)."""
    cands, refs, bounds = reference_pairs(hypotheses, references)
    flat = score_texts(metric, cands, refs, cache=cache, what=what)
    return [flat[a:b] for a, b in zip(bounds[:-1], bounds[1:])]


def hypothesis_scores(metric, dataset: JudgedSet, cache=None) -> dict[str, np.ndarray]:
    """Aggregation name -> one score per hypothesis of ``dataset``."""
    per_ref = reference_scores(metric, dataset.frame["hypothesis"], dataset.frame["references"], cache, dataset.name)
    aggs = aggregations(dataset)
    if aggs == ("single",):
        return {"single": np.array([s[0] for s in per_ref], dtype=float)}
    return {how: aggregate(per_ref, how) for how in aggs}


def pair_scores(metric, dataset: PairSet, cache=None) -> tuple[np.ndarray, np.ndarray]:
    """Scores of the better and the worse translation of every DARR pair (one metric call)."""
    n = len(dataset.frame)
    flat = score_texts(metric, *scored_texts(dataset), cache=cache, what=dataset.name)
    return flat[:n], flat[n:]
