"""Figures sized for the book's page: at most 7.5 inches wide, fonts of at least 9 pt, no "-0.00" labels."""

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from metricbias.book import plots  # noqa: E402

LONG = pd.DataFrame({"metric": ["a", "a", "b", "b"] * 2, "attribute": ["x", "y"] * 4,
                     "measure": ["m1"] * 4 + ["m2"] * 4, "value": [1.0, -0.001, 2.5, 3.0, 4.0, 5.0, 6.0, 7.0],
                     "other": [0.1, 0.2, 0.3, 0.4] * 2})


def _texts(fig):
    return [t for ax in fig.axes for t in ax.texts]


def test_heatmap_panels_one_per_row_or_facets():
    import matplotlib.pyplot as plt

    fig = plots.heatmap_panels(LONG[LONG.measure == "m1"], ["value", {"values": "other", "title": "O", "fmt": ".1f"}],
                               row_order=["b", "a"])
    try:
        assert fig.get_size_inches()[0] <= 7.5
        heatmaps = [ax for ax in fig.axes if ax.get_title()]
        assert [ax.get_title() for ax in heatmaps] == ["value", "O"]
        labels = [t.get_text() for t in heatmaps[0].texts]
        assert labels == ["2.50", "3.00", "1.00", "0.00"]  # rows in row_order; -0.001 is written 0.00
        assert min(t.get_fontsize() for t in _texts(fig)) >= plots.MIN_FONT
    finally:
        plt.close(fig)
    fig = plots.heatmap_panels(LONG, ["m2", "m1"], facet="measure", col_orders={"m2": ["y", "x"]}, ncols=2)
    try:
        heatmaps = [ax for ax in fig.axes if ax.get_visible() and ax.get_title()]
        assert [ax.get_title() for ax in heatmaps] == ["m2", "m1"]
        assert [t.get_text() for t in heatmaps[0].get_xticklabels()] == ["y", "x"]
        assert [t.get_text() for t in heatmaps[0].texts][:2] == ["5.00", "4.00"]
    finally:
        plt.close(fig)


def test_annotated_heatmap_and_interval_plot_fit_the_page():
    import matplotlib.pyplot as plt

    grid = pd.DataFrame([[0.5, np.nan], [-0.004, 2.0]], index=["r1", "r2"], columns=["c1", "c2"])
    fig = plots.annotated_heatmap(grid, missing_color="#d9d9d9")
    try:
        assert fig.get_size_inches()[0] <= 7.5
        assert [t.get_text() for t in fig.axes[0].texts] == ["0.50", "0.00", "2.00"]  # NaN cell left to the hatch
        assert fig.axes[0].patch.get_hatch() == "///"
    finally:
        plt.close(fig)
    frame = pd.DataFrame({"metric": ["a", "b", "a", "b"], "attribute": ["x", "x", "y", "y"],
                          "value": [1.0, 2.0, 3.0, 4.0], "ci_low": [0.5, 1.5, 2.5, 3.5], "ci_high": [1.5, 2.5, 3.5, 4.5]})
    fig = plots.forest_plot(frame, order=["b", "a"])
    try:
        ax = fig.axes[0]
        assert [t.get_text() for t in ax.get_yticklabels()] == ["b", "a"]
        assert fig.get_size_inches()[0] <= 7.5
        assert min(t.get_fontsize() for t in ax.get_yticklabels()) >= plots.MIN_FONT
    finally:
        plt.close(fig)


def test_stability_plot_in_two_columns_keeps_every_x_axis():
    import matplotlib.pyplot as plt

    summary = pd.DataFrame([{"attribute": a, "rate": r, "measure": "eq2", "tau_mean": 0.9, "tau_sd": 0.01}
                            for a in ("p", "q", "r") for r in (0.3, 0.8)])
    fig = plots.stability_plot(summary, n_cols=2, ax_width=3.5)
    try:
        assert fig.get_size_inches()[0] == pytest.approx(7.0)
        visible = [ax for ax in fig.axes if ax.get_visible()]
        assert len(visible) == 3
        # the panel above the empty slot carries the x label
        assert [ax.get_xlabel() for ax in visible] == ["", "sampling rate (%)", "sampling rate (%)"]
    finally:
        plt.close(fig)


