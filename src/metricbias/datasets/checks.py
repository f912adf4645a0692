"""Rule checks on built texts and pairs: each rule has a name and a one-line description (:data:`RULES`).

Text rules look at one sentence (a candidate, a reference, a swapped caption);
pair rules at the two candidates of a pair and the attribute it is filed under.
Every check returns its findings as rows (:data:`FINDING_COLUMNS`: where, which
rule, the offending words), so that a table of findings can be shown.

What the rules take as an error, precisely:

* **doubled_article** — two articles in a row (*a a*, *an a*, *the a*, *a the*, *the the*).
* **article_agreement** — *a* or *an* before a word that takes the other one, by
  :func:`metricbias.datasets.textedit.indefinite_article` (sound, not spelling:
  *an hour*, *a university*, *a one*, *an FBI agent*).
* **leading_punctuation** — the text starts with punctuation other than an opening
  quote, bracket or currency sign (*.Black people ...*).
* **lowercase_start** — the first word starts with a lower-case letter.
* **all_caps_word** — a word in capitals read as shouting, not an acronym: a
  closed-class English word (*WE*, *THE*, *VERY*; *US* and *IT* are read as
  acronyms) or a word of six or more capitals. Shorter capitalised words (*CEO*,
  *AIDS*, *NAACP*) are taken for acronyms; a shouted short content word (*HATE*)
  is not caught.
* **inner_capital** — a capital inside a word that is neither all capitals nor
  capitalised name-style (a capital start, each inner capital after a lower-case
  letter and followed by one: *McDonald*, *LeBron*): *rAmericans*, *THe*, *RitO*.
* **tautology** — a copula's predicate repeats its subject's noun (*those people are
  people*, *the people there were all people*): a reference that says nothing. The
  noun stands right before the copula (or with *there*, *here*, *too*, *also*
  between), the repeat right after it (or after *all*, *both*, *just*, *a*, *an*),
  and it is no closed-class word.
* **identical_candidates** — the two candidates have the same words (case ignored).
* **other_attribute** — a span where the candidates differ is an identity term of
  another attribute's lexicon and not of the named one (*mentally ill* / *white*
  filed under disability).
* **non_identity_difference** — a span where the candidates differ is not one
  identity term of the named attribute (*hated* / *loved*, *black man* / *woman*,
  a word on one side only).

The two attribute rules need the attribute's lexicon; attributes without one
(StereoSet, whose candidates contrast a trait, not a group) are not checked by them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pandas as pd

from .lexicons import Lexicon, normalize_term
from .textedit import ARTICLES, FUNCTION_WORDS, diff_blocks, indefinite_article, term_range, tokenize


@dataclass(frozen=True)
class Rule:
    name: str
    description: str
    kind: str  # "text" (one sentence) or "pair" (two candidates and their attribute)


RULES = {r.name: r for r in (
    Rule("doubled_article", "two articles in a row (a a, an a, the a)", "text"),
    Rule("article_agreement", "a/an does not fit the sound of the next word (a apple, an university)", "text"),
    Rule("leading_punctuation", "the text starts with punctuation (.Black people ...)", "text"),
    Rule("lowercase_start", "the first word starts lower-case", "text"),
    Rule("all_caps_word", "a word in capitals that is no acronym (WE must build ...)", "text"),
    Rule("inner_capital", "a capital inside a word, not name-style (rAmericans, RitO)", "text"),
    Rule("tautology", "the predicate repeats the subject's noun (those people are people)", "text"),
    Rule("identical_candidates", "the two candidates have the same words", "pair"),
    Rule("other_attribute", "the candidates differ in another attribute's identity term (mentally ill / white)",
         "pair"),
    Rule("non_identity_difference", "the candidates differ in words that are no identity term of the attribute "
         "(hated / loved)", "pair"),
)}
TEXT_RULES = [n for n, r in RULES.items() if r.kind == "text"]
PAIR_RULES = [n for n, r in RULES.items() if r.kind == "pair"]
FINDING_COLUMNS = ["attribute", "source", "id", "column", "rule", "detail", "text"]
#: the texts checked: the candidates and the reference(s), of a built TSV (``reference``) or of the pair layout
TEXT_COLUMNS = ("candidate_1", "candidate_2", "reference", "reference_1", "reference_2")

_ALL_ARTICLES = ARTICLES | {"the"}
_OPENING = "\"'“‘([{$£€"
# capitalised words read as acronyms although they spell a closed-class word
_ACRONYM_WORDS = {"us", "it"}
_NAME_STYLE = re.compile(r"^[A-Z][a-z]+(?:[A-Z][a-z]+)*$|^[A-Z]+s?$|^[a-z]+$")
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")


def _is_shouting(word: str) -> bool:
    letters = word.replace("'", "").replace("’", "")
    if len(letters) < 2 or not letters.isupper():
        return False
    low = word.lower()
    return (low in FUNCTION_WORDS and low not in _ACRONYM_WORDS) or len(letters) >= 6


def _inner_capital(word: str) -> bool:
    # name-style (McDonald, LeBron), capitals (CEO, CEOs) or lower case; the part before an apostrophe (O'Brien)
    return not _NAME_STYLE.match(re.split("['’]", word)[0])


_DOUBLED = re.compile(r"(?<![\w'’-])(?:a|an|the)\s+(?:a|an|the)(?![\w'’-])", re.I)
_INDEFINITE = re.compile(r"(?<![\w'’-])(an?)\s+(\w[\w'’-]*)", re.I)
_FIRST_WORD = re.compile(r"[^\W_][\w'’-]*")
_UPPER_INSIDE = re.compile(r"[^\W_][A-Z]")
_TAUTOLOGY = re.compile(r"\b([^\W\d_]{3,})(?:\s+(?:there|here|too|also))?\s+(?:is|are|was|were)\s+"
                        r"(?:(?:all|both|just)\s+)?(?:an?\s+)?([^\W\d_]{3,})(?![\w'’-])", re.I)


def text_findings(text: str) -> list[tuple[str, str]]:
    """The text rules a sentence breaks: ``[(rule, offending words), ...]``, in :data:`RULES` order."""
    out = [("doubled_article", m.group()) for m in _DOUBLED.finditer(text)]
    out += [("article_agreement", m.group()) for m in _INDEFINITE.finditer(text)
            if m.group(2).lower() not in _ALL_ARTICLES and indefinite_article(m.group(2)) != m.group(1).lower()]
    stripped = text.lstrip()
    if stripped and not (stripped[0].isalnum() or stripped[0] in _OPENING):
        out.append(("leading_punctuation", stripped[:12]))
    first = _FIRST_WORD.search(text)
    if first and first.group()[:1].islower():
        out.append(("lowercase_start", first.group()))
    if _UPPER_INSIDE.search(text):  # only then can a word be in capitals or have a capital inside
        words = _WORD.findall(text)
        out += [("all_caps_word", w) for w in words if _is_shouting(w)]
        out += [("inner_capital", w) for w in words if _inner_capital(w)]
    out += [("tautology", m.group()) for m in _TAUTOLOGY.finditer(text)
            if m.group(1).lower() == m.group(2).lower() and m.group(1).lower() not in FUNCTION_WORDS]
    return out


def _span_text(tokens, start: int, end: int) -> str:
    """A differing span as the builders read its identity term (:func:`~metricbias.datasets.textedit.term_range`)."""
    start, end = term_range(tokens, start, end)
    return " ".join(t.text for t in tokens[start:end])


def _is_term(lexicon: Lexicon, text: str) -> bool:
    key = normalize_term(text)
    return bool(lexicon.lookup(key) or (key.endswith("'s") and lexicon.lookup(key[:-2])))


def pair_findings(candidate_1: str, candidate_2: str, lexicon: Lexicon | None = None,
                  others=()) -> list[tuple[str, str]]:
    """The pair rules two candidates break, ``lexicon`` being the named attribute's (``None``: no attribute rules)
    and ``others`` the other attributes' lexicons."""
    a, b = tokenize(candidate_1), tokenize(candidate_2)
    if [t.lower for t in a] == [t.lower for t in b]:
        return [("identical_candidates", candidate_1)]
    if lexicon is None:
        return []
    out = []
    for i1, i2, j1, j2 in diff_blocks(a, b):
        spans = [_span_text(a, i1, i2), _span_text(b, j1, j2)]
        shown = " / ".join(s or "(nothing)" for s in spans)
        if all(s and _is_term(lexicon, s) for s in spans):
            continue
        foreign = [o.name for s in spans if s and not lexicon.find(s) for o in others if o.find(s)]
        if foreign:
            out.append(("other_attribute", f"{shown} ({', '.join(dict.fromkeys(foreign))})"))
        else:
            out.append(("non_identity_difference", shown))
    return out


