"""Gao & Wan (2022), *Social Biases in Automatic Evaluation Metrics for NLG*: their tables beside ours.

* Table 3 (WEAT/SEAT effect sizes through metrics; chapter 5): :func:`gao_table3`,
  our results in its shape (:func:`table3`), cell by cell (:func:`compare_with_gao`)
  and per metric (:func:`agreement`);
* Tables 5, 6, 7 and 9 (gender-swapped meta-evaluation; chapter 7) keyed by our
  registry names (:func:`table5` ... :func:`side_by_side`, :func:`ngram_reproduction`).

Tables 5-9. Each printed row label is mapped to a registry metric (:func:`.names.registry_name`) and a
reference aggregation (:func:`aggregations`). Where Gao & Wan name no aggregation, they used the metric's own
multi-reference mode (MultEval for BLEU, METEOR and TER; ROUGE 1.5.5 for
ROUGE-SU4; nlg-eval for the embedding metrics; bert-score's maximum over
references for BERTScore). Our metrics score one reference at a time, so those
rows are compared with our ``max`` aggregation (``mean`` for TER: its own
multi-reference mode divides the fewest edits by the *average* reference
length, which the mean over references approximates better than either
extreme), and ``paper_aggregation`` says ``native`` so the tables never hide
the difference.
"""

from __future__ import annotations

import pandas as pd

from .names import AGGREGATION_SUFFIXES, registry_name
from .tables import table


SIGNIFICANCE = 0.01  # Table 3 stars p <= 0.01


def row_order() -> list[tuple[str, str]]:
    """The (test, level) rows of Gao & Wan's Table 3, in its order."""
    from ...datasets.seat import TESTS

    return [(name, level) for name, levels in TESTS.items() for level in levels]


def gao_table3() -> pd.DataFrame:
    """Gao & Wan's Table 3 (the columns we compare with; their BARTScore needs a BART model, not offline), long
    form, with our registry ``name``."""
    t3 = table("gao2022_table3_weat_seat").rename(columns={"metric": "paper_metric"})
    t3["name"] = t3["paper_metric"].map(registry_name)
    return t3


#: how a row of Tables 5-9 aggregates over references, ours then theirs, where its label names no aggregation
#: ("WMD-max": max, max) and it is not one reference ("single", single): their metric's own multi-reference mode
#: ("native", see the module docstring), or MoverScore's mean
AGGREGATIONS: dict[str, tuple[str, str]] = {
    "BLEU": ("max", "native"), "METEOR": ("max", "native"), "TER": ("mean", "native"),
    "ROUGE-SU4": ("max", "native"), "BERTScore-F1": ("max", "native"), "MoverScore": ("mean", "mean"),
    "EmbeddingAverage": ("max", "native"), "VectorExtrema": ("max", "native"), "GreedyMatching": ("max", "native"),
}


def aggregations(label: str) -> tuple[str, str]:
    """(our aggregation, theirs) of one of Gao & Wan's row labels (:data:`AGGREGATIONS`)."""
    suffix = label.rpartition("-")[2]
    if suffix in AGGREGATION_SUFFIXES:
        return suffix, suffix
    return AGGREGATIONS.get(label, ("single", "single"))


def _keyed(frame: pd.DataFrame, single_reference: bool = False) -> pd.DataFrame:
    mapped = frame["paper_metric"].map(lambda label: (registry_name(label), *aggregations(label)))
    frame = frame.assign(name=mapped.str[0], aggregation=mapped.str[1], paper_aggregation=mapped.str[2])
    if single_reference:  # REALSumm has one reference: every aggregation is the same
        frame["aggregation"] = "single"
    return frame


def table5(dataset: str = "Flickr8k") -> pd.DataFrame:
    """Preference analysis (Table 5) for ``Flickr8k`` or ``Composite-MSCOCO``."""
    t = table("gao2022_table5_preference")
    t = t[t["dataset"] == dataset].drop(columns="dataset").rename(columns={"metric": "paper_metric"})
    return _keyed(t.reset_index(drop=True))


def _spearman_table(name: str, subset: str) -> pd.DataFrame:
    t = table(name).rename(columns={"metric": "paper_metric", "flickr8k_overall_origin": "origin",
                                    "flickr8k_overall_swap": "swap"})
    return _keyed(t[["paper_metric", "origin", "swap"]]).assign(subset=subset)


