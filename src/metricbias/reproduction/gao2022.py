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
# (chapter 5: the Table 3 run and its comparisons, then the chapter's sentences and headline numbers)
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
    from ..datasets.seat import TESTS

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
                         "metricbias.reproduction.gao2022.TEST_ATTRIBUTES")
    return kept


def metric_suite(metric_names=None, *, profile: str = "offline", device: str = "auto", skip_metrics="") -> dict:
    """Label -> metric for a Table 3 run: ``metric_names`` (comma-separated registry names or a list), or every
    metric configuration of ``profile``, less the registry names in ``skip_metrics``."""
    from ..bias import association
    from .. import profiles

    skip = profiles.names_of(skip_metrics)
    if metric_names:
        listed = metric_names.split(",") if isinstance(metric_names, str) else metric_names
        entries = [m.strip() for m in listed if m.strip() and m.strip() not in skip]
    else:
        entries = profiles.prepare(profiles.suite(profile, skip), device=device, progress=False)
    return association.build_metrics(entries, device=device)


def effect_size_grid(results: pd.DataFrame, alpha: float = SIGNIFICANCE, values_up_to: int = 8):
    """(d, labels) as grids for a heatmap: rows "test (level)" in Table 3's order, one column per metric.

    A label is "d*" style (as :func:`table3`) when there are at most ``values_up_to`` metrics, and only the
    star otherwise (the cells are too narrow for numbers); undefined cells are NaN in ``d``.
    """
    d = results.pivot(index=["test", "level"], columns="metric", values="effect_size")
    order = [key for key in _row_order() if key in d.index]
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


#: :func:`agreement`'s columns as the book shows them; those computed from Gao & Wan's numbers are marked
AGREEMENT_LABELS = {"paper_metric": "Gao & Wan", "metric": "ours", "spearman_d": "Spearman ρ of d",
                    "same_sign": "same sign", "paper_positive": "d > 0 (paper)", "ours_positive": "d > 0 (ours)",
                    "paper_significant": "p ≤ 0.01 (paper)", "ours_significant": "p ≤ 0.01 (ours)",
                    "both_significant": "p ≤ 0.01 (both)"}


def comparison_lines(compared: pd.DataFrame, agree: pd.DataFrame) -> str:
    """One Markdown bullet per metric family both studies measure: Spearman ρ of d, same printed sign, and the
    share of cells with p <= 0.01 per level in each study."""
    lines = []
    rho = agree.set_index("metric")["spearman_d"]
    for (paper_metric, metric), g in compared.groupby(["paper_metric", "metric"], sort=False):
        ours_sig = g.groupby("level")["ours_significant"].mean()
        paper_sig = g.groupby("level")["paper_significant"].mean()
        shares = "; ".join(f"{lv}: ours {ours_sig[lv]:.0%}, paper {paper_sig[lv]:.0%}" for lv in ours_sig.index)
        rho_text = "— (fewer than three defined cells)" if np.isnan(rho[metric]) else f"{rho[metric]:.2f}"
        lines.append(f"- **{paper_metric}** (ours: {metric}): Spearman ρ between the two columns of d = "
                     f"{rho_text}; same printed sign in {g['same_sign'].mean():.0%} of {len(g)} cells; share "
                     f"of cells with p ≤ 0.01 by level ({shares}).")
    return "\n".join(lines) if lines else "No metric family of Gao & Wan's Table 3 ran in this profile."


def paper_meteor(threshold: float = 0.1) -> pd.DataFrame:
    """Gao & Wan's METEOR cells with |d| >= ``threshold``."""
    t3 = gao_table3()
    return t3[(t3["paper_metric"] == "METEOR") & (t3["effect_size"].abs() >= threshold)]


