import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metricbias.bias import distributional as dist
from metricbias.bias.distributional import GaussianFit as N


def test_kl_of_gaussians_hand_worked():
    # KL(N(0,1) || N(0,2²)) = log 2 + (1 + 0)/(2·4) − 1/2 = 0.693147 − 0.375 = 0.318147
    assert dist.kl_gaussian(N(0, 1), N(0, 2)) == pytest.approx(np.log(2) - 0.375, abs=1e-12)
    # KL(N(0,2²) || N(0,1)) = log(1/2) + 4/2 − 1/2 = 1.5 − 0.693147 = 0.806853
    assert dist.kl_gaussian(N(0, 2), N(0, 1)) == pytest.approx(1.5 - np.log(2), abs=1e-12)


def test_kls_hand_worked():
    # from the two values above: KLS = 100 · 0.806853 / (0.318147 + 0.806853) = 100 · 0.806853 / 1.125 = 71.7203
    assert dist.kls(N(0, 1), N(0, 2)) == pytest.approx(100 * (1.5 - np.log(2)) / 1.125, abs=1e-10)
    assert dist.kls(N(0, 1), N(0, 2)) == pytest.approx(71.7203, abs=1e-4)
    # N(0,1) vs N(1,2²): KL = log 2 + (1+1)/8 − 1/2 = 0.443147; reverse: −log 2 + (4+1)/2 − 1/2 = 1.306853
    # sum = 1.75, KLS = 100 · 1.306853/1.75 = 74.6773
    assert dist.kls(N(0, 1), N(1, 2)) == pytest.approx(100 * (2 - np.log(2)) / 1.75, abs=1e-10)


@settings(max_examples=50, deadline=None)
@given(st.floats(-50, 50), st.floats(-50, 50), st.floats(0.01, 20))
def test_equal_variances_give_kls_50(mu_1, mu_2, sigma):
    # then KL(P||Q) = KL(Q||P) = (μ1 − μ2)²/2σ²; identical fits (0/0) are 50 by our convention
    assert dist.kls(N(mu_1, sigma), N(mu_2, sigma)) == pytest.approx(50.0, abs=1e-9)


def test_identical_fits_give_kls_50_and_jss_100():
    assert dist.kls(N(3, 0.5), N(3, 0.5)) == 50.0
    assert dist.jss(N(3, 0.5), N(3, 0.5)) == 100.0
    scores = [0.1, 0.4, 0.2, 0.9]
    assert dist.kls(scores, scores) == 50.0 and dist.jss(scores, scores) == 100.0


def test_js_of_gaussians_hand_worked():
    # small mean shift δ with equal σ: JS ≈ δ²/(8σ²) nats (Fisher information 1/σ², JS ≈ I δ²/8),
    # δ = 0.1, σ = 1: 0.00125 nats = 0.00125/ln 2 = 0.0018034 bits; the next term is O(δ⁴)
    assert dist.js_gaussian(N(0, 1), N(0.1, 1)) == pytest.approx(0.00125 / np.log(2), rel=2e-3)
    # far apart (40σ): the mixture is two disjoint halves, JS = 1 bit
    assert dist.js_gaussian(N(0, 1), N(40, 1)) == pytest.approx(1.0, abs=1e-12)
    # JS is symmetric and scale-free: N(0,1) vs N(1,1.5²) equals N(0,10) vs N(10,15)
    a = dist.js_gaussian(N(0, 1), N(1, 1.5))
    assert dist.js_gaussian(N(1, 1.5), N(0, 1)) == pytest.approx(a, abs=1e-12)
    assert dist.js_gaussian(N(0, 10), N(10, 15)) == pytest.approx(a, abs=1e-10)


def test_js_agrees_with_an_independent_grid_integration():
    x = np.linspace(-12, 12, 800_001)  # every density here is < 1e-30 outside
    for (m1, s1), (m2, s2) in [((0, 1), (1, 1.5)), ((0, 1), (0, 0.2)), ((0.3, 0.05), (0.35, 0.08))]:
        p = np.exp(-0.5 * ((x - m1) / s1) ** 2) / (s1 * np.sqrt(2 * np.pi))
        q = np.exp(-0.5 * ((x - m2) / s2) ** 2) / (s2 * np.sqrt(2 * np.pi))
        m = (p + q) / 2
        with np.errstate(divide="ignore", invalid="ignore"):
            kl_pm = np.trapezoid(np.where(p > 1e-200, p * np.log2(p / m), 0), x)
            kl_qm = np.trapezoid(np.where(q > 1e-200, q * np.log2(q / m), 0), x)
        assert dist.js_gaussian(N(m1, s1), N(m2, s2)) == pytest.approx((kl_pm + kl_qm) / 2, abs=1e-7)


