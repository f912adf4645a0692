"""Chapter 5's summaries of association tests through metrics, and the Table 3 comparisons with Gao & Wan."""

import numpy as np
import pandas as pd
import pytest

from metricbias.bias import association as asc
from metricbias.book.reproduction import ch5_association as su, ch5_table3
from metricbias.datasets.seat import SeatTest
from metricbias.metrics.base import Metric


class Letters(Metric):
    """Toy asymmetric metric: share of the candidate's letters found in the reference (a 'chrF')."""

    name = "toy_letters"
    family = "ngram"

    def _score(self, candidates, references):
        return np.array([sum(ch in r for ch in c) / len(c) for c, r in zip(candidates, references)])


class Vectors:
    """A static-embedding stand-in: in-vocabulary tokens of a text are the words of ``known``."""

    def __init__(self, known):
        self.known = set(known)

    def tokens(self, text):
        return [w for w in text.split() if w in self.known]


WORD = SeatTest(name="C6-N", level="word", source="-", x=("john", "paul"), y=("amy", "joan"),
                a=("career", "office"), b=("home", "family"), categories=("MaleNames", "FemaleNames", "Career",
                                                                           "Family"))
SENT = SeatTest(name="C6-N", level="sent", source="-", x=("this is john", "this is paul", "here is paul"),
                y=("this is amy", "this is joan", "here is joan"), a=("this is work", "this is home office"),
                b=("this is home", "this is family"), categories=WORD.categories)


def results_frame():
    """Six cells: two n-gram metrics and one model-based metric on C6-N word and sent."""
    return pd.DataFrame({
        "test": ["C6-N"] * 6, "level": ["word", "sent"] * 3,
        "metric": ["BLEU", "BLEU", "chrF", "chrF", "WMD", "WMD"], "name": ["bleu", "bleu", "chrf", "chrf", "wmd", "wmd"],
        "family": ["ngram", "ngram", "ngram", "ngram", "embedding", "embedding"],
        "effect_size": [np.nan, 0.2, -0.9, 0.4, 0.88, -0.1], "p_value": [1.0, 0.5, 0.004, 0.3, 0.02, 0.6],
        "scoring_seconds": [0.5, 0.5, 2.0, 2.0, 1.0, 1.0], "n_targets": [4, 6] * 3})


def test_overview_and_pair_counts_share_pairs_between_tests():
    overview = su.overview([WORD, SENT])
    assert list(overview.columns) == ["test", "level", "targets X / Y", "attributes A / B", "|X|", "|Y|", "|A|",
                                      "|B|", "pairs"]
    assert overview["targets X / Y"].iloc[0] == "Male Names / Female Names"
    # 4 targets x 4 attributes, both directions
    assert overview["pairs"].tolist() == [32, 48]
    counts = su.pair_counts([WORD, WORD, SENT], [WORD, WORD, SENT])
    # a generation metric's F: a sequence-to-sequence pass in each direction of each of the 80 ordered pairs
    assert counts == {"tests": 3, "pairs": 80, "pairs_unshared": 112, "pairs_run": 80, "tests_drawn": 0,
                      "seq2seq_passes": 160}
    sizes = su.run_sizes(counts).set_index("quantity")["count"]
    assert (sizes["test-level combinations"], sizes["ordered pairs per configuration, whole tests"],
            sizes["sequence-to-sequence passes per generation metric, whole tests"]) == (3, 80, 160)
    assert su.drawn_sets([], tests_drawn=0, sample_size=0, drawn_sample_size=16) == {
        "sets": "Every configuration runs on whole sets.", "power": "Every cell has as many targets as Gao & Wan's."}
    reason = su.drawn_sets(["R"], tests_drawn=0, sample_size=0, drawn_sample_size=16, pairs=2727914)["sets"]
    # the reason in the paper's terms (a pair read together has no per-text representation); the sizes in the appendix
    assert reason.endswith("texts per set (seeded, the same positions in X and Y): a metric that reads the two texts "
                           "of a pair together, as BLEURT does, has no representation of a text alone from which "
                           "r(t, A, B) of the whole sets follows, so every ordered pair of the whole sets would need "
                           "its own score (their number is in the appendix).")
    assert "cost" not in reason and "2,727,914" not in reason
    one = su.drawn_sets(["Regression-MiniLM"], tests_drawn=0, sample_size=0, drawn_sample_size=16)
    assert one["sets"] == ("Every configuration runs on whole sets except Regression-MiniLM, whose sentence-level sets "
                           "are drawn to 16 texts per set (seeded, the same positions in X and Y).")
    assert one["power"].startswith("The sentence-level cells of Regression-MiniLM have fewer targets")
    two = su.drawn_sets(["A", "B", "C"], tests_drawn=0, sample_size=0, drawn_sample_size=8)["sets"]
    assert "except A, B and C, whose sentence-level sets are drawn to 8 texts" in two
    every = su.drawn_sets(["A", "B"], tests_drawn=0, sample_size=0, drawn_sample_size=8, configurations=2)
    assert every["sets"].startswith("Every configuration runs on sentence-level sets drawn to 8 texts per set")
    chosen = su.drawn_sets([], tests_drawn=3, sample_size=24, drawn_sample_size=16)
    assert chosen["sets"].startswith("Every configuration runs on sentence-level sets drawn to 24 texts per set")
    # a chosen draw that draws nothing (word-level tests only) reads as whole sets
    assert su.drawn_sets([], tests_drawn=0, sample_size=24, drawn_sample_size=16)["sets"] == (
        "Every configuration runs on whole sets.")
    assert not any("$" in v for v in {**one, **chosen}.values())


