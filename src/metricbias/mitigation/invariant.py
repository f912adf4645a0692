"""A metric blind to one attribute: the mean of a metric over the groups of that attribute.

:func:`invariant` wraps any metric ``M`` (a registered name, a :class:`~metricbias.metrics.Metric` or a
function) for an attribute ``a`` whose lexicon (``data/lexicons/<a>.yml``) lists groups ``G``::

    M_a(c, r) = mean over g in G(c, r) of M(T_g(c), T_g(r))

where ``T_g`` writes every identity term of the attribute in a text as the term of group ``g`` in the same
lexicon row (:func:`to_group`: *he*, *she*, *they* are one row), the candidate and the reference together.
``T_g`` is a projection: ``T_g(T_h(x)) = T_g(x)``, so two candidates that are swaps of each other under
the lexicon get the same score against the same reference, and the Eq.-2 gap of every such pair is zero
by construction (``tests/test_invariant.py`` checks it). A pair whose candidates differ in words the
lexicon does not know (a name, an unlisted term) keeps that part of its gap.

How a term is mapped, so that the projection holds:

* the row of a term is the first lexicon row that lists it, except for a term that is also a possessive
  determiner (*her*: object and possessive; *his*: possessive and possessive pronoun), whose row is chosen
  by the word that follows it (:func:`metricbias.datasets.swap.ends_noun_phrase`, the gender swapper's
  rule: "her book" is possessive, "gave her the book" is an object);
* group ``g``'s term in that row is its first term whose own row (by the same rule, in the same place) is
  that row; ``G(c, r)`` is the set of groups that have such a term for every identity term found in the
  candidate and the reference (all groups when none is found: then every ``T_g`` leaves the texts as they
  are, and the score is ``M(c, r)``);
* case follows the replaced words (*She* → *He*), a possessive *'s* is kept, and an indefinite article
  before the term is re-chosen (*a* → *an*). Verb agreement is not changed (*they was*), since a changed
  verb could not be changed back.

Every variant of every pair is scored in one call to the wrapped metric, which scores each distinct
(candidate, reference) once and, on an encoder, encodes each distinct text once. :func:`cost` counts
what that costs against the plain metric.
"""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache

import numpy as np

from ..datasets import lexicons
from ..datasets.counterfactuals import agree_article
from ..datasets.swap import ends_noun_phrase, match_case
from ..metrics.base import Metric, MetricError

_WORD = re.compile(r"[A-Za-z0-9]+(?:['\u2019][A-Za-z]+)*")
_POSSESSIVE = re.compile(r"['\u2019]s$", re.IGNORECASE)


class _Terms:
    """A lexicon read for mapping: its normalized terms, the longest term in words, and each term's rows."""

    def __init__(self, lexicon: lexicons.Lexicon, groups):
        self.lexicon = lexicon
        self.groups = list(groups)
        self.keys = lexicon.all_terms()
        self.max_words = max(len(k.split()) for k in self.keys)

    def row_of(self, key: str, ends_phrase: bool) -> int:
        """The lexicon row of the normalized term ``key`` in a place where a noun phrase ends (or not) after it."""
        entries = self.lexicon.lookup(key)
        forms = {e.form for e in entries}
        if "possessive" in forms and len(forms) > 1:  # her, his: the next word tells the determiner
            entries = [e for e in entries if (e.form == "possessive") != ends_phrase]
        return entries[0].row

    def term_in(self, row: int, group: str, ends_phrase: bool) -> str | None:
        """Group ``group``'s first term of ``row`` that maps back to ``row`` in this place (None: no such term)."""
        for term in self.lexicon.rows[row].terms.get(group, ()):
            if self.row_of(lexicons.normalize_term(term), ends_phrase) == row:
                return term
        return None


def _occurrences(text: str, terms: _Terms) -> list[tuple[int, int, str, int, bool]]:
    """Identity terms of ``text``, longest match first: (start, end, possessive 's kept, row, ends_phrase)."""
    tokens = [(m.start(), m.end(), m.group()) for m in _WORD.finditer(text)]
    found, i = [], 0
    while i < len(tokens):
        for n in range(min(terms.max_words, len(tokens) - i), 0, -1):
            start, end = tokens[i][0], tokens[i + n - 1][1]
            words = [t[2] for t in tokens[i:i + n]]
            key = lexicons.normalize_term(" ".join(words))
            suffix = ""
            if key not in terms.keys and _POSSESSIVE.search(words[-1]):
                key, suffix = key[:-2], words[-1][-2:]
            if key in terms.keys:
                ends = ends_noun_phrase(text, end)
                found.append((start, end, suffix, terms.row_of(key, ends), ends))
                i += n
                break
        else:
            i += 1
    return found


