"""Chapter 6: the training-free alternative, the metric made blind to the attribute
(:func:`metricbias.mitigation.invariant.invariant`), beside the trained adapters: its before/after table, its
cost in forward passes, its bias intervals and the verdict.
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


def _sizes(rows: pd.DataFrame) -> str:
    """The bias pairs and quality items some rows of an :func:`invariant_comparison` were measured on."""
    sizes = sorted({(int(b), int(q)) for b, q in zip(rows["bias pairs"], rows["quality items"])})
    return " or ".join(f"{b:,} bias pairs and {q:,} quality items" for b, q in sizes)


def sample_note(sample_size: int, quality_sample_size: int, comparison: pd.DataFrame) -> str:
    """A Markdown sentence: on what the wrappers are measured (the chapter's ``invariant_*sample_size`` parameters)
    and whether those are the sets the adapters of the same metrics (in the :func:`invariant_comparison`) were
    measured on."""
    wrappers = comparison[comparison["mitigation"] == WRAPPER]
    wrapped = {m.rsplit(" (", 1)[0] for m in wrappers["metric"]}  # "BERTScore (gender-invariant)" -> "BERTScore"
    adapters = comparison[(comparison["mitigation"] == ADAPTER) & comparison["metric"].isin(wrapped)]
    wrapper, adapter = _sizes(wrappers), _sizes(adapters)
    same = ("the sets the adapters of the same metrics were measured on" if wrapper == adapter else
            f"where the adapters of the same metrics were measured on {adapter}")
    if not sample_size and not quality_sample_size:
        return (f"The wrapper is measured on every bias pair and every item of each quality set ({wrapper}), "
                f"{same}.")
    drawn = [f"{sample_size} pairs per attribute" if sample_size else "every bias pair",
             f"{quality_sample_size} items per quality set" if quality_sample_size else "every quality item"]
    return (f"The wrapper is measured on seeded draws of those sets: {drawn[0]} and {drawn[1]} ({wrapper}), "
            f"{same} (`-p invariant_sample_size=0 -p invariant_quality_sample_size=0` measures the whole sets).")


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


def invariant_verdict(comparison: pd.DataFrame, intervals: pd.DataFrame, costs: pd.DataFrame,
                      versus: pd.DataFrame, label: str = "BERTScore", attribute: str = "gender") -> str:
    """A Markdown paragraph: is the training-free wrapper of ``label`` as good as its trained adapter?

    The biases are compared with a test: per gender set, the :func:`wrapper_versus_adapter` difference of the
    two Eq. 2 biases on the same pairs, its 95% interval and p-value; the wrapper's bias is "lower" or "higher"
    where the interval excludes 0 and p < 0.05. The quality and the criteria (the :func:`invariant_comparison`
    rows: the largest relative quality loss, a gain counting as none, and the criteria met, where a quality change
    of either sign beyond 1% misses its criterion) are point values, and the paragraph says so. The wrapper's bias
    on the released set is given with its 95% bootstrap interval (:func:`bias_intervals`), its cost with
    :func:`invariant_cost` (all sets pooled).
    """
    rows = comparison.set_index("metric")
    wrapper, adapter = rows.loc[f"{label} ({attribute}-invariant)"], rows.loc[label]
    cut = {d: (wrapper[f"gender bias cut ({d})"], adapter[f"gender bias cut ({d})"]) for d in ("published", "built")}
    q_w, q_a = wrapper["largest quality loss"], adapter["largest quality loss"]
    released = intervals[(intervals["metric"] == label) & (intervals["dataset"] == "published")].set_index("variant")
    plain, blind = released.loc["plain"], released.loc[f"{attribute}-invariant"]
    pooled = costs.set_index("set").loc["all"]
    names = {"published": "released", "built": "built"}
    tests = versus.set_index("dataset")
    differences = "; ".join(
        f"{t['difference']:+.2f} on the {names[d]} set (95% CI {t['ci_low']:+.2f} to {t['ci_high']:+.2f}, paired "
        f"permutation p = {t['p_value']:.3g}, {int(t['n_pairs']):,} pairs)" for d, t in tests.iterrows())
    # a finding needs both: the interval of the difference excludes 0 and the permutation test rejects at 5%
    # (with a few pairs a BCa interval can exclude 0 where no permutation p-value can fall below 5%)
    lower = [names[d] for d, t in tests.iterrows() if t["ci_high"] < 0 and t["p_value"] < 0.05]
    higher = [names[d] for d, t in tests.iterrows() if t["ci_low"] > 0 and t["p_value"] < 0.05]
    tied = [names[d] for d in tests.index if names[d] not in lower + higher]
    found = [f"lower than the adapter's on the {' and '.join(lower)} set{'s' * (len(lower) > 1)}"] if lower else []
    found += [f"higher on the {' and '.join(higher)} set{'s' * (len(higher) > 1)}"] if higher else []
    found += [f"not distinguishable from it on the {' and '.join(tied)} set{'s' * (len(tied) > 1)}"] if tied else []
    same = (wrapper["bias pairs"], wrapper["quality items"]) == (adapter["bias pairs"], adapter["quality items"])
    where = "on the same pairs and items" if same else "on samples that need not be the same"
    quality = ("no larger than" if q_w >= q_a else "larger than")
    criteria_met = ("as many criteria as the adapter" if wrapper["criteria met"] == adapter["criteria met"] else
                    "more criteria than the adapter" if wrapper["criteria met"] > adapter["criteria met"] else
                    "fewer criteria than the adapter")
    cost = f"{pooled['texts']:.1f}× the encoder passes (distinct texts) and {pooled['pairs']:.1f}× the scored pairs"
    return (
        f"On the released {attribute} set the wrapper's bias (Eq. 2) is {blind['value']:.2f} (95% CI "
        f"{blind['ci_low']:.2f} to {blind['ci_high']:.2f}, {int(blind['n_pairs'])} pairs), against "
        f"{plain['value']:.2f} ({plain['ci_low']:.2f} to {plain['ci_high']:.2f}) for plain {label}. "
        f"It cuts {attribute} bias by {cut['published'][0]:.0%} (released) and {cut['built'][0]:.0%} (built); "
        f"the trained adapter by {cut['published'][1]:.0%} and {cut['built'][1]:.0%}. The wrapper's bias minus "
        f"the adapter's, on the same pairs: {differences}. So the wrapper's {attribute} bias is "
        f"{', and '.join(found)}. Its largest quality loss is {abs(q_w):.2%}, the adapter's {abs(q_a):.2%}; it "
        f"meets {wrapper['criteria met']} of {wrapper['criteria']} criteria, the adapter {adapter['criteria met']} "
        f"of {adapter['criteria']} (the wrapper measured on {int(wrapper['bias pairs']):,} bias pairs and "
        f"{int(wrapper['quality items']):,} quality items, the adapter on {int(adapter['bias pairs']):,} and "
        f"{int(adapter['quality items']):,}). Those two are point values {where}, with no test of the "
        f"difference: that the wrapper's largest quality loss is {quality} the adapter's, and that it meets "
        f"{criteria_met}, compare figures and are not findings. It costs {cost} of the plain metric, and no training.")
