"""``Metric.score_cross``: every text against every text in both directions, equal to scoring the pairs one call at
a time (the batched path of BERTScore and MoverScore, the pairwise default of the others)."""

import numpy as np
import pytest

from metricbias import metrics

ROWS = ["This is Amy.", "Amy is an engineer.", "This is John!"]
COLS = ["career", "Family is here.", "The office is large and quiet.", "home"]


def pairwise(metric, rows, cols):
    """M(rows, cols) and M(cols, rows) from one ``score`` call on every pair, rows x cols then cols x rows (the call
    is a corpus-dependent metric's corpus)."""
    cands = [x for x in rows for _ in cols] + [y for y in cols for _ in rows]
    refs = [y for _ in rows for y in cols] + [x for _ in cols for x in rows]
    scores = metric.score(cands, refs)
    half = len(rows) * len(cols)
    return scores[:half].reshape(len(rows), len(cols)), scores[half:].reshape(len(cols), len(rows))


@pytest.mark.parametrize("name", ["bleu", "chrf", "meteor", "cider"])
def test_the_default_equals_pairwise_scoring(name):
    metric = metrics.get(name)
    got, want = metric.score_cross(ROWS, COLS), pairwise(metric, ROWS, COLS)
    assert got[0].shape == (3, 4) and got[1].shape == (4, 3)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


@pytest.mark.parametrize("options", [{"variant": "F"}, {"variant": "P"}, {"variant": "R", "idf": True},
                                     {"variant": "F", "idf": True}])
def test_bertscore_batched_matching_equals_pairwise(tiny_bert, options):
    metric = metrics.get("bertscore", backbone=str(tiny_bert), device="cpu", layer=2, **options)
    got, want = metric.score_cross(ROWS, COLS), pairwise(metric, ROWS, COLS)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-6, atol=1e-7)
    assert not np.allclose(got[0], got[0][0, 0])  # the texts are told apart


@pytest.mark.parametrize("options", [{"n_gram": 1}, {"n_gram": 2}, {"n_gram": 1, "idf": False}])
def test_moverscore_one_emd_per_pair_equals_pairwise(tiny_bert, options):
    metric = metrics.get("moverscore", backbone=str(tiny_bert), device="cpu", **options)
    got, want = metric.score_cross(ROWS, COLS), pairwise(metric, ROWS, COLS)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-9, atol=1e-12)


def test_the_progress_bar_counts_every_pair(tiny_bert):
    class Bar:
        n = 0

        def update(self, k):
            self.n += k

    for metric in (metrics.get("bleu"), metrics.get("bertscore", backbone=str(tiny_bert), device="cpu")):
        bar = Bar()
        metric.score_cross(ROWS, COLS, progress=bar)
        assert bar.n == 2 * 3 * 4


@pytest.mark.parametrize("name", ["cider", "moverscore", "bertscore"])
def test_some_rows_score_as_in_the_call_on_all_of_them(tiny_bert, name):
    options = {"backbone": str(tiny_bert), "device": "cpu"} if name != "cider" else {}
    if name == "bertscore":
        options["idf"] = True
    metric = metrics.get(name, **options)
    assert metric.corpus_dependent
    whole = metric.score_cross(ROWS, COLS)
    some = metric.score_cross([ROWS[2], ROWS[0]], COLS, corpus_rows=ROWS)
    np.testing.assert_allclose(some[0], whole[0][[2, 0]], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(some[1], whole[1][:, [2, 0]], rtol=1e-6, atol=1e-7)
    alone = metric.score_cross([ROWS[2], ROWS[0]], COLS)  # its own corpus: other idf weights
    assert not np.allclose(alone[0], whole[0][[2, 0]])
