"""metaeval.quality: a metric's headline correlation per quality set (chapter 6, the trained paraphrasers' figures),
each configuration's quality (DARR tau, STS-B r) and chapter 3's reading of bias against quality."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from conftest import real_raw_location
from metricbias import metrics
from metricbias.book.reproduction import ch3_quality
from metricbias.metaeval import correlation
from metricbias.metaeval import quality as q
from metricbias.metaeval.quality import configuration_quality, full_sizes, load_quality_sets, quality
from metricbias.metrics.base import Metric
from metricbias.metrics.registry import Spec
from metricbias.mitigation import evaluation


@pytest.mark.usefixtures("private_cache")
def test_configuration_quality_matches_direct_computation():
    real_raw_location()
    specs = [Spec.of("bleu"), Spec.of("ter")]
    table = configuration_quality(specs, darr_pairs=30, stsb_pairs=40, seed=3, cache=False)
    assert table["metric"].tolist() == ["BLEU", "TER"]
    assert table["darr_pairs"].tolist() == [30, 30] and table["stsb_pairs"].tolist() == [40, 40]
    wmt = load_quality_sets(("wmt19-kk-en",), sample_size=30, seed=3)["wmt19-kk-en"].frame
    dev = load_quality_sets(("stsb-dev",), sample_size=40, seed=3)["stsb-dev"]
    for label, name in (("BLEU", "bleu"), ("TER", "ter")):
        m = metrics.get(name)
        sign = -1.0 if m.direction == "lower" else 1.0  # TER: the better translation scores lower
        better = sign * m.score(list(wmt["better"]), list(wmt["reference"]))
        worse = sign * m.score(list(wmt["worse"]), list(wmt["reference"]))
        row = table.set_index("metric").loc[label]
        assert row["darr_tau"] == pytest.approx(correlation.darr_tau(better, worse)["value"])
        r = stats.pearsonr(sign * m.score(list(dev["sentence2"]), list(dev["sentence1"])), dev["score"]).statistic
        assert row["stsb_r"] == pytest.approx(r)
        assert row["signature"] == m.signature
    # a distance is oriented like a similarity: TER correlates positively with the ratings
    assert table.set_index("metric").loc["TER", "stsb_r"] > 0
    assert full_sizes() == {"darr_pairs": 9728, "stsb_pairs": 1500}  # WMT19 kk-en DARR; GLUE STS-B dev


def test_quality_of_a_distance_is_negated():
    def length_gap(candidates, references):
        return [abs(len(c) - len(r)) for c, r in zip(candidates, references)]

    Length = metrics.function_metric(length_gap, direction="lower")

    dev = pd.DataFrame({"sentence1": ["aaaa", "aaaa", "aaaa"], "sentence2": ["aaaa", "aa", "a"],
                        "score": [5.0, 3.0, 1.0]})
    q = quality(Length(), {"stsb-dev": dev})
    assert q.iloc[0]["value"] == pytest.approx(stats.pearsonr([0, -2, -3], [5, 3, 1]).statistic)


def _points():
    configs = pd.DataFrame({"metric": ["BLEU", "chrF", "BERTScore", "Regression", "BARTScore-F"],
                            "family": ["BLEU", "chrF", "BERTScore", "Regression", "BARTScore"],
                            "paradigm": ["n-gram", "n-gram", "Matching", "Regression", "Generation"]})
    bias = pd.DataFrame({"metric": np.repeat(configs["metric"], 2), "attribute": ["gender", "race"] * 5,
                         "bias": [2, 4, 1, 1, 6, 8, 5, 5, 1, 3]})
    quality_ = pd.DataFrame({"metric": configs["metric"], "darr_tau": [0.2, 0.25, 0.35, 0.3, 0.03],
                             "darr_pairs": 400, "stsb_r": [0.5, 0.45, 0.8, 0.85, 0.2], "stsb_pairs": 500,
                             "signature": "-"})
    return ch3_quality.quality_points(bias, configs, quality_), configs


def test_quality_points_and_generation_gap():
    points, _ = _points()
    p = points.set_index("metric")
    assert p["avg_bias"].tolist() == [3, 1, 7, 5, 2]
    # chrF is below BLEU on STS-B: at least as good means on both measures
    assert p["at_least_reference"].tolist() == [True, False, True, True, False]
    table = ch3_quality.quality_table(points).set_index("metric")
    assert table.loc["BARTScore-F", "DARR τ − BLEU"] == pytest.approx(-0.17)


def test_matched_quality_gaps_and_correlations():
    points, configs = _points()
    rows = []
    effects = {"BLEU": 0.1, "chrF": 0.1, "BERTScore": 0.6, "Regression": 0.4, "BARTScore-F": 0.05}
    for metric, e in effects.items():
        for i in range(12):
            s1, s2 = (1.0, 0.0) if i == 0 else (0.5 + e / 2 + 0.01 * (i % 3), 0.5 - e / 2)
            rows.append({"attribute": "gender", "pair_id": i, "metric": metric, "score_1": s1, "score_2": s2})
    gaps = ch3_quality.matched_quality_gaps(pd.DataFrame(rows), configs, points, n_resamples=199)
    assert gaps["configurations"].tolist() == ["all", "all", "at least BLEU", "at least BLEU"]
    matched = gaps[(gaps["configurations"] == "at least BLEU") & (gaps["comparison"] == "PLM-based − n-gram")].iloc[0]
    # at matched quality: BERTScore and Regression (not the generation row) against BLEU (not chrF)
    assert (matched["PLM-based configurations"], matched["other configurations"]) == (2, 1)
    assert matched["verdict"] == "higher"
    static = gaps[gaps["comparison"] == "PLM-based − static embedding"]
    assert static["verdict"].eq("no configuration on one side").all()
    corr = ch3_quality.bias_quality_correlations(points)
    assert corr["Spearman ρ"].iloc[0] == pytest.approx(stats.spearmanr([3, 1, 7, 5, 2],
                                                                       [0.2, 0.25, 0.35, 0.3, 0.03]).statistic)
    page = ch3_quality.gap_table(gaps, {"all": "kept by the rule"})
    assert page.columns.tolist() == ["configurations", "comparison", "PLM-based", "others", "difference [95% CI]",
                                     "verdict"]
    assert page["configurations"].tolist()[:2] == ["kept by the rule"] * 2
    row = page[(page["configurations"] == "at least BLEU") & (page["comparison"] == "PLM-based − n-gram")].iloc[0]
    assert row["difference [95% CI]"] == (f"{matched['difference']:+.2f} [{matched['ci_low']:+.2f}, "
                                          f"{matched['ci_high']:+.2f}]")
    assert page.loc[page["comparison"] == "PLM-based − static embedding", "difference [95% CI]"].eq("—").all()
    found = ch3_quality.correlation_findings(corr)  # five configurations: the correlation's interval is wide
    assert found["darr_verdict"] == "is not distinguishable from no relation"


class Lengths(Metric):
    """A toy metric: the candidate's length in words."""

    name = "lengths"
    family = "user"

    def _score(self, candidates, references):
        return np.array([len(c.split()) for c in candidates], dtype=float)