def meteor_note(matched: pd.DataFrame | None) -> str:
    """Why Gao & Wan's METEOR is no n-gram control and what ours does (Markdown, no math); ``matched``: the
    word-level pairs our METEOR matches (:func:`metricbias.bias.association_summary.matched_pairs`), None when
    METEOR did not run."""
    cells = ", ".join(f"{r.test} {r.level} ({r.effect_size:+.2f})" for r in paper_meteor().itertuples())
    note = (f"Gao & Wan's METEOR is not a control either: |d| ≥ 0.1 in {cells}. Their METEOR is MultEval's, the "
            "Java METEOR whose English matcher adds a paraphrase table to the exact, stem and synonym stages; "
            "phrase-level paraphrases can link a target and an attribute that share no stem or synset. ")
    if matched is None:
        return note
    if not len(matched):
        return note + ("Ours is NLTK's METEOR (exact, stem, WordNet synonyms; no paraphrases). No target of these "
                       "tests shares a stem or a synset with an attribute, so at word level it behaves like BLEU: "
                       "every r is the same and d is undefined. At sentence level it only sees the templates, like "
                       "the other n-gram metrics.")
    return note + (f"Ours is NLTK's METEOR (exact, stem, WordNet synonyms; no paraphrases). It matches the "
                   f"{len(matched)} pairs above, and those alone give it a word-level association.")


def embedding_coverage(coverage: pd.DataFrame, compared: pd.DataFrame) -> pd.DataFrame:
    """Vector coverage of the word-level tests (:func:`metricbias.bias.association_summary.vector_coverage`) with
    Gao & Wan's embedding-average d and ours."""
    emb = compared[compared["paper_metric"] == "EmbAvg"][["test", "level", "paper", "ours"]]
    return coverage.merge(emb, on=["test", "level"], how="left").rename(
        columns={"paper": "d (paper)", "ours": "d (ours)"})


def direction_findings(results: pd.DataFrame, alpha: float = SIGNIFICANCE) -> dict:
    """Which way the model-based cells point, ours and Gao & Wan's on the same tests and families: shares with
    d > 0 (the direction of the stereotype the test encodes), significant cells, and a two-sided sign test of the
    positive against the negative cells in each study (``model_sign_p``, ``gao_sign_p``); ``direction_sentence``
    says what the tests show."""
    from ..bias.association_summary import MODEL_FAMILIES, direction

    ours = direction(results, alpha)
    model_names = set(results.loc[results["family"].isin(MODEL_FAMILIES), "name"])
    ran = set(zip(results["test"], results["level"]))
    gao = gao_table3()
    gao = gao[(gao["paper_metric"] != "METEOR") & gao["name"].isin(model_names)
              & np.array([(t, lv) in ran for t, lv in zip(gao["test"], gao["level"])], dtype=bool)]
    from ..bias.claims import format_p, sign_tests

    gao_positive = int((gao["effect_size"] > 0).sum())
    ours_positive = int(round(ours["model_positive_share"] * ours["model_cells"])) if ours["model_cells"] else 0
    # two-sided sign tests of "a cell points either way with probability 1/2", ours and theirs (no BH: two
    # studies, each its own question); the cells share tests and metrics, so the p-values are optimistic
    tests = sign_tests([ours_positive, gao_positive], [ours["model_cells"] - ours_positive, len(gao) - gao_positive])
    p_ours, p_gao = (float(tests["p_value"].iloc[i]) for i in (0, 1))
    shown = [tests["n_first"].iloc[i] > tests["n_second"].iloc[i] and p < 0.05 for i, p in enumerate((p_ours, p_gao))]
    tested = (f"two-sided sign test over the cells: ours {format_p(p_ours)}, Gao & Wan's {format_p(p_gao)}; the "
              "cells share tests and metrics, so they are not independent and these p-values are optimistic")
    if all(shown):
        sentence = (f"In both studies most cells point the way of the stereotype ({tested}), as WEAT and SEAT do on "
                    "the embeddings themselves.")
    elif any(shown):
        sentence = (f"Only {'our' if shown[0] else 'Gao & Wan’s'} cells point the way of the stereotype more often "
                    f"than not beyond chance ({tested}).")
    else:
        sentence = f"Neither study's cells point one way more often than chance allows ({tested})."
    return {**ours, "gao_positive_share": float(gao_positive / len(gao)) if len(gao) else float("nan"),
            "gao_cells": len(gao), "gao_significant": int(gao["significant"].sum()), "model_sign_p": p_ours,
            "gao_sign_p": p_gao, "model_sign_test": format_p(p_ours), "direction_sentence": sentence}


