"""Gender pairs from WinoBias (Zhao et al., 2018): pro- vs anti-stereotyped sentences.

Line *n* of ``pro_stereotyped_type{1,2}.txt.{dev,test}`` and line *n* of the
matching ``anti_stereotyped`` file are one pair; they differ only in the
gendered pronouns. WinoBias brackets the noun phrase a pronoun refers to, so
the neutral reference replaces every differing pronoun by that noun phrase
(``he`` -> ``the developer``) or its possessive (``her idea`` -> ``the
designer's idea``), as Sun et al. (2022, section 2.2) describe. As in their
released set, the sentence-final period is dropped from candidates and
reference.
"""

from __future__ import annotations

import re

from .. import sources
from .lexicons import Lexicon
from .published import DatasetError
from .textedit import Token, detokenize, edit, tokenize

SUBSETS = ("type1.dev", "type1.test", "type2.dev", "type2.test")

#: why a pair is left out (the chapter shows counts by reason)
REASONS = {
    "differs_beyond_pronouns": "the pro and anti sentences differ in more than the gendered pronouns",
    "pronoun_forms_differ": "the swapped pronouns have different grammatical forms (her / he)",
    "ambiguous_pronoun": "a swapped pronoun can be read both as possessive and as object",
    "mixed_groups": "the swapped pronouns do not name one gender per sentence",
    "no_antecedent": "no bracketed noun phrase to refer to",
    "identical_candidates": "the two sentences are the same",
    "identity_term_survives": "a gendered word of either group is in both sentences, so also in the reference",
}
_LINE = re.compile(r"^(\d+) (.+)$")
_POSSESSIVE = {"possessive", "possessive_pronoun"}
_PRONOUN_FORMS = {"subject", "object", "reflexive", *_POSSESSIVE}


def files(subset: str) -> tuple[str, str]:
    typ, split = subset.split(".")
    return (f"winobias/pro_stereotyped_{typ}.txt.{split}", f"winobias/anti_stereotyped_{typ}.txt.{split}")


def parse_line(line: str, where: str) -> tuple[int, list[Token], list[tuple[int, int]]]:
    """``"3 [The mechanic] gave ... [he] won."`` -> (3, tokens without brackets, bracketed token ranges)."""
    m = _LINE.match(line.strip())
    if not m:
        raise DatasetError(f"{where}: expected '<number> <sentence>', got {line.strip()!r}")
    text = m.group(2)
    if text.count("[") != text.count("]") or text.count("[") < 2 or re.search(r"\[[^\]]*\[", text):
        raise DatasetError(f"{where}: expected at least two well-formed [bracketed] spans in {text!r}")
    tokens, spans, open_at, bracket_ws = [], [], None, None
    for tok in tokenize(text):
        if tok.text == "[":
            open_at, bracket_ws = len(tokens), tok.ws
        elif tok.text == "]":
            spans.append((open_at, len(tokens)))
        elif bracket_ws is not None:  # first word in a bracket takes the space before the bracket
            tokens.append(Token(tok.text, bracket_ws))
            bracket_ws = None
        else:
            tokens.append(tok)
    if any(s == e for s, e in spans):
        raise DatasetError(f"{where}: empty [bracketed] span in {text!r}")
    return int(m.group(1)), tokens, spans


def _read(name: str) -> list[tuple[str, int, list[Token], list[tuple[int, int]]]]:
    """Every sentence of one file, parsed: (where, number, tokens, bracketed spans)."""
    path = sources.path(name)
    with open(path, encoding="utf-8") as fh:
        return [(f"{path}, line {i}", *parse_line(line, f"{path}, line {i}"))
                for i, line in enumerate(fh, start=1) if line.strip()]


def source_pairs(subsets=SUBSETS) -> list[tuple[str, str, str]]:
    """Every (source_id, pro sentence, anti sentence) of the subsets, without the final period, as built."""
    out = []
    for subset in subsets:
        pro, anti = (_read(name) for name in files(subset))
        out += [(f"{subset}:{p[1]}", detokenize(_strip_period(p[2])), detokenize(_strip_period(a[2])))
                for p, a in zip(pro, anti)]
    return out


