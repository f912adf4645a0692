"""Chapters 1-3's comparisons with Sun et al. (2022): published numbers from the released scores, and hand-built
tables for the functions that reshape them."""

import numpy as np
import pandas as pd
import pytest

from conftest import real_raw_location
from metricbias.bias.claims import UNDECIDED
from metricbias.book.display import PAPER
from metricbias.book.reproduction import (ch1_published, ch2_datasets, ch3_figure3, ch3_paradigm_claim, ch3_paradigms,
                                          sun2022)
from metricbias.metrics.matching import MatchingMap

P = f" {PAPER}"


@pytest.fixture(scope="module")
def recomputed():
    real_raw_location()
    return ch1_published.recomputed_bias()  # point values: no bootstrap


def test_point_values_only_leave_the_intervals_undefined(recomputed):
    assert len(recomputed) == 174 and recomputed["bias_ci_low"].isna().all()


def test_reproduction_summary_gives_chapter_1s_published_findings(recomputed):
    f = ch1_published.reproduction_summary(recomputed)
    assert (f["cells_reproduced"], f["cells"], f["metrics"]) == (163, 174, 29)
    assert f["largest_gap_reproduced"] < 0.01 and f["cells_not_reproduced"] == 11
    assert (f["other_cells_reproduced"], f["other_cells"], f["other_metrics"]) == (189, 189, 27)
    assert f["claim_verdict"] == "holds"
    # PRISM-p: five printed cells are BERTScore-DistilBERT's; the sixth (race) is the one reproduced
    assert (f["prism_p_cells_copied"], f["prism_p_cells_reproduced"], f["prism_p_gender_printed"]) == (5, 1, 8.36)
    assert f["prism_gender_recall"] < f["prism_gender_f"] < f["prism_gender_precision"]
    assert round(f["prism_gender_precision"], 2) == 14.33 and round(f["prism_gender_f"], 2) == 7.13  # Table 9
    assert f["meteor_cells_reproduced"] == 0 and f["meteor_ratio_min"] < 0.6 < 2.4 < f["meteor_ratio_max"]
    assert (f["table9_stereotypical_reproduced"], f["table9_absolute_reproduced"], f["table9_rows"]) == (10, 9, 10)
    assert (f["gender_positive_stereotypical"], f["gender_metrics"]) == (29, 29)
    assert (f["pairs_min"], f["pairs_max"], f["attributes_sized_as_table3"], f["attributes"]) == (62, 396, 6, 6)


def test_stereotypical_intervals_say_which_directions_are_established(recomputed):
    stereo = ch1_published.stereotypical_intervals("gender", n_resamples=999)
    gender = recomputed[recomputed["attribute"] == "gender"].set_index("metric")["stereotypical_difference"]
    np.testing.assert_allclose(stereo.set_index("metric")["stereotypical_difference"], gender.loc[stereo["metric"]])
    assert (stereo["ci_low"] <= stereo["stereotypical_difference"]).all()
    assert (stereo["stereotypical_difference"] <= stereo["ci_high"]).all()
    s = ch1_published.stereotypical_summary(stereo)
    assert (s["positive"], s["columns"]) == (29, 29)  # every point value is positive ...
    assert s["above_zero"] + s["below_zero"] + s["reaches_zero"] == 29 and s["below_zero"] == 0
    # ... but the n-gram columns' intervals reach 0: BLEU's lower bound is 0 (most pairs score the same)
    assert s["reaches_zero"] >= 5 and "BLEU" in s["reaches_zero_names"]
    assert "BERTScore-RoBERTa-large" not in s["reaches_zero_names"]


def test_direction_tests_pair_the_directions_of_each_generation_model(recomputed):
    tests = ch1_published.direction_tests("gender", n_resamples=999)
    assert len(tests) == 2 * len(ch1_published.GENERATION_MODELS)
    grid = ch1_published.generation_directions(recomputed).set_index("model")
    prism = tests[tests["model"] == "PRISM"].set_index("comparison")
    # the mean of paired differences is the difference of the two biases (Eq. 2 is a mean over the same pairs)
    assert prism.loc["precision − F", "difference"] == pytest.approx(grid.loc["PRISM", "precision"] - grid.loc["PRISM", "F"])
    assert prism.loc["F − recall", "difference"] == pytest.approx(grid.loc["PRISM", "F"] - grid.loc["PRISM", "recall"])
    assert (tests["ci_low"] <= tests["difference"]).all() and (tests["difference"] <= tests["ci_high"]).all()
    f = ch1_published.direction_findings(tests)
    assert f["verdict"].startswith(("holds", "is not established"))
    assert f["held_others"].startswith(("both BARTScore models", "neither BARTScore model", "1 of the 2 BARTScore"))
    assert f["precision_f"].startswith(f"{prism.loc['precision − F', 'difference']:+.2f} (95% CI")


