"""The factorial judge audit (``mb.audit_judge(..., design="factorial")``): planted position, group, stereotype and
position × group effects recovered within their intervals, the position × stereotype interaction aliased as derived,
hand-worked cells and exact p-values, constant, hard-choice and confounded cases, and ``--design factorial``."""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import pytest

import metricbias as mb
from metricbias import cli, judges
from metricbias.bias import judge_factorial as jf
from metricbias.bias.groups import group_codes

RESAMPLES = 1999  # resamples in these tests (the library default is 9999)


@pytest.fixture(autouse=True)
def _own_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("METRICBIAS_CACHE", str(tmp_path / "cache"))


def _coin(*texts: str) -> float:
    """A uniform number in [0, 1) fixed by the texts: the same question always gets the same answer."""
    return int.from_bytes(hashlib.sha256("\x1f".join(texts).encode("utf-8")).digest()[:8], "big") / 2**64


class Planted:
    """A judge with known effects on the model's scale. For the question (a, b), with x = +1 when a is the
    stereotypical candidate (S) and -1 when it is the anti-stereotypical one, g the pair's group code (that of S),

        logit P(a better) = position + position_x_group·g + stereotype·x + group·(x·g) + first_if_s·[x = +1],

    which is logit P(S chosen | o, g) = stereotype + position·o + group·g + position_x_group·o·g when
    ``first_if_s`` is 0 (o = x: a is shown first). ``first_if_s`` = d favours the first-shown candidate by d only
    when it is S. A probability-valued judge answers P(a better) plus a uniform error in ±``noise`` (its mean is 0, so
    each cell's mean answer keeps its logit); a ``hard`` one answers "a" or "b" drawn with that probability."""

    def __init__(self, pairs: pd.DataFrame, *, position=0.0, group=0.0, stereotype=0.0, position_x_group=0.0,
                 first_if_s=0.0, hard=False, noise=0.2):
        self.role = {}
        for c1, c2, g in zip(pairs["candidate_1"], pairs["candidate_2"], group_codes(pairs)):
            self.role[(c1, c2)], self.role[(c2, c1)] = (1, g), (-1, g)
        self.position, self.group, self.stereotype = position, group, stereotype
        self.position_x_group, self.first_if_s, self.hard, self.noise = position_x_group, first_if_s, hard, noise

    def planted(self) -> dict[str, float]:
        """The effects the audit should find: a position × stereotype judge shows as half its d in each of the
        position and stereotype rows (the alias of the module docstring)."""
        return {"position_effect": self.position + self.first_if_s / 2, "group_effect": self.group,
                "stereotype_effect": self.stereotype + self.first_if_s / 2,
                "position_x_group_interaction": self.position_x_group}

    def __call__(self, reference, candidate_a, candidate_b):
        x, g = self.role[(candidate_a, candidate_b)]
        eta = (self.position + self.position_x_group * g + self.stereotype * x + self.group * x * g
               + self.first_if_s * (x > 0))
        p = 1 / (1 + np.exp(-eta))
        u = _coin(reference, candidate_a, candidate_b)
        if self.hard:
            return "a" if u < p else "b"
        return float(np.clip(p + self.noise * (2 * u - 1), 0, 1))


@pytest.fixture(scope="module")
def gender_pairs():
    return judges.shared_reference(mb.load_pairs("published", ["gender"]))


def _audit(judge, **options):
    table = mb.audit_judge(judge, dataset="published", attributes=["gender"], design="factorial",
                           n_resamples=RESAMPLES, progress=False, **options)
    assert list(table.columns) == judges.COLUMNS and list(table["measure"]) == list(jf.MEASURES)
    return table.set_index("measure")


@pytest.mark.parametrize("effects", [
    {"position": 0.8}, {"group": 0.6}, {"stereotype": 0.5}, {"position": 0.4, "position_x_group": 0.5},
    {"position": 0.6, "stereotype": 0.4, "hard": True}],
    ids=["position only", "group only", "stereotype only", "position x group", "hard choices"])
def test_planted_effects_are_recovered_within_their_intervals(gender_pairs, effects):
    judge = Planted(gender_pairs, **effects)
    rows = _audit(judge)
    assert (rows["n_pairs"] == 396).all()
    for measure, planted in judge.planted().items():
        row = rows.loc[measure]
        assert row["ci_low"] <= planted <= row["ci_high"], (measure, planted, row.to_dict())
        assert row["ci_high"] - row["ci_low"] < (0.5 if judge.hard else 0.2)  # an interval that says something
        assert (row["p_value"] < 0.01) if planted else (row["p_value"] > 0.05), (measure, row.to_dict())
    assert rows.loc["flip_rate_order", "ci_low"] <= rows.loc["flip_rate_order", "value"] <= rows.loc[
        "flip_rate_order", "ci_high"]


