"""Where a metric meets its texts: the one scoring path of the project.

:func:`score_pairs` scores both candidates of every pair of a pair table (the
layout of :mod:`metricbias.datasets.schema`) against their references with one
metric and returns the tidy score table every bias measure takes
(:data:`SCORE_COLUMNS`: ``dataset, attribute, pair_id, metric, score_1,
score_2, signature``, plus the pair table's own columns such as ``group_1``).
:func:`score_metrics` does it for several metrics and stacks the tables.

The metric can be a registered name or specification (``"bleu:tokenize=13a"``),
a :class:`~metricbias.metrics.Metric`, a ``(label, name, options)`` entry of a
profile, or a plain function ``f(candidates, references) -> scores``.

Any other texts a metric scores (association tests, meta-evaluation sets, a judge's candidates, a page's
example) go through :func:`score_texts` (one metric call) or :func:`score_jobs` (several), on the same cache and
executor.

Scores go through the score cache (keyed by the metric's signature). A
corpus-dependent metric (idf weights, document frequencies) scores one (dataset,
attribute) at a time, with that set's texts as its corpus, as the released scores
were computed one file at a time; every other metric scores all pairs in one
call, so that each distinct text is encoded once. Each such call is a
:class:`~metricbias.jobs.Job`: it runs in this process or on a Dask cluster
(:func:`metricbias.jobs.use`), and only this process writes the cache.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np
import pandas as pd

from .cache import ScoreCache
from .datasets.schema import conform
from .jobs import Job, run
from .metrics.registry import resolve

SCORE_COLUMNS = ["dataset", "attribute", "pair_id", "metric", "score_1", "score_2", "signature"]
#: pair columns carried into the score table (what measures group by, besides dataset and attribute)
CARRIED = ("group_1", "group_2", "source", "item_1", "item_2", "direction", "cluster")


def _cache(cache):
    if cache is True:
        return ScoreCache.default()
    return cache or None


class Plan:
    """The jobs that score a pair table with one metric, and how their scores become the score table.

    One job holds every pair (both sides); a corpus-dependent metric has one job per
    (dataset, attribute), whose texts are its corpus: the distinct items (``item_1``/``item_2``;
    default: every side its own), candidate 1 sides first, as the released files were scored.
    """

    def __init__(self, pairs: pd.DataFrame, metric, label: str | None = None):
        self.pairs = conform(pairs)
        self.label, self.metric = resolve(metric, label=label)
        self._sides = []  # per job: the rows it fills, the items of side 1 and of side 2
        self.jobs: list[Job] = []
        if self.metric.corpus_dependent:
            groups = [g for _, g in self.pairs.groupby(["dataset", "attribute"], sort=False)]
        else:
            groups = [self.pairs]
        for group in groups:
            n = len(group)
            if self.metric.corpus_dependent:
                items_1 = group["item_1"].tolist() if "item_1" in group else [(i, 1) for i in range(n)]
                items_2 = group["item_2"].tolist() if "item_2" in group else [(i, 2) for i in range(n)]
            else:  # every side its own text
                items_1, items_2 = list(range(n)), list(range(n, 2 * n))
            texts = {}
            for items, cands, refs in ((items_1, group["candidate_1"], group["reference_1"]),
                                       (items_2, group["candidate_2"], group["reference_2"])):
                for item, c, r in zip(items, cands, refs):
                    texts.setdefault(item, (c, r))
            what = "+".join(dict.fromkeys(group["dataset"])) + (f"/{group['attribute'].iloc[0]}"
                                                                 if self.metric.corpus_dependent else "")
            self.jobs.append(Job(self.metric, [c for c, _ in texts.values()], [r for _, r in texts.values()],
                                 label=self.label, what=what))
            self._sides.append((group.index, list(texts), items_1, items_2))

    def table(self) -> pd.DataFrame:
        """The tidy score table of :data:`SCORE_COLUMNS` (once :func:`metricbias.jobs.run` has scored the jobs)."""
        s1, s2 = np.empty(len(self.pairs)), np.empty(len(self.pairs))
        for job, (index, order, items_1, items_2) in zip(self.jobs, self._sides):
            if job.scores is None:
                raise RuntimeError(f"{self.label} on {job.what}: not scored ({job.error or 'run the jobs first'})")
            at = dict(zip(order, job.scores))
            s1[index], s2[index] = [at[i] for i in items_1], [at[i] for i in items_2]
        out = self.pairs[["dataset", "attribute", "pair_id"]].assign(metric=self.label, score_1=s1, score_2=s2,
                                                                     signature=self.metric.signature)
        carried = [c for c in CARRIED if c in self.pairs.columns]
        return pd.concat([out, self.pairs[carried]], axis=1)[SCORE_COLUMNS + carried]


def score_pairs(pairs: pd.DataFrame, metric, *, cache=True, label: str | None = None) -> pd.DataFrame:
    """Both candidates of every pair scored by ``metric``: the tidy table of :data:`SCORE_COLUMNS`.

    ``label`` names the metric in the ``metric`` column (default: the metric's
    configuration label, e.g. ``BERTScore-MiniLM``). ``cache``: True for the default
    score cache, a :class:`~metricbias.cache.ScoreCache`, or None/False for none.
    The jobs run on the current executor (:func:`metricbias.jobs.use`).
    """
    plan = Plan(pairs, metric, label)
    run(plan.jobs, _cache(cache))
    return plan.table()


def score_metrics(pairs: pd.DataFrame, metrics: Iterable, *, cache=True, progress: bool = True) -> pd.DataFrame:
    """:func:`score_pairs` for every metric (names, specifications, ``Metric``s, profile entries), stacked.

    Every metric's jobs go to the executor together, so that a cluster scores the metrics side by side.
    """
    pairs = conform(pairs)
    plans = [Plan(pairs, m) for m in metrics]
    if not plans:
        raise ValueError("no metric to score")
    run([job for plan in plans for job in plan.jobs], _cache(cache), progress=progress or None)
    return pd.concat([plan.table() for plan in plans], ignore_index=True)


def score_texts(metric, candidates, references, *, cache=True, what: str = "", **options) -> np.ndarray:
    """Each candidate scored against its reference (same lengths) by ``metric`` (anything :func:`score_pairs`
    takes), as one :class:`~metricbias.jobs.Job` on the current executor: float64 scores, in order.

    ``cache`` as in :func:`score_pairs`; ``what`` names the texts in job logs and manifests; ``options`` go to
    :func:`metricbias.jobs.run` (``chunk_size``, ``progress``).
    """
    _, built = resolve(metric)
    job, = score_jobs([Job(built, candidates, references, what=what)], cache=cache, **options)
    return job.scores


def score_jobs(jobs: Iterable[Job], *, cache=True, **options) -> list[Job]:
    """Score several :class:`~metricbias.jobs.Job` (each a metric on its own texts) together, through ``cache`` (as
    in :func:`score_pairs`) on the current executor; ``options`` go to :func:`metricbias.jobs.run` (``executor``,
    ``retries``, ``chunk_size``, ``progress``, ``raise_errors``). Returns the jobs, their ``scores`` filled."""
    return run(list(jobs), _cache(cache), **options)


__all__ = ["SCORE_COLUMNS", "Job", "Plan", "score_jobs", "score_metrics", "score_pairs", "score_texts"]
