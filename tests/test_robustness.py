import math

import numpy as np
import pandas as pd
import pytest

from metricbias.bias import distributional as dist
from metricbias.bias import generalized as g
from metricbias.bias import pairwise as pw
from metricbias.bias import robustness as rb
from metricbias.bias import significance as sig
from metricbias.book.reproduction import ch4_measures

pytestmark = pytest.mark.usefixtures("private_cache")  # the study and the tests keep their tables in the result cache


def synthetic_scores(n_pairs=(30, 17), metrics=("m1", "m2", "m3", "m4"), seed=0):
    """A long score table like published.scores(): metric k has bias growing with k."""
    rng = np.random.default_rng(seed)
    rows = []
    for a, n in zip(("x", "y"), n_pairs):
        base = rng.normal(size=n)
        for k, m in enumerate(metrics):
            rows.append(pd.DataFrame({"attribute": a, "pair_id": [f"{a}-{i}" for i in range(n)], "metric": m,
                                      "score_1": base + rng.normal(0, 0.1 * (k + 1), n),
                                      "score_2": base + rng.normal(0.05 * k, 0.1, n)}))
    return pd.concat(rows, ignore_index=True)


def test_subsample_draws_ceil_rate_n_pairs_per_attribute_shared_by_all_metrics():
    scores = synthetic_scores()
    sub = rb.subsample(scores, 0.3, seed=4)
    sizes = sub.groupby(["attribute", "metric"]).size()
    assert set(sizes.xs("x", level="attribute")) == {math.ceil(0.3 * 30)}
    assert set(sizes.xs("y", level="attribute")) == {math.ceil(0.3 * 17)}
    ids = sub.groupby("metric")["pair_id"].apply(frozenset)
    assert ids.nunique() == 1
    assert rb.subsample(scores, 0.3, seed=4).equals(sub)
    assert not rb.subsample(scores, 0.3, seed=5)["pair_id"].equals(sub["pair_id"])
    with pytest.raises(ValueError, match="sampling rate"):
        rb.subsample(scores, 1.5, seed=0)


def test_measure_table_matches_the_single_measures():
    scores = synthetic_scores()
    table = rb.measure_table(scores).set_index(["attribute", "metric"])
    g_ = scores[(scores.attribute == "y") & (scores.metric == "m3")]
    row = table.loc[("y", "m3")]
    assert row["eq2"] == pytest.approx(pw.absolute_bias(g_.score_1, g_.score_2))
    assert row["indicator"] == pytest.approx(dist.indicator_score(g_.score_1, g_.score_2, ties="half"))
    u1, u2 = dist.unit_rescale(g_.score_1, g_.score_2)
    assert row["kls"] == pytest.approx(dist.kls(u1, u2)) and row["jss"] == pytest.approx(dist.jss(u1, u2))
    overall = rb.with_overall(table.reset_index()).set_index(["attribute", "metric"])
    # Eqs. 10-11 weights 30/47 and 17/47
    expect = (30 * table.loc[("x", "m3"), "kls"] + 17 * table.loc[("y", "m3"), "kls"]) / 47
    assert overall.loc[("all", "m3"), "kls"] == pytest.approx(expect)


def test_magnitudes_point_the_same_way():
    assert rb.magnitude("indicator", [40, 50, 65]).tolist() == [10, 0, 15]
    assert rb.magnitude("kls", [50, 70]).tolist() == [0, 20]
    assert rb.magnitude("jss", [100, 80]).tolist() == [0, 20]


def test_the_full_sample_reproduces_the_full_ranking():
    scores = synthetic_scores()
    stab = rb.ranking_stability(scores, rates=(1.0,), n_seeds=2, measures=("eq2", "kls"))
    assert (stab["kendall_tau"] == 1).all() and stab["identical"].all()
    assert set(stab["attribute"]) == {"x", "y", "all"}
    summary = rb.summarize(stab)
    assert (summary["tau_mean"] == 1).all() and (summary["n_draws"] == 2).all()


