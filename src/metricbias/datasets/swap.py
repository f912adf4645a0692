"""Gender swapping: replace male words with their female counterparts and vice versa.

The word lists are the WinoBias swap lists (``winobias/generalized_swaps.txt`` and
``winobias/extra_gendered_words.txt``, through the source registry) merged with
the project's own ``data/lexicons/gender_swap.tsv`` (pronouns, possessives,
titles, nouns, common first names; its rows win over WinoBias and fix its typos).

Two words have two counterparts, chosen by part of speech. No tagger model can
be downloaded at run time, so the choice is made by context rules on the next
token (tested on hand-written sentences in ``tests/test_swap.py``):

* ``her`` is an object pronoun (→ ``him``) when the sentence ends after it, or
  the next word cannot start a noun phrase it would determine (a determiner,
  preposition, conjunction, pronoun, particle or common adverb: "gave her the
  book", "hugs her tightly"); otherwise it is a possessive determiner
  (→ ``his``: "her book", "her red shirt").
* ``his`` is a possessive pronoun (→ ``hers``) under the same condition ("the
  book is his.", "his and mine"); otherwise a determiner (→ ``her``).

Case (lower, Title, UPPER) and everything that is not a swapped word (spacing,
punctuation, possessive ``'s``) are kept, except an ``a``/``an`` right before a
swapped word, which is re-chosen for the new word (``an Emily`` -> ``a Steven``).
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Literal

from ..paths import data_dir
from .textedit import indefinite_article

LEXICON_FILE = Path("lexicons") / "gender_swap.tsv"
WINOBIAS_LISTS = ("winobias/generalized_swaps.txt", "winobias/extra_gendered_words.txt")
KINDS = ("pronoun", "possessive", "noun", "title", "name", "exclude")
Gender = Literal["male", "female"]

# A word token: letters with internal apostrophes ("ma'am", "woman's", "he's").
_TOKEN = re.compile(r"[A-Za-z]+(?:['\u2019][A-Za-z]+)*")
_NEXT_WORD = re.compile(r"\s*([A-Za-z0-9]+)")

# Words after which a preceding "her"/"his" cannot be a determiner of that word.
_NOT_NOUN_PHRASE = frozenset("""
a an the this that these those some any every each no another all both either neither such
my your his her its our their me him them us you it he she we they i myself yourself himself herself
itself ourselves themselves someone something somebody anyone anything everyone everything nothing
in on at to with from by for of into onto upon up down out off over under through around across along
behind near toward towards about after before while as like than past beside between against among
during without within inside outside beyond above below underneath via per since until till
and or but nor so yet because if when whenever where wherever then though although unless whether
is are was were be been being am has have had do does did will would can could may might must shall should
not never also too very again away here there now today tonight tomorrow yesterday once
tightly closely gently softly warmly lovingly happily quickly slowly hard well alone together
goodbye hello
""".split())

_ARTICLE_BEFORE = re.compile(r"(?<![\w'’-])(an?)\s+$", re.IGNORECASE)

# Kinds that only swap when the token is capitalised in the text (names; "Jack", not "jack").
_CAPITALISED_ONLY = {"name"}


class LexiconError(ValueError):
    """The gender lexicon is malformed or leaves a pair without a gender."""


@dataclass(frozen=True)
class Entry:
    word: str
    counterpart: str
    gender: Gender
    kind: str
    source: str


@dataclass(frozen=True)
class SwapResult:
    """A swapped text: ``replacements`` are (character offset in the original, old word, new word)."""

    text: str
    changed: bool
    replacements: list[tuple[int, str, str]] = field(default_factory=list)


def _opposite(gender: str) -> Gender:
    return "female" if gender == "male" else "male"


_FEMALE_SUFFIXES = ("woman", "women", "ess", "esses", "girl", "girls", "ine", "ines", "euse", "euses",
                    "ee", "ees", "mother", "mothers", "wife", "wives", "daughter", "daughters")
_MALE_SUFFIXES = ("man", "men", "boy", "boys", "father", "fathers", "husband", "husbands", "son", "sons")


def _suffix_gender(word: str) -> Gender | None:
    female = word.endswith(_FEMALE_SUFFIXES)
    male = word.endswith(_MALE_SUFFIXES)
    if female != male:
        return "female" if female else "male"
    return None


def read_project_lexicon(path: str | Path | None = None) -> list[tuple[str, str, str, int]]:
    """Rows (male, female, kind, line number) of the project's lexicon TSV."""
    path = Path(path) if path is not None else data_dir() / LEXICON_FILE
    if not path.is_file():
        raise LexiconError(f"gender lexicon {path} is missing; it is part of the project checkout")
    lines = path.read_text(encoding="utf-8").splitlines()
    rows = []
    header_seen = False
    for lineno, line in enumerate(lines, start=1):
        if not line.strip() or line.startswith("#"):
            continue
        cells = [c.strip() for c in line.split("\t")]
        if not header_seen:
            if cells != ["male", "female", "kind"]:
                raise LexiconError(f"{path}, line {lineno}: header must be 'male<TAB>female<TAB>kind', found {line!r}")
            header_seen = True
            continue
        if len(cells) != 3 or not all(cells):
            raise LexiconError(f"{path}, line {lineno}: expected 3 tab-separated cells, found {line!r}")
        male, female, kind = cells[0].lower(), cells[1].lower(), cells[2]
        if kind not in KINDS:
            raise LexiconError(f"{path}, line {lineno}: kind {kind!r} is not one of {list(KINDS)}")
        if kind == "exclude" and (male == "-") == (female == "-"):
            raise LexiconError(f"{path}, line {lineno}: an exclude row names one word and '-' for the other")
        if kind != "exclude" and "-" in (male, female):
            raise LexiconError(f"{path}, line {lineno}: '-' is only allowed in exclude rows")
        rows.append((male, female, kind, lineno))
    if not header_seen:
        raise LexiconError(f"{path}: no header row")
    return rows


