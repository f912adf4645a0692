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

def matching_map(mm, *, ax=None, title: str | None = None, cmap: str = "Blues"):
    """A :class:`metricbias.metrics.matching.MatchingMap` as a heatmap: candidate units x reference units.

    For BERTScore the cells are cosine similarities and each candidate token's greedy
    match (its row maximum) is outlined; for MoverScore the cells are transported mass.
    """
    import matplotlib.pyplot as plt
    import numpy as np
    import seaborn as sns
    from matplotlib.patches import Rectangle

    grid = pd.DataFrame(mm.matrix, index=mm.candidate_tokens, columns=mm.reference_tokens)
    if ax is None:
        _, ax = plt.subplots(figsize=(0.45 * grid.shape[1] + 2.5, 0.38 * grid.shape[0] + 1.2))
    sns.heatmap(grid, cmap=cmap, ax=ax, cbar_kws={"shrink": 0.6, "label": mm.value}, xticklabels=True,
                yticklabels=True)
    best = np.asarray(mm.matrix).argmax(axis=1)
    for row, col in enumerate(best):
        ax.add_patch(Rectangle((col, row), 1, 1, fill=False, edgecolor="crimson", lw=1.2))
    ax.set_xlabel("reference")
    ax.set_ylabel("candidate")
    ax.set_title(title or f"{mm.metric}: {mm.score:.3f}")
    return ax


def paradigm_scatter(frame: pd.DataFrame, *, x: str = "params_m", y: str = "avg_bias", hue: str = "family",
                     style: str = "source", ax=None, title: str | None = None):
    """Average bias against backbone size, one colour per metric family (Figure 4 of Sun et al.)."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    if ax is None:
        _, ax = plt.subplots(figsize=(8, 4.8))
    data = frame.dropna(subset=[x, y]).sort_values(x)
    sns.lineplot(data=data[data[style] == "released"], x=x, y=y, hue=hue, ax=ax, legend=False, alpha=0.5)
    sns.scatterplot(data=data, x=x, y=y, hue=hue, style=style, s=70, ax=ax)
    ax.set_xscale("log")
    ax.set_xlabel("backbone parameters (millions, log scale)")
    ax.set_ylabel("bias averaged over attributes")
    ax.legend(bbox_to_anchor=(1.02, 1), loc="upper left", fontsize=8)
    if title:
        ax.set_title(title)
    return ax


def adapter_curve(points: pd.DataFrame, trade: pd.DataFrame, *, title: str = "", width: float = 7):
    """An adapter's checkpoints, two panels one above the other: relative change of every series
    (``mitigation.evaluation.curve_series``) over steps, and quality change against gender bias cut
    (``mitigation.evaluation.trade_off``), each point labelled with its step."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    fig, axes = plt.subplots(2, 1, figsize=(width, 8))
    sns.lineplot(points, x="step", y="relative_change", hue="series", marker="o", ax=axes[0])
    axes[0].axhline(0, color="black", lw=0.8)
    axes[0].set(title=f"{title}: relative change from the original metric".lstrip(": "),
                ylabel="relative change")
    axes[0].legend(loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=1, frameon=False)
    axes[1].plot(trade["gender_bias_cut"], trade["quality_change"], marker="o")
    for step, x, y in zip(trade["step"], trade["gender_bias_cut"], trade["quality_change"]):
        axes[1].annotate(str(step), (x, y), xytext=(3, 3), textcoords="offset points", fontsize=9)
    axes[1].set(xlabel="gender bias cut (mean over the gender sets)", ylabel="relative quality change",
                title="trade-off (labels: training step)")
    fig.tight_layout()
    return fig


def adapter_matching_maps(maps: dict, *, width: float = 7.5):
    """BERTScore's matching maps before and after a debiasing adapter (``mitigation.evaluation.matching_maps``):
    one column per candidate; rows: original, with the adapter, and their difference."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    cands = ("candidate_1", "candidate_2")
    first = maps[("original", cands[0])]
    n_ref = len(first.reference_tokens)
    n_cand = max(len(maps[("original", c)].candidate_tokens) for c in cands)
    panel_h = 0.22 * n_cand + 1.4
    fig, axes = plt.subplots(3, 2, figsize=(width, 3 * panel_h + 0.5), squeeze=False)
    diffs = {c: maps[("adapter", c)].matrix - maps[("original", c)].matrix for c in cands}
    bound = max(float(abs(d).max()) for d in diffs.values()) or 1.0
    lo = min(float(m.matrix.min()) for m in maps.values())  # one scale for every similarity panel
    hi = max(float(m.matrix.max()) for m in maps.values())
    for col, cand in enumerate(cands):
        before, after = maps[("original", cand)], maps[("adapter", cand)]
        panels = ((before.matrix, f"original: F = {before.score:.4f}", "Blues", (lo, hi)),
                  (after.matrix, f"with adapter: F = {after.score:.4f}", "Blues", (lo, hi)),
                  (diffs[cand], "with adapter − original", "coolwarm", (-bound, bound)))
        for row, (matrix, title, cmap, (vmin, vmax)) in enumerate(panels):
            ax = axes[row, col]
            grid = pd.DataFrame(matrix, index=before.candidate_tokens, columns=before.reference_tokens)
            sns.heatmap(grid, ax=ax, cmap=cmap, vmin=vmin, vmax=vmax, cbar=col == 1, xticklabels=True,
                        yticklabels=True)
            ax.set_title(f"{cand.replace('_', ' ')}, {title}", fontsize=9)
            ax.tick_params(labelsize=9)
            ax.set_xticklabels(ax.get_xticklabels(), rotation=90)
        axes[0, col].set_ylabel("")
    fig.tight_layout()
    return fig
