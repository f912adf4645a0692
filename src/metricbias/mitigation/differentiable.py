"""Metrics that keep their gradients, for training adapters through them.

The project's metrics (``metricbias.metrics``) score under ``torch.no_grad``;
training an adapter needs the same scores as a differentiable function of the
backbone's parameters. Two are here:

* :class:`BERTScoreF`: BERTScore F1 (greedy cosine matching of the token
  embeddings of one layer, optional idf weights), computed exactly as the
  ``bert-score`` package computes it (same tokenisation through
  ``bert_score.utils.sent_encode``, [CLS]/[SEP] in the similarity matrix with
  weight 0, padding masked) but without its in-place normalisation, which
  autograd cannot differentiate. The backbone is truncated to the chosen layer,
  as ``bert-score`` does, so "every layer" means every layer up to that one;
* :class:`RegressionScore`: the ``regression`` metric's model (our STS-B
  trained :class:`~metricbias.metrics.regression_model.RegressionModel`, or a
  one-output ``*ForSequenceClassification`` checkpoint such as a BLEURT port),
  reading ``[CLS] reference [SEP] candidate [SEP]`` as the metric does.

Both return a float tensor of scores, one per pair, and hold ``host``: the
Hugging Face model the adapter goes into (the encoder), the same module that
:func:`metricbias.models.attach_adapter` attaches it to when the metric scores.
"""

from __future__ import annotations

from typing import Sequence


def _torch():
    import torch

    return torch


class BERTScoreF:
    """Differentiable BERTScore-F of candidates against references on a (truncated) encoder."""

    kind = "bertscore"

    def __init__(self, model, tokenizer, *, idf_dict=None, device="cpu"):
        self.model = self.host = model
        self.tokenizer = tokenizer
        self.idf_dict = idf_dict  # None: every token weight 1 except [CLS]/[SEP] (bert-score's idf=False)
        self.device = device

    def _weights(self, ids: list[int]) -> list[float]:
        special = {self.tokenizer.sep_token_id, self.tokenizer.cls_token_id}
        if self.idf_dict is None:
            return [0.0 if i in special else 1.0 for i in ids]
        return [0.0 if i in special else float(self.idf_dict[i]) for i in ids]

    def embed(self, sentences: Sequence[str]):
        """(embeddings B x T x d, mask B x T, weights B x T) of the layer the model is truncated to."""
        from bert_score.utils import sent_encode

        torch = _torch()
        encoded = [sent_encode(self.tokenizer, s) for s in sentences]
        width = max(len(e) for e in encoded)
        pad = self.tokenizer.pad_token_id
        ids = torch.full((len(encoded), width), pad, dtype=torch.long)
        mask = torch.zeros((len(encoded), width), dtype=torch.long)
        weights = torch.zeros((len(encoded), width), dtype=torch.float)
        for i, e in enumerate(encoded):
            ids[i, : len(e)] = torch.tensor(e)
            mask[i, : len(e)] = 1
            weights[i, : len(e)] = torch.tensor(self._weights(e))
        ids, mask, weights = ids.to(self.device), mask.to(self.device), weights.to(self.device)
        out = self.model(input_ids=ids, attention_mask=mask)
        return out[0], mask, weights

    @staticmethod
    def greedy_f(hyp_emb, hyp_mask, hyp_w, ref_emb, ref_mask, ref_w):
        """BERTScore (P, R, F) from token embeddings: ``bert_score.utils.greedy_cos_idf`` without in-place ops."""
        hyp = hyp_emb / hyp_emb.norm(dim=-1, keepdim=True)
        ref = ref_emb / ref_emb.norm(dim=-1, keepdim=True)
        sim = hyp @ ref.transpose(1, 2)
        sim = sim * (hyp_mask.unsqueeze(2).float() * ref_mask.unsqueeze(1).float())
        precision = (sim.max(dim=2).values * (hyp_w / hyp_w.sum(dim=1, keepdim=True))).sum(dim=1)
        recall = (sim.max(dim=1).values * (ref_w / ref_w.sum(dim=1, keepdim=True))).sum(dim=1)
        f = 2 * precision * recall / (precision + recall)
        return precision, recall, f.nan_to_num(0.0)

    def __call__(self, candidates: Sequence[str], references: Sequence[str]):
        """F scores of each (candidate, reference); each distinct sentence is encoded once."""
        torch = _torch()
        unique = list(dict.fromkeys([*candidates, *references]))
        index = {s: i for i, s in enumerate(unique)}
        emb, mask, weights = self.embed(unique)
        c = torch.tensor([index[s] for s in candidates], device=emb.device)
        r = torch.tensor([index[s] for s in references], device=emb.device)
        return self.greedy_f(emb[c], mask[c], weights[c], emb[r], mask[r], weights[r])[2]


class RegressionScore:
    """Differentiable score of a regression metric: ``head(encoder([CLS] reference [SEP] candidate [SEP]))``.

    ``model`` is a :class:`~metricbias.metrics.regression_model.RegressionModel`
    (adapter host: its encoder) or a ``*ForSequenceClassification`` with one
    output (adapter host: the model itself, its first logit the score).
    """

    kind = "regression"

    def __init__(self, model, tokenizer, *, max_length: int = 128, device="cpu"):
        self.model = model
        self.host = getattr(model, "encoder", None) if not hasattr(model, "config") else model
        self.tokenizer = tokenizer
        self.max_length = max_length
        self.device = device

    def __call__(self, candidates: Sequence[str], references: Sequence[str]):
        batch = self.tokenizer(list(references), list(candidates), padding=True, truncation=True,
                               max_length=self.max_length, return_tensors="pt").to(self.device)
        out = self.model(**batch)
        return out if not hasattr(out, "logits") else out.logits[:, 0]


def truncate_encoder(model, num_layers: int):
    """Keep the first ``num_layers`` transformer layers of a BERT-like encoder (what ``bert-score`` does)."""
    torch = _torch()
    layers = model.encoder.layer
    if not 1 <= num_layers <= len(layers):
        raise ValueError(f"layer {num_layers} is out of range: the backbone has {len(layers)} layers")
    model.encoder.layer = torch.nn.ModuleList(list(layers)[:num_layers])
    return model


__all__ = ["BERTScoreF", "RegressionScore", "truncate_encoder"]