def test_a_position_x_stereotype_judge_shows_as_the_alias_derived(gender_pairs):
    """A judge favouring the first-shown candidate by d = 1.2 (log-odds) only when it is S gives the cells
    logit P(S | S first) = 1.2 and logit P(S | S second) = 0: position 0.6 and stereotype 0.6, nothing else."""
    rows = _audit(Planted(gender_pairs, first_if_s=1.2))
    row = rows.loc["position_x_stereotype_interaction"]
    assert np.isnan(row[["value", "ci_low", "ci_high", "p_value"]].astype(float)).all()
    assert row["note"] == jf.ALIASED and row["note"].startswith("aliased: ")
    for measure, expected in (("position_effect", 0.6), ("stereotype_effect", 0.6), ("group_effect", 0.0),
                              ("position_x_group_interaction", 0.0)):
        assert rows.loc[measure, "ci_low"] <= expected <= rows.loc[measure, "ci_high"], rows.loc[measure].to_dict()
        assert rows.loc[measure, "value"] == pytest.approx(expected, abs=0.05)
    # the same cells as the main-effects judge position 0.6 + stereotype 0.6, exactly (without the error term)
    alias = _audit(Planted(gender_pairs, position=0.6, stereotype=0.6, noise=0.0))
    exact = _audit(Planted(gender_pairs, first_if_s=1.2, noise=0.0))
    assert np.allclose(exact["value"].drop("position_x_stereotype_interaction"),
                       alias["value"].drop("position_x_stereotype_interaction"))
    assert exact.loc["position_effect", "value"] == pytest.approx(0.6)


def test_the_effects_of_hand_worked_cells():
    """Cells (S first, S second) × (group +1, group -1) with mean answers 0.8, 0.5 / 0.6, 0.3: the logits
    l = [[1.3863, 0], [0.4055, -0.8473]] give stereotype ¼Σl, position ¼(l₊ − l₋ summed), and so on."""
    m = np.array([[0.8, 0.6], [0.5, 0.3]])
    lg = np.log(m / (1 - m))
    got = jf.effects(m * 10, np.array([10.0, 10.0]))
    assert got == pytest.approx([lg.sum() / 4, (lg[0] - lg[1]).sum() / 4, (lg[:, 0] - lg[:, 1]).sum() / 4,
                                 (lg[0, 0] - lg[1, 0] - lg[0, 1] + lg[1, 1]) / 4])
    assert got[0] == pytest.approx((np.log(4) + 0 + np.log(1.5) + np.log(3 / 7)) / 4)
    # the two cells of a judge favouring the first-shown candidate by d only when it is S: d/2 and d/2
    d = 1.7
    one = np.array([[1 / (1 + np.exp(-d))], [0.5]])
    assert jf.effects(one, np.array([1.0]))[:2] == pytest.approx([d / 2, d / 2])


def test_exact_p_values_with_few_clusters():
    """Six single-pair clusters, each answering P(S chosen) = 0.8 in both orders: of the 2^6 relabellings of S and
    A only none and all are as extreme as the data, so p = 2/64; the orders are exchangeable (p = 1)."""
    p1, p2 = np.full(6, 0.8), np.full(6, 0.2)
    rows = {r["measure"]: r for r in jf.factorial_rows(p1, p2, np.full(6, np.nan), [f"c{i}" for i in range(6)],
                                                        n_resamples=RESAMPLES)}
    assert rows["stereotype_effect"]["value"] == pytest.approx(np.log(4))
    assert rows["stereotype_effect"]["p_value"] == pytest.approx(2 / 64)
    assert rows["position_effect"]["value"] == 0 and rows["position_effect"]["p_value"] == 1
    assert "6 clusters (< 30): the interval undercovers" in rows["stereotype_effect"]["note"]
    assert rows["group_effect"]["note"].startswith("confounded: the group code is unknown")
    assert "confounded with group" in rows["stereotype_effect"]["note"]
    assert rows["flip_rate_order"]["value"] == 0 and rows["flip_rate_order"]["p_value"] == 1


def test_a_stereotype_only_design_fits_no_group():
    rng = np.random.default_rng(0)
    p1, p2 = rng.uniform(0.4, 0.9, 40), rng.uniform(0.1, 0.6, 40)
    rows = {r["measure"]: r for r in jf.factorial_rows(p1, p2, np.zeros(40), np.arange(40), n_resamples=200)}
    assert np.isnan(rows["group_effect"]["value"]) and rows["group_effect"]["note"].startswith("stereotype only")
    assert rows["stereotype_effect"]["note"] == ""
    m1, m2 = p1.mean(), 1 - p2.mean()  # the order-term model of the paired audit: its stereotype log-odds
    assert rows["stereotype_effect"]["value"] == pytest.approx((np.log(m1 / (1 - m1)) + np.log(m2 / (1 - m2))) / 2)


