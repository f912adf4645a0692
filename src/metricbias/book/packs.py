"""Score packs: the scores of the slow configurations on the book's datasets, computed once, shipped, verified.

**What a pack holds.** One file per *configuration* x *text set*. A configuration is a
metric configuration (:class:`MetricConfig`: a registry name and its options) or a
pseudo-log-likelihood score function of a masked LM (:class:`PLLConfig`). A text set
is a named, deterministic list of scoring jobs built from the raw data alone
(:data:`TEXT_SETS`): ``pairs:<dataset>`` is every pair of a registered paired dataset,
scored as :class:`metricbias.scoring.Plan` scores it (one job; for a corpus-dependent
metric one job per (dataset, attribute), its corpus); ``metaeval:<name>`` is a
meta-evaluation set and its gender swap, each as one metric call scores it
(:func:`metricbias.metaeval.scoring.scored_texts`); ``association:tests=..;levels=..;sample_size=..;seed=..``
is every ordered (x, y) pair of the association tests ``seat.tests`` loads
(:func:`metricbias.bias.association.pairs_of`); ``associations:tests=..;levels=..`` holds r(t, A, B) per target of
the whole tests instead (:mod:`metricbias.book.association_packs`); ``quality:<set>;pairs=..;seed=..`` is the one call
that measures a configuration's quality on a quality set (:func:`metricbias.metaeval.quality.scored_texts`);
``pll:<set>`` is every
(stereotype, anti-stereotype) pair of a PLL pair set, both sentences (``pll:<set>;pairs=N;seed=S``: the pairs
:func:`metricbias.bias.pll.drawn_pairs` draws). The jobs'
(candidate, reference) pairs, in order, are the text set's *canonical order*.

**Format** (``<text set>__<configuration>.npz`` and ``.json`` beside it, under
``models/packs/``). The ``.npz`` (numpy, no pickle) holds ``scores`` (float64, or float32 with
``--float32``; one per position of the canonical order, NaN where a score is undefined), ``offsets`` (int64,
where each job starts; the last is the total) and ``meta`` (a JSON string: format,
text set, configuration, its signature and fingerprint, the sha256 of the texts, the
number of scores). No text and no per-text key is stored: the texts are rebuilt from
the raw data and must hash to ``meta.text_hash``. The ``.json`` is the provenance:
the command, device, library versions, seconds, the sha256 of the ``.npz`` and a copy
of ``meta``.

**Fingerprint.** sha256 of :func:`metricbias.signature.configuration` of the
configuration's signature: the metric, every option that changes scores, the
fingerprints of its model and adapter weights (hashes of the weight files) and the
metric's implementation revision (``Metric.revision``; ``pll.REVISION``), but not the
library versions: a pack computed with other versions still imports, under this
machine's signature; a configuration whose fingerprint changed is never read from a pack.

**Import** (:func:`import_packs`; ``metricbias run`` calls it before the chapters): for
each file, check the sha256 of its content against its provenance (a mismatch stops
the run), compare the fingerprint with the configuration's here (changed: the pack is
skipped and the configuration computed live), rebuild the texts and check their hash
(changed: skipped), recompute live a seeded sample of at least 1% and at least 32
positions, the same for every configuration of a text set so that their models share the work
(``Metric.score_sample``: a corpus-dependent metric keeps the whole job as its corpus; MoverScore then
encodes only the sample) and compare (beyond :data:`TOLERANCE`, scaled by the score's rounding gain,
``Metric.rounding_gain``: stops the run with one line naming
the file, configuration, position and both values), then store the scores in the
score cache, marked as from a pack. A pack already imported into this cache under the
same signature (same sha256) is not verified again. ``METRICBIAS_RECOMPUTE=1``
(``make book RECOMPUTE=1``) forgets every imported score instead, so that all is
computed live. :func:`verify` does the checks without importing (``metricbias pack verify``).
``metricbias run --jobs N`` checks the files in N processes, the files of a text set in one of them.

**Which files.** :func:`metricbias.book.pack_plan.plan` lists them from the profile: each chapter's text sets
(:data:`metricbias.book.chapter_profiles.PACK_SETS`) times the chapter's configurations
(``profiles.suite`` less its ``skip_metrics``, the same call the chapter makes) that
their metric's card lets a pack hold on that text set (``Metric.packed``, :func:`metricbias.book.pack_plan.is_packed`),
the PLL score functions of every masked LM here,
and chapter 6's attribute-blind wrappers on their sets (:data:`metricbias.book.chapter_profiles.PACK_INVARIANT_SETS`).
Declaring the data sets per chapter, rather than recording a run, keeps a pack build
independent of executing the chapters; the chapters' job logs then say how many of
their scores came from packs (:func:`chapter_numbers`), so a data set a chapter
scores that no pack covers shows as computed live.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
import zipfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

# the files' format, checks and tolerances (pack_format.py), named here too as this module's API
from .pack_format import (FORMAT, MIN_CHECKED, MIN_FRACTION, PACKS_ENV, TOLERANCE, Checked, PackError,  # noqa: F401
                          _sha256, check_groups, default_dir, device_of, fingerprint, read, sample_positions, write)
from .score_sources import RECOMPUTE_ENV, recomputing

# --- configurations -----------------------------------------------------------------------------

class MetricConfig:
    """A metric configuration: registry ``name`` and ``options`` (those that change scores)."""

    kind = "metric"

    def __init__(self, name: str, options: dict, label: str = "", device: str = "auto"):
        self.name, self.options, self.device = name, dict(options), device
        self._label = label
        self._metric = None

    @property
    def metric(self):
        if self._metric is None:
            self._metric = self._registered()
        return self._metric

    def _registered(self):
        from ..metrics.registry import get, metric_class

        runtime = {"device": self.device} if "device" in metric_class(self.name).defaults else {}
        return get(self.name, **self.options, **runtime)

    @property
    def label(self) -> str:
        return self._label or self.metric.config_label()

    @property
    def signature(self) -> str:
        return self.metric.signature

    @property
    def corpus_dependent(self) -> bool:
        return self.metric.corpus_dependent

    @property
    def family(self) -> str:
        return self.metric.family

    def compute(self, candidates: list[str], references: list[str], positions) -> np.ndarray:
        """Live scores of the pairs at ``positions`` of one call (the whole call is a corpus-dependent metric's
        corpus), no cache."""
        return np.asarray(self.metric.score_sample(candidates, references, positions), dtype=float)

    def rounding_gain(self, candidates: list[str], references: list[str], positions) -> np.ndarray:
        """Each sampled score's sensitivity to float rounding (``Metric.rounding_gain``): scales the tolerance."""
        return np.asarray(self.metric.rounding_gain(candidates, references, positions), dtype=float)

    def to_json(self) -> dict:
        return {"kind": self.kind, "name": self.name, "options": self.options, "label": self.label}


