"""Token-matching metrics on a contextual encoder: BERTScore and MoverScore.

Both embed every token of the candidate and of the reference with one layer of an
encoder (any backbone of kind ``encoder``, optionally with a debiasing adapter) and
match the two sets of vectors:

**BERTScore** (Zhang et al., 2020) matches each token to its most similar token on the
other side (cosine), idf-weighted if ``idf=True``; P averages over candidate tokens,
R over reference tokens, F is their harmonic mean. The matching is bert-score's own
``greedy_cos_idf``; tokenization is bert-score's ``sent_encode`` with the tokenizer
bert-score would load (``use_fast=False``), so scores equal ``bert_score.score`` with
``model_type=<backbone folder>, num_layers=layer`` (the tests check it). Two choices are
explicit: the **layer** (bert-score's tuned table for the backbones it lists; for
``all-MiniLM-L6-v2``, which it does not list, see :data:`DEFAULT_LAYERS`), and **no
baseline rescaling** (bert-score's rescaling is an affine map per backbone and layer;
Eq. 1 of Sun et al. min-max rescales every metric anyway, so it would not change a bias).
With ``idf=True`` the idf weights come from the references of the call (as in
bert-score), which makes the metric corpus-dependent.

**MoverScore** (Zhao et al., 2019) is the earth mover's distance between the two
bags of n-gram embeddings. As in the authors' ``moverscore_v2``: one layer (default the
last), tokens that are punctuation or word pieces (``##``) removed, idf weights computed
separately over the references and over the candidates of the call (``idf=False``: all
weights 1), embeddings L2-normalized, Euclidean ground distance, score = 1 / (1 + EMD)
(``moverscore_v2`` and the scorer Sun et al. used; the v1 code's 1 - EMD goes negative
for distant texts, since distances between unit vectors reach 2). As in
their ``moverscore`` v1, ``n_gram=2`` pools each window of two kept tokens into one
idf-weighted vector with the window's summed weight. The EMD is exact (``ot.emd2``,
network simplex). Degenerate case, stated: when every weight on one side is zero
(for example a one-sentence corpus, where every token's idf is log(2/2) = 0), that side
gets uniform weights instead of the authors' division by ~0.

Speed: each distinct sentence is encoded once per process (:class:`metricbias.models.Encoder`
caches embeddings by token ids and layer), so the two candidates of a pair share their
reference's embeddings, the P/R/F variants share everything, and BERTScore and MoverScore
on the same backbone and layer share the encoder pass.
"""

from __future__ import annotations

import json
import string
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np

from .. import backbones, models
from .base import MetricError
from .neural import ModelMetric

#: default BERTScore layer for backbones that bert-score's ``model2layers`` table does not list.
#: all-MiniLM-L6-v2 (6 layers): layer 6, the layer the sentence-transformers model was trained
#: on; of layers 1-6 it also correlates best with STS-B dev ratings (chapter 3 recomputes this).
#: all-mpnet-base-v2 (12 layers): layer 12, chosen the same way (``bertscore_layer_scan`` on the
#: 1,500 STS-B dev pairs: Pearson 0.866 at layer 12, 0.830 at 11, 0.773 at 10, at most 0.70 below).
DEFAULT_LAYERS = {"all-MiniLM-L6-v2": 6, "all-mpnet-base-v2": 12}


def _num_layers(path) -> int:
    config = json.loads((Path(path) / "config.json").read_text(encoding="utf-8"))
    for key in ("num_hidden_layers", "n_layers", "num_layers"):
        if key in config:
            return int(config[key])
    raise models.ModelError(f"{path}/config.json names no layer count")


def default_bertscore_layer(backbone: str, path) -> int:
    """bert-score's tuned layer for the backbone's hub id, :data:`DEFAULT_LAYERS`, else the last layer."""
    if backbone in DEFAULT_LAYERS:
        return DEFAULT_LAYERS[backbone]
    from bert_score.utils import model2layers  # imports torch: only when the table is needed

    hub = backbones.BACKBONES[backbone].hub_id if backbone in backbones.BACKBONES else None
    if hub in model2layers:
        return int(model2layers[hub])
    return _num_layers(path)


