"""Chapter 4's summaries of the multi-group counterfactual sets: sizes, exclusions, worst groups, vocabulary."""

import numpy as np
import pandas as pd
import pytest

from metricbias.book.reproduction import ch4_counterfactual as cs

GROUPS = {"gender": ["female", "male", "non_binary"], "religion": ["christian", "muslim"]}
ROWS = pd.DataFrame({
    "attribute": ["gender"] * 8 + ["religion"] * 3,
    "source": ["g1"] * 4 + ["g2"] * 4 + ["r1"] * 3,
    "group": ["female", "male", "non_binary", "original"] * 2 + ["christian", "muslim", "neutral"],
    "candidate": ["she ran", "he ran", "they ran", "he ran", "she is", "he is", "they are", "she is",
                  "a church", "a mosque", "a place"],
})
EXCLUDED = pd.DataFrame({"attribute": ["religion", "religion", "gender"], "source": ["r2", "r3", "g3"],
                         "reason": ["cross_attribute", "no_counterpart", "cross_attribute"], "detail": ["", "", ""]})


def test_sizes_reasons_and_examples():
    sizes = cs.set_sizes(ROWS, EXCLUDED, GROUPS)
    assert sizes.to_dict("records") == [{"attribute": "gender", "sources": 2, "groups": 3, "excluded": 1},
                                        {"attribute": "religion", "sources": 1, "groups": 2, "excluded": 2}]
    reasons = cs.exclusion_reasons(EXCLUDED)
    assert reasons[["attribute", "reason", "pairs"]].values.tolist() == [
        ["gender", "cross_attribute", 1], ["religion", "cross_attribute", 1], ["religion", "no_counterpart", 1]]
    assert reasons["meaning"].str.len().min() > 10
    ex = cs.examples(ROWS)
    assert list(ex["candidate"]) == ["she ran", "he ran", "they ran", "he ran", "a church", "a mosque", "a place"]
    one = cs.examples(ROWS, "religion")  # the page's single example: one attribute's first source
    assert list(one["candidate"]) == ["a church", "a mosque", "a place"] and set(one["attribute"]) == {"religion"}
    groups = cs.protected_groups(GROUPS)
    assert groups.to_dict("records")[1] == {"attribute": "religion", "protected groups T": "christian, muslim"}


def test_worst_groups_and_counts():
    vbcm = pd.DataFrame({
        "attribute": ["gender"] * 9 + ["religion"] * 2,
        "metric": ["BLEU"] * 3 + ["chrF"] * 3 + ["WMD"] * 3 + ["BLEU"] * 2,
        "group": ["female", "male", "non_binary"] * 3 + ["christian", "muslim"],
        "value": [1.0, -2.0, 5.0, 0.5, 0.1, 3.0, 2.0, 1.0, 0.0, -1.0, 1.0],
    })
    worst = cs.worst_groups(vbcm)
    assert worst.set_index(["attribute", "metric"])["group"].to_dict() == {
        ("gender", "BLEU"): "non_binary", ("gender", "WMD"): "female", ("gender", "chrF"): "non_binary",
        ("religion", "BLEU"): "muslim"}
    assert cs.worst_group_counts(worst) == "gender: non-binary (2), female (1); religion: muslim (1)"
    families = {"BLEU": "ngram", "chrF": "ngram", "WMD": "embedding"}
    assert cs.worst_share(worst, families) == (2, 2)
    # chrF's scores equal BLEU's on every pair: it counts once, so the counts add up to the 2 distinct configurations
    scored = pd.DataFrame({"attribute": ["gender"] * 6, "pair_id": [0, 1] * 3, "metric": ["BLEU"] * 2 + ["chrF"] * 2
                           + ["WMD"] * 2, "score_1": [0.5, 0.25, 0.5, 0.25, 0.1, 0.2],
                           "score_2": [0.4, 0.3, 0.4, 0.3, 0.3, 0.1]})
    distinct = cs.worst_groups(vbcm, scored)
    assert cs.worst_group_counts(distinct[distinct["attribute"] == "gender"]) == "gender: non-binary (1), female (1)"
    coverage = pd.DataFrame({"attribute": ["gender", "gender", "race"], "group": ["female", "non_binary", "asian"],
                             "terms": [27, 8, 3], "out of vocabulary": [0, 4, 3], "examples": ["", "x", "y"]})
    assert cs.uncovered_groups(coverage) == ["race/asian"]
    found = cs.findings(worst, families, coverage)
    assert found["ngram_worst_nonbinary"] == 2 and found["ngram_metrics"] == 2
    assert found["groups_without_vectors"] == 1 and found["groups"] == 3
    assert found["groups_without_vectors_list"] == "race: asian"