class InvariantConfig(MetricConfig):
    """The attribute-blind wrapper (:func:`metricbias.mitigation.invariant.invariant`) of a metric configuration."""

    kind = "invariant"

    def __init__(self, name: str, options: dict, attribute: str = "gender", label: str = "", device: str = "auto"):
        super().__init__(name, options, label, device)
        self.attribute = attribute

    @property
    def metric(self):
        if self._metric is None:
            from ..mitigation.invariant import invariant

            self._metric = invariant(self._registered(), self.attribute)
        return self._metric

    @property
    def family(self) -> str:  # the wrapper averages the wrapped metric's scores: that family's tolerance
        return self.metric.inner.family

    def to_json(self) -> dict:
        return {**super().to_json(), "attribute": self.attribute}


class PLLConfig:
    """One PLL score function (``aul``, ``cps``, ``sss``) of one masked LM (:mod:`metricbias.bias.pll`)."""

    kind = "pll"
    family = "pll"
    corpus_dependent = False

    def __init__(self, model: str, method: str, device: str = "auto"):
        self.model, self.method, self.device = model, method, device
        self._lm = None

    @property
    def lm(self):
        if self._lm is None:
            from ..bias import pll

            self._lm = pll.load_masked_lm(self.model, device=self.device)
        return self._lm

    @property
    def label(self) -> str:
        return f"PLL-{self.method}-{self.model}"

    @property
    def signature(self) -> str:  # without loading the model: a warm rerun only checks it
        from .. import backbones
        from ..bias import pll

        return pll.signature(self.model, pll.weights_fingerprint(backbones.resolve(self.model)), self.method)

    def compute(self, candidates: list[str], references: list[str], positions=None) -> np.ndarray:
        """Live scores of sentences (those at ``positions``), each with its pair as reference
        (``stereotype\x1fanti-stereotype``), no cache: only the sampled sentences' forward passes run."""
        from ..bias import pll

        positions = range(len(candidates)) if positions is None else [int(i) for i in positions]
        pairs = [tuple(references[i].split("\x1f", 1)) for i in positions]
        # each sampled sentence as sentence 0 (stereotype) or 1 (anti-stereotype) of its own one-pair list
        index = [j + len(pairs) * (candidates[i] != pair[0]) for j, (i, pair) in enumerate(zip(positions, pairs))]
        return pll.sentence_scores(self.lm, self.method, [p[0] for p in pairs], [p[1] for p in pairs], index)

    def rounding_gain(self, candidates, references, positions) -> np.ndarray:
        return np.ones(len(positions))

    def to_json(self) -> dict:
        return {"kind": self.kind, "model": self.model, "method": self.method, "label": self.label}


