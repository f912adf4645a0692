"""A frozen encoder used as a paraphraser: UniLM's sequence-to-sequence mask, adapters and a tied LM head.

The generation paradigm needs p(target | source). Following UniLM (Dong et al., 2019), one
encoder reads ``[CLS] source [SEP] target [SEP]`` under a **sequence-to-sequence
self-attention mask**: source tokens attend to every source token (both directions);
target tokens attend to the whole source and to the target tokens up to themselves. The
backbone's weights stay frozen and identical to the ones the matching and regression
metrics use. Trained, and saved (fp16, :mod:`.parts`):

* bottleneck **adapters** (the ``adapters`` library's ``seq_bn``, Pfeiffer et al.: after the
  feed-forward sub-layer) in the top ``adapter_layers`` layers;
* the **LM head**: the backbone's own masked-LM head class (dense + GELU + LayerNorm, then a
  decoder tied to the frozen word embeddings, plus an output bias); the dense, the LayerNorm
  and the bias are trained, the bias starting at the log unigram frequencies of the targets.

**Prediction** (``predict="mask"``, UniLM's masked form with UniLMv2's pseudo masks, Bao et
al., 2020): each target token gets a [MASK] twin at its own position that sees the source, the
target tokens before it and itself, and the twin's hidden state predicts the token through the
masked-LM head. A frozen encoder already fills a [MASK] from its context, so the head can start
from a trained masked-LM head (``head_from``, :mod:`.mlm_head`), and one pass scores every
target token with the exact left-to-right factorisation BARTScore and PRISM average.
(``predict="shift"``, the form of the first paraphrasers: the hidden state of a position predicts
the next target token; with frozen attention, copying from the source is then hard to learn.)
:func:`log_likelihood` is the mean log probability of the target tokens, the closing [SEP]
included, as BARTScore counts ``</s>``.

**CPU recipe.** The layers below the adapters are frozen and see the same mask, so their
output does not depend on anything trained: it is computed once per training example
(:meth:`Paraphraser.lower`), and each step runs only the top layers and the head. AdamW,
linear warm-up (6%) and decay, gradient norm clipped at 1, the model in eval mode (no
dropout), a seeded batch order; optionally the steps under bf16 autocast (``autocast``; on a CPU with bf16
instructions about 3x faster). A run longer than a session goes in chunks: checkpoints of the trained tensors,
the optimizer and the log every ``checkpoint_every`` steps in a run folder (:mod:`.checkpoint`), and a resumed run
ends with the tensors of an uninterrupted one (:func:`train`). ``metricbias train para-<backbone>``
(:mod:`metricbias.book.training_data`).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from .. import backbones, models
from . import parts

KIND = "seq2seq"
ADAPTER = "paraphrase"
#: the module holding the masked-LM head, by model type
HEADS = {"bert": "cls", "mpnet": "lm_head"}


@dataclass
class Config:
    base: str = "all-MiniLM-L6-v2"
    adapter_layers: int = 3  # adapters in this many top layers; the rest is computed once per example
    reduction_factor: int = 16
    max_length: int = 128  # tokens per side, special tokens included
    steps: int = 1500
    batch_size: int = 32
    lr: float = 1e-3
    warmup_fraction: float = 0.06
    weight_decay: float = 0.01
    seed: int = 0
    validation_fraction: float = 0.05
    max_examples: int = 0  # train on a seeded sample of this many examples (0: all)
    eval_every: int = 100
    predict: str = "mask"  # "mask": a [MASK] twin per target token predicts it; "shift": the token before does
    head_from: str = ""  # start the LM head from this masked-LM head (an mlm-* artifact); "": a new head
    denoise_examples: int = 0  # add this many word-deletion copies of masked-LM sentences to the pairs (recipes)
    checkpoint_every: int = 100  # steps between checkpoints, when a run folder is given (train's run_dir)
    autocast: str = ""  # "bfloat16": the training steps under CPU/GPU autocast (validation and scoring in fp32)


@dataclass
class Packed:
    """Rows of :meth:`Paraphraser.pack`: token ids, the UniLM mask (row x from x to), each token's position in its
    own sequence; per tree node the row and column of the hidden state that predicts it and its token id; per group
    and target, the flat node indices of the target's tokens."""

    ids: "torch.Tensor"
    mask: "torch.Tensor"
    positions: "torch.Tensor"
    pred_rows: "torch.Tensor"
    pred_cols: "torch.Tensor"
    tokens: "torch.Tensor"
    paths: list


