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
