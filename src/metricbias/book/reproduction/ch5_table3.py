"""Chapter 5: Gao & Wan's Table 3 (WEAT/SEAT effect sizes through metrics) beside ours: our results in its
shape (:func:`table3`), cell by cell (:func:`compare_with_gao`), per metric (:func:`agreement`), the direction of
the same cells in both studies paired (:func:`paired_direction`), the metrics the chapter runs, and the numbers and
verdict words the chapter's sentences take (:func:`direction_findings`, :func:`spearman_findings`,
:func:`meteor_findings`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..display import UNDEFINED
from .ch4_measures import counted
from .gao2022 import SIGNIFICANCE, row_order, gao_table3
from .names import counted as counted_noun, of_all


def table3(results: pd.DataFrame, alpha: float = SIGNIFICANCE) -> pd.DataFrame:
    """Results shaped like Gao & Wan's Table 3: rows test × level (their order), one column per metric label,
    cells "d" with "*" when p <= ``alpha``; "—" where d is undefined (constant r)."""
    def cell(d, p):
        return "—" if np.isnan(d) else f"{d:.2f}" + ("*" if p <= alpha else "")

    frame = results.assign(cell=[cell(d, p) for d, p in zip(results["effect_size"], results["p_value"])])
    wide = frame.pivot(index=["test", "level"], columns="metric", values="cell")
    order = [key for key in row_order() if key in wide.index]
    return wide.reindex(index=pd.MultiIndex.from_tuples(order, names=["test", "level"]),
                        columns=list(dict.fromkeys(results["metric"])))


def compare_with_gao(results: pd.DataFrame, alpha: float = SIGNIFICANCE) -> pd.DataFrame:
    """Our cells beside Gao & Wan's for the metric families both measure (joined on test, level, registry name)."""
    ours = results[["test", "level", "metric", "name", "family", "effect_size", "p_value"]].rename(
        columns={"effect_size": "ours", "p_value": "ours_p"})
    merged = gao_table3().rename(columns={"effect_size": "paper", "significant": "paper_significant"}).merge(
        ours, on=["test", "level", "name"], how="inner")
    merged["ours_significant"] = merged["ours_p"] <= alpha
    merged["same_sign"] = np.sign(merged["ours"].fillna(0).round(2)) == np.sign(merged["paper"])
    return merged[["test", "level", "paper_metric", "metric", "family", "paper", "paper_significant", "ours",
                   "ours_p", "ours_significant", "same_sign"]]


def both_defined(compared: pd.DataFrame) -> pd.Series:
    """The cells of ``compared`` where both studies print a non-zero d (two decimals): Gao & Wan print 0.00 where
    d is undefined, so these are the cells both define. Every statistic of a row of :func:`agreement_table` is
    computed on them."""
    return (compared["ours"].round(2).fillna(0) != 0) & (compared["paper"] != 0)


def paired_direction(compared: pd.DataFrame) -> dict:
    """Which way the same cells point in the two studies, paired: over the cells of ``compared`` where both print a
    non-zero d (two decimals; Gao & Wan print 0.00 where d is undefined), the shares with d > 0 in each study and
    an exact McNemar test (a two-sided sign test on the cells positive in one study only)."""
    from ...bias.claims import sign_tests

    signed = compared[both_defined(compared)]
    ours, paper = signed["ours"] > 0, signed["paper"] > 0
    ours_only, paper_only = int((ours & ~paper).sum()), int((paper & ~ours).sum())
    p = float(sign_tests([ours_only], [paper_only])["p_value"].iloc[0]) if ours_only + paper_only else 1.0
    n = len(signed)
    return {"cells": n, "ours_positive": float(ours.mean()) if n else np.nan,
            "paper_positive": float(paper.mean()) if n else np.nan, "ours_only": ours_only,
            "paper_only": paper_only, "p_value": p}


def agreement(compared: pd.DataFrame) -> pd.DataFrame:
    """Per metric, on the cells both studies define (:func:`both_defined`; ``signed`` of ``cells`` reported):
    Spearman correlation of d with its 95% interval, the share of cells with the same sign and the paired
    direction (:func:`paired_direction`); ``defined``: the cells where our d is defined; the counts of significant
    cells are over all the reported cells."""
    from scipy.stats import spearmanr

    from ...bias.claims import spearman_interval

    rows = []
    for (paper_metric, metric), g in compared.groupby(["paper_metric", "metric"], sort=False):
        both = g[both_defined(g)]
        varies = len(both) > 2 and both["paper"].nunique() > 1 and both["ours"].nunique() > 1
        rho = spearmanr(both["paper"], both["ours"]).statistic if varies else np.nan
        # Fisher z has no interval at ρ = ±1 (a point at 1 would read as certainty from a few cells)
        low, high = spearman_interval(rho, len(both)) if abs(rho) < 1 else (np.nan, np.nan)
        pair = paired_direction(g)
        rows.append({
            "paper_metric": paper_metric, "metric": metric, "cells": len(g), "defined": int(g["ours"].notna().sum()),
            "spearman_d": rho, "spearman_low": low, "spearman_high": high,
            "same_sign": float(both["same_sign"].mean()) if len(both) else np.nan,
            # over the cells both print a non-zero d: a positive d is X closer to A than Y is (the stereotype's way)
            "signed": pair["cells"], "paper_positive": pair["paper_positive"], "ours_positive": pair["ours_positive"],
            "direction_p": pair["p_value"],
            "paper_significant": int(g["paper_significant"].sum()),
            "ours_significant": int(g["ours_significant"].sum()),
            "both_significant": int((g["paper_significant"] & g["ours_significant"]).sum()),
        })
    return pd.DataFrame(rows)


