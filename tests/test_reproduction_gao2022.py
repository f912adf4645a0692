"""Gao & Wan's transcribed tables, keyed by our metric names."""

import numpy as np
import pandas as pd
import pytest

from metricbias.book.reproduction import ch5_oov, gao2022 as gao


def test_tables_map_every_row():
    t9, t6, t7 = gao.table9(), gao.table6(), gao.table7()
    assert len(t9) == len(t6) == 15 and len(t7) == 13
    for t in (t9, t6, t7):
        assert t["name"].notna().all()
    bleu = t9.set_index("paper_metric").loc["BLEU"]
    assert (bleu["name"], bleu["aggregation"], bleu["paper_aggregation"]) == ("bleu", "max", "native")
    assert (bleu["origin"], bleu["swap"]) == (0.441, 0.441)
    assert t6.set_index("paper_metric").loc["TER", "origin"] == -0.251
    assert set(t7["aggregation"]) == {"single"}
    t5 = gao.table5("Flickr8k")
    assert len(t5) == 15 and t5.set_index("paper_metric").loc["METEOR", "share_equal"] == 0.85


def test_side_by_side():
    ours = pd.DataFrame({"metric": ["BLEU", "BLEU", "MoverScore-1", "MoverScore-2"],
                         "name": ["bleu", "bleu", "moverscore", "moverscore"], "aggregation": ["max", "mean"] * 2,
                         "subset": ["all"] * 4, "origin": [0.45, 0.40, 0.5, 0.6], "swap": [0.45, 0.41, 0.5, 0.6]})
    ours.loc[2, "aggregation"] = "mean"
    sbs = gao.side_by_side(ours, gao.table9()).set_index("paper_metric")
    assert sbs.loc["BLEU", "ours_origin"] == 0.45 and sbs.loc["BLEU", "metric"] == "BLEU"
    # Gao's MoverScore row (mean over references) meets both of our MoverScore configurations
    assert sbs.loc["MoverScore", "metric"].tolist() == ["MoverScore-1", "MoverScore-2"]
    assert sbs.loc["BLEU", "diff_origin"] == pytest.approx(0.45 - 0.441)
    assert pd.isna(sbs.loc["METEOR", "ours_origin"])


def _oov_cells():
    results = pd.DataFrame({"test": ["C1", "C7-N", "C8-T", "C5-N"], "level": "word", "metric": "emb",
                            "effect_size": [1.13, float("nan"), 1.35, 0.54], "p_value": [0.09, float("nan"), 0.005, 0.06],
                            "n_dropped": [41, 12, 3, 0]})
    zero = pd.DataFrame({"test": ["C1", "C7-N", "C8-T", "C5-N"], "level": "word", "metric": "emb",
                         "effect_size": [0.51, 0.37, -0.2, 0.54], "p_value": [0.04, 0.23, 0.9, 0.06]})
    return results, zero


def test_oov_comparison_and_findings():
    c = ch5_oov.oov_comparison(*_oov_cells())
    assert c["changed"].tolist() == [False, True, True, False]
    assert c["finding_dropped"].tolist() == ["positive", "undefined", "positive, p ≤ 0.01", "positive"]
    f = ch5_oov.oov_findings(c)
    # C1, C7-N and C8-T lose words; C7-N is left undefined; of C1, C8-T, C5-N, C8-T changes (-0.20 -> 1.35, p 0.005)
    assert f == {"tests": 4, "losing": 3, "lost": 1, "lost_tests": "C7-N", "defined_both": 3, "changed": 1,
                 "changed_tests": "C8-T", "changes": "changes in 1 (C8-T)", "max_move": pytest.approx(1.55), "max_move_test": "C8-T"}
    same = ch5_oov.oov_comparison(_oov_cells()[0], _oov_cells()[0].drop(columns="n_dropped"))
    g = ch5_oov.oov_findings(same)
    assert (g["changed"], g["changed_tests"], g["lost_tests"], g["max_move"]) == (0, "none", "none", 0.0)
    assert f["changes"] == "changes in 1 (C8-T)" and g["changes"] == "changes in none of them"
    empty = ch5_oov.oov_findings(c.iloc[0:0])
    assert empty["tests"] == 0 and np.isnan(empty["max_move"]) and empty["max_move_test"] == "none"


def test_oov_words_on_the_released_seat_vectors():
    """C6-N through the embedding average loses the names the Google News subset lacks (4 male, 7 female)."""
    from metricbias import metrics
    from metricbias.datasets import seat

    words = ch5_oov.oov_words(seat.tests(["C6-N", "C6-T"], "word"), {"emb": metrics.get("embedding_average")})
    row = words.set_index("test").loc["C6-N"]
    assert (row["dropped"], row["X"], row["runs"]) == (11, "Paul, Kevin, Steve, Jeff", "no")
    assert words.set_index("test").loc["C6-T", "dropped"] == 0
    assert ch5_oov.oov_words([], {"emb": metrics.get("embedding_average")}).empty
