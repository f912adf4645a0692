"""Chapter 7: Table 7's BLEU under the settings Gao & Wan leave unstated, the page's compact tables, and the
figures that explain the REALSumm gaps (capitals inside sentences, static-vector coverage)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from metricbias import backbones, metrics
from metricbias.book.reproduction import ch7_gender_swap, ch7_realsumm, gao2022 as gao
from metricbias.datasets.meta_eval import JudgedSet
from metricbias.metaeval import analysis

REFERENCE = "The Cat sat on the Mat today"
#: four systems, one summary each; human: A 4 > B 3 > D 2 > C 1. Lowercased, A equals the reference (BLEU 1) and
#: BLEU orders the systems as the humans do. With case kept, B ("The Cat sat on": 4/7, 3/6, 2/5, 1/4 matches) beats
#: A ("sat on the", "today": 4/7, 2/6, 1/5, 0/4): metric ranks B 4, A 3, D 2, C 1 against A 4, B 3, D 2, C 1,
#: so rho = 1 − 6 · 2 / (4 · 15) = 0.8.
SUMMARIES = {"A": ("the cat sat on the mat today", 4.0), "B": ("The Cat sat on a rug yesterday", 3.0),
             "D": ("the dog ran on grass", 2.0), "C": ("xyz", 1.0)}


def _realsumm():
    frame = pd.DataFrame([{"item_id": "1", "system_id": s, "hypothesis": h, "references": (REFERENCE,),
                           "human:litepyramid_recall": v} for s, (h, v) in SUMMARIES.items()])
    return JudgedSet("realsumm", frame, levels=("system",))


def test_system_bleu_per_system():
    data = _realsumm()
    for level in ("sentence", "corpus"):
        lower = ch7_realsumm.system_bleu(data, level, "lowercased", "none")
        kept = ch7_realsumm.system_bleu(data, level, "kept", "none")
        assert lower["A"] == pytest.approx(1.0)  # the reference, lowercased
        assert kept["A"] < kept["B"] < 1.0 and kept["D"] > kept["C"]
    with pytest.raises(ValueError, match="level"):
        ch7_realsumm.system_bleu(data, "document", "kept", "none")


def test_bleu_variants_reorder_the_systems_by_case():
    v = ch7_realsumm.bleu_variants(_realsumm(), gao.table7()).set_index("variant")
    assert list(v.index) == list(ch7_realsumm.BLEU_VARIANTS)
    lowered = v[v["case"] == "lowercased"]
    kept = v[v["case"] == "kept"]
    assert lowered["origin"].to_numpy() == pytest.approx(1.0) and kept["origin"].to_numpy() == pytest.approx(0.8)
    assert (v["swap"] == v["origin"]).all()  # no gendered word: the swap changes nothing
    assert (v["paper_origin"] == 0.054).all() and (v["n_systems"] == 4).all()  # Table 7's BLEU
    assert v["difference"].to_numpy() == pytest.approx(v["origin"].to_numpy() - 0.054)
    # rho 0.8 over 4 systems: z = 1.0986, se = sqrt(1.32), interval tanh(1.0986 ± 2.2518) = -0.82 to 0.997
    assert kept["ci_low"].iloc[0] == pytest.approx(-0.8185, abs=1e-3) and kept["paper_inside"].all()


def _variants(values):
    rows = [{"variant": label, "level": level, "case": case, "tokens": tokens, "origin": value, "swap": value - 0.01,
             "paper_origin": 0.054, "paper_swap": 0.054}
            for (label, (level, case, tokens)), value in zip(ch7_realsumm.BLEU_VARIANTS.items(), values)]
    return pd.DataFrame(rows).assign(difference=lambda f: f["origin"] - 0.054)


def test_bleu_findings_and_the_second_bleu_row():
    v = _variants([0.501, 0.303, 0.330, 0.096, 0.312, 0.019])
    f = ch7_realsumm.bleu_findings(v)
    assert (f["paper"], f["ours"], f["low"], f["high"]) == (0.054, 0.501, 0.019, 0.501)
    assert (f["corpus_low"], f["corpus_high"], f["bracketed"]) == (0.019, 0.096, "between")
    assert f["nearest"] == "corpus BLEU per system, 13a tokens, lowercased"
    assert f["nearest_difference"] == pytest.approx(0.019 - 0.054)
    assert ch7_realsumm.bleu_findings(_variants([0.5, 0.3, 0.3, 0.2, 0.3, 0.1]))["bracketed"] == "outside"
    t7 = gao.side_by_side(pd.DataFrame({"metric": ["BLEU", "WMD"], "name": ["bleu", "wmd"],
                                        "aggregation": ["single", "single"], "origin": [0.501, 0.6],
                                        "swap": [0.501, 0.6]}), gao.table7())
    page = ch7_realsumm.with_nearest_bleu(t7, v)
    assert len(page) == len(t7) + 1
    at = page.index[page["paper_metric"] == "BLEU"].tolist()
    assert at[1] == at[0] + 1 and page.loc[at[1], "metric"] == "BLEU (corpus per system, 13a tokens, lowercased)"
    assert (page.loc[at[1], "ours_origin"], page.loc[at[1], "ours_swap"]) == (0.019, pytest.approx(0.009))
    assert page.loc[at[0], "ours_origin"] == 0.501
    # Table 7's METEOR on REALSumm (0.714, the paper's origin column) beside ours; a metric not run reads NaN
    t7m = gao.side_by_side(pd.DataFrame({"metric": ["METEOR"], "name": ["meteor"], "aggregation": ["single"],
                                         "origin": [0.960], "swap": [0.955]}), gao.table7())
    assert ch7_realsumm.table7_row(t7m, "METEOR") == {"paper": pytest.approx(0.714), "ours": 0.960}
    assert np.isnan(ch7_realsumm.table7_row(t7m, "no such metric")["paper"])


def test_capitals_inside_sentences_and_vector_coverage():
    # words after the first and not after a full stop: cat, met, Anna, Bob, ran (Then follows "."): 2 of 5
    assert ch7_realsumm.capitalised_share(["The cat met Anna . Then Bob ran"]) == pytest.approx(0.4)
    assert np.isnan(ch7_realsumm.capitalised_share(["Hello"]))

    class Vectors:  # a static-embedding metric's token lookup: these words have a vector
        @staticmethod
        def tokens(text):
            return [w for w in text.split() if w in {"a", "dog"}]

    # distinct texts only: "a dog runs" (2 of 3) and "the cat" (0 of 2): 2 of 5
    assert ch7_realsumm.vector_share(Vectors(), ["a dog runs", "the cat", "a dog runs"]) == pytest.approx(0.4)


def test_preference_by_metric_keeps_the_metrics_that_do_not_always_tie():
    pref = pd.DataFrame({"metric": ["BLEU", "BLEU", "chrF", "chrF", "BERTScore", "BERTScore", "VE", "VE"],
                         "aggregation": ["max", "mean"] * 4,
                         "n_male_higher": [0, 0, 5, 2, 30, 29, 30, 18], "n_female_higher": [0, 0, 25, 28, 0, 1, 0, 12],
                         "n_equal": [30, 30, 0, 0, 0, 0, 0, 0]})
    pref["share_equal"] = pref["n_equal"] / 30
    t = ch7_gender_swap.preference_by_metric(analysis.preference_tests(pref))
    assert t["metric"].tolist() == ["chrF", "BERTScore", "VE"]  # BLEU ties on every pair: named in the text
    assert t.columns.tolist() == ["metric", "max: male / female / tied", "max: p (BH)", "mean: male / female / tied",
                                  "mean: p (BH)", "prefers"]
    assert t["prefers"].tolist() == ["female", "male", "male (max only)"]  # VE mean: 18 / 12, p = 0.36
    assert t.loc[0, "max: male / female / tied"] == "5 / 25 / 0"


def test_flickr_origin_table_sets_both_subsets_side_by_side():
    ours = pd.DataFrame({"metric": ["BLEU", "BLEU"], "name": ["bleu", "bleu"], "aggregation": ["max", "max"],
                         "subset": ["all", "single_gender"], "statistic": "spearman", "judges": "stacked",
                         "origin": [0.45, 0.30], "swap": [0.45, 0.31]})
    side = ch7_gender_swap.flickr_comparison(ours).drop(columns="judges")
    t = ch7_gender_swap.flickr_origin_table(side)
    assert t.columns.tolist() == ["paper row", "metric", "all examples (paper)", "all examples",
                                  "male-only (paper)", "male-only"]
    # Table 9's BLEU 0.441, Table 6's 0.446 (N = 1685)
    assert t.iloc[0].tolist() == ["BLEU", "BLEU (max)", 0.441, 0.45, 0.446, 0.30]


def test_nlgeval_handling_of_words_on_our_vectors():
    from metricbias.metrics.embedding import OOVWarning, load_vectors

    kv = load_vectors(str(backbones.resolve("word2vec-googlenews-bolukbasi")))
    average = metrics.get("embedding_average")
    # every word has a vector: nlg-eval's handling and ours agree
    same = ["man walks", "woman runs"]
    assert ch7_realsumm.nlgeval_scores(average, same, same[::-1]) == pytest.approx(average.score(same, same[::-1]))
    # an unknown word is the mean vector, not skipped: "man zzqx" against "zzqx" is the cosine of
    # (v_man + mean) / 2 and the mean
    unknown = kv.vectors.mean(axis=0)
    pair = (kv["man"] + unknown) / 2
    expected = pair @ unknown / (np.linalg.norm(pair) * np.linalg.norm(unknown))
    assert ch7_realsumm.nlgeval_scores(average, ["man zzqx"], ["zzqx"])[0] == pytest.approx(expected)
    with pytest.warns(OOVWarning):
        assert average.score(["man zzqx"], ["zzqx"])[0] == 0.0  # ours: the reference has no word with a vector
    # greedy matching of a text with itself is 1
    greedy = metrics.get("greedy_matching")
    assert ch7_realsumm.nlgeval_scores(greedy, ["a man"], ["a man"])[0] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="not one of"):
        ch7_realsumm.nlgeval_scores(metrics.get("wmd"), ["a"], ["a"])


def test_nlgeval_variant_and_findings():
    variant = pd.DataFrame({"metric": ["Greedy matching", "Embedding average"],
                            "name": ["greedy_matching", "embedding_average"], "nlgeval": [0.751, 0.875],
                            "paper": [0.730, 0.511]}).assign(difference=lambda f: f["nlgeval"] - f["paper"])
    f = ch7_realsumm.nlgeval_findings(variant)
    assert (f["near"], f["far"], f["close"]) == ("Greedy matching", "Embedding average", 0.03)
    assert (f["greedy_matching"], f["greedy_matching_paper"]) == (0.751, 0.730)
    assert np.isnan(f["vector_extrema"])  # not run: its keys are there all the same
    data = _realsumm()
    out = ch7_realsumm.nlgeval_variant(data, [("avg", metrics.get("embedding_average")), ("bleu", metrics.get("bleu"))],
                                       gao.table7())
    assert out["metric"].tolist() == ["avg"] and out["paper"].iloc[0] == 0.511  # Table 7's embedding average


def test_meteor_variants_without_synonyms():
    # "the cats sat" against "the cat sat": exact matches the, sat (P = R = 2/3, two chunks: penalty 0.5 · 1³) give
    # 2/3 · 0.5; with stems cats = cat: three matches in one chunk, 1 − 0.5 · (1/3)³. As sorted sets (cat(s), sat,
    # the) the two exact matches are adjacent: 2/3 · (1 − 0.5 · (1/2)³) = 0.625. ill/sick: no synonym is matched.
    hyp, ref = ["the cats sat", "he was ill"], ["the cat sat", "he was sick"]
    assert ch7_realsumm.meteor_variant_scores(hyp, ref, False, False) == pytest.approx([1 / 3, 0.625])
    assert ch7_realsumm.meteor_variant_scores(hyp, ref, True, False) == pytest.approx([1 - 0.5 / 27, 0.625])
    assert ch7_realsumm.meteor_variant_scores(hyp, ref, False, True) == pytest.approx([0.625, 1 / 3])
    # the four systems: A is the reference (7 matches, one chunk: 1 − 0.5 / 7³), C shares no word; every setting
    # orders A > B > D > C as the humans do, so rho = 1 and Table 7's 0.714 lies outside each interval
    data = _realsumm()
    scores = ch7_realsumm.meteor_variant_scores(data.frame["hypothesis"], data.frame["references"].str[0], False, False)
    assert scores[0] == pytest.approx(1 - 0.5 / 343) and scores[3] == 0.0
    v = ch7_realsumm.meteor_variants(data, gao.table7())
    assert list(v["variant"]) == list(ch7_realsumm.METEOR_VARIANTS)
    assert v["origin"].to_numpy() == pytest.approx(1.0) and (v["paper_origin"] == 0.714).all()
    assert ch7_realsumm.meteor_findings(v) == {"low": pytest.approx(1.0), "high": pytest.approx(1.0), "inside": 0,
                                               "settings": 4}


def test_partial_spearman_is_the_first_order_partial_of_the_rank_correlations():
    """The partial correlation of ranks equals (r_xy − r_xc r_yc) / √((1 − r_xc²)(1 − r_yc²)) on Spearman's
    coefficients, with Student's t on n − 3 degrees of freedom."""
    from scipy import stats

    x = np.array([3.0, 1.0, 4.0, 1.5, 5.0, 9.0, 2.0, 6.0])
    y = np.array([2.0, 7.0, 1.0, 8.0, 2.5, 8.5, 3.0, 6.5])
    c = np.array([1.0, 4.0, 2.0, 8.0, 5.0, 7.0, 3.0, 6.0])
    r = {k: stats.spearmanr(a, b).statistic for k, (a, b) in {"xy": (x, y), "xc": (x, c), "yc": (y, c)}.items()}
    expected = (r["xy"] - r["xc"] * r["yc"]) / np.sqrt((1 - r["xc"] ** 2) * (1 - r["yc"] ** 2))
    found = ch7_realsumm.partial_spearman(x, y, c)
    assert found["rho"] == pytest.approx(expected) and found["n"] == 8
    t = expected * np.sqrt(5 / (1 - expected ** 2))
    assert found["p"] == pytest.approx(2 * stats.t.sf(abs(t), 5))
    assert found["ci_low"] < found["rho"] < found["ci_high"]