def _interface(model_type: str):
    """How the ``adapters`` library finds the sub-layers of a model it has no built-in support for (MPNet)."""
    from adapters import AdapterModelInterface

    if model_type == "mpnet":
        return AdapterModelInterface(
            adapter_methods=["bottleneck"], model_embeddings="embeddings", model_layers="encoder.layer",
            layer_self_attn="attention", layer_cross_attn=None, attn_k_proj="attn.k", attn_q_proj="attn.q",
            attn_v_proj="attn.v", attn_o_proj="attn.o", layer_intermediate_proj="intermediate.dense",
            layer_output_proj="output.dense")
    return None


def _masked_lm(base_path: Path):
    """The base encoder inside its masked-LM class (the head is new: weights come from our parts)."""
    from transformers import AutoModelForMaskedLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    backbones.offline_env()
    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # "newly initialized head" is expected: it is trained here
    try:
        model = AutoModelForMaskedLM.from_pretrained(str(base_path))
        tokenizer = AutoTokenizer.from_pretrained(str(base_path))
    finally:
        hf_logging.set_verbosity(verbosity)
    if model.config.model_type not in HEADS:
        raise parts.PartsError(f"{base_path}: model type {model.config.model_type!r} is not supported "
                               f"(supported: {', '.join(HEADS)})")
    model.requires_grad_(False)
    return tokenizer, model.eval()


def head_of(model):
    return getattr(model, HEADS[model.config.model_type])


def head_parameters(model) -> dict:
    """The trainable head tensors by name: the dense, the LayerNorm and the output bias (not the tied decoder)."""
    prefix = model.base_model_prefix + "."
    return {n: p for n, p in model.named_parameters() if not n.startswith(prefix)}


