"""Generation-based metrics (likelihood under a seq2seq model) and FrugalScore.

**BARTScore** (Yuan et al., 2021) scores a text by its average token log-likelihood
under a sequence-to-sequence model given the other text, exactly as the authors'
``BARTScorer.score``: both sides tokenized with special tokens (truncated to
``max_length``), the target's token ids passed as ``labels`` (the model shifts them
into decoder inputs), the log-probabilities of the target tokens summed and divided
by the target's length. Following Yuan et al. and Sun et al. (2022, Sec. 2.1.2):

* precision ``P`` = log p(sys | ref)  (reference -> candidate),
* recall ``R`` = log p(ref | sys)  (candidate -> reference),
* ``F`` = their arithmetic mean.

**PRISM-style** scoring (Thompson & Post, 2020) is the same average token
log-probability on a paraphraser checkpoint, with PRISM's target-language tag: the
tokens of ``target_prefix`` (for the original PRISM model ``<en>``) are forced at the
start of the target and not scored. P/R/F as above. Any checkpoint that
``AutoModelForSeq2SeqLM`` loads works; the original PRISM weights need a Prism model
class that transformers 4.57 does not ship, so the ``prism`` backbone is for readers
whose transformers has one.

**On the project's paraphrasers** (``para-all-MiniLM-L6-v2``, ``para-all-mpnet-base-v2``:
a frozen encoder run as a UniLM sequence-to-sequence model with adapters and a tied LM
head, :mod:`metricbias.trained.paraphraser`) both metrics compute the same average token
log-likelihood, the closing [SEP] counted as BARTScore counts ``</s>``. These models have
no language tag, so PRISM's ``target_prefix="auto"`` resolves to none and PRISM-F equals
BARTScore-F on them by definition (PRISM's segment score is the mean of the two
directions' average token log-probabilities, i.e. BARTScore's F); each (source, target)
log-likelihood is computed once per process and shared by both metrics.

**FrugalScore** (Kamal Eddine et al., 2022) is a small model distilled to predict an
expensive metric: a sequence-regression checkpoint with one output reading
``candidate [SEP] reference`` (the order of its released usage).
"""

from __future__ import annotations

from typing import ClassVar, Sequence

import numpy as np

from .. import models
from .base import MetricError
from .neural import ModelMetric


def conditional_log_likelihood(tokenizer, model, sources: Sequence[str], targets: Sequence[str], *,
                               prefix: str | None = None, max_length: int = 1024, batch_size: int = 8) -> np.ndarray:
    """Average log p(target token | source, previous target tokens) per pair, as BARTScore computes it.

    ``prefix`` tokens (a language tag) are forced before each target and left out of the average.
    Pairs are batched by target length; each distinct (source, target) is computed once.
    """
    import torch

    device = next(model.parameters()).device
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    prefix_ids = tokenizer(prefix, add_special_tokens=False)["input_ids"] if prefix else []
    unique = list(dict.fromkeys(zip(sources, targets)))
    tgt_ids = {}
    for _, t in unique:
        if t not in tgt_ids:
            tgt_ids[t] = prefix_ids + tokenizer(t, truncation=True, max_length=max_length)["input_ids"]
    order = sorted(range(len(unique)), key=lambda i: len(tgt_ids[unique[i][1]]))
    result: dict = {}
    for start in range(0, len(order), batch_size):
        batch = [unique[i] for i in order[start:start + batch_size]]
        src = tokenizer([s for s, _ in batch], truncation=True, max_length=max_length, padding=True,
                        return_tensors="pt")
        seqs = [tgt_ids[t] for _, t in batch]
        width = max(len(s) for s in seqs)
        labels = torch.full((len(batch), width), pad, dtype=torch.long)
        scored = torch.zeros((len(batch), width))
        for i, seq in enumerate(seqs):
            labels[i, :len(seq)] = torch.tensor(seq)
            scored[i, len(prefix_ids):len(seq)] = 1.0
        with torch.inference_mode():
            logits = model(input_ids=src["input_ids"].to(device), attention_mask=src["attention_mask"].to(device),
                           labels=labels.to(device)).logits
            logp = torch.log_softmax(logits.float(), dim=-1).gather(-1, labels.to(device).unsqueeze(-1)).squeeze(-1)
            logp = logp.cpu().double() * scored
        values = (logp.sum(1) / scored.sum(1).clamp_min(1.0)).numpy()
        for pair, value in zip(batch, values):
            result[pair] = float(value)
    return np.array([result[p] for p in zip(sources, targets)])


