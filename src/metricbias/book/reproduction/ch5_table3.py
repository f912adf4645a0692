"""Chapter 5: Gao & Wan's Table 3 (WEAT/SEAT effect sizes through metrics) beside ours: our results in its
shape (:func:`table3`), cell by cell (:func:`compare_with_gao`) and per metric (:func:`agreement`), the
metrics the chapter runs, and the chapter's sentences and headline numbers.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .gao2022 import SIGNIFICANCE, row_order, gao_table3


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
    """Label -> metric for a Table 3 run: ``metric_names`` (comma-separated registry names or a list), or every
    metric configuration of ``profile``, less the registry names in ``skip_metrics``."""
    from ...bias import association
    from ... import profiles

    skip = profiles.names_of(skip_metrics)
    if metric_names:
        listed = metric_names.split(",") if isinstance(metric_names, str) else metric_names
        entries = [m.strip() for m in listed if m.strip() and m.strip() not in skip]
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
    word-level pairs our METEOR matches (:func:`.ch5_association.matched_word_pairs`), None when
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
    """Vector coverage of the word-level tests (:func:`.ch5_association.vector_coverage`) with
    Gao & Wan's embedding-average d and ours."""
    emb = compared[compared["paper_metric"] == "EmbAvg"][["test", "level", "paper", "ours"]]
    return coverage.merge(emb, on=["test", "level"], how="left").rename(
        columns={"paper": "d (paper)", "ours": "d (ours)"})


def direction_findings(results: pd.DataFrame, alpha: float = SIGNIFICANCE) -> dict:
    """Which way the model-based cells point, ours and Gao & Wan's on the same tests and families: shares with
    d > 0 (the direction of the stereotype the test encodes), significant cells, and a two-sided sign test of the
    positive against the negative cells in each study (``model_sign_p``, ``gao_sign_p``); ``direction_sentence``
    says what the tests show."""
    from .ch5_association import MODEL_FAMILIES, direction

    ours = direction(results, alpha)
    model_names = set(results.loc[results["family"].isin(MODEL_FAMILIES), "name"])
    ran = set(zip(results["test"], results["level"]))
    gao = gao_table3()
    gao = gao[(gao["paper_metric"] != "METEOR") & gao["name"].isin(model_names)
              & np.array([(t, lv) in ran for t, lv in zip(gao["test"], gao["level"])], dtype=bool)]
    from ...bias.claims import format_p, sign_tests

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
    from ...bias.claims import UNDECIDED

    # Gao & Wan's claim: model-based metrics carry the stereotype the tests encode (most cells d > 0)
    against = tests["n_first"].iloc[0] < tests["n_second"].iloc[0] and p_ours < 0.05
    verdict = "holds" if shown[0] else "reverses" if against else UNDECIDED
    return {**ours, "claim_verdict": verdict,
            "gao_positive_share": float(gao_positive / len(gao)) if len(gao) else float("nan"),
            "gao_cells": len(gao), "gao_significant": int(gao["significant"].sum()), "model_sign_p": p_ours,
            "gao_sign_p": p_gao, "model_sign_test": format_p(p_ours), "direction_sentence": sentence}


def spearman_findings(agree: pd.DataFrame) -> dict:
    """Per-metric Spearman ρ between Gao & Wan's d and ours with its 95% interval over the defined cells
    ("wmd 0.80 [0.41, 0.95], ..."), their median, and a sentence when the agreement is loose (median below 0.5;
    empty otherwise)."""
    from ...bias.claims import spearman_interval

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
    from .ch5_association import ngram_findings

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


def profile_notes(results: pd.DataFrame, tests, sample_size: int, drawn=()) -> str:
    """The summary bullets that depend on what ran (Markdown list, no math): the static-embedding metrics on
    single words (when all three ran), and the power of the sets (drawn down or whole; ``drawn``: the configurations
    run on drawn sets in an otherwise whole run)."""
    from .ch5_association import static_spread

    spread, n_single = static_spread(results, tests)
    bullets = []
    if not np.isnan(spread):
        bullets.append(f"**Static embeddings.** On the {n_single} word-level tests whose texts are single words, the "
                       "embedding average, vector extrema and greedy matching reduce to the cosine of two word "
                       f"vectors; their effect sizes differ by at most {spread:.1g}. Gao & Wan, who omit the latter "
                       "two from Table 3, call them very similar.")
    if not sample_size and drawn:
        bullets.append("**Power.** Every set of this run is whole, so its cells have as many targets as Gao & Wan's, "
                       f"but for the sentence-level cells of {', '.join(drawn)}, run on drawn sets: fewer targets, "
                       "less power.")
    elif not sample_size:
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
    from .ch5_association import ngram_findings

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
