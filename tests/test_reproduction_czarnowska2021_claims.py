"""Chapter 4's test of the top place under Eq. 2 (metricbias.book.reproduction.czarnowska2021.top_separation)."""

import numpy as np
import pandas as pd
import pytest

from metricbias.bias import pairwise
from metricbias.book.reproduction import czarnowska2021


def _scores():
    rng = np.random.default_rng(0)
    rows = []
    # race: "big" is far above "mid"; gender: "a" and "b" are alike
    spreads = {"race": {"big": 20.0, "mid": 5.0, "low": 1.0}, "gender": {"a": 5.0, "b": 5.0, "low": 1.0}}
    for attribute, metrics in spreads.items():
        s1 = rng.normal(50, 10, 60)
        for metric, spread in metrics.items():
            for i in range(60):
                rows.append({"attribute": attribute, "pair_id": f"{attribute}-{i}", "metric": metric,
                             "score_1": s1[i], "score_2": s1[i] + rng.normal(0, spread)})
    return pd.DataFrame(rows)


def test_top_separation_pairs_the_top_metric_with_the_runner_up():
    scores = _scores()
    sep = czarnowska2021.top_separation(scores, n_resamples=999).set_index("attribute")
    bias = pairwise.bias_table(scores, n_resamples=0).set_index(["attribute", "metric"])["bias"]
    assert sep.loc["race", "top"] == "big" and sep.loc["race", "runner-up"] == "mid"
    assert sep.loc["race", "difference"] == pytest.approx(bias["race", "big"] - bias["race", "mid"])
    assert sep.loc["race", "separated"] and not sep.loc["gender", "separated"]
    f = czarnowska2021.top_separation_findings(sep.reset_index())
    assert (f["separated"], f["attributes"], f["separated_list"]) == (1, 2, "race: big")
    assert f["rest_list"].startswith("gender: ") and " against " in f["rest_list"]
