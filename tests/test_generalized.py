import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metricbias.bias import generalized as g
from metricbias.bias import pairwise as pw
from metricbias.datasets import published


def long(rows):
    return pd.DataFrame(rows, columns=["source", "group", "score"])


# Three sources, three groups, one variation each:
#   source 0: a=1, b=2, c=4
#   source 1: a=3, b=3, c=0
CF = long([(0, "a", 1.0), (0, "b", 2.0), (0, "c", 4.0),
           (1, "a", 3.0), (1, "b", 3.0), (1, "c", 0.0)])


def test_counterfactual_pcm_hand_worked():
    # source 0: |1-2| + |1-4| + |2-4| = 1 + 3 + 2 = 6; source 1: 0 + 3 + 3 = 6; N = C(3,2) = 3
    # Eq. (2): (1 / (|S'| N)) * (6 + 6) = 12 / 6 = 2
    assert g.pcm(CF, "mean", "abs") == pytest.approx(2.0)
    # signed, pairs in group order (a,b), (a,c), (b,c): source 0: -1 - 3 - 2 = -6; source 1: 0 + 3 + 3 = 6 -> 0
    assert g.pcm(CF, "mean", "signed") == pytest.approx(0.0)
    assert g.pcm(CF, "mean", "abs", per_source=True).tolist() == pytest.approx([2.0, 2.0])
    # an explicit normalizer replaces C(|T|, 2)
    assert g.pcm(CF, "mean", "abs", normalizer=1) == pytest.approx(6.0)


def test_group_pcm_hand_worked():
    # group means: a = 2, b = 2.5, c = 2; Eq. (1): (|2-2.5| + |2-2| + |2.5-2|) / 3 = 1/3
    assert g.pcm(CF, "mean", "abs", version="group") == pytest.approx(1 / 3)
    # W1 between the sets {1,3}, {2,3}, {4,0}: sorted pairs (1,2),(3,3) -> 0.5; (1,0),(3,4) -> 1; (2,0),(3,4) -> 1.5
    assert g.pcm(CF, "set", "wasserstein", version="group") == pytest.approx((0.5 + 1 + 1.5) / 3)
    # MWU: U({1,3} vs {2,3}) = [1>2]+[1>3]+[3>2]+0.5[3=3] = 1.5 -> 1/2 - 1.5/4 = 0.125
    assert g.pcm(CF, "set", "mwu", version="group", groups=["a", "b"]) == pytest.approx(0.125)


def test_bcm_and_vbcm_hand_worked():
    # group BCM, background = all of S (mean 13/6): |13/6 - 2| = 1/6, |13/6 - 2.5| = 1/3, |13/6 - 2| = 1/6
    v = g.vbcm(CF, "mean", "abs", background="all", version="group")
    assert v.to_dict() == pytest.approx({"a": 1 / 6, "b": 1 / 3, "c": 1 / 6})
    assert g.bcm(CF, "mean", "abs", background="all", version="group") == pytest.approx((1 / 6 + 1 / 3 + 1 / 6) / 3)
    # background = a privileged group "a" (left out of T): |2 - 2.5| = 0.5, |2 - 2| = 0 -> BCM = 0.25
    assert g.bcm(CF, "mean", "abs", background="a", version="group") == pytest.approx(0.25)
    # background = the rest S \ S_t: a: |mean{2,3,4,0} - 2| = 0.25; b: |mean{1,3,4,0} - 2.5| = 0.5; c: |2.25 - 2| = 0.25
    v = g.vbcm(CF, "mean", "abs", background="rest", version="group")
    assert v.to_dict() == pytest.approx({"a": 0.25, "b": 0.5, "c": 0.25})