def test_stsb_dev_is_the_pearson_with_the_ratings():
    dev = pd.DataFrame({"sentence1": ["a", "b", "c"], "sentence2": ["x", "x y", "x y z"], "score": [1.0, 2.0, 4.0]})
    table = q.quality(Lengths(), {"stsb-dev": dev})
    # scores 1, 2, 3 against ratings 1, 2, 4: r = 3 / sqrt(2 * 42/9) = 9 / sqrt(84)
    assert table.to_dict("records") == [{"dataset": "stsb-dev", "statistic": "pearson",
                                         "value": pytest.approx(9 / math.sqrt(84), abs=1e-12), "n": 3}]


def test_an_unknown_set_is_named():
    with pytest.raises(ValueError, match="unknown quality measure 'nope'; known: wmt19-kk-en"):
        q.load_quality_sets(("nope",))


def test_chapter_6_measures_quality_with_it():
    assert evaluation.quality is q.quality and evaluation.QUALITY is q.QUALITY


def test_paired_difference_with_bleu_on_the_same_items():
    from scipy import stats

    from metricbias.metaeval.quality import paired_difference

    # DARR: 150 of 200 pairs ranked right against 110 for the reference (the same 110 among them): τ 0.5 vs 0.1
    a = np.r_[np.ones(150), -np.ones(50)]
    b = np.r_[np.ones(110), -np.ones(90)]
    d = paired_difference(a, b, n_resamples=999)
    assert (d["value"], d["reference value"], d["difference"], d["items"]) == (0.5, 0.1, pytest.approx(0.4), 200)
    assert 0 < d["ci_low"] < 0.4 < d["ci_high"] and d["floor"] == "above"
    assert paired_difference(b, a, n_resamples=999)["floor"] == "below"
    # 2 of 200 pairs apart: the paired interval straddles 0
    c = b.copy()
    c[110:112] = 1
    assert paired_difference(c, b, n_resamples=999)["floor"] == "not distinguishable"
    # STS-B: the Pearson r of each with the ratings
    rng = np.random.default_rng(0)
    human = rng.normal(size=300)
    good, weak = human + rng.normal(size=300) * 0.5, human + rng.normal(size=300) * 3
    d = paired_difference(good, weak, human, n_resamples=999)
    assert d["value"] == pytest.approx(stats.pearsonr(good, human).statistic)
    assert d["reference value"] == pytest.approx(stats.pearsonr(weak, human).statistic)
    assert d["ci_low"] > 0 and d["floor"] == "above"
    with pytest.raises(ValueError, match="same items"):
        paired_difference(a, b[:10])