def test_by_level_timing_and_the_ngram_control():
    results = results_frame()
    level = su.by_level(results)
    assert list(level.columns) == ["family", "metric", "p ≤ 0.01, word", "p ≤ 0.01, sent", "mean |d|, word",
                                   "mean |d|, sent"]
    assert level["family"].tolist() == ["n-gram", "n-gram", "static embedding"]
    level = level.set_index("metric")
    assert level.loc["chrF", "p ≤ 0.01, word"] == 1 and level.loc["WMD", "p ≤ 0.01, word"] == 0
    assert np.isnan(level.loc["BLEU", "mean |d|, word"]) and level.loc["chrF", "mean |d|, sent"] == pytest.approx(0.4)
    assert su.printed_alike(su.by_level(results), results) == {"printed_alike": "none",
                                                                "printed_alike_gap": pytest.approx(np.nan, nan_ok=True)}
    # chrF2: d -0.904 and 0.396 print as chrF's row (mean |d| 0.90 and 0.40, p 0.004 and 0.3): 0.004 apart on one cell
    twin = results[results["metric"] == "chrF"].assign(metric="chrF2", effect_size=[-0.904, 0.396])
    both = pd.concat([results, twin], ignore_index=True)
    alike = su.printed_alike(su.by_level(both), both)
    assert alike["printed_alike"] == "chrF and chrF2 (0.004)" and alike["printed_alike_gap"] == pytest.approx(0.004)
    timing = su.timing(results, n_pairs=1000).set_index("metric")
    assert timing.loc["chrF", "µs per pair"] == pytest.approx(2000.0)
    control = su.ngram_control(results).set_index(["metric", "level"])
    assert control.loc[("BLEU", "word"), "undefined d"] == 1 and control.loc[("chrF", "word"), "largest |d|"] == 0.9
    f = su.ngram_findings(results)
    assert (f["word_cells"], f["word_undefined"], f["sent_cells"], f["sent_significant"]) == (2, 1, 2, 0)
    assert f["sent_max_abs_d"] == pytest.approx(0.4) and f["sent_max_where"] == "chrF on C6-N sent"
    assert f["word_defined_metrics"] == "chrF's, on the only test (C6-N)"
    # chrF aside: BLEU alone
    assert (f["words_only_word_cells"], f["words_only_word_undefined"]) == (1, 1)
    assert f["words_only_undefined_phrase"] == "the one word-level cell"
    assert su._share_of_cells(162, 162, "cells") == "all 162 cells" and su._share_of_cells(0, 2, "cells") == \
        "none of the 2 cells"
    assert f["words_only_sent_max_abs_d"] == pytest.approx(0.2) and f["chrf_max_abs_d"] == pytest.approx(0.9)
    shown = su.as_text({**f, "none": float("nan")})
    assert (shown["sent_max_abs_d"], shown["none"], shown["word_cells"]) == ("0.40", "—", 2)
    d = su.direction(results)
    assert d == {"model_cells": 2, "model_positive_share": 0.5, "model_significant": 0}


