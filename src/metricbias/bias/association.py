"""Association tests through a metric: WEAT / SEAT with a metric as the matching model.

Gao & Wan (2022, section 4.1) treat a reference-based metric M as a text matching
model. M(x, y) scores hypothesis x against reference y; since most metrics are
not symmetric, the matching score of two texts is

    S(x, y) = ½ (M(x, y) + M(y, x)).

With targets X, Y (|X| = |Y|) and attributes A, B, as in WEAT
(Caliskan et al., 2017) and SEAT (May et al., 2019):

    r(t, A, B)    = mean_{a∈A} S(t, a) − mean_{b∈B} S(t, b)
    s(X, Y, A, B) = Σ_{x∈X} r(x, A, B) − Σ_{y∈Y} r(y, A, B)
    d             = [mean_{x∈X} r(x, A, B) − mean_{y∈Y} r(y, A, B)] / std_{t∈X∪Y} r(t, A, B)

with the sample standard deviation (ddof = 1; Gao's printed denominator
"r(t, X, Y)" is a typo for r(t, A, B), which is what WEAT and the SEAT code use).
The one-sided p-value is Pr[s(X_i, Y_i, A, B) ≥ s(X, Y, A, B)] over the
equal-size partitions (X_i, Y_i) of X ∪ Y: all C(2n, n) of them when there are
at most ``n_permutations`` (100,000), otherwise ``n_permutations − 1`` partitions
drawn uniformly with replacement plus the observed one. Ties count as "≥" (the
conservative test of the SEAT code).

Scoring is the expensive part. :func:`run` collects every ordered (x, y) pair
that any of the requested tests needs, deduplicates them across tests, and
scores each once per metric, in batches, through the score cache. The
permutation test is vectorised and reuses the same partitions for every metric
of a test (the seed is derived from the test's name and level, so a test's
p-value does not depend on which other tests ran with it).

**Words a metric cannot represent.** A static-embedding metric has no vector for
a word outside its vocabulary (many first names and flowers are missing from the
Google News subset), and would score every pair with it 0. By default
(``oov="drop"``) such a word is dropped from its set before the test, as classic
WEAT (Caliskan et al., 2017) and WEFE do; a metric says which texts it can
represent through a ``represents(text) -> bool`` method (metrics without one
represent every text). X and Y may then differ in size: d keeps its formula and
the permutation test draws the partitions of X ∪ Y into sets of sizes |X| and |Y|.
A test where any of the four sets keeps fewer than two words is not run (d and p
empty), with a :class:`DroppedWordsWarning` saying why. ``oov="zero"`` keeps every
word and the metric's own score for it (the convention before dropping).
"""

from __future__ import annotations

import itertools
import math
import warnings
import zlib
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

N_PERMUTATIONS = 100_000
#: the columns of ``metricbias weat --out``
COLUMNS = ["test", "level", "metric", "effect_size", "p_value", "n_targets", "n_attributes", "n_dropped", "signature"]
#: what to do with a word the metric cannot represent: drop it from its set (classic WEAT) or score it as is
OOV_POLICIES = ("drop", "zero")
#: the four sets of a test, in the order the statistics index them
SETS = ("X", "Y", "A", "B")
#: a set that lost words must keep at least this many for the test to run
MIN_WORDS = 2
#: pairs per call of ``metric.score`` (each batch is stored in the cache as soon as it is scored)
BATCH_SIZE = 50_000


class ConstantAssociationWarning(RuntimeWarning):
    """r(t, A, B) is the same for every target, so the effect size is undefined (NaN)."""


class DroppedWordsWarning(UserWarning):
    """Words the metric cannot represent were dropped from a test (named in the message)."""


# --- the statistics ----------------------------------------------------------------------
def symmetric_similarity(m_ta: np.ndarray, m_at: np.ndarray) -> np.ndarray:
    """S(t, a) = ½(M(t, a) + M(a, t)) from M(t, a) (targets × attributes) and M(a, t) (attributes × targets)."""
    m_ta, m_at = np.asarray(m_ta, dtype=float), np.asarray(m_at, dtype=float)
    if m_ta.shape != m_at.T.shape:
        raise ValueError(f"M(t, a) has shape {m_ta.shape} but M(a, t) has {m_at.shape}; expected its transpose")
    return 0.5 * (m_ta + m_at.T)