def _config(data: dict, device: str, memo: dict | None):
    """One configuration object per configuration across the files of a check (its model loads once)."""
    if memo is None:
        return config_from_json(data, device)
    key = ("config", json.dumps(data, sort_keys=True), device)
    if key not in memo:
        memo[key] = config_from_json(data, device)
    return memo[key]


def config_from_json(data: dict, device: str = "auto"):
    if data.get("kind") == "pll":
        return PLLConfig(data["model"], data["method"], device)
    if data.get("kind") == "invariant":
        return InvariantConfig(data["name"], data.get("options", {}), data["attribute"], data.get("label", ""), device)
    return MetricConfig(data["name"], data.get("options", {}), data.get("label", ""), device)


# --- text sets ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class TextSet:
    name: str
    #: ``jobs(config) -> [(candidates, references), ...]``: the canonical order, built from the raw data
    jobs: Callable
    #: which configurations score it: ``metric`` or ``pll``
    kind: str = "metric"


TEXT_SETS: dict[str, TextSet] = {}


def register_text_set(name: str, kind: str = "metric"):
    """Decorator: register ``jobs(config) -> [(candidates, references), ...]`` as text set ``name``."""
    def add(fn):
        TEXT_SETS[name] = TextSet(name, fn, kind)
        return fn

    return add


def text_set(name: str) -> TextSet:
    """A registered text set; ``pairs:<dataset>`` for every registered paired dataset, ``metaeval:<name>`` for every
    meta-evaluation set (original and gender-swapped), ``association:tests=..;levels=..;sample_size=..;seed=..``
    for association tests as ``seat.tests`` loads them, ``quality:<set>;pairs=..;seed=..`` for a quality set as
    :func:`metricbias.metaeval.quality.configuration_quality` scores it."""
    if name in TEXT_SETS:
        return TEXT_SETS[name]
    if name.startswith("metaeval:"):
        def jobs(config):
            from ..datasets import meta_eval
            from ..metaeval.scoring import scored_texts

            data = meta_eval.load(name.split(":", 1)[1])
            return [scored_texts(data), scored_texts(data.swapped())]

        return TextSet(name, jobs)
    if name.startswith("associations:"):  # r(t, A, B) of the whole tests (book/association_packs.py): the targets
        from .association_packs import whole_tests

        return TextSet(name, lambda config: [(list(t.targets),) * 2 for t in whole_tests(name)], "associations")
    if name.startswith("association:"):
        try:
            args = dict(part.split("=", 1) for part in name.split(":", 1)[1].split(";"))
            tests_args = (args["tests"], args["levels"], int(args["sample_size"]), int(args["seed"]))
        except (KeyError, ValueError):
            raise ValueError(f"text set {name!r}: write association:tests=...;levels=...;sample_size=N;seed=N") \
                from None

        def jobs(config):
            from ..bias import association
            from ..datasets import seat

            names, levels, sample_size, seed = tests_args
            return association.pairs_of(seat.tests(names, levels, sample_size=sample_size, seed=seed),
                                        per_test=config.corpus_dependent)

        return TextSet(name, jobs)
    if name.startswith("pll:") and ";" in name:
        loader, size, seed = _drawn_set(name)
        if loader not in ("crows_pairs", "stereoset"):
            raise ValueError(f"text set {name!r}: PLL sets are crows_pairs and stereoset")
        return TextSet(name, _pll_jobs(loader, size, seed), kind="pll")
    if name.startswith("quality:"):
        measure, size, seed = _drawn_set(name)

        def jobs(config):
            from ..metaeval.quality import scored_texts

            return [scored_texts(measure, size, seed)]

        return TextSet(name, jobs)
    if name.startswith("pairs:"):
        from ..datasets import registry

        dataset = name.split(":", 1)[1]
        registry.get(dataset)  # an unknown dataset: DatasetNameError naming the known ones

        def jobs(config):
            from ..scoring import Plan

            plan = Plan(registry.load(dataset), (config.label, config.metric))
            return [(job.candidates, job.references) for job in plan.jobs]

        return TextSet(name, jobs)
    raise ValueError(f"unknown text set {name!r}; text sets: pairs:<dataset>, {', '.join(TEXT_SETS)}")


