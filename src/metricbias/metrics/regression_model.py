"""The BLEURT-style regression model (PyTorch): a frozen backbone + a task adapter + a linear head.

Kept apart from :mod:`metricbias.metrics.regression` (the metric) so that listing metrics never
imports torch; this module imports nothing from it.

The backbone (``all-MiniLM-L6-v2``, ``all-mpnet-base-v2``) stays frozen and byte-identical to the
one every other metric uses: only a small task adapter inside it (the ``adapters`` library; by
default a ``seq_bn`` bottleneck after every feed-forward sub-layer) and the linear head are
trained, on STS-B train with a fixed seed. A saved model is a *trained backbone* folder
(:mod:`metricbias.backbones`: ``models/<name>/``, shipped, or ``<cache>/trained/<name>/``)::

    adapter/            the task adapter (adapters' save_adapter format, safetensors)
    head.safetensors    the linear head
    regression.json     the TrainConfig (base backbone and its fingerprint, task adapter, pooling, ...)
    provenance.json     how it was made: command, seed, steps, device, data sha256, versions,
                        STS-B dev Pearson, train time (written last: it marks the folder complete)

Debiasing adapters (chapter 6) stack on top of the task adapter: :func:`load_folder` with
``adapter=`` (see :func:`metricbias.models.attach_adapter`); the backbone stays frozen.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np
import torch

from .. import backbones, models, provenance
from ..trained.paraphraser import _interface
from ..trained.parts import base_of, seed_everything

CONFIG_FILE = "regression.json"
HEAD_FILE = "head.safetensors"
ADAPTER_DIR = "adapter"
#: the task adapter's name inside the encoder
TASK_ADAPTER = "stsb"
#: STS-B ratings are in [0, 5]; the model predicts rating / RATING_SCALE
RATING_SCALE = 5.0
#: the STS-B files a model is trained (train) and reported (dev) on
STSB_FILES = ("glue/STS-B/train.tsv", "glue/STS-B/dev.tsv")
#: the first STS-B dev pairs whose scores provenance.json records, so that a test can check that the
#: shipped model, loaded, gives the scores the trained model gave before it was saved
CHECK_ROWS = 16


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
    order = sorted(range(len(references)), key=lambda i: len(references[i]) + len(candidates[i]))  # less padding
    out = np.zeros(len(references))
    for start in range(0, len(order), batch_size):
        idx = order[start:start + batch_size]
        enc = encode_pairs(tokenizer, [references[i] for i in idx], [candidates[i] for i in idx], max_length)
        with torch.inference_mode():
            out[idx] = model(**{k: v.to(device) for k, v in enc.items()}).double().cpu().numpy()
    return out


# --- training ---------------------------------------------------------------------------

@dataclass
class TrainConfig:
    """How a regression model is trained (all of it is saved in ``regression.json``)."""

    backbone: str = "all-MiniLM-L6-v2"  # the frozen base backbone (name or folder)
    #: the task adapter, as an ``adapters`` config string (``seq_bn[reduction_factor=8]``, ``lora[r=8]``, ...)
    adapter: str = "seq_bn[reduction_factor=8]"
    pooling: str = "mean"
    epochs: int = 4
    max_steps: int | None = None  # stop after this many optimizer steps (smoke runs, tests)
    learning_rate: float = 1e-3
    batch_size: int = 32
    warmup_fraction: float = 0.1
    weight_decay: float = 0.01
    max_length: int = 128
    seed: int = 0
    train_rows: int | None = None  # first rows of STS-B train (None: all)
    dev_rows: int | None = None  # first rows of STS-B dev for the reported Pearson (None: all)
    extra: dict = field(default_factory=dict)


def recipe(name: str) -> TrainConfig:
    """The training configuration of trained regression backbone ``name``, from its recipe
    (:data:`metricbias.trained.recipes.RECIPES`)."""
    from ..trained.recipes import RECIPES, recipe_names

    kind, options = RECIPES.get(name, (None, {}))
    if kind != "regression":
        raise ValueError(f"{name!r} is not a registered trained regression backbone; known: "
                         f"{', '.join(recipe_names('regression'))} (or pass --backbone to train on another base)")
    return TrainConfig(**options)


def build(config: TrainConfig, device: str = "cpu"):
    """``(tokenizer, model)``: the frozen base backbone with a fresh seeded task adapter and head, ready to train."""
    import adapters
    from transformers import AutoModel, AutoTokenizer

    backbones.offline_env()
    path = backbones.resolve(config.backbone)
    tokenizer = AutoTokenizer.from_pretrained(str(path))
    encoder = AutoModel.from_pretrained(str(path))
    adapters.init(encoder, interface=_interface(encoder.config.model_type))  # MPNet: no built-in support
    seed_everything(config.seed)
    encoder.add_adapter(TASK_ADAPTER, config=config.adapter)
    encoder.train_adapter(TASK_ADAPTER)  # freezes every backbone weight, activates the task adapter
    model = RegressionModel(encoder, pooling=config.pooling)
    return tokenizer, model.to(device)


def trainable(model) -> list:
    return [p for p in model.parameters() if p.requires_grad]


def train(config: TrainConfig, out, *, name: str | None = None, device: str = "auto", progress: bool = True,
          command: str | None = None, train_data, dev_data, data_sources: tuple = ()) -> dict:
    """Train on ``train_data``, report the Pearson r on ``dev_data``, save into folder ``out``; returns the provenance.

    ``train_data`` / ``dev_data``: frames with ``sentence1, sentence2, score`` (STS-B train and dev
    for the shipped models: the caller loads them, as this layer does not import the datasets);
    ``data_sources``: the raw files they came from, recorded with their checksums. ``command`` is recorded (default: this process's command line).
    """
    from scipy import stats
    from tqdm.auto import tqdm
    from transformers import get_linear_schedule_with_warmup

    from ..trained.loop import fit, shuffled_batches

    out = Path(out)
    name = name or out.name
    device = models.resolve_device(device)
    train_df, dev_df = train_data, dev_data
    if config.train_rows:
        train_df = train_df.head(config.train_rows)
    if config.dev_rows:
        dev_df = dev_df.head(config.dev_rows)

    start_time = time.perf_counter()
    tokenizer, model = build(config, device)
    params = trainable(model)
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
    bar = tqdm(total=total, desc=f"train {name}", disable=not progress)
    train_start = time.perf_counter()

    def batch_loss(idx):
        enc = encode_pairs(tokenizer, [s1[i] for i in idx], [s2[i] for i in idx], config.max_length)
        pred = model(**{k: v.to(device) for k, v in enc.items()})
        return torch.nn.functional.mse_loss(pred, target[idx].to(device))

    losses = fit(batch_loss, shuffled_batches(len(train_df), config.batch_size, generator), params=params,
                 optimizer=optimizer, scheduler=scheduler, steps=total, bar=bar,
                 after_step=lambda step, losses: bar.set_postfix(loss=f"{np.mean(losses[-20:]):.4f}"))
    step = len(losses)
    bar.close()
    train_seconds = time.perf_counter() - train_start
    model.eval()
    dev_pred = predict(tokenizer, model, dev_df["sentence1"].tolist(), dev_df["sentence2"].tolist(),
                       max_length=config.max_length) * RATING_SCALE
    pearson = float(stats.pearsonr(dev_pred, dev_df["score"].to_numpy()).statistic) if len(dev_df) > 1 else float("nan")
    check = dev_df.head(CHECK_ROWS)
    check_scores = predict(tokenizer, model, check["sentence1"].tolist(), check["sentence2"].tolist(),
                           batch_size=CHECK_ROWS, max_length=config.max_length)
    saved = {**asdict(config), "name": name, "base_fingerprint": backbones.fingerprint(config.backbone),
             "rating_scale": RATING_SCALE}
    record = {
        "name": name,
        "kind": "regression",
        "base": config.backbone,
        "base_fingerprint": saved["base_fingerprint"],
        "command": command if command is not None else provenance.command(),
        "seed": config.seed,
        "steps": step,
        "epochs": step * config.batch_size / len(train_df),
        "batch_size": config.batch_size,
        "device": device,
        "device_name": provenance.device_name(device),
        "data": provenance.data_files(data_sources) if data_sources else "frames passed in",
        "train_rows": len(train_df),
        "dev_rows": len(dev_df),
        "trainable_parameters": sum(p.numel() for p in params),
        "final_loss": float(np.mean(losses[-20:])) if losses else float("nan"),
        "figures": {"stsb_dev_pearson": pearson},
        # scores (rating / 5) of the first dev pairs, reference = sentence1, candidate = sentence2, in one batch
        "check": {"stsb_dev_rows": len(check), "scores": check_scores.tolist()},
        "train_seconds": round(train_seconds, 1),
        "seconds_per_step": round(train_seconds / step, 4) if step else None,
        "total_seconds": round(time.perf_counter() - start_time, 1),
        "versions": provenance.versions(),
    }
    save(model, out, saved, record)
    return record


# --- saving and loading -----------------------------------------------------------------

def save(model: RegressionModel, folder, config: dict, record: dict) -> Path:
    """Write a model folder atomically (built next to ``folder``, then renamed onto it); provenance last."""
    from safetensors.torch import save_file

    with provenance.new_folder(folder) as tmp:
        model.encoder.save_adapter(str(tmp / ADAPTER_DIR), TASK_ADAPTER, use_safetensors=True)
        save_file({k: v.detach().cpu().contiguous() for k, v in model.head.state_dict().items()},
                  str(tmp / HEAD_FILE))
        (tmp / CONFIG_FILE).write_text(json.dumps({**config, "pooling": model.pooling}, indent=2) + "\n",
                                       encoding="utf-8")
        provenance.write(tmp, {**record, "files": provenance.files(tmp)})
    return Path(folder)


def is_model_folder(path) -> bool:
    """Whether ``path`` is a complete saved regression model (its config and its provenance are there)."""
    return (Path(path) / CONFIG_FILE).is_file() and (Path(path) / backbones.PROVENANCE_FILE).is_file()


def load_folder(folder, adapter=None):
    """``(tokenizer, model, config)`` from a saved folder: the base backbone, the task adapter, the head,
    and ``adapter`` (a debiasing adapter folder) stacked on top of the task adapter if given.

    The base backbone's fingerprint must be the one the model was trained on: the trained parts
    only make sense on the same frozen weights.
    """
    import adapters
    from safetensors.torch import load_file
    from transformers import AutoModel, AutoTokenizer

    backbones.offline_env()
    folder = Path(folder)
    config = json.loads((folder / CONFIG_FILE).read_text(encoding="utf-8"))
    path = base_of(provenance.read(folder), folder)  # the frozen weights it was trained on, or an error
    tokenizer = AutoTokenizer.from_pretrained(str(path))
    encoder = AutoModel.from_pretrained(str(path))
    adapters.init(encoder, interface=_interface(encoder.config.model_type))  # MPNet: no built-in support
    encoder.load_adapter(str(folder / ADAPTER_DIR), load_as=TASK_ADAPTER, use_safetensors=True)
    encoder.set_active_adapters(TASK_ADAPTER)
    if adapter is not None:
        models.attach_adapter(encoder, adapter)
    model = RegressionModel(encoder, pooling=config["pooling"])
    model.head.load_state_dict(load_file(str(folder / HEAD_FILE)))
    return tokenizer, model.eval(), config


__all__ = ["ADAPTER_DIR", "CONFIG_FILE", "HEAD_FILE", "RATING_SCALE", "RegressionModel", "TASK_ADAPTER",
           "TrainConfig", "build", "encode_pairs", "is_model_folder", "load_folder", "predict", "recipe", "save",
           "train", "trainable"]