def test_released_sizes_and_non_neutral_references(recomputed):
    sizes = ch1_published.released_sizes().set_index("attribute")
    assert sizes.loc["gender", "pairs"] == 396 and sizes.loc["race", "pairs with two references"] == 37
    assert (sizes["pairs"] == sizes["pairs" + P]).all()
    repeats = ch1_published.reference_repeats_candidate()
    assert repeats["example"].tolist() == ["age, age-0032", "", "", "age, age-0037", "", ""]
    assert (repeats["sentence"].iloc[[0, 3]].to_numpy() == repeats["sentence"].iloc[[2, 5]].to_numpy()).all()


def _comparison():
    """Two metrics on two attributes (and their average), one cell off."""
    return pd.DataFrame({
        "metric": ["A", "A", "A", "PRISM-p", "PRISM-p", "PRISM-p", "BERTScore-DistilBERT",
                   "BERTScore-DistilBERT", "BERTScore-DistilBERT", "METEOR", "METEOR", "METEOR"],
        "attribute": ["race", "gender", "avg"] * 4,
        "paper": [1.0, 2.0, 1.5, 3.0, 4.0, 3.5, 2.0, 4.0, 3.0, 2.0, 1.0, 1.5],
        "ours": [1.004, 2.0, 1.502, 3.0, 8.0, 5.5, 2.0, 4.0, 3.0, 1.0, 2.5, 1.75],
    }).assign(difference=lambda d: d["ours"] - d["paper"], agrees=lambda d: (d["ours"] - d["paper"]).abs() <= 0.01)


def test_table6_by_metric_and_disagreements():
    by = ch1_published.table6_by_metric(_comparison()).set_index("metric")
    assert by.loc["A", "cells reproduced (of 3)"] == 3 and by.loc["PRISM-p", "cells reproduced (of 3)"] == 1
    assert by.loc["PRISM-p", "largest |difference|"] == 4.0 and by.loc["A", "average" + P] == 1.5
    off = ch1_published.table6_disagreements(_comparison())
    assert off[["metric", "attribute"]].values.tolist() == [["METEOR", "gender"], ["METEOR", "race"],
                                                            ["PRISM-p", "gender"]]
    assert off["difference"].tolist() == [1.5, -1.0, 4.0]


def test_meteor_ratios_divide_ours_by_the_paper():
    out = ch1_published.meteor_ratios(_comparison())
    assert out.values.tolist() == [["race", 2.0, 1.0, 0.5], ["gender", 1.0, 2.5, 2.5]]


def test_generation_directions_pivot_precision_recall_f():
    bias = pd.DataFrame({"attribute": "gender", "metric": ["PRISM-p", "PRISM-r", "PRISM-F", "BLEU"],
                         "bias": [3.0, 1.0, 2.0, 9.0]})
    out = ch1_published.generation_directions(bias)
    assert out.values.tolist() == [["PRISM", 3.0, 1.0, 2.0]]


def test_table9_comparison_flags_agreement_within_the_printed_precision(recomputed):
    t9 = ch1_published.table9_comparison(recomputed).set_index("metric")
    assert not t9.loc["METEOR", "absolute agrees"] and t9.loc["METEOR", "stereotypical agrees"]
    assert t9.loc["BLEURT", "absolute" + P] == 27.08 and round(t9.loc["BLEURT", "absolute"], 2) == 27.08


def test_released_attributes_keep_the_selection_or_fall_back_to_all():
    assert ch2_datasets.released_attributes("age, race") == ["race", "age"]  # the paper's order
    assert ch2_datasets.released_attributes(["diet", "gender"]) == ["gender"]
    assert ch2_datasets.released_attributes("diet") == list(sun2022.ATTRIBUTES)
    assert ch2_datasets.released_attributes(None) == list(sun2022.ATTRIBUTES)


def _match():
    return pd.DataFrame({
        "attribute": ["gender", "gender", "gender", "race", "race", "race", "race"],
        "published_pair_id": [f"p{i}" for i in range(7)],
        "candidate_1": ["c"] * 7, "candidate_2": ["d"] * 7,
        "published_reference": ["the ceo ran", "x's", "r", "A man.", "a man", "b", "c"],
        "pair_id": ["g1", "g2", "", "r1", "r2", "", ""],
        "reference": ["the CEO ran", "x", "", "A man.", "A man", "", ""],
        "reference_method": ["antecedent", "antecedent", "", "drop", "drop", "", ""],
        "reason": ["", "", "differs_beyond_pronouns", "", "", "no_identity_term", ""],
        "exact": [False, False, False, True, False, False, False],
        "same_normalized": [True, False, False, True, True, False, False],
        "difference": ["case", "possessive", "", "none", "case", "", ""],
        "token_edit_distance": pd.array([0, 1, pd.NA, 0, 9, pd.NA, pd.NA], dtype="Int64"),
        "status": ["built", "built", "excluded", "built", "built", "excluded", "not_in_source"],
    })


