"""Meta-evaluation data: hypotheses with human judgements, to correlate metrics with.

Two shapes cover the sets the book uses:

* :class:`JudgedSet` — one row per hypothesis: ``item_id`` (the image or source
  document), ``system_id``, ``hypothesis``, ``references`` (a tuple of one or
  more strings) and one ``human:<aspect>`` column per judged aspect.
  Flickr8k expert (example level), REALSumm (system level) and any user file in
  the generic JSONL format are judged sets.
* :class:`PairSet` — relative rankings (WMT DARR): one row per (better, worse)
  pair of translations of the same source with their reference.

Two generic JSONL formats (UTF-8, one JSON object per line) bring your own data.
A judged hypothesis per line::

    {"item_id": "doc1", "system_id": "sysA", "hypothesis": "...",
     "references": ["...", "..."], "human": {"overall": 3.5}}

``item_id`` and ``system_id`` are strings or integers, ``references`` is a
non-empty list of non-empty strings, ``human`` maps every aspect (the same
aspects on every line) to a finite number; an (item_id, system_id) may occur once.

A relative-ranking pair per line (a human judged ``better`` above ``worse``)::

    {"item_id": "seg17", "reference": "...", "better": "...", "worse": "...",
     "better_system": "sysA", "worse_system": "sysB"}

``item_id`` is a string or an integer (the source segment; several pairs may
share it), ``reference``, ``better`` and ``worse`` are non-empty strings, and the
system names are optional (given on every line or on none). A pair may occur
once: the same item, systems (or, without systems, texts) twice is an error.
:func:`load` tells the formats apart by the keys of the first line.

A WMT DARR pickle in BARTScore's packaging (``{key: {"src", "ref", "better":
{"sys", "sys_name", ...}, "worse": {...}}}``, one per language pair) loads
through the restricted unpickler of :mod:`metricbias.sources`, whatever the pair.

A malformed line is an error that names the file and the line.
"""

from __future__ import annotations

import ast
import json
import math
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

from .. import sources
from .published import DatasetError

HUMAN_PREFIX = "human:"
NAMED = ("flickr8k", "realsumm", "wmt19-kk-en")


def _check_sample(n_items) -> None:
    if isinstance(n_items, bool) or not isinstance(n_items, (int, np.integer)) or n_items < 0:
        raise DatasetError(f"sample size must be 0 (all) or a positive whole number, not {n_items!r}")


@dataclass(frozen=True)
class JudgedSet:
    """Hypotheses with references and human scores (see the module docstring for the columns)."""

    name: str
    frame: pd.DataFrame
    #: the correlation levels this set is meant for: "example", "system" or both
    levels: tuple[str, ...]
    #: aspect -> columns holding the individual judges' scores (Flickr8k: three experts)
    judges: dict[str, list[str]] = field(default_factory=dict)
    #: every distinct text the gender swap changed, where it first occurs (set by :meth:`swapped`)
    swap_report: pd.DataFrame | None = None

    @property
    def aspects(self) -> list[str]:
        return [c[len(HUMAN_PREFIX):] for c in self.frame.columns if c.startswith(HUMAN_PREFIX)]

    def human(self, aspect: str) -> np.ndarray:
        col = HUMAN_PREFIX + aspect
        if col not in self.frame:
            raise DatasetError(f"{self.name}: no human aspect {aspect!r}; aspects: {', '.join(self.aspects)}")
        return self.frame[col].to_numpy(dtype=float)

    def __len__(self) -> int:
        return len(self.frame)

    def sample(self, n_items: int, seed: int = 0) -> "JudgedSet":
        """Keep ``n_items`` randomly chosen items (every system of each kept item); 0 keeps all."""
        _check_sample(n_items)
        items = self.frame["item_id"].drop_duplicates()
        if not n_items or n_items >= len(items):
            return self
        keep = set(items.sample(n=n_items, random_state=seed))
        return replace(self, frame=self.frame[self.frame["item_id"].isin(keep)].reset_index(drop=True))

    def subset(self, mask) -> "JudgedSet":
        return replace(self, frame=self.frame[np.asarray(mask, dtype=bool)].reset_index(drop=True))

    def swapped(self) -> "JudgedSet":
        """The gender-swapped set: every hypothesis and reference swapped, human scores kept."""
        from .swap import lexicon, swap_gender

        lex = lexicon()
        rows = []
        done: dict[str, str] = {}  # each distinct text is swapped and reported once

        def swap(text: str, where: str) -> str:
            if text not in done:
                res = swap_gender(text, lex)
                done[text] = res.text
                if res.changed:
                    rows.append({"where": where, "original": text, "swapped": res.text,
                                 "replacements": "; ".join(f"{o}→{n}" for _, o, n in res.replacements)})
            return done[text]

        frame = self.frame.copy()
        frame["hypothesis"] = [swap(h, f"hypothesis {i}") for i, h in enumerate(frame["hypothesis"])]
        frame["references"] = [tuple(swap(r, f"reference {j} of hypothesis {i}") for j, r in enumerate(rs))
                               for i, rs in enumerate(frame["references"])]
        report = pd.DataFrame(rows, columns=["where", "original", "swapped", "replacements"])
        return replace(self, name=f"{self.name} (gender-swapped)", frame=frame, swap_report=report)


