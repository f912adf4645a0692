"""One interface for every metric: ``Metric.score(candidates, references) -> np.ndarray``.

Modelled on sacreBLEU: a metric is built from named options with defaults, and
its :attr:`Metric.signature` records everything that determines its scores
(name, every option, backbone, library versions, implementation revision), so
that a score can be traced and cached. Subclasses implement :meth:`_score` on
already-validated, deduplicated inputs.

Like a HuggingFace ``evaluate`` metric, every class also carries its card: a
``label`` for tables, its ``paradigm`` (Sun et al. 2022, Table 2), a ``citation``,
known ``limits`` and a one-line description of every option (``docs``). Option
types follow the defaults (``types`` overrides them), are checked when the metric
is built, and are what ``metricbias metrics`` and ``help()`` show.
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from typing import ClassVar, Sequence

import numpy as np

from .. import __version__
from ..signature import format_signature
from ..provenance import library_version

FAMILIES = ("ngram", "embedding", "matching", "regression", "generation", "user")
#: family -> paradigm as Sun et al. (2022) name it (the traditional families keep their own names)
PARADIGMS = {"ngram": "n-gram", "embedding": "static embedding", "matching": "Matching", "regression": "Regression",
             "generation": "Generation", "user": "user-defined"}
#: the paradigms of PLM-based metrics in Sun et al.'s order (their Table 2), and those of the others
PLM_PARADIGMS = tuple(PARADIGMS[f] for f in ("matching", "regression", "generation"))
SURFACE_PARADIGMS = tuple(PARADIGMS[f] for f in ("ngram", "embedding"))


class MetricError(ValueError):
    """Bad metric input or configuration; the message names what and where."""


class Metric(ABC):
    #: registry name (stable: scripts use it)
    name: ClassVar[str]
    #: one of FAMILIES
    family: ClassVar[str]
    #: how tables name the metric ("BLEU", "BERTScore"); :meth:`config_label` adds the configuration
    label: ClassVar[str] = ""
    #: the ``metric`` field of the signature where it is not the registry name: what the scores are of, however
    #: a user named it (a function, a library's object), so that one metric has one signature and one cache entry
    signature_name: ClassVar[str] = ""
    #: the paradigm of Sun et al. (2022); empty: derived from ``family`` (:data:`PARADIGMS`)
    paradigm: ClassVar[str] = ""
    #: where the metric is defined: book/references.bib key, then author (year)
    citation: ClassVar[str] = ""
    #: what the metric cannot do, or where our implementation departs from the original
    limits: ClassVar[str] = ""
    #: option name -> one-line description (shown by ``metricbias metrics`` and ``help()``)
    docs: ClassVar[dict] = {}
    #: option name -> accepted type(s) where the default does not say (a ``None`` default, say)
    types: ClassVar[dict] = {}
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
    #: where a score pack may hold this metric's scores in place of live scoring (its scores are slow to compute and
    #: a recomputed sample verifies them to float rounding): True on every text set, or the text sets (name
    #: prefixes: ``"association:"``, ``"metaeval:flickr8k"``) on which its live scoring is slow; False: always live
    packed: ClassVar[bool | tuple[str, ...]] = False
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

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "name" in cls.__dict__:  # a concrete metric: help() shows its card after the class docstring
            cls.__doc__ = f"{inspect.cleandoc(cls.__dict__.get('__doc__') or '')}\n\n{cls.card_text()}"

    def __init__(self, **options):
        unknown = sorted(set(options) - set(self.defaults))
        if unknown:
            raise MetricError(
                f"metric {self.name}: unknown option(s) {unknown}; options are "
                + ", ".join(f"{k}={v!r}" for k, v in self.defaults.items())
            )
        self.options = {**self.defaults, **options}
        for key, value in options.items():
            expected = self.option_type(key)
            if expected and key not in self.choices and not _is_instance(value, expected):
                raise MetricError(f"metric {self.name}: {key}={value!r} is {type(value).__name__}, "
                                  f"expected {_type_names(expected)}")
        for key, allowed in self.choices.items():
            if self.options[key] not in allowed:
                raise MetricError(f"metric {self.name}: {key}={self.options[key]!r} is not one of {list(allowed)}")

    # --- the card ---------------------------------------------------------------------
    @classmethod
    def option_type(cls, key: str) -> tuple[type, ...]:
        """The accepted types of option ``key`` (empty: anything)."""
        if key in cls.types:
            declared = cls.types[key]
            return tuple(declared) if isinstance(declared, (tuple, list)) else (declared,)
        default = cls.defaults.get(key)
        if default is None:
            return ()
        return (int, float) if isinstance(default, float) else (type(default),)

    @classmethod
    def paradigm_name(cls) -> str:
        return cls.paradigm or PARADIGMS.get(cls.family, cls.family)

    @classmethod
    def packed_on(cls, text_set: str) -> bool:
        """Whether a score pack may hold this metric's scores on ``text_set`` (:attr:`packed`)."""
        if isinstance(cls.packed, bool):
            return cls.packed
        return any(text_set.startswith(prefix) for prefix in cls.packed)

    @classmethod
    def describe(cls) -> dict:
        """The metric's card as plain data: name, label, family, paradigm, direction, citation, limits, where score
        packs may hold its scores (``packed``), options."""
        doc = (cls.__dict__.get("__doc__") or "").split("\n\nOptions", 1)[0].strip()
        options = [{"name": k, "default": v, "type": _type_names(cls.option_type(k)) or "any",
                    "choices": list(cls.choices.get(k, ())), "doc": cls.docs.get(k, ""),
                    "affects_scores": k not in cls.runtime_options} for k, v in cls.defaults.items()]
        return {"name": cls.name, "label": cls.label or cls.name, "family": cls.family,
                "paradigm": cls.paradigm_name(), "direction": cls.direction, "citation": cls.citation,
                "limits": cls.limits, "description": doc.split("\n\n")[0].replace("\n", " ").strip(),
                "needs_backbone": cls.needs_backbone, "backbone_kinds": list(cls.backbone_kinds),
                "corpus_dependent": cls.corpus_dependent,
                "packed": cls.packed if isinstance(cls.packed, bool) else list(cls.packed), "options": options}

    @classmethod
    def card_text(cls) -> str:
        card = cls.describe()
        lines = [f"Options ({cls.name}; {card['paradigm']}, {card['direction']} is better):"]
        for o in card["options"]:
            choices = f", one of {o['choices']}" if o["choices"] else ""
            lines.append(f"    {o['name']} ({o['type']}{choices}; default {o['default']!r}): {o['doc']}".rstrip(": "))
        for key in ("citation", "limits"):
            if card[key]:
                lines.append(f"{key.capitalize()}: {card[key]}")
        return "\n".join(lines)

    @classmethod
    def label_for(cls, options: dict) -> str:
        """How a table names the configuration with ``options`` ("BLEU", "BERTScore-MiniLM", "MoverScore-MiniLM-2gram");
        computed without building the metric, so that profiles naming unavailable backbones still have labels."""
        return cls.label or cls.name

    def config_label(self) -> str:
        return self.label_for(self.options)

    # --- signature -------------------------------------------------------------------
    def signature_fields(self) -> dict[str, str]:
        """Ordered fields of the signature; subclasses may add backbone fingerprints etc."""
        fields = {"metric": self.signature_name or self.name}
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
        return format_signature(self.signature_fields())

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

    def score_sample(self, candidates: Sequence[str], references: Sequence[str], positions) -> np.ndarray:
        """Scores of the pairs at ``positions`` as one call scoring every pair would give them (for a
        corpus-dependent metric the whole call is the corpus): how a score pack's sample is recomputed.
        Here a corpus-dependent metric scores the whole call; a subclass may compute only the corpus statistics."""
        positions = np.asarray(positions, dtype=int)
        if not self.corpus_dependent:
            return self._score_dedup([candidates[i] for i in positions], [references[i] for i in positions])
        return self._score_dedup(list(candidates), list(references))[positions]

    def score_cross(self, rows: Sequence[str], cols: Sequence[str], progress=None,
                    corpus_rows: Sequence[str] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(M(rows, cols), M(cols, rows))``: every row text against every column text, both directions, as one call
        scoring the pairs rows x cols then cols x rows (row-major) would give them: for a corpus-dependent metric that
        call is the corpus. What an association test needs (M(t, a) and M(a, t) of all targets and attributes).
        ``corpus_rows`` (rows among them): the scores of ``rows`` as the call on ``corpus_rows`` gives them (how a
        sample of an association pack is recomputed).

        This scores the pairs one call at a time (no cache); a metric whose scores come from per-text parts (token
        embeddings, a cross-encoder's batches) overrides it to compute each text's part once. ``progress``: a tqdm
        bar advanced by the pairs scored."""
        rows, cols = self._validate(rows, rows)[0], self._validate(cols, cols)[0]
        if corpus_rows is not None and self.corpus_dependent:  # the whole call is the corpus: score it, keep rows
            corpus_rows = list(corpus_rows)
            m_rc, m_cr = self.score_cross(corpus_rows, cols, progress)
            at = [corpus_rows.index(t) for t in rows]
            return m_rc[at], m_cr[:, at]
        n_r, n_c = len(rows), len(cols)
        cands = [x for x in rows for _ in cols] + [y for y in cols for _ in rows]
        refs = [y for _ in rows for y in cols] + [x for _ in cols for x in rows]
        # a corpus-dependent metric scores the whole call at once (its corpus); another in chunks, for the bar
        step = len(cands) if self.corpus_dependent else 20_000
        parts = []
        for start in range(0, len(cands), max(step, 1)):
            parts.append(self._score_dedup(cands[start:start + step], refs[start:start + step]))
            if progress is not None:
                progress.update(len(parts[-1]))
        scores = np.concatenate(parts) if parts else np.zeros(0)
        return scores[:n_r * n_c].reshape(n_r, n_c), scores[n_r * n_c:].reshape(n_c, n_r)

    def rounding_gain(self, candidates: Sequence[str], references: Sequence[str], positions) -> np.ndarray:
        """How far float rounding in this metric's intermediate values can move the scores at ``positions``,
        relative to a score that is a well-conditioned function of them (1). A score pack's tolerance is scaled by
        it; a metric whose score divides by a difference of such values (BERTScore-F) overrides it."""
        return np.ones(len(positions))

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


def _is_instance(value, expected: tuple) -> bool:
    if value is None:
        return type(None) in expected
    if isinstance(value, bool) and bool not in expected:  # True is an int to Python, not to an option
        return False
    return isinstance(value, tuple(t for t in expected if t is not type(None)))


def _type_names(expected: tuple) -> str:
    names = ["None" if t is type(None) else t.__name__ for t in expected]
    if "int" in names and "float" in names:  # a float option takes ints too
        names.remove("int")
    return " or ".join(names)