def test_attribute_words_name_the_source_of_a_shared_attribute():
    assert ch2_datasets.attribute_words("physical_appearance") == "physical appearance"
    assert ch2_datasets.attribute_words("gender_crows") == "gender (CrowS-Pairs)"
    assert ch2_datasets.attribute_words("stereoset_race") == "race (StereoSet)"
    assert ch2_datasets.in_words(pd.DataFrame({"attribute": ["stereoset_gender", "age"]}))["attribute"].tolist() == [
        "gender (StereoSet)", "age"]


def test_released_match_counts_status_and_reference_agreement():
    out = ch2_datasets.released_match(_match()).set_index("attribute")
    assert out.loc["race", ["built", "excluded", "not in source"]].tolist() == [2, 1, 1]
    # shares of every released pair (one not built counts as not rebuilt), as the gender rate of the text
    assert out.loc["race", "rebuilt byte for byte"] == 0.25
    assert out.loc["race", "rebuilt up to case and punctuation"] == 0.5
    assert out.loc["gender", "rebuilt byte for byte"] == ch2_datasets.gender_references(_match())["exact_rate"] == 0
    assert out.loc["gender", "rebuilt up to case and punctuation"] == pytest.approx(1 / 3)
    assert out.loc["race", "token edit distance (mean)"] == 4.5
    g = ch2_datasets.gender_references(_match())
    assert (g["released"], g["exact"], g["normalized"], g["not_built"], g["case"], g["possessive"]) == (3, 0, 1, 1, 1, 1)


def test_reference_differences_and_their_examples():
    diffs = ch2_datasets.reference_differences(_match())
    assert diffs.values.tolist() == [["case", 1], ["not built: differs_beyond_pronouns", 1], ["possessive", 1]]
    ex = ch2_datasets.reference_difference_examples(_match(), per_kind=1)
    assert ex.values.tolist() == [["case", "the CEO ran", "the ceo ran"], ["possessive", "x", "x's"]]


def test_crows_tables_of_the_match():
    dist = ch2_datasets.edit_distances(_match(), cap=6)
    assert dist.values.tolist() == [["race", 0, 1], ["race", 6, 1]]
    kinds = ch2_datasets.difference_kinds(_match())
    assert kinds.values.tolist() == [["race", 1, 1]] and list(kinds.columns) == ["attribute", "case", "none"]
    assert ch2_datasets.not_in_source(_match())["attribute"].tolist() == ["race"]
    ex = ch2_datasets.released_exclusions(_match())
    assert ex.values.tolist() == [["differs_beyond_pronouns", 1, 0], ["no_identity_term", 0, 1]]


def test_built_sizes_and_crows_subset_beside_table3():
    summary = pd.DataFrame({"attribute": ["race", "religion", "diet"],
                            "source": ["crows_pairs", "crows_pairs", "crows_pairs"],
                            "pairs": [200, 80, 3], "excluded": [300, 25, 1]})
    sizes = ch2_datasets.built_sizes(summary)
    assert sizes["pairs" + P].tolist()[:2] == [179, 105] and pd.isna(sizes["pairs" + P].iloc[2])
    sub = ch2_datasets.crows_subset(sizes)
    assert (sub["released"], sub["source_pairs"], sub["larger"], sub["smaller"]) == (179, 500, "race", "religion")


def _by_dataset():
    rows = []
    for dataset, bias, low, high in (("built", [1.0, 0.0], [0.5, 0.0], [1.5, 0.0]),
                                     ("released", [2.0, 0.0], [1.6, 0.0], [2.4, 0.0]),
                                     ("released scores", [2.0, 0.0], [1.6, 0.0], [2.4, 0.0])):
        for (metric, attribute), b, lo, hi in zip([("BLEU", "race"), ("BLEU", "gender")], bias, low, high):
            rows.append({"dataset": dataset, "attribute": attribute, "metric": metric, "n_pairs": 10, "bias": b,
                         "bias_ci_low": lo, "bias_ci_high": hi, "stereotypical_difference": 0.0})
    return pd.DataFrame(rows)


def _ref_tests():
    return pd.DataFrame({"metric": ["BLEU", "BLEU"], "attribute": ["race", "gender"], "pairs": [10, 10],
                         "difference": [-1.0, 0.0], "ci_low": [-1.5, 0.0], "ci_high": [-0.5, 0.0],
                         "tost_low": [-1.4, 0.0], "tost_high": [-0.6, 0.0], "margin": [1.0, 1.0],
                         "equivalent": [False, True], "verdict": ["lower", "same within ±1"]})


def test_reference_bias_table_summary_and_verdict():
    cmp = ch2_datasets.reference_bias_table(_by_dataset(), _ref_tests())
    assert cmp[["metric", "attribute", "built", "released", "built − released", "verdict"]].values.tolist() == [
        ["BLEU", "race", 1.0, 2.0, -1.0, "lower"], ["BLEU", "gender", 0.0, 0.0, 0.0, "same within ±1"]]
    s = ch2_datasets.reference_bias_summary(_by_dataset(), _ref_tests())
    assert s == {"cells": 2, "margin": 1.0, "same": 1, "differ": 1, "undecided": 0, "differ_within_margin": 0,
                 "differ_cells": "BLEU on race",
                 "scores_reproduced_within": 0.0, "largest_difference": 1.0, "largest_difference_cell": "BLEU on race"}
    no_test = ch2_datasets.reference_bias_summary(_by_dataset(), _ref_tests().assign(verdict=UNDECIDED))
    assert (no_test["same"], no_test["differ"], no_test["undecided"], no_test["differ_cells"]) == (0, 0, 2, "none")