def idf_dict(id_lists, counts=None) -> "defaultdict":
    """``bert_score.utils.get_idf_dict`` on texts already tokenized: idf = log((N + 1) / (df + 1)).

    Every text is one document (repeated texts count again), a token's document frequency
    counts the texts holding it; an unseen token gets log(N + 1). Same arithmetic as
    bert-score's, so the weights are equal to the bit; no second tokenization. ``counts``: how many times each
    text of ``id_lists`` occurs in the corpus (default once each), so that a corpus of repeated texts (every pair
    of an association test) is counted from its distinct texts.
    """
    from collections import defaultdict
    from math import log

    counts = [1] * len(id_lists) if counts is None else [int(c) for c in counts]
    df: dict = {}
    for ids, count in zip(id_lists, counts):
        for idx in set(ids):
            df[idx] = df.get(idx, 0) + count
    n = sum(counts)
    idf = defaultdict(lambda: log((n + 1) / (1)))
    idf.update({idx: log((n + 1) / (c + 1)) for idx, c in df.items()})
    return idf


def cross_corpus(rows: list[str], cols: list[str]) -> tuple[list[str], list[int]]:
    """The distinct texts of the call ``Metric.score_cross(rows, cols)`` scores and how often each is a candidate (as
    often as a reference): every row once per column and every column once per row."""
    counts: dict[str, int] = {}
    for texts, times in ((rows, len(cols)), (cols, len(rows))):
        for t in texts:
            counts[t] = counts.get(t, 0) + times
    return list(counts), list(counts.values())


@dataclass
class MatchingMap:
    """One candidate-reference pair as a matrix: rows = candidate units, columns = reference units."""

    metric: str
    candidate_tokens: list[str]
    reference_tokens: list[str]
    matrix: np.ndarray  # BERTScore: cosine similarity; MoverScore: transported mass
    score: float
    value: str  # what the matrix holds


class _EncoderMetric(ModelMetric):
    backbone_kinds: ClassVar[tuple[str, ...]] = ("encoder",)
    libraries: ClassVar[tuple[str, ...]] = ("torch", "transformers", "bert-score")

    def __init__(self, **options):
        super().__init__(**options)
        if self.options["layer"] is None:
            self.options["layer"] = self._default_layer()
        layers = _num_layers(self.backbone_path)
        if not isinstance(self.options["layer"], int) or not 0 <= self.options["layer"] <= layers:
            raise MetricError(f"metric {self.name}: backbone {self.options['backbone']!r} has layers "
                              f"0..{layers}; layer={self.options['layer']!r} is not one")
        self.corpus_dependent = bool(self.options["idf"])

    def _default_layer(self) -> int:
        return _num_layers(self.backbone_path)

    @property
    def encoder(self) -> models.Encoder:
        if getattr(self, "_encoder", None) is None:  # loaded on first use, shared through models' cache
            self._encoder = models.load_encoder(self.options["backbone"], self.options["device"],
                                                self.options["adapter"])
        return self._encoder

    def _embed_texts(self, texts: list[str]) -> dict[str, tuple[list[int], object]]:
        enc = self.encoder
        unique = list(dict.fromkeys(texts))
        ids = enc.encode_many(unique)
        embs = enc.embed(ids, self.options["layer"], batch_size=self.options["batch_size"])
        return {t: (i, e) for t, i, e in zip(unique, ids, embs)}


