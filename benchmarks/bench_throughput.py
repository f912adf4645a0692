"""Pairs per second of four model-based metrics on one device, each beside its reference implementation.

One workload, the released and built pairs (both candidates of every pair, each against its own reference: a
"pair" below is one candidate scored against its reference), one device (``--device cuda`` on a GPU), in turn:

* **BERTScore** (all-MiniLM-L6-v2, layer 6, no idf): ours (``score_pairs``, cold: model load included) against
  ``bert_score.score`` called once per file, each call loading the model (:func:`bench_bertscore.bert_score_calls`);
* **MoverScore** (1-gram, idf, last layer): ours against the authors' per-pair algorithm as
  ``bench_moverscore.per_pair`` runs it (the model already loaded, one forward pass per sentence of each pair, one
  EMD per pair on the joint distance matrix); with ``--reference-limit N`` it is timed on the first files of the
  workload that hold N pairs, its time scaled to the whole workload (its cost is about the same for every pair);
* **regression** (``stsb-all-MiniLM-L6-v2``): ours against the model's forward pass alone over the same distinct
  (reference, candidate) inputs, tokenized beforehand, in length-sorted batches of 128 (the metric's batch size);
* **BARTScore-F** on the MiniLM paraphraser: ours (both directions, pairs that share a source packed into one
  row) against the encoder's forward pass alone over one ``[CLS] source [SEP] target [SEP]`` row per distinct
  directed pair, in length-sorted batches of 32 (the metric's batch size).

The floors exclude model loads and tokenization; every other side includes what it does. A warm-up on 64 pairs
(untimed) comes first, so CUDA's start-up is in no timing. Medians over ``--repeats``.

    python benchmarks/bench_throughput.py --device cuda [--repeats 2] [--datasets published,built]
"""

from __future__ import annotations

import argparse
import statistics

import numpy as np
from _common import Timer, dataset_rows, files_of, machine, save
from bench_bertscore import bert_score_calls
from bench_moverscore import per_pair


