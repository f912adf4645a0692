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


def for_appendix(profile: str) -> pd.DataFrame:
    """:func:`drawn` in words, for the Reproducibility appendix: chapter, what is drawn, how many, and the parameter
    that runs it whole when set to 0."""
    table = drawn(profile)
    return pd.DataFrame({"chapter": table["chapter"].map(_chapter),
                         "what is drawn": table["what"].str.split("(").str[0].str.strip(),
                         "kept": table["value"], "parameter (0: whole set)": table["parameter"]})


def drawn_list(profile: str) -> str:
    """What ``profile`` draws, as a list for a sentence: "12 Flickr8k images kept (chapter 7); 8 released pairs per
    attribute (chapter 9)", each draw's count and what it counts; "none" when every data set runs whole."""
    table = for_appendix(profile)
    if table.empty:
        return "none"
    return "; ".join(f"{int(r['kept']):,} {r['what is drawn']} ({r['chapter']})" for r in table.to_dict("records"))


def drawn_sentence(profile: str) -> str:
    """What ``profile`` draws, as sentences: "Chapter 5 draws a seeded sample of 16 texts per set for ..." per draw
    (the chapter, the count and what it counts); "Every data set enters whole." when nothing is drawn."""
    table = for_appendix(profile)
    if table.empty:
        return "Every data set enters whole."
    what = table["what is drawn"].str.replace(r"\s+(kept|sampled)$", "", regex=True)
    return " ".join(f"{chapter[0].upper()}{chapter[1:]} draws a seeded sample of {int(kept):,} {words}."
                    for chapter, kept, words in zip(table["chapter"], table["kept"], what))


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


def chapters_phrase(stems) -> str:
    """``["04_x", "05_y", "07_z"]`` -> "chapters 4, 5 and 7"; one -> "chapter 4"; none -> "no chapter"."""
    from .names import joined

    numbers = [str(int(s.split("_", 1)[0])) for s in stems]
    if not numbers:
        return "no chapter"
    return f"chapter{'s' if len(numbers) > 1 else ''} {joined(numbers)}"


def left_out_by_kind(profile: str) -> dict:
    """Which chapters leave out, of ``profile``'s suite, every generation configuration (``generation``) and every
    MPNet configuration of the other paradigms (``mpnet``), as phrases (:func:`chapters_phrase`); ``left_out``: how
    many chapters leave any configuration out."""
    from ... import profiles
    from .. import runner
    from .ch3_configurations import configuration_table

    table = configuration_table(profiles.suite(profile))
    kinds = {"generation": set(table.loc[table["paradigm"] == "Generation", "metric"]),
             "mpnet": set(table.loc[(table["paradigm"] != "Generation")
                                    & table["backbone"].astype(str).str.contains("mpnet"), "metric"])}
    found = {kind: [] for kind in kinds}
    any_left = 0
    for chapter in runner.chapters():
        skip = runner.chapter_parameters(profile, chapter.stem).get("skip_metrics", "")
        if not skip or chapter.stem.startswith("03"):
            continue
        gone = set(table["metric"]) - {s.label for s in profiles.suite(profile, skip)}
        any_left += bool(gone)
        for kind, labels in kinds.items():
            if labels and labels <= gone:
                found[kind].append(chapter.stem)
    return {kind: chapters_phrase(stems) for kind, stems in found.items()} | {"left_out": any_left}


__all__ = ["COLUMNS", "chapters_phrase", "drawn", "drawn_list", "drawn_sentence", "for_appendix", "is_draw", "left_out",
           "left_out_by_kind"]
