"""The association sweep on Dask: every test x every metric configuration of a profile, 1 and N workers.

Runs ``association.run`` (what ``metricbias sweep --datasets seat`` and chapter 5 run) on the tests
chosen (default: every test of Gao & Wan's Table 3 that the mirror holds, every level, sentence sets
whole: ``--sample-size 0``) through every configuration of the profile's suite, once per scheduler
setting, each in a fresh Python process with a new, empty score cache (the trained models the suite
needs ship under models/). Settings: ``inprocess`` (no Dask), then ``--scheduler`` with each count
of ``--workers``. Reports the scoring wall time (the cluster already up; worker imports and model loads
included), the cluster's start-up, and the scaling efficiency ``T(1 worker) / (N x T(N workers))``.

    .venv/bin/python benchmarks/bench_sweep.py                              # the full sweep (hours on 2 CPUs)
    .venv/bin/python benchmarks/bench_sweep.py --levels word,"sent (u)" --workers 1,2   # the subset measured here
    .venv/bin/python benchmarks/bench_sweep.py --scheduler tcp://HOST:8786 --workers 16  # a cluster (see README)
"""

from __future__ import annotations

import argparse

from _common import fresh_cache_env, machine, run_child, save

CHILD = r"""
import json, sys, time, warnings
start = time.perf_counter()
from metricbias import jobs, profiles
from metricbias.bias import association
from metricbias.datasets import seat
profile, names, levels, sample_size, scheduler, workers, chunk = sys.argv[1:8]
tests = seat.tests(names, None if levels == "all" else levels, sample_size=int(sample_size), seed=0)
specs = profiles.prepare(profiles.suite(profile), progress=False)
metrics = association.build_metrics(specs)
up = time.perf_counter()
with jobs.use(scheduler, int(workers) or None) as executor, jobs.collect() as ran:
    ready = time.perf_counter()
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = association.run(tests, metrics, cache=True, seed=0, batch_size=int(chunk))
    seconds = time.perf_counter() - t
    slots = getattr(executor, "slots", 1)
print(json.dumps({"scoring_and_tests": seconds, "cluster_start": ready - up, "process_to_results": time.perf_counter() - start,
                  "slots": slots, "tests": len(tests), "configurations": len(metrics), "cells": len(results),
                  "pairs_per_metric": association.pairs_needed(tests), "jobs": len(ran),
                  "chunks_retried": sum(j.attempts > 1 for j in ran),
                  "metric_seconds": results.groupby("metric", sort=False)["scoring_seconds"].first().to_dict()}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--profile", default="offline", help="whose metric configurations (default offline)")
    parser.add_argument("--tests", default="all", help="test names, comma-separated, or all (default)")
    parser.add_argument("--levels", default="all", help="word, sent, 'sent (u)', comma-separated, or all (default)")
    parser.add_argument("--sample-size", type=int, default=0, help="texts per sentence-level set (default 0: whole)")
    parser.add_argument("--scheduler", default="local", help="local (default) or tcp://HOST:PORT")
    parser.add_argument("--workers", default="1,2", help="worker counts, comma-separated (default 1,2)")
    parser.add_argument("--chunk-size", type=int, default=50_000, help="pairs per job chunk (default 50,000)")
    parser.add_argument("--no-inprocess", action="store_true", help="skip the in-process run (no Dask)")
    parser.add_argument("--name", default="sweep", help="results/<name>.json")
    args = parser.parse_args()

    common = [args.profile, args.tests, args.levels, str(args.sample_size)]
    settings = ([] if args.no_inprocess else [("inprocess", 0)]) + [(args.scheduler, int(n))
                                                                     for n in args.workers.split(",")]
    runs = {}
    for scheduler, workers in settings:
        label = scheduler if scheduler == "inprocess" else f"{scheduler} x{workers}"
        with fresh_cache_env() as child_env:
            runs[label] = out = run_child(CHILD, [*common, scheduler, str(workers), str(args.chunk_size)], child_env)
        print(f"{label:>16s}: {out['scoring_and_tests']:8.1f} s scoring and tests ({out['cluster_start']:.1f} s "
              f"cluster start; {out['process_seconds']:.1f} s process)", flush=True)
    dask = {w: runs[f"{args.scheduler} x{w}"]["scoring_and_tests"] for _, w in settings if w}
    base = min(dask)
    efficiency = {w: dask[base] * base / (w * t) for w, t in dask.items()}
    first = next(iter(runs.values()))
    result = {"args": vars(args), "runs": runs, "efficiency": efficiency, "machine": machine()}
    print(f"{first['tests']} tests x {first['configurations']} configurations ({first['cells']} cells), "
          f"{first['pairs_per_metric']:,} ordered pairs per configuration, {first['jobs']} jobs")
    print("scaling efficiency T(1) / (N T(N)): " + ", ".join(f"{w} workers {e:.2f}" for w, e in efficiency.items()))
    print(f"machine: {result['machine']}; saved {save(args.name, result)}")


if __name__ == "__main__":
    main()
