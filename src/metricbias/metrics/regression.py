"""Regression metrics (BLEURT-style): an encoder reads the reference and the candidate
together and a linear head predicts a human rating.

Two kinds of model serve the ``regression`` metric:

* **our trained regression backbones** (``stsb-all-MiniLM-L6-v2``, ``stsb-all-mpnet-base-v2``):
  the frozen pretrained backbone + a task adapter + a linear head, trained on STS-B train with a
  fixed seed (:mod:`metricbias.metrics.regression_model`). They are trained backbones of
  :mod:`metricbias.backbones`: shipped under ``models/<name>/`` with a ``provenance.json`` and
  resolved by name like any other backbone (a folder written by :func:`train` is accepted too).
  ``metricbias train NAME --force`` retrains one (into ``--out``, default
  ``<cache>/trained/NAME/``; the shipped ``models/NAME/`` is looked up first, so pass
  ``--out models/NAME`` to replace the shipped artifact);
* **a public BLEURT checkpoint ported to PyTorch** (``Elron/bleurt-*``: a
  ``BertForSequenceClassification`` with one output, reading ``reference [SEP] candidate``),
  loaded from a registered name or a local folder. RemBERT BLEURT-20 needs the
  ``bleurt-pytorch`` package, which is not on PyPI; it is not supported here.

The input order is BLEURT's: ``[CLS] reference [SEP] candidate [SEP]``.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import ClassVar

from .. import backbones, models
from ..provenance import read as read_provenance
from .base import MetricError
from .neural import ModelMetric


def _model_module():
    from . import regression_model  # torch: imported only when a model is built, loaded or trained

    return regression_model


def is_trained_folder(path) -> bool:
    """Whether ``path`` is a saved model of :mod:`.regression_model` (task adapter + head + provenance)."""
    return _model_module().is_model_folder(path)


@lru_cache(maxsize=4)
def _load(path: str, fingerprint: str, device: str, adapter: str | None, adapter_fp: str):
    tokenizer, model, config = _model_module().load_folder(Path(path), adapter=adapter)
    model.eval().to(device)
    return tokenizer, model, config


def load(name_or_path: str, device: str = "auto", adapter=None):
    """``(tokenizer, model, config)`` of a trained regression backbone (name or folder); cached per process."""
    folder = trained_folder(name_or_path)
    return _load(str(folder), backbones.fingerprint_path(folder), models.resolve_device(device),
                 str(Path(adapter).resolve()) if adapter is not None else None, models.adapter_fingerprint(adapter))


def trained_folder(name_or_path: str) -> Path:
    """The folder of a trained regression backbone (name or folder); an error for anything else."""
    folder = backbones.resolve(name_or_path)
    if not is_trained_folder(folder):
        raise MetricError(f"{name_or_path!r} ({folder}) is not a trained regression model folder")
    return folder


def provenance(name_or_path: str = "stsb-all-MiniLM-L6-v2") -> dict:
    """How a trained regression backbone was made (its ``provenance.json``) plus its training configuration
    (``config``): base, task adapter, pooling, epochs, learning rate, ... and ``folder``."""
    folder = trained_folder(name_or_path)
    prov = read_provenance(folder)
    config = json.loads((folder / _model_module().CONFIG_FILE).read_text(encoding="utf-8"))
    return {**prov, "config": config, "folder": str(folder)}


def train(name: str, config=None, *, out=None, device: str = "auto", progress: bool = True, command=None,
          train_data, dev_data, data_sources: tuple = ()) -> dict:
    """Train regression backbone ``name`` (``config`` defaults to its recipe) into ``out``; returns its provenance.

    ``train_data`` / ``dev_data``: ``sentence1, sentence2, score`` frames (``metricbias train stsb-*``
    passes STS-B train and dev).
    ``out`` defaults to ``<cache>/trained/<name>/``. Scoring uses ``models/<name>/`` when it exists (the
    shipped artifact), so ``out=models/<name>`` replaces what ships; a cache copy serves names that do not ship.
    """
    rm = _model_module()
    config = config or rm.recipe(name)
    out = Path(out) if out is not None else backbones.trained_dirs(name)[-1]
    return rm.train(config, out, name=name, device=device, progress=progress, command=command,
                    train_data=train_data, dev_data=dev_data, data_sources=data_sources)


# --- the metric -------------------------------------------------------------------------

class Regression(ModelMetric):
    """``regression``: score = the model's predicted rating for (reference, candidate)."""

    name = "regression"
    family = "regression"
    label = "Regression"
    citation = "sellam2020bleurt: BLEURT-style regression (Sellam et al., 2020)"
    docs = {"backbone": "trained regression model or BLEURT checkpoint", "adapter": "adapter folder attached",
            "device": "auto, cpu or cuda", "batch_size": "pairs per forward pass"}
    types = {"adapter": (str, type(None))}
    # 128 pairs a pass: on two CPU cores ~1.2x faster than 32 on caption pairs (sorted by length, little padding)
    defaults = {"backbone": "stsb-all-MiniLM-L6-v2", "adapter": None, "device": "auto", "batch_size": 128}
    backbone_kinds: ClassVar[tuple[str, ...]] = ("regression",)
    libraries = ("torch", "transformers", "adapters")
    revision = 2  # 2: frozen backbone + task adapter + head (1: fully fine-tuned encoder)

    @property
    def _trained(self) -> bool:
        return is_trained_folder(self.backbone_path)

    def fingerprints(self) -> dict[str, str]:
        out = super().fingerprints()
        if self._trained:  # the trained parts' folder holds no backbone weights: add the frozen base's
            out["base"] = provenance(str(self.backbone_path))["base_fingerprint"]
        return out

    @classmethod
    def label_for(cls, options: dict) -> str:
        # our trained models are "Regression-<encoder>", public BLEURT checkpoints "BLEURT-<encoder>"
        from .neural import backbone_label

        backbone = {**cls.defaults, **options}["backbone"]
        info = backbones.BACKBONES.get(backbone)
        prefix = "BLEURT" if info is not None and info.hub_id else cls.label
        return f"{prefix}-{backbone_label(backbone)}"

    def _score(self, candidates, references):
        opts = self.options
        if self._trained:
            tokenizer, model, config = load(str(self.backbone_path), opts["device"], opts["adapter"])
            return _model_module().predict(tokenizer, model, references, candidates, batch_size=opts["batch_size"],
                                           max_length=int(config["max_length"]))
        tokenizer, model = models.load_sequence_regression(str(self.backbone_path), opts["device"], opts["adapter"])
        return models.sequence_regression_scores(tokenizer, model, references, candidates,
                                                 batch_size=opts["batch_size"])