def test_reference_bias_tests_pair_the_built_and_released_references():
    real_raw_location()
    tests = ch2_datasets.reference_bias_tests("gender", n_resamples=199)
    by_dataset = ch2_datasets.reference_bias("gender", n_resamples=0)
    cmp = ch2_datasets.reference_bias_table(by_dataset, tests)
    # the mean paired difference is the difference of the two biases (the same pairs on both sides)
    np.testing.assert_allclose(tests["difference"].to_numpy(), cmp["built − released"].to_numpy(), atol=1e-9)
    assert set(tests["metric"]) == {"BLEU", "ROUGE", "chrF"} and (tests["pairs"] == 394).all()
    assert (tests["margin"] == ch2_datasets.REFERENCE_MARGIN).all()


def test_minimal_pairs_on_the_released_gender_scores():
    real_raw_location()
    by = pd.DataFrame({"dataset": "released scores", "attribute": "gender", "metric": ["BLEU", "ROUGE", "chrF"],
                       "n_pairs": 394, "bias": [0.0, 0.0, 1.13]})
    out = ch2_datasets.minimal_pairs(by, n_resamples=0)
    assert (out["pairs_all"], out["pairs_shared"], out["left_out"]) == (396, 394, 2)
    assert (round(out["bleu_all"], 2), round(out["rouge_all"], 2), round(out["chrf_all"], 2)) == (0.10, 0.21, 1.23)
    assert out["word_level_zero"] and (out["bleu_shared"], out["rouge_shared"]) == (0.0, 0.0)
    none = ch2_datasets.minimal_pairs(by.assign(attribute="race"))
    assert np.isnan(none["bleu_all"]) and not none["word_level_zero"]


CONFIGS = pd.DataFrame({"metric": ["BLEU", "BERTScore-x", "Regression-x"], "family": ["BLEU", "BERTScore", "Regression"],
                        "paradigm": ["n-gram", "Matching", "Regression"], "backbone": [None, "x", "x"],
                        "params_m": [np.nan, 22.0, 22.0], "source": "live"})
LIVE = pd.DataFrame({"attribute": ["gender"] * 3 + ["race"] * 3, "metric": list(CONFIGS["metric"]) * 2,
                     "bias": [0.5, 7.0, 8.0, 1.0, 5.0, 40.0]})


def test_bias_by_paradigm_and_gender_ranges():
    out = ch3_paradigms.bias_by_paradigm(LIVE, CONFIGS)
    assert out.values.tolist() == [["n-gram", 2, 0.75, 0.5, 1.0], ["Matching", 2, 6.0, 5.0, 7.0],
                                   ["Regression", 2, 24.0, 8.0, 40.0]]
    r = ch3_paradigms.gender_ranges(LIVE, CONFIGS)
    assert (r["plm_min"], r["plm_max"], r["surface_min"], r["surface_max"]) == (7.0, 8.0, 0.5, 0.5)
    assert (r["ngram_min"], r["ngram_max"]) == (0.5, 0.5) and np.isnan(r["static_min"])  # no static metric here
    assert (r["paper_ngram_min"], r["paper_plm_max"]) == (0.10, 29.97)  # Table 6, gender column


def test_released_column_differences_subtract_theirs_from_ours():
    released = pd.DataFrame({"attribute": ["race", "gender"], "metric": ["ROUGE", "ROUGE"], "bias": [1.0, 2.0]})
    live = pd.DataFrame({"attribute": ["race", "gender"], "metric": ["ROUGE-1", "ROUGE-1"], "bias": [1.5, 2.0]})
    out = ch3_paradigms.released_column_differences(released, live)
    assert list(out.columns) == ["metric", "race", "gender"] and out.values.tolist() == [["ROUGE-1", 0.5, 0.0]]