def read_winobias_pairs(paths: Iterable[str | Path]) -> list[tuple[str, str, str]]:
    """(word, counterpart, 'file:line') from WinoBias swap lists (two whitespace-separated words a line)."""
    pairs = []
    for p in paths:
        p = Path(p)
        for lineno, line in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1):
            cells = line.split()
            if not cells:
                continue
            if len(cells) != 2:
                raise LexiconError(f"{p}, line {lineno}: expected two words, found {line!r}")
            pairs.append((cells[0].lower(), cells[1].lower(), f"{p.name}:{lineno}"))
    return pairs


def build_lexicon(project_rows, winobias_pairs) -> dict[str, Entry]:
    """Merge the project's rows (first row per word wins) over WinoBias pairs (first pair per word wins).

    A WinoBias word's gender comes from the project's lexicon (its own or its
    counterpart's) or a clear suffix (-woman, -ess, -man, ...); a pair left
    without a gender is an error, so every entry is oriented.
    """
    entries: dict[str, Entry] = {}
    excluded: set[str] = set()
    project_gender: dict[str, Gender] = {}
    for male, female, kind, lineno in project_rows:
        if kind == "exclude":
            excluded.add(male if male != "-" else female)
            continue
        for word, other, gender in ((male, female, "male"), (female, male, "female")):
            project_gender.setdefault(word, gender)
            if word not in entries:
                entries[word] = Entry(word, other, gender, kind, f"project:{lineno}")
    unresolved = []
    # a swap list pair a -> b also implies b -> a (the lists give "duke duchess" but not "duchess duke")
    directed = [(w, o, where) for w, o, where in winobias_pairs]
    directed += [(o, w, where + " (reversed)") for w, o, where in winobias_pairs]
    for word, other, where in directed:
        word, other = word.rstrip("."), other.rstrip(".")  # "mr." -> "mr": tokens carry no period
        if word in entries or word in excluded or other in excluded:
            continue
        gender = project_gender.get(word)
        if gender is None and other in project_gender:
            gender = _opposite(project_gender[other])
        if gender is None:
            gender = _suffix_gender(word) or (_opposite(_suffix_gender(other)) if _suffix_gender(other) else None)
        if gender is None:
            unresolved.append(f"{word} -> {other} ({where})")
            continue
        entries[word] = Entry(word, other, gender, "noun", f"winobias:{where}")
    if unresolved:
        raise LexiconError("no gender for WinoBias pair(s) " + "; ".join(unresolved)
                           + f": add them to data/{LEXICON_FILE} (male<TAB>female<TAB>kind)")
    for word in excluded:
        entries.pop(word, None)
    return entries


@lru_cache(maxsize=1)
def _default_lexicon(project_file: str, mtime: float) -> dict[str, Entry]:
    from .. import sources

    return build_lexicon(read_project_lexicon(project_file),
                         read_winobias_pairs(sources.path(name) for name in WINOBIAS_LISTS))


def lexicon() -> dict[str, Entry]:
    """The merged lexicon: lower-cased word -> :class:`Entry` (its counterpart, gender, kind, source)."""
    path = data_dir() / LEXICON_FILE
    if not path.is_file():
        raise LexiconError(f"gender lexicon {path} is missing; it is part of the project checkout")
    return _default_lexicon(str(path), path.stat().st_mtime)


# --- matching ------------------------------------------------------------------------