def similarity(metric, rows: Sequence[str], cols: Sequence[str], cache=None) -> np.ndarray:
    """S(x, y) for every x in ``rows`` and y in ``cols``: both directions scored in one call of ``metric``."""
    rows, cols = list(rows), list(cols)
    cands = [x for x in rows for _ in cols] + [y for y in cols for _ in rows]
    refs = [y for _ in rows for y in cols] + [x for _ in cols for x in rows]
    from ..scoring import score_texts

    scores = score_texts(metric, cands, refs, cache=cache)
    half = len(rows) * len(cols)
    return symmetric_similarity(scores[:half].reshape(len(rows), len(cols)),
                                scores[half:].reshape(len(cols), len(rows)))


def similarity_frame(test, metric, cache=None) -> pd.DataFrame:
    """S(t, a) of one test in long form.

    Columns: ``target``, ``target_set`` (X/Y), ``attribute``, ``attribute_set`` (A/B), ``S``.
    """
    s_matrix = similarity(metric, test.targets, test.attributes, cache=cache)
    n_x, n_a = len(test.x), len(test.a)
    return pd.DataFrame({
        "target": np.repeat(test.targets, len(test.attributes)),
        "target_set": np.repeat(["X"] * n_x + ["Y"] * len(test.y), len(test.attributes)),
        "attribute": np.tile(test.attributes, len(test.targets)),
        "attribute_set": np.tile(["A"] * n_a + ["B"] * len(test.b), len(test.targets)),
        "S": s_matrix.ravel(),
    })


def association(s_matrix: np.ndarray, n_a: int) -> np.ndarray:
    """r(t, A, B) for each row t of S (targets × attributes, the first ``n_a`` columns being A)."""
    s_matrix = np.asarray(s_matrix, dtype=float)
    if not 0 < n_a < s_matrix.shape[1]:
        raise ValueError(f"need at least one attribute in A and in B; got |A| = {n_a} of {s_matrix.shape[1]}")
    return s_matrix[:, :n_a].mean(axis=1) - s_matrix[:, n_a:].mean(axis=1)


def differential_association(r_x: np.ndarray, r_y: np.ndarray) -> float:
    """s(X, Y, A, B) = Σ_X r − Σ_Y r."""
    return float(np.sum(r_x) - np.sum(r_y))


def _spread(r: np.ndarray, scale: float | None) -> tuple[float, bool]:
    """Sample std of r and whether it is zero up to float noise (relative to the scores' ``scale``)."""
    std = float(np.std(r, ddof=1)) if len(r) > 1 else 0.0
    scale = float(np.max(np.abs(r))) if scale is None else float(scale)
    return std, std <= 1e-12 * max(1.0, scale)


def effect_size(r_x: np.ndarray, r_y: np.ndarray, scale: float | None = None, label: str = "") -> float:
    """Gao & Wan's d (WEAT's effect size). NaN, with a :class:`ConstantAssociationWarning`, when r is constant.

    ``scale`` is the magnitude of the similarity scores (default: of r), used to
    tell a zero spread from float noise: r computed from constant scores is
    zero only up to rounding.
    """
    r_x, r_y = np.asarray(r_x, dtype=float), np.asarray(r_y, dtype=float)
    r = np.concatenate([r_x, r_y])
    std, constant = _spread(r, scale)
    if constant:
        warnings.warn(
            f"{label + ': ' if label else ''}r(t, A, B) is constant over X ∪ Y (sample std {std:.1e}); "
            "the metric does not tell the attributes apart for any target, so the effect size is NaN",
            ConstantAssociationWarning, stacklevel=2,
        )
        return float("nan")
    return float((r_x.mean() - r_y.mean()) / std)


def partition_count(n_x: int, n_y: int | None = None) -> int:
    """Number of partitions (X_i, Y_i) of X ∪ Y with |X_i| = |X| = n_x and |Y_i| = |Y| = n_y (default n_x)."""
    n_y = n_x if n_y is None else n_y
    return math.comb(n_x + n_y, n_x)


@lru_cache(maxsize=8)
def _all_subsets(n_total: int, k: int) -> np.ndarray:
    """Every k-subset of range(n_total), one per row (the X_i of the exact test)."""
    count = math.comb(n_total, k)
    flat = np.fromiter(itertools.chain.from_iterable(itertools.combinations(range(n_total), k)), dtype=np.int32,
                       count=count * k)
    return flat.reshape(count, k)


def partition_seed(seed: int, label: str) -> list[int]:
    """Seed of one test's partitions: the run's seed and a stable hash of the test's label."""
    return [int(seed), zlib.crc32(label.encode("utf-8"))]


