"""Size-robust bias, sample-size ratios, templates, sign-flip tests and power (chapter 8's library)."""

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from metricbias.bias import power, reliability, testing
from metricbias.bias.pairwise import absolute_bias, bootstrap_ci
from metricbias.book.reproduction import ch8_trust


def test_size_robust_value_by_hand():
    # d = (1, 0, 2): mean |d| = 1; pooled (1, 2, 3, 0, 2, 1): mean 1.5, SS = 5.5, SD = sqrt(1.1)
    assert reliability.size_robust_value([1, 2, 3], [0, 2, 1]) == pytest.approx(100 / np.sqrt(1.1))
    # signed: mean d = 1 as well here
    assert reliability.size_robust_value([1, 2, 3], [0, 2, 1], signed=True) == pytest.approx(100 / np.sqrt(1.1))
    assert reliability.size_robust_value([0, 2, 1], [1, 2, 3], signed=True) == pytest.approx(-100 / np.sqrt(1.1))


def test_size_robust_bias_is_invariant_to_affine_maps_like_eq2():
    rng = np.random.default_rng(1)
    s1, s2 = rng.normal(size=50), rng.normal(size=50)
    for a, b in ((3.0, 7.0), (0.01, -2.0)):
        assert reliability.size_robust_value(a * s1 + b, a * s2 + b) == pytest.approx(reliability.size_robust_value(s1, s2))
        assert absolute_bias(a * s1 + b, a * s2 + b) == pytest.approx(absolute_bias(s1, s2))


def test_size_robust_bias_interval_holds_its_value_and_is_seeded():
    rng = np.random.default_rng(2)
    s1, s2 = rng.normal(0.3, 1, 60), rng.normal(0, 1, 60)
    a = reliability.size_robust_bias(s1, s2, n_resamples=999, seed=3)
    assert a == reliability.size_robust_bias(s1, s2, n_resamples=999, seed=3)
    assert a["ci_low"] < a["value"] < a["ci_high"]
    constant = reliability.size_robust_bias([1.0, 1.0], [1.0, 1.0], n_resamples=99)
    assert np.isnan(constant["value"]) and np.isnan(constant["ci_low"])
    with pytest.raises(ValueError, match="equal length"):
        reliability.size_robust_bias([1.0, 2.0], [1.0], n_resamples=99)


def _cell(n, seed=0, delta=0.5):
    rng = np.random.default_rng(seed)
    b = rng.normal(size=n)
    return pd.DataFrame({"attribute": "a", "metric": "m", "pair_id": np.arange(n),
                         "score_1": b + delta / 2 + rng.normal(0, 0.5, n), "score_2": b - delta / 2 + rng.normal(0, 0.5, n)})


def test_eq2_grows_on_small_draws_and_the_size_robust_bias_does_not():
    ratios = ch8_trust.ratio_summary(reliability.sample_size_ratios(_cell(2000), (20, 160), n_draws=300, seed=0))
    r = ratios.set_index(["measure", "n"])["mean_ratio"]
    # the range of 40 normal scores is far below that of 4000: Eq. 2 is inflated at n = 20
    assert r["eq2", 20] > 1.3 and r["eq2", 160] > 1.1
    assert abs(r["size_robust_bias", 20] - 1) < 0.05 and abs(r["size_robust_bias", 160] - 1) < 0.02


def test_rank_agreement_is_one_for_metrics_that_differ_only_in_scale_of_the_difference():
    frames = [_cell(300, seed=4, delta=d).assign(metric=f"m{d}") for d in (0.2, 0.6, 1.2)]
    values = reliability.whole_set_values(pd.concat(frames))
    rho = reliability.rank_agreement(values).set_index("attribute")["rho"]
    assert rho["all cells"] == pytest.approx(1.0)


def test_template_share_by_hand():
    assert reliability.template_share([[1, 1], [3, 3]]) == 1.0  # all variation between templates
    assert reliability.template_share([[1, 3], [3, 1]]) == 0.0  # none: equal template means
    # MS_between = 2·var(2, 4) = 4, MS_within = mean(2, 2) = 2: σ²_t = (4 − 2)/2 = 1, share 1/(1 + 2)
    assert reliability.template_share([[1, 3], [3, 5]]) == pytest.approx(1 / 3)


def test_two_level_interval_is_wider_than_the_pair_bootstrap_when_templates_matter():
    rng = np.random.default_rng(5)
    x = rng.normal(0, 2, (30, 1)) + rng.normal(0, 0.3, (30, 6))  # strong template effect, 6 terms each
    low, high = reliability.two_level_interval(x, n_resamples=1999, seed=0)
    plow, phigh = bootstrap_ci(x.ravel(), n_resamples=1999, seed=0)
    assert low < x.mean() < high
    assert (high - low) > 1.8 * (phigh - plow)  # √6 ≈ 2.4 in theory: one effective draw per template
    assert reliability.two_level_interval(x[:1]) == (pytest.approx(np.nan, nan_ok=True),) * 2


