"""Multi-group counterfactual candidate sets (Czarnowska et al. 2021, section 2.2).

A built pair (``datasets.built``) has two candidates that differ only in their
identity terms, one of group ``group_1`` and one of ``group_2``, and a neutral
reference. For an attribute whose lexicon aligns terms across more groups
(``data/lexicons/<attribute>.yml``: one row per grammatical form, ``he`` /
``she`` / ``they`` in one row), the pair becomes a *source example* with one
candidate per protected group t ∈ T: the differing spans of candidate 1 are
replaced by the first term of group t in the same lexicon row. Every group,
``group_1`` included, is realized by its own first term, so that no group keeps
a hand-picked wording.

A pair is left out, with a recorded reason, when a span is not an identity
term of its group, when a group of T has no term in that row, when the pair
mixes attributes (a group named ``"nationality:mexican"`` in the race set), or
when a substitution breaks a rule of :mod:`metricbias.datasets.checks` that the
candidate it was made from does not (``check:<rule>``; *a* / *an* is re-chosen
for the new term first).

Non-binary ``they`` takes plural agreement: a finite verb right after a
substituted subject pronoun (an adverb such as *always* may come between) is
made plural — ``was → were``, ``is → are``, ``has → have``, ``needs → need``.

The set has one row per (source, group) with the candidate, the reference,
and two kinds of background rows for the background comparison metric: group
``original`` (the pair's two unperturbed candidates) and group ``neutral``
(the neutral reference scored as a candidate against itself).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..paths import atomic_path, built_dir, data_dir
from ..signature import direction
from . import checks
from .lexicons import Lexicon, normalize_term
from .textedit import indefinite_article, tokenize

CONFIG_FILE = "counterfactuals.yml"
COLUMNS = ["attribute", "source", "group", "candidate", "reference"]
EXCLUSION_COLUMNS = ["attribute", "source", "reason", "detail"]
ORIGINAL, NEUTRAL = "original", "neutral"
REASONS = {
    "cross_attribute": "a candidate's group belongs to another attribute's lexicon",
    "not_a_term": "a differing span is not an identity term of its group",
    "no_counterpart": "a protected group has no term in the lexicon row of a span",
    **{f"check:{name}": rule.description for name, rule in checks.RULES.items()},
}

_TOKEN = re.compile(r"[\w'’-]+|[^\w\s]")
#: verbs after a subject pronoun whose plural is irregular
_PLURAL = {"is": "are", "was": "were", "has": "have", "does": "do", "isn't": "aren't", "wasn't": "weren't",
           "hasn't": "haven't", "doesn't": "don't", "goes": "go"}
#: words that may sit between a subject and its verb
_ADVERBS = {"always", "never", "often", "only", "just", "also", "really", "still", "usually", "sometimes", "already",
            "even", "actually", "probably", "definitely", "rarely", "seldom", "ever", "barely", "hardly", "simply"}
#: subject pronouns that take plural agreement
_PLURAL_SUBJECTS = {"they"}


@dataclass(frozen=True)
class _Span:
    start: int  # character offsets in candidate 1
    end: int
    text_1: str
    text_2: str


def _tokens(text: str) -> list[tuple[int, int, str]]:
    return [(m.start(), m.end(), m.group()) for m in _TOKEN.finditer(text)]


_ARTICLES = {"a", "an"}


def _trim(t1: list, t2: list) -> tuple[list, list]:
    """Drop articles and punctuation at either end of a differing span ("an Italian." vs "a German")."""
    def loose(tok):
        return tok[2].lower() in _ARTICLES or not re.search(r"\w", tok[2])

    def trim(t):
        while len(t) > 1 and loose(t[0]):
            t = t[1:]
        while len(t) > 1 and loose(t[-1]):
            t = t[:-1]
        return t

    return trim(t1), trim(t2) if t2 else t2


def differing_spans(candidate_1: str, candidate_2: str) -> list[_Span]:
    """The word spans where two candidates differ (case-insensitive), with candidate 1's character offsets.

    Articles and punctuation at the ends of a span are not part of it (the
    article is re-chosen after a substitution).
    """
    t1, t2 = _tokens(candidate_1), _tokens(candidate_2)
    matcher = difflib.SequenceMatcher(None, [t[2].lower() for t in t1], [t[2].lower() for t in t2], autojunk=False)
    spans = []
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op == "equal":
            continue
        if a0 == a1:  # pure insertion in candidate 2: nothing to replace in candidate 1
            at = t1[a0 - 1][1] if a0 else 0
            spans.append(_Span(at, at, "", candidate_2[t2[b0][0]:t2[b1 - 1][1]]))
            continue
        s1, s2 = _trim(t1[a0:a1], t2[b0:b1])
        text_2 = candidate_2[s2[0][0]:s2[-1][1]] if s2 else ""
        spans.append(_Span(s1[0][0], s1[-1][1], candidate_1[s1[0][0]:s1[-1][1]], text_2))
    return spans


def agree_article(text: str, start: int) -> str:
    """Make an indefinite article right before ``start`` agree with the word at ``start`` (a/an)."""
    m = re.search(r"\b([Aa]n?)(\s+)$", text[:start])
    if not m:
        return text
    following = re.match(r"[\w'’-]*", text[start:]).group()
    art = indefinite_article(following)
    art = art.capitalize() if m.group(1)[0].isupper() else art
    return text[:m.start(1)] + art + text[m.end(1):]


def _entries(lexicon: Lexicon, text: str, group: str):
    """Lexicon entries of ``text`` in ``group``, and whether a possessive 's was stripped to find them."""
    found = [e for e in lexicon.lookup(text) if e.group == group]
    if found:
        return found, False
    key = normalize_term(text)
    if key.endswith("'s"):
        return [e for e in lexicon.lookup(key[:-2]) if e.group == group], True
    return [], False


