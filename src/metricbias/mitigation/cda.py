"""Counterfactual training data for debiasing adapters (Sun et al. 2022, Section 3.2).

Two kinds of training examples:

* **debiasing triples** ``(c1, c2, r)`` for Eq. 4: ``c1`` is a sentence that
  mentions gender, ``c2`` the same sentence with every gendered term swapped to
  the other gender (counterfactual data augmentation, CDA), and ``r`` a
  reference with the gendered terms replaced by neutral ones (he -> person).
  Each gendered sentence ``s`` of a sentence pair ``(s, t)`` gives two triples:
  ``kind="self"`` with ``r = neutral(s)`` (the shape of the evaluation
  datasets: candidate and reference differ only in identity words) and
  ``kind="pair"`` with ``r = neutral(t)`` (a paraphrase or related sentence as
  the reference, as with the paper's premise/hypothesis pairs);
* **distillation pairs** ``(candidate, reference)`` for Eq. 5: the original
  sentence pairs, scored by the frozen metric as the target.

Sources: the train splits of STS-B and MRPC (the paper used MultiNLI and
STS-B; MultiNLI is not in the mirror, MRPC is) and the gender examples of
StereoSet (debiasing only, as in the paper). Dev pairs are kept out: any
training pair that shares a sentence with the STS-B or MRPC dev split, or with
any text passed in ``exclude`` (the evaluation sets), is dropped, and the
counts say how many.

The swap and neutralisation functions are parameters; the defaults are the
project's gender swapper and lexicon.
"""

from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass, field
from typing import Callable, Iterable

import numpy as np
import pandas as pd

from .. import sources
from ..datasets.published import DatasetError

#: registered raw files of MRPC (STS-B is read by :mod:`metricbias.datasets.stsb`)
MRPC_FILES = {"train": "glue/MRPC/train.txt", "dev": "glue/MRPC/dev.txt"}
STEREOSET_FILE = "stereoset/dev.json"
SOURCES = ("stsb", "mrpc", "stereoset")
#: sources whose original pairs are also used for knowledge distillation
KD_SOURCES = ("stsb", "mrpc")

TRIPLE_COLUMNS = ["source", "pair_id", "kind", "c1", "c2", "r"]
KD_COLUMNS = ["source", "pair_id", "candidate", "reference"]


@dataclass
class CDAData:
    """Training data: debiasing triples, distillation pairs, and how they were counted."""

    debias: pd.DataFrame
    kd: pd.DataFrame
    counts: pd.DataFrame = field(default_factory=pd.DataFrame)

    def fingerprint(self) -> str:
        """Short hash of every triple and pair, in order: tells whether two builds gave the same data."""
        import hashlib

        h = hashlib.sha256()
        for frame, cols in ((self.debias, ["c1", "c2", "r"]), (self.kd, ["candidate", "reference"])):
            for row in frame[cols].itertuples(index=False):
                h.update("\x00".join(row).encode() + b"\x01")
        return h.hexdigest()[:16]

    def sample(self, n: int, seed: int = 0) -> "CDAData":
        """At most ``n`` examples of each kind, chosen at random (small training runs); 0 keeps all."""
        if not n:
            return self
        pick = lambda f: f.sample(n=min(n, len(f)), random_state=seed).reset_index(drop=True)  # noqa: E731
        return CDAData(pick(self.debias), pick(self.kd), self.counts)

    def split(self, fraction: float, seed: int) -> tuple["CDAData", "CDAData"]:
        """(train, validation): a held-out share of both kinds, grouped by source pair so no pair is in both."""
        if not 0 <= fraction < 1:
            raise ValueError(f"validation fraction must be in [0, 1), got {fraction}")
        rng = np.random.default_rng(seed)
        keys = sorted(set(self.debias["pair_id"]) | set(self.kd["pair_id"]))
        held = set(rng.permutation(np.array(keys, dtype=object))[: int(round(fraction * len(keys)))])

        def part(frame, validation: bool):
            mask = frame["pair_id"].isin(held)
            return frame[mask if validation else ~mask].reset_index(drop=True)

        return (CDAData(part(self.debias, False), part(self.kd, False), self.counts),
                CDAData(part(self.debias, True), part(self.kd, True), self.counts))


