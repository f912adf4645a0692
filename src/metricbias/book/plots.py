"""Figures shared by chapters (seaborn); each returns the matplotlib Axes."""

from __future__ import annotations

import pandas as pd


def bias_heatmap(frame: pd.DataFrame, *, index: str = "metric", columns: str = "attribute", values: str = "bias",
                 title: str | None = None, ax=None, fmt: str = ".2f", cmap: str = "rocket_r", center=None,
                 row_order=None, col_order=None, annot_size: float | None = None, row_height: float = 0.26):
    """Heatmap of a long table (one cell per ``index`` x ``columns``), annotated with ``values`` (``fmt`` at
    ``annot_size`` points, default :data:`MIN_FONT`). Without ``ax``, a figure :data:`HEATMAP_WIDTH` wide with rows
    ``row_height`` inches tall (readable on a phone). Returns the Axes."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    annot_size = MIN_FONT if annot_size is None else annot_size
    grid = frame.pivot_table(index=index, columns=columns, values=values, sort=False)
    if row_order is not None:
        grid = grid.reindex([r for r in row_order if r in grid.index])
    if col_order is not None:
        grid = grid[[c for c in col_order if c in grid.columns]]
    if ax is None:
        _, ax = plt.subplots(figsize=(HEATMAP_WIDTH, row_height * grid.shape[0] + 1.6))
    sns.heatmap(grid, annot=_annotations(grid, fmt), fmt="", cmap=cmap, center=center, ax=ax,
                cbar_kws={"shrink": 0.6, "pad": 0.02}, annot_kws={"fontsize": annot_size})
    ax.set_xlabel("")
    ax.set_ylabel("")
    ax.tick_params(labelsize=annot_size)
    ax.set_xticklabels(ax.get_xticklabels(), rotation=30, ha="right")
    if title:
        ax.set_title(title, fontsize=annot_size + 1)
    return ax


def stability_plot(summary: pd.DataFrame, *, attributes=None, measure_order=None, ax_width: float = 3.2,
                   n_cols: int = 4):
    """Kendall τ (mean ± sd over seeds) against the sampling rate, one panel per attribute, one line per measure.

    ``summary`` is :func:`metricbias.bias.robustness.summarize` output; at most ``n_cols`` panels per row.
    Returns the figure.
    """
    import matplotlib.pyplot as plt

    attributes = list(dict.fromkeys(summary["attribute"])) if attributes is None else list(attributes)
    measures = list(dict.fromkeys(summary["measure"])) if measure_order is None else list(measure_order)
    n_cols = min(n_cols, len(attributes))
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
    for ax in axes[-1]:
        ax.set_xlabel("sampling rate (%)")
    for i in range(len(attributes), axes.size):  # an empty slot: the panel above it carries the x axis
        axes.flat[i].set_visible(False)
        if i >= n_cols:
            axes.flat[i - n_cols].xaxis.set_tick_params(labelbottom=True)
            axes.flat[i - n_cols].set_xlabel("sampling rate (%)")
    for ax in axes[:, 0]:
        ax.set_ylabel("Kendall τ vs full data")
    axes.flat[0].legend(fontsize=9, loc="lower right")
    fig.tight_layout()
    return fig


#: the smallest font a figure of the book uses, in points at the page's width (~7 inches)
MIN_FONT = 9
PAGE_WIDTH = 7.0
#: a heatmap's width in inches: about 500 px, so that on a phone (a column of ~380 px) its 9-point cell labels
#: shrink by a quarter at most, not by half as a page-wide figure's do
HEATMAP_WIDTH = 5.0
#: the most columns one heatmap panel holds at that width (wider grids become panels, one above the other)
MAX_COLUMNS = 10
#: the tallest a figure is shown, in pixels of its PNG (a laptop screen's height less the browser's bars)
MAX_HEIGHT_PX = 816


def capped_dpi(fig, dpi: float | None = None, *, max_px: int = MAX_HEIGHT_PX, pad_inches: float = 0.1) -> float:
    """The dpi at which ``fig``, saved with ``bbox_inches="tight"`` (as a page shows it), is at most ``max_px`` tall:
    ``dpi`` (default: the figure's) or less, everything in the figure scaled alike."""
    dpi = float(fig.dpi if dpi is None else dpi)
    height = fig.get_tightbbox(fig.canvas.get_renderer()).height + 2 * pad_inches
    # one pixel of margin: the PNG's height is the bounding box's, rounded up
    return dpi if height * dpi <= max_px - 1 else (max_px - 1) / height


def fit_height(fig, *, max_px: int = MAX_HEIGHT_PX):
    """Lower ``fig``'s dpi so that the page's PNG of it (``bbox_inches="tight"``) is at most ``max_px`` tall (the
    figure's layout is kept; text and lines shrink with it). Returns ``fig``."""
    fig.set_dpi(capped_dpi(fig, max_px=max_px))
    return fig


def _annotations(grid: pd.DataFrame, fmt: str):
    """Cell labels of a numeric grid in ``fmt``, with a zero written without a sign ("-0.00" and "+0.00" as
    "0.00", as the book's tables do)."""
    def one(v):
        if pd.isna(v):
            return ""
        text = format(v, fmt)
        return text[1:] if text[:1] in "+-" and float(text) == 0 else text

    return grid.apply(lambda col: col.map(one)).to_numpy()


def heatmap_panels(frame: pd.DataFrame, panels: list, *, facet: str | None = None, values: str = "value",
                   index: str = "metric", columns: str = "attribute", row_order=None, col_order=None,
                   col_orders: dict | None = None, ncols: int = 1, width: float | None = None, fmt: str = ".2f",
                   cmap: str = "rocket_r", center=None, row_height: float = 0.24, annot_size: float = MIN_FONT):
    """Annotated heatmaps of one long table, ``ncols`` panels per row (one per row by default), sized for the page.

    A panel is a string or a dict. Without ``facet``, a string names the column of ``frame`` the panel shows;
    with ``facet``, it names the value of column ``facet`` whose rows the panel shows (column ``values``).
    A dict gives that as ``"values"`` or ``"key"``, and may override ``title`` (default: the string),
    ``cmap``, ``center``, ``fmt`` and ``col_order``. ``col_orders`` maps a facet key to its column order.
    Panels in a row share the row labels; a colour bar is drawn only with one panel per row (the cells are
    annotated). ``width``: :data:`HEATMAP_WIDTH` with one panel per row, else :data:`PAGE_WIDTH`. Returns the figure.
    """
    import matplotlib.pyplot as plt
    import seaborn as sns

    width = width or (HEATMAP_WIDTH if ncols == 1 else PAGE_WIDTH)

    specs, grids = [], []
    for p in panels:
        p = dict(p) if isinstance(p, dict) else ({"key": p} if facet else {"values": p})
        name = p.get("key", p.get("values"))
        data = frame[frame[facet] == name] if facet else frame
        grid = data.pivot_table(index=index, columns=columns, values=values if facet else p["values"], sort=False)
        rows = row_order if row_order is not None else list(grid.index)
        cols = p.get("col_order", (col_orders or {}).get(name, col_order))
        cols = cols if cols is not None else list(grid.columns)
        grids.append(grid.reindex([r for r in rows if r in grid.index])[[c for c in cols if c in grid.columns]])
        specs.append({"title": name, "cmap": cmap, "center": center, "fmt": fmt, **p})
    n_rows = -(-len(specs) // ncols)
    heights = [row_height * max(g.shape[0] for g in grids[i * ncols:(i + 1) * ncols]) + 1.3 for i in range(n_rows)]
    fig, axes = plt.subplots(n_rows, ncols, figsize=(width, sum(heights)), squeeze=False,
                             gridspec_kw={"height_ratios": heights})
    for i, (ax, spec, grid) in enumerate(zip(axes.flat, specs, grids)):
        sns.heatmap(grid, annot=_annotations(grid, spec["fmt"]), fmt="", cmap=spec["cmap"], center=spec["center"],
                    ax=ax, cbar=ncols == 1, cbar_kws={"shrink": 0.8, "pad": 0.02}, annot_kws={"fontsize": annot_size},
                    yticklabels=i % ncols == 0)
        ax.set_xlabel("")
        ax.set_ylabel("")
        ax.tick_params(labelsize=annot_size)
        ax.set_xticklabels(ax.get_xticklabels(), rotation=30, ha="right")
        ax.set_title(spec["title"], fontsize=annot_size + 1)
    for ax in axes.flat[len(specs):]:
        ax.set_visible(False)
    fig.tight_layout()
    return fig


def annotated_heatmap(grid: pd.DataFrame, labels: pd.DataFrame | None = None, *, title: str | None = None,
                      cmap: str = "vlag", center=0, vmin=None, vmax=None, fmt: str = ".2f",
                      width: float = HEATMAP_WIDTH, row_height: float = 0.26, annot_size: float = MIN_FONT,
                      cbar_label: str | None = None, missing_color: str | None = None,
                      max_columns: int = MAX_COLUMNS, transpose: bool = False):
    """One heatmap of a wide grid, annotated with ``labels`` (text, same shape) or the values; rows as tall as a
    line of text. Undefined (NaN) cells are left blank, or filled with ``missing_color``. A grid of more than
    ``max_columns`` columns is drawn as panels of at most that many, one above the other, on one colour scale, so
    that the cells stay readable on a phone. ``transpose``: a long grid of short labels (stars) drawn on its side,
    one column per row of ``grid``, as wide as the page rather than several screens tall. Returns the figure."""
    import matplotlib.pyplot as plt
    import numpy as np
    import seaborn as sns

    if transpose:
        grid, labels = grid.T, (labels.T if labels is not None else None)
        max_columns = max(max_columns, grid.shape[1])
        width = max(width, min(PAGE_WIDTH + 1.5, 2.6 + 0.16 * grid.shape[1]))
        row_height = min(row_height, 0.24)
    annot = labels.to_numpy() if labels is not None else _annotations(grid, fmt)
    chunks = [list(range(i, min(i + max_columns, grid.shape[1]))) for i in range(0, max(grid.shape[1], 1), max_columns)]
    values = grid.to_numpy(dtype=float)
    finite = values[np.isfinite(values)]
    if len(chunks) > 1 and finite.size:  # one colour scale over the panels
        if center is not None and vmin is None and vmax is None:
            reach = float(np.max(np.abs(finite - center)))
            vmin, vmax = center - reach, center + reach
        vmin = float(finite.min()) if vmin is None else vmin
        vmax = float(finite.max()) if vmax is None else vmax
    height = row_height * grid.shape[0] + 1.6
    fig, axes = plt.subplots(len(chunks), 1, figsize=(width, height * len(chunks)), squeeze=False)
    for ax, cols in zip(axes[:, 0], chunks):
        if missing_color:  # NaN cells show the axes' background: grey and hatched, unlike any colour of the map
            ax.patch.set_facecolor(missing_color)
            ax.patch.set_hatch("///")
            ax.patch.set_edgecolor("#a0a0a0")
        part = grid.iloc[:, cols]
        sns.heatmap(part, annot=annot[:, cols], fmt="", cmap=cmap, center=center, vmin=vmin,
                    vmax=vmax, ax=ax, annot_kws={"fontsize": annot_size},
                    cbar_kws={"shrink": 0.8, "pad": 0.02, **({"label": cbar_label} if cbar_label else {})})
        ax.set_xlabel("")
        ax.set_ylabel("")
        ax.tick_params(labelsize=annot_size)
        ax.set_yticks(np.arange(part.shape[0]) + 0.5, part.index, rotation=0)  # every row named, none skipped
        ax.set_xticks(np.arange(part.shape[1]) + 0.5, part.columns, rotation=90 if len(cols) > 6 else 30,
                      ha="center" if len(cols) > 6 else "right")
    if title:
        axes[0, 0].set_title(title, fontsize=annot_size + 1)
    fig.tight_layout()
    return fig


def forest_plot(frame: pd.DataFrame, *, y: str = "metric", hue: str = "attribute", value: str = "value",
                  low: str = "ci_low", high: str = "ci_high", order=None, hue_order=None, xlabel: str = "",
                  title: str | None = None, width: float = PAGE_WIDTH, row_height: float = 0.34):
    """Values with their intervals, one line per ``y`` and one dodged marker per ``hue`` (a forest plot).
    Returns the figure."""
    import matplotlib.pyplot as plt
    import numpy as np

    order = list(dict.fromkeys(frame[y])) if order is None else [o for o in order if o in set(frame[y])]
    hue_order = list(dict.fromkeys(frame[hue])) if hue_order is None else list(hue_order)
    fig, ax = plt.subplots(figsize=(width, row_height * len(order) + 1.4))
    step = 0.8 / max(len(hue_order), 1)
    for k, h in enumerate(hue_order):
        part = frame[frame[hue] == h].set_index(y).reindex(order)
        pos = np.arange(len(order)) - 0.4 + step * (k + 0.5)
        ax.errorbar(part[value], pos, xerr=[part[value] - part[low], part[high] - part[value]], fmt="o", ms=3.5,
                    capsize=2, lw=1, label=h)
    ax.set_yticks(np.arange(len(order)), order)
    ax.invert_yaxis()
    ax.grid(axis="x", alpha=0.3)
    ax.set_xlabel(xlabel)
    ax.tick_params(labelsize=MIN_FONT)
    ax.legend(fontsize=MIN_FONT, title=hue, title_fontsize=MIN_FONT, loc="lower right")
    if title:
        ax.set_title(title, fontsize=MIN_FONT + 1)
    fig.tight_layout()
    return fig


def paper_vs_ours_facets(compared: pd.DataFrame, *, x: str = "paper", y: str = "ours", col: str = "paper_metric",
                  ours: str | None = "metric", hue: str = "level", xlabel: str = "paper", ylabel: str = "ours",
                  col_wrap: int = 3, width: float = PAGE_WIDTH):
    """A paper's numbers against ours, one facet per ``col`` (e.g. metric), reference lines at 0. A facet is titled
    with its ``col`` value and, when ``ours`` names a column, the configuration of ours it is compared with
    ("BERTScore / ours: BERTScore-MiniLM"): our stand-ins run on other backbones. Returns the figure."""
    import seaborn as sns

    if ours is not None and ours in compared:
        titles = compared[col].astype(str) + "\nours: " + compared[ours].astype(str)
        compared = compared.assign(**{col: titles})
    height = width / min(col_wrap, max(compared[col].nunique(), 1))
    grid = sns.relplot(data=compared, x=x, y=y, col=col, col_wrap=col_wrap, hue=hue, height=height * 0.92,
                       aspect=1, facet_kws={"sharex": False, "sharey": False})
    for ax in grid.axes.flat:
        ax.axhline(0, color="grey", lw=0.5)
        ax.axvline(0, color="grey", lw=0.5)
        ax.tick_params(labelsize=MIN_FONT)
    grid.set_axis_labels(xlabel, ylabel, fontsize=MIN_FONT + 1)
    grid.set_titles("{col_name}", size=MIN_FONT + 1)
    if grid.legend is not None:  # under the facets, so that they keep the page's width
        sns.move_legend(grid, "upper center", bbox_to_anchor=(0.5, 0.0), ncol=4, fontsize=MIN_FONT,
                        title_fontsize=MIN_FONT, frameon=False)
    grid.figure.tight_layout()
    return grid.figure


def top_k_curves(curve: pd.DataFrame, *, x: str = "k", y: str = "spearman", facet: str = "metric",
                 condition: str = "condition", col_wrap: int = 4, width: float = PAGE_WIDTH,
                 ylabel: str = "Spearman on the top-k systems", xlabel: str = "k (top systems by human score)"):
    """Curves of ``y`` over ``x`` (``metaeval.analysis.top_k``), one small panel per ``facet`` value (a metric) with
    one line per ``condition`` (origin solid, swap dashed), on shared axes: a metric's two curves are compared in
    its own panel instead of among every metric's. Returns the figure."""
    import seaborn as sns

    n = max(curve[facet].nunique(), 1)
    cols = min(col_wrap, n)
    grid = sns.relplot(data=curve, x=x, y=y, col=facet, col_wrap=cols, hue=condition, style=condition,
                       kind="line", height=width / cols * 0.9, aspect=1.1, dashes={"origin": "", "swap": (4, 2)},
                       facet_kws={"sharex": True, "sharey": True})
    for ax in grid.axes.flat:
        ax.axhline(0, color="grey", lw=0.5)
        ax.tick_params(labelsize=MIN_FONT)
    grid.set_titles("{col_name}", size=MIN_FONT + 1)
    grid.set_axis_labels("", "")
    grid.figure.supxlabel(xlabel, fontsize=MIN_FONT + 1)
    grid.figure.supylabel(ylabel, fontsize=MIN_FONT + 1)
    if grid.legend is not None:  # under the panels, so that they keep the page's width
        sns.move_legend(grid, "upper center", bbox_to_anchor=(0.5, 0.0), ncol=2, fontsize=MIN_FONT, title=None,
                        frameon=False)
    grid.figure.set_size_inches(width, grid.figure.get_size_inches()[1])  # relplot widened it for its legend
    grid.figure.tight_layout()
    return grid.figure


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


def matching_maps(maps: dict, metric: str, *, label: str | None = None, width: float = 7, height: float = 4.25):
    """Both candidates' matching maps of one metric, one per row. ``maps`` maps ``(metric, "candidate_1" |
    "candidate_2")`` to ``(MatchingMap, score)`` (:func:`metricbias.book.reproduction.ch3_figure3.figure3_maps`)."""
    import matplotlib.pyplot as plt

    keys = [k for k in maps if k[0] == metric]
    fig, axes = plt.subplots(len(keys), 1, figsize=(width, height * len(keys)), squeeze=False)
    for ax, key in zip(axes[:, 0], keys):
        mm, score = maps[key]
        matching_map(mm, ax=ax, title=f"{label or metric}, {key[1].replace('_', ' ')}: {score:.4f}")
    fig.tight_layout()
    return fig


def paradigm_scatter(frame: pd.DataFrame, *, x: str = "params_m", y: str = "avg_bias", hue: str = "family",
                     style: str = "source", ax=None, title: str | None = None):
    """Average bias against backbone size, one colour per metric family (Figure 4 of Sun et al.)."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    if ax is None:
        _, ax = plt.subplots(figsize=(7, 6))
    data = frame.dropna(subset=[x, y]).sort_values(x)
    sns.lineplot(data=data[data[style] == "released"], x=x, y=y, hue=hue, ax=ax, legend=False, alpha=0.5)
    sns.scatterplot(data=data, x=x, y=y, hue=hue, style=style, s=70, ax=ax)
    ax.set_xscale("log")
    ax.set_xlabel("backbone parameters (millions, log scale)")
    ax.set_ylabel("bias averaged over attributes")
    ax.legend(bbox_to_anchor=(0.5, -0.14), loc="upper center", ncol=3, fontsize=9)  # below: the page is narrow
    if title:
        ax.set_title(title)
    return ax


def bias_quality(points: pd.DataFrame, measures: dict, *, reference: str = "BLEU", y: str = "avg_bias",
                 hue: str = "paradigm", width: float = 7.5, height: float = 4):
    """Average bias against quality, one panel per quality measure (``measures``: column -> axis label), one
    point per configuration coloured by ``hue``; the ``reference`` configuration's quality is a dashed line and
    the reference and every generation configuration are named. Returns the Axes."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    fig, axes = plt.subplots(1, len(measures), figsize=(width, height), sharey=True, squeeze=False)
    axes = axes[0]
    ref = points[points["metric"] == reference]
    named = points[(points["metric"] == reference) | (points["paradigm"] == "Generation")]
    for i, (ax, (column, label)) in enumerate(zip(axes, measures.items())):
        sns.scatterplot(data=points, x=column, y=y, hue=hue, style=hue, s=60, ax=ax, legend=i == 0)
        if len(ref):
            ax.axvline(float(ref[column].iloc[0]), color="0.4", ls="--", lw=0.9, zorder=0)
        for r in named.to_dict("records"):
            ax.annotate(r["metric"], (r[column], r[y]), xytext=(4, 4), textcoords="offset points", fontsize=8)
        ax.set_xlabel(label)
        ax.set_ylabel("bias averaged over attributes")
    legend = axes[0].get_legend()
    if legend is not None:  # one legend for both panels, below them: the page is narrow
        handles, labels = axes[0].get_legend_handles_labels()
        legend.remove()
        fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 5), frameon=False)
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    return axes