class BERTScore(_EncoderMetric):
    """Greedy matching of contextual token embeddings (one layer of an encoder): each token is matched to its most
    similar token of the other text by cosine, idf-weighted with ``idf=True``; P averages over the candidate's
    tokens, R over the reference's, F is their harmonic mean, as ``bert_score.score`` on the same backbone and
    layer."""

    name = "bertscore"
    family = "matching"
    label = "BERTScore"
    citation = "zhang2020bertscore: Zhang et al. (2020), BERTScore; bert-score's greedy matching"
    limits = ("Scores are not baseline-rescaled (Eq. 1 of Sun et al. min-max rescales anyway); the layer of a "
              "backbone bert-score has not tuned is our choice and is in the signature.")
    docs = {"variant": "precision, recall or F1 of the greedy match", "backbone": "contextual encoder",
            "layer": "hidden layer matched (None: bert-score's tuned layer, else ours)",
            "idf": "weight tokens by idf over the call's references", "adapter": "adapter folder attached",
            "device": "auto, cpu or cuda", "batch_size": "sentences per forward pass"}
    types = {"layer": (int, type(None)), "adapter": (str, type(None))}

    @classmethod
    def label_for(cls, options: dict) -> str:
        variant = {**cls.defaults, **options}["variant"]
        return super().label_for(options) + ("" if variant == "F" else f"-{variant}")

    defaults = {"variant": "F", "backbone": "all-MiniLM-L6-v2", "layer": None, "idf": False, "adapter": None,
                "device": "auto", "batch_size": 64}
    choices = {"variant": ("P", "R", "F"), "idf": (False, True)}
    revision = 2  # 2: padded positions never win a maximum (greedy_match), so a pair's score ignores its batch

    def _default_layer(self) -> int:
        return default_bertscore_layer(self.options["backbone"], self.backbone_path)

    def _idf_dict(self, references: list[str]):
        from collections import defaultdict

        tok = self.encoder.tokenizer
        if self.options["idf"]:
            return idf_dict(self.encoder.encode_many(references))
        idf = defaultdict(lambda: 1.0)
        idf[tok.sep_token_id] = 0  # as bert_score.score: [SEP] and [CLS] carry no weight
        idf[tok.cls_token_id] = 0
        return idf

    def prf(self, candidates: list[str], references: list[str], idf_references: list[str] | None = None) -> np.ndarray:
        """``(n, 3)`` array of P, R, F for validated pairs (no cache), each pair's as bert-score computes it alone;
        idf weights (``idf=True``) from ``idf_references`` (default: ``references``)."""
        import torch
        from torch.nn.utils.rnn import pad_sequence

        table = self._embed_texts(list(candidates) + list(references))
        idf_dict = self._idf_dict(list(references if idf_references is None else idf_references))

        def stats(texts):
            embs = [table[t][1] for t in texts]
            idfs = [torch.tensor([idf_dict[i] for i in table[t][0]], dtype=torch.float) for t in texts]
            lens = torch.tensor([e.shape[0] for e in embs])
            mask = torch.arange(int(lens.max()))[None, :] < lens[:, None]
            return pad_sequence(embs, batch_first=True), mask, pad_sequence(idfs, batch_first=True)

        out = []
        step = self.options["batch_size"]
        with torch.inference_mode():
            for start in range(0, len(candidates), step):
                p, r, f = greedy_match(*stats(references[start:start + step]), *stats(candidates[start:start + step]))
                out.append(torch.stack((p, r, f), dim=-1).double().numpy())
        return np.concatenate(out)

    def _score(self, candidates, references):
        column = "PRF".index(self.options["variant"])
        return self.prf(candidates, references)[:, column]

    def score_cross(self, rows, cols, progress=None, corpus_rows=None):
        """Every row against every column, both directions, from one encoder pass per distinct text: the greedy
        match of a block of rows with all columns is one tensor operation, and its row and column maxima give P and
        R of both directions (M(x, y)'s P is M(y, x)'s R)."""
        import torch

        rows, cols = self._validate(rows, rows)[0], self._validate(cols, cols)[0]
        texts, counts = cross_corpus(rows if corpus_rows is None else list(corpus_rows), cols)
        table = self._embed_texts(list(dict.fromkeys(rows + cols)))
        # idf (idf=True) from the call's references: every text as often as it is a reference
        idf = idf_dict(self.encoder.encode_many(texts), counts) if self.options["idf"] else self._idf_dict([])

        def padded(side):
            embs = [table[t][1] for t in side]
            lens = torch.tensor([e.shape[0] for e in embs])
            mask = torch.arange(int(lens.max()))[None, :] < lens[:, None]
            weights = torch.nn.utils.rnn.pad_sequence(
                [torch.tensor([idf[i] for i in table[t][0]], dtype=torch.float) for t in side], batch_first=True)
            unit = torch.nn.utils.rnn.pad_sequence(embs, batch_first=True)
            return unit / unit.norm(dim=-1, keepdim=True).clamp_min(1e-12), mask, weights / weights.sum(1, keepdim=True)

        (r_emb, r_mask, r_w), (c_emb, c_mask, c_w) = padded(rows), padded(cols)
        p_rc, r_rc = np.empty((len(rows), len(cols))), np.empty((len(rows), len(cols)))
        step = max(1, 4_000_000 // max(1, len(cols) * r_emb.shape[1] * c_emb.shape[1]))
        with torch.inference_mode():
            for start in range(0, len(rows), step):
                stop = min(start + step, len(rows))
                sim = torch.einsum("ild,jmd->ijlm", r_emb[start:stop], c_emb)
                both = r_mask[start:stop, None, :, None] & c_mask[None, :, None, :]
                sim = sim.masked_fill(~both, -2.0)  # padding never wins a maximum, as in greedy_match
                p_rc[start:stop] = (sim.max(dim=3).values * r_w[start:stop, None, :]).sum(-1).double().numpy()
                r_rc[start:stop] = (sim.max(dim=2).values * c_w[None, :, :]).sum(-1).double().numpy()
                if progress is not None:
                    progress.update(2 * (stop - start) * len(cols))
        p32, r32 = torch.from_numpy(p_rc).float(), torch.from_numpy(r_rc).float()
        f = 2 * p32 * r32 / (p32 + r32)  # in float32, as greedy_match
        f = f.masked_fill(torch.isnan(f), 0.0).double().numpy()
        pick = {"P": (p_rc, r_rc), "R": (r_rc, p_rc), "F": (f, f)}[self.options["variant"]]
        return pick[0], pick[1].T.copy()

    def rounding_gain(self, candidates, references, positions) -> np.ndarray:
        """F = 2PR/(P+R) moves by |dF/dP| + |dF/dR| = 2(P^2 + R^2)/(P+R)^2 times a rounding error in P and R: 1 where
        P = R, unbounded where P is close to -R (token cosines near 0, common on all-mpnet-base-v2)."""
        if self.options["variant"] != "F":
            return np.ones(len(positions))
        cands, refs = self._validate([candidates[i] for i in positions], [references[i] for i in positions])
        # idf from the whole call, as the scores were computed (only the sample is encoded)
        p, r = self.prf(cands, refs, list(references) if self.corpus_dependent else None)[:, :2].T
        with np.errstate(divide="ignore", invalid="ignore"):
            gain = 2 * (p ** 2 + r ** 2) / (p + r) ** 2
        return np.where(np.isfinite(gain), np.maximum(gain, 1.0), np.inf)

    def matching_map(self, candidate: str, reference: str) -> MatchingMap:
        """Cosine similarity of every candidate token with every reference token ([CLS]/[SEP] left out)."""
        cands, refs = self._validate([candidate], [reference])
        table = self._embed_texts(cands + refs)
        (c_ids, c_emb), (r_ids, r_emb) = table[cands[0]], table[refs[0]]
        c = c_emb[1:-1] / c_emb[1:-1].norm(dim=-1, keepdim=True)
        r = r_emb[1:-1] / r_emb[1:-1].norm(dim=-1, keepdim=True)
        sim = (c @ r.T).double().numpy()
        return MatchingMap(self.name, self.encoder.tokens(c_ids[1:-1]), self.encoder.tokens(r_ids[1:-1]), sim,
                           float(self._score(cands, refs)[0]), "cosine similarity")


def greedy_match(ref_emb, ref_mask, ref_idf, hyp_emb, hyp_mask, hyp_idf):
    """BERTScore's P, R, F of a batch of padded pairs: ``bert_score.utils.greedy_cos_idf`` with the padding left out.

    bert-score zeroes the similarities of padded positions, so a token whose similarities are all negative (common
    on sentence encoders such as all-mpnet-base-v2) takes 0 from the padding, and its score depends on which other
    pairs share the batch. Here padded positions never win a maximum: each pair scores as it would alone.
    """
    import torch

    ref = ref_emb / ref_emb.norm(dim=-1, keepdim=True).clamp_min(1e-12)
    hyp = hyp_emb / hyp_emb.norm(dim=-1, keepdim=True).clamp_min(1e-12)
    sim = torch.bmm(hyp, ref.transpose(1, 2))
    sim = sim.masked_fill(~(hyp_mask[:, :, None] & ref_mask[:, None, :]), -2.0)  # below any cosine
    ref_idf = ref_idf / ref_idf.sum(dim=1, keepdim=True)
    hyp_idf = hyp_idf / hyp_idf.sum(dim=1, keepdim=True)
    p = (sim.max(dim=2).values * hyp_idf).sum(dim=1)
    r = (sim.max(dim=1).values * ref_idf).sum(dim=1)
    f = 2 * p * r / (p + r)
    return p, r, f.masked_fill(torch.isnan(f), 0.0)


def bertscore_layer_scan(backbone: str, candidates: list[str], references: list[str], ratings, *, layers=None,
                         device: str = "auto") -> "pd.DataFrame":
    """Pearson r of BERTScore-F at each layer with human ``ratings`` (bert-score's way of choosing a layer).

    All layers come from one encoder pass per sentence.
    """
    import pandas as pd
    from scipy import stats

    first = BERTScore(backbone=backbone, layer=0, device=device)
    layers = list(range(1, _num_layers(first.backbone_path) + 1)) if layers is None else list(layers)
    cands, refs = first._validate(candidates, references)
    enc = first.encoder
    enc.embed_layers(enc.encode_many(list(dict.fromkeys(cands + refs))), layers)
    rows = []
    for layer in layers:
        f = BERTScore(backbone=backbone, layer=layer, device=device).prf(cands, refs)[:, 2]
        rows.append({"layer": layer, "pearson": float(stats.pearsonr(f, ratings).statistic)})
    return pd.DataFrame(rows)


class MoverScore(_EncoderMetric):
    """Earth mover's distance (EMD) between the idf-weighted bags of the two texts' n-gram embeddings (unit
    vectors, Euclidean ground distance, punctuation and word pieces dropped); score = 1 / (1 + EMD), as the
    authors' ``moverscore_v2`` on GitHub computes it."""

    name = "moverscore"
    family = "matching"
    label = "MoverScore"
    citation = "zhao2019moverscore: Zhao et al. (2019), MoverScore (moverscore_v2)"
    limits = ("Follows the GitHub ``moverscore_v2`` (score = 1 / (1 + EMD)), the scorer Sun et al. used, and its "
              "scores match that code; the PyPI release ``moverscore`` 1.0.3 scores 1 - EMD instead, which ranks "
              "pairs alike but gives other values and another bias after Eq. 1's rescaling.")
    docs = {"n_gram": "1- or 2-gram embeddings moved", "backbone": "contextual encoder",
            "layer": "hidden layer (None: the last)", "idf": "idf weights from the call's texts",
            "remove_subwords": "drop word pieces and punctuation, as moverscore_v2",
            "adapter": "adapter folder attached", "device": "auto, cpu or cuda", "batch_size": "sentences per pass"}
    types = {"layer": (int, type(None)), "adapter": (str, type(None))}

    @classmethod
    def label_for(cls, options: dict) -> str:
        return super().label_for(options) + ("-2gram" if {**cls.defaults, **options}["n_gram"] == 2 else "")

    defaults = {"n_gram": 1, "backbone": "all-MiniLM-L6-v2", "layer": None, "idf": True, "remove_subwords": True,
                "adapter": None, "device": "auto", "batch_size": 64}
    choices = {"n_gram": (1, 2), "idf": (True, False), "remove_subwords": (True, False)}
    libraries = ("torch", "transformers", "bert-score", "pot")
    revision = 2  # 2: score = 1 / (1 + EMD) as moverscore_v2 (1: 1 - EMD)

    def _idf_dict(self, texts: list[str]):
        from collections import defaultdict

        if self.options["idf"]:
            # the same count as moverscore's get_idf_dict: log((N+1)/(df+1)) over token-id sets
            return idf_dict(self.encoder.encode_many(texts))
        return defaultdict(lambda: 1.0)

    def _bag(self, ids, emb, idf_dict):
        """n-gram vectors (unit length), their weights (summing to 1) and labels for one sentence."""
        tokens = self.encoder.tokens(ids)
        punct = set(string.punctuation)
        keep = [k for k, w in enumerate(tokens)
                if w not in punct and not (self.options["remove_subwords"] and w.startswith("##"))]
        weights = np.array([float(idf_dict[ids[k]]) for k in keep])
        vecs = emb.numpy().astype(np.float64)[keep]
        vecs /= np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-30)
        n = min(self.options["n_gram"], len(keep))
        if n == 1:
            grams, gram_w = vecs, weights
            labels = [tokens[k] for k in keep]
        else:
            windows = np.arange(len(keep) - n + 1)[:, None] + np.arange(n)[None, :]
            w = weights[windows]  # (grams, n)
            total = w.sum(axis=1)
            scale = np.where(total[:, None] > 0, w / np.where(total > 0, total, 1.0)[:, None], 1.0 / n)
            grams = np.einsum("gn,gnd->gd", scale, vecs[windows])
            grams /= np.maximum(np.linalg.norm(grams, axis=1, keepdims=True), 1e-30)
            gram_w = total
            labels = [" ".join(tokens[keep[j]] for j in row) for row in windows]
        if gram_w.sum() <= 0:  # stated degenerate case: uniform weights
            gram_w = np.ones_like(gram_w)
        return grams, gram_w / gram_w.sum(), labels

    def _transport(self, c_bag, r_bag):
        import ot
        from scipy.spatial.distance import cdist

        (c_vec, c_w, _), (r_vec, r_w, _) = c_bag, r_bag
        dist = cdist(r_vec, c_vec)
        flow = ot.emd(r_w, c_w, dist)
        return float(1.0 / (1.0 + np.sum(flow * dist))), flow

    def _score(self, candidates, references):
        return self._moved(candidates, references, self._idf_dict(list(candidates)), self._idf_dict(list(references)))

    def score_sample(self, candidates, references, positions) -> np.ndarray:
        """The idf weights from the whole call (token ids only), the encoder run on the sampled pairs alone."""
        if not self.corpus_dependent:
            return super().score_sample(candidates, references, positions)
        cands, refs = self._validate(candidates, references)
        picked = [int(i) for i in positions]
        return self._moved([cands[i] for i in picked], [refs[i] for i in picked], self._idf_dict(cands),
                           self._idf_dict(refs))

    def score_cross(self, rows, cols, progress=None, corpus_rows=None):
        """Every row against every column, both directions: one encoder pass and one bag of n-grams per distinct
        text, one EMD per pair of texts. The call's candidates and references are the same texts as often (each row
        once per column, each column once per row), so their idf weights are equal, and so is each text's bag on
        either side; the EMD between two bags is symmetric, so one problem gives M(x, y) and M(y, x)."""
        rows, cols = self._validate(rows, rows)[0], self._validate(cols, cols)[0]
        texts, counts = cross_corpus(rows if corpus_rows is None else list(corpus_rows), cols)
        table = self._embed_texts(list(dict.fromkeys(rows + cols)))
        idf = idf_dict(self.encoder.encode_many(texts), counts) if self.options["idf"] else self._idf_dict([])
        bags = {t: self._bag(*table[t], idf) for t in dict.fromkeys(rows + cols)}
        m_rc = np.empty((len(rows), len(cols)))
        memo: dict = {}
        for i, x in enumerate(rows):
            for j, y in enumerate(cols):
                key = (x, y) if x <= y else (y, x)
                if key not in memo:
                    memo[key] = self._transport(bags[key[1]], bags[key[0]])[0]
                m_rc[i, j] = memo[key]
            if progress is not None:
                progress.update(2 * len(cols))
        return m_rc, m_rc.T.copy()

    def _moved(self, candidates, references, cand_idf, ref_idf) -> np.ndarray:
        table = self._embed_texts(list(candidates) + list(references))
        r_bags = {t: self._bag(*table[t], ref_idf) for t in dict.fromkeys(references)}
        c_bags = {t: self._bag(*table[t], cand_idf) for t in dict.fromkeys(candidates)}
        memo: dict = {}
        out = np.empty(len(candidates))
        for i, pair in enumerate(zip(candidates, references)):
            if pair not in memo:
                memo[pair] = self._transport(c_bags[pair[0]], r_bags[pair[1]])[0]
            out[i] = memo[pair]
        return out

    def matching_map(self, candidate: str, reference: str, corpus: tuple[list[str], list[str]] | None = None
                     ) -> MatchingMap:
        """Mass moved from each reference unit to each candidate unit, transposed to candidate x reference.

        idf weights come from ``corpus`` = (candidates, references) when given, else every
        weight is 1 (as the authors' ``plot_example``).
        """
        cands, refs = self._validate([candidate], [reference])
        table = self._embed_texts(cands + refs)
        from collections import defaultdict

        if corpus is not None and self.options["idf"]:
            cand_idf, ref_idf = self._idf_dict(list(corpus[0])), self._idf_dict(list(corpus[1]))
        else:
            cand_idf = ref_idf = defaultdict(lambda: 1.0)
        c_bag, r_bag = self._bag(*table[cands[0]], cand_idf), self._bag(*table[refs[0]], ref_idf)
        score, flow = self._transport(c_bag, r_bag)
        return MatchingMap(self.name, c_bag[2], r_bag[2], flow.T, score, "transported mass")
