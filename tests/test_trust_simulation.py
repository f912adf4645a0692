"""The simulation behind chapter 8's coverage figures: a small seeded version, with Monte-Carlo tolerances."""

import numpy as np
import pytest
from scipy import stats

from metricbias.bias import simulation

REPS = 400


def test_jackknife_weights_and_bca_match_the_direct_computation_and_scipy():
    rng = np.random.default_rng(1)
    s1, s2 = (a.reshape(4, -1) for a in simulation.simulate(simulation.Design(), 30, 4, rng))
    for measure, fn in simulation.STATISTICS.items():
        loo = np.array([[fn(np.delete(s1[r], i), np.delete(s2[r], i)) for i in range(30)] for r in range(4)])
        assert simulation.jackknife(measure, s1, s2) == pytest.approx(loo, rel=1e-10)
        idx = np.random.default_rng(2).integers(30, size=(50, 30))
        counts = np.stack([np.bincount(row, minlength=30) for row in idx]).astype(float)
        direct = np.stack([fn(s1[r][idx], s2[r][idx]) for r in range(4)])
        assert simulation.weighted_statistic(measure, s1, s2, counts) == pytest.approx(direct, rel=1e-10)
        # BCa end points from scipy's bootstrap distribution and the closed-form jackknife = scipy's BCa
        kw = dict(paired=True, vectorized=True, axis=-1, n_resamples=499)
        ref = stats.bootstrap((s1, s2), fn, method="BCa", rng=np.random.default_rng(3), **kw).confidence_interval
        dist = stats.bootstrap((s1, s2), fn, method="percentile", rng=np.random.default_rng(3), **kw)
        low, high = simulation.bca_bounds(fn(s1, s2), dist.bootstrap_distribution, simulation.jackknife(measure, s1, s2))
        assert low == pytest.approx(ref.low) and high == pytest.approx(ref.high)


def test_row_percentiles_match_numpy():
    values = np.random.default_rng(4).normal(size=(5, 37))
    q = np.array([0.01, 0.2, 0.5, 0.77, 0.999])
    expected = [np.percentile(row, 100 * p) for row, p in zip(values, q)]
    assert simulation._row_percentiles(values, q) == pytest.approx(expected)


def test_two_level_weights_keep_templates_whole():
    w = simulation.resample_weights(np.random.default_rng(0), 20, 5, 4, how="two-level")
    assert w.shape == (20, 20) and (w.sum(-1) == 20).all()
    per_template = w.reshape(20, 5, 4).sum(-1)
    assert (per_template % 4 == 0).all()  # a drawn template brings exactly its number of pairs
    whole = simulation.resample_weights(np.random.default_rng(0), 20, 5, 4, how="templates").reshape(20, 5, 4)
    assert (whole == whole[..., :1]).all()  # every pair of a drawn template, as often as the template


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
    two_level = cov.loc[("stereotypical_difference", "two-level (conservative)"), "coverage"]
    pairs = cov.loc[("stereotypical_difference", "BCa over pairs"), "coverage"]
    assert abs(two_level - 0.95) <= 3 * se + 0.02  # 20 templates: the percentile interval runs a little short
    assert pairs < two_level - 3 * se


def test_sign_flip_test_keeps_its_level_at_zero_bias():
    rates = simulation.type_one_error(simulation.Design(), sizes=(20, 100), reps=REPS, n_resamples=199, seed=2)
    se = np.sqrt(0.05 * 0.95 / REPS)
    assert (rates["rejection_rate"] <= 0.05 + 3 * se).all()
    assert (rates["rejection_rate"] >= 0.05 - 3 * se).all()


