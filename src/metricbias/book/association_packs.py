"""Association packs: r(t, A, B) of every target of the whole association tests, one file per configuration.

An association test's statistic, effect size and permutation p-value depend on the scores only through each
target's association r(t, A, B) (:mod:`metricbias.bias.association`). So instead of the 2.7 M ordered pairs of the
whole SEAT sets, a pack of the text set ``associations:tests=..;levels=..`` holds, per configuration, a few thousand
numbers: r of each target each test keeps, and what the statistics need beside it.

**Format.** The layout of every score pack (:mod:`metricbias.book.packs`: ``scores``, ``offsets``, ``meta``, and a
``.json`` provenance): ``scores`` is r of the kept targets (X then Y) of each test that runs, test after test in the
order ``seat.tests`` loads them; ``offsets`` where each test starts. ``meta`` adds ``kind: "associations"`` and per
test its name and level, the hash of its four sets before any word is dropped (``association.sets_hash``), the words
the configuration dropped from each set (the kept sets are the others, in order), the kept sizes, whether it runs,
and ``scale``, max |S| (what tells a constant r from float noise). The permutation seed stays the test's
``name|level``: nothing of it is stored.

**Verification** (:func:`check`, called by ``packs.check_file``): the fingerprint and the hash of the tests' sets as
for every pack, the words this configuration drops here against the recorded ones, then r recomputed live for a
seeded sample of at least 1% and 32 of the file's targets (``Metric.score_cross`` of the sampled targets against
the test's kept attributes; a corpus-dependent configuration with the whole test as its corpus), within the family's
tolerance scaled by the test's max |S|.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from pathlib import Path

import numpy as np

from ..paths import atomic_path

PREFIX = "associations:"
KIND = "associations"


def parse(name: str) -> tuple[str, str]:
    """``associations:tests=..;levels=..`` -> (tests, levels)."""
    try:
        args = dict(part.split("=", 1) for part in name[len(PREFIX):].split(";"))
        return args["tests"], args["levels"]
    except (KeyError, ValueError):
        raise ValueError(f"text set {name!r}: write associations:tests=...;levels=...") from None


def text_set_name(tests: str = "all", levels: str = "all") -> str:
    return f"{PREFIX}tests={tests};levels={levels}"


def whole_tests(name: str) -> list:
    """The whole tests (no draw) of text set ``name``."""
    from ..datasets import seat

    return seat.tests(*parse(name))


def tests_hash(tests) -> str:
    from ..bias.association import sets_hash

    return hashlib.sha256("".join(sets_hash(t) for t in tests).encode("ascii")).hexdigest()


def _meta(entry, tests, records) -> dict:
    from .pack_format import FORMAT, fingerprint

    return {"format": FORMAT, "kind": KIND, "text_set": entry.text_set, "config": entry.config.to_json(),
            "signature": entry.config.signature, "fingerprint": fingerprint(entry.config.signature),
            "text_hash": tests_hash(tests), "scores": int(sum(len(rec.r) for rec in records)),
            "tests": [_test_meta(rec) for rec in records]}


def build_file(entry, target: Path, *, dtype: str = "float64", log=print, progress: bool = True) -> list[Path]:
    """Compute r of every target of the whole tests through ``entry``'s configuration and write its pack at
    ``target``; a file there with the same fingerprint and tests is kept (``[]``)."""
    from .. import provenance
    from ..bias import association
    from . import pack_format as packs

    tests = whole_tests(entry.text_set)
    if target.is_file() and target.with_suffix(".json").is_file():
        old, _, _ = packs.read(target)
        if (old.get("fingerprint"), old.get("text_hash")) == (packs.fingerprint(entry.config.signature),
                                                             tests_hash(tests)):
            log(f"  {entry.file}: up to date")
            return []
    from ..progress import tqdm

    metric = entry.config.metric
    pairs = sum(2 * len(t.targets) * len(t.attributes) for t in tests)
    # each finished test is kept (under the cache folder) until the file is written: a stopped build resumes there
    partial = _partial_folder(entry, tests)
    records, seconds = [], 0.0
    with tqdm(total=pairs, desc=entry.config.label, unit="pair", disable=not progress) as bar:
        for i, test in enumerate(tests):
            kept = partial / f"{i:03d}.json"
            if kept.is_file():
                rec, spent = _read_partial(kept)
                records.append(rec)
                seconds += spent
                bar.update(2 * len(test.targets) * len(test.attributes))
                continue
            start = time.perf_counter()
            (rec,) = association.associations([test], metric, progress=bar, label=entry.config.label)
            spent = time.perf_counter() - start
            with atomic_path(kept, suffix=".json") as tmp:
                tmp.write_text(json.dumps({"seconds": spent, **_test_meta(rec), "r": rec.r.tolist()}), encoding="utf-8")
            records.append(rec)
            seconds += spent
    scores = np.concatenate([rec.r for rec in records]) if records else np.zeros(0)
    offsets = np.cumsum([0] + [len(rec.r) for rec in records])
    libraries = ("torch", "transformers", "numpy", "scipy", "pot", "sacrebleu", "nltk")
    record = {"command": provenance.command(), "device": provenance.device_name(packs.device_of(entry.config)),
              "versions": provenance.versions(libraries), "seconds": round(seconds, 2),
              "pairs": pairs, "pairs_per_second": round(pairs / max(seconds, 1e-9), 1),
              "created": time.strftime("%Y-%m-%d %H:%M:%S")}
    path = packs.write(target, _meta(entry, tests, records), scores, offsets, record, dtype)
    log(f"  {entry.file}: r of {len(scores):,} targets ({pairs:,} pairs) in {seconds:.1f} s")
    shutil.rmtree(partial, ignore_errors=True)
    return [path]


def _partial_folder(entry, tests) -> Path:
    from ..paths import cache_dir
    from .pack_format import fingerprint

    key = hashlib.sha256(f"{fingerprint(entry.config.signature)}|{tests_hash(tests)}".encode()).hexdigest()[:16]
    folder = cache_dir() / "association-packs" / f"{Path(entry.file).stem}-{key}"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _test_meta(rec) -> dict:
    return {"test": rec.test, "level": rec.level, "sets_hash": rec.sets_hash,
            "dropped": {k: list(v) for k, v in rec.dropped.items()}, "sizes": list(rec.sizes), "runs": rec.runs,
            "scale": rec.scale if rec.runs else None}


def _read_partial(path: Path):
    t = json.loads(path.read_text(encoding="utf-8"))
    return _record(t, t["r"]), float(t["seconds"])


def records(meta: dict, scores: np.ndarray, offsets: np.ndarray) -> list:
    """The :class:`~metricbias.bias.association.TestAssociations` a pack holds."""
    return [_record(t, scores[offsets[j]:offsets[j + 1]]) for j, t in enumerate(meta["tests"])]


def _record(t: dict, r):
    """A test's record from its entry of ``meta["tests"]`` and its r."""
    from ..bias.association import TestAssociations

    return TestAssociations(t["test"], t["level"], t["sets_hash"], {k: tuple(v) for k, v in t["dropped"].items()},
                            tuple(t["sizes"]), t["runs"], np.asarray(r, dtype=float),
                            float("nan") if t["scale"] is None else float(t["scale"]))