class Paraphraser:
    """A frozen encoder + adapters + LM head; scores ``log p(target | source)`` (see the module docstring)."""

    def __init__(self, tokenizer, model, config: Config, device: str = "cpu"):
        self.tokenizer, self.model, self.config, self.device = tokenizer, model, config, device
        self.n_layers = int(model.config.num_hidden_layers)
        if not 1 <= config.adapter_layers <= self.n_layers:
            raise parts.PartsError(f"adapter_layers={config.adapter_layers} but the base has {self.n_layers} layers")
        self.split = self.n_layers - config.adapter_layers  # first layer with an adapter

    # --- building -------------------------------------------------------------------------
    @classmethod
    def new(cls, config: Config, base_path: Path, device: str = "cpu") -> "Paraphraser":
        import adapters
        from adapters import SeqBnConfig

        tokenizer, model = _masked_lm(base_path)
        adapters.init(model, interface=_interface(model.config.model_type))
        n = int(model.config.num_hidden_layers)
        model.add_adapter(ADAPTER, config=SeqBnConfig(reduction_factor=config.reduction_factor,
                                                      leave_out=list(range(n - config.adapter_layers))),
                          set_active=True)
        model.requires_grad_(False)
        for p in [*cls.adapter_parameters(model).values(), *head_parameters(model).values()]:
            p.requires_grad_(True)
        return cls(tokenizer, model.eval().to(device), config, device)

    @staticmethod
    def adapter_parameters(model) -> dict:
        return {n: p for n, p in model.named_parameters() if f"adapters.{ADAPTER}." in n}

    def trained_tensors(self) -> dict:
        return {**self.adapter_parameters(self.model), **head_parameters(self.model)}

    # --- the forward pass -----------------------------------------------------------------
    def encode(self, sources: Sequence[str], targets: Sequence[str]) -> list[tuple[list[int], list[int]]]:
        """Token ids of each (source, target): ``[CLS] source [SEP]`` and ``target [SEP]``, each side truncated."""
        m = self.config.max_length
        src = self.tokenizer(list(sources), truncation=True, max_length=m)["input_ids"]
        tgt = self.tokenizer(list(targets), truncation=True, max_length=m)["input_ids"]
        return [(s, t[1:]) for s, t in zip(src, tgt)]  # the target keeps its closing [SEP], not its [CLS]

    def pack(self, groups: Sequence[tuple[list[int], Sequence[list[int]]]]) -> "Packed":
        """One row per ``(source, targets)`` group: the source once, then the targets' tokens as a prefix tree.

        Under the UniLM mask the source never sees a target, and a target token sees only the source
        and its own earlier tokens; so targets that share a source share its hidden states, and
        targets that also share their first tokens share those too (a pair's two candidates differ in
        a word or two). Each tree node attends to the source, its ancestors and itself, at the position
        it has in its own ``[CLS] source [SEP] target [SEP]``: every target's log-probabilities are
        those of a row of its own. A group with one target is exactly that row.
        """
        import torch

        rows = []  # per group: token ids, parent of each tree node (-1: the source's [SEP]), node depth, paths
        for source, targets in groups:
            node_of: dict = {}
            tokens, parents, depths, paths = [], [], [], []
            for target in targets:
                path, parent = [], -1
                for depth, tok in enumerate(target, 1):
                    key = (parent, tok)
                    if key not in node_of:
                        node_of[key] = len(tokens)
                        tokens.append(tok)
                        parents.append(parent)
                        depths.append(depth)
                    parent = node_of[key]
                    path.append(parent)
                paths.append(path)
            rows.append((list(source), tokens, parents, depths, paths))
        twins = self.config.predict == "mask"
        width = max(len(s) + len(t) * (2 if twins else 1) for s, t, *_ in rows)
        pad = self.tokenizer.pad_token_id
        ids = torch.full((len(rows), width), pad, dtype=torch.long)
        positions = torch.zeros((len(rows), width), dtype=torch.long)
        mask = torch.zeros((len(rows), width, width))
        pred_rows, pred_cols, node_tokens, paths_out = [], [], [], []
        for i, (source, tokens, parents, depths, paths) in enumerate(rows):
            ls, n = len(source), len(tokens)
            used = ls + n * (2 if twins else 1)
            ids[i, :ls + n] = torch.tensor(source + tokens)
            positions[i, :ls] = torch.arange(ls)
            positions[i, ls:ls + n] = torch.tensor(depths) + (ls - 1)
            if twins:  # the [MASK] twins follow the nodes, each at its node's position
                ids[i, ls + n:used] = self.tokenizer.mask_token_id
                positions[i, ls + n:used] = positions[i, ls:ls + n]
            mask[i, :used, :ls] = 1.0  # everyone sees the whole source
            first = len(node_tokens)  # flat index of this group's first node
            for j, parent in enumerate(parents):  # parents come first: a node sees what its parent sees, and itself
                if parent >= 0:
                    mask[i, ls + j, ls:ls + n] = mask[i, ls + parent, ls:ls + n]
                mask[i, ls + j, ls + j] = 1.0
                pred_rows.append(i)
                if twins:  # the twin sees the node's ancestors (what its parent sees, and the parent) and itself
                    if parent >= 0:
                        mask[i, ls + n + j, ls:ls + n] = mask[i, ls + parent, ls:ls + n]
                    mask[i, ls + n + j, ls + n + j] = 1.0
                    pred_cols.append(ls + n + j)
                else:  # the hidden state before a token predicts it
                    pred_cols.append(ls - 1 if parent < 0 else ls + parent)
            node_tokens += tokens
            paths_out.append([[first + j for j in path] for path in paths])
        return Packed(ids, mask, positions, torch.tensor(pred_rows), torch.tensor(pred_cols),
                      torch.tensor(node_tokens), paths_out)

    def row_length(self, source, target) -> int:
        """Columns of the row of one ``(source, target)``: the source, the target and, if predicted by mask, its twins."""
        return len(source) + len(target) * (2 if self.config.predict == "mask" else 1)

    def _extended(self, mask, dtype):
        return self.model.base_model.get_extended_attention_mask(mask.to(self.device), mask.shape[:2], dtype=dtype)

    def run_layers(self, hidden, packed: "Packed", start: int, stop: int):
        """Layers ``start .. stop-1`` of the encoder on ``hidden`` under the packed rows' mask and positions."""
        base = self.model.base_model
        ext = self._extended(packed.mask, hidden.dtype)
        extra = {}
        if self.model.config.model_type == "mpnet":  # relative position bias from each token's own position
            encoder = base.encoder
            relative = packed.positions[:, None, :] - packed.positions[:, :, None]  # key position - query position
            bucket = encoder.relative_position_bucket(relative).to(self.device)
            extra["position_bias"] = encoder.relative_attention_bias(bucket).permute(0, 3, 1, 2).contiguous()
        for layer in base.encoder.layer[start:stop]:
            hidden = layer(hidden, ext, **extra)[0]
        return hidden

    def lower(self, packed: "Packed"):
        """Embeddings and the frozen layers below the adapters (nothing trained reaches them)."""
        import torch

        base = self.model.base_model
        offset = base.embeddings.padding_idx + 1 if self.model.config.model_type == "mpnet" else 0  # RoBERTa-style ids
        with torch.no_grad():
            extra = {}
            if self.model.config.model_type == "bert":  # a packed row may be wider than BERT's 512-column buffer
                extra["token_type_ids"] = torch.zeros_like(packed.ids).to(self.device)
            hidden = base.embeddings(input_ids=packed.ids.to(self.device),
                                     position_ids=(packed.positions + offset).to(self.device), **extra)
            return self.run_layers(hidden, packed, 0, self.split)

    def node_log_probs(self, packed: "Packed", lower_hidden=None):
        """log p of every tree node's token (flat, in :meth:`pack`'s node order)."""
        import torch

        hidden = self.lower(packed) if lower_hidden is None else lower_hidden
        top = self.run_layers(hidden, packed, self.split, self.n_layers)
        picked = top[packed.pred_rows.to(self.device), packed.pred_cols.to(self.device)]
        logits = head_of(self.model)(picked).float()
        return torch.log_softmax(logits, -1).gather(-1, packed.tokens.to(self.device)[:, None])[:, 0]

    def log_probs(self, encoded, lower_hidden=None):
        """Per-token target log-probabilities (flat) and the target lengths of encoded pairs, a row each (training)."""
        packed = self.pack([(s, [t]) for s, t in encoded])
        return self.node_log_probs(packed, lower_hidden), [len(t) for _, t in encoded]

    def log_likelihood(self, sources: Sequence[str], targets: Sequence[str], *, batch_size: int = 16,
                       progress: bool = False) -> np.ndarray:
        """Mean log p(target token | source, earlier target tokens) per pair (BARTScore's average).

        Pairs that share a source are packed into one row (:meth:`pack`); rows are sorted by length,
        ``batch_size`` rows per forward pass.
        """
        import torch

        from ..progress import tqdm

        encoded = self.encode(sources, targets)
        groups: dict = {}
        for i, (s, t) in enumerate(encoded):
            groups.setdefault(tuple(s), []).append(i)
        # at most batch_size targets per row, so that one row never holds many more tokens than a batch would
        items = [(s, idx[k:k + batch_size]) for s, idx in groups.items() for k in range(0, len(idx), batch_size)]
        items.sort(key=lambda g: len(g[0]) + sum(len(encoded[i][1]) for i in g[1]))
        # batch_size rows per pass, as unpacked: on a CPU, passes of fewer tokens run at a lower rate
        batches = [items[k:k + batch_size] for k in range(0, len(items), batch_size)]
        out = np.zeros(len(encoded))
        for batch in tqdm(batches, desc=f"paraphraser log p ({self.config.base})", disable=not progress,
                          unit="batch"):
            packed = self.pack([(list(s), [encoded[i][1] for i in idx]) for s, idx in batch])
            with torch.inference_mode():
                lp = self.node_log_probs(packed).double().cpu().numpy()
            for (_, idx), paths in zip(batch, packed.paths):
                for i, path in zip(idx, paths):
                    out[i] = lp[path].mean()
        return out

    # --- saving and loading ---------------------------------------------------------------
    def save(self, folder, provenance: dict) -> Path:
        return parts.save(folder, self.trained_tensors(), provenance)

    @classmethod
    def load(cls, folder, device: str = "cpu") -> "Paraphraser":
        import torch

        tensors, info = parts.load(folder)
        if info.get("kind") != KIND or info.get("model") != "unilm-paraphraser":
            raise parts.PartsError(f"{folder} does not hold a UniLM paraphraser")
        config = Config(**{"predict": "shift", **info["config"]})  # artifacts from before the field predicted by shift
        para = cls.new(config, parts.base_of(info, folder), device)
        own = para.trained_tensors()
        if set(own) != set(tensors):
            raise parts.PartsError(f"{folder}: saved tensors do not match the model (missing "
                                   f"{sorted(set(own) - set(tensors))[:3]}, unexpected {sorted(set(tensors) - set(own))[:3]})")
        with torch.no_grad():
            for name, value in tensors.items():
                own[name].copy_(value)
        para.model.requires_grad_(False)
        return para


