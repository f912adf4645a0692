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


def _planted_directions():
    """One attribute: "noisy" moves both ways (the largest Eq. 2, a signed mean near 0), "shift" moves one way (the
    largest |stereotypical difference|), "low" barely moves."""
    rng = np.random.default_rng(1)
    s1 = rng.normal(50, 10, 80)
    moves = {"noisy": rng.normal(0, 30, 80), "shift": -4 + rng.normal(0, 0.5, 80), "low": rng.normal(0, 1, 80)}
    return pd.DataFrame([{"attribute": "race", "pair_id": f"p{i}", "metric": m, "score_1": s1[i],
                          "score_2": s1[i] + d[i]} for m, d in moves.items() for i in range(80)])


def test_signed_top_separation_and_agreement_with_eq2():
    scores = _planted_directions()
    eq2 = czarnowska2021.top_separation(scores, n_resamples=999)
    signed = czarnowska2021.top_separation(scores, signed=True, n_resamples=999)
    table = pairwise.bias_table(scores, n_resamples=0).set_index("metric")
    assert (eq2.loc[0, "top"], signed.loc[0, "top"]) == ("noisy", "shift")
    # the signed difference of the tops is |top| − |runner-up| of the stereotypical difference
    runner = signed.loc[0, "runner-up"]
    assert signed.loc[0, "difference"] == pytest.approx(abs(table.loc["shift", "stereotypical_difference"])
                                                        - abs(table.loc[runner, "stereotypical_difference"]))
    assert eq2.loc[0, "separated"] and signed.loc[0, "separated"]
    found = czarnowska2021.top_agreement(eq2, signed)
    assert found == {"tested_differs": 1, "both_separated": 1, "point_differs": 1, "signed_separated": 1,
                     "attributes": 1, "verdict": "shown"}
    # with the signed top not separated, the difference of tops stands only as a point value
    untested = czarnowska2021.top_agreement(eq2, signed.assign(separated=False))
    assert (untested["tested_differs"], untested["point_differs"], untested["verdict"]) == (0, 1, "not tested")
    assert czarnowska2021.top_agreement(eq2, eq2)["verdict"] == "not shown"
