"""Chapter 6: the training-free alternative, the metric made blind to the attribute
(:func:`metricbias.mitigation.invariant.invariant`), beside the trained adapters: its before/after table, its
cost in forward passes and its bias intervals (the numbers of its comparison with the adapter:
:func:`.ch6_paper.invariant_findings`).
"""

from __future__ import annotations

import pandas as pd

from ... import datasets
from ...metaeval.quality import QUALITY, load_quality_sets
from ...mitigation.evaluation import COMPARE_COLUMNS, bias_pairs, compare_metrics, metric_for
from ...scoring import score_pairs
from .ch6_adapters import criteria, criteria_summary, evaluated_attributes, paired_bias_difference

#: the ``mitigation`` column of :func:`invariant_comparison`
ADAPTER, WRAPPER = "adapter (trained)", "invariant wrapper (no training)"


def invariant_results(adapters: dict, labels=None, *, attribute: str = "gender", attributes=None,
                      sample_size: int = 0, quality_sample_size: int = 0, seed: int = 0, cache=None,
                      device: str = "auto") -> pd.DataFrame:
    """:func:`.ch6_adapters.compare_all`'s table for the invariant wrapper (:func:`metricbias.mitigation.invariant.invariant`)
    of the metrics the shipped ``adapters`` were trained for, in place of the adapters: ``before`` is the plain
    metric, ``after`` the wrapper blind to ``attribute``, on the same samples (``labels``: which adapters' metrics;
    default all). The ``metric`` column reads "<label> (<attribute>-invariant)"."""
    from ...mitigation.invariant import invariant

    pairs = datasets.sample(bias_pairs(evaluated_attributes(attributes)), sample_size, seed)
    sets = load_quality_sets(tuple(QUALITY), quality_sample_size, seed)
    frames = []
    for label in (labels or list(adapters)):
        meta = adapters[label].meta
        plain = metric_for(None, meta=meta, device=device)
        table = compare_metrics(plain, invariant(plain, attribute), pairs, sets, seed=seed, cache=cache)
        frames.append(table.assign(metric=f"{label} ({attribute}-invariant)", backbone=meta["metric_backbone"]))
    out = pd.concat(frames, ignore_index=True)
    return out[["metric", "backbone", *COMPARE_COLUMNS]]


def _scored_pairs(sets: dict) -> dict[str, tuple[list[str], list[str]]]:
    """Set name -> the (candidates, references) a metric scores on it (every reference of a multi-reference item)."""
    out = {}
    for name, data in sets.items():
        if name == "stsb-dev":
            out[name] = (list(data["sentence2"]), list(data["sentence1"]))
            continue
        f = data.frame
        if "better" in f:  # DARR: both translations against the reference
            out[name] = (list(f["better"]) + list(f["worse"]), list(f["reference"]) * 2)
        else:
            out[name] = ([h for h, refs in zip(f["hypothesis"], f["references"]) for _ in refs],
                         [r for refs in f["references"] for r in refs])
    return out


def invariant_cost(*, attribute: str = "gender", attributes=None, sample_size: int = 0, quality_sample_size: int = 0,
                   seed: int = 0) -> pd.DataFrame:
    """Forward passes of the invariant wrapper relative to the plain metric, per evaluation set (the samples of
    :func:`invariant_results`): ``texts`` (distinct texts an encoder runs, as BERTScore does) and ``pairs``
    (distinct candidate-reference pairs, as the regression metric reads them), and ``all`` sets pooled."""
    from ...mitigation.invariant import passes, pool, ratio

    pairs = datasets.sample(bias_pairs(evaluated_attributes(attributes)), sample_size, seed)
    scored = {"bias pairs": (list(pairs["candidate_1"]) + list(pairs["candidate_2"]),
                             list(pairs["reference_1"]) + list(pairs["reference_2"]))}
    scored.update(_scored_pairs(load_quality_sets(tuple(QUALITY), quality_sample_size, seed)))
    runs = {name: passes(c, r, attribute) for name, (c, r) in scored.items()}
    sizes = {name: len(c) for name, (c, _) in scored.items()}
    runs["all"] = pool(runs.values())  # each set's variants are planned once
    sizes["all"] = sum(sizes.values())
    return pd.DataFrame([{"set": name, "scored pairs": sizes[name], **ratio(run)}
                         for name, run in runs.items()])