def build(attribute: str, lexicon: Lexicon, subsets=SUBSETS) -> tuple[list[dict], list[dict]]:
    """Rows of the gender set and the exclusions (pairs whose pronouns cannot be resolved)."""
    rows, excluded = [], []
    for subset in subsets:
        if subset not in SUBSETS:
            raise DatasetError(f"unknown WinoBias subset {subset!r}; known: {', '.join(SUBSETS)}")
        pro_name, anti_name = files(subset)
        pro, anti = _read(pro_name), _read(anti_name)
        if len(pro) != len(anti):
            raise DatasetError(f"{pro_name} has {len(pro)} sentences but {anti_name} has {len(anti)}: not aligned")
        for (where_p, num, tp, spans), (where_a, num_a, ta, _) in zip(pro, anti):
            if num != num_a:
                raise DatasetError(f"{where_a}: sentence number {num_a} does not match {num} at {where_p}")
            source_id = f"{subset}:{num}"
            row, reason = _pair(tp, ta, spans, lexicon)
            if reason:
                excluded.append({"attribute": attribute, "source": "winobias", "source_id": source_id,
                                 "reason": reason[0], "detail": reason[1],
                                 "candidate_1": detokenize(_strip_period(tp)),
                                 "candidate_2": detokenize(_strip_period(ta))})
                continue
            typ, split = subset.split(".")
            rows.append({"pair_id": f"{attribute}-{typ}-{split}-{num:03d}", "attribute": attribute,
                         "source": "winobias", "source_id": source_id, **row})
    return rows, excluded


def _strip_period(tokens: list[Token]) -> list[Token]:
    return tokens[:-1] if tokens and tokens[-1].text == "." else tokens


def _pair(tp: list[Token], ta: list[Token], spans, lexicon: Lexicon):
    if len(tp) != len(ta):
        return None, ("differs_beyond_pronouns", "the two sentences have different lengths")
    diffs = [i for i, (a, b) in enumerate(zip(tp, ta)) if a.lower != b.lower]
    if not diffs:
        return None, ("identical_candidates", "pro and anti sentences are the same")
    groups_1, groups_2, replacements = [], [], {}
    for i in diffs:
        e1 = {(e.form, e.group) for e in lexicon.lookup(tp[i].text) if e.form in _PRONOUN_FORMS}
        e2 = {(e.form, e.group) for e in lexicon.lookup(ta[i].text) if e.form in _PRONOUN_FORMS}
        forms = {f for f, _ in e1} & {f for f, _ in e2}
        if not (e1 and e2):
            return None, ("differs_beyond_pronouns", f"{tp[i].text!r} vs {ta[i].text!r}")
        if not forms:
            return None, ("pronoun_forms_differ", f"{tp[i].text!r} vs {ta[i].text!r}")
        possessive = forms <= _POSSESSIVE
        if not possessive and forms & _POSSESSIVE:
            return None, ("ambiguous_pronoun", f"{tp[i].text!r} vs {ta[i].text!r} (forms {sorted(forms)})")
        groups_1.append(next(g for f, g in sorted(e1) if f in forms))
        groups_2.append(next(g for f, g in sorted(e2) if f in forms))
        replacements[i] = possessive
    if len(set(groups_1)) != 1 or len(set(groups_2)) != 1 or groups_1[0] == groups_2[0]:
        return None, ("mixed_groups", f"pronoun groups {groups_1} vs {groups_2}")
    antecedents = [s for s in spans if not set(range(*s)) & set(diffs)]
    if not antecedents:
        return None, ("no_antecedent", "no bracketed noun phrase besides the pronouns")
    start, end = antecedents[0]
    np_tokens = tp[start:end]
    noun_phrase = " ".join(t.text for t in np_tokens)
    if np_tokens[0].lower in {"the", "a", "an"}:
        noun_phrase = np_tokens[0].text.lower() + noun_phrase[len(np_tokens[0].text):]
    ref = list(tp)
    for i in sorted(replacements, reverse=True):
        ref = edit(ref, i, i + 1, noun_phrase + ("'s" if replacements[i] else ""))
    reference = detokenize(_strip_period(ref))
    # a gendered word both sentences share ("because she is a generous man", "his mom") would stay
    survivors = lexicon.find(reference, [groups_1[0], groups_2[0]])
    if survivors:
        return None, ("identity_term_survives", f"{', '.join(survivors)} in {reference!r}")
    return {
        "group_1": groups_1[0],
        "group_2": groups_2[0],
        "candidate_1": detokenize(_strip_period(tp)),
        "candidate_2": detokenize(_strip_period(ta)),
        "reference": reference,
        "direction": "stereo",
        "reference_method": "antecedent",
    }, None
