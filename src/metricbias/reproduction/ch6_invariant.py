"""Chapter 6: the training-free alternative, the metric made blind to the attribute
(:func:`metricbias.mitigation.invariant.invariant`), beside the trained adapters: its before/after table, its
cost in forward passes, its bias intervals and the verdict.
"""

from __future__ import annotations

import pandas as pd

from .. import datasets
from ..metaeval.quality import QUALITY, load_quality_sets
from ..mitigation.evaluation import COMPARE_COLUMNS, bias_pairs, compare_metrics, metric_for
from ..scoring import score_pairs
from .ch6_adapters import criteria, criteria_summary, evaluated_attributes

#: the ``mitigation`` column of :func:`invariant_comparison`
ADAPTER, WRAPPER = "adapter (trained)", "invariant wrapper (no training)"


def invariant_results(adapters: dict, labels=None, *, attribute: str = "gender", attributes=None,
                      sample_size: int = 0, quality_sample_size: int = 0, seed: int = 0, cache=None,
                      device: str = "auto") -> pd.DataFrame:
    """:func:`~metricbias.reproduction.ch6_adapters.compare_all`'s table for the invariant wrapper (:func:`metricbias.mitigation.invariant.invariant`)
    of the metrics the shipped ``adapters`` were trained for, in place of the adapters: ``before`` is the plain
    metric, ``after`` the wrapper blind to ``attribute``, on the same samples (``labels``: which adapters' metrics;
    default all). The ``metric`` column reads "<label> (<attribute>-invariant)"."""
    from ..mitigation.invariant import invariant

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
    from ..mitigation.invariant import cost, passes, pool

    pairs = datasets.sample(bias_pairs(evaluated_attributes(attributes)), sample_size, seed)
    scored = {"bias pairs": (list(pairs["candidate_1"]) + list(pairs["candidate_2"]),
                             list(pairs["reference_1"]) + list(pairs["reference_2"]))}
    scored.update(_scored_pairs(load_quality_sets(tuple(QUALITY), quality_sample_size, seed)))
    runs = {name: passes(c, r, attribute) for name, (c, r) in scored.items()}
    sizes = {name: len(c) for name, (c, _) in scored.items()}
    runs["all"] = pool(runs.values())  # each set's variants are planned once
    sizes["all"] = sum(sizes.values())
    return pd.DataFrame([{"set": name, "scored pairs": sizes[name], **cost(None, None, runs=run)}
                         for name, run in runs.items()])


def bias_intervals(results: pd.DataFrame, adapters: dict, *, name: str = "gender", attribute: str = "gender",
                   sample_size: int = 0, seed: int = 0, n_resamples: int = 9999, cache=None,
                   device: str = "auto") -> pd.DataFrame:
    """Eq. 2 bias with 95% bootstrap intervals on the ``name`` sets, for each invariant wrapper of an
    :func:`invariant_results` table and its plain metric (scores from the cache those results filled)."""
    from ..bias import measures
    from ..mitigation.invariant import invariant

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


def _sizes(comparison: pd.DataFrame, mitigation: str) -> str:
    """The bias pairs and quality items the ``mitigation`` rows of an :func:`invariant_comparison` were measured on."""
    rows = comparison[comparison["mitigation"] == mitigation]
    sizes = sorted({(int(b), int(q)) for b, q in zip(rows["bias pairs"], rows["quality items"])})
    return " or ".join(f"{b:,} bias pairs and {q:,} quality items" for b, q in sizes)


def sample_note(sample_size: int, quality_sample_size: int, comparison: pd.DataFrame) -> str:
    """A Markdown sentence: on what the wrappers are measured (the chapter's ``invariant_*sample_size`` parameters)
    and whether those are the sets the adapters of the :func:`invariant_comparison` were measured on."""
    wrapper, adapter = _sizes(comparison, WRAPPER), _sizes(comparison, ADAPTER)
    same = ("the sets the adapters were measured on" if wrapper == adapter else
            f"where the adapters were measured on {adapter}")
    if not sample_size and not quality_sample_size:
        return (f"The wrapper is measured on every bias pair and every item of each quality set ({wrapper}), "
                f"{same}; its scores come from the verified score packs (the last section).")
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


