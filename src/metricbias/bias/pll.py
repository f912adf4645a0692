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
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..jobs import log_records
from . import distributional as dist

METHODS = ("aul", "cps", "sss")
#: the pair sets of Liu's Table 2 (loaders of this module) and the score functions measured on each
RUNS = {"stereoset": ("sss", "aul"), "crows_pairs": ("cps", "aul")}
#: a sentence pair (Liu's S_st, S_at), not a candidate pair of ``datasets.schema``
SENTENCE_PAIR_COLUMNS = ("stereotype", "anti_stereotype", "bias_type")


@dataclass
class MaskedLM:
    """A tokenizer and a masked LM in eval mode, with the device it runs on."""

    tokenizer: object
    model: object
    device: str
    name: str
    fingerprint: str = ""  # of the weights; empty: PLL scores are not cached


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
        return MaskedLM(tokenizer, model, device, str(name_or_path), weights_fingerprint(path))
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
    return MaskedLM(AutoTokenizer.from_pretrained(path), model, device, str(name_or_path), weights_fingerprint(path))


def weights_fingerprint(path) -> str:
    """What a masked LM's scores depend on, as a short hash: a trained head's parts and base, else the folder."""
    from .. import backbones

    if backbones.is_trained_dir(path):
        from ..trained import parts

        return parts.scores_fingerprint(path)
    return backbones.fingerprint_path(path)


def encode(lm: MaskedLM, sentence: str):
    """A sentence's token ids and which of them are special tokens ([CLS], [SEP])."""
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


#: the revision of how PLL scores are computed, in their cache signatures
REVISION = 2
#: tokens (padded length x rows) per forward pass
BATCH_TOKENS = 4096


def _head(model):
    """The masked-LM head module of a transformers ``*ForMaskedLM`` model (BERT ``cls``, RoBERTa/MPNet
    ``lm_head``, ALBERT ``predictions``), or None when the head is not one module."""
    for attr in ("cls", "lm_head", "predictions"):
        head = getattr(model, attr, None)
        if head is not None:
            return head
    return None