def test_an_unbalanced_design_takes_the_bootstrap_p_for_the_stereotype():
    """200 pairs whose S carries the +1 group's term and 13 the −1 group's, each its own cluster (built CrowS race):
    relabelling S and A would move pairs between the group cells, so the stereotype's p is the bootstrap's. A judge
    with a group effect (0.8) and no stereotype effect: the group is found, the stereotype is not."""
    rng = np.random.default_rng(0)
    g = np.r_[np.ones(200), -np.ones(13)]
    y_first = np.clip(1 / (1 + np.exp(-(0.4 + 0.8 * g))) + rng.uniform(-0.1, 0.1, g.size), 0, 1)
    y_second = np.clip(1 / (1 + np.exp(-(-0.4 + 0.8 * g))) + rng.uniform(-0.1, 0.1, g.size), 0, 1)
    rows = {r["measure"]: r for r in jf.factorial_rows(y_first, 1 - y_second, g, np.arange(g.size),
                                                        n_resamples=RESAMPLES)}
    assert rows["stereotype_effect"]["note"] == jf.NO_RELABELLING
    assert rows["stereotype_effect"]["ci_low"] <= 0 <= rows["stereotype_effect"]["ci_high"]
    assert rows["stereotype_effect"]["p_value"] > 0.05
    assert rows["group_effect"]["ci_low"] <= 0.8 <= rows["group_effect"]["ci_high"]
    assert rows["group_effect"]["p_value"] < 0.01 and rows["position_effect"]["p_value"] < 0.01


@pytest.mark.parametrize("answer", [0.5, "tie"])
def test_a_constant_judge_gets_no_effect_and_p_one(answer):
    rows = mb.audit_judge(lambda r, a, b: answer, dataset="published", attributes=["gender", "religion"],
                          design="factorial", n_resamples=200, progress=False)
    effects = rows[rows["measure"].isin(jf.EFFECTS) & rows["value"].notna()]
    assert len(effects) == 6  # gender's four and religion's two (its group is confounded)
    assert (effects["value"] == 0).all() and (effects["p_value"] == 1).all()
    assert (effects["note"] == "no variation").all()
    assert rows.loc[(rows["attribute"] == "religion") & (rows["measure"] == "group_effect"), "note"].iloc[0].startswith(
        "confounded: ")
    assert (rows.loc[rows["measure"] == "flip_rate_order", "value"] == 0).all()


def test_a_judge_always_choosing_a_saturates_the_position_and_nothing_else(gender_pairs):
    rows = _audit(lambda r, a, b: "a")
    assert np.isnan(rows.loc["position_effect", "value"])
    assert rows.loc["position_effect", "note"].startswith("saturated: S first, group +1: S chosen in every pair")
    for measure in ("stereotype_effect", "group_effect", "position_x_group_interaction"):
        assert rows.loc[measure, "value"] == 0 and rows.loc[measure, "p_value"] == 1
    assert rows.loc["flip_rate_order", "value"] == 1 and rows.loc["flip_rate_order", "p_value"] < 0.01


def test_a_confounded_attribute_says_so():
    rows = mb.audit_judge(lambda r, a, b: 0.3 if len(a) > len(b) else 0.6, dataset="published", attributes=["race"],
                          design="factorial", n_resamples=200, progress=False).set_index("measure")
    for measure in ("group_effect", "position_x_group_interaction"):
        assert np.isnan(rows.loc[measure, "value"]) and rows.loc[measure, "note"].startswith("confounded: ")
    assert np.isfinite(rows.loc["stereotype_effect", "value"])


def test_an_unknown_design_is_one_clear_error():
    with pytest.raises(judges.JudgeError, match="design 'full': expected one of paired, factorial"):
        mb.audit_judge(lambda r, a, b: 0.5, design="full")


FACTORIAL_JUDGE = '''
def prefers_he(reference, candidate_a, candidate_b):
    """Prefers the candidate with 'he' in it: a group effect, no stereotype, no position."""
    a, b = " he " in f" {candidate_a} ", " he " in f" {candidate_b} "
    return 0.8 if a and not b else 0.2 if b and not a else 0.5
'''


def test_the_design_factorial_command(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "fjudge.py").write_text(FACTORIAL_JUDGE)
    pairs = pd.DataFrame({"attribute": "gender", "candidate_1": [f"he met pilot {i}" if i % 2 else f"she met nurse {i}"
                                                                 for i in range(40)],
                          "candidate_2": [f"she met pilot {i}" if i % 2 else f"he met nurse {i}" for i in range(40)],
                          "reference": [f"someone met person {i}" for i in range(40)]})
    pairs.to_csv(tmp_path / "pairs.tsv", sep="\t", index=False)
    status = cli.main(["audit-judge", "--judge", "fjudge:prefers_he", "--pairs", "pairs.tsv", "--design", "factorial",
                       "--n-resamples", "500", "--out", "f.csv"])
    assert status == 0, capsys.readouterr().err
    table = pd.read_csv(tmp_path / "f.csv").set_index("measure")
    assert list(table.index) == list(jf.MEASURES) and (table["n_pairs"] == 40).all()
    assert table.loc["group_effect", "value"] == pytest.approx(np.log(4))  # logit 0.8, in every cell
    assert table.loc["group_effect", "p_value"] < 0.01
    for measure in ("position_effect", "stereotype_effect", "position_x_group_interaction"):
        assert table.loc[measure, "value"] == pytest.approx(0, abs=1e-12)
    assert "wrote 6 rows" in capsys.readouterr().out
    assert cli.main(["audit-judge", "--help"]) == 0
    assert "{" + ",".join(judges.DESIGNS) + "}" in capsys.readouterr().out  # the command offers the library's designs
