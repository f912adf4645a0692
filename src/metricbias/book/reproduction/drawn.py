"""What a profile still draws: the chapters' sample-size parameters that are not 0 under it.

A chapter's parameters cell declares each draw with a comment saying what it counts; a value of 0 runs the whole
set. The book's default profile runs every data set whole except where a draw is listed here, and chapter 9 says so.
"""

from __future__ import annotations

import pandas as pd

#: parameters that draw a seeded sample of a data set (0: the whole set)
DRAW_SUFFIXES = ("sample_size", "_pairs")
COLUMNS = ["chapter", "parameter", "value", "what"]


def is_draw(parameter: str) -> bool:
    return parameter.endswith(DRAW_SUFFIXES)


def drawn(profile: str) -> pd.DataFrame:
    """One row per draw of ``profile``: ``chapter`` (its stem), ``parameter``, ``value`` and ``what`` (the comment of
    the chapter's parameters cell)."""
    import jupytext

    from .. import runner

    rows = []
    for chapter in runner.chapters():
        cell = next((c for c in jupytext.read(chapter.source).cells
                     if c.cell_type == "code" and "parameters" in c.metadata.get("tags", [])), None)
        if cell is None:
            continue
        helps = runner.declared_parameters(cell.source)
        values = runner.chapter_parameters(profile, chapter.stem)
        for name, value in values.items():
            if is_draw(name) and isinstance(value, int) and value > 0:
                rows.append({"chapter": chapter.stem, "parameter": name, "value": value, "what": helps.get(name, "")})
    return pd.DataFrame(rows, columns=COLUMNS)


def _chapter(stem: str) -> str:
    head = stem.split("_", 1)[0]
    return f"appendix {head}" if head.startswith("A") else f"chapter {int(head)}"


def drawn_sentence(profile: str) -> str:
    """One Markdown sentence: which data sets ``profile`` still draws, chapter by chapter, with the parameter that
    runs them whole."""
    table = drawn(profile)
    if table.empty:
        return f"Under the `{profile}` profile every chapter runs on its whole data."
    parts = [f"{_chapter(r.chapter)}, {r.what.split('(')[0].strip()} (`{r.parameter}={r.value}`)"
             for r in table.itertuples()]
    return (f"Under the `{profile}` profile every chapter runs on its whole data except these seeded draws: "
            + "; ".join(parts) + ". Each page names its draw, and `-p <parameter>=0` runs the whole set.")


def left_out(profile: str) -> pd.DataFrame:
    """One row per chapter that leaves configurations of ``profile``'s suite out (its ``skip_metrics``):
    ``chapter`` (e.g. "chapter 4") and ``left out`` (the configurations' labels)."""
    from ... import profiles
    from .. import runner

    suite = profiles.suite(profile)
    rows = []
    for chapter in runner.chapters():
        skip = runner.chapter_parameters(profile, chapter.stem).get("skip_metrics", "")
        kept = {s.label for s in profiles.suite(profile, skip)} if skip else {s.label for s in suite}
        gone = [s.label for s in suite if s.label not in kept]
        if gone:
            rows.append({"chapter": _chapter(chapter.stem), "left out": ", ".join(gone)})
    return pd.DataFrame(rows, columns=["chapter", "left out"])


__all__ = ["COLUMNS", "drawn", "drawn_sentence", "is_draw", "left_out"]
