"""WEAT/SEAT through a metric (Gao & Wan 2022, section 4.1): hand-worked values, permutation test, edge cases."""

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metricbias.bias import association as asc
from metricbias.reproduction import gao2022
from metricbias.cache import ScoreCache
from metricbias.datasets.seat import SeatTest
from metricbias.metrics.base import Metric

# Symmetric matching scores S(t, a) of the hand-worked test below.
#            a1    a2    b1    b2     mean_A  mean_B  r(t, A, B)
S0 = {"x1": (0.9, 0.7, 0.1, 0.3),  # 0.8     0.2     0.6
      "x2": (0.6, 0.4, 0.2, 0.2),  # 0.5     0.2     0.3
      "y1": (0.2, 0.2, 0.5, 0.3),  # 0.2     0.4    -0.2
      "y2": (0.3, 0.3, 0.8, 0.6)}  # 0.3     0.7    -0.4
ATTRS = ("a1", "a2", "b1", "b2")


class Lookup(Metric):
    """Toy asymmetric metric: M(c, r) = S0(c, r) - 0.05 if c sorts after r, else + 0.05.

    So M(x, a) != M(a, x) but their average, S, is S0.
    """

    name = "toy_lookup"
    family = "matching"
    calls: list = []

    def _score(self, candidates, references):
        Lookup.calls.append(len(candidates))
        out = []
        for c, r in zip(candidates, references):
            t, a = (c, r) if c in S0 else (r, c)
            base = S0[t][ATTRS.index(a)]
            out.append(base - 0.05 if c > r else base + 0.05)
        return np.array(out)


class Constant(Metric):
    name = "toy_constant"
    family = "ngram"

    def _score(self, candidates, references):
        return np.full(len(candidates), 0.1)  # 0.1 is not exact in binary: r is zero only up to rounding


class CharOverlap(Metric):
    """Asymmetric toy metric: share of the candidate's characters found in the reference."""

    name = "toy_chars"
    family = "ngram"

    def _score(self, candidates, references):
        return np.array([sum(ch in r for ch in c) / len(c) for c, r in zip(candidates, references)])


HAND = SeatTest(name="toy", level="word", source="-", x=("x1", "x2"), y=("y1", "y2"), a=("a1", "a2"),
                b=("b1", "b2"), categories=("X", "Y", "A", "B"))


def test_hand_worked_weat():
    # r = (0.6, 0.3, -0.2, -0.4) (table above).
    # s = (0.6 + 0.3) - (-0.2 - 0.4) = 1.5.
    # d: mean_X r - mean_Y r = 0.45 - (-0.3) = 0.75; r has mean 0.075, squared deviations
    #    0.525² + 0.225² + 0.275² + 0.475² = 0.6275, sample variance 0.6275 / 3, so
    #    d = 0.75 / sqrt(0.6275 / 3) = 1.63989...
    # p: the C(4, 2) = 6 partitions (X_i | Y_i) and their s:
    #    {x1,x2}|{y1,y2}: 0.9 - (-0.6) =  1.5  >= 1.5  (the observed one)
    #    {x1,y1}|{x2,y2}: 0.4 - (-0.1) =  0.5
    #    {x1,y2}|{x2,y1}: 0.2 -   0.1  =  0.1
    #    {x2,y1}|{x1,y2}: 0.1 -   0.2  = -0.1
    #    {x2,y2}|{x1,y1}: -0.1 -  0.4  = -0.5
    #    {y1,y2}|{x1,x2}: -0.6 -  0.9  = -1.5
    #    so p = 1/6, from the exact test (6 <= 100,000 partitions).
    m = Lookup()
    s_matrix = asc.similarity(m, HAND.targets, HAND.attributes)
    assert s_matrix == pytest.approx(np.array([S0[t] for t in HAND.targets]))
    r = asc.association(s_matrix, n_a=2)
    assert r == pytest.approx([0.6, 0.3, -0.2, -0.4])
    assert asc.differential_association(r[:2], r[2:]) == pytest.approx(1.5)
    assert asc.effect_size(r[:2], r[2:]) == pytest.approx(0.75 / math.sqrt(0.6275 / 3))
    p, n_partitions, exact = asc.permutation_test(r, 2)
    assert (p, n_partitions, exact) == (pytest.approx(1 / 6), 6, True)

    row = asc.run([HAND], m, cache=None).iloc[0]
    assert row["effect_size"] == pytest.approx(1.6398, abs=1e-4)
    assert row["statistic"] == pytest.approx(1.5)
    assert row["p_value"] == pytest.approx(1 / 6)
    assert (row["n_targets"], row["n_attributes"], row["n_partitions"], bool(row["exact"])) == (4, 4, 6, True)
    assert row["signature"] == m.signature


def test_swapping_the_target_sets_flips_d_and_s():
    swapped = SeatTest(name="toy", level="word", source="-", x=HAND.y, y=HAND.x, a=HAND.a, b=HAND.b,
                       categories=("Y", "X", "A", "B"))
    a, b = asc.run([HAND, swapped], Lookup(), cache=None).itertuples()
    assert b.effect_size == pytest.approx(-a.effect_size) and b.statistic == pytest.approx(-a.statistic)
    assert b.p_value == pytest.approx(1.0)  # the observed split is now the lowest of the six


