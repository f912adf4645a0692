"""Train debiasing adapters (Sun et al. 2022, Section 3.2): CDA debiasing loss + knowledge distillation.

A bottleneck adapter (the ``adapters`` library's ``seq_bn`` configuration,
Pfeiffer et al. 2021: after the feed-forward sub-layer of every layer) is added
to the metric's backbone; everything else is frozen. Each step takes
``ceil(K/2)`` counterfactual triples and ``floor(K/2)`` original pairs (the
paper mixes ~400k of each, so a batch of K holds about half of each) and
minimises, unweighted,

* Eq. 4, debiasing: ``mean (M(c1, r; θ_A) - M(c2, r; θ_A))²``;
* Eq. 5, distillation: ``mean (M(p, h; θ_LM) - M(p, h; θ_A))²``, the target
  being the frozen metric's score (computed once, before the adapter exists).

The model stays in eval mode (no dropout): the scores trained on are exactly
the metric's scores. AdamW, linear warm-up over the first 6% of steps then
linear decay, gradient norm clipped at 1. Deterministic for a seed: the adapter
initialisation is seeded, and the example order of each stream is a seeded
permutation per epoch, computed from the step number, so a resumed run sees
the same batches as an uninterrupted one.

Output folder (``--out DIR``)::

    DIR/adapter_config.json, pytorch_adapter.bin   the trained adapter (adapters' own format)
    DIR/metricbias_adapter.json                    metric, backbone, layer, idf, training config, counts, timings
                                                   (wall clock; seconds_per_step includes validation)
    DIR/log.csv                                    step, split (train/validation), loss, debias_loss, kd_loss, lr, elapsed_s
    DIR/checkpoints/step-NNNNNN/                   adapter + metadata + trainer_state.pt (optimizer, scheduler)
    DIR/train_config.json, teacher_kd.npy          what a resumed run checks and reuses
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .. import __version__
from ..paths import atomic_path, write_csv_atomic
from .cda import CDAData

ADAPTER_NAME = "debias"
META_FILE = "metricbias_adapter.json"
STATE_FILE = "trainer_state.pt"
METRICS = ("bertscore", "regression")

#: Table 7 of Sun et al. (2022) and the size of their training set (~400k debiasing + ~400k distillation)
PAPER_HPARAMS = {"bertscore": {"lr": 1e-4, "batch_size": 32, "steps": 150_000},
                 "regression": {"lr": 5e-4, "batch_size": 16, "steps": 300_000}}
PAPER_EXAMPLES = 800_000


#: our defaults: Table 7's batch size; the learning rate chosen on the CDA validation split (chapter 6);
#: steps from :func:`default_steps` (Table 7's 6 epochs on our data)
DEFAULTS = {"bertscore": {"lr": 1e-3, "batch_size": 32}, "regression": {"lr": 1e-3, "batch_size": 16}}


def adapters_dir() -> Path:
    """Where the book keeps trained adapters (ignored by git): ``<cache>/adapters/<name>``."""
    from ..paths import cache_dir

    return cache_dir() / "adapters"


def paper_epochs(metric: str) -> float:
    """Passes over the training set that Table 7's steps x batch size make on ~800k examples (6 for both)."""
    hp = PAPER_HPARAMS[metric]
    return hp["steps"] * hp["batch_size"] / PAPER_EXAMPLES


def default_steps(metric: str, n_examples: int, batch_size: int | None = None) -> int:
    """Steps that give our (much smaller) training set the same number of epochs as the paper's run."""
    bsz = batch_size or PAPER_HPARAMS[metric]["batch_size"]
    return max(1, math.ceil(paper_epochs(metric) * n_examples / bsz))


