"""Gao & Wan (2022), *Social Biases in Automatic Evaluation Metrics for NLG*: their tables beside ours.

* Table 3 (WEAT/SEAT effect sizes through metrics; chapter 5): :func:`gao_table3`,
  our results in its shape (:func:`table3`), cell by cell (:func:`compare_with_gao`)
  and per metric (:func:`agreement`);
* Tables 5, 6, 7 and 9 (gender-swapped meta-evaluation; chapter 7) keyed by our
  registry names (:func:`table5` ... :func:`side_by_side`, :func:`ngram_reproduction`).

Tables 5-9. Each printed row label is mapped to a registry metric and a reference
aggregation. Where Gao & Wan name no aggregation, they used the metric's own
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

from .tables import table


#: Gao & Wan's Table 3 columns -> our registry names (their BARTScore needs a BART model: not offline)
GAO_METRICS = {"BLEURT": "regression", "BERTScore": "bertscore", "MoverScore": "moverscore", "WMD": "wmd",
               "EmbAvg": "embedding_average", "METEOR": "meteor"}
SIGNIFICANCE = 0.01  # Table 3 stars p <= 0.01


def _row_order() -> list[tuple[str, str]]:
    from ..datasets.seat import TESTS

    return [(name, level) for name, levels in TESTS.items() for level in levels]


def gao_table3() -> pd.DataFrame:
    """Gao & Wan's Table 3 (the columns we compare with), long form, with our registry ``name``."""
    t3 = table("gao2022_table3_weat_seat").rename(columns={"metric": "paper_metric"})
    t3["name"] = t3["paper_metric"].map(GAO_METRICS)
    return t3


#: Gao & Wan's row label -> (registry name, our aggregation, theirs)
LABELS: dict[str, tuple[str, str, str]] = {
    "BLEU": ("bleu", "max", "native"),
    "METEOR": ("meteor", "max", "native"),
    "TER": ("ter", "mean", "native"),
    "ROUGE-SU4": ("rougeSU4", "max", "native"),
    "ROUGE-1": ("rouge1", "single", "single"),
    "ROUGE-2": ("rouge2", "single", "single"),
    "ROUGE-L": ("rougeL", "single", "single"),
    "BERTScore-F1": ("bertscore", "max", "native"),
    "MoverScore": ("moverscore", "mean", "mean"),
    "WMD-max": ("wmd", "max", "max"),
    "WMD-mean": ("wmd", "mean", "mean"),
    "WMD": ("wmd", "single", "single"),
    "EmbeddingAverage": ("embedding_average", "max", "native"),
    "VectorExtrema": ("vector_extrema", "max", "native"),
    "GreedyMatching": ("greedy_matching", "max", "native"),
    "BLEURT-max": ("regression", "max", "max"),
    "BLEURT-mean": ("regression", "mean", "mean"),
    "BLEURT": ("regression", "single", "single"),
    "BARTScore-max": ("bartscore", "max", "max"),
    "BARTScore-mean": ("bartscore", "mean", "mean"),
    "BARTScore": ("bartscore", "single", "single"),
}


def _keyed(frame: pd.DataFrame, single_reference: bool = False) -> pd.DataFrame:
    unknown = sorted(set(frame["paper_metric"]) - set(LABELS))
    if unknown:
        raise KeyError(f"no mapping for Gao & Wan row(s) {unknown}; add them to metricbias.reproduction.gao2022.LABELS")
    mapped = frame["paper_metric"].map(LABELS)
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
    label: {"name": LABELS[label][0], "options": options, "aggregation": LABELS[label][1]}
    for label, options in {"BLEU": {"tokenize": "13a"}, "METEOR": {"tokenize": "13a"}, "TER": {},
                           "ROUGE-SU4": {"variant": "R"}}.items()}


def ngram_reproduction(dataset, *, cache=None, tolerance: float = 0.03) -> "pd.DataFrame":
    """Table 9's BLEU, METEOR, TER and ROUGE-SU4 (original data) recomputed with :data:`NGRAM_SETTINGS`.

    One row per metric and judge protocol (``mean`` of the experts, or ``stacked`` as
    Elliott & Keller's released code does), with ``within`` = |ours - paper| <= ``tolerance``.
    """
    from .. import metrics
    from ..metaeval.analysis import JUDGES, correlations

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
    return out