def test_static_spread_sets_the_three_static_metrics_side_by_side():
    single = SeatTest(name="C6-T", level="word", source="-", x=("he",), y=("she",), a=("work",), b=("home",),
                      categories=WORD.categories)
    phrase = SeatTest(name="C3-T", level="word", source="-", x=("European American",), y=("African American",),
                      a=("joy",), b=("agony",), categories=WORD.categories)
    results = pd.DataFrame({"test": ["C6-T"] * 3 + ["C3-T"] * 3, "level": "word",
                            "name": ["embedding_average", "vector_extrema", "greedy_matching"] * 2,
                            "effect_size": [0.44, 0.44, 0.47, 0.1, 0.9, 0.5]})
    spread = su.static_spread(results, [single, phrase])  # C3-T's texts are two words: left out
    assert spread["test"].tolist() == ["C6-T"] and spread["spread"].iloc[0] == pytest.approx(0.03)
    assert su.static_spread(results[results["name"] != "greedy_matching"], [single]).empty


def test_shared_words_matches_and_vector_coverage():
    shared_test = SeatTest(name="T", level="word", source="-", x=("home office",), y=("amy",), a=("office",),
                           b=("career",), categories=WORD.categories)
    assert su.shared_word_pairs([WORD, SENT, shared_test]) == {"C6-N (word)": 0, "T (word)": 1}
    matched = su.matched_word_pairs([WORD, SENT], Letters(), cache=None)
    # every word-level pair shares some letter with another one, so the baseline is the smallest S of the test
    s = asc.similarity(Letters(), WORD.targets, WORD.attributes)
    assert len(matched) == int((s > s.min() + 1e-9).sum()) and set(matched["test"]) == {"C6-N"}
    assert su.matched_word_pairs([WORD], None) is None
    demo = su.aligned_similarities(Letters(), ["ab"], ["bc"], cache=None)
    assert demo["S"].tolist() == pytest.approx([0.5])  # (1/2 + 1/2) / 2
    assert su.aligned_similarities(None, ["a"], ["b"])["S"].isna().all()
    coverage = su.vector_coverage([WORD, SENT], Vectors({"john", "amy", "career", "home", "family"}))
    assert coverage.to_dict("records") == [{"test": "C6-N", "level": "word", "targets": 4, "targets with a vector": 2,
                                            "attributes with a vector": 3}]
    assert su.vector_coverage([WORD], None).empty
    suite = {"chrF": Letters()}
    assert su.label_of(suite, "toy_letters") == "chrF" and su.metric_named(suite, "bleu") is None


def test_sampling_check_compares_full_and_drawn_sets():
    drawn = SeatTest(**{**SENT.__dict__, "x": SENT.x[:2], "y": SENT.y[:2]})
    suite = {"L": Letters()}
    results = asc.run([drawn], suite, cache=None)
    check = su.sampling_check([SENT], [drawn], suite, name="toy_letters", cache=None)
    assert check[["n_targets full", "n_targets sampled"]].values.tolist() == [[6, 4]]
    full = asc.run([SENT], suite, cache=None).iloc[0]
    assert check["effect_size full"].iloc[0] == pytest.approx(full["effect_size"])
    assert check["effect_size sampled"].iloc[0] == pytest.approx(results["effect_size"].iloc[0])
    assert su.sampling_check([SENT], [SENT], suite, name="toy_letters").empty


def test_tests_for_attributes():
    assert ch5_table3.tests_for("all", None)[:3] == ["ABW-T", "ABW-N", "DB:C"]
    assert ch5_table3.tests_for("all", "age") == ["C10"]
    assert ch5_table3.tests_for("C1,C6-N,ABW-T", ["gender"]) == ["C6-N", "ABW-T"]
    with pytest.raises(ValueError, match="diet"):
        ch5_table3.tests_for("all", "diet")
    with pytest.raises(ValueError, match="none of the tests"):
        ch5_table3.tests_for("C1", "gender")


