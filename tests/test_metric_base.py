import numpy as np
import pytest

from metricbias import metrics
from metricbias.cache import ScoreCache
from metricbias.metrics.base import Metric, MetricError


class Overlap(Metric):
    """Toy metric: share of candidate tokens found in the reference (counts its calls)."""

    name = "toy_overlap"
    family = "ngram"
    defaults = {"lowercase": True, "device": "cpu"}
    choices = {"lowercase": (True, False)}
    calls: list = []

    def _score(self, candidates, references):
        Overlap.calls.append(len(candidates))
        out = []
        for c, r in zip(candidates, references):
            if self.options["lowercase"]:
                c, r = c.lower(), r.lower()
            toks = c.split()
            out.append(sum(t in r.split() for t in toks) / len(toks) if toks else 0.0)
        return np.array(out)


class CorpusToy(Overlap):
    name = "toy_corpus"
    corpus_dependent = True

    def _score(self, candidates, references):
        base = super()._score(candidates, references)
        return base + len(candidates)  # depends on the whole call


@pytest.fixture(autouse=True)
def _reset():
    Overlap.calls.clear()


def test_scores_and_deduplication():
    m = Overlap()
    out = m.score(["a b", "a b", "c d"], ["a x", "a x", "c d"])
    assert out.tolist() == [0.5, 0.5, 1.0]
    assert Overlap.calls == [2]  # the repeated pair was scored once


def test_signature_records_options_versions_and_revision_not_runtime():
    a, b = Overlap(), Overlap(lowercase=False)
    assert a.signature != b.signature
    assert a.signature.startswith("metric:toy_overlap|lowercase:True|direction:higher|version:")
    assert "metricbias-" in a.signature and "rev-1" in a.signature
    assert "device" not in a.signature


def test_bad_options_and_inputs_are_clear_errors():
    with pytest.raises(MetricError, match="unknown option"):
        Overlap(colour="red")
    with pytest.raises(MetricError, match="lowercase='yes' is not one of"):
        Overlap(lowercase="yes")
    with pytest.raises(MetricError, match="candidate 1 is empty"):
        Overlap().score(["a", "  "], ["a", "b"])
    allowing = type("AllowsEmpty", (Overlap,), {"empty_text": "allow"})()
    assert allowing.score(["", "a"], ["a", "a"]).tolist() == [0.0, 1.0]  # an empty candidate has a defined score
    with pytest.raises(MetricError, match="reference 0 is empty; this metric is undefined on empty references"):
        allowing.score(["a"], [" "])
    with pytest.raises(MetricError, match="2 candidates but 1 references"):
        Overlap().score(["a", "b"], ["a"])


def test_cache_hits_and_invalidation(tmp_path):
    cache = ScoreCache(tmp_path / "s.sqlite")
    m = Overlap()
    first = m.score(["a b", "c d"], ["a", "c d"], cache=cache)
    assert cache.misses == 2 and Overlap.calls == [2]
    again = m.score(["c d", "a b", "e f"], ["c d", "a", "e"], cache=cache)
    assert again[:2].tolist() == first[::-1].tolist()
    assert cache.hits == 2 and Overlap.calls == [2, 1]  # only the new pair was scored
    Overlap.revision = 2  # a changed implementation never reuses old entries
    try:
        m.score(["a b"], ["a"], cache=cache)
        assert Overlap.calls[-1] == 1 and cache.misses == 4
    finally:
        Overlap.revision = 1
    Overlap(lowercase=False).score(["a b"], ["a"], cache=cache)  # a changed option misses too
    assert cache.misses == 5


def test_corpus_dependent_scores_are_keyed_by_the_whole_call(tmp_path):
    cache = ScoreCache(tmp_path / "s.sqlite")
    m = CorpusToy()
    one = m.score(["a"], ["a"], cache=cache)
    two = m.score(["a", "b"], ["a", "b"], cache=cache)
    assert one.tolist() == [2.0] and two.tolist() == [3.0, 3.0]


def test_registry_names_are_stable_and_unknown_names_list_the_choices():
    assert {"bleu", "rouge1", "rouge2", "rougeL", "rougeSU4", "meteor", "nist", "chrf", "ter", "cider", "wmd",
            "embedding_average", "vector_extrema", "greedy_matching", "bertscore", "moverscore", "regression",
            "bartscore", "prism", "frugalscore"} == set(metrics.BUILTIN)
    with pytest.raises(MetricError, match="unknown metric 'blue'; did you mean 'bleu'\\? available: bleu"):
        metrics.get("blue")
