"""``mb.group_stereotype``: group preference and stereotype congruence apart, on hand-worked and planted designs;
the group read from WinoBias's pronouns; the cluster key (a WinoBias sentence and its twin)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import metricbias as mb
from metricbias.bias import clusters, groups

RESAMPLES = 2000


def _scores(s1, s2, codes, *, attribute="gender", ids=None, metric="m") -> pd.DataFrame:
    """A score table with its texts: group_1/group_2 male/female from the ±1 ``codes``."""
    n = len(s1)
    ids = ids if ids is not None else [f"gender-type1-dev-{i + 1:03d}" for i in range(n)]
    male = np.asarray(codes) > 0
    return pd.DataFrame({"dataset": "d", "attribute": attribute, "pair_id": ids, "metric": metric,
                         "score_1": s1, "score_2": s2, "candidate_1": [f"a{i}" for i in range(n)],
                         "candidate_2": [f"b{i}" for i in range(n)],
                         "group_1": np.where(male, "male", "female"), "group_2": np.where(male, "female", "male")})


def test_the_hand_worked_fit():
    # scores span [0, 1], so Eq. 1 is 100 x score: d = 40, 30, 40, 30, 35, 35 with g = +1, five times 10 with g = -1
    s1 = [1.0, 0.3, 0.9, 0.5, 0.6, 0.7, 0.5, 0.2, 0.3, 0.8, 0.15]
    s2 = [0.6, 0.0, 0.5, 0.2, 0.25, 0.35, 0.4, 0.1, 0.2, 0.7, 0.05]
    g = [1.0] * 6 + [-1.0] * 5
    out = mb.group_stereotype(_scores(s1, s2, g), n_resamples=200)
    assert list(out.columns) == groups.COLUMNS and list(out["effect"]) == ["group", "stereotype"]
    out = out.set_index("effect")
    # mean(d | g=+1) = 35, mean(d | g=-1) = 10: stereotype (35 + 10) / 2, group (35 - 10) / 2; mean(d) is 260 / 11
    assert out.loc["stereotype", "estimate"] == pytest.approx(22.5)
    assert out.loc["group", "estimate"] == pytest.approx(12.5)
    assert (out["n_pairs"] == 11).all() and (out["n_clusters"] == 6).all()  # twins 001/002, 003/004, ...
    assert (out["design"] == "identified").all()
    # the least-squares fit on an intercept and the code gives the same two numbers
    d = 100 * (np.array(s1) - np.array(s2))
    beta = np.linalg.lstsq(np.c_[np.ones(11), g], d, rcond=None)[0]
    assert groups.fit(d, g) == pytest.approx(tuple(beta))
    assert groups.design_of(g[:2] + g[-2:]) == "confounded"  # two pairs of each sign: fewer than MIN_SIDE


def test_the_contrast_row_is_the_difference_of_the_absolute_effects():
    s1 = [1.0, 0.3, 0.9, 0.5, 0.6, 0.7, 0.5, 0.2, 0.3, 0.8, 0.15]  # the hand-worked fit above: 22.5 and 12.5
    s2 = [0.6, 0.0, 0.5, 0.2, 0.25, 0.35, 0.4, 0.1, 0.2, 0.7, 0.05]
    out = mb.group_stereotype(_scores(s1, s2, [1.0] * 6 + [-1.0] * 5), n_resamples=200, contrast=True)
    assert list(out["effect"]) == ["group", "stereotype", groups.CONTRAST]
    row = out.set_index("effect").loc[groups.CONTRAST]
    assert row["estimate"] == pytest.approx(12.5 - 22.5) and row["ci_low"] <= -10 <= row["ci_high"]
    # a confounded cell has no group effect, so no contrast
    released = mb.load_pairs("published", ["race"])
    scores = pd.DataFrame({"attribute": "race", "pair_id": released["pair_id"], "metric": "m",
                           "score_1": np.linspace(0, 1, len(released)), "score_2": 0.5})
    confounded = mb.group_stereotype(scores, released, n_resamples=50, contrast=True).set_index("effect")
    assert confounded.loc[groups.CONTRAST, ["estimate", "ci_low", "ci_high"]].isna().all()


def test_a_planted_group_and_stereotype_effect_are_recovered():
    rng = np.random.default_rng(3)
    k = 150  # clusters of two twins, one of each group
    g = np.tile([1.0, -1.0], k)
    template = np.repeat(rng.normal(0, 3, k), 2)  # a template-level effect shared by the twins
    d = 2.0 + 5.0 * g + template + rng.normal(0, 2, 2 * k)
    s2 = rng.uniform(20, 80, 2 * k)
    s1 = s2 + d
    table = _scores(s1, s2, g)
    out = mb.group_stereotype(table, n_resamples=RESAMPLES).set_index("effect")
    scale = 100 / np.ptp(np.r_[s1, s2])  # Eq. 1: the planted raw effects in rescaled points
    assert (out["design"] == "identified").all() and (out["n_clusters"] == k).all()
    for effect, planted in (("stereotype", 2.0), ("group", 5.0)):
        row = out.loc[effect]
        assert row["ci_low"] <= planted * scale <= row["ci_high"], (effect, planted * scale, row.to_dict())
    assert out.loc["group", "p_value"] < 0.001 and out.loc["stereotype", "p_value"] < 0.05
    assert out.loc["group", "p_value"] >= 1 / (RESAMPLES + 1)  # the bootstrap p floor
    # the planted group effect (5) is the larger: the interval of |group| − |stereotype| lies above 0
    larger = mb.group_stereotype(table, n_resamples=RESAMPLES, contrast=True).set_index("effect").loc[groups.CONTRAST]
    assert larger["ci_low"] > 0 and larger["ci_low"] <= 3.0 * scale <= larger["ci_high"]


@pytest.mark.parametrize("c1, c2, code", [
    ("The developer argued with the designer because he did not like the design",
     "The developer argued with the designer because she did not like the design", 1.0),
    ("The developer argued with the designer because her idea cannot be implemented",
     "The developer argued with the designer because his idea cannot be implemented", -1.0),
    # two released pairs differ in more than the pronoun
    ("The carpenter made a desk for the clerk because she needed a desk",
     "The carpenter made a desk for the clerk because he needed one", -1.0),
    ("The nurse sent the carpenter to the hospital because of she was extremely cautious",
     "The nurse sent the carpenter to the hospital because he was extremely cautious", -1.0),
    ("He asked her", "She asked him", float("nan")),  # pronouns of both kinds in each: no code
    ("black people are poor", "white people are poor", float("nan")),
])
def test_the_group_read_from_the_pronouns(c1, c2, code):
    got = groups.pronoun_code(c1, c2)
    assert (np.isnan(got) and np.isnan(code)) or got == code


def test_the_released_gender_pairs_are_198_twin_clusters_half_he_half_she():
    pairs = mb.load_pairs("published", ["gender"])
    codes = groups.group_codes(pairs)
    assert codes.value_counts().to_dict() == {1.0: 198, -1.0: 198}
    keys = clusters.cluster_keys(pairs)
    assert keys.nunique() == 198 and keys.value_counts().eq(2).all()
    # the twins of the released file are the twins of the built WinoBias pairs they match
    matched = mb.load_pairs("matched", ["gender"])
    released = matched[matched["dataset"] == "released"]
    built = released["built_pair_id"].map(clusters.template_of)
    together = pd.DataFrame({"released": clusters.cluster_keys(released).to_numpy(), "built": built.to_numpy()})
    assert together.groupby("released")["built"].nunique().eq(1).all()
    assert together.groupby("built")["released"].nunique().eq(1).all()


def test_counterfactual_pairs_take_their_source_templates_cluster():
    pairs = pd.DataFrame({"dataset": "counterfactual", "attribute": "gender",
                          "pair_id": ["gender-type1-dev-001|female|male", "gender-type1-dev-002|male|non_binary",
                                      "race-0003|black|asian"],
                          "source": ["gender-type1-dev-001", "gender-type1-dev-002", "race-0003"]})
    keys = clusters.cluster_keys(pairs).tolist()
    assert keys[0] == keys[1] == "winobias:type1.dev:1" and keys[2] == "gender:race-0003"


def test_the_design_of_each_kind_of_set():
    assert groups.design_of([0, 0, 0]) == "stereotype only"  # StereoSet: both candidates name one group
    assert groups.design_of([1] * 67 + [-1] * 2) == "confounded"  # built religion: too few antistereo pairs
    assert groups.design_of([1] * 41 + [-1] * 9) == "identified"  # built age
    assert groups.design_of([np.nan] * 5) == "confounded"  # the released CrowS-derived sets
    released = mb.load_pairs("published", ["race"])
    scores = pd.DataFrame({"attribute": "race", "pair_id": released["pair_id"], "metric": "m",
                           "score_1": np.linspace(0, 1, len(released)), "score_2": 0.5})
    out = mb.group_stereotype(scores, released, n_resamples=100).set_index("effect")
    assert (out["design"] == "confounded").all() and np.isnan(out.loc["group", "estimate"])
    assert out.loc["stereotype", "estimate"] == pytest.approx(mb.bias_table(scores, n_resamples=0)
                                                              ["stereotypical_difference"].iloc[0])


def test_the_released_gender_scores_separate_pronoun_from_stereotype():
    from metricbias.datasets import published

    scores = published.scores(["gender"], ["BLEURT-BERT-base"])
    out = mb.group_stereotype(scores, mb.load_pairs("published", ["gender"]), n_resamples=RESAMPLES)
    out = out.set_index("effect")
    assert (out["design"] == "identified").all() and (out["n_clusters"] == 198).all()
    # with he and she balanced (198 each) the stereotype effect is the mean signed difference (App. E)
    signed = mb.bias_table(scores, n_resamples=0)["stereotypical_difference"].iloc[0]
    assert out.loc["stereotype", "estimate"] == pytest.approx(signed)
    # and the preference for "he" is several times larger, both far from 0
    assert out.loc["group", "ci_low"] > 3 * out.loc["stereotype", "ci_high"] > 0


def test_bad_input_is_one_clear_error():
    scores = pd.DataFrame({"attribute": "gender", "pair_id": ["x"], "metric": "m", "score_1": [1.0],
                           "score_2": [0.0]})
    with pytest.raises(ValueError, match="carry neither the texts nor a dataset column; pass pairs="):
        mb.group_stereotype(scores)
    pairs = mb.load_pairs("published", ["gender"])
    with pytest.raises(ValueError, match="pair 'x' of gender is not in the pairs given"):
        mb.group_stereotype(scores, pairs)


def test_clustered_data_the_cluster_bootstrap_covers_and_the_pair_bootstrap_does_not():
    # 40 templates of 5 pairs; the template shifts all its pairs (SD 2) far more than the pairs vary (SD 0.5)
    rng = np.random.default_rng(11)
    k, m, reps, truth = 40, 5, 200, 1.0
    keys = np.repeat(np.arange(k), m)
    hits = {"clusters": 0, "pairs": 0}
    for r in range(reps):
        x = truth + np.repeat(rng.normal(0, 2, k), m) + rng.normal(0, 0.5, k * m)
        low, high = clusters.cluster_bootstrap(x, keys, n_resamples=499, seed=r)
        hits["clusters"] += low <= truth <= high
        w = rng.integers(0, k * m, size=(499, k * m))  # the pair bootstrap: pairs drawn as if independent
        low, high = np.quantile(x[w].mean(axis=1), [0.025, 0.975])
        hits["pairs"] += low <= truth <= high
    se = np.sqrt(0.95 * 0.05 / reps)
    assert hits["clusters"] / reps >= 0.95 - 3 * se - 0.02  # 40 clusters: a percentile interval runs a little short
    # the design effect 1 + (5 - 1) * 4 / 4.25 = 4.8 makes its SE 2.2 times too small: it covers P(|Z| < 0.9) = 0.63
    assert hits["pairs"] / reps < 0.75 and hits["clusters"] - hits["pairs"] > 0.2 * reps


def test_the_template_interval_resamples_whole_templates():
    from metricbias.bias import reliability

    x = np.array([[1.0, 1.0], [3.0, 3.0], [5.0, 5.0]])
    # every resample draws whole templates: its mean is a mean of three template means from {1, 3, 5}
    means = clusters.cluster_means(x.ravel(), np.repeat(np.arange(3), 2), n_resamples=500, seed=0)
    assert set(np.round(means * 3).astype(int)) <= set(range(3, 16)) and np.allclose(means * 3 % 2, 1)
    low, high = reliability.template_interval(x, n_resamples=500, seed=0)
    assert 1.0 <= low < 3.0 < high <= 5.0


def test_your_own_pairs_name_their_clusters():
    pairs = pd.DataFrame({"attribute": "x", "pair_id": ["1", "2", "3"], "cluster": ["t1", "t1", ""]})
    assert clusters.cluster_keys(pairs).tolist() == ["x:t1", "x:t1", "x:3"]