@dataclass(frozen=True)
class PairSet:
    """Relative-ranking pairs: ``item_id``, ``reference``, ``better``, ``worse``, ``better_system``, ``worse_system``."""

    name: str
    frame: pd.DataFrame
    levels: tuple[str, ...] = ("pairs",)
    swap_report: pd.DataFrame | None = None

    def __len__(self) -> int:
        return len(self.frame)

    def sample(self, n_items: int, seed: int = 0) -> "PairSet":
        """Keep ``n_items`` randomly chosen pairs; 0 keeps all."""
        _check_sample(n_items)
        if not n_items or n_items >= len(self.frame):
            return self
        return replace(self, frame=self.frame.sample(n=n_items, random_state=seed).reset_index(drop=True))

    def swapped(self) -> "PairSet":
        from .swap import lexicon, swap_gender

        lex = lexicon()
        frame = self.frame.copy()
        rows = []
        done: dict[str, str] = {}  # a reference shared by many pairs is swapped and reported once
        for col in ("reference", "better", "worse"):
            out = []
            for i, text in enumerate(frame[col]):
                if text not in done:
                    res = swap_gender(text, lex)
                    done[text] = res.text
                    if res.changed:
                        rows.append({"where": f"{col} {i}", "original": text, "swapped": res.text,
                                     "replacements": "; ".join(f"{o}→{n}" for _, o, n in res.replacements)})
                out.append(done[text])
            frame[col] = out
        report = pd.DataFrame(rows, columns=["where", "original", "swapped", "replacements"])
        return replace(self, name=f"{self.name} (gender-swapped)", frame=frame, swap_report=report)


def swap_findings(data: "JudgedSet | PairSet") -> tuple[pd.DataFrame, pd.DataFrame]:
    """What the rules of ``datasets.checks`` find in the texts a gender swap changed (``data`` is a
    :meth:`~JudgedSet.swapped` set): (findings in those texts before the swap, findings the swap introduced).
    Each distinct changed text counts once; ``id`` is where it first occurs."""
    from .checks import check_texts, introduced

    report = data.swap_report
    if report is None:
        raise DatasetError(f"{data.name}: not a gender-swapped set; call .swapped() first")
    before = check_texts(report["original"], report["where"], attribute=data.name, column="text")
    after = check_texts(report["swapped"], report["where"], attribute=data.name, column="text")
    return before, introduced(before, after)


# --- Flickr8k expert judgements ---------------------------------------------------------

FLICKR8K_FILES = ("flickr8k_expert/candidates.json", "flickr8k_expert/refs.json", "flickr8k_expert/judgements")


