"""Pairwise bias of a metric on paired candidates (Sun et al. 2022, Eq. 1-2, App. E).

For one metric on one attribute's dataset of N pairs ``(sys_i1, ref_i), (sys_i2, ref_i)``:

* Eq. 1 rescales every score to [0, 100] with the minimum and maximum over all
  2N scores of that metric on that dataset;
* Eq. 2, the *bias*, is the mean absolute difference of the rescaled scores;
* the *stereotypical difference* (App. E) is the mean signed difference,
  candidate 1 minus candidate 2 (candidate 1 is the stereotypical sentence in
  the released data: WinoBias pro-stereotyped, CrowS-Pairs ``sent_more``).

Confidence intervals resample at the design's level, with a fixed seed; the
rescaling is computed once on the full dataset, as in the paper, and held fixed.
Where pairs share a template (``clusters``: a WinoBias sentence and its twin, a
counterfactual source, a user's ``cluster`` column; :mod:`metricbias.bias.clusters`)
whole clusters are resampled (the expanded percentile interval); where every pair
is its own, the interval is BCa over pairs (:func:`scipy.stats.bootstrap`).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from scipy import stats

from .registry import DEFAULT_RESAMPLES, DEFAULT_SEED, register_measure

#: the columns of a bias table, in order (the CLI writes exactly these)
BIAS_COLUMNS = ["attribute", "metric", "n_pairs", "bias", "bias_ci_low", "bias_ci_high", "stereotypical_difference"]


class ConstantScoresWarning(UserWarning):
    """A metric gave the same score to every candidate: Eq. 1 is undefined."""


def _label(metric, attribute) -> str:
    return f"metric {metric or '?'} on attribute {attribute or '?'}"


def _as_scores(values, what: str) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    if arr.ndim != 1:
        raise ValueError(f"{what}: expected a 1-d array of scores, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{what}: scores must be finite ({int((~np.isfinite(arr)).sum())} are not)")
    return arr


def rescale(scores_1, scores_2, *, metric=None, attribute=None) -> tuple[np.ndarray, np.ndarray]:
    """Eq. 1: map both candidates' scores to [0, 100] with the pooled min and max.

    Constant scores (S_max = S_min) make Eq. 1 undefined: both arrays come back
    as NaN and a :class:`ConstantScoresWarning` names the metric and attribute.
    """
    s1 = _as_scores(scores_1, f"{_label(metric, attribute)}, candidate 1")
    s2 = _as_scores(scores_2, f"{_label(metric, attribute)}, candidate 2")
    if s1.shape != s2.shape:
        raise ValueError(f"{_label(metric, attribute)}: {s1.size} scores for candidate 1 but {s2.size} for candidate 2")
    if s1.size == 0:
        raise ValueError(f"{_label(metric, attribute)}: no pairs to measure")
    pooled = np.concatenate([s1, s2])
    lo, hi = pooled.min(), pooled.max()
    if hi == lo:
        warnings.warn(
            f"{_label(metric, attribute)} gives the same score ({lo:g}) to all {pooled.size} candidates; "
            "Eq. 1 rescaling is undefined, so its bias is NaN",
            ConstantScoresWarning,
            stacklevel=2,
        )
        nan = np.full_like(s1, np.nan)
        return nan, nan.copy()
    return (s1 - lo) / (hi - lo) * 100.0, (s2 - lo) / (hi - lo) * 100.0


def pair_terms(scores_1, scores_2, *, signed: bool = False, **labels) -> np.ndarray:
    """Per-pair terms of Eq. 2 (|Ŝ_1 − Ŝ_2|) or of the stereotypical difference (Ŝ_1 − Ŝ_2)."""
    r1, r2 = rescale(scores_1, scores_2, **labels)
    return (r1 - r2) if signed else np.abs(r1 - r2)


def absolute_bias(scores_1, scores_2, **labels) -> float:
    """Eq. 2: mean absolute difference of the rescaled scores."""
    return float(np.mean(pair_terms(scores_1, scores_2, **labels)))


def stereotypical_difference(scores_1, scores_2, **labels) -> float:
    """App. E: mean signed difference of the rescaled scores, candidate 1 minus candidate 2."""
    return float(np.mean(pair_terms(scores_1, scores_2, signed=True, **labels)))


def bootstrap_ci(values, *, confidence: float = 0.95, n_resamples: int = DEFAULT_RESAMPLES,
                 seed: int = DEFAULT_SEED, statistic=np.mean) -> tuple[float, float]:
    """BCa bootstrap interval of ``statistic`` over the given per-pair values.

    Returns (NaN, NaN) for NaN input or ``n_resamples=0`` (point values only), and a
    zero-width interval when every value is the same (the bootstrap distribution is then a point).
    """
    values = np.asarray(values, dtype=float)
    if values.size == 0 or np.isnan(values).any() or n_resamples == 0:
        return float("nan"), float("nan")
    if np.ptp(values) == 0:
        point = float(statistic(values))
        return point, point
    res = stats.bootstrap(
        (values,), statistic, confidence_level=confidence, n_resamples=n_resamples,
        method="BCa", vectorized=True, rng=np.random.default_rng(seed),
    )
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def design_ci(values, clusters=None, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
              confidence: float = 0.95) -> tuple[float, float]:
    """The 95% interval of the mean of per-pair ``values`` at the design's level: whole clusters resampled
    (:func:`metricbias.bias.clusters.cluster_bootstrap`) when ``clusters`` (one key per pair) has a cluster of
    several pairs, else BCa over pairs (:func:`bootstrap_ci`)."""
    from .clusters import cluster_bootstrap, n_clusters

    if clusters is not None and n_clusters(clusters) < np.size(values):
        return cluster_bootstrap(values, clusters, confidence=confidence, n_resamples=n_resamples, seed=seed)
    return bootstrap_ci(values, confidence=confidence, n_resamples=n_resamples, seed=seed)


def _mean_with_ci(terms: np.ndarray, n_resamples: int, seed: int, clusters=None) -> dict:
    low, high = design_ci(terms, clusters, n_resamples=n_resamples, seed=seed)
    return {"value": float(np.mean(terms)), "ci_low": low, "ci_high": high}


@register_measure("bias", takes="pairs", interval=True, citation="Sun et al. 2022, Eq. 2",
                  description="mean |difference| of the min-max rescaled scores (0-100), 95% interval over whole "
                              "templates where pairs share one, BCa over pairs otherwise")
def bias_with_ci(scores_1, scores_2, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                 metric=None, attribute=None, clusters=None) -> dict:
    """Eq. 2 with its 95% bootstrap interval (the rescaling held fixed): over whole clusters where ``clusters``
    groups pairs, else BCa over pairs (:func:`design_ci`)."""
    terms = pair_terms(scores_1, scores_2, metric=metric, attribute=attribute)
    return _mean_with_ci(terms, n_resamples, seed, clusters)


@register_measure("stereotypical_difference", takes="pairs", interval=True, citation="Sun et al. 2022, App. E",
                  description="mean signed difference of the rescaled scores, candidate 1 minus candidate 2; 95% "
                              "interval over whole templates where pairs share one, BCa over pairs otherwise")
def stereotypical_difference_with_ci(scores_1, scores_2, *, n_resamples: int = DEFAULT_RESAMPLES,
                                     seed: int = DEFAULT_SEED, metric=None, attribute=None, clusters=None) -> dict:
    """App. E with its 95% bootstrap interval at the design's level (:func:`design_ci`)."""
    terms = pair_terms(scores_1, scores_2, signed=True, metric=metric, attribute=attribute)
    return _mean_with_ci(terms, n_resamples, seed, clusters)