def agreement_table(agree: pd.DataFrame) -> pd.DataFrame:
    """:func:`agreement` as the page shows it (eight columns, word headers): the cells both define of those
    reported ("30 of 38"), then, on those cells, Spearman ρ with its interval as one cell, the shares of cells
    with the same sign and of positive cells, and the McNemar p."""
    def rho(r) -> str:
        if np.isnan(r.spearman_d):
            return UNDEFINED
        return f"{r.spearman_d:.2f}" + ("" if np.isnan(r.spearman_low) else f" [{r.spearman_low:.2f}, {r.spearman_high:.2f}]")

    return pd.DataFrame({"Gao & Wan": agree["paper_metric"], "ours": agree["metric"],
                         "defined cells": [f"{r.signed} of {r.cells}" for r in agree.itertuples()],
                         "Spearman ρ of d [95% CI]": [rho(r) for r in agree.itertuples()],
                         "same sign": agree["same_sign"], "d > 0, Gao & Wan": agree["paper_positive"],
                         "d > 0, ours": agree["ours_positive"],
                         "McNemar p": agree["direction_p"].where(agree["signed"] > 0)})


def significance_by_level(compared: pd.DataFrame) -> pd.DataFrame:
    """Per metric and level: the cells both studies report, and the share with p <= 0.01 in each (for the
    appendix)."""
    out = compared.groupby(["paper_metric", "metric", "level"], sort=False).agg(
        cells=("test", "size"), paper=("paper_significant", "mean"), ours=("ours_significant", "mean"))
    return out.reset_index().rename(columns={"paper_metric": "Gao & Wan", "metric": "ours",
                                             "paper": "p ≤ 0.01, Gao & Wan", "ours": "p ≤ 0.01, ours"})


#: the social attributes each test's targets stand for (Gao & Wan's Table 2); C1 and C2 (flowers/insects,
#: instruments/weapons) are the original WEAT controls and stand for none
TEST_ATTRIBUTES: dict[str, tuple[str, ...]] = {
    "ABW-T": ("race", "gender"), "ABW-N": ("race", "gender"), "DB:C": ("gender",), "DB:L": ("gender",),
    "C1": (), "C2": (), "C3-T": ("race",), "C3-N": ("race",), "C4-N": ("race",), "C5-T": ("race",),
    "C5-N": ("race",), "C6-T": ("gender",), "C6-N": ("gender",), "C7-T": ("gender",), "C7-N": ("gender",),
    "C8-T": ("gender",), "C8-N": ("gender",), "C10": ("age",),
}


def tests_for(tests="all", attributes=None) -> list[str]:
    """The test names of ``tests`` ("all", comma-separated or a list) whose targets stand for one of ``attributes``
    (None: every test; "a,b" or a list), in Table 3's order."""
    from ...datasets.seat import TESTS

    names = list(TESTS) if tests in (None, "all", ["all"]) else (
        [t.strip() for t in tests.split(",") if t.strip()] if isinstance(tests, str) else list(tests))
    if attributes is None:
        return names
    wanted = [a.strip() for a in attributes.split(",") if a.strip()] if isinstance(attributes, str) else list(attributes)
    known = sorted({a for attrs in TEST_ATTRIBUTES.values() for a in attrs})
    unknown = [a for a in wanted if a not in known]
    if unknown:
        raise ValueError(f"attributes={unknown}: no association test of Gao & Wan stands for them; the tests cover "
                         f"{', '.join(known)}")
    kept = [n for n in names if set(TEST_ATTRIBUTES.get(n, ())) & set(wanted)]
    if not kept:
        raise ValueError(f"none of the tests {names} stands for {wanted}; tests per attribute are in "
                         "metricbias.book.reproduction.ch5_table3.TEST_ATTRIBUTES")
    return kept