def test_effect_size_grid_and_paper_beside_ours():
    results = pd.DataFrame({
        "test": ["C6-N", "C6-N", "ABW-T", "ABW-T"], "level": ["word", "word", "word", "word"],
        "metric": ["WMD", "EA", "WMD", "EA"], "name": ["wmd", "embedding_average"] * 2,
        "family": ["embedding"] * 4, "effect_size": [0.88, np.nan, 1.0, 1.07], "p_value": [0.005, 1.0, 0.02, 0.2]})
    d, labels = ch5_table3.effect_size_grid(results)
    assert list(d.index) == ["ABW-T (word)", "C6-N (word)"] and list(d.columns) == ["WMD", "EA"]
    assert labels.loc["C6-N (word)", "WMD"] == "0.88*" and np.isnan(d.loc["C6-N (word)", "EA"])
    _, stars = ch5_table3.effect_size_grid(results, values_up_to=1)
    assert stars.loc["C6-N (word)", "WMD"] == "*" and stars.loc["ABW-T (word)", "WMD"] == ""
    compared = ch5_table3.compare_with_gao(results)
    side = ch5_table3.paper_and_ours(compared, results)
    assert list(side.columns) == ["test", "level", "WMD (paper)", "WMD", "EmbAvg (paper)", "EA"]
    row = side.set_index("test").loc["C6-N"]
    # Gao & Wan's Table 3: C6-N word, WMD 1.55, EmbAvg 0.00
    assert (row["WMD (paper)"], row["WMD"], row["EmbAvg (paper)"]) == (1.55, 0.88, 0.0)
    coverage = ch5_table3.embedding_coverage(pd.DataFrame({"test": ["C6-N"], "level": ["word"], "targets": [16]}),
                                          compared)
    assert coverage.iloc[0]["d (paper)"] == 0.0 and np.isnan(coverage.iloc[0]["d (ours)"])


def test_comparison_numbers_and_verdicts():
    results = pd.DataFrame({
        "test": ["C6-N", "C6-T", "ABW-T", "DB:C"] * 2, "level": ["word"] * 8,
        "metric": ["WMD"] * 4 + ["BLEU"] * 4, "name": ["wmd"] * 4 + ["bleu"] * 4,
        "family": ["embedding"] * 4 + ["ngram"] * 4, "effect_size": [0.88, 0.40, 1.00, 0.78] + [np.nan] * 4,
        "p_value": [0.02, 0.2, 0.1, 0.3] + [1.0] * 4})
    compared = ch5_table3.compare_with_gao(results)
    agree = ch5_table3.agreement(compared)
    wmd = agree.set_index("metric").loc["WMD"]
    # Gao & Wan's WMD on these four word-level tests: 1.55*, 0.06, 1.45, 0.89; ours 0.88, 0.40, 1.00, 0.78:
    # ranks 4, 1, 3, 2 against 3, 1, 4, 2 -> rho = 1 - 6 * (1 + 0 + 1 + 0) / (4 * 15) = 0.8
    assert wmd["spearman_d"] == pytest.approx(0.8) and (wmd["signed"], wmd["direction_p"]) == (4, 1.0)
    # four defined cells: Fisher z with Bonett & Wright's SE sqrt((1 + 0.8²/2) / 1) -> a wide interval
    assert (round(wmd["spearman_low"], 2), round(wmd["spearman_high"], 2)) == (-0.82, 1.0)
    table = ch5_table3.agreement_table(agree)
    assert list(table.columns) == ["Gao & Wan", "ours", "defined cells", "Spearman ρ of d [95% CI]", "same sign",
                                   "d > 0, Gao & Wan", "d > 0, ours", "McNemar p"]
    assert table.iloc[0]["defined cells"] == "4 of 4"
    assert table.iloc[0]["Spearman ρ of d [95% CI]"] == "0.80 [-0.82, 1.00]"
    by_level = ch5_table3.significance_by_level(compared).set_index("ours").loc["WMD"]
    assert (by_level["cells"], by_level["p ≤ 0.01, Gao & Wan"], by_level["p ≤ 0.01, ours"]) == (4, 0.25, 0.0)
    direction = ch5_table3.direction_findings(results, compared)
    assert (direction["model_positive_share"], direction["model_positive"], direction["model_negative"]) == (1.0, 4, 0)
    # 4 of 4 cells positive: two-sided sign test p = 2 * (1/2)^4 = 0.125, so no majority is shown
    assert direction["model_sign_p"] == pytest.approx(0.125) and direction["model_sign_test"] == "p = 0.12"
    assert direction["model_lean"] == direction["claim_verdict"] == "not distinguishable at this size"
    assert (direction["paired_cells"], direction["paired_ours_only"], direction["paired_paper_only"]) == (4, 0, 0)
    spearman = ch5_table3.spearman_findings(agree)
    assert spearman == {"spearman_median": pytest.approx(0.8), "spearman_configurations": 1, "spearman_above": 0,
                        "spearman_below": 0, "spearman_no_interval": 0, "spearman_sides": "across zero for 1"}
    # ours in Gao & Wan's order (ranks 4, 1, 3, 2): ρ = 1 on four cells, where Fisher z gives no interval
    same_order = results.assign(effect_size=[0.9, 0.1, 0.8, 0.5] + [np.nan] * 4)
    perfect = ch5_table3.agreement(ch5_table3.compare_with_gao(same_order))
    assert perfect.loc[0, "spearman_d"] == pytest.approx(1.0) and np.isnan(perfect.loc[0, "spearman_low"])
    assert ch5_table3.spearman_findings(perfect)["spearman_sides"] == "is undefined for 1"
    meteor = ch5_table3.meteor_findings(results, matched=pd.DataFrame())
    assert meteor["paper_cells"].startswith("C6-T word (-0.93)") and meteor["paper_word_tests"] == "C6-T"
    assert (meteor["matched"], meteor["word_defined"]) == ("no word-level (target, attribute) pairs", "—")
    assert ch5_table3.meteor_findings(results, None)["matched"] == "—"


