import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metricbias.bias import pairwise as pw


def test_eq1_eq2_hand_worked():
    # pooled min 0, max 4: rescaled (25, 50) and (0, 100); |diff| = 25, 50
    s1, s2 = [1.0, 2.0], [0.0, 4.0]
    r1, r2 = pw.rescale(s1, s2)
    assert r1.tolist() == [25.0, 50.0] and r2.tolist() == [0.0, 100.0]
    assert pw.absolute_bias(s1, s2) == pytest.approx(37.5)
    assert pw.stereotypical_difference(s1, s2) == pytest.approx((25 - 50) / 2)


def test_symmetric_disagreement_is_biased_but_not_stereotyped():
    s1, s2 = [0, 5, 10], [10, 5, 0]
    assert pw.absolute_bias(s1, s2) == pytest.approx(200 / 3)
    assert pw.stereotypical_difference(s1, s2) == pytest.approx(0.0)


def test_identical_candidates_have_zero_bias_and_a_point_interval():
    row = pw.summarize([0.1, 0.5, 0.9], [0.1, 0.5, 0.9], metric="m", attribute="a")
    assert row["bias"] == 0 and row["bias_ci_low"] == 0 and row["bias_ci_high"] == 0


def test_constant_scores_give_nan_and_a_warning_naming_metric_and_attribute():
    with pytest.warns(pw.ConstantScoresWarning, match="metric BLEU on attribute race"):
        row = pw.summarize([0.3, 0.3], [0.3, 0.3], metric="BLEU", attribute="race")
    assert np.isnan(row["bias"]) and np.isnan(row["bias_ci_low"]) and np.isnan(row["stereotypical_difference"])


@pytest.mark.parametrize("s1,s2,match", [
    ([], [], "no pairs"),
    ([1.0, 2.0], [1.0], "2 scores for candidate 1 but 1"),
    ([1.0, np.nan], [1.0, 2.0], "must be finite"),
])
def test_bad_input_is_a_clear_error(s1, s2, match):
    with pytest.raises(ValueError, match=match):
        pw.rescale(s1, s2, metric="m", attribute="a")


def test_bootstrap_interval_contains_estimate_and_is_seeded():
    rng = np.random.default_rng(1)
    s1, s2 = rng.normal(size=80), rng.normal(size=80)
    a = pw.summarize(s1, s2, n_resamples=999, seed=3)
    b = pw.summarize(s1, s2, n_resamples=999, seed=3)
    assert a == b
    assert a["bias_ci_low"] < a["bias"] < a["bias_ci_high"]


scores = st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=2, max_size=30)


@settings(max_examples=60, deadline=None)
@given(scores, st.floats(0.01, 100), st.floats(-100, 100))
def test_bias_is_invariant_to_positive_affine_maps(s, a, b):
    s1, s2 = np.array(s), np.array(s[::-1])
    if np.ptp(np.r_[s1, s2]) < 1e-6:
        return
    assert pw.absolute_bias(a * s1 + b, a * s2 + b) == pytest.approx(pw.absolute_bias(s1, s2), abs=1e-6)


@settings(max_examples=60, deadline=None)
@given(scores)
def test_swapping_candidates_keeps_bias_and_negates_stereotypical_difference(s):
    s1, s2 = np.array(s), np.array(s[::-1]) + 1.0
    assert pw.absolute_bias(s1, s2) == pytest.approx(pw.absolute_bias(s2, s1))
    assert pw.stereotypical_difference(s1, s2) == pytest.approx(-pw.stereotypical_difference(s2, s1))
    assert 0 <= pw.absolute_bias(s1, s2) <= 100


def test_bias_table_groups_and_keeps_signature():
    import pandas as pd

    frame = pd.DataFrame({
        "attribute": ["a", "a", "b", "b"], "metric": ["m"] * 4,
        "score_1": [1.0, 2.0, 0.0, 1.0], "score_2": [0.0, 4.0, 1.0, 0.0], "signature": ["sig"] * 4,
    })
    out = pw.bias_table(frame, n_resamples=99)
    assert list(out.columns) == pw.BIAS_COLUMNS + ["signature"]
    assert out.loc[0, "bias"] == pytest.approx(37.5) and out.loc[1, "bias"] == pytest.approx(100.0)


def test_no_resamples_means_point_values_only():
    values = np.array([1.0, 2.0, 4.0])
    assert all(np.isnan(pw.bootstrap_ci(values, n_resamples=0)))
    row = pw.summarize([0.0, 1.0, 3.0], [1.0, 1.0, 0.0], n_resamples=0)
    assert np.isnan(row["bias_ci_low"]) and row["bias"] == pytest.approx(100 * (1 + 0 + 3) / 3 / 3)
