"""MoverScore on the six released datasets: ours vs a straightforward per-pair implementation.

Same backbone (all-MiniLM-L6-v2, last layer), same recipe (idf per dataset for
candidates and for references, punctuation and word pieces dropped, unit vectors,
Euclidean cost, exact EMD with POT, score = 1 / (1 + EMD)). The straightforward version
does what the authors' code does, one pair at a time: encode the reference and the
candidate, zero the dropped tokens, build the joint (n+m) x (n+m) distance matrix and
solve the EMD on it. It gets the already-loaded model for free. Ours is timed three times:

* **cold**: model load included, no embedding cache (memory or disk); each distinct
  sentence encoded once, in length-sorted batches; each distinct pair's EMD solved on the
  n x m cross-distance matrix;
* **after BERTScore**: as the offline suite runs it, BERTScore on the same backbone and
  layer has already filled the encoder's in-memory embedding cache, so MoverScore adds only
  its idf weights and transport problems;
* **embeddings on disk**: model reloaded and memory cleared, the disk embedding cache
  filled by an earlier run (a later chapter, a rerun, another process).

The **floor** is the encoder's forward pass alone over the distinct sentences, one call
per dataset as ours makes them (length-sorted batches of 64); every time is also given
as a ratio to it.

    .venv/bin/python benchmarks/bench_moverscore.py [--repeats 3] [--attributes a,b]
"""

from __future__ import annotations

import argparse
import os
import statistics
import string
import tempfile

import numpy as np
from _common import Timer, machine, published_rows, save


