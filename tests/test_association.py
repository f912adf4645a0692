"""WEAT/SEAT through a metric (Gao & Wan 2022, section 4.1): hand-worked values, permutation test, edge cases."""

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metricbias.bias import association as asc
from metricbias.book.reproduction import ch5_table3, gao2022
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
    assert list(first.columns[:len(asc.COLUMNS)]) == asc.COLUMNS


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
    assert len(t3) == 38 * 6 and set(t3["name"]) == {"regression", "bertscore", "moverscore", "wmd", "embedding_average",
                                                      "meteor"}
    cell = t3.set_index(["test", "level", "paper_metric"]).loc[("C6-N", "sent", "MoverScore")]
    assert (cell["effect_size"], bool(cell["significant"])) == (1.17, True)
    assert int(t3["significant"].sum()) == 69  # stars printed in these six columns (88 in all, 19 for BARTScore)
    results = pd.DataFrame({
        "test": ["C1", "C1", "DB:C", "DB:C"], "level": ["sent", "word", "word", "sent (u)"],
        "metric": ["m"] * 4, "name": ["meteor"] * 4, "family": ["ngram"] * 4, "effect_size": [0.5, np.nan, -1.234, 0.0],
        "p_value": [0.01, 1.0, 0.5, 0.02]})
    wide = ch5_table3.table3(results)
    assert wide.index.tolist() == [("DB:C", "sent (u)"), ("DB:C", "word"), ("C1", "word"), ("C1", "sent")]
    assert wide["m"].tolist() == ["0.00", "-1.23", "—", "0.50*"]
    cmp = ch5_table3.compare_with_gao(results).set_index(["test", "level"])
    assert cmp.loc[("C1", "sent"), "paper"] == -0.06 and not cmp.loc[("C1", "sent"), "same_sign"]
    assert cmp.loc[("C1", "word"), "same_sign"]  # undefined d vs the printed 0.00
    summary = ch5_table3.agreement(cmp.reset_index()).iloc[0]
    assert (summary["cells"], summary["defined"], summary["ours_significant"]) == (4, 3, 1)
    # paper: -0.06, 0.00, 0.00, 0.00; ours: 0.5, NaN, -1.234, 0.0: both print a non-zero d on C1 sent alone, negative
    # in the paper and positive in ours: one discordant cell, exact McNemar p = 1
    assert (summary["signed"], summary["paper_positive"], summary["ours_positive"]) == (1, 0.0, 1.0)
    assert summary["direction_p"] == 1.0
    # every share of the row is over that one cell: its signs differ (0%), where the printed signs of all four
    # cells agree on half (C1 word: undefined against 0.00; DB:C sent (u): 0.00 against 0.00)
    assert summary["same_sign"] == 0.0 and cmp["same_sign"].mean() == 0.5
    assert ch5_table3.agreement_table(ch5_table3.agreement(cmp.reset_index())).iloc[0]["defined cells"] == "1 of 4"
    # no cell defined in both: no share and no McNemar test (not p = 1)
    rest = cmp.drop(index=[("C1", "sent")]).reset_index()
    none = ch5_table3.agreement_table(ch5_table3.agreement(rest)).iloc[0]
    assert none["defined cells"] == "0 of 3" and np.isnan(none["same sign"]) and np.isnan(none["McNemar p"])


def test_similarity_frame_is_long_form_of_s():
    frame = asc.similarity_frame(HAND, Lookup())
    assert len(frame) == 16 and list(frame.columns) == ["target", "target_set", "attribute", "attribute_set", "S"]
    row = frame[(frame["target"] == "y2") & (frame["attribute"] == "b1")].iloc[0]
    assert (row["target_set"], row["attribute_set"], row["S"]) == ("Y", "B", pytest.approx(0.8))


# --- unequal target sets and words a metric cannot represent --------------------------------------
def test_permutation_test_with_unequal_target_sets_hand_worked():
    # |X| = 2, |Y| = 3: r = (3, 1 | 0, -2, -4), Σ_X r = 4. Of the C(5, 2) = 10 two-subsets only {3, 1} sums
    # to at least 4, so p = 1/10. With |X| = 1: r = (1 | 2, 0), subsets {1}, {2}, {0}: two reach 1, p = 2/3.
    assert asc.partition_count(2, 3) == 10
    assert asc.permutation_test(np.array([3.0, 1, 0, -2, -4]), 2, n_y=3) == (pytest.approx(0.1), 10, True)
    assert asc.permutation_test(np.array([1.0, 2, 0]), 1, n_y=2) == (pytest.approx(2 / 3), 3, True)
    with pytest.raises(ValueError, match="expected \\|X\\| \\+ \\|Y\\| = 2 \\+ 2"):
        asc.permutation_test(np.array([3.0, 1, 0, -2, -4]), 2)


