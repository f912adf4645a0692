"""Gao & Wan's transcribed tables, keyed by our metric names."""

import pandas as pd
import pytest

from metricbias.reproduction import gao2022 as gao


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