def _match_case(term: str, like: str) -> str:
    if like[:1].isupper():
        return term[:1].upper() + term[1:]
    return term


def preferred_casing(texts) -> dict[str, str]:
    """How each word is written inside sentences (not sentence-initially), by majority: {"asian": "Asian", ...}.

    Lexicons are lower-case; a substituted term takes the casing the source
    data itself uses for it ("Asian", "Muslim", but "black").
    """
    counts: dict[str, dict[str, int]] = {}
    for text in texts:
        toks = _tokens(text)
        for i, (_, _, word) in enumerate(toks):
            if i == 0 or toks[i - 1][2] in {".", "!", "?"}:
                continue
            counts.setdefault(word.lower(), {}).setdefault(word, 0)
            counts[word.lower()][word] += 1
    return {low: max(forms, key=lambda w: (forms[w], w)) for low, forms in counts.items()}


def _cased(term: str, casing: dict[str, str] | None) -> str:
    if not casing:
        return term
    def one(w):
        low = w.lower()
        seen = casing.get(low) or casing.get(low[:-1] if low.endswith("s") else low + "s")
        return w[:1].upper() + w[1:] if seen and seen[:1].isupper() else w

    return " ".join(one(w) for w in term.split(" "))


def _pluralize(verb: str) -> str:
    low = verb.lower()
    if low in _PLURAL:
        out = _PLURAL[low]
    elif low.endswith("ies") and len(low) > 4:
        out = low[:-3] + "y"
    elif re.search(r"(ches|shes|sses|xes|zes|oes)$", low):
        out = low[:-2]
    elif low.endswith("s") and not low.endswith(("ss", "us", "is")) and len(low) > 2:
        out = low[:-1]
    else:
        return verb
    return _match_case(out, verb)


def _agree(text: str, end: int) -> str:
    """Plural agreement for the verb after a plural subject ending at ``end``."""
    rest = _tokens(text[end:])
    for start, stop, word in rest:
        if word.lower() in _ADVERBS:
            continue
        if re.fullmatch(r"[A-Za-z']+", word):
            new = _pluralize(word)
            return text[:end + start] + new + text[end + stop:]
        break
    return text


