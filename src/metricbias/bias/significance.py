"""Uncertainty and significance of bias measures.

* Bootstrap confidence intervals: every measure that is a mean over sources
  (Eq. 2, the counterfactual PCM/BCM/MCM) gets the BCa interval of
  :func:`metricbias.bias.pairwise.bootstrap_ci` over its per-source terms, with
  the rescaling held fixed (as in chapter 1).
* A paired permutation test of whether a metric's bias differs from a
  reference metric's (BLEU by default) on the same pairs: per pair i, the
  metric's term a_i = |Ŝ_i1 − Ŝ_i2| and the reference's b_i (each metric
  rescaled with its own Eq. 1); under H0 the two labels are exchangeable within
  each pair, so the null distribution of mean(a − b) comes from swapping them
  pair by pair (:func:`scipy.stats.permutation_test`, ``permutation_type="samples"``).
  Across many tests, p-values are adjusted with Benjamini–Hochberg
  (:func:`scipy.stats.false_discovery_control`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from ..cache import cached_result
from . import generalized
from .clusters import shared
from .pairwise import DEFAULT_RESAMPLES, DEFAULT_SEED, bootstrap_ci, design_ci, pair_terms


def measure_with_ci(measure: str, data: pd.DataFrame, phi="mean", d="abs", *, n_resamples: int = DEFAULT_RESAMPLES,
                    seed: int = DEFAULT_SEED, clusters=None, **options) -> dict:
    """A counterfactual PCM, BCM or MCM with the BCa bootstrap interval over sources (over whole clusters where
    ``clusters``, one key per source in the order of the sources, groups them: :func:`~.pairwise.design_ci`)."""
    if measure not in generalized.MEASURES:
        raise ValueError(f"unknown measure {measure!r}; known: {', '.join(generalized.MEASURES)}")
    terms = generalized.MEASURES[measure](data, phi, d, version="counterfactual", per_source=True, **options)
    low, high = design_ci(terms.to_numpy(), clusters, n_resamples=n_resamples, seed=seed)
    return {"value": float(terms.mean()), "ci_low": low, "ci_high": high, "n_sources": int(terms.size)}


def paired_permutation_test(x, y, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                            alternative: str = "two-sided") -> dict:
    """Test H0: the per-pair values ``x`` and ``y`` are exchangeable within pairs; statistic mean(x − y).

    Returns the difference, its BCa bootstrap interval and the permutation p-value.
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1 or x.size < 2:
        raise ValueError(f"a paired test needs two 1-d arrays of equal length ≥ 2, got {x.shape} and {y.shape}")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError("a paired test needs finite values (is a metric constant on this dataset?)")
    diff = x - y
    low, high = bootstrap_ci(diff, n_resamples=n_resamples, seed=seed)
    if np.all(diff == 0):
        p = 1.0
    else:
        res = stats.permutation_test(
            (x, y), lambda a, b, axis: np.mean(a - b, axis=axis), permutation_type="samples",
            vectorized=True, n_resamples=n_resamples, alternative=alternative, rng=np.random.default_rng(seed))
        p = float(res.pvalue)
    return {"difference": float(diff.mean()), "ci_low": low, "ci_high": high, "p_value": p}


