"""A table with a number, a caption and a label that other pages cite with ``{numref}``.

:func:`metricbias.book.display.table` shows a table in place, captioned but not numbered. A table that carries a
chapter's argument is numbered instead ("Table 3.1"): the chapter glues it as a Markdown table
(:func:`glue_table`, headers and number formats as :func:`~metricbias.book.display.table` sets them) and pastes it
inside MyST's ``table`` directive, which numbers it and gives it its label::

    ````{table} The caption.
    :name: tab-ch3-trained-parts

    ```{glue:md} ch3_trained_parts_table
    :format: myst
    ```
    ````
"""

from __future__ import annotations

import pandas as pd

from .display import FORMATS, UNDEFINED, _number, label


def _cell(value, fmt, decimals: int) -> str:
    if value is None or value is pd.NA or (isinstance(value, float) and value != value):
        return UNDEFINED
    if callable(fmt):
        return str(fmt(value))
    if isinstance(fmt, str):
        return fmt.format(value)
    if isinstance(value, str):
        return value
    return _number(value, fmt if isinstance(fmt, int) else decimals, None)


def markdown_table(frame: pd.DataFrame, *, decimals: int = 2, formats: dict | None = None) -> str:
    """``frame`` as a Markdown (pipe) table: no index, headers by :func:`~metricbias.book.display.label`, each
    column in its format (``formats``, else :data:`~metricbias.book.display.FORMATS`, else ``decimals``; an int is
    decimals, a string a format, a callable a function), "—" for an undefined cell, number columns aligned right."""
    frame = frame.reset_index(drop=True) if isinstance(frame.index, pd.RangeIndex) else frame.reset_index()
    formats = {**{c: FORMATS[c] for c in frame.columns if c in FORMATS}, **(formats or {})}
    numeric = [pd.api.types.is_numeric_dtype(frame[c]) and not pd.api.types.is_bool_dtype(frame[c])
               for c in frame.columns]

    def escape(text: str) -> str:
        return str(text).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(escape(label(c)) for c in frame.columns) + " |",
             "|" + "|".join("---:" if n else "---" for n in numeric) + "|"]
    for row in frame.itertuples(index=False):
        lines.append("| " + " | ".join(escape(_cell(v, formats.get(c), decimals))
                                       for c, v in zip(frame.columns, row)) + " |")
    return "\n".join(lines) + "\n"


def glue_table(key: str, frame: pd.DataFrame, *, decimals: int = 2, formats: dict | None = None) -> None:
    """Glue :func:`markdown_table` of ``frame`` under ``key`` for a ``{glue:md}`` inside a ``table`` directive,
    shown nowhere else: nothing is returned, so a cell that ends with this call prints nothing."""
    from IPython.display import Markdown
    from myst_nb import glue

    text = markdown_table(frame, decimals=decimals, formats=formats)
    glue(key, Markdown(text), display=False)


__all__ = ["glue_table", "markdown_table"]
