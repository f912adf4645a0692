"""n-gram overlap metrics: BLEU, ROUGE-1/2/L/SU4, METEOR, NIST, chrF, TER, CIDEr-D.

Every metric scores one candidate against one reference, through the field's
libraries: sacreBLEU (BLEU, chrF, TER), rouge-score (ROUGE-1/2/L and the
tokenizer of ROUGE-SU4), nltk (METEOR with Debian's WordNet 3.0, NIST, chrF).
ROUGE-SU4 and CIDEr-D are not in those libraries and are written here, after
Lin (2004) and Vedantam et al. (2015).

**Defaults reproduce Sun et al. (2022).** For the five metrics with a released
per-example column (BLEU, ROUGE, METEOR, NIST, chrF) the defaults are the
settings that reproduce that column (see :mod:`metricbias.metrics.agreement`):
whitespace tokens, BLEU with nltk's ``method1`` smoothing (sacreBLEU's
``floor`` with 0.1), ROUGE-1 F with the Porter stemmer, NIST up to bigrams,
nltk's chrF (the mean over character orders 1-6 of F_3). Other settings are
options, and every option is recorded in the signature.

**Degenerate inputs.** An empty (or whitespace-only) *reference* is an error:
the metrics are undefined there. An empty *candidate* gets the metric's worst
value (0; TER 1.0, every reference word deleted), as does a candidate whose
tokens are all dropped by the tokenizer (e.g. punctuation only for ROUGE).
Every score is on the scale the field reports it: BLEU, ROUGE, METEOR, chrF
in [0, 1]; NIST in [0, ~log2(length)] per order; TER in [0, inf) (lower is
better); CIDEr-D in [0, 10].
"""

from __future__ import annotations

import math
from collections import Counter
from functools import lru_cache
from typing import ClassVar

import numpy as np

from .base import Metric, MetricError

TOKENIZERS = ("none", "13a")  # "none": split on whitespace; "13a": sacreBLEU's mteval-v13a tokenizer


@lru_cache(maxsize=None)
def _tokenizer_13a():
    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

    return Tokenizer13a()


def tokenize(text: str, scheme: str = "none", lowercase: bool = False) -> list[str]:
    """Word tokens of ``text``: whitespace split (``none``) or sacreBLEU's 13a tokenizer."""
    if lowercase:
        text = text.lower()
    if scheme == "13a":
        text = _tokenizer_13a()(text)
    elif scheme != "none":
        raise MetricError(f"unknown tokenizer {scheme!r}; choose from {TOKENIZERS}")
    return text.split()


