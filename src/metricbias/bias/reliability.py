"""How far a bias number can be trusted: sample size, templates, and a size-robust variant of Eq. 2.

* **Sample size.** Eq. 1 rescales with the minimum and maximum of the 2n scores
  being measured. The range of a sample grows with its size, so Eq. 2 on n pairs
  estimates nothing fixed: it shrinks as n grows. :func:`sample_size_ratios`
  measures Eq. 2 on seeded draws of n pairs against its whole-set value.
* **A size-robust variant,** :func:`size_robust_bias`: the mean absolute paired
  difference in units of the standard deviation of the 2n pooled scores, times
  100 ("percent of a standard deviation"). The standard deviation is a consistent
  estimate of a fixed population scale, where the range is an extreme value,
  so the measure estimates one population value,
  E|S₁ − S₂| / SD(S), whatever the number of pairs. Like Eq. 2 it is invariant to
  shifting and scaling a metric; unlike Eq. 2 it does not depend on the two most
  extreme candidates.
* **Templates versus identity words.** In a multi-group counterfactual set
  (:mod:`metricbias.datasets.counterfactuals`) each source sentence is a template
  with one candidate per group. :func:`template_interval` resamples whole templates
  (clusters), each with all its group pairs: the interval to report wherever pairs share
  a template (Davison & Hinkley 1997, §3.8; :mod:`metricbias.bias.clusters`), as an expanded
  percentile interval that narrows a percentile interval's shortfall with few templates
  (the simulation: :mod:`metricbias.bias.simulation`); below about 30 templates
  :func:`template_table` still marks it. :func:`two_level_interval` resamples templates, then the
  group pairs within them: it counts the within-template variance twice and over-covers, an
  option for a *conservative* interval only. :func:`template_share` is the share of the
  variance of the per-pair differences that templates explain (one-way random-effects ANOVA).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from ..cache import cached_result
from .pairwise import DEFAULT_RESAMPLES, DEFAULT_SEED, bootstrap_ci
from .registry import register_measure
from .scores import cells

SIZES = (10, 20, 40, 80, 160)


def size_robust_statistic(s1, s2, signed: bool = False, axis: int = -1):
    """100 × mean (|)s₁ − s₂(|) / SD of the pooled scores, along ``axis`` (any leading batch dimensions)."""
    s1, s2 = np.asarray(s1, dtype=float), np.asarray(s2, dtype=float)
    d = s1 - s2
    n2 = 2 * s1.shape[axis]
    # pooled variance from the two samples' moments: no concatenated copy (this runs inside the bootstraps)
    mean = (s1.sum(axis=axis) + s2.sum(axis=axis)) / n2
    c1, c2 = s1 - np.expand_dims(mean, axis), s2 - np.expand_dims(mean, axis)
    scale = np.sqrt(((c1 * c1).sum(axis=axis) + (c2 * c2).sum(axis=axis)) / (n2 - 1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return 100.0 * np.mean(d if signed else np.abs(d), axis=axis) / scale


def size_robust_value(scores_1, scores_2, *, signed: bool = False) -> float:
    """The size-robust bias (``signed=True``: the size-robust stereotypical difference) of one cell, no interval.

    NaN when every candidate has the same score (no scale)."""
    s1, s2 = np.asarray(scores_1, dtype=float), np.asarray(scores_2, dtype=float)
    if s1.shape != s2.shape or s1.ndim != 1 or s1.size < 2:
        raise ValueError(f"size-robust bias needs two 1-d score arrays of equal length ≥ 2, got {s1.shape} and "
                         f"{s2.shape}")
    return float(size_robust_statistic(s1, s2, signed))


def _of_sums(signed_sums):
    """The size-robust statistic from the sums over pairs of (|)d(|), 1, s₁ + s₂ and s₁² + s₂² (last axis)."""
    n = signed_sums[..., 1]
    pooled = 2 * n
    scale = np.sqrt((signed_sums[..., 3] - signed_sums[..., 2] ** 2 / pooled) / (pooled - 1))
    return 100.0 * signed_sums[..., 0] / n / scale


def _paired_interval(s1, s2, signed: bool, n_resamples: int, seed: int, confidence: float = 0.95, clusters=None):
    """Interval of the size-robust statistic: whole clusters resampled where ``clusters`` groups pairs
    (:func:`metricbias.bias.clusters.cluster_interval`), else BCa over pairs (both candidates drawn together)."""
    from .clusters import cluster_interval, n_clusters

    if clusters is not None and n_clusters(clusters) < len(s1) and n_resamples:
        centre = (s1.mean() + s2.mean()) / 2  # the scale is shift-invariant: centring keeps the sums accurate
        a, b = s1 - centre, s2 - centre
        d = a - b
        return cluster_interval([d if signed else np.abs(d), np.ones(len(d)), a + b, a * a + b * b], clusters,
                                _of_sums, confidence=confidence, n_resamples=n_resamples, seed=seed)
    if n_resamples == 0 or np.ptp(np.concatenate([s1, s2])) == 0 or np.ptp(s1 - s2) == 0:
        v = float(size_robust_statistic(s1, s2, signed))
        return (v, v) if n_resamples and np.isfinite(v) else (np.nan, np.nan)
    res = stats.bootstrap((s1, s2), lambda a, b, axis=-1: size_robust_statistic(a, b, signed, axis), paired=True,
                          vectorized=True, n_resamples=n_resamples, confidence_level=confidence, method="BCa",
                          rng=np.random.default_rng(seed))
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


@register_measure("size_robust_bias", takes="pairs", interval=True,
                  citation="this book, chapter 8 (Eq. 2 with the pooled standard deviation for the range)",
                  description="100 × mean |s1 − s2| / SD of the 2n pooled scores, with a 95% interval (whole "
                              "templates where pairs share one, BCa over pairs otherwise); estimates one population "
                              "value whatever the number of pairs")
def size_robust_bias(s1, s2, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED, clusters=None) -> dict:
    """Size-robust Eq. 2: 100 × mean |s₁ − s₂| / SD of the 2n pooled scores, with its 95% interval (whole
    clusters resampled where ``clusters`` groups pairs, else BCa over pairs).

    ``s1``, ``s2``: the raw scores of candidate 1 and 2 of one (attribute, metric) cell.
    """
    s1, s2 = np.asarray(s1, dtype=float), np.asarray(s2, dtype=float)
    value = size_robust_value(s1, s2)
    low, high = _paired_interval(s1, s2, False, n_resamples, seed, clusters=clusters)
    return {"value": value, "ci_low": low, "ci_high": high}


@register_measure("size_robust_difference", takes="pairs", interval=True, test=True,
                  citation="this book, chapter 8 (App. E of Sun et al. 2022 on the size-robust scale)",
                  description="100 × mean (s1 − s2) / SD of the pooled scores, with a 95% interval and the "
                              "sign-flip permutation p-value (both over whole templates where pairs share one)")
def size_robust_difference(s1, s2, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                           clusters=None) -> dict:
    """Size-robust stereotypical difference: 100 × mean (s₁ − s₂) / SD of the pooled scores, with its interval
    and the sign-flip permutation p-value (:func:`metricbias.bias.testing.sign_flip_test`), both at the level of
    the clusters where ``clusters`` groups pairs (the signs of whole clusters' sums flipped)."""
    from .clusters import cluster_flip_sums
    from .testing import sign_flip_test

    s1, s2 = np.asarray(s1, dtype=float), np.asarray(s2, dtype=float)
    value = size_robust_value(s1, s2, signed=True)
    low, high = _paired_interval(s1, s2, True, n_resamples, seed, clusters=clusters)
    d = s1 - s2 if clusters is None else cluster_flip_sums(s1 - s2, clusters)
    p = sign_flip_test(d, n_resamples=n_resamples or DEFAULT_RESAMPLES, seed=seed)
    return {"value": value, "ci_low": low, "ci_high": high, "p_value": p}


def eq2_statistic(s1, s2, axis=-1):
    """Eq. 2 along ``axis`` (batch dimensions allowed): Eq. 1 rescaling by the range of each row's 2n scores."""
    pooled = np.concatenate([s1, s2], axis=axis)
    with np.errstate(invalid="ignore", divide="ignore"):
        return 100.0 * np.mean(np.abs(s1 - s2), axis=axis) / np.ptp(pooled, axis=axis)


@cached_result("reliability.sample_size_ratios")
def sample_size_ratios(scores: pd.DataFrame, sizes=SIZES, *, n_draws: int = 200, seed: int = DEFAULT_SEED) -> pd.DataFrame:
    """Eq. 2 and the size-robust bias on ``n_draws`` seeded draws of n pairs (without replacement) of every cell,
    as ratios to their whole-set values.

    One row per (cell, measure, n): ``attribute, metric, measure, n, whole, mean_ratio, low, high`` with the
    5th and 95th percentiles of the ratio over draws. Sizes larger than a cell are skipped; cells whose
    whole-set value is 0 or undefined are left out.
    """
    rng = np.random.default_rng(seed)
    rows = []
    for key, g in cells(scores):
        s1, s2 = g["score_1"].to_numpy(float), g["score_2"].to_numpy(float)
        whole = {"eq2": float(eq2_statistic(s1, s2)), "size_robust_bias": float(size_robust_statistic(s1, s2))}
        if not all(np.isfinite(v) and v > 0 for v in whole.values()):
            continue
        for n in sizes:
            if n >= s1.size:
                continue
            idx = np.argsort(rng.random((n_draws, s1.size)), axis=1)[:, :n]  # draws without replacement
            for name, fn in (("eq2", eq2_statistic), ("size_robust_bias", size_robust_statistic)):
                ratio = fn(s1[idx], s2[idx]) / whole[name]
                ratio = ratio[np.isfinite(ratio)]
                rows.append({**key, "measure": name, "n": n, "whole": whole[name], "mean_ratio": float(ratio.mean()),
                             "low": float(np.quantile(ratio, 0.05)), "high": float(np.quantile(ratio, 0.95))})
    return pd.DataFrame(rows)


def whole_set_values(scores: pd.DataFrame) -> pd.DataFrame:
    """Eq. 2 and the size-robust bias of every cell on its whole set: ``attribute, metric, eq2, size_robust_bias``."""
    rows = []
    for key, g in cells(scores):
        s1, s2 = g["score_1"].to_numpy(float), g["score_2"].to_numpy(float)
        rows.append({**key, "eq2": float(eq2_statistic(s1, s2)),
                     "size_robust_bias": float(size_robust_statistic(s1, s2))})
    return pd.DataFrame(rows)


def rank_agreement(values: pd.DataFrame) -> pd.DataFrame:
    """Spearman ρ between Eq. 2 and the size-robust bias over metrics, per attribute and over all cells."""
    v = values.dropna(subset=["eq2", "size_robust_bias"])
    rows = [{"attribute": a, "metrics": len(g), "rho": stats.spearmanr(g["eq2"], g["size_robust_bias"]).statistic}
            for a, g in v.groupby("attribute", sort=False) if len(g) > 2]
    rows.append({"attribute": "all cells", "metrics": len(v),
                 "rho": stats.spearmanr(v["eq2"], v["size_robust_bias"]).statistic})
    return pd.DataFrame(rows)


# --- templates versus identity words -------------------------------------------------------------------------


def two_level_resamples(arrays, statistic, *, n_resamples: int, rng) -> np.ndarray:
    """Two-level bootstrap replicates of ``statistic``: for arrays of shape (..., templates, terms), each replicate
    draws templates with replacement, then terms with replacement within each drawn template (the same draw for
    every array: a pair's two candidates stay together). ``statistic(*flat, axis=-1)`` gets arrays of shape
    (..., n_resamples, templates × terms); returns shape (..., n_resamples)."""
    arrays = [np.asarray(a, dtype=float) for a in arrays]
    *lead, j, m = arrays[0].shape
    rows = rng.integers(j, size=(*lead, n_resamples, j, 1))
    cols = rng.integers(m, size=(*lead, n_resamples, j, m))
    flat = rows * m + cols  # index into the flattened (templates × terms) axis
    picked = [np.take_along_axis(a.reshape(*lead, 1, j * m), flat.reshape(*lead, n_resamples, j * m), axis=-1)
              for a in arrays]
    return statistic(*picked, axis=-1)


def two_level_interval(terms, *, n_resamples: int = 1999, seed: int = DEFAULT_SEED, confidence: float = 0.95,
                       statistic=np.mean) -> tuple[float, float]:
    """Percentile interval of the mean of a (templates × terms) array by a two-level bootstrap
    (:func:`two_level_resamples`). NaN for fewer than two templates."""
    x = np.asarray(terms, dtype=float)
    if x.ndim != 2 or x.shape[0] < 2 or np.isnan(x).any() or n_resamples == 0:
        return float("nan"), float("nan")
    reps = two_level_resamples([x], statistic, n_resamples=n_resamples, rng=np.random.default_rng(seed))
    alpha = (1 - confidence) / 2
    return float(np.quantile(reps, alpha)), float(np.quantile(reps, 1 - alpha))


def template_interval(terms, *, n_resamples: int = 1999, seed: int = DEFAULT_SEED, confidence: float = 0.95
                      ) -> tuple[float, float]:
    """Percentile interval of the mean of a (templates × terms) array when whole templates are resampled (the
    cluster bootstrap, :func:`metricbias.bias.clusters.cluster_bootstrap`). NaN for fewer than two templates."""
    from .clusters import cluster_bootstrap

    x = np.asarray(terms, dtype=float)
    if x.ndim != 2 or x.shape[0] < 2 or np.isnan(x).any() or n_resamples == 0:
        return float("nan"), float("nan")
    return cluster_bootstrap(x.ravel(), np.repeat(np.arange(x.shape[0]), x.shape[1]), confidence=confidence,
                             n_resamples=n_resamples, seed=seed)


def template_share(terms) -> float:
    """Share of the variance of the (templates × terms) values that templates explain: the one-way
    random-effects intraclass correlation σ²_template / (σ²_template + σ²_within), from the ANOVA mean squares
    (0 when the between-template mean square is below the within one)."""
    x = np.asarray(terms, dtype=float)
    j, m = x.shape
    if j < 2 or m < 2:
        return float("nan")
    ms_between = m * x.mean(axis=1).var(ddof=1)
    ms_within = x.var(axis=1, ddof=1).mean()
    between = max((ms_between - ms_within) / m, 0.0)
    total = between + ms_within
    return float(between / total) if total > 0 else float("nan")


def counterfactual_terms(scored: pd.DataFrame, groups: dict):
    """Per (attribute, metric): the (sources × group pairs) array of |x − y| of the Eq. 1 rescaled scores
    (rescaled over the candidates of the protected groups, as chapter 4's counterfactual PCM).

    ``scored``: ``attribute, metric, source, group, score`` (``counterfactuals.group_scores``). Yields
    ``(attribute, metric, terms)``; cells with constant scores are skipped.
    """
    from .significance import _rescaled_blocks

    for attribute, metric, t, block in _rescaled_blocks(scored, groups):
        if block is None:
            continue
        wide = block[block["group"].isin(t)].pivot_table(index="source", columns="group", values="score",
                                                         sort=False)[t].dropna()
        x = wide.to_numpy()
        i, k = np.triu_indices(len(t), 1)
        yield attribute, metric, np.abs(x[:, i] - x[:, k])


@cached_result("reliability.template_table")
def template_table(scored: pd.DataFrame, groups: dict, *, n_resamples: int = 1999,
                   seed: int = DEFAULT_SEED) -> pd.DataFrame:
    """The counterfactual PCM |x − y| of every (attribute, metric) with three intervals and the template share.

    ``template_low, template_high``: :func:`template_interval`, whole templates resampled, the interval to report;
    ``few_templates``: fewer than :data:`~metricbias.bias.clusters.FEW_CLUSTERS` templates, where it undercovers;
    ``pair_low, pair_high``: BCa over the (source, group pair) terms as if independent (too narrow);
    ``two_level_low, two_level_high``: :func:`two_level_interval`, conservative (it over-covers);
    ``template_share``: :func:`template_share`; ``width_ratio``: the template interval's width over the pair
    bootstrap's; ``two_level_width_ratio``: the two-level one's over the pair bootstrap's.
    """
    from .clusters import FEW_CLUSTERS

    rows = []
    for attribute, metric, x in counterfactual_terms(scored, groups):
        pair = bootstrap_ci(x.ravel(), n_resamples=n_resamples, seed=seed)
        whole = template_interval(x, n_resamples=n_resamples, seed=seed)
        two = two_level_interval(x, n_resamples=n_resamples, seed=seed)
        rows.append({"attribute": attribute, "metric": metric, "templates": x.shape[0], "group_pairs": x.shape[1],
                     "value": float(x.mean()), "template_low": whole[0], "template_high": whole[1],
                     "few_templates": x.shape[0] < FEW_CLUSTERS, "pair_low": pair[0], "pair_high": pair[1],
                     "two_level_low": two[0], "two_level_high": two[1], "template_share": template_share(x)})
    out = pd.DataFrame(rows)
    if not out.empty:
        pair_width = out["pair_high"] - out["pair_low"]
        out["width_ratio"] = (out["template_high"] - out["template_low"]) / pair_width
        out["two_level_width_ratio"] = (out["two_level_high"] - out["two_level_low"]) / pair_width
    return out


def share_by_paradigm(table: pd.DataFrame, paradigm_of: dict) -> pd.DataFrame:
    """Median template share and median template (whole-template resampling) / pair interval width ratio per
    attribute and paradigm."""
    t = table.assign(paradigm=table["metric"].map(paradigm_of).fillna("other"))
    out = t.groupby(["attribute", "paradigm"], sort=False).agg(
        metrics=("metric", "size"), template_share=("template_share", "median"),
        width_ratio=("width_ratio", "median")).reset_index()
    return out


__all__ = ["SIZES", "counterfactual_terms", "rank_agreement", "sample_size_ratios",
           "share_by_paradigm", "size_robust_bias", "size_robust_difference", "size_robust_value", "template_interval",
           "template_share", "template_table", "two_level_interval", "two_level_resamples", "whole_set_values"]