def spearman_findings(agree: pd.DataFrame) -> dict:
    """Per-metric Spearman ρ between Gao & Wan's d and ours with its 95% interval over the defined cells
    ("wmd 0.80 [0.41, 0.95], ..."), their median, and a sentence when the agreement is loose (median below 0.5;
    empty otherwise)."""
    from ..bias.claims import spearman_interval

    defined = agree.dropna(subset=["spearman_d"])
    median = float(agree["spearman_d"].median())

    def entry(r) -> str:  # ρ with its 95% interval over the defined cells (none below four cells)
        low, high = spearman_interval(r.spearman_d, int(r.defined))
        return f"{r.metric} {r.spearman_d:.2f}" + ("" if np.isnan(low) else f" [{low:.2f}, {high:.2f}]")

    return {"spearman_list": ", ".join(entry(r) for r in defined.itertuples()) or "none",
            "spearman_median": median,
            "spearman_sentence": ("The agreement is loose. That is no surprise: the models differ (above), and a test "
                                  "can change sign with the model." if median < 0.5 else "")}


def ngram_summary(results: pd.DataFrame, matched: pd.DataFrame | None) -> str:
    """The n-gram control bullet's second half (Markdown, no math): the largest sentence-level |d|, chrF, and
    METEOR ours and Gao & Wan's."""
    from ..bias.association_summary import ngram_findings

    f = ngram_findings(results)
    t3 = gao_table3()
    gao_word = t3[(t3["paper_metric"] == "METEOR") & (t3["level"] == "word") & (t3["effect_size"] != 0)]
    parts = []
    if not np.isnan(f["words_only_sent_max_abs_d"]):
        parts.append(f"The largest sentence-level |d| is {f['words_only_sent_max_abs_d']:.2f}, where only the "
                     "templates overlap.")
    if not np.isnan(f["chrf_max_abs_d"]):
        parts.append(f"chrF matches characters and reaches |d| = {f['chrf_max_abs_d']:.2f}.")
    if matched is not None and not len(matched):
        parts.append("METEOR's stems and synonyms could create an association, but no target of these tests shares "
                     "a stem or a synset with an attribute.")
    if len(gao_word):
        parts.append("Gao & Wan's METEOR is non-zero at word level on " + ", ".join(gao_word["test"]) + ".")
    return " ".join(parts)


def profile_notes(results: pd.DataFrame, tests, sample_size: int) -> str:
    """The summary bullets that depend on what ran (Markdown list, no math): the static-embedding metrics on
    single words (when all three ran), and the power of the sets (drawn down or whole)."""
    from ..bias.association_summary import static_spread

    spread, n_single = static_spread(results, tests)
    bullets = []
    if not np.isnan(spread):
        bullets.append(f"**Static embeddings.** On the {n_single} word-level tests whose texts are single words, the "
                       "embedding average, vector extrema and greedy matching reduce to the cosine of two word "
                       f"vectors; their effect sizes differ by at most {spread:.1g}. Gao & Wan, who omit the latter "
                       "two from Table 3, call them very similar.")
    if not sample_size:
        bullets.append("**Power.** Every set of this run is whole, so its cells have as many targets as Gao & Wan's.")
    else:
        bullets.append(f"**Power.** This run draws {sample_size} texts per sentence-level set, so its sentence-level "
                       "cells have far fewer targets than Gao & Wan's. Whether matching metrics are more biased on "
                       "sentences than on words, as Gao & Wan find, cannot be settled at this sample size; "
                       "`metricbias weat --test all --metric NAME` runs the full sets.")
    return "\n".join(f"- {b}" for b in bullets)