def test_subsampling_lowers_tau_and_is_seeded():
    scores = synthetic_scores(n_pairs=(40, 40), metrics=tuple(f"m{k}" for k in range(6)))
    a = rb.ranking_stability(scores, rates=(0.3,), n_seeds=3, seed=7, measures=("eq2", "indicator"), cache=False)
    b = rb.ranking_stability(scores, rates=(0.3,), n_seeds=3, seed=7, measures=("eq2", "indicator"), cache=False)
    pd.testing.assert_frame_equal(a, b)
    assert a["kendall_tau"].between(-1, 1).all() and a["kendall_tau"].min() < 1


# ---------------------------------------------------------------- significance


def test_paired_permutation_test_exact_small_case():
    # differences 1, 2, 3: the 8 sign flips give means ±2, ±4/3, ±2/3 (twice 0 ... ): |mean| >= 2 in 2 of 8
    res = sig.paired_permutation_test([2.0, 4.0, 6.0], [1.0, 2.0, 3.0], n_resamples=999)
    assert res["difference"] == pytest.approx(2.0)
    assert res["p_value"] == pytest.approx(0.25)


def test_paired_permutation_test_identical_and_shifted():
    x = np.random.default_rng(0).normal(size=60)
    assert sig.paired_permutation_test(x, x, n_resamples=199)["p_value"] == 1.0
    res = sig.paired_permutation_test(x + 1.0, x + np.random.default_rng(1).normal(0, 0.1, 60), n_resamples=999)
    assert res["p_value"] <= 0.002 and res["ci_low"] < res["difference"] < res["ci_high"]
    with pytest.raises(ValueError, match="equal length"):
        sig.paired_permutation_test([1, 2], [1])


def test_versus_reference_uses_each_metrics_own_rescaling():
    scores = synthetic_scores()
    table = sig.versus_reference(scores, reference="m1", n_resamples=199)
    assert len(table) == 2 * 3 and set(table["metric"]) == {"m2", "m3", "m4"}
    row = table[(table.attribute == "x") & (table.metric == "m4")].iloc[0]
    g4 = scores[(scores.attribute == "x") & (scores.metric == "m4")]
    g1 = scores[(scores.attribute == "x") & (scores.metric == "m1")]
    assert row["bias"] == pytest.approx(pw.absolute_bias(g4.score_1, g4.score_2))
    assert row["difference"] == pytest.approx(row["bias"] - pw.absolute_bias(g1.score_1, g1.score_2))
    assert (table["p_adjusted"] >= table["p_value"] - 1e-12).all()
    with pytest.raises(ValueError, match="reference metric 'BLEU'"):
        sig.versus_reference(scores)


def test_measure_with_ci_brackets_the_counterfactual_measure():
    rng = np.random.default_rng(3)
    data = pd.DataFrame({"source": np.repeat(np.arange(40), 3), "group": ["a", "b", "c"] * 40,
                         "score": rng.normal(size=120)})
    res = sig.measure_with_ci("MCM", data, "mean", "range", n_resamples=999)
    assert res["value"] == pytest.approx(g.mcm(data, "mean", "range"))
    assert res["ci_low"] < res["value"] < res["ci_high"] and res["n_sources"] == 40