def test_ties_count_as_at_least_as_extreme():
    # r_X = (1, 0, 0), r_Y = (0, 0, -1): Σ_X r = 1. Of the C(6, 3) = 20 three-subsets of
    # {1, 0, 0, 0, 0, -1}, those with sum >= 1 contain 1 and not -1: C(4, 2) = 6 of them.
    p, n, exact = asc.permutation_test(np.array([1.0, 0, 0, 0, 0, -1]), 3)
    assert (p, n, exact) == (pytest.approx(6 / 20), 20, True)
    # float noise from different summation orders must not break ties
    p_noisy, _, _ = asc.permutation_test(np.array([0.1, 0.2, 0.3, 0.3, 0.2, 0.1]) * 3, 3)
    assert p_noisy == pytest.approx(asc.permutation_test(np.array([1.0, 2, 3, 3, 2, 1]), 3)[0])


def test_perfectly_separated_sets_reach_the_smallest_p():
    r = np.array([4.0, 3.0, 2.5, 2.0, -1.0, -2.0, -3.0, -4.0])
    p, n, exact = asc.permutation_test(r, 4)
    assert (p, n, exact) == (pytest.approx(1 / 70), 70, True)


def test_partition_count_switches_from_exact_to_sampled_above_100000():
    assert asc.partition_count(9) == 48_620 and asc.partition_count(10) == 184_756
    rng = np.random.default_rng(1)
    r9 = rng.normal(size=18) + np.r_[np.full(9, 0.4), np.zeros(9)]
    p9, n9, exact9 = asc.permutation_test(r9, 9)
    assert (n9, exact9) == (48_620, True)
    assert float(p9 * n9) == pytest.approx(round(p9 * n9))  # a count over all partitions

    r10 = rng.normal(size=20) + np.r_[np.full(10, 0.4), np.zeros(10)]
    p10, n10, exact10 = asc.permutation_test(r10, 10, seed=7)
    assert (n10, exact10) == (100_000, False)
    assert p10 >= 1 / 100_000 and float(p10 * n10) == pytest.approx(round(p10 * n10))
    # seeded: the same seed gives the same partitions
    assert asc.permutation_test(r10, 10, seed=7)[0] == p10
    # and the 99,999 sampled partitions (+ the observed one) estimate the exact p (C(20, 10) of them)
    p_exact, n_exact, exact = asc.permutation_test(r10, 10, n_permutations=200_000)
    assert (n_exact, exact) == (184_756, True)
    assert abs(p10 - p_exact) < 5 * math.sqrt(p_exact * (1 - p_exact) / 100_000) + 1e-5


def test_sampled_partitions_are_shared_across_metric_columns():
    rng = np.random.default_rng(3)
    r = rng.normal(size=(24, 3))
    together, n, exact = asc.permutation_test(r, 12, seed=5)
    alone = [asc.permutation_test(r[:, k], 12, seed=5)[0] for k in range(3)]
    assert not exact and n == 100_000 and together.tolist() == alone


@settings(max_examples=25, deadline=None)
@given(st.lists(st.text(alphabet="abcde ", min_size=1, max_size=6).filter(str.strip), min_size=1, max_size=4),
       st.lists(st.text(alphabet="abcde ", min_size=1, max_size=6).filter(str.strip), min_size=1, max_size=4))
def test_matching_score_is_symmetric(rows, cols):
    m = CharOverlap()
    s_rc = asc.similarity(m, rows, cols)
    s_cr = asc.similarity(m, cols, rows)
    assert s_rc.shape == (len(rows), len(cols))
    np.testing.assert_allclose(s_rc, s_cr.T, rtol=0, atol=1e-15)
    m_rc = m.score([x for x in rows for _ in cols], [y for _ in rows for y in cols]).reshape(len(rows), len(cols))
    m_cr = m.score([y for y in cols for _ in rows], [x for _ in cols for x in rows]).reshape(len(cols), len(rows))
    np.testing.assert_allclose(s_rc, (m_rc + m_cr.T) / 2)


def test_symmetric_similarity_checks_shapes():
    with pytest.raises(ValueError, match="expected its transpose"):
        asc.symmetric_similarity(np.zeros((2, 3)), np.zeros((2, 3)))


def test_constant_scores_give_nan_effect_size_with_a_warning():
    test = SeatTest(name="toy", level="sent", source="-", x=("p", "q", "u"), y=("v", "w", "z"), a=("a", "b", "c"),
                    b=("d", "e"), categories=("X", "Y", "A", "B"))
    with pytest.warns(asc.ConstantAssociationWarning, match="toy_constant on toy \\(sent\\).*effect size is NaN"):
        row = asc.run([test], Constant(), cache=None).iloc[0]
    assert np.isnan(row["effect_size"])
    assert row["p_value"] == 1.0  # every partition ties with the observed one
    assert row["statistic"] == pytest.approx(0.0, abs=1e-12)