def _drawn_set(name: str) -> tuple[str, int, int]:
    """``kind:<set>;pairs=N;seed=S`` -> (set, N, S)."""
    kind = name.split(":", 1)[0]
    try:
        which, rest = name.split(":", 1)[1].split(";", 1)
        args = dict(part.split("=", 1) for part in rest.split(";"))
        return which, int(args["pairs"]), int(args["seed"])
    except (KeyError, ValueError):
        raise ValueError(f"text set {name!r}: write {kind}:<set>;pairs=N;seed=N") from None


def _pll_jobs(loader: str, sample_size: int = 0, seed: int = 0):
    def jobs(config):
        from ..bias import pll

        pairs = pll.drawn_pairs(loader, sample_size, seed)
        st, at = pairs["stereotype"].astype(str).tolist(), pairs["anti_stereotype"].astype(str).tolist()
        both = [f"{a}\x1f{b}" for a, b in zip(st, at)]
        return [(st + at, both * 2)]  # as pll.score_sentence_pairs keys them: stereotypes, then anti-stereotypes

    return jobs


for _loader in ("crows_pairs", "stereoset"):
    register_text_set(f"pll:{_loader}", kind="pll")(_pll_jobs(_loader))


def texts_of(name: str, config, memo: dict | None = None) -> list:
    """The jobs of text set ``name`` for ``config``, kept in ``memo`` for the next configuration (they depend only on
    whether the configuration is corpus-dependent)."""
    memo = {} if memo is None else memo
    key = (name, config.corpus_dependent)
    if key not in memo:
        memo[key] = text_set(name).jobs(config)
    return memo[key]


def _texts_hash(jobs) -> str:
    from ..cache import data_hash

    h = hashlib.sha256()
    for cands, refs in jobs:
        h.update(data_hash(cands, refs).encode("ascii"))
    return h.hexdigest()


# --- what a profile packs -------------------------------------------------------------------------

@dataclass
class Entry:
    """One pack file to build: a configuration on a text set."""

    config: object
    text_set: str

    @property
    def file(self) -> str:
        parts = (re.sub(r"[^A-Za-z0-9._+-]+", "-", part).strip("-") for part in (self.text_set, self.config.label))
        return "__".join(parts) + ".npz"


# --- building -------------------------------------------------------------------------------------

def _meta(entry: Entry, jobs) -> dict:
    return {"format": FORMAT, "text_set": entry.text_set, "config": entry.config.to_json(),
            "signature": entry.config.signature, "fingerprint": fingerprint(entry.config.signature),
            "text_hash": _texts_hash(jobs), "scores": sum(len(c) for c, _ in jobs)}


