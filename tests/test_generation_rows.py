"""Whether chapter 3's generation rows enter the paradigm comparisons, on hand-made quality tables."""

import pandas as pd

from metricbias.book.reproduction import ch3_quality, generation_rows


def quality_points(para_darr, para_stsb):
    """BLEU (DARR τ 0.20, STS-B r 0.40), a matching configuration and one generation configuration."""
    bias = pd.DataFrame({"metric": ["BLEU", "BERTScore-F", "BARTScore-F-para"], "attribute": "gender",
                         "bias": [1.0, 5.0, 3.0]})
    configs = pd.DataFrame({"metric": ["BLEU", "BERTScore-F", "BARTScore-F-para"],
                            "family": ["BLEU", "BERTScore", "BARTScore"],
                            "paradigm": ["n-gram", "Matching", "Generation"]})
    quality = pd.DataFrame({"metric": ["BLEU", "BERTScore-F", "BARTScore-F-para"],
                            "darr_tau": [0.20, 0.35, para_darr], "stsb_r": [0.40, 0.70, para_stsb],
                            "darr_pairs": 400, "stsb_pairs": 500})
    return ch3_quality.quality_points(bias, configs, quality), configs


def test_generation_rows_enter_only_at_least_as_good_as_bleu_on_both():
    assert generation_rows.generation_enters(quality_points(0.25, 0.50)[0])
    assert generation_rows.generation_enters(quality_points(0.20, 0.40)[0])  # equal to BLEU counts as good enough
    assert not generation_rows.generation_enters(quality_points(0.035, 0.50)[0])  # below on DARR only
    assert not generation_rows.generation_enters(quality_points(0.25, 0.03)[0])  # below on STS-B only
    points, _ = quality_points(0.035, 0.03)
    assert generation_rows.generation_enters(points[points["paradigm"] != "Generation"])  # none: nothing to drop


def test_left_out_generation_rows_leave_the_configs_and_the_decomposition():
    points, configs = quality_points(0.035, 0.50)
    enters = generation_rows.generation_enters(points)
    assert generation_rows.paradigm_configs(configs, enters)["metric"].tolist() == ["BLEU", "BERTScore-F"]
    assert generation_rows.paradigm_configs(configs, True) is configs
    grid = pd.DataFrame({"metric": ["BERTScore-F-a", "BARTScore-F-a", "PRISM-F-a"],
                         "paradigm": ["Matching", "Generation", "Generation"], "decomposed": [True, True, False]})
    assert generation_rows.grid_rows(grid, enters)["decomposed"].tolist() == [True, False, False]
    assert generation_rows.grid_rows(grid, True)["decomposed"].tolist() == [True, True, False]
    assert grid["decomposed"].tolist() == [True, True, False]  # the input is not changed
    assert generation_rows.decision_findings(points) == {"generation": 1, "below": 1, "below_names": "BARTScore-F-para",
                                                         "good_phrase": "no paraphraser-based generation "
                                                                        "configuration",
                                                         "decision": "are left out of"}
    good, _ = quality_points(0.25, 0.50)
    assert generation_rows.decision_findings(good) == {"generation": 1, "below": 0, "below_names": "none",
                                                       "good_phrase": "the only paraphraser-based generation "
                                                                      "configuration (BARTScore-F-para)",
                                                       "decision": "enter"}
    assert generation_rows.decision_findings(good[good["paradigm"] != "Generation"])["generation"] == 0


def test_the_rule_on_recorded_figures_keeps_out_a_paraphraser_below_bleu_or_without_whole_set_figures():
    from metricbias.book.reproduction import generation_rows

    good = {"trainer": "paraphraser", "figures": {("wmt19-kk-en", "darr_tau"): 0.32, ("stsb-dev", "pearson"): 0.45},
            "bleu": {("wmt19-kk-en", "darr_tau"): 0.26, ("stsb-dev", "pearson"): 0.33}}
    head = {"trainer": "mlm_head", "figures": {"accuracy": 0.1}, "bleu": {}}

    def floors(**words):
        return pd.DataFrame([{"part": p, "measure": m, "floor": w} for p, pair in words.items()
                             for m, w in zip(["WMT19 kk-en DARR τ", "STS-B dev r"], pair)])

    assert generation_rows.generation_enters_recorded({"a": good, "h": head}, floors(a=("above", "above")))
    # not distinguishable from BLEU is not below it; one measure below is
    assert generation_rows.generation_enters_recorded({"a": good}, floors(a=("above", "not distinguishable")))
    assert not generation_rows.generation_enters_recorded({"a": good, "b": good},
                                                          floors(a=("above", "above"), b=("below", "above")))
    # a paraphraser without a paired comparison (no whole-set scores) does not enter
    assert not generation_rows.generation_enters_recorded({"a": good, "c": good}, floors(a=("above", "above")))
    assert generation_rows.generation_enters_recorded({"h": head}, floors())  # no paraphraser: nothing to leave out


def test_the_rule_reads_the_paired_intervals_not_the_points():
    """The generation configuration is below BLEU in point value on DARR (0.19 < 0.20) but the paired interval
    says not distinguishable: it enters; a point above BLEU whose interval lies below 0 cannot happen, so a planted
    "below" keeps it out whatever the point."""
    points, configs = quality_points(0.19, 0.50)
    paired = pd.DataFrame({"metric": ["BERTScore-F", "BERTScore-F", "BARTScore-F-para", "BARTScore-F-para"],
                           "measure": ["darr_tau", "stsb_r"] * 2,
                           "floor": ["above", "above", "not distinguishable", "above"]})
    bias = pd.DataFrame({"metric": configs["metric"], "attribute": "gender", "bias": [1.0, 5.0, 3.0]})
    quality = pd.DataFrame({"metric": configs["metric"], "darr_tau": [0.20, 0.35, 0.19], "stsb_r": [0.40, 0.70, 0.5],
                            "darr_pairs": 400, "stsb_pairs": 500})
    tested = ch3_quality.quality_points(bias, configs, quality, floors=paired)
    assert tested["floor"].tolist() == ["reference", "above", "not distinguishable"]
    assert generation_rows.generation_enters(tested) and not generation_rows.generation_enters(points)
    below = ch3_quality.quality_points(bias, configs, quality, floors=paired.assign(
        floor=["above", "above", "below", "above"]))
    assert not generation_rows.generation_enters(below)
    assert generation_rows.decision_findings(below)["below_names"] == "BARTScore-F-para"
