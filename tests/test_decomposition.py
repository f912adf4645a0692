"""Two-way decomposition of bias into paradigm, backbone and interaction; the 2 x 3 grid; the papers beside it."""

import numpy as np
import pandas as pd
import pytest

from metricbias.bias import decomposition
from metricbias.bias.pairwise import bias_table
from metricbias.metrics import backbone_grid

pytestmark = pytest.mark.usefixtures("private_cache")  # decompose keeps its table in the result cache


def cells(values):
    paradigms, backbones = ["Matching", "Regression", "Generation"], ["MiniLM", "MPNet"]
    return pd.DataFrame([{"paradigm": p, "backbone": b, "bias": values[i][j]}
                         for i, p in enumerate(paradigms) for j, b in enumerate(backbones)])


def test_additive_grid_hand_worked():
    # rows 2, 3, 7; columns 3, 5; grand mean 4: SS_paradigm = 2 (4 + 1 + 9) = 28, SS_backbone = 3 (1 + 1) = 6
    d = decomposition.two_way(cells([[1, 3], [2, 4], [6, 8]]))
    assert d["ss_paradigm"] == pytest.approx(28) and d["ss_backbone"] == pytest.approx(6)
    assert d["ss_interaction"] == pytest.approx(0) and d["total_ss"] == pytest.approx(34)
    assert d["share_paradigm"] == pytest.approx(28 / 34)


def test_shares_add_up_to_one_with_interaction():
    rng = np.random.default_rng(1)
    for _ in range(20):
        d = decomposition.two_way(cells(rng.normal(size=(3, 2)).tolist()))
        assert d["share_paradigm"] + d["share_backbone"] + d["share_interaction"] == pytest.approx(1)
    # a pure interaction: rows and columns have equal means
    d = decomposition.two_way(cells([[1, -1], [-1, 1], [0, 0]]))
    assert d["share_interaction"] == pytest.approx(1)


def test_an_empty_cell_is_named():
    c = cells([[1, 2], [3, 4], [5, 6]]).iloc[:-1]
    with pytest.raises(ValueError, match="Generation"):
        decomposition.two_way(c)


def synthetic_scores(n=60, seed=0):
    """Six configurations scoring the same pairs; generation metrics differ a lot between candidates."""
    rng = np.random.default_rng(seed)
    configs = cells([[0, 0], [0, 0], [0, 0]]).drop(columns="bias")
    configs["metric"] = [f"{p}-{b}" for p, b in zip(configs["paradigm"], configs["backbone"])]
    rows = []
    for attribute in ("gender", "race"):
        for m, p in zip(configs["metric"], configs["paradigm"]):
            spread = {"Matching": 0.1, "Regression": 0.5, "Generation": 1.0}[p]
            s1 = rng.uniform(0, 1, n)
            s2 = s1 + spread * rng.uniform(-1, 1, n)
            rows += [{"attribute": attribute, "pair_id": f"{attribute}-{i}", "metric": m, "score_1": a, "score_2": b}
                     for i, (a, b) in enumerate(zip(s1, s2))]
    return pd.DataFrame(rows), configs


def test_decompose_point_estimates_match_the_bias_table():
    scores, configs = synthetic_scores()
    out = decomposition.decompose(scores, configs, n_resamples=99, seed=0)
    assert list(out["attribute"]) == ["gender", "race", "average"]
    table = bias_table(scores, n_resamples=9).merge(configs, on="metric")
    for attribute in ("gender", "race"):
        expected = decomposition.two_way(table[table["attribute"] == attribute])
        row = out.set_index("attribute").loc[attribute]
        assert row["share_paradigm"] == pytest.approx(expected["share_paradigm"])
        assert row["share_paradigm_ci_low"] <= row["share_paradigm"] <= row["share_paradigm_ci_high"]
    assert (out["share_paradigm"] > 0.8).all() and (out["p_first_larger"] > 0.95).all()


