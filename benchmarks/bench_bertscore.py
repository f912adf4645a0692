"""BERTScore on the six released datasets: ours vs calling ``bert_score.score`` directly.

Same backbone (all-MiniLM-L6-v2), same layer (6), no idf, CPU. Two direct ways:

* **per column**: for each dataset, ``bert_score.score(candidates_1, references)`` and
  ``bert_score.score(candidates_2, references)`` - the plain way to score paired candidates;
  each call loads the model, and each pair's reference is embedded twice;
* **per file**: one call per dataset over both candidates' rows (how the released scores
  were computed, one file at a time); bert-score itself then embeds each distinct
  sentence of the file once, so only the model loads differ from ours.

Ours scores all six through ``metricbias.scoring.score_pairs`` without the score cache and
without the disk embedding cache (cold): the model is loaded once, every distinct sentence
is embedded once (the reference shared by a pair's two candidates, texts shared across
datasets), and the greedy matching is bert-score's own ``greedy_cos_idf``. Also timed:

* **floor**: the encoder's forward pass alone over the distinct sentences, in our batches
  (length-sorted, ``batch_size`` 64, the size both sides use); model load and tokenization
  excluded. Every implementation's time is reported as a ratio to it;
* **ours, embeddings on disk**: ours again in a fresh process state (model reloaded, memory
  cleared) with the disk embedding cache filled by an earlier run, as a later chapter or
  rerun finds it.

All run in this one process, in turn, ``--repeats`` times; medians are reported. ``--datasets published,built`` adds chapter 2's
datasets (chapter 3's workload): their WinoBias and CrowS-Pairs sentences overlap the
released ones, which ours embeds once.

    .venv/bin/python benchmarks/bench_bertscore.py [--repeats 3] [--datasets published,built]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
from pathlib import Path

import numpy as np
from _common import Timer, dataset_rows, machine, save


def pd_texts(pairs):
    return [t for col in ("candidate_1", "candidate_2", "reference_1", "reference_2") for t in pairs[col]]


def bert_score_calls(calls, path: str, device: str) -> np.ndarray:
    """F of ``bert_score.score`` once per (candidates, references) call, each call loading the model (layer 6, no idf)."""
    import bert_score

    out = []
    for cands, refs in calls:
        _, _, f = bert_score.score(cands, refs, model_type=path, num_layers=6, idf=False, device=device, batch_size=64)
        out.append(f.numpy())
    return np.concatenate(out)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--datasets", default="published")
    parser.add_argument("--attributes", default=None, help="comma-separated subset (default: all)")
    args = parser.parse_args()

    import bert_score
    import torch  # noqa: F401  (imports are not part of either timing)

    from metricbias import backbones, metrics, models, scoring

    models.PERSIST_EMBEDDINGS = False  # cold unless a row says otherwise
    disk = tempfile.TemporaryDirectory(prefix="metricbias-bench-")
    path = str(backbones.resolve("all-MiniLM-L6-v2"))
    pairs, rows = dataset_rows(args.datasets.split(","), args.attributes.split(",") if args.attributes else None)
    n_rows = sum(len(c) for _, c, _ in rows)

    per_column = []
    for _, c, r in rows:
        n = len(c) // 2
        per_column += [(c[:n], r[:n]), (c[n:], r[n:])]
    per_file = [(c, r) for _, c, r in rows]
    distinct = list(dict.fromkeys(pd_texts(pairs)))
    times = {"ours": [], "per_column": [], "per_file": [], "floor": [], "ours_disk_embeddings": []}
    diffs = []

    def ours_once():
        models.clear()  # model load and embeddings are part of our time
        with Timer() as t:
            metric = metrics.get("bertscore", backbone="all-MiniLM-L6-v2", layer=6, device="cpu")
            table = scoring.score_pairs(pairs, metric, cache=None)
        return table, t.seconds

    for _ in range(args.repeats):
        table, seconds = ours_once()
        times["ours"].append(seconds)
        ours = np.concatenate([
            np.concatenate([g["score_1"].to_numpy(), g["score_2"].to_numpy()])
            for _, g in table.groupby("attribute", sort=False)])
        for name, calls in (("per_column", per_column), ("per_file", per_file)):
            with Timer() as t:
                got = bert_score_calls(calls, path, "cpu")
            times[name].append(t.seconds)
            diffs.append(float(np.max(np.abs(ours - got))))
        models.clear()
        encoder = models.load_encoder("all-MiniLM-L6-v2", "cpu")
        ids = encoder.encode_many(distinct)
        with Timer() as t:
            encoder.embed(ids, 6, batch_size=64)
        times["floor"].append(t.seconds)
        models.PERSIST_EMBEDDINGS = True
        os.environ["METRICBIAS_CACHE"] = disk.name
        if not times["ours_disk_embeddings"]:
            ours_once()  # fills the disk cache (untimed)
        times["ours_disk_embeddings"].append(ours_once()[1])
        models.PERSIST_EMBEDDINGS = False
    disk_bytes = sum(f.stat().st_size for f in Path(disk.name).rglob("*.sqlite*"))
    disk.cleanup()
    med = {k: statistics.median(v) for k, v in times.items()}
    result = {
        "datasets": args.datasets, "files": len(rows), "rows": n_rows,
        "distinct_sentences": len(distinct),
        "per_file_distinct_sentences": sum(len(set(c + r)) for _, c, r in rows),  # what per-file calls encode
        "seconds": times, "median": med,
        "speedup_vs_per_column": med["per_column"] / med["ours"], "speedup_vs_per_file": med["per_file"] / med["ours"],
        "over_floor": {k: med[k] / med["floor"] for k in med}, "embedding_cache_bytes": disk_bytes,
        "max_abs_score_difference": max(diffs), "machine": machine(),
    }
    print(f"BERTScore-F, all-MiniLM-L6-v2 layer 6, {args.datasets}: {len(rows)} files, {n_rows} rows "
          f"({result['distinct_sentences']} distinct sentences)")
    for name, label in (("ours", "ours (metricbias), cold "), ("per_column", "bert_score, per column  "),
                        ("per_file", "bert_score, per file    "), ("floor", "floor (forward pass)    "),
                        ("ours_disk_embeddings", "ours, embeddings on disk")):
        print(f"  {label}: {med[name]:.2f} s = {result['over_floor'][name]:.2f}x floor  "
              f"(runs: {', '.join(f'{x:.2f}' for x in times[name])})")
    print(f"  disk embedding cache of these sentences (layer 6): {disk_bytes / 1e6:.1f} MB")
    print(f"  speedup {result['speedup_vs_per_column']:.2f}x vs per column, {result['speedup_vs_per_file']:.2f}x vs "
          f"per file; largest score difference {result['max_abs_score_difference']:.1e}")
    print(f"  machine: {result['machine']}; saved {save('bertscore-' + args.datasets.replace(',', '-'), result)}")


if __name__ == "__main__":
    main()
