"""Association packs (chapter 5): pairs per second of ``Metric.score_cross`` against the encoder-pass floor.

An association pack needs S(t, a) of every target and attribute of a test, both directions. The floor for an
encoder metric is one encoder pass per distinct text; what ``score_cross`` adds on top is the matching (BERTScore:
a tensor operation per block of targets; MoverScore: one EMD per pair of texts). For a cross-encoder (the regression
metric) every ordered pair is a model pass. Runs in a fresh process, embedding cache off, on one sentence-level test
(default C6-T, 160 targets x 213 attributes), and prints per configuration: ordered pairs, seconds of the encoder
pass, seconds of the matching, pairs per second in all, and the pairwise path (``Metric.score`` on the same pairs,
embeddings already computed) on a sample of pairs for comparison.

    .venv/bin/python benchmarks/bench_association_packs.py [--test C6-T] [--level sent] [--sample 4000]
"""

from __future__ import annotations

import argparse

from _common import fresh_cache_env, machine, run_child, save

CHILD = r"""
import json, sys, time, warnings
warnings.simplefilter("ignore")
from metricbias import metrics
from metricbias.datasets import seat
name, level, sample = sys.argv[1], sys.argv[2], int(sys.argv[3])
test = seat.tests(name, level)[0]
rows, cols = list(test.targets), list(test.attributes)
pairs = 2 * len(rows) * len(cols)
out = {"test": test.label, "pairs": pairs, "texts": len(set(rows + cols)), "configs": {}}
for label, spec in (("BERTScore-MiniLM", ("bertscore", {})), ("MoverScore-MiniLM", ("moverscore", {})),
                    ("Regression-MiniLM", ("regression", {}))):
    m = metrics.get(spec[0], device="cpu", **spec[1])
    row = {}
    if hasattr(m, "encoder"):
        enc = m.encoder
        start = time.perf_counter()
        enc.embed(enc.encode_many(list(dict.fromkeys(rows + cols))), m.options["layer"])
        row["encoder_seconds"] = time.perf_counter() - start
    start = time.perf_counter()
    if label.startswith("Regression"):  # a model pass per ordered pair: timed on a sample of targets
        k = max(1, sample // (2 * len(cols)))
        m.score_cross(rows[:k], cols)
        row["matching_seconds"] = (time.perf_counter() - start) * len(rows) / k
    else:
        m.score_cross(rows, cols)
        row["matching_seconds"] = time.perf_counter() - start
    total = row.get("encoder_seconds", 0.0) + row["matching_seconds"]
    row["pairs_per_second"] = pairs / total
    if "encoder_seconds" in row:
        row["floor_pairs_per_second"] = pairs / row["encoder_seconds"]
        cands = [rows[i % len(rows)] for i in range(sample)]
        refs = [cols[(i * 7) % len(cols)] for i in range(sample)]
        start = time.perf_counter()
        m.score(cands, refs)
        row["pairwise_pairs_per_second"] = sample / (time.perf_counter() - start)
    out["configs"][label] = row
print(json.dumps(out))
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--test", default="C6-T")
    parser.add_argument("--level", default="sent")
    parser.add_argument("--sample", type=int, default=4000)
    args = parser.parse_args()
    with fresh_cache_env() as env:
        env["METRICBIAS_EMBEDDING_CACHE"] = "off"
        out = run_child(CHILD, [args.test, args.level, str(args.sample)], env)
    print(f"{out['test']}: {out['pairs']:,} ordered pairs, {out['texts']} distinct texts")
    for label, row in out["configs"].items():
        floor = (f"encoder pass {row['encoder_seconds']:.1f} s (floor {row['floor_pairs_per_second']:,.0f} pairs/s), "
                 if "encoder_seconds" in row else "")
        pairwise = (f"; pairwise path {row['pairwise_pairs_per_second']:,.0f} pairs/s"
                    if "pairwise_pairs_per_second" in row else "")
        print(f"  {label}: {floor}matching {row['matching_seconds']:.1f} s, "
              f"{row['pairs_per_second']:,.0f} pairs/s in all{pairwise}")
    print(f"  machine: {machine()}; saved {save('association-packs', {**out, 'machine': machine()})}")


if __name__ == "__main__":
    main()
