"""Pseudo-log-likelihood bias measures for masked language models (Liu 2024, Eqs. 1, 12–14).

For a sentence pair (S_st, S_at) — the stereotypical and the anti-stereotypical
sentence — the tokens the two share are the *unmodified* tokens U and the rest
of each sentence its *modified* tokens M (found by aligning the two token-id
sequences with :class:`difflib.SequenceMatcher`, as CrowS-Pairs and Kaneko &
Bollegala's code do; special tokens such as [CLS] and [SEP] belong to neither).
Three score functions f:

* **SSS** (StereoSet score, Eq. 12): (1/|M|) Σ_{w∈M} log P(w | U), all of M masked at once;
* **CPS** (CrowS-Pairs score, Eq. 13): Σ_{w∈U} log P(w | U\\w, M), one unmodified token masked at a time;
* **AUL** (all unmasked likelihood, Eq. 14): (1/|S|) Σ_{w∈S} log P(w | S), nothing masked.

The bias of a model is then Liu's Eq. 2 (the percentage of pairs with
f(S_st) > f(S_at)) or KLS/JSS on the two sets of AUL scores (Eqs. 6, 9; Liu
computes them on AUL), per bias type and weighted over types (Eqs. 10–11).

Models are loaded through :mod:`metricbias.backbones` (a registered name or a
local folder); a checkpoint without a masked-LM head is refused. The offline masked
LMs are the heads trained here on the frozen encoders, ``mlm-all-MiniLM-L6-v2`` and
``mlm-all-mpnet-base-v2`` (:mod:`metricbias.trained.mlm_head`).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

import numpy as np
import pandas as pd

from . import distributional as dist

METHODS = ("aul", "cps", "sss")
PAIR_COLUMNS = ("stereotype", "anti_stereotype", "bias_type")


@dataclass
class MaskedLM:
    """A tokenizer and a masked LM in eval mode, with the device it runs on."""

    tokenizer: object
    model: object
    device: str
    name: str


def load_masked_lm(name_or_path: str, *, device: str = "auto") -> MaskedLM:
    """Load a masked LM by backbone name or local folder; a checkpoint with no MLM head is a BackboneError."""
    from .. import backbones

    backbones.offline_env()
    path = backbones.resolve(name_or_path)
    import torch

    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if backbones.is_trained_dir(path):  # a head trained here on a frozen encoder (mlm-all-MiniLM-L6-v2, ...)
        from ..trained import mlm_head

        tokenizer, model = mlm_head.load(str(path), device)
        return MaskedLM(tokenizer, model, device, str(name_or_path))
    from transformers import AutoModelForMaskedLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # the missing-head warning is turned into our own error below
    try:
        model, info = AutoModelForMaskedLM.from_pretrained(path, output_loading_info=True)
    finally:
        hf_logging.set_verbosity(verbosity)
    head = [k for k in info.get("missing_keys", [])
            if k.split(".")[0] in ("cls", "lm_head", "predictions", "generator_lm_head", "vocab_projector",
                                   "vocab_transform", "vocab_layer_norm")
            and not k.endswith("decoder.weight")]  # the decoder is tied to the input embeddings
    if head:
        raise backbones.BackboneError(
            f"backbone {name_or_path!r} ({path}) has no trained masked-LM head (missing {head[:3]}); "
            "PLL measures need a masked LM such as bert-base-cased or roberta-large")
    model.to(device).eval()
    return MaskedLM(AutoTokenizer.from_pretrained(path), model, device, str(name_or_path))


def _encode(lm: MaskedLM, sentence: str):
    enc = lm.tokenizer(sentence, return_special_tokens_mask=True)
    return np.asarray(enc["input_ids"]), np.asarray(enc["special_tokens_mask"], dtype=bool)


def split_tokens(ids_1, special_1, ids_2, special_2) -> tuple[dict, dict]:
    """Unmodified (shared) and modified positions of two token-id sequences: ({"U": [...], "M": [...]}, same)."""
    matcher = difflib.SequenceMatcher(None, [int(i) for i in ids_1], [int(i) for i in ids_2], autojunk=False)
    out_1, out_2 = {"U": [], "M": []}, {"U": [], "M": []}
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        kind = "U" if op == "equal" else "M"
        out_1[kind] += [i for i in range(a0, a1) if not special_1[i]]
        out_2[kind] += [i for i in range(b0, b1) if not special_2[i]]
    return out_1, out_2


def _log_probs(lm: MaskedLM, batch: np.ndarray):
    import torch

    with torch.no_grad():
        logits = lm.model(input_ids=torch.as_tensor(batch, device=lm.device)).logits
    return torch.log_softmax(logits.float(), dim=-1).cpu().numpy()


def aul(lm: MaskedLM, ids: np.ndarray, special: np.ndarray) -> float:
    """Eq. 14: mean log P(w | S) over the sentence's (non-special) tokens, nothing masked."""
    lp = _log_probs(lm, ids[None, :])[0]
    pos = np.flatnonzero(~special)
    return float(np.mean(lp[pos, ids[pos]]))


