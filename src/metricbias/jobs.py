"""Scoring jobs and where they run: in this process, or on a Dask cluster.

A :class:`Job` is one metric configuration scoring one set of (candidate,
reference) pairs: a dataset, a set of association tests, a meta-evaluation set,
or, for a corpus-dependent metric (idf weights, document frequencies), the one
(dataset, attribute) that is its corpus. It is identified by the metric's
signature and a hash of its pairs (:attr:`Job.id`).

:func:`run` is the driver. For each job it looks the pairs up in the score cache,
sends the pairs not found to an executor in chunks of at most ``chunk_size`` pairs,
stores each chunk's scores in the cache as soon as they come back, and fills the
job's scores. Workers only compute (``metric._score_dedup``); the driver alone
writes the score cache, so an interrupted run resumes from the chunks it stored.
Every scoring function of the library (``score_pairs``, the association tests,
the meta-evaluation) goes through :func:`run`.

Executors, chosen by a *scheduler* string:

``inprocess`` (the default)
    chunks are computed in this process, one after the other; nothing of Dask is imported;
``local``
    a ``distributed.LocalCluster`` on this machine: ``workers`` single-threaded worker
    processes (default: one per core);
``tcp://HOST:PORT``
    an existing Dask scheduler (``dask scheduler`` / ``dask worker``, ``dask-ssh``,
    ``dask-jobqueue``, the Dask Kubernetes operator). Workers that advertise a ``GPU``
    resource (``dask worker ... --resources GPU=1``) get the model-based metrics.

Library calls use the executor of the innermost :func:`use` block, else the one that
``METRICBIAS_SCHEDULER`` (and ``METRICBIAS_WORKERS``) name, else ``inprocess``: that is
how ``make book SCHEDULER=tcp://...`` sends the chapters' scoring to a cluster.

Failed chunks are sent again up to ``retries`` times (a worker that dies mid-chunk
counts as a failure); errors of input or configuration (``ValueError``, ``LookupError``,
``TypeError``, ``FileNotFoundError``) are not retried, since they would fail again.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import logging
import os
import socket
import time
import uuid
from collections import deque
from dataclasses import dataclass, field
from functools import cached_property
from typing import Iterator, Sequence

import numpy as np

from .cache import data_hash
from .metrics.base import Metric, MetricError

SCHEDULER_ENV = "METRICBIAS_SCHEDULER"
WORKERS_ENV = "METRICBIAS_WORKERS"
#: pairs per chunk sent to a worker (each chunk is stored in the cache as soon as it is scored)
CHUNK_SIZE = 50_000
#: how many times a failed chunk is sent again
RETRIES = 2
#: errors a second try would repeat: bad input or configuration
PERMANENT = (ValueError, LookupError, TypeError, FileNotFoundError)
#: a file that every finished job's record is appended to, as a JSON line (``metricbias run`` sets it per chapter)
LOG_ENV = "METRICBIAS_JOB_LOG"


@dataclass(eq=False)
class Job:
    """One metric configuration on one set of pairs; :func:`run` fills in the fields after ``references``."""

    metric: Metric
    candidates: list[str]
    references: list[str]
    #: how tables name the metric (default: its configuration label)
    label: str = ""
    #: what the pairs are, for the manifest: ``published``, ``published/gender``, ``association tests``
    what: str = ""
    scores: np.ndarray | None = None
    #: ``cached`` (every score from the cache), ``done`` (some computed), ``failed``, or ``interrupted`` / ``pending``
    #: (the run stopped before the job was done / began)
    status: str = "pending"
    cached: int = 0
    #: of the cached scores, how many came from a verified score pack (:mod:`metricbias.book.packs`)
    packed: int = 0
    computed: int = 0
    #: most tries any chunk of the job took (1: no retry)
    attempts: int = 0
    #: seconds spent on the job: the driver's cache reads and writes, the workers' computing
    seconds: float = 0.0
    error: str = ""
    workers: set = field(default_factory=set)

    def __post_init__(self):
        self.candidates, self.references = list(self.candidates), list(self.references)
        self.label = self.label or self.metric.config_label()

    @cached_property
    def id(self) -> str:
        """The metric's signature and the pairs it scores, hashed."""
        blob = f"{self.metric.signature}\x1f{data_hash(self.candidates, self.references)}"
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]

    def record(self) -> dict:
        """The job's row of a sweep manifest."""
        return {"job": self.id, "metric": self.label, "what": self.what, "pairs": len(self.candidates),
                "status": self.status, "cached": self.cached, "packed": self.packed, "computed": self.computed,
                "attempts": self.attempts, "seconds": round(self.seconds, 3), "workers": len(self.workers),
                "error": self.error, "signature": self.metric.signature}