class Partial(Lookup):
    """Lookup that cannot represent the words outside S0 (like a word without a vector); scores them 0."""

    name = "toy_partial"

    def represents(self, text):
        return text in S0 or text in ATTRS

    def _score(self, candidates, references):
        known = [(c in S0 or c in ATTRS) and (r in S0 or r in ATTRS) for c, r in zip(candidates, references)]
        out = np.zeros(len(candidates))
        idx = [i for i, k in enumerate(known) if k]
        if idx:
            out[idx] = super()._score([candidates[i] for i in idx], [references[i] for i in idx])
        return out


def test_words_the_metric_cannot_represent_are_dropped_from_their_sets():
    # HAND plus x3 in X, y3 in Y and a3 in A, none of which the metric can represent: dropping them gives
    # back HAND exactly (d = 1.63989..., p = 1/6, see test_hand_worked_weat), with |X| = |Y| after dropping.
    bigger = SeatTest(name="toy", level="word", source="-", x=("x1", "x2", "x3"), y=("y1", "y2", "y3"),
                      a=("a1", "a3", "a2"), b=("b1", "b2"), categories=("X", "Y", "A", "B"))
    with pytest.warns(asc.DroppedWordsWarning, match=r"toy_partial on toy \(word\): dropped 3 word\(s\) it cannot "
                                                     r"represent \(X: x3; Y: y3; A: a3\)$"):
        row = asc.run([bigger], Partial(), cache=None).iloc[0]
    assert row["effect_size"] == pytest.approx(0.75 / math.sqrt(0.6275 / 3))
    assert row["p_value"] == pytest.approx(1 / 6)
    assert (row["n_targets"], row["n_attributes"], row["n_dropped"]) == (4, 4, 3)
    assert row["dropped"] == "X: x3; Y: y3; A: a3"
    table = asc.dropped_words([bigger, HAND], Partial())
    assert table[["X", "Y", "A", "B", "n_dropped", "runs"]].values.tolist() == [
        ["x3", "y3", "a3", "", 3, True], ["", "", "", "", 0, True]]

    # oov="zero": every word stays, the unrepresented ones with S = 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", asc.DroppedWordsWarning)
        zero = asc.run([bigger], Partial(), cache=None, oov="zero").iloc[0]
    assert (zero["n_targets"], zero["n_attributes"], zero["n_dropped"]) == (6, 5, 0)
    # r: A's mean now includes S(t, a3) = 0, so r = (2/3)·mean_{a1,a2} S − mean_B S; x3 and y3 have r = 0
    r = np.array([2 / 3 * 0.8 - 0.2, 2 / 3 * 0.5 - 0.2, 0.0, 2 / 3 * 0.2 - 0.4, 2 / 3 * 0.3 - 0.7, 0.0])
    assert zero["effect_size"] == pytest.approx((r[:3].mean() - r[3:].mean()) / r.std(ddof=1))
    with pytest.raises(ValueError, match="oov must be one of drop, zero"):
        asc.run([bigger], Partial(), cache=None, oov="nan")


def test_a_set_left_with_fewer_than_two_words_is_not_run():
    lonely = SeatTest(name="toy", level="word", source="-", x=("x1", "x2"), y=("y1", "y9"), a=("a1", "a2"),
                      b=("b1", "b2"), categories=("X", "Y", "A", "B"))
    with pytest.warns(asc.DroppedWordsWarning, match=r"\(Y: y9\); Y keeps 1 word\(s\), fewer than 2, so the test "
                                                     r"is not run \(effect size and p-value left empty\)"):
        row = asc.run([lonely], Partial(), cache=None).iloc[0]
    assert np.isnan(row["effect_size"]) and np.isnan(row["p_value"])
    assert (row["n_targets"], row["n_dropped"], row["n_partitions"]) == (3, 1, 0)
    # min_words=1 runs it: r = (0.6, 0.3 | -0.2), d over three targets, p over C(3, 2) = 3 partitions
    with pytest.warns(asc.DroppedWordsWarning):
        one = asc.run([lonely], Partial(), cache=None, min_words=1).iloc[0]
    r = np.array([0.6, 0.3, -0.2])
    assert one["effect_size"] == pytest.approx((0.45 + 0.2) / r.std(ddof=1))
    assert (one["p_value"], one["n_partitions"]) == (pytest.approx(1 / 3), 3)


