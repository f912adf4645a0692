"""Identity-term lexicons and the attribute configuration (``data/lexicons/``).

Two kinds of files, both written by the project (format: ``data/lexicons/README.md``):

* ``attributes.yml`` — one entry per attribute: its source (``winobias``,
  ``crows_pairs``, ``stereoset``), the source's bias types it takes, and its lexicon;
* ``<lexicon>.yml`` — the protected groups of an attribute and their identity
  terms, in rows aligned by grammatical form (``he``/``she``/``they`` in one
  row, ``him``/``her``/``them`` in the next ...), each row with the neutral term
  a reference puts in their place.

A new attribute is one lexicon file plus one ``attributes.yml`` entry; no code.

>>> lex = load("gender")
>>> lex.counterparts("he", "non_binary")
['they']
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

from ..paths import data_dir

CONFIG_FILE = "attributes.yml"
#: what each source needs in its attributes.yml entry
SOURCES = {"winobias": ("lexicon",), "crows_pairs": ("bias_types", "lexicon"), "stereoset": ("bias_types", "abstract")}


class LexiconError(ValueError):
    """A lexicon or the attribute configuration is malformed; the message names the file and entry."""


def lexicon_dir() -> Path:
    return data_dir() / "lexicons"


def normalize_term(text: str) -> str:
    """Lower-case, straight apostrophes, hyphens as spaces, single spaces: the key terms are matched on."""
    text = text.lower().replace("\u2019", "'").replace("\u2018", "'")
    text = re.sub(r"[-\u2010-\u2013]", " ", text)
    return " ".join(text.split())


_WORD = re.compile(r"[\w']+")


def words(text: str) -> list[str]:
    """The normalized words of a text (the unit identity terms are found on)."""
    return _WORD.findall(normalize_term(text))


@dataclass(frozen=True)
class TermRow:
    """One aligned row: the terms of each group in one grammatical form, and their neutral replacement."""

    form: str
    neutral: str  # "" means: drop the term
    abstract: str | None  # phrase for a predicative use ("he was <abstract>")
    terms: dict[str, tuple[str, ...]]


@dataclass(frozen=True)
class Entry:
    term: str
    group: str
    form: str
    row: int


class Lexicon:
    """The identity terms of one attribute's protected groups."""

    def __init__(self, name: str, path: Path, groups: list[str], rows: list[TermRow], abstract: str | None,
                 defaults: dict[str, str] | None = None):
        self.name = name
        self.defaults = {str(k): str(v or "").strip() for k, v in (defaults or {}).items()}
        self.path = path
        self.groups = list(groups)
        self.rows = rows
        self.abstract = abstract
        self._index: dict[str, list[Entry]] = {}
        self._terms: dict[tuple, set[str]] = {}
        for i, row in enumerate(rows):
            for group, terms in row.terms.items():
                for term in terms:
                    self._index.setdefault(normalize_term(term), []).append(Entry(term, group, row.form, i))
        self._max_words = max((len(k.split()) for k in self._index), default=1)

    def __repr__(self) -> str:
        return f"Lexicon({self.name!r}, groups={self.groups}, {len(self._index)} terms)"

    def _check_group(self, group: str) -> None:
        if group not in self.groups:
            raise LexiconError(f"{self.path}: no group {group!r}; groups: {', '.join(self.groups)}")

    def identity_terms(self, group: str) -> list[str]:
        """Every term of ``group``, in file order, without repeats."""
        self._check_group(group)
        out: list[str] = []
        for row in self.rows:
            out.extend(t for t in row.terms.get(group, ()) if t not in out)
        return out

    def all_terms(self, groups=None) -> set[str]:
        """Normalized terms of the given groups (default: all)."""
        groups = tuple(self.groups if groups is None else groups)
        if groups not in self._terms:  # the builders ask for the same groups many times
            for g in groups:
                self._check_group(g)
            self._terms[groups] = {normalize_term(t) for row in self.rows for g in groups for t in row.terms.get(g, ())}
        return set(self._terms[groups])

    def lookup(self, term: str) -> list[Entry]:
        """Where ``term`` occurs (group, form, row); ``[]`` when it is no identity term."""
        return list(self._index.get(normalize_term(term), []))

    def group_of(self, term: str) -> str | None:
        entries = self.lookup(term)
        return entries[0].group if entries else None

    def aligned(self, form: str | None = None) -> list[dict[str, list[str]]]:
        """The rows as ``{group: [terms]}`` (only rows of ``form`` when given): the substitution table."""
        return [{g: list(t) for g, t in row.terms.items()} for row in self.rows if form is None or row.form == form]

    def counterparts(self, term: str, group: str) -> list[str]:
        """The terms of ``group`` aligned with ``term`` (same rows): ``counterparts("him", "female") == ["her"]``."""
        self._check_group(group)
        out: list[str] = []
        for e in self.lookup(term):
            out.extend(t for t in self.rows[e.row].terms.get(group, ()) if t not in out)
        return out

    def neutral_replacement(self, term: str, form: str | None = None) -> str:
        """The neutral term that replaces ``term`` in a reference (``""``: drop it).

        A term listed in several forms (``her``: object and possessive) takes the
        first row in file order unless ``form`` says which.
        """
        entries = [e for e in self.lookup(term) if form is None or e.form == form]
        if not entries:
            raise LexiconError(f"{self.path}: {term!r} is no identity term" + (f" of form {form!r}" if form else ""))
        return self.rows[entries[0].row].neutral

    def abstract_phrase(self, term: str | None = None) -> str | None:
        """What replaces a predicative use of ``term`` ("he was tall" -> "he was <phrase>")."""
        for e in self.lookup(term) if term else []:
            if self.rows[e.row].abstract:
                return self.rows[e.row].abstract
        return self.abstract

    def find(self, text: str, groups=None) -> list[str]:
        """Identity terms of ``groups`` (default: all) that occur in ``text`` as whole words."""
        keys = self._index if groups is None else self._terms.get(tuple(groups)) or self.all_terms(groups)
        ws = words(text)
        found, i = [], 0
        while i < len(ws):  # longest match first: "african american", not "african"
            for n in range(min(self._max_words, len(ws) - i), 0, -1):
                cand = " ".join(ws[i:i + n])
                key = next((k for k in (cand, cand[:-2] if cand.endswith("'s") else "") if k in keys), None)
                if key:
                    if key not in found:
                        found.append(key)
                    i += n
                    break
            else:
                i += 1
        return found