# --- what a worker runs ------------------------------------------------------------------------

@dataclass(frozen=True)
class MetricBlueprint:
    """How a worker builds a metric: its class and options, and the signature the driver expects."""

    cls: type
    options: dict
    signature: str

    @classmethod
    def of(cls, metric: Metric) -> "MetricBlueprint":
        return cls(type(metric), dict(metric.options), metric.signature)

    def build(self) -> Metric:
        """The metric, built once per worker process (its models load once, through the models module)."""
        key = (self.signature, repr(sorted(self.options.items())))
        metric = _BUILT.get(key)
        if metric is None:
            metric = self.cls(**self.options)
            if metric.signature != self.signature:
                raise MetricError(f"worker {socket.gethostname()} builds {metric.signature} where the driver "
                                   f"built {self.signature}: install the same versions and backbone files on "
                                   "every worker")
            _BUILT[key] = metric
        return metric


_BUILT: dict[tuple, Metric] = {}


def compute(metric, texts: list[str], cand_idx: np.ndarray, ref_idx: np.ndarray) -> tuple[np.ndarray, float, str]:
    """Scores of the pairs ``(texts[cand_idx[i]], texts[ref_idx[i]])``, the seconds taken and where.

    ``metric`` is a :class:`Metric` (in process) or a :class:`MetricBlueprint` (on a worker).
    Nothing here touches the score cache.
    """
    start = time.perf_counter()
    if isinstance(metric, MetricBlueprint):
        metric = metric.build()
    scores = metric._score_dedup([texts[i] for i in cand_idx], [texts[i] for i in ref_idx])
    return np.asarray(scores, dtype=float), time.perf_counter() - start, f"{socket.gethostname()}:{os.getpid()}"


