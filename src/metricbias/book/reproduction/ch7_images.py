"""Chapter 7's correlation shift over its independent units: Flickr8k images resampled whole, every metric's
Spearman with the expert judges recomputed on each resample (weights count an image's repeats)."""

from __future__ import annotations

import numpy as np

from .ch7_gender_swap import SHIFT_UNDECIDED, SHIFT_UNTESTED, SHIFT_VERDICTS, metric_group


def _weighted_ranks(x: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Mid-ranks of ``x`` (n,) in each row of ``weights`` (B, n): the ranks the values would get if value ``i``
    appeared ``weights[b, i]`` times (ties share the mean rank), as in a resample that draws it that often."""
    order = np.argsort(x, kind="stable")
    xs = x[order]
    starts = np.flatnonzero(np.r_[True, xs[1:] != xs[:-1]])
    group = np.repeat(np.arange(starts.size), np.diff(np.r_[starts, xs.size]))
    total = np.add.reduceat(weights[:, order], starts, axis=1)
    mid = np.cumsum(total, axis=1) - total + (total + 1) / 2
    ranks = np.empty_like(weights)
    ranks[:, order] = mid[:, group]
    return ranks


def _weighted_pearson(a: np.ndarray, b: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Per row, the Pearson correlation of ``a`` and ``b`` (B, n) with each value counted ``weights`` times."""
    total = weights.sum(axis=1, keepdims=True)
    a = a - (weights * a).sum(axis=1, keepdims=True) / total
    b = b - (weights * b).sum(axis=1, keepdims=True) / total
    with np.errstate(invalid="ignore", divide="ignore"):
        return (weights * a * b).sum(axis=1) / np.sqrt((weights * a * a).sum(axis=1) * (weights * b * b).sum(axis=1))


def resampled_spearman(scores: dict, human: np.ndarray, weights: np.ndarray) -> dict:
    """Spearman of each array of ``scores`` (name -> (n,)) with ``human`` (n,) in each resample whose counts per
    observation are the rows of ``weights`` (B, n): name -> (B,) correlations (one row of ones gives scipy's
    :func:`~scipy.stats.spearmanr`)."""
    human = np.asarray(human, dtype=float)
    whole = weights * ~np.isnan(human)
    human_ranks = _weighted_ranks(np.nan_to_num(human, nan=-np.inf), whole)
    out = {}
    for name, s in scores.items():  # an observation without a score or a judgement counts 0 times, as in scipy's
        s = np.asarray(s, dtype=float)
        w = whole * ~np.isnan(s) if np.isnan(s).any() else whole
        h = human_ranks if w is whole else _weighted_ranks(np.nan_to_num(human, nan=-np.inf), w)
        out[name] = _weighted_pearson(_weighted_ranks(np.nan_to_num(s, nan=-np.inf), w), h, w)
    return out


def shift_by_image(dataset, scorers: list, *, cache=None, n_resamples: int = 9999, seed: int = 0,
                   chunk: int = 200) -> dict:
    """Gao & Wan's shift claim on an example-level set (Flickr8k) with the images as the unit: resample whole images
    (:func:`metricbias.bias.clusters.cluster_draws`), recompute each configuration's Spearman with the stacked judges
    before and after swapping, |swap − origin| per configuration, the mean over a metric's aggregations, and the
    mean over the model-based minus the mean over the n-gram metrics. ``difference`` (on the data as drawn),
    ``ci_low``, ``ci_high`` (expanded percentile interval, :func:`metricbias.bias.clusters.expanded_levels`),
    ``mean_origin`` (the mean |Spearman| on the original data, each metric once) and ``share_of_origin`` (the
    |difference| as a share of it),
    ``images``, ``n_model``, ``n_ngram``, ``resamples``, ``verdict`` ("model-based shift more", "... less",
    "not distinguishable", or "not tested" with fewer than two metrics in a group) and ``claim``: the verdict on the
    claim that model-based metrics shift more (:func:`metricbias.bias.claims.claim_verdict`)."""
    from ...bias.claims import claim_verdict
    from ...bias.clusters import cluster_draws, expanded_levels
    from ...metaeval.scoring import hypothesis_scores
    from ...metrics.registry import resolve

    aspect = dataset.aspects[0]
    judges = dataset.frame[dataset.judges[aspect]].to_numpy(dtype=float)
    k = judges.shape[1]
    human = judges.T.reshape(-1)
    images = np.tile(dataset.frame["item_id"].to_numpy(), k)
    swapped = dataset.swapped()
    scores, groups = {}, {}
    for m in scorers:
        label, metric = resolve(m)
        groups[label] = metric_group(metric.name)
        for when, data in (("origin", dataset), ("swap", swapped)):
            for agg, s in hypothesis_scores(metric, data, cache).items():
                scores[(label, agg, when)] = np.tile(np.asarray(s, dtype=float), k)
    counts, codes = cluster_draws(images, n_resamples=n_resamples, seed=seed)
    n_images = counts.shape[1]
    n_model = sum(g == "model-based" for g in groups.values())
    n_ngram = len(groups) - n_model
    out = {"images": n_images, "n_model": n_model, "n_ngram": n_ngram, "resamples": n_resamples}

    def per_metric(rho, value):  # each metric once: the mean over its aggregations
        found = {}
        for label, agg, _ in rho:
            found.setdefault(label, {})[agg] = value(rho[(label, agg, "swap")], rho[(label, agg, "origin")])
        return {label: np.nanmean(np.stack(list(a.values())), axis=0) for label, a in found.items()}

    def difference(weights):
        shift = per_metric(resampled_spearman(scores, human, weights), lambda after, before: np.abs(after - before))
        model = np.stack([v for lb, v in shift.items() if groups[lb] == "model-based"])
        ngram = np.stack([v for lb, v in shift.items() if groups[lb] == "n-gram"])
        return model.mean(axis=0) - ngram.mean(axis=0)

    if not groups:
        return {**out, **dict.fromkeys(("difference", "mean_origin", "share_of_origin", "ci_low", "ci_high"), np.nan),
                "verdict": SHIFT_UNTESTED, "claim": "not comparable"}
    as_drawn = np.ones((1, human.size))
    level = per_metric(resampled_spearman(scores, human, as_drawn), lambda after, before: np.abs(before))
    out["mean_origin"] = float(np.mean([v[0] for v in level.values()]))
    out["difference"] = float(difference(as_drawn)[0]) if min(n_model, n_ngram) else np.nan
    out["share_of_origin"] = abs(out["difference"]) / out["mean_origin"]
    if min(n_model, n_ngram) < 2 or n_images < 2 or n_resamples == 0:
        return {**out, "ci_low": np.nan, "ci_high": np.nan, "verdict": SHIFT_UNTESTED, "claim": "not comparable"}
    draws = np.concatenate([difference(counts[i:i + chunk][:, codes]) for i in range(0, n_resamples, chunk)])
    low, high = np.nanquantile(draws, expanded_levels(n_images))
    verdict = SHIFT_VERDICTS["higher"] if low > 0 else SHIFT_VERDICTS["lower"] if high < 0 else SHIFT_UNDECIDED
    return {**out, "ci_low": float(low), "ci_high": float(high), "verdict": verdict,
            "claim": claim_verdict(float(low), float(high))}


__all__ = ["resampled_spearman", "shift_by_image"]