def bias_intervals(results: pd.DataFrame, adapters: dict, *, name: str = "gender", attribute: str = "gender",
                   sample_size: int = 0, seed: int = 0, n_resamples: int = 9999, cache=None,
                   device: str = "auto") -> pd.DataFrame:
    """Eq. 2 bias with 95% bootstrap intervals on the ``name`` sets, for each invariant wrapper of an
    :func:`invariant_results` table and its plain metric (scores from the cache those results filled)."""
    from ...bias import measures
    from ...mitigation.invariant import invariant

    pairs = datasets.sample(bias_pairs([name]), sample_size, seed)
    frames = []
    for label in adapters:
        if f"{label} ({attribute}-invariant)" not in set(results["metric"]):
            continue
        plain = metric_for(None, meta=adapters[label].meta, device=device)
        for variant, metric in (("plain", plain), (f"{attribute}-invariant", invariant(plain, attribute))):
            table = measures.measure(score_pairs(pairs, metric, cache=cache, label=label), ["bias"],
                                     n_resamples=n_resamples, seed=seed)
            frames.append(table.assign(variant=variant))
    out = pd.concat(frames, ignore_index=True)
    return out[["metric", "variant", "dataset", "attribute", "n_pairs", "value", "ci_low", "ci_high"]]


def wrapper_versus_adapter(adapters: dict, *, label: str = "BERTScore", attribute: str = "gender",
                           sample_size: int = 0, seed: int = 0, n_resamples: int = 9999, cache=None,
                           device: str = "auto") -> pd.DataFrame:
    """Is the wrapper's Eq. 2 bias different from the trained adapter's on the same ``attribute`` pairs?

    Per gender set (``dataset``: published, built): the two biases, their difference (wrapper minus adapter) with
    its 95% BCa bootstrap interval over pairs and the paired permutation p-value
    (:func:`metricbias.bias.significance.paired_permutation_test` on the per-pair terms of Eq. 2, each metric
    rescaled with its own Eq. 1), from the scores the chapter's tables cached. ``adapters``: label ->
    :class:`~metricbias.mitigation.training.Shipped`."""
    from ...mitigation.invariant import invariant

    shipped = adapters[label]
    plain = metric_for(None, meta=shipped.meta, device=device)
    pairs = datasets.sample(bias_pairs([attribute]), sample_size, seed)
    wrapper = score_pairs(pairs, invariant(plain, attribute), cache=cache, label=f"{label} ({attribute}-invariant)")
    adapter = score_pairs(pairs, metric_for(shipped.folder, meta=shipped.meta, device=device), cache=cache,
                          label=label)
    return paired_bias_difference(wrapper, adapter, attribute=attribute, columns=("wrapper bias", "adapter bias"),
                                  n_resamples=n_resamples, seed=seed)


def invariant_comparison(adapter_table: pd.DataFrame, invariant_table: pd.DataFrame) -> pd.DataFrame:
    """:func:`criteria_summary` of the trained adapters and the invariant wrappers side by side, each row saying
    which mitigation it is and on how many bias pairs and quality items it was measured."""
    both = pd.concat([adapter_table.assign(mitigation=ADAPTER), invariant_table.assign(mitigation=WRAPPER)],
                     ignore_index=True)
    summary = criteria_summary(criteria(both.drop(columns="mitigation")))
    per = both.groupby("metric", sort=False)
    summary.insert(1, "mitigation", summary["metric"].map(per["mitigation"].first()))
    summary["bias pairs"] = summary["metric"].map(both[both["kind"] == "bias"].groupby("metric")["n"].sum())
    quality = both[both["kind"] == "quality"].groupby("metric")
    summary["quality items"] = summary["metric"].map(quality["n"].sum())
    # a gain in quality is no cost: the largest relative loss (0 when every quality measure held or rose)
    summary["largest quality loss"] = summary["metric"].map(quality["relative_change"].min().clip(upper=0))
    return summary