def paper_vs_ours(comparison: pd.DataFrame, *, highlight=(), ax=None, title: str | None = None,
                  xlabel: str = "printed in the paper", ylabel: str = "recomputed"):
    """Every cell of a paper's table against our value (``paper``, ``ours``, ``metric`` columns), on the diagonal
    when they agree; the rows named in ``highlight`` get their own colour and legend entry."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(7, 5.5))
    rest = comparison[~comparison["metric"].isin(highlight)]
    ax.scatter(rest["paper"], rest["ours"], s=14, color="0.55", label="other cells")
    for metric in highlight:
        cells = comparison[comparison["metric"] == metric]
        ax.scatter(cells["paper"], cells["ours"], s=36, marker="D", label=metric)
    top = float(max(comparison["paper"].max(), comparison["ours"].max())) * 1.05
    ax.plot([0, top], [0, top], color="0.3", lw=0.8, ls="--", zorder=0)
    ax.set_xlim(0, top)
    ax.set_ylim(0, top)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend(loc="upper left")
    if title:
        ax.set_title(title)
    return ax


def interval_plot(frame: pd.DataFrame, *, y: str, value: str = "bias", low: str = "bias_ci_low",
                  high: str = "bias_ci_high", hue: str | None = None, panel: str | None = None, y_order=None,
                  xlabel: str = "bias (Eq. 2) with 95% bootstrap CI", legend_title: str | None = None,
                  width: float = 7, row_height: float = 0.24):
    """Point values with intervals, one row per ``y`` value; several ``hue`` values side by side in each row;
    one panel per ``panel`` value, stacked (one panel per row of the page). Returns the figure."""
    import matplotlib.pyplot as plt
    import numpy as np

    y_order = list(dict.fromkeys(frame[y])) if y_order is None else [v for v in y_order if v in set(frame[y])]
    panels = list(dict.fromkeys(frame[panel])) if panel else [None]
    hues = list(dict.fromkeys(frame[hue])) if hue else [None]
    fig, axes = plt.subplots(len(panels), 1, squeeze=False, sharex=False,
                             figsize=(width, len(panels) * (row_height * len(y_order) * max(1, len(hues) / 1.5) + 1)))
    for ax, name in zip(axes[:, 0], panels):
        part = frame if panel is None else frame[frame[panel] == name]
        for k, h in enumerate(hues):
            rows = (part if hue is None else part[part[hue] == h]).set_index(y).reindex(y_order)
            offset = (k - (len(hues) - 1) / 2) * (0.6 / max(1, len(hues)))
            ax.errorbar(rows[value], np.arange(len(y_order)) + offset, fmt="o", ms=4, capsize=2, label=h,
                        xerr=[rows[value] - rows[low], rows[high] - rows[value]])
        ax.set_yticks(range(len(y_order)), y_order)
        ax.set_ylim(len(y_order) - 0.5, -0.5)
        ax.set_xlabel(xlabel)
        ax.grid(axis="x", alpha=0.3)
        if name is not None:
            ax.set_title(str(name))
        if hue is not None:
            ax.legend(title=legend_title or hue, loc="best")
    fig.tight_layout()
    return fig



def adapter_curve(points: pd.DataFrame, trade: pd.DataFrame, *, title: str = "", width: float = 7):
    """An adapter's checkpoints, two panels one above the other: relative change of every series
    (``reproduction.ch6_adapters.curve_series``) over steps, and quality change against gender bias cut
    (``reproduction.ch6_adapters.trade_off``), each point coloured by its step (a colour bar; the first and last steps
    named)."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    fig, axes = plt.subplots(2, 1, figsize=(width, 8))
    sns.lineplot(points, x="step", y="relative_change", hue="series", marker="o", ax=axes[0])
    axes[0].axhline(0, color="black", lw=0.8)
    axes[0].set(title=f"{title}: relative change from the original metric".lstrip(": "),
                ylabel="relative change")
    axes[0].legend(loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=1, frameon=False)
    # steps as colours (a colour bar), not as text: late checkpoints sit on top of each other
    axes[1].plot(trade["gender_bias_cut"], trade["quality_change"], color="0.6", lw=0.8, zorder=1)
    dots = axes[1].scatter(trade["gender_bias_cut"], trade["quality_change"], c=trade["step"], cmap="viridis",
                           s=36, zorder=2)
    fig.colorbar(dots, ax=axes[1], pad=0.02).set_label("training step", fontsize=MIN_FONT)
    if len(trade):
        first, last = trade.iloc[0], trade.iloc[-1]
        axes[1].annotate(f"step {first['step']:g} (original)", (first["gender_bias_cut"], first["quality_change"]),
                         xytext=(6, 6), textcoords="offset points", fontsize=MIN_FONT)
        axes[1].annotate(f"step {last['step']:g}", (last["gender_bias_cut"], last["quality_change"]),
                         xytext=(-6, -14), textcoords="offset points", ha="right", fontsize=MIN_FONT)
    axes[1].set(xlabel="gender bias cut (mean over the gender sets)", ylabel="relative quality change",
                title="trade-off (colour: training step)")
    fig.tight_layout()
    return fig