def test_template_table_on_a_counterfactual_set():
    rng = np.random.default_rng(6)
    rows = [{"attribute": "gender", "metric": "m", "source": s, "group": g, "score": base + rng.normal(0, 0.1)}
            for s, base in enumerate(rng.normal(0, 1, 20)) for g in ("female", "male", "non_binary")]
    table = reliability.template_table(pd.DataFrame(rows), {"gender": ["female", "male", "non_binary"]},
                                       n_resamples=499, seed=0)
    row = table.iloc[0]
    assert (row["templates"], row["group_pairs"]) == (20, 3)
    assert row["two_level_low"] < row["value"] < row["two_level_high"]
    assert row["template_low"] < row["value"] < row["template_high"]  # whole templates: the interval reported
    assert row["few_templates"]  # 20 templates, below the 30 where the cluster bootstrap keeps its coverage
    # templates explain nearly all the variance: the two-level scheme counts the within part twice, so it is wider
    assert row["two_level_high"] - row["two_level_low"] > row["template_high"] - row["template_low"]
    assert 0 <= row["template_share"] <= 1


def test_sign_flip_test_exact_value():
    # 10 positive differences: 2^10 sign patterns (scipy enumerates them), two with |mean| that large
    assert testing.sign_flip_test(np.arange(1.0, 11.0), n_resamples=9999) == pytest.approx(2 / 1024)
    assert testing.sign_flip_test(np.zeros(5)) == 1.0
    batch = testing.sign_flip_test(np.array([np.arange(1.0, 11.0), -np.arange(1.0, 11.0)]), n_resamples=9999)
    assert batch == pytest.approx([2 / 1024, 2 / 1024])


def test_cell_tests_adjust_over_the_grid():
    frames = [_cell(40, seed=s, delta=d).assign(metric=f"m{s}") for s, d in enumerate((0.0, 0.0, 1.0, 2.0))]
    tests = testing.cell_tests(pd.concat(frames), n_resamples=999, seed=0)
    assert list(tests["q_value"]) == pytest.approx(list(stats.false_discovery_control(tests["p_value"], method="bh")))
    assert (tests.loc[tests["metric"].isin(["m2", "m3"]), "q_value"] < 0.05).all()
    summary = ch8_trust.grid_summary(tests)
    assert summary["cells"] == 4 and summary["bh_significant"] >= 2


def test_configuration_differences_of_a_metric_with_itself_and_a_blind_one():
    base = _cell(60, seed=7)
    blind = base.assign(metric="blind", score_2=base["score_1"])  # never tells the candidates apart: Eq. 2 = 0
    diffs = testing.configuration_differences(pd.concat([base, base.assign(metric="same"), blind]),
                                              n_resamples=999, seed=0).set_index(["metric_a", "metric_b"])
    assert diffs.loc[("m", "same"), "p_value"] == 1.0 and diffs.loc[("m", "same"), "difference"] == 0.0
    assert diffs.loc[("m", "blind"), "difference"] == pytest.approx(absolute_bias(base["score_1"], base["score_2"]))
    assert diffs.loc[("m", "blind"), "q_value"] < 0.01


def test_pairs_to_detect_is_the_smallest_n_with_the_power():
    import metricbias as mb

    n = mb.pairs_to_detect(2, 40)
    assert power.power(n, 2, 40) >= 0.8 > power.power(n - 1, 2, 40)
    z = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)
    assert n == pytest.approx((z * 40 / 2) ** 2, rel=0.01)  # the normal approximation, for large n
    assert power.pairs_to_detect(1, 40) > power.pairs_to_detect(5, 40)
    with pytest.raises(ValueError, match="positive SD"):
        power.pairs_to_detect(1, 0)


def test_difference_sd_and_power_table():
    frames = [_cell(80, seed=9, delta=d).assign(metric=f"m{d}") for d in (0.2, 1.0)]
    sds = power.difference_sd(pd.concat(frames))
    assert len(sds) == 1 and sds["n_pairs"].iloc[0] == 80 and sds["sd"].iloc[0] > 0
    table = power.power_table(sds, gaps=(1, 5))
    assert table["pairs at q50 SD"].iloc[0] > table["pairs at q50 SD"].iloc[1]