@pytest.mark.usefixtures("private_cache")
def test_paired_quality_reads_the_same_items_as_configuration_quality():
    real_raw_location()
    specs = [Spec.of("bleu"), Spec.of("ter"), Spec.of("chrf")]
    table = configuration_quality(specs, darr_pairs=30, stsb_pairs=40, seed=3, cache=False).set_index("metric")
    paired = q.paired_quality(specs[1:], specs[0], darr_pairs=30, stsb_pairs=40, seed=3, n_resamples=199,
                              cache=False)
    assert paired["metric"].tolist() == ["TER", "TER", "chrF", "chrF"]  # the reference has no row of its own
    for r in paired.to_dict("records"):
        assert r["value"] == pytest.approx(table.loc[r["metric"], r["measure"]])
        assert r["reference value"] == pytest.approx(table.loc["BLEU", r["measure"]])
        assert r["items"] == (30 if r["measure"] == "darr_tau" else 40)
        assert r["floor"] in ("above", "below", "not distinguishable")


@pytest.mark.usefixtures("private_cache")
def test_generation_quality_gaps_pit_the_paradigms_best_against_the_others_weakest():
    """Planted paradigms on real metrics: the "generation" side's best configuration minus the weakest of the
    others, per measure, on the same items as configuration_quality, with the paired interval's word."""
    from metricbias.book.reproduction import ch3_quality

    real_raw_location()
    specs = [Spec.of("bleu"), Spec.of("ter"), Spec.of("chrf"), Spec.of("rouge1")]
    table = configuration_quality(specs, darr_pairs=30, stsb_pairs=40, seed=3, cache=False)
    points = table.assign(paradigm=table["metric"].map({"BLEU": "Matching", "ROUGE-1": "Matching", "TER": "Generation",
                                                        "chrF": "Generation"}))
    gaps = ch3_quality.generation_quality_gaps(points, specs, darr_pairs=30, stsb_pairs=40, seed=3, n_resamples=199,
                                               cache=False).set_index("key")
    assert list(gaps.index) == ["darr", "stsb"]
    by = table.set_index("metric")
    for key, column in (("darr", "darr_tau"), ("stsb", "stsb_r")):
        g = gaps.loc[key]
        assert g["best"] == by.loc[["TER", "chrF"], column].idxmax()
        assert g["weakest"] == by.loc[["BLEU", "ROUGE-1"], column].idxmin()
        assert g["difference"] == pytest.approx(by.loc[g["best"], column] - by.loc[g["weakest"], column])
        assert g["ci_low"] <= g["difference"] <= g["ci_high"]
        assert g["word"] in ("above 0", "below 0", "not distinguishable from 0")
    f = ch3_quality.generation_gap_findings(gaps.reset_index())
    assert f["stsb_best"] == gaps.loc["stsb", "best"] and f["darr_word"] == gaps.loc["darr", "word"]
    # no configuration of the paradigm: no row, and the findings say "not measured"
    none = ch3_quality.generation_quality_gaps(points.assign(paradigm="Matching"), specs, darr_pairs=30,
                                               stsb_pairs=40, seed=3, n_resamples=199, cache=False)
    assert none.empty and ch3_quality.generation_gap_findings(none)["stsb_word"] == "not measured"
    reading = ch3_quality.generation_gap_reading
    assert "cannot be told apart" in reading({"darr_word": "not distinguishable from 0", "stsb_word": "below 0"})
    assert "does not account" in reading({"darr_word": "above 0", "stsb_word": "not distinguishable from 0"})
    assert "does not show" in reading(ch3_quality.generation_gap_findings(none))
    from metricbias.book.reproduction import ch3_paradigm_claim as claim

    weaker = ch3_quality.generation_weaker({"darr_word": "not distinguishable from 0", "stsb_word": "below 0"})
    assert weaker and not ch3_quality.generation_weaker({"darr_word": "above 0", "stsb_word": "not measured"})
    # the grid's verdict: confounded only when the share rests on weaker metrics and reads otherwise without them
    assert claim.overall_verdict("holds", "reverses", True) == claim.CONFOUNDED == "confounded with quality"
    assert claim.overall_verdict("holds", "reverses", False) == "holds"
    assert claim.overall_verdict("holds", "holds", True) == "holds"


