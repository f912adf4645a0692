"""How the chapters show results: curated tables, downloadable CSV files, one-line warning summaries.

The book's conventions, which every chapter follows through these functions:

* **tables** (:func:`table`): shown where they are called, whatever their place in the cell (:class:`Shown`);
  no index, text columns first, human column names, one header row (a MultiIndex is flattened into words)
  (:data:`LABELS`; otherwise underscores become spaces), two decimals (or three
  significant digits, or the column's own format in :data:`FORMATS`), no ``-0.00``,
  and "—" for an undefined cell, with a note under the table saying why; Markdown
  code (```x```) in a caption or note is set as code;
* **paper vs this book**: a number copied from a paper sits in a column whose name
  ends in :data:`PAPER` ("(paper)") and is shown in grey italics; everything else
  on a page is computed here;
* **full grids** go to CSV files linked from the page (:func:`download`), not onto it;
* **warnings** are caught (:class:`capture_warnings`) and become one line in the chapter's own words
  (:func:`metricbias.book.reproduction.notes.warning_summary`).
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

#: the suffix of a column that holds numbers copied from a paper
PAPER = "(paper)"
UNDEFINED = "—"
#: how a paper column looks (grey italics); the legend says so under each table that has one
PAPER_STYLE = {"color": "#6a6a6a", "font-style": "italic"}

#: how a column is headed on a page, for the column names the library's tables use (a name missing here is shown
#: with its underscores as spaces); a paper column keeps its " (paper)" suffix after the label
LABELS = {
    "eq2": "Eq. 2", "kls": "KLS", "jss": "JSS", "pcm": "PCM", "bcm": "BCM", "mcm": "MCM", "aul": "AUL",
    "weat": "WEAT", "seat": "SEAT", "mwu": "MWU", "pll": "PLL", "cda": "CDA",
    "litepyramid_recall": "LitePyramid recall", "stsb": "STS-B", "sts_b": "STS-B", "darr": "DARR",
    "ci_low": "95% CI low", "ci_high": "95% CI high", "bias_ci_low": "bias, 95% CI low",
    "bias_ci_high": "bias, 95% CI high", "n_pairs": "pairs", "n_examples": "examples", "p_value": "p",
    "q_value": "q", "effect_size": "d", "pearson": "Pearson r", "spearman": "Spearman ρ", "kendall": "Kendall τ",
    "tau": "τ", "tau_mean": "τ (mean)", "tau_sd": "τ (sd)", "rho": "ρ", "params_m": "parameters (M)",
    "avg_bias": "average bias", "non_binary": "non-binary", "candidate_1": "candidate 1",
    "candidate_2": "candidate 2",
}
#: a column's number format wherever it appears (a chapter's ``formats`` overrides it): an int is decimals, a
#: string a format (``"{:.2g}"``)
FORMATS = {"p_value": "{:.2g}", "q_value": "{:.2g}", "n_pairs": 0, "n_examples": 0}


def label(column) -> str:
    """How ``column`` is headed on a page: :data:`LABELS`, else its name with underscores as spaces; in a name of
    several words (``"effect_size full"``) each identifier is labelled on its own (``"d full"``); a tuple (a column of
    a MultiIndex) is read as one header, its parts in order (:func:`flat_label`)."""
    if isinstance(column, tuple):
        return flat_label(column)
    name = str(column)
    if name.endswith(f" {PAPER}"):
        return f"{label(name[:-len(PAPER) - 1])} {PAPER}"
    if name in LABELS:
        return LABELS[name]
    if " " in name:
        return " ".join(LABELS.get(w, w.replace("_", " ") if "_" in w else w) for w in name.split(" "))
    return name.replace("_", " ")


def flat_label(parts: tuple) -> str:
    """One header for a column of a MultiIndex: its labelled parts joined by spaces, the empty ones left out, and a
    last part "value" dropped (``("eq2", "value")`` → "Eq. 2", ``("eq2", "ci_low")`` → "Eq. 2 95% CI low")."""
    words = [label(p) for p in parts if str(p) != ""]
    if len(words) > 1 and words[-1] == "value":
        words = words[:-1]
    return " ".join(words)


def _caption_html(text: str) -> str:
    """``text`` for a table caption (raw HTML there): ``&<>`` escaped, Markdown ```code``` as ``<code>``."""
    import html
    import re

    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text, quote=False))


def _number(value, decimals: int, significant: int | None) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return UNDEFINED
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}"
    if significant:
        text = f"{float(value):.{significant}g}"
        if "e" in text:  # 3 significant digits of a very small or large number: keep it readable
            text = f"{float(value):.{significant - 1}e}"
    else:
        text = f"{float(value):.{decimals}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text  # no "-0.00"


def table(frame: pd.DataFrame, *, decimals: int = 2, significant: int | None = None, formats: dict | None = None,
          note: str | None = None, caption: str | None = None, text_first: bool = True) -> Shown:
    """``frame`` as the book shows a table, put on the page where it is called: a pandas ``Styler`` (renders as
    HTML in the book) wrapped in :class:`Shown`, so that a table that is not the last expression of its cell is
    shown all the same, and one that is is not shown twice.

    ``decimals`` (or ``significant`` digits) applies to every float column unless
    ``formats`` (or, for the columns it does not name, :data:`FORMATS`) maps a column to
    its own: an int (decimals), a format string (``"{:.1%}"``) or a callable. ``note``
    goes under the table (say there why a cell is "—"); columns ending in :data:`PAPER`
    are styled as copied numbers. Columns are headed with :func:`label`.
    """
    frame = frame.reset_index(drop=True) if isinstance(frame.index, pd.RangeIndex) else frame.reset_index()
    if isinstance(frame.columns, pd.MultiIndex):  # one row of word headers, never a header of tuples
        frame = frame.set_axis([flat_label(c) for c in frame.columns], axis="columns")
    if text_first:
        text = [c for c in frame.columns if not pd.api.types.is_numeric_dtype(frame[c])]
        frame = frame[text + [c for c in frame.columns if c not in text]]
    formats = {**{c: FORMATS[c] for c in frame.columns if c in FORMATS}, **(formats or {})}
    formatter = {}
    for col in frame.columns:
        fmt = formats.get(col)
        if callable(fmt):
            formatter[col] = fmt
        elif isinstance(fmt, str):
            formatter[col] = lambda v, f=fmt: UNDEFINED if pd.isna(v) else f.format(v)
        elif pd.api.types.is_numeric_dtype(frame[col]) or isinstance(fmt, int):
            d = fmt if isinstance(fmt, int) else decimals
            formatter[col] = lambda v, d=d, s=(None if isinstance(fmt, int) else significant): _number(v, d, s)
        else:
            formatter[col] = lambda v: UNDEFINED if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)) \
                else str(v)
    styler = frame.style.hide(axis="index").format(formatter).relabel_index(
        [label(c) for c in frame.columns], axis="columns")
    paper = [c for c in frame.columns if str(c).endswith(PAPER)]
    if paper:
        styler = styler.set_properties(subset=paper, **PAPER_STYLE)
    return Shown(_caption(styler, caption, note, bool(paper)))


def _caption(styler, caption: str | None, note: str | None, paper: bool):
    """``styler`` with its caption under the table: ``caption``, the grey-italics legend when a paper column is
    there, and ``note``."""
    lines = [caption] if caption else []
    if paper:
        lines.append(f"Grey italics: copied from the paper; every other number is computed in this chapter.")
    if note:
        lines.append(note)
    if lines:
        styler = styler.set_caption(_caption_html(" ".join(lines))).set_table_styles(
            [{"selector": "caption", "props": [("caption-side", "bottom"), ("font-size", "0.85em"),
                                               ("text-align", "left")]}], overwrite=False)
    return styler


class Shown:
    """A table or link that :func:`table` or :func:`download` has already put on the page (when called in a
    notebook's kernel), whatever its place in the cell. As a cell's last expression it shows nothing more;
    outside a kernel it is shown when displayed. Everything else (``to_html()``, ``data``) is the wrapped
    object's."""

    def __init__(self, shown):
        self.shown = shown
        self.on_page = _show(shown)

    def __getattr__(self, name):
        if name == "shown":  # not set yet (copy, pickle): never recurse
            raise AttributeError(name)
        return getattr(self.shown, name)

    def _ipython_display_(self):
        if not self.on_page:
            from IPython.display import display

            display(self.shown)
            self.on_page = True


def _show(obj) -> bool:
    """Display ``obj`` now when running in an IPython kernel (a chapter executing); whether it was."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is a dependency of the book
        return False
    shell = get_ipython()
    if shell is None or not hasattr(shell, "kernel"):
        return False
    from IPython.display import display

    display(obj)
    return True


def p_cell(p) -> str:
    """A p-value as a table cell: "0.031", "2.1e-05", "< 1e-300" (:func:`metricbias.bias.claims.format_p`)."""
    from ..bias.claims import format_p

    return format_p(p, bare=True)


def glue_findings(values: dict, prefix: str) -> None:
    """Glue a findings dict for a page's prose (MyST-NB) as ``<prefix><key>``: numbers as they are (paste them
    with ``{glue:text}`key:.2f```), texts as Markdown (paste them with ``{glue:md}`key```, so that a sentence
    is not set in bold like a pasted number)."""
    from myst_nb import glue

    for key, value in values.items():
        glue(f"{prefix}{key}", _markdown(value) if isinstance(value, str) else _plain(value), display=False)


def _plain(value):
    """A NumPy scalar as its Python value: MyST-NB formats a number (``{glue:text}`key:.2f```) from its plain-text
    repr, which for ``np.float64(0.5)`` is not a number, and the page would show nothing."""
    import numpy as np

    return value.item() if isinstance(value, np.generic) else value


def _markdown(text: str):
    """``IPython.display.Markdown`` of ``text`` taken as text: given a string that names an existing path (an empty
    one names the current folder), ``Markdown(text)`` would read that file instead."""
    from IPython.display import Markdown

    shown = Markdown(None)
    shown.data = text
    return shown


def figure(name: str, fig=None) -> None:
    """Hand ``fig`` (default: the current matplotlib figure) to the page as its figure ``name`` and close it.

    The page shows it, numbered and captioned, with a ``glue:figure`` block whose label the prose cites as
    ``{numref}`name```; a figure taller than :data:`metricbias.book.plots.MAX_HEIGHT_PX` is shown at a lower dpi
    (:func:`metricbias.book.plots.fit_height`)::

        ```{glue:figure} fig-ch3-heatmap
        :name: fig-ch3-heatmap

        The caption.
        ```
    """
    import matplotlib.pyplot as plt
    from myst_nb import glue

    from .plots import fit_height

    fig = fit_height(plt.gcf() if fig is None else fig)  # no taller than a screen
    glue(name, fig, display=False)
    plt.close(fig)


def downloads_dir() -> Path:
    """Where the chapters' full tables are written: ``<project>/_static/data`` (copied into the built book)."""
    from ..paths import project_root

    return project_root() / "_static" / "data"


