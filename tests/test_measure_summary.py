"""Chapter 4's summaries of several measures on the same scores: hand-worked tables, properties, released data."""

import numpy as np
import pandas as pd
import pytest

from metricbias.bias import generalized, pairwise, significance
from metricbias.book.reproduction import ch4_measures as ms, czarnowska2021

# three metrics on two attributes; "b" is the most biased under Eq. 2 in both, "c" under |stereotypical| in x
GRID = pd.DataFrame({
    "attribute": ["x", "x", "x", "y", "y", "y"],
    "metric": ["a", "b", "c", "a", "b", "c"],
    "eq2": [1.0, 5.0, 3.0, 2.0, 6.0, 1.0],
    "stereotypical": [0.5, -1.0, -4.0, 0.1, 3.0, -0.2],
})


def test_count_list_orders_by_count_then_appearance():
    assert ms.count_list(["b", "a", "b", "c", "a", "b"]) == "b (3), a (2), c (1)"
    assert ms.count_list(["z", "y"], bold=True) == "**z** (1), **y** (1)"
    assert ms.count_list([]) == ""


def test_most_biased_and_agreement_by_hand():
    top = ms.most_biased(GRID)
    assert top.to_dict("records") == [{"attribute": "x", "eq2": "b", "stereotypical": "c"},
                                      {"attribute": "y", "eq2": "b", "stereotypical": "b"}]
    found = ms.agreement(GRID)
    assert found["top_metric_differs"] == 1 and found["attributes"] == 2
    # Spearman over the six cells, by hand: ranks of eq2 and of the signed difference
    eq2_ranks = pd.Series(GRID["eq2"]).rank()
    st_ranks = pd.Series(GRID["stereotypical"]).rank()
    assert found["rho_eq2_stereotypical"] == pytest.approx(np.corrcoef(eq2_ranks, st_ranks)[0, 1])
    assert isinstance(found["rho_eq2_stereotypical"], float)


def test_normality_counts_cells_where_both_sets_pass():
    liu = pd.DataFrame({"attribute": ["x", "x", "y", "y"], "metric": list("abab"),
                        "shapiro_p_1": [0.2, 0.01, 0.5, 0.9], "shapiro_p_2": [0.3, 0.6, 0.04, 0.06],
                        "tie_share": [0.0, 0.6, 0.51, 0.5]})
    found = ms.normality(liu, attributes=["y", "x"])
    assert found["both_normal"] == 2 and found["cells"] == 4 and found["both_normal_share"] == 0.5
    assert found["by_attribute"] == "y 50%, x 50%"
    assert found["mostly_tied"] == 2  # strictly more than half


def test_chapter_attributes_splits_released_and_multi_group_sets():
    groups = {"gender": ["f", "m", "n"], "race": ["b", "w"], "nationality": ["a", "c"]}
    released = ("race", "gender", "age")
    assert ms.chapter_attributes(None, released, ["gender", "race"], groups) == (
        ["race", "gender", "age"], {"gender": ["f", "m", "n"], "race": ["b", "w"]})
    assert ms.chapter_attributes("gender, nationality", released, ["gender"], groups) == (
        ["gender"], {"gender": ["f", "m", "n"], "nationality": ["a", "c"]})
    with pytest.raises(ValueError, match=r"attributes=\['diet'\].*counterfactuals.yml"):
        ms.chapter_attributes("gender,diet", released, ["gender"], groups)
    with pytest.raises(ValueError, match="released scores"):
        ms.chapter_attributes(["nationality"], released, ["gender"], groups)
    with pytest.raises(ValueError, match="multi-group section"):
        ms.chapter_attributes(["age"], released, ["gender"], groups)
    assert ms.focus_attribute(["race", "gender"]) == "gender" and ms.focus_attribute(("age", "race")) == "age"