def metric_suite(metric_names=None, *, profile: str = "offline", device: str = "auto", skip_metrics="") -> dict:
    """Label -> metric for a Table 3 run: ``metric_names`` (comma-separated registry names or specifications, or a
    list), or every metric configuration of ``profile``, less the registry names in ``skip_metrics``; a configuration
    is labelled as its metric labels it ("BLEU", "BERTScore-MiniLM")."""
    from ...bias import association
    from ... import profiles

    from ...metrics import Spec, parse

    skip = profiles.names_of(skip_metrics)
    if metric_names:
        listed = metric_names.split(",") if isinstance(metric_names, str) else metric_names
        # labelled as the metric labels itself ("Embedding average"), as the profile's configurations are
        entries = [Spec.of(spec.name, **spec.options) for spec in
                   (parse(m.strip()) for m in listed if m.strip() and m.strip() not in skip)]
    else:
        entries = profiles.suite(profile, skip)
    return association.build_metrics(entries, device=device)


def effect_size_grid(results: pd.DataFrame, alpha: float = SIGNIFICANCE, values_up_to: int = 8):
    """(d, labels) as grids for a heatmap: rows "test (level)" in Table 3's order, one column per metric.

    A label is "d*" style (as :func:`table3`) when there are at most ``values_up_to`` metrics, and only the
    star otherwise (the cells are too narrow for numbers); undefined cells are NaN in ``d``.
    """
    d = results.pivot(index=["test", "level"], columns="metric", values="effect_size")
    order = [key for key in row_order() if key in d.index]
    d = d.reindex(index=pd.MultiIndex.from_tuples(order, names=["test", "level"]),
                  columns=list(dict.fromkeys(results["metric"])))
    labels = table3(results, alpha).reindex(index=d.index, columns=d.columns)
    if d.shape[1] > values_up_to:
        labels = labels.map(lambda c: "*" if isinstance(c, str) and c.endswith("*") else "")
    names = [f"{t} ({lv})" for t, lv in d.index]
    d.index = labels.index = pd.Index(names, name="test")
    return d, labels


def paper_and_ours(compared: pd.DataFrame, results: pd.DataFrame) -> pd.DataFrame:
    """Gao & Wan's d (column "<metric> (paper)") next to ours (one column per configuration we ran), one row per
    test and level in Table 3's order."""
    paper_d = compared.drop_duplicates(["test", "level", "paper_metric"]).pivot(
        index=["test", "level"], columns="paper_metric", values="paper")
    ours_d = compared.pivot(index=["test", "level"], columns="metric", values="ours")
    columns = {}
    for paper_metric, labels in compared.groupby("paper_metric", sort=False)["metric"]:
        columns[f"{paper_metric} (paper)"] = paper_d[paper_metric]
        for m in dict.fromkeys(labels):
            columns[m] = ours_d[m]
    side = pd.DataFrame(columns)
    return side.reindex(table3(results).index).dropna(how="all").reset_index()


def paper_meteor(threshold: float = 0.1) -> pd.DataFrame:
    """Gao & Wan's METEOR cells with |d| >= ``threshold``."""
    t3 = gao_table3()
    return t3[(t3["paper_metric"] == "METEOR") & (t3["effect_size"].abs() >= threshold)]


def meteor_findings(results: pd.DataFrame, matched: pd.DataFrame | None) -> dict:
    """METEOR as an n-gram control, ours and Gao & Wan's: their cells with |d| >= 0.1 ("C6-T word (+0.27)", a
    list), the word-level tests on which their d is non-zero, the word-level (target, attribute) pairs ours scores
    above its no-match baseline (:func:`.ch5_association.matched_word_pairs`; None: METEOR did not run) and the
    word-level tests on which our d is defined (:func:`.names.of_all`: "none of the 18 word-level tests"); counts as
    text, "—" where METEOR did not run."""
    t3 = gao_table3()
    gao_word = t3[(t3["paper_metric"] == "METEOR") & (t3["level"] == "word") & (t3["effect_size"] != 0)]
    ours = results[(results["name"] == "meteor") & (results["level"] == "word")]
    return {"paper_cells": ", ".join(f"{r.test} {r.level} ({r.effect_size:+.2f})" for r in paper_meteor().itertuples()),
            "paper_word_tests": ", ".join(gao_word["test"]) or "none",
            "matched": (UNDEFINED if matched is None
                        else counted_noun(len(matched), "word-level (target, attribute) pair")),
            "word_defined": UNDEFINED if ours.empty else of_all(list(ours.loc[ours["effect_size"].notna(), "test"]),
                                                                list(ours["test"]), "word-level tests"),
            "word_tests": UNDEFINED if ours.empty else str(len(ours))}