@dataclass
class TrainConfig:
    metric: str
    backbone: str
    steps: int
    lr: float
    batch_size: int
    seed: int = 0
    layer: int | None = None  # bertscore: the layer matched (the backbone is truncated there); None: the last
    idf: bool = False  # bertscore: idf weights (from the references of the training data)
    reduction_factor: int = 16  # seq_bn default: bottleneck = hidden / 16
    warmup_ratio: float = 0.06
    checkpoint_every: int = 0  # 0: ten checkpoints over the run
    log_every: int = 10
    validation_fraction: float = 0.05
    validation_max: int = 512
    device: str = "cpu"

    def __post_init__(self):
        if self.metric not in METRICS:
            raise ValueError(f"adapters can be trained for {', '.join(METRICS)}; got metric {self.metric!r}")
        for name in ("steps", "batch_size"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        if not self.lr > 0:
            raise ValueError(f"learning rate must be positive, got {self.lr}")
        if self.batch_size < 2:
            raise ValueError("batch size must be at least 2 (half debiasing triples, half distillation pairs)")

    @property
    def every(self) -> int:
        return self.checkpoint_every or max(1, self.steps // 10)

    def comparable(self) -> dict:
        """Fields a resumed run must share with the run it continues (runtime ones aside)."""
        d = dataclasses.asdict(self)
        for k in ("device", "log_every"):
            d.pop(k)
        return d


# --- losses ----------------------------------------------------------------------------------

def debias_loss(scores_1, scores_2):
    """Eq. 4 averaged over a batch: mean squared difference of M(c1, r) and M(c2, r)."""
    return ((scores_1 - scores_2) ** 2).mean()


def kd_loss(student, teacher):
    """Eq. 5 averaged over a batch: mean squared difference from the frozen metric's scores."""
    return ((teacher - student) ** 2).mean()


# --- model: load, add / save / attach adapters ----------------------------------------------

def load_target(metric: str, backbone: str, *, layer: int | None = None, idf_dict=None, device: str = "cpu"):
    """The differentiable metric (:mod:`.differentiable`) on ``backbone``, in eval mode, with no adapter yet.

    Loaded fresh (not from :mod:`metricbias.models`' per-process cache: training changes the model).
    ``bertscore``: the encoder truncated to ``layer`` (default: the project metric's layer), tokenised
    as bert-score does. ``regression``: the regression metric's model, by its backbone name
    (``stsb-all-MiniLM-L6-v2``, trained first if needed; ``all-MiniLM-L6-v2`` names the same) or folder.
    """
    from .. import backbones, models
    from .differentiable import BERTScoreF, RegressionScore, truncate_encoder

    backbones.offline_env()
    if metric == "bertscore":
        from bert_score.utils import get_tokenizer
        from transformers import AutoModel

        from ..metrics.matching import default_bertscore_layer

        path = backbones.resolve(backbone)
        model = AutoModel.from_pretrained(str(path))
        model = truncate_encoder(model, layer or default_bertscore_layer(backbone, path))
        return BERTScoreF(model.to(device).eval(), get_tokenizer(str(path), use_fast=False), idf_dict=idf_dict,
                          device=device)
    if metric == "regression":
        from ..metrics import regression

        folder = regression_model_dir(backbone)
        if regression.is_artifact(folder):
            from ..metrics.regression_model import load_folder

            tokenizer, model, config = load_folder(folder)
            return RegressionScore(model.to(device).eval(), tokenizer, max_length=int(config["max_length"]),
                                   device=device)
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(str(folder))
        model = AutoModelForSequenceClassification.from_pretrained(str(folder))
        if model.config.num_labels != 1:
            raise models.ModelError(f"{folder}: a regression metric needs one output label, found "
                                    f"{model.config.num_labels}")
        return RegressionScore(model.to(device).eval(), tokenizer,
                               max_length=min(int(getattr(tokenizer, "model_max_length", 512)), 512), device=device)
    raise ValueError(f"unknown metric {metric!r}; adapters can be trained for {', '.join(METRICS)}")


def regression_backbone(backbone: str) -> str:
    """The ``regression`` metric's backbone for ``backbone``: ``all-MiniLM-L6-v2`` -> ``stsb-all-MiniLM-L6-v2``."""
    from ..metrics import regression

    if regression.resolve_artifact(backbone) is None and f"stsb-{backbone}" in regression.RECIPES:
        return f"stsb-{backbone}"
    return backbone


def regression_model_dir(backbone: str) -> Path:
    """The folder of the regression metric's model for ``backbone`` (trained from its recipe if missing)."""
    from .. import backbones
    from ..metrics import regression

    name = regression_backbone(backbone)
    folder = regression.resolve_artifact(name)
    if folder is not None:
        return folder
    if name in regression.RECIPES:
        return regression.ensure_trained(name)
    return backbones.resolve(name)


def add_adapter(host, *, reduction_factor: int = 16, seed: int = 0, leave_out=()) -> int:
    """Add a fresh seeded ``seq_bn`` adapter to every layer of ``host`` (except ``leave_out``), freeze the rest.

    Returns the number of trainable parameters.
    """
    import adapters
    import torch
    from adapters import SeqBnConfig

    adapters.init(host)
    torch.manual_seed(seed)
    host.add_adapter(ADAPTER_NAME, config=SeqBnConfig(reduction_factor=reduction_factor, leave_out=list(leave_out)),
                     set_active=True)
    host.train_adapter(ADAPTER_NAME)  # freezes the backbone, activates the adapter
    host.eval()  # ...but keep dropout off: train on the metric's own deterministic scores
    for name, param in host.named_parameters():  # a plain Hugging Face head stays trainable: freeze it too
        if f"adapters.{ADAPTER_NAME}." not in name:
            param.requires_grad_(False)
    if not any(p.requires_grad for p in host.parameters()):
        raise RuntimeError("the adapter added no trainable parameters")
    return sum(p.numel() for p in host.parameters() if p.requires_grad)


def save_adapter(host, folder, meta: dict) -> Path:
    """Write the adapter (``adapters``' format) and ``metricbias_adapter.json`` into ``folder``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    host.save_adapter(str(folder), ADAPTER_NAME)
    with atomic_path(folder / META_FILE, suffix=".json") as tmp:
        tmp.write_text(json.dumps(meta, indent=2, sort_keys=True))
    return folder


def read_meta(folder) -> dict:
    """The metadata of a saved adapter folder; a clear error if it is not one."""
    folder = Path(folder)
    meta_path = folder / META_FILE
    if not (folder / "adapter_config.json").exists() or not meta_path.exists():
        raise FileNotFoundError(f"{folder} is not a trained adapter folder (no adapter_config.json / {META_FILE}); "
                                "make one with `metricbias adapters train --out DIR`")
    return json.loads(meta_path.read_text())


def load_scorer(folder, *, device: str = "cpu"):
    """The differentiable metric with the adapter of ``folder`` attached (eval mode)."""
    from .. import models

    meta = read_meta(folder)
    target = load_target(meta["metric"], meta["metric_backbone"], layer=meta.get("layer"),
                         idf_dict=_idf_dict_from_meta(meta), device=device)
    models.attach_adapter(target.host, folder)
    target.model.eval()
    return target


def _idf_dict_from_meta(meta):
    if not meta.get("idf_dict"):
        return None
    from collections import defaultdict

    default = meta["idf_default"]
    out = defaultdict(lambda: default)
    out.update({int(k): v for k, v in meta["idf_dict"].items()})
    return out


# --- data streams ----------------------------------------------------------------------------

def stream_indices(n: int, step: int, k: int, seed: int, stream: int) -> np.ndarray:
    """Indices of the ``k`` examples of ``stream`` used at ``step``: seeded permutation per epoch, no state."""
    if n == 0 or k == 0:
        return np.zeros(0, dtype=int)
    positions = np.arange(step * k, (step + 1) * k)
    epochs = positions // n
    out = np.empty(k, dtype=int)
    for e in np.unique(epochs):
        perm = np.random.default_rng([seed, stream, int(e)]).permutation(n)
        sel = epochs == e
        out[sel] = perm[positions[sel] % n]
    return out


def _kd_hash(kd: pd.DataFrame, metric: str, backbone: str, layer) -> str:
    h = hashlib.sha256(f"{metric}|{backbone}|{layer}".encode())
    for c, r in zip(kd["candidate"], kd["reference"]):
        h.update(c.encode() + b"\x00" + r.encode() + b"\x01")
    return h.hexdigest()[:16]


def teacher_scores(target, kd: pd.DataFrame, *, batch_size: int = 64, progress: bool = False) -> np.ndarray:
    """The frozen metric's scores of the distillation pairs (no adapter active)."""
    import torch
    from ..progress import tqdm

    out = []
    starts = range(0, len(kd), batch_size)
    with torch.no_grad():
        for s in tqdm(starts, desc="teacher scores", disable=not progress):
            part = kd.iloc[s:s + batch_size]
            out.append(target(list(part["candidate"]), list(part["reference"])).float().cpu().numpy())
    return np.concatenate(out) if out else np.zeros(0)


# --- training --------------------------------------------------------------------------------

@dataclass
class TrainResult:
    out: Path
    log: pd.DataFrame
    meta: dict
    scorer: object = None  # the trained differentiable metric (adapter attached, eval mode)


def _losses(target, triples: pd.DataFrame, kd: pd.DataFrame, teacher: np.ndarray):
    """(debias loss, kd loss) tensors for a batch of triples and distillation pairs (either may be empty)."""
    import torch

    cands, refs = [], []
    if len(triples):
        cands += list(triples["c1"]) + list(triples["c2"])
        refs += list(triples["r"]) * 2
    if len(kd):
        cands += list(kd["candidate"])
        refs += list(kd["reference"])
    scores = target(cands, refs)
    n = len(triples)
    zero = scores.new_zeros(())
    ld = debias_loss(scores[:n], scores[n:2 * n]) if n else zero
    lk = kd_loss(scores[2 * n:], torch.as_tensor(teacher, dtype=scores.dtype, device=scores.device)) if len(kd) else zero
    return ld, lk


def _validate(target, val: CDAData, val_teacher: np.ndarray, limit: int, batch: int = 64) -> tuple[float, float]:
    import torch

    trip, kd = val.debias.iloc[:limit], val.kd.iloc[:limit]
    d_sum = k_sum = 0.0
    with torch.no_grad():
        for s in range(0, max(len(trip), len(kd)), batch):
            ld, lk = _losses(target, trip.iloc[s:s + batch], kd.iloc[s:s + batch], val_teacher[s:s + batch])
            d_sum += ld.item() * len(trip.iloc[s:s + batch])
            k_sum += lk.item() * len(kd.iloc[s:s + batch])
    return d_sum / max(1, len(trip)), k_sum / max(1, len(kd))


def _latest_checkpoint(out: Path) -> Path | None:
    ckpts = sorted(p for p in (out / "checkpoints").glob("step-*") if (p / STATE_FILE).exists())
    return ckpts[-1] if ckpts else None


def train(config: TrainConfig, data: CDAData, out, *, resume: bool = True, progress: bool = True) -> TrainResult:
    """Train an adapter for ``config`` on ``data``; writes everything under ``out`` (see the module docstring)."""
    import torch
    from ..progress import tqdm
    from transformers import get_linear_schedule_with_warmup

    from .. import backbones

    if config.device == "auto":
        from .. import models

        config = dataclasses.replace(config, device=models.resolve_device("auto"))
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    cfg_path = out / "train_config.json"
    if cfg_path.exists() and _latest_checkpoint(out) is not None:
        previous = json.loads(cfg_path.read_text())
        if not resume:
            raise ValueError(f"{out} already holds checkpoints of a training run; resume it or use another folder")
        if previous != config.comparable():
            diff = {k: (previous.get(k), v) for k, v in config.comparable().items() if previous.get(k) != v}
            raise ValueError(f"{out} holds a run with another configuration {diff} (old, new); "
                             "use another --out folder")
    with atomic_path(cfg_path, suffix=".json") as tmp:
        tmp.write_text(json.dumps(config.comparable(), indent=2, sort_keys=True))

    train_data, val_data = data.split(config.validation_fraction, config.seed)
    if train_data.debias.empty or train_data.kd.empty:
        raise ValueError(f"training data needs both debiasing triples ({len(train_data.debias)}) and "
                         f"distillation pairs ({len(train_data.kd)})")
    idf_dict = None
    if config.idf and config.metric == "bertscore":
        from bert_score.utils import get_idf_dict, get_tokenizer

        tok = get_tokenizer(str(backbones.resolve(config.backbone)), use_fast=False)
        refs = list(dict.fromkeys([*train_data.debias["r"], *train_data.kd["reference"]]))
        idf_dict = get_idf_dict(refs, tok, nthreads=0)
    if config.metric == "bertscore":
        metric_backbone, backbone_path = config.backbone, backbones.resolve(config.backbone)
    else:
        metric_backbone, backbone_path = regression_backbone(config.backbone), regression_model_dir(config.backbone)
    target = load_target(config.metric, metric_backbone, layer=config.layer, idf_dict=idf_dict, device=config.device)
    torch.manual_seed(config.seed)

    # distillation targets: the frozen metric, before any adapter exists
    all_kd = pd.concat([train_data.kd, val_data.kd], ignore_index=True)
    key = _kd_hash(all_kd, config.metric, config.backbone, config.layer)
    teacher_path = out / "teacher_kd.npy"
    teacher_key = out / "teacher_kd.key"
    if teacher_path.exists() and teacher_key.exists() and teacher_key.read_text() == key:
        teacher = np.load(teacher_path)
    else:
        teacher = teacher_scores(target, all_kd, progress=progress)
        with atomic_path(teacher_path, suffix=".npy") as tmp:
            with open(tmp, "wb") as fh:
                np.save(fh, teacher)
        teacher_key.write_text(key)
    train_teacher, val_teacher = teacher[: len(train_data.kd)], teacher[len(train_data.kd):]

    n_layers = target.host.config.num_hidden_layers
    used = len(target.host.base_model.encoder.layer)  # bertscore: truncated at the matched layer; layers above get none
    n_trainable = add_adapter(target.host, reduction_factor=config.reduction_factor, seed=config.seed,
                              leave_out=range(used, n_layers))
    params = [p for p in target.host.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=config.lr)
    scheduler = get_linear_schedule_with_warmup(optimizer, int(config.warmup_ratio * config.steps), config.steps)

    log_rows: list[dict] = []
    start_step, elapsed = 0, 0.0
    ckpt = _latest_checkpoint(out)
    if ckpt is not None:
        state = torch.load(ckpt / STATE_FILE, map_location=config.device, weights_only=False)
        named = dict(target.host.named_parameters())
        with torch.no_grad():
            for name, value in state["adapter"].items():
                named[name].copy_(value)
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        start_step, elapsed = state["step"], state["elapsed_s"]
        if (out / "log.csv").exists():
            prev = pd.read_csv(out / "log.csv")
            log_rows = prev[prev["step"] <= start_step].to_dict("records")

    k_debias = (config.batch_size + 1) // 2
    k_kd = config.batch_size // 2
    meta_base = {
        "metric": config.metric, "backbone": config.backbone, "metric_backbone": metric_backbone,
        "backbone_fingerprint": backbones.fingerprint_path(backbone_path),
        "layer": used if config.metric == "bertscore" else None,
        "num_layers_with_adapter": used,
        "idf": bool(config.idf),
        "adapter_config": "seq_bn", "reduction_factor": config.reduction_factor, "trainable_parameters": n_trainable,
        "train_config": dataclasses.asdict(config),
        "data_counts": data.counts.to_dict("records"), "data_fingerprint": data.fingerprint(),
        "train_examples": {"debias": len(train_data.debias), "kd": len(train_data.kd)},
        "validation_examples": {"debias": len(val_data.debias), "kd": len(val_data.kd)},
        "versions": _versions(),
    }
    if idf_dict is not None:
        meta_base["idf_dict"] = {str(k): v for k, v in idf_dict.items()}
        meta_base["idf_default"] = idf_dict.default_factory()

    def meta_at(step: int, seconds: float) -> dict:
        last = [r for r in log_rows if r["split"] == "train"][-1:] or [{}]
        val = [r for r in log_rows if r["split"] == "validation"][-1:] or [{}]
        return {**meta_base, "steps_done": step, "seconds_total": round(seconds, 3),
                # wall clock per step, the periodic validation and checkpoints included
                "seconds_per_step": round(seconds / step, 4) if step else None,
                "last_train": last[0], "last_validation": val[0]}

    def checkpoint(step: int, seconds: float) -> None:
        folder = out / "checkpoints" / f"step-{step:06d}"
        save_adapter(target.host, folder, meta_at(step, seconds))
        named = {n: p.detach().cpu().clone() for n, p in target.host.named_parameters() if p.requires_grad}
        with atomic_path(folder / STATE_FILE, suffix=".pt") as tmp:
            torch.save({"step": step, "elapsed_s": seconds, "adapter": named,
                        "optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict()}, tmp)
        write_csv_atomic(pd.DataFrame(log_rows), out / "log.csv")

    if start_step == 0 and config.validation_fraction > 0:
        vd, vk = _validate(target, val_data, val_teacher, config.validation_max)
        log_rows.append({"step": 0, "split": "validation", "loss": vd + vk, "debias_loss": vd, "kd_loss": vk,
                         "lr": 0.0, "elapsed_s": 0.0})

    window: list[tuple[float, float]] = []
    bar = tqdm(range(start_step, config.steps), desc=f"adapter {config.metric}", disable=not progress,
               initial=start_step, total=config.steps)
    tic = time.perf_counter()
    for step in bar:
        ti = stream_indices(len(train_data.debias), step, k_debias, config.seed, 0)
        ki = stream_indices(len(train_data.kd), step, k_kd, config.seed, 1)
        ld, lk = _losses(target, train_data.debias.iloc[ti], train_data.kd.iloc[ki], train_teacher[ki])
        loss = ld + lk
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optimizer.step()
        scheduler.step()
        window.append((ld.item(), lk.item()))
        done = step + 1
        now = elapsed + time.perf_counter() - tic
        if done % config.log_every == 0 or done == config.steps:
            d, k = np.mean(window, axis=0)
            log_rows.append({"step": done, "split": "train", "loss": d + k, "debias_loss": d, "kd_loss": k,
                             "lr": scheduler.get_last_lr()[0], "elapsed_s": now})
            bar.set_postfix(debias=f"{d:.2e}", kd=f"{k:.2e}")
            window = []
        if done % config.every == 0 or done == config.steps:
            if config.validation_fraction > 0:
                vd, vk = _validate(target, val_data, val_teacher, config.validation_max)
                log_rows.append({"step": done, "split": "validation", "loss": vd + vk, "debias_loss": vd,
                                 "kd_loss": vk, "lr": scheduler.get_last_lr()[0], "elapsed_s": now})
            checkpoint(done, now)
    total = elapsed + time.perf_counter() - tic
    meta = meta_at(config.steps, total)
    save_adapter(target.host, out, meta)
    log = pd.DataFrame(log_rows)
    write_csv_atomic(log, out / "log.csv")
    return TrainResult(out, log, meta, target)


def adapter_name(metric: str, backbone: str) -> str:
    """The folder name of the book's adapter for a metric and backbone: ``bertscore-all-MiniLM-L6-v2``."""
    return f"{metric}-{Path(backbone).name}"


def default_config(metric: str, backbone: str, n_examples: int, *, steps: int | None = None, seed: int = 0,
                   device: str = "auto", **overrides) -> TrainConfig:
    """Our default configuration (:data:`DEFAULTS`; steps from :func:`default_steps`) for ``n_examples``."""
    if metric not in DEFAULTS:
        raise ValueError(f"adapters can be trained for {', '.join(METRICS)}; got metric {metric!r}")
    d = {**DEFAULTS[metric], **overrides}
    steps = steps or default_steps(metric, n_examples, d["batch_size"])
    return TrainConfig(metric=metric, backbone=backbone, steps=steps, lr=d["lr"], batch_size=d["batch_size"],
                       seed=seed, device=device, **{k: v for k, v in overrides.items() if k not in ("lr", "batch_size")})


def ensure_adapter(metric: str, backbone: str, data: CDAData | None = None, *, fallback_steps: int = 200,
                   fallback_examples: int = 2000, seed: int = 0, device: str = "auto",
                   progress: bool = False) -> tuple[Path, str]:
    """A trained adapter for ``metric`` on ``backbone``: ``(folder, how)``.

    An adapter trained into ``--out`` :func:`adapters_dir` / :func:`adapter_name`
    (``metricbias adapters train``; the default configuration is the full run) is
    used when it is there, and ``how`` says how it was trained; otherwise a small
    configuration is trained here (``fallback_steps`` steps on at most
    ``fallback_examples`` examples of each kind) into ``<name>-small-<steps>``
    beside it, and ``how`` says so.
    """
    full = adapters_dir() / adapter_name(metric, backbone)
    try:
        meta = read_meta(full)
        tc = meta["train_config"]
        how = (f"the trained adapter found in {full}: {meta['steps_done']} steps of batch {tc['batch_size']} at "
               f"learning rate {tc['lr']:g} on {tc['device']}, {meta['seconds_per_step']:.2f} s per step")
        if data is not None:
            default = default_steps(metric, len(data.debias) + len(data.kd), tc["batch_size"])
            if meta["steps_done"] < default:
                how += f" (fewer than the default configuration's {default} steps)"
        return full, how
    except FileNotFoundError:
        pass
    if data is None:
        from . import cda
        from .evaluation import held_out_texts

        data = cda.build(exclude=held_out_texts())
    small = data.sample(fallback_examples, seed)
    config = default_config(metric, backbone, len(small.debias) + len(small.kd), steps=fallback_steps, seed=seed,
                            device=device)
    folder = full.with_name(f"{full.name}-small-{fallback_steps}")
    result = train(config, small, folder, progress=progress)
    return folder, (f"a small configuration trained now (no trained adapter in {full}): {fallback_steps} steps of "
                    f"batch {config.batch_size} at learning rate {config.lr:g} on {len(small.debias)} triples and "
                    f"{len(small.kd)} pairs, {result.meta['seconds_per_step']:.2f} s per step on {config.device}")


def _versions() -> dict:
    from ..metrics.base import library_version

    return {lib: library_version(lib) for lib in ("torch", "transformers", "adapters", "bert-score")} | \
        {"metricbias": __version__}


def checkpoints(out) -> list[tuple[int, Path]]:
    """(step, folder) of every checkpoint of a training run, in step order."""
    return [(int(p.name.split("-")[1]), p) for p in sorted(Path(out).glob("checkpoints/step-*"))
            if (p / "adapter_config.json").exists()]


__all__ = ["ADAPTER_NAME", "DEFAULTS", "METRICS", "PAPER_HPARAMS", "adapter_name", "adapters_dir", "default_config", "ensure_adapter", "TrainConfig", "TrainResult", "add_adapter", "checkpoints", "debias_loss", "default_steps", "kd_loss", "load_scorer",
           "load_target", "paper_epochs", "read_meta", "regression_backbone", "regression_model_dir", "save_adapter", "stream_indices", "teacher_scores", "train"]