# --- readers ---------------------------------------------------------------------------------

def read_mrpc(split: str) -> pd.DataFrame:
    """MRPC pairs (``quality id1 id2 string1 string2``, header optional): ``sentence_1, sentence_2, label``."""
    if split not in MRPC_FILES:
        raise ValueError(f"unknown MRPC split {split!r}; splits: {', '.join(MRPC_FILES)}")
    path = sources.path(MRPC_FILES[split])
    rows = []
    with open(path, encoding="utf-8-sig", newline="") as fh:
        for lineno, row in enumerate(csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_NONE), start=1):
            if lineno == 1 and row and row[0].lower() == "quality":  # GLUE's header (the mirror's copy has none)
                continue
            if not row:
                continue
            if len(row) != 5:
                raise DatasetError(f"{path}, line {lineno}: {len(row)} tab-separated fields, expected 5")
            if row[0] not in ("0", "1"):
                raise DatasetError(f"{path}, line {lineno}: label {row[0]!r} is not 0 or 1")
            if not row[3].strip() or not row[4].strip():
                raise DatasetError(f"{path}, line {lineno}: empty sentence")
            rows.append((row[3].strip(), row[4].strip(), int(row[0])))
    if not rows:
        raise DatasetError(f"{path}: no sentence pairs")
    return pd.DataFrame(rows, columns=["sentence_1", "sentence_2", "label"])


def read_sentence_pairs(source: str, split: str) -> pd.DataFrame:
    """STS-B or MRPC pairs of ``split``: ``pair_id, sentence_1, sentence_2``."""
    if source == "stsb":
        from ..datasets import stsb

        frame = stsb.load(split).rename(columns={"sentence1": "sentence_1", "sentence2": "sentence_2"})
    elif source == "mrpc":
        frame = read_mrpc(split)
    else:
        raise ValueError(f"unknown sentence-pair source {source!r}; known: stsb, mrpc")
    frame.insert(0, "pair_id", [f"{source}-{split}-{i:05d}" for i in range(len(frame))])
    return frame[["pair_id", "sentence_1", "sentence_2"]]


def stereoset_gender_pairs() -> pd.DataFrame:
    """StereoSet's gender examples as sentence pairs ``pair_id, sentence_1, sentence_2``.

    Intersentence items give (context, continuation) for each of their three
    continuations; intrasentence items give their three filled-in sentences
    alone (``sentence_2`` empty: only ``self`` triples come from them).
    """
    path = sources.path(STEREOSET_FILE)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))["data"]
    except (KeyError, json.JSONDecodeError) as exc:
        raise DatasetError(f"{path}: not a StereoSet file with a 'data' field ({exc})") from exc
    rows = []
    for task in ("intersentence", "intrasentence"):
        for item in data.get(task, []):
            if item.get("bias_type") != "gender":
                continue
            for k, sent in enumerate(item["sentences"]):
                pid = f"stereoset-{task[:5]}-{item['id']}-{k}"
                if task == "intersentence":
                    rows.append((pid, item["context"].strip(), sent["sentence"].strip()))
                else:
                    rows.append((pid, sent["sentence"].strip(), ""))
    if not rows:
        raise DatasetError(f"{path}: no gender examples")
    return pd.DataFrame(rows, columns=["pair_id", "sentence_1", "sentence_2"])


# --- counterfactuals -------------------------------------------------------------------------

def normalize_text(text: str) -> str:
    """Lower case, single spaces, no surrounding punctuation: how overlaps with held-out texts are found."""
    return re.sub(r"\s+", " ", text.lower()).strip(" .,!?;:\"'")


