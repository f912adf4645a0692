"""BERTScore on the six released datasets: ours vs calling ``bert_score.score`` directly.

Same backbone (all-MiniLM-L6-v2), same layer (6), no idf, CPU. The direct way is one
``bert_score.score`` call per dataset (the released scores were computed one file at a
time): each call loads the model and embeds that file's sentences. Ours scores all six
through ``metricbias.scoring.score_pairs`` without the score cache: the model is loaded
once, every distinct sentence is embedded once (references shared by the two candidates
of a pair, and texts shared across datasets), and the greedy matching is bert-score's.
Both run in this one process, alternating, ``--repeats`` times; the median is reported.

    .venv/bin/python benchmarks/bench_bertscore.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics

import numpy as np
from _common import Timer, machine, published_rows, save


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    import bert_score
    import torch  # noqa: F401  (imports are not part of either timing)

    from metricbias import backbones, metrics, models, scoring

    path = str(backbones.resolve("all-MiniLM-L6-v2"))
    rows = published_rows()
    pairs = scoring.load_pairs("published")
    n_rows = sum(len(c) for _, c, _ in rows)
    ours_t, direct_t, diffs = [], [], []
    for _ in range(args.repeats):
        models.clear()  # cold: model load and embeddings are part of our time
        with Timer() as t:
            metric = metrics.get("bertscore", backbone="all-MiniLM-L6-v2", layer=6, device="cpu")
            table = scoring.score_pairs(pairs, metric, cache=None)
        ours_t.append(t.seconds)
        with Timer() as t:
            direct = []
            for _, cands, refs in rows:
                _, _, f = bert_score.score(cands, refs, model_type=path, num_layers=6, idf=False, device="cpu",
                                           batch_size=64)
                direct.append(f.numpy())
        direct_t.append(t.seconds)
        ours = np.concatenate([
            np.concatenate([g["score_1"].to_numpy(), g["score_2"].to_numpy()])
            for _, g in table.groupby("attribute", sort=False)])
        diffs.append(float(np.max(np.abs(ours - np.concatenate(direct)))))
    result = {
        "rows": n_rows, "distinct_sentences": len(set(pairs["candidate_1"]) | set(pairs["candidate_2"])
                                                  | set(pairs["reference"]) | set(pairs["reference_2"])),
        "ours_seconds": ours_t, "direct_seconds": direct_t,
        "ours_median": statistics.median(ours_t), "direct_median": statistics.median(direct_t),
        "speedup": statistics.median(direct_t) / statistics.median(ours_t),
        "max_abs_score_difference": max(diffs), "machine": machine(),
    }
    print(f"BERTScore-F, all-MiniLM-L6-v2 layer 6, {n_rows} rows ({result['distinct_sentences']} distinct sentences)")
    print(f"  ours   (metricbias): {result['ours_median']:.2f} s  (runs: {', '.join(f'{x:.2f}' for x in ours_t)})")
    print(f"  direct (bert_score): {result['direct_median']:.2f} s  (runs: {', '.join(f'{x:.2f}' for x in direct_t)})")
    print(f"  speedup {result['speedup']:.2f}x; largest score difference {result['max_abs_score_difference']:.1e}")
    print(f"  machine: {result['machine']}; saved {save('bertscore', result)}")


if __name__ == "__main__":
    main()