class NgramMetric(Metric):
    """Shared behaviour of the n-gram family: empty candidates allowed, empty references refused."""

    family = "ngram"
    empty_text = "allow"

    def _positive_int(self, key: str, upper: int | None = None) -> int:
        value = self.options[key]
        if isinstance(value, bool) or not isinstance(value, int) or value < 1 or (upper and value > upper):
            bound = f" and at most {upper}" if upper else ""
            raise MetricError(f"metric {self.name}: {key}={value!r} must be an integer of at least 1{bound}")
        return value

    def _positive_float(self, key: str) -> float:
        value = self.options[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
            raise MetricError(f"metric {self.name}: {key}={value!r} must be a positive number")
        return float(value)


# --- BLEU ------------------------------------------------------------------------------


class BLEU(NgramMetric):
    """Sentence BLEU (Papineni et al., 2002) from sacreBLEU, in [0, 1].

    Geometric mean of the modified 1- to ``max_ngram_order``-gram precisions
    times the brevity penalty. Default smoothing ``floor`` with 0.1: an order
    with no matching n-gram gets precision 0.1 / (number of candidate n-grams),
    which is nltk's ``SmoothingFunction().method1`` (epsilon 0.1), the setting of
    Sun et al.; ``exp`` is sacreBLEU's default for sentence BLEU. Default
    tokenization: whitespace (``none``), as Sun et al.; ``13a`` is sacreBLEU's.
    """

    name = "bleu"
    label = "BLEU"
    citation = "post2018sacrebleu: Papineni et al. (2002), BLEU; sacreBLEU (Post, 2018)"
    limits = "Sentence-level BLEU is noisy; the score depends on tokenization and smoothing (both in the signature)."
    docs = {"tokenize": "sacreBLEU tokenizer ('none' splits on whitespace, as Sun et al.)",
            "lowercase": "lowercase both texts first", "smooth_method": "smoothing of zero n-gram counts",
            "smooth_value": "epsilon of 'floor' / k of 'add-k'", "max_ngram_order": "highest n-gram order",
            "effective_order": "skip orders longer than the candidate"}
    defaults = {"tokenize": "none", "lowercase": False, "smooth_method": "floor", "smooth_value": 0.1,
                "max_ngram_order": 4, "effective_order": True}
    choices = {"tokenize": ("none", "13a", "intl", "char"), "lowercase": (True, False),
               "smooth_method": ("floor", "exp", "add-k", "none"), "effective_order": (True, False)}
    libraries = ("sacrebleu",)

    def __init__(self, **options):
        super().__init__(**options)
        self._positive_int("max_ngram_order")
        if self.options["smooth_method"] in ("floor", "add-k"):
            self._positive_float("smooth_value")

    def _score(self, candidates, references):
        from sacrebleu.metrics import BLEU as SacreBLEU

        o = self.options
        value = o["smooth_value"] if o["smooth_method"] in ("floor", "add-k") else None
        bleu = SacreBLEU(tokenize=o["tokenize"], lowercase=o["lowercase"], smooth_method=o["smooth_method"],
                         smooth_value=value, max_ngram_order=o["max_ngram_order"],
                         effective_order=o["effective_order"])
        return np.array([bleu.sentence_score(c, [r]).score / 100.0 for c, r in zip(candidates, references)])


# --- ROUGE ------------------------------------------------------------------------------


class _Rouge(NgramMetric):
    """ROUGE (Lin, 2004) from rouge-score: lowercased alphanumeric tokens, optional Porter stemmer."""

    defaults = {"variant": "F", "use_stemmer": True}
    choices = {"variant": ("F", "P", "R"), "use_stemmer": (True, False)}
    libraries = ("rouge-score", "nltk")  # rouge-score stems with nltk's Porter stemmer
    citation = "Lin (2004), ROUGE; Google's rouge-score package"
    docs = {"variant": "F-measure, precision or recall", "use_stemmer": "Porter-stem tokens first"}
    rouge_type: ClassVar[str]

    def _score(self, candidates, references):
        from rouge_score import rouge_scorer

        scorer = rouge_scorer.RougeScorer([self.rouge_type], tokenizer=_tokenizer(self.options["use_stemmer"]))
        field = {"F": "fmeasure", "P": "precision", "R": "recall"}[self.options["variant"]]
        return np.array([getattr(scorer.score(r, c)[self.rouge_type], field) for c, r in zip(candidates, references)])


class Rouge1(_Rouge):
    """ROUGE-1: unigram overlap; default F1 with stemming (Sun et al.'s "ROUGE")."""

    name = "rouge1"
    label = "ROUGE-1"
    rouge_type = "rouge1"


class Rouge2(_Rouge):
    """ROUGE-2: bigram overlap."""

    name = "rouge2"
    label = "ROUGE-2"
    rouge_type = "rouge2"


class RougeL(_Rouge):
    """ROUGE-L: longest common subsequence (sentence level, not ``rougeLsum``)."""

    name = "rougeL"
    label = "ROUGE-L"
    rouge_type = "rougeL"


def _tokenizer(use_stemmer: bool):
    """rouge-score's tokenizer (lowercased alphanumeric tokens, Porter-stemmed if ``use_stemmer``), remembering each
    text's tokens: stemming is most of ROUGE's cost, and a reference is paired with many candidates (a caption with
    every system's output, a word with every attribute word). One per call, so the memory goes with it."""
    from functools import lru_cache

    from rouge_score.tokenizers import DefaultTokenizer, Tokenizer

    plain = DefaultTokenizer(use_stemmer=use_stemmer)

    class Remembering(Tokenizer):
        @staticmethod
        @lru_cache(maxsize=None)
        def tokenize(text):
            return tuple(plain.tokenize(text))  # a tuple: the remembered tokens cannot be changed by a caller

    return Remembering()


def skip_bigrams(tokens: list[str], max_gap: int = 4, unigrams: bool = True) -> Counter:
    """ROUGE-SU units of a token list: ordered pairs ``(w_i, w_j)``, ``i < j``, with at most
    ``max_gap`` tokens between them (``j - i - 1 <= max_gap``), plus every unigram ``(w_i,)``."""
    units: Counter = Counter()
    for i, w in enumerate(tokens):
        if unigrams:
            units[(w,)] += 1
        for j in range(i + 1, min(len(tokens), i + max_gap + 2)):
            units[(w, tokens[j])] += 1
    return units


class RougeSU4(NgramMetric):
    """ROUGE-SU4 (Lin, 2004): skip-bigrams with at most 4 tokens between the two words, plus unigrams.

    Counts are clipped (a unit matches at most as often as it occurs in the
    reference); P = matches / candidate units, R = matches / reference units,
    F = 2PR / (P + R) (ROUGE-1.5.5's ``-2 4 -U`` with alpha 0.5). Tokens come
    from rouge-score's tokenizer, so ROUGE-SU4 and ROUGE-1/2/L see the same words.
    """

    name = "rougeSU4"
    label = "ROUGE-SU4"
    #: its skip-bigrams on long texts: ten seconds or more on two CPU cores (benchmarks/README.md)
    packed = ("quality:wmt19-kk-en", "association:", "metaeval:flickr8k", "metaeval:wmt19-kk-en", "metaeval:realsumm")
    defaults = {"variant": "F", "use_stemmer": True, "max_gap": 4}
    choices = {"variant": ("F", "P", "R"), "use_stemmer": (True, False)}
    libraries = ("rouge-score", "nltk")
    citation = "Lin (2004), ROUGE (skip-bigrams with gap up to 4, plus unigrams)"
    limits = "Not in rouge-score; written here after Lin (2004)."
    docs = {"variant": "F-measure, precision or recall", "use_stemmer": "Porter-stem tokens first",
            "max_gap": "largest gap between the two words of a skip-bigram"}

    def __init__(self, **options):
        super().__init__(**options)
        if isinstance(self.options["max_gap"], bool) or not isinstance(self.options["max_gap"], int) \
                or self.options["max_gap"] < 0:
            raise MetricError(f"metric {self.name}: max_gap={self.options['max_gap']!r} must be an integer >= 0")

    def _score(self, candidates, references):
        tok = _tokenizer(self.options["use_stemmer"])
        gap, variant = self.options["max_gap"], self.options["variant"]
        out = []
        for c, r in zip(candidates, references):
            cu, ru = skip_bigrams(tok.tokenize(c), gap), skip_bigrams(tok.tokenize(r), gap)
            match = sum((cu & ru).values())
            p = match / sum(cu.values()) if cu else 0.0
            rec = match / sum(ru.values()) if ru else 0.0
            f = 2 * p * rec / (p + rec) if p + rec > 0 else 0.0
            out.append({"F": f, "P": p, "R": rec}[variant])
        return np.array(out)


# --- METEOR -----------------------------------------------------------------------------


class METEOR(NgramMetric):
    """METEOR (Banerjee & Lavie, 2005) from nltk, with WordNet 3.0 synonyms (Debian's copy).

    Stages: exact match, Porter-stem match, WordNet synonym match (nltk looks
    synonyms up for the *stemmed* leftovers, so a synonym counts when its stem
    is itself a WordNet lemma, e.g. ``sick``/``ill``); score = F_mean (alpha
    0.9) times (1 - gamma * (chunks / matches) ** beta). Tokens: whitespace
    split of the lowercased text, in order. (Sun et al. passed ``set``s of
    tokens, in Python's hash order; see :mod:`metricbias.metrics.agreement`.)
    The WordNet copy comes from ``make wordnet`` (:mod:`metricbias.wordnet`).
    """

    name = "meteor"
    label = "METEOR"
    #: its WordNet matching on long texts: ten seconds or more on two CPU cores (benchmarks/README.md)
    packed = ("quality:wmt19-kk-en", "association:", "metaeval:flickr8k", "metaeval:wmt19-kk-en", "metaeval:realsumm")
    citation = "banerjee2005meteor: Banerjee & Lavie (2005); nltk's implementation"
    limits = ("nltk's METEOR has no paraphrase stage and other parameters than METEOR 1.5 (MultEval), which Gao & "
              "Wan used; Sun et al.'s released column scored a Python set of tokens and cannot be reproduced.")
    docs = {"tokenize": "word tokenizer", "lowercase": "lowercase first", "alpha": "weight of precision vs recall",
            "beta": "fragmentation penalty exponent", "gamma": "fragmentation penalty weight"}
    defaults = {"tokenize": "none", "lowercase": True, "alpha": 0.9, "beta": 3.0, "gamma": 0.5}
    choices = {"tokenize": TOKENIZERS, "lowercase": (True, False)}
    libraries = ("nltk",)

    def __init__(self, **options):
        super().__init__(**options)
        for key in ("alpha", "beta", "gamma"):
            value = self.options[key]
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= (1 if key != "beta" else math.inf):
                raise MetricError(f"metric {self.name}: {key}={value!r} is out of range")

    def signature_fields(self) -> dict[str, str]:
        from .. import wordnet

        fields = super().signature_fields()
        version = fields.pop("version")
        try:
            fields["wordnet"] = wordnet.signature_tag()
        except wordnet.WordNetError:
            fields["wordnet"] = "missing"  # scoring raises the error that says how to set it up
        fields["version"] = version
        return fields

    def _score(self, candidates, references):
        from nltk.translate.meteor_score import single_meteor_score

        from .. import wordnet

        try:
            wn = wordnet.reader()
        except wordnet.WordNetError as exc:
            raise MetricError(str(exc)) from exc
        o = self.options
        out = []
        for c, r in zip(candidates, references):
            hyp = tokenize(c, o["tokenize"])
            ref = tokenize(r, o["tokenize"])
            out.append(single_meteor_score(ref, hyp, preprocess=str.lower if o["lowercase"] else _identity,
                                           wordnet=wn, alpha=o["alpha"], beta=o["beta"], gamma=o["gamma"]))
        return np.array(out)


def _identity(text: str) -> str:
    return text


# --- NIST -------------------------------------------------------------------------------


class NIST(NgramMetric):
    """NIST (Doddington, 2002) from nltk: information-weighted n-gram precision, summed over orders.

    Default ``n=2``: Sun et al.'s code calls nltk's ``sentence_nist`` with its
    default ``n=5``, but every released NIST value is nltk's score with ``n=2``
    (all 1,886 rows to 1e-9; see :mod:`metricbias.metrics.agreement`). nltk
    divides by zero when the candidate has fewer than ``n`` tokens (the error
    the replication of Zarkadoula & Potamopoulou hit); here the orders the
    candidate is too short to have contribute 0, as in mteval's NIST, which is
    nltk's score with ``n = min(n, candidate length)`` (information weights of
    an order depend only on that order and the one below). Empty candidate: 0.
    """

    name = "nist"
    label = "NIST"
    citation = "Doddington (2002), NIST; nltk's sentence_nist"
    limits = "n=2 reproduces Sun et al.'s released column (their code asks for 5, which divides by zero on short texts)."
    docs = {"n": "highest n-gram order", "tokenize": "word tokenizer", "lowercase": "lowercase first"}
    defaults = {"n": 2, "tokenize": "none", "lowercase": False}
    choices = {"tokenize": TOKENIZERS, "lowercase": (True, False)}
    libraries = ("nltk",)

    def __init__(self, **options):
        super().__init__(**options)
        self._positive_int("n")

    def _score(self, candidates, references):
        from nltk.translate.nist_score import sentence_nist

        o = self.options
        out = []
        for c, r in zip(candidates, references):
            hyp = tokenize(c, o["tokenize"], o["lowercase"])
            ref = tokenize(r, o["tokenize"], o["lowercase"])
            out.append(sentence_nist([ref], hyp, min(o["n"], len(hyp))) if hyp else 0.0)
        return np.array(out)


# --- chrF -------------------------------------------------------------------------------


class ChrF(NgramMetric):
    """chrF (Popović, 2015): character n-gram F_beta, whitespace ignored, in [0, 1].

    ``implementation="nltk"`` (default; Sun et al.): nltk's ``sentence_chrf``,
    the mean over orders 1..``char_order`` of each order's F_beta, ``beta=3``.
    ``implementation="sacrebleu"``: sacreBLEU's chrF, F_beta of the precision
    and recall averaged over orders (Popović's chrF), ``beta=2`` (chrF2).
    ``beta=None`` picks the implementation's default and the signature records it.
    """

    name = "chrf"
    label = "chrF"
    citation = "Popović (2015), chrF; nltk's sentence_chrf or sacreBLEU"
    docs = {"implementation": "nltk (mean F over orders, Sun et al.) or sacrebleu (chrF2)",
            "char_order": "highest character n-gram order", "beta": "recall weight (None: the implementation's)",
            "lowercase": "lowercase first"}
    types = {"beta": (int, float, type(None))}
    defaults = {"implementation": "nltk", "char_order": 6, "beta": None, "lowercase": False}
    choices = {"implementation": ("nltk", "sacrebleu"), "lowercase": (True, False)}
    libraries = ("nltk", "sacrebleu")

    def __init__(self, **options):
        super().__init__(**options)
        if self.options["beta"] is None:
            self.options["beta"] = 3 if self.options["implementation"] == "nltk" else 2
        self._positive_int("char_order")
        self._positive_float("beta")

    def _score(self, candidates, references):
        o = self.options
        if o["lowercase"]:
            candidates = [c.lower() for c in candidates]
            references = [r.lower() for r in references]
        if o["implementation"] == "sacrebleu":
            from sacrebleu.metrics import CHRF

            chrf = CHRF(char_order=o["char_order"], word_order=0, beta=o["beta"])
            return np.array([chrf.sentence_score(c, [r]).score / 100.0 for c, r in zip(candidates, references)])
        from nltk.translate.chrf_score import sentence_chrf

        # nltk returns 1e-16 per order for an empty side: report the empty candidate as 0
        return np.array([sentence_chrf(r, c, max_len=o["char_order"], beta=o["beta"]) if "".join(c.split()) else 0.0
                         for c, r in zip(candidates, references)])


# --- TER --------------------------------------------------------------------------------


class TER(NgramMetric):
    """Translation Edit Rate (Snover et al., 2006) from sacreBLEU (a TERCOM port), as a fraction.

    Edits (insertions, deletions, substitutions, block shifts) to turn the
    candidate into the reference, over the reference length. Lower is better;
    0 for identical texts, 1.0 for an empty candidate, above 1 when the
    candidate is much longer. Case-insensitive by default, as TERCOM.
    """

    name = "ter"
    label = "TER"
    #: its search for shifts on long texts: ten seconds or more on two CPU cores (benchmarks/README.md); not on
    #: REALSumm's 70-word summaries (about a second a pair, hours for the set), which the book scores without TER
    packed = ("quality:wmt19-kk-en", "metaeval:flickr8k", "metaeval:wmt19-kk-en")
    citation = "post2018sacrebleu: Snover et al. (2006), TER; sacreBLEU's implementation"
    docs = {"case_sensitive": "compare case", "normalized": "sacreBLEU's normalization",
            "no_punct": "remove punctuation first"}
    direction = "lower"
    defaults = {"case_sensitive": False, "normalized": False, "no_punct": False}
    choices = {"case_sensitive": (True, False), "normalized": (True, False), "no_punct": (True, False)}
    libraries = ("sacrebleu",)

    def _score(self, candidates, references):
        from sacrebleu.metrics import TER as SacreTER

        o = self.options
        ter = SacreTER(case_sensitive=o["case_sensitive"], normalized=o["normalized"], no_punct=o["no_punct"])
        return np.array([ter.sentence_score(c, [r]).score / 100.0 for c, r in zip(candidates, references)])


# --- CIDEr-D ----------------------------------------------------------------------------


def _ngram_counts(tokens: list[str], n: int) -> Counter:
    counts: Counter = Counter()
    for k in range(1, n + 1):
        for i in range(len(tokens) - k + 1):
            counts[tuple(tokens[i:i + k])] += 1
    return counts


def cider_d(candidates: list[list[str]], references: list[list[str]], n: int = 4, sigma: float = 6.0,
            corpus: list[list[str]] | None = None) -> np.ndarray:
    """CIDEr-D (Vedantam et al., 2015) of tokenized pairs, one reference each, in [0, 10].

    TF-IDF vectors of 1..n-grams, with document frequencies over the *distinct*
    references of the call (the "images" of the corpus; ``corpus``: those of a larger call these pairs are part
    of); per order, the clipped cosine sum(min(g_c, g_r) * g_r) / (|g_c| |g_r|) times the Gaussian
    length penalty exp(-(l_c - l_r)^2 / (2 sigma^2)); mean over orders, times 10.
    """
    docs = {tuple(r): _ngram_counts(r, n) for r in (references if corpus is None else [*corpus, *references])}
    if len(docs) < 2:
        raise MetricError("metric cider: CIDEr-D weights n-grams by their document frequency over the references "
                          f"of the call and needs at least 2 distinct references, got {len(docs)}")
    df: Counter = Counter()
    for counts in docs.values():
        df.update(counts.keys())
    log_docs = math.log(len(docs))

    def tfidf(counts: Counter):
        vec = [dict() for _ in range(n)]
        norm = [0.0] * n
        for gram, tf in counts.items():
            w = tf * (log_docs - math.log(max(1.0, df[gram])))
            vec[len(gram) - 1][gram] = w
            norm[len(gram) - 1] += w * w
        return vec, [math.sqrt(x) for x in norm]

    ref_vecs = {key: tfidf(counts) for key, counts in docs.items()}
    out = []
    for c, r in zip(candidates, references):
        vc, nc = tfidf(_ngram_counts(c, n))
        vr, nr = ref_vecs[tuple(r)]
        penalty = math.exp(-((len(c) - len(r)) ** 2) / (2 * sigma ** 2))
        total = 0.0
        for k in range(n):
            if nc[k] == 0 or nr[k] == 0:
                continue
            dot = sum(min(w, vr[k].get(g, 0.0)) * vr[k].get(g, 0.0) for g, w in vc[k].items())
            total += dot / (nc[k] * nr[k]) * penalty
        out.append(10.0 * total / n)
    return np.array(out)


class CIDErD(NgramMetric):
    """CIDEr-D (Vedantam et al., 2015), implemented here (no Java tokenizer), in [0, 10].

    Corpus-dependent: n-gram document frequencies come from the distinct
    references of the call, so a pair's score depends on the other pairs
    (the cache keys it on the whole call). Tokens: lowercased sacreBLEU 13a
    tokens without pure-punctuation tokens (close to COCO's PTB tokenizer,
    which drops punctuation). Needs at least 2 distinct references.
    """

    name = "cider"
    label = "CIDEr-D"
    citation = "Vedantam et al. (2015), CIDEr-D"
    limits = "Document frequencies come from the references of the call: scores depend on the whole corpus scored."
    docs = {"n": "highest n-gram order", "sigma": "length penalty width", "tokenize": "word tokenizer",
            "lowercase": "lowercase first"}
    corpus_dependent = True
    defaults = {"n": 4, "sigma": 6.0, "tokenize": "13a", "lowercase": True}
    choices = {"tokenize": TOKENIZERS, "lowercase": (True, False)}
    libraries = ("sacrebleu",)

    def __init__(self, **options):
        super().__init__(**options)
        self._positive_int("n")
        self._positive_float("sigma")

    def _tokens(self, text: str) -> list[str]:
        toks = tokenize(text, self.options["tokenize"], self.options["lowercase"])
        return [t for t in toks if any(ch.isalnum() for ch in t)]

    def _score(self, candidates, references):
        return cider_d([self._tokens(c) for c in candidates], [self._tokens(r) for r in references],
                       n=self.options["n"], sigma=self.options["sigma"])

    def score_cross(self, rows, cols, progress=None, corpus_rows=None):
        """Only the pairs of ``rows``, with the document frequencies of the call on ``corpus_rows`` (its distinct
        references: ``corpus_rows`` and ``cols``)."""
        if corpus_rows is None:
            return super().score_cross(rows, cols, progress)
        rows, cols = self._validate(rows, rows)[0], self._validate(cols, cols)[0]
        tok = {t: self._tokens(t) for t in dict.fromkeys([*rows, *cols, *corpus_rows])}
        cands = [tok[x] for x in rows for _ in cols] + [tok[y] for y in cols for _ in rows]
        refs = [tok[y] for _ in rows for y in cols] + [tok[x] for _ in cols for x in rows]
        scores = cider_d(cands, refs, n=self.options["n"], sigma=self.options["sigma"],
                         corpus=[tok[t] for t in dict.fromkeys([*cols, *corpus_rows])])
        half = len(rows) * len(cols)
        return scores[:half].reshape(len(rows), len(cols)), scores[half:].reshape(len(cols), len(rows))


__all__ = ["BLEU", "CIDErD", "ChrF", "METEOR", "NIST", "NgramMetric", "Rouge1", "Rouge2", "RougeL", "RougeSU4",
           "TER", "cider_d", "skip_bigrams", "tokenize"]