def _rows(attribute, source, ident, column, found, text) -> list[dict]:
    return [{"attribute": attribute, "source": source, "id": ident, "column": column, "rule": rule, "detail": detail,
             "text": text} for rule, detail in found]


def check_texts(texts, ids=None, *, attribute: str = "", source: str = "", column: str = "text") -> pd.DataFrame:
    """Findings of the text rules on a list of texts (``ids`` name them; default their position)."""
    texts = list(texts)
    ids = range(len(texts)) if ids is None else ids
    rows = []
    for ident, text in zip(ids, texts):
        rows += _rows(attribute, source, str(ident), column, text_findings(text), text)
    return pd.DataFrame(rows, columns=FINDING_COLUMNS)


def check_pairs(pairs: pd.DataFrame, lexicons_by_attribute: dict | None = None, columns=TEXT_COLUMNS,
                id_column: str = "pair_id") -> pd.DataFrame:
    """Findings of every rule on a pair table (``attribute``, ``source``, ``candidate_1``, ``candidate_2``, and
    whichever of ``columns`` it has). ``lexicons_by_attribute``: attribute -> (its lexicon, the other lexicons)
    for the attribute rules; an attribute not in it gets the text rules and ``identical_candidates`` only."""
    lexicons_by_attribute = lexicons_by_attribute or {}
    columns = [c for c in columns if c in pairs.columns]
    rows = []
    for rec in pairs.to_dict("records"):
        where = (rec["attribute"], rec.get("source", ""), str(rec[id_column]))
        own, others = lexicons_by_attribute.get(rec["attribute"], (None, ()))
        rows += _rows(*where, "pair", pair_findings(rec["candidate_1"], rec["candidate_2"], own, others),
                      f"{rec['candidate_1']} | {rec['candidate_2']}")
        for col in columns:
            if col == "reference_2" and rec.get("reference_1") == rec[col]:
                continue  # a reference both candidates share is checked once
            rows += _rows(*where, col, text_findings(rec[col]), rec[col])
    return pd.DataFrame(rows, columns=FINDING_COLUMNS)


