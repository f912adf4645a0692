"""The tidy score table every bias measure takes, and how measures walk it.

A score table (what :func:`metricbias.scoring.score_pairs` returns, and what
``datasets.published.scores()`` gives for the released scores) has one row per
pair and metric, with at least ``attribute, metric, score_1, score_2``; usually
also ``dataset``, ``pair_id`` and ``signature``. A measure is computed per
(attribute, metric) cell, and per dataset too when the table holds several.
"""

from __future__ import annotations

from typing import Iterator

import numpy as np
import pandas as pd

REQUIRED = ("attribute", "metric", "score_1", "score_2")
#: the columns of the long layout of the generalized fairness metrics (:mod:`metricbias.bias.generalized`)
SOURCE, GROUP, SCORE = "source", "group", "score"


def check(scores: pd.DataFrame, required=REQUIRED) -> None:
    if not isinstance(scores, pd.DataFrame):
        raise TypeError(f"a score table is a pandas DataFrame, not {type(scores).__name__}")
    missing = [c for c in required if c not in scores.columns]
    if missing:
        raise ValueError(f"score table lacks column(s) {missing}; score_pairs() returns the full table")


def keys(scores: pd.DataFrame, by=("attribute", "metric")) -> list[str]:
    """The columns a measure groups by: ``by``, with ``dataset`` first when the table holds several datasets."""
    by = list(by)
    if "dataset" in scores.columns and "dataset" not in by and scores["dataset"].nunique() > 1:
        by = ["dataset", *by]
    return by


def cells(scores: pd.DataFrame, by=("attribute", "metric"), required=REQUIRED) -> Iterator[tuple[dict, pd.DataFrame]]:
    """``(key, rows)`` for every cell of the table, in the table's order; ``key`` maps each grouping column."""
    check(scores, required)
    cols = keys(scores, by)
    for key, group in scores.groupby(cols, sort=False):
        yield dict(zip(cols, key if isinstance(key, tuple) else (key,))), group


def from_pairs(scores_1, scores_2, groups=("candidate_1", "candidate_2"), sources=None) -> pd.DataFrame:
    """Long table (source, group, score) of a paired dataset: one source per pair, one row per candidate
    (what a ``"groups"`` measure of :mod:`metricbias.bias.registry` takes)."""
    s1, s2 = np.asarray(scores_1, dtype=float), np.asarray(scores_2, dtype=float)
    if s1.shape != s2.shape or s1.ndim != 1:
        raise ValueError(f"paired scores must be two 1-d arrays of equal length, got {s1.shape} and {s2.shape}")
    ids = np.arange(s1.size) if sources is None else np.asarray(sources)
    return pd.DataFrame({SOURCE: np.concatenate([ids, ids]),
                         GROUP: [groups[0]] * s1.size + [groups[1]] * s2.size,
                         SCORE: np.concatenate([s1, s2])})
