"""Correlation helpers against scipy and hand-worked values."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from metricbias.metaeval import correlation as corr
from metricbias.metaeval.correlation import CorrelationError


def test_example_level_matches_scipy():
    rng = np.random.default_rng(0)
    x = rng.normal(size=50)
    y = x + rng.normal(size=50)
    rho, tau = corr.example_level(x, y)
    ref_rho, ref_tau = stats.spearmanr(x, y), stats.kendalltau(x, y)
    assert (rho.statistic, tau.statistic) == ("spearman", "kendall")
    assert rho.value == pytest.approx(ref_rho.statistic) and rho.p_value == pytest.approx(ref_rho.pvalue)
    assert tau.value == pytest.approx(ref_tau.statistic) and tau.p_value == pytest.approx(ref_tau.pvalue)
    assert rho.n == tau.n == 50


def test_hand_worked_spearman_and_kendall():
    # ranks agree except one adjacent swap: rho = 1 - 6*2/(4*15) = 0.8; tau = (5-1)/6
    rho, tau = corr.example_level([1, 2, 3, 4], [1, 3, 2, 4])
    assert rho.value == pytest.approx(0.8)
    assert tau.value == pytest.approx(4 / 6)


def test_stacked_judges_repeat_scores():
    scores = np.array([0.1, 0.5, 0.3, 0.9])
    judges = np.array([[1, 2], [3, 3], [2, 1], [4, 4]])
    rho, _ = corr.example_level(scores, None, judges=judges)
    expected = stats.spearmanr(np.tile(scores, 2), judges.T.reshape(-1)).statistic
    assert rho.value == pytest.approx(expected) and rho.n == 8


def test_nan_dropped_and_degenerate_inputs_rejected():
    rho = corr.spearman([1, 2, np.nan, 4, 5], [1, 2, 3, 5, 4])
    assert rho.n == 4
    with pytest.raises(CorrelationError, match="same score"):
        corr.spearman([1, 1, 1, 1], [1, 2, 3, 4], "bleu on toy")
    with pytest.raises(CorrelationError, match="every human score"):
        corr.spearman([1, 2, 3], [2, 2, 2])
    with pytest.raises(CorrelationError, match="at least 3"):
        corr.spearman([1, 2], [1, 2])
    with pytest.raises(CorrelationError, match=r"\(3,\) metric scores but \(2,\)"):
        corr.kendall([1, 2, 3], [1, 2])


def test_system_level_uses_system_means():
    systems = ["a", "a", "b", "b", "c", "c", "d", "d"]
    scores = [0.0, 2.0, 3.0, 3.0, 1.0, 1.0, 4.0, 6.0]  # means a=1, b=3, c=1... ties: c=1
    human = [1, 1, 3, 3, 2, 2, 4, 4]
    means = corr.system_means(systems, scores, human)
    assert means.loc["a", "metric"] == 1.0 and means.loc["d", "metric"] == 5.0
    c = corr.system_level(systems, scores, human)
    assert c.value == pytest.approx(stats.spearmanr([1, 3, 1, 5], [1, 3, 2, 4]).statistic)
    assert c.n == 4


def test_darr_tau_counts_ties_as_discordant():
    better = [0.9, 0.8, 0.5, 0.4, 0.3]
    worse = [0.1, 0.9, 0.5, 0.2, 0.1]
    t = corr.darr_tau(better, worse)
    assert (t["concordant"], t["discordant"], t["ties"]) == (3, 2, 1)
    assert t["value"] == pytest.approx((3 - 2) / 5)
    assert t["p_value"] == pytest.approx(stats.binomtest(3, 5, 0.5).pvalue)


def test_aggregate():
    per_ref = [np.array([0.1, 0.4]), np.array([0.5]), np.array([0.2, 0.2, 0.8])]
    assert corr.aggregate(per_ref, "max").tolist() == [0.4, 0.5, 0.8]
    assert corr.aggregate(per_ref, "mean") == pytest.approx([0.25, 0.5, 0.4])
    with pytest.raises(ValueError, match="median"):
        corr.aggregate(per_ref, "median")


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1)), min_size=1, max_size=30))
def test_darr_tau_is_bounded_and_antisymmetric_without_ties(pairs):
    b = np.array([p[0] for p in pairs])
    w = np.array([p[1] for p in pairs])
    t = corr.darr_tau(b, w)
    assert -1.0 <= t["value"] <= 1.0
    if not np.any(b == w):
        assert corr.darr_tau(w, b)["value"] == pytest.approx(-t["value"])


def test_top_k_curve():
    systems = [f"s{i}" for i in range(6)]
    human = [6, 5, 4, 3, 2, 1]
    scores = [6, 5, 4, 1, 2, 3]  # the top 3 are ranked right, the bottom 3 reversed
    curve = corr.top_k_curve(systems, scores, human)
    assert curve["k"].tolist() == [3, 4, 5, 6]
    assert curve.loc[curve["k"] == 3, "spearman"].item() == pytest.approx(1.0)
    assert curve.loc[curve["k"] == 6, "spearman"].item() == pytest.approx(
        stats.spearmanr(scores, human).statistic)
    with pytest.raises(CorrelationError, match="k=9"):
        corr.top_k_curve(systems, scores, human, ks=[9])
