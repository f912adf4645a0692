"""Is a bias real? Sign-flip permutation tests over a grid of cells, with Benjamini–Hochberg.

Eq. 2 takes absolute values, so it is positive even for a metric that has no
preference: it cannot be tested against zero. The *signed* stereotypical
difference can. Under H0 (the two candidates of a pair are exchangeable for the
metric) each paired difference d_i = s_i1 − s_i2 is as likely to be −d_i, so
the null distribution of mean(d) comes from flipping signs pair by pair
(:func:`scipy.stats.permutation_test` with one sample and
``permutation_type="samples"``). Eq. 1's rescaling and the size-robust scale
are both unchanged by a swap within a pair, so the test is the same on raw and
on rescaled scores. Over a grid of (configuration, attribute) cells the
p-values are adjusted with Benjamini–Hochberg (:func:`scipy.stats.false_discovery_control`).
Where pairs share a template (:func:`metricbias.bias.clusters.shared`: the WinoBias
twins, counterfactual sources, a user's ``cluster`` column) the signs of whole
clusters' sums are flipped instead: the test at the design's level, valid when
the template, not only the pair, is exchangeable.

Two configurations measured on the same pairs are compared the same way: per
pair, the difference of their Eq. 2 terms |d_a| − |d_b|, sign-flipped.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from ..cache import cached_result
from .clusters import cluster_flip_sums, n_clusters, shared
from .pairwise import DEFAULT_RESAMPLES, DEFAULT_SEED, rescale
from .scores import cells


def _mean(x, axis=-1):
    return np.mean(x, axis=axis)


def sign_flip_test(d, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                   alternative: str = "two-sided"):
    """Sign-flip permutation p-value(s) of mean(d) = 0 along the last axis of ``d`` (leading axes: a batch).

    A float for 1-d ``d``, else an array; 1.0 where every difference is 0. Resamples are drawn in batches
    that keep the working array near 20 million values.
    """
    d = np.asarray(d, dtype=float)
    if d.shape[-1] < 2 or not np.all(np.isfinite(d)):
        raise ValueError(f"a sign-flip test needs ≥ 2 finite paired differences, got shape {d.shape}")
    batch = max(1, int(2e7 // d.size))
    res = stats.permutation_test((d,), _mean, permutation_type="samples", vectorized=True, axis=-1,
                                 n_resamples=n_resamples, alternative=alternative, batch=batch,
                                 rng=np.random.default_rng(seed))
    p = np.where(np.all(d == 0, axis=-1), 1.0, res.pvalue)
    return float(p) if p.ndim == 0 else p


def sign_flip_tests(diffs: list, **options) -> list:
    """:func:`sign_flip_test` of each 1-d array of ``diffs``, those of equal length tested in one batch."""
    p = [np.nan] * len(diffs)
    by_length = {}
    for i, d in enumerate(diffs):
        by_length.setdefault(len(d), []).append(i)
    for idx in by_length.values():
        out = np.atleast_1d(sign_flip_test(np.stack([diffs[i] for i in idx]), **options))
        for i, v in zip(idx, out):
            p[i] = float(v)
    return p


def with_q_values(table: pd.DataFrame, p: str = "p_value", q: str = "q_value") -> pd.DataFrame:
    """``table`` with a Benjamini–Hochberg ``q`` column over its rows (NaN p-values stay NaN, not counted)."""
    out = table.copy()
    out[q] = np.nan
    ok = out[p].notna()
    if ok.any():
        out.loc[ok, q] = stats.false_discovery_control(out.loc[ok, p].to_numpy(float), method="bh")
    return out


@cached_result("testing.cell_tests")
def cell_tests(scores: pd.DataFrame, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> pd.DataFrame:
    """Sign-flip test of the stereotypical difference in every (attribute, metric) cell, BH over the grid.

    Columns: the cell keys, ``n_pairs, n_clusters, stereotypical_difference`` (Eq. 1 rescaled, App. E),
    ``p_value, q_value``. Where pairs share a template the signs of whole clusters are flipped (module
    docstring; ``n_clusters`` counts them, else it equals ``n_pairs``). Cells with constant scores get NaN. Kept in
    the result cache (``cache=False``: none).
    """
    rows, diffs = [], []
    for key, g in cells(scores):
        s1, s2 = g["score_1"].to_numpy(float), g["score_2"].to_numpy(float)
        clusters = shared(g)
        row = {**key, "n_pairs": len(s1), "n_clusters": len(s1) if clusters is None else n_clusters(clusters),
               "stereotypical_difference": np.nan, "p_value": np.nan}
        if np.ptp(np.concatenate([s1, s2])) > 0:  # constant scores: Eq. 1 undefined, nothing to test
            r1, r2 = rescale(s1, s2, metric=key.get("metric"), attribute=key.get("attribute"))
            row["stereotypical_difference"] = float(np.mean(r1 - r2))
            diffs.append((len(rows), s1 - s2 if clusters is None else cluster_flip_sums(s1 - s2, clusters)))
        rows.append(row)
    p = sign_flip_tests([d for _, d in diffs], n_resamples=n_resamples, seed=seed)
    for (i, _), v in zip(diffs, p):
        rows[i]["p_value"] = v
    return with_q_values(pd.DataFrame(rows))


def term_table(block: pd.DataFrame, terms) -> pd.DataFrame:
    """Per-pair terms ``terms(s1, s2)`` of every metric of one attribute's score rows: pairs (``pair_id``) ×
    metrics, only the pairs every metric scored; metrics with constant scores are left out."""
    wide = {}
    for metric, g in block.groupby("metric", sort=False):
        s1, s2 = g["score_1"].to_numpy(float), g["score_2"].to_numpy(float)
        if np.ptp(np.concatenate([s1, s2])) > 0:
            wide[metric] = pd.Series(terms(s1, s2), index=g["pair_id"].to_numpy())
    return pd.DataFrame(wide).dropna()


@cached_result("testing.configuration_differences")
def configuration_differences(scores: pd.DataFrame, *, n_resamples: int = DEFAULT_RESAMPLES,
                              seed: int = DEFAULT_SEED) -> pd.DataFrame:
    """For every attribute and every two metrics scored on the same pairs: does their Eq. 2 differ?

    Per pair the difference of their Eq. 2 terms (each metric rescaled with its own Eq. 1), sign-flipped (whole
    clusters' sums where pairs share a template, the WinoBias twins); BH over every comparison of the table. Columns: ``attribute, metric_a, metric_b, n_pairs, difference,
    p_value, q_value``. Needs ``pair_id``. Kept in the result cache (``cache=False``: none).
    """
    if "pair_id" not in scores.columns:
        raise ValueError("comparing configurations needs the pair_id column (the same pairs for every metric)")
    rows = []
    for attribute, block in scores.groupby("attribute", sort=False):
        terms = term_table(block, lambda s1, s2: np.abs(np.subtract(*rescale(s1, s2))))
        names = list(terms.columns)
        if len(names) < 2 or len(terms) < 2:
            continue
        i, k = np.triu_indices(len(names), 1)
        x = terms.to_numpy().T
        diffs = x[i] - x[k]
        keys = shared(pd.DataFrame({"attribute": attribute, "pair_id": terms.index.astype(str)}))
        flipped = diffs if keys is None else np.stack([cluster_flip_sums(row, keys) for row in diffs])
        p = np.atleast_1d(sign_flip_test(flipped, n_resamples=n_resamples, seed=seed))
        rows += [{"attribute": attribute, "metric_a": names[a], "metric_b": names[b], "n_pairs": len(terms),
                  "difference": float(dd.mean()), "p_value": float(pp)} for a, b, dd, pp in zip(i, k, diffs, p)]
    return with_q_values(pd.DataFrame(rows, columns=["attribute", "metric_a", "metric_b", "n_pairs", "difference",
                                                     "p_value"]))


def distinct_comparisons(comparisons: pd.DataFrame, same_cells: pd.DataFrame, *,
                         dataset: str = "scores") -> pd.DataFrame:
    """The rows of ``comparisons`` (``dataset``, ``attribute``, ``metric_a``, ``metric_b``, as
    :func:`configuration_differences` or :func:`metricbias.bias.power.difference_sd` return them with a column
    naming the score set) that are distinct hypotheses: each cell is replaced by the first identical one
    (``same_cells``: :func:`metricbias.bias.scores.identical_cells`, across score sets too), a comparison of a cell
    with its own twin is dropped, and a comparison repeated under other names is kept once (its first row)."""
    canon = {(r.dataset, r.attribute, r.metric): (r.same_as_dataset, r.same_as_metric)
             for r in same_cells.itertuples(index=False)}

    def key(row):
        a, b = (canon.get((row[dataset], row["attribute"], m), (row[dataset], m)) for m in (row["metric_a"],
                                                                                          row["metric_b"]))
        return (row["attribute"], *sorted((a, b))) if a != b else None

    keys = comparisons.apply(key, axis=1) if len(comparisons) else pd.Series([], dtype=object)
    keep = keys.notna() & ~keys.duplicated()
    return comparisons[keep.to_numpy()].reset_index(drop=True)


__all__ = ["cell_tests", "configuration_differences", "distinct_comparisons", "sign_flip_test",
           "sign_flip_tests", "term_table", "with_q_values"]
