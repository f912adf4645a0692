"""Regression metrics (BLEURT-style): an encoder reads the reference and the candidate
together and a linear head predicts a human rating.

Two kinds of model serve the ``regression`` metric:

* **our trained model** (:class:`RegressionModel`): encoder + pooling + linear head, trained on
  STS-B train ratings by :func:`train` (``metricbias train-regression``) with a fixed seed and
  saved under the cache folder (``<cache>/regression/<name>``), reloaded by name;
* **a public BLEURT checkpoint ported to PyTorch** (``Elron/bleurt-*``: a
  ``BertForSequenceClassification`` with one output, reading ``reference [SEP] candidate``),
  loaded from a registered name or a local folder. RemBERT BLEURT-20 needs the
  ``bleurt-pytorch`` package, which is not on PyPI; it is not supported here.

The input order is BLEURT's: ``[CLS] reference [SEP] candidate [SEP]``. The model class
and its save/load format are in :mod:`metricbias.metrics.regression_model`.
"""

from __future__ import annotations

import json
import random
import time
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import ClassVar, Sequence

import numpy as np

from .. import backbones, models
from ..paths import cache_dir
from .base import MetricError
from .neural import ModelMetric

#: the files of a saved model (see regression_model.save)
CONFIG_FILE = "regression.json"
HEAD_FILE = "head.safetensors"
ENCODER_DIR = "encoder"
#: STS-B ratings are in [0, 5]; the model predicts rating / RATING_SCALE
RATING_SCALE = 5.0


def artifacts_dir() -> Path:
    return cache_dir() / "regression"


# --- the model (torch code lives in regression_model, imported on use) -----------------

def is_artifact(path) -> bool:
    return (Path(path) / CONFIG_FILE).is_file()


@lru_cache(maxsize=4)
def _load(path: str, fingerprint: str, device: str, adapter: str | None, adapter_fp: str):
    from .regression_model import load_folder

    tokenizer, model, config = load_folder(Path(path), adapter=adapter)
    model.eval().to(device)
    return tokenizer, model, config


def load(name_or_path: str, device: str = "auto", adapter=None):
    """``(tokenizer, model, config)`` of a trained regression model (artifact name or folder); cached per process."""
    folder = resolve_artifact(name_or_path)
    if folder is None:
        raise MetricError(f"no trained regression model {name_or_path!r} (looked in {artifacts_dir()}); "
                          f"train it with `metricbias train-regression --name {name_or_path}`")
    return _load(str(folder), backbones.fingerprint_path(folder), models.resolve_device(device),
                 str(Path(adapter).resolve()) if adapter is not None else None, models.adapter_fingerprint(adapter))


def resolve_artifact(name_or_path: str) -> Path | None:
    """The folder of a trained model given its name (under :func:`artifacts_dir`) or its path, else None."""
    for place in (artifacts_dir() / name_or_path, Path(name_or_path)):
        if is_artifact(place):
            return place.resolve()
    return None


# --- training ---------------------------------------------------------------------------

@dataclass
class TrainConfig:
    """How a regression model is trained (all of it is saved in ``regression.json``)."""

    backbone: str = "all-MiniLM-L6-v2"
    pooling: str = "cls"
    epochs: int = 1
    max_steps: int | None = None  # stop after this many optimizer steps (smoke runs, tests)
    learning_rate: float = 1e-4
    batch_size: int = 32
    warmup_fraction: float = 0.1
    weight_decay: float = 0.01
    max_length: int = 128
    # what stays frozen, to keep CPU training to minutes: the embedding layer (half of MiniLM's weights)
    # and the lowest ``frozen_layers`` transformer layers
    freeze_embeddings: bool = True
    frozen_layers: int = 0
    seed: int = 0
    train_rows: int | None = None  # first rows of STS-B train (None: all)
    dev_rows: int | None = None  # first rows of STS-B dev for the reported Pearson (None: all)
    extra: dict = field(default_factory=dict)


#: trained models the project knows how to (re)build, by artifact name
RECIPES: dict[str, TrainConfig] = {
    "stsb-all-MiniLM-L6-v2": TrainConfig(),
    # the smoke profile's stand-in: same recipe, a few steps, so that a fresh smoke run stays fast
    "stsb-all-MiniLM-L6-v2-smoke": TrainConfig(max_steps=2, batch_size=8, dev_rows=24),
}


def _transformer_layers(encoder):
    for path in ("encoder.layer", "transformer.layer", "layers"):
        obj = encoder
        try:
            for part in path.split("."):
                obj = getattr(obj, part)
            return list(obj)
        except AttributeError:
            continue
    raise MetricError(f"cannot find the transformer layers of {type(encoder).__name__} to freeze")