def invariant_verdict(comparison: pd.DataFrame, intervals: pd.DataFrame, costs: pd.DataFrame, label: str = "BERTScore",
                      attribute: str = "gender") -> str:
    """A Markdown paragraph: is the training-free wrapper of ``label`` as good as its trained adapter?

    "As good" is judged on the :func:`invariant_comparison` row of each: a gender bias cut at least the
    adapter's on both gender sets, a largest relative quality loss no larger (a gain counts as no loss), and as
    many criteria met (where a quality change of either sign beyond 1% misses its criterion). The wrapper's bias on the
    released gender set is given with its 95% bootstrap interval (:func:`bias_intervals`), its cost with
    :func:`invariant_cost` (all sets pooled).
    """
    rows = comparison.set_index("metric")
    wrapper, adapter = rows.loc[f"{label} ({attribute}-invariant)"], rows.loc[label]
    cut = {d: (wrapper[f"gender bias cut ({d})"], adapter[f"gender bias cut ({d})"]) for d in ("published", "built")}
    q_w, q_a = wrapper["largest quality loss"], adapter["largest quality loss"]
    released = intervals[(intervals["metric"] == label) & (intervals["dataset"] == "published")].set_index("variant")
    plain, blind = released.loc["plain"], released.loc[f"{attribute}-invariant"]
    pooled = costs.set_index("set").loc["all"]
    text = (f"On the released {attribute} set the wrapper's bias (Eq. 2) is {blind['value']:.2f} (95% CI "
            f"{blind['ci_low']:.2f} to {blind['ci_high']:.2f}, {int(blind['n_pairs'])} pairs), against "
            f"{plain['value']:.2f} ({plain['ci_low']:.2f} to {plain['ci_high']:.2f}) for plain {label}. "
            f"It cuts {attribute} bias by {cut['published'][0]:.0%} (released) and {cut['built'][0]:.0%} (built); "
            f"the trained adapter by {cut['published'][1]:.0%} and {cut['built'][1]:.0%}. Its largest quality "
            f"loss is {abs(q_w):.2%}, the adapter's {abs(q_a):.2%}; it meets {wrapper['criteria met']} of "
            f"{wrapper['criteria']} criteria, the adapter {adapter['criteria met']} of {adapter['criteria']} (the wrapper "
            f"measured on {int(wrapper['bias pairs']):,} bias pairs and {int(wrapper['quality items']):,} quality items, "
            f"the adapter on {int(adapter['bias pairs']):,} and {int(adapter['quality items']):,}). ")
    lost = [f"the {attribute} bias cut on the {d} set" for d, (w, a) in cut.items() if not w >= a]
    if not q_w >= q_a:
        lost.append("the largest quality loss")
    if wrapper["criteria met"] < adapter["criteria met"]:
        lost.append("the number of criteria met")
    cost = f"{pooled['texts']:.1f}× the encoder passes (distinct texts) and {pooled['pairs']:.1f}× the scored pairs"
    same = (wrapper["bias pairs"], wrapper["quality items"]) == (adapter["bias pairs"], adapter["quality items"])
    untested = ("(point values on the same pairs and items, with no test of the difference: a comparison of figures, "
                "not a finding that one mitigation is better)" if same else
                "(point values, on samples that need not be the same: no test of the difference, so this is a "
                "comparison of figures, not a finding that one mitigation is better)")
    if lost:
        return text + f"On these sets the wrapper's point values fall short of the adapter's on {' and '.join(lost)} " \
                      f"{untested}; it costs {cost} of the plain metric, and no training."
    return text + (f"On these sets the wrapper's point values reach at least the adapter's on all three (bias cuts, "
                   f"quality loss, criteria met) {untested}, for {cost} of the plain metric and no training.")
