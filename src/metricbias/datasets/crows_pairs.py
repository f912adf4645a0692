"""Paired candidates from CrowS-Pairs (Nangia et al., 2020) with a rule-based neutral reference.

``sent_more`` and ``sent_less`` are aligned token by token; the differing spans
are the identity spans. Each span is looked up in the attribute's lexicon and
neutralized in ``sent_more`` as Sun et al. (2022, Appendix A) describe:

* ``drop``     — an identity adjective before a noun is dropped ("a black man" -> "a man");
* ``replace``  — an identity noun, pronoun or epithet becomes the row's neutral term
  ("the Jews" -> "the people", "he" -> "the person");
* ``abstract`` — a predicative identity word becomes the lexicon's abstract phrase
  ("because he was so tall" -> "because he was of a certain height"), as does a
  plural noun used as a bare predicate ("were all millenials" -> "were all of a
  certain age", not the empty "were all people").

A pair that cannot be neutralized safely is excluded with a reason from
:data:`REASONS`; nothing is guessed. ``candidate_1`` is ``sent_more`` and
``direction`` is the row's ``stereo_antistereo`` label, as in the released set.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass

from .. import sources
from .lexicons import Entry, Lexicon, normalize_term
from .published import DatasetError
from .textedit import (
    COPULAS,
    DETERMINERS,
    MODALS,
    Token,
    degree_start,
    detokenize,
    diff_blocks,
    edit,
    is_content,
    looks_like_verb,
    predicate_start,
    term_range,
    tokenize,
)

FILE = "crows_pairs/crows_pairs_anonymized.csv"
HEADER = ["", "sent_more", "sent_less", "stereo_antistereo", "bias_type", "annotations", "anon_writer",
          "anon_annotators"]
DIRECTIONS = ("stereo", "antistereo")
MAX_SPANS = 3

#: why a pair is left out (the chapter shows counts by reason)
REASONS = {
    "identical_candidates": "the two sentences are the same",
    "too_many_differences": f"the sentences differ in more than {MAX_SPANS} places",
    "no_identity_term": "a differing span holds no identity term of the attribute (e.g. hated / loved)",
    "not_in_lexicon": "one side is an identity term, the other is not (e.g. a name against a group noun)",
    "span_has_other_words": "a differing span holds an identity term and other changed words",
    "same_group": "both sides name the same group",
    "mixed_groups": "the differing spans of one pair name different pairs of groups",
    "forms_disagree": "the two terms differ in form (woman / men), so no one neutral term fits both",
    "ambiguous_usage": "an adjective used as a noun whose number cannot be told",
    "identity_term_survives": "an identity term of either group is still in the neutralized sentence",
    "other_attribute": "one side is an identity term of another attribute (mentally ill / white under disability)",
}
_SINGULAR_DETERMINERS = {"a", "an", "one", "this", "that", "each", "every", "another"}
_PLURAL_DETERMINERS = {"these", "those", "many", "some", "all", "most", "few", "several", "both"}
_PLURAL_VERBS = {"are", "were", "have", "do", "don't", "aren't", "weren't", "'re", "haven't"}
_SINGULAR_VERBS = {"is", "was", "has", "does", "doesn't", "isn't", "wasn't", "'s", "hasn't"}


@dataclass(frozen=True)
class Neutralized:
    reference: str
    group_1: str
    group_2: str
    method: str


@dataclass(frozen=True)
class Excluded:
    reason: str
    detail: str


def read(path=None) -> list[dict]:
    """The CrowS-Pairs rows: ``id, sent_more, sent_less, direction, bias_type``; malformed rows raise."""
    path = path or sources.path(FILE)
    rows, seen = [], set()
    with open(path, encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh)
        header = next(reader, None)
        if header != HEADER:
            raise DatasetError(f"{path}, row 1: header {header} is not the CrowS-Pairs header {HEADER}")
        for n, rec in enumerate(reader, start=2):
            where = f"{path}, row {n} (line {reader.line_num})"
            if len(rec) != len(HEADER):
                raise DatasetError(f"{where}: {len(rec)} fields, expected {len(HEADER)}")
            ident, more, less, direction, bias_type = (x.strip() for x in rec[:5])
            if not ident.isdigit() or ident in seen:
                raise DatasetError(f"{where}: id {ident!r} is not a new non-negative integer")
            if not more or not less:
                raise DatasetError(f"{where}: empty sent_more or sent_less")
            if direction not in DIRECTIONS:
                raise DatasetError(f"{where}: stereo_antistereo is {direction!r}, expected one of {DIRECTIONS}")
            if not bias_type:
                raise DatasetError(f"{where}: empty bias_type")
            seen.add(ident)
            # one sentence has a line break inside ("white\n."): the TSV outputs are one pair per line
            more, less = (re.sub(r" *[\t\n\r]+ *", " ", x).strip() for x in (rec[1], rec[2]))
            rows.append({"id": int(ident), "sent_more": more, "sent_less": less, "direction": direction,
                         "bias_type": bias_type})
    return rows


def build(attribute: str, lexicon: Lexicon, bias_types, others=(), path=None) -> tuple[list[dict], list[dict]]:
    """Rows of one attribute and its exclusions (with reasons); ``others``: see :func:`neutralize`."""
    rows, excluded = [], []
    for rec in read(path):
        if rec["bias_type"] not in bias_types:
            continue
        out = neutralize(rec["sent_more"], rec["sent_less"], lexicon, others)
        if isinstance(out, Excluded):
            excluded.append({"attribute": attribute, "source": "crows_pairs", "source_id": str(rec["id"]),
                             "reason": out.reason, "detail": out.detail, "candidate_1": rec["sent_more"],
                             "candidate_2": rec["sent_less"]})
            continue
        rows.append({
            "pair_id": f"{attribute}-{rec['id']:04d}", "attribute": attribute, "source": "crows_pairs",
            "source_id": str(rec["id"]), "group_1": out.group_1, "group_2": out.group_2,
            "candidate_1": rec["sent_more"], "candidate_2": rec["sent_less"],
            "reference": out.reference, "direction": rec["direction"], "reference_method": out.method,
        })
    return rows, excluded


def _term(tokens: list[Token]) -> tuple[str, bool]:
    text = normalize_term(" ".join(t.text for t in tokens))
    if text.endswith("'s") and len(text) > 2:
        return text[:-2], True
    return text, False


def _classify(lexicon: Lexicon, text: str) -> str:
    if lexicon.lookup(text):
        return "term"
    return "contains" if lexicon.find(text) else "none"


def _number(term: str, prev: Token | None, nxt: Token | None) -> str | None:
    """Singular or plural for an adjective used as a noun ("a black would say", "the poor are"); None if unclear."""
    if prev is None or term.endswith("est"):  # "the shortest of the group": singular or plural?
        return None
    if prev.lower in _SINGULAR_DETERMINERS or (nxt is not None and nxt.lower in _SINGULAR_VERBS):
        return "noun"
    if prev.lower in _PLURAL_DETERMINERS:
        return "plural"
    if prev.lower == "the" and (nxt is None or not nxt.is_word or nxt.lower in _PLURAL_VERBS | MODALS | {"and", "or"}):
        return "plural"  # "the poor are", "help the poor.": a nominalized adjective is plural
    return None


def _usages(term: str, entries: list[Entry], tokens: list[Token], start: int, end: int, possessive: bool) -> list[str]:
    """How a term is used here: ``adj-attr`` (before a noun), ``adj-pred`` (after a copula) or a noun form.

    ``[]`` when no reading is safe, e.g. "The Hindu thought ...", where the
    term could be a noun followed by a verb.
    """
    forms = list(dict.fromkeys(e.form for e in entries))
    prev = tokens[start - 1] if start > 0 else None
    nxt = tokens[end] if end < len(tokens) else None
    nouns = [f for f in forms if f != "adj"]
    if possessive:
        return nouns
    predicative = predicate_start(tokens, start) is not None
    if "adj" in forms and is_content(nxt):
        if not looks_like_verb(nxt):
            return ["adj-attr"]
        # "she was crippled made him ...": a predicate; "The Hindu thought ...": noun or adjective?
        return ["adj-pred"] if predicative else ([] if nouns else ["adj-attr"])
    if "adj" in forms and predicative:
        return ["adj-pred"]
    if "adj" in forms and prev is not None and prev.lower in DETERMINERS:
        number = _number(term, prev, nxt)
        if number and number not in nouns:
            nouns.append(number)
    return nouns


@dataclass(frozen=True)
class _Side:
    lexicon: Lexicon
    entries: list[Entry]
    usages: list[str]
    own: bool

    def entry(self, usage: str) -> Entry | None:
        form = "adj" if usage.startswith("adj-") else usage
        return next((e for e in self.entries if e.form == form), None)

    def group(self, usage: str) -> str:
        e = self.entry(usage) or next(e for e in self.entries if e.form == "adj")
        return e.group

    def neutral(self, usage: str) -> str | None:
        e = self.entry(usage)
        return self.lexicon.rows[e.row].neutral if e else self.lexicon.defaults.get(usage)


def _side(lexicon: Lexicon, others, tokens, start, end, term, possessive) -> _Side | None:
    for lex, own in [(lexicon, True), *((o, False) for o in others)]:
        entries = lex.lookup(term)
        if entries:
            return _Side(lex, entries, _usages(term, entries, tokens, start, end, possessive), own)
    return None


def _bare_predicate(tokens: list[Token], start: int) -> int | None:
    """Where a predicate noun without article begins ("were all TERM", "are TERM"), after the copula; else None."""
    i = start
    while i > 0 and start - i < 2 and tokens[i - 1].lower in {"all", "both", "just", "only", "really"}:
        i -= 1
    return i if i > 0 and tokens[i - 1].lower in COPULAS else None


def _neutralize_span(lexicon: Lexicon, others, a: list[Token], b: list[Token], block):
    """One differing span -> (edit start, edit end, new text, method, group_1, group_2) or Excluded."""
    i1, i2, j1, j2 = block
    s1, e1 = term_range(a, i1, i2)
    s2, e2 = term_range(b, j1, j2)
    (t1, poss1), (t2, poss2) = _term(a[s1:e1]), _term(b[s2:e2])
    shown = f"{' '.join(x.text for x in a[i1:i2])!r} / {' '.join(x.text for x in b[j1:j2])!r}"
    sa = _side(lexicon, others, a, s1, e1, t1, poss1) if t1 else None
    sb = _side(lexicon, others, b, s2, e2, t2, poss2) if t2 else None
    if sa is None or sb is None:
        partial = [t for t, side in ((t1, sa), (t2, sb)) if side is None and t and _classify(lexicon, t) == "contains"]
        if partial:
            return Excluded("span_has_other_words", shown)
        if (sa and sa.own) or (sb and sb.own):
            return Excluded("not_in_lexicon", shown)
        return Excluded("no_identity_term", shown)
    if not (sa.own or sb.own):
        return Excluded("no_identity_term", f"{shown} (identity terms of other attributes only)")
    if not (sa.own and sb.own):  # the pair contrasts two attributes, so it measures neither
        other = sb if sa.own else sa
        return Excluded("other_attribute", f"{shown} ({other.lexicon.name})")
    if poss1 != poss2:
        return Excluded("forms_disagree", f"{shown} (possessive on one side only)")
    common = [u for u in sa.usages if u in sb.usages]
    if not common:
        if not (sa.usages and sb.usages):
            return Excluded("ambiguous_usage", shown)
        return Excluded("forms_disagree", f"{shown} ({'/'.join(sa.usages) or '?'} vs {'/'.join(sb.usages) or '?'})")
    usage = common[0]
    g1, g2 = sa.group(usage), sb.group(usage)
    if g1 == g2:
        return Excluded("same_group", shown)
    own = [s for s in (sa, sb) if s.own]
    if usage == "adj-attr":
        return (degree_start(a, s1), e1, "", "drop", g1, g2)
    if usage == "adj-pred":
        phrases = {s.lexicon.abstract_phrase(t) for s, t in ((sa, t1), (sb, t2)) if s.own}
        phrase = phrases.pop() if len(phrases) == 1 else lexicon.abstract
        if not phrase:
            return Excluded("forms_disagree", f"{shown} (no abstract phrase)")
        return (predicate_start(a, s1), e1, phrase, "abstract", g1, g2)
    pred = _bare_predicate(a, s1)
    if usage == "plural" and pred is not None and lexicon.abstract:
        # "they were all millenials" -> "they were all of a certain age", not the empty "were all people"
        phrases = {s.lexicon.abstract_phrase(t) for s, t in ((sa, t1), (sb, t2)) if s.own}
        return (s1, e1, phrases.pop() if len(phrases) == 1 else lexicon.abstract, "abstract", g1, g2)
    neutrals = {s.neutral(usage) for s in own}
    neutral = neutrals.pop() if len(neutrals) == 1 else lexicon.defaults.get(usage)
    if not neutral:
        return Excluded("forms_disagree", f"{shown} (no single neutral term for form {usage!r})")
    return (s1, e1, neutral + ("'s" if poss1 else ""), "replace", g1, g2)


def neutralize(sent_more: str, sent_less: str, lexicon: Lexicon, others=(), max_spans: int = MAX_SPANS):
    """The neutral reference of one pair (:class:`Neutralized`) or why there is none (:class:`Excluded`).

    ``others`` are the lexicons of other attributes: a span may contrast an
    identity term of this attribute with one of another (CrowS-Pairs pairs
    "Jews" with "white" under religion). Such a pair measures two attributes at
    once and is excluded as ``other_attribute``; the other lexicons name it.
    """
    a, b = tokenize(sent_more), tokenize(sent_less)
    blocks = diff_blocks(a, b)
    if not blocks:
        return Excluded("identical_candidates", sent_more)
    if len(blocks) > max_spans:
        return Excluded("too_many_differences", f"{len(blocks)} differing spans")
    edits = []
    for block in blocks:
        out = _neutralize_span(lexicon, others, a, b, block)
        if isinstance(out, Excluded):
            return out
        edits.append(out)
    pairs = {(e[4], e[5]) for e in edits}
    if len(pairs) > 1:
        return Excluded("mixed_groups", ", ".join(f"{g1}/{g2}" for g1, g2 in sorted(pairs)))
    group_1, group_2 = pairs.pop()
    ref = list(a)
    for start, end, new, _, _, _ in sorted(edits, key=lambda e: e[0], reverse=True):
        ref = edit(ref, start, end, new)
    reference = detokenize(ref)
    survivors = lexicon.find(reference, [group_1, group_2])
    if survivors or not reference:
        return Excluded("identity_term_survives", f"{', '.join(survivors)} in {reference!r}")
    method = "+".join(sorted({e[3] for e in edits}))
    return Neutralized(reference, group_1, group_2, method)
