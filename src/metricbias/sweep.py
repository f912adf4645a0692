"""Sweeps: metric configurations x datasets (and association tests) as jobs, in process or on Dask.

:func:`sweep` (``metricbias sweep``) takes the metric configurations of a profile
(or those named, on the backbones named), the paired datasets named, and runs one
job per configuration and dataset (per (dataset, attribute) for a corpus-dependent
metric) through :func:`metricbias.scoring.score_jobs` on the executor chosen by ``scheduler``.
Jobs whose scores are all in the score cache are not sent; every chunk a worker
finishes is stored by the driver at once, so a sweep that was interrupted resumes
where it stopped when run again. Failed jobs are retried (``retries``) and reported.

It writes, in ``out``:

``bias_<dataset>.csv``
    the bias table of each paired dataset: the same file as
    ``metricbias bias --dataset <dataset> --scores live --metrics ...``;
``weat.csv``
    with the pseudo-dataset ``seat``: every association test of Gao & Wan (2022)
    through every configuration (the columns of ``metricbias weat``);
``manifest.csv``
    one row per job: its id (signature and data), metric, what it scored, pairs,
    status (``cached``, ``done``, ``failed``), pairs from the cache and computed,
    tries, worker seconds, workers used and the error of a failed job.
"""

from __future__ import annotations

import time
import warnings
from pathlib import Path

import pandas as pd

from .datasets import registry as pair_datasets
from . import jobs, profiles
from .metrics import metric_class, on_backbones, parse, resolve
from .scoring import Plan, score_jobs

#: what ``--datasets`` defaults to: chapter 3's pairs
DEFAULT_DATASETS = ("published", "built")
#: the pseudo-dataset of association tests
ASSOCIATION = "seat"
MANIFEST_COLUMNS = ["job", "metric", "what", "pairs", "status", "cached", "computed", "attempts", "seconds",
                    "workers", "error", "signature"]


def bias_file(out: Path, dataset: str) -> Path:
    return Path(out) / f"bias_{dataset}.csv"


def configurations(profile: str, metrics=None, backbones=None) -> list:
    """The metric configurations a sweep runs.

    ``metrics`` (specifications, labelled as written, as ``metricbias bias`` labels them) on
    ``backbones`` when given; else the profile's suite, keeping, when ``backbones`` are given,
    the metrics that take no backbone and the configurations on one of them.
    """
    profiles.check(profile)
    if metrics:
        return on_backbones([parse(m) if isinstance(m, str) else m for m in metrics], backbones)
    suite = profiles.suite(profile)
    if backbones:
        suite = [s for s in suite if not metric_class(s.name).needs_backbone
                 or {**metric_class(s.name).defaults, **s.options}.get("backbone") in backbones]
    if not suite:
        raise ValueError(f"profile {profile} has no metric configuration on backbones {', '.join(backbones)}")
    return suite


def sweep(profile: str, out, *, metrics=None, backbones=None, datasets=None, scheduler=None, workers=None,
          n_resamples: int = 9999, seed: int = 0, sample_size: int = 0, n_permutations: int | None = None,
          retries: int = jobs.RETRIES, cache=True, progress: bool = True) -> pd.DataFrame:
    """Run a sweep and write its tables and manifest in ``out``; returns the manifest.

    ``datasets``: registered paired datasets and/or ``seat`` (default :data:`DEFAULT_DATASETS`);
    ``scheduler``/``workers``: see :func:`metricbias.jobs.executor` (None: ``METRICBIAS_SCHEDULER``
    or in process); ``n_resamples``/``seed``: the bootstrap of the bias tables (as ``metricbias bias``);
    ``sample_size``/``n_permutations``: the association tests' sentence sets (0: whole) and partitions.
    """
    from .bias import association
    from .bias.pairwise import bias_table
    from .paths import write_csv_atomic

    names = list(dict.fromkeys(datasets or DEFAULT_DATASETS))
    for name in names:
        if name != ASSOCIATION:
            pair_datasets.get(name)  # an unknown name fails before any work
    specs = configurations(profile, metrics, backbones)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    cache = True if cache is True else (cache or None)
    started = time.perf_counter()
    written = []
    with jobs.use(scheduler, workers) as executor, jobs.collect() as ran:
        built = [resolve(spec) for spec in specs]  # one Metric per configuration, shared by the datasets
        plans = {}
        for name in names:
            if name != ASSOCIATION:
                pairs = pair_datasets.load(name)
                plans[name] = [Plan(pairs, entry) for entry in built]
        score_jobs([j for ps in plans.values() for p in ps for j in p.jobs], cache=cache, executor=executor,
                   retries=retries, progress=progress, raise_errors=False)
        for name, ps in plans.items():
            done = [p.table() for p in ps if all(j.scores is not None for j in p.jobs)]
            if done:
                table = bias_table(pd.concat(done, ignore_index=True), n_resamples=n_resamples, seed=seed)
                written.append(write_csv_atomic(table, bias_file(out, name)))
        if ASSOCIATION in names:
            from .datasets import seat

            tests = seat.tests("all", None, sample_size=sample_size, seed=seed)
            kwargs = {} if n_permutations is None else {"n_permutations": n_permutations}
            before = len(ran)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", association.ConstantAssociationWarning)
                    table = association.run(tests, dict(built), cache=cache, seed=seed, progress=progress, **kwargs)
            except (ValueError, RuntimeError, OSError) as exc:  # recorded on its jobs; the other tables stand
                if not any(j.error for j in ran[before:]):
                    raise
                warnings.warn(f"association tests: {exc}", RuntimeWarning, stacklevel=2)
            else:
                partitions = n_permutations or association.N_PERMUTATIONS
                written.append(write_csv_atomic(association.for_download(table, partitions), out / "weat.csv"))
    manifest = pd.DataFrame([j.record() for j in ran], columns=MANIFEST_COLUMNS)
    write_csv_atomic(manifest, out / "manifest.csv")
    manifest.attrs.update(written=written, seconds=time.perf_counter() - started)
    return manifest


def summary(manifest: pd.DataFrame) -> str:
    """One line per status, and the failed jobs with their errors."""
    counts = manifest["status"].value_counts()
    lines = [", ".join(f"{counts[s]} {s}" for s in ("cached", "done", "failed", "interrupted", "pending")
                       if s in counts) + f" job(s); {int(manifest['computed'].sum()):,} pairs computed, "
             f"{int(manifest['cached'].sum()):,} from the cache"]
    for row in manifest[manifest["status"] == "failed"].itertuples():
        lines.append(f"  failed: {row.metric} on {row.what} after {row.attempts} tries: {row.error}")
    return "\n".join(lines)


__all__ = ["ASSOCIATION", "DEFAULT_DATASETS", "MANIFEST_COLUMNS", "bias_file", "configurations", "summary", "sweep"]