def test_the_departures_from_the_smooth_model_tie_and_fatten_the_scores():
    rng = np.random.default_rng(0)
    s1, s2 = simulation.simulate(simulation.Design(step=0.05), 2000, 1, rng)
    assert np.allclose(s1 / 0.05, np.round(s1 / 0.05)) and (s1 == s2).mean() > 0.1  # many d = 0, as BLEU's
    heavy = np.ravel(np.subtract(*simulation.simulate(simulation.Design(tails=3.0), 20000, 1, rng)))
    smooth = np.ravel(np.subtract(*simulation.simulate(simulation.Design(), 20000, 1, rng)))
    from scipy import stats

    assert stats.kurtosis(heavy) > stats.kurtosis(smooth) + 0.5


def test_the_eq1_rescaled_difference_overstates_and_covers_less():
    cov = simulation.coverage(simulation.Design(), sizes=(20,), intervals=["BCa over pairs"], reps=400,
                              n_resamples=199, seed=3, rescaled=True).set_index("measure")
    plain, rescaled = cov.loc["stereotypical_difference"], cov.loc["eq1_difference"]
    assert rescaled["truth"] == plain["truth"]  # on the [0, 1] support the population values agree
    # divided by the sample's range (< 1), the interval is wider and sits higher: it covers less
    assert rescaled["mean_width"] > plain["mean_width"] and rescaled["coverage"] < plain["coverage"]
    assert rescaled["mc_se"] == pytest.approx(np.sqrt(rescaled["coverage"] * (1 - rescaled["coverage"]) / 400))


def test_the_robustness_study_reports_each_design_with_its_monte_carlo_error():
    study = simulation.robustness_study((20,), reps=50, n_resamples=99, seed=0, cache=False)
    assert list(dict.fromkeys(study["design"])) == ["Eq. 1-rescaled", "Eq. 2", "tied scores", "heavy tails"]
    assert set(study.loc[study["design"] == "Eq. 1-rescaled", "measure"]) == {"eq1_difference"}
    assert set(study.loc[study["design"] == "Eq. 2", "measure"]) == {"eq2_rescaled"}
    assert study["mc_se"].notna().all() and study["coverage"].between(0, 1).all()


def test_eq2_with_the_samples_range_does_not_cover_its_population_value():
    """Eq. 2 as the library computes it (mean |d| over the sample's range, the range held fixed) against
    100 E|S1 - S2| on the [0, 1] support: a sample's range is shorter, so Eq. 2 sits above and its interval misses;
    the same mean |d| on the fixed scale covers."""
    cov = simulation.coverage(simulation.Design(), sizes=(100,), intervals=["BCa over pairs"], reps=REPS,
                              n_resamples=199, seed=4, rescaled=True).set_index("measure")
    se = np.sqrt(0.95 * 0.05 / REPS)
    assert cov.loc["eq2_rescaled", "truth"] == cov.loc["absolute_difference", "truth"] == cov.loc["eq2", "truth"]
    assert abs(cov.loc["absolute_difference", "coverage"] - 0.95) <= 3 * se + 0.02
    assert cov.loc["eq2_rescaled", "coverage"] < 0.85


def test_the_expanded_template_interval_recovers_coverage_with_few_templates():
    """Templates of 4 pairs: with 5 and 10 templates the percentile interval over templates runs short; the
    expanded percentile interval (the library's) is wider and covers more, near 0.95 by 10 templates."""
    design = simulation.Design(tau_template=0.4, terms=4)
    cov = simulation.coverage(design, sizes=(20, 40), intervals=["templates only", "templates, expanded"],
                              reps=REPS, n_resamples=299, seed=5)
    cov = cov[cov["measure"] == "stereotypical_difference"].set_index(["templates", "interval"])
    se = np.sqrt(0.95 * 0.05 / REPS)
    for k in (5, 10):
        plain, expanded = cov.loc[(k, "templates only")], cov.loc[(k, "templates, expanded")]
        assert expanded["mean_width"] > plain["mean_width"] and expanded["coverage"] > plain["coverage"]
    assert cov.loc[(5, "templates only"), "coverage"] < 0.95 - 3 * se  # the shortfall the expansion corrects
    assert abs(cov.loc[(10, "templates, expanded"), "coverage"] - 0.95) <= 3 * se + 0.02
