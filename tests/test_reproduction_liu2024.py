"""Chapter 4's comparison of the two JSS (Eq. 9 as printed, and the author's released code) on the released scores."""

import math

import pandas as pd
import pytest

from conftest import real_raw_location
from metricbias.bias import distributional
from metricbias.book.reproduction import liu2024


@pytest.fixture(scope="module")
def variants():
    real_raw_location()
    from metricbias.datasets import published

    return distributional.jss_variants(published.scores(list(published.ATTRIBUTES)))


def test_largest_jss_difference_on_the_released_scores(variants):
    """Measured: race, BLEURT-BERT-tiny, 94.63 (Eq. 9) vs 96.01 (author's code); gender, BERTScore-RoBERTa-large,
    96.13 vs 96.66 (the 0.53 first reported)."""
    f = liu2024.jss_variant_findings(variants)
    assert (f["max_attribute"], f["max_metric"]) == ("race", "BLEURT-BERT-tiny")
    assert (round(f["max_paper"], 2), round(f["max_author"], 2), round(f["max_difference"], 2)) == (94.63, 96.01, 1.38)
    assert (round(f["cell_paper"], 2), round(f["cell_author"], 2), round(f["cell_difference"], 2)) == (
        96.13, 96.66, 0.53)
    assert f["cells"] == 174 and f["author_higher"] == 174  # one Gaussian in nats: always the smaller JS
    assert f["author_higher_words"] == "all 174 cells"  # never "174 of 174"
    assert f["max_js_nats"] < 1 and f["max_delta_sigma"] < 1  # the fold never acts on these scores
    table = liu2024.jss_variant_table(variants, n=3)
    assert table["metric"].tolist() == ["BLEURT-BERT-tiny", "BLEURT-RemBERT", "FrugalScore-BERT-medium",
                                        "BERTScore-RoBERTa-large"]
    assert table.columns.tolist() == list(liu2024.JSS_VARIANT_COLUMNS.values())


def test_jss_findings_without_the_named_cell():
    v = pd.DataFrame({"attribute": ["race", "age"], "metric": ["m", "n"], "jss_paper": [90.0, 95.0],
                      "jss_author_code": [91.0, 94.5], "difference": [1.0, -0.5], "js_bits": [0.1, 0.05],
                      "js_nats_author_code": [0.07, 0.03], "delta_sigma": [0.01, 0.02]})
    f = liu2024.jss_variant_findings(v)
    assert (f["max_difference"], f["author_higher"], f["median_difference"]) == (1.0, 1, 0.75)
    assert f["author_higher_words"] == "1 of the 2 cells"
    assert math.isnan(f["cell_paper"]) and math.isnan(f["cell_difference"])


def test_stability_comparison_pairs_the_measures_over_the_same_draws():
    import numpy as np

    rng = np.random.default_rng(0)
    rows = []
    for rate in (0.3, 0.8):
        for seed in range(10):
            base = rng.normal(0.6, 0.05)
            for measure, shift in (("eq2", 0.2), ("kls", 0.0), ("jss", 0.19)):
                rows.append({"rate": rate, "seed": seed, "attribute": "all", "measure": measure,
                             "kendall_tau": base + shift + rng.normal(0, 0.005)})
    comparison = liu2024.stability_comparison(pd.DataFrame(rows), n_resamples=999).set_index("other")
    assert set(comparison["best"]) == {"eq2"} and set(comparison.index) == {"kls", "jss"}
    assert comparison.loc["kls", "difference"] == pytest.approx(0.2, abs=0.01)
    assert comparison.loc["kls", "verdict"] == "higher" and int(comparison.loc["kls", "draws"]) == 20
    f = liu2024.stability_findings(comparison.reset_index())
    assert (f["best"], f["draws"], f["beaten"], f["others"]) == ("Eq. 2", 20, 2, 2)  # jss trails by 0.01 in noise of 0.007
    assert f["beaten_words"] == "each of the two others"
    assert f["differences"].split()[0] in {"KLS", "JSS"}
    assert "claim_verdict" not in f  # Liu's claim has its own test: liu_claim
    assert liu2024.stability_findings(liu2024.stability_comparison(pd.DataFrame(rows).iloc[:0]))["draws"] == 0


