"""metaeval.quality: a metric's headline correlation per quality set (the one function chapter 6 and the trained
paraphrasers' figures use)."""

import math

import pandas as pd
import pytest

from metricbias.metaeval import quality as q
from metricbias.mitigation import evaluation


class Lengths:
    """A toy metric: the candidate's length in words."""

    name = "lengths"

    def score(self, candidates, references, cache=None):
        return [len(c.split()) for c in candidates]


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