def _groups_for(texts, terms: _Terms) -> tuple[list[str], list[list]]:
    """The groups with a term for every identity term of ``texts``, and each text's occurrences."""
    occurrences = [_occurrences(t, terms) for t in texts]
    groups = [g for g in terms.groups
              if all(terms.term_in(row, g, ends) for occ in occurrences for _, _, _, row, ends in occ)]
    return groups, occurrences


def _write(text: str, occurrences, group: str, terms: _Terms) -> str:
    for start, end, suffix, row, ends in reversed(occurrences):  # right to left keeps offsets valid
        new = match_case(text[start:end - len(suffix)], terms.term_in(row, group, ends)) + suffix
        text = agree_article(text[:start] + new + text[end:], start)
    return text


@lru_cache(maxsize=32)
def _terms(attribute: str, groups: tuple[str, ...] | None) -> _Terms:
    lex = lexicons.load(attribute)
    chosen = list(groups) if groups else lex.groups
    unknown = [g for g in chosen if g not in lex.groups]
    if unknown:
        raise MetricError(f"invariant: attribute {attribute!r} has no group(s) {unknown}; its lexicon "
                          f"{lex.path} lists {', '.join(lex.groups)}")
    return _Terms(lex, chosen)


def to_group(text: str, attribute: str, group: str) -> str:
    """``text`` with every identity term of ``attribute`` written as ``group``'s term of the same lexicon row.

    >>> to_group("She said her book was his.", "gender", "male")
    'He said his book was his.'

    A term whose row has no term of ``group`` is left as it is.
    """
    terms = _terms(attribute, None)
    occ = [o for o in _occurrences(text, terms) if terms.term_in(o[3], group, o[4])]
    return _write(text, occ, group, terms)


def variants(candidate: str, reference: str, attribute: str, groups=None) -> dict[str, tuple[str, str]]:
    """``{group: (T_g(candidate), T_g(reference))}`` over the groups ``G(c, r)`` the wrapper averages."""
    terms = _terms(attribute, tuple(groups) if groups else None)
    chosen, (occ_c, occ_r) = _groups_for((candidate, reference), terms)
    return {g: (_write(candidate, occ_c, g, terms), _write(reference, occ_r, g, terms)) for g in chosen}


def plan(candidates, references, attribute: str, groups=None) -> tuple[list[str], list[str], np.ndarray]:
    """Every variant to score, as distinct (candidate, reference) pairs, and ``[owners, slots]``: the pair
    each variant score belongs to and where it is among the distinct pairs."""
    index: dict[tuple[str, str], int] = {}
    owners, slots = [], []
    for i, (c, r) in enumerate(zip(candidates, references)):
        for pair in (variants(c, r, attribute, groups) or {None: (c, r)}).values():
            slots.append(index.setdefault(pair, len(index)))
            owners.append(i)
    pairs = list(index)
    return [c for c, _ in pairs], [r for _, r in pairs], np.array([owners, slots])


