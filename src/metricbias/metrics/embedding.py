"""Static word-embedding metrics: WMD, embedding average, vector extrema, greedy matching.

The four metrics Gao & Wan (2022) measure on static embeddings, on the Google
News word2vec subset of Bolukbasi et al. (backbone
``word2vec-googlenews-bolukbasi``; any word2vec-format file also works),
loaded once per process with gensim and scaled to unit length, as Gao et al.
did for WMD (``init_sims(replace=True)``).

**Tokens.** ``\\w+`` runs (the ``RegexpTokenizer(r'\\w+')`` of Gao et al.'s WMD
code), so ``couldn't`` gives ``couldn`` and ``t``.

**Case.** The vectors are case-sensitive and mostly lowercase (38 of the
26,423 words have capitals, e.g. ``John``). ``case="fallback"`` (default) looks
a token up as written and, if absent, lowercased; ``"lower"`` lowercases
every token first (Gao et al.'s WMD); ``"exact"`` never changes it.

**Out-of-vocabulary (OOV) policy.** Tokens without a vector are dropped (as
gensim's ``wmdistance`` does; nlg-eval, which Gao et al. used for the other
three, substitutes the mean vector instead). The Google News vectors have no
``a``, ``of``, ``to`` or ``and``, so those are always dropped. A text with no
token left (empty candidate, punctuation only, all OOV) has no representation:
its pairs score 0.0 for the similarities (the cosine convention for a zero vector) and
``inf`` for the WMD distance, with an :class:`OOVWarning` giving the count.
An empty reference is an error.

**Stop words.** Gao et al.'s WMD removed NLTK's English stop words, which
include *he*, *she*, *his*, *her*: the very words that differ between the two
candidates of a gender pair. Default: keep every word; ``stopwords="gensim"``
drops gensim's English list (NLTK's list needs ``nltk.download``).
"""

from __future__ import annotations

import re
import warnings
from functools import lru_cache
from pathlib import Path
from typing import ClassVar

import numpy as np

from .base import Metric, MetricError

DEFAULT_BACKBONE = "word2vec-googlenews-bolukbasi"
_TOKEN = re.compile(r"\w+")


class OOVWarning(UserWarning):
    """Some texts had no in-vocabulary token; their pairs got the metric's no-representation value."""


@lru_cache(maxsize=4)
def load_vectors(path: str):
    """gensim ``KeyedVectors`` from a word2vec binary file, unit-normalized (loaded once per process)."""
    from gensim.models import KeyedVectors

    try:
        kv = KeyedVectors.load_word2vec_format(path, binary=True)
    except Exception as exc:  # gensim raises assorted errors on a wrong format
        raise MetricError(f"cannot read word2vec vectors from {path}: {exc}") from exc
    vectors = kv.vectors.astype(np.float64)
    kv.vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1), 1e-12)[:, None]
    kv.norms = None
    return kv


@lru_cache(maxsize=None)
def _gensim_stopwords() -> frozenset[str]:
    from gensim.parsing.preprocessing import STOPWORDS

    return frozenset(STOPWORDS)