def test_run_scores_each_pair_once_across_tests_and_uses_the_cache(tmp_path):
    other = SeatTest(name="toy2", level="word", source="-", x=("x1",), y=("y1",), a=("a1",), b=("b2",),
                     categories=("X", "Y", "A", "B"))
    cache = ScoreCache(tmp_path / "scores.sqlite")
    Lookup.calls.clear()
    first = asc.run([HAND, other], {"lookup": Lookup()}, cache=cache, batch_size=10)
    assert asc.pairs_needed([HAND, other]) == 2 * 4 * 4  # toy2's 8 pairs are among toy's 32
    assert sum(Lookup.calls) == 32 and Lookup.calls == [10, 10, 10, 2]  # batches of 10
    assert cache.misses == 32
    again = asc.run([other], {"lookup": Lookup()}, cache=cache)
    assert sum(Lookup.calls) == 32 and cache.hits == 8  # all from the cache
    pd.testing.assert_frame_equal(first.iloc[[1]].reset_index(drop=True).drop(columns="scoring_seconds"),
                                  again.drop(columns="scoring_seconds"))
    assert list(first["metric"]) == ["lookup", "lookup"]
    assert list(first.columns[:8]) == asc.COLUMNS


def test_two_metrics_with_one_name_need_labels():
    with pytest.raises(ValueError, match="two metrics labelled 'toy_lookup'"):
        asc.run([HAND], [Lookup(), Lookup()], cache=None)


def test_metrics_are_built_from_registry_entries():
    built = asc.build_metrics([("BLEU", "bleu", {}), "chrf", ("BLEU-13a", "bleu", {"tokenize": "13a"})], device="cpu")
    assert list(built) == ["BLEU", "chrf", "BLEU-13a"]
    assert built["BLEU-13a"].options["tokenize"] == "13a" and "device" not in built["BLEU"].options


def test_p_value_does_not_depend_on_the_other_tests_run():
    big = SeatTest(name="big", level="sent", source="-", x=tuple(f"x{i}" for i in range(12)),
                   y=tuple(f"y{i}" for i in range(12)), a=("x", "1"), b=("y", "2"), categories=("X", "Y", "A", "B"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        alone = asc.run([big], CharOverlap(), cache=None, seed=3)
        small = SeatTest(name="small", level="word", source="-", x=("x1", "x2"), y=("y1", "y2"), a=("x",), b=("y",),
                         categories=("X", "Y", "A", "B"))
        both = asc.run([small, big], {"toy_chars": CharOverlap()}, cache=None, seed=3)
    assert not alone["exact"].iloc[0]
    assert both.iloc[1]["p_value"] == alone.iloc[0]["p_value"]


def test_gao_table3_transcription_and_our_table_shape():
    t3 = gao2022.gao_table3()
    assert len(t3) == 38 * 6 and set(t3["name"]) == set(gao2022.GAO_METRICS.values())
    cell = t3.set_index(["test", "level", "paper_metric"]).loc[("C6-N", "sent", "MoverScore")]
    assert (cell["effect_size"], bool(cell["significant"])) == (1.17, True)
    assert int(t3["significant"].sum()) == 69  # stars printed in these six columns (88 in all, 19 for BARTScore)
    results = pd.DataFrame({
        "test": ["C1", "C1", "DB:C", "DB:C"], "level": ["sent", "word", "word", "sent (u)"],
        "metric": ["m"] * 4, "name": ["meteor"] * 4, "effect_size": [0.5, np.nan, -1.234, 0.0],
        "p_value": [0.01, 1.0, 0.5, 0.02]})
    wide = gao2022.table3(results)
    assert wide.index.tolist() == [("DB:C", "sent (u)"), ("DB:C", "word"), ("C1", "word"), ("C1", "sent")]
    assert wide["m"].tolist() == ["0.00", "-1.23", "—", "0.50*"]
    cmp = gao2022.compare_with_gao(results).set_index(["test", "level"])
    assert cmp.loc[("C1", "sent"), "paper"] == -0.06 and not cmp.loc[("C1", "sent"), "same_sign"]
    assert cmp.loc[("C1", "word"), "same_sign"]  # undefined d vs the printed 0.00
    summary = gao2022.agreement(cmp.reset_index()).iloc[0]
    assert (summary["cells"], summary["defined"], summary["ours_significant"]) == (4, 3, 1)
    # paper: -0.06, 0.00, 0.00, 0.00 (none positive); ours: 0.5, NaN, -1.234, 0.0 (one of four)
    assert (summary["paper_positive"], summary["ours_positive"]) == (0.0, 0.25)


def test_similarity_frame_is_long_form_of_s():
    frame = asc.similarity_frame(HAND, Lookup())
    assert len(frame) == 16 and list(frame.columns) == ["target", "target_set", "attribute", "attribute_set", "S"]
    row = frame[(frame["target"] == "y2") & (frame["attribute"] == "b1")].iloc[0]
    assert (row["target_set"], row["attribute_set"], row["S"]) == ("Y", "B", pytest.approx(0.8))