def permutation_test(r: np.ndarray, n_x: int, n_permutations: int = N_PERMUTATIONS, seed=0,
                     chunk: int = 4096, n_y: int | None = None) -> tuple[np.ndarray | float, int, bool]:
    """One-sided permutation p-value of s(X, Y, A, B) over the partitions of X ∪ Y into sizes |X|, |Y|.

    ``r`` holds r(t, A, B) for X then Y (length n_x + n_y; ``n_y`` defaults to
    ``n_x``), or one column per metric (shape (n_x + n_y, k)): the same partitions
    serve every column. Returns ``(p, n_partitions, exact)``: exact over all
    C(n_x + n_y, n_x) partitions when there are at most ``n_permutations``, else
    over ``n_permutations − 1`` random partitions plus the observed one.

    Since Σ_{X_i} r + Σ_{Y_i} r is the same for every partition, s(X_i, Y_i) ≥ s(X, Y)
    exactly when Σ_{X_i} r ≥ Σ_X r, which is what is compared (as in the SEAT code).
    """
    r = np.asarray(r, dtype=float)
    vector = r.ndim == 1
    r2 = r[:, None] if vector else r
    n_y = n_x if n_y is None else n_y
    n_total = n_x + n_y
    if r2.shape[0] != n_total or n_x < 1 or n_y < 1:
        raise ValueError(f"r has {r2.shape[0]} rows; expected |X| + |Y| = {n_x} + {n_y} (X first, then Y), "
                         "both at least 1")
    if n_permutations < 2:
        raise ValueError(f"n_permutations must be at least 2, got {n_permutations}")
    observed = r2[:n_x].sum(axis=0)
    # sums over different subsets of mathematically equal r values differ in the last bits: count them as ties
    tol = 1e-9 * np.abs(r2).sum(axis=0)
    total = partition_count(n_x, n_y)
    if total <= n_permutations:
        exact = True
        subsets = _all_subsets(n_total, n_x)
        hits = np.zeros(r2.shape[1], dtype=np.int64)
        for start in range(0, total, chunk):
            sums = r2[subsets[start:start + chunk]].sum(axis=1)
            hits += (sums >= observed - tol).sum(axis=0)
        n_used = total
    else:
        exact = False
        rng = np.random.default_rng(seed)
        hits = np.ones(r2.shape[1], dtype=np.int64)  # the observed partition
        draws = n_permutations - 1
        for start in range(0, draws, chunk):
            m = min(chunk, draws - start)
            # a uniform random n_x-subset: the n_x smallest of n_x + n_y uniform keys
            keys = rng.random((m, n_total))
            kth = np.partition(keys, n_x - 1, axis=1)[:, n_x - 1:n_x]
            mask = keys <= kth
            if not np.all(mask.sum(axis=1) == n_x):  # tied keys: probability ~1e-10 per draw
                raise RuntimeError("tied random keys while drawing partitions; use another seed")
            sums = mask.astype(float) @ r2
            hits += (sums >= observed - tol).sum(axis=0)
        n_used = n_permutations
    p = hits / n_used
    return (float(p[0]) if vector else p), n_used, exact


def p_floor(n_permutations: int = N_PERMUTATIONS) -> float:
    """The smallest p-value :func:`permutation_test` reports when it samples partitions: 1/``n_permutations`` (the
    observed partition is one of them). A p-value there says no sampled partition was as extreme: it is a bound
    (:func:`metricbias.bias.claims.format_p` writes it "p ≤ ...")."""
    from .claims import permutation_floor

    return permutation_floor(n_permutations - 1, two_sided=False)


def for_download(table: pd.DataFrame, n_permutations: int = N_PERMUTATIONS) -> pd.DataFrame:
    """A :func:`run` table as a CSV holds it: :data:`COLUMNS`, with ``p_value_is_upper_bound`` after ``p_value``
    (true at :func:`p_floor`: no sampled partition as extreme)."""
    from .claims import p_bounds

    return p_bounds(table[COLUMNS], "p_value", resolution=p_floor(n_permutations))


def _observed(m_ta, m_at, n_x: int, n_a: int, label: str, n_y: int | None = None) -> dict:
    """r, s and d of one test for one metric (no p-value)."""
    s_matrix = symmetric_similarity(m_ta, m_at)
    n_y = n_x if n_y is None else n_y
    if s_matrix.shape[0] != n_x + n_y:
        raise ValueError(f"{s_matrix.shape[0]} targets; expected |X| + |Y| = {n_x} + {n_y}")
    r = association(s_matrix, n_a)
    scale = float(np.max(np.abs(s_matrix)))
    return {"r": r, "statistic": differential_association(r[:n_x], r[n_x:]),
            "effect_size": effect_size(r[:n_x], r[n_x:], scale=scale, label=label), "n_x": n_x, "n_y": n_y}


