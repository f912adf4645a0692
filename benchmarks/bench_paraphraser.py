"""The UniLM paraphrasers (BARTScore and PRISM on ``para-<encoder>``): packed rows vs a row per pair.

Both directions of every pair of the six released datasets (P: log p(candidate | reference),
R: log p(reference | candidate)), the distinct (source, target) pairs, CPU:

* **a row per pair** (how the paraphraser scored before): ``[CLS] source [SEP] target [SEP]``
  per pair, rows sorted by length, ``--batch-size`` rows per forward pass;
* **packed** (``Paraphraser.log_likelihood``): the pairs that share a source (a pair's two
  candidates share their reference) in one row, the source once and the targets as a prefix
  tree, ``--batch-size`` rows per forward pass.

Model loads are excluded (both sides use the loaded paraphraser); the largest difference of
the log-likelihoods and the tokens each side runs through the model are printed.

    .venv/bin/python benchmarks/bench_paraphraser.py [--repeats 3] [--backbones para-all-MiniLM-L6-v2,para-all-mpnet-base-v2]
"""

from __future__ import annotations

import argparse
import statistics

import numpy as np
from _common import Timer, dataset_rows, machine, save


def row_per_pair(para, sources, targets, batch_size: int) -> tuple[np.ndarray, int]:
    import torch

    encoded = para.encode(sources, targets)
    order = sorted(range(len(encoded)), key=lambda i: len(encoded[i][0]) + len(encoded[i][1]))
    out, tokens = np.zeros(len(encoded)), 0
    for start in range(0, len(order), batch_size):
        idx = order[start:start + batch_size]
        batch = [encoded[i] for i in idx]
        with torch.inference_mode():
            lp, lens = para.log_probs(batch)
        out[idx] = [float(s.mean()) for s in torch.split(lp.double(), lens)]
        tokens += sum(len(s) + len(t) for s, t in batch)
    return out, tokens


def packed_tokens(para, sources, targets) -> int:
    """Tokens of the packed rows (:meth:`Paraphraser.pack` on every source with all its targets), padding left out."""
    groups: dict = {}
    for s, t in para.encode(sources, targets):
        groups.setdefault(tuple(s), []).append(t)
    return sum(len(s) + len(para.pack([(list(s), ts)]).tokens) for s, ts in groups.items())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--backbones", default="para-all-MiniLM-L6-v2,para-all-mpnet-base-v2")
    args = parser.parse_args()

    from metricbias.trained import paraphraser

    pairs, _ = dataset_rows(["published"])
    directed = []
    for side in ("1", "2"):
        directed += list(zip(pairs[f"reference_{side}"], pairs[f"candidate_{side}"]))  # P
        directed += list(zip(pairs[f"candidate_{side}"], pairs[f"reference_{side}"]))  # R
    distinct = list(dict.fromkeys(directed))
    sources, targets = [s for s, _ in distinct], [t for _, t in distinct]
    result = {"pairs": len(pairs), "distinct_directed_pairs": len(distinct), "batch_size": args.batch_size,
              "backbones": {}, "machine": machine()}
    print(f"{len(pairs)} released pairs, {len(distinct)} distinct (source, target) pairs, batch {args.batch_size}")
    for name in args.backbones.split(","):
        para = paraphraser.load(name, "cpu")
        times = {"row_per_pair": [], "packed": []}
        for _ in range(args.repeats):
            with Timer() as t:
                alone, tokens_alone = row_per_pair(para, sources, targets, args.batch_size)
            times["row_per_pair"].append(t.seconds)
            with Timer() as t:
                packed = para.log_likelihood(sources, targets, batch_size=args.batch_size)
            times["packed"].append(t.seconds)
        med = {k: statistics.median(v) for k, v in times.items()}
        row = {"seconds": times, "median": med, "speedup": med["row_per_pair"] / med["packed"],
               "tokens_row_per_pair": tokens_alone, "tokens_packed": packed_tokens(para, sources, targets),
               "max_abs_difference": float(np.max(np.abs(alone - packed)))}
        result["backbones"][name] = row
        print(f"  {name}: a row per pair {med['row_per_pair']:.2f} s ({row['tokens_row_per_pair']:,} tokens), "
              f"packed {med['packed']:.2f} s ({row['tokens_packed']:,} tokens): {row['speedup']:.2f}x; "
              f"largest difference {row['max_abs_difference']:.1e}")
    print(f"  machine: {result['machine']}; saved {save('paraphraser', result)}")


if __name__ == "__main__":
    main()