def _kept(test, dropped: dict):
    from dataclasses import replace

    return replace(test, **{k.lower(): tuple(w for w in getattr(test, k.lower()) if w not in set(dropped.get(k, ())))
                            for k in "XYAB"})


def check(path: Path, meta: dict, scores: np.ndarray, offsets: np.ndarray, config, sha: str, fraction: float):
    """The association part of ``packs.check_file``: ``(Checked, (config, None, None), scores)``; a recomputed r
    beyond tolerance, or other words dropped here, is a :class:`~metricbias.book.packs.PackError`."""
    from ..bias import association
    from .pack_format import TOLERANCE, Checked, PackError, sample_positions

    label = meta["config"].get("label", path.stem)
    tests = whole_tests(meta["text_set"])
    if tests_hash(tests) != meta["text_hash"] or len(tests) != len(meta["tests"]):
        return Checked(path.name, label, "texts changed", sha, len(scores),
                       note=f"the tests of {meta['text_set']} changed; computed live"), None, None
    stored = records(meta, scores, offsets)
    metric = config.metric
    for test, rec in zip(tests, stored):
        _, dropped = association.drop_unrepresented(test, metric)
        if {k: tuple(v) for k, v in dropped.items()} != rec.dropped:
            raise PackError(f"score pack {path.name}: configuration {label} drops other words from {test.label} "
                            f"here than the pack records; rebuild it with metricbias pack build")
    positions = sample_positions(len(scores), fraction, f"{meta['text_set']}|{meta['text_hash']}|{label}")
    rtol, atol = TOLERANCE.get(config.family, TOLERANCE["user"])
    checked, max_diff = 0, 0.0
    for j, (test, rec) in enumerate(zip(tests, stored)):
        here = positions[(positions >= offsets[j]) & (positions < offsets[j + 1])] - offsets[j]
        if not len(here):
            continue
        kept = _kept(test, rec.dropped)
        targets = list(kept.targets)
        s = association.symmetric_similarity(*metric.score_cross([targets[i] for i in here], list(kept.attributes),
                                                                 corpus_rows=targets))
        live = association.association(s, len(kept.a))
        diff = np.abs(live - rec.r[here])
        # r is a difference of means of S: its rounding is that of S, whose scale is max |S|
        bad = ~(diff <= 2 * (atol + rtol * rec.scale))
        if bad.any():
            i = int(np.argmax(bad))
            raise PackError(f"score pack {path.name}: configuration {label}, {test.label} target {here[i]} "
                            f"({targets[here[i]]!r}): pack r {rec.r[here[i]]!r}, live {live[i]!r}, beyond the "
                            f"{config.family} tolerance 2 x (atol + rtol x max|S|) with (rtol, atol) {(rtol, atol)}, "
                            f"max|S| {rec.scale:.3g}")
        checked += len(here)
        max_diff = max(max_diff, float(diff.max()))
    return Checked(path.name, label, "verified", sha, len(scores), checked, max_diff), (config, None, None), scores


