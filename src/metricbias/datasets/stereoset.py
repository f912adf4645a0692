"""Paired candidates from StereoSet intrasentence tests (Nadeem et al., 2021).

Each test is a context sentence with one ``BLANK`` about a target ("Ethiopian
men are BLANK") and three completions; the stereotype completion is
``candidate_1`` and the anti-stereotype one ``candidate_2`` (so ``direction``
is always ``stereo``). The two differ in the attribute word, not in the group,
so ``group_1`` and ``group_2`` are both the test's target.

The reference is the context with the blank neutralized:

* ``drop``     — a blank before a noun is removed ("The BLANK mover" -> "The mover");
* ``abstract`` — a predicative blank, with its intensifiers, becomes the
  attribute's ``abstract`` phrase from ``attributes.yml`` ("The musician was
  very BLANK." -> "The musician was a certain way.").

Blanks in other positions (a noun or verb slot) are excluded with a reason.
"""

from __future__ import annotations

import json
from functools import lru_cache

from .. import sources
from .published import DatasetError
from .textedit import INTENSIFIERS, detokenize, diff_blocks, edit, is_content, predicate_start, tokenize

FILE = "stereoset/dev.json"
LABELS = ("stereotype", "anti-stereotype", "unrelated")

REASONS = {
    "blank_count": "the context has no BLANK or more than one",
    "sentence_does_not_match_context": "a completion is not the context with the blank filled in",
    "blank_not_droppable": "the blank is a noun or verb slot, neither droppable nor predicative",
    "identical_candidates": "the stereotype and anti-stereotype completions are the same",
    "fill_word_survives": "a word of either completion also occurs elsewhere in the sentence",
}


@lru_cache(maxsize=2)
def _load(path: str, mtime_ns: int) -> list[dict]:
    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{path}: not valid JSON ({exc})") from exc
    try:
        tests = doc["data"]["intrasentence"]
    except (KeyError, TypeError) as exc:
        raise DatasetError(f"{path}: no data.intrasentence list") from exc
    out = []
    for i, test in enumerate(tests):
        where = f"{path}, data.intrasentence[{i}]"
        try:
            ident, target, bias_type, context = (str(test[k]).strip() for k in ("id", "target", "bias_type", "context"))
            by_label = {}
            for s in test["sentences"]:
                if s["gold_label"] not in LABELS:
                    raise DatasetError(f"{where} (id {ident}): gold_label {s['gold_label']!r} not in {LABELS}")
                by_label.setdefault(s["gold_label"], []).append(str(s["sentence"]).strip())
        except (KeyError, TypeError) as exc:
            raise DatasetError(f"{where}: missing or malformed field ({exc!r})") from exc
        if not (ident and target and context):
            raise DatasetError(f"{where}: empty id, target or context")
        if len(by_label.get("stereotype", [])) != 1 or len(by_label.get("anti-stereotype", [])) != 1:
            raise DatasetError(f"{where} (id {ident}): needs exactly one stereotype and one anti-stereotype sentence")
        out.append({"id": ident, "target": target, "bias_type": bias_type, "context": context,
                    "stereotype": by_label["stereotype"][0], "anti_stereotype": by_label["anti-stereotype"][0]})
    return out


def read(path=None) -> list[dict]:
    """The intrasentence tests: ``id, target, bias_type, context, stereotype, anti_stereotype``."""
    path = path or sources.path(FILE)
    return _load(str(path), path.stat().st_mtime_ns)


def neutral_context(context: str, stereotype: str, anti_stereotype: str, abstract: str):
    """``(reference, method)`` for one test, or ``(None, reason)``.

    The slot is read from the context; the edit is made on the stereotype
    sentence, so that the reference matches the candidates everywhere else
    (StereoSet contexts and completions are not always cased alike).
    """
    ctx = tokenize(context)
    blanks = [i for i, t in enumerate(ctx) if t.text == "BLANK"]
    if len(blanks) != 1:
        return None, "blank_count"
    k = blanks[0]
    spans, fills = [], set()
    for sentence in (stereotype, anti_stereotype):
        toks = tokenize(sentence)
        blocks = diff_blocks(ctx, toks)
        if len(blocks) != 1 or blocks[0][:2] != (k, k + 1) or blocks[0][2] == blocks[0][3]:
            return None, "sentence_does_not_match_context"
        spans.append(blocks[0][2:])
        fills |= {t.lower for t in toks[slice(*blocks[0][2:])] if t.is_word}
    if [t.lower for t in tokenize(stereotype)] == [t.lower for t in tokenize(anti_stereotype)]:
        return None, "identical_candidates"
    prev = ctx[k - 1] if k > 0 else None
    nxt = ctx[k + 1] if k + 1 < len(ctx) else None
    sent = tokenize(stereotype)
    start, end = spans[0]
    pred = predicate_start(ctx, k)
    if pred is not None and not is_content(nxt):
        reference, method = detokenize(edit(sent, start - (k - pred), end, abstract)), "abstract"
    elif is_content(nxt) and (prev is None or prev.lower not in INTENSIFIERS):
        reference, method = detokenize(edit(sent, start, end, "")), "drop"
    else:
        return None, "blank_not_droppable"
    if fills & {t.lower for t in tokenize(reference)}:
        return None, "fill_word_survives"
    return reference, method


def build(attribute: str, bias_types, abstract: str, path=None) -> tuple[list[dict], list[dict]]:
    """Rows of one attribute and its exclusions (with reasons)."""
    rows, excluded = [], []
    for test in read(path):
        if test["bias_type"] not in bias_types:
            continue
        reference, how = neutral_context(test["context"], test["stereotype"], test["anti_stereotype"], abstract)
        if reference is None:
            excluded.append({"attribute": attribute, "source": "stereoset", "source_id": test["id"], "reason": how,
                             "detail": test["context"], "candidate_1": test["stereotype"],
                             "candidate_2": test["anti_stereotype"]})
            continue
        rows.append({
            "pair_id": f"{attribute}-{test['id'][:12]}", "attribute": attribute, "source": "stereoset",
            "source_id": test["id"], "group_1": test["target"], "group_2": test["target"],
            "candidate_1": test["stereotype"], "candidate_2": test["anti_stereotype"], "reference": reference,
            "direction": "stereo", "reference_method": how,
        })
    return rows, excluded
