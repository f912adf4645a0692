"""One interface for every metric: ``Metric.score(candidates, references) -> np.ndarray``.

Modelled on sacreBLEU: a metric is built from named options with defaults, and
its :attr:`Metric.signature` records everything that determines its scores
(name, every option, backbone, library versions, implementation revision), so
that a score can be traced and cached. Subclasses implement :meth:`_score` on
already-validated, deduplicated inputs.
"""

from __future__ import annotations

import importlib.metadata
from abc import ABC, abstractmethod
from typing import ClassVar, Sequence

import numpy as np

from .. import __version__

FAMILIES = ("ngram", "embedding", "matching", "regression", "generation")


class MetricError(ValueError):
    """Bad metric input or configuration; the message names what and where."""


def library_version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "absent"


class Metric(ABC):
    #: registry name (stable: scripts use it)
    name: ClassVar[str]
    #: one of FAMILIES
    family: ClassVar[str]
    #: option name -> default; every option is part of the signature
    defaults: ClassVar[dict] = {}
    #: option name -> allowed values (checked at construction)
    choices: ClassVar[dict] = {}
    #: distributions whose versions determine the scores (recorded in the signature)
    libraries: ClassVar[tuple[str, ...]] = ()
    #: bump when this implementation changes its scores, to invalidate cached scores
    revision: ClassVar[int] = 1
    #: True when a pair's score depends on the other pairs of the call (idf, document frequencies)
    corpus_dependent: ClassVar[bool] = False
    #: True when the metric needs a backbone (encoder, seq2seq model or static vectors)
    needs_backbone: ClassVar[bool] = False
    #: the backbone kinds (``metricbias.backbones.KINDS``) the ``backbone`` option accepts
    backbone_kinds: ClassVar[tuple[str, ...]] = ()
    #: how empty (or whitespace-only) texts are treated: "error" refuses them; "allow" scores empty
    #: candidates (a defined value) but still refuses empty references, without which no metric is defined
    empty_text: ClassVar[str] = "error"
    #: "higher" when a higher score means a better candidate, "lower" otherwise (recorded in the signature)
    direction: ClassVar[str] = "higher"
    #: options that do not change scores (device, batch size): kept out of the signature
    runtime_options: ClassVar[tuple[str, ...]] = ("device", "batch_size")

    def __init__(self, **options):
        unknown = sorted(set(options) - set(self.defaults))
        if unknown:
            raise MetricError(
                f"metric {self.name}: unknown option(s) {unknown}; options are "
                + ", ".join(f"{k}={v!r}" for k, v in self.defaults.items())
            )
        self.options = {**self.defaults, **options}
        for key, allowed in self.choices.items():
            if self.options[key] not in allowed:
                raise MetricError(f"metric {self.name}: {key}={self.options[key]!r} is not one of {list(allowed)}")

    # --- signature -------------------------------------------------------------------
    def signature_fields(self) -> dict[str, str]:
        """Ordered fields of the signature; subclasses may add backbone fingerprints etc."""
        fields = {"metric": self.name}
        for key, value in self.options.items():
            if key not in self.runtime_options:
                fields[key] = "-" if value is None else str(value)
        fields.update(self.fingerprints())
        fields["direction"] = self.direction
        versions = [f"{lib}-{library_version(lib)}" for lib in self.libraries]
        fields["version"] = ",".join([*versions, f"metricbias-{__version__}", f"rev-{self.revision}"])
        return fields

    def fingerprints(self) -> dict[str, str]:
        """Hashes of the files behind the scores (backbone weights, adapters), added to the signature."""
        return {}

    @property
    def signature(self) -> str:
        return "|".join(f"{k}:{v}" for k, v in self.signature_fields().items())

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.signature}>"

    # --- scoring ---------------------------------------------------------------------
    def score(self, candidates: Sequence[str], references: Sequence[str], cache=None) -> np.ndarray:
        """Score each candidate against its reference (same lengths). Returns float64 scores.

        Identical (candidate, reference) pairs are scored once. ``cache`` (a
        :class:`metricbias.cache.ScoreCache`, or ``True`` for the default one)
        reuses scores computed earlier under the same signature.
        """
        cands, refs = self._validate(candidates, references)
        if not cands:
            return np.zeros(0)
        if cache is True:
            from ..cache import ScoreCache

            cache = ScoreCache.default()
        if cache:
            return cache.score(self, cands, refs)
        return self._score_dedup(cands, refs)

    def _score_dedup(self, cands: list[str], refs: list[str]) -> np.ndarray:
        if self.corpus_dependent:
            out = np.asarray(self._score(cands, refs), dtype=float)
        else:
            unique = list(dict.fromkeys(zip(cands, refs)))
            index = {pair: i for i, pair in enumerate(unique)}
            scored = np.asarray(self._score([c for c, _ in unique], [r for _, r in unique]), dtype=float)
            if scored.shape != (len(unique),):
                raise RuntimeError(f"metric {self.name} returned shape {scored.shape} for {len(unique)} pairs")
            out = scored[[index[p] for p in zip(cands, refs)]]
        if out.shape != (len(cands),):
            raise RuntimeError(f"metric {self.name} returned shape {out.shape} for {len(cands)} pairs")
        return out

    def _validate(self, candidates, references) -> tuple[list[str], list[str]]:
        if isinstance(candidates, str) or isinstance(references, str):
            raise MetricError(f"metric {self.name}: pass lists of strings, not a single string")
        cands, refs = list(candidates), list(references)
        if len(cands) != len(refs):
            raise MetricError(f"metric {self.name}: {len(cands)} candidates but {len(refs)} references")
        for what, texts in (("candidate", cands), ("reference", refs)):
            for i, t in enumerate(texts):
                if not isinstance(t, str):
                    raise MetricError(f"metric {self.name}: {what} {i} is {type(t).__name__}, not str")
                if not t.strip() and (self.empty_text == "error" or what == "reference"):
                    raise MetricError(f"metric {self.name}: {what} {i} is empty; this metric is undefined on empty "
                                      + ("text" if self.empty_text == "error" else "references"))
        return cands, refs

    @abstractmethod
    def _score(self, candidates: list[str], references: list[str]) -> np.ndarray:
        """Scores of already-validated pairs (subclasses)."""