def counterfactual_triples(s: str, t: str, swap: Callable[[str], str], neutralize: Callable[[str], str]) -> list[tuple]:
    """The ``(kind, c1, c2, r)`` triples made from sentence ``s`` of the pair ``(s, t)``; none if ``s`` has no gendered term."""
    c2 = swap(s)
    if c2 == s:
        return []
    out = [("self", s, c2, neutralize(s))]
    if t:
        out.append(("pair", s, c2, neutralize(t)))
    return out


def _default_swap() -> Callable[[str], str]:
    from ..datasets.swap import swap_gender

    return lambda text: swap_gender(text).text


#: what a possessive or object pronoun is, told by the counterpart the swapper chose for it
_FORM_BY_COUNTERPART = {("her", "him"): "object", ("her", "his"): "possessive",
                        ("his", "her"): "possessive", ("his", "hers"): "possessive_pronoun"}


def _neutral_term(word: str, counterpart: str, lexicon, kind: str | None) -> str:
    """The neutral replacement of one gendered word (lower case), from the gender lexicon.

    The lexicon's row for the word (its form told apart by the swapper's choice
    for ``her``/``his``); failing that, by the swapper's kind of word: a title is
    dropped, a first name becomes the lexicon's name replacement, a noun the
    lexicon's default noun or plural.
    """
    form = _FORM_BY_COUNTERPART.get((word, counterpart))
    entries = [e for e in lexicon.lookup(word) if e.group in ("female", "male") and (form is None or e.form == form)]
    if entries:
        return lexicon.rows[entries[0].row].neutral
    if kind == "title":
        return ""
    if kind == "name":
        return next(r.neutral for r in lexicon.rows if r.form == "name")
    plural = word.endswith(("men", "s")) and not word.endswith("ss")
    return lexicon.defaults["plural" if plural else "noun"]


def neutralize_gender(text: str) -> str:
    """``text`` with every gendered word (as the gender swapper finds them) replaced by its neutral term.

    "She lent her car to him." -> "The person lent the person's car to the person.";
    "Mr. Smith met a waitress." -> "Smith met a server." Spacing, sentence case and
    a/an agreement are kept by :func:`metricbias.datasets.textedit.edit`.
    """
    from ..datasets import lexicons
    from ..datasets.swap import lexicon as swap_lexicon
    from ..datasets.swap import swap_gender
    from ..datasets.textedit import detokenize, edit, tokenize

    result = swap_gender(text)
    if not result.changed:
        return text
    lex, entries = lexicons.load("gender"), swap_lexicon()
    tokens = tokenize(text)
    spans, pos = [], 0  # (start, end) of each token in ``text``
    for tok in tokens:
        pos += len(tok.ws)
        spans.append((pos, pos + len(tok.text)))
        pos += len(tok.text)
    for offset, old, new in reversed(result.replacements):  # from the end: earlier indices stay valid
        i = next((k for k, (a, b) in enumerate(spans) if a <= offset < b), None)
        if i is None:
            raise RuntimeError(f"neutralize_gender: cannot find the swapped word {old!r} at {offset} in {text!r}")
        whole = old.lower().replace("\u2019", "'")
        base, _, suffix = whole.partition("'")
        if lex.lookup(whole):  # contractions the lexicon lists whole: "he's" -> "the person is"
            neutral = _neutral_term(whole, new.lower(), lex, None)
        else:
            entry = entries.get(base)
            neutral = _neutral_term(base, new.lower().partition("'")[0], lex, entry.kind if entry else None)
            if suffix and neutral and not neutral.endswith("'s"):
                neutral += "'" + suffix
        a, b = spans[i]
        if (a, b) != (offset, offset + len(old)):  # part of a hyphenated token ("ex-fiance"): replace inside it
            k = offset - a
            tokens[i] = type(tokens[i])(tokens[i].text[:k] + neutral + tokens[i].text[k + len(old):], tokens[i].ws)
            continue
        end = i + 1
        if not neutral and end < len(tokens) and tokens[end].text == ".":  # "Mr. Smith": the period goes too
            end += 1
        tokens = edit(tokens, i, end, neutral)
    return detokenize(tokens)


