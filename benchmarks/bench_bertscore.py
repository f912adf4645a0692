"""BERTScore on the six released datasets: ours vs calling ``bert_score.score`` directly.

Same backbone (all-MiniLM-L6-v2), same layer (6), no idf, CPU. Two direct ways:

* **per column**: for each dataset, ``bert_score.score(candidates_1, references)`` and
  ``bert_score.score(candidates_2, references)`` - the plain way to score paired candidates;
  each call loads the model, and each pair's reference is embedded twice;
* **per file**: one call per dataset over both candidates' rows (how the released scores
  were computed, one file at a time); bert-score itself then embeds each distinct
  sentence of the file once, so only the model loads differ from ours.

Ours scores all six through ``metricbias.scoring.score_pairs`` without the score cache:
the model is loaded once, every distinct sentence is embedded once (the reference shared by
a pair's two candidates, texts shared across datasets), and the greedy matching is
bert-score's own ``greedy_cos_idf``. All three run in this one process, in turn,
``--repeats`` times; medians are reported. ``--datasets published,built`` adds chapter 2's
datasets (chapter 3's workload): their WinoBias and CrowS-Pairs sentences overlap the
released ones, which ours embeds once.

    .venv/bin/python benchmarks/bench_bertscore.py [--repeats 3] [--datasets published,built]
"""

from __future__ import annotations

import argparse
import statistics

import numpy as np
from _common import Timer, dataset_rows, machine, save


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--datasets", default="published")
    args = parser.parse_args()

    import bert_score
    import torch  # noqa: F401  (imports are not part of either timing)

    from metricbias import backbones, metrics, models, scoring

    path = str(backbones.resolve("all-MiniLM-L6-v2"))
    pairs, rows = dataset_rows(args.datasets.split(","))
    n_rows = sum(len(c) for _, c, _ in rows)

    def direct(calls):
        out = []
        for cands, refs in calls:
            _, _, f = bert_score.score(cands, refs, model_type=path, num_layers=6, idf=False, device="cpu",
                                       batch_size=64)
            out.append(f.numpy())
        return np.concatenate(out)

    per_column = []
    for _, c, r in rows:
        n = len(c) // 2
        per_column += [(c[:n], r[:n]), (c[n:], r[n:])]
    per_file = [(c, r) for _, c, r in rows]
    times = {"ours": [], "per_column": [], "per_file": []}
    diffs = []
    for _ in range(args.repeats):
        models.clear()  # cold: model load and embeddings are part of our time
        with Timer() as t:
            metric = metrics.get("bertscore", backbone="all-MiniLM-L6-v2", layer=6, device="cpu")
            table = scoring.score_pairs(pairs, metric, cache=None)
        times["ours"].append(t.seconds)
        ours = np.concatenate([
            np.concatenate([g["score_1"].to_numpy(), g["score_2"].to_numpy()])
            for _, g in table.groupby("attribute", sort=False)])
        for name, calls in (("per_column", per_column), ("per_file", per_file)):
            with Timer() as t:
                got = direct(calls)
            times[name].append(t.seconds)
            diffs.append(float(np.max(np.abs(ours - got))))
    med = {k: statistics.median(v) for k, v in times.items()}
    result = {
        "datasets": args.datasets, "files": len(rows), "rows": n_rows,
        "distinct_sentences": len(set(pairs["candidate_1"]) | set(pairs["candidate_2"]) | set(pairs["reference"])
                                  | set(pairs["reference_2"])),
        "seconds": times, "median": med,
        "speedup_vs_per_column": med["per_column"] / med["ours"], "speedup_vs_per_file": med["per_file"] / med["ours"],
        "max_abs_score_difference": max(diffs), "machine": machine(),
    }
    print(f"BERTScore-F, all-MiniLM-L6-v2 layer 6, {args.datasets}: {len(rows)} files, {n_rows} rows "
          f"({result['distinct_sentences']} distinct sentences)")
    for name, label in (("ours", "ours (metricbias)       "), ("per_column", "bert_score, per column  "),
                        ("per_file", "bert_score, per file    ")):
        print(f"  {label}: {med[name]:.2f} s  (runs: {', '.join(f'{x:.2f}' for x in times[name])})")
    print(f"  speedup {result['speedup_vs_per_column']:.2f}x vs per column, {result['speedup_vs_per_file']:.2f}x vs "
          f"per file; largest score difference {result['max_abs_score_difference']:.1e}")
    print(f"  machine: {result['machine']}; saved {save('bertscore-' + args.datasets.replace(',', '-'), result)}")


if __name__ == "__main__":
    main()
