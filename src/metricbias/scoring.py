"""Where a metric meets paired candidates: the one scoring path of the project.

:func:`score_pairs` scores both candidates of every pair of a pair table (the
layout of :mod:`metricbias.datasets.registry`) against their references with one
metric and returns the tidy score table every bias measure takes
(:data:`SCORE_COLUMNS`: ``dataset, attribute, pair_id, metric, score_1,
score_2, signature``, plus the pair table's own columns such as ``group_1``).
:func:`score_metrics` does it for several metrics and stacks the tables.

The metric can be a registered name or specification (``"bleu:tokenize=13a"``),
a :class:`~metricbias.metrics.Metric`, a ``(label, name, options)`` entry of a
profile, or a plain function ``f(candidates, references) -> scores``.

Scores go through the score cache (keyed by the metric's signature). A
corpus-dependent metric (idf weights, document frequencies) scores one (dataset,
attribute) at a time, with that set's texts as its corpus, as the released scores
were computed one file at a time; every other metric scores all pairs in one
call, so that each distinct text is encoded once.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np
import pandas as pd

from .cache import ScoreCache
from .datasets.registry import check as check_pairs
from .metrics.registry import resolve

SCORE_COLUMNS = ["dataset", "attribute", "pair_id", "metric", "score_1", "score_2", "signature"]
#: pair columns carried into the score table (what measures group by, besides dataset and attribute)
CARRIED = ("group_1", "group_2", "source", "item_1", "item_2", "direction")


def _cache(cache):
    if cache is True:
        return ScoreCache.default()
    return cache or None


def _corpus_scores(metric, group: pd.DataFrame, cache) -> tuple[np.ndarray, np.ndarray]:
    """Both sides of a (dataset, attribute) group scored in one call whose corpus is the group's items.

    Each side stands for an item (``item_1``/``item_2``; default: every side its own);
    the corpus is the distinct items, candidate 1 sides first, as the released files were scored.
    """
    n = len(group)
    items_1 = group["item_1"].tolist() if "item_1" in group else [(i, 1) for i in range(n)]
    items_2 = group["item_2"].tolist() if "item_2" in group else [(i, 2) for i in range(n)]
    texts = {}
    for items, cands, refs in ((items_1, group["candidate_1"], group["reference_1"]),
                               (items_2, group["candidate_2"], group["reference_2"])):
        for item, c, r in zip(items, cands, refs):
            texts.setdefault(item, (c, r))
    order = list(texts)
    scores = metric.score([texts[i][0] for i in order], [texts[i][1] for i in order], cache=cache)
    at = dict(zip(order, scores))
    return np.array([at[i] for i in items_1]), np.array([at[i] for i in items_2])


def score_pairs(pairs: pd.DataFrame, metric, *, cache=True, label: str | None = None) -> pd.DataFrame:
    """Both candidates of every pair scored by ``metric``: the tidy table of :data:`SCORE_COLUMNS`.

    ``label`` names the metric in the ``metric`` column (default: the metric's
    configuration label, e.g. ``BERTScore-MiniLM``). ``cache``: True for the default
    score cache, a :class:`~metricbias.cache.ScoreCache`, or None/False for none.
    """
    pairs = check_pairs(pairs)
    label, metric = resolve(metric, label=label)
    cache = _cache(cache)
    s1, s2 = np.empty(len(pairs)), np.empty(len(pairs))
    if metric.corpus_dependent:
        for _, group in pairs.groupby(["dataset", "attribute"], sort=False):
            s1[group.index], s2[group.index] = _corpus_scores(metric, group, cache)
    else:
        n = len(pairs)
        scores = metric.score(pairs["candidate_1"].tolist() + pairs["candidate_2"].tolist(),
                              pairs["reference_1"].tolist() + pairs["reference_2"].tolist(), cache=cache)
        s1, s2 = scores[:n], scores[n:]
    out = pairs[["dataset", "attribute", "pair_id"]].assign(metric=label, score_1=s1, score_2=s2,
                                                            signature=metric.signature)
    carried = [c for c in CARRIED if c in pairs.columns]
    return pd.concat([out, pairs[carried]], axis=1)[SCORE_COLUMNS + carried]


def score_metrics(pairs: pd.DataFrame, metrics: Iterable, *, cache=True, progress: bool = True) -> pd.DataFrame:
    """:func:`score_pairs` for every metric (names, specifications, ``Metric``s, profile entries), stacked."""
    from tqdm.auto import tqdm

    cache = _cache(cache)
    metrics = list(metrics)
    parts = [score_pairs(pairs, m, cache=cache) for m in tqdm(metrics, desc="metrics", disable=not progress)]
    if not parts:
        raise ValueError("no metric to score")
    return pd.concat(parts, ignore_index=True)


__all__ = ["SCORE_COLUMNS", "score_metrics", "score_pairs"]
