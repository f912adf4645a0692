"""Chapter 4's PLL results beside Liu's Table 2: indicator intervals over pairs, their side of 50, the page table and
the direction paragraph, on hand-made scores."""

import numpy as np
import pandas as pd
import pytest

from metricbias.book.reproduction import liu2024, liu_table2


def scores(dataset, model, method, wins, losses, nan=0):
    """``wins`` pairs with f(S_st) > f(S_at), ``losses`` the other way, ``nan`` pairs with no score."""
    st = [-1.0] * wins + [-3.0] * losses + [np.nan] * nan
    at = [-2.0] * wins + [-2.0] * losses + [-2.0] * nan
    n = len(st)
    return pd.DataFrame({"dataset": dataset, "model": model, "pair": [f"{method}{i}" for i in range(n)],
                         "bias_type": ["race", "gender"] * (n // 2) + ["race"] * (n % 2), "method": method,
                         "score_st": st, "score_at": at})


def test_side_of_50_needs_the_interval_to_exclude_50():
    assert liu_table2.side_of_50(50.5, 70) == "stereotypical"
    assert liu_table2.side_of_50(20, 49.9) == "anti-stereotypical"
    assert liu_table2.side_of_50(40, 60) == liu_table2.NEITHER
    assert liu_table2.side_of_50(50, 60) == liu_table2.NEITHER  # touching 50 does not exclude it


def test_indicator_interval_over_pairs():
    frame = pd.concat([scores("CrowS-Pairs", "m", "cps", 7, 3, nan=2), scores("CrowS-Pairs", "m", "aul", 40, 0),
                       scores("StereoSet", "m", "sss", 2, 78)])
    t = liu_table2.indicator_intervals(frame, n_resamples=999).set_index(["dataset", "measure"])
    cps = t.loc[("CrowS-Pairs", "CPS")]
    assert cps["n_pairs"] == 10 and cps["value"] == pytest.approx(70.0)  # the NaN pairs are left out
    assert cps["ci_low"] < 70 < cps["ci_high"] and cps["ci_low"] < 50 and cps["side"] == liu_table2.NEITHER
    aul = t.loc[("CrowS-Pairs", "AUL")]  # every pair prefers the stereotype: a point interval at 100
    assert (aul["value"], aul["ci_low"], aul["ci_high"], aul["side"]) == (100.0, 100.0, 100.0, "stereotypical")
    sss = t.loc[("StereoSet", "SSS")]
    assert sss["value"] == pytest.approx(2.5) and sss["ci_high"] < 50 and sss["side"] == "anti-stereotypical"


def test_indicator_value_is_the_table2_value_of_the_same_scores():
    frame = pd.concat([scores("StereoSet", "m", "sss", 13, 7), scores("StereoSet", "m", "aul", 5, 15),
                       scores("CrowS-Pairs", "m", "cps", 9, 11), scores("CrowS-Pairs", "m", "aul", 12, 8)])
    table = liu2024.table2_from_scores(frame).set_index("dataset")
    t = liu_table2.indicator_intervals(frame, n_resamples=199).set_index(["dataset", "measure"])["value"]
    assert table.loc["StereoSet", "baseline"] == t[("StereoSet", "SSS")] == 65.0
    assert table.loc["StereoSet", "AUL"] == t[("StereoSet", "AUL")] == 25.0
    assert table.loc["CrowS-Pairs", "baseline"] == t[("CrowS-Pairs", "CPS")] == 45.0
    assert list(table["baseline measure"]) == ["SSS", "CPS"]


def test_paper_inside_names_liu_values_inside_our_interval():
    liu = {"BERT": 57.26, "RoBERTa": 61.97, "ALBERT": 58.88}
    assert liu_table2.paper_inside(30, 45, liu) == "none"
    assert liu_table2.paper_inside(55, 60, liu) == "BERT, ALBERT"
    assert liu_table2.paper_inside(57.26, 57.26, liu) == "BERT"  # an end of the interval counts as inside
    assert liu_table2.paper_inside(66, 80, liu) == "none" and liu_table2.paper_inside(float("nan"), 1, liu) == "—"


def test_beside_puts_liu_values_and_ours_in_one_row():
    intervals = pd.DataFrame([
        {"dataset": "StereoSet", "model": "m", "measure": "SSS", "n_pairs": 30, "value": 40.0, "ci_low": 23.3,
         "ci_high": 56.7, "side": liu_table2.NEITHER},
        {"dataset": "StereoSet", "model": "m", "measure": "AUL", "n_pairs": 30, "value": 55.0, "ci_low": 40.0,
         "ci_high": 70.0, "side": liu_table2.NEITHER},
        {"dataset": "CrowS-Pairs", "model": "m", "measure": "AUL", "n_pairs": 30, "value": 30.0, "ci_low": 13.3,
         "ci_high": 46.7, "side": "anti-stereotypical"}])
    t = liu_table2.beside(intervals)
    liu = [c for c in t.columns if c.endswith(liu2024.PAPER)]
    assert len(t) == 3 and len(liu) == 1
    assert t.iloc[1][liu_table2.INSIDE] == "BERT, RoBERTa, ALBERT"  # 40 to 70 holds all three AUL values
    sss = t.iloc[0]
    assert sss[liu[0]] == "57.26 / 61.97 / 58.88" and sss["95% CI"] == "23.3 to 56.7"
    assert sss[liu_table2.INSIDE] == "none"  # 56.7 < 57.26, the smallest of Liu's three
    aul = t.iloc[2]
    assert (aul["dataset"], aul["measure"], aul[liu[0]]) == ("CrowS-Pairs", "AUL", "52.92 / 62.40 / 53.25")
    assert (aul["vs 50"], aul[liu_table2.INSIDE]) == ("anti-stereotypical", "none")
    assert liu_table2.beside(intervals.iloc[:0]).equals(liu2024.table2())  # no results of ours: Liu's table


def test_direction_numbers_count_the_sides_and_name_the_heads():
    intervals = pd.DataFrame([
        {"dataset": "CrowS-Pairs", "model": "mlm-a", "measure": "AUL", "n_pairs": 30, "value": 30.0, "ci_low": 13.3,
         "ci_high": 46.7, "side": "anti-stereotypical"},
        {"dataset": "StereoSet", "model": "mlm-a", "measure": "SSS", "n_pairs": 30, "value": 60.0, "ci_low": 43.3,
         "ci_high": 76.7, "side": liu_table2.NEITHER},
        {"dataset": "StereoSet", "model": "mlm-b", "measure": "SSS", "n_pairs": 30, "value": 80.0, "ci_low": 63.3,
         "ci_high": 93.3, "side": "stereotypical"}])
    f = liu_table2.direction_findings(intervals)
    assert (f["results"], f["stereotypical"], f["anti_stereotypical"], f["neither"]) == (3, 1, 1, 1)
    assert (f["paper_results"], f["paper_above_50"], f["paper_min"], f["paper_max"]) == (12, 12, 50.28, 65.45)
    # mlm-a: 10 of 10 masked positions right (Clopper–Pearson low end 0.025^(1/10) = 0.6915, above 30%)
    heads = liu_table2.head_tests({"mlm-a": 1.0, "mlm-b": np.nan}, {"mlm-a": 10})
    n = liu_table2.direction_numbers(intervals, heads)
    assert (n["results"], n["stereotypical"], n["anti_stereotypical"], n["neither"]) == (3, 1, 1, 1)
    assert (n["paper_results"], n["paper_above_50"], n["paper_min"], n["paper_max"]) == (12, 12, 50.28, 65.45)
    assert n["against_list"] == "AUL of mlm-a on CrowS-Pairs 30.0 (95% CI 13.3 to 46.7)"
    assert n["directions"] == ("above 50 for 1, below 50 for 1 (AUL of mlm-a on CrowS-Pairs 30.0 (95% CI 13.3 to "
                               "46.7)) and across 50 for 1")
    assert n["against_floor"] == "above"  # mlm-a's accuracy test against the floor
    # an empty side is left out of the sentence
    assert liu_table2.direction_numbers(intervals.iloc[2:])["directions"] == "above 50 for 1"
    # a head with no recorded accuracy is not a head; none is below the floor
    assert (n["heads"], n["weak"], n["weak_list"]) == (1, 0, "none")
    assert n["head_list"] == "mlm-a 100.0% (95% CI 69.2% to 100.0%, above)"
    assert liu_table2.direction_numbers(intervals.iloc[2:])["against_list"] == "none"
    # the floor against the most-frequent-token baseline: 30% is 6x a 5% baseline (the larger of the two)
    based = liu_table2.direction_numbers(intervals, liu_table2.head_tests(
        {"mlm-a": 1.0, "mlm-b": 0.5}, {"mlm-a": 10, "mlm-b": 10}, reference={"mlm-a": 0.05, "mlm-b": 0.04}))
    assert (based["baseline"], based["floor_multiple"]) == (0.05, pytest.approx(6.0))
    assert np.isnan(n["floor_multiple"])
    empty = liu_table2.direction_numbers(intervals.iloc[:0])
    assert (empty["results"], empty["paper_results"]) == (0, 12)


def _two_heads():
    return pd.DataFrame([
        {"dataset": "CrowS-Pairs", "model": "mlm-weak", "measure": "AUL", "n_pairs": 30, "value": 30.0,
         "ci_low": 13.3, "ci_high": 46.7, "side": "anti-stereotypical"},
        {"dataset": "StereoSet", "model": "mlm-weak", "measure": "SSS", "n_pairs": 30, "value": 60.0, "ci_low": 53.3,
         "ci_high": 66.7, "side": "stereotypical"},
        {"dataset": "StereoSet", "model": "mlm-good", "measure": "SSS", "n_pairs": 30, "value": 80.0, "ci_low": 63.3,
         "ci_high": 93.3, "side": "stereotypical"}])


def test_the_floor_is_an_exact_binomial_test_of_the_accuracy():
    """Hand-worked: 0 of 10 masked positions right gives the Clopper–Pearson interval [0, 1 − 0.025^(1/10)] =
    [0, 0.3085]; it holds 0.30 (not distinguishable) but lies below 0.31. The two-sided p against 0.30 sums the
    outcomes no more likely than 0.7^10 = 0.02825: X = 0, 7, 8, 9, 10, p = 0.03884."""
    t = liu_table2.floor_test(0.0, 10, 0.30)
    assert (t["hits"], t["positions"], t["ci_low"]) == (0, 10, 0.0)
    assert t["ci_high"] == pytest.approx(1 - 0.025 ** 0.1) == pytest.approx(0.30850, abs=1e-5)
    assert t["p_value"] == pytest.approx(0.038840, abs=1e-6) and t["word"] == "not distinguishable"
    assert liu_table2.floor_test(0.0, 10, 0.31)["word"] == "below"
    top = liu_table2.floor_test(1.0, 10, 0.30)  # 10 of 10: low end 0.025^(1/10) = 0.6915, p = 0.3^10
    assert (top["word"], top["ci_low"], top["p_value"]) == ("above", pytest.approx(0.69150, abs=1e-5),
                                                            pytest.approx(0.3 ** 10))
    assert liu_table2.floor_test(float("nan"), 10)["word"] == "not measured"
    assert liu_table2.floor_test(0.2, float("nan"))["word"] == "not measured"


def test_the_positions_come_from_the_heads_provenance():
    figures = {"masked_token_accuracy": 0.25, "log": [{"masked_token_accuracy": 0.25, "masked_positions": 40},
                                                      {"masked_token_accuracy": 0.2, "masked_positions": 40}]}
    assert liu_table2.masked_positions(figures) == 40  # the evaluation with the kept accuracy
    assert liu_table2.masked_positions({**figures, "masked_positions": 44}) == 44
    assert np.isnan(liu_table2.masked_positions({"masked_token_accuracy": 0.25}))


def test_the_shipped_heads_against_their_floor():
    """The two shipped heads, 1,189 held-out masked positions each: MiniLM 157 right (13.2%, exact 95% CI 11.3% to
    15.3%: below 30%); MPNet 383 right (32.2%, 29.6% to 35.0%: not distinguishable from 30%, so it enters)."""
    from metricbias import backbones

    names = ["mlm-all-MiniLM-L6-v2", "mlm-all-mpnet-base-v2"]
    if any(backbones.trained_path(n) is None for n in names):
        pytest.skip("the shipped masked-LM heads are not installed")
    heads = liu_table2.head_tests(liu_table2.head_accuracy(names), liu_table2.head_positions(names),
                                  liu_table2.head_reference(names)).set_index("model")
    assert heads["hits"].tolist() == [157, 383] and heads["positions"].tolist() == [1189, 1189]
    assert heads["word"].tolist() == ["below", "not distinguishable"]
    assert heads["ci_low"].round(4).tolist() == [0.1133, 0.2956] and heads["ci_high"].round(4).tolist() == [0.1526,
                                                                                                            0.3495]
    assert liu_table2.below_floor(heads.reset_index()) == ["mlm-all-MiniLM-L6-v2"]


def _heads(accuracy, reference=None):
    """Heads judged on 1,189 positions, as the shipped ones are."""
    return liu_table2.head_tests(accuracy, {m: 1189 for m in accuracy}, reference)


def test_a_head_below_its_floor_enters_no_finding_and_the_page_says_so():
    """Issue 42: chapter 3's rule for the heads: a head whose exact interval lies below 30% masked-token accuracy
    leaves every count and sentence, and its rows leave the page table for the appendix."""
    intervals = _two_heads()
    heads = _heads({"mlm-weak": 0.132, "mlm-good": 0.31}, {"mlm-weak": 0.053, "mlm-good": 0.061})
    assert liu_table2.below_floor(heads) == ["mlm-weak"]  # 31.0% of 1,189 is not distinguishable from 30%
    assert liu_table2.below_floor(_heads({"hub-lm": np.nan})) == []
    f = liu_table2.direction_findings(intervals, excluded=["mlm-weak"])
    assert (f["results"], f["stereotypical"], f["anti_stereotypical"]) == (1, 1, 0)
    n = liu_table2.direction_numbers(intervals, heads)
    assert n["head_list"] == ("mlm-weak 13.2% (95% CI 11.3% to 15.3%, below); "
                              "mlm-good 31.0% (95% CI 28.4% to 33.8%, not distinguishable)")
    assert (n["heads"], n["weak"], n["weak_list"], n["floor"]) == (2, 1, "mlm-weak", 0.30)
    assert (n["results"], n["stereotypical"], n["anti_stereotypical"], n["neither"]) == (1, 1, 0, 0)
    assert n["against_list"] == "none"  # the weak head's AUL left out
    assert (n["directions"], n["against_floor"]) == ("above 50 for 1", "none")
    alone = liu_table2.direction_numbers(intervals[intervals["model"] == "mlm-weak"], _heads({"mlm-weak": 0.132}))
    assert (alone["results"], alone["weak"]) == (0, 1)
    t = liu_table2.beside(intervals, heads=heads)
    weak = t[t["masked LM"] == "mlm-weak" + liu_table2.BELOW_FLOOR_MARK]  # marked in the appendix table
    column = liu_table2.accuracy_column()
    assert column == "head accuracy (floor 30%)"  # the header names the floor
    assert set(weak[column]) == {"13.2% (95% CI 11.3% to 15.3%; most frequent token 5.3%)"}
    assert set(weak["vs 50"]) == set(weak[liu_table2.INSIDE]) == {liu_table2.NO_FINDING}
    assert list(weak["ours"]) == [60.0, 30.0]
    good = t[t["masked LM"] == "mlm-good"].iloc[0]
    assert (good[column], good["vs 50"]) == ("31.0% (95% CI 28.4% to 33.8%; most frequent token 6.1%)",
                                             "stereotypical")
    body, appendix = liu_table2.beside(intervals, heads=heads, below=False), liu_table2.beside(
        intervals, heads=heads, below=True)
    assert body["masked LM"].tolist() == ["mlm-good"]  # the page table holds no value of a head below its floor
    assert set(appendix["masked LM"]) == {"mlm-weak †"} and len(appendix) == 2
    bare = liu_table2.beside(intervals, heads=_heads({"mlm-weak": 0.132, "mlm-good": 0.31}))  # no reference
    assert bare.loc[bare["masked LM"] == "mlm-good", column].iloc[0] == "31.0% (95% CI 28.4% to 33.8%)"
    assert column not in liu_table2.beside(intervals).columns  # without heads, as before


def test_the_table_names_the_heads_in_words_and_marks_one_below_its_floor():
    """A trained head's folder reads as words (names.part_name), and a head below its floor carries the mark."""
    intervals = _two_heads().replace({"mlm-weak": "mlm-all-MiniLM-L6-v2", "mlm-good": "mlm-all-mpnet-base-v2"})
    heads = _heads({"mlm-all-MiniLM-L6-v2": 157 / 1189, "mlm-all-mpnet-base-v2": 383 / 1189})
    t = liu_table2.beside(intervals, heads=heads)
    assert list(dict.fromkeys(t["masked LM"])) == ["MiniLM masked-LM head †", "MPNet masked-LM head"]
    n = liu_table2.direction_numbers(intervals, heads)
    assert (n["weak_list"], n["head_list"]) == ("MiniLM masked-LM head",
                                                "MiniLM masked-LM head 13.2% (95% CI 11.3% to 15.3%, below); MPNet "
                                                "masked-LM head 32.2% (95% CI 29.6% to 35.0%, not distinguishable)")


def test_the_head_table_reads_in_words():
    rows = liu_table2.head_rows(_heads({"mlm-all-MiniLM-L6-v2": 157 / 1189}, {"mlm-all-MiniLM-L6-v2": 0.053}))
    assert rows.columns.tolist() == list(liu_table2.HEAD_LABELS.values())
    assert rows.iloc[0][["masked LM", "right", "masked positions", "against the floor"]].tolist() == [
        "MiniLM masked-LM head", 157, 1189, "below"]
