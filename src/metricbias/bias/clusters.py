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

:func:`cluster_draws` draws how often each cluster is drawn in each resample of the clusters with replacement,
from which any statistic that is a ratio of sums over pairs (a mean, a group mean) is recomputed in one matrix
product; :func:`cluster_bootstrap` is the percentile interval of a mean. Below :data:`FEW_CLUSTERS` clusters the interval undercovers
(:mod:`metricbias.bias.simulation`: templates-only coverage falls to about 0.83 with 20 clusters), and tables
mark it.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from .pairwise import DEFAULT_RESAMPLES, DEFAULT_SEED

#: below this many clusters the cluster bootstrap's interval is marked as undercovering
FEW_CLUSTERS = 30

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
    counts, codes = cluster_draws(clusters, n_resamples=n_resamples, seed=seed)
    k = counts.shape[1]
    return (counts @ cluster_sums(values, codes, k)) / (counts @ cluster_sums(np.ones(len(codes)), codes, k))


def cluster_bootstrap(values, clusters, *, confidence: float = 0.95, n_resamples: int = DEFAULT_RESAMPLES,
                      seed: int = DEFAULT_SEED) -> tuple[float, float]:
    """Percentile interval of the mean of ``values`` when whole clusters are resampled; (NaN, NaN) with
    ``n_resamples=0`` or NaN values."""
    values = np.asarray(values, dtype=float)
    if values.size == 0 or np.isnan(values).any() or n_resamples == 0:
        return float("nan"), float("nan")
    alpha = (1 - confidence) / 2
    low, high = np.quantile(cluster_means(values, clusters, n_resamples=n_resamples, seed=seed), [alpha, 1 - alpha])
    return float(low), float(high)


def n_clusters(clusters) -> int:
    return int(pd.Series(np.asarray(clusters)).nunique())


__all__ = ["FEW_CLUSTERS", "cluster_bootstrap", "cluster_draws", "cluster_keys", "cluster_means", "cluster_sums",
           "n_clusters", "template_of"]
