"""A metric's quality: one headline correlation with human judgements per set, as the book reports every metric's.

:data:`QUALITY` names the sets and statistics: WMT19 kk-en relative rankings (DARR Kendall-like tau),
REALSumm (system-level Spearman with LitePyramid recall), Flickr8k expert judgements (Kendall tau, best
score over the five references) and STS-B dev (Pearson with the ratings). Chapter 6 measures the
debiasing adapters with it (:mod:`metricbias.mitigation.evaluation`), and :mod:`metricbias.recipes`
the trained paraphrasers.
"""

from __future__ import annotations

import pandas as pd

#: quality measure -> (dataset, what is reported)
QUALITY = {
    "wmt19-kk-en": "DARR Kendall-like tau",
    "realsumm": "system-level Spearman with LitePyramid recall",
    "flickr8k": "Kendall tau with the experts' mean (max over references)",
    "stsb-dev": "Pearson with the ratings",
}


def load_quality_sets(measures=tuple(QUALITY), sample_size: int = 0, seed: int = 0) -> dict:
    """Measure name -> data set (a meta-evaluation set, or the STS-B dev frame), sampled if asked."""
    from ..datasets import meta_eval

    out = {}
    for m in measures:
        if m not in QUALITY:
            raise ValueError(f"unknown quality measure {m!r}; known: {', '.join(QUALITY)}")
        if m == "stsb-dev":
            from ..datasets import stsb

            dev = stsb.load("dev")
            out[m] = dev.sample(n=min(sample_size, len(dev)), random_state=seed) if sample_size else dev
        else:
            data = meta_eval.load(m)
            out[m] = data.sample(sample_size, seed) if sample_size else data
    return out


def quality(metric, sets: dict, *, cache=None) -> pd.DataFrame:
    """One row per measure: ``dataset, statistic, value, n`` of ``metric``."""
    from scipy import stats

    from .analysis import correlations

    rows = []
    for name, data in sets.items():
        if name == "stsb-dev":
            s = metric.score(list(data["sentence2"]), list(data["sentence1"]), cache=cache)
            rows.append({"dataset": name, "statistic": "pearson",
                         "value": float(stats.pearsonr(s, data["score"].to_numpy()).statistic), "n": len(data)})
            continue
        corr = correlations(data, (metric.name, metric), cache=cache)
        if name == "wmt19-kk-en":
            row = corr[corr["statistic"] == "darr_tau"]
        elif name == "realsumm":
            row = corr[(corr["level"] == "system") & (corr["statistic"] == "spearman")]
        else:  # flickr8k
            row = corr[(corr["level"] == "example") & (corr["statistic"] == "kendall")
                       & (corr["aggregation"] == "max") & (corr["subset"] == "all")]
        if len(row) != 1:
            raise RuntimeError(f"expected one {QUALITY[name]} row for {name}, found {len(row)}")
        r = row.iloc[0]
        rows.append({"dataset": name, "statistic": r["statistic"], "value": float(r["value"]), "n": int(r["n"])})
    return pd.DataFrame(rows)


__all__ = ["QUALITY", "load_quality_sets", "quality"]
