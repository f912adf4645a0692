"""The bias-measure registry: built-in measures, a user's own measure through `mb.audit`, the long and wide tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import metricbias as mb
from metricbias.bias import measures, pairwise, registry
from metricbias.bias.registry import MeasureError, get_measure, register_measure
from metricbias.paths import write_csv_atomic

BUILT_IN = ["bias", "stereotypical_difference", "indicator", "kls", "jss", "group_abs", "group_w1", "group_mwu",
            "counterfactual_mwu", "size_robust_bias", "size_robust_difference"]


@pytest.fixture(autouse=True)
def _forget_user_measures(monkeypatch, tmp_path):
    registry.table()  # the built-in measures, registered on first use
    monkeypatch.setattr(registry, "_REGISTERED", dict(registry._REGISTERED))
    monkeypatch.setattr("metricbias.metrics.registry._REGISTERED", {})
    monkeypatch.setenv("METRICBIAS_CACHE", str(tmp_path / "cache"))


def _frame():
    return pd.DataFrame({"attribute": ["b", "b", "b", "a", "a", "a"], "metric": ["M"] * 6,
                         "score_1": [0.0, 1.0, 3.0, 0.2, 0.9, 0.4], "score_2": [1.0, 1.0, 0.0, 0.1, 0.5, 0.4],
                         "signature": ["M|v1"] * 6})


def _length_ratio(candidates, references):
    return [len(c) / (1 + len(r)) for c, r in zip(candidates, references)]


def test_a_registered_toy_measure_comes_back_from_audit():
    @register_measure("mean_gap", takes="pairs", citation="a test", description="mean raw score gap")
    def mean_gap(s1, s2):
        return float(np.mean(s1 - s2))

    report = mb.audit(_length_ratio, dataset="published", attributes=["gender"], measures=["mean_gap", "bias"],
                      n_resamples=99)
    assert list(report.columns) == ["attribute", "metric", "measure", "value", "ci_low", "ci_high", "n_pairs",
                                    "signature"]
    assert report["measure"].tolist() == ["mean_gap", "bias"]
    scores = mb.score_pairs(mb.load_pairs("published", ["gender"]), _length_ratio)
    gap = report.set_index("measure").loc["mean_gap"]
    assert gap["value"] == pytest.approx(float(np.mean(scores["score_1"] - scores["score_2"])))
    assert np.isnan(gap["ci_low"]) and np.isnan(gap["ci_high"]) and gap["n_pairs"] == len(scores)


def test_a_measure_with_a_test_adds_p_value_after_the_eight_columns():
    def sign_test(s1, s2, *, seed):  # a dict, with an interval and a test; `seed` is passed because it is named
        assert seed == 5
        return {"value": 1.0, "ci_low": 0.5, "ci_high": 1.5, "p_value": 0.25}

    register_measure("sign_test", sign_test, takes="pairs", interval=True, test=True)
    long = measures.measure(_frame(), ["sign_test", "bias"], n_resamples=0, seed=5)
    assert list(long.columns) == [*measures.COLUMNS, "p_value"]
    assert long.query("measure == 'sign_test'")[["value", "ci_low", "ci_high", "p_value"]].to_numpy().tolist() == \
        [[1.0, 0.5, 1.5, 0.25]] * 2
    assert long.query("measure == 'bias'")["p_value"].isna().all()
    wide = measures.wide(long)
    assert {"sign_test", "sign_test_ci_low", "sign_test_ci_high", "sign_test_p_value"} <= set(wide.columns)


def test_options_are_passed_only_when_named_and_each_input_kind():
    seen = {}

    @register_measure("context", takes="pairs")
    def context(s1, s2, *, metric, attribute, n_resamples):
        seen[attribute] = (metric, n_resamples)
        return 0.0

    @register_measure("spread", takes="distributions")
    def spread(x, y):
        return float(np.std(x) - np.std(y))

    @register_measure("n_sources", takes="groups")
    def n_sources(data):
        assert list(data.columns) == ["source", "group", "score"]
        assert set(data["group"]) == {"candidate_1", "candidate_2"}
        return float(data["source"].nunique())

    long = measures.measure(_frame(), ["context", "spread", "n_sources"], n_resamples=7)
    assert seen == {"b": ("M", 7), "a": ("M", 7)}
    assert long.query("measure == 'n_sources'")["value"].tolist() == [3.0, 3.0]
    assert long.query("measure == 'spread' and attribute == 'a'")["value"].iloc[0] == pytest.approx(
        np.std([0.2, 0.9, 0.4]) - np.std([0.1, 0.5, 0.4]))


def test_a_duplicate_name_is_refused_unless_replaced():
    register_measure("twice", lambda s1, s2: 1.0)
    with pytest.raises(MeasureError, match="'twice' is already registered.*replace=True"):
        register_measure("twice", lambda s1, s2: 2.0)
    with pytest.raises(MeasureError, match=r"measure .bias. is already registered \(metricbias.bias.pairwise"):
        register_measure("bias", lambda s1, s2: 2.0)
    register_measure("twice", lambda s1, s2: 2.0, replace=True)
    assert get_measure("twice")(np.ones(2), np.zeros(2))["value"] == 2.0
    with pytest.raises(ValueError, match="unknown bias measure 'nope'; measures: bias, stereotypical_difference"):
        measures.measure(_frame(), ["nope"])
    with pytest.raises(MeasureError, match="takes must be one of pairs, groups, distributions"):
        register_measure("odd", lambda s1, s2: 0.0, takes="triples")
    register_measure("bad", lambda s1, s2: "high")
    with pytest.raises(MeasureError, match="measure 'bad' returned str 'high', not a number"):
        measures.measure(_frame(), ["bad"])


def test_the_built_in_measures_and_their_records():
    table = registry.table()
    assert table["name"].tolist() == BUILT_IN
    rows = table.set_index("name")
    assert rows.loc["bias", "interval"] and rows.loc["stereotypical_difference", "interval"]
    assert not rows.loc[BUILT_IN[2:9], "interval"].any() and rows.loc[BUILT_IN[9:], "interval"].all()
    assert rows["test"].tolist() == [name == "size_robust_difference" for name in BUILT_IN]
    assert rows.loc["kls", "takes"] == "distributions" and rows.loc["group_w1", "takes"] == "groups"
    assert rows.loc["bias", "citation"] == "Sun et al. 2022, Eq. 2"
    assert get_measure("bias").options == ("n_resamples", "seed", "metric", "attribute", "clusters")


def test_the_bias_table_is_a_pivot_of_the_long_table_and_its_csv_is_unchanged(tmp_path):
    frame = _frame()
    long = measures.measure(frame, ["bias", "stereotypical_difference"], n_resamples=99, seed=1)
    wide = pairwise.bias_table(frame, n_resamples=99, seed=1)
    for (_, w), attribute in zip(wide.iterrows(), ["b", "a"]):
        cell = long[long["attribute"] == attribute].set_index("measure")
        assert (w["bias"], w["bias_ci_low"], w["bias_ci_high"], w["stereotypical_difference"]) == (
            cell.loc["bias", "value"], cell.loc["bias", "ci_low"], cell.loc["bias", "ci_high"],
            cell.loc["stereotypical_difference", "value"])
    # byte for byte what `metricbias bias` wrote for these scores before the registry
    out = write_csv_atomic(wide, tmp_path / "bias.csv")
    assert out.read_text() == (
        "attribute,metric,n_pairs,bias,bias_ci_low,bias_ci_high,stereotypical_difference,signature\n"
        "b,M,3,44.444444444444436,0.0,100.0,22.222222222222225,M|v1\n"
        "a,M,3,20.833333333333332,4.166666666666667,50.0,20.833333333333332,M|v1\n")
    empty = pairwise.bias_table(frame.iloc[:0])
    assert empty.empty and list(empty.columns) == [*pairwise.BIAS_COLUMNS, "signature"]


def test_mb_register_measure_is_public():
    assert mb.register_measure is register_measure


def test_the_appendix_measure_example_runs_as_printed(tmp_path):
    import subprocess
    import sys

    from doc_blocks import code_block

    example = code_block("notebooks/A1_using_metricbias.md", "register_measure")
    assert len([ln for ln in example.splitlines() if ln.strip() and not ln.startswith("import")]) == 3
    proc = subprocess.run([sys.executable, "-c", example], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "mean_gap" in proc.stdout and "bias" in proc.stdout
