"""Robustness of bias measures under subsampling (Liu 2024, "Robustness Study").

Liu subsamples CrowS-Pairs at 30–80% per bias type and asks whether a measure
still orders the models as it does on the full data. Here the "models" are the
metrics: for each attribute we draw ``ceil(rate · N)`` pairs without replacement
(as Liu's ``sampling.py`` does, per bias type), recompute every measure on the
subsample — the Eq. 1 min–max rescaling included, as if the subsample were the
dataset — and compare the ranking of the metrics with their ranking on the full
data by Kendall's τ-b (:func:`scipy.stats.kendalltau`). The measures:

* ``eq2``: Eq. 2 of Sun et al. (mean |Ŝ_1 − Ŝ_2|);
* ``indicator``: Liu's Eq. 2, 100/N Σ I(S_1 > S_2), with a tie counted as half a
  preference (metric scores tie often; see :func:`distributional.indicator_score`);
* ``kls``, ``jss``: Liu's Eqs. 6 and 9 on the [0, 1]-rescaled scores.

Rankings are by *bias magnitude*, so that "more biased" means the same for all
four: eq2 itself, |indicator − 50|, KLS − 50 and 100 − JSS. Besides each
attribute, the ``all`` ranking aggregates the attributes with the weights
|D^(t)|/|D| of Liu's Eqs. 10–11 (for every measure).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
from scipy import stats

from ..cache import cached_result
from . import distributional as dist
from .pairwise import ConstantScoresWarning
from .registry import get_measure
from .scores import cells

RATES = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
#: the study's measures: its label -> the registered measure (:mod:`metricbias.bias.registry`), point values only
REGISTERED = {"eq2": "bias", "indicator": "indicator", "kls": "kls", "jss": "jss"}
MEASURES = tuple(REGISTERED)
ALL = "all"


def magnitude(measure: str, values):
    """Bias magnitude of a measure's values (larger = more biased)."""
    v = np.asarray(values, dtype=float)
    if measure == "eq2":
        return v
    if measure == "indicator":
        return np.abs(v - 50.0)
    if measure == "kls":
        return v - 50.0
    if measure == "jss":
        return 100.0 - v
    raise ValueError(f"unknown measure {measure!r}; known: {', '.join(MEASURES)}")


def _cell(s1: np.ndarray, s2: np.ndarray, measures) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConstantScoresWarning)
        return {m: get_measure(REGISTERED[m])(s1, s2, n_resamples=0)["value"] for m in measures}


def measure_table(scores: pd.DataFrame, measures=MEASURES) -> pd.DataFrame:
    """Every measure for every (attribute, metric) of a long score table (``published.scores()`` layout)."""
    unknown = [m for m in measures if m not in MEASURES]
    if unknown:
        raise ValueError(f"unknown measure(s) {unknown}; known: {', '.join(MEASURES)}")
    rows = []
    for key, g in cells(scores):
        row = {**key, "n_pairs": len(g)}
        row.update(_cell(g["score_1"].to_numpy(float), g["score_2"].to_numpy(float), measures))
        rows.append(row)
    return pd.DataFrame(rows)


def with_overall(table: pd.DataFrame, measures=MEASURES) -> pd.DataFrame:
    """Append attribute ``all``: per metric, the |D^(t)|/|D|-weighted mean over attributes (Eqs. 10–11)."""
    overall = dist.weighted_over(table, types="attribute", by=("metric",), columns=measures)
    return pd.concat([table, overall.assign(attribute=ALL)], ignore_index=True)


def subsample(scores: pd.DataFrame, rate: float, seed: int) -> pd.DataFrame:
    """The rows of ``ceil(rate · N_t)`` pairs drawn without replacement per attribute t (same pairs for every metric)."""
    if not 0 < rate <= 1:
        raise ValueError(f"sampling rate must be in (0, 1], got {rate}")
    rng = np.random.default_rng(seed)
    keep = []
    for attribute, ids in scores.groupby("attribute", sort=False)["pair_id"]:
        ids = ids.drop_duplicates().to_numpy()
        keep.append(rng.choice(ids, size=math.ceil(rate * ids.size), replace=False))
    return scores[scores["pair_id"].isin(np.concatenate(keep))]


def _taus(full: pd.DataFrame, sub: pd.DataFrame, measures) -> list[dict]:
    rows = []
    merged = full.merge(sub, on=["attribute", "metric"], suffixes=("_full", "_sub"))
    for attribute, g in merged.groupby("attribute", sort=False):
        for m in measures:
            a, b = magnitude(m, g[f"{m}_full"]), magnitude(m, g[f"{m}_sub"])
            ok = np.isfinite(a) & np.isfinite(b)
            tau = stats.kendalltau(a[ok], b[ok]).statistic if ok.sum() >= 2 else np.nan
            rows.append({"attribute": attribute, "measure": m, "n_metrics": int(ok.sum()), "kendall_tau": float(tau),
                         "identical": bool(np.array_equal(np.argsort(-a[ok], kind="stable"),
                                                           np.argsort(-b[ok], kind="stable")))})
    return rows


@cached_result("robustness.ranking_stability")
def ranking_stability(scores: pd.DataFrame, *, rates=RATES, n_seeds: int = 20, seed: int = 0,
                      measures=MEASURES, progress: bool = False) -> pd.DataFrame:
    """Kendall τ between the full-data and the subsample ranking of the metrics, per rate, seed, attribute, measure.

    Seeds are ``seed, seed + 1, …``; ``identical`` says whether the subsample
    orders the metrics exactly as the full data does. The study takes minutes on
    the released scores, so its table is kept in the result cache
    (:func:`metricbias.cache.cached_result`; ``cache=False``: none).
    """
    full = with_overall(measure_table(scores, measures), measures)
    draws = [(rate, seed + i) for rate in rates for i in range(n_seeds)]
    if progress:
        from ..progress import tqdm

        draws = tqdm(draws, desc="subsamples")
    rows = []
    for rate, s in draws:
        sub = with_overall(measure_table(subsample(scores, rate, s), measures), measures)
        rows += [{"rate": rate, "seed": s, **r} for r in _taus(full, sub, measures)]
    return pd.DataFrame(rows)


def summarize(stability: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard deviation of τ, and the share of identical rankings, per attribute × rate × measure."""
    return (stability.groupby(["attribute", "rate", "measure"], sort=False)
            .agg(tau_mean=("kendall_tau", "mean"), tau_sd=("kendall_tau", "std"),
                 identical_share=("identical", "mean"), n_draws=("seed", "size"))
            .reset_index())


def overall_by_rate(summary: pd.DataFrame, measures=MEASURES) -> pd.DataFrame:
    """Mean τ of the ``all`` panel (attributes weighted by size), one row per sampling rate, one column per measure."""
    block = summary[summary["attribute"] == ALL]
    return block.pivot(index="rate", columns="measure", values="tau_mean")[list(measures)]


def mean_tau(summary: pd.DataFrame, measures=MEASURES) -> pd.DataFrame:
    """Mean τ over the sampling rates, one row per panel (attribute or ``all``), one column per measure."""
    return summary.groupby(["attribute", "measure"])["tau_mean"].mean().unstack()[list(measures)]


__all__ = ["ALL", "MEASURES", "RATES", "magnitude", "mean_tau", "measure_table", "overall_by_rate", "ranking_stability",
           "subsample", "summarize", "with_overall"]