def headline_findings(results: pd.DataFrame, compared: pd.DataFrame, agree: pd.DataFrame) -> dict:
    """Chapter 5's headline numbers: the share of model-based cells pointing the stereotype's way (ours and Gao &
    Wan's), the significant cells, the n-gram control, and how closely Gao & Wan's d and ours agree."""
    from ..bias.association_summary import ngram_findings

    direction = direction_findings(results)
    ngram = ngram_findings(results)
    return {
        "model_positive_share": direction["model_positive_share"], "model_cells": direction["model_cells"],
        "model_significant": direction["model_significant"],
        "gao_positive_share": direction["gao_positive_share"], "gao_cells": direction["gao_cells"],
        "gao_significant": direction["gao_significant"],
        "ngram_word_undefined": ngram["words_only_word_undefined"], "ngram_word_cells": ngram["words_only_word_cells"],
        "spearman_median": float(agree["spearman_d"].median()) if len(agree) else float("nan"),
    }


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
    skip = profiles.names_of(skip_metrics)
    entries = [(n, n, {}) for n in names if n not in skip] if names else profiles.suite(profile, skip)
    entries = profiles.prepare(entries, device=device, progress=False)
    return [(label, metrics.get(name, **options)) for label, name, options in entries]


def without(scorers: list, skip: str) -> tuple[list, list[str]]:
    """``(kept, left_out_labels)``: ``scorers`` without the registry names of ``skip`` (comma-separated)."""
    from .. import profiles

    names = profiles.names_of(skip)
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


def ngram_reproduction_summary(repro: pd.DataFrame) -> dict:
    """From :func:`ngram_reproduction`: how many of the n-gram metrics are within tolerance of Table 9 with the
    experts stacked (``within_stacked``) and with their mean (``within_mean``), of ``metrics``."""
    stacked = repro[repro["judges"] == "stacked"]
    return {"metrics": int(repro["paper_metric"].nunique()),
            "within_stacked": int(stacked["within"].sum()),
            "within_mean": int(repro.loc[repro["judges"] == "mean", "within"].sum()),
            "off_stacked": ", ".join(stacked.loc[~stacked["within"], "paper_metric"]) or "none"}


def stacking_effect(performance_table: pd.DataFrame, statistic: str = "spearman") -> dict:
    """How stacking the experts moves the example-level correlations against using their mean, on the same
    examples (two protocols on one data set, so a count rather than a test): ``lower`` of ``compared``
    (configuration × subset × before/after swapping)."""
    rows = performance_table[performance_table["statistic"] == statistic]
    keys = ["metric", "aggregation", "subset"]
    wide = rows.pivot_table(index=keys, columns="judges", values=["origin", "swap"], sort=False)
    if "stacked" not in wide.columns.get_level_values(1) or "mean" not in wide.columns.get_level_values(1):
        return {"lower": 0, "compared": 0}
    stacked = wide.xs("stacked", axis=1, level=1).to_numpy().ravel()
    mean = wide.xs("mean", axis=1, level=1).to_numpy().ravel()
    ok = ~(np.isnan(stacked) | np.isnan(mean))
    return {"lower": int((stacked[ok] < mean[ok]).sum()), "compared": int(ok.sum())}


def table7_rouge_sentence(t7: pd.DataFrame, n_systems: int, close: float = 0.03) -> str:
    """What Table 7's ROUGE rows say about the data (Markdown, no math): per ROUGE row we ran, our Spearman beside
    the paper's, and whether the paper's value lies inside our 95% interval over ``n_systems`` systems
    (:func:`metricbias.bias.claims.spearman_interval`)."""
    from ..bias.claims import spearman_interval

    rouge = t7[t7["paper_metric"].str.startswith("ROUGE") & t7["metric"].notna()]
    if rouge.empty:
        return "No ROUGE row of Table 7 ran in this profile, so the data cannot be checked against the paper here."
    parts, inside, near = [], 0, 0
    for r in rouge.itertuples():
        low, high = spearman_interval(r.ours_origin, n_systems)
        hit = low <= r.paper_origin <= high
        inside += hit
        near += abs(r.diff_origin) <= close + 1e-9
        parts.append(f"{r.paper_metric} {r.ours_origin:.3f} against {r.paper_origin:.3f} (difference "
                     f"{r.diff_origin:+.3f}; our 95% interval {low:.2f} to {high:.2f})")
    n = len(rouge)
    verdict = ("so on these rows the data and the human scores are consistent with the paper's, although an interval "
               f"over {n_systems} systems is too wide to show that they are the same" if inside == n else
               "so the data or the human scores differ from the paper's on at least one ROUGE row")
    return (f"The ROUGE rows: {'; '.join(parts)}. {near} of {n} are within {close} of Table 7, and Table 7's value "
            f"lies inside our interval (Fisher z with Bonett and Wright's standard error) for {inside} of {n}, "
            f"{verdict}.")


