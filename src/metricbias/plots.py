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