def test_the_direction_of_the_same_cells_in_both_studies_is_paired():
    """A hand-worked McNemar: on WMD's four word-level cells Gao & Wan print 1.55, 0.06, 1.45, 0.89 (all positive);
    ours -0.40 on C6-T and -0.78 on DB:C turn two of them negative: two discordant cells, both positive only in
    Gao & Wan's, so the exact test gives p = 2 * (1/2)^2 = 0.5."""
    results = pd.DataFrame({"test": ["C6-N", "C6-T", "ABW-T", "DB:C"], "level": ["word"] * 4, "metric": ["WMD"] * 4,
                            "name": ["wmd"] * 4, "family": ["embedding"] * 4,
                            "effect_size": [0.88, -0.40, 1.00, -0.78], "p_value": [0.02, 0.8, 0.1, 0.9]})
    compared = ch5_table3.compare_with_gao(results)
    pair = ch5_table3.paired_direction(compared)
    assert pair == {"cells": 4, "ours_positive": 0.5, "paper_positive": 1.0, "ours_only": 0, "paper_only": 2,
                    "p_value": pytest.approx(0.5)}
    direction = ch5_table3.direction_findings(results, compared)
    assert direction["paired_test"] == "p = 0.5" and direction["paired_verdict"] == "not distinguishable at this size"
    # twelve cells, all positive in the paper, eight of them negative in ours: p = 2 * (1/2)^8 < 0.05
    many = pd.concat([compared] * 3, ignore_index=True)
    many["ours"] = [-1.0] * 8 + [1.0] * 4
    heavy = ch5_table3.paired_direction(many)
    assert (heavy["paper_only"], heavy["p_value"]) == (8, pytest.approx(2 / 2**8))
    assert ch5_table3.direction_findings(results, many)["paired_verdict"] == "more often positive in Gao & Wan's"
    # a cell Gao & Wan print as 0.00, or ours rounds to 0.00, has no sign and is left out
    zero = compared.assign(ours=[0.004, -0.40, 1.00, -0.78])
    assert ch5_table3.paired_direction(zero)["cells"] == 3