def _p_values(observed: list[dict | None], n_permutations: int, seed) -> list[tuple[float, int, bool]]:
    """``(p, n_partitions, exact)`` of several metrics on one test.

    Metrics whose X and Y have the same sizes share one set of partitions (drawn
    from ``seed`` alone, so a p-value does not depend on the other metrics). A
    metric whose r is constant (d = NaN) ties with every partition: p = 1. A test
    that was not run (``None``) gets p = NaN.
    """
    out: list[tuple[float, int, bool]] = [(float("nan"), 0, False)] * len(observed)
    groups: dict[tuple[int, int], list[int]] = {}
    for i, o in enumerate(observed):
        if o is None:
            continue
        total = partition_count(o["n_x"], o["n_y"])
        if np.isnan(o["effect_size"]):
            out[i] = (1.0, min(total, n_permutations), total <= n_permutations)
        else:
            groups.setdefault((o["n_x"], o["n_y"]), []).append(i)
    for (n_x, n_y), live in groups.items():
        r = np.column_stack([observed[i]["r"] for i in live])
        p, n_used, exact = permutation_test(r, n_x, n_permutations, seed, n_y=n_y)
        for i, value in zip(live, p):
            out[i] = (float(value), n_used, exact)
    return out


def weat(m_ta: np.ndarray, m_at: np.ndarray, n_x: int, n_a: int, n_permutations: int = N_PERMUTATIONS,
         seed=0, label: str = "", n_y: int | None = None) -> dict:
    """Every statistic of one test from the metric's scores M(t, a) and M(a, t).

    ``m_ta`` is targets (X then Y, |Y| = ``n_y``, default |X|) × attributes (A
    then B); ``m_at`` the other direction. Returns ``r`` (r(t, A, B) per target),
    ``statistic`` (s), ``effect_size`` (d), ``p_value``, ``n_partitions`` and ``exact``.
    """
    obs = _observed(m_ta, m_at, n_x, n_a, label, n_y=n_y)
    ((p, n_used, exact),) = _p_values([obs], n_permutations, seed)
    return {**obs, "p_value": p, "n_partitions": n_used, "exact": exact}


# --- words a metric cannot represent -------------------------------------------------------
def _sets(test) -> dict[str, tuple[str, ...]]:
    return {"X": tuple(test.x), "Y": tuple(test.y), "A": tuple(test.a), "B": tuple(test.b)}


def drop_unrepresented(test, metric):
    """``(kept, dropped)``: ``test`` without the words ``metric`` cannot represent, and the dropped words per set.

    A metric says what it can represent through ``represents(text) -> bool``
    (the static-embedding metrics: at least one in-vocabulary token); without
    that method it represents every text and nothing is dropped.
    """
    check = getattr(metric, "represents", None)
    sets = _sets(test)
    if check is None:
        return test, {k: () for k in SETS}
    known = {t: bool(check(t)) for t in dict.fromkeys(t for words in sets.values() for t in words)}
    dropped = {k: tuple(t for t in words if not known[t]) for k, words in sets.items()}
    if not any(dropped.values()):
        return test, dropped
    kept = {k.lower(): tuple(t for t in words if known[t]) for k, words in sets.items()}
    return replace(test, **kept), dropped


def _short_sets(kept, dropped: dict, min_words: int = MIN_WORDS) -> list[str]:
    """Sets that lost words and kept fewer than ``min_words``: the test is not run on them."""
    return [k for k, words in _sets(kept).items() if dropped[k] and len(words) < max(min_words, 1)]


def _describe_dropped(dropped: dict) -> str:
    return "; ".join(f"{k}: {', '.join(words)}" for k, words in dropped.items() if words)


def dropped_words(tests, metric, min_words: int = MIN_WORDS) -> pd.DataFrame:
    """Per test, the words ``metric`` cannot represent (dropped by default from association tests).

    One row per test: ``test``, ``level``, ``n_targets`` and ``n_attributes`` (words
    kept), ``n_dropped`` (over the four sets), ``X``, ``Y``, ``A``, ``B`` (the dropped
    words of each set, comma-separated) and ``runs`` (False when a set that lost words keeps fewer than
    ``min_words``).
    """
    rows = []
    for test in tests:
        kept, dropped = drop_unrepresented(test, metric)
        rows.append({"test": test.name, "level": test.level, "n_targets": len(kept.targets),
                     "n_attributes": len(kept.attributes), "n_dropped": sum(map(len, dropped.values())),
                     **{k: ", ".join(words) for k, words in dropped.items()},
                     "runs": not _short_sets(kept, dropped, min_words)})
    return pd.DataFrame(rows, columns=["test", "level", "n_targets", "n_attributes", "n_dropped", *SETS, "runs"])


