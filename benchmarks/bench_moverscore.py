"""MoverScore on the six released datasets: ours vs a straightforward per-pair implementation.

Same backbone (all-MiniLM-L6-v2, last layer), same recipe (idf per dataset for
candidates and for references, punctuation and word pieces dropped, unit vectors,
Euclidean cost, exact EMD with POT, score = 1 / (1 + EMD)). The straightforward version
does what the authors' code does, one pair at a time: encode the reference and the
candidate, zero the dropped tokens, build the joint (n+m) x (n+m) distance matrix and
solve the EMD on it. It gets the already-loaded model for free. Ours is timed twice:

* **cold**: model load included; each distinct sentence encoded once, in length-sorted
  batches; each distinct pair's EMD solved on the n x m cross-distance matrix;
* **after BERTScore**: as the offline suite runs it, BERTScore on the same backbone and
  layer has already filled the encoder's embedding cache, so MoverScore adds only its
  idf weights and transport problems.

    .venv/bin/python benchmarks/bench_moverscore.py [--repeats 3] [--attributes a,b]
"""

from __future__ import annotations

import argparse
import statistics
import string

import numpy as np
from _common import Timer, machine, published_rows, save


def per_pair(encoder, layer: int, candidates, references) -> np.ndarray:
    """MoverScore pair by pair (the straightforward implementation)."""
    import ot
    import torch
    from bert_score.utils import get_idf_dict, sent_encode

    tok, model = encoder.tokenizer, encoder.model
    idf_ref, idf_hyp = get_idf_dict(references, tok, nthreads=0), get_idf_dict(candidates, tok, nthreads=0)
    punct = set(string.punctuation)

    def bag(text, idf):
        ids = sent_encode(tok, text)
        with torch.no_grad():
            h = model(torch.tensor([ids]), output_hidden_states=True).hidden_states[layer][0].double()
        w = torch.tensor([float(idf[i]) for i in ids], dtype=torch.float64)
        drop = [k for k, t in enumerate(tok.convert_ids_to_tokens(ids)) if t in punct or t.startswith("##")]
        h[drop] = 0
        w[drop] = 0
        return h, w

    out = []
    for cand, ref in zip(candidates, references):
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

    from metricbias import metrics, models, scoring

    attributes = args.attributes.split(",") if args.attributes else None
    rows = published_rows(attributes)
    pairs = scoring.load_pairs("published", attributes)
    n_rows = sum(len(c) for _, c, _ in rows)
    ours_t, warm_t, direct_t, diffs = [], [], [], []
    for _ in range(args.repeats):
        models.clear()
        with Timer() as t:
            metric = metrics.get("moverscore", backbone="all-MiniLM-L6-v2", device="cpu")
            table = scoring.score_pairs(pairs, metric, cache=None)
        ours_t.append(t.seconds)
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
    result = {
        "rows": n_rows, "ours_seconds": ours_t, "after_bertscore_seconds": warm_t, "direct_seconds": direct_t,
        "ours_median": statistics.median(ours_t), "after_bertscore_median": statistics.median(warm_t),
        "direct_median": statistics.median(direct_t),
        "speedup": statistics.median(direct_t) / statistics.median(ours_t),
        "speedup_after_bertscore": statistics.median(direct_t) / statistics.median(warm_t),
        "max_abs_score_difference": max(diffs), "machine": machine(),
    }
    print(f"MoverScore (1-gram, idf), all-MiniLM-L6-v2 last layer, {n_rows} rows")
    print(f"  ours, cold           : {result['ours_median']:.2f} s  (runs: {', '.join(f'{x:.2f}' for x in ours_t)})")
    print(f"  ours, after BERTScore: {result['after_bertscore_median']:.2f} s  "
          f"(runs: {', '.join(f'{x:.2f}' for x in warm_t)})")
    runs = ", ".join(f"{x:.2f}" for x in direct_t)
    print(f"  per pair (reference) : {result['direct_median']:.2f} s  (runs: {runs})")
    print(f"  speedup {result['speedup']:.2f}x cold, {result['speedup_after_bertscore']:.2f}x after BERTScore; "
          f"largest score difference {result['max_abs_score_difference']:.1e}")
    print(f"  machine: {result['machine']}; saved {save('moverscore', result)}")


if __name__ == "__main__":
    main()
