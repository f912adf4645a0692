"""Pairwise bias of a metric on paired candidates (Sun et al. 2022, Eq. 1-2, App. E).

For one metric on one attribute's dataset of N pairs ``(sys_i1, ref_i), (sys_i2, ref_i)``:

* Eq. 1 rescales every score to [0, 100] with the minimum and maximum over all
  2N scores of that metric on that dataset;
* Eq. 2, the *bias*, is the mean absolute difference of the rescaled scores;
* the *stereotypical difference* (App. E) is the mean signed difference,
  candidate 1 minus candidate 2 (candidate 1 is the stereotypical sentence in
  the released data: WinoBias pro-stereotyped, CrowS-Pairs ``sent_more``).

Confidence intervals are percentile-corrected (BCa) bootstrap intervals over
pairs, from :func:`scipy.stats.bootstrap` with a fixed seed; the rescaling is
computed once on the full dataset, as in the paper, and held fixed.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from scipy import stats

#: the columns of a bias table, in order (the CLI writes exactly these)
BIAS_COLUMNS = ["attribute", "metric", "n_pairs", "bias", "bias_ci_low", "bias_ci_high", "stereotypical_difference"]

DEFAULT_RESAMPLES = 9999
DEFAULT_SEED = 0


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


def absolute_bias(scores_1, scores_2, **labels) -> float:
    """Eq. 2: mean absolute difference of the rescaled scores."""
    r1, r2 = rescale(scores_1, scores_2, **labels)
    return float(np.mean(np.abs(r1 - r2)))


def stereotypical_difference(scores_1, scores_2, **labels) -> float:
    """App. E: mean signed difference of the rescaled scores, candidate 1 minus candidate 2."""
    r1, r2 = rescale(scores_1, scores_2, **labels)
    return float(np.mean(r1 - r2))


def bootstrap_ci(values, *, confidence: float = 0.95, n_resamples: int = DEFAULT_RESAMPLES,
                 seed: int = DEFAULT_SEED, statistic=np.mean) -> tuple[float, float]:
    """BCa bootstrap interval of ``statistic`` over the given per-pair values.

    Returns (NaN, NaN) for NaN input, and a zero-width interval when every value
    is the same (the bootstrap distribution is then a point).
    """
    values = np.asarray(values, dtype=float)
    if values.size == 0 or np.isnan(values).any():
        return float("nan"), float("nan")
    if np.ptp(values) == 0:
        point = float(statistic(values))
        return point, point
    res = stats.bootstrap(
        (values,), statistic, confidence_level=confidence, n_resamples=n_resamples,
        method="BCa", vectorized=True, rng=np.random.default_rng(seed),
    )
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def summarize(scores_1, scores_2, *, metric=None, attribute=None, n_resamples: int = DEFAULT_RESAMPLES,
              seed: int = DEFAULT_SEED) -> dict:
    """One row of a bias table: Eq. 2 with its bootstrap CI and the stereotypical difference."""
    r1, r2 = rescale(scores_1, scores_2, metric=metric, attribute=attribute)
    diff = r1 - r2
    low, high = bootstrap_ci(np.abs(diff), n_resamples=n_resamples, seed=seed)
    return {
        "attribute": attribute,
        "metric": metric,
        "n_pairs": int(diff.size),
        "bias": float(np.mean(np.abs(diff))),
        "bias_ci_low": low,
        "bias_ci_high": high,
        "stereotypical_difference": float(np.mean(diff)),
    }


def bias_table(scores: pd.DataFrame, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
               keep=("signature",)) -> pd.DataFrame:
    """Bias of every (attribute, metric) in a tidy score table (``score_pairs``, ``published.scores()``).

    One row per cell (:data:`BIAS_COLUMNS`; a ``dataset`` column first when the table
    holds several datasets). Columns named in ``keep`` that are present and constant
    within a cell (the score signature, say) are carried into the result.
    """
    from .scores import cells, keys

    kept = [c for c in keep if c in scores.columns]
    rows = []
    for key, group in cells(scores):
        row = summarize(group["score_1"], group["score_2"], metric=key["metric"], attribute=key["attribute"],
                        n_resamples=n_resamples, seed=seed)
        for col in kept:
            values = group[col].unique()
            if len(values) != 1:
                raise ValueError(f"{_label(key['metric'], key['attribute'])}: several values of {col!r} in one "
                                 f"group: {values[:3]}")
            row[col] = values[0]
        rows.append({**key, **row})
    lead = [c for c in keys(scores) if c not in BIAS_COLUMNS]
    return pd.DataFrame(rows, columns=lead + BIAS_COLUMNS + kept)