def _as_terms(value, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v.strip() for v in value):
        raise LexiconError(f"{where}: terms must be a non-empty string or list of strings, got {value!r}")
    return tuple(v.strip() for v in value)


def read_lexicon(path: Path) -> Lexicon:
    """Parse and validate one lexicon file."""
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise LexiconError(f"{path}: not valid YAML ({exc})") from exc
    if not isinstance(doc, dict):
        raise LexiconError(f"{path}: expected a mapping with groups, neutral, terms")
    groups = doc.get("groups")
    if not isinstance(groups, list) or len(groups) < 2 or not all(isinstance(g, str) for g in groups):
        raise LexiconError(f"{path}: 'groups' must list at least two group names")
    defaults = doc.get("neutral") or {}
    if not isinstance(defaults, dict):
        raise LexiconError(f"{path}: 'neutral' must map a form to its neutral term")
    rows_doc = doc.get("terms")
    if not isinstance(rows_doc, list) or not rows_doc:
        raise LexiconError(f"{path}: 'terms' must be a non-empty list of rows")
    rows = []
    for i, row in enumerate(rows_doc, start=1):
        where = f"{path}, terms row {i}"
        if not isinstance(row, dict) or "form" not in row:
            raise LexiconError(f"{where}: a row is a mapping with a 'form' and one entry per group")
        form = row["form"]
        unknown = set(row) - {"form", "neutral", "abstract", *groups}
        if unknown:
            raise LexiconError(f"{where}: unknown key(s) {sorted(unknown)}; groups are {groups}")
        neutral = row.get("neutral", defaults.get(form))
        if neutral is None:
            if form != "adj":
                raise LexiconError(f"{where}: form {form!r} has no neutral term (give 'neutral' in the row or "
                                   f"under the file's 'neutral' defaults)")
            neutral = ""
        terms = {g: _as_terms(row[g], f"{where}, group {g}") for g in groups if g in row}
        if len(terms) < 1:
            raise LexiconError(f"{where}: no group has a term")
        rows.append(TermRow(str(form), str(neutral).strip(), row.get("abstract"), terms))
    lex = Lexicon(path.stem, path, groups, rows, doc.get("abstract"), defaults)
    # a neutral term must not itself be an identity term, or the reference would not be neutral
    for i, row in enumerate(rows, start=1):
        hits = lex.find(row.neutral) if row.neutral else []
        if hits:
            raise LexiconError(f"{path}, terms row {i}: neutral term {row.neutral!r} contains identity term(s) {hits}")
    return lex


