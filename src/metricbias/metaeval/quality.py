"""How good a metric is, in the measures the book reports for every metric: correlation with human judgements.

* :data:`QUALITY` and :func:`quality`: WMT19 kk-en relative rankings (DARR Kendall-like tau), REALSumm
  (system-level Spearman with LitePyramid recall), Flickr8k expert judgements (Kendall tau, best score over the
  five references) and STS-B dev (Pearson with the ratings) of one metric;
* :func:`configuration_quality`: the DARR tau and the STS-B dev Pearson of every configuration of a suite, one
  row each, on seeded samples whose sizes the caller (a profile) gives; kept in the result cache;
* :func:`paired_quality`: each configuration against a reference metric (BLEU, the floor) on the same items, the
  difference of each measure with its paired 95% bootstrap interval and the floor word it gives ("above", "below",
  "not distinguishable").

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


#: :func:`metricbias.bias.claims.claim_verdict` on "configuration minus reference" -> the floor word
FLOOR_WORDS = {"holds": "above", "reverses": "below", "not comparable": "not measured"}
FLOOR_UNDECIDED = "not distinguishable"
PAIRED_COLUMNS = ["metric", "measure", "value", "reference value", "difference", "ci_low", "ci_high", "items",
                  "floor"]


def _item_values(metric, name: str, data, cache) -> tuple[np.ndarray, np.ndarray | None]:
    """What a measure averages or correlates per item, oriented so that higher is better: on DARR, +1 for a pair the
    metric ranks as the humans do and −1 otherwise (ties discordant, as :func:`~metricbias.metaeval.correlation.
    darr_tau`), so that τ is their mean; on STS-B dev, the scores (and the ratings as the second array)."""
    from ..scoring import score_texts
    from .analysis import _scores

    sign = -1.0 if getattr(metric, "direction", "higher") == "lower" else 1.0
    if name == "stsb-dev":
        s = sign * np.asarray(score_texts(metric, *_stsb_texts(data), cache=cache, what=name), dtype=float)
        return s, data["score"].to_numpy(dtype=float)
    better, worse = _scores(metric, data, cache)
    return np.where(sign * np.asarray(better, float) > sign * np.asarray(worse, float), 1.0, -1.0), None


def _pearson(x, y, axis=-1):
    x = x - x.mean(axis=axis, keepdims=True)
    y = y - y.mean(axis=axis, keepdims=True)
    return (x * y).sum(axis=axis) / np.sqrt((x**2).sum(axis=axis) * (y**2).sum(axis=axis))


def paired_difference(values, reference, human=None, *, n_resamples: int = 9999, seed: int = 0,
                      confidence: float = 0.95) -> dict:
    """A measure of one metric minus the reference's on the same items, with its BCa bootstrap interval over the
    items (:func:`scipy.stats.bootstrap`, ``paired=True``: each resample draws the same items for both): without
    ``human``, the difference of the means of per-item values (DARR τ); with it, the difference of the Pearson r of
    each with ``human`` (STS-B). Returns ``value``, ``reference value``, ``difference``, ``ci_low``, ``ci_high``,
    ``items`` and ``floor`` ("above", "below" or "not distinguishable": where the interval lies against 0,
    :func:`metricbias.bias.claims.claim_verdict`)."""
    from scipy import stats

    from ..bias.claims import claim_verdict

    a, b = np.asarray(values, dtype=float), np.asarray(reference, dtype=float)
    if a.shape != b.shape or a.ndim != 1 or a.size < 3:
        raise ValueError(f"paired_difference: two 1-d arrays of the same items needed (3 or more), got {a.shape} "
                         f"and {b.shape}")
    if human is None:
        data, statistic = (a, b), lambda x, y, axis=-1: x.mean(axis=axis) - y.mean(axis=axis)
        value, ref = float(a.mean()), float(b.mean())
    else:
        h = np.asarray(human, dtype=float)
        data, statistic = (a, b, h), lambda x, y, z, axis=-1: _pearson(x, z, axis) - _pearson(y, z, axis)
        value, ref = float(_pearson(a, h)), float(_pearson(b, h))
    low = high = float("nan")
    if n_resamples and np.ptp(a - b) > 0:
        with np.errstate(invalid="ignore", divide="ignore"):
            res = stats.bootstrap(data, statistic, paired=True, vectorized=True, n_resamples=n_resamples,
                                  confidence_level=confidence, method="BCa", batch=200,
                                  rng=np.random.default_rng(seed))
        low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
    elif n_resamples:  # the same value on every item: the difference is that constant
        low = high = value - ref
    word = claim_verdict(low, high)
    return {"value": value, "reference value": ref, "difference": value - ref, "ci_low": low, "ci_high": high,
            "items": int(a.size), "floor": FLOOR_WORDS.get(word, FLOOR_UNDECIDED)}


@cached_result("metaeval.paired_quality", ignore=("device",))
def _paired_quality(configurations: pd.DataFrame, darr_pairs: int, stsb_pairs: int, seed: int, device: str,
                    n_resamples: int, measures: tuple) -> pd.DataFrame:
    from .. import metrics
    from ..cache import ScoreCache

    sizes = {name: size for name, size in {"wmt19-kk-en": darr_pairs, "stsb-dev": stsb_pairs}.items()
             if CONFIGURATION_MEASURES[name] in measures}
    sets = {name: load_quality_sets((name,), sample_size=size, seed=seed)[name] for name, size in sizes.items()}
    store = ScoreCache.default()
    made = []
    for r in configurations.to_dict("records"):
        options = json.loads(r["options"])
        if "device" in metrics.metric_class(r["name"]).defaults:
            options.setdefault("device", device)
        made.append((r["metric"], metrics.get(r["name"], **options)))
    reference = {name: _item_values(made[0][1], name, data, store) for name, data in sets.items()}
    rows = []
    for label, metric in made[1:]:
        for name in sets:
            column = CONFIGURATION_MEASURES[name]
            values, human = _item_values(metric, name, sets[name], store)
            rows.append({"metric": label, "measure": column, **paired_difference(
                values, reference[name][0], human, n_resamples=n_resamples, seed=seed)})
    return pd.DataFrame(rows, columns=PAIRED_COLUMNS)


def paired_quality(specs, reference, *, darr_pairs: int = 0, stsb_pairs: int = 0, seed: int = 0,
                   device: str = "auto", n_resamples: int = 9999, measures=("darr_tau", "stsb_r"),
                   cache=True) -> pd.DataFrame:
    """Every configuration of ``specs`` (:class:`~metricbias.metrics.Spec` list) against ``reference`` (a Spec: BLEU,
    the floor) on the same items of the sets :func:`configuration_quality` measures: one row per (configuration,
    measure) with :data:`PAIRED_COLUMNS` (:func:`paired_difference`; ``measure``: ``darr_tau`` or ``stsb_r``). The
    reference's own rows are left out; ``measures``: the measures compared (both by default). Kept in the result
    cache; ``cache=False``: none."""
    from .. import metrics

    rows = [{"metric": label, "name": name, "options": json.dumps(options, sort_keys=True, default=str),
             "signature": metrics.get(name, **options).signature}
            for label, name, options in [tuple(reference), *[s for s in specs if tuple(s) != tuple(reference)]]]
    if len(rows) < 2:
        return pd.DataFrame(columns=PAIRED_COLUMNS)
    measures = tuple(m for m in CONFIGURATION_MEASURES.values() if m in measures)
    return _paired_quality(pd.DataFrame(rows), darr_pairs, stsb_pairs, seed, device, n_resamples, measures,
                           cache=cache)


__all__ = ["CONFIGURATION_MEASURES", "FLOOR_UNDECIDED", "FLOOR_WORDS", "PAIRED_COLUMNS", "paired_difference",
           "paired_quality", "QUALITY", "QUALITY_COLUMNS", "configuration_quality", "full_sizes",
           "load_quality_sets", "quality", "scored_texts"]