def test_run_tests_reads_whole_sets_from_association_packs_and_draws_the_others(tmp_path, monkeypatch):
    """A configuration with a verified association pack runs on the whole sets from its r; one without runs on the
    sentence-level sets drawn down, and is named."""
    from metricbias import metrics
    from metricbias.book import packs
    from metricbias.cache import ScoreCache
    from metricbias.datasets import seat

    monkeypatch.setenv("METRICBIAS_CACHE", str(tmp_path / "cache"))
    full = seat.tests("DB:L", "all")
    entry = packs.Entry(packs.MetricConfig("rougeL", {}), "associations:tests=DB:L;levels=all")
    packs.build([entry], tmp_path / "packs", log=lambda *_: None, progress=False)
    cache = ScoreCache(tmp_path / "scores.sqlite")
    packs.import_packs(tmp_path / "packs", cache, progress=False)
    suite = {"ROUGE-L": metrics.get("rougeL"), "BLEU": metrics.get("bleu")}
    results, drawn = su.run_tests(full, full, suite, drawn_sample_size=4, n_permutations=500, cache=cache,
                                  packs=tmp_path / "packs")
    assert drawn == ["BLEU"]
    assert list(results["metric"][:2]) == ["ROUGE-L", "BLEU"] and list(results["level"][:2]) == ["word"] * 2
    by = results.set_index(["test", "level", "metric"])
    assert by.loc[("DB:L", "sent", "ROUGE-L"), "n_targets"] == 128 and by.loc[("DB:L", "sent", "BLEU"), "n_targets"] == 8
    assert by.loc[("DB:L", "word", "BLEU"), "sets"] == "drawn" and by.loc[("DB:L", "sent", "ROUGE-L"), "sets"] == "whole"
    live = asc.run(full, {"ROUGE-L": suite["ROUGE-L"]}, cache=None, n_permutations=500).set_index(
        ["test", "level", "metric"])
    assert by.xs("ROUGE-L", level="metric")["effect_size"].equals(live.xs("ROUGE-L", level="metric")["effect_size"])
    timing = su.timing(results).set_index("metric")
    assert timing.loc["ROUGE-L", "seconds"] == 0 and np.isnan(timing.loc["ROUGE-L", "µs per pair"])
    assert su.drawn_sets(drawn, tests_drawn=0, sample_size=0, drawn_sample_size=4)["sets"] == (
        "Every configuration runs on whole sets except BLEU, whose sentence-level sets are drawn to 4 texts per set "
        "(seeded, the same positions in X and Y).")
    # a drawn run: every configuration on the draw, nothing read from the packs
    chosen = seat.tests("DB:L", "all", sample_size=4)
    again, none = su.run_tests(full, chosen, suite, n_permutations=500, cache=cache, packs=tmp_path / "packs")
    assert none == [] and (again["scoring_seconds"] > 0).all()


def test_the_direction_verdict_counts_each_test_once():
    """Two model-based configurations on three tests: five of six cells positive, but per test the mean d is
    +0.5 (C6-N), +0.3 (C6-T) and -0.35 (ABW-T: +0.1 and -0.8): two tests positive, one negative, sign test p = 1."""
    results = pd.DataFrame({"test": ["C6-N", "C6-T", "ABW-T"] * 2, "level": ["word"] * 6,
                            "metric": ["WMD"] * 3 + ["Embedding average"] * 3,
                            "name": ["wmd"] * 3 + ["embedding_average"] * 3, "family": ["embedding"] * 6,
                            "effect_size": [0.4, 0.2, 0.1, 0.6, 0.4, -0.8], "p_value": [0.5] * 6})
    direction = ch5_table3.direction_findings(results)
    assert (direction["model_cells"], direction["model_cells_positive_share"]) == (6, pytest.approx(5 / 6))
    assert (direction["model_tests"], direction["model_positive"], direction["model_negative"]) == (3, 2, 1)
    assert direction["model_positive_share"] == pytest.approx(2 / 3) and direction["model_sign_p"] == pytest.approx(1)
    assert direction["claim_verdict"] == "not distinguishable at this size"
    assert (direction["baseline_left_out"], direction["baseline_names"]) == (0, "none")