def load(tests, suite: dict, folder=None, cache=None) -> dict[str, list]:
    """label -> the records of the whole ``tests`` for each configuration of ``suite`` (label -> metric) whose
    association pack in ``folder`` (default ``models/packs``) has its fingerprint, was verified into ``cache``
    (``metricbias run`` does it before the chapters) and covers every test. Empty when the build ignores the packs
    (``RECOMPUTE``)."""
    from ..bias.association import sets_hash
    from ..cache import ScoreCache
    from .pack_format import _sha256, default_dir, fingerprint, read
    from .score_sources import recomputing

    folder = Path(folder or default_dir())
    if recomputing() or not folder.is_dir():
        return {}
    cache = ScoreCache.default() if cache in (None, True) else cache
    verified = {row["sha256"] for row in cache.packs()}
    labels = {fingerprint(metric.signature): label for label, metric in suite.items()}
    wanted = {(t.name, t.level): sets_hash(t) for t in tests}
    out = {}
    for path in sorted(folder.glob("associations-*.npz")):
        meta, scores, offsets = read(path)
        label = labels.get(meta.get("fingerprint"))
        if meta.get("kind") != KIND or label is None or _sha256(path) not in verified:
            continue
        held = {(r.test, r.level): r for r in records(meta, scores, offsets)}
        if all(key in held and held[key].sets_hash == h for key, h in wanted.items()):
            out[label] = [held[key] for key in wanted]
    return out


def provenance_rows(folder=None) -> list[dict]:
    """Per association pack: configuration, pairs, seconds and pairs per second of its build (its provenance)."""
    from .pack_format import default_dir

    rows = []
    for side in sorted(Path(folder or default_dir()).glob("associations-*.json")):
        recorded = json.loads(side.read_text(encoding="utf-8"))
        rows.append({"configuration": recorded["meta"]["config"].get("label"), "pairs": recorded.get("pairs"),
                     "seconds": recorded.get("seconds"), "pairs_per_second": recorded.get("pairs_per_second")})
    return rows


__all__ = ["KIND", "PREFIX", "build_file", "check", "load", "parse", "provenance_rows", "records", "text_set_name",
           "tests_hash", "whole_tests"]