class ToyVectors:
    """A static-embedding stand-in: a vector for the words of ``known`` (case-sensitive)."""

    def __init__(self, known):
        self.known = set(known)

    def indices(self, text):
        return np.array([0] * sum(w in self.known for w in text.split()), dtype=np.int64)


def test_vocabulary_coverage_counts_terms_without_a_vector():
    from metricbias.datasets import lexicons

    lex = lexicons.load("gender")
    female = sorted({row.terms["female"][0] for row in lex.rows if "female" in row.terms})
    # every female term known except the first; a capitalized form counts as known ("Mary")
    known = [w.capitalize() for w in female[2:]] + [female[1]]
    coverage = cs.vocabulary_coverage({"gender": ["female"]}, ToyVectors(known))
    row = coverage.iloc[0]
    assert row["terms"] == len(female) and row["out of vocabulary"] == 1
    assert row["examples"] == female[0]


def test_configurations_used_names_those_left_out_by_kind():
    from metricbias import profiles

    from metricbias import backbones

    suite = profiles.suite("offline")
    kept = profiles.suite("offline", "bartscore,prism,all-mpnet-base-v2")
    out = cs.configurations_used(suite, kept)
    assert out["mpnet_size"] == 5.0  # all-mpnet-base-v2 110M parameters over all-MiniLM-L6-v2's 22M
    assert (out["used"], out["suite"]) == (len(kept), len(suite)) and (out["ngram_used"], out["ngram_suite"]) == (10, 10)
    if "all-mpnet-base-v2" not in backbones.available():  # the suite then holds the MiniLM configurations only
        assert out["left_out"].startswith("every generation configuration (BARTScore-MiniLM-F")
        return
    assert (out["used"], out["suite"]) == (18, 25)
    assert out["left_out"] == ("every generation configuration (BARTScore-MiniLM-F, BARTScore-MPNet-F, PRISM-MiniLM-F, "
                               "PRISM-MPNet-F); the MPNet ones of the other paradigms (BERTScore-MPNet, "
                               "MoverScore-MPNet, MoverScore-MPNet-2gram)")
    assert cs.configurations_used(suite, suite)["left_out"] == "none"


def test_configurations_used_counts_identical_ones_once_as_chapter_3_does():
    from metricbias.metrics import Spec

    kept = [Spec("A", "bleu", {}), Spec("B", "chrf", {}), Spec("C", "meteor", {})]
    scored = pd.DataFrame({"dataset": "counterfactual", "attribute": "gender", "pair_id": ["s|f|m", "s|f|n"] * 3,
                           "metric": ["A", "A", "B", "B", "C", "C"], "score_1": [0.5, 0.4, 0.5, 0.4, 0.5, 0.41],
                           "score_2": [0.3, 0.2, 0.3, 0.2, 0.3, 0.2]})
    out = cs.configurations_used(kept, kept, scored)  # B scores every pair as A does; C differs on one
    assert (out["used"], out["distinct"]) == (3, 2)
    assert cs.configurations_used(kept, kept)["distinct"] == 3  # no scores: each configuration once