def _default_neutralize() -> Callable[[str], str]:
    return neutralize_gender


def build(
    swap: Callable[[str], str] | None = None,
    neutralize: Callable[[str], str] | None = None,
    *,
    sources_: Iterable[str] = SOURCES,
    exclude: Iterable[str] = (),
    limit: int = 0,
    pair_tables: dict[str, pd.DataFrame] | None = None,
) -> CDAData:
    """Debiasing triples and distillation pairs from ``sources_``, with counts per source.

    ``exclude``: texts that must not occur in training (evaluation sets); a
    pair sharing a sentence (after :func:`normalize_text`) with them or with a
    dev split is dropped. ``limit`` > 0 reads only the first ``limit`` pairs of
    each source (quick runs). ``pair_tables`` replaces the readers (tests).
    """
    swap = swap or _default_swap()
    neutralize = neutralize or _default_neutralize()
    names = list(sources_)
    unknown = [s for s in names if s not in SOURCES]
    if unknown:
        raise ValueError(f"unknown CDA source(s) {unknown}; known: {', '.join(SOURCES)}")
    held_out = {normalize_text(t) for t in exclude if t}
    if pair_tables is None:
        for src in ("stsb", "mrpc"):
            dev = read_sentence_pairs(src, "dev")
            held_out.update(normalize_text(x) for x in pd.concat([dev["sentence_1"], dev["sentence_2"]]))
    held_out.discard("")  # a text of punctuation alone would otherwise match every missing partner
    triples, kd, counts = [], [], []
    for src in names:
        if pair_tables is not None:
            table = pair_tables[src]
        else:
            table = stereoset_gender_pairs() if src == "stereoset" else read_sentence_pairs(src, "train")
        if limit:
            table = table.head(limit)
        keep = [not ({normalize_text(a), normalize_text(b)} & held_out) for a, b in  # "" (no partner) never matches
                zip(table["sentence_1"], table["sentence_2"])]
        kept = table[keep]
        n_triples_before = len(triples)
        gendered = 0
        for pid, s1, s2 in zip(kept["pair_id"], kept["sentence_1"], kept["sentence_2"]):
            for s, t in ((s1, s2), (s2, s1)):
                if not s:
                    continue
                made = counterfactual_triples(s, t, swap, neutralize)
                gendered += bool(made)
                triples.extend((src, pid, *x) for x in made)
            if src in KD_SOURCES:
                kd.append((src, pid, s1, s2))
        counts.append({"source": src, "pairs_read": len(table), "dropped_held_out": len(table) - len(kept),
                       "pairs_used": len(kept), "gendered_sentences": gendered,
                       "debias_triples": len(triples) - n_triples_before,
                       "kd_pairs": len(kept) if src in KD_SOURCES else 0})
    debias = pd.DataFrame(triples, columns=TRIPLE_COLUMNS)
    n_before = len(debias)
    debias = debias.drop_duplicates(["c1", "c2", "r"]).reset_index(drop=True)
    kd_frame = pd.DataFrame(kd, columns=KD_COLUMNS).drop_duplicates(["candidate", "reference"]).reset_index(drop=True)
    counts_frame = pd.DataFrame(counts)
    total = counts_frame.drop(columns="source").sum()
    total["debias_triples"] = len(debias)
    total["kd_pairs"] = len(kd_frame)
    counts_frame = pd.concat([counts_frame, pd.DataFrame([{"source": "total (deduplicated)", **total}])],
                             ignore_index=True)
    counts_frame.attrs["duplicates_dropped"] = n_before - len(debias)
    if debias.empty:
        raise DatasetError(f"no gendered sentence found in {names}: the swap function changed nothing")
    return CDAData(debias, kd_frame, counts_frame)


__all__ = ["CDAData", "KD_SOURCES", "SOURCES", "build", "counterfactual_triples", "neutralize_gender", "normalize_text",
           "read_mrpc", "read_sentence_pairs", "stereoset_gender_pairs"]