def per_pair(encoder, layer: int, candidates, references, limit: int | None = None) -> np.ndarray:
    """MoverScore pair by pair (the straightforward implementation); the first ``limit`` pairs, idf from all."""
    import ot
    import torch
    from bert_score.utils import get_idf_dict, sent_encode

    tok, model = encoder.tokenizer, encoder.model
    idf_ref, idf_hyp = get_idf_dict(references, tok, nthreads=0), get_idf_dict(candidates, tok, nthreads=0)
    punct = set(string.punctuation)

    def bag(text, idf):
        ids = sent_encode(tok, text)
        with torch.no_grad():
            h = model(torch.tensor([ids], device=model.device),
                      output_hidden_states=True).hidden_states[layer][0].double().cpu()
        w = torch.tensor([float(idf[i]) for i in ids], dtype=torch.float64)
        drop = [k for k, t in enumerate(tok.convert_ids_to_tokens(ids)) if t in punct or t.startswith("##")]
        h[drop] = 0
        w[drop] = 0
        return h, w

    out = []
    for cand, ref in list(zip(candidates, references))[:limit]:
        (hr, wr), (hc, wc) = bag(ref, idf_ref), bag(cand, idf_hyp)
        raw = torch.cat([hr, hc])
        raw = raw / (raw.norm(dim=-1, keepdim=True) + 1e-30)
        dist = torch.cdist(raw, raw).numpy()
        c1, c2 = np.zeros(len(raw)), np.zeros(len(raw))
        c1[:len(hr)], c2[len(hr):] = wr.numpy(), wc.numpy()
        out.append(1.0 / (1.0 + ot.emd2(c1 / c1.sum(), c2 / c2.sum(), dist)))
    return np.array(out)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--attributes", default=None)
    args = parser.parse_args()

    import ot  # noqa: F401  (imports are not part of either timing)
    import torch  # noqa: F401

    from metricbias import datasets, metrics, models, scoring

    models.PERSIST_EMBEDDINGS = False  # cold unless a row says otherwise
    disk = tempfile.TemporaryDirectory(prefix="metricbias-bench-")
    attributes = args.attributes.split(",") if args.attributes else None
    rows = published_rows(attributes)
    pairs = datasets.load("published", attributes)
    n_rows = sum(len(c) for _, c, _ in rows)
    ours_t, warm_t, direct_t, floor_t, disk_t, diffs = [], [], [], [], [], []

    def ours_once():
        models.clear()
        with Timer() as t:
            metric = metrics.get("moverscore", backbone="all-MiniLM-L6-v2", device="cpu")
            table = scoring.score_pairs(pairs, metric, cache=None)
        return table, t.seconds

    for _ in range(args.repeats):
        table, seconds = ours_once()
        ours_t.append(seconds)
        models.clear()
        scoring.score_pairs(pairs, metrics.get("bertscore", backbone="all-MiniLM-L6-v2", layer=6, device="cpu"),
                            cache=None)
        with Timer() as t:
            scoring.score_pairs(pairs, metrics.get("moverscore", backbone="all-MiniLM-L6-v2", device="cpu"),
                                cache=None)
        warm_t.append(t.seconds)
        encoder = models.load_encoder("all-MiniLM-L6-v2", "cpu")
        with Timer() as t:
            direct = [per_pair(encoder, encoder.num_layers, cands, refs) for _, cands, refs in rows]
        direct_t.append(t.seconds)
        ours = np.concatenate([
            np.concatenate([g["score_1"].to_numpy(), g["score_2"].to_numpy()])
            for _, g in table.groupby("attribute", sort=False)])
        diffs.append(float(np.max(np.abs(ours - np.concatenate(direct)))))
        models.clear()
        encoder = models.load_encoder("all-MiniLM-L6-v2", "cpu")
        per_file_ids = [encoder.encode_many(list(dict.fromkeys(c + r))) for _, c, r in rows]
        with Timer() as t:
            for ids in per_file_ids:
                encoder.embed(ids, encoder.num_layers, batch_size=64)
        floor_t.append(t.seconds)
        models.PERSIST_EMBEDDINGS = True
        os.environ["METRICBIAS_CACHE"] = disk.name
        if not disk_t:
            ours_once()  # fills the disk cache (untimed)
        disk_t.append(ours_once()[1])
        models.PERSIST_EMBEDDINGS = False
    disk.cleanup()
    floor = statistics.median(floor_t)
    result = {
        "rows": n_rows, "ours_seconds": ours_t, "after_bertscore_seconds": warm_t, "direct_seconds": direct_t,
        "ours_median": statistics.median(ours_t), "after_bertscore_median": statistics.median(warm_t),
        "direct_median": statistics.median(direct_t), "floor_seconds": floor_t, "floor_median": floor,
        "disk_embeddings_seconds": disk_t, "disk_embeddings_median": statistics.median(disk_t),
        "over_floor": {"ours": statistics.median(ours_t) / floor, "after_bertscore": statistics.median(warm_t) / floor,
                       "direct": statistics.median(direct_t) / floor,
                       "disk_embeddings": statistics.median(disk_t) / floor},
        "speedup": statistics.median(direct_t) / statistics.median(ours_t),
        "speedup_after_bertscore": statistics.median(direct_t) / statistics.median(warm_t),
        "max_abs_score_difference": max(diffs), "machine": machine(),
    }
    print(f"MoverScore (1-gram, idf), all-MiniLM-L6-v2 last layer, {n_rows} rows")
    for label, key, runs in (("ours, cold           ", "ours", ours_t),
                             ("ours, after BERTScore", "after_bertscore", warm_t),
                             ("ours, disk embeddings", "disk_embeddings", disk_t),
                             ("per pair (reference) ", "direct", direct_t)):
        print(f"  {label}: {statistics.median(runs):.2f} s = {result['over_floor'][key]:.2f}x floor  "
              f"(runs: {', '.join(f'{x:.2f}' for x in runs)})")
    print(f"  floor (forward pass) : {floor:.2f} s  (runs: {', '.join(f'{x:.2f}' for x in floor_t)})")
    print(f"  speedup {result['speedup']:.2f}x cold, {result['speedup_after_bertscore']:.2f}x after BERTScore; "
          f"largest score difference {result['max_abs_score_difference']:.1e}")
    print(f"  machine: {result['machine']}; saved {save('moverscore', result)}")


if __name__ == "__main__":
    main()