def test_counterfactual_bcm_with_the_unperturbed_example_as_background():
    data = pd.concat([CF, long([(0, "orig", 2.0), (1, "orig", 1.0)])], ignore_index=True)
    # d(φ(β), φ(S'^t_j)) = β − group with d = signed: source 0: 2-1, 2-2, 2-4 = 1, 0, -2; source 1: -2, -2, 1
    v = g.vbcm(data, "mean", "signed", background="orig")
    assert v.to_dict() == pytest.approx({"a": (1 - 2) / 2, "b": (0 - 2) / 2, "c": (-2 + 1) / 2})
    # Eq. (4) with N = |T| = 3: (1/(2*3)) * (1 + 0 + 2 + 2 + 2 + 1) for d = abs
    assert g.bcm(data, "mean", "abs", background="orig") == pytest.approx(8 / 6)
    assert g.bcm(data, "mean", "abs", background="orig", per_source=True).tolist() == pytest.approx([1.0, 5 / 3])


def test_mcm_hand_worked():
    # range: source 0: 4 - 1 = 3, source 1: 3 - 0 = 3 -> 3; std (ddof 0): source 0: std(1,2,4), source 1: std(3,3,0)
    assert g.mcm(CF, "mean", "range") == pytest.approx(3.0)
    assert g.mcm(CF, "mean", "std") == pytest.approx((np.std([1, 2, 4]) + np.std([3, 3, 0])) / 2)
    # group MCM, Eq. (5): std of the group means (2, 2.5, 2)
    assert g.mcm(CF, "mean", "std", version="group") == pytest.approx(np.std([2, 2.5, 2]))


def test_several_variations_per_group_and_set_valued_phi():
    # source 0 has two variations for group a (two identity terms): φ = mean of {1, 3} = 2
    data = long([(0, "a", 1.0), (0, "a", 3.0), (0, "b", 5.0), (1, "a", 0.0), (1, "b", 1.0)])
    assert g.pcm(data, "mean", "abs") == pytest.approx((3 + 1) / 2)
    # W1({1,3}, {5}) = (4 + 2)/2 = 3; W1({0}, {1}) = 1
    assert g.pcm(data, "set", "wasserstein") == pytest.approx(2.0)


def test_rescaled_phi_uses_the_pooled_min_and_max_of_the_table():
    # scores 0..4 -> 0..100; source 0: |25 - 50| = 25, source 1: |75 - 75| = 0, ... with abs
    data = long([(0, "a", 1.0), (0, "b", 2.0), (1, "a", 3.0), (1, "b", 3.0), (2, "a", 0.0), (2, "b", 4.0)])
    assert g.pcm(data, "rescaled", "abs") == pytest.approx((25 + 0 + 100) / 3)


def test_eq2_of_sun_et_al_is_the_counterfactual_pcm_on_every_released_column():
    scores = published.scores()
    n = 0
    for (attribute, metric), grp in scores.groupby(["attribute", "metric"]):
        data = g.from_pairs(grp["score_1"], grp["score_2"])
        assert g.pcm(data, "rescaled", "abs") == pytest.approx(
            pw.absolute_bias(grp["score_1"], grp["score_2"]), rel=1e-12, abs=1e-12), (attribute, metric)
        assert g.pcm(data, "rescaled", "signed") == pytest.approx(
            pw.stereotypical_difference(grp["score_1"], grp["score_2"]), rel=1e-12, abs=1e-12), (attribute, metric)
        n += 1
    assert n == 6 * 29