def log_probs_at(lm: MaskedLM, requests, *, batch_tokens: int = BATCH_TOKENS, progress: bool = False) -> np.ndarray:
    """log P(target | input) for each request ``(input ids, position, target id)``.

    Every distinct input is encoded once, in length-sorted padded batches, and the masked-LM head
    runs only at the positions asked for (the vocabulary projection of the other positions
    would be thrown away)."""
    import torch

    requests = [(tuple(int(i) for i in ids), int(pos), int(t)) for ids, pos, t in requests]
    wanted: dict[tuple, dict[int, set]] = {}  # input -> position -> targets (SSS of a pair: one input, two)
    for ids, pos, t in requests:
        wanted.setdefault(ids, {}).setdefault(pos, set()).add(t)
    order = sorted(wanted, key=len)
    head, pad = _head(lm.model), lm.tokenizer.pad_token_id or 0
    batches, start = [], 0
    while start < len(order):
        rows = max(1, batch_tokens // len(order[start]))
        batches.append(order[start:start + rows])
        start += rows
    if progress:
        from ..progress import tqdm

        batches = tqdm(batches, desc=f"PLL ({lm.name})", unit="batch")
    found: dict[tuple, float] = {}
    for batch in batches:
        width = max(len(seq) for seq in batch)
        ids = torch.full((len(batch), width), pad, dtype=torch.long)
        mask = torch.zeros((len(batch), width), dtype=torch.long)
        for r, seq in enumerate(batch):
            ids[r, :len(seq)] = torch.as_tensor(seq)
            mask[r, :len(seq)] = 1
        where = [(r, p) for r, seq in enumerate(batch) for p in sorted(wanted[seq])]
        rows_, cols = torch.as_tensor([w[0] for w in where]), torch.as_tensor([w[1] for w in where])
        with torch.no_grad():
            ids, mask = ids.to(lm.device), mask.to(lm.device)
            if head is not None:
                hidden = lm.model.base_model(input_ids=ids, attention_mask=mask)[0]
                logits = head(hidden[rows_, cols])
            else:
                logits = lm.model(input_ids=ids, attention_mask=mask).logits[rows_, cols]
            lp = torch.log_softmax(logits.float(), dim=-1).cpu()
        for k, (r, p) in enumerate(where):
            for t in wanted[batch[r]][p]:
                found[(batch[r], p, t)] = float(lp[k, t])
    return np.array([found[request] for request in requests], dtype=float)


def _requests(lm: MaskedLM, method: str, ids: np.ndarray, special: np.ndarray, tokens: dict) -> list[tuple]:
    """The (input ids, position, target id) requests whose log-probabilities make ``method``'s score."""
    ids = tuple(int(i) for i in ids)
    mask_id = lm.tokenizer.mask_token_id
    if method == "aul":  # nothing masked, every non-special token read
        return [(ids, p, ids[p]) for p in np.flatnonzero(~np.asarray(special, dtype=bool))]
    if method == "sss":  # all modified tokens masked at once
        masked = list(ids)
        for p in tokens["M"]:
            masked[p] = mask_id
        return [(tuple(masked), p, ids[p]) for p in tokens["M"]]
    out = []  # cps: one unmodified token masked at a time
    for p in tokens["U"]:
        masked = list(ids)
        masked[p] = mask_id
        out.append((tuple(masked), p, ids[p]))
    return out


def _reduce(method: str, values: np.ndarray) -> float:
    if values.size == 0:
        return float("nan")
    return float(values.sum()) if method == "cps" else float(values.mean())


def _one(lm: MaskedLM, method: str, ids, special, tokens) -> float:
    return _reduce(method, log_probs_at(lm, _requests(lm, method, ids, special, tokens)))


def aul(lm: MaskedLM, ids: np.ndarray, special: np.ndarray) -> float:
    """Eq. 14: mean log P(w | S) over the sentence's (non-special) tokens, nothing masked."""
    return _one(lm, "aul", ids, special, {})


def cps(lm: MaskedLM, ids: np.ndarray, unmodified) -> float:
    """Eq. 13: Σ_{w∈U} log P(w | U\\w, M), masking one unmodified token at a time; NaN when U is empty."""
    return _one(lm, "cps", ids, np.zeros(len(ids), bool), {"U": list(unmodified)})


def sss(lm: MaskedLM, ids: np.ndarray, modified) -> float:
    """Eq. 12: (1/|M|) Σ_{w∈M} log P(w | U), all modified tokens masked at once; NaN when M is empty."""
    return _one(lm, "sss", ids, np.zeros(len(ids), bool), {"M": list(modified)})


def check_sentence_pairs(pairs: pd.DataFrame) -> pd.DataFrame:
    missing = set(SENTENCE_PAIR_COLUMNS) - set(pairs.columns)
    if missing:
        raise ValueError(f"sentence pairs lack column(s) {sorted(missing)}; need {list(SENTENCE_PAIR_COLUMNS)}")
    for col in ("stereotype", "anti_stereotype"):
        empty = pairs.index[pairs[col].astype(str).str.strip() == ""].tolist()
        if empty:
            raise ValueError(f"sentence pairs: empty {col} in row(s) {empty[:5]}")
    return pairs


def drawn_pairs(loader: str, sample_size: int = 0, seed: int = 0) -> pd.DataFrame:
    """The pairs of :func:`crows_pairs` or :func:`stereoset` (``loader``), or a seeded draw of ``sample_size`` of them
    (0: all)."""
    pairs = {"crows_pairs": crows_pairs, "stereoset": stereoset}[loader]()
    return pairs.sample(n=min(sample_size, len(pairs)), random_state=seed) if sample_size else pairs


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
    return pd.DataFrame({k: [r[k] for r in rows] for k in SENTENCE_PAIR_COLUMNS},
                        index=pd.Index([r["id"] for r in rows], name="id"))


def signature(name: str, fingerprint: str, method: str) -> str:
    """What a PLL score depends on, for the score cache: the method, the model (name and weights), this code."""
    return f"pll-{method}|model:{name}@{fingerprint}|rev:{REVISION}"


class _Signature:
    corpus_dependent = False

    def __init__(self, lm: MaskedLM, method: str):
        self.signature = signature(lm.name, lm.fingerprint, method)


def sentence_scores(lm: MaskedLM, method: str, stereotypes: list[str], anti_stereotypes: list[str], indices, *,
                    progress: bool = False, aligned: dict | None = None) -> np.ndarray:
    """f of the sentences at ``indices`` of ``stereotypes + anti_stereotypes`` (each split into U and M by aligning
    it with the other sentence of its pair), no cache; every forward pass runs together (:func:`log_probs_at`).
    ``aligned`` keeps the pairs' encodings for a next call."""
    n = len(stereotypes)
    aligned = {} if aligned is None else aligned  # pair -> (encoded stereotype, encoded anti-stereotype, U/M split)
    requests, spans = [], []
    for i in indices:
        k = i % n
        if k not in aligned:
            enc_st, enc_at = encode(lm, stereotypes[k]), encode(lm, anti_stereotypes[k])
            aligned[k] = (enc_st, enc_at, split_tokens(*enc_st, *enc_at))
        reqs = _requests(lm, method, *aligned[k][i // n], aligned[k][2][i // n])
        spans.append((len(requests), len(requests) + len(reqs)))
        requests += reqs
    values = log_probs_at(lm, requests, progress=progress) if requests else np.zeros(0)
    return np.array([_reduce(method, values[a:b]) for a, b in spans], dtype=float)


def score_sentence_pairs(lm: MaskedLM, pairs: pd.DataFrame, methods=METHODS, *, progress: bool = False,
                cache=None) -> pd.DataFrame:
    """f(S_st) and f(S_at) for every pair and method: columns ``bias_type, method, score_st, score_at``.

    All the forward passes of all pairs run together (:func:`log_probs_at`). With ``cache`` (True:
    the default score cache, or a :class:`~metricbias.cache.ScoreCache`) and a model whose weights
    have a fingerprint, each sentence's score is stored under (method, model, the other sentence of
    its pair) and read back on a rerun."""
    check_sentence_pairs(pairs)
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise ValueError(f"unknown PLL method(s) {unknown}; known: {', '.join(METHODS)}")
    from ..cache import ScoreCache

    store = (ScoreCache.default() if cache is True else cache or None) if lm.fingerprint else None
    st, at = pairs["stereotype"].astype(str).tolist(), pairs["anti_stereotype"].astype(str).tolist()
    n = len(pairs)
    # a sentence's U and M come from aligning the pair (stereotype first): the pair is part of its key
    sentences, both = st + at, [f"{a}\x1f{b}" for a, b in zip(st, at)] * 2
    aligned: dict = {}
    results, records = {}, []
    for m in methods:
        started = time.perf_counter()
        sig = _Signature(lm, m)
        keys = store.keys(sig, sentences, both) if store else [None] * len(sentences)
        known = store.lookup(keys) if store else {}
        packed = store.count_packed([k for k in keys if k in known]) if known and store.has_packs else 0
        todo = [i for i, k in enumerate(keys) if k not in known]
        fresh = dict(zip(todo, sentence_scores(lm, m, st, at, todo, progress=progress, aligned=aligned)))
        if store and fresh:
            store.store(sig.signature, {keys[i]: v for i, v in fresh.items() if np.isfinite(v)})
        results[m] = np.array([fresh[i] if i in fresh else known[keys[i]] for i in range(len(sentences))])
        records.append({"job": "", "metric": f"PLL {m.upper()} {lm.name}", "what": "pll", "pairs": len(sentences),
                        "status": "done" if fresh else "cached", "cached": len(sentences) - len(todo),
                        "packed": packed, "computed": len(todo), "attempts": 1,
                        "seconds": round(time.perf_counter() - started, 3), "workers": 1, "error": "",
                        "signature": sig.signature})
    log_records(records)  # the chapter's job log: how many of its scores came from packs
    return pd.DataFrame([{"pair": pair, "bias_type": bias_type, "method": m, "score_st": results[m][k],
                          "score_at": results[m][n + k]}
                         for k, (pair, bias_type) in enumerate(zip(pairs.index, pairs["bias_type"]))
                         for m in methods])


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


__all__ = ["BATCH_TOKENS", "METHODS", "MaskedLM", "REVISION", "RUNS", "SENTENCE_PAIR_COLUMNS", "aul", "bias_table",
           "check_sentence_pairs", "cps", "crows_pairs", "drawn_pairs", "encode", "load_masked_lm", "log_probs_at",
           "score_sentence_pairs", "sentence_scores",
           "signature", "split_tokens", "sss", "stereoset", "weights_fingerprint"]