def test_the_direction_verdict_leaves_out_the_baseline_tests():
    """C1 (flowers / insects) and C2 (instruments / weapons) contrast no social group: with them the four tests lean
    4 to 0 (p = 2 * (1/2)^4 = 0.125); without them two social tests are left, one positive and one negative (p = 1)."""
    results = pd.DataFrame({"test": ["C1", "C2", "C6-N", "ABW-T"], "level": ["word"] * 4, "metric": ["WMD"] * 4,
                            "name": ["wmd"] * 4, "family": ["embedding"] * 4,
                            "effect_size": [1.2, 0.9, 0.4, -0.3], "p_value": [0.5] * 4})
    direction = ch5_table3.direction_findings(results)
    assert (direction["baseline_left_out"], direction["baseline_names"]) == (2, "C1, C2")
    assert (direction["model_tests"], direction["model_positive"], direction["model_negative"]) == (2, 1, 1)
    assert direction["model_sign_p"] == pytest.approx(1.0)
    assert direction["model_cells"] == 4  # the cells are described over every test


def test_identical_findings_name_the_merged_and_the_closest_configurations():
    results = pd.DataFrame({"test": ["C6-T", "C6-T"] * 3, "level": ["word", "sent"] * 3,
                            "metric": ["MoverScore-MiniLM"] * 2 + ["MoverScore-MiniLM-2gram"] * 2 + ["WMD"] * 2,
                            "effect_size": [0.4, 0.1, 0.4, 0.1, 0.4, 0.15], "p_value": [0.2, 0.5, 0.2, 0.5, 0.2, 0.4]})
    kept, identical = asc.merge_identical(results)
    found = su.identical_findings(identical, kept)
    assert found["identical"] == 1 and "identical_list" not in found  # no list on the page: the labels name them
    assert identical[["metric", "same_as"]].values.tolist() == [["MoverScore-MiniLM-2gram", "MoverScore-MiniLM"]]
    assert found["nearest"] == "WMD and MoverScore-MiniLM (= MoverScore-MiniLM-2gram)"
    assert (found["nearest_gap"], found["nearest_equal"], found["nearest_cells"]) == (pytest.approx(0.05), 1, 2)
    none = su.identical_findings(identical.iloc[:0], kept[kept["metric"] == "WMD"])
    assert (none["identical"], none["nearest"], none["nearest_cells"]) == (0, "—", 0)
    assert su.identical_sentence(identical) == ("1 configuration computes the same function as another on these "
                                               "tests and is merged into it.")
    assert su.identical_sentence(identical.iloc[:0]) == "No two configurations compute the same function on these tests."


def test_shared_lists_find_tests_that_share_words():
    def t(name, x, y, a, b):
        return SeatTest(name=name, level="word", source="", x=tuple(x), y=tuple(y), a=tuple(a), b=tuple(b),
                        categories=("X", "Y", "A", "B"))

    tests = [t("C4-N", ["Brad", "Greg"], ["Darnell", "Hakim"], ["love", "peace"], ["war", "vomit"]),
             t("C5-N", ["Brad", "Greg"], ["Darnell", "Hakim"], ["joy", "love"], ["agony", "evil"]),
             t("C3-N", ["Adam", "Brad"], ["Alonzo", "Jamel", "Theo"], ["love", "peace"], ["war", "vomit"]),
             t("C6-N", ["John"], ["Amy"], ["career"], ["home"]),
             t("C1", ["rose"], ["ant"], ["love"], ["war"])]  # a baseline test: left out
    shared = su.shared_lists(tests).set_index(["test", "other"])
    assert len(shared) == 6  # four social tests: 4·3/2 pairs
    assert shared.loc[("C4-N", "C5-N"), ["shared targets", "shared attributes"]].tolist() == [4, 1]
    assert shared.loc[("C4-N", "C3-N"), ["shared targets", "targets", "other targets", "shared attributes"]].tolist() \
        == [1, 4, 5, 4]
    found = su.shared_findings(shared.reset_index())
    # C4-N/C5-N share all names; C3-N shares Brad with each of them; C6-N shares nothing
    assert found == {"pairs": 6, "sharing": 3, "same_targets": "C4-N and C5-N", "partial": 2,
                     "most_partial": "C4-N and C3-N, C5-N and C3-N (1 target word)"}
