"""Intervals and tests at the design's level: whole clusters resampled (and flipped) wherever pairs share a
template, by default in ``mb.measure``, ``mb.bias_table``, ``mb.audit`` and the cell tests; pairs where none do."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import metricbias as mb
from metricbias.bias import clusters, pairwise, reliability, testing
from metricbias.datasets import user_pairs


def released_gender(n_pairs: int, s1, s2, metric="m") -> pd.DataFrame:
    """A score table in the released gender layout: pair ``gender-0000`` and ``-0001`` are WinoBias twins."""
    return pd.DataFrame({"attribute": "gender", "pair_id": [f"gender-{i:04d}" for i in range(n_pairs)],
                         "metric": metric, "score_1": s1, "score_2": s2})


def test_expanded_levels_are_hesterbergs_and_tend_to_the_percentile_levels():
    low, high = clusters.expanded_levels(5)
    z = np.sqrt(5 / 4) * stats.t.ppf(0.975, 4)  # 1.118 × 2.776 = 3.104
    assert low == pytest.approx(stats.norm.cdf(-z)) and low == pytest.approx(0.00095, abs=1e-5)
    assert high == pytest.approx(1 - low)
    assert clusters.expanded_levels(198)[0] == pytest.approx(0.024, abs=5e-4)
    assert clusters.expanded_levels(10_000)[0] == pytest.approx(0.025, abs=1e-4)


def test_measure_resamples_the_winobias_twins_and_pairs_elsewhere():
    rng = np.random.default_rng(0)
    s1, s2 = rng.normal(size=40), rng.normal(size=40)
    gender = released_gender(40, s1, s2)
    long = mb.measure(gender, ["bias", "stereotypical_difference"], n_resamples=999, seed=3).set_index("measure")
    keys = clusters.cluster_keys(gender)
    assert keys.nunique() == 20  # twins 0000/0001, 0002/0003, ...
    for name, signed in (("bias", False), ("stereotypical_difference", True)):
        terms = pairwise.pair_terms(s1, s2, signed=signed)
        expected = clusters.cluster_bootstrap(terms, keys.to_numpy(), n_resamples=999, seed=3)
        assert (long.loc[name, "ci_low"], long.loc[name, "ci_high"]) == pytest.approx(expected)
    # the same scores on another attribute: every pair its own cluster, BCa over pairs as before
    race = gender.assign(attribute="race")
    row = mb.measure(race, "bias", n_resamples=999, seed=3).iloc[0]
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(
        pairwise.bootstrap_ci(pairwise.pair_terms(s1, s2), n_resamples=999, seed=3))
    table = mb.bias_table(gender, n_resamples=999, seed=3).iloc[0]
    assert (table["bias_ci_low"], table["bias_ci_high"]) == pytest.approx(
        (long.loc["bias", "ci_low"], long.loc["bias", "ci_high"]))


def test_the_measure_interval_covers_clustered_data_the_pair_interval_does_not():
    """Planted: 30 templates of 8 pairs, the bias varies from template to template (SD 1) and pairs add little
    (SD 0.2), true stereotypical difference 0 on the raw scale. A cluster column groups the pairs; the same table
    without it is resampled by pairs, whose standard error is then about 0.36 of the true one (coverage about
    P(|Z| < 0.71) = 0.52)."""
    reps, hits = 60, {"clusters": 0, "pairs": 0}
    for r in range(reps):
        rng = np.random.default_rng(100 + r)
        template = np.repeat(rng.normal(0, 1, 30), 8)
        d = template + rng.normal(0, 0.2, 240)
        base = rng.normal(0, 5, 240)
        table = pd.DataFrame({"attribute": "x", "pair_id": [str(i) for i in range(240)], "metric": "m",
                              "score_1": base + d / 2, "score_2": base - d / 2,
                              "cluster": np.repeat(np.arange(30), 8).astype(str)})
        for name, frame in (("clusters", table), ("pairs", table.drop(columns="cluster"))):
            row = mb.measure(frame, "stereotypical_difference", n_resamples=299, seed=r).iloc[0]
            hits[name] += row["ci_low"] <= 0 <= row["ci_high"]
    se = np.sqrt(0.95 * 0.05 / reps)
    assert hits["clusters"] / reps >= 0.95 - 3 * se - 0.03
    assert hits["pairs"] / reps < 0.75  # the pairs of a template count as independent: far too narrow
    assert hits["clusters"] - hits["pairs"] >= 0.25 * reps


def test_cell_tests_flip_whole_twin_clusters():
    rng = np.random.default_rng(1)
    s1, s2 = rng.normal(size=30), rng.normal(size=30)
    out = testing.cell_tests(released_gender(30, s1, s2), n_resamples=999, seed=2, cache=False).iloc[0]
    sums = (s1 - s2).reshape(15, 2).sum(axis=1)  # twins are consecutive
    assert out["n_pairs"] == 30 and out["n_clusters"] == 15
    assert out["p_value"] == pytest.approx(testing.sign_flip_test(sums, n_resamples=999, seed=2))
    other = testing.cell_tests(released_gender(30, s1, s2).assign(attribute="race"), n_resamples=999, seed=2,
                               cache=False).iloc[0]
    assert other["n_clusters"] == 30
    assert other["p_value"] == pytest.approx(testing.sign_flip_test(s1 - s2, n_resamples=999, seed=2))


def test_the_size_robust_statistic_of_cluster_sums_is_the_statistic_of_the_resampled_pairs():
    rng = np.random.default_rng(3)
    s1, s2 = rng.normal(10, 2, size=12), rng.normal(10, 2, size=12)
    keys = np.repeat(np.arange(6), 2)
    counts, codes = clusters.cluster_draws(keys, n_resamples=5, seed=0)
    for signed in (False, True):
        centre = (s1.mean() + s2.mean()) / 2
        a, b = s1 - centre, s2 - centre
        cols = [a - b if signed else np.abs(a - b), np.ones(12), a + b, a * a + b * b]
        sums = clusters.resampled_sums(cols, keys, n_resamples=5, seed=0)
        for draw, row in zip(counts, sums):
            idx = np.repeat(np.arange(12), draw[codes].astype(int))  # each pair as often as its cluster
            direct = reliability.size_robust_statistic(s1[idx], s2[idx], signed)
            assert reliability._of_sums(row) == pytest.approx(direct)
    out = reliability.size_robust_difference(s1, s2, n_resamples=499, seed=1, clusters=keys)
    assert out["p_value"] == pytest.approx(testing.sign_flip_test((s1 - s2).reshape(6, 2).sum(1), n_resamples=499,
                                                                  seed=1))


def test_your_own_pairs_carry_their_cluster_into_the_scores_and_the_audit():
    pairs = pd.DataFrame({"attribute": "x", "candidate_1": [f"the cat {w} sat" for w in "abcdefgh"],
                          "candidate_2": [f"the dog {w} sat" for w in "abcdefgh"],
                          "reference": "the animal sat", "cluster": list("aabbccdd")})
    scores = mb.score_pairs(user_pairs.load_pairs(pairs), "bleu", cache=False)
    assert scores["cluster"].tolist() == list("aabbccdd")
    keys = clusters.shared(scores)
    assert keys is not None and clusters.n_clusters(keys) == 4


def test_two_configurations_are_compared_by_flipping_whole_twin_clusters():
    rng = np.random.default_rng(4)
    s1, s2, t1 = rng.normal(size=24), rng.normal(size=24), rng.normal(size=24)
    table = pd.concat([released_gender(24, s1, s2, "a"), released_gender(24, t1, s2, "b")])
    row = testing.configuration_differences(table, n_resamples=999, seed=0, cache=False).iloc[0]
    per_pair = np.abs(pairwise.pair_terms(s1, s2, signed=True)) - np.abs(pairwise.pair_terms(t1, s2, signed=True))
    assert row["difference"] == pytest.approx(per_pair.mean())
    assert row["p_value"] == pytest.approx(testing.sign_flip_test(per_pair.reshape(12, 2).sum(1), n_resamples=999,
                                                                  seed=0))


def test_an_interval_over_few_clusters_is_marked_with_a_warning():
    rng = np.random.default_rng(5)
    table = pd.DataFrame({"attribute": "x", "pair_id": [str(i) for i in range(20)], "metric": "m",
                          "score_1": rng.normal(size=20), "score_2": rng.normal(size=20),
                          "cluster": np.repeat(list("abcdefghij"), 2)})
    with pytest.warns(clusters.FewClustersWarning, match="x: the 95% intervals resample 10 clusters of pairs, fewer"):
        clusters.warn_if_few(table)
    user = pd.DataFrame({"attribute": "x", "candidate_1": [f"the cat {w} sat" for w in "abcdefgh"],
                         "candidate_2": [f"the dog {w} sat" for w in "abcdefgh"],
                         "reference": "the animal sat", "cluster": list("aabbccdd")})
    with pytest.warns(clusters.FewClustersWarning, match="4 clusters"):
        mb.audit("bleu", pairs=user, n_resamples=99, cache=False)


def test_weighted_medians_equal_the_median_of_repeated_values():
    from metricbias.bias.clusters import weighted_medians

    values = np.array([5.0, 1.0, 3.0, 2.0])
    weights = np.array([[1, 1, 1, 1],  # 1 2 3 5 -> 2.5
                        [0, 2, 1, 0],  # 1 1 3 -> 1
                        [3, 0, 0, 1],  # 2 5 5 5 -> 5
                        [1, 1, 0, 0]])  # 1 5 -> 3
    expected = [np.median(np.repeat(values, w)) for w in weights]
    assert weighted_medians(values, weights).tolist() == expected == [2.5, 1.0, 5.0, 3.0]


def test_median_interval_resamples_whole_clusters():
    from metricbias.bias.clusters import median_interval

    # two clusters of identical values: every resample's median is 1, 2 or 1.5, so the interval lies in [1, 2]
    low, high = median_interval([1.0, 1.0, 2.0, 2.0], ["a", "a", "b", "b"], n_resamples=999)
    assert 1.0 <= low <= high <= 2.0
    rng = np.random.default_rng(0)
    values = rng.normal(size=200)
    low, high = median_interval(values, np.arange(200) // 4, n_resamples=999)
    assert low < np.median(values) < high and high - low < 0.6
    assert np.isnan(median_interval([1.0, 2.0], ["a", "a"])[0])  # one cluster: no interval


def test_distinct_comparisons_count_a_comparison_of_identical_cells_once():
    comparisons = pd.DataFrame({"scores": ["released"] * 3 + ["live"] * 3, "attribute": "gender",
                                "metric_a": ["A", "A", "B", "A", "A", "B"], "metric_b": ["B", "C", "C", "B", "X", "X"]})
    # released C repeats released B; live A and live B repeat released A and B
    same = pd.DataFrame({"dataset": ["released", "live", "live"], "attribute": "gender", "metric": ["C", "A", "B"],
                         "same_as_dataset": "released", "same_as_metric": ["B", "A", "B"], "pairs": 10})
    out = testing.distinct_comparisons(comparisons, same)
    # A–B once (released; live A–B is the same hypothesis), A–C is A–B again, B–C is B with itself; live A–X and B–X
    # compare a released cell with a live one and stay
    assert list(zip(out["scores"], out["metric_a"], out["metric_b"])) == [("released", "A", "B"), ("live", "A", "X"),
                                                                         ("live", "B", "X")]
    assert len(testing.distinct_comparisons(comparisons, same.iloc[:0])) == 6