def test_jss_hand_worked():
    # Eq. 9 with equal σ: Δσ = 0, JSS = 100 (1 − JS); 40σ apart: JS = 1, JSS = 0
    assert dist.jss(N(0, 1), N(40, 1)) == pytest.approx(0.0, abs=1e-9)
    # same means, σ 0.2 vs 0.7: Δσ = 0.5, so JSS = 100 (1 − JS) / 1.5
    js = dist.js_gaussian(N(0, 0.2), N(0, 0.7))
    assert dist.jss(N(0, 0.2), N(0, 0.7)) == pytest.approx(100 * (1 - js) / 1.5, abs=1e-12)
    # δ = 0.1, σ = 1: JSS ≈ 100 (1 − 0.0018034) = 99.8197
    assert dist.jss(N(0, 1), N(0.1, 1)) == pytest.approx(99.8197, abs=2e-3)


def test_fits_use_the_sample_standard_deviation():
    fit = dist.fit_gaussian([1.0, 2.0, 3.0, 4.0])
    # mean 2.5, sample variance (2.25 + 0.25 + 0.25 + 2.25)/3 = 5/3
    assert fit.mean == 2.5 and fit.std == pytest.approx(np.sqrt(5 / 3)) and fit.n == 4


def test_weighted_aggregation_eqs_10_11():
    # three bias types with 1, 1, 2 samples: (1·50 + 1·60 + 2·70)/4 = 62.5
    assert dist.weighted([50, 60, 70], [1, 1, 2]) == pytest.approx(62.5)


def test_indicator_measure_and_liu_counterexample():
    # Liu's example: S_st = {0.4, 0.3, 0.9, 0.8}, S_at = {0.5, 0.4, 0.1, 0.2}: Eq. 2 gives 50 ...
    st_, at_ = [0.4, 0.3, 0.9, 0.8], [0.5, 0.4, 0.1, 0.2]
    assert dist.indicator_score(st_, at_) == 50.0
    # ... but the distributions differ: variance ratio ≠ 1, so KLS ≠ 50, and JSS < 100
    assert dist.kls(st_, at_) > 50 and dist.jss(st_, at_) < 100
    # ties are not a preference in Eq. 2 as written; counted as half with ties="half"
    assert dist.indicator_score([1, 2, 5], [1, 3, 4]) == pytest.approx(100 / 3)
    assert dist.indicator_score([1, 2, 5], [1, 3, 4], ties="half") == pytest.approx(50.0)


def test_tie_aware_indicator_is_a_counterfactual_pcm_with_the_mwu_comparison():
    from metricbias.bias import generalized as g

    rng = np.random.default_rng(2)
    s1, s2 = rng.integers(0, 4, 30).astype(float), rng.integers(0, 4, 30).astype(float)  # many ties
    pcm = g.pcm(g.from_pairs(s1, s2), "set", "mwu")
    assert dist.indicator_score(s1, s2, ties="half") == pytest.approx(50 - 100 * pcm)


def test_shapiro_wilk_is_scipys():
    from scipy import stats

    x = np.random.default_rng(0).normal(size=50)
    w, p = dist.shapiro_wilk(x)
    assert (w, p) == pytest.approx((stats.shapiro(x).statistic, stats.shapiro(x).pvalue))


def test_pair_measures_rescale_to_the_unit_interval():
    # rescaling is affine and shared, so KLS and the indicator are unchanged; Δσ is in [0, 1] units
    rng = np.random.default_rng(1)
    s1, s2 = rng.normal(5, 2, 40), rng.normal(6, 1, 40)
    raw = dist.pair_measures(s1, s2, rescale=False)
    unit = dist.pair_measures(s1, s2)
    assert unit["kls"] == pytest.approx(raw["kls"], abs=1e-9)
    assert unit["indicator"] == raw["indicator"]
    lo, hi = min(s1.min(), s2.min()), max(s1.max(), s2.max())
    p, q = dist.fit_gaussian((s1 - lo) / (hi - lo)), dist.fit_gaussian((s2 - lo) / (hi - lo))
    assert unit["jss"] == pytest.approx(dist.jss(p, q), abs=1e-12)


def test_degenerate_input_is_a_clear_error():
    with pytest.raises(ValueError, match="all 3 scores are 0.5"):
        dist.fit_gaussian([0.5, 0.5, 0.5], label="x")
    with pytest.raises(ValueError, match="needs more than 1"):
        dist.fit_gaussian([0.5])
    with pytest.raises(ValueError, match="positive standard deviation"):
        N(0, 0)
    with pytest.raises(ValueError, match="equal, non-zero length"):
        dist.indicator_score([1, 2], [1])