def _sync(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def _ours(pairs, name: str, options: dict, device: str):
    """(seconds, scores in file order) of ``score_pairs`` with a cold model cache and no score cache."""
    from metricbias import metrics, models, scoring

    models.clear()
    with Timer() as t:
        table = scoring.score_pairs(pairs, metrics.get(name, **options, device=device), cache=None)
        _sync(device)
    scores = np.concatenate([np.concatenate([g["score_1"].to_numpy(), g["score_2"].to_numpy()])
                             for _, g in table.groupby("attribute", sort=False)])
    return t.seconds, scores


def _batched_forward(rows: list[dict], batch_size: int, forward, device: str) -> float:
    """Seconds of ``forward(batch)`` over tokenized ``rows`` (dicts of id lists), length-sorted, padded per batch."""
    import torch

    order = sorted(range(len(rows)), key=lambda i: len(rows[i]["input_ids"]))
    batches = []
    for k in range(0, len(order), batch_size):
        chunk = [rows[i] for i in order[k:k + batch_size]]
        width = max(len(r["input_ids"]) for r in chunk)
        batch = {key: torch.tensor([r[key] + [0] * (width - len(r[key])) for r in chunk], device=device)
                 for key in chunk[0]}
        batches.append(batch)
    _sync(device)
    with Timer() as t, torch.inference_mode():
        for batch in batches:
            forward(batch)
        _sync(device)
    return t.seconds


def bertscore(pairs, files, device: str) -> dict:
    from metricbias import backbones, models

    path = str(backbones.resolve("all-MiniLM-L6-v2"))
    ours_s, ours = _ours(pairs, "bertscore", {"backbone": "all-MiniLM-L6-v2", "layer": 6}, device)
    with Timer() as t:
        ref = bert_score_calls([(c, r) for _, c, r in files], path, device)
        _sync(device)
    models.clear()  # the floor encodes every sentence (ours filled the in-memory embedding cache)
    encoder = models.load_encoder("all-MiniLM-L6-v2", device)
    ids = encoder.encode_many(list(dict.fromkeys(s for _, c, r in files for s in c + r)))
    _sync(device)
    with Timer() as floor:
        encoder.embed(ids, 6, batch_size=64)
        _sync(device)
    return {"ours": ours_s, "reference": t.seconds, "floor": floor.seconds,
            "reference_name": "bert_score.score, one call per file", "max_abs_difference": float(np.abs(ours - ref).max())}


def moverscore(pairs, files, device: str, limit: int = 0) -> dict:
    """The per-pair reference scores whole files, the first ones of the workload that hold ``limit`` pairs (0: all)."""
    from metricbias import models

    ours_s, ours = _ours(pairs, "moverscore", {"backbone": "all-MiniLM-L6-v2"}, device)
    encoder = models.load_encoder("all-MiniLM-L6-v2", device)
    sizes = np.array([len(c) for _, c, _ in files])
    taken = int(np.searchsorted(np.cumsum(sizes), limit) + 1) if limit else len(files)
    with Timer() as t:
        ref = np.concatenate([per_pair(encoder, encoder.num_layers, c, r) for _, c, r in files[:taken]])
    return {"ours": ours_s, "reference": t.seconds * len(ours) / len(ref), "reference_pairs_timed": len(ref),
            "reference_name": "moverscore_v2's algorithm, pair by pair",
            "max_abs_difference": float(np.abs(ours[:len(ref)] - ref).max())}


def regression(pairs, files, device: str) -> dict:
    from metricbias.metrics import regression as reg

    ours_s, _ = _ours(pairs, "regression", {"backbone": "stsb-all-MiniLM-L6-v2"}, device)
    tokenizer, model, config = reg.load("stsb-all-MiniLM-L6-v2", device)
    distinct = list(dict.fromkeys((r, c) for _, cs, rs in files for c, r in zip(cs, rs)))
    enc = tokenizer([r for r, _ in distinct], [c for _, c in distinct], truncation=True,
                    max_length=int(config["max_length"]))
    rows = [{k: enc[k][i] for k in enc} for i in range(len(distinct))]
    floor = _batched_forward(rows, 128, lambda b: model(**b), device)
    return {"ours": ours_s, "floor": floor, "distinct_inputs": len(distinct)}


def bartscore(pairs, files, device: str) -> dict:
    from metricbias.trained import paraphraser

    ours_s, _ = _ours(pairs, "bartscore", {"backbone": "para-all-MiniLM-L6-v2"}, device)
    para = paraphraser.load("para-all-MiniLM-L6-v2", device)
    directed = list(dict.fromkeys(d for _, cs, rs in files for c, r in zip(cs, rs) for d in ((r, c), (c, r))))
    rows = [{"input_ids": s + t, "attention_mask": [1] * (len(s) + len(t))}
            for s, t in para.encode([s for s, _ in directed], [t for _, t in directed])]
    floor = _batched_forward(rows, 32, lambda b: para.model.base_model(**b), device)
    return {"ours": ours_s, "floor": floor, "distinct_directed_pairs": len(directed)}


METRICS = {"BERTScore-MiniLM": bertscore, "MoverScore-MiniLM": moverscore, "Regression-MiniLM": regression,
           "BARTScore-MiniLM-F": bartscore}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--datasets", default="published,built")
    parser.add_argument("--metrics", default=",".join(METRICS))
    parser.add_argument("--attributes", default=None, help="comma-separated subset (default: all)")
    parser.add_argument("--reference-limit", type=int, default=0,
                        help="MoverScore's per-pair reference: time the first files holding N pairs, scale to all (0: all)")
    args = parser.parse_args()

    import bert_score  # noqa: F401  (imports are not part of any timing)
    import ot  # noqa: F401
    import torch

    from metricbias import models

    models.PERSIST_EMBEDDINGS = False
    pairs, files = dataset_rows(args.datasets.split(","), args.attributes.split(",") if args.attributes else None)
    n = sum(len(c) for _, c, _ in files)
    names = args.metrics.split(",")
    warm_pairs = pairs.head(64)
    warm_files = files_of(warm_pairs)
    for name in names:  # CUDA context, kernels and allocator warmed up (untimed)
        METRICS[name](warm_pairs, warm_files, args.device)
    device_name = torch.cuda.get_device_name() if args.device.startswith("cuda") else "CPU"
    result = {"device": device_name, "datasets": args.datasets, "pairs": n, "metrics": {}, "machine": machine(),
              "versions": {"torch": torch.__version__}}
    print(f"{n:,} (candidate, reference) pairs of {args.datasets} on {device_name}")
    for name in names:
        extra = {"limit": args.reference_limit} if name == "MoverScore-MiniLM" else {}
        runs = [METRICS[name](pairs, files, args.device, **extra) for _ in range(args.repeats)]
        med = {k: statistics.median(r[k] for r in runs) for k, v in runs[0].items() if isinstance(v, float)}
        row = {**runs[0], **med, "runs": runs}
        row["pairs_per_second"] = {k: n / row[k] for k in ("ours", "reference", "floor") if k in row}
        for k in ("reference", "floor"):
            if k in row:
                row[f"ours_over_{k}"] = row["ours"] / row[k]
        result["metrics"][name] = row
        print(f"  {name}: " + ", ".join(f"{k} {v:,.0f} pairs/s" for k, v in row["pairs_per_second"].items())
              + (f"; largest difference {row['max_abs_difference']:.1e}" if "max_abs_difference" in row else ""))
    print(f"  saved {save('throughput-' + args.device.replace(':', ''), result)}")


if __name__ == "__main__":
    main()