def _packed(cands: Sequence[str], refs: Sequence[str]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Pairs as their distinct texts and two index arrays (association pairs repeat a few texts many times)."""
    code: dict[str, int] = {}
    cand_idx = np.fromiter((code.setdefault(t, len(code)) for t in cands), dtype=np.int64, count=len(cands))
    ref_idx = np.fromiter((code.setdefault(t, len(code)) for t in refs), dtype=np.int64, count=len(refs))
    return list(code), cand_idx, ref_idx


# --- executors ---------------------------------------------------------------------------------

class InProcess:
    """Chunks computed here, when submitted."""

    scheduler = "inprocess"
    slots = 1

    def payload(self, metric: Metric):
        return metric

    def submit(self, args: tuple, key: str, gpu: bool):
        try:
            return (compute(*args), None)
        except Exception as exc:  # noqa: BLE001 - judged (retried or raised) by the driver
            return (None, exc)

    def wait(self, handles: deque):
        """The next finished handle: ``(handle, result, error)``."""
        handle = handles.popleft()
        return handle, handle[0], handle[1]

    def cancel(self, handles) -> None:
        handles.clear()

    def close(self) -> None:
        pass


class DaskExecutor:
    """Chunks computed by the workers of a Dask cluster (``local``: a LocalCluster here; else a scheduler address)."""

    def __init__(self, scheduler: str, workers: int | None = None):
        try:
            import dask
            import distributed
        except ImportError:
            raise RuntimeError(f"scheduler {scheduler!r} needs Dask: pip install 'metricbias[distributed]' "
                               "(or use --scheduler inprocess)") from None
        self.scheduler = scheduler
        self._cluster = None
        if scheduler == "local":
            n = workers or os.cpu_count() or 1
            # a worker that dies mid-chunk fails the chunk at once; the driver retries it and counts the try
            # (":0": the scheduler's HTTP server on a free port, never a clash with another cluster's 8787)
            with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
                self._cluster = distributed.LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                                         dashboard_address=":0", silence_logs=logging.ERROR)
            self.client = distributed.Client(self._cluster)
        else:
            try:
                self.client = distributed.Client(scheduler, timeout="30s")
            except OSError as exc:
                raise RuntimeError(f"cannot reach the Dask scheduler at {scheduler} ({exc}); start one with "
                                   "`dask scheduler` and workers with `dask worker " + scheduler + "`") from None
            if workers:
                self.client.wait_for_workers(workers)
        info = self.client.scheduler_info()["workers"].values()
        self.slots = max(1, sum(w.get("nthreads", 1) for w in info))
        self.gpu = any(w.get("resources", {}).get("GPU") for w in info)
        self._done = distributed.as_completed()
        self._blueprints: dict[int, tuple[Metric, MetricBlueprint]] = {}

    def payload(self, metric: Metric) -> MetricBlueprint:
        if id(metric) not in self._blueprints:  # the metric is kept with its blueprint, so its id is not reused
            self._blueprints[id(metric)] = (metric, MetricBlueprint.of(metric))
        return self._blueprints[id(metric)][1]

    def submit(self, args: tuple, key: str, gpu: bool):
        resources = {"GPU": 1} if gpu and self.gpu else None
        future = self.client.submit(compute, *args, key=key, pure=False, resources=resources)
        self._done.add(future)
        return future

    def wait(self, handles: deque):
        future = next(self._done)
        handles.remove(future)
        try:
            return future, future.result(), None
        except Exception as exc:  # noqa: BLE001 - a task's error or a dead worker (KilledWorker)
            return future, None, exc
        finally:
            future.release()

    def cancel(self, handles) -> None:
        self.client.cancel(list(handles))
        self._done.clear()
        handles.clear()

    def close(self) -> None:
        self.client.close()
        if self._cluster is not None:
            self._cluster.close()


def executor(scheduler: str | None = None, workers: int | None = None):
    """An executor for ``scheduler`` (``inprocess``, ``local`` or ``tcp://HOST:PORT``)."""
    scheduler = (scheduler or "inprocess").strip()
    if workers is not None and workers < 1:
        raise ValueError(f"--workers must be at least 1, not {workers}")
    if scheduler == "inprocess":
        return InProcess()
    if scheduler == "local" or scheduler.startswith("tcp://"):
        return DaskExecutor(scheduler, workers)
    raise ValueError(f"unknown scheduler {scheduler!r}: use inprocess, local or tcp://HOST:PORT")


_ACTIVE: list = []
_FROM_ENV: dict[tuple, object] = {}
_COLLECTORS: list[list[Job]] = []


def current():
    """The executor library calls use: the innermost :func:`use`, else ``METRICBIAS_SCHEDULER``, else in-process."""
    if _ACTIVE:
        return _ACTIVE[-1]
    scheduler = os.environ.get(SCHEDULER_ENV, "").strip() or "inprocess"
    if scheduler == "inprocess":
        return InProcess()
    workers = os.environ.get(WORKERS_ENV, "").strip()
    key = (scheduler, workers)
    if key not in _FROM_ENV:  # one cluster per process, closed when the process ends
        try:
            _FROM_ENV[key] = executor(scheduler, int(workers) if workers else None)
        except ValueError as exc:
            raise ValueError(f"{SCHEDULER_ENV}={scheduler!r} / {WORKERS_ENV}={workers!r}: {exc}") from None
        atexit.register(_FROM_ENV[key].close)
    return _FROM_ENV[key]


@contextlib.contextmanager
def use(scheduler=None, workers: int | None = None) -> Iterator:
    """Run the scoring inside the block on ``scheduler`` (a name, an address or an executor); None: :func:`current`.

    An executor started here (a LocalCluster, a client) is closed when the block ends.
    """
    if scheduler is None:
        yield current()
        return
    own = isinstance(scheduler, str)
    active = executor(scheduler, workers) if own else scheduler
    _ACTIVE.append(active)
    try:
        yield active
    finally:
        _ACTIVE.pop()
        if own:
            active.close()


@contextlib.contextmanager
def collect() -> Iterator[list[Job]]:
    """A list that every job :func:`run` is given inside the block is added to (a sweep's manifest)."""
    ran: list[Job] = []
    _COLLECTORS.append(ran)
    try:
        yield ran
    finally:
        _COLLECTORS.remove(ran)


# --- the driver ------------------------------------------------------------------------------

@dataclass(eq=False)
class _Chunk:
    job: Job
    #: the job's pair positions this chunk fills
    positions: np.ndarray
    #: their cache keys (None: no cache)
    keys: list[str] | None
    #: computed row of each position
    rows: np.ndarray
    args: tuple
    tries: int = 0


def _chunks(jobs: list[Job], cache, chunk_size: int, payload, progress, raise_errors: bool) -> Iterator[_Chunk]:
    """What is left to compute, job by job; cached scores are filled in on the way (lazily: one chunk's keys at a time)."""
    for job in jobs:
        metric = job.metric
        started = time.perf_counter()
        try:
            job.candidates, job.references = metric._validate(job.candidates, job.references)
        except PERMANENT as exc:
            job.error = f"{type(exc).__name__}: {exc}"
            if raise_errors:
                raise
            continue
        n = len(job.candidates)
        job.scores = np.full(n, np.nan)
        job.seconds += time.perf_counter() - started
        # a corpus-dependent metric's corpus is the whole job: one chunk, scored whole
        step = n if metric.corpus_dependent else chunk_size
        for start in range(0, n, max(step, 1)):
            if job.error:
                break
            started = time.perf_counter()  # the driver's time on this chunk (not while the generator waits)
            cands, refs = job.candidates[start:start + step], job.references[start:start + step]
            positions = np.arange(start, start + len(cands))
            keys = None
            if cache:
                keys = cache.keys(metric, cands, refs)
                found = cache.lookup(keys)
                todo = [i for i, k in enumerate(keys) if k not in found]
                cache.hits += len(keys) - len(todo)
                cache.misses += len(todo)
                job.cached += len(keys) - len(todo)
                if found and cache.has_packs:
                    job.packed += cache.count_packed([k for k in keys if k in found])
                if found:
                    job.scores[positions] = [found.get(k, np.nan) for k in keys]
                if progress is not None and len(keys) - len(todo):
                    progress.update(len(keys) - len(todo))
                if not todo:
                    job.seconds += time.perf_counter() - started
                    continue
                if not metric.corpus_dependent:
                    positions, keys = positions[todo], [keys[i] for i in todo]
                    cands, refs = [cands[i] for i in todo], [refs[i] for i in todo]
            if metric.corpus_dependent:  # every pair, duplicates included, in the corpus's order
                rows = np.arange(len(cands))
                texts, cand_idx, ref_idx = _packed(cands, refs)
            else:
                distinct = list(dict.fromkeys(zip(cands, refs)))
                row_of = {pair: i for i, pair in enumerate(distinct)}
                rows = np.array([row_of[p] for p in zip(cands, refs)], dtype=np.int64)
                texts, cand_idx, ref_idx = _packed([c for c, _ in distinct], [r for _, r in distinct])
            job.seconds += time.perf_counter() - started
            yield _Chunk(job, positions, keys, rows, (payload(metric), texts, cand_idx, ref_idx))


def _finish(jobs: list[Job]) -> None:
    for job in jobs:
        if job.error:
            job.status, job.scores = "failed", None
        elif job.scores is not None and job.cached + job.computed < len(job.candidates):
            job.status, job.scores = "interrupted", None  # the run stopped before the job's last chunk
        elif job.scores is not None:
            job.status = "done" if job.computed else "cached"


def run(jobs: Sequence[Job], cache=None, *, executor=None, retries: int = RETRIES, chunk_size: int | None = None,
        progress=None, raise_errors: bool = True) -> list[Job]:
    """Score every job: cached scores from ``cache``, the rest on ``executor`` (default :func:`current`).

    ``cache``: a :class:`~metricbias.cache.ScoreCache`, ``True`` for the default one, or None.
    ``chunk_size``: pairs per chunk (default :data:`CHUNK_SIZE`).
    ``progress``: True for a progress bar over pairs, or anything with ``update(n)``.
    With ``raise_errors`` (the default) a chunk that fails for good stops the run and its error
    is raised; otherwise the job is marked ``failed`` (``error`` says why) and the others go on.
    Returns the jobs, their ``scores`` filled.
    """
    jobs = list(jobs)
    for collector in _COLLECTORS:
        collector.extend(jobs)
    if cache is True:
        from .cache import ScoreCache

        cache = ScoreCache.default()
    active = executor or current()
    bar = None if progress is None or isinstance(progress, bool) else progress
    if progress is True:
        from .progress import tqdm

        bar = tqdm(total=sum(len(j.candidates) for j in jobs), desc="scoring", unit="pair")
    pending = _chunks(jobs, cache or None, chunk_size or CHUNK_SIZE, active.payload, bar, raise_errors)
    handles: deque = deque()
    chunk_of: dict = {}
    counter, run_id = 0, uuid.uuid4().hex[:8]

    def send(chunk: _Chunk) -> None:
        nonlocal counter
        counter += 1
        chunk.tries += 1
        chunk.job.attempts = max(chunk.job.attempts, chunk.tries)
        key = f"{chunk.job.metric.name}-{run_id}-{counter}"  # Dask's task name (unique)
        handle = active.submit(chunk.args, key, gpu="device" in chunk.job.metric.options)
        handles.append(handle)
        chunk_of[id(handle)] = chunk

    try:
        while True:
            while len(handles) < 2 * active.slots:  # a few chunks queued per worker, the rest not yet looked up
                chunk = next(pending, None)
                if chunk is None:
                    break
                send(chunk)
            if not handles:
                break
            handle, result, error = active.wait(handles)
            chunk = chunk_of.pop(id(handle))
            job = chunk.job
            if error is not None:
                if chunk.tries <= retries and not isinstance(error, PERMANENT) and not job.error:
                    send(chunk)
                    continue
                job.error = job.error or f"{type(error).__name__}: {error}"
                if raise_errors:
                    if isinstance(error, (*PERMANENT, RuntimeError)):
                        raise error
                    raise RuntimeError(f"{job.label} on {job.what or 'its pairs'} failed {chunk.tries} time(s): "
                                       f"{type(error).__name__}: {error}") from error
                continue
            scores, seconds, where = result
            if scores.shape != (len(chunk.args[2]),):
                raise RuntimeError(f"metric {job.metric.name} returned {scores.shape} scores for {len(chunk.args[2])} "
                                   "pairs")
            values = scores[chunk.rows]
            job.scores[chunk.positions] = values
            job.computed += len(values)
            job.seconds += seconds
            job.workers.add(where)
            if chunk.keys is not None:  # the driver alone writes the cache
                started = time.perf_counter()
                cache.store(job.metric.signature, dict(zip(chunk.keys, values.tolist())))
                job.seconds += time.perf_counter() - started
            if bar is not None:
                bar.update(len(values))
    except BaseException:  # an error, or an interrupt: what was stored stays stored, the rest is dropped
        active.cancel(handles)
        raise
    finally:
        if progress is True:
            bar.close()
        _finish(jobs)
        _log(jobs)
    return jobs


def _log(jobs: list[Job]) -> None:
    log_records([job.record() for job in jobs])


def log_records(records: list[dict]) -> None:
    """Append job records (:meth:`Job.record`'s fields) to the job log that ``METRICBIAS_JOB_LOG`` names, if any:
    for scoring that does not go through :func:`run` (the PLL measures)."""
    path = os.environ.get(LOG_ENV)
    if not path:
        return
    import json

    try:
        with open(path, "a", encoding="utf-8") as f:
            f.writelines(json.dumps(record) + "\n" for record in records)
    except OSError as exc:  # a profile is a by-product: never the reason a run fails
        logging.getLogger(__name__).warning("could not append to the job log %s: %s", path, exc)


def score(metric: Metric, candidates: Sequence[str], references: Sequence[str], cache=None, *, what: str = "",
          **kwargs) -> np.ndarray:
    """``metric.score(candidates, references, cache)`` as one job on the current executor (``what``: the pairs'
    name)."""
    job, = run([Job(metric, candidates, references, what=what)], cache, **kwargs)
    return job.scores


__all__ = ["CHUNK_SIZE", "RETRIES", "Job", "MetricBlueprint", "collect", "compute", "current", "executor", "log_records",
           "run", "score", "use"]
