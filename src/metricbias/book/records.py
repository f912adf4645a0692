"""What a chapter keeps for the Reproducibility appendix instead of showing it in its argument.

A chapter's body holds the tables and figures that carry its argument. Its parameters and rerun command, where
its scores came from, its timings, the warnings its computations raised and its secondary tables go to the
appendix "Reproducibility" (``notebooks/A3_reproducibility.md``), one section per chapter, and the chapter links
to its section in one line. The mechanism:

* :mod:`metricbias.book.runner` starts every chapter with :func:`start` (its stem, profile, parameters and the
  command that reruns it); that cell shows only the one-line link (:func:`link`);
* a chapter calls :func:`keep` with a title and a table (a DataFrame) or a sentence (Markdown) for each thing
  the appendix holds;
* the appendix calls :func:`show` for each chapter: the parameters, the rerun command, the run's time and the
  sources of its scores (from the runner's timings), then every kept entry, in the order kept.

Records are JSON files under ``<cache>/run/records/<profile>/<stem>.json``, written atomically as entries come.
A chapter run outside the book's runner (plain papermill) has no record to write to: :func:`keep` then shows
the entry in place, so nothing is lost.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from ..paths import atomic_path, cache_dir

#: the appendix page, relative to a chapter page (both under ``book/chapters``)
APPENDIX_STEM = "A3_reproducibility"
APPENDIX = f"{APPENDIX_STEM}.html"
_current: dict = {}


def timings_path() -> Path:
    return cache_dir() / "run" / "timings.json"


def load_timings() -> dict:
    """``{profile: {chapter: {"seconds", "finished", "cells", "jobs", "packs"}}}`` of past runs (the runner's)."""
    try:
        return json.loads(timings_path().read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError):
        return {}


def records_dir(profile: str) -> Path:
    return cache_dir() / "run" / "records" / profile


def anchor(stem: str) -> str:
    """The appendix section of chapter ``stem``: ``repro-05`` for ``05_association_tests``."""
    return f"repro-{stem.split('_')[0].lower()}"


def _path() -> Path:
    return records_dir(_current["profile"]) / f"{_current['stem']}.json"


def _write(record: dict) -> None:
    path = _path()
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path, suffix=".json") as tmp:
        tmp.write_text(json.dumps(record, indent=1, default=str) + "\n", encoding="utf-8")


def start(stem: str, profile: str, values: dict, helps: dict, command: str):
    """Begin chapter ``stem``'s record (replacing a previous run's) and return the page's one-line link."""
    _current.clear()
    _current.update(stem=stem, profile=profile)
    _write({"stem": stem, "profile": profile, "command": command,
            "parameters": [{"parameter": k, "value": value_word(v), "meaning": _meaning(helps.get(k, ""))}
                           for k, v in values.items()],
            "entries": []})
    return link(stem) if stem[:1].isdigit() else None  # appendices keep a record but link nowhere


def value_word(value) -> str:
    """A parameter's value as the appendix shows it, in words: ``None`` as "none", a string without quotes,
    ``True``/``False`` as "yes"/"no", a list as its items separated by commas. A value kept as its Python repr (a
    record of an earlier run) reads the same."""
    if isinstance(value, str):
        quoted = len(value) > 1 and (value[0] == value[-1] and value[0] in "'\"" or value[0] + value[-1] == "[]")
        if not quoted and value not in ("None", "True", "False"):
            return value
        import ast

        try:
            value = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            return value
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (list, tuple)):
        return ", ".join(value_word(v) for v in value)
    return value if isinstance(value, str) else str(value)


def _meaning(text: str) -> str:
    """A parameter's help as the appendix shows it: Python's ``None`` as the word "none"."""
    import re

    return re.sub(r"\bNone\b", "none", text or "")


def link(stem: str):
    """The one line a chapter shows where its parameters box used to be."""
    from IPython.display import HTML

    # HTML, not Markdown: Sphinx would take a Markdown link to another page's anchor for a cross-reference
    number = stem.split("_")[0].lstrip("0")
    return HTML(f'<p class="repro-link"><em>Parameters, the rerun command, the sources of every score, timings and '
                f'warnings of this chapter: <a href="{APPENDIX}#{anchor(stem)}">Reproducibility, chapter {number}</a>.'
                f'</em></p>')


def _entry(title: str, content, caption: str | None, formats: dict | None, decimals: int) -> dict:
    if isinstance(content, pd.DataFrame):
        frame = content.reset_index(drop=True) if isinstance(content.index, pd.RangeIndex) else content.reset_index()
        frame.columns = [" ".join(map(str, c)).strip() if isinstance(c, tuple) else str(c) for c in frame.columns]
        return {"title": title, "kind": "table", "caption": caption, "decimals": decimals,
                "formats": {k: v for k, v in (formats or {}).items() if isinstance(v, (int, str))},
                "columns": list(frame.columns), "rows": json.loads(frame.to_json(orient="values"))}
    if hasattr(content, "savefig"):  # a matplotlib figure: a PNG beside the chapters' downloads
        import re

        import matplotlib.pyplot as plt

        from .display import downloads_dir

        slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
        name = f"{_current.get('stem', 'figure')}-{slug}.png"
        downloads_dir().mkdir(parents=True, exist_ok=True)
        from .plots import capped_dpi

        content.savefig(downloads_dir() / name, dpi=capped_dpi(content, 100), bbox_inches="tight")
        plt.close(content)
        return {"title": title, "kind": "figure", "caption": caption, "file": name}
    if not isinstance(content, str):
        raise TypeError(f"records.keep({title!r}): a DataFrame, a matplotlib figure or a Markdown string, "
                        f"not {type(content).__name__}")
    return {"title": title, "kind": "text", "text": content or "None."}  # an empty Markdown shows as its repr