def _seed_everything(seed: int) -> None:
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def train(name: str, config: TrainConfig | None = None, *, device: str = "auto", progress: bool = True,
          train_data=None, dev_data=None) -> dict:
    """Train a regression model on STS-B train, evaluate on STS-B dev, save it as ``name``.

    ``config`` defaults to ``RECIPES[name]``. ``train_data`` / ``dev_data`` (frames with
    ``sentence1, sentence2, score``) replace STS-B (tests use tiny ones). Returns the saved
    configuration, including ``dev_pearson`` and ``seconds``.
    """
    import torch
    from scipy import stats
    from tqdm.auto import tqdm
    from transformers import AutoModel, AutoTokenizer, get_linear_schedule_with_warmup

    from ..datasets import stsb
    from .regression_model import RegressionModel, encode_pairs, predict, save

    if config is None:
        if name not in RECIPES:
            raise MetricError(f"no recipe for regression model {name!r}; known: {', '.join(RECIPES)} "
                              "(or pass a TrainConfig)")
        config = RECIPES[name]
    start_time = time.perf_counter()
    device = models.resolve_device(device)
    train_df = stsb.load("train") if train_data is None else train_data
    dev_df = stsb.load("dev") if dev_data is None else dev_data
    if config.train_rows:
        train_df = train_df.head(config.train_rows)
    if config.dev_rows:
        dev_df = dev_df.head(config.dev_rows)

    _seed_everything(config.seed)
    path = backbones.resolve(config.backbone)
    backbones.offline_env()
    tokenizer = AutoTokenizer.from_pretrained(str(path))
    encoder = AutoModel.from_pretrained(str(path))
    model = RegressionModel(encoder, pooling=config.pooling).to(device)
    if config.freeze_embeddings:
        encoder.get_input_embeddings().requires_grad_(False)
        if hasattr(encoder, "embeddings"):
            encoder.embeddings.requires_grad_(False)
    if config.frozen_layers:
        layers = _transformer_layers(encoder)
        if config.frozen_layers > len(layers):
            raise MetricError(f"frozen_layers={config.frozen_layers} but {config.backbone} has {len(layers)} layers")
        for layer in layers[:config.frozen_layers]:
            layer.requires_grad_(False)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=config.learning_rate, weight_decay=config.weight_decay)
    steps_per_epoch = -(-len(train_df) // config.batch_size)
    total = steps_per_epoch * config.epochs
    if config.max_steps:
        total = min(total, config.max_steps)
    scheduler = get_linear_schedule_with_warmup(optimizer, int(config.warmup_fraction * total), total)
    generator = torch.Generator().manual_seed(config.seed)
    s1, s2 = train_df["sentence1"].tolist(), train_df["sentence2"].tolist()
    target = torch.tensor(train_df["score"].to_numpy() / RATING_SCALE, dtype=torch.float32)

    model.train()
    step, losses = 0, []
    bar = tqdm(total=total, desc=f"train {name}", disable=not progress)
    while step < total:
        order = torch.randperm(len(train_df), generator=generator).tolist()
        for b in range(0, len(order), config.batch_size):
            if step >= total:
                break
            idx = order[b:b + config.batch_size]
            enc = encode_pairs(tokenizer, [s1[i] for i in idx], [s2[i] for i in idx], config.max_length)
            pred = model(**{k: v.to(device) for k, v in enc.items()})
            loss = torch.nn.functional.mse_loss(pred, target[idx].to(device))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            losses.append(float(loss.detach()))
            step += 1
            bar.update(1)
    bar.close()
    model.eval()
    dev_pred = predict(tokenizer, model, dev_df["sentence1"].tolist(), dev_df["sentence2"].tolist(),
                       max_length=config.max_length) * RATING_SCALE
    pearson = float(stats.pearsonr(dev_pred, dev_df["score"].to_numpy()).statistic) if len(dev_df) > 1 else float("nan")
    saved = {
        **asdict(config),
        "name": name,
        "backbone_weights": backbones.fingerprint(config.backbone),
        "train_rows_used": len(train_df),
        "dev_rows_used": len(dev_df),
        "steps": step,
        "final_loss": float(np.mean(losses[-20:])) if losses else float("nan"),
        "dev_pearson": pearson,
        "seconds": round(time.perf_counter() - start_time, 1),
        "rating_scale": RATING_SCALE,
    }
    save(model.cpu(), tokenizer, artifacts_dir() / name, saved)
    return saved


def ensure_trained(name: str, *, device: str = "auto", progress: bool = True) -> Path:
    """The folder of trained model ``name``, training it from its recipe first if it is not there."""
    folder = resolve_artifact(name)
    if folder is None:
        train(name, device=device, progress=progress)
        folder = resolve_artifact(name)
    return folder


def trained_config(name_or_path: str) -> dict:
    folder = resolve_artifact(name_or_path)
    if folder is None:
        raise MetricError(f"no trained regression model {name_or_path!r} in {artifacts_dir()}")
    return json.loads((folder / CONFIG_FILE).read_text(encoding="utf-8"))


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
    defaults = {"backbone": "stsb-all-MiniLM-L6-v2", "adapter": None, "device": "auto", "batch_size": 32}
    backbone_kinds: ClassVar[tuple[str, ...]] = ("regression",)
    libraries = ("torch", "transformers")
    revision = 1

    def _resolve_backbone(self, backbone: str):
        folder = resolve_artifact(backbone)
        if folder is not None:
            return folder
        if backbone in RECIPES:
            raise MetricError(f"metric regression: model {backbone!r} is not trained yet; run "
                              f"`metricbias train-regression --name {backbone}` (or regression.ensure_trained)")
        return backbones.resolve(backbone)

    def _backbone_kind(self, backbone: str) -> str:
        return "regression" if is_artifact(self.backbone_path) else super()._backbone_kind(backbone)

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
        if is_artifact(self.backbone_path):
            from .regression_model import predict

            tokenizer, model, config = load(str(self.backbone_path), opts["device"], opts["adapter"])
            return predict(tokenizer, model, references, candidates, batch_size=opts["batch_size"],
                           max_length=int(config["max_length"]))
        tokenizer, model = models.load_sequence_regression(str(self.backbone_path), opts["device"], opts["adapter"])
        return models.sequence_regression_scores(tokenizer, model, references, candidates,
                                                 batch_size=opts["batch_size"])