@lru_cache(maxsize=64)
def _read_lexicon_cached(path: Path, mtime_ns: int) -> Lexicon:
    return read_lexicon(path)


def read_config(path: Path | None = None) -> dict[str, dict]:
    """The attribute configuration: attribute name -> entry (validated)."""
    path = path or lexicon_dir() / CONFIG_FILE
    if not path.exists():
        raise LexiconError(f"attribute configuration {path} is missing; it is part of the project checkout")
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise LexiconError(f"{path}: not valid YAML ({exc})") from exc
    if not isinstance(doc, dict) or not doc:
        raise LexiconError(f"{path}: expected a mapping attribute -> entry")
    out = {}
    for name, entry in doc.items():
        where = f"{path}, attribute {name!r}"
        if not re.fullmatch(r"[a-z][a-z0-9_]*", str(name)):
            raise LexiconError(f"{where}: attribute names are lower-case letters, digits and underscores")
        if not isinstance(entry, dict) or entry.get("source") not in SOURCES:
            raise LexiconError(f"{where}: 'source' must be one of {', '.join(SOURCES)}")
        missing = [k for k in SOURCES[entry["source"]] if not entry.get(k)]
        if missing:
            raise LexiconError(f"{where}: source {entry['source']} needs {', '.join(missing)}")
        if "bias_types" in entry and not isinstance(entry["bias_types"], list):
            raise LexiconError(f"{where}: 'bias_types' must be a list")
        out[str(name)] = dict(entry)
    return out


def attributes() -> list[str]:
    """Configured attribute names, in file order."""
    return list(read_config())


def lexicon_path(name: str) -> Path:
    path = lexicon_dir() / f"{name}.yml"
    if not path.exists():
        known = sorted(p.stem for p in lexicon_dir().glob("*.yml") if p.name != CONFIG_FILE)
        raise LexiconError(f"no lexicon file {path}; known lexicons: {', '.join(known)}")
    return path


def load(name: str) -> Lexicon:
    """The lexicon of an attribute (``"gender_crows"``) or a lexicon by file stem (``"gender"``)."""
    path = lexicon_dir() / f"{name}.yml"
    if not path.exists():
        config = read_config()
        if name not in config:
            raise LexiconError(f"unknown attribute or lexicon {name!r}; attributes: {', '.join(config)}")
        if not config[name].get("lexicon"):
            raise LexiconError(f"attribute {name!r} has no lexicon in {lexicon_dir() / CONFIG_FILE}")
        path = lexicon_path(config[name]["lexicon"])
    return _read_lexicon_cached(path, path.stat().st_mtime_ns)
