"""PLL measures (SSS, CPS, AUL) on CrowS-Pairs and StereoSet: ours vs a straightforward per-sentence loop.

The straightforward version does what Nangia et al.'s and Kaneko & Bollegala's code do: for
each sentence of each pair, one model call per masked copy (CPS: one copy per shared token;
SSS: the modified tokens masked at once; AUL: the sentence unmasked), full vocabulary logits
at every position, log-softmax, read the target token. Ours (``metricbias.bias.pll.score_sentence_pairs``)
collects every masked copy of every pair, encodes each distinct one once in length-sorted
padded batches, and runs the masked-LM head only at the positions read. Both get the loaded
model; the score cache is off. Scores agree to float precision (the maximum difference is
printed).

    .venv/bin/python benchmarks/bench_pll.py [--models mlm-all-MiniLM-L6-v2,mlm-all-mpnet-base-v2] [--pairs 100]
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
from _common import Timer, machine, save


def per_sentence(lm, pairs: pd.DataFrame, methods) -> pd.DataFrame:
    """The straightforward loop: one model call per masked copy of one sentence."""
    import torch

    from metricbias.bias import pll

    def log_probs(ids):
        with torch.no_grad():
            return torch.log_softmax(lm.model(input_ids=torch.as_tensor(ids)[None]).logits[0].float(), -1).numpy()

    def masked(ids, positions):
        out = ids.copy()
        out[list(positions)] = lm.tokenizer.mask_token_id
        return out

    def score(method, ids, special, tokens):
        if method == "aul":
            lp, pos = log_probs(ids), np.flatnonzero(~special)
            return float(np.mean(lp[pos, ids[pos]]))
        if method == "sss":
            pos = tokens["M"]
            return float(np.mean([log_probs(masked(ids, pos))[p, ids[p]] for p in pos])) if pos else np.nan
        return float(sum(log_probs(masked(ids, [p]))[p, ids[p]] for p in tokens["U"])) if tokens["U"] else np.nan

    rows = []
    for row in pairs.itertuples():
        ids_st, sp_st = pll.encode(lm, row.stereotype)
        ids_at, sp_at = pll.encode(lm, row.anti_stereotype)
        t_st, t_at = pll.split_tokens(ids_st, sp_st, ids_at, sp_at)
        for m in methods:
            rows.append({"pair": row.Index, "bias_type": row.bias_type, "method": m,
                         "score_st": score(m, ids_st, sp_st, t_st), "score_at": score(m, ids_at, sp_at, t_at)})
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default="mlm-all-MiniLM-L6-v2,mlm-all-mpnet-base-v2")
    parser.add_argument("--pairs", type=int, default=100, help="pairs drawn from each dataset (seed 0; 0: all)")
    args = parser.parse_args()

    from metricbias.bias import pll

    results = {"machine": machine(), "pairs": args.pairs, "runs": []}
    for name in args.models.split(","):
        lm = pll.load_masked_lm(name, device="cpu")
        for dataset, methods in pll.RUNS.items():
            pairs = getattr(pll, dataset)()
            if args.pairs:
                pairs = pairs.sample(n=min(args.pairs, len(pairs)), random_state=0)
            with Timer() as ref:
                a = per_sentence(lm, pairs, methods)
            with Timer() as ours:
                b = pll.score_sentence_pairs(lm, pairs, methods=methods, cache=None)
            diff = float(np.nanmax(np.abs(a[["score_st", "score_at"]].to_numpy() - b[["score_st", "score_at"]].to_numpy())))
            run = {"model": name, "dataset": dataset, "pairs": len(pairs), "per_sentence_s": round(ref.seconds, 2),
                   "ours_s": round(ours.seconds, 2), "speedup": round(ref.seconds / ours.seconds, 2),
                   "max_abs_difference": diff}
            results["runs"].append(run)
            print(f"{name:24s} {dataset:12s} {len(pairs):5d} pairs  per sentence {ref.seconds:7.1f} s  "
                  f"ours {ours.seconds:6.1f} s  x{ref.seconds / ours.seconds:.2f}  max |diff| {diff:.1e}", flush=True)
    print("saved", save("pll", results))


if __name__ == "__main__":
    main()
