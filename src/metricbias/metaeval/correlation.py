"""Correlation between metric scores and human judgements (scipy.stats underneath).

* example level: Spearman's rho and Kendall's tau-b over hypotheses, with
  scipy's two-sided p-values; optionally with every judge as a separate
  observation (Elliott & Keller 2014, the protocol Gao & Wan follow on Flickr8k);
* system level: Spearman over the per-system means;
* WMT DARR: the Kendall-like tau of WMT19, (concordant - discordant) /
  (concordant + discordant), where a tie in the metric counts as discordant;
  its p-value is a two-sided sign (binomial) test of concordant against
  discordant pairs;
* reference aggregation for multi-reference sets (max, mean);
* the top-k systems curve (Gao & Wan, Figure 1).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd


class CorrelationError(ValueError):
    """Inputs for which a correlation is undefined (length mismatch, too few points, constant scores)."""


@dataclass(frozen=True)
class Correlation:
    statistic: str
    value: float
    p_value: float
    n: int


def _check(scores, human, what: str = "scores") -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(scores, dtype=float)
    y = np.asarray(human, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise CorrelationError(f"{what}: {x.shape} metric scores but {y.shape} human scores")
    keep = ~(np.isnan(x) | np.isnan(y))
    x, y = x[keep], y[keep]
    if len(x) < 3:
        raise CorrelationError(f"{what}: {len(x)} complete observations; a correlation needs at least 3")
    if np.all(x == x[0]):
        raise CorrelationError(f"{what}: the metric gives every observation the same score ({x[0]:g}); "
                               "the correlation is undefined")
    if np.all(y == y[0]):
        raise CorrelationError(f"{what}: every human score is {y[0]:g}; the correlation is undefined")
    return x, y


def spearman(scores, human, what: str = "scores") -> Correlation:
    from scipy import stats

    x, y = _check(scores, human, what)
    res = stats.spearmanr(x, y)
    return Correlation("spearman", float(res.statistic), float(res.pvalue), len(x))


def kendall(scores, human, what: str = "scores") -> Correlation:
    from scipy import stats

    x, y = _check(scores, human, what)
    res = stats.kendalltau(x, y)  # tau-b: ties in either variable are corrected for
    return Correlation("kendall", float(res.statistic), float(res.pvalue), len(x))


def example_level(scores, human, judges=None, what: str = "scores") -> list[Correlation]:
    """Spearman and Kendall over hypotheses.

    ``judges`` (an n x k array of the individual judges' scores) stacks the data
    as Elliott & Keller (2014) do: each (hypothesis, judge) pair is one
    observation, so every metric score appears k times.
    """
    if judges is not None:
        judges = np.asarray(judges, dtype=float)
        scores = np.asarray(scores, dtype=float)
        if judges.ndim != 2 or judges.shape[0] != len(scores):
            raise CorrelationError(f"{what}: judges must be an array of shape ({len(scores)}, k), got {judges.shape}")
        human = judges.T.reshape(-1)
        scores = np.tile(scores, judges.shape[1])
    return [spearman(scores, human, what), kendall(scores, human, what)]


def system_means(systems, scores, human) -> pd.DataFrame:
    """Per-system mean metric score and mean human score (index: system)."""
    frame = pd.DataFrame({"system": list(systems), "metric": np.asarray(scores, dtype=float),
                          "human": np.asarray(human, dtype=float)})
    return frame.groupby("system", sort=True)[["metric", "human"]].mean()


def system_level(systems, scores, human, what: str = "scores") -> Correlation:
    """Spearman between systems' mean metric scores and mean human scores."""
    means = system_means(systems, scores, human)
    return spearman(means["metric"], means["human"], f"{what} (system level)")


def darr_tau(better_scores, worse_scores, what: str = "scores") -> dict:
    """WMT19 DARR Kendall-like tau with a two-sided sign-test p-value; metric ties count as discordant.

    Scores must be higher-is-better (negate a distance such as TER first).
    """
    from scipy import stats

    b = np.asarray(better_scores, dtype=float)
    w = np.asarray(worse_scores, dtype=float)
    if b.shape != w.shape or b.ndim != 1 or len(b) == 0:
        raise CorrelationError(f"{what}: {b.shape} better but {w.shape} worse scores")
    concordant = int(np.sum(b > w))
    discordant = int(len(b) - concordant)
    tau = (concordant - discordant) / len(b)
    p = float(stats.binomtest(concordant, len(b), 0.5).pvalue)
    return {"statistic": "darr_tau", "value": float(tau), "p_value": p, "n": len(b),
            "concordant": concordant, "discordant": discordant, "ties": int(np.sum(b == w))}


AGGREGATIONS = ("max", "mean")


def aggregate(per_reference: list[np.ndarray], how: str) -> np.ndarray:
    """Combine each hypothesis' scores against its references: ``max`` or ``mean``."""
    if how not in AGGREGATIONS:
        raise ValueError(f"aggregation {how!r} is not one of {list(AGGREGATIONS)}")
    fn = np.max if how == "max" else np.mean
    return np.array([fn(np.asarray(s, dtype=float)) for s in per_reference], dtype=float)


def top_k_curve(systems, scores, human, ks=None) -> pd.DataFrame:
    """System-level Spearman on the top-k systems by human score, for each k (Gao & Wan, Figure 1).

    Columns: ``k``, ``spearman``, ``p_value``. ``ks`` defaults to 3..number of systems.
    """
    means = system_means(systems, scores, human).sort_values("human", ascending=False, kind="mergesort")
    ks = list(range(3, len(means) + 1)) if ks is None else list(ks)
    rows = []
    for k in ks:
        if k < 3 or k > len(means):
            raise CorrelationError(f"top-k curve: k={k} outside 3..{len(means)}")
        top = means.iloc[:k]
        try:
            c = spearman(top["metric"], top["human"], f"top {k} systems")
            rows.append({"k": k, "spearman": c.value, "p_value": c.p_value})
        except CorrelationError:  # a metric constant on the top k systems: undefined at this k
            rows.append({"k": k, "spearman": np.nan, "p_value": np.nan})
    return pd.DataFrame(rows)