def substitute(candidate_1: str, candidate_2: str, group_1: str, group_2: str, lexicon: Lexicon,
               groups, casing: dict[str, str] | None = None) -> tuple[dict[str, str] | None, str | None, str]:
    """One candidate per group of ``groups``: ({group: text}, None, "") or (None, reason, detail).

    ``casing`` (:func:`preferred_casing`) says how to write a substituted term;
    a span that starts upper-case (sentence-initially) keeps an upper-case start.
    """
    for g in (group_1, group_2):
        if ":" in g:
            return None, "cross_attribute", f"group {g}"
    spans = differing_spans(candidate_1, candidate_2)
    if not spans:
        return None, "not_a_term", "the candidates do not differ"
    rows = []
    for span in spans:
        own, own_poss = _entries(lexicon, span.text_1, group_1)
        other, _ = _entries(lexicon, span.text_2, group_2)
        if not own:
            return None, "not_a_term", f"{span.text_1!r} is no {group_1} term"
        # a term in several rows (her: object and possessive) takes the row whose form the other term shares
        forms = {e.form for e in other}
        entry = next((e for e in own if e.form in forms), own[0])
        rows.append((span, lexicon.rows[entry.row], own_poss))
    out = {}
    for g in groups:
        text = candidate_1
        for span, row, possessive in sorted(rows, key=lambda r: -r[0].start):  # right to left keeps offsets valid
            terms = row.terms.get(g)
            if not terms:
                return None, "no_counterpart", f"{g} has no {row.form} term for {span.text_1!r}"
            new = _match_case(_cased(terms[0], casing) + ("'s" if possessive else ""), span.text_1)
            replaced = text[:span.start] + new + text[span.end:]
            text = agree_article(replaced, span.start)
            end = span.start + len(new) + len(text) - len(replaced)  # a → an moves the term by one character
            if row.form == "subject" and normalize_term(terms[0]) in _PLURAL_SUBJECTS:
                text = _agree(text, end)
        out[g] = text
    return out, None, ""


def _check(made: dict[str, str], source: str) -> tuple[str, str] | None:
    """The first rule of ``datasets.checks`` a substitution broke (a finding the candidate it was made from does
    not have, or two groups with the same candidate): (rule, detail), or None."""
    words = [tuple(t.lower for t in tokenize(text)) for text in made.values()]
    if len(set(words)) < len(words):
        return "identical_candidates", " / ".join(g for g, w in zip(made, words) if words.count(w) > 1)
    had = [rule for rule, _ in checks.text_findings(source)]
    for group, text in made.items():
        found = checks.text_findings(text)
        new = [(rule, detail) for i, (rule, detail) in enumerate(found)
               if [r for r, _ in found[:i + 1]].count(rule) > had.count(rule)]
        if new:
            return new[0][0], f"{group}: {new[0][1]}"
    return None


