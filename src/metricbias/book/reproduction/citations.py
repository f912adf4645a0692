"""Author–year mentions as citation roles of the book's bibliography.

Docstrings and metric cards name their papers as plain text, "Sentence BLEU (Papineni et al., 2002)" or
"Lin (2004), ROUGE". A page shows such text through the reference appendix's cards, and there each mention of an
entry of ``book/references.bib`` becomes a citation role (:func:`cite_mentions`), so that every citation on the
page resolves in the bibliography. :data:`MENTION` is also the pattern by which the tests find a plain author–year
mention left in a chapter's Markdown.
"""

from __future__ import annotations

import re

_NAME = r"[A-Z\u00C0-\u00DE\u0100-\u024F][a-z\u00C0-\u024F'\u2019-]+(?: [A-Z][a-z\u00C0-\u024F-]+)?"
_NAMES = rf"{_NAME}(?: et al\.|,? (?:&|and) {_NAME})?"
_YEAR = r"(?:19|20)\d\d[a-z]?"
#: an author–year mention: "(Name et al., 2002)" (parenthetical) or "Name & Name (2020)", "Name et al. 2022",
#: "Name, 2004" (textual; the year in parentheses or not)
MENTION = re.compile(rf"\((?P<p_names>{_NAMES}),? (?P<p_year>{_YEAR})\)"
                     rf"|\b(?P<t_names>{_NAMES})(?:,? (?P<t_year>{_YEAR})\b|(?P<t_paren> \({_YEAR}\)))")
_CODE = re.compile(r"(``.+?``|`[^`]*`)")


def _surname(person) -> str:
    return " ".join(part.render_as("text") for part in person.rich_prelast_names + person.rich_last_names)


def _mention(names: list[str]) -> str:
    """How a text names a work of ``names``: "Lin", "Gao & Wan" or "Sun et al."."""
    if len(names) > 2:
        return f"{names[0]} et al."
    return " & ".join(names)


def author_year_index(path=None) -> dict[tuple[str, str], str]:
    """``{(mention, year): key}`` for every entry of the bibliography (``book/references.bib``): the mention as
    :func:`_mention` writes it, and the first author's surname alone where that names one entry of the year."""
    from pybtex.database import parse_file

    from ...paths import project_root

    path = path or project_root() / "book" / "references.bib"
    try:
        entries = parse_file(str(path), bib_format="bibtex").entries
    except FileNotFoundError:
        return {}
    index: dict[tuple[str, str], str] = {}
    first: dict[tuple[str, str], list[str]] = {}
    for key, entry in entries.items():
        names = [_surname(p) for p in entry.persons.get("author") or entry.persons.get("editor", [])]
        year = entry.fields.get("year", "")
        if names and year:
            index[(_mention(names), year)] = key
            first.setdefault((names[0], year), []).append(key)
    for (name, year), keys in first.items():
        if len(keys) == 1:
            index.setdefault((name, year), keys[0])
    return index


def _resolve(names: str, year: str, index: dict) -> tuple[str, str] | None:
    """``(key, the part of names that names it)``: all of ``names``, or all but a first capitalised word that is
    no author's ("Following Sun et al."; "Kamal Eddine et al." may also be written "Eddine et al.")."""
    for part in dict.fromkeys([names, names.split(" ", 1)[-1]]):
        normal = part.replace(", and ", " & ").replace(" and ", " & ").replace(", &", " &")
        key = index.get((normal, year))
        if key is None and normal.endswith(" et al."):
            key = index.get((normal[:-len(" et al.")], year))  # the first author's surname, where unambiguous
        if key is not None:
            return key, part
    return None


def _cite_text(text: str, index: dict) -> str:
    def role(match: re.Match) -> str:
        if match.group("p_names"):
            found = _resolve(match.group("p_names"), match.group("p_year"), index)
            return f"{{cite:p}}`{found[0]}`" if found and found[1] == match.group("p_names") else match.group(0)
        names = match.group("t_names")
        found = _resolve(names, match.group("t_year") or match.group("t_paren").strip(" ()"), index)
        if found is None:
            return match.group(0)
        return f"{names[:len(names) - len(found[1])]}{{cite:t}}`{found[0]}`"

    return MENTION.sub(role, text)


def cite_mentions(text: str, index: dict) -> str:
    """``text`` with each author–year mention of an entry of ``index`` (:func:`author_year_index`) as a citation
    role: ``{cite:p}`` for a parenthetical mention, ``{cite:t}`` for a textual one. Inline code is left alone,
    and so is a mention of a work the bibliography does not hold."""
    if not index or not text:
        return text
    parts = _CODE.split(text)
    return "".join(part if i % 2 else _cite_text(part, index) for i, part in enumerate(parts))


__all__ = ["MENTION", "author_year_index", "cite_mentions"]