def metric_group(name: str) -> str:
    """Gao & Wan's two groups (their section 3.1): "n-gram" for the n-gram family, "model-based" for every metric
    that uses word vectors or a trained model (static embeddings included, as in their list)."""
    from ..metrics.registry import metric_class

    return "n-gram" if metric_class(name).family == "ngram" else "model-based"


#: what :func:`shift_claim`'s verdicts mean for Gao & Wan's claim
SHIFT_VERDICTS = {"higher": "model-based configurations shift more, as Gao & Wan claim",
                  "lower": "model-based configurations shift less, against Gao & Wan's claim"}


def shift_claim(performances: dict, *, n_resamples: int = 9999, seed: int = 0) -> pd.DataFrame:
    """Gao & Wan's claim that the correlations of model-based metrics move more after swapping than those of n-gram
    metrics, tested per set and subset of ``performances`` (name -> :func:`~metricbias.metaeval.analysis.performance`
    table): mean |swap − origin| of the set's main statistic (Spearman, or DARR tau) over the model-based and the
    n-gram configurations (metric × aggregation), and the difference with its 95% bootstrap interval, the two groups
    resampled independently (:func:`metricbias.bias.claims.compare`)."""
    from ..bias import claims

    rows = []
    for set_name, table in performances.items():
        stat = "darr_tau" if (table["statistic"] == "darr_tau").any() else "spearman"
        for subset, g in table[table["statistic"] == stat].groupby("subset", sort=False):
            shift = g["delta"].abs()
            group = g["name"].map(metric_group)
            x, y = shift[group == "model-based"].dropna(), shift[group == "n-gram"].dropna()
            row = {"set": set_name, "subset": subset, "statistic": stat, "model-based configurations": len(x),
                   "n-gram configurations": len(y), "mean |shift| model-based": x.mean() if len(x) else np.nan,
                   "mean |shift| n-gram": y.mean() if len(y) else np.nan}
            if min(len(x), len(y)) >= 2:
                c = claims.compare(x, y, paired=False, n_resamples=n_resamples, seed=seed)
                row.update(difference=c["difference"], ci_low=c["ci_low"], ci_high=c["ci_high"],
                           verdict=SHIFT_VERDICTS.get(c["verdict"], c["verdict"]))
            else:
                row.update(difference=row["mean |shift| model-based"] - row["mean |shift| n-gram"], ci_low=np.nan,
                           ci_high=np.nan, verdict="too few configurations in a group (fewer than two) to test")
            rows.append(row)
    return pd.DataFrame(rows)


def shift_claim_sentence(claim: pd.DataFrame) -> str:
    """One Markdown bullet per row of :func:`shift_claim`: the two means, the difference with its interval and the
    verdict."""
    from ..bias.claims import interval_text

    lines = []
    for r in claim.to_dict("records"):
        where = f"{r['set']}" + ("" if r["subset"] == "all" else " (male-only hypotheses)")
        diff = (interval_text({"difference": r["difference"], "ci_low": r["ci_low"], "ci_high": r["ci_high"],
                               "confidence": 0.95}, digits=3) if not np.isnan(r["ci_low"]) else
                ("undefined" if np.isnan(r["difference"]) else f"{r['difference']:+.3f}"))
        n_model, n_ngram = r["model-based configurations"], r["n-gram configurations"]
        lines.append(f"- **{where}**: mean |shift| {r['mean |shift| model-based']:.3f} over {n_model} model-based "
                     f"configuration{'s' if n_model != 1 else ''}, {r['mean |shift| n-gram']:.3f} over {n_ngram} "
                     f"n-gram one{'s' if n_ngram != 1 else ''}; difference {diff}: {r['verdict']}.")
    return "\n".join(lines) if lines else "No correlation ran, so the claim is not tested here."


