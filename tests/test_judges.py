"""Pairwise judges: ``mb.audit_judge`` recovers planted biases; a metric as a judge; ``metricbias audit-judge``."""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import metricbias as mb
from metricbias import cli, jobs, judges

REPO = Path(__file__).resolve().parents[1]
RESAMPLES = 2000  # bootstrap resamples in these tests (the library default is 9999)


@pytest.fixture(autouse=True)
def _own_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("METRICBIAS_CACHE", str(tmp_path / "cache"))


def _coin(seed: int, *texts: str) -> float:
    """A uniform number in [0, 1) fixed by ``seed`` and the texts (the same question always gets the same answer)."""
    digest = hashlib.sha256("\x1f".join([str(seed), *texts]).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


class PlantedJudge:
    """Chooses candidate a with probability 0.5 + stereotype (minus it when a is the anti-stereotypical one)
    + position (a is the first shown), a seeded coin per question.

    So, over the two orders, P(stereotypical chosen) = 0.5 + stereotype, P(first shown chosen) = 0.5 + position,
    and P(the same position chosen in both orders) = 0.5 + 2 position^2 - 2 stereotype^2.
    """

    def __init__(self, pairs: pd.DataFrame, stereotype: float, position: float, seed: int = 0):
        self.stereotypical = set(zip(pairs["candidate_1"], pairs["candidate_2"]))
        self.stereotype, self.position, self.seed = stereotype, position, seed

    def planted(self) -> dict[str, float]:
        return {"stereotype_preference": self.stereotype, "position_bias": self.position,
                "order_inconsistency": 0.5 + 2 * self.position**2 - 2 * self.stereotype**2}

    def __call__(self, reference, candidate_a, candidate_b):
        sign = 1 if (candidate_a, candidate_b) in self.stereotypical else -1
        p_a = 0.5 + sign * self.stereotype + self.position
        return "a" if _coin(self.seed, reference, candidate_a, candidate_b) < p_a else "b"


@pytest.fixture(scope="module")
def gender_pairs():
    return mb.load_pairs("published", ["gender"])


@pytest.mark.parametrize("stereotype, position", [(0.2, 0.0), (0.0, 0.15), (0.0, 0.0)],
                         ids=["stereotype", "position", "unbiased"])
def test_the_audit_recovers_planted_biases_within_their_intervals(gender_pairs, stereotype, position):
    judge = PlantedJudge(gender_pairs, stereotype, position)
    table = mb.audit_judge(judge, dataset="published", attributes=["gender"], n_resamples=RESAMPLES, progress=False)
    assert list(table.columns) == judges.COLUMNS and list(table["measure"]) == list(judges.MEASURES)
    rows = table.set_index("measure")
    assert (rows["n_pairs"] == 396).all()
    for measure, planted in judge.planted().items():
        row = rows.loc[measure]
        assert row["ci_low"] <= planted <= row["ci_high"], (measure, planted, row.to_dict())
        assert row["ci_high"] - row["ci_low"] < 0.15  # an interval that says something
    for measure, planted in (("stereotype_preference", stereotype), ("position_bias", position)):
        p = rows.loc[measure, "p_value"]
        assert (p < 0.001) if planted else (p > 0.05), (measure, p)
    assert np.isnan(rows.loc["order_inconsistency", "p_value"])


def test_a_batch_judge_gives_the_same_table(gender_pairs):
    one = PlantedJudge(gender_pairs, 0.2, 0.1)

    def batch(references, candidates_a, candidates_b):
        return [one(r, a, b) for r, a, b in zip(references, candidates_a, candidates_b)]

    kwargs = {"dataset": "published", "attributes": ["gender"], "sample_size": 50, "n_resamples": 200,
              "progress": False}
    a = mb.audit_judge(one, label="j", **kwargs)
    b = mb.audit_judge(batch, batch=True, label="j", **kwargs)
    pd.testing.assert_frame_equal(a.drop(columns="signature"), b.drop(columns="signature"))


def test_the_measures_of_hand_worked_answers():
    # (P(first better) with the stereotypical candidate first, with it second) for five pairs
    answers = pd.DataFrame({"dataset": "d", "attribute": "x", "pair_id": range(5),
                            "p_stereotypical_first": [1.0, 1.0, 0.0, 0.8, 0.5],
                            "p_stereotypical_second": [0.0, 1.0, 0.0, 0.4, 0.5]})
    # s = (p1 + 1 - p2) / 2 = 1, .5, .5, .7, .5; f = (p1 + p2) / 2 = .5, 1, 0, .6, .5; same position: pairs 2, 3
    table = judges.measure_answers(answers, n_resamples=0).set_index("measure")
    assert table.loc["stereotype_preference", "value"] == pytest.approx(0.7 / 5)
    assert table.loc["stereotype_preference", "p_value"] == pytest.approx(0.5)  # 2 above, 0 below: 2 * 0.5^2
    assert table.loc["position_bias", "value"] == pytest.approx(0.1 / 5)
    assert table.loc["position_bias", "p_value"] == pytest.approx(1.0)  # 2 above, 1 below
    assert table.loc["order_inconsistency", "value"] == pytest.approx(0.4)
    assert table.loc["ties", "value"] == pytest.approx(0.2)  # pair 4 ties in both orders: counted apart
    # the logit fit with a position term: half the difference of the logits of the two orders' mean answers
    m1, m2 = (1 + 1 + 0 + 0.8 + 0.5) / 5, (0 + 1 + 0 + 0.4 + 0.5) / 5
    logit = lambda m: np.log(m / (1 - m))  # noqa: E731
    assert table.loc["stereotype_log_odds", "value"] == pytest.approx((logit(m1) - logit(m2)) / 2)
    assert table.loc["stereotype_log_odds", "p_value"] == table.loc["stereotype_preference", "p_value"]
    # Clopper-Pearson for 2 of 5, from the beta quantiles
    assert table.loc["order_inconsistency", "ci_low"] == pytest.approx(stats.beta.ppf(0.025, 2, 4))
    assert table.loc["order_inconsistency", "ci_high"] == pytest.approx(stats.beta.ppf(0.975, 3, 3))
    assert (table["n_pairs"] == 5).all()


def _answers(p1, p2) -> pd.DataFrame:
    return pd.DataFrame({"dataset": "d", "attribute": "x", "pair_id": range(len(p1)), "p_stereotypical_first": p1,
                         "p_stereotypical_second": p2})


@pytest.mark.parametrize("constant", [0.4, 0.9, 0.15, 0.5, 1.0])
def test_a_constant_judge_has_no_stereotype_effect_and_p_one(constant):
    # 0.4 gave (0.4 + 1 - 0.4) / 2 - 0.5 = -5.6e-17 for every pair, and a sign test p of 1e-119 over 396 pairs
    table = judges.measure_answers(_answers([constant] * 396, [constant] * 396), n_resamples=200)
    row = table.set_index("measure").loc["stereotype_preference"]
    assert (row["value"], row["ci_low"], row["ci_high"], row["p_value"], row["note"]) == (0, 0, 0, 1, "no variation")
    position = table.set_index("measure").loc["position_bias"]
    assert position["value"] == pytest.approx(constant - 0.5)  # a constant answer above 0.5 favours a, the first shown
    if constant != 0.5:  # every pair leans the same way: the two-sided permutation floor, 2 / (B + 1)
        assert position["p_value"] == pytest.approx(2 / 201)


def test_the_p_value_tests_the_mean_that_is_reported():
    # a probability-valued judge: 60 pairs lean a little against the stereotype, 40 much towards it
    s_minus_half = np.r_[np.full(60, -0.01), np.full(40, 0.3)]
    p1, p2 = 0.5 + s_minus_half, 0.5 - s_minus_half
    row = judges.measure_answers(_answers(p1, p2), n_resamples=2000).set_index("measure").loc["stereotype_preference"]
    assert row["value"] == pytest.approx(0.114)  # (60 * -0.01 + 40 * 0.3) / 100
    assert row["p_value"] < 0.001  # the mean is far from 0 ...
    assert judges.sign_test(0.5 + s_minus_half) > 0.05  # ... while the median (60 below, 40 above) is not


class LogitJudge:
    """Chooses a with probability sigmoid(position + stereotype * x), x = +1 when a is the stereotypical
    candidate, -1 when it is the other: a judge whose position effect pushes its answers towards 1."""

    def __init__(self, pairs, stereotype: float, position: float, seed: int = 0):
        self.stereotypical = set(zip(pairs["candidate_1"], pairs["candidate_2"]))
        self.stereotype, self.position, self.seed = stereotype, position, seed

    def __call__(self, reference, candidate_a, candidate_b):
        x = 1 if (candidate_a, candidate_b) in self.stereotypical else -1
        p_a = 1 / (1 + np.exp(-(self.position + self.stereotype * x)))
        return "a" if _coin(self.seed, reference, candidate_a, candidate_b) < p_a else "b"


def test_a_near_saturated_position_effect_does_not_hide_the_stereotype_log_odds(gender_pairs):
    judge = LogitJudge(gender_pairs, stereotype=0.8, position=2.0)
    table = mb.audit_judge(judge, dataset="published", attributes=["gender"], n_resamples=RESAMPLES, progress=False)
    rows = table.set_index("measure")
    log_odds = rows.loc["stereotype_log_odds"]
    assert log_odds["ci_low"] <= 0.8 <= log_odds["ci_high"] and log_odds["note"] == ""
    # order-averaging shrinks the same effect: (sigmoid(2.8) - sigmoid(1.2)) / 2 = 0.079, against sigmoid(0.8) - 0.5
    shrunk = (1 / (1 + np.exp(-2.8)) - 1 / (1 + np.exp(-1.2))) / 2
    preference = rows.loc["stereotype_preference"]
    assert preference["ci_low"] <= shrunk <= preference["ci_high"]
    assert preference["ci_high"] < 1 / (1 + np.exp(-0.8)) - 0.5


def test_a_saturated_order_is_named_and_its_log_odds_left_out():
    # the stereotypical candidate always wins when shown first; shown second, it wins 3 times in 4
    table = judges.measure_answers(_answers([1.0] * 8, [0.0, 1.0, 0.0, 0.0] * 2), n_resamples=200)
    row = table.set_index("measure").loc["stereotype_log_odds"]
    assert np.isnan(row["value"]) and np.isnan(row["ci_low"])
    assert row["note"] == ("saturated: stereotypical first: candidate a (shown first) chosen in every pair; the "
                           "log-odds are not identified")
    assert table.set_index("measure").loc["stereotype_preference", "value"] == pytest.approx(0.375)


@pytest.mark.parametrize("answer, expected", [
    (0.7, 0.7), (np.float32(0.25), 0.25), (1, 1.0), (0, 0.0), (True, 1.0), (np.int64(0), 0.0),
    ("a", 1.0), (" B\n", 0.0), ("Tie", 0.5), ("the first one", 1.0), (" the second one ", 0.0),
])
def test_every_accepted_answer(answer, expected):
    assert judges.as_probability(answer, "the first one", "the second one") == expected


@pytest.mark.parametrize("answer, message", [
    (1.5, "outside \\[0, 1\\]"), (float("nan"), "outside"), (-0.1, "outside"), ("maybe", "neither 'a', 'b'"),
    (None, "NoneType"), ([1], "list"),
])
def test_a_bad_answer_is_one_clear_error(answer, message):
    with pytest.raises(judges.JudgeError, match=message):
        judges.as_probability(answer, "x", "y")


def test_a_judge_must_be_callable():
    with pytest.raises(judges.JudgeError, match="not str 'bleu'; to use a metric as a judge, pass metric_judge"):
        mb.audit_judge("bleu")


def test_a_bad_answer_names_the_pair_and_the_order():
    def sometimes_bad(reference, a, b):
        return 2 if "nurse" in a else "a"

    with pytest.raises(judges.JudgeError, match=r"judge sometimes_bad on published/gender pair \S+ "
                                                r"\(stereotypical (first|second)\): returned 2, outside \[0, 1\]"):
        mb.audit_judge(sometimes_bad, dataset="published", attributes=["gender"], progress=False)


def test_pairs_without_a_shared_reference_are_left_out_with_a_warning():
    pairs = mb.load_pairs("published", ["race"])
    shared = int((pairs["reference_1"] == pairs["reference_2"]).sum())
    with pytest.warns(UserWarning, match=f"{len(pairs) - shared} pair\\(s\\) .* published/race {len(pairs) - shared}"):
        table = mb.audit_judge(lambda r, a, b: "tie", dataset="published", attributes=["race"], n_resamples=0,
                               progress=False)
    assert (table["n_pairs"] == shared).all()
    every = mb.load_pairs("published")  # the count the README and the module's docstring give
    assert (len(every), int((every["reference_1"] != every["reference_2"]).sum())) == (943, 66)
    # a judge that always ties has no bias of any kind, and every pair is a tie
    assert table.set_index("measure")["value"].to_dict() == {"stereotype_preference": 0.0, "stereotype_log_odds": 0.0,
                                                             "position_bias": 0.0, "order_inconsistency": 0.0,
                                                             "ties": 1.0}


def test_the_regression_metric_as_a_judge_has_no_position_bias_and_no_inconsistency():
    spec = "regression:backbone=stsb-all-MiniLM-L6-v2"
    with pytest.warns(UserWarning, match="different references"):
        table = mb.audit_judge(mb.metric_judge(spec), dataset="published", sample_size=10, n_resamples=RESAMPLES,
                               progress=False)
    assert table["signature"].str.contains("judged-by:metric:regression;backbone:stsb-all-MiniLM-L6-v2").all()
    rows = table.set_index(["attribute", "measure"])
    # the scores, through the one scoring path, on the same pairs: the judge picks the higher one
    pairs = mb.load_pairs("published", sample_size=10, seed=0)
    pairs = pairs[pairs["reference_1"] == pairs["reference_2"]]
    scores = mb.score_pairs(pairs, spec)
    assert len(scores) == int(rows.xs("position_bias", level="measure")["n_pairs"].sum())
    for attribute, group in scores.groupby("attribute"):
        stereotypical = np.sign(group["score_1"] - group["score_2"]).mean() / 2
        assert rows.loc[(attribute, "stereotype_preference"), "value"] == pytest.approx(stereotypical)
        # a deterministic scorer prefers the same candidate in both orders: the first shown wins exactly half
        position = rows.loc[(attribute, "position_bias")]
        assert (position["value"], position["ci_low"], position["ci_high"], position["p_value"]) == (0, 0, 0, 1)
        inconsistency = rows.loc[(attribute, "order_inconsistency")]
        assert inconsistency["value"] == 0 and inconsistency["ci_low"] == 0
        n = int(inconsistency["n_pairs"])
        assert inconsistency["ci_high"] == pytest.approx(1 - 0.025 ** (1 / n))  # Clopper-Pearson, 0 of n
        # equal scores are a tie in both orders, counted apart from the consistent pairs
        assert rows.loc[(attribute, "ties"), "value"] == pytest.approx((group["score_1"] == group["score_2"]).mean())


def test_a_metric_judge_picks_the_better_scored_candidate_whichever_direction():
    from metricbias.metrics.registry import function_metric

    def length_gap(candidates, references):
        return [abs(len(c) - len(r)) for c, r in zip(candidates, references)]

    closer = judges.metric_judge(function_metric(length_gap, direction="lower")(), cache=None)
    assert closer.batch and closer.signature.startswith("metric:function|") and ".length_gap|code:" in closer.signature
    with jobs.collect() as ran:  # through the scoring path: one job per order
        verdicts = closer(["abcd"] * 3, ["abc", "a", "ab"], ["a", "abc", "abcdef"])
    assert list(verdicts) == [1.0, 0.0, 0.5]  # gaps 1 vs 3, 3 vs 1, 2 vs 2
    assert [len(j.candidates) for j in ran] == [3, 3]


JUDGE_MODULE = '''
def first(reference, candidate_a, candidate_b):
    """Always prefers the candidate shown first."""
    return "a"


def broken(reference, candidate_a, candidate_b):
    return "maybe"
'''


def test_the_audit_judge_command(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "myjudge.py").write_text(JUDGE_MODULE)
    status = cli.main(["audit-judge", "--judge", "myjudge:first", "--dataset", "published", "--attributes", "gender",
                       "--sample-size", "20", "--n-resamples", "100", "--out", "j.csv"])
    assert status == 0, capsys.readouterr().err
    table = pd.read_csv(tmp_path / "j.csv")
    assert list(table.columns) == judges.COLUMNS
    values = table.set_index("measure")["value"]
    assert values.drop("stereotype_log_odds").to_dict() == {"stereotype_preference": 0.0, "position_bias": 0.5,
                                                            "order_inconsistency": 1.0, "ties": 0.0}
    assert np.isnan(values["stereotype_log_odds"])  # the position effect saturates: a always chosen
    assert table.set_index("measure").loc["stereotype_log_odds", "note"].startswith("saturated: stereotypical first")
    assert (table["judge"] == "myjudge:first").all() and (table["n_pairs"] == 20).all()
    assert "wrote 5 rows" in capsys.readouterr().out


@pytest.mark.parametrize("judge, message", [
    ("myjudge:broken", r"judge myjudge:broken on published/gender pair \S+ \(stereotypical first\): returned the "
                       r"text 'maybe'"),
    ("myjudge:absent", "judge 'myjudge:absent': module 'myjudge' .* has no attribute 'absent'"),
    ("nosuchmodule:f", "judge 'nosuchmodule:f': cannot import module 'nosuchmodule'"),
    ("myjudge", "judge 'myjudge': expected module:attr"),
])
def test_the_command_fails_in_one_line_naming_the_judge(tmp_path, monkeypatch, capsys, judge, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "myjudge.py").write_text(JUDGE_MODULE)
    status = cli.main(["audit-judge", "--judge", judge, "--attributes", "gender", "--out", "j.csv"])
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ": error: " in ln]  # progress bars aside
    assert status == 2 and len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith("metricbias audit-judge: error: ") and re.search(message, lines[0]), err
    assert not (tmp_path / "j.csv").exists()


def test_the_appendix_judge_example_runs_as_printed(tmp_path):
    from doc_blocks import code_block

    example = code_block("notebooks/A1_using_metricbias.md", "mb.audit_judge", without="openai")
    proc = subprocess.run([sys.executable, "-c", example], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "position_bias" in proc.stdout and "order_inconsistency" in proc.stdout
