"""Every offline metric on every attribute: cold and warm score cache, each in a fresh process.

Scores all pairs of the released datasets (and of the built datasets when this checkout
has them) with every configuration of ``profiles.suite("offline")``, twice, in two fresh
Python processes sharing one new score cache: the first (cold) computes everything,
imports and model loads included; the second (warm) finds every score in the cache.
The trained regression model is copied into the new cache beforehand (training it is
``metricbias train-regression``, measured separately).

    .venv/bin/python benchmarks/bench_suite.py [--datasets published,built]
"""

from __future__ import annotations

import argparse

from _common import fresh_cache_env, machine, run_child, save

CHILD = r"""
import json, sys, time
start = time.perf_counter()
from metricbias import metrics, scoring
from metricbias import profiles
entries = profiles.suite("offline")
profiles.prepare(entries, progress=False)
timings, n_pairs = {}, {}
for dataset in sys.argv[1].split(","):
    pairs = scoring.load_pairs(dataset)
    n_pairs[dataset] = len(pairs)
    for entry in entries:
        t = time.perf_counter()
        scoring.live_scores(pairs, [entry], progress=False)
        timings[f"{dataset}/{entry[0]}"] = time.perf_counter() - t
print(json.dumps({"total": time.perf_counter() - start, "metrics": timings, "pairs": n_pairs,
                  "configurations": len(entries)}))
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--datasets", default=None, help="default: published, plus built when available")
    args = parser.parse_args()

    from metricbias import scoring

    datasets = args.datasets or ",".join(d for d in scoring.DATASETS if scoring.dataset_available(d))
    with fresh_cache_env() as env:
        cold = run_child(CHILD, [datasets], env)
        warm = run_child(CHILD, [datasets], env)
    result = {"datasets": datasets, "cold": cold, "warm": warm, "machine": machine()}
    print(f"{cold['configurations']} offline configurations x datasets {cold['pairs']}")
    print(f"  cold cache: {cold['process_seconds']:.1f} s (process wall time)")
    print(f"  warm cache: {warm['process_seconds']:.1f} s")
    slow = sorted(cold["metrics"].items(), key=lambda kv: -kv[1])[:6]
    print("  slowest cold: " + ", ".join(f"{k} {v:.1f} s" for k, v in slow))
    print(f"  machine: {result['machine']}; saved {save('suite-' + datasets.replace(',', '-'), result)}")


if __name__ == "__main__":
    main()