def test_gap_warning_names_the_cell_and_the_pairs_needed():
    table = pd.DataFrame([{"attribute": "gender", "metric": "bleu", "measure": "bias", "ci_low": 1.0,
                           "ci_high": 5.0, "n_pairs": 100}])
    with pytest.warns(power.GapWarning, match=r"bleu on gender.*about 1600 pairs"):
        power.warn_if_too_small(table, 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert power.warn_if_too_small(table, 5.0) == []


def test_audit_adds_tests_and_warns_on_a_gap_it_cannot_separate():
    import metricbias as mb

    measures = ["bias", "size_robust_bias", "stereotypical_difference", "size_robust_difference"]
    plain = mb.audit("bleu", attributes=["age"], measures=measures, n_resamples=99)
    assert len(plain.columns) == 9  # the eight, and size_robust_difference's own p_value
    with pytest.warns(power.GapWarning, match="bleu on age.*size_robust_bias"):
        tested = mb.audit("bleu", attributes=["age"], measures=measures, n_resamples=99, tests=True, gap=5.0)
    eight = list(plain.columns[:8])
    assert list(tested.columns) == eight + ["p_value", "q_value"]
    assert tested[eight].equals(plain[eight])
    # each measure tests its own null: the magnitudes none, the two signed differences a mean of 0
    p = tested.set_index("measure")["p_value"]
    assert p[["bias", "size_robust_bias"]].isna().all()
    scores = mb.score_pairs(mb.load_pairs("published", ["age"]), "bleu")
    assert p["stereotypical_difference"] == testing.sign_flip_test(scores["score_1"] - scores["score_2"],
                                                                   n_resamples=99, seed=0)
    assert p["size_robust_difference"] == pytest.approx(p["stereotypical_difference"])  # the same null, one seed
    q = tested.set_index("measure")["q_value"]
    assert q[["bias", "size_robust_bias"]].isna().all() and (q.dropna() >= p.dropna()).all()
    from metricbias.bias import registry

    assert {"size_robust_bias", "size_robust_difference"} <= set(registry.table()["name"])


def test_chapter_8_reuses_the_samples_of_chapters_3_and_4_in_every_profile():
    """Chapter 8 takes its live scores from chapter 3's sample and its counterfactual scores from chapter 4's, with
    the same configurations, so the score cache answers (the notebook's defaults: 0 pairs = all, no skip)."""
    from metricbias import profiles
    from metricbias.book import chapter_profiles

    for name in profiles.names():
        ch8 = chapter_profiles.parameters(name, "08_trust")
        ch3 = chapter_profiles.parameters(name, "03_metrics_and_backbones")
        ch4 = chapter_profiles.parameters(name, "04_bias_measures")
        assert ch8.get("sample_size", 0) == ch3.get("sample_size", 0), name
        assert ch8.get("counterfactual_sample_size", 0) == ch4.get("sample_size", 0), name
        assert ch8.get("skip_metrics", "") == ch4.get("skip_metrics", ""), name
        assert ch8.get("seed", 0) == ch3.get("seed", 0) == ch4.get("seed", 0), name


def test_the_audit_command_writes_q_values_and_refuses_a_bad_gap(tmp_path, capsys):
    from metricbias import cli

    out = tmp_path / "audit.csv"
    assert cli.main(["audit", "--metric", "bleu", "--attributes", "age", "--measures",
                     "size_robust_bias,stereotypical_difference", "--n-resamples", "99", "--tests", "--out",
                     str(out)]) == 0
    table = pd.read_csv(out)
    assert list(table.columns[-2:]) == ["p_value", "q_value"]
    assert table["q_value"].isna().tolist() == [True, False]  # size_robust_bias has no test of its own
    assert table["q_value"].dropna().between(0, 1).all()
    assert cli.main(["audit", "--metric", "bleu", "--gap", "0", "--out", str(tmp_path / "x.csv")]) == 2
    assert "--gap takes a positive number of points" in capsys.readouterr().err
    assert not (tmp_path / "x.csv").exists()


def test_ratio_summary_gives_the_median_an_interval_over_metrics():
    frames = [reliability.sample_size_ratios(_cell(400, seed=s).assign(metric=f"m{s}"), (20,), n_draws=50, seed=s)
              for s in range(6)]
    summary = ch8_trust.ratio_summary(pd.concat(frames), n_resamples=999)
    row = summary[summary["measure"] == "eq2"].iloc[0]
    cells = pd.concat(frames).query("measure == 'eq2'")["mean_ratio"]
    assert row["mean_ratio"] == pytest.approx(cells.median())
    assert cells.min() <= row["ci_low"] <= row["mean_ratio"] <= row["ci_high"] <= cells.max()
    found = ch8_trust.ratio_findings(summary)
    assert found["eq2_20_ci_low"] == row["ci_low"] and found["eq2_20_ci_high"] == row["ci_high"]