def load_flickr8k() -> JudgedSet:
    """Flickr8k expert judgements (Hodosh et al. 2013, as packaged by Elliott & Keller 2014).

    5822 (image, retrieved caption) examples; ``human:overall`` is the mean of
    the three experts' 1-4 scores (``judge_1..3`` keep them); the references
    are the image's five captions. ``system_id`` is the retrieved caption's id.
    """
    cand_path, refs_path, judge_path = (sources.path(f) for f in FLICKR8K_FILES)
    candidates = json.loads(cand_path.read_text(encoding="utf-8"))
    refs = json.loads(refs_path.read_text(encoding="utf-8"))
    judgements = pd.read_csv(judge_path, dtype={"id": int, "j1": float, "j2": float, "j3": float})
    if len(candidates) != len(judgements):
        raise DatasetError(f"{cand_path}: {len(candidates)} candidates but {judge_path} has {len(judgements)} judgements")
    # refs.json repeats each image's captions once per judged candidate of that image (sorted by caption):
    # an image's references are its distinct captions, each kept as often as it occurs per candidate.
    per_image: dict[str, list[str]] = {}
    for row in refs:
        per_image.setdefault(row["image_id"], []).append(row["caption"])
    n_cands = judgements.groupby("imageid").size()
    references: dict[str, tuple[str, ...]] = {}
    for image, caps in per_image.items():
        n = int(n_cands.get(image, 0))
        if n == 0 or len(caps) % n:
            raise DatasetError(f"{refs_path}: image {image} has {len(caps)} reference rows, not a multiple of its "
                               f"{n} judged candidates")
        counts = pd.Series(caps).value_counts(sort=False)
        references[image] = tuple(c for c, k in counts.items() for _ in range(k // n))
    rows = []
    for i, (cand, judge) in enumerate(zip(candidates, judgements.itertuples(index=False))):
        if cand["image_id"] != judge.imageid:
            raise DatasetError(f"{cand_path}, entry {i}: image {cand['image_id']} but judgement row {i + 2} of "
                               f"{judge_path} is for {judge.imageid}")
        if judge.imageid not in references:
            raise DatasetError(f"{refs_path}: no references for image {judge.imageid} (judgement row {i + 2})")
        scores = (judge.j1, judge.j2, judge.j3)
        rows.append({"item_id": judge.imageid, "system_id": judge.textid, "hypothesis": cand["caption"],
                     "references": references[judge.imageid], "human:overall": float(np.mean(scores)),
                     "judge_1": scores[0], "judge_2": scores[1], "judge_3": scores[2]})
    frame = pd.DataFrame(rows)
    return JudgedSet("flickr8k", frame, levels=("example",), judges={"overall": ["judge_1", "judge_2", "judge_3"]})


# --- REALSumm ----------------------------------------------------------------------------

REALSUMM_FILE = "realsumm/data.pkl"


def load_realsumm() -> JudgedSet:
    """REALSumm (Bhandari et al. 2020): 100 CNN/DM documents x systems, LitePyramid recall, one reference."""
    data = sources.load_pickle(REALSUMM_FILE)
    where = sources.path(REALSUMM_FILE)
    if not isinstance(data, dict):
        raise DatasetError(f"{where}: expected a dict of documents, found {type(data).__name__}")
    rows = []
    for doc_id, doc in data.items():
        try:
            ref = doc["ref_summ"]
            systems = doc["sys_summs"]
        except (KeyError, TypeError) as exc:
            raise DatasetError(f"{where}, document {doc_id!r}: missing {exc}") from exc
        for system, entry in systems.items():
            scores = entry["scores"]
            if isinstance(scores, str):  # the BARTScore packaging stores the dict's repr
                scores = ast.literal_eval(scores)
            if "litepyramid_recall" not in scores:
                raise DatasetError(f"{where}, document {doc_id!r}, system {system!r}: no litepyramid_recall score")
            rows.append({"item_id": str(doc_id), "system_id": str(system).removesuffix(".txt"),
                         "hypothesis": entry["sys_summ"], "references": (ref,),
                         "human:litepyramid_recall": float(scores["litepyramid_recall"])})
    return JudgedSet("realsumm", pd.DataFrame(rows), levels=("system",))


# --- WMT19 DARR --------------------------------------------------------------------------

def _darr_pairs(data, where: str, name: str) -> PairSet:
    """A :class:`PairSet` from a WMT DARR dict in BARTScore's packaging (see the module docstring)."""
    if not isinstance(data, dict) or not data:
        raise DatasetError(f"{where}: expected a non-empty dict of DARR pairs (BARTScore's packaging), "
                           f"found {type(data).__name__}")
    rows = []
    for key, entry in data.items():
        try:
            row = {"item_id": str(key), "reference": entry["ref"], "better": entry["better"]["sys"],
                   "worse": entry["worse"]["sys"], "better_system": entry["better"]["sys_name"],
                   "worse_system": entry["worse"]["sys_name"]}
        except (KeyError, TypeError) as exc:
            raise DatasetError(f"{where}, entry {key!r}: missing {exc} (expected ref, better.sys, better.sys_name, "
                               "worse.sys, worse.sys_name)") from exc
        bad = [k for k in ("reference", "better", "worse") if not isinstance(row[k], str) or not row[k].strip()]
        if bad:
            raise DatasetError(f"{where}, entry {key!r}: {', '.join(bad)} must be non-empty text")
        rows.append(row)
    return PairSet(name, pd.DataFrame(rows))


def load_wmt19_darr(pair: str = "kk-en") -> PairSet:
    """WMT19 DARR relative rankings for one registered language pair (BARTScore's packaging)."""
    name = f"wmt19_darr/{pair}.pkl"
    return _darr_pairs(sources.load_pickle(name), str(sources.path(name)), f"wmt19-{pair}")


def load_darr_pickle(path: str | Path) -> PairSet:
    """Any WMT DARR pickle in BARTScore's packaging (e.g. ``WMT/de-en/data.pkl``), through the restricted
    unpickler: a pickle that holds anything but plain containers and scalars is refused, never run."""
    path = Path(path)
    if not path.is_file():
        raise DatasetError(f"{path}: no such file")
    name = path.parent.name if path.stem == "data" else path.stem  # BARTScore names them WMT/<pair>/data.pkl
    try:
        data = sources.safe_load_pickle(path)
    except sources.SourceError as exc:  # a user's file, not a registered source: an input error
        raise DatasetError(str(exc)) from None
    return _darr_pairs(data, str(path), name)


# --- generic JSONL -----------------------------------------------------------------------

def _id(value, what: str, where: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int)) or value == "":
        raise DatasetError(f"{where}: {what} must be a non-empty string or an integer, found {value!r}")
    return str(value)


def _jsonl_objects(path: Path):
    """``(where, object)`` for every non-blank line of a UTF-8 JSONL file; errors name the file and line."""
    if not path.is_file():
        raise DatasetError(f"{path}: no such file")
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            where = f"{path}, line {lineno}"
            if lineno == 1 and raw[:2] in (b"\xff\xfe", b"\xfe\xff"):
                raise DatasetError(f"{where}: the file is UTF-16 text (it starts with a byte order mark); "
                                   "save it as UTF-8")
            try:
                line = raw.decode("utf-8-sig" if lineno == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                raise DatasetError(f"{where}: not UTF-8 text (byte {raw[exc.start]:#04x} at column {exc.start + 1}); "
                                   "save the file as UTF-8") from None
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DatasetError(f"{where}: not valid JSON ({exc.msg} at column {exc.colno})") from exc
            if not isinstance(obj, dict):
                raise DatasetError(f"{where}: expected a JSON object, found {type(obj).__name__}")
            yield where, obj


def _text(obj: dict, key: str, where: str) -> str:
    value = obj[key]
    if not isinstance(value, str) or not value.strip():
        raise DatasetError(f"{where}: {key} must be a non-empty string")
    return value


def load_jsonl(path: str | Path) -> JudgedSet:
    """A human-judged set in the generic JSONL format (module docstring); errors name the file and line."""
    path = Path(path)
    rows, wheres = [], []
    aspects: list[str] | None = None
    for where, obj in _jsonl_objects(path):
        missing = [k for k in ("item_id", "system_id", "hypothesis", "references", "human") if k not in obj]
        if missing:
            raise DatasetError(f"{where}: missing key(s) {missing}")
        hyp, refs, human = _text(obj, "hypothesis", where), obj["references"], obj["human"]
        if (not isinstance(refs, list) or not refs
                or not all(isinstance(r, str) and r.strip() for r in refs)):
            raise DatasetError(f"{where}: references must be a non-empty list of non-empty strings")
        if not isinstance(human, dict) or not human:
            raise DatasetError(f"{where}: human must be an object mapping aspect -> score")
        for aspect, score in human.items():
            if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
                raise DatasetError(f"{where}: human score for {aspect!r} must be a finite number, found {score!r}")
        if aspects is None:
            aspects = list(human)
        elif set(human) != set(aspects):
            raise DatasetError(f"{where}: aspects {sorted(human)} differ from the first line's {sorted(aspects)}")
        row = {"item_id": _id(obj["item_id"], "item_id", where), "system_id": _id(obj["system_id"], "system_id", where),
               "hypothesis": hyp, "references": tuple(refs)}
        row.update({HUMAN_PREFIX + a: float(human[a]) for a in aspects})
        rows.append(row)
        wheres.append(where)
    if not rows:
        raise DatasetError(f"{path}: no judged hypotheses (the file is empty)")
    frame = pd.DataFrame(rows)
    dup = np.flatnonzero(frame.duplicated(["item_id", "system_id"]).to_numpy())
    if len(dup):
        first = frame.iloc[dup[0]]
        raise DatasetError(f"{wheres[dup[0]]}: (item_id, system_id) = ({first['item_id']}, {first['system_id']}) "
                           "occurs twice; keep one judgement per hypothesis")
    levels = ("example", "system") if frame["system_id"].nunique() >= 3 else ("example",)
    return JudgedSet(path.stem, frame, levels=levels)


PAIR_KEYS = ("item_id", "reference", "better", "worse")
SYSTEM_KEYS = ("better_system", "worse_system")


def load_pairs_jsonl(path: str | Path) -> PairSet:
    """Relative-ranking pairs in the generic JSONL format (module docstring); errors name the file and line."""
    path = Path(path)
    rows, wheres = [], []
    with_systems: bool | None = None
    for where, obj in _jsonl_objects(path):
        missing = [k for k in PAIR_KEYS if k not in obj]
        if missing:
            raise DatasetError(f"{where}: missing key(s) {missing} (a pair needs {', '.join(PAIR_KEYS)})")
        has = [k in obj for k in SYSTEM_KEYS]
        if any(has) and not all(has):
            raise DatasetError(f"{where}: give both better_system and worse_system, or neither")
        if with_systems is None:
            with_systems = all(has)
        elif with_systems != all(has):
            raise DatasetError(f"{where}: system names are given on some lines and not on others; give them on "
                               "every line or on none")
        row = {"item_id": _id(obj["item_id"], "item_id", where),
               **{k: _text(obj, k, where) for k in PAIR_KEYS[1:]}}
        if with_systems:
            row.update({k: _id(obj[k], k, where) for k in SYSTEM_KEYS})
        rows.append(row)
        wheres.append(where)
    if not rows:
        raise DatasetError(f"{path}: no better/worse pairs (the file is empty)")
    frame = pd.DataFrame(rows)
    key = ["item_id", *SYSTEM_KEYS] if with_systems else ["item_id", "better", "worse"]
    dup = np.flatnonzero(frame.duplicated(key).to_numpy())
    if len(dup):
        first = frame.iloc[dup[0]]
        raise DatasetError(f"{wheres[dup[0]]}: the pair ({', '.join(f'{k}={first[k]!r}' for k in key)}) occurs "
                           "twice; keep one judgement per pair")
    if not with_systems:
        frame["better_system"] = frame["worse_system"] = ""
    return PairSet(path.stem, frame)


def jsonl_kind(path: str | Path) -> str:
    """``"judged"`` or ``"pairs"``: which generic JSONL format ``path`` holds, from its first line's keys."""
    path = Path(path)
    for where, obj in _jsonl_objects(path):
        if "better" in obj or "worse" in obj:
            return "pairs"
        if "hypothesis" in obj or "human" in obj:
            return "judged"
        raise DatasetError(f"{where}: neither a judged hypothesis (item_id, system_id, hypothesis, references, human) "
                           f"nor a better/worse pair ({', '.join(PAIR_KEYS)}); see chapter 7 for both formats")
    raise DatasetError(f"{path}: the file is empty")


def write_jsonl(dataset: JudgedSet | PairSet, path: str | Path) -> Path:
    """Write a judged set or a pair set in its generic JSONL format (atomically)."""
    from ..paths import atomic_path

    def line(rec: dict) -> dict:
        if isinstance(dataset, PairSet):
            out = {k: rec[k] for k in PAIR_KEYS}
            out.update({k: rec[k] for k in SYSTEM_KEYS if rec.get(k, "") != ""})
            return out
        return {"item_id": rec["item_id"], "system_id": rec["system_id"], "hypothesis": rec["hypothesis"],
                "references": list(rec["references"]),
                "human": {a: rec[HUMAN_PREFIX + a] for a in dataset.aspects}}

    with atomic_path(path, suffix=".jsonl") as tmp, open(tmp, "w", encoding="utf-8") as fh:
        for rec in dataset.frame.to_dict("records"):
            fh.write(json.dumps(line(rec), ensure_ascii=False) + "\n")
    return Path(path)


def load(name: str) -> JudgedSet | PairSet:
    """``flickr8k``, ``realsumm``, ``wmt19-kk-en``, the path of a generic ``.jsonl`` file (either format) or of a
    WMT DARR ``.pkl`` in BARTScore's packaging."""
    if name == "flickr8k":
        return load_flickr8k()
    if name == "realsumm":
        return load_realsumm()
    if name.startswith("wmt19-"):
        return load_wmt19_darr(name[len("wmt19-"):])
    if name.endswith(".pkl"):
        return load_darr_pickle(name)
    if name.endswith(".jsonl") or Path(name).is_file():
        return load_pairs_jsonl(name) if jsonl_kind(name) == "pairs" else load_jsonl(name)
    raise DatasetError(f"unknown meta-evaluation dataset {name!r}: use one of {', '.join(NAMED)}, a .jsonl file "
                       "or a WMT DARR .pkl file")