def build(entries: list[Entry], out: str | os.PathLike, *, device: str = "auto", dtype: str = "float64", log=print,
          progress: bool = True) -> list[Path]:
    """Score every entry live (no cache) and write its pack file into ``out``; a file already there with the same
    fingerprint and text hash is kept (only the configurations whose fingerprint changed are computed again)."""
    from .. import provenance
    from ..scoring import Job, score_jobs

    out = Path(out)
    written, memo = [], {}
    for entry in entries:
        target = out / entry.file
        if text_set(entry.text_set).kind == "associations":
            from .association_packs import build_file

            written += build_file(entry, target, dtype=dtype, log=log, progress=progress)
            continue
        jobs = texts_of(entry.text_set, entry.config, memo)
        meta = _meta(entry, jobs)
        if target.is_file() and target.with_suffix(".json").is_file():
            old, _, _ = read(target)
            if (old["fingerprint"], old["text_hash"]) == (meta["fingerprint"], meta["text_hash"]):
                log(f"  {entry.file}: up to date")
                continue
        start = time.perf_counter()
        if isinstance(entry.config, MetricConfig):
            done = score_jobs([Job(entry.config.metric, c, r, label=entry.config.label, what=entry.text_set)
                               for c, r in jobs], cache=None, progress=progress or None)
            scores = np.concatenate([job.scores for job in done]) if done else np.zeros(0)
        else:
            scores = np.concatenate([entry.config.compute(c, r) for c, r in jobs])
        seconds = time.perf_counter() - start
        offsets = np.cumsum([0] + [len(c) for c, _ in jobs])
        libraries = ("torch", "transformers", "adapters", "numpy", "scipy", "sentence-transformers")
        record = {"command": provenance.command(), "device": provenance.device_name(device_of(entry.config)),
                  "versions": provenance.versions(libraries), "seconds": round(seconds, 2),
                  "created": time.strftime("%Y-%m-%d %H:%M:%S")}
        written.append(write(target, meta, scores, offsets, record, dtype))
        log(f"  {entry.file}: {meta['scores']:,} scores in {seconds:.1f} s")
    return written


# --- checking and importing ------------------------------------------------------------------------

def pack_files(folder) -> list[Path]:
    """The pack files (``.npz``) in ``folder``, each with its provenance beside it. A folder that is missing or holds
    no pack, a pack without its provenance and a provenance without its pack are each a :class:`PackError` naming
    the folder or the file: nothing there would be checked."""
    folder = Path(folder)
    if not folder.is_dir():
        raise PackError(f"no folder of score packs at {folder}" + (" (it is a file)" if folder.exists() else "")
                        + ": name the folder that holds them (--packs, METRICBIAS_PACKS) or build them with "
                          "metricbias pack build")
    files = sorted(folder.glob("*.npz"))
    for side in sorted(folder.glob("*.json")):
        if not side.with_suffix(".npz").is_file():
            raise PackError(f"score pack provenance {side} has no pack {side.with_suffix('.npz').name} beside it: "
                            "rebuild the pack with metricbias pack build, or remove the provenance")
    for path in files:
        if not path.with_suffix(".json").is_file():
            raise PackError(f"score pack {path} has no provenance {path.with_suffix('.json').name} beside it: "
                            "rebuild it with metricbias pack build")
    if not files:
        raise PackError(f"no score pack (.npz) in {folder}: name the folder that holds them (--packs, "
                        "METRICBIAS_PACKS) or build them with metricbias pack build")
    return files