# --- every word-level test through embedding_average against an independent classic WEAT -------------------
def _classic_weat(kv, test, min_words=2, n_exact=100_000, n_random=100_000, seed=12345):
    """Caliskan et al.'s WEAT on the unit word2vec vectors ``kv``, written from the definition.

    A word is the mean of the vectors of its \\w+ tokens (looked up as written, else lowercased); a word with
    no vector is dropped from its set. s(w, A, B) = mean_a cos(w, a) − mean_b cos(w, b); d = (mean_X s −
    mean_Y s) / std_{X∪Y} s (sample std); p = share of the partitions of X ∪ Y into sizes |X|, |Y| whose
    Σ_{X_i} s ≥ Σ_X s (the observed one included), over all of them when there are at most ``n_exact``.
    Returns None when a set that lost words keeps fewer than ``min_words`` (or none at all).
    """
    import re
    from itertools import combinations

    def vec(word):
        rows = [kv[t] if t in kv.key_to_index else kv[t.lower()] for t in re.findall(r"\w+", word)
                if t in kv.key_to_index or t.lower() in kv.key_to_index]
        return np.mean(rows, axis=0) if rows else None

    sets = []
    for words in (test.x, test.y, test.a, test.b):
        vs = [v for v in map(vec, words) if v is not None]
        if not vs or (len(vs) < len(words) and len(vs) < min_words):
            return None
        sets.append(np.array(vs))
    x, y, a, b = sets

    def cos(u, v):
        return (u @ v.T) / np.outer(np.linalg.norm(u, axis=1), np.linalg.norm(v, axis=1))

    s = np.concatenate([cos(x, a).mean(1) - cos(x, b).mean(1), cos(y, a).mean(1) - cos(y, b).mean(1)])
    nx, n = len(x), len(s)
    d = (s[:nx].mean() - s[nx:].mean()) / s.std(ddof=1)
    observed = s[:nx].sum()
    tol = 1e-9 * np.abs(s).sum()
    if math.comb(n, nx) <= n_exact:
        sums = np.array([s[list(c)].sum() for c in combinations(range(n), nx)])
        return d, float(np.mean(sums >= observed - tol)), True
    rng = np.random.default_rng(seed)
    sums = np.array([s[rng.permutation(n)[:nx]].sum() for _ in range(n_random)])
    return d, float(np.mean(sums >= observed - tol)), False


def test_every_word_level_test_matches_classic_weat_through_embedding_average():
    from metricbias import backbones, metrics
    from metricbias.datasets import seat
    from metricbias.metrics.embedding import load_vectors

    try:
        kv = load_vectors(str(backbones.resolve("word2vec-googlenews-bolukbasi")))
    except Exception as exc:  # noqa: BLE001 - no raw data here
        pytest.skip(f"no word2vec vectors: {exc}")
    tests = seat.tests("all", "word")
    assert len(tests) == 18
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", asc.DroppedWordsWarning)
        ours = asc.run(tests, metrics.get("embedding_average"), cache=None).set_index("test")
        ours_1 = asc.run(tests, metrics.get("embedding_average"), cache=None, min_words=1).set_index("test")
    counts = {}
    for min_words, frame in ((2, ours), (1, ours_1)):
        checked = exact = 0
        for test in tests:
            row = frame.loc[test.name]
            ref = _classic_weat(kv, test, min_words)
            if ref is None:  # a set kept too few words: not run
                assert np.isnan(row["effect_size"]) and np.isnan(row["p_value"]), test.name
                continue
            d, p, is_exact = ref
            assert row["effect_size"] == pytest.approx(d, abs=1e-9), test.name
            assert bool(row["exact"]) == is_exact
            if is_exact:
                assert row["p_value"] == p, test.name
                exact += 1
            else:  # 99,999 seeded partitions here, 100,000 there: equal up to sampling error
                assert abs(row["p_value"] - p) <= 5 * math.sqrt(max(p * (1 - p), 1e-5) / 100_000) + 2e-5, test.name
            checked += 1
        assert checked == int(frame["effect_size"].notna().sum())
        counts[min_words] = (checked, exact)
    # by default 10 of the 18 tests run (7 of them with the exact test); the other eight have a set that kept one word or
    # none. With min_words=1 the 17 that keep a word in every set run (14 exactly; C10 keeps no Y word).
    assert counts == {2: (10, 7), 1: (17, 14)}
    c7n = ours_1.loc["C7-N"]
    assert (round(c7n["effect_size"], 3), round(c7n["p_value"], 4)) == (1.494, 0.0003)
    assert int(ours_1["effect_size"].notna().sum()) == 17 and np.isnan(ours_1.loc["C10", "effect_size"])


