"""Figures shared by chapters (seaborn); each returns the matplotlib Axes."""

from __future__ import annotations

import pandas as pd


def bias_heatmap(frame: pd.DataFrame, *, index: str = "metric", columns: str = "attribute", values: str = "bias",
                 title: str | None = None, ax=None, fmt: str = ".2f", cmap: str = "rocket_r", center=None,
                 row_order=None, col_order=None):
    """Heatmap of a long table (one cell per ``index`` x ``columns``), annotated with ``values``."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    grid = frame.pivot_table(index=index, columns=columns, values=values, sort=False)
    if row_order is not None:
        grid = grid.reindex([r for r in row_order if r in grid.index])
    if col_order is not None:
        grid = grid[[c for c in col_order if c in grid.columns]]
    if ax is None:
        _, ax = plt.subplots(figsize=(1.2 * grid.shape[1] + 3, 0.32 * grid.shape[0] + 1.5))
    sns.heatmap(grid, annot=True, fmt=fmt, cmap=cmap, center=center, ax=ax, cbar_kws={"shrink": 0.6},
                annot_kws={"fontsize": 7})
    ax.set_xlabel("")
    ax.set_ylabel("")
    if title:
        ax.set_title(title)
    return ax


def stability_plot(summary: pd.DataFrame, *, attributes=None, measure_order=None, ax_width: float = 3.2):
    """Kendall τ (mean ± sd over seeds) against the sampling rate, one panel per attribute, one line per measure.

    ``summary`` is :func:`metricbias.bias.robustness.summarize` output. Returns the figure.
    """
    import matplotlib.pyplot as plt

    attributes = list(dict.fromkeys(summary["attribute"])) if attributes is None else list(attributes)
    measures = list(dict.fromkeys(summary["measure"])) if measure_order is None else list(measure_order)
    n_cols = min(4, len(attributes))
    n_rows = -(-len(attributes) // n_cols)
    fig, axes = plt.subplots(n_rows, n_cols, figsize=(ax_width * n_cols, 2.6 * n_rows), sharex=True, sharey=True,
                             squeeze=False)
    for ax, attribute in zip(axes.flat, attributes):
        block = summary[summary["attribute"] == attribute]
        for measure in measures:
            m = block[block["measure"] == measure].sort_values("rate")
            ax.errorbar(m["rate"] * 100, m["tau_mean"], yerr=m["tau_sd"].fillna(0), marker="o", ms=3, capsize=2,
                        label=measure)
        ax.set_title(attribute, fontsize=9)
        ax.grid(alpha=0.3)
    for ax in axes.flat[len(attributes):]:
        ax.set_visible(False)
    for ax in axes[-1]:
        ax.set_xlabel("sampling rate (%)")
    for ax in axes[:, 0]:
        ax.set_ylabel("Kendall τ vs full data")
    axes.flat[0].legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    return fig