# --- JSS as the author's released code computes it (variant="author_code") ---------------------------------
def test_author_code_jss_hand_worked_including_the_fold():
    # N(0,1) vs N(2,1): M = N(1, (1+1)/2) = N(1,1), KL(N(0,1)‖N(1,1)) = 1/2 = KL(N(2,1)‖N(1,1)), so JS = 0.5 nats
    # (not folded: 0.5 ≤ 1); Δσ = 0. JSS = 100 (1 − 0.5) / 1 = 50.
    assert dist.js_gaussian_author_code(N(0, 1), N(2, 1)) == pytest.approx(0.5, abs=1e-15)
    assert dist.jss(N(0, 1), N(2, 1), variant="author_code") == pytest.approx(50.0, abs=1e-12)
    # 6σ apart: M = N(3, 1), each KL = 3²/2 = 4.5, JS = 4.5 nats, folded to 1/4.5: JSS = 100 (1 − 2/9) = 77.78.
    # JSS rises again with distance (the paper's JSS is 0.56 here).
    assert dist.js_gaussian_author_code(N(0, 1), N(6, 1)) == pytest.approx(4.5, abs=1e-12)
    assert dist.jss(N(0, 1), N(6, 1), variant="author_code") == pytest.approx(700 / 9, abs=1e-10)
    assert dist.jss(N(0, 1), N(6, 1)) < 1  # JS = 0.994 bits
    # N(0,1) vs N(0,3²): Δσ = 2, folded to 1/2. M = N(0, (1+9)/2 = 5):
    # KL(N(0,1)‖M) = ln √5 + 1/10 − 1/2 = 0.40472, KL(N(0,3²)‖M) = ln(√5/3) + 9/10 − 1/2 = 0.10611,
    # JS = (0.40472 + 0.10611)/2 = 0.25541 nats; JSS = 100 (1 − 0.25541) / (1 + 0.5) = 49.639
    js = (0.5 * np.log(5) - 0.4 + 0.5 * np.log(5) - np.log(3) + 0.4) / 2
    assert dist.js_gaussian_author_code(N(0, 1), N(0, 3)) == pytest.approx(js, abs=1e-15)
    assert dist.jss(N(0, 1), N(0, 3), variant="author_code") == pytest.approx(100 * (1 - js) / 1.5, abs=1e-12)
    assert dist.jss(N(0, 1), N(0, 3), variant="author_code") == pytest.approx(49.639, abs=1e-3)
    assert [dist.fold(x) for x in (0.0, 0.25, 1.0, 4.0)] == [0.0, 0.25, 1.0, 0.25]
    with pytest.raises(ValueError, match="JSS variant must be one of paper, author_code"):
        dist.jss(N(0, 1), N(0, 3), variant="code")


def test_author_code_jss_equals_torch_distributions_as_the_released_code_uses_them():
    # the released code builds torch Normal distributions and torch's closed-form kl_divergence (float64 here)
    import torch
    from torch.distributions import Normal, kl_divergence

    rng = np.random.default_rng(0)
    for _ in range(50):
        m1, m2 = rng.normal(0, 3, 2)
        s1, s2 = rng.uniform(0.05, 4, 2)
        p, q = (torch.tensor(v, dtype=torch.float64) for v in (m1, s1)), (torch.tensor(v, dtype=torch.float64)
                                                                         for v in (m2, s2))
        (pm, ps), (qm, qs) = p, q
        mix = Normal((pm + qm) / 2, torch.sqrt((ps ** 2 + qs ** 2) / 2))
        js = float((kl_divergence(Normal(pm, ps), mix) + kl_divergence(Normal(qm, qs), mix)) / 2)
        expected = 100 * (1 - min(js, 1) / max(js, 1)) / (1 + min(abs(s1 - s2), 1) / max(abs(s1 - s2), 1))
        assert dist.jss(N(m1, s1), N(m2, s2), variant="author_code") == pytest.approx(expected, abs=1e-10)


def test_jss_variants_side_by_side_and_through_measure_table():
    rng = np.random.default_rng(4)
    frame = pd.DataFrame({"attribute": "a", "metric": np.repeat(["m1", "m2"], 50),
                          "score_1": rng.normal(0.5, 0.1, 100), "score_2": rng.normal(0.45, 0.2, 100)})
    both = dist.jss_variants(frame)
    paper = dist.measure_table(frame)
    author = dist.measure_table(frame, jss_variant="author_code")
    assert both["jss_paper"].tolist() == paper["jss"].tolist()
    assert both["jss_author_code"].tolist() == author["jss"].tolist()
    assert np.allclose(both["difference"], author["jss"] - paper["jss"])
    assert paper["kls"].tolist() == author["kls"].tolist()  # KLS has one definition
