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

import numpy as np
import pandas as pd

from .tables import table




# --- Gao & Wan's Table 3 ------------------------------------------------------------------
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


def table3(results: pd.DataFrame, alpha: float = SIGNIFICANCE) -> pd.DataFrame:
    """Results shaped like Gao & Wan's Table 3: rows test × level (their order), one column per metric label,
    cells "d" with "*" when p <= ``alpha``; "—" where d is undefined (constant r)."""
    def cell(d, p):
        return "—" if np.isnan(d) else f"{d:.2f}" + ("*" if p <= alpha else "")

    frame = results.assign(cell=[cell(d, p) for d, p in zip(results["effect_size"], results["p_value"])])
    wide = frame.pivot(index=["test", "level"], columns="metric", values="cell")
    order = [key for key in _row_order() if key in wide.index]
    return wide.reindex(index=pd.MultiIndex.from_tuples(order, names=["test", "level"]),
                        columns=list(dict.fromkeys(results["metric"])))


def compare_with_gao(results: pd.DataFrame, alpha: float = SIGNIFICANCE) -> pd.DataFrame:
    """Our cells beside Gao & Wan's for the metric families both measure (joined on test, level, registry name)."""
    ours = results[["test", "level", "metric", "name", "effect_size", "p_value"]].rename(
        columns={"effect_size": "ours", "p_value": "ours_p"})
    merged = gao_table3().rename(columns={"effect_size": "paper", "significant": "paper_significant"}).merge(
        ours, on=["test", "level", "name"], how="inner")
    merged["ours_significant"] = merged["ours_p"] <= alpha
    merged["same_sign"] = np.sign(merged["ours"].fillna(0).round(2)) == np.sign(merged["paper"])
    return merged[["test", "level", "paper_metric", "metric", "paper", "paper_significant", "ours", "ours_p",
                   "ours_significant", "same_sign"]]


def agreement(compared: pd.DataFrame) -> pd.DataFrame:
    """Per metric: Spearman correlation of d across cells, share of cells with the same printed sign, shares of
    cells with a positive d, and counts of significant cells."""
    from scipy.stats import spearmanr

    rows = []
    for (paper_metric, metric), g in compared.groupby(["paper_metric", "metric"], sort=False):
        both = g.dropna(subset=["ours"])
        rho = spearmanr(both["paper"], both["ours"]).statistic if len(both) > 2 else np.nan
        rows.append({
            "paper_metric": paper_metric, "metric": metric, "cells": len(g), "defined": len(both),
            "spearman_d": rho, "same_sign": float(g["same_sign"].mean()),
            # share of cells whose d is positive: X closer to A than Y is (the stereotype-congruent direction)
            "paper_positive": float((g["paper"] > 0).mean()), "ours_positive": float((g["ours"] > 0).mean()),
            "paper_significant": int(g["paper_significant"].sum()),
            "ours_significant": int(g["ours_significant"].sum()),
            "both_significant": int((g["paper_significant"] & g["ours_significant"]).sum()),
        })
    return pd.DataFrame(rows)


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
    "BLEU": {"name": "bleu", "options": {"tokenize": "13a"}, "aggregation": "max"},
    "METEOR": {"name": "meteor", "options": {"tokenize": "13a"}, "aggregation": "max"},
    "TER": {"name": "ter", "options": {}, "aggregation": "mean"},
    "ROUGE-SU4": {"name": "rougeSU4", "options": {"variant": "R"}, "aggregation": "max"},
}


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


# --- chapter 7: the metrics it runs, the comparisons as the page shows them, and their summaries ----------

