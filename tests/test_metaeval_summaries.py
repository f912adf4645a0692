"""What chapter 7 shows of the gender-swapped meta-evaluation: summaries, comparisons with Gao & Wan, findings."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from metricbias.bias import claims
import pytest
from test_metaeval_analysis import CAPTIONS, Overlap, judged

from metricbias.book import plots
from metricbias.book.reproduction import ch7_gender_swap, ch7_images, ch7_summaries, gao2022 as gao
from metricbias.datasets.meta_eval import PairSet
from metricbias.datasets.swap import lexicon
from metricbias.metaeval import analysis


def test_lexicon_summary_counts_every_word():
    lex = lexicon()
    summary = ch7_summaries.lexicon_summary(lex)
    assert summary.columns.tolist() == ["source", "kind", "words"]
    assert summary["words"].sum() == len(lex)
    assert set(summary["source"]) == {e.source.split(":")[0] for e in lex.values()}


def test_pronoun_readings():
    ds = judged([{"item_id": 1, "system_id": "a", "hypothesis": "I gave her the book", "references": ["I saw her book"],
                  "human:overall": 1},
                 {"item_id": 2, "system_id": "a", "hypothesis": "The book is his.", "references": ["a dog"],
                  "human:overall": 2}])
    readings = ch7_summaries.pronoun_readings(ds)
    assert readings[["word", "swapped_to"]].values.tolist() == [["her", "him"], ["his", "hers"], ["her", "his"]]
    counts = ch7_summaries.reading_counts(readings).set_index(["word", "swapped_to"])["occurrences"]
    assert counts.to_dict() == {("her", "him"): 1, ("her", "his"): 1, ("his", "hers"): 1}
    assert ch7_summaries.object_readings(readings)["text"].tolist() == ["I gave her the book", "The book is his."]


def test_swap_coverage_and_selection_counts():
    pairs = PairSet("toy-pairs", pd.DataFrame({"item_id": ["1", "2"], "reference": ["he ran", "a dog"],
                                               "better": ["he ran", "a dog ran"], "worse": ["she ran", "a cat"],
                                               "better_system": ["x", "y"], "worse_system": ["u", "v"]}))
    cov = ch7_summaries.swap_coverage({"captions": CAPTIONS, "pairs": pairs}).set_index("set")
    # captions: 5 hypotheses + 6 distinct references, "a dog" in both = 10 texts; 6 have man/woman/his
    assert cov.loc["captions", ["rows", "distinct texts", "texts changed by the swap"]].tolist() == [5, 10, 6]
    assert cov.loc["pairs", "distinct texts"] == 5 and cov.loc["pairs", "texts changed by the swap"] == 2
    assert cov.loc["pairs", "share changed"] == pytest.approx(2 / 5)
    counts = ch7_summaries.selection_counts(CAPTIONS).set_index("examples")["count"]
    assert counts["hypothesis male only"] == 3 and counts["hypothesis female only"] == 1
    assert counts["hypothesis without gendered words"] == 1 and counts["references all gender-neutral"] == 3
    assert counts["preference set (neutral references, male-only hypothesis)"] == 2


def test_preference_summary_and_shares():
    pref = analysis.preference(CAPTIONS, [("fair", Overlap()), ("biased", Overlap(bonus=0.1))])
    assert pref.set_index(["metric", "aggregation"]).loc[("biased", "max"), "mean_difference"] == pytest.approx(0.1)
    by = pref.set_index(["metric", "aggregation"])
    assert by.loc[("biased", "max"), ["n_male_higher", "n_female_higher", "n_equal"]].tolist() == [2, 0, 0]
    assert by.loc[("fair", "max"), ["n_male_higher", "n_female_higher", "n_equal"]].tolist() == [0, 0, 2]
    s = ch7_summaries.preference_summary(pref)
    # 2 of 2 pairs male higher: exact two-sided p = 2 * (1/2)^2 = 0.5, not significant; the tied ones have no test
    assert (s["pairs"], s["configurations"], s["tied"], s["prefer_male"], s["prefer_female"]) == (2, 4, 2, 0, 0)
    assert (s["not_significant"], s["lean_male"], s["lean_female"]) == (2, 2, 0)
    assert s["prefer_either"] == s["prefer_male"] + s["prefer_female"] == 0
    assert s["tied_names"] == "fair (max), fair (mean)" and s["prefer_female_names"] == "none"
    assert s["not_significant_names"] == "biased (max), biased (mean)"
    tested = analysis.preference_tests(pref).set_index(["metric", "aggregation"])
    assert tested.loc[("biased", "max"), "p_sign"] == pytest.approx(0.5)
    assert tested.loc[("biased", "max"), "p_sign_adjusted"] == pytest.approx(0.5)  # BH over the 2 tested rows
    assert tested["p_sign"].isna().sum() == 2 and set(tested["prefers"]) == {"neither"}
    shares = ch7_summaries.preference_shares(pref)
    assert len(shares) == 4 * 3 and set(shares["outcome"]) == {"male higher", "equal", "female higher"}


def test_performance_grid_gaps_and_findings():
    perf = analysis.performance_both_judges(CAPTIONS, [Overlap(bonus=0.5)])
    assert set(perf["judges"]) == {"mean"}  # the toy set has no individual judges: both runs use the mean
    one = analysis.performance(CAPTIONS, [Overlap(bonus=0.5)])
    grid = ch7_summaries.delta_grid(one)
    assert grid.columns.tolist() == ["all", "single_gender"]
    spearman = one[one["statistic"] == "spearman"].set_index(["aggregation", "subset"])["delta"]
    assert grid.loc[("toy_overlap", "max"), "all"] == spearman[("max", "all")]
    assert ch7_summaries.labelled_rows(grid).index.tolist() == [f"toy_overlap ({a})" for _, a in grid.index]
    assert plots._annotations(pd.DataFrame({"d": [0.0001, -0.0001, 0.0123]}), "+.3f").ravel().tolist() == [
        "0.000", "0.000", "+0.012"]
    assert ch7_summaries.largest_shift(one) == pytest.approx(spearman.xs("all", level="subset").abs().max())
    pref = analysis.preference(CAPTIONS, [Overlap(bonus=0.1)])
    f = ch7_summaries.findings(pref, {"Toy set": one})
    assert f["prefer_male"] == 0 and f["lean_male"] == 2 and f["toy_set_largest_shift"] == ch7_summaries.largest_shift(one)
    assert f["toy_set_largest_shift_single_gender"] == ch7_summaries.largest_shift(one, "single_gender")
    assert not any(k.endswith("_names") for k in f)
    curve = pd.DataFrame({"metric": ["m"] * 4, "k": [3, 4, 3, 4], "condition": ["origin", "origin", "swap", "swap"],
                          "spearman": [0.5, 0.2, 0.4, 0.5]})
    gaps = ch7_summaries.top_k_gaps(curve).set_index("metric")
    assert gaps.loc["m"].tolist() == pytest.approx([0.2, 0.3])  # |0.4-0.5| and |0.5-0.2|


def test_swap_attributes():
    assert ch7_summaries.check_swap_attributes(None) == ["gender"]
    assert ch7_summaries.check_swap_attributes("race,gender") == ["gender"]
    with pytest.raises(ValueError, match="gender only"):
        ch7_summaries.check_swap_attributes("race")


def test_gao_comparisons_for_the_page():
    ours = pd.DataFrame({"metric": ["BLEU", "BLEU"], "name": ["bleu", "bleu"], "aggregation": ["max", "max"],
                         "subset": ["all", "single_gender"], "statistic": "spearman", "judges": "stacked",
                         "origin": [0.45, 0.30], "swap": [0.45, 0.31]})
    side = ch7_gender_swap.flickr_comparison(ours)
    assert len(side) == len(gao.table9()) + len(gao.table6())
    page = ch7_gender_swap.for_page(side)
    assert page["paper row"].tolist() == ["BLEU", "BLEU"]
    assert page.columns.tolist() == ["judges", "subset", "paper row", "their aggregation", "metric", "aggregation",
                                     "origin (paper)", "origin", "swap (paper)", "swap", "origin difference",
                                     "swap difference"]
    assert page.set_index("subset").loc["all", "origin difference"] == pytest.approx(0.45 - 0.441)
    assert "origin difference" not in ch7_gender_swap.for_page(side, differences=False).columns
    assert len(ch7_gender_swap.for_page(side, ran_only=False)) == len(side)
    t7 = gao.side_by_side(pd.DataFrame({"metric": ["BLEU", "WMD"], "name": ["bleu", "wmd"],
                                        "aggregation": ["single", "single"], "origin": [0.06, 0.9],
                                        "swap": [0.06, 0.9]}), gao.table7())
    # Table 7: BLEU 0.054, WMD 0.565; over 24 systems rho 0.06 has the interval -0.35 to 0.45, rho 0.9 0.75 to 0.96
    assert ch7_gender_swap.table7_agreement(t7, 24) == {"within": "BLEU", "far": "WMD", "inside": 1, "compared": 2,
                                                        "outside": "WMD"}
    repro = pd.DataFrame({"paper_metric": ["BLEU", "BLEU", "TER", "TER"], "judges": ["mean", "stacked"] * 2,
                          "within": [False, True, False, False], "paper_inside": [True, True, False, True]})
    assert ch7_gender_swap.ngram_reproduction_summary(repro) == {"metrics": 2, "within_stacked": 1, "within_mean": 0,
                                                     "off_stacked": "TER", "inside_stacked": 2, "inside_mean": 1}
    both = pd.DataFrame({"metric": "m", "aggregation": "max", "subset": ["all", "all", "single_gender",
                                                                          "single_gender"],
                         "statistic": "spearman", "judges": ["mean", "stacked"] * 2,
                         "origin": [0.5, 0.4, 0.3, 0.35], "swap": [0.5, 0.41, 0.3, 0.2]})
    # stacked below mean: all/origin, all/swap, single/swap; single/origin is above
    assert ch7_gender_swap.stacking_effect(both) == {"lower": 3, "compared": 4}


def test_without_and_signatures():
    kept, left = ch7_gender_swap.without([("a", Overlap()), ("b", Overlap(bonus=0.1))], "toy_overlap")
    assert kept == [] and left == ["a", "b"]
    sig = ch7_summaries.signatures([("a", Overlap())])
    assert sig["metric"].tolist() == ["a"] and sig["signature"].iloc[0].startswith("metric:toy_overlap")


class CountingOverlap(Overlap):
    def __init__(self, **options):
        super().__init__(**options)
        self.calls = 0

    def _score(self, candidates, references):
        self.calls += 1
        return super()._score(candidates, references)


def test_performance_both_judges_scores_each_set_once_and_equals_each_judges_run():
    n = len(CAPTIONS)
    frame = CAPTIONS.frame.assign(j1=[float(i % 3) for i in range(n)], j2=[float(n - i) for i in range(n)])
    ds = replace(CAPTIONS, frame=frame, judges={"overall": ["j1", "j2"]})
    metric = CountingOverlap(bonus=0.5)
    both = analysis.performance_both_judges(ds, [metric])
    assert metric.calls == 2  # the original set and the swapped one, each once for both ways of using the judges
    expected = pd.concat([analysis.performance(ds, [Overlap(bonus=0.5)], judges=j) for j in analysis.JUDGES],
                         ignore_index=True)
    pd.testing.assert_frame_equal(both, expected, check_exact=True)
    assert set(both["judges"]) == {"mean", "stacked"}


def test_significant_preferences_are_counted_from_the_sign_test():
    # 40 configurations-worth of counts by hand: 30 vs 2 (p ~ 1e-7), 9 vs 7 (p = 0.80), 1 vs 14 (p ~ 1e-3)
    pref = pd.DataFrame({"metric": ["a", "b", "c"], "aggregation": "max", "n": 32,
                         "n_male_higher": [30, 9, 1], "n_female_higher": [2, 7, 14],
                         "share_equal": [0.0, 16 / 32, 17 / 32]})
    s = ch7_summaries.preference_summary(pref)
    assert (s["prefer_male"], s["prefer_female"], s["not_significant"]) == (1, 1, 1)
    assert s["prefer_male_names"] == "a (max)" and s["not_significant_names"] == "b (max)"


def test_preference_claim_counts_the_significant_model_based_configurations():
    pref = pd.DataFrame({"metric": ["BERTScore", "WMD", "BLEU"], "name": ["bertscore", "wmd", "bleu"],
                         "aggregation": "max", "n": 40, "n_male_higher": [30, 9, 0], "n_female_higher": [2, 7, 0],
                         "share_equal": [8 / 40, 24 / 40, 1.0]})
    # one male-preferring metric against none: the exact sign test gives p = 1, not distinguishable
    # one metric with a preference: the smallest p it can reach is 1; 2 * (1/2)^n < 0.05 needs n = 6 metrics
    assert ch7_gender_swap.preference_claim_findings(pref) == {"model": 2, "configurations": 2, "male": 1,
                                                               "male_names": "BERTScore", "female": 0,
                                                               "female_names": "none", "neither": 1,
                                                               "metric_verdict": claims.UNDECIDED, "p": 1.0,
                                                               "floor": 1.0, "floor_reaches": "cannot",
                                                               "units_needed": 6,
                                                               "male_phrase": "1 of the 2 model-based metrics "
                                                                              "(BERTScore)",
                                                               "female_phrase": "none"}
    # a metric's two aggregations are one unit: both preferring the male hypothesis count once
    both = pd.concat([pref, pref.iloc[[0]].assign(aggregation="mean")], ignore_index=True)
    found = ch7_gender_swap.preference_claim_findings(both)
    assert (found["model"], found["configurations"], found["male"]) == (2, 3, 1)
    none = ch7_gender_swap.preference_claim_findings(pref[pref["name"] == "bleu"])
    assert none["model"] == 0 and none["metric_verdict"] == "not comparable"


def test_preference_by_image_tests_the_images():
    """Two model-based metrics on different scales and an n-gram metric (left out), twelve pairs on six images (two
    pairs each): the male hypothesis scores higher on the pairs of images 0-4 and lower on image 5. In units of each
    metric's score SD both metrics agree, so five images lean male and one female: exact sign test
    p = 2 * (1 + 6) / 64 = 0.21875, not below 0.05."""
    rows = []
    for name, label, scale in (("bertscore", "BERTScore", 0.01), ("wmd", "WMD", 1.0), ("bleu", "BLEU", 5.0)):
        for agg in ("max", "mean"):
            for pair in range(12):
                d = (1 if pair < 10 else -1) * scale
                base = 0.5 * scale + pair * scale * 0.1
                rows.append({"metric": label, "name": name, "aggregation": agg, "item_id": f"i{pair // 2}",
                             "pair": pair, "male": base + d / 2, "female": base - d / 2, "difference": d})
    pairs = pd.DataFrame(rows)
    found = ch7_gender_swap.preference_by_image(pairs, n_resamples=199)
    assert (found["metrics"], found["images"], found["positive"], found["negative"]) == (2, 6, 5, 1)
    assert found["p"] == pytest.approx(0.21875) and found["verdict"] == claims.UNDECIDED
    # the scale is each metric's own: BERTScore's 0.01 and WMD's 1.0 give the same standardised differences
    # (the SD: the root of the mean of the male and the female scores' variances over the pairs)
    one = pairs.iloc[:12]
    sd = ((one["male"].var() + one["female"].var()) / 2) ** 0.5
    assert found["mean"] == pytest.approx((10 * 0.01 - 2 * 0.01) / 12 / sd)
    # the same lean on 24 images: 20 against 4, p = 2 * (1 + 24 + 276 + 2024 + 10626) / 2^24 = 0.00154: it holds
    many = pd.concat([pairs.assign(item_id=pairs["item_id"] + f"-{k}") for k in range(4)], ignore_index=True)
    many = many.assign(pair=many.groupby(["metric", "aggregation"]).cumcount())
    more = ch7_gender_swap.preference_by_image(many, n_resamples=199)
    assert (more["positive"], more["negative"], more["verdict"]) == (20, 4, "holds")
    assert more["p"] == pytest.approx(2 * 12951 / 2**24) and more["ci_low"] > 0
    assert ch7_gender_swap.preference_by_image(pairs[pairs["name"] == "bleu"])["verdict"] == "not comparable"


def test_downloads_have_no_zero_p_values():
    perf = pd.DataFrame({"metric": ["m", "n"], "origin": [0.5, 0.1], "p_value_origin": [0.0, 0.3],
                         "p_value_swap": [1e-310, 0.2]})
    out = analysis.for_download(perf)
    assert (out[["p_value_origin", "p_value_swap"]] > 0).all().all()
    assert out["p_value_origin_is_upper_bound"].tolist() == [True, False]
    assert out["p_value_swap_is_upper_bound"].tolist() == [True, False]
    assert out["p_value_origin"].iloc[0] == 1e-300


def test_table7_rouge_findings():
    t7 = gao.side_by_side(pd.DataFrame({"metric": ["ROUGE-1", "ROUGE-2"], "name": ["rouge1", "rouge2"],
                                        "aggregation": ["single", "single"], "origin": [0.364, 0.42],
                                        "swap": [0.364, 0.42]}), gao.table7())
    # ROUGE-1 0.364 vs 0.474 (0.11 away), ROUGE-2 0.42 vs 0.411 (within 0.03); both inside intervals of ±0.35
    assert ch7_gender_swap.table7_rouge_findings(t7, 24) == {"rows": 2, "near": 1, "inside": 2, "close": 0.03,
                                                             "verdict": "consistent with",
                                                             "near_phrase": "1 of the 2 ROUGE rows (ROUGE-2)",
                                                             "inside_phrase": "both"}
    # over 1,000 systems the interval around 0.364 is about ±0.05: Table 7's 0.474 falls outside it
    assert ch7_gender_swap.table7_rouge_findings(t7, 1000)["verdict"] == "not consistent with"
    none = ch7_gender_swap.table7_rouge_findings(t7[~t7["paper_metric"].str.startswith("ROUGE")], 24)
    assert (none["rows"], none["verdict"]) == (0, "not compared with")


def test_shift_claim_compares_model_based_with_ngram_configurations():
    perf = pd.DataFrame({"name": ["bleu", "rouge1", "ter", "bertscore", "wmd", "regression"],
                         "metric": ["b", "r", "t", "bs", "w", "reg"], "aggregation": "single",
                         "statistic": "spearman", "subset": "all",
                         "delta": [0.0, 0.001, -0.002, 0.05, -0.04, 0.06],
                         "origin": [0.3, 0.2, -0.1, 0.5, 0.4, 0.5]})
    claim = ch7_gender_swap.shift_claim({"Toy": perf}, n_resamples=999).iloc[0]
    assert (claim["model-based metrics"], claim["n-gram metrics"]) == (3, 3)
    assert claim["difference"] == pytest.approx(0.05 - 0.001)
    assert 0 < claim["ci_low"] < claim["difference"] < claim["ci_high"]
    assert claim["verdict"] == "model-based shift more"
    few = ch7_gender_swap.shift_claim({"Toy": perf.iloc[:4]}, n_resamples=99).iloc[0]
    assert few["verdict"] == "not tested"
    both = ch7_gender_swap.shift_claim({"Toy": perf, "Toy 2": perf.assign(subset="single_gender")}, n_resamples=999)
    found = ch7_gender_swap.shift_findings(both)
    assert found["toy_all_verdict"] == "model-based shift more" and found["toy_2_single_gender_n_model"] == 3
    assert found["toy_all_claim"] == "holds"
    assert ch7_gender_swap.shift_findings(ch7_gender_swap.shift_claim({"Toy": perf.iloc[:4]},
                                                                      n_resamples=99))["toy_all_claim"] == "not comparable"
    assert found["toy_all_model"] == pytest.approx(0.05) and found["toy_all_ngram"] == pytest.approx(0.001)
    # practical size: mean |origin| (0.3 + 0.2 + 0.1 + 0.5 + 0.4 + 0.5) / 6 = 1/3; |0.049| / (1/3) = 0.147
    assert found["toy_all_mean_origin"] == pytest.approx(1 / 3)
    assert found["toy_all_share_of_origin"] == pytest.approx(0.049 * 3)
    table = ch7_gender_swap.shift_table(both)
    assert table["set"].tolist() == ["Toy", "Toy 2 (male-only hypotheses)"] and len(table.columns) <= 8
    assert table["metrics (model-based / n-gram)"].iloc[0] == "3 / 3"
    # a metric's two aggregations count once, with the mean of their |shift|
    two = pd.concat([perf, perf[perf["name"] == "bertscore"].assign(aggregation="mean", delta=0.03)], ignore_index=True)
    once = ch7_gender_swap.shift_claim({"Toy": two}, n_resamples=99).iloc[0]
    assert once["model-based metrics"] == 3
    assert once["mean |shift| model-based"] == pytest.approx((0.04 + 0.04 + 0.06) / 3)


def test_single_gender_claim_is_paired_by_metric():
    rows = []
    for m, (all_, single) in {"a": (0.01, 0.03), "b": (-0.02, 0.05), "c": (0.0, 0.021), "d": (0.005, -0.04)}.items():
        rows += [{"metric": m, "aggregation": "max", "statistic": "spearman", "subset": "all", "delta": all_},
                 {"metric": m, "aggregation": "max", "statistic": "spearman", "subset": "single_gender",
                  "delta": single}]
    out = ch7_gender_swap.single_gender_claim(pd.DataFrame(rows), n_resamples=999)
    # |single| - |all| = 0.02, 0.03, 0.021, 0.035: mean 0.0265
    assert out["metrics"] == 4 and out["difference"] == pytest.approx(0.0265)
    assert out["verdict"] in ("more on the male-only subset", "not distinguishable")
    assert ch7_gender_swap.single_gender_claim(pd.DataFrame(rows[:2]))["verdict"] == "not tested"
    # a second aggregation of metric "a" (|single| - |all| = 0.05 - 0.01 = 0.04) is averaged into its unit first:
    # a: (0.02 + 0.04) / 2 = 0.03, so the mean over the 4 metrics is (0.03 + 0.03 + 0.021 + 0.035) / 4 = 0.029
    more = rows + [{"metric": "a", "aggregation": "mean", "statistic": "spearman", "subset": "all", "delta": -0.01},
                   {"metric": "a", "aggregation": "mean", "statistic": "spearman", "subset": "single_gender",
                    "delta": 0.05}]
    out = ch7_gender_swap.single_gender_claim(pd.DataFrame(more), n_resamples=999)
    assert out["metrics"] == 4 and out["difference"] == pytest.approx(0.029)


def test_resampled_spearman_counts_each_drawn_observation():
    """Rank correlation of a resample, computed from draw counts, equals scipy's on the resample written out
    (ties and a missing judgement included); a row of ones gives the correlation of the data as drawn."""
    from scipy import stats

    rng = np.random.default_rng(1)
    x, y = rng.integers(0, 5, 40).astype(float), rng.integers(0, 4, 40).astype(float)
    y[3] = np.nan
    draws = rng.multinomial(40, np.full(40, 1 / 40), size=3).astype(float)
    rho = ch7_images.resampled_spearman({"x": x}, y, np.vstack([np.ones(40), draws]))["x"]
    ok = ~np.isnan(y)
    assert rho[0] == pytest.approx(stats.spearmanr(x[ok], y[ok]).statistic)
    for b in range(3):
        idx = np.repeat(np.arange(40), draws[b].astype(int))
        idx = idx[ok[idx]]
        assert rho[b + 1] == pytest.approx(stats.spearmanr(x[idx], y[idx]).statistic)


def test_a_darr_tau_shift_in_pairs_changing_order():
    from metricbias.book.reproduction import ch7_summaries

    perf = pd.DataFrame({"statistic": "darr_tau", "subset": "all", "delta": [0.0010, -0.0014], "n_origin": 9728})
    # one pair turning from concordant to discordant moves tau by 2/9728: 0.0014 is 6.8, about 7 pairs
    assert ch7_summaries.reordered_pairs(perf) == 7
    assert ch7_summaries.reordered_pairs(perf.assign(statistic="spearman")) == 0


def test_compact_comparison_fits_the_page():
    page = pd.DataFrame({"subset": ["all", "single_gender"], "paper row": ["BERTScore", "BLEU"],
                         "their aggregation": ["native", "max"], "metric": ["BERTScore-MiniLM", "BLEU"],
                         "aggregation": ["max", "single"], "origin (paper)": [0.3, 0.2], "origin": [0.31, 0.19],
                         "origin difference": [0.01, -0.01]})
    out = ch7_gender_swap.compact(page)
    assert out.columns.tolist() == ["subset", "paper row", "metric", "origin (paper)", "origin"]
    assert out["metric"].tolist() == ["BERTScore-MiniLM (max)", "BLEU"]
    assert out["subset"].tolist() == ["all", "male-only"]


def test_distinct_configurations_counts_identical_ones_once():
    """Two aggregations whose correlations agree everywhere are one configuration; a difference anywhere keeps two."""
    rows = []
    for metric, aggregation, origin, swap in [("BLEU", "max", 0.40, 0.40), ("BLEU", "mean", 0.40, 0.40),
                                              ("chrF", "max", 0.47, 0.46), ("chrF", "mean", 0.41, 0.41)]:
        for subset in ("all", "single_gender"):
            rows.append({"metric": metric, "aggregation": aggregation, "subset": subset, "judges": "stacked",
                         "statistic": "spearman", "origin": origin, "swap": swap})
    table = pd.DataFrame(rows)
    assert ch7_summaries.distinct_configurations(table) == 3  # BLEU max = BLEU mean
    table.loc[(table["metric"] == "BLEU") & (table["aggregation"] == "mean") & (table["subset"] == "single_gender"),
              "swap"] = 0.39
    assert ch7_summaries.distinct_configurations(table) == 4


def test_shift_by_image_resamples_images(monkeypatch):
    """Ten captions on five images, three judges each; two n-gram and two model-based toy metrics (the biased ones,
    whose bonus for 'man' moves to 'woman' after the swap). On the data as drawn the difference is the one of
    :func:`shift_claim` on the stacked correlations; the interval resamples the five images."""
    from test_metaeval_analysis import Overlap

    from metricbias.datasets.meta_eval import JudgedSet

    class Biased(Overlap):
        name = "toy_biased"

    for module in (ch7_gender_swap, ch7_images):
        monkeypatch.setattr(module, "metric_group", lambda name: "model-based" if name == "toy_biased" else "n-gram")
    hyps = ["a man rides a horse", "a man sits", "a woman and a dog", "a dog", "his dog runs", "a man and a dog",
            "a girl runs", "she rides a horse", "a boy and his dog", "a person sits"]
    refs = [("a person on a horse", "a rider"), ("a person sits", "a rider"), ("a dog runs", "a dog"),
            ("a dog runs", "a dog"), ("a child and a dog",), ("a child and a dog",), ("a child runs", "a runner"),
            ("a child runs", "a runner"), ("a dog", "a dog runs"), ("a person", "a person sits")]
    judges = np.array([[4, 3, 4], [2, 2, 1], [3, 3, 4], [1, 2, 1], [2, 3, 2], [3, 4, 4], [4, 4, 3], [1, 1, 2],
                       [3, 2, 3], [2, 1, 1]], dtype=float)
    frame = pd.DataFrame({"item_id": [i // 2 for i in range(10)], "system_id": list("abcdefghij"), "hypothesis": hyps,
                          "references": refs, "human:overall": judges.mean(axis=1)})
    frame[["judge_1", "judge_2", "judge_3"]] = judges
    data = JudgedSet("toy", frame, levels=("example",), judges={"overall": ["judge_1", "judge_2", "judge_3"]})
    scorers = [("A", Overlap()), ("B", Overlap(bonus=0.05)), ("C", Biased(bonus=0.3)), ("D", Biased(bonus=0.6))]
    perf = analysis.performance(data, scorers, judges="stacked")
    expected = ch7_gender_swap.shift_claim({"Toy": perf[perf["subset"] == "all"]}, n_resamples=99).iloc[0]
    found = ch7_images.shift_by_image(data, scorers, n_resamples=499, chunk=100)
    assert (found["images"], found["n_model"], found["n_ngram"]) == (5, 2, 2)
    assert found["difference"] == pytest.approx(expected["difference"])
    assert found["mean_origin"] == pytest.approx(expected["mean |origin|"])
    assert found["share_of_origin"] == pytest.approx(abs(expected["difference"]) / expected["mean |origin|"])
    assert found["ci_low"] <= found["ci_high"] and np.isfinite([found["ci_low"], found["ci_high"]]).all()
    assert found["verdict"] in ("model-based shift more", "model-based shift less", "not distinguishable")
    assert ch7_images.shift_by_image(data, scorers[:3], n_resamples=99)["verdict"] == "not tested"


def test_preference_without_the_part_trained_here():
    """The image-level test without Regression (its head trained in this book): the planted regression rows lean
    female on every image, so leaving them out gives the verdict of the two other metrics alone."""
    rows = []
    for name, label, sign in (("bertscore", "BERTScore", 1), ("wmd", "WMD", 1), ("regression", "Regression", -1)):
        for pair in range(24):
            d = sign * (1 if pair < 20 else -1) * 0.1
            base = 0.5 + pair * 0.01
            rows.append({"metric": label, "name": name, "aggregation": "max", "item_id": f"i{pair}", "pair": pair,
                         "male": base + d / 2, "female": base - d / 2, "difference": d})
    pairs = pd.DataFrame(rows)
    found = ch7_gender_swap.preference_without_trained(pairs, n_resamples=199)
    alone = ch7_gender_swap.preference_by_image(pairs[pairs["name"] != "regression"], n_resamples=199)
    assert found["left_out"] == "Regression" and found["metrics"] == 2
    assert (found["positive"], found["negative"], found["verdict"]) == (20, 4, "holds")
    assert found["mean"] == pytest.approx(alone["mean"])
    assert ch7_gender_swap.preference_without_trained(pairs[pairs["name"] != "regression"])["left_out"] == "none"


def test_trained_part_quality_backbones_and_left_out_names():
    class M:
        def __init__(self, name, backbone=None):
            self.name, self.options = name, {"backbone": backbone} if backbone else {}

    scorers = [("BLEU", M("bleu")), ("WMD", M("wmd", "vec")), ("BERTScore-X", M("bertscore", "enc")),
               ("Regression-X", M("regression", "head")), ("Greedy", M("greedy_matching", "vec"))]
    parts = {"head": {"trainer": "regression", "figures": {("stsb-dev", "pearson"): 0.85}, "bleu": {}},
             "para": {"trainer": "paraphraser", "figures": {}, "bleu": {("stsb-dev", "pearson"): 0.33}}}
    assert ch7_gender_swap.trained_part_quality(scorers, parts) == {"label": "Regression-X", "part_r": 0.85,
                                                                    "bleu_r": 0.33}
    assert np.isnan(ch7_gender_swap.trained_part_quality(scorers[:3], parts)["part_r"])
    assert ch7_gender_swap.backbones(scorers) == {"vectors": "vec", "encoders": "enc and head"}
    from metricbias import profiles

    skip = "bartscore,prism,all-mpnet-base-v2"
    names = ch7_gender_swap.left_out_names("offline", skip).split(", ")
    labels = [s.label for s in profiles.suite("offline") if s not in profiles.suite("offline", skip)]
    # every PRISM-F is named once, with the BARTScore-F on its paraphraser; every other label as it is
    assert not any(n.startswith("PRISM") for n in names)
    assert sorted(sum((n.split("/") for n in names), [])) == sorted(labels)
    assert ch7_gender_swap.left_out_names("offline", "", "bleu") == "none"
