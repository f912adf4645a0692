"""Every association test x every offline metric (chapter 5's workload), cold score cache.

Runs ``association.run`` on all of Gao & Wan's tests that the mirror holds, with the offline
profile's sampling of the sentence-level sets (``--sample-size``, default 16 as in the book), through
every configuration of ``profiles.suite("offline")``, in a fresh process with a new, empty score cache
(the trained regression model is copied in; training it is measured separately). Reports the wall
time per metric and in all (imports and model loads included).

    .venv/bin/python benchmarks/bench_weat.py [--sample-size 16]
"""

from __future__ import annotations

import argparse

from _common import fresh_cache_env, machine, run_child, save

CHILD = r"""
import json, sys, time, warnings
start = time.perf_counter()
from metricbias import metrics
from metricbias.bias import association
from metricbias.datasets import seat
from metricbias import profiles
tests = seat.tests("all", "all", sample_size=int(sys.argv[1]), seed=0)
entries = profiles.prepare(profiles.suite("offline"), progress=False)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    results = association.run(tests, association.build_metrics(entries), cache=True, seed=0)
seconds = results.groupby("metric", sort=False)["scoring_seconds"].first().to_dict()
print(json.dumps({"total": time.perf_counter() - start, "metrics": seconds, "tests": len(tests),
                  "pairs_per_metric": association.pairs_needed(tests), "cells": len(results)}))
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sample-size", type=int, default=16)
    args = parser.parse_args()

    with fresh_cache_env() as env:
        out = run_child(CHILD, [str(args.sample_size)], env)
    wall = out["process_seconds"]
    result = {"sample_size": args.sample_size, "cold": out, "machine": machine()}
    print(f"{out['tests']} tests x {len(out['metrics'])} offline configurations ({out['cells']} cells), "
          f"{out['pairs_per_metric']:,} ordered pairs per metric, sentence sets drawn to {args.sample_size} texts")
    print(f"  cold cache: {wall:.1f} s (process wall time, imports and model loads included)")
    slow = sorted(out["metrics"].items(), key=lambda kv: -kv[1])
    print("  per metric: " + ", ".join(f"{k} {v:.1f} s" for k, v in slow))
    print(f"  machine: {result['machine']}; saved {save(f'weat-sample{args.sample_size}', result)}")


if __name__ == "__main__":
    main()
