"""Association tests from recorded r(t, A, B) (``association.associations``, what an association pack holds) give
the rows scoring every pair gives, to the bit."""

import numpy as np
import pandas as pd
import pytest

from metricbias import metrics
from metricbias.bias import association as asc
from metricbias.datasets import seat

SAME = ["test", "level", "metric", "effect_size", "p_value", "n_targets", "n_attributes", "n_dropped", "signature",
        "statistic", "n_partitions", "exact", "dropped"]


def both_ways(tests, suite, **kw):
    live = asc.run(tests, suite, cache=None, **kw)
    recorded = {label: asc.associations(tests, metric, label=label) for label, metric in asc.build_metrics(suite).items()}
    return live, asc.run(tests, suite, cache=None, associations=recorded, **kw), recorded


def test_word_level_tests_from_records_equal_the_scored_rows():
    tests = seat.tests("C6-N,C6-T,DB:C,ABW-T,C3-N", "word")
    suite = {"BLEU": metrics.get("bleu"), "chrF": metrics.get("chrf"), "avg": metrics.get("embedding_average"),
             "CIDEr": metrics.get("cider")}
    with pytest.warns(asc.DroppedWordsWarning):
        live, recorded, records = both_ways(tests, suite, n_permutations=2000)
    pd.testing.assert_frame_equal(live[SAME], recorded[SAME])
    assert (recorded["scoring_seconds"] == 0).all()
    # the real thing is there: chrF sees spelling (defined d), BLEU never matches a word (undefined d), and the
    # embedding average drops names without a vector (C3-N: European and African American first names)
    cells = live.set_index(["test", "metric"])
    assert cells.loc[("C6-N", "chrF"), "effect_size"] == pytest.approx(recorded.set_index(["test", "metric"]).loc[
        ("C6-N", "chrF"), "effect_size"], abs=0)
    assert np.isnan(cells.loc[("C6-N", "BLEU"), "effect_size"])
    c3 = {rec.key: rec for rec in records["avg"]}[("C3-N", "word")]
    assert c3.dropped["X"] and sum(c3.sizes[:2]) == len(c3.r) < 64
    assert cells.loc[("C3-N", "avg"), "n_targets"] == sum(c3.sizes[:2])


def test_a_record_is_not_used_for_another_draw_of_the_test():
    whole = seat.tests("C6-N", "sent")
    drawn = seat.tests("C6-N", "sent", sample_size=4)
    metric = metrics.get("bleu")
    records = {"BLEU": asc.associations(whole, metric)}
    live = asc.run(drawn, {"BLEU": metric}, cache=None, n_permutations=200)
    again = asc.run(drawn, {"BLEU": metric}, cache=None, n_permutations=200, associations=records)
    assert again["scoring_seconds"].iloc[0] > 0  # scored, not read from the whole set's record
    pd.testing.assert_frame_equal(live[SAME], again[SAME])


def test_a_record_of_another_vocabulary_is_refused():
    tests = seat.tests("C3-N", "word")
    records = {"avg": asc.associations(tests, metrics.get("bleu"))}  # BLEU drops no word
    with pytest.raises(ValueError, match="not this metric's"), pytest.warns(asc.DroppedWordsWarning):
        asc.run(tests, {"avg": metrics.get("embedding_average")}, cache=None, associations=records)
