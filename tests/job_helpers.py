"""Metrics and a Dask worker plugin for the scoring-job tests, in a module the workers can import."""

from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path

import numpy as np
import pandas as pd

from metricbias.metrics.base import Metric

try:  # the Dask tests only
    from distributed.diagnostics.plugin import WorkerPlugin
except ImportError:  # pragma: no cover
    WorkerPlugin = object

#: five toy pairs over two attributes (registered as dataset ``toy-sweep`` by the tests)
PAIRS = pd.DataFrame({
    "dataset": "toy-sweep",
    "attribute": ["a", "a", "a", "b", "b"],
    "pair_id": ["a0", "a1", "a2", "b0", "b1"],
    "candidate_1": ["the man is here", "he is a nurse", "his car", "an old man", "young people"],
    "candidate_2": ["the woman is here", "she is a nurse", "her car", "a young man", "old people"],
    "reference_1": ["someone is here", "a nurse", "the car", "a man", "people"],
    "reference_2": ["someone is here", "a nurse", "the car", "a man", "people"],
})


def _overlap(candidates, references) -> np.ndarray:
    return np.array([len(set(c.split()) & set(r.split())) for c, r in zip(candidates, references)], float)


class Overlap(Metric):
    """Words shared by candidate and reference; records the size of every call (in this process)."""

    name = "toy_job_overlap"
    family = "ngram"
    calls: list[int] = []

    def _score(self, candidates, references):
        type(self).calls.append(len(candidates))
        return _overlap(candidates, references)


class CorpusSize(Metric):
    """Corpus-dependent toy: overlap plus the number of pairs in the call (its corpus)."""

    name = "toy_job_corpus"
    family = "ngram"
    corpus_dependent = True

    def _score(self, candidates, references):
        return _overlap(candidates, references) + len(candidates)


class Flaky(Metric):
    """Fails with a RuntimeError (a transient fault) the first ``failures`` calls in this process."""

    name = "toy_job_flaky"
    family = "ngram"
    defaults = {"failures": 1}
    seen = 0

    def _score(self, candidates, references):
        type(self).seen += 1
        if type(self).seen <= self.options["failures"]:
            raise RuntimeError("transient fault")
        return _overlap(candidates, references)


class DiesOnce(Metric):
    """Overlap; in a Dask worker, the first call anywhere kills its own process halfway through scoring.

    The ``marker`` file records that a worker died, so that the retry scores normally.
    """

    name = "toy_job_dies_once"
    family = "ngram"
    defaults = {"marker": ""}

    def _score(self, candidates, references):
        half = _overlap(candidates[: len(candidates) // 2], references[: len(references) // 2])
        marker = Path(self.options["marker"])
        if _in_worker() and not marker.exists():
            marker.write_text(f"{os.getpid()}\n")
            os._exit(1)  # a worker lost mid-job: no exception, no clean-up
        return np.concatenate([half, _overlap(candidates[len(half):], references[len(half):])])


def _in_worker() -> bool:
    try:
        from distributed import get_worker

        get_worker()
        return True
    except (ImportError, ValueError):
        return False


@contextlib.contextmanager
def registered():
    """The toy metrics and the ``toy-sweep`` dataset registered (in the driver) for the block."""
    from metricbias import metrics
    from metricbias.datasets import registry

    toys = (Overlap, CorpusSize, Flaky, DiesOnce)
    for cls in toys:
        metrics.register(cls, replace=True)
    registry.register("toy-sweep", description="five toy pairs", attributes=lambda: ["a", "b"],
                      replace=True)(lambda attributes, built_dir: PAIRS)
    try:
        yield
    finally:
        for cls in toys:
            metrics.unregister(cls.name)
        registry.DATASETS.pop("toy-sweep", None)


class RecordCacheUse(WorkerPlugin):
    """Worker plugin: every ScoreCache built, every ScoreCache.store and every sqlite3.connect on a worker
    is appended to ``log`` as ``pid what`` (a worker restarted after a crash gets the plugin again)."""

    name = "record-cache-use"

    def __init__(self, log: str):
        self.log = log

    def setup(self, worker=None):
        from metricbias import cache

        log = self.log

        def recorded(what, original):
            def wrapper(*args, **kwargs):
                with open(log, "a") as fh:
                    fh.write(f"{os.getpid()} {what}\n")
                return original(*args, **kwargs)
            return wrapper

        cache.ScoreCache.__init__ = recorded("ScoreCache", cache.ScoreCache.__init__)
        cache.ScoreCache.store = recorded("store", cache.ScoreCache.store)
        sqlite3.connect = recorded("sqlite3.connect", sqlite3.connect)

    def teardown(self, worker=None):
        pass
