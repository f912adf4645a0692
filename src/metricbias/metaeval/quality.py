"""How good a metric is, in the measures the book reports for every metric: correlation with human judgements.

* :data:`QUALITY` and :func:`quality`: WMT19 kk-en relative rankings (DARR Kendall-like tau), REALSumm
  (system-level Spearman with LitePyramid recall), Flickr8k expert judgements (Kendall tau, best score over the
  five references) and STS-B dev (Pearson with the ratings) of one metric;
* :func:`configuration_quality`: the DARR tau and the STS-B dev Pearson of every configuration of a suite, one
  row each, on seeded samples whose sizes the caller (a profile) gives; kept in the result cache.

Every measure is oriented so that higher is better: a metric whose better text scores lower (TER, WMD) has
its scores negated first, so that a good distance has a positive correlation.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from ..cache import cached_result

#: quality measure -> what is reported
QUALITY = {
    "wmt19-kk-en": "DARR Kendall-like tau",
    "realsumm": "system-level Spearman with LitePyramid recall",
    "flickr8k": "Kendall tau with the experts' mean (max over references)",
    "stsb-dev": "Pearson with the ratings",
}
#: the two measures :func:`configuration_quality` reports, as (set, column of its table)
CONFIGURATION_MEASURES = {"wmt19-kk-en": "darr_tau", "stsb-dev": "stsb_r"}
QUALITY_COLUMNS = ["metric", "darr_tau", "darr_pairs", "stsb_r", "stsb_pairs", "signature"]


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


def _stsb_texts(data: pd.DataFrame) -> tuple[list[str], list[str]]:
    return list(data["sentence2"]), list(data["sentence1"])


def scored_texts(measure: str, sample_size: int = 0, seed: int = 0) -> tuple[list[str], list[str]]:
    """The (candidate, reference) pairs of the one metric call that measures quality on ``measure`` (a key of
    :data:`QUALITY`), drawn as :func:`load_quality_sets` draws them: what a score pack of the set holds."""
    from .scoring import scored_texts as meta_eval_texts

    data = load_quality_sets((measure,), sample_size=sample_size, seed=seed)[measure]
    return _stsb_texts(data) if measure == "stsb-dev" else meta_eval_texts(data)


def quality(metric, sets: dict, *, cache=None) -> pd.DataFrame:
    """One row per measure: ``dataset, statistic, value, n`` of ``metric`` (higher is better for every measure)."""
    from scipy import stats

    from ..scoring import score_texts
    from .analysis import correlations

    rows = []
    for name, data in sets.items():
        if name == "stsb-dev":
            s = np.asarray(score_texts(metric, *_stsb_texts(data), cache=cache, what=name), dtype=float)
            if getattr(metric, "direction", "higher") == "lower":  # a distance: the more similar pair scores lower
                s = -s
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


def full_sizes() -> dict:
    """Items in the whole of each set :func:`configuration_quality` samples: ``darr_pairs``, ``stsb_pairs``."""
    sets = load_quality_sets(tuple(CONFIGURATION_MEASURES))
    return {"darr_pairs": len(sets["wmt19-kk-en"].frame), "stsb_pairs": len(sets["stsb-dev"])}


@cached_result("metaeval.configuration_quality", ignore=("device",))
def _configuration_quality(configurations: pd.DataFrame, darr_pairs: int, stsb_pairs: int, seed: int,
                           device: str) -> pd.DataFrame:
    from .. import metrics
    from ..cache import ScoreCache

    sizes = {"wmt19-kk-en": darr_pairs, "stsb-dev": stsb_pairs}
    # the same seeded draws as chapter 7 (DARR pairs) and the BERTScore layer check (STS-B dev pairs)
    sets = {name: load_quality_sets((name,), sample_size=size, seed=seed)[name] for name, size in sizes.items()}
    store = ScoreCache.default()  # scores shared with every other chapter that scores the same pairs
    rows = []
    for r in configurations.to_dict("records"):
        options = json.loads(r["options"])
        if "device" in metrics.metric_class(r["name"]).defaults:
            options.setdefault("device", device)
        metric = metrics.get(r["name"], **options)
        q = quality(metric, sets, cache=store).set_index("dataset")
        rows.append({"metric": r["metric"], "darr_tau": q.loc["wmt19-kk-en", "value"],
                     "darr_pairs": int(q.loc["wmt19-kk-en", "n"]), "stsb_r": q.loc["stsb-dev", "value"],
                     "stsb_pairs": int(q.loc["stsb-dev", "n"]), "signature": metric.signature})
    return pd.DataFrame(rows, columns=QUALITY_COLUMNS)


def configuration_quality(specs, *, darr_pairs: int = 0, stsb_pairs: int = 0, seed: int = 0, device: str = "auto",
                          cache=True) -> pd.DataFrame:
    """The quality of every configuration of ``specs`` (a profile's :class:`~metricbias.metrics.Spec` list): one
    row per configuration with ``metric`` (its label), the DARR Kendall-like tau on WMT19 kk-en (``darr_tau``, over
    ``darr_pairs`` pairs), the Pearson r with the STS-B dev ratings (``stsb_r``, over ``stsb_pairs`` pairs) and its
    ``signature``. ``darr_pairs``/``stsb_pairs``: seeded samples of that many items (0: all 9,728 DARR pairs, all
    1,500 STS-B dev pairs). Kept in the result cache, keyed by the configurations' signatures (a retrained model
    is measured again); ``cache=False``: none."""
    from .. import metrics

    rows = []
    for label, name, options in specs:
        rows.append({"metric": label, "name": name, "options": json.dumps(options, sort_keys=True, default=str),
                     "signature": metrics.get(name, **options).signature})
    if not rows:
        raise ValueError("configuration_quality: no configuration given")
    return _configuration_quality(pd.DataFrame(rows), darr_pairs, stsb_pairs, seed, device, cache=cache)


__all__ = ["CONFIGURATION_MEASURES", "QUALITY", "QUALITY_COLUMNS", "configuration_quality", "full_sizes",
           "load_quality_sets", "quality", "scored_texts"]