def cps(lm: MaskedLM, ids: np.ndarray, unmodified, *, batch_size: int = 64) -> float:
    """Eq. 13: Σ_{w∈U} log P(w | U\\w, M), masking one unmodified token at a time (batched)."""
    unmodified = list(unmodified)
    if not unmodified:
        return float("nan")
    total = 0.0
    for start in range(0, len(unmodified), batch_size):
        pos = np.asarray(unmodified[start:start + batch_size])
        batch = np.repeat(ids[None, :], pos.size, axis=0)
        batch[np.arange(pos.size), pos] = lm.tokenizer.mask_token_id
        lp = _log_probs(lm, batch)
        total += float(lp[np.arange(pos.size), pos, ids[pos]].sum())
    return total


def sss(lm: MaskedLM, ids: np.ndarray, modified) -> float:
    """Eq. 12: (1/|M|) Σ_{w∈M} log P(w | U), all modified tokens masked at once; NaN when M is empty."""
    pos = np.asarray(list(modified), dtype=int)
    if pos.size == 0:
        return float("nan")
    masked = ids.copy()
    masked[pos] = lm.tokenizer.mask_token_id
    lp = _log_probs(lm, masked[None, :])[0]
    return float(np.mean(lp[pos, ids[pos]]))


def check_pairs(pairs: pd.DataFrame) -> pd.DataFrame:
    missing = set(PAIR_COLUMNS) - set(pairs.columns)
    if missing:
        raise ValueError(f"sentence pairs lack column(s) {sorted(missing)}; need {list(PAIR_COLUMNS)}")
    for col in ("stereotype", "anti_stereotype"):
        empty = pairs.index[pairs[col].astype(str).str.strip() == ""].tolist()
        if empty:
            raise ValueError(f"sentence pairs: empty {col} in row(s) {empty[:5]}")
    return pairs


def crows_pairs() -> pd.DataFrame:
    """CrowS-Pairs as (stereotype, anti_stereotype, bias_type) pairs.

    For ``stereo`` rows the stereotypical sentence is ``sent_more``; for
    ``antistereo`` rows it is ``sent_less`` (Nangia et al.'s metric and Kaneko &
    Bollegala's data both read the rows this way).
    """
    from ..datasets import crows_pairs as cp

    rows = cp.read()
    return pd.DataFrame({
        "stereotype": [r["sent_more"] if r["direction"] == "stereo" else r["sent_less"] for r in rows],
        "anti_stereotype": [r["sent_less"] if r["direction"] == "stereo" else r["sent_more"] for r in rows],
        "bias_type": [r["bias_type"] for r in rows],
    }, index=pd.Index([r["id"] for r in rows], name="id"))