#: (paraphraser folder fingerprint, source, target) -> log-likelihood, shared by bartscore and prism
_PARAPHRASER_LL: dict = {}


def paraphraser_log_likelihood(backbone: str, sources: Sequence[str], targets: Sequence[str], *, device: str = "auto",
                               batch_size: int = 16) -> np.ndarray:
    """Average log p(target | source) under a UniLM paraphraser; each distinct pair computed once per process."""
    from .. import backbones
    from ..trained import paraphraser, parts

    para = paraphraser.load(backbone, device)
    key = parts.scores_fingerprint(backbones.resolve(backbone))
    todo = [pair for pair in dict.fromkeys(zip(sources, targets)) if (key, *pair) not in _PARAPHRASER_LL]
    if todo:
        values = para.log_likelihood([s for s, _ in todo], [t for _, t in todo], batch_size=batch_size,
                                     progress=len(todo) > 50 * batch_size)  # a bar for long loops only
        _PARAPHRASER_LL.update({(key, *pair): float(v) for pair, v in zip(todo, values)})
    return np.array([_PARAPHRASER_LL[(key, s, t)] for s, t in zip(sources, targets)])


class _Likelihood(ModelMetric):
    family = "generation"
    backbone_kinds: ClassVar[tuple[str, ...]] = ("seq2seq",)
    libraries = ("torch", "transformers")
    choices = {"variant": ("P", "R", "F")}
    docs = {"variant": "P = log p(candidate | reference), R = the reverse, F = their mean",
            "backbone": "sequence-to-sequence model", "max_length": "longest input in tokens",
            "device": "auto, cpu or cuda", "batch_size": "pairs per forward pass"}

    @classmethod
    def label_for(cls, options: dict) -> str:
        # the released columns' spelling: BARTScore-BART-base-F, -p, -r; the PRISM paraphraser is just PRISM-F
        options = {**cls.defaults, **options}
        tag = "F" if options["variant"] == "F" else options["variant"].lower()
        if options["backbone"] == "prism":
            return f"{cls.label}-{tag}"
        return f"{super().label_for(options)}-{tag}"

    def _prefix(self) -> str | None:
        return None

    @property
    def _paraphraser(self) -> bool:
        from ..trained.paraphraser import is_paraphraser

        return is_paraphraser(self.backbone_path)

    def fingerprints(self) -> dict[str, str]:
        if not self._paraphraser:
            return super().fingerprints()
        from .. import backbones
        from ..trained import parts

        # the trained tensors and configuration, and the frozen encoder they sit on (not the provenance's figures)
        return {"weights": parts.scores_fingerprint(self.backbone_path),
                "base": backbones.trained_info(self.backbone_path)["base_fingerprint"]}

    def directions(self, candidates: list[str], references: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """(P, R) = (log p(cand | ref), log p(ref | cand)) per pair."""
        variant = self.options["variant"]
        if self._paraphraser:
            if self._prefix():
                raise MetricError(f"metric {self.name}: the UniLM paraphraser {self.options['backbone']!r} has no "
                                  f"language tag; use target_prefix=None (or auto), not {self._prefix()!r}")
            kw = {"device": self.options["device"], "batch_size": self.options["batch_size"]}
            path = str(self.backbone_path)
            p = paraphraser_log_likelihood(path, references, candidates, **kw) if variant != "R" else None
            r = paraphraser_log_likelihood(path, candidates, references, **kw) if variant != "P" else None
            return p, r
        tokenizer, model = models.load_seq2seq(self.options["backbone"], self.options["device"])
        kw = {"prefix": self._prefix(), "max_length": self.options["max_length"],
              "batch_size": self.options["batch_size"]}
        p = conditional_log_likelihood(tokenizer, model, references, candidates, **kw) if variant != "R" else None
        r = conditional_log_likelihood(tokenizer, model, candidates, references, **kw) if variant != "P" else None
        return p, r

    def _score(self, candidates, references):
        p, r = self.directions(candidates, references)
        variant = self.options["variant"]
        if variant == "P":
            return p
        if variant == "R":
            return r
        return (p + r) / 2


class BARTScore(_Likelihood):
    """Average token log-likelihood of one text given the other under a sequence-to-sequence model: P = log p(
    candidate | reference), R = log p(reference | candidate), F = their mean, as the authors' ``BARTScorer.score``."""

    name = "bartscore"
    label = "BARTScore"
    citation = "yuan2021bartscore: Yuan et al. (2021), BARTScore"
    defaults = {"variant": "F", "backbone": "para-all-MiniLM-L6-v2", "max_length": 1024, "device": "auto",
                "batch_size": 32}  # the MiniLM paraphraser: ~1.4x faster than 8 on CPU (MPNet: the same)
    revision = 1


class PRISM(_Likelihood):
    """PRISM's segment score: the average token log-probability of one text given the other under a paraphraser,
    with the target-language tag forced before the target and not scored; P, R and F as BARTScore's. On a
    paraphraser without a language tag, PRISM-F equals BARTScore-F by definition."""

    name = "prism"
    label = "PRISM"
    citation = "thompson2020prism: Thompson & Post (2020), PRISM"
    types = {"target_prefix": (str, type(None))}
    docs = {**_Likelihood.docs, "target_prefix": "language tag forced before each target and not scored; auto: <en> "
                                                 "when the tokenizer has it as one token, none on a paraphraser"}
    defaults = {"variant": "F", "backbone": "para-all-MiniLM-L6-v2", "target_prefix": "auto", "max_length": 1024,
                "device": "auto", "batch_size": 32}  # as BARTScore's
    revision = 1

    def __init__(self, **options):
        super().__init__(**options)
        if self.options["target_prefix"] == "auto":  # resolved here, so the signature names the tag used
            self.options["target_prefix"] = None if self._paraphraser else _language_tag(str(self.backbone_path))

    def _prefix(self) -> str | None:
        return self.options["target_prefix"] or None


def _language_tag(path: str, tag: str = "<en>") -> str | None:
    """PRISM's target-language tag when the checkpoint's tokenizer has it as one token, else None."""
    from transformers import AutoTokenizer

    from .. import backbones

    backbones.offline_env()
    try:
        tokenizer = AutoTokenizer.from_pretrained(path)
    except (OSError, ValueError):
        return tag  # the original PRISM checkpoint (its tokenizer needs a Prism class): keep its tag
    return tag if len(tokenizer(tag, add_special_tokens=False)["input_ids"]) == 1 else None


class FrugalScore(ModelMetric):
    """A small sequence-regression model distilled from an expensive matching metric: the score is its predicted
    value for the (candidate, reference) pair."""

    name = "frugalscore"
    family = "regression"  # a small regressor distilled from a matching metric (not a likelihood)
    label = "FrugalScore"
    paradigm = "Generation"  # where Sun et al.'s Table 6 files it
    citation = "eddine2022frugalscore: Kamal Eddine et al. (2022), FrugalScore"
    docs = {"backbone": "FrugalScore checkpoint", "max_length": "longest input in tokens",
            "device": "auto, cpu or cuda", "batch_size": "pairs per forward pass"}
    defaults = {"backbone": "frugalscore-tiny", "max_length": 512, "device": "auto", "batch_size": 32}
    backbone_kinds: ClassVar[tuple[str, ...]] = ("frugalscore", "regression")
    libraries = ("torch", "transformers")
    revision = 1

    def _score(self, candidates, references):
        tokenizer, model = models.load_sequence_regression(self.options["backbone"], self.options["device"])
        return models.sequence_regression_scores(tokenizer, model, candidates, references,
                                                 batch_size=self.options["batch_size"],
                                                 max_length=self.options["max_length"])
