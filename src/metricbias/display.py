"""How the chapters show results: curated tables, downloadable CSV files, one-line warning summaries.

The book's conventions, which every chapter follows through these functions:

* **tables** (:func:`table`): no index, text columns first, two decimals (or three
  significant digits), no ``-0.00``, and "—" for an undefined cell, with a note
  under the table saying why;
* **paper vs this book**: a number copied from a paper sits in a column whose name
  ends in :data:`PAPER` ("(paper)") and is shown in grey italics; everything else
  on a page is computed here;
* **full grids** go to CSV files linked from the page (:func:`download`), not onto it;
* **warnings** become one line in the chapter's own words (:func:`warning_summary`).
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
          note: str | None = None, caption: str | None = None, text_first: bool = True):
    """``frame`` as the book shows a table: a pandas ``Styler`` (renders as HTML in the book).

    ``decimals`` (or ``significant`` digits) applies to every float column unless
    ``formats`` maps a column to its own: an int (decimals), a format string
    (``"{:.1%}"``) or a callable. ``note`` goes under the table (say there why a
    cell is "—"); columns ending in :data:`PAPER` are styled as copied numbers.
    """
    frame = frame.reset_index(drop=True) if isinstance(frame.index, pd.RangeIndex) else frame.reset_index()
    if text_first:
        text = [c for c in frame.columns if not pd.api.types.is_numeric_dtype(frame[c])]
        frame = frame[text + [c for c in frame.columns if c not in text]]
    formats = dict(formats or {})
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
    styler = frame.style.hide(axis="index").format(formatter)
    paper = [c for c in frame.columns if str(c).endswith(PAPER)]
    if paper:
        styler = styler.set_properties(subset=paper, **PAPER_STYLE)
    lines = [caption] if caption else []
    if paper:
        lines.append(f"Grey italics: copied from the paper; every other number is computed in this chapter.")
    if note:
        lines.append(note)
    if lines:
        styler = styler.set_caption(" ".join(lines)).set_table_styles(
            [{"selector": "caption", "props": [("caption-side", "bottom"), ("font-size", "0.85em"),
                                               ("text-align", "left")]}], overwrite=False)
    return styler


def glue_findings(values: dict, prefix: str) -> None:
    """Glue a findings dict for a page's prose (MyST-NB) as ``<prefix><key>``: numbers as they are (paste them
    with ``{glue:text}`key:.2f```), texts as Markdown (paste them with ``{glue:md}`key```, so that a sentence
    is not set in bold like a pasted number)."""
    from IPython.display import Markdown
    from myst_nb import glue

    for key, value in values.items():
        glue(f"{prefix}{key}", Markdown(value) if isinstance(value, str) else value, display=False)


def downloads_dir() -> Path:
    """Where the chapters' full tables are written: ``<project>/_static/data`` (copied into the built book)."""
    from .paths import project_root

    return project_root() / "_static" / "data"


def download(frame: pd.DataFrame, name: str, text: str | None = None):
    """Write ``frame`` to ``_static/data/<name>.csv`` and return a Markdown link to it for the page.

    The link is relative to a chapter page (``book/chapters/<chapter>.html``).
    """
    from IPython.display import Markdown

    from .paths import write_csv_atomic

    if not name.replace("-", "").replace("_", "").isalnum():
        raise ValueError(f"download name {name!r}: use letters, digits, '-' and '_' only")
    write_csv_atomic(frame, downloads_dir() / f"{name}.csv")
    rows, cols = frame.shape
    label = text or f"the full table ({rows:,} rows × {cols} columns)"
    return Markdown(f"Download {label} as [`{name}.csv`](../../_static/data/{name}.csv).")


def warning_summary(caught: list, what: str) -> str:
    """One line for a list of caught warnings: ``what`` with the number of warnings and their distinct messages.

    ``what`` says in the chapter's words what the warnings mean ("metrics gave every
    candidate the same score, so their bias is undefined"). Paths are left out.
    """
    if not caught:
        return ""
    kinds = sorted({w.category.__name__ for w in caught})
    return f"{len(caught)} warning{'s' if len(caught) != 1 else ''} ({', '.join(kinds)}): {what}."


def glue_all(values: dict, prefix: str) -> None:
    """Glue every entry of ``values`` (a findings dict) for the page's prose as ``<prefix><key>`` (MyST-NB)."""
    from myst_nb import glue

    for key, value in values.items():
        glue(f"{prefix}{key}", value, display=False)


def parameters(values: dict, helps: dict, command: str):
    """The box at the top of a chapter (inserted by :mod:`metricbias.runner`): the parameters this page ran
    with, what each means, and the command that reruns it; any of them changes with ``-p name=value``."""
    from html import escape

    from IPython.display import HTML

    items = " · ".join(f'<code title="{escape(helps.get(name, ""), quote=True)}">{escape(name)}={escape(repr(value))}</code>'
                       for name, value in values.items())
    return HTML(f'<div class="admonition note"><p class="admonition-title">Parameters of this page</p>'
                f"<p>{items}</p><p>Rerun: <code>{escape(command)}</code>. Change any parameter with "
                f"<code>-p name=value</code> (repeatable; hover a parameter for its meaning), write elsewhere with "
                f"<code>--out DIR</code>.</p></div>")


class capture_warnings(warnings.catch_warnings):
    """``with capture_warnings() as caught:`` — record every warning (none printed) for :func:`warning_summary`."""

    def __init__(self):
        super().__init__(record=True)

    def __enter__(self):
        caught = super().__enter__()
        warnings.simplefilter("always")
        return caught


__all__ = ["PAPER", "UNDEFINED", "capture_warnings", "download", "downloads_dir", "glue_all", "parameters", "table",
           "warning_summary"]