class StaticEmbeddingMetric(Metric):
    """Shared machinery: backbone resolution, tokenization, OOV policy, one score per pair."""

    family = "embedding"
    needs_backbone = True
    backbone_kinds: ClassVar[tuple[str, ...]] = ("static",)
    empty_text = "allow"
    defaults = {"backbone": DEFAULT_BACKBONE, "case": "fallback", "stopwords": "none"}
    choices = {"case": ("fallback", "lower", "exact"), "stopwords": ("none", "gensim")}
    libraries = ("gensim", "numpy")
    citation = "gao2022social: static-embedding metrics as Gao & Wan (2022) run them"
    limits = "Words without a vector are skipped: a text of unknown words has no representation."
    docs = {"backbone": "word2vec-format vectors (registered name or .bin file)",
            "case": "look words up as written, lowercased, or as written then lowercased",
            "stopwords": "drop the English stop words of gensim (Řehůřek & Sojka, 2010) first"}
    #: the score of a pair where either text has no in-vocabulary token
    no_representation: ClassVar[float] = 0.0

    def __init__(self, **options):
        super().__init__(**options)
        from .. import backbones

        try:
            self._path = backbones.resolve(self.options["backbone"])
        except backbones.BackboneError as exc:
            raise MetricError(f"metric {self.name}: {exc}") from exc
        if self._path.is_dir():
            raise MetricError(f"metric {self.name}: backbone {self.options['backbone']!r} is a model folder, not a "
                              f"file of static word vectors (use {DEFAULT_BACKBONE!r} or a word2vec .bin file)")
        self._fingerprint = backbones.fingerprint(self.options["backbone"])

    def signature_fields(self) -> dict[str, str]:
        fields = super().signature_fields()
        version = fields.pop("version")
        del fields["direction"]  # kept after the tokenization fields
        fields["backbone_sha"] = self._fingerprint
        fields["tokens"] = r"\w+"
        fields["oov"] = "drop"
        fields["direction"] = self.direction
        fields["version"] = version
        return fields

    # --- tokens to vectors ------------------------------------------------------------
    def tokens(self, text: str) -> list[str]:
        """The in-vocabulary keys of ``text``'s tokens, in order (OOV tokens dropped)."""
        kv = load_vectors(str(self._path))
        vocab = kv.key_to_index
        case, stop = self.options["case"], self.options["stopwords"]
        keys = []
        for tok in _TOKEN.findall(text):
            if stop == "gensim" and tok.lower() in _gensim_stopwords():
                continue
            if case == "lower":
                tok = tok.lower()
            if tok in vocab:
                keys.append(tok)
            elif case == "fallback" and tok.lower() in vocab:
                keys.append(tok.lower())
        return keys

    def represents(self, text: str) -> bool:
        """Whether ``text`` has a representation: at least one in-vocabulary token.

        Association tests drop the words for which this is False (classic WEAT's
        handling of out-of-vocabulary words; :mod:`metricbias.bias.association`).
        """
        return bool(self.tokens(text))

    def indices(self, text: str) -> np.ndarray:
        """Vocabulary rows of ``text``'s in-vocabulary tokens, in order."""
        vocab = load_vectors(str(self._path)).key_to_index
        return np.array([vocab[k] for k in self.tokens(text)], dtype=np.int64)

    def vectors(self, text: str) -> np.ndarray:
        """Unit vectors of ``text``'s in-vocabulary tokens, shape (tokens, dim)."""
        return load_vectors(str(self._path)).vectors[self.indices(text)]

    def _score(self, candidates, references):
        table = load_vectors(str(self._path)).vectors
        rows = {text: self.indices(text) for text in dict.fromkeys((*candidates, *references))}
        # a metric that compares one vector per text computes it (and its norm) once per distinct text: the
        # association tests pair each word with every attribute word, hundreds of thousands of pairs
        vectors = {text: _with_norm(self.text_vector(ix, table)) for text, ix in rows.items() if len(ix)} \
            if self.text_vector is not None else None
        out = np.empty(len(candidates))
        missing = 0
        for i, (c, r) in enumerate(zip(candidates, references)):
            ic, ir = rows[c], rows[r]
            if len(ic) == 0 or len(ir) == 0:
                out[i] = self.no_representation
                missing += 1
            elif vectors is not None:
                out[i] = _cosine(*vectors[c], *vectors[r])
            else:
                out[i] = self.pair_score(ic, ir, table)
        if missing:
            warnings.warn(f"metric {self.name}: {missing} of {len(candidates)} pairs have a text with no "
                          f"in-vocabulary token (empty, punctuation only or all OOV); scored "
                          f"{self.no_representation}", OOVWarning, stacklevel=3)
        return out

    #: ``text_vector(rows, table)``: one vector per text (rows: its tokens' vocabulary rows, non-empty), the score
    #: the cosine of the two texts' vectors; None for a metric that compares the token vectors (:meth:`pair_score`)
    text_vector = None

    def pair_score(self, cand: np.ndarray, ref: np.ndarray, table: np.ndarray) -> float:
        """Score of one pair from the vocabulary rows of its tokens (both non-empty) and the vector table."""
        raise NotImplementedError


def _with_norm(vector: np.ndarray) -> tuple[np.ndarray, float]:
    return vector, np.linalg.norm(vector)


def _cosine(a: np.ndarray, na: float, b: np.ndarray, nb: float) -> float:
    """Cosine of ``a`` and ``b`` given their norms."""
    if na == 0 or nb == 0:
        return 0.0  # a zero vector has cosine 0 with everything (sklearn's convention)
    return float(np.clip(a @ b / (na * nb), -1.0, 1.0))