def test_rank_agreement_is_spearman_per_attribute():
    built = LIVE.assign(bias=LIVE["bias"] * 2)
    built.loc[3, "bias"] = 100.0  # race: BLEU now ranks first
    out = ch3_paradigms.rank_agreement(LIVE, built).set_index("attribute")
    assert out.loc["gender", "Spearman ρ"] == pytest.approx(1.0) and out.loc["race", "Spearman ρ"] == pytest.approx(-0.5)
    assert out.loc["race", "metrics"] == 3
    assert np.isnan(out.loc["race", "CI low"])  # three metrics: too few for an interval
    many = pd.DataFrame({"attribute": "gender", "metric": [f"m{i}" for i in range(12)], "bias": np.arange(12.0)})
    agree = ch3_paradigms.rank_agreement(many, many.assign(bias=many["bias"][::-1].to_numpy() * 0 + np.arange(12.0) ** 2))
    assert agree["Spearman ρ"].iloc[0] == pytest.approx(1.0) and agree["CI low"].iloc[0] > 0.9
    assert ch3_paradigms.rank_agreement_findings(agree) == {"rho_min": pytest.approx(1.0), "rho_max": pytest.approx(1.0),
                                                            "attributes": 1, "positive": 1, "positive_names": "gender",
                                                            "positive_phrase": "the only attribute (gender)"}
    both = ch3_paradigms.rank_agreement_findings(out.reset_index())  # race: too few metrics for an interval
    assert (both["rho_min"], both["positive"], both["positive_names"]) == (pytest.approx(-0.5), 0, "none")
    assert both["positive_phrase"] == "neither attribute"  # gender and race


def test_paradigm_gaps_pair_the_groups_over_the_same_pairs():
    rng = np.random.default_rng(0)
    rows = []
    for metric, spread in (("BLEU", 0.1), ("BERTScore-x", 5.0), ("Regression-x", 8.0)):
        s1 = rng.normal(50, 10, 40)
        for i in range(40):
            rows.append({"attribute": "gender", "pair_id": f"g{i}", "metric": metric, "score_1": s1[i],
                         "score_2": s1[i] + rng.normal(0, spread)})
    scores = pd.DataFrame(rows)
    gaps = ch3_paradigms.paradigm_gaps(scores, CONFIGS, n_resamples=999).set_index("comparison")
    plm = (sun2022.pairwise.bias_table(scores, n_resamples=0).set_index("metric")["bias"])
    expected = (plm["BERTScore-x"] + plm["Regression-x"]) / 2 - plm["BLEU"]
    assert gaps.loc["PLM-based − n-gram", "difference"] == pytest.approx(expected)
    assert gaps.loc["PLM-based − n-gram", "verdict"] == "higher"
    assert gaps.loc["PLM-based − static embedding", "verdict"] == "no configuration on one side"
    f = ch3_paradigms.paradigm_gap_findings(gaps.reset_index())
    assert f["ngram_words"] == "more biased than" and f["ngram_difference"] == pytest.approx(expected)
    assert f["ngram_verdict"] == "holds" and f["static_verdict"] == "not comparable"
    assert f["static_words"] == "no configuration on one side"


def test_figure4_points_variance_and_positions(recomputed):
    points = ch3_paradigms.figure4_points(recomputed, LIVE, CONFIGS)
    assert set(points["paradigm"]) == {"Matching", "Regression", "Generation"}
    assert not points["metric"].str.endswith(("-p", "-r")).any()
    assert points.loc[points["source"] == "live", "metric"].tolist() == ["BERTScore-x", "Regression-x"]
    assert (points["source"] == "released").sum() == 18  # F-scores only for the generation metrics
    pos = ch3_paradigms.live_positions(points).set_index("metric")
    assert pos.loc["Regression-x", "average bias"] == 24.0 and pos.loc["Regression-x", "position"] == "above"
    assert pos.loc["BERTScore-x", "position"] == "inside"  # 6.0: within the released matching range, 5.13-7.84


def _map(metric, cand, ref, matrix):
    return MatchingMap(metric, cand, ref, np.array(matrix, float), 0.0, "x")


def test_figure3_pull_and_sentence():
    maps = {("BERTScore", "candidate_1"): (_map("bertscore", ["she", "ran"], ["the", "nurse"], [[0.2, 0.6],
                                                                                               [0.1, 0.3]]), 0.9),
            ("BERTScore", "candidate_2"): (_map("bertscore", ["he", "ran"], ["the", "nurse"], [[0.5, 0.4],
                                                                                              [0.1, 0.3]]), 0.8),
            ("MoverScore", "candidate_1"): (_map("moverscore", ["she", "ran"], ["the", "nurse"], [[0.1, 0.3],
                                                                                                 [0.5, 0.1]]), 0.5),
            ("MoverScore", "candidate_2"): (_map("moverscore", ["he", "ran"], ["the", "nurse"], [[0.3, 0.1],
                                                                                                [0.5, 0.1]]), 0.6)}
    pull = ch3_figure3.figure3_pull(maps)
    assert pull.iloc[:, :2].values.tolist() == [["she", "nurse"], ["he", "the"]]
    np.testing.assert_allclose(pull.iloc[:, 2:].to_numpy(float), [[0.6, 0.75], [0.4, 0.25]])
    f = ch3_figure3.figure3_findings(pull, maps)
    assert (f["she_cosine"], f["he_cosine"], f["closer"]) == (pytest.approx(0.6), pytest.approx(0.4), "closer to")
    assert (f["she_mass"], f["he_mass"]) == (pytest.approx(0.75), pytest.approx(0.25))
    assert (f["she_bertscore"], f["he_bertscore"], f["she_moverscore"], f["he_moverscore"]) == (0.9, 0.8, 0.5, 0.6)
    assert (f["she_scores"], f["contrast"]) == ("higher on BERTScore and lower on MoverScore", "and")
    assert ch3_figure3.scores_words({"BERTScore": False, "MoverScore": False}) == "lower on both metrics"
    closer_but_lower = {k: (v[0], 1.0 - v[1]) if k[1] == "candidate_1" else v for k, v in maps.items()}
    f = ch3_figure3.figure3_findings(pull, closer_but_lower)
    assert (f["she_scores"], f["contrast"]) == ("lower on both metrics", "yet")
    assert ch3_figure3.figure3_findings(pull.iloc[:1], maps)["closer"] == ""