def preference_claim_sentence(pref: pd.DataFrame) -> str:
    """Gao & Wan's first claim, that model-based metrics prefer the male hypothesis, against the sign tests of
    :func:`~metricbias.metaeval.analysis.preference_tests` (BH across the configurations of the table)."""
    from ..metaeval.analysis import preference_tests

    tested = preference_tests(pref)
    model = tested[tested["name"].map(metric_group) == "model-based"]
    label = model["metric"] + " (" + model["aggregation"] + ")"
    male, female = label[model["prefers"] == "male"], label[model["prefers"] == "female"]
    head = "Gao & Wan's first claim, that model-based metrics prefer the male hypothesis,"
    if model.empty:
        return f"{head} is not tested here: no model-based metric ran."
    text = (f"{head} holds for {len(male)} of the {len(model)} model-based configurations"
            + (f" ({', '.join(male)})" if len(male) else "") + " by the sign tests above")
    if len(female):
        text += f"; {len(female)} significantly prefer the female one ({', '.join(female)})"
    return text + ("; the others are not distinguishable from no preference at this size." if
                   len(male) + len(female) < len(model) else ".")


def single_gender_claim(stacked: pd.DataFrame, *, n_resamples: int = 9999, seed: int = 0) -> dict:
    """Do the Flickr8k correlations move more on the male-only subset than on all examples? Per configuration,
    |shift| on the subset against |shift| on all examples (Spearman), paired: the mean difference with its 95%
    bootstrap interval and the verdict (:func:`metricbias.bias.claims.compare`); ``sentence`` says it."""
    from ..bias import claims

    wide = stacked[stacked["statistic"] == "spearman"].pivot_table(
        index=["metric", "aggregation"], columns="subset", values="delta", sort=False).abs().dropna()
    if "single_gender" not in wide or len(wide) < 2:
        return {"configurations": len(wide), "sentence": "The male-only subset is too small here to compare."}
    c = claims.compare(wide["single_gender"], wide["all"], paired=True, n_resamples=n_resamples, seed=seed)
    words = {"higher": "the correlations move more on the male-only subset",
             "lower": "the correlations move less on the male-only subset"}.get(c["verdict"], c["verdict"])
    return {"configurations": len(wide), **c,
            "sentence": (f"Over the {len(wide)} configurations, |shift| on the male-only subset minus |shift| on all "
                         f"examples is {claims.interval_text(c, digits=3)}, paired by configuration: {words}.")}


# --- out-of-vocabulary words: dropped (classic WEAT, the default) or scored as zero vectors --------------
#: the static-embedding metric whose dropped words chapter 5 shows and whose tests it reruns with ``oov="zero"``
OOV_METRIC = "embedding_average"


def oov_words(tests, suite: dict, name: str = OOV_METRIC) -> pd.DataFrame:
    """The words metric ``name`` of ``suite`` cannot represent in each word-level test (dropped by default), for the
    page: test, words kept, words dropped and the dropped words of each set; empty without that metric."""
    from ..bias import association
    from ..bias.association_summary import metric_named

    metric = metric_named(suite, name)
    words = [t for t in tests if t.level == "word"]
    cols = ["test", "targets kept", "attributes kept", "dropped", "X", "Y", "A", "B", "runs"]
    if metric is None or not words:
        return pd.DataFrame(columns=cols)
    d = association.dropped_words(words, metric)
    d = d.rename(columns={"n_targets": "targets kept", "n_attributes": "attributes kept", "n_dropped": "dropped"})
    return d.assign(runs=d["runs"].map({True: "yes", False: "no"}))[cols]