def table9() -> pd.DataFrame:
    """Flickr8k example-level Spearman, all 5822 examples, before and after swapping (Table 9)."""
    return _spearman_table("gao2022_table9_flickr8k_spearman_full", "all")


def table6() -> pd.DataFrame:
    """Flickr8k example-level Spearman on the male-only-hypothesis subset (Table 6, N = 1685)."""
    return _spearman_table("gao2022_table6_flickr8k_spearman_single_gender", "single_gender")


def table7() -> pd.DataFrame:
    """REALSumm system-level Spearman with LitePyramid recall (Table 7)."""
    t = table("gao2022_table7_realsumm_system_spearman").rename(
        columns={"metric": "paper_metric", "realsumm_coverage_origin": "origin", "realsumm_coverage_swap": "swap"})
    return _keyed(t, single_reference=True)


def side_by_side(ours: pd.DataFrame, paper: pd.DataFrame, values=("origin", "swap")) -> pd.DataFrame:
    """Join our rows with the paper's on (registry ``name``, aggregation[, subset]).

    Adds our ``metric`` label (one paper row meets every configuration of that
    metric we ran, e.g. MoverScore on 1- and 2-grams) and ``ours_*``, ``diff_*`` columns.
    """
    on = [c for c in ("name", "aggregation", "subset") if c in paper.columns and c in ours.columns]
    mine = ours[on + ["metric"] + list(values)].rename(columns={v: f"ours_{v}" for v in values})
    merged = paper.rename(columns={v: f"paper_{v}" for v in values}).merge(mine, on=on, how="left")
    for v in values:
        merged[f"diff_{v}"] = merged[f"ours_{v}"] - merged[f"paper_{v}"]
    return merged


#: the n-gram settings closest to Gao & Wan's Flickr8k pipeline (Elliott & Keller's code: MultEval's
#: BLEU, METEOR and TER on tokenized text, ROUGE 1.5.5's SU4 *recall* with stemming, best reference)
NGRAM_SETTINGS: dict[str, dict] = {
    label: {"name": registry_name(label), "options": options, "aggregation": aggregations(label)[0]}
    for label, options in {"BLEU": {"tokenize": "13a"}, "METEOR": {"tokenize": "13a"}, "TER": {},
                           "ROUGE-SU4": {"variant": "R"}}.items()}


def ngram_reproduction(dataset, *, cache=None, tolerance: float = 0.03) -> "pd.DataFrame":
    """Table 9's BLEU, METEOR, TER and ROUGE-SU4 (original data) recomputed with :data:`NGRAM_SETTINGS`.

    One row per metric and judge protocol (``mean`` of the experts, or ``stacked`` as
    Elliott & Keller's released code does), with ``within`` = |ours - paper| <= ``tolerance``, our 95% interval
    (``ci_low``, ``ci_high``: :func:`metricbias.bias.claims.spearman_interval` over the examples, ``n_examples``;
    the stacked rows count each example once, not once per expert, whose judgements of it are not independent)
    and ``paper_inside``: whether the paper's value lies inside it.
    """
    from ...bias.claims import spearman_interval
    from ... import metrics
    from ...metaeval.analysis import JUDGES, correlations

    paper = table9().set_index("paper_metric")
    rows = []
    for label, setting in NGRAM_SETTINGS.items():
        metric = metrics.get(setting["name"], **setting["options"])
        for judges in JUDGES:
            c = correlations(dataset, metric, cache=cache, judges=judges)
            c = c[(c["statistic"] == "spearman") & (c["aggregation"] == setting["aggregation"])].iloc[0]
            rows.append({"paper_metric": label, "name": metric.name, "aggregation": setting["aggregation"],
                         "judges": judges, "paper": paper.loc[label, "origin"], "ours": c["value"], "n": c["n"],
                         "signature": metric.signature})
    out = pd.DataFrame(rows)
    out["difference"] = out["ours"] - out["paper"]
    out["within"] = out["difference"].abs() <= tolerance + 1e-9
    out["n_examples"] = int(out.loc[out["judges"] == "mean", "n"].max())
    out[["ci_low", "ci_high"]] = [spearman_interval(r, n) for r, n in zip(out["ours"], out["n_examples"])]
    out["paper_inside"] = (out["ci_low"] <= out["paper"]) & (out["paper"] <= out["ci_high"])
    return out