@cached_result("significance.versus_reference")
def versus_reference(scores: pd.DataFrame, reference: str = "BLEU", *, signed: bool = False,
                     n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> pd.DataFrame:
    """For every attribute and metric ≠ reference: does its bias differ from the reference's on the same pairs?

    ``scores`` is a long table (``attribute, pair_id, metric, score_1, score_2``).
    Columns: bias of the metric and of the reference, their difference with a
    bootstrap CI, the permutation p-value and the Benjamini–Hochberg adjusted
    p-value over all rows. Kept in the result cache (:func:`metricbias.cache.cached_result`;
    ``cache=False``: none).
    """
    missing = {"attribute", "pair_id", "metric", "score_1", "score_2"} - set(scores.columns)
    if missing:
        raise ValueError(f"score table lacks column(s) {sorted(missing)}")
    if reference not in set(scores["metric"]):
        raise ValueError(f"reference metric {reference!r} is not in the score table; "
                         f"metrics: {', '.join(dict.fromkeys(scores['metric']))}")
    rows = []
    for attribute, block in scores.groupby("attribute", sort=False):
        ref = block[block["metric"] == reference].set_index("pair_id")
        b = pair_terms(ref["score_1"], ref["score_2"], signed=signed, metric=reference, attribute=attribute)
        b = pd.Series(b, index=ref.index)
        for metric, g in block[block["metric"] != reference].groupby("metric", sort=False):
            g = g.set_index("pair_id")
            if set(g.index) != set(b.index):
                raise ValueError(f"attribute {attribute}: metric {metric} and {reference} were scored on different "
                                 f"pairs ({len(set(g.index) ^ set(b.index))} differ)")
            a = pair_terms(g["score_1"], g["score_2"], signed=signed, metric=metric, attribute=attribute)
            test = paired_permutation_test(a, b.loc[g.index].to_numpy(), n_resamples=n_resamples, seed=seed)
            rows.append({"attribute": attribute, "metric": metric, "reference": reference, "n_pairs": len(g),
                         "bias": float(np.mean(a)), "reference_bias": float(b.mean()), **test})
    out = pd.DataFrame(rows)
    if not out.empty:
        out["p_adjusted"] = stats.false_discovery_control(out["p_value"].to_numpy(), method="bh")
    return out


def paired_intervals(scores: pd.DataFrame, attribute: str, instances=("eq2", "stereotypical", "counterfactual_mwu"), *,
                     n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> pd.DataFrame:
    """Paired instances of the framework (:data:`generalized.PAIRED_INSTANCES`, counterfactual ones) with
    their bootstrap intervals at the design's level (whole clusters where pairs share a template, the WinoBias
    twins; BCa over pairs otherwise), for every metric of one ``attribute`` of a long score table.

    One row per (metric, instance): ``metric, measure, value, ci_low, ci_high, n_sources``.
    """
    rows = []
    for metric, g in scores[scores["attribute"] == attribute].groupby("metric", sort=False):
        data = generalized.from_pairs(g["score_1"], g["score_2"])
        keys = shared(g)  # sources are the pairs, in order
        for name in instances:
            measure, _, phi, d = generalized.PAIRED_INSTANCES[name]
            rows.append({"metric": metric, "measure": name,
                         **measure_with_ci(measure, data, phi, d, n_resamples=n_resamples, seed=seed, clusters=keys)})
    return pd.DataFrame(rows)


def interval_columns(intervals: pd.DataFrame, *, index: str = "metric", labels: dict | None = None,
                     order=None) -> pd.DataFrame:
    """A long table of values with intervals (``measure, value, ci_low, ci_high``) as narrow columns: one row per
    ``index``; per measure (its label from ``labels``) three columns under it: "value", "CI low", "CI high"."""
    labels = labels or {}
    parts = {}
    for m in dict.fromkeys(intervals["measure"]):
        block = intervals[intervals["measure"] == m].set_index(index)[["value", "ci_low", "ci_high"]]
        parts[labels.get(m, m)] = block.rename(columns={"ci_low": "CI low", "ci_high": "CI high"})
    out = pd.concat(parts, axis=1)
    if order is not None:
        out = out.reindex([r for r in order if r in out.index])
    return out.rename_axis(index)


def reference_grid(versus: pd.DataFrame, *, alpha: float = 0.05, row_order=None, col_order=None):
    """(differences, labels) of :func:`versus_reference` as metric × attribute grids for a heatmap; a label is the
    difference to one decimal with "*" when the adjusted p-value is below ``alpha``."""
    star = np.where(versus["p_adjusted"] < alpha, "*", "")
    labelled = versus.assign(label=[f"{d:.1f}{s}" for d, s in zip(versus["difference"], star)])
    grid = labelled.pivot_table(index="metric", columns="attribute", values="difference", sort=False)
    labels = labelled.pivot(index="metric", columns="attribute", values="label")
    rows = list(grid.index) if row_order is None else [r for r in row_order if r in grid.index]
    cols = list(grid.columns) if col_order is None else [c for c in col_order if c in grid.columns]
    return grid.reindex(rows)[cols], labels.reindex(rows)[cols]


#: the measures :func:`counterfactual_table` reports: label -> (measure, d, background)
COUNTERFACTUAL_MEASURES = {
    "PCM |x−y|": ("PCM", "abs", None),
    "MCM range": ("MCM", "range", None),
    "MCM std": ("MCM", "std", None),
    "BCM |x−y|, original pair": ("BCM", "abs", "original"),
    "BCM |x−y|, neutral reference": ("BCM", "abs", "neutral"),
}


def _rescaled_blocks(scored: pd.DataFrame, groups: dict):
    """(attribute, metric, T, block) with scores rescaled by Eq. 1 over the rows of T (None: constant scores)."""
    for (attribute, metric), block in scored.groupby(["attribute", "metric"], sort=False):
        if attribute not in groups:
            raise ValueError(f"no protected groups given for attribute {attribute!r}")
        t = list(groups[attribute])
        in_t = block["group"].isin(t)
        lo, hi = block.loc[in_t, "score"].min(), block.loc[in_t, "score"].max()
        yield attribute, metric, t, (None if hi == lo else block.assign(score=(block["score"] - lo) / (hi - lo) * 100))


@cached_result("significance.counterfactual_vbcm")
def counterfactual_vbcm(scored: pd.DataFrame, groups: dict, *, background: str = "original", d: str = "signed",
                        n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> pd.DataFrame:
    """Counterfactual VBCM (Czarnowska et al., Eq. 4 without the sum over groups) per group, with bootstrap CIs.

    With the defaults, d(φ(β), φ(S'^t_j)) = β − group: how far below the
    unperturbed pair's mean (rescaled) score the candidate of group t falls.
    When ``scored`` has a ``direction`` column, the scores of lower-is-better
    metrics (TER, WMD) are negated first, so that positive always means "scored worse".
    Kept in the result cache (:func:`metricbias.cache.cached_result`; ``cache=False``: none).
    """
    if "direction" in scored.columns:
        scored = scored.assign(score=np.where(scored["direction"] == "lower", -scored["score"], scored["score"]))
    rows = []
    for attribute, metric, t, block in _rescaled_blocks(scored, groups):
        if block is None:
            continue
        terms = generalized.vbcm(block, "mean", d, background=background, groups=t, per_source=True)
        for g in t:
            low, high = bootstrap_ci(terms[g].to_numpy(), n_resamples=n_resamples, seed=seed)
            rows.append({"attribute": attribute, "metric": metric, "group": g, "value": float(terms[g].mean()),
                         "ci_low": low, "ci_high": high, "n_sources": int(terms[g].size)})
    return pd.DataFrame(rows)


@cached_result("significance.counterfactual_table")
def counterfactual_table(scored: pd.DataFrame, groups: dict, *, measures=None, n_resamples: int = DEFAULT_RESAMPLES,
                         seed: int = DEFAULT_SEED) -> pd.DataFrame:
    """Counterfactual PCM, MCM and BCM with bootstrap CIs for every (attribute, metric) of multi-group sets.

    ``scored`` has ``attribute, metric, source, group, score`` (rows of protected
    groups plus the background groups ``original`` and ``neutral``); ``groups``
    maps each attribute to T. Scores are rescaled with Eq. 1, the minimum and
    maximum taken over the rows of T (as Eq. 1 takes them over the candidates)
    and the same map applied to the background rows; φ is then the mean
    rescaled score of a cell. Kept in the result cache (:func:`metricbias.cache.cached_result`;
    ``cache=False``: none).
    """
    measures = COUNTERFACTUAL_MEASURES if measures is None else measures
    rows = []
    for attribute, metric, t, block in _rescaled_blocks(scored, groups):
        if block is None:  # constant scores: Eq. 1 undefined
            n = scored.loc[(scored["attribute"] == attribute) & (scored["metric"] == metric), "source"].nunique()
            rows += [{"attribute": attribute, "metric": metric, "measure": label, "value": np.nan, "ci_low": np.nan,
                      "ci_high": np.nan, "n_sources": n} for label in measures]
            continue
        in_t = block["group"].isin(t)
        for label, (measure, d, background) in measures.items():
            data = block if background else block[in_t]
            options = {"groups": t, **({"background": background} if background else {})}
            res = measure_with_ci(measure, data, "mean", d, n_resamples=n_resamples, seed=seed, **options)
            rows.append({"attribute": attribute, "metric": metric, "measure": label, **res})
    return pd.DataFrame(rows)


__all__ = ["COUNTERFACTUAL_MEASURES", "counterfactual_table", "counterfactual_vbcm", "interval_columns",
           "measure_with_ci", "paired_intervals", "paired_permutation_test", "reference_grid",
           "versus_reference"]