def meta_eval_metrics(profile: str = "offline", metric_names: str = "", skip_metrics: str = "",
                      device: str = "auto") -> list[tuple[str, object]]:
    """``(label, metric)`` of every configuration chapter 7 runs: ``metric_names`` (comma-separated registry
    names) or, when empty, the profile's suite (its regression model trained first if needed), less
    ``skip_metrics``."""
    from .. import metrics, profiles

    names = [n.strip() for n in metric_names.split(",") if n.strip()]
    skip = {n.strip() for n in skip_metrics.split(",") if n.strip()}
    entries = [(n, n, {}) for n in names] or profiles.suite(profile)
    entries = profiles.prepare([e for e in entries if e[1] not in skip], device=device, progress=False)
    return [(label, metrics.get(name, **options)) for label, name, options in entries]


def without(scorers: list, skip: str) -> tuple[list, list[str]]:
    """``(kept, left_out_labels)``: ``scorers`` without the registry names of ``skip`` (comma-separated)."""
    names = {n.strip() for n in skip.split(",") if n.strip()}
    return ([(label, m) for label, m in scorers if m.name not in names],
            [label for label, m in scorers if m.name in names])


def for_page(side: pd.DataFrame, values=("origin", "swap"), *, ran_only: bool = True,
             differences: bool = True) -> pd.DataFrame:
    """A :func:`side_by_side` table with the book's column names: the paper's numbers in ``(paper)`` columns
    beside ours, then the differences (if ``differences``); only the rows we ran when ``ran_only``."""
    if ran_only:
        side = side[side["metric"].notna()]
    front = [c for c in ("judges", "subset", "paper_metric", "paper_aggregation", "metric", "aggregation")
             if c in side]
    cols = front + [f"{w}_{v}" for v in values for w in ("paper", "ours")]
    cols += [f"diff_{v}" for v in values] if differences else []
    names = {"paper_metric": "paper row", "paper_aggregation": "their aggregation"}
    for v in values:
        label = v.replace("_", " ")
        names.update({f"paper_{v}": f"{label} (paper)", f"ours_{v}": label, f"diff_{v}": f"{label} difference"})
    return side[[c for c in cols if c in side]].rename(columns=names).reset_index(drop=True)


#: what Table 5 reports per configuration (our preference table's columns)
PREFERENCE_VALUES = ("mean_male", "mean_female", "share_male_higher", "share_female_higher", "share_equal")


def table5_comparison(pref: pd.DataFrame, dataset: str = "Flickr8k") -> pd.DataFrame:
    """Gao & Wan's Table 5 rows of ``dataset`` beside our :func:`~metricbias.metaeval.analysis.preference` rows."""
    return side_by_side(pref, table5(dataset), values=PREFERENCE_VALUES)


def flickr_comparison(performance_table: pd.DataFrame) -> pd.DataFrame:
    """Table 9 (all examples) and Table 6 (male-only hypotheses) beside our example-level Spearman correlations,
    for each way of using the judges in ``performance_table`` (``judges`` column)."""
    frames = []
    for judges, ours in performance_table[performance_table["statistic"] == "spearman"].groupby("judges", sort=False):
        frames += [side_by_side(ours, paper).assign(judges=judges) for paper in (table9(), table6())]
    return pd.concat(frames, ignore_index=True)


def table7_agreement(t7: pd.DataFrame, close: float = 0.03, far: float = 0.1) -> dict:
    """Which of our metrics are within ``close`` of Table 7 on the original data, and which more than ``far`` away
    (``within``, ``far``: comma-separated labels or "none")."""
    within = t7.loc[t7["diff_origin"].abs() <= close, "metric"].tolist()
    away = t7.loc[t7["diff_origin"].abs() > far, "metric"].tolist()
    return {"within": ", ".join(within) or "none", "far": ", ".join(away) or "none"}


def ngram_summary(repro: pd.DataFrame) -> dict:
    """From :func:`ngram_reproduction`: how many of the n-gram metrics are within tolerance of Table 9 with the
    experts stacked (``within_stacked``) and with their mean (``within_mean``), of ``metrics``."""
    return {"metrics": int(repro["paper_metric"].nunique()),
            "within_stacked": int(repro.loc[repro["judges"] == "stacked", "within"].sum()),
            "within_mean": int(repro.loc[repro["judges"] == "mean", "within"].sum())}