def test_a_wide_heatmap_becomes_panels_on_one_colour_scale_readable_on_a_phone():
    import matplotlib.pyplot as plt

    grid = pd.DataFrame(np.arange(26, dtype=float).reshape(2, 13) - 5, index=["r1", "r2"],
                        columns=[f"c{i}" for i in range(13)])
    fig = plots.annotated_heatmap(grid, max_columns=5)
    try:
        assert fig.get_size_inches()[0] == plots.HEATMAP_WIDTH  # ~500 px: a phone shrinks it by a quarter at most
        panels = [ax for ax in fig.axes if ax.texts]
        assert [len(ax.get_xticklabels()) for ax in panels] == [5, 5, 3]
        assert [t.get_text() for t in panels[2].texts] == ["5.00", "6.00", "7.00", "18.00", "19.00", "20.00"]
        scales = {ax.collections[0].get_clim() for ax in panels}
        assert scales == {(-20.0, 20.0)}  # one scale, centred on 0, reaching the largest |value - 0|
    finally:
        plt.close(fig)


def test_bias_heatmap_is_heatmap_wide_with_values():
    import matplotlib.pyplot as plt

    ax = plots.bias_heatmap(LONG[LONG.measure == "m1"], values="value")
    try:
        assert ax.figure.get_size_inches()[0] == plots.HEATMAP_WIDTH
        assert [t.get_text() for t in ax.texts] == ["1.00", "0.00", "2.50", "3.00"]
        assert min(t.get_fontsize() for t in ax.texts) >= plots.MIN_FONT
    finally:
        plt.close(ax.figure)


def test_top_k_curves_one_panel_per_metric_both_conditions():
    import matplotlib.pyplot as plt

    curve = pd.DataFrame([{"metric": m, "condition": c, "k": k, "spearman": 0.1 * k - (c == "swap") * 0.05}
                          for m in ["BLEU", "chrF", "WMD"] for c in ["origin", "swap"] for k in [3, 4, 5]])
    fig = plots.top_k_curves(curve)
    try:
        panels = [ax for ax in fig.axes if ax.get_title()]
        assert [ax.get_title() for ax in panels] == ["BLEU", "chrF", "WMD"]
        assert all(len(ax.get_lines()) >= 2 for ax in panels)  # origin and swap (and the zero line)
        assert fig.get_size_inches()[0] <= 7.5
    finally:
        plt.close(fig)


def test_paper_vs_ours_facets_name_our_stand_in():
    import matplotlib.pyplot as plt

    compared = pd.DataFrame({"paper_metric": ["BERTScore"] * 3, "metric": ["BERTScore-MiniLM"] * 3,
                             "paper": [0.1, 0.5, -0.2], "ours": [0.2, 0.4, -0.1], "level": ["word"] * 3})
    fig = plots.paper_vs_ours_facets(compared)
    try:
        assert [ax.get_title() for ax in fig.axes if ax.get_title()] == ["BERTScore\nours: BERTScore-MiniLM"]
    finally:
        plt.close(fig)


def test_the_trade_off_names_only_the_first_and_last_step():
    import matplotlib.pyplot as plt

    points = pd.DataFrame({"step": [0, 0, 10, 10, 20, 20], "series": ["bias: a", "quality: b"] * 3,
                           "relative_change": [0, 0, -0.5, 0.01, -0.6, 0.0]})
    trade = pd.DataFrame({"step": [0, 10, 20], "gender_bias_cut": [0, 0.5, 0.6], "quality_change": [0, 0.01, 0.0]})
    fig = plots.adapter_curve(points, trade, title="M")
    try:
        assert [t.get_text() for t in fig.axes[1].texts] == ["step 0 (original)", "step 20"]
        assert any(ax.get_ylabel() == "training step" for ax in fig.axes)  # the colour bar
    finally:
        plt.close(fig)