def test_figure3_example_is_the_nurse_pair():
    real_raw_location()
    example = ch3_figure3.figure3_example()
    assert example["candidate_1"] == "The CEO helped the nurse because she needed help"
    assert ch3_figure3.figure3_texts(example)["text"].tolist() == ["reference", "candidate 1", "candidate 2"]


def test_backbones_summary_from_given_tables(recomputed):
    f = ch3_paradigms.backbones_summary(LIVE, CONFIGS, recomputed)
    assert (f["live_configurations"], f["live_outside_released_range"]) == (2, 1)  # Regression-x is above
    assert (f["gender_plm_min"], f["gender_plm_max"], f["gender_surface_max"]) == (7.0, 8.0, 0.5)


def test_datasets_summary_on_the_built_gender_set():
    real_raw_location()
    f = ch2_datasets.datasets_summary("gender", by_dataset=_by_dataset(), tests=_ref_tests())
    assert (f["attributes"], f["gender_released"], f["gender_exact"]) == (1, 396, 377)
    assert f["pairs"] == 1557 and f["exclusions"] == 27
    assert round(f["gender_exact_rate"], 3) == 0.952 and round(f["gender_normalized_rate"], 3) == 0.985
    assert (f["bias_cells"], f["bias_cells_same"], f["bias_cells_differ"], f["bias_largest_difference"]) == (2, 1, 1,
                                                                                                          1.0)


def _availability(mpnet_runs=False):
    """The 2 x 3 grid's configurations by hand: MiniLM runs everywhere, MPNet only where ``mpnet_runs``."""
    from metricbias.metrics import backbone_grid

    a = backbone_grid.configs()
    mpnet = a["backbone"] == "all-mpnet-base-v2"
    return a.assign(runs=~mpnet | mpnet_runs,
                    fix=np.where(mpnet & ~mpnet_runs, "metricbias install-backbone all-mpnet-base-v2", ""))


def test_fix_is_the_last_command_of_the_reason_without_paths():
    assert ch3_paradigm_claim._fix("backbone 'x' is not installed in /work/a/b; install it with `metricbias install-backbone x` "
                        "(make backbones)") == "metricbias install-backbone x"
    assert ch3_paradigm_claim._fix("no command here") == ""


def test_grid_backbones_and_runs_say_what_ran():
    one = ch3_paradigm_claim.grid_backbones(_availability())
    assert one["ran"] == one["complete"] == ["all-MiniLM-L6-v2"] and one["absent"] == ["all-mpnet-base-v2"]
    assert (one["configurations_run"], one["configurations"]) == (7, 14)
    runs = ch3_paradigm_claim.grid_runs(_availability())
    assert runs.values.tolist() == [["all-MiniLM-L6-v2", 7, 7, "yes", ""],
                                    ["all-mpnet-base-v2", 7, 0, "no", "metricbias install-backbone all-mpnet-base-v2"]]
    both = ch3_paradigm_claim.grid_backbones(_availability(True))
    assert both["complete"] == ["all-MiniLM-L6-v2", "all-mpnet-base-v2"] and not both["fixes"]
    assert (ch3_paradigm_claim.grid_runs(_availability(True))["every paradigm"] == "yes").all()
    assert [e.label for e in ch3_paradigm_claim.grid_entries(_availability())] == [
        "BERTScore-F-MiniLM", "MoverScore-MiniLM", "Regression-MiniLM", "BARTScore-P-MiniLM", "BARTScore-R-MiniLM",
        "BARTScore-F-MiniLM", "PRISM-F-MiniLM"]


def _grid_scores(availability, effect):
    """Two attributes x 6 pairs; a configuration's |score_1 - score_2| is ``effect[(paradigm, backbone)]`` (one
    pair scored 0 vs 1 fixes the Eq. 1 range)."""
    rows = []
    for r in availability[availability["runs"]].itertuples():
        e = effect[(r.paradigm, r.backbone)]
        for attribute in ("gender", "race"):
            for i in range(6):
                s1, s2 = (1.0, 0.0) if i == 0 else (0.5 + e / 2, 0.5 - e / 2)
                rows.append({"attribute": attribute, "pair_id": i, "metric": r.metric, "score_1": s1, "score_2": s2})
    return pd.DataFrame(rows)