def download(frame: pd.DataFrame, name: str, text: str | None = None) -> Shown:
    """Write ``frame`` to ``_static/data/<name>.csv`` and put a Markdown link to it on the page, where it is called
    (a :class:`Shown`, like :func:`table`).

    The link is relative to a chapter page (``book/chapters/<chapter>.html``).
    """
    from IPython.display import Markdown

    from ..paths import write_csv_atomic

    if not name.replace("-", "").replace("_", "").isalnum():
        raise ValueError(f"download name {name!r}: use letters, digits, '-' and '_' only")
    write_csv_atomic(frame, downloads_dir() / f"{name}.csv")
    rows, cols = frame.shape
    label = text or f"the full table ({rows:,} rows × {cols} columns)"
    return Shown(Markdown(f"Download {label} as [`{name}.csv`](../../_static/data/{name}.csv)."))


def glue_all(values: dict, prefix: str) -> None:
    """Glue every entry of ``values`` (a findings dict) for the page's prose as ``<prefix><key>`` (MyST-NB), a NumPy
    scalar as its Python value (:func:`_plain`)."""
    from myst_nb import glue

    for key, value in values.items():
        glue(f"{prefix}{key}", _plain(value), display=False)


class capture_warnings(warnings.catch_warnings):
    """``with capture_warnings() as caught:`` — record every warning (none printed) for
    :func:`metricbias.book.reproduction.notes.warning_summary`."""

    def __init__(self):
        super().__init__(record=True)

    def __enter__(self):
        caught = super().__enter__()
        warnings.simplefilter("always")
        return caught


__all__ = ["FORMATS", "LABELS", "PAPER", "UNDEFINED", "Shown", "capture_warnings", "download",
           "downloads_dir", "figure", "flat_label", "glue_all", "label", "p_cell", "table"]