def match_case(source: str, word: str) -> str:
    if len(source) > 1 and source.isupper():
        return word.upper()
    if source[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


def _split_suffix(token: str) -> tuple[str, str]:
    """'woman's' -> ('woman', "'s"); 'he's' -> ('he', "'s"); words without an apostrophe unchanged."""
    m = re.match(r"([A-Za-z]+)(['\u2019][A-Za-z]+)$", token)
    return (m.group(1), m.group(2)) if m else (token, "")


def _lookup(token: str, lex: dict[str, Entry]) -> tuple[Entry, str, str] | None:
    """The entry for a token (whole, or its base before an apostrophe suffix), with base and suffix."""
    for base, suffix in ((token, ""), _split_suffix(token)):
        entry = lex.get(base.lower())
        if entry is None:
            continue
        if entry.kind in _CAPITALISED_ONLY and not base[:1].isupper():
            continue
        return entry, base, suffix
    return None


_COORDINATED = re.compile(r"\s+(?:and|or)\s+(?:his|her|their|my|your|its|our)\b", re.IGNORECASE)


def ends_noun_phrase(text: str, end: int) -> bool:
    """True when the word ending at ``end`` cannot be a determiner: nothing word-like, or a closed-class word, follows.

    A coordinated determiner ("his or her hands") still determines the noun that follows.
    """
    if _COORDINATED.match(text, end):
        return False
    m = _NEXT_WORD.match(text, end)
    if m is None:
        return True
    return m.group(1).lower() in _NOT_NOUN_PHRASE


def _counterpart(entry: Entry, text: str, end: int) -> str:
    if entry.word == "her":
        return "him" if ends_noun_phrase(text, end) else "his"
    if entry.word == "his":
        return "hers" if ends_noun_phrase(text, end) else "her"
    return entry.counterpart


def swap_gender(text: str, lex: dict[str, Entry] | None = None) -> SwapResult:
    """Swap every male word for its female counterpart and vice versa.

    >>> swap_gender("A woman in a red shirt with her arm raised.").text
    'A man in a red shirt with his arm raised.'
    """
    if not isinstance(text, str):
        raise TypeError(f"swap_gender expects a str, got {type(text).__name__}")
    lex = lexicon() if lex is None else lex
    out: list[str] = []
    replacements: list[tuple[int, str, str]] = []
    last = 0
    for m in _TOKEN.finditer(text):
        found = _lookup(m.group(0), lex)
        if found is None:
            continue
        entry, base, suffix = found
        new = match_case(base, _counterpart(entry, text, m.end())) + suffix
        before = text[last:m.start()]
        article = _ARTICLE_BEFORE.search(before)
        if article:  # a swapped name may change the sound: "an Emily" -> "a Steven"
            art = match_case(article.group(1), indefinite_article(new))
            before = before[:article.start(1)] + art + before[article.end(1):]
        out.append(before)
        out.append(new)
        last = m.end()
        replacements.append((m.start(), m.group(0), new))
    out.append(text[last:])
    return SwapResult("".join(out), bool(replacements), replacements)


def gendered_words(text: str, lex: dict[str, Entry] | None = None) -> list[tuple[str, Gender]]:
    """The gendered words of ``text`` in order, each with its gender."""
    lex = lexicon() if lex is None else lex
    words = []
    for m in _TOKEN.finditer(text):
        found = _lookup(m.group(0), lex)
        if found is not None:
            words.append((m.group(0), found[0].gender))
    return words


def gender_of(text: str, lex: dict[str, Entry] | None = None) -> Literal["male", "female", "mixed", "none"]:
    """'male' or 'female' when every gendered word has that gender, 'mixed' when both occur, else 'none'."""
    genders = {g for _, g in gendered_words(text, lex)}
    if not genders:
        return "none"
    return genders.pop() if len(genders) == 1 else "mixed"


def swap_report(texts: Iterable[str], lex: dict[str, Entry] | None = None):
    """Every changed text: a frame with ``index``, ``original``, ``swapped``, ``replacements`` ("old→new; ...")."""
    import pandas as pd

    lex = lexicon() if lex is None else lex
    rows = []
    for i, text in enumerate(texts):
        res = swap_gender(text, lex)
        if res.changed:
            rows.append({"index": i, "original": text, "swapped": res.text,
                         "replacements": "; ".join(f"{o}→{n}" for _, o, n in res.replacements)})
    return pd.DataFrame(rows, columns=["index", "original", "swapped", "replacements"])


__all__ = ["Entry", "LexiconError", "SwapResult", "build_lexicon", "ends_noun_phrase", "gender_of", "gendered_words",
           "lexicon", "match_case", "read_project_lexicon", "read_winobias_pairs", "swap_gender", "swap_report"]