def test_verdict_over_the_grid_reads_both_quality_measures():
    """Confounded with quality when the best generation configuration is below the weakest other on either measure
    (DARR τ or STS-B r) and the verdict without generation differs; the sentence names the measures."""
    from metricbias.book.reproduction import ch3_paradigm_claim as claim
    from metricbias.book.reproduction import ch3_quality

    below, undecided, above = "below 0", "not distinguishable from 0", "above 0"
    cases = {  # (DARR word, STS-B word) -> (weaker, measures named)
        (undecided, below): (True, "STS-B r"),  # the book's grid: STS-B r below 0, DARR τ not distinguishable
        (below, undecided): (True, "DARR τ"),
        (below, below): (True, "DARR τ and STS-B r"),
        (undecided, undecided): (False, "neither measure"),
        (above, "not measured"): (False, "neither measure")}
    for (darr, stsb), (weaker, named) in cases.items():
        findings = {"darr_word": darr, "stsb_word": stsb}
        assert ch3_quality.generation_weaker(findings) is weaker
        assert ch3_quality.weaker_on(findings) == named
        assert claim.overall_verdict("holds", "reverses", weaker) == (claim.CONFOUNDED if weaker else "holds")


def test_released_share_difference_resamples_the_configurations():
    """Table 6's eta squared by paradigm minus by backbone (0.8538 - 0.4913 over its 24 PLM-based rows), with a
    percentile interval over the configurations."""
    from metricbias.book.reproduction import ch3_paradigm_claim as claim

    rel = claim.released_shares()
    assert (rel["share_paradigm"], rel["share_backbone"]) == (pytest.approx(0.8538, abs=1e-4),
                                                             pytest.approx(0.4913, abs=1e-4))
    found = claim.released_share_difference(n_resamples=999, seed=0)
    assert found["difference"] == pytest.approx(rel["share_paradigm"] - rel["share_backbone"])
    assert found["low"] <= found["difference"] <= found["high"]
    assert (found["points"], found["points_low"]) == (pytest.approx(100 * found["difference"]),
                                                      pytest.approx(100 * found["low"]))
    word = ("above 0" if found["low"] > 0 else "below 0" if found["high"] < 0 else "not distinguishable from 0")
    assert found["word"] == word
    assert found == claim.released_share_difference(n_resamples=999, seed=0)  # seeded