def provenance_of(path: Path) -> dict:
    """The provenance (``.json`` beside it) of the pack at ``path``; missing or unreadable: a :class:`PackError`
    naming it."""
    side = Path(path).with_suffix(".json")
    try:
        recorded = json.loads(side.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PackError(f"score pack {path} has no provenance {side.name} beside it: rebuild it with metricbias "
                        "pack build") from None
    except (OSError, ValueError) as exc:  # ValueError: not JSON, or not UTF-8
        raise PackError(f"score pack provenance {side} cannot be read ({' '.join(str(exc).split())}): rebuild the "
                        "pack with metricbias pack build") from None
    if not isinstance(recorded, dict):
        raise PackError(f"score pack provenance {side} is not a JSON object: rebuild the pack with metricbias pack "
                        "build")
    return recorded


def _within(family: str, pack: np.ndarray, live: np.ndarray, gain=1.0) -> np.ndarray:
    """|pack - live| <= (atol + rtol |live|) x gain, the score's sensitivity to rounding (1 if well-conditioned)."""
    rtol, atol = TOLERANCE.get(family, TOLERANCE["user"])
    both_nan = np.isnan(pack) & np.isnan(live)
    return both_nan | (np.abs(pack - live) <= (atol + rtol * np.abs(live)) * gain)


def check_file(path: Path, *, fraction: float = MIN_FRACTION, device: str = "auto", cache=None, memo=None):
    """Check one pack file (sha256, fingerprint, texts, a live sample); returns ``(Checked, jobs, scores)``.

    Raises :class:`PackError` on a changed file or a score beyond tolerance; with ``cache``, a pack that cache
    already holds under the same signature is reported ``imported before`` without being checked again.
    ``memo``: a dict that keeps the texts rebuilt for one file for the next files of the same text set.
    """
    path = Path(path)
    recorded = provenance_of(path)
    side = path.with_suffix(".json")
    sha = _sha256(path)
    if sha != recorded.get("sha256"):
        raise PackError(f"score pack {path}: its sha256 is {sha}, its provenance {side.name} says "
                        f"{recorded.get('sha256')}: the file was changed; rebuild it with metricbias pack build")
    try:
        meta, stored, offsets = read(path)
    except (OSError, ValueError, KeyError, zipfile.BadZipFile) as exc:
        raise PackError(f"score pack {path} cannot be read ({exc}); rebuild it with metricbias pack build") from None
    if recorded.get("meta") != meta:
        differ = sorted(k for k in {*meta, *(recorded.get("meta") or {})}
                        if meta.get(k) != (recorded.get("meta") or {}).get(k))
        raise PackError(f"score pack {path} and its provenance {side} disagree on {', '.join(differ)} (the meta each "
                        "records): one of them was changed; rebuild the pack with metricbias pack build")
    scores = stored.astype(float)
    if meta.get("format") != FORMAT or len(scores) != meta["scores"] or offsets[-1] != len(scores):
        raise PackError(f"score pack {path}: format {meta.get('format')} with {len(scores)} scores is not what this "
                        f"library reads (format {FORMAT}, {meta.get('scores')} scores); rebuild it")
    config = _config(meta["config"], device, memo)
    label = meta["config"].get("label", path.stem)
    try:
        signature = config.signature
    except (LookupError, FileNotFoundError, ValueError) as exc:  # a backbone or metric not here
        return Checked(path.name, label, "unavailable", sha, len(scores), note=str(exc).splitlines()[0]), None, None
    if fingerprint(signature) != meta["fingerprint"]:
        return Checked(path.name, label, "stale", sha, len(scores),
                       note="its configuration changed (fingerprint); computed live"), None, None
    if cache is not None and any(row["sha256"] == sha and row["signature"] == signature for row in cache.packs()):
        return Checked(path.name, label, "imported before", sha, len(scores)), None, None
    if meta.get("kind") == "associations":  # r per target (book/association_packs.py)
        from .association_packs import check

        return check(path, meta, scores, offsets, config, sha, fraction)
    jobs = texts_of(meta["text_set"], config, memo)
    if _texts_hash(jobs) != meta["text_hash"]:
        return Checked(path.name, label, "texts changed", sha, len(scores),
                       note=f"the texts of {meta['text_set']} changed; computed live"), None, None
    # the same positions for every configuration of a text set: their models share the work (MoverScore 1- and
    # 2-gram and BERTScore the encodings of one backbone, BARTScore and PRISM a paraphraser's log-likelihoods)
    positions = sample_positions(len(scores), fraction, f"{meta['text_set']}|{meta['text_hash']}")
    live, gain = np.full(len(scores), np.nan), np.ones(len(scores))
    for j, (cands, refs) in enumerate(jobs):
        start, stop = offsets[j], offsets[j + 1]
        here = positions[(positions >= start) & (positions < stop)] - start
        if not len(here):
            continue
        live[start + here] = config.compute(cands, refs, here)  # a corpus-dependent metric's corpus: the whole job
        gain[start + here] = config.rounding_gain(cands, refs, here)
    # a float32 pack holds each score rounded to float32: round the live score the same way before comparing
    live = live.astype(stored.dtype).astype(float)
    ok = _within(config.family, scores[positions], live[positions], gain[positions])
    diffs = np.abs(scores[positions] - live[positions])
    max_diff = float(np.nanmax(diffs)) if np.isfinite(diffs).any() else 0.0
    if not ok.all():
        at = int(positions[np.argmin(ok)])
        job = int(np.searchsorted(offsets, at, side="right") - 1)
        raise PackError(f"score pack {path.name}: configuration {label}, {meta['text_set']} position {at} "
                        f"(job {job}, pair {at - offsets[job]}): pack {scores[at]!r}, live {live[at]!r}, beyond the "
                        f"{config.family} tolerance (rtol, atol) {TOLERANCE.get(config.family, TOLERANCE['user'])}"
                        + (f" x rounding gain {gain[at]:.3g}" if gain[at] != 1 else ""))
    found = Checked(path.name, label, "verified", sha, len(scores), len(positions), max_diff)
    return found, (config, jobs, offsets), scores


def verify(folder=None, *, fraction: float = MIN_FRACTION, device: str = "auto", log=None) -> list[Checked]:
    """Check every pack file in ``folder`` (default ``models/packs``) against live scores; nothing is imported."""
    if not 0 < fraction <= 1:
        raise ValueError(f"--fraction must be in (0, 1], not {fraction}")
    out, memo = [], {}
    for path in pack_files(folder or default_dir()):
        found = check_file(path, fraction=fraction, device=device, memo=memo)[0]
        if log:
            log(f"  {found.file}: {found.status}" + (f", {found.checked} checked, max |diff| {found.max_diff:.3g}"
                                                      if found.status == "verified" else f" ({found.note})"))
        out.append(found)
    return out


def summary_line(checked: list[Checked]) -> str:
    """``N scores checked, max |diff| X``; N is never 0 (:func:`outcome` says what a check without scores means)."""
    n = sum(c.checked for c in checked)
    if n == 0:
        raise PackError("no score was checked")
    return f"{n} scores checked, max |diff| {max((c.max_diff for c in checked), default=0.0):.3g}"


def outcome(found: list[Checked], folder=None) -> str:
    """The one line of ``metricbias pack verify|import`` for the files of ``folder``: ``N scores checked, max |diff|
    X`` of the packs checked now; when none was checked, the packs imported before (checked then), or else a
    :class:`PackError` saying what became of them: no score checked is never a success."""
    fresh = [c for c in found if c.status in ("verified", "imported")]
    if fresh:
        return summary_line(fresh)
    before = sum(c.status == "imported before" for c in found)
    if before == len(found) and found:
        return (f"no pack to import: the {before} in {folder or default_dir()} are in the score cache already "
                "(checked when they were imported)")
    statuses = ", ".join(f"{n} {status}" for status, n in sorted(Counter(c.status for c in found).items()))
    raise PackError(f"no score checked: none of the {len(found)} score pack(s) in {folder or default_dir()} could be "
                    f"checked ({statuses}; the first: {found[0].file}, {found[0].note or found[0].status})")


def import_packs(folder=None, cache=None, *, fraction: float = MIN_FRACTION, device: str = "auto",
                 log=None, progress: bool = True, workers: int = 1) -> list[Checked]:
    """Check every pack in ``folder`` (default ``models/packs``) and store the verified ones in ``cache`` (default
    score cache), under this machine's signatures, marked as from packs; packs it already holds are skipped.
    ``workers`` > 1: that many processes check the files at once, each the files of whole text sets (whose
    configurations share encodings), the heaviest sets first; the cores are shared out among them."""
    from ..cache import ScoreCache
    from ..progress import tqdm

    cache = ScoreCache.default() if cache in (None, True) else cache
    files = pack_files(folder or default_dir())
    bar = tqdm(total=len(files), desc="score packs", unit="file", disable=not progress or len(files) < 2)
    found = {}

    def done(path, checked):
        found[path] = checked
        bar.set_postfix_str(path.stem.split("__")[-1], refresh=False)
        bar.update()
        if log:
            log(f"  pack {checked.file}: {checked.status}" + (f" ({checked.note})" if checked.note else ""))

    groups = check_groups(files, fraction)
    if workers > 1 and len(groups) > 1:
        import multiprocessing

        workers = min(workers, len(groups))
        threads = max(1, (os.cpu_count() or 1) // workers)
        # spawn, not fork: the parent may hold PyTorch's thread pools; the pool's exit terminates the workers
        # (an error or Ctrl-C in the parent), whose own SIGINT is ignored so that only the parent reports it
        with multiprocessing.get_context("spawn").Pool(workers, _worker_start, (threads,)) as pool:
            for group in pool.imap_unordered(_import_group, [(g, fraction, device, str(cache.path)) for g in groups]):
                for path, checked in group:
                    done(path, checked)
            pool.close()  # the workers end as processes do (finalizers run); terminate is for an error or Ctrl-C
            pool.join()
    else:
        memo = {}
        for group in groups:
            for path in group:
                done(path, _import_file(path, fraction, device, cache, memo))
    bar.close()
    return [found[path] for path in files]


def _worker_start(threads: int) -> None:
    import signal
    import threading
    import warnings

    from tqdm.std import tqdm

    from ..progress import QUIET_ENV

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # a worker's warnings (a metric's note on its inputs) one line each, as the CLI prints its own
    warnings.formatwarning = lambda message, *_, **__: f"metricbias: warning: {message}\n"
    warnings.filterwarnings("ignore", category=SyntaxWarning)  # libraries' escapes, compiled on first import
    os.environ["OMP_NUM_THREADS"] = os.environ["MKL_NUM_THREADS"] = str(threads)  # read by PyTorch's import
    os.environ[QUIET_ENV] = "1"  # the parent's bar counts the files; the workers' own would garble it
    # a thread lock, not tqdm's multiprocessing one: a named semaphore that a terminated worker would leak
    tqdm.set_lock(threading.RLock())


def _import_group(task) -> list:
    """A worker's part of :func:`import_packs`: the files of one text set, with its own cache connection."""
    from ..cache import ScoreCache

    paths, fraction, device, cache_path = task
    cache = ScoreCache(cache_path)
    return [(path, _import_file(path, fraction, device, cache, _WORKER_MEMO)) for path in paths]


#: a worker's configurations (loaded models) and texts, kept across the text sets it checks
_WORKER_MEMO: dict = {}


def _import_file(path: Path, fraction: float, device: str, cache, memo: dict) -> Checked:
    """Check one pack file and, verified, store its scores in ``cache``."""
    found, parts, scores = check_file(path, fraction=fraction, device=device, cache=cache, memo=memo)
    if found.status == "verified":
        config, jobs, offsets = parts
        items = {}
        for j, (cands, refs) in enumerate(jobs or ()):  # an association pack: its record alone
            for key, value in zip(cache.keys(config, cands, refs), scores[offsets[j]:offsets[j + 1]]):
                if np.isfinite(value):  # an undefined score (PLL SSS with nothing modified) is not stored
                    items[key] = float(value)
        cache.store(config.signature, items, pack={"sha256": found.sha256, "file": found.file,
                                                    "scores": found.scores, "checked": found.checked,
                                                    "max_diff": found.max_diff})
        found.status = "imported"
    return found


def prepare(folder=None, cache=None, log=print, workers: int = 1) -> list[Checked]:
    """What ``metricbias run`` does before the chapters: import the packs, or with ``METRICBIAS_RECOMPUTE`` set
    (``make book RECOMPUTE=1``) forget every score that came from one, so that all is computed live."""
    from ..cache import ScoreCache

    if recomputing():
        cache = ScoreCache.default() if cache in (None, True) else cache
        n = cache.forget_packs()
        log(f"{RECOMPUTE_ENV} is set: score packs ignored ({n:,} scores from packs removed from the cache)")
        return []
    if folder is None and not os.environ.get(PACKS_ENV) and not default_dir().exists():
        log(f"score packs: none shipped ({default_dir()} does not exist); every score is computed live")
        return []
    done = import_packs(folder, cache, workers=workers)  # a named folder must hold packs, each with its provenance
    fresh = [c for c in done if c.status == "imported"]
    log(f"score packs: {len(fresh)} imported" + (f" ({summary_line(fresh)})" if fresh else "") + ", "
        f"{sum(c.status == 'imported before' for c in done)} already in the cache, "
        f"{sum(c.status not in ('imported', 'imported before') for c in done)} computed live instead")
    return done


__all__ = ["Checked", "Entry", "MetricConfig", "PLLConfig", "PackError", "TEXT_SETS", "TOLERANCE", "build",
           "check_file", "default_dir", "fingerprint",
           "import_packs", "outcome", "pack_files", "prepare", "provenance_of", "texts_of", "read", "register_text_set",
           "sample_positions", "summary_line", "text_set", "verify", "write"]
