"""Chapter 8's headlines: identical cells counted once, significant cells split by direction, BH beside BY, the
permutation floor as the code computes it; group preference against stereotype, summarised."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from metricbias.bias import scores as score_tables
from metricbias.bias.groups import CONTRAST
from metricbias.book.reproduction import ch8_trust


def _scores() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    ids = [f"p{i}" for i in range(30)]
    base = rng.normal(0, 1, 30)
    frames = []
    for dataset, metric, s1 in (("released", "A", base + 1), ("released", "B", base * 2),
                                ("live", "a", base + 1), ("live", "b", base + 1e-12)):
        frames.append(pd.DataFrame({"dataset": dataset, "attribute": "x", "pair_id": ids, "metric": metric,
                                    "score_1": s1, "score_2": base}))
    return pd.concat(frames, ignore_index=True)


def test_identical_cells_across_datasets_are_named_once():
    same = score_tables.identical_cells(_scores())
    # live a recomputes released A exactly; live b (a rounding away from base) is no other cell
    assert same[["dataset", "metric", "same_as_dataset", "same_as_metric", "pairs"]].values.tolist() == [
        ["live", "a", "released", "A", 30]]
    assert ch8_trust.duplicate_list(same) == "live a = released A (1 attribute)"


def test_the_grid_summary_counts_distinct_hypotheses_with_their_direction():
    p = [0.0001, 0.0001, 0.004, 0.03, 0.2, 0.0001]
    tests = pd.DataFrame({"dataset": ["r", "r", "r", "r", "r", "l"], "attribute": "x",
                          "metric": ["m1", "m2", "m3", "m4", "m5", "m1"],
                          "stereotypical_difference": [1.0, -2.0, 0.5, 1.0, -1.0, 1.0], "p_value": p})
    identical = pd.DataFrame({"dataset": ["l"], "attribute": ["x"], "metric": ["m1"], "same_as_dataset": ["r"],
                              "same_as_metric": ["m1"], "pairs": [10]})
    out = ch8_trust.grid_summary(tests, identical, n_resamples=9999)
    assert (out["cells"], out["duplicates"], out["distinct"]) == (6, 1, 5)
    bh = stats.false_discovery_control(p[:5], method="bh") < 0.05
    by = stats.false_discovery_control(p[:5], method="by") < 0.05
    assert out["bh_significant"] == int(bh.sum()) == 4  # q = .0003 .0003 .0067 .0375 .2
    assert (out["bh_stereotypical"], out["bh_anti"]) == (3, 1)
    assert out["by_significant"] == int(by.sum()) == 3  # BY multiplies by 1 + 1/2 + ... + 1/5 = 2.28
    assert (out["by_stereotypical"], out["by_anti"]) == (2, 1)
    assert out["floor"] == pytest.approx(2 / 10000)  # two-sided: 2 / (B + 1)
    assert out["at_floor"] == 2 and out["bonferroni"] == pytest.approx(0.01)  # the two p = 1e-4 (of 5 distinct)
    assert out["bonferroni_significant"] == 3


def test_the_group_summary_counts_shown_effects_and_the_pronoun_share():
    rows = []
    # the contrast |group| − |stereotype| with its own interval: m1 6 (4 to 8) above 0, m2 −2 (−4 to 0.5) spans 0
    for scores, metric, group, stereo, contrast in (
            ("released scores", "m1", (8.0, 7, 9), (2.0, 1, 3), (6.0, 4, 8)),
            ("released scores", "m2", (1.0, -1, 3), (3.0, 2, 4), (-2.0, -4, 0.5)),
            ("live scores", "m1", (4.0, 3, 5), (0.0, -1, 1), (4.0, -0.5, 6))):
        for effect, (estimate, low, high) in (("group", group), ("stereotype", stereo), (CONTRAST, contrast)):
            rows.append({"scores": scores, "attribute": "gender", "metric": metric, "effect": effect,
                         "estimate": estimate, "ci_low": low, "ci_high": high})
    table, findings = ch8_trust.group_summary(pd.DataFrame(rows))
    released = table.set_index("scores").loc["released scores"]
    assert released["configurations"] == 2 and released["group effect shown"] == 1
    assert released["stereotype effect shown"] == 2 and released["group larger"] == 1
    assert (released["+1 group preferred"], released["−1 group preferred"]) == (1, 0)  # m1's 8 (7 to 9); m2's spans 0
    assert findings["live_group_plus"] == 1 and findings["live_group_minus"] == 0
    assert released["pronoun share (median)"] == pytest.approx(np.median([8 / 10, 1 / 4]))
    assert findings["live_pronoun_share"] == pytest.approx(1.0) and findings["live_stereotype_shown"] == 0
    # the live pronoun effect is larger as a point value, but its contrast's interval reaches 0: not counted
    assert (findings["live_group_larger"], findings["live_stereotype_larger"], findings["live_contrasts"]) == (0, 0, 1)
    assert (findings["released_stereotype_larger"], findings["released_contrasts"]) == (0, 2)
    assert ch8_trust.pronoun_verdict(findings) == (
        "On the released scores the pronoun effect is more often the larger; on the live scores neither effect is "
        "more often the larger. Whether a pronoun or the stereotype drives the signed gender difference depends on the "
        "configurations.")
    assert ch8_trust.pronoun_verdict({**findings, "live_group_larger": 2}).startswith(
        "On both score sets the pronoun effect is more often the larger: much of the signed difference")


def test_robustness_findings_name_the_lowest_coverage_of_each_design():
    study = pd.DataFrame({"design": ["Eq. 1-rescaled", "Eq. 1-rescaled", "heavy tails", "heavy tails"],
                          "n": [20, 100, 20, 100], "measure": ["eq1_difference", "eq1_difference",
                                                               "size_robust_bias", "stereotypical_difference"],
                          "coverage": [0.87, 0.91, 0.93, 0.84], "mc_se": [0.017, 0.014, 0.013, 0.018]})
    out = ch8_trust.robustness_findings(pd.concat([study, pd.DataFrame(
        {"design": ["Eq. 2"] * 2, "n": [20, 100], "measure": ["eq2_rescaled"] * 2, "coverage": [0.72, 0.61],
         "mc_se": [0.02, 0.022]})], ignore_index=True))
    assert (out["eq2r_min"], out["eq2r_worst_n"], out["eq2r_max"]) == (0.61, 100, 0.72)
    assert (out["eq1_min"], out["eq1_min_se"], out["eq1_worst_n"], out["eq1_max"]) == (0.87, 0.017, 20, 0.91)
    assert (out["heavy_min"], out["heavy_worst_n"], out["heavy_worst_measure"]) == (0.84, 100,
                                                                                   "stereotypical difference")


def test_floor_findings_count_cells_above_below_and_within_their_floor():
    floor = pd.DataFrame({"eq2": [10.0, 4.0, 6.0, 5.0], "eq2_control": [5.0, 8.0, 6.0, np.nan],
                          "excess": [5.0, -4.0, 0.0, np.nan], "ci_low": [3.0, -6.0, -0.8, np.nan],
                          "ci_high": [7.0, -2.0, 0.9, np.nan], "p_value": [0.001, 0.002, 0.9, np.nan],
                          "n_control": [40, 40, 40, 0]})
    out = ch8_trust.floor_findings(floor)
    assert out["equivalent"] == 1 and out["margin"] == 1.0  # only the third's interval lies inside ±1
    assert ch8_trust.floor_findings(floor, margin=0.5)["equivalent"] == 0
    # BH over the three tests: q = .003, .003, .9
    assert (out["cells"], out["above"], out["below"], out["within"]) == (3, 1, 1, 1)
    assert out["ratio"] == pytest.approx(1.0) and out["controls"] == 40  # median of 2, 0.5, 1
    # no metric column: each cell its own cluster; a draw's median is one of the three ratios
    assert (out["ratio_ci_low"], out["ratio_ci_high"]) == pytest.approx((0.5, 2.0))
    with_metrics = ch8_trust.floor_findings(floor.assign(metric=["a", "b", "c", "d"]), n_resamples=999)
    assert with_metrics["ratio_ci_low"] <= with_metrics["ratio"] <= with_metrics["ratio_ci_high"]


def test_median_findings_resample_whole_metrics():
    """Two metrics whose cells sit at 1.0 and 3.0: resampling whole metrics, a draw's median is 1, 2 or 3, so the
    interval spans 1 to 3; every cell its own cluster would give a narrower one."""
    values = [1.0, 1.0, 1.0, 3.0, 3.0, 3.0, np.nan]
    out = ch8_trust.median_findings(values, list("aaabbbb"), "width", n_resamples=2000, seed=0)
    assert out["width"] == 2.0  # the NaN cell is left out, as the median leaves it
    assert (out["width_ci_low"], out["width_ci_high"]) == (1.0, 3.0)
    one = ch8_trust.median_findings([1.0, 2.0], ["a", "a"], "x")
    assert one["x"] == 1.5 and np.isnan(one["x_ci_low"])  # one metric: no interval over metrics


def test_simulation_findings_give_both_template_intervals_at_the_fewest_and_next_fewest_templates():
    from metricbias.bias.simulation import PANELS

    independent, templates = list(PANELS)
    rows = [{"panel": independent, "n": n, "templates": n, "measure": "stereotypical_difference",
             "interval": "BCa over pairs", "coverage": c, "mc_se": 0.01, "reps": 400} for n, c in ((20, 0.93), (100, 0.95))]
    rows += [{"panel": independent, "n": n, "templates": n, "measure": "eq2", "interval": "—", "relative_bias": b}
             for n, b in ((20, 0.4), (100, 0.1))]
    for interval, (c5, c25) in {"BCa over pairs": (0.8, 0.8), "two-level (conservative)": (0.97, 0.98),
                                "templates only": (0.84, 0.92), "templates, expanded": (0.91, 0.94)}.items():
        rows += [{"panel": templates, "n": 4 * k, "templates": k, "measure": "stereotypical_difference",
                  "interval": interval, "coverage": c, "mc_se": 0.011, "reps": 400} for k, c in ((5, c5), (25, c25))]
    null = pd.DataFrame({"n": [20, 100], "rejection_rate": [0.05, 0.04], "mc_se": [0.011, 0.011]})
    out = ch8_trust.simulation_findings(pd.DataFrame(rows), null)
    assert (out["tpo_fewest_templates"], out["tpo_at_fewest"], out["tpx_at_fewest"]) == (5, 0.84, 0.91)
    assert (out["tpo_few_templates"], out["tpo_at_few"], out["tpx_at_few"]) == (25, 0.92, 0.94)
    assert (out["tl_min"], out["tl_max"], out["tpx_in_target"]) == (0.97, 0.98, 1)
    assert out["eq2_bias_smallest"] == 0.4 and out["type1_max"] == 0.05


def _floor_case():
    """Three templates (CrowS-like pairs, each its own) and one control each, for a matching metric A and an n-gram
    metric B, every score on 0..1 so one Eq. 1 point is 0.01 of a score. Hand-worked |d| (points):
    A: attribute 50, 40, 30 against controls 10, 0, 10 -> excess 40, 40, 20;
    B: attribute 10, 0, 10 against controls 10, 5, 0 -> excess 0, -5, 10; A − B per template: 40, 45, 10."""
    ids = ["p1", "p2", "p3"]
    rows = {"A": ([(0.0, 0.5), (0.2, 0.6), (1.0, 0.7)], [(0.1, 0.2), (0.3, 0.3), (0.5, 0.6)]),
            "B": ([(0.0, 0.1), (0.5, 0.5), (1.0, 0.9)], [(0.2, 0.3), (0.4, 0.45), (0.6, 0.6)])}
    attr, ctrl = [], []
    for metric, (pairs, controls) in rows.items():
        attr += [{"attribute": "race", "metric": metric, "pair_id": i, "score_1": a, "score_2": b}
                 for i, (a, b) in zip(ids, pairs)]
        ctrl += [{"attribute": "race", "metric": metric, "pair_id": f"{i}|control", "source": i, "score_1": a,
                  "score_2": b} for i, (a, b) in zip(ids, controls)]
    return pd.DataFrame(attr), pd.DataFrame(ctrl)


def test_template_excess_gives_each_templates_excess_on_the_cells_scale():
    from metricbias.bias.noise_floor import noise_floor, template_excess

    attr, ctrl = _floor_case()
    excess = template_excess(attr, ctrl).set_index(["metric", "template"])["excess"]
    assert excess.loc["A"].to_numpy() == pytest.approx([40, 40, 20])
    assert excess.loc["B"].to_numpy() == pytest.approx([0, -5, 10])
    d = template_excess(attr, ctrl).set_index(["metric", "template"])["attribute_d"]
    assert d.loc["A"].to_numpy() == pytest.approx([50, 40, 30]) and d.loc["B"].to_numpy() == pytest.approx([10, 0, 10])
    # one pair per template: the cell's excess is the mean of its templates', as noise_floor gives it
    floor = noise_floor(attr, ctrl, n_resamples=99).set_index("metric")["excess"]
    assert floor["A"] == pytest.approx(100 / 3) and floor["B"] == pytest.approx(5 / 3)


def test_the_plm_against_ngram_gap_over_the_floor_is_paired_over_templates():
    from metricbias.bias.noise_floor import template_excess

    attr, ctrl = _floor_case()
    gaps = ch8_trust.paradigm_floor_gap(template_excess(attr, ctrl), {"A": "Matching", "B": "n-gram"},
                                        n_resamples=1999)
    row = gaps.iloc[0]
    assert row["templates"] == 3 and row["difference"] == pytest.approx(95 / 3)  # (40 + 45 + 10) / 3
    assert 10 <= row["ci_low"] <= row["difference"] <= row["ci_high"] <= 45  # within the per-template values
    # with three templates the expanded interval reaches the smallest template's difference, 10 > 0: holds
    assert row["ci_low"] == pytest.approx(10) and row["verdict"] == "holds"
    found = ch8_trust.floor_gap_findings(gaps, focus="race")
    assert (found["holds"], found["undecided"], found["attributes"]) == (1, 0, 1)
    assert found["race"] == pytest.approx(95 / 3) and found["race_verdict"] == row["verdict"]
    # without the floor, on the same templates: A's attribute |d| 50, 40, 30 minus B's 10, 0, 10 -> 40, 40, 20
    raw = ch8_trust.paradigm_floor_gap(template_excess(attr, ctrl), {"A": "Matching", "B": "n-gram"},
                                       value="attribute_d", n_resamples=999).iloc[0]
    assert raw["templates"] == 3 and raw["difference"] == pytest.approx(100 / 3) and raw["verdict"] == "holds"
    # a configuration of neither group (static embedding) is left out of both sides
    assert ch8_trust.paradigm_floor_gap(template_excess(attr, ctrl), {"A": "Matching", "B": "static embedding"},
                                        n_resamples=99)["templates"].iloc[0] == 0