def test_decompose_the_size_robust_bias_matches_its_whole_set_values():
    from metricbias.bias import reliability

    scores, configs = synthetic_scores()
    out = decomposition.decompose(scores, configs, n_resamples=49, seed=0, measure="size_robust_bias", cache=False)
    values = reliability.whole_set_values(scores).merge(configs, on="metric")
    for attribute in ("gender", "race"):
        expected = decomposition.two_way(values[values["attribute"] == attribute], "size_robust_bias")
        assert out.set_index("attribute").loc[attribute, "share_paradigm"] == pytest.approx(expected["share_paradigm"])
    assert out.attrs["measure"] == "size_robust_bias"
    with pytest.raises(ValueError, match="unknown measure"):
        decomposition.pair_term_matrix(scores, list(configs["metric"]), "w1")


def test_grid_configurations_hold_the_backbone_fixed():
    c = backbone_grid.configs()
    assert set(c["paradigm"]) == set(backbone_grid.PARADIGMS)
    for encoder, block in c.groupby("backbone"):
        assert set(block["runs_on"]) == {encoder, f"stsb-{encoder}", f"para-{encoder}"}
    decomposed = c[c["decomposed"]]
    assert len(decomposed) == 2 * len(backbone_grid.FAMILIES)
    assert "BERTScore-F-MPNet" in set(c["metric"]) and "BARTScore-R-MiniLM" in set(c["metric"])


def test_sun_claim_reads_the_released_table():
    from metricbias.book.reproduction import ch3_paradigm_claim

    rel = ch3_paradigm_claim.released_shares()
    assert 0 < rel["share_paradigm"] < 1 and 0 < rel["share_backbone"] < 1
    assert rel["n_configurations"] == 24  # the PLM-based rows of Table 6 (FrugalScore filed under Generation)
    scores, configs = synthetic_scores()
    claim = ch3_paradigm_claim.paradigm_claim(decomposition.decompose(scores, configs, n_resamples=19), 6)
    assert claim["source"].iloc[0] == ch3_paradigm_claim.RELEASED and len(claim) == 4
    assert claim["claim_holds"].iloc[1:].all()


def test_grid_lays_out_families_by_backbone_and_attribute():
    c = backbone_grid.configs()
    rows = []
    for i, m in enumerate(c["metric"]):
        for attribute in ("gender", "race"):
            rows.append({"attribute": attribute, "metric": m, "n_pairs": 10, "bias": float(i),
                         "bias_ci_low": i - 0.5, "bias_ci_high": i + 0.5, "stereotypical_difference": 0.0})
    wide = backbone_grid.grid(pd.DataFrame(rows))
    assert list(wide.index.get_level_values("paradigm").unique()) == list(backbone_grid.PARADIGMS)
    assert ("all-mpnet-base-v2", "average") in wide.columns
    first = c["metric"].iloc[0]  # BERTScore-F on MiniLM: bias 0 on both attributes
    assert wide.loc[("Matching", "BERTScore", "F"), ("all-MiniLM-L6-v2", "gender")] == "0.00 [-0.50, 0.50]"
    assert first == "BERTScore-F-MiniLM"


def test_size_robust_average_reads_the_average_row():
    from metricbias.book.reproduction import ch3_paradigm_claim

    scores, configs = synthetic_scores()
    out = decomposition.decompose(scores, configs, n_resamples=49, seed=0, measure="size_robust_bias", cache=False)
    found = ch3_paradigm_claim.size_robust_average(out)
    average = out.set_index("attribute").loc["average"]
    assert found["paradigm"] == average["share_paradigm"] and found["backbone_high"] == average["share_backbone_ci_high"]
    assert found["verdict"] == "holds"  # the paradigm's share is larger in every resample (p_first_larger > 0.975)
    empty = ch3_paradigm_claim.size_robust_average(out.iloc[0:0])
    assert empty["verdict"] == "not comparable" and np.isnan(empty["paradigm"])


