"""The BLEURT-style regression model: encoder + pooling + linear head (PyTorch).

Kept apart from :mod:`metricbias.metrics.regression` so that listing metrics never
imports torch. The debiasing adapters of chapter 6 are trained inside this model:
attach an adapter to ``model.encoder`` with :func:`metricbias.models.attach_adapter`
(or ``adapters.init(model.encoder)`` + ``add_adapter``) and train it with the rest frozen.

A saved model is a folder::

    encoder/            transformers save_pretrained of the encoder and its tokenizer
    head.safetensors    the linear head
    regression.json     the TrainConfig, the backbone's fingerprint and the STS-B dev Pearson
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Sequence

import numpy as np
import torch

from .. import backbones, models
from .regression import CONFIG_FILE, ENCODER_DIR, HEAD_FILE


class RegressionModel(torch.nn.Module):
    """``encoder`` -> pooled vector -> dropout -> ``Linear(hidden, 1)`` -> one score per row.

    Input: ``[CLS] reference [SEP] candidate [SEP]`` (BLEURT's order; see :func:`encode_pairs`).
    ``pooling="cls"`` takes the last layer's [CLS] vector, as BLEURT does; ``"mean"`` averages
    the last layer over non-padding tokens. Scores are on the training scale (STS-B rating / 5).
    """

    def __init__(self, encoder, pooling: str = "cls", dropout: float = 0.1):
        super().__init__()
        if pooling not in ("cls", "mean"):
            raise ValueError(f"pooling must be 'cls' or 'mean', not {pooling!r}")
        self.encoder, self.pooling = encoder, pooling
        self.dropout = torch.nn.Dropout(dropout)
        self.head = torch.nn.Linear(encoder.config.hidden_size, 1)

    def forward(self, input_ids, attention_mask, token_type_ids=None):
        kwargs = {"input_ids": input_ids, "attention_mask": attention_mask}
        if token_type_ids is not None:
            kwargs["token_type_ids"] = token_type_ids
        hidden = self.encoder(**kwargs).last_hidden_state
        if self.pooling == "cls":
            pooled = hidden[:, 0]
        else:
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp_min(1.0)
        return self.head(self.dropout(pooled)).squeeze(-1)


def encode_pairs(tokenizer, references: Sequence[str], candidates: Sequence[str], max_length: int):
    """Token tensors of ``[CLS] reference [SEP] candidate [SEP]`` for each pair."""
    return tokenizer(list(references), list(candidates), padding=True, truncation=True,
                     max_length=max_length, return_tensors="pt")


def predict(tokenizer, model, references: Sequence[str], candidates: Sequence[str], *, batch_size: int = 32,
            max_length: int = 128) -> np.ndarray:
    """Scores of a :class:`RegressionModel` in eval mode, without gradients, as float64."""
    device = next(model.parameters()).device
    out = []
    for start in range(0, len(references), batch_size):
        enc = encode_pairs(tokenizer, references[start:start + batch_size], candidates[start:start + batch_size],
                           max_length)
        with torch.inference_mode():
            out.append(model(**{k: v.to(device) for k, v in enc.items()}).double().cpu().numpy())
    return np.concatenate(out) if out else np.zeros(0)


def save(model: RegressionModel, tokenizer, folder, config: dict) -> Path:
    """Write a model folder atomically (built next to ``folder``, then renamed onto it)."""
    from safetensors.torch import save_file

    folder = Path(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = folder.with_name(f".{folder.name}.tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    try:
        (tmp / ENCODER_DIR).mkdir(parents=True)
        model.encoder.save_pretrained(tmp / ENCODER_DIR)
        tokenizer.save_pretrained(tmp / ENCODER_DIR)
        save_file({k: v.detach().cpu().contiguous() for k, v in model.head.state_dict().items()},
                  str(tmp / HEAD_FILE))
        (tmp / CONFIG_FILE).write_text(json.dumps({**config, "pooling": model.pooling}, indent=2) + "\n",
                                       encoding="utf-8")
        if folder.exists():
            shutil.rmtree(folder)
        tmp.rename(folder)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
    return folder


def load_folder(folder, adapter=None):
    """``(tokenizer, model, config)`` from a saved folder, with ``adapter`` attached to the encoder if given."""
    from safetensors.torch import load_file
    from transformers import AutoModel, AutoTokenizer

    backbones.offline_env()
    folder = Path(folder)
    config = json.loads((folder / CONFIG_FILE).read_text(encoding="utf-8"))
    tokenizer = AutoTokenizer.from_pretrained(str(folder / ENCODER_DIR))
    encoder = AutoModel.from_pretrained(str(folder / ENCODER_DIR))
    if adapter is not None:
        models.attach_adapter(encoder, adapter)
    model = RegressionModel(encoder, pooling=config["pooling"])
    model.head.load_state_dict(load_file(str(folder / HEAD_FILE)))
    return tokenizer, model.eval(), config