def is_paraphraser(path) -> bool:
    path = Path(path)
    return backbones.is_trained_dir(path) and backbones.trained_info(path).get("model") == "unilm-paraphraser"


_LOADED: dict = {}


def load(name_or_path: str, device: str = "auto") -> Paraphraser:
    """A trained paraphraser by backbone name or folder, loaded once per process (per folder fingerprint)."""
    folder = parts.resolve_folder(name_or_path, KIND)
    device = models.resolve_device(device)
    key = (str(folder), backbones.fingerprint_path(folder), device)
    if key not in _LOADED:
        _LOADED.clear()  # one paraphraser at a time: MPNet's is 440 MB
        _LOADED[key] = Paraphraser.load(folder, device)
    return _LOADED[key]


# --- training ---------------------------------------------------------------------------------

def _unigram_bias(tokenizer, targets: list[list[int]]):
    """Log relative frequency of each vocabulary item among the training targets (add-one smoothed)."""
    import torch

    counts = np.ones(len(tokenizer))
    for t in targets:
        np.add.at(counts, t, 1)
    return torch.tensor(np.log(counts / counts.sum()), dtype=torch.float32)


def train(config: Config, out, *, name: str, examples, validation=None, counts=None, device: str = "auto",
          progress: bool = True, command: str = "", run_dir=None, resume: bool = True,
          stop_after: int | None = None) -> dict | None:
    """Train a paraphraser on ``examples`` (``text, target``, optionally ``pair``) into ``out``.

    ``validation`` (same columns) defaults to a seeded ``validation_fraction`` of the pairs;
    ``counts`` (how the data was gathered) goes into the provenance. The project's data is in
    :mod:`metricbias.book.training_data`, its recipes in :mod:`.recipes`. Returns the provenance written with
    the parts (loss curve end points, validation log-likelihood, data counts and fingerprints, seconds).

    **In chunks.** With a ``run_dir``, the trained tensors, the optimizer, the scheduler and the log are checkpointed
    there every ``config.checkpoint_every`` steps (:class:`.checkpoint.Checkpoints`), and with ``resume`` (the
    default) a run starts from the last checkpoint of the same configuration and data. The batch of a step follows
    from the step number (:func:`~metricbias.trained.loop.shuffled_batches` with ``start``), so a resumed run ends
    with the tensors of an uninterrupted one. ``stop_after``: leave after that many steps (a checkpoint written;
    returns None), for runs longer than a session.
    """
    import torch
    from tqdm.auto import tqdm
    from transformers import get_linear_schedule_with_warmup

    from .checkpoint import Checkpoints, autocast, config_key
    from .loop import fit, shuffled_batches

    start_time = time.perf_counter()
    device = models.resolve_device(device)
    if validation is None:
        pairs = examples["pair"].drop_duplicates().tolist() if "pair" in examples else list(range(len(examples)))
        _, val_idx = parts.split(len(pairs), config.validation_fraction, config.seed)
        held = {pairs[i] for i in val_idx}
        key = examples["pair"] if "pair" in examples else examples.index
        validation, examples = examples[key.isin(held)], examples[~key.isin(held)]
    if config.max_examples and len(examples) > config.max_examples:
        examples = examples.sample(n=config.max_examples, random_state=config.seed).sort_index()
    if stop_after is not None and run_dir is None:
        raise ValueError("train: stop_after needs a run_dir to hold the checkpoint")
    parts.seed_everything(config.seed)
    base_path = backbones.resolve(config.base)
    base_fingerprint = backbones.fingerprint_path(base_path)
    para = Paraphraser.new(config, base_path, device)
    train_enc = para.encode(examples["text"].tolist(), examples["target"].tolist())
    val_enc = para.encode(validation["text"].tolist(), validation["target"].tolist()) if len(validation) else []
    train_fingerprint = parts.text_fingerprint(examples["text"] + "\x01" + examples["target"])
    validation_fingerprint = parts.text_fingerprint(validation["text"] + "\x01" + validation["target"])
    if config.head_from:  # a trained masked-LM head on the same base: the twins' predictions start as its fills
        tensors, info = parts.load(parts.resolve_folder(config.head_from, "mlm"))
        own = head_parameters(para.model)
        if set(tensors) != set(own) or info.get("base_fingerprint") != base_fingerprint:
            raise parts.PartsError(f"{config.head_from!r} is not a masked-LM head of {config.base}")
        with torch.no_grad():
            for key, value in tensors.items():
                own[key].copy_(value)
    else:
        with torch.no_grad():
            para.model.get_output_embeddings().bias.copy_(_unigram_bias(para.tokenizer, [t for _, t in train_enc]))

    # the frozen lower layers, once per example (fp16 in memory: MPNet's are ~100 kB each)
    cache = [None] * len(train_enc)
    order = sorted(range(len(train_enc)), key=lambda i: len(train_enc[i][0]) + len(train_enc[i][1]))
    for b in tqdm(range(0, len(order), 64), desc=f"{name}: " + (f"frozen layers 0-{para.split - 1}" if para.split else "embeddings"), disable=not progress):
        idx = order[b:b + 64]
        hidden = para.lower(para.pack([(train_enc[i][0], [train_enc[i][1]]) for i in idx])).half().cpu()
        for row, i in enumerate(idx):
            cache[i] = hidden[row, :para.row_length(*train_enc[i])].clone()
    lower_seconds = time.perf_counter() - start_time

    trainable = [p for p in para.model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=config.lr, weight_decay=config.weight_decay)
    scheduler = get_linear_schedule_with_warmup(optimizer, int(config.warmup_fraction * config.steps), config.steps)
    state = {"step": 0, "losses": [], "log": [], "seconds": 0.0}
    runs = None
    if run_dir is not None:
        runs = Checkpoints(run_dir, config_key(config, base_fingerprint, train_fingerprint, validation_fingerprint),
                           para.trained_tensors(), optimizer, scheduler)
        state, _ = runs.resume(state, resume=resume)
    resumed_at = state["step"]
    stop_at = None if stop_after is None else state["step"] + stop_after
    tic = [time.perf_counter()]

    def evaluate() -> float:
        if not val_enc:
            return float("nan")
        with torch.inference_mode():
            total, n = 0.0, 0
            for b in range(0, len(val_enc), 64):
                lp, _ = para.log_probs(val_enc[b:b + 64])
                total, n = total + float(lp.double().sum()), n + lp.numel()
        return total / n

    def batch_loss(idx):
        encoded = [train_enc[i] for i in idx]
        width = max(para.row_length(s, t) for s, t in encoded)
        lower = torch.zeros((len(idx), width, cache[idx[0]].shape[-1]))
        for row, i in enumerate(idx):
            lower[row, :cache[i].shape[0]] = cache[i].float()
        with autocast(device, config.autocast):
            lp, _ = para.log_probs(encoded, lower_hidden=lower.to(device))
        return -lp.float().mean()

    def after_step(step, losses):
        state["step"] = step
        state["losses"].append(losses[-1])
        bar.set_postfix(loss=f"{np.mean(state['losses'][-20:]):.3f}")
        if step % config.eval_every == 0 or step == config.steps:
            state["log"].append({"step": step, "train_loss": float(np.mean(state["losses"][-config.eval_every:])),
                                 "validation_log_likelihood": evaluate() if step != config.steps else None})
        if runs is not None and (step % config.checkpoint_every == 0 or step == config.steps or step == stop_at):
            state["seconds"] += time.perf_counter() - tic[0]
            tic[0] = time.perf_counter()
            runs.write(step, state)
        return step == stop_at

    bar = tqdm(total=config.steps, initial=state["step"], desc=f"train {name}", disable=not progress)
    if state["step"] < config.steps:
        generator = torch.Generator().manual_seed(config.seed)
        fit(batch_loss, shuffled_batches(len(train_enc), config.batch_size, generator, drop_last=True,
                                         start=state["step"]),
            params=trainable, optimizer=optimizer, scheduler=scheduler, steps=config.steps, start=state["step"],
            bar=bar, after_step=after_step)
    bar.close()
    if stop_at is not None and state["step"] == stop_at < config.steps:
        return None
    if runs is None:
        state["seconds"] += time.perf_counter() - tic[0]
    parts.round_fp16_(para.trained_tensors().values())  # what is saved is what is evaluated
    val_ll = evaluate()
    log, losses = state["log"], state["losses"]
    log[-1]["validation_log_likelihood"] = val_ll
    provenance = {
        "name": name, "kind": KIND, "model": "unilm-paraphraser", "base": config.base,
        "base_fingerprint": base_fingerprint, "config": asdict(config),
        "command": command or f"metricbias train {name}", "seed": config.seed, "steps": config.steps,
        "resumed_at_step": resumed_at or None,
        "device": device, "trainable_parameters": int(sum(p.numel() for p in trainable)),
        "head_from": config.head_from and str(parts.resolve_folder(config.head_from, "mlm").name),
        "data": {"train_examples": len(train_enc), "validation_examples": len(val_enc),
                 "train_fingerprint": train_fingerprint, "validation_fingerprint": validation_fingerprint,
                 "counts": counts.to_dict("records") if counts is not None else None},
        "library_versions": parts.library_versions(),
        "figures": {"first_loss": losses[0], "final_train_loss": float(np.mean(losses[-50:])),
                    "validation_log_likelihood": val_ll, "validation_perplexity": float(np.exp(-val_ll)),
                    "log": log},
        "seconds": {"frozen_layers": round(lower_seconds, 1), "training": round(state["seconds"], 1),
                    "total": round(time.perf_counter() - start_time, 1)},
    }
    para.save(out, provenance)
    return provenance


__all__ = ["Config", "HEADS", "KIND", "Paraphraser", "head_parameters", "is_paraphraser", "load", "train"]