def stereoset() -> pd.DataFrame:
    """StereoSet intrasentence (dev) as (stereotype, anti_stereotype, bias_type) pairs."""
    from ..datasets import stereoset as ss

    rows = ss.read()
    return pd.DataFrame({k: [r[k] for r in rows] for k in PAIR_COLUMNS},
                        index=pd.Index([r["id"] for r in rows], name="id"))


def score_pairs(lm: MaskedLM, pairs: pd.DataFrame, methods=METHODS, *, progress: bool = False) -> pd.DataFrame:
    """f(S_st) and f(S_at) for every pair and method: columns ``bias_type, method, score_st, score_at``."""
    check_pairs(pairs)
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise ValueError(f"unknown PLL method(s) {unknown}; known: {', '.join(METHODS)}")
    rows = pairs.itertuples(index=True)
    if progress:
        from tqdm.auto import tqdm

        rows = tqdm(rows, total=len(pairs), desc=f"PLL ({lm.name})")
    out = []
    for row in rows:
        ids_st, sp_st = _encode(lm, row.stereotype)
        ids_at, sp_at = _encode(lm, row.anti_stereotype)
        tok_st, tok_at = split_tokens(ids_st, sp_st, ids_at, sp_at)
        for m in methods:
            if m == "aul":
                a, b = aul(lm, ids_st, sp_st), aul(lm, ids_at, sp_at)
            elif m == "cps":
                a, b = cps(lm, ids_st, tok_st["U"]), cps(lm, ids_at, tok_at["U"])
            else:
                a, b = sss(lm, ids_st, tok_st["M"]), sss(lm, ids_at, tok_at["M"])
            out.append({"pair": row.Index, "bias_type": row.bias_type, "method": m, "score_st": a, "score_at": b})
    return pd.DataFrame(out)


def bias_table(scores: pd.DataFrame) -> pd.DataFrame:
    """Liu's measures per method and bias type, plus ``all`` (pooled indicator; Eqs. 10–11 for KLS and JSS).

    ``indicator`` is Liu's Eq. 2 for every method; ``kls``/``jss`` are computed on
    the raw PLL scores of each method (Liu reports them on AUL). Pairs whose
    score is undefined (SSS with no modified token) are dropped and counted.
    """
    rows = []
    for method, block in scores.groupby("method", sort=False):
        ok = block[np.isfinite(block["score_st"]) & np.isfinite(block["score_at"])]
        per_type = []
        for bias_type, g in ok.groupby("bias_type", sort=True):
            row = {"method": method, "bias_type": bias_type, "n_pairs": len(g),
                   "indicator": dist.indicator_score(g["score_st"], g["score_at"])}
            try:
                p = dist.fit_gaussian(g["score_st"], label=f"{method} {bias_type} stereotypical")
                q = dist.fit_gaussian(g["score_at"], label=f"{method} {bias_type} anti-stereotypical")
                row.update(kls=dist.kls(p, q), jss=dist.jss(p, q))
            except ValueError:  # fewer than 2 pairs or constant scores
                row.update(kls=np.nan, jss=np.nan)
            per_type.append(row)
        t = pd.DataFrame(per_type)
        fine = t.dropna(subset=["kls", "jss"])
        overall = {"method": method, "bias_type": "all", "n_pairs": len(ok),
                   "indicator": dist.indicator_score(ok["score_st"], ok["score_at"]) if len(ok) else np.nan,
                   "kls": dist.weighted(fine["kls"], fine["n_pairs"]) if len(fine) else np.nan,
                   "jss": dist.weighted(fine["jss"], fine["n_pairs"]) if len(fine) else np.nan,
                   "n_dropped": len(block) - len(ok)}
        rows += per_type + [overall]
    return pd.DataFrame(rows)


__all__ = ["METHODS", "MaskedLM", "aul", "bias_table", "check_pairs", "cps", "crows_pairs", "load_masked_lm",
           "score_pairs", "split_tokens", "sss", "stereoset"]