def test_stability_panels_test_each_panel_leader():
    import numpy as np

    rng = np.random.default_rng(1)
    rows = []
    for panel, shifts in (("all", {"eq2": 0.2, "kls": 0.0}), ("gender", {"eq2": 0.0, "kls": 0.001})):
        for seed in range(12):
            base = rng.normal(0.6, 0.05)
            for measure, shift in shifts.items():
                rows.append({"rate": 0.5, "seed": seed, "attribute": panel, "measure": measure,
                             "kendall_tau": base + shift + rng.normal(0, 0.02)})
    tests = liu2024.stability_panels(pd.DataFrame(rows), n_resamples=999)
    assert tests["panel"].tolist() == ["all", "gender"]
    assert tests.set_index("panel").loc["all", "verdict"] == "higher"
    assert tests.set_index("panel").loc["gender", "verdict"] != "higher"  # a lead of 0.001 in noise of 0.02
    assert liu2024.stability_panels_findings(tests) == {"shown": 1, "panels": 2, "shown_list": "all (Eq. 2)"}


def _planted_taus(shifts: dict, n_seeds: int = 15, noise: float = 0.005, seed: int = 2) -> pd.DataFrame:
    """Kendall τ per (rate, seed) on the ``all`` panel: one shared draw effect plus each measure's planted shift."""
    import numpy as np

    rng = np.random.default_rng(seed)
    rows = []
    for rate in (0.3, 0.8):
        for s in range(n_seeds):
            base = rng.normal(0.6, 0.1)  # shared by every measure on the draw: pairing removes it
            rows += [{"rate": rate, "seed": s, "attribute": "all", "measure": m,
                      "kendall_tau": base + shift + rng.normal(0, noise)} for m, shift in shifts.items()]
    return pd.DataFrame(rows)


def test_liu_claim_pairs_kls_and_jss_with_the_indicator():
    # planted: KLS 0.05 above the indicator, JSS 0.03 above; the draw effect (sd 0.1) cancels in the pairs
    taus = _planted_taus({"eq2": 0.3, "indicator": 0.0, "kls": 0.05, "jss": 0.03})
    c = liu2024.liu_claim(taus, n_resamples=999)
    wide = taus.pivot_table(index=["rate", "seed"], columns="measure", values="kendall_tau")
    assert c["draws"] == 30
    assert c["kls_difference"] == pytest.approx((wide["kls"] - wide["indicator"]).mean())  # the paired mean
    assert c["kls_difference"] == pytest.approx(0.05, abs=0.004)
    assert c["jss_difference"] == pytest.approx(0.03, abs=0.004)
    assert 0 < c["kls_ci_low"] < c["kls_difference"] < c["kls_ci_high"] < 0.06
    assert c["kls_stability"] == c["jss_stability"] == "more stable than the indicator"
    assert c["verdict"] == "holds"
    # both below: reverses; one each side, or one undecided: not distinguishable, said per measure
    assert liu2024.liu_claim(_planted_taus({"indicator": 0.0, "kls": -0.05, "jss": -0.03}),
                             n_resamples=999)["verdict"] == "reverses"
    mixed = liu2024.liu_claim(_planted_taus({"indicator": 0.0, "kls": -0.02, "jss": 0.03}), n_resamples=999)
    assert (mixed["kls_stability"], mixed["jss_stability"]) == ("less stable than the indicator",
                                                               "more stable than the indicator")
    assert mixed["verdict"] == "not distinguishable at this size"
    assert (mixed["kls_claim"], mixed["jss_claim"]) == ("reverses", "holds")  # the claim per measure
    tied = liu2024.liu_claim(_planted_taus({"indicator": 0.0, "kls": 0.0, "jss": 0.05}, noise=0.02),
                             n_resamples=999)
    assert tied["kls_stability"] == "not distinguishable from the indicator at this size"
    assert tied["verdict"] == "not distinguishable at this size"
    with pytest.raises(ValueError, match="jss"):
        liu2024.liu_claim(taus[taus["measure"] != "jss"], n_resamples=99)


def test_claim_verdict_needs_every_interval_on_one_side():
    from metricbias.bias import claims

    assert claims.joint_verdict(["holds", "holds"]) == "holds"
    assert claims.joint_verdict(["reverses", "reverses"]) == "reverses"
    assert claims.joint_verdict(["holds", "reverses"]) == "not distinguishable at this size"
    assert claims.joint_verdict(["holds", "reverses"], reverses_on="any") == "reverses"
    assert claims.joint_verdict([]) == claims.joint_verdict(["not comparable"]) == "not comparable"