def keep(title: str, content, *, caption: str | None = None, formats: dict | None = None, decimals: int = 2):
    """Keep ``content`` (a DataFrame, a matplotlib figure or a Markdown sentence) under ``title`` in the chapter's appendix section.

    A second ``keep`` with the same title replaces the first. Outside the book's runner the entry is shown in
    place instead. Returns None, so a ``keep`` as a cell's last expression shows nothing.
    """
    entry = _entry(title, content, caption, formats, decimals)
    if not _current:
        _display(entry)
        return None
    record = json.loads(_path().read_text(encoding="utf-8"))
    record["entries"] = [e for e in record["entries"] if e["title"] != title] + [entry]
    _write(record)
    return None


def load(stem: str, profile: str) -> dict | None:
    """Chapter ``stem``'s record under ``profile``; None when it has not run under that profile."""
    try:
        return json.loads((records_dir(profile) / f"{stem}.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{records_dir(profile) / f'{stem}.json'}: not a chapter record ({exc.msg}); "
                         f"rerun the chapter") from None


def _display(entry: dict) -> None:
    from IPython.display import Markdown, display

    from . import display as book_display

    display(Markdown(f"**{entry['title']}**"))
    if entry["kind"] == "text":
        display(Markdown(entry["text"]))
        return
    if entry["kind"] == "figure":  # the path is relative to a page under book/chapters, as downloads are
        from html import escape

        from IPython.display import HTML

        display(HTML(f'<figure><img src="../../_static/data/{entry["file"]}" alt="{escape(entry["title"])}" '
                     f'style="max-width: 100%"><figcaption>{escape(entry.get("caption") or "")}</figcaption>'
                     f'</figure>'))
        return
    frame = pd.DataFrame(entry["rows"], columns=entry["columns"])
    display(book_display.table(frame, decimals=entry["decimals"], formats=entry["formats"] or None,
                               caption=entry["caption"]))


def run_summary(stem: str, profile: str) -> pd.DataFrame:
    """The run of chapter ``stem`` as the runner timed it: seconds, when it finished, and per scoring job the
    pairs scored, computed and the seconds spent (empty when it has not run)."""
    run = load_timings().get(profile, {}).get(stem)
    if not run:
        return pd.DataFrame(columns=["metric", "what", "pairs", "computed", "seconds"])
    return pd.DataFrame(run.get("jobs") or [], columns=["metric", "what", "pairs", "computed", "seconds"])


def show(stem: str, profile: str) -> None:
    """The appendix section of chapter ``stem``: parameters and rerun command, time and scoring jobs, the sources
    of its scores, then every entry it kept."""
    from IPython.display import Markdown, display

    record = load(stem, profile)
    if record is None:
        display(Markdown(f"Chapter `{stem}` has no record under profile `{profile}`: run "
                         f"`metricbias run --only {stem.split('_')[0]} --profile {profile}`, then this appendix."))
        return
    display(Markdown(f"Rerun: `{record['command']}`. Change a parameter with `-p name=value`."))
    _display({"title": "Parameters", "kind": "table", "caption": None, "decimals": 2, "formats": {},
              "columns": ["parameter", "value", "meaning"],
              "rows": [[p["parameter"], value_word(p["value"]), _meaning(p["meaning"])] for p in record["parameters"]]})
    run = load_timings().get(profile, {}).get(stem) or {}
    if run:
        display(Markdown(f"Executed in {run['seconds']:,.0f} s (finished {run['finished']})."))
        jobs = run_summary(stem, profile)
        if len(jobs):
            _display({"title": "Scoring jobs", "kind": "table", "caption": None, "decimals": 2,
                       "formats": {"pairs": 0, "computed": 0, "seconds": 1}, "columns": list(jobs.columns),
                       "rows": jobs.values.tolist()})
        packs = run.get("packs") or {}
        if packs.get("scores"):
            _display({"title": "Score sources", "kind": "table", "caption": None, "decimals": 2,
                      "formats": {"largest difference": "{:.2g}"},
                      "columns": ["scores", "read from verified score packs", "computed in the run",
                                  "pack scores recomputed", "largest difference"],
                      "rows": [[packs["scores"], packs["from_packs"], packs["computed"], packs["checked"],
                                packs["max_diff"]]]})
    for entry in record["entries"]:
        _display(entry)


__all__ = ["APPENDIX", "APPENDIX_STEM", "anchor", "keep", "link", "load", "load_timings", "records_dir", "run_summary", "show", "start", "timings_path"]