# --- running tests through metrics ------------------------------------------------------
class _PairIndex:
    """Texts and ordered (x, y) pairs of a set of tests, as integer codes (for dedup and lookup)."""

    def __init__(self, tests):
        self.texts: list[str] = list(dict.fromkeys(t for test in tests for t in (*test.targets, *test.attributes)))
        self.code = {t: i for i, t in enumerate(self.texts)}
        self.n = len(self.texts)

    def test_keys(self, test) -> tuple[np.ndarray, np.ndarray]:
        """Pair keys of M(t, a) (targets × attributes) and M(a, t) (attributes × targets)."""
        tgt = np.array([self.code[t] for t in test.targets], dtype=np.int64)
        att = np.array([self.code[a] for a in test.attributes], dtype=np.int64)
        return tgt[:, None] * self.n + att[None, :], att[:, None] * self.n + tgt[None, :]

    def texts_of(self, keys: np.ndarray) -> tuple[list[str], list[str]]:
        return [self.texts[i] for i in keys // self.n], [self.texts[j] for j in keys % self.n]


def _jobs(label: str, metric, index: _PairIndex, tests, test_keys: list, all_keys: np.ndarray) -> list:
    """One job scoring every pair the tests need, or, for a corpus-dependent metric, one job per test that runs."""
    from ..scoring import Job

    if not getattr(metric, "corpus_dependent", False):
        return [Job(metric, *index.texts_of(all_keys), label=label, what="association tests")]
    return [Job(metric, *index.texts_of(np.concatenate([pair[0].ravel(), pair[1].ravel()])), label=label,
                what=f"{test.name} ({test.level})") for test, pair in zip(tests, test_keys) if pair is not None]


def _split(scores: np.ndarray, ta: np.ndarray, at: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """M(t, a) and M(a, t) of one test from the scores of its pairs ``ta`` then ``at``."""
    return scores[:ta.size].reshape(ta.shape), scores[ta.size:].reshape(at.shape)


def build_metrics(metrics, device: str | None = None) -> dict[str, object]:
    """Label -> metric from a metric, a dict label -> metric, or a list of anything
    :func:`metricbias.metrics.resolve` takes (names, specifications, ``Metric``s, profile entries).

    ``device`` is passed to the metrics built here that take one (model-based metrics).
    """
    if isinstance(metrics, Mapping):
        return dict(metrics)
    if hasattr(metrics, "score") or isinstance(metrics, str):
        metrics = [metrics]
    from ..metrics import Spec, metric_class, parse, resolve

    out = {}
    for item in metrics:
        if isinstance(item, str):
            item = parse(item)
        if isinstance(item, tuple) and device is not None and "device" in metric_class(item[1]).defaults:
            item = Spec(item[0], item[1], {"device": device, **item[2]})
        label, metric = resolve(item)
        if label in out:
            raise ValueError(f"two metrics labelled {label!r}: pass a dict label -> metric to tell them apart")
        out[label] = metric
    return out


def _recorded(associations: Mapping, tests, plans: dict) -> dict[str, list[TestAssociations]]:
    """label -> the records of ``tests`` (in order) for each metric ``associations`` holds every test of, these very
    sets; a record whose dropped words differ from the metric's here is a ValueError (another vocabulary)."""
    out = {}
    for label, records in associations.items():
        if label not in plans:
            continue
        by_key = {rec.key: rec for rec in records}
        found = [by_key.get((t.name, t.level)) for t in tests]
        if any(rec is None or rec.sets_hash != sets_hash(t) for rec, t in zip(found, tests)):
            continue
        for rec, t, (kept, dropped, runs) in zip(found, tests, plans[label]):
            if {k: tuple(v) for k, v in rec.dropped.items()} != dict(dropped) or rec.runs != runs:
                raise ValueError(f"{label} on {t.label}: the recorded associations dropped "
                                 f"{_describe_dropped(rec.dropped) or 'no word'}, the metric here drops "
                                 f"{_describe_dropped(dropped) or 'no word'}: they are not this metric's")
        out[label] = found
    return out


def run(tests, metrics, cache=True, n_permutations: int = N_PERMUTATIONS, seed: int = 0,
        batch_size: int = BATCH_SIZE, progress: bool = False, oov: str = "drop",
        min_words: int = MIN_WORDS, associations: Mapping | None = None) -> pd.DataFrame:
    """Run association ``tests`` (:class:`metricbias.datasets.seat.SeatTest`) through ``metrics``.

    ``metrics``: anything :func:`build_metrics` takes (a metric, a list of metrics, names or
    ``(label, name, options)`` entries, or a dict label -> metric). ``cache``: a
    :class:`~metricbias.cache.ScoreCache`, ``True`` for the default one, or ``None``. Every ordered (x, y) pair that
    any test needs is scored once per metric; a corpus-dependent metric (CIDEr,
    idf weighting) is scored test by test, so that its corpus is the test's own
    pairs and its result does not depend on which other tests ran.

    ``oov="drop"`` (default) drops, per metric, the words it cannot represent from
    their sets (module docstring; a :class:`DroppedWordsWarning` names them);
    ``oov="zero"`` keeps them. A test in which a set that lost words keeps fewer than ``min_words``
    (default 2) is not run: its effect size and p-value are NaN.

    Returns one row per test × metric: :data:`COLUMNS` plus ``statistic``,
    ``n_partitions``, ``exact``, ``name`` (the metric's registry name), ``family``,
    ``dropped`` (the dropped words, per set) and ``scoring_seconds`` (seconds spent on that metric's
    pairs: cache reads and writes, and computing them, in this process or on the executor's workers).
    ``n_targets`` is |X| + |Y| and ``n_attributes`` is |A| + |B|, counting the
    words kept; ``n_dropped`` counts the words dropped from the four sets.

    ``associations``: label -> the :class:`TestAssociations` of that metric (:func:`associations`, or a verified
    score pack): a metric with a record of every test, for these very sets, is not scored; its rows come from the
    recorded r, the same numbers as scoring gives (its ``scoring_seconds`` is 0).
    """
    if oov not in OOV_POLICIES:
        raise ValueError(f"oov must be one of {', '.join(OOV_POLICIES)}, not {oov!r}")
    tests = list(tests)
    metrics = build_metrics(metrics)
    if not tests or not metrics:
        raise ValueError("need at least one test and one metric")
    from ..scoring import score_jobs

    index = _PairIndex(tests)

    # per metric: each test with the words it cannot represent dropped, and whether the test can run
    plans = {label: [_plan(test, metric, label, oov, min_words) for test in tests] for label, metric in metrics.items()}
    recorded = _recorded(associations or {}, tests, plans)
    live = {label: metric for label, metric in metrics.items() if label not in recorded}
    keys_of = {label: [index.test_keys(kept) if runs else None for kept, _, runs in plans[label]] for label in live}
    unique_of = {label: np.unique(np.concatenate([k.ravel() for pair in keys if pair is not None for k in pair]
                                                 or [np.empty(0, dtype=np.int64)]))
                 for label, keys in keys_of.items()}
    jobs = {label: _jobs(label, metric, index, tests, keys_of[label], unique_of[label])
            for label, metric in live.items()}
    bar = None
    if progress:
        from ..progress import tqdm

        bar = tqdm(total=sum(len(j.candidates) for js in jobs.values() for j in js), desc="association pairs",
                   unit="pair")
    try:  # every metric's jobs together, so that a cluster scores the metrics side by side
        score_jobs([j for js in jobs.values() for j in js], cache=cache, chunk_size=batch_size, progress=bar)
    finally:
        if bar is not None:
            bar.close()

    # M(t, a) and M(a, t) per test, per metric (None where the test does not run)
    scored: dict[str, list[tuple[np.ndarray, np.ndarray] | None]] = {}
    seconds: dict[str, float] = dict.fromkeys(recorded, 0.0)
    for label, metric_jobs in jobs.items():
        test_keys, all_keys = keys_of[label], unique_of[label]
        if getattr(metrics[label], "corpus_dependent", False):
            per_test = iter(metric_jobs)  # one job per test that runs
            scored[label] = [None if pair is None else _split(next(per_test).scores, *pair) for pair in test_keys]
        else:
            values = metric_jobs[0].scores
            scored[label] = [None if pair is None else
                             (values[np.searchsorted(all_keys, pair[0])], values[np.searchsorted(all_keys, pair[1])])
                             for pair in test_keys]
        seconds[label] = sum(job.seconds for job in metric_jobs)

    rows = []
    for i, test in enumerate(tests):
        observed = []
        for label in metrics:
            kept, _, runs = plans[label][i]
            name = f"{label} on {test.label}"
            if label in recorded:
                observed.append(_observed_r(recorded[label][i], name) if runs else None)
            else:
                observed.append(None if scored[label][i] is None else
                                _observed(*scored[label][i], len(kept.x), len(kept.a), label=name, n_y=len(kept.y)))
        p_values = _p_values(observed, n_permutations, partition_seed(seed, f"{test.name}|{test.level}"))
        for (label, metric), obs, (p_value, n_used, exact) in zip(metrics.items(), observed, p_values):
            kept, dropped, _ = plans[label][i]
            rows.append({
                "test": test.name, "level": test.level, "metric": label,
                "effect_size": float("nan") if obs is None else obs["effect_size"], "p_value": p_value,
                "n_targets": len(kept.targets), "n_attributes": len(kept.attributes),
                "n_dropped": sum(map(len, dropped.values())),
                "signature": metric.signature, "statistic": float("nan") if obs is None else obs["statistic"],
                "n_partitions": n_used, "exact": exact, "name": metric.name, "family": getattr(metric, "family", ""),
                "dropped": _describe_dropped(dropped), "scoring_seconds": seconds[label],
            })
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class TestAssociations:
    """Everything a test's statistics need from one metric's scores: r(t, A, B) of each target kept, and the
    test's words left after dropping those the metric cannot represent.

    :func:`permutation_test` and :func:`effect_size` use only r, |X| and |Y|; ``scale`` (max |S| over the kept
    targets and attributes) tells a constant r from float noise. ``sets_hash`` identifies the test's four sets before
    any word was dropped (:func:`sets_hash`), so that a record is never used for another draw of the test."""

    test: str
    level: str
    sets_hash: str
    dropped: dict  # set -> the words dropped from it, in order
    sizes: tuple[int, int, int, int]  # |X|, |Y|, |A|, |B| kept
    runs: bool  # False: a set that lost words keeps fewer than min_words (d and p empty)
    r: np.ndarray  # X then Y (empty when the test does not run)
    scale: float  # max |S(t, a)|

    @property
    def key(self) -> tuple[str, str]:
        return self.test, self.level


def sets_hash(test) -> str:
    """sha256 of a test's four sets (X, Y, A, B, in order, every word)."""
    import hashlib

    h = hashlib.sha256()
    for k, words in _sets(test).items():
        h.update(k.encode("utf-8") + b"\x02" + "\x1f".join(words).encode("utf-8") + b"\x03")
    return h.hexdigest()


def _plan(test, metric, label: str, oov: str, min_words: int) -> tuple[object, dict, bool]:
    """``(kept, dropped, runs)`` of one test through one metric, with a :class:`DroppedWordsWarning` naming what
    was dropped."""
    kept, dropped = drop_unrepresented(test, metric) if oov == "drop" else (test, {k: () for k in SETS})
    short = _short_sets(kept, dropped, min_words)
    if any(dropped.values()):
        n = sum(map(len, dropped.values()))
        reason = ("" if not short else
                  "; " + ", ".join(f"{k} keeps {len(_sets(kept)[k])} word(s)" for k in short)
                  + f", fewer than {min_words}, so the test is not run (effect size and p-value left empty)")
        warnings.warn(f"{label} on {test.label}: dropped {n} word(s) it cannot represent "
                      f"({_describe_dropped(dropped)}){reason}", DroppedWordsWarning, stacklevel=3)
    return kept, dropped, not short


def associations(tests, metric, oov: str = "drop", min_words: int = MIN_WORDS, progress=None,
                 label: str = "") -> list[TestAssociations]:
    """r(t, A, B) of every test through ``metric`` (no cache): S of each test's kept targets and attributes from
    ``metric.score_cross`` (for a corpus-dependent metric the corpus is the test's pairs, as :func:`run` scores
    them), r per target and max |S|. :func:`run` takes the result (``associations=``) in place of scoring."""
    out = []
    for test in tests:
        kept, dropped, runs = _plan(test, metric, label or metric.config_label(), oov, min_words)
        r, scale = np.zeros(0), float("nan")
        if runs:
            s_matrix = symmetric_similarity(*metric.score_cross(kept.targets, kept.attributes, progress=progress))
            r, scale = association(s_matrix, len(kept.a)), float(np.max(np.abs(s_matrix)))
        out.append(TestAssociations(test.name, test.level, sets_hash(test), dict(dropped),
                                    (len(kept.x), len(kept.y), len(kept.a), len(kept.b)), runs, r, scale))
    return out


def _observed_r(record: TestAssociations, label: str) -> dict:
    """What :func:`_observed` gives, from a test's recorded r."""
    n_x, n_y = record.sizes[:2]
    r = np.asarray(record.r, dtype=float)
    return {"r": r, "statistic": differential_association(r[:n_x], r[n_x:]),
            "effect_size": effect_size(r[:n_x], r[n_x:], scale=record.scale, label=label), "n_x": n_x, "n_y": n_y}


def pairs_of(tests, per_test: bool = False) -> list[tuple[list[str], list[str]]]:
    """The (x, y) pairs :func:`run` scores, every word kept, as its jobs: one job of every distinct ordered pair the
    tests need, or (``per_test``, as for a corpus-dependent metric) one job per test, M(t, a) then M(a, t)."""
    tests = list(tests)
    index = _PairIndex(tests)
    keys = [index.test_keys(t) for t in tests]
    if per_test:
        return [index.texts_of(np.concatenate([ta.ravel(), at.ravel()])) for ta, at in keys]
    return [index.texts_of(np.unique(np.concatenate([k.ravel() for pair in keys for k in pair])))]


def pairs_needed(tests) -> int:
    """Number of distinct ordered (x, y) pairs the tests need (what one metric scores)."""
    return len(pairs_of(tests)[0][0])


#: two configurations' effect sizes (and p-values) on a cell count as the same when they differ by at most this
SAME_RESULT_ATOL = 1e-12
#: the columns of :func:`identical_configurations`
IDENTICAL_COLUMNS = ["metric", "same_as", "cells"]


def identical_configurations(results: pd.DataFrame, *, atol: float = SAME_RESULT_ATOL) -> pd.DataFrame:
    """Configurations (``metric``) of a :func:`run` table whose effect size and p-value equal an earlier
    configuration's on every (``test``, ``level``) cell, within ``atol`` (undefined where the other is undefined),
    and which have at least one defined cell: one row per configuration to count once, with ``same_as`` (the first
    of its group in the table's order, the one kept) and the cells compared. Equal on some cells only (two static
    metrics on single words, say) is not identity: both stay."""
    missing = [c for c in ("test", "level", "metric", "effect_size", "p_value") if c not in results.columns]
    if missing:
        raise ValueError(f"identical_configurations: the results lack column(s) {missing}; run() returns them")
    vectors = {}
    for metric, g in results.groupby("metric", sort=False):
        g = g.sort_values(["test", "level"], kind="stable")
        vectors[metric] = (tuple(zip(g["test"], g["level"])), g[["effect_size", "p_value"]].to_numpy(float))
    kept: list[str] = []
    rows = []
    for metric, (cells, values) in vectors.items():
        twin = None
        if np.isfinite(values[:, 0]).any():
            twin = next((k for k in kept if vectors[k][0] == cells
                         and np.allclose(vectors[k][1], values, rtol=0, atol=atol, equal_nan=True)), None)
        if twin is None:
            kept.append(metric)
        else:
            rows.append({"metric": metric, "same_as": twin, "cells": len(cells)})
    return pd.DataFrame(rows, columns=IDENTICAL_COLUMNS)


def merge_identical(results: pd.DataFrame, *, atol: float = SAME_RESULT_ATOL) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``results`` with each group of identical configurations (:func:`identical_configurations`) counted once: the
    rows of the first kept and labelled "first (= second, third)", the others' rows dropped; and the table of those
    merged (``label``: the kept configuration's new label)."""
    merged = identical_configurations(results, atol=atol)
    if merged.empty:
        return results, merged.assign(label=pd.Series(dtype=object))
    groups = merged.groupby("same_as", sort=False)["metric"].agg(list)
    labels = {kept: f"{kept} (= {', '.join(others)})" for kept, others in groups.items()}
    out = results[~results["metric"].isin(merged["metric"])].copy()
    out["metric"] = out["metric"].replace(labels)
    return out.reset_index(drop=True), merged.assign(label=merged["same_as"].map(labels))


def nearest_configurations(results: pd.DataFrame) -> dict:
    """The two configurations of a :func:`run` table whose effect sizes lie closest (the smallest largest |d1 - d2|
    over the (``test``, ``level``) cells both define; pairs without such a cell are not compared): ``metric``,
    ``other`` (the earlier in the table's order), ``largest_difference``, ``cells_equal`` (cells whose d agree within
    :data:`SAME_RESULT_ATOL`) and ``cells`` (cells both define). An empty dict with fewer than two comparable
    configurations."""
    d = results.pivot_table(index=["test", "level"], columns="metric", values="effect_size", aggfunc="first",
                            dropna=False, sort=False)
    d = d.reindex(columns=list(dict.fromkeys(results["metric"])))
    best: dict = {}
    for j, metric in enumerate(d.columns):
        for other in d.columns[:j]:
            both = d[[metric, other]].dropna()
            if both.empty:
                continue
            gap = (both[metric] - both[other]).abs()
            if not best or gap.max() < best["largest_difference"]:
                best = {"metric": metric, "other": other, "largest_difference": float(gap.max()),
                        "cells_equal": int((gap <= SAME_RESULT_ATOL).sum()), "cells": len(both)}
    return best
