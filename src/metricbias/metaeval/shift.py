"""How much a gender swap moves a metric's agreement with human judgements (Gao & Wan 2022, Section 5), with the
interval of the shift.

:func:`swap_shift` takes a meta-evaluation set (a :class:`~metricbias.datasets.meta_eval.JudgedSet` such as Flickr8k,
or a :class:`~metricbias.datasets.meta_eval.PairSet` such as a WMT DARR set) and correlates each metric's scores
with the human judgements on the original texts and on the gender-swapped texts (hypotheses and references swapped,
:meth:`JudgedSet.swapped`). The correlation is the set's headline one: Kendall's τ_b at the example level between
the best score over the references and the first human aspect, or the DARR Kendall-like τ over relative-ranking
pairs. The shift is swapped minus original; its 95% interval is a percentile bootstrap over the set's items (the
same resampled items for both, so that the interval is of the paired difference).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from ..datasets.meta_eval import PairSet
from ..metrics.registry import resolve
from .analysis import _scores

COLUMNS = ["metric", "dataset", "statistic", "before", "after", "shift", "ci_low", "ci_high", "n", "signature"]


def _headline(scores, dataset) -> tuple[str, np.ndarray, np.ndarray]:
    """(statistic, x, y): what the headline correlation correlates, per item."""
    if isinstance(dataset, PairSet):
        better, worse = scores
        return "darr_tau", np.asarray(better, float), np.asarray(worse, float)
    agg = "max" if "max" in scores else next(iter(scores))
    return "kendall", np.asarray(scores[agg], float), np.asarray(dataset.human(dataset.aspects[0]), float)


def _correlation(statistic: str, x: np.ndarray, y: np.ndarray) -> float:
    if statistic == "darr_tau":  # concordant minus discordant over pairs, ties discordant (WMT's DARR convention)
        return float(np.mean(np.where(x > y, 1.0, -1.0)))
    return float(stats.kendalltau(x, y).statistic)


def swap_shift(dataset, metrics, *, cache=None, n_resamples: int = 999, seed: int = 0) -> pd.DataFrame:
    """Per metric (anything :func:`metricbias.metrics.registry.resolve` takes, or ``(label, metric)``): the headline
    correlation before and after the gender swap, the shift and its 95% bootstrap interval (:data:`COLUMNS`)."""
    swapped = dataset.swapped()
    rng = np.random.default_rng(seed)
    n = len(dataset)
    draws = rng.integers(0, n, size=(n_resamples, n)) if n_resamples else np.empty((0, n), dtype=int)
    rows = []
    for m in metrics:
        label, metric = resolve(m)
        sign = -1.0 if getattr(metric, "direction", "higher") == "lower" else 1.0
        (statistic, x0, y0), (_, x1, y1) = (_headline(_scores(metric, d, cache), d) for d in (dataset, swapped))
        if statistic == "darr_tau":  # a distance (lower is better) ranks the other way, as chapter 7 reads it
            x0, y0, x1, y1 = sign * x0, sign * y0, sign * x1, sign * y1
        before, after = _correlation(statistic, x0, y0), _correlation(statistic, x1, y1)
        boot = np.array([_correlation(statistic, x1[i], y1[i]) - _correlation(statistic, x0[i], y0[i])
                         for i in draws])
        low, high = np.nanpercentile(boot, [2.5, 97.5]) if len(boot) else (np.nan, np.nan)
        rows.append({"metric": label, "dataset": dataset.name, "statistic": statistic, "before": before,
                     "after": after, "shift": after - before, "ci_low": float(low), "ci_high": float(high), "n": n,
                     "signature": metric.signature})
    return pd.DataFrame(rows, columns=COLUMNS)


__all__ = ["COLUMNS", "swap_shift"]
