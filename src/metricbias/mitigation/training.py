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

For a regression backbone that has a task adapter (``stsb-all-MiniLM-L6-v2``), the debiasing
adapter is stacked on top of it (``Stack(task, debias)``): backbone and task adapter stay frozen.

Output folder (``--out DIR``, default ``<cache>/trained/<name>/``, :func:`default_out`)::

    DIR/adapter_config.json, adapter.safetensors   the trained adapter (adapters' own format)
    DIR/metricbias_adapter.json                    metric, backbone, layer, idf, training config, counts, timings
                                                   (wall clock; seconds_per_step includes validation)
    DIR/log.csv                                    step, split (train/validation), loss, debias_loss, kd_loss, lr, elapsed_s
    DIR/provenance.json                            command, seed, steps, device, data sha256, versions, timings;
                                                   written last (the folder is complete); evaluation figures added by
                                                   :func:`record_evaluation` (``metricbias adapters evaluate --record``)
    DIR/checkpoints/step-NNNNNN/                   adapter + metadata + trainer_state.pt (optimizer, scheduler)
    DIR/train_config.json, teacher_kd.npy          what a resumed run checks and reuses

**Shipped adapters.** :func:`ship` copies the first five into ``models/<name>/`` (name:
:func:`adapter_name`, e.g. ``debiased-bertscore-all-MiniLM-L6-v2``); :func:`shipped` finds
an adapter by metric and backbone (``models/`` first, then the cache) without training anything.
Metrics take it by name or folder: ``metrics.get("bertscore", adapter="debiased-bertscore-all-MiniLM-L6-v2")``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import time
from dataclasses import dataclass
from itertools import count
from pathlib import Path

import numpy as np
import pandas as pd

from ..backbones import PROVENANCE_FILE
from ..paths import atomic_path, follow_umask, write_csv_atomic
from ..provenance import files as provenance_files
from ..provenance import new_folder
from ..provenance import read as read_provenance
from ..provenance import write as write_provenance
from ..trained.recipes import RECIPES
from .cda import CDAData

ADAPTER_NAME = "debias"
META_FILE = "metricbias_adapter.json"
STATE_FILE = "trainer_state.pt"
METRICS = ("bertscore", "regression")

#: Table 7 of Sun et al. (2022) and the size of their training set (~400k debiasing + ~400k distillation)
PAPER_HPARAMS = {"bertscore": {"lr": 1e-4, "batch_size": 32, "steps": 150_000},
                 "regression": {"lr": 5e-4, "batch_size": 16, "steps": 300_000}}
PAPER_EXAMPLES = 800_000


#: our defaults, from the adapters' recipes (:data:`metricbias.trained.recipes.RECIPES`): Table 7's batch size; the
#: learning rate chosen on the CDA validation split (chapter 6); steps from :func:`default_steps` (Table 7's 6
#: epochs on our data)
_DEFAULT_RECIPES = [o for name, (kind, o) in RECIPES.items()
                    if kind == "adapter" and name == f"debiased-{o['metric']}-{Path(o['backbone']).name}"]
DEFAULTS = {o["metric"]: {"lr": o["lr"], "batch_size": o["batch_size"]} for o in _DEFAULT_RECIPES}
#: the backbone each metric's adapter is trained on by default (the offline profile's)
DEFAULT_BACKBONES = {o["metric"]: o["backbone"] for o in _DEFAULT_RECIPES}


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
    """The differentiable metric (:mod:`.differentiable`) on ``backbone``, in eval mode, with no debiasing adapter yet.

    Loaded fresh (not from :mod:`metricbias.models`' per-process cache: training changes the model).
    ``bertscore``: the encoder truncated to ``layer`` (default: the project metric's layer), tokenised
    as bert-score does. ``regression``: the regression metric's model, by its backbone (a trained
    regression backbone such as ``stsb-all-MiniLM-L6-v2``, with its task adapter active, or a
    one-output sequence-regression checkpoint), by name or folder.
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

        folder = backbones.resolve(backbone)
        if regression.is_trained_folder(folder):
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


def add_adapter(host, *, reduction_factor: int = 16, seed: int = 0, leave_out=()) -> int:
    """Add a fresh seeded ``seq_bn`` adapter to every layer of ``host`` (except ``leave_out``), freeze the rest.

    An adapter already active in ``host`` (a regression backbone's task adapter) stays active and
    frozen, under the new one (``Stack(task, debias)``), as :func:`metricbias.models.attach_adapter`
    stacks them when the metric scores. Returns the number of trainable parameters.
    """
    import adapters
    import torch
    from adapters import SeqBnConfig

    from ..models import stack_adapter

    device = next(host.parameters()).device
    adapters.init(host)
    below = host.active_adapters
    torch.manual_seed(seed)
    host.add_adapter(ADAPTER_NAME, config=SeqBnConfig(reduction_factor=reduction_factor, leave_out=list(leave_out)),
                     set_active=True)
    host.to(device)  # initialized on the CPU (the same weights whatever the device), trained where the host is
    host.train_adapter(ADAPTER_NAME)  # freezes the backbone, activates the adapter
    stack_adapter(host, ADAPTER_NAME, below)
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
    host.save_adapter(str(folder), ADAPTER_NAME, use_safetensors=True)
    for written in folder.glob("adapter*"):  # safetensors writes its file 0600; follow the umask like every output
        follow_umask(written)
    with atomic_path(folder / META_FILE, suffix=".json") as tmp:
        tmp.write_text(json.dumps(meta, indent=2, sort_keys=True))
    return folder


def read_meta(folder) -> dict:
    """The metadata of a saved adapter folder; a clear error if it is not one."""
    folder = Path(folder)
    meta_path = folder / META_FILE
    if not (folder / "adapter_config.json").exists() or not meta_path.exists():
        raise FileNotFoundError(f"{folder} is not a trained adapter folder (no adapter_config.json / {META_FILE}); "
                                "make one with `metricbias train debiased-METRIC-BACKBONE --out DIR`")
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


def train(config: TrainConfig, data: CDAData, out, *, resume: bool = True, progress: bool = True,
          command: str | None = None) -> TrainResult:
    """Train an adapter for ``config`` on ``data``; writes everything under ``out`` (see the module docstring)."""
    import torch
    from ..progress import tqdm
    from transformers import get_linear_schedule_with_warmup

    from .. import backbones
    from ..trained.loop import fit

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
        backbone_path = backbones.resolve(config.backbone)
    else:
        backbone_path = backbones.resolve(config.backbone)
    metric_backbone = config.backbone
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
    bar = tqdm(desc=f"adapter {config.metric}", disable=not progress, initial=start_step, total=config.steps)
    batches = ((stream_indices(len(train_data.debias), step, k_debias, config.seed, 0),
                stream_indices(len(train_data.kd), step, k_kd, config.seed, 1)) for step in count(start_step))

    def batch_loss(batch):
        ti, ki = batch
        ld, lk = _losses(target, train_data.debias.iloc[ti], train_data.kd.iloc[ki], train_teacher[ki])
        window.append((ld.item(), lk.item()))
        return ld + lk

    def after_step(done, losses):
        nonlocal window
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

    tic = time.perf_counter()
    fit(batch_loss, batches, params=params, optimizer=optimizer, scheduler=scheduler, steps=config.steps,
        start=start_step, bar=bar, after_step=after_step)
    bar.close()
    total = elapsed + time.perf_counter() - tic
    meta = meta_at(config.steps, total)
    save_adapter(target.host, out, meta)
    log = pd.DataFrame(log_rows)
    write_csv_atomic(log, out / "log.csv")
    write_provenance(out, _provenance(out, config, meta, target, command))  # last: marks the folder complete
    return TrainResult(out, log, meta, target)


def _versions() -> dict:
    from ..provenance import versions

    return versions(("torch", "transformers", "adapters", "bert-score"))


#: the first STS-B dev pairs whose scores with the trained adapter provenance.json records (:func:`reload_check_pairs`)
CHECK_ROWS = 16


def reload_check_pairs() -> tuple[list[str], list[str]]:
    """``(candidates, references)``: the first :data:`CHECK_ROWS` STS-B dev pairs (candidate = sentence 2)."""
    from ..datasets import stsb

    dev = stsb.load("dev").head(CHECK_ROWS)
    return dev["sentence2"].tolist(), dev["sentence1"].tolist()


def _provenance(out: Path, config: TrainConfig, meta: dict, target, command: str | None) -> dict:
    """What ``provenance.json`` records of a training run (the evaluation figures come later: :func:`record_evaluation`)."""
    import torch

    from .. import provenance
    from ..datasets import stsb
    from . import cda

    files = [*stsb.FILES.values(), *cda.MRPC_FILES.values(), cda.STEREOSET_FILE]
    with torch.no_grad():  # so that a test can check that the shipped adapter, loaded, scores as the trained one did
        check = target(*reload_check_pairs()).double().cpu().numpy().tolist()
    return {
        "name": out.name, "kind": "debiasing adapter", "metric": config.metric, "metric_backbone": config.backbone,
        "layer": meta["layer"], "command": command or provenance.command(), "seed": config.seed,
        "steps": meta["steps_done"], "batch_size": config.batch_size, "lr": config.lr, "device": config.device,
        "device_name": provenance.device_name(config.device),
        "data": {"files": provenance.data_files(files), "cda_fingerprint": meta["data_fingerprint"],
                 "train_examples": meta["train_examples"], "validation_examples": meta["validation_examples"]},
        "trainable_parameters": meta["trainable_parameters"], "backbone_fingerprint": meta["backbone_fingerprint"],
        "seconds_total": meta["seconds_total"], "seconds_per_step": meta["seconds_per_step"],
        "last_train": meta["last_train"], "last_validation": meta["last_validation"],
        "versions": meta["versions"], "files": provenance.files(out),
        "check": {"stsb_dev_rows": CHECK_ROWS, "scores": check},
    }


def adapter_name(metric: str, backbone: str) -> str:
    """The name of the debiasing adapter for a metric on a backbone: ``debiased-bertscore-all-MiniLM-L6-v2``.

    Shipped adapters live under ``models/<name>/``; retrained ones under ``<cache>/trained/<name>/`` by
    default (:func:`default_out`), looked up in that order (:func:`metricbias.backbones.trained_path`).
    """
    return f"debiased-{metric}-{Path(backbone).name}"


def default_out(metric: str, backbone: str) -> Path:
    """Where ``metricbias train debiased-*`` writes when no ``--out`` is given: ``<cache>/trained/<name>/``."""
    from .. import backbones

    return backbones.trained_dirs(adapter_name(metric, backbone))[-1]


def default_config(metric: str, backbone: str, n_examples: int, *, steps: int | None = None, seed: int = 0,
                   device: str = "auto", **overrides) -> TrainConfig:
    """Our default configuration (:data:`DEFAULTS`; steps from :func:`default_steps`) for ``n_examples``."""
    if metric not in DEFAULTS:
        raise ValueError(f"adapters can be trained for {', '.join(METRICS)}; got metric {metric!r}")
    d = {**DEFAULTS[metric], **overrides}
    steps = steps or default_steps(metric, n_examples, d["batch_size"])
    return TrainConfig(metric=metric, backbone=backbone, steps=steps, lr=d["lr"], batch_size=d["batch_size"],
                       seed=seed, device=device, **{k: v for k, v in overrides.items() if k not in ("lr", "batch_size")})


# --- shipped adapters -------------------------------------------------------------------------

#: what a shipped adapter folder holds (the run's checkpoints, optimizer state and teacher scores stay behind)
SHIPPED_FILES = ("adapter_config.json", "adapter.safetensors", META_FILE, "log.csv", PROVENANCE_FILE)


@dataclass
class Shipped:
    """A trained debiasing adapter found by name: its folder, provenance and metadata."""

    name: str
    folder: Path
    provenance: dict
    meta: dict

    def evaluation(self) -> pd.DataFrame:
        """The before/after table recorded by ``metricbias adapters evaluate --record`` (empty if none)."""
        return _frame(self.provenance.get("figures", {}).get("evaluation", []))

    def curve(self) -> pd.DataFrame:
        """Gender bias and quality at every checkpoint of the run, as recorded (empty if none)."""
        return _frame(self.provenance.get("figures", {}).get("curve", []))


def _frame(records: list[dict]) -> pd.DataFrame:
    """A table from JSON records, with JSON's nulls back to NaN in numeric columns."""
    frame = pd.DataFrame(records)
    for col in frame.columns:
        if frame[col].map(lambda v: v is None or isinstance(v, (int, float))).all() and frame[col].isna().any():
            frame[col] = frame[col].astype(float)
    return frame


def shipped(metric: str, backbone: str, suffix: str = "") -> Shipped:
    """The trained debiasing adapter for ``metric`` on ``backbone`` (``models/<name>/``, else the cache).

    ``suffix`` names another recipe of the same metric and backbone (``-table7``: Table 7's learning rate and
    batch size). Trains nothing: a missing adapter is an error that gives the command that trains it.
    """
    from .. import backbones

    name = adapter_name(metric, backbone) + suffix
    folder = backbones.trained_path(name)
    if folder is None:
        how = (f"metricbias train {name}" if name in RECIPES
               else f"metricbias adapters train --metric {metric} --backbone {backbone}")
        raise FileNotFoundError(
            f"no trained debiasing adapter {name!r} in {' or '.join(map(str, backbones.trained_dirs(name)))}; "
            f"train one with `{how}` "
            f"(and `metricbias adapters ship --run DIR` to put it under models/)")
    return Shipped(name, folder, read_provenance(folder), read_meta(folder))


def ship(run, name: str | None = None, dest=None) -> Path:
    """Copy the files of a trained adapter (:data:`SHIPPED_FILES`) from a run folder to ``models/<name>/``.

    ``name`` defaults to :func:`adapter_name` of the run's metric and backbone. The run's checkpoints,
    optimizer state and teacher scores are not copied. Replaces what was there; returns the folder.
    """
    import shutil

    from ..paths import project_root

    run = Path(run)
    meta = read_meta(run)
    read_provenance(run)  # a finished run
    name = name or adapter_name(meta["metric"], meta["backbone"])
    dest = Path(dest) if dest is not None else project_root() / "models" / name
    with new_folder(dest) as tmp:
        for f in SHIPPED_FILES:
            if (run / f).exists():
                shutil.copy2(run / f, tmp / f)
        write_provenance(tmp, {**read_provenance(tmp), "name": name, "files": provenance_files(tmp)})
    return dest


def record_evaluation(folder, table: pd.DataFrame, criteria: pd.DataFrame, *, curve: pd.DataFrame | None = None,
                      command: str | None = None) -> dict:
    """Add the before/after figures of an adapter (``evaluation.compare`` and ``evaluation.target`` tables, and
    optionally its checkpoint ``curve``) to its ``provenance.json``, with the command that computed them."""
    from ..provenance import command as this_command

    record = read_provenance(folder)
    clean = lambda t: json.loads(t.to_json(orient="records"))  # noqa: E731  (NaN -> null, numpy -> JSON)
    figures = {"command": command or this_command(), "evaluation": clean(table), "criteria": clean(criteria)}
    before = record.get("figures") or {}
    if curve is not None:
        figures["curve"] = clean(curve)
    elif before.get("curve"):  # evaluated again without the training run's checkpoints: their curve stays, with its command
        figures["curve"] = before["curve"]
        figures["curve_command"] = before.get("curve_command", before.get("command"))
    record["figures"] = figures
    write_provenance(folder, record)
    return record


def checkpoints(out) -> list[tuple[int, Path]]:
    """(step, folder) of every checkpoint of a training run, in step order."""
    return [(int(p.name.split("-")[1]), p) for p in sorted(Path(out).glob("checkpoints/step-*"))
            if (p / "adapter_config.json").exists()]


__all__ = ["ADAPTER_NAME", "DEFAULTS", "DEFAULT_BACKBONES", "METRICS", "PAPER_HPARAMS", "SHIPPED_FILES", "Shipped", "TrainConfig",
           "TrainResult", "adapter_name", "add_adapter", "checkpoints", "debias_loss", "default_config", "default_out",
           "default_steps", "kd_loss", "load_scorer", "load_target", "paper_epochs", "read_meta", "record_evaluation",
           "save_adapter", "ship", "shipped", "stream_indices", "teacher_scores", "train"]