def build(pairs: pd.DataFrame, lexicon: Lexicon, groups, *, attribute: str | None = None, sample_size: int = 0,
          seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The counterfactual set of one attribute's built pairs: (rows, exclusions).

    ``pairs`` are built pairs in the pair layout (:func:`metricbias.datasets.built.load`; ``reference_1`` is
    the neutral reference both candidates share). ``groups`` is T, in order; every group
    must be one of the lexicon's. ``sample_size`` > 0 keeps that many usable
    sources, drawn with ``seed``. Rows: :data:`COLUMNS`, one per (source, group)
    plus two ``original`` rows and one ``neutral`` row per source.
    """
    groups = list(groups)
    unknown = [g for g in groups if g not in lexicon.groups]
    if unknown or len(groups) < 2:
        raise ValueError(f"counterfactual groups must be at least two of the lexicon's {lexicon.groups} "
                         f"({lexicon.path}); got {groups}")
    need = {"pair_id", "group_1", "group_2", "candidate_1", "candidate_2", "reference_1"}
    missing = need - set(pairs.columns)
    if missing:
        raise ValueError(f"pairs lack column(s) {sorted(missing)}")
    attribute = attribute or lexicon.name
    casing = preferred_casing(pd.concat([pairs["candidate_1"], pairs["candidate_2"]]))
    rows, excluded = [], []
    for p in pairs.itertuples(index=False):
        made, reason, detail = substitute(p.candidate_1, p.candidate_2, p.group_1, p.group_2, lexicon, groups,
                                          casing)
        if made is None:
            excluded.append({"attribute": attribute, "source": p.pair_id, "reason": reason, "detail": detail})
            continue
        found = _check(made, p.candidate_1)
        if found:  # a substitution that breaks a rule of datasets.checks is left out, with the rule
            excluded.append({"attribute": attribute, "source": p.pair_id, "reason": f"check:{found[0]}",
                             "detail": found[1]})
            continue
        block = [(g, made[g]) for g in groups] + [(ORIGINAL, p.candidate_1), (ORIGINAL, p.candidate_2),
                                                  (NEUTRAL, p.reference_1)]
        rows.append([{"attribute": attribute, "source": p.pair_id, "group": g, "candidate": text,
                      "reference": p.reference_1} for g, text in block])
    if sample_size and len(rows) > sample_size:
        keep = np.sort(np.random.default_rng(seed).choice(len(rows), size=sample_size, replace=False))
        rows = [rows[i] for i in keep]
    flat = [r for block in rows for r in block]
    return pd.DataFrame(flat, columns=COLUMNS), pd.DataFrame(excluded, columns=EXCLUSION_COLUMNS)


def as_pairs(rows: pd.DataFrame) -> pd.DataFrame:
    """Counterfactual rows in the pair layout (:mod:`.schema`).

    Per source: one pair per two protected groups (in the configured order), the
    original pair (both groups ``original``) and the neutral reference against
    itself (both ``neutral``). ``item_1``/``item_2`` name the row each side stands
    for, so that a corpus-dependent metric sees each row once, as :func:`build`
    wrote them; :func:`group_scores` turns the scored pairs back into rows.
    """
    missing = set(COLUMNS) - set(rows.columns)
    if missing:
        raise ValueError(f"counterfactual rows lack column(s) {sorted(missing)}")
    out = []
    for (attribute, source), block in rows.groupby(["attribute", "source"], sort=False):
        protected = [(r.group, r.candidate) for r in block.itertuples() if r.group not in (ORIGINAL, NEUTRAL)]
        original = block.loc[block["group"] == ORIGINAL, "candidate"].tolist()
        reference = block["reference"].iloc[0]
        sides = [((g1, c1, g1), (g2, c2, g2)) for i, (g1, c1) in enumerate(protected) for g2, c2 in protected[i + 1:]]
        sides += [((ORIGINAL, original[0], f"{ORIGINAL}-1"), (ORIGINAL, original[1], f"{ORIGINAL}-2")),
                  ((NEUTRAL, reference, NEUTRAL), (NEUTRAL, reference, NEUTRAL))]
        out += [{"dataset": "counterfactual", "attribute": attribute, "pair_id": f"{source}|{i1}|{i2}",
                 "candidate_1": c1, "candidate_2": c2, "reference_1": reference, "reference_2": reference,
                 "group_1": g1, "group_2": g2, "source": source, "item_1": f"{source}|{i1}",
                 "item_2": f"{source}|{i2}"} for (g1, c1, i1), (g2, c2, i2) in sides]
    return pd.DataFrame(out)


def group_scores(scored: pd.DataFrame) -> pd.DataFrame:
    """Scored pairs of :func:`as_pairs` back to one row per counterfactual row, in :func:`build`'s order:
    ``attribute, source, group, metric, score, direction, signature``."""
    need = {"attribute", "source", "group_1", "group_2", "item_1", "item_2", "metric", "score_1", "score_2",
            "signature"}
    missing = need - set(scored.columns)
    if missing:
        raise ValueError(f"scored counterfactual pairs lack column(s) {sorted(missing)}")
    sides = [scored[["metric", "attribute", "source", f"group_{k}", f"item_{k}", f"score_{k}", "signature"]]
             .set_axis(["metric", "attribute", "source", "group", "item", "score", "signature"], axis=1)
             .assign(order=np.arange(len(scored)) * 2 + k) for k in (1, 2)]
    rows = pd.concat(sides).sort_values("order", kind="stable").drop_duplicates(["metric", "item"])
    rows["direction"] = rows["signature"].map(direction)
    return rows[["attribute", "source", "group", "metric", "score", "direction", "signature"]].reset_index(drop=True)


def config(path=None) -> dict[str, list[str]]:
    """The protected groups of each counterfactual set (``data/counterfactuals.yml``)."""
    import yaml

    path = path or data_dir() / CONFIG_FILE
    if not path.exists():
        raise FileNotFoundError(f"counterfactual configuration {path} is missing; it is part of the checkout")
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(doc, dict) or not doc:
        raise ValueError(f"{path}: expected a mapping attribute -> list of groups")
    for attribute, groups in doc.items():
        if not isinstance(groups, list) or len(groups) < 2 or not all(isinstance(g, str) for g in groups):
            raise ValueError(f"{path}, attribute {attribute!r}: give a list of at least two group names")
    return {str(a): list(g) for a, g in doc.items()}


def build_attributes(groups_by_attribute: dict | None = None, *, sample_size: int = 0, seed: int = 0,
                     built_dir=None):
    """:func:`build` for several attributes of ``datasets.built``: (rows, exclusions), concatenated.

    ``groups_by_attribute`` defaults to :func:`config`; a list of attribute names
    takes their groups from it. ``built_dir``: where the built pairs are read from.
    """
    from . import built, lexicons

    known = config() if groups_by_attribute is None or not isinstance(groups_by_attribute, dict) else None
    if groups_by_attribute is None:
        groups_by_attribute = known
    elif not isinstance(groups_by_attribute, dict):
        unknown = [a for a in groups_by_attribute if a not in known]
        if unknown:
            raise ValueError(f"no counterfactual groups configured for {unknown}; configured: {', '.join(known)}")
        groups_by_attribute = {a: known[a] for a in groups_by_attribute}
    sets, excl = [], []
    for attribute, groups in groups_by_attribute.items():
        pairs = built.load([attribute], folder=built_dir)
        rows, out = build(pairs, lexicons.load(attribute), groups, attribute=attribute, sample_size=sample_size,
                          seed=seed)
        sets.append(rows)
        excl.append(out)
    if not sets:  # no configured attribute asked for
        return pd.DataFrame(columns=COLUMNS), pd.DataFrame(columns=EXCLUSION_COLUMNS)
    return pd.concat(sets, ignore_index=True), pd.concat(excl, ignore_index=True)


def write(groups_by_attribute=None, out=None) -> pd.DataFrame:
    """Write ``<out>/<attribute>.tsv`` (rows) and ``<attribute>.excluded.tsv`` per set, atomically.

    ``out`` defaults to ``data/built/counterfactuals`` (generated, not committed).
    Returns one summary row per attribute: sources, rows, excluded, path.
    """
    out = built_dir() / "counterfactuals" if out is None else Path(out)
    rows, excluded = build_attributes(groups_by_attribute)
    summary = []
    for attribute, block in rows.groupby("attribute", sort=False):
        target = out / f"{attribute}.tsv"
        for frame, path in ((block, target), (excluded[excluded["attribute"] == attribute],
                                              out / f"{attribute}.excluded.tsv")):
            with atomic_path(path, suffix=".tsv") as tmp:
                frame.to_csv(tmp, sep="\t", index=False, lineterminator="\n")
        summary.append({"attribute": attribute, "sources": block["source"].nunique(), "rows": len(block),
                        "excluded": int((excluded["attribute"] == attribute).sum()), "path": target})
    return pd.DataFrame(summary)


__all__ = ["COLUMNS", "EXCLUSION_COLUMNS", "NEUTRAL", "ORIGINAL", "REASONS", "agree_article", "as_pairs", "build",
           "build_attributes", "config", "differing_spans", "group_scores", "preferred_casing", "substitute", "write"]