@pytest.mark.usefixtures("private_cache")  # decompose keeps its table in the result cache
def test_grid_decomposition_with_one_and_two_backbones():
    effect = {("Matching", "all-MiniLM-L6-v2"): 0.1, ("Regression", "all-MiniLM-L6-v2"): 0.3,
              ("Generation", "all-MiniLM-L6-v2"): 0.5, ("Matching", "all-mpnet-base-v2"): 0.2,
              ("Regression", "all-mpnet-base-v2"): 0.4, ("Generation", "all-mpnet-base-v2"): 0.6}
    one = _availability()
    assert ch3_paradigm_claim.grid_decomposition(_grid_scores(one, effect), one).empty
    claim = ch3_paradigm_claim.paradigm_claim(ch3_paradigm_claim.grid_decomposition(_grid_scores(one, effect), one), 10)
    assert len(claim) == 1 and claim["source"].iloc[0] == ch3_paradigm_claim.RELEASED
    both = _availability(True)
    d = ch3_paradigm_claim.grid_decomposition(_grid_scores(both, effect), both, n_resamples=19)
    avg = d.set_index("attribute").loc["average"]
    # additive effects: paradigm rows 0.1/0.3/0.5 (+0.1 for MPNet); SS_paradigm = 2*(0.2²+0+0.2²), SS_backbone =
    # 3*(2*0.05²), no interaction; every pair but the first carries the effect (5/6 of it after Eq. 1)
    assert avg["share_paradigm"] == pytest.approx(0.16 / (0.16 + 0.015))
    assert avg["share_interaction"] == pytest.approx(0, abs=1e-12)
    claim = ch3_paradigm_claim.paradigm_claim(d, 10)
    details = ch3_paradigm_claim.claim_details(claim)
    assert details["reading"].tolist()[:2] == ["released (Table 6)", "backbone fixed (live)"]
    assert details["verdict"].iloc[0] == "not comparable"  # the released reading has no interval
    table = ch3_paradigm_claim.claim_table(claim)  # the fixed-backbone rows, at most 8 columns, words for headers
    assert len(table.columns) <= 8 and table["attribute"].iloc[-1] == "average"
    share = table.iloc[-1]["paradigm's share [95% CI]"]
    assert share == f"{avg['share_paradigm']:.0%} [{avg['share_paradigm_ci_low']:.0%}, {avg['share_paradigm_ci_high']:.0%}]"
    # the interval that decides the verdict, in percentage points: the paradigm's share minus the backbone's
    difference = table.iloc[-1]["share difference, percentage points [95% CI]"]
    assert difference == (f"{100 * avg['difference']:+.0f} [{100 * avg['difference_ci_low']:+.0f}, "
                          f"{100 * avg['difference_ci_high']:+.0f}]")
    assert avg["difference"] == pytest.approx(avg["share_paradigm"] - avg["share_backbone"])
    assert avg["difference_ci_low"] > 0
    # every resample has the paradigm's share larger: the claim holds by the interval, not by the point values alone
    assert set(table["verdict"]) == {"holds"}
    found = ch3_paradigm_claim.fixed_backbone_findings(claim, both)
    assert found["verdict"] == "holds" and found["paradigm"] == pytest.approx(0.16 / (0.16 + 0.015))
    assert found["paradigm_low"] <= found["paradigm"] <= found["paradigm_high"]
    # the decomposed cells: BERTScore-F, MoverScore, regression, BARTScore-F and PRISM-F on each of two backbones
    assert (found["cells"], found["paradigms"], found["backbones"]) == (10, 3, 2)
    assert found["paradigm_names"] == "matching, regression and generation"
    assert found["holds"] == found["attributes"] and found["reversed"] == found["undecided"] == 0
    # the verdict reads the interval of the paradigm's share minus the backbone's; none: not comparable
    assert [ch3_paradigm_claim.claim_verdict(*ci) for ci in ((0.1, 0.9), (-0.2, 0.5), (-0.9, -0.4), (np.nan, np.nan))
            ] == ["holds", "not distinguishable at this size", "reverses", "not comparable"]