def test_effect_directions_explain_a_reversed_average():
    """Planted grid: the backbone B is more biased on both attributes (+1, +3), the paradigm effect flips sign
    (M above R by 4 on a, R above M by 4 on b): per attribute the paradigm dominates, on the average it cancels
    (the appendix table of the directions)."""
    from metricbias.book.reproduction import ch3_paradigm_claim

    cells = {("M-A", "M", "A"): (6, 1), ("R-A", "R", "A"): (2, 5), ("M-B", "M", "B"): (7, 4), ("R-B", "R", "B"): (3, 8)}
    bias = pd.DataFrame([{"metric": m, "attribute": a, "bias": v[i]} for (m, _, _), v in cells.items()
                         for i, a in enumerate(["a", "b"])])
    availability = pd.DataFrame([{"metric": m, "paradigm": p, "backbone": b, "decomposed": True, "runs": True}
                                 for m, p, b in cells])
    d = ch3_paradigm_claim.effect_directions(bias, availability).set_index("attribute")
    assert d["top_paradigm"].tolist() == ["M", "R", "M"] and d["top_backbone"].tolist() == ["B", "B", "B"]
    assert d["paradigm_spread"].tolist() == [4.0, 4.0, 0.0] and d["backbone_spread"].tolist() == [1.0, 3.0, 2.0]


def test_decompose_gives_each_main_effect_as_a_difference_with_its_interval():
    """Planted: generation pairs differ by up to 1, matching by 0.1 (same backbone spread), so the paradigm gap
    (generation minus matching) is large and its interval lies above 0; the backbones differ only by noise."""
    from metricbias.book.reproduction import ch3_paradigm_claim

    scores, configs = synthetic_scores()
    out = decomposition.decompose(scores, configs, n_resamples=199, seed=0).set_index("attribute")
    table = bias_table(scores, n_resamples=9).merge(configs, on="metric")
    avg = table.groupby(["metric", "paradigm", "backbone"], as_index=False)["bias"].mean()
    means = avg.groupby("paradigm")["bias"].mean()
    row = out.loc["average"]
    assert (row["top_paradigm"], row["bottom_paradigm"]) == ("Generation", "Matching")
    assert row["gap_paradigm"] == pytest.approx(means["Generation"] - means["Matching"])
    assert 0 < row["gap_paradigm_ci_low"] < row["gap_paradigm"] < row["gap_paradigm_ci_high"]
    assert row["difference"] == pytest.approx(row["share_paradigm"] - row["share_backbone"])
    assert row["difference_ci_low"] > 0  # the paradigm's share is the larger in (nearly) every resample
    gaps = ch3_paradigm_claim.effect_gaps(out.reset_index())
    assert (gaps["paradigm_top"], gaps["paradigm_bottom"], gaps["paradigm_word"]) == ("generation", "matching",
                                                                                      "above 0")
    assert gaps["backbone"] == pytest.approx(row["gap_backbone"]) and gaps["backbone"] >= 0
    assert gaps["backbone_low"] <= gaps["backbone"] <= gaps["backbone_high"]
    assert ch3_paradigm_claim.effect_gaps(out.reset_index().iloc[0:0])["paradigm_word"] == "not comparable"


def test_the_verdicts_interval_agrees_with_the_resample_counts():
    """The share difference's interval excludes 0 exactly where at most 2.5% of the resamples fall on the other
    side (its ends are order statistics, not interpolations between them): on a strong paradigm effect (every row
    excluded) and on noise (none)."""
    strong, configs = synthetic_scores()
    noisy = strong.assign(score_2=strong["score_1"] + np.random.default_rng(1).normal(0, 0.3, len(strong)))
    seen = set()
    for scores in (strong, noisy):
        out = decomposition.decompose(scores, configs, n_resamples=199, seed=0, cache=False)
        for r in out.to_dict("records"):
            assert (r["difference_ci_low"] > 0) == (r["p_first_larger"] >= 0.975)
            assert (r["difference_ci_high"] < 0) == (r["p_first_larger"] <= 0.025)
            seen.add(r["difference_ci_low"] > 0 or r["difference_ci_high"] < 0)
    assert seen == {True, False}