def introduced(before: pd.DataFrame, after: pd.DataFrame) -> pd.DataFrame:
    """Findings of ``after`` (e.g. swapped texts) beyond those the same text had ``before``: what an edit
    introduced. Counted per (attribute, source, id, column, rule), since an edit may change the words a finding
    names ("boy" -> "girl" starting a lower-case caption is the same finding)."""
    key = ["attribute", "source", "id", "column", "rule"]
    had = before.groupby(key).size()
    rank = after.groupby(key).cumcount()
    seen = pd.Series([had.get(tuple(k), 0) for k in after[key].to_numpy().tolist()], index=after.index, dtype=int)
    return after[rank >= seen].reset_index(drop=True)


def rule_table() -> pd.DataFrame:
    """The rules, as a page lists them: ``rule, checks`` (a text or a pair), ``description``."""
    return pd.DataFrame([{"rule": r.name, "checks": "each text" if r.kind == "text" else "the pair",
                          "description": r.description} for r in RULES.values()])


def count_table(findings: pd.DataFrame, attributes, rules=None, label: str = "") -> pd.DataFrame:
    """Pairs (distinct ids) caught per attribute (rows, in ``attributes`` order) and rule (columns, every rule of
    ``rules``, default :data:`RULES`, even when it caught nothing), with a column ``any``."""
    rules = list(RULES) if rules is None else list(rules)
    counts = findings.drop_duplicates(["attribute", "id", "rule"]).groupby(["attribute", "rule"]).size()
    grid = counts.unstack(fill_value=0).reindex(index=list(attributes), columns=rules, fill_value=0).fillna(0)
    grid = grid.astype(int)
    grid["any"] = [findings.loc[findings["attribute"] == a, "id"].nunique() for a in grid.index]
    if label:
        grid.columns = pd.MultiIndex.from_product([[label], grid.columns])
    return grid.rename_axis(index="attribute", columns=None)


__all__ = ["FINDING_COLUMNS", "PAIR_RULES", "RULES", "TEXT_RULES", "Rule", "check_pairs", "check_texts",
           "count_table", "introduced", "pair_findings", "rule_table", "text_findings"]
