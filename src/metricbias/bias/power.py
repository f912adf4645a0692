"""How many pairs does an audit need? Power of the paired comparison of two metrics' size-robust bias.

Two metrics scored on the same n pairs differ in size-robust bias
(:func:`metricbias.bias.reliability.size_robust_bias`) by the mean of the per-pair
terms u_i = 100 |d_ai| / SD_a − 100 |d_bi| / SD_b (each metric's scale taken on
the whole set, so held fixed). Its standard error is σ_u / √n. A paired
two-sided t test at level α detects a gap Δ with power 1 − β when the
noncentral t with n − 1 degrees of freedom and noncentrality Δ√n / σ_u exceeds
the critical value with that probability (:func:`pairs_to_detect`). σ_u comes
from the book's data (:func:`difference_sd`).

Different from :func:`metricbias.bias.association.pairs_needed`, which sizes an
association test.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
from scipy import stats

from .testing import term_table


def power(n: int, gap: float, sd: float, *, alpha: float = 0.05) -> float:
    """Power of the paired two-sided t test on ``n`` pairs for a mean difference ``gap`` with per-pair SD ``sd``."""
    if n < 2:
        return float("nan")
    df, nc = n - 1, abs(gap) / sd * math.sqrt(n)
    crit = stats.t.ppf(1 - alpha / 2, df)
    return float(stats.nct.sf(crit, df, nc) + stats.nct.cdf(-crit, df, nc))


def pairs_to_detect(gap: float, sd: float, *, power_target: float = 0.8, alpha: float = 0.05,
                    max_pairs: int = 10_000_000) -> int:
    """Smallest number of pairs whose paired t test detects a difference ``gap`` (points of the size-robust
    bias) between two metrics with power ``power_target`` at level ``alpha``, when the per-pair difference of
    their size-robust terms has standard deviation ``sd`` (:func:`difference_sd` gives the book's)."""
    if not (gap and np.isfinite(gap)) or not (sd > 0 and np.isfinite(sd)):
        raise ValueError(f"pairs_to_detect needs a non-zero gap and a positive SD, got gap={gap}, sd={sd}")
    if not 0 < power_target < 1 or not 0 < alpha < 1:
        raise ValueError(f"power and alpha must lie in (0, 1), got {power_target} and {alpha}")
    z = stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power_target)
    lo = 2
    hi = max(3, math.ceil((z * sd / abs(gap)) ** 2) + 3)  # the normal approximation, raised until it suffices
    while power(hi, gap, sd, alpha=alpha) < power_target:
        hi *= 2
        if hi > max_pairs:
            raise ValueError(f"more than {max_pairs} pairs needed for gap {gap} with SD {sd}")
    while lo < hi:  # power grows with n: bisect for the smallest n that reaches the target
        mid = (lo + hi) // 2
        if power(mid, gap, sd, alpha=alpha) >= power_target:
            hi = mid
        else:
            lo = mid + 1
    return lo


def _terms(s1, s2) -> np.ndarray:
    """Per-pair terms whose mean is the size-robust bias: 100 |d_i| / SD of the pooled scores."""
    pooled = np.concatenate([s1, s2])
    return 100.0 * np.abs(s1 - s2) / pooled.std(ddof=1)


def difference_sd(scores: pd.DataFrame) -> pd.DataFrame:
    """SD over pairs of the difference of two metrics' size-robust terms, for every attribute and two metrics.

    Needs ``attribute, pair_id, metric, score_1, score_2``. Columns: ``attribute, metric_a, metric_b, n_pairs, sd``.
    """
    rows = []
    for attribute, block in scores.groupby("attribute", sort=False):
        terms = term_table(block, _terms)
        names = list(terms.columns)
        for a in range(len(names)):
            for b in range(a + 1, len(names)):
                u = terms[names[a]] - terms[names[b]]
                rows.append({"attribute": attribute, "metric_a": names[a], "metric_b": names[b],
                             "n_pairs": len(u), "sd": float(u.std(ddof=1))})
    return pd.DataFrame(rows, columns=["attribute", "metric_a", "metric_b", "n_pairs", "sd"])


def power_table(sds: pd.DataFrame, gaps=(1, 2, 5), *, power_target: float = 0.8, alpha: float = 0.05,
                quantiles=(0.25, 0.5, 0.75)) -> pd.DataFrame:
    """Pairs needed to detect each gap, at the given quantiles of the SDs of :func:`difference_sd`.

    One row per gap; a column per quantile (``"pairs at q25 SD"``...), and the SDs used in ``sd_q25``...
    """
    sd_at = {q: float(np.quantile(sds["sd"].dropna(), q)) for q in quantiles}
    rows = []
    for gap in gaps:
        row = {"gap (points)": gap}
        for q, sd in sd_at.items():
            row[f"pairs at q{round(q * 100)} SD"] = pairs_to_detect(gap, sd, power_target=power_target, alpha=alpha)
        rows.append(row)
    out = pd.DataFrame(rows)
    for q, sd in sd_at.items():
        out[f"sd_q{round(q * 100)}"] = sd
    return out


class GapWarning(UserWarning):
    """The dataset is too small for a measure's interval to separate the gap asked for."""


def warn_if_too_small(table: pd.DataFrame, gap: float) -> list[str]:
    """Warn (:class:`GapWarning`) for every row of a long measure table (``attribute, metric, measure, ci_low,
    ci_high, n_pairs``) whose interval is wider than ``gap``, with about how many pairs would narrow it to ``gap``
    (the width shrinks like 1/√n). Returns the messages."""
    if not gap or gap <= 0:
        raise ValueError(f"gap must be a positive number of points, got {gap}")
    messages = []
    for r in table.itertuples(index=False):
        width = r.ci_high - r.ci_low
        if np.isfinite(width) and width > gap:
            need = math.ceil(r.n_pairs * (width / gap) ** 2)
            messages.append(f"{r.metric} on {r.attribute}: the 95% interval of {r.measure} is {width:.2g} wide on "
                            f"{r.n_pairs} pairs, wider than the gap {gap:g}; about {need} pairs would separate it")
    for m in messages:
        warnings.warn(m, GapWarning, stacklevel=3)
    return messages


__all__ = ["GapWarning", "difference_sd", "pairs_to_detect", "power", "power_table", "warn_if_too_small"]