def test_sampled_permutation_p_at_its_floor_is_a_bound():
    """X's r all above Y's: no sampled partition is as extreme, and p is the floor 1/n_permutations (observed one
    included), which the page writes as a bound."""
    from metricbias.bias import claims

    r = np.concatenate([np.linspace(1, 2, 20), np.linspace(-2, -1, 20)])
    p, used, exact = asc.permutation_test(r, 20, n_permutations=99)
    assert not exact and used == 99 and p == pytest.approx(asc.p_floor(99)) == pytest.approx(1 / 99)
    assert claims.format_p(p, resolution=asc.p_floor(99)) == "p ≤ 1.0e-02"


def test_weat_cli_writes_floor_p_values_as_flagged_bounds(tmp_path):
    from metricbias import cli

    out = tmp_path / "weat.csv"
    assert cli.main(["weat", "--test", "C6-T", "--level", "word", "--metric", "embedding_average",
                     "--n-permutations", "99", "--out", str(out)]) == 0
    table = pd.read_csv(out)
    assert list(table.columns) == [*asc.COLUMNS[:5], "p_value_is_upper_bound", *asc.COLUMNS[5:]]
    assert (table["p_value"] > 0).all()
    flagged = table["p_value_is_upper_bound"]
    assert (table.loc[flagged, "p_value"] == pytest.approx(1 / 99)).all()
    assert (table.loc[~flagged, "p_value"] > 1 / 99).all()


def test_identical_configurations_are_counted_once():
    """Planted: B repeats A on every cell (one value 1e-14 off, within rounding), C equals A on the word cell only,
    D and E are undefined everywhere (nothing to merge on), F repeats A's d but not its p."""
    cells = [("C6-T", "word"), ("C6-T", "sent"), ("C8-N", "sent")]
    d_a, p_a = [0.5, -0.2, np.nan], [0.01, 0.6, 1.0]
    columns = {"A": (d_a, p_a), "B": ([0.5 + 1e-14, -0.2, np.nan], p_a), "C": ([0.5, 0.3, 0.1], p_a),
               "D": ([np.nan] * 3, [1.0] * 3), "E": ([np.nan] * 3, [1.0] * 3), "F": (d_a, [0.02, 0.6, 1.0])}
    results = pd.DataFrame([{"test": t, "level": lv, "metric": m, "effect_size": d[i], "p_value": p[i]}
                            for m, (d, p) in columns.items() for i, (t, lv) in enumerate(cells)])
    same = asc.identical_configurations(results)
    assert same.to_dict("records") == [{"metric": "B", "same_as": "A", "cells": 3}]
    merged, table = asc.merge_identical(results)
    assert list(dict.fromkeys(merged["metric"])) == ["A (= B)", "C", "D", "E", "F"] and len(merged) == 15
    assert table["label"].tolist() == ["A (= B)"]
    # a second copy joins the same group; 1e-9 apart is a different function
    more = pd.concat([results, results[results["metric"] == "A"].assign(metric="G"),
                      results[results["metric"] == "A"].assign(metric="H", effect_size=[0.5 + 1e-9, -0.2, np.nan])])
    assert list(dict.fromkeys(asc.merge_identical(more)[0]["metric"]))[0] == "A (= B, G)"
    assert "H" in set(asc.merge_identical(more)[0]["metric"])
    unchanged, none = asc.merge_identical(results[results["metric"] != "B"])
    assert none.empty and unchanged["metric"].nunique() == 5
    with pytest.raises(ValueError, match="lack column"):
        asc.identical_configurations(results.drop(columns="p_value"))


def test_nearest_configurations_by_hand():
    """A and B agree on the word cell and differ by 0.02 on the sentence cell; C is 0.5 from both; D is undefined
    everywhere and not compared."""
    results = pd.DataFrame({"test": ["C6-T", "C6-T"] * 4, "level": ["word", "sent"] * 4,
                            "metric": ["A"] * 2 + ["B"] * 2 + ["C"] * 2 + ["D"] * 2,
                            "effect_size": [0.4, 0.1, 0.4, 0.12, 0.9, 0.6, np.nan, np.nan], "p_value": [0.5] * 8})
    near = asc.nearest_configurations(results)
    assert near == {"metric": "B", "other": "A", "largest_difference": pytest.approx(0.02), "cells_equal": 1,
                    "cells": 2}
    assert asc.nearest_configurations(results[results["metric"].isin(["A", "D"])]) == {}