def test_a_pair_bootstrap_replicate_draws_whole_pairs_per_attribute():
    import numpy as np

    scores = pd.DataFrame({"attribute": ["a"] * 4 + ["b"] * 2, "pair_id": ["p1", "p1", "p2", "p2", "q1", "q1"],
                           "metric": ["m", "n"] * 3, "score_1": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
                           "score_2": [0.0] * 6})
    rep = liu2024.resample_pairs(scores, np.random.default_rng(0))
    assert rep.columns.tolist() == scores.columns.tolist() and len(rep) == len(scores)
    assert rep.groupby("attribute")["pair_id"].nunique().to_dict() == {"a": 2, "b": 1}  # as many pairs as before
    for _, pair in rep.groupby("pair_id"):  # both metrics of one drawn pair come from the same source pair
        assert pair["metric"].tolist() == ["m", "n"] and pair["score_1"].iloc[1] - pair["score_1"].iloc[0] == 1.0
    assert set(rep.loc[rep["attribute"] == "b", "score_1"]) == {5.0, 6.0}


def test_the_pair_interval_removes_the_subsampling_share_of_the_replicates():
    """Hand-worked: two rates, two subsamples each, paired differences (0.1, 0.3) and (0.2, 0.4): mean 0.25,
    within-rate variances 0.02 and 0.02. Each replicate (one subsample per rate) carries (0.02 + 0.02)/2² = 0.01 of
    subsampling variance; replicates (0.0, 0.2, 0.4) have variance 0.04, so the pairs give 0.03. The mean of the
    four subsamples carries (2·0.02 + 2·0.02)/4² = 0.005. Interval: 0.25 ± 1.95996·√0.035."""
    import numpy as np

    index = pd.MultiIndex.from_tuples([(0.3, 0), (0.3, 1), (0.8, 0), (0.8, 1)], names=["rate", "seed"])
    differences = pd.Series([0.1, 0.3, 0.2, 0.4], index=index)
    low, high = liu2024.pair_interval(differences, pd.Series([0.0, 0.2, 0.4]))
    half = 1.959964 * np.sqrt(0.035)
    assert (low, high) == (pytest.approx(0.25 - half, abs=1e-6), pytest.approx(0.25 + half, abs=1e-6))
    # replicates that vary less than their subsampling share: the pairs add nothing (variance floored at 0)
    low, high = liu2024.pair_interval(differences, pd.Series([0.25, 0.25, 0.25]))
    assert high - 0.25 == pytest.approx(1.959964 * np.sqrt(0.005), abs=1e-6)


def test_liu_claim_with_pair_replicates_widens_the_interval():
    """Planted replicates whose KLS-minus-indicator spread (sd 0.05) dwarfs the subsamples' noise: the claim that
    the subsamples alone call holding is not distinguishable once the pairs are resampled."""
    import numpy as np

    taus = _planted_taus({"eq2": 0.3, "indicator": 0.0, "kls": 0.05, "jss": 0.03})
    rng = np.random.default_rng(3)
    reps = pd.DataFrame([{"replicate": b, "panel": "all", "measure": m, "tau": 0.6 + shift + rng.normal(0, 0.05)}
                         for b in range(40) for m, shift in (("eq2", 0.3), ("indicator", 0.0), ("kls", 0.05),
                                                             ("jss", 0.03))])
    alone, pairs = liu2024.liu_claim(taus, n_resamples=999), liu2024.liu_claim(taus, replicates=reps)
    assert alone["verdict"] == "holds" and pairs["replicates"] == 40
    assert pairs["kls_difference"] == pytest.approx(alone["kls_difference"])  # the same point, a wider interval
    assert pairs["kls_ci_high"] - pairs["kls_ci_low"] > 3 * (alone["kls_ci_high"] - alone["kls_ci_low"])
    assert pairs["jss_claim"] == "not distinguishable at this size"
    compared = liu2024.stability_comparison(taus, replicates=reps).set_index("other")
    assert compared.loc["kls", "verdict"] == "higher"  # Eq. 2 leads by 0.25, far beyond the pairs' error
    with pytest.raises(ValueError, match="two replicates"):
        liu2024.liu_claim(taus, replicates=reps[reps["replicate"] == 0])


def test_pair_bootstrap_on_the_released_scores():
    """Two replicates at one rate on the 943 released pairs: every panel (six attributes and all) and measure has
    a mean τ per replicate, and the same seed draws the same replicates."""
    real_raw_location()
    from metricbias.datasets import published

    scores = published.scores(list(published.ATTRIBUTES))
    reps = liu2024.pair_bootstrap(scores, rates=[0.5], n_replicates=2, seed=0, cache=False)
    assert len(reps) == 2 * 7 * 4 and set(reps["panel"]) == {*published.ATTRIBUTES, "all"}
    assert reps["tau"].between(-1, 1).all() and reps["tau"].nunique() > 1
    assert reps.equals(liu2024.pair_bootstrap(scores, rates=[0.5], n_replicates=2, seed=0, cache=False))