def test_bad_input_is_a_clear_error():
    with pytest.raises(ValueError, match="group 'b' is missing for source"):
        g.pcm(CF[~((CF.source == 1) & (CF.group == "b"))], "mean", "abs")
    with pytest.raises(ValueError, match="lacks column"):
        g.pcm(CF.drop(columns="source"), "mean", "abs")
    with pytest.raises(ValueError, match="multivariate"):
        g.pcm(CF, "mean", "std")
    with pytest.raises(ValueError, match="compares scalars"):
        g.pcm(CF, "set", "abs")
    with pytest.raises(ValueError, match="needs exactly 2 groups"):
        g.mcm(CF, "mean", "abs")
    with pytest.raises(ValueError, match="unknown comparison"):
        g.pcm(CF, "mean", "cosine")
    with pytest.raises(ValueError, match="neither 'all', 'rest' nor a group"):
        g.bcm(CF, background="nobody")
    with pytest.raises(ValueError, match="must be finite"):
        g.pcm(CF.assign(score=[1, 2, np.nan, 1, 2, 3]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(pw.ConstantScoresWarning):
            g.pcm(CF.assign(score=1.0), "rescaled", "abs")


# ---------------------------------------------------------------- order invariance (hypothesis)

values = st.floats(-100, 100, allow_nan=False, allow_infinity=False)


@st.composite
def counterfactual_tables(draw):
    n_groups = draw(st.integers(2, 4))
    n_sources = draw(st.integers(1, 5))
    rows = [(s, f"g{k}", draw(values)) for s in range(n_sources) for k in range(n_groups)
            for _ in range(draw(st.integers(1, 2)))]
    order = draw(st.permutations([f"g{k}" for k in range(n_groups)]))
    return long(rows), order


@settings(max_examples=40, deadline=None)
@given(counterfactual_tables(), st.sampled_from(["counterfactual", "group"]))
def test_symmetric_measures_do_not_depend_on_group_order(case, version):
    data, order = case
    base = sorted(order)
    for phi, d in [("mean", "abs"), ("set", "wasserstein")]:
        assert g.pcm(data, phi, d, version=version, groups=order) == pytest.approx(
            g.pcm(data, phi, d, version=version, groups=base), abs=1e-9)
    for d in ("std", "range"):
        assert g.mcm(data, "mean", d, version=version, groups=order) == pytest.approx(
            g.mcm(data, "mean", d, version=version, groups=base), abs=1e-9)
    for d in ("abs", "signed"):  # BCM sums over groups against a fixed background: any d
        assert g.bcm(data, "mean", d, background="all", version=version, groups=order) == pytest.approx(
            g.bcm(data, "mean", d, background="all", version=version, groups=base), abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(counterfactual_tables())
def test_antisymmetric_d_changes_sign_when_two_groups_swap(case):
    data, order = case
    a, b = order[:2]
    for phi, d in [("mean", "signed"), ("set", "mwu")]:
        assert g.pcm(data, phi, d, groups=[a, b]) == pytest.approx(-g.pcm(data, phi, d, groups=[b, a]), abs=1e-9)


def test_paired_table_instances():
    scores = pd.DataFrame({"attribute": "a", "metric": "m", "score_1": [1.0, 2.0, 4.0], "score_2": [0.0, 2.0, 3.0]})
    row = g.paired_table(scores).iloc[0]
    # rescaled: (25, 50, 100) vs (0, 50, 75): |diffs| 25, 0, 25
    assert row["eq2"] == pytest.approx(50 / 3) and row["stereotypical"] == pytest.approx(50 / 3)
    assert row["group_abs"] == pytest.approx(abs(175 / 3 - 125 / 3))
    # sorted (25, 50, 100) vs (0, 50, 75): W1 = (25 + 0 + 25)/3
    assert row["group_w1"] == pytest.approx(50 / 3)
    # U = #{s1 > s2} + ½ ties over all 9 pairs: 1>0; 2>0, 2=2 (½); 4>0,2,3 -> 1 + 1.5 + 3 = 5.5; 1/2 − 5.5/9
    assert row["group_mwu"] == pytest.approx(0.5 - 5.5 / 9)
    # per pair: win, tie, win -> 1/2 − mean(1, ½, 1)
    assert row["counterfactual_mwu"] == pytest.approx(0.5 - 2.5 / 3)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=1, max_size=8))
def test_singleton_fast_path_equals_scipy(pairs):
    # one score per cell takes the vectorized closed form; compare with scipy on each pair
    from scipy import stats

    s1, s2 = np.array(pairs, dtype=float).T
    data = g.from_pairs(s1, s2)
    w1 = np.mean([stats.wasserstein_distance([a], [b]) for a, b in zip(s1, s2)])
    mwu = np.mean([0.5 - stats.mannwhitneyu([a], [b]).statistic for a, b in zip(s1, s2)])
    assert g.pcm(data, "set", "wasserstein") == pytest.approx(w1)
    assert g.pcm(data, "set", "mwu") == pytest.approx(mwu)