def oov_zero_run(tests, suite: dict, *, name: str = OOV_METRIC, n_permutations: int = 100_000, seed: int = 0,
                 cache=True) -> pd.DataFrame:
    """The word-level tests of ``tests`` through metric ``name`` of ``suite`` with ``oov="zero"`` (words without a
    vector kept, scored as the zero vector: the convention before classic WEAT's dropping); empty without it."""
    from ..bias import association
    from ..bias.association_summary import label_of

    label = label_of(suite, name)
    words = [t for t in tests if t.level == "word"]
    if label is None or not words:
        return pd.DataFrame(columns=["test", "level", "metric", "effect_size", "p_value"])
    return association.run(words, {label: suite[label]}, cache=cache, n_permutations=n_permutations, seed=seed,
                           oov="zero")


def _finding(d, p, alpha: float = SIGNIFICANCE) -> str:
    if pd.isna(d):
        return "undefined"
    return f"{'positive' if d > 0 else 'negative'}{', p ≤ 0.01' if p <= alpha else ''}"


def oov_comparison(results: pd.DataFrame, zero: pd.DataFrame, alpha: float = SIGNIFICANCE) -> pd.DataFrame:
    """The word-level cells run both ways: ``test, metric, dropped, d (dropped), p (dropped), d (zero), p (zero)``
    and ``changed`` (whether the finding — undefined, or the sign of d and p ≤ ``alpha`` — differs)."""
    keys = ["test", "level", "metric"]
    both = results.merge(zero, on=keys, suffixes=("", "_zero"))
    out = pd.DataFrame({"test": both["test"], "metric": both["metric"], "words dropped": both["n_dropped"],
                        "d (dropped)": both["effect_size"], "p (dropped)": both["p_value"],
                        "d (zero)": both["effect_size_zero"], "p (zero)": both["p_value_zero"]})
    drop = [_finding(d, p, alpha) for d, p in zip(out["d (dropped)"], out["p (dropped)"])]
    zero_ = [_finding(d, p, alpha) for d, p in zip(out["d (zero)"], out["p (zero)"])]
    return out.assign(changed=[a != b for a, b in zip(drop, zero_)], finding_dropped=drop, finding_zero=zero_)


def oov_sentence(comparison: pd.DataFrame) -> str:
    """Which findings change between dropping out-of-vocabulary words (the default) and ``oov="zero"`` (Markdown,
    no math): the tests left undefined by dropping, and among the tests defined both ways, the changed findings
    and the largest move of d."""
    if comparison.empty:
        return f"{OOV_METRIC} did not run here, so the two conventions are not compared."
    metric = comparison["metric"].iloc[0]
    text = (f"Through {metric}, {int((comparison['words dropped'] > 0).sum())} of the {len(comparison)} word-level "
            "tests lose words.")
    lost = comparison[comparison["d (dropped)"].isna() & comparison["d (zero)"].notna()]
    if len(lost):
        text += (f" Dropping them leaves {len(lost)} test{'s' if len(lost) != 1 else ''} with a set of fewer than two "
                 f"words, so {'their' if len(lost) != 1 else 'its'} d is undefined: "
                 + ", ".join(f"{r['test']} ({r['finding_zero']} with zero vectors)" for r in lost.to_dict("records"))
                 + ".")
    both = comparison[comparison["d (dropped)"].notna() & comparison["d (zero)"].notna()]
    if len(both):
        changed = both[both["changed"]]
        move = (both["d (dropped)"] - both["d (zero)"]).abs()
        top = both.loc[move.idxmax()]
        text += (f" Of the {len(both)} tests defined both ways, the finding (the sign of d and whether p ≤ 0.01) "
                 f"changes in {len(changed)}"
                 + (": " + ", ".join(f"{r['test']} ({r['finding_zero']} → {r['finding_dropped']})"
                                      for r in changed.to_dict("records")) if len(changed) else "")
                 + (f"; d moves by up to {move.max():.2f} ({top['test']}: {top['d (zero)']:.2f} with zero vectors, "
                    f"{top['d (dropped)']:.2f} with the words dropped)." if round(move.max(), 2) > 0 else
                    "; d is the same to two decimals."))
    return text