def test_length_check_on_four_systems():
    """Lengths A 7, B 7, D 5, C 1 words (ranks 3.5, 3.5, 2, 1) against human A 4 > B 3 > D 2 > C 1: deviations
    (1, 1, −0.5, −1.5) and (1.5, 0.5, −0.5, −1.5), rho = 4.5 / √(4.5 · 5) = √0.9. BLEU's system-level correlation
    is the analysis' own; a metric not run gives NaN."""
    data = _realsumm()
    scorers = [("BLEU", metrics.get("bleu"))]
    found = ch7_realsumm.length_check(data, scorers, "bleu")
    assert found["systems"] == 4 and found["length_human"] == pytest.approx(0.9 ** 0.5)
    perf = analysis.performance(data, scorers)
    assert found["metric_human"] == pytest.approx(perf.loc[perf["statistic"] == "spearman", "origin"].iloc[0])
    # BLEU ranks the systems B 4, A 3, D 2, C 1 (case kept): deviations (1.5, 0.5, −0.5, −1.5) in the order B, A,
    # D, C against the lengths' (1, 1, −0.5, −1.5): rho = 4.5 / √(5 · 4.5) = √0.9 again
    assert found["metric_length"] == pytest.approx(0.9 ** 0.5)
    missing = ch7_realsumm.length_check(data, scorers, "meteor")
    assert np.isnan(missing["partial"]) and missing["partial_verdict"] == "not computed"
