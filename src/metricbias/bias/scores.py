"""The tidy score table every bias measure takes, and how measures walk it.

A score table (what :func:`metricbias.scoring.score_pairs` returns, and what
``datasets.published.scores()`` gives for the released scores) has one row per
pair and metric, with at least ``attribute, metric, score_1, score_2``; usually
also ``dataset``, ``pair_id`` and ``signature``. A measure is computed per
(attribute, metric) cell, and per dataset too when the table holds several.

Two configurations that give the same score to every side of every pair (up to float rounding) compute the
same function on these pairs (PRISM-F and BARTScore-F on a paraphraser without a target-language tag, say) and would count twice in any
comparison of configurations: :func:`identical_configurations` finds them from the scores themselves, and
:func:`drop_identical` keeps the first of each group.
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


#: the columns of :func:`identical_configurations`
IDENTICAL_COLUMNS = ["metric", "same_as", "pairs", "largest_difference"]
#: two scores are the same up to float rounding when they differ by less than this, relative: a model scored in
#: float32 gives a text a score that moves in the 8th digit with the batch it was padded in (about 1e-8 relative)
SAME_RTOL = 1e-6
#: ... or by less than this, absolute (scores at or near 0)
SAME_ATOL = 1e-9


def identical_configurations(scores: pd.DataFrame, *, rtol: float = SAME_RTOL, atol: float = SAME_ATOL) -> pd.DataFrame:
    """Configurations whose scores equal another's on every side of every pair, up to float rounding
    (``np.allclose`` with ``rtol``, ``atol``; ``rtol=atol=0``: exactly).

    One row per configuration to drop: ``metric``, ``same_as`` (the first configuration of its group in the
    table's order, the one kept), ``pairs`` compared and ``largest_difference`` (absolute) between the two. Two
    configurations count as identical only when they scored the same pairs (``dataset``, ``attribute``,
    ``pair_id`` where present); one score further apart than rounding keeps both."""
    check(scores)
    ids = [c for c in ("dataset", "attribute", "pair_id") if c in scores.columns]
    vectors = {}
    for metric, g in scores.groupby("metric", sort=False):
        g = g.sort_values(ids, kind="stable") if ids else g
        keys_ = tuple(map(tuple, g[ids].astype(str).to_numpy())) if ids else len(g)
        vectors[metric] = (keys_, g[["score_1", "score_2"]].to_numpy(dtype=float))
    kept: list[str] = []
    rows = []
    for metric, (keys_, values) in vectors.items():
        twin = next((k for k in kept if vectors[k][0] == keys_ and np.allclose(vectors[k][1], values, rtol=rtol,
                                                                               atol=atol, equal_nan=True)), None)
        if twin is None:
            kept.append(metric)
        else:
            gap = np.abs(vectors[twin][1] - values)
            rows.append({"metric": metric, "same_as": twin, "pairs": len(values),
                         "largest_difference": float(np.nanmax(gap)) if np.isfinite(gap).any() else 0.0})
    return pd.DataFrame(rows, columns=IDENTICAL_COLUMNS)


def drop_identical(scores: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``scores`` with one configuration per group of identical ones (:func:`identical_configurations`: the first
    in the table's order is kept), and the table of those dropped."""
    merged = identical_configurations(scores)
    return scores[~scores["metric"].isin(merged["metric"])].reset_index(drop=True), merged


#: the columns of :func:`identical_cells`
IDENTICAL_CELL_COLUMNS = ["dataset", "attribute", "metric", "same_as_dataset", "same_as_metric", "pairs"]


def identical_cells(scores: pd.DataFrame, *, rtol: float = SAME_RTOL, atol: float = SAME_ATOL) -> pd.DataFrame:
    """Cells (``dataset``, ``attribute``, ``metric``) whose scores equal an earlier cell's of the same attribute on
    the same pairs (``pair_id``), up to float rounding (:func:`identical_configurations`' tolerances), across
    datasets too: a live configuration that recomputes a released score column exactly is one hypothesis, not two.

    One row per cell to count once (:data:`IDENTICAL_CELL_COLUMNS`): the cell, the first identical cell in the
    table's order (``same_as_dataset``, ``same_as_metric``) and the number of pairs compared. Needs ``pair_id``;
    a table without ``dataset`` is one dataset, named ``""``."""
    check(scores, (*REQUIRED, "pair_id"))
    table = scores if "dataset" in scores.columns else scores.assign(dataset="")
    rows = []
    for attribute, block in table.groupby("attribute", sort=False):
        kept: list[tuple] = []
        vectors = {}
        for (dataset, metric), g in block.groupby(["dataset", "metric"], sort=False):
            g = g.sort_values("pair_id", kind="stable")
            vectors[dataset, metric] = (tuple(g["pair_id"].astype(str)), g[["score_1", "score_2"]].to_numpy(float))
            ids, values = vectors[dataset, metric]
            twin = next((k for k in kept if vectors[k][0] == ids and np.allclose(vectors[k][1], values, rtol=rtol,
                                                                                 atol=atol, equal_nan=True)), None)
            if twin is None:
                kept.append((dataset, metric))
            else:
                rows.append({"dataset": dataset, "attribute": attribute, "metric": metric, "same_as_dataset": twin[0],
                             "same_as_metric": twin[1], "pairs": len(ids)})
    return pd.DataFrame(rows, columns=IDENTICAL_CELL_COLUMNS)