def embedding_coverage(coverage: pd.DataFrame, compared: pd.DataFrame) -> pd.DataFrame:
    """Vector coverage of the word-level tests (:func:`.ch5_association.vector_coverage`) with
    Gao & Wan's embedding-average d and ours."""
    emb = compared[compared["paper_metric"] == "EmbAvg"][["test", "level", "paper", "ours"]]
    return coverage.merge(emb, on=["test", "level"], how="left").rename(
        columns={"paper": "d (paper)", "ours": "d (ours)"})


def _lean(positive: int, negative: int, p: float, alpha: float = 0.05) -> str:
    """A verdict on a sign test of ``positive`` against ``negative`` cells."""
    from ...bias.claims import UNDECIDED

    if not p < alpha:
        return UNDECIDED
    return "mostly positive" if positive > negative else "mostly negative"


def direction_findings(results: pd.DataFrame, compared: pd.DataFrame | None = None,
                       alpha: float = SIGNIFICANCE) -> dict:
    """Which way the model-based cells point. The cells share tests and configurations, so they are not independent:
    the verdict rests on the tests, the independent units (:func:`metricbias.bias.claims.cluster_sign_test`: per
    test, the sign of the mean d over its model-based configurations and levels), the social tests only (the
    baseline tests :data:`metricbias.datasets.seat.BASELINE_TESTS` contrast no social group: ``baseline_left_out``
    of them ran and are left out, named in ``baseline_names``), with ``model_tests``, the tests
    whose mean d is positive (``model_positive``, share ``model_positive_share``) and negative
    (``model_negative``), the two-sided sign test of the two (``model_sign_p``), its verdict ``model_lean`` and Gao &
    Wan's claim's ``claim_verdict``. The cells are described too (:func:`.ch5_association.direction`: ``model_cells``,
    ``model_cells_positive_share``, ``model_significant``). With ``compared`` (:func:`compare_with_gao`), the same
    cells in the two studies paired (:func:`paired_direction`, keys ``paired_*``, verdict ``paired_verdict``)."""
    from ...bias.claims import UNDECIDED, cluster_sign_test, format_p
    from ...datasets.seat import BASELINE_TESTS
    from .ch5_association import MODEL_FAMILIES, direction

    cells = direction(results, alpha)
    model = results[results["family"].isin(MODEL_FAMILIES)]
    baseline = model["test"].isin(BASELINE_TESTS)
    baseline_names = list(dict.fromkeys(model.loc[baseline, "test"]))
    tests = cluster_sign_test(model.loc[~baseline, "effect_size"], model.loc[~baseline, "test"])
    lean = _lean(tests["positive"], tests["negative"], tests["p_value"])
    # Gao & Wan's claim: model-based metrics carry the stereotype the tests encode (most tests lean d > 0)
    verdict = {"mostly positive": "holds", "mostly negative": "reverses"}.get(lean, UNDECIDED)
    out = {"model_cells": cells["model_cells"], "model_cells_positive_share": cells["model_positive_share"],
           "model_significant": cells["model_significant"], "model_tests": tests["clusters"],
           "model_positive": tests["positive"], "model_negative": tests["negative"],
           "model_positive_share": tests["positive_share"], "model_sign_p": tests["p_value"],
           "model_sign_test": format_p(tests["p_value"]), "model_lean": lean, "claim_verdict": verdict,
           "baseline_left_out": len(baseline_names), "baseline_names": ", ".join(baseline_names) or "none"}
    if compared is not None:
        pair = paired_direction(compared[compared["family"].isin(MODEL_FAMILIES)])
        more = ("ours" if pair["ours_only"] > pair["paper_only"] else "Gao & Wan's")
        out.update({f"paired_{k}": v for k, v in pair.items()})
        out["paired_test"] = format_p(pair["p_value"])
        out["paired_verdict"] = (f"more often positive in {more}" if pair["p_value"] < 0.05 else UNDECIDED)
    return out


def spearman_findings(agree: pd.DataFrame) -> dict:
    """How closely Gao & Wan's d and ours agree over the configurations: the median Spearman ρ, and how many
    configurations have an interval above zero, below zero, or none (fewer than four cells both define, or ρ = ±1);
    ``spearman_sides``: those counts in words, the zero ones left out."""
    rho = agree["spearman_d"]
    return {"spearman_median": float(rho.median()) if rho.notna().any() else float("nan"),
            "spearman_configurations": len(agree), "spearman_above": int((agree["spearman_low"] > 0).sum()),
            "spearman_below": int((agree["spearman_high"] < 0).sum()),
            "spearman_no_interval": int(agree["spearman_low"].isna().sum()),
            "spearman_sides": counted([("above zero for", int((agree["spearman_low"] > 0).sum()), ""),
                                       ("below zero for", int((agree["spearman_high"] < 0).sum()), ""),
                                       ("across zero for", int(((agree["spearman_low"] <= 0)
                                                                & (agree["spearman_high"] >= 0)).sum()), ""),
                                       ("is undefined for", int(agree["spearman_low"].isna().sum()), "")])}
