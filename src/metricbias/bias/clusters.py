"""Clusters of pairs that share a template, and the cluster (template-level) bootstrap.

Pairs built from one template are not independent: a metric that likes the template likes both of its pairs.
The unit of resampling is then the template, not the pair (Davison & Hinkley 1997, sec. 3.8: resample whole
clusters). :func:`cluster_keys` names each pair's cluster:

* **WinoBias** (the released gender set and the built ``gender`` pairs): every WinoBias sentence has a *twin*, the
  next line of the same file, with the same two occupations and the pronoun pointing at the other one
  ("The developer argued with the designer because *he* did not like the design" / "... because *her* idea
  cannot be implemented"). A sentence and its twin are one cluster: built pair ``gender-type1-dev-001`` and
  ``-002`` form ``winobias:type1.dev:1``; the released pairs ``gender-0000`` and ``-0001`` (the file keeps
  WinoBias's order) form ``winobias-released:0``, so the 396 released pairs are 198 clusters.
* **Counterfactual** pairs (every group of a built pair against every other) take the cluster of their
  ``source``, the built pair they come from.
* Your own pairs (:mod:`metricbias.datasets.user_pairs`) name their clusters in a ``cluster`` column.
* Every other pair (a CrowS-Pairs row, a StereoSet item, a released CrowS-derived pair) is its own template:
  its cluster is its ``pair_id``.

**Which interval.** Wherever some pairs share a cluster, the book's intervals resample whole clusters
(:func:`cluster_interval`, :func:`cluster_bootstrap`; ``mb.measure``, ``mb.bias_table`` and ``mb.audit`` do so for
``bias``, ``stereotypical_difference`` and the size-robust measures); where every pair is its own cluster they stay
BCa intervals over pairs. :func:`cluster_draws` draws how often each cluster is drawn in each resample of the
clusters with replacement, from which any statistic of sums over pairs (a mean, a group mean, the size-robust
scale) is recomputed in one matrix product.

**Few clusters.** A percentile interval over k clusters runs short when k is small: its bootstrap variance is
(k − 1)/k of the usual estimate, and it uses normal rather than t quantiles (chapter 8's simulation: with templates
of four pairs, plain percentile coverage is about 0.83 with 5 templates and about 0.89 with 10). The interval is
therefore the *expanded percentile* interval (Hesterberg 2015): the quantiles of the bootstrap distribution at the
levels Φ(∓ √(k/(k − 1)) t_{k−1, 1−α/2}) instead of α/2 and 1 − α/2 (:func:`expanded_levels`), which tends to the
percentile interval as k grows (at k = 198, the 2.4th and 97.6th percentiles). Below :data:`FEW_CLUSTERS` clusters
tables still mark it and ``mb.audit`` warns (:class:`FewClustersWarning`, :func:`warn_if_few`); the simulation gives
its coverage there.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
from scipy import stats

from .registry import DEFAULT_RESAMPLES, DEFAULT_SEED

#: below this many clusters the cluster bootstrap's interval is marked (its coverage falls; module docstring)
FEW_CLUSTERS = 30


class FewClustersWarning(UserWarning):
    """An interval over fewer than :data:`FEW_CLUSTERS` clusters: its coverage falls short of 95%."""

_WINOBIAS_BUILT = re.compile(r"^gender-(type[12])-(dev|test)-(\d+)$")
_WINOBIAS_RELEASED = re.compile(r"^gender-(\d+)$")


def template_of(pair_id: str, attribute: str = "") -> str:
    """The cluster of one pair id (module docstring): a WinoBias sentence and its twin share one."""
    pair_id = str(pair_id)
    m = _WINOBIAS_BUILT.match(pair_id)
    if m:
        return f"winobias:{m[1]}.{m[2]}:{(int(m[3]) + 1) // 2}"
    m = _WINOBIAS_RELEASED.match(pair_id)
    if m and attribute == "gender":
        return f"winobias-released:{int(m[1]) // 2}"
    return f"{attribute}:{pair_id}" if attribute else pair_id


def cluster_keys(pairs: pd.DataFrame) -> pd.Series:
    """One cluster key per row of a pair or score table (``attribute``, ``pair_id``; a counterfactual pair's
    ``source``; a ``cluster`` column where the table has one), aligned with its index."""
    missing = [c for c in ("attribute", "pair_id") if c not in pairs.columns]
    if missing:
        raise ValueError(f"clusters: the table lacks column(s) {missing}; the pair layout has attribute and pair_id")
    ids = pairs["pair_id"].astype(str)
    if "source" in pairs.columns and "dataset" in pairs.columns:
        counterfactual = pairs["dataset"].eq("counterfactual")
        ids = ids.where(~counterfactual, pairs["source"].astype(str))
    keys = pd.Series([template_of(p, a) for p, a in zip(ids, pairs["attribute"].astype(str))], index=pairs.index,
                     name="cluster")
    if "cluster" in pairs.columns:  # the user's own: pairs made from one template share it
        own = pairs["cluster"]
        keys = keys.where(own.isna() | own.astype(str).eq(""), pairs["attribute"].astype(str) + ":" + own.astype(str))
    return keys


def cluster_draws(clusters, *, n_resamples: int = DEFAULT_RESAMPLES,
                  seed: int = DEFAULT_SEED) -> tuple[np.ndarray, np.ndarray]:
    """``(counts, codes)``: ``counts[b, c]`` is how often cluster ``c`` is drawn in resample ``b`` when the clusters
    are resampled with replacement (as many draws as clusters), ``codes[i]`` the cluster of pair ``i``."""
    codes, uniques = pd.factorize(pd.Series(np.asarray(clusters)), sort=False)
    k = len(uniques)
    rng = np.random.default_rng(seed)
    return rng.multinomial(k, np.full(k, 1.0 / k), size=n_resamples).astype(float), codes


def cluster_sums(values, codes, k: int) -> np.ndarray:
    """The sum of ``values`` over the pairs of each of the ``k`` clusters."""
    return np.bincount(codes, weights=np.asarray(values, dtype=float), minlength=k)


def cluster_means(values, clusters, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> np.ndarray:
    """The mean of ``values`` over pairs in each of ``n_resamples`` resamples of whole clusters."""
    values = np.asarray(values, dtype=float)
    return _mean_of_sums(resampled_sums([values, np.ones(values.size)], clusters, n_resamples=n_resamples, seed=seed))


def resampled_sums(columns, clusters, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> np.ndarray:
    """``(n_resamples, p)``: the sum over the pairs of each resample of whole clusters of each of the ``p`` per-pair
    ``columns`` (a pair counted as often as its cluster is drawn)."""
    counts, codes = cluster_draws(clusters, n_resamples=n_resamples, seed=seed)
    k = counts.shape[1]
    return counts @ np.stack([cluster_sums(c, codes, k) for c in columns], axis=1)


def expanded_levels(k: int, confidence: float = 0.95) -> tuple[float, float]:
    """The quantile levels of the expanded percentile interval over ``k`` clusters (Hesterberg 2015):
    Φ(∓ √(k/(k − 1)) t_{k−1, 1−α/2}), α = 1 − ``confidence``."""
    alpha = (1 - confidence) / 2
    if k < 2:
        return alpha, 1 - alpha
    level = float(stats.norm.cdf(-np.sqrt(k / (k - 1)) * stats.t.ppf(1 - alpha, k - 1)))
    return level, 1 - level


def cluster_interval(columns, clusters, statistic, *, confidence: float = 0.95,
                     n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> tuple[float, float]:
    """Expanded percentile interval (:func:`expanded_levels`) of a statistic of per-pair sums when whole clusters
    are resampled: ``statistic(sums)`` maps an array (..., p) of the sums of the ``p`` per-pair ``columns`` to the
    statistic (the mean of ``x``: columns ``[x, 1]``, statistic ``s[..., 0] / s[..., 1]``). (NaN, NaN) for fewer
    than two clusters, NaN values or ``n_resamples=0``."""
    columns = [np.asarray(c, dtype=float) for c in columns]
    k = n_clusters(clusters)
    if k < 2 or n_resamples == 0 or any(c.size == 0 or np.isnan(c).any() for c in columns):
        return float("nan"), float("nan")
    with np.errstate(invalid="ignore", divide="ignore"):
        draws = statistic(resampled_sums(columns, clusters, n_resamples=n_resamples, seed=seed))
    low, high = np.nanquantile(draws, expanded_levels(k, confidence))
    return float(low), float(high)


def _mean_of_sums(sums):
    return sums[..., 0] / sums[..., 1]


def cluster_bootstrap(values, clusters, *, confidence: float = 0.95, n_resamples: int = DEFAULT_RESAMPLES,
                      seed: int = DEFAULT_SEED) -> tuple[float, float]:
    """Expanded percentile interval (:func:`cluster_interval`) of the mean of ``values`` when whole clusters are
    resampled; (NaN, NaN) with ``n_resamples=0``, NaN values or fewer than two clusters."""
    values = np.asarray(values, dtype=float)
    return cluster_interval([values, np.ones(values.size)], clusters, _mean_of_sums, confidence=confidence,
                            n_resamples=n_resamples, seed=seed)


def weighted_medians(values, weights) -> np.ndarray:
    """The median of ``values`` with each value counted ``weights[b, i]`` times, for every row ``b``: the mean of the
    two middle values for an even total, as :func:`numpy.median` of the repeated values gives."""
    values = np.asarray(values, dtype=float)
    order = np.argsort(values, kind="stable")
    v, w = values[order], np.asarray(weights, dtype=float)[:, order]
    cum = np.cumsum(w, axis=1)
    half = cum[:, -1:] / 2
    lower = (cum >= half).argmax(axis=1)  # the value holding the lower middle position
    upper = (cum > half).argmax(axis=1)  # and the upper one (the same value for an odd total)
    return (v[lower] + v[upper]) / 2


def median_interval(values, clusters, *, confidence: float = 0.95, n_resamples: int = DEFAULT_RESAMPLES,
                    seed: int = DEFAULT_SEED) -> tuple[float, float]:
    """Expanded percentile interval (:func:`expanded_levels`) of the median of ``values`` when whole clusters are
    resampled (values that share a cluster, such as the cells of one metric, are drawn together); (NaN, NaN) with
    ``n_resamples=0``, NaN values or fewer than two clusters."""
    values = np.asarray(values, dtype=float)
    k = n_clusters(clusters)
    if k < 2 or n_resamples == 0 or values.size == 0 or np.isnan(values).any():
        return float("nan"), float("nan")
    counts, codes = cluster_draws(clusters, n_resamples=n_resamples, seed=seed)
    low, high = np.quantile(weighted_medians(values, counts[:, codes]), expanded_levels(k, confidence))
    return float(low), float(high)


def n_clusters(clusters) -> int:
    return int(pd.Series(np.asarray(clusters)).nunique())


def shared(pairs: pd.DataFrame):
    """The cluster keys of a cell's rows (:func:`cluster_keys`) as an array when some pairs share a cluster, else
    None (every pair its own: resample pairs). None too for a table without ``attribute`` and ``pair_id``."""
    if not {"attribute", "pair_id"} <= set(pairs.columns):
        return None
    keys = cluster_keys(pairs).to_numpy()
    return keys if n_clusters(keys) < len(keys) else None


def warn_if_few(scores: pd.DataFrame) -> None:
    """A :class:`FewClustersWarning` for every attribute of a score table whose pairs share clusters
    (:func:`shared`) and number fewer than :data:`FEW_CLUSTERS` of them."""
    import warnings

    for attribute, block in scores.groupby("attribute", sort=False):
        keys = shared(block.drop_duplicates("pair_id"))
        if keys is not None and n_clusters(keys) < FEW_CLUSTERS:
            warnings.warn(f"{attribute}: the 95% intervals resample {n_clusters(keys)} clusters of pairs, fewer than "
                          f"{FEW_CLUSTERS}; even the expanded percentile interval covers less than 95% there",
                          FewClustersWarning, stacklevel=3)


def cluster_flip_sums(d, clusters) -> np.ndarray:
    """The per-cluster sums of the paired differences ``d``: flipping their signs is the sign-flip test at the
    cluster's level (the mean over pairs is their sum over n)."""
    codes, uniques = pd.factorize(pd.Series(np.asarray(clusters)), sort=False)
    return cluster_sums(d, codes, len(uniques))


__all__ = ["FEW_CLUSTERS", "FewClustersWarning", "cluster_bootstrap", "cluster_draws", "cluster_flip_sums", "cluster_interval",
           "cluster_keys", "cluster_means", "cluster_sums", "expanded_levels", "median_interval", "n_clusters", "resampled_sums",
           "shared", "template_of", "warn_if_few", "weighted_medians"]
