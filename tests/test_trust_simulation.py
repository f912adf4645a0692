"""The simulation behind chapter 8's coverage figures: a small seeded version, with Monte-Carlo tolerances."""

import numpy as np
import pytest
from scipy import stats

from metricbias.bias import simulation

REPS = 400


def test_jackknife_and_bca_match_scipy():
    rng = np.random.default_rng(1)
    s1, s2 = (a.reshape(4, -1) for a in simulation.simulate(simulation.Design(), 30, 4, rng))
    for measure, fn in simulation.STATISTICS.items():
        loo = np.array([[fn(np.delete(s1[r], i), np.delete(s2[r], i)) for i in range(30)] for r in range(4)])
        assert simulation.jackknife(measure, s1, s2) == pytest.approx(loo, rel=1e-10)
        ref = stats.bootstrap((s1, s2), fn, paired=True, vectorized=True, axis=-1, n_resamples=499, method="BCa",
                              rng=np.random.default_rng(3)).confidence_interval
        low, high = simulation._bca(s1, s2, measure, 499, np.random.default_rng(3))
        assert low == pytest.approx(ref.low) and high == pytest.approx(ref.high)


def test_bca_coverage_is_nominal_within_three_monte_carlo_errors():
    cov = simulation.coverage(simulation.Design(), sizes=(60,), intervals=["BCa over pairs"], reps=REPS,
                              n_resamples=499, seed=0)
    se = np.sqrt(0.95 * 0.05 / REPS)
    for row in cov[cov["measure"] != "eq2"].itertuples():
        assert abs(row.coverage - 0.95) <= 3 * se + 0.01, row  # + 0.01: BCa's known shortfall at this n
    eq2 = cov[cov["measure"] == "eq2"].iloc[0]
    assert eq2["relative_bias"] > 0.1  # Eq. 2 on 60 pairs overstates its population value


def test_two_level_interval_covers_with_templates_where_the_pair_bootstrap_does_not():
    design = simulation.Design(tau_template=0.6, terms=4)
    cov = simulation.coverage(design, sizes=(80,), reps=REPS, n_resamples=299, seed=1).set_index(["measure", "interval"])
    se = np.sqrt(0.95 * 0.05 / REPS)
    two_level = cov.loc[("stereotypical_difference", "two-level"), "coverage"]
    pairs = cov.loc[("stereotypical_difference", "BCa over pairs"), "coverage"]
    assert abs(two_level - 0.95) <= 3 * se + 0.02  # 20 templates: the percentile interval runs a little short
    assert pairs < two_level - 3 * se


def test_sign_flip_test_keeps_its_level_at_zero_bias():
    rates = simulation.type_one_error(simulation.Design(), sizes=(20, 100), reps=REPS, n_resamples=199, seed=2)
    se = np.sqrt(0.05 * 0.95 / REPS)
    assert (rates["rejection_rate"] <= 0.05 + 3 * se).all()
    assert (rates["rejection_rate"] >= 0.05 - 3 * se).all()