class EmbeddingAverage(StaticEmbeddingMetric):
    """Embedding average (Landauer & Dumais, 1997): cosine of the two texts' mean word vectors, in [-1, 1]."""

    name = "embedding_average"
    label = "Embedding average"

    @staticmethod
    def text_vector(rows, table):
        return table[rows].mean(axis=0)


def extrema(vectors: np.ndarray) -> np.ndarray:
    """Vector extrema (Forgues et al., 2014): per dimension, the value of largest magnitude, sign kept."""
    hi, lo = vectors.max(axis=0), vectors.min(axis=0)
    return np.where(hi >= -lo, hi, lo)


class VectorExtrema(StaticEmbeddingMetric):
    """Vector extrema (Forgues et al., 2014): cosine of the two texts' extrema vectors, in [-1, 1]."""

    name = "vector_extrema"
    label = "Vector extrema"

    @staticmethod
    def text_vector(rows, table):
        return extrema(table[rows])


class GreedyMatching(StaticEmbeddingMetric):
    """Greedy matching (Rus & Lintean, 2012), symmetric, in [-1, 1].

    Each reference token is matched to its most similar candidate token
    (cosine); the mean of those similarities is G(ref -> cand); the score is
    (G(ref -> cand) + G(cand -> ref)) / 2, as in nlg-eval (Gao et al.'s code).
    """

    name = "greedy_matching"
    label = "Greedy matching"

    def pair_score(self, cand, ref, table):
        sim = table[cand] @ table[ref].T  # unit vectors: cosine similarities, (cand tokens, ref tokens)
        return float((sim.max(axis=0).mean() + sim.max(axis=1).mean()) / 2)


class WMD(StaticEmbeddingMetric):
    """Word Mover's Distance (Kusner et al., 2015), exact earth mover's distance with POT's ``ot.emd2``.

    Each text is a normalized bag of words (in-vocabulary tokens, repeated
    tokens weighted by their count); the ground cost is the Euclidean distance
    between unit word vectors, as gensim's ``wmdistance`` (Řehůřek & Sojka, 2010). ``output="similarity"``
    (default; higher is better) reports 1 / (1 + WMD), the conversion of Gao
    et al.'s WMD code (Kilickaya et al., 2017), in (0, 1], 1 for identical bags;
    ``output="distance"`` reports the WMD itself (lower is better, in [0, 2]).
    """

    name = "wmd"
    label = "WMD"
    #: its transport problems on long texts: ten seconds or more on two CPU cores (benchmarks/README.md)
    packed = ("association:", "metaeval:flickr8k", "metaeval:wmt19-kk-en", "metaeval:realsumm")
    docs = {**StaticEmbeddingMetric.docs, "output": "similarity (1 / (1 + distance)) or the distance itself"}
    defaults = {**StaticEmbeddingMetric.defaults, "output": "similarity"}
    choices = {**StaticEmbeddingMetric.choices, "output": ("similarity", "distance")}
    libraries = ("POT", "gensim", "numpy")

    def __init__(self, **options):
        super().__init__(**options)
        if self.options["output"] == "distance":
            self.direction = "lower"
            self.no_representation = float("inf")

    @staticmethod
    def distance(cand: np.ndarray, ref: np.ndarray, table: np.ndarray) -> float:
        """WMD between two bags of vocabulary rows (repeats weigh more) over the unit vectors of ``table``."""
        import ot

        uc, nc = np.unique(cand, return_counts=True)
        ur, nr = np.unique(ref, return_counts=True)
        # |x - y|^2 = 2 - 2 x.y for unit vectors
        cost = np.sqrt(np.maximum(2.0 - 2.0 * table[uc] @ table[ur].T, 0.0))
        cost[uc[:, None] == ur[None, :]] = 0.0  # the same word: exactly 0, not a rounding residue
        return float(max(ot.emd2(nc / nc.sum(), nr / nr.sum(), cost), 0.0))

    def pair_score(self, cand, ref, table):
        d = self.distance(cand, ref, table)
        return d if self.options["output"] == "distance" else 1.0 / (1.0 + d)


__all__ = ["DEFAULT_BACKBONE", "EmbeddingAverage", "GreedyMatching", "OOVWarning", "StaticEmbeddingMetric",
           "VectorExtrema", "WMD", "extrema", "load_vectors"]