def test_counterfactual_table_rescales_on_the_protected_groups():
    # T = a, b; scores of T span 0..4 -> x 25; backgrounds use the same map (neutral 8 -> 200)
    scored = pd.DataFrame({
        "attribute": "toy", "metric": "m",
        "source": [0, 0, 0, 0, 0, 1, 1, 1, 1, 1],
        "group": ["a", "b", "original", "original", "neutral"] * 2,
        "score": [0.0, 4.0, 0.0, 2.0, 8.0, 1.0, 1.0, 1.0, 3.0, 8.0],
    })
    t = sig.counterfactual_table(scored, {"toy": ["a", "b"]}, n_resamples=99).set_index("measure")["value"]
    # rescaled a/b: source 0: 0, 100; source 1: 25, 25 -> PCM = (100 + 0)/2; range the same; std = (50 + 0)/2
    assert t["PCM |x−y|"] == pytest.approx(50) and t["MCM range"] == pytest.approx(50)
    assert t["MCM std"] == pytest.approx(25)
    # original mean: source 0: (0 + 50)/2 = 25 -> |25-0| + |25-100| = 100, /2 = 50; source 1: 50 -> (25 + 25)/2 = 25
    assert t["BCM |x−y|, original pair"] == pytest.approx((50 + 25) / 2)
    # neutral 200: source 0: (200 + 100)/2 = 150; source 1: (175 + 175)/2 = 175
    assert t["BCM |x−y|, neutral reference"] == pytest.approx((150 + 175) / 2)
    v = sig.counterfactual_vbcm(scored, {"toy": ["a", "b"]}, n_resamples=99).set_index("group")["value"]
    # β − group: a: (25 - 0 + 50 - 25)/2 = 25; b: (25 - 100 + 50 - 25)/2 = -25
    assert v.to_dict() == pytest.approx({"a": 25.0, "b": -25.0})
    # a lower-is-better metric is oriented first: the same numbers as TER-like scores flip sign
    flipped = sig.counterfactual_vbcm(scored.assign(direction="lower"), {"toy": ["a", "b"]}, n_resamples=99)
    assert flipped.set_index("group")["value"].to_dict() == pytest.approx({"a": -25.0, "b": 25.0})


def _summary(taus: dict) -> pd.DataFrame:
    """A summarize()-shaped frame from {(attribute, rate): {measure: tau_mean}}."""
    return pd.DataFrame([{"attribute": a, "rate": r, "measure": m, "tau_mean": t, "tau_sd": 0.0,
                          "identical_share": 0.0, "n_draws": 2}
                         for (a, r), row in taus.items() for m, t in row.items()])


def test_stability_findings_by_hand():
    summary = _summary({
        ("x", 0.3): {"eq2": 0.9, "indicator": 0.5, "kls": 0.4, "jss": 0.6},
        ("x", 0.8): {"eq2": 0.9, "indicator": 0.7, "kls": 0.6, "jss": 0.8},
        ("y", 0.3): {"eq2": 0.2, "indicator": 0.3, "kls": 0.6, "jss": 0.1},
        ("y", 0.8): {"eq2": 0.4, "indicator": 0.5, "kls": 0.8, "jss": 0.3},
        (rb.ALL, 0.3): {"eq2": 0.8, "indicator": 0.6, "kls": 0.5, "jss": 0.5},
        (rb.ALL, 0.8): {"eq2": 0.7, "indicator": 0.85, "kls": 0.6, "jss": 0.6},
    })
    mean = rb.mean_tau(summary)
    assert mean.loc["y"].to_dict() == pytest.approx({"eq2": 0.3, "indicator": 0.4, "kls": 0.7, "jss": 0.2})
    overall = rb.overall_by_rate(summary)
    assert list(overall.index) == [0.3, 0.8] and list(overall.columns) == list(rb.MEASURES)
    found = ch4_measures.stability_findings(summary)
    # per panel (mean over rates): all -> eq2 0.75 (indicator 0.725); x -> eq2; y -> kls
    assert found["most_stable"] == "Eq. 2" and found["most_stable_panels"] == 2 and found["panels"] == 3
    assert found["wins"] == "**Eq. 2** in 2 of 3 panels, **KLS** in 1 of 3 panels"
    assert found["distributional_better"] == 1  # y: kls 0.7 > max(eq2, indicator) 0.4
    assert found["lowest_rate"] == 0.3 and found["tau_eq2_lowest"] == pytest.approx(0.8)
    assert found["most_stable_by_rate"] == "30% Eq. 2, 80% indicator"
