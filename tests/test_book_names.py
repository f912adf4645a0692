"""The book layer's one naming source: paper labels read as registry names through the metric cards."""

import pytest

from metricbias.book.reproduction import gao2022, names, sun2022
from metricbias.book.reproduction.tables import table


def test_a_paper_label_is_a_card_label_or_one_of_the_few_that_differ():
    assert names.registry_name("BLEU") == "bleu" and names.registry_name("chrF") == "chrf"
    assert names.registry_name("ROUGE-SU4") == "rougeSU4" and names.registry_name("ROUGE-1") == "rouge1"
    assert names.registry_name("GreedyMatching") == "greedy_matching"  # the card's "Greedy matching"
    assert names.registry_name("ROUGE") == "rouge1"  # Sun et al.'s released column: PAPER_NAMES
    assert names.registry_name("BLEURT-mean") == "regression" and names.registry_name("WMD-max") == "wmd"
    with pytest.raises(KeyError, match="PAPER_NAMES"):
        names.registry_name("SPICE")


def test_every_transcribed_label_has_a_registry_name():
    for stem in ("gao2022_table3_weat_seat", "gao2022_table5_preference", "gao2022_table6_flickr8k_spearman_single_gender",
                 "gao2022_table7_realsumm_system_spearman", "gao2022_table9_flickr8k_spearman_full"):
        assert all(names.registry_name(label) for label in table(stem)["metric"].unique())
    assert sun2022.RELEASED_SETTINGS["ROUGE"] == ("rouge1", {}) and len(sun2022.RELEASED_SETTINGS) == 5


def test_gao_aggregations_from_the_label_or_the_metric():
    assert gao2022.aggregations("WMD-max") == ("max", "max")
    assert gao2022.aggregations("TER") == ("mean", "native")  # MultEval's multi-reference TER
    assert gao2022.aggregations("ROUGE-1") == ("single", "single")
    assert gao2022.aggregations("MoverScore") == ("mean", "mean")


def test_sun_table9_rows_find_their_released_column_in_table6():
    assert sun2022.released_column("PRISM", "Fscore") == "PRISM-F"
    assert sun2022.released_column("BARTScore", "BART-large Fscore") == "BARTScore-BART-large-F"
    assert sun2022.released_column("BLEU", "-") == "BLEU"
    with pytest.raises(ValueError, match="matches 5 rows"):
        sun2022.released_column("BERTScore", "-")  # five backbones: the configuration must name one


def test_joined_lists_words_as_a_sentence_does():
    assert [names.joined(w) for w in ([], ["a"], ["a", "b"], ["a", "b", "c"])] == ["none", "a", "a and b",
                                                                                   "a, b and c"]
    assert names.joined([], empty="no chapter") == "no chapter"


def test_of_all_names_a_subset_without_an_empty_slot():
    two, three = ["A", "B"], ["A", "B", "C"]
    assert names.of_all(["B", "A"], two, "models") == "both models"
    assert names.of_all([], two, "models") == "neither model"
    assert names.of_all(["B"], two, "models") == "1 of the 2 models (B)"
    assert names.of_all(three, three, "metrics") == "all 3 metrics"
    assert names.of_all([], three, "metrics") == "none of the 3 metrics"
    # the chosen ones are named in the order of ``among``
    assert names.of_all(["C", "A"], three, "metrics") == "2 of the 3 metrics (A and C)"
    assert names.of_all(["A"], ["A"], "metrics") == "the only metric (A)"
    assert names.of_all([], ["A"], "metrics") == "no metric" and names.of_all([], [], "metrics") == "no metrics"


def test_share_never_prints_k_of_the_k_or_zero_of():
    assert names.share(3, 3, "others") == "each of the three others"
    assert names.share(2, 3, "others") == "2 of the 3 others"
    assert names.share(0, 3, "others") == "none of the three others"
    assert names.share(174, 174, "cells", "all {n} {noun}") == "all 174 cells"
    assert names.share(1200, 1500, "pairs") == "1,200 of the 1,500 pairs"
