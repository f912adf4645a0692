"""The tests behind comparative sentences (metricbias.bias.claims), on hand-worked cases."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from metricbias.bias import claims
from metricbias.book.reproduction import notes


def test_sign_test_matches_the_binomial_by_hand():
    # 9 vs 7 untied pairs: P(X <= 7 or X >= 9 | n=16, 1/2) = 1 - C(16,8)/2^16
    out = claims.sign_tests([9], [7])
    assert out.loc[0, "p_value"] == pytest.approx(1 - math.comb(16, 8) / 2**16)
    assert out.loc[0, "n_untied"] == 16 and out.loc[0, "favours"] == "neither"
    # 10 vs 0: 2 * (1/2)^10
    assert claims.sign_tests([10], [0]).loc[0, "p_value"] == pytest.approx(2 / 2**10)


def test_benjamini_hochberg_across_the_rows_and_the_verdicts():
    first, second = [30, 2, 9, 0, 5], [2, 30, 7, 0, 5]
    out = claims.sign_tests(first, second)
    raw = [stats.binomtest(a, a + b).pvalue for a, b in zip(first, second) if a + b]
    expected = stats.false_discovery_control(raw, method="bh")
    tested = out["p_value"].notna()
    assert list(tested) == [True, True, True, False, True]  # no untied pair: no test, not in the family
    np.testing.assert_allclose(out.loc[tested, "p_adjusted"], expected)
    # BH by hand: sorted p = (p1 = p2 tiny, p3 = 0.80, p5 = 1): adjusted p3 = min(0.80 * 4/3, 1) = 1
    assert out.loc[2, "p_adjusted"] == pytest.approx(min(raw[2] * 4 / 3, 1.0))
    assert list(out["favours"]) == ["first", "second", "neither", "neither", "neither"]


def test_sign_tests_refuses_bad_counts():
    with pytest.raises(ValueError, match="non-negative integers"):
        claims.sign_tests([1.5], [2])
    with pytest.raises(ValueError, match="equal length"):
        claims.sign_tests([1, 2], [2])


def test_p_values_below_the_floor_are_written_as_a_bound():
    assert claims.format_p(0.0) == "p < 1e-300"
    assert claims.format_p(stats.binomtest(0, 1500).pvalue) == "p < 1e-300"  # underflows to 0
    assert claims.format_p(0.0312) == "p = 0.031"
    assert claims.format_p(2.14e-5) == "p = 2.1e-05"
    assert claims.format_p(1e-5, floor=1e-3) == "p < 1e-3"
    assert claims.format_p(0.0, bare=True) == "< 1e-300" and claims.format_p(0.5, bare=True) == "0.5"
    assert claims.format_p(float("nan"), bare=True) == "—"
    assert claims.format_p(1e-300) == "p < 1e-300"  # the bound a download holds reads as a bound again


def test_downloads_keep_p_numeric_with_a_bound_column():
    frame = pd.DataFrame({"metric": ["a", "b", "c"], "p_value": [0.0, 1e-320, 0.2], "n": [1, 2, 3]})
    out = claims.p_bounds(frame, "p_value")
    assert list(out.columns) == ["metric", "p_value", "p_value_is_upper_bound", "n"]
    assert (out["p_value"] > 0).all()
    assert out["p_value"].tolist() == [1e-300, 1e-300, 0.2]
    assert out["p_value_is_upper_bound"].tolist() == [True, True, False]
    assert frame["p_value"].iloc[0] == 0.0  # the input is not changed


def test_permutation_p_at_its_floor_is_a_bound():
    from metricbias.bias.significance import paired_permutation_test
    from metricbias.bias.testing import sign_flip_test

    assert claims.permutation_floor(999) == 0.002 and claims.permutation_floor(999, two_sided=False) == 0.001
    # every pair favours x: no sign flip is as extreme, and scipy reports 2/(B + 1) two-sided
    p = sign_flip_test(np.linspace(1, 2, 40), n_resamples=999)
    assert p == pytest.approx(claims.permutation_floor(999))
    q = paired_permutation_test(np.linspace(1, 2, 40), np.zeros(40), n_resamples=999)["p_value"]
    assert q == pytest.approx(claims.permutation_floor(999))
    floor = claims.permutation_floor(9999)
    assert claims.format_p(floor, resolution=floor) == "p ≤ 2.0e-04"
    assert claims.format_p(floor * (1 + 1e-12), resolution=floor, bare=True) == "≤ 2.0e-04"  # float rounding
    assert claims.format_p(0.0031, resolution=floor) == "p = 0.0031"  # above the floor: a value
    assert claims.format_p(0.0, resolution=floor) == "p < 1e-300"
    frame = pd.DataFrame({"p_value": [floor, 0.0031, 0.0, np.nan]})
    out = claims.p_bounds(frame, "p_value", resolution=floor)
    assert out["p_value_is_upper_bound"].tolist() == [True, False, True, False]
    assert out["p_value"].iloc[0] == floor  # the bound stays numeric
    with pytest.raises(ValueError, match="at least 1"):
        claims.permutation_floor(0)


def test_difference_interval_paired_and_independent():
    rng = np.random.default_rng(1)
    x = rng.normal(1.0, 1.0, 200)
    y = x - 0.5 + rng.normal(0, 0.01, 200)  # paired: the difference is 0.5 with tiny noise
    paired = claims.difference_interval(x, y, paired=True, n_resamples=999)
    assert paired["difference"] == pytest.approx(0.5, abs=0.01)
    assert paired["ci_low"] < paired["difference"] < paired["ci_high"] and paired["ci_high"] - paired["ci_low"] < 0.01
    # the same numbers as two independent samples: the interval is as wide as the samples' spread implies
    indep = claims.difference_interval(x, y, paired=False, n_resamples=999)
    assert indep["difference"] == pytest.approx(paired["difference"])
    se = math.sqrt(x.var(ddof=1) / x.size + y.var(ddof=1) / y.size)
    assert indep["ci_high"] - indep["ci_low"] == pytest.approx(2 * 1.96 * se, rel=0.2)
    # unequal sizes are fine for independent samples, not for paired ones
    assert claims.difference_interval([1, 2, 3], [1, 2], paired=False, n_resamples=99)["n_y"] == 2
    with pytest.raises(ValueError, match="equal lengths"):
        claims.difference_interval([1, 2, 3], [1, 2], paired=True)


def test_compare_verdicts():
    rng = np.random.default_rng(2)
    base = rng.normal(10, 1, 400)
    assert claims.compare(base + 1 + rng.normal(0, 0.1, 400), base, paired=True, n_resamples=999)["verdict"] == "higher"
    assert claims.compare(base - 1, base, paired=False, n_resamples=999)["verdict"] == "lower"
    close = base + rng.normal(0, 0.1, 400)
    # no margin: a difference that is not shown to exist is "not distinguishable", never "the same"
    assert claims.compare(close, base, paired=True, n_resamples=999)["verdict"] == claims.UNDECIDED
    same = claims.compare(close, base, paired=True, margin=0.5, n_resamples=999)
    assert same["verdict"] == "same within ±0.5" and -0.5 < same["tost_low"] < same["tost_high"] < 0.5
    # a real but small difference: shown (higher) and still inside a generous margin
    small = claims.compare(base + 0.05 + rng.normal(0, 0.01, 400), base, paired=True, margin=0.5, n_resamples=999)
    assert small["verdict"] == "higher" and small["equivalent"]
    # a margin too small for the sample: still undecided
    noisy = rng.normal(10, 5, 20)
    assert claims.compare(noisy + rng.normal(0, 5, 20), noisy, paired=True, margin=0.1,
                          n_resamples=999)["verdict"] == claims.UNDECIDED


def test_interval_text():
    text = notes.interval_text({"difference": 0.123, "ci_low": 0.03, "ci_high": 0.21, "confidence": 0.95})
    assert text == "+0.12 (95% CI +0.03 to +0.21)"
    near = notes.interval_text({"difference": 0.003, "ci_low": 0.0004, "ci_high": 0.01, "confidence": 0.95}, 3)
    assert near == "+0.003 (95% CI +4.0e-04 to +0.010)"
    assert notes.interval_text({"difference": 0.0, "ci_low": 0.0, "ci_high": 0.0, "confidence": 0.9}) == \
        "+0.00 (90% CI +0.00 to +0.00)"


def test_spearman_interval():
    # Bonett & Wright: rho 0.5 over 24 units, z = atanh(0.5) ± 1.96 * sqrt(1.125 / 21)
    half = stats.norm.ppf(0.975) * math.sqrt(1.125 / 21)
    low, high = claims.spearman_interval(0.5, 24)
    assert (low, high) == pytest.approx((math.tanh(math.atanh(0.5) - half), math.tanh(math.atanh(0.5) + half)))
    assert all(math.isnan(v) for v in claims.spearman_interval(0.5, 3))


def test_direction_verdict_by_hand():
    # 6 of 6 agree: p = 2 * 0.5**6 = 0.03125 < 0.05
    out = claims.direction_verdict(6, 0)
    assert out["verdict"] == "holds" and out["p"] == pytest.approx(2 * 0.5 ** 6)
    assert claims.direction_verdict(0, 6)["verdict"] == "reverses"
    # 4 of 4: p = 0.125, not enough units to decide
    assert claims.direction_verdict(4, 0) == {"verdict": claims.UNDECIDED, "p": pytest.approx(0.125)}
    assert claims.direction_verdict(3, 3)["p"] == pytest.approx(1.0)
    none = claims.direction_verdict(0, 0)
    assert none["verdict"] == claims.UNDECIDED and np.isnan(none["p"])
    with pytest.raises(ValueError):
        claims.direction_verdict(-1, 2)


def test_cluster_sign_test_counts_each_cluster_once():
    """Twelve cells from four tests: test a has three cells (+1, +1, -0.5: mean +0.5), b (+0.2, -0.4: mean -0.1),
    c (+2, NaN: mean +2), d (0, 0: mean 0, left out), e (NaN only: left out). Ten positive cells would give a
    cell-level sign test; over the tests it is 2 positive against 1 negative: p = P(|X - 1.5| >= 0.5) = 1."""
    values = [1, 1, -0.5, 0.2, -0.4, 2, np.nan, 0, 0, np.nan]
    clusters = list("aaabbccdde")
    out = claims.cluster_sign_test(values, clusters)
    assert (out["clusters"], out["positive"], out["negative"]) == (3, 2, 1)
    assert out["positive_share"] == pytest.approx(2 / 3) and out["p_value"] == pytest.approx(1.0)
    # six clusters all positive: two-sided p = 2 * (1/2)^6
    six = claims.cluster_sign_test([0.3] * 12, [i // 2 for i in range(12)])
    assert (six["clusters"], six["positive"], six["p_value"]) == (6, 6, pytest.approx(2 / 2**6))
    empty = claims.cluster_sign_test([np.nan], ["a"])
    assert empty["clusters"] == 0 and math.isnan(empty["p_value"]) and math.isnan(empty["positive_share"])
    with pytest.raises(ValueError, match="equal length"):
        claims.cluster_sign_test([1.0, 2.0], ["a"])


def test_one_mapping_from_an_interval_to_a_claims_verdict():
    from metricbias.bias import claims

    assert claims.claim_verdict(0.1, 0.4) == "holds" and claims.claim_verdict(-0.4, -0.1) == "reverses"
    assert claims.claim_verdict(-0.1, 0.4) == claims.UNDECIDED
    assert claims.claim_verdict(-0.4, -0.1, claimed="lower") == "holds"  # a claim that the difference is negative
    assert claims.claim_verdict(0.1, 0.4, comparable=False) == claims.claim_verdict(np.nan, np.nan) == "not comparable"
    assert set(claims.VERDICTS) == {"holds", "reverses", claims.UNDECIDED, "not comparable"}
    with pytest.raises(ValueError, match="claimed"):
        claims.claim_verdict(0.1, 0.4, claimed="more")