def adapter_matching_maps(maps: dict, *, width: float = 7.5):
    """BERTScore's matching maps before and after a debiasing adapter (``reproduction.ch6_adapters.matching_maps``):
    one column per candidate; rows: the original map, and what the adapter changes in it (with adapter − original;
    the titles give F without → with the adapter). Two rows, so that the figure fits a screen."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    cands = ("candidate_1", "candidate_2")
    n_cand = max(len(maps[("original", c)].candidate_tokens) for c in cands)
    panel_h = 0.2 * n_cand + 1.3
    fig, axes = plt.subplots(2, 2, figsize=(width, 2 * panel_h + 0.3), squeeze=False)
    diffs = {c: maps[("adapter", c)].matrix - maps[("original", c)].matrix for c in cands}
    bound = max(float(abs(d).max()) for d in diffs.values()) or 1.0
    lo = min(float(maps[("original", c)].matrix.min()) for c in cands)  # one scale for both original maps
    hi = max(float(maps[("original", c)].matrix.max()) for c in cands)
    for col, cand in enumerate(cands):
        before, after = maps[("original", cand)], maps[("adapter", cand)]
        name = cand.replace("_", " ")
        panels = ((before.matrix, f"{name}, original", "Blues", (lo, hi)),
                  (diffs[cand], f"{name}, change: F {before.score:.4f} → {after.score:.4f}", "coolwarm",
                   (-bound, bound)))
        for row, (matrix, title, cmap, (vmin, vmax)) in enumerate(panels):
            ax = axes[row, col]
            grid = pd.DataFrame(matrix, index=before.candidate_tokens, columns=before.reference_tokens)
            sns.heatmap(grid, ax=ax, cmap=cmap, vmin=vmin, vmax=vmax, cbar=col == 1, xticklabels=True,
                        yticklabels=True, cbar_kws={"shrink": 0.8,
                                                    "label": "cosine" if row == 0 else "with adapter − original"})
            ax.set_title(title, fontsize=MIN_FONT + 1)
            ax.tick_params(labelsize=MIN_FONT)
            ax.set_xticklabels(ax.get_xticklabels(), rotation=90)
    fig.tight_layout()
    return fig


def ratio_curves(summary: pd.DataFrame, *, facet: str = "scores", labels: dict | None = None,
                 width: float = PAGE_WIDTH, height: float = 3.0):
    """Median ratio of a measure on n pairs to its whole-set value against n (log scale), with the band between
    the median 5th and 95th percentiles; one line per ``measure``, one panel per ``facet``. Returns the figure."""
    import matplotlib.pyplot as plt

    labels = labels or {}
    panels = list(dict.fromkeys(summary[facet]))
    fig, axes = plt.subplots(1, len(panels), figsize=(width, height), sharey=True, squeeze=False)
    for ax, panel in zip(axes[0], panels):
        part = summary[summary[facet] == panel]
        for measure, g in part.groupby("measure", sort=False):
            line, = ax.plot(g["n"], g["mean_ratio"], marker="o", ms=3.5, label=labels.get(measure, measure))
            ax.fill_between(g["n"], g["low"], g["high"], alpha=0.2, color=line.get_color())
        ax.axhline(1, color="0.4", lw=0.8, ls="--")
        ax.set_xscale("log")
        ax.set_xlabel("pairs drawn (n)")
        ax.set_title(str(panel), fontsize=MIN_FONT + 1)
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("value on n pairs / whole-set value")
    axes[0][0].legend(fontsize=MIN_FONT)
    fig.tight_layout()
    return fig


def coverage_plot(cov: pd.DataFrame, *, target=(0.93, 0.97), facet: str = "panel", width: float = PAGE_WIDTH,
                  height: float = 3.0, ncols: int = 2):
    """Empirical coverage (± 2 Monte-Carlo SE) against n, one line per ``interval``, one panel per ``facet``
    (``ncols`` panels per row, each ``height`` inches tall), the target band shaded; the x axis is labelled at the
    simulated sizes, and one legend under the panels names every interval. Returns the figure."""
    import textwrap

    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter

    panels = list(dict.fromkeys(cov[facet]))
    ncols = max(1, min(ncols, len(panels)))
    nrows = -(-len(panels) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(width, height * nrows + 0.4), sharey=True, squeeze=False)
    sizes = sorted(cov["n"].unique())
    colours = {name: f"C{i}" for i, name in enumerate(dict.fromkeys(cov["interval"]))}
    for ax, panel in zip(axes.flat, panels):
        for interval, g in cov[cov[facet] == panel].groupby("interval", sort=False):
            ax.errorbar(g["n"], g["coverage"], yerr=2 * g["mc_se"], marker="o", ms=3.5, capsize=2, label=interval,
                        color=colours[interval])
        ax.axhspan(*target, color="0.85", zorder=0)
        ax.axhline(0.95, color="0.4", lw=0.8, ls="--")
        ax.set_xscale("log")
        ax.set_xticks(sizes, [f"{n:g}" for n in sizes])
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.tick_params(labelsize=MIN_FONT)
        ax.set_xlabel("pairs (n)", fontsize=MIN_FONT)
        ax.set_title("\n".join(textwrap.wrap(str(panel), 40)), fontsize=MIN_FONT + 1)
        ax.grid(alpha=0.3)
    for ax in axes.flat[len(panels):]:
        ax.set_visible(False)
    for ax in axes[:, 0]:
        ax.set_ylabel("coverage of the 95% interval", fontsize=MIN_FONT)
    handles = {}
    for ax in axes.flat:
        for handle, name in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(name, handle)
    fig.legend(handles.values(), handles.keys(), loc="lower center", ncol=min(3, len(handles)), fontsize=MIN_FONT,
               frameon=False)
    fig.tight_layout(rect=(0, 0.35 / (height * nrows + 0.4), 1, 1))
    return fig