def test_eq2_identity_and_intervals_on_a_small_table():
    rng = np.random.default_rng(0)
    scores = pd.DataFrame({"attribute": ["x"] * 12 + ["y"] * 12, "metric": (["a"] * 6 + ["b"] * 6) * 2,
                           "pair_id": list(range(6)) * 4, "score_1": rng.random(24), "score_2": rng.random(24)})
    found = czarnowska2021.eq2_identity(scores)
    assert found["cells"] == 4 and found["gap_abs"] < 1e-12 and found["gap_signed"] < 1e-12
    assert found["verdict"] == "holds" and czarnowska2021.eq2_identity(scores.iloc[0:0])["verdict"] == "not comparable"
    assert found["identities"] == "hold" and found["abs_agreement"] == czarnowska2021.agreement_phrase(found["gap_abs"])
    assert czarnowska2021.agreement_phrase(0.0) == "agree to every printed digit"
    assert czarnowska2021.agreement_phrase(1.4210854715202004e-14) == "differ by at most 1.4e-14"
    intervals = significance.paired_intervals(scores, "x", n_resamples=99, seed=0)
    assert list(intervals["measure"]) == ["eq2", "stereotypical", "counterfactual_mwu"] * 2
    a = scores[(scores.attribute == "x") & (scores.metric == "a")]
    row = intervals[(intervals.metric == "a") & (intervals.measure == "eq2")].iloc[0]
    assert row["value"] == pytest.approx(pairwise.absolute_bias(a["score_1"], a["score_2"]))
    assert row["ci_low"] <= row["value"] <= row["ci_high"] and row["n_sources"] == 6
    wide = significance.interval_columns(intervals, order=["b", "a"], labels={"eq2": "Eq. 2"})
    assert list(wide.columns[:3]) == [("Eq. 2", "value"), ("Eq. 2", "CI low"), ("Eq. 2", "CI high")]
    assert list(wide.index) == ["b", "a"] and wide.index.name == "metric"
    assert wide.loc["a", ("Eq. 2", "value")] == pytest.approx(row["value"])
    assert wide.loc["a", ("Eq. 2", "CI high")] == pytest.approx(row["ci_high"])


def test_instances_list_the_framework_choices():
    t = czarnowska2021.instances()
    assert list(t["column"]) == list(generalized.PAIRED_INSTANCES)
    assert t.set_index("column").loc["group_w1", "d formula"] == "W1(X, Y)"


def test_reference_summary_and_grid_by_hand():
    versus = pd.DataFrame({"attribute": ["x", "x", "y", "y"], "metric": ["a", "b", "a", "b"],
                           "difference": [1.25, -0.5, 3.0, 0.04], "p_adjusted": [0.01, 0.2, 0.049, 0.5]})
    found = ms.reference_summary(versus)
    assert found == {"significant": 2, "tests": 4, "not_significant": 2, "not_significant_by_metric": "b (2)"}
    grid, labels = significance.reference_grid(versus, row_order=["b", "a", "z"], col_order=["y", "x"])
    assert list(grid.index) == ["b", "a"] and list(grid.columns) == ["y", "x"]
    assert labels.loc["a", "x"] == "1.2*" and labels.loc["b", "y"] == "0.0" and labels.loc["a", "y"] == "3.0*"
    assert grid.loc["b", "x"] == -0.5


def test_headline_findings_pick_the_section_numbers():
    out = ms.headline_findings(
        identity={"cells": 4, "gap_abs": 0.0, "gap_signed": 0.0},
        agreement={"rho_eq2_stereotypical": 0.35, "top_metric_differs": 3, "attributes": 6},
        versus_bleu={"significant": 152, "tests": 168},
        normality={"both_normal_share": 0.09},
        stability={"most_stable": "eq2", "most_stable_panels": 7, "panels": 7},
        counterfactual={"ngram_worst_nonbinary": 9, "ngram_metrics": 10, "groups_without_vectors": 5, "groups": 14})
    assert out["most_stable"] == "eq2" and out["most_stable_panels"] == out["panels"] == 7
    assert out["differ_from_bleu"] == 152 and out["groups_without_vectors"] == 5


def test_elsewhere_appears_only_when_some_cases_are_left():
    clause = "its lead is not distinguishable at this size"
    assert ms.elsewhere(5, 7, clause) == f"; elsewhere {clause}."
    assert ms.elsewhere(7, 7, clause) == "."  # "7 of 7 panels": there is no elsewhere
    assert ms.elsewhere(0, 7, clause) == "."  # "0 of 7": no lead anywhere to contrast with


def test_counted_leaves_out_the_zero_counts():
    assert ms.counted([("above 50 for", 3, ""), ("below 50 for", 1, "AUL 45.9"), ("across 50 for", 0, "")]) == \
        "above 50 for 3 and below 50 for 1 (AUL 45.9)"
    assert ms.counted([("a", 1, ""), ("b", 2, ""), ("c", 3, "")]) == "a 1, b 2 and c 3"
    assert ms.counted([("a", 0, "")], empty="nowhere") == "nowhere"