def test_a_long_grid_of_stars_drawn_on_its_side_fits_one_screen():
    """Chapter 5's effect sizes: 40 tests × 21 metrics. Drawn as 40 rows it was four screens tall (3,400 px); on
    its side it is one panel, at most 8.5 × 7 inches, with every test and every metric named."""
    import matplotlib.pyplot as plt

    rng = np.random.default_rng(0)
    tests = [f"T{i} ({level})" for i in range(20) for level in ("word", "sent")]
    metrics = [f"metric {j}" for j in range(21)]
    d = pd.DataFrame(rng.normal(0, 0.6, (40, 21)), index=tests, columns=metrics)
    stars = d.map(lambda v: "*" if abs(v) > 1 else "")
    fig = plots.annotated_heatmap(d, stars, transpose=True, missing_color="#d9d9d9")
    try:
        width, height = fig.get_size_inches()
        assert width <= 8.5 and height <= 7.0
        [ax] = [a for a in fig.axes if a.get_xticklabels() and a.get_xticklabels()[0].get_text()]
        assert [t.get_text() for t in ax.get_xticklabels()] == tests
        assert [t.get_text() for t in ax.get_yticklabels()] == metrics
        assert sorted({t.get_text() for t in ax.texts}) == ["", "*"]
    finally:
        plt.close(fig)


def test_adapter_matching_maps_in_two_rows_fit_a_screen():
    import matplotlib.pyplot as plt

    from metricbias.metrics.matching import MatchingMap

    reference = "the developer argued with the designer because the developer did not like the design".split()
    maps = {}
    for kind, shift in (("original", 0.0), ("adapter", 0.01)):
        for cand, word in (("candidate_1", "he"), ("candidate_2", "she")):
            tokens = reference[:7] + [word] + reference[9:]
            matrix = np.full((len(tokens), len(reference)), 0.5 + shift)
            maps[(kind, cand)] = MatchingMap("BERTScore", tokens, reference, matrix, 0.9 + shift, "cosine")
    fig = plots.adapter_matching_maps(maps)
    try:
        assert fig.get_size_inches()[1] <= 8.5  # it was 13 inches (1,318 px) in three rows
        titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
        assert titles == ["candidate 1, original", "candidate 2, original", "candidate 1, change: F 0.9000 → 0.9100",
                          "candidate 2, change: F 0.9000 → 0.9100"]
    finally:
        plt.close(fig)


def test_coverage_panels_in_two_columns_with_one_legend_and_readable_axes():
    import matplotlib.pyplot as plt

    rows = [{"panel": panel, "interval": interval, "n": n, "coverage": 0.95, "mc_se": 0.005}
            for panel, intervals in (("independent pairs: stereotypical difference", ["BCa over pairs"]),
                                     ("independent pairs: size robust bias", ["BCa over pairs"]),
                                     ("templates of 4 pairs: stereotypical difference",
                                      ["BCa over pairs", "two-level", "whole templates"]),
                                     ("templates of 4 pairs: size robust bias",
                                      ["BCa over pairs", "two-level", "whole templates"]))
            for interval in intervals for n in (20, 50, 100, 400)]
    fig = plots.coverage_plot(pd.DataFrame(rows), height=2.8)
    try:
        panels = [ax for ax in fig.axes if ax.get_visible()]
        assert len(panels) == 4 and fig.get_size_inches()[1] <= 7
        assert all(len(line) <= 40 for ax in panels for line in ax.get_title().split("\n"))
        assert [t.get_text() for t in panels[0].get_xticklabels()] == ["20", "50", "100", "400"]
        [legend] = fig.legends
        assert [t.get_text() for t in legend.get_texts()] == ["BCa over pairs", "two-level", "whole templates"]
    finally:
        plt.close(fig)
