"""The result cache: a cached call returns exactly what the computation returns, and a second call reads it."""

import sqlite3

import numpy as np
import pandas as pd
import pytest

from metricbias import cache as c
from metricbias.bias import decomposition
from metricbias.bias import robustness as rb
from metricbias.bias import significance as sig
from test_robustness import synthetic_scores

pytestmark = pytest.mark.usefixtures("private_cache")


def mixed_table():
    return pd.DataFrame({"x": [0.1, np.nan, -0.0, 1e-300], "n": [1, 2, 3, 4], "ok": [True, False, True, True],
                         "name": ["a", "b", "é", ""], "raw": pd.Series(["p", "q", "r", "s"], dtype=object)})


def counting(frame):
    calls = []

    def compute():
        calls.append(1)
        return frame.copy()

    return compute, calls


def test_a_cached_table_is_bit_identical_and_computed_once():
    table, inputs = mixed_table(), synthetic_scores()
    compute, calls = counting(table)
    first = c.cached_table("t", compute, tables=[inputs], params={"seed": 1})
    second = c.cached_table("t", compute, tables=[inputs], params={"seed": 1})
    assert len(calls) == 1
    for got in (first, second):
        pd.testing.assert_frame_equal(got, table, check_exact=True)
        assert got["x"].to_numpy().tobytes() == table["x"].to_numpy().tobytes()  # -0.0 and NaN bits included


def test_changed_inputs_parameters_or_code_compute_again(monkeypatch):
    inputs = synthetic_scores()
    compute, calls = counting(mixed_table())
    c.cached_table("t", compute, tables=[inputs], params={"seed": 1})
    c.cached_table("t", compute, tables=[inputs], params={"seed": 2})
    changed = inputs.copy()
    changed.loc[3, "score_1"] += 1e-12
    c.cached_table("t", compute, tables=[changed], params={"seed": 1})
    c.cached_table("u", compute, tables=[inputs], params={"seed": 1})
    monkeypatch.setattr(c, "code_revision", lambda: "another revision")
    c.cached_table("t", compute, tables=[inputs], params={"seed": 1})
    assert len(calls) == 5
    c.cached_table("t", compute, tables=[changed], params={"seed": 1}, cache=False)  # no cache: always computes
    assert len(calls) == 6


def test_what_cannot_be_stored_exactly_is_refused():
    with pytest.raises(TypeError, match="column 'when'"):
        c.cached_table("t", lambda: pd.DataFrame({"when": pd.to_timedelta([1], unit="s")}))
    with pytest.raises(TypeError, match="column 'name'"):
        c.cached_table("t", lambda: pd.DataFrame({"name": ["a", None]}))
    with pytest.raises(TypeError, match="default index"):
        c.cached_table("t", lambda: pd.DataFrame({"x": [1.0]}, index=[5]))


def test_an_unreadable_entry_is_computed_again_with_a_warning(tmp_path):
    store = c.ResultCache(tmp_path / "results.sqlite")
    compute, calls = counting(mixed_table())
    c.cached_table("t", compute, cache=store)
    with sqlite3.connect(store.path) as con:
        con.execute("UPDATE results SET data = x'00'")
    with pytest.warns(c.CacheWarning, match="could not be read"):
        got = c.cached_table("t", compute, cache=store)
    pd.testing.assert_frame_equal(got, mixed_table(), check_exact=True)
    assert len(calls) == 2 and (store.hits, store.misses) == (0, 2)


def test_ranking_stability_cached_equals_uncached_and_is_not_recomputed(monkeypatch):
    scores = synthetic_scores()
    options = dict(rates=(0.3, 0.6), n_seeds=2, seed=3)
    uncached = rb.ranking_stability(scores, cache=False, **options)
    calls = []
    real = rb.measure_table
    monkeypatch.setattr(rb, "measure_table", lambda *a, **k: calls.append(1) or real(*a, **k))
    first = rb.ranking_stability(scores, **options)
    n = len(calls)
    second = rb.ranking_stability(scores, **options)
    assert n == 1 + 2 * 2 and len(calls) == n  # the full data and each draw once, then nothing
    pd.testing.assert_frame_equal(first, uncached, check_exact=True)
    pd.testing.assert_frame_equal(second, uncached, check_exact=True)


def test_versus_reference_and_vbcm_cached_equal_uncached(tmp_path):
    store = c.ResultCache(tmp_path / "results.sqlite")
    scores = synthetic_scores()
    uncached = sig.versus_reference(scores, reference="m1", n_resamples=99, cache=False)
    rng = np.random.default_rng(0)
    scored = pd.DataFrame({"attribute": "toy", "metric": "m", "source": np.repeat(np.arange(6), 3),
                           "group": ["a", "b", "original"] * 6, "score": rng.normal(size=18)})
    uncached_vbcm = sig.counterfactual_vbcm(scored, {"toy": ["a", "b"]}, n_resamples=99, cache=False)
    for _ in range(2):  # computed, then read back
        pd.testing.assert_frame_equal(sig.versus_reference(scores, reference="m1", n_resamples=99, cache=store),
                                      uncached, check_exact=True)
        pd.testing.assert_frame_equal(sig.counterfactual_vbcm(scored, {"toy": ["a", "b"]}, n_resamples=99,
                                                              cache=store), uncached_vbcm, check_exact=True)
    assert (store.misses, store.hits) == (2, 2)


def test_counterfactual_table_and_decompose_cached_equal_uncached(tmp_path):
    store = c.ResultCache(tmp_path / "results.sqlite")
    rng = np.random.default_rng(1)
    scored = pd.DataFrame({"attribute": "toy", "metric": "m", "source": np.repeat(np.arange(6), 4),
                           "group": ["a", "b", "original", "neutral"] * 6, "score": rng.normal(size=24)})
    uncached = sig.counterfactual_table(scored, {"toy": ["a", "b"]}, n_resamples=99, cache=False)
    configs = pd.DataFrame({"metric": ["m1", "m2", "m3", "m4"], "paradigm": ["P", "P", "Q", "Q"],
                            "backbone": ["x", "y", "x", "y"]})
    scores = synthetic_scores()
    plain = decomposition.decompose(scores, configs, n_resamples=19, cache=False)
    for _ in range(2):  # computed, then read back
        pd.testing.assert_frame_equal(sig.counterfactual_table(scored, {"toy": ["a", "b"]}, n_resamples=99,
                                                               cache=store), uncached, check_exact=True)
        again = decomposition.decompose(scores, configs, n_resamples=19, cache=store)
        pd.testing.assert_frame_equal(again, plain, check_exact=True)
        assert again.attrs == plain.attrs and plain.attrs["n_resamples"] == 19
    assert (store.misses, store.hits) == (2, 2)