def test_paradigm_share_per_backbone_and_grid_averages():
    one = _availability()
    bias = pd.DataFrame({"metric": ["BERTScore-F-MiniLM", "MoverScore-MiniLM", "Regression-MiniLM",
                                    "BARTScore-F-MiniLM", "PRISM-F-MiniLM", "BARTScore-P-MiniLM"],
                         "attribute": "gender", "bias": [1.0, 3.0, 5.0, 8.0, 10.0, 99.0]})
    share = ch3_paradigm_claim.paradigm_share_per_backbone(bias, one)
    # decomposed configurations only (BARTScore-P is not): groups {1, 3}, {5}, {8, 10}; mean 5.4
    total = sum((v - 5.4) ** 2 for v in (1, 3, 5, 8, 10))
    between = 2 * (2 - 5.4) ** 2 + (5 - 5.4) ** 2 + 2 * (9 - 5.4) ** 2
    assert share.iloc[0].to_dict() == {"backbone": "all-MiniLM-L6-v2", "configurations": 5, "paradigms": 3,
                                       "share_paradigm": pytest.approx(between / total)}
    found = ch3_paradigm_claim.fixed_backbone_findings(
        ch3_paradigm_claim.paradigm_claim(ch3_paradigm_claim.grid_decomposition(pd.DataFrame(), one)), one)
    rel = ch3_paradigm_claim.released_shares()
    assert found["released_paradigm"] == rel["share_paradigm"] and found["verdict"] == "not comparable"  # one backbone
    assert np.isnan(found["paradigm"])
    avg = ch3_paradigm_claim.grid_bias_average(bias, one)
    assert avg["family"].tolist() == ["BERTScore", "MoverScore", "Regression", "BARTScore", "BARTScore", "PRISM"]
    assert avg.set_index("variant").loc["P", "all-MiniLM-L6-v2: largest on"] == "gender (99.00)"


def test_without_paradigm_leaves_one_paradigm_out_of_the_decomposition_only():
    import pandas as pd

    from metricbias.book.reproduction import ch3_paradigm_claim

    grid = pd.DataFrame({"metric": ["B", "R", "G", "G2"], "paradigm": ["Matching", "Regression", "Generation",
                                                                       "Generation"],
                         "decomposed": [True, True, True, False], "runs": [True] * 4})
    two = ch3_paradigm_claim.without_paradigm(grid, "Generation")
    assert list(two["decomposed"]) == [True, True, False, False]
    assert list(two["metric"]) == list(grid["metric"]) and list(grid["decomposed"]) == [True, True, True, False]


def test_decomposed_names_name_each_grid_configuration_once_without_its_encoder():
    import pandas as pd

    from metricbias.book.reproduction import ch3_paradigm_claim

    grid = pd.DataFrame({"metric": ["BERTScore-F-MiniLM", "BARTScore-P-MiniLM", "BARTScore-F-MiniLM",
                                    "BERTScore-F-MPNet", "BARTScore-F-MPNet"],
                         "decomposed": [True, False, True, True, True]})
    assert ch3_paradigm_claim.decomposed_names(grid) == "BERTScore-F and BARTScore-F"
    assert ch3_paradigm_claim.decomposed_names(grid.assign(decomposed=False)) == "none"


@pytest.mark.usefixtures("private_cache")  # decompose keeps its table in the result cache
def test_two_paradigm_decomposition_on_the_size_robust_bias():
    """The matching-and-regression reading's size-robust row: shares worked by hand from the definition."""
    effect = {("Matching", "all-MiniLM-L6-v2"): 0.1, ("Regression", "all-MiniLM-L6-v2"): 0.3,
              ("Generation", "all-MiniLM-L6-v2"): 0.5, ("Matching", "all-mpnet-base-v2"): 0.2,
              ("Regression", "all-mpnet-base-v2"): 0.4, ("Generation", "all-mpnet-base-v2"): 0.6}
    both = _availability(True)
    two = ch3_paradigm_claim.without_paradigm(both, "Generation")
    robust = ch3_paradigm_claim.grid_decomposition(_grid_scores(both, effect), two, n_resamples=19,
                                                   measure="size_robust_bias")

    def srb(e):  # 100 · mean |s1 - s2| / SD of the pooled scores, on _grid_scores' six pairs
        s1, s2 = np.array([1.0] + [0.5 + e / 2] * 5), np.array([0.0] + [0.5 - e / 2] * 5)
        return 100 * np.abs(s1 - s2).mean() / np.concatenate([s1, s2]).std(ddof=1)

    # the 2 x 2 grid of cell means (BERTScore-F and MoverScore share the matching cell, with the same effect):
    # rows matching/regression, columns MiniLM/MPNet; SS of a factor = levels of the other x squared deviations
    y = np.array([[srb(0.1), srb(0.2)], [srb(0.3), srb(0.4)]])
    m = y.mean()
    total = ((y - m) ** 2).sum()
    paradigm_share = 2 * ((y.mean(1) - m) ** 2).sum() / total
    backbone_share = 2 * ((y.mean(0) - m) ** 2).sum() / total
    found = ch3_paradigm_claim.size_robust_average(robust)
    assert found["paradigm_low"] <= found["paradigm"] <= found["paradigm_high"]
    assert found["backbone_low"] <= found["backbone"] <= found["backbone_high"]
    assert found["paradigm"] == pytest.approx(paradigm_share) and found["backbone"] == pytest.approx(backbone_share)
    assert found["backbone"] < found["paradigm"]
    assert found["verdict"] == ch3_paradigm_claim.claim_verdict(
        *robust.set_index("attribute").loc["average", ["difference_ci_low", "difference_ci_high"]])
    # the reading that leaves generation out decomposes two paradigms only
    assert set(two.loc[two["decomposed"], "paradigm"]) == {"Matching", "Regression"}