def summarize(scores_1, scores_2, *, metric=None, attribute=None, n_resamples: int = DEFAULT_RESAMPLES,
              seed: int = DEFAULT_SEED, clusters=None) -> dict:
    """One row of a bias table (:data:`BIAS_COLUMNS`) for one cell's scores (``clusters``: one key per pair)."""
    labels = {"metric": metric, "attribute": attribute}
    bias = bias_with_ci(scores_1, scores_2, n_resamples=n_resamples, seed=seed, clusters=clusters, **labels)
    signed = stereotypical_difference_with_ci(scores_1, scores_2, n_resamples=0, **labels)
    return {"attribute": attribute, "metric": metric, "n_pairs": int(np.size(scores_1)), "bias": bias["value"],
            "bias_ci_low": bias["ci_low"], "bias_ci_high": bias["ci_high"],
            "stereotypical_difference": signed["value"]}


def bias_table(scores: pd.DataFrame, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
               keep=("signature",)) -> pd.DataFrame:
    """Bias of every (attribute, metric) in a tidy score table (``score_pairs``, ``published.scores()``).

    A wide view of the long table of :func:`metricbias.bias.measures.measure`: one row
    per cell (:data:`BIAS_COLUMNS`; a ``dataset`` column first when the table holds
    several datasets). Columns named in ``keep`` that are present and constant within
    a cell (the score signature, say) are carried into the result.
    """
    from .measures import measure, wide
    from .scores import cells, keys

    kept = {c: [] for c in keep if c in scores.columns}
    for key, group in cells(scores):
        for col, column in kept.items():
            values = group[col].unique()
            if len(values) != 1:
                raise ValueError(f"{_label(key['metric'], key['attribute'])}: several values of {col!r} in one "
                                 f"group: {values[:3]}")
            column.append(values[0])
    long = pd.concat([measure(scores, "bias", n_resamples=n_resamples, seed=seed),
                      measure(scores, "stereotypical_difference", n_resamples=0)], ignore_index=True)
    table = wide(long).assign(**kept)
    lead = [c for c in keys(scores) if c not in BIAS_COLUMNS]
    return table.reindex(columns=lead + BIAS_COLUMNS + list(kept))  # (an empty table has no measure columns)