class InvariantMetric(Metric):
    """A metric averaged over the groups of one attribute, candidate and reference swapped together."""

    name = "invariant"
    family = "user"
    paradigm = "attribute-blind wrapper"
    label = "invariant"
    docs = {"metric": "the wrapped metric (a Metric)", "attribute": "the attribute whose lexicon gives the groups",
            "groups": "the groups averaged over (None: every group of the lexicon)"}
    types = {"metric": Metric, "groups": (tuple, type(None))}
    defaults = {"metric": None, "attribute": "gender", "groups": None}
    revision = 1

    def __init__(self, **options):
        super().__init__(**options)
        inner = self.options["metric"]
        if not isinstance(inner, Metric):
            raise MetricError("invariant: give the metric to wrap (metric=...)")
        self.inner = inner
        self.terms = _terms(self.options["attribute"], self.options["groups"])
        self.direction = inner.direction
        self.corpus_dependent = inner.corpus_dependent
        self.empty_text = inner.empty_text

    def config_label(self) -> str:
        return f"{self.inner.config_label()} ({self.options['attribute']}-invariant)"

    def signature_fields(self) -> dict[str, str]:
        inner = self.inner.signature_fields()
        lexicon = hashlib.sha256(self.terms.lexicon.path.read_bytes()).hexdigest()[:12]
        fields = {"metric": self.name, "attribute": self.options["attribute"],
                  "groups": ",".join(self.terms.groups), "lexicon": lexicon}
        fields.update({f"inner.{k}": v for k, v in inner.items() if k not in ("direction", "version")})
        fields["direction"] = inner["direction"]
        fields["version"] = f"{inner['version']},invariant-rev-{self.revision}"
        return fields

    def rounding_gain(self, candidates, references, positions) -> np.ndarray:
        """The largest rounding gain of the wrapped metric over each pair's variants (their mean is no worse)."""
        picked = np.asarray(positions, dtype=int)
        cands, refs, (owners, slots) = plan([candidates[i] for i in picked], [references[i] for i in picked],
                                            self.options["attribute"], self.options["groups"])
        gain = np.asarray(self.inner.rounding_gain(cands, refs, np.arange(len(cands))), dtype=float)
        out = np.zeros(len(picked))
        np.maximum.at(out, owners, gain[slots])
        return out

    def _score(self, candidates, references):
        cands, refs, (owners, slots) = plan(candidates, references, self.options["attribute"], self.options["groups"])
        scored = self.inner.score(cands, refs)  # one call: each distinct variant once
        return np.bincount(owners, weights=scored[slots], minlength=len(candidates)) / np.bincount(
            owners, minlength=len(candidates))


def invariant(metric, attribute: str = "gender", groups=None) -> InvariantMetric:
    """``metric`` made blind to ``attribute``: the mean of its scores over the attribute's groups.

    ``metric`` is anything :func:`metricbias.metrics.registry.resolve` takes (a name, a specification,
    a :class:`~metricbias.metrics.Metric`, a function); ``groups`` limits the groups averaged over
    (default: every group of the attribute's lexicon). The result is a Metric: it audits, scores pairs
    and caches like any other, under a signature that wraps the inner metric's.
    """
    from ..metrics.registry import resolve

    _, inner = resolve(metric)
    return InvariantMetric(metric=inner, attribute=attribute, groups=tuple(groups) if groups else None)


def passes(candidates, references, attribute: str = "gender", groups=None) -> dict[str, set]:
    """What the plain metric and the wrapper run on these pairs, as sets: ``plain texts``, ``plain pairs``,
    ``wrapped texts`` and ``wrapped pairs`` (distinct texts, distinct (candidate, reference) pairs). The passes of
    several evaluation sets pooled are the unions of theirs."""
    cands, refs, _ = plan(list(candidates), list(references), attribute, tuple(groups) if groups else None)
    return {"plain texts": set(candidates) | set(references), "plain pairs": set(zip(candidates, references)),
            "wrapped texts": set(cands) | set(refs), "wrapped pairs": set(zip(cands, refs))}


def pool(runs) -> dict[str, set]:
    """The :func:`passes` of several evaluation sets scored together: the unions of theirs."""
    runs = list(runs)
    return {kind: set().union(*(r[kind] for r in runs)) for kind in runs[0]}


def cost(candidates, references, attribute: str = "gender", groups=None) -> dict[str, float]:
    """Forward passes of the wrapper relative to the plain metric on these pairs: :func:`ratio` of their
    :func:`passes`.

    ``texts``: distinct texts to encode (an encoder metric such as BERTScore encodes each once);
    ``pairs``: distinct (candidate, reference) pairs (a metric that reads the pair together, as the
    regression metric does). Each is the wrapper's count divided by the plain metric's.
    """
    return ratio(passes(candidates, references, attribute, groups))


def ratio(runs: dict[str, set]) -> dict[str, float]:
    """:func:`cost` of :func:`passes` already counted (those of one set, or :func:`pool` of several)."""
    return {"texts": len(runs["wrapped texts"]) / len(runs["plain texts"]),
            "pairs": len(runs["wrapped pairs"]) / len(runs["plain pairs"])}


__all__ = ["InvariantMetric", "cost", "invariant", "passes", "plan", "pool", "ratio", "to_group", "variants"]
