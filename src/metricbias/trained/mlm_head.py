"""A masked-LM head on a frozen encoder, for the pseudo-log-likelihood measures (SSS, CPS, AUL).

The sentence encoders here were fine-tuned for sentence embeddings and ship without a
masked-LM head. The head is the backbone's own masked-LM head class (BERT:
``cls.predictions``; MPNet: ``lm_head``): a dense layer, GELU, a layer norm and a decoder
tied to the frozen word embeddings, plus an output bias. The encoder stays frozen, so its
last-layer states of the masked training sentences are computed **once** and the head is
trained on those cached features.

Masking is BERT's: 15% of the non-special tokens of each sentence are selected (at least
one); of those 80% become [MASK], 10% a random token, 10% stay; the loss is the cross-entropy
at the selected positions. Each sentence is masked ``maskings`` times (seeded), a
``validation_fraction`` of the sentences is held out, and the **masked-token accuracy** is
measured there (the top prediction equals the original token, at positions replaced by
[MASK]). AdamW with linear decay; values rounded to fp16 before evaluation and saving. Its reference point:
always predicting the most frequent token of the training sentences, on the same positions
(:func:`most_frequent_token_accuracy`).

A run is resumable in chunks (:func:`train`): the cached states are saved chunk by chunk, the head and
the optimizer every ``checkpoint_every`` steps, and a resumed run ends with the tensors of an
uninterrupted one. Optional regularisers: dropout on the states, the output bias started at the log
unigram frequencies, and the head of lowest validation loss kept (early stopping, ``patience``).

With the head, :func:`load` gives a transformers ``*ForMaskedLM`` model that
:func:`metricbias.bias.pll.load_masked_lm` takes like any masked LM.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from .. import backbones, models
from . import parts
from .checkpoint import Checkpoints, autocast as autocast_, checkpoints, config_key
from .paraphraser import _masked_lm, head_of, head_parameters

KIND = "mlm"


@dataclass
class Config:
    base: str = "all-MiniLM-L6-v2"
    mask_fraction: float = 0.15
    maskings: int = 1  # independent maskings of each training sentence
    extra_maskings: int = -1  # maskings of each extra (training-only) sentence (-1: as many as maskings)
    max_sentences: int = 0  # train on a seeded sample of this many sentences (0: all)
    max_extra: int = 0  # and on the first this many of a seeded order of the training-only sentences (0: none)
    max_length: int = 64
    epochs: int = 4
    batch_size: int = 256  # masked positions per step
    lr: float = 2e-3
    weight_decay: float = 0.01
    seed: int = 0
    validation_fraction: float = 0.1
    chunk_sentences: int = 2048  # training sentences per cached-feature chunk (each saved once computed)
    checkpoint_every: int = 200  # optimizer steps between checkpoints of the head and the optimizer state
    dropout: float = 0.0  # dropout on the frozen encoder's states while training
    bias_init: str = "zero"  # the output bias at the start: zero, or log_frequency of the training labels
    select: str = "last"  # the head kept: the last, or the one of lowest validation "loss" (early stopping)
    patience: int = 0  # stop after this many evaluations without a lower validation loss (0: never)
    eval_every: int = 0  # steps between validation measurements (0: once an epoch)
    autocast: str = ""  # "bfloat16": the training features and steps under CPU/GPU autocast (validation in fp32)


#: config fields that determine the cached features of the training sentences (the rest only the training)
FEATURE_FIELDS = ("base", "mask_fraction", "max_length", "seed", "chunk_sentences", "autocast")


def mask_tokens(ids: list[int], special: list[int], rng: np.random.Generator, mask_id: int, vocab_size: int,
                fraction: float) -> tuple[list[int], list[int], list[bool]]:
    """BERT's masking of one sentence: ``(input ids, selected positions, replaced-by-[MASK] flags)``."""
    candidates = [i for i, s in enumerate(special) if not s]
    n = max(1, int(round(fraction * len(candidates))))
    chosen = sorted(rng.choice(candidates, size=min(n, len(candidates)), replace=False).tolist())
    out, masked = list(ids), []
    for pos in chosen:
        u = rng.random()
        if u < 0.8:
            out[pos] = mask_id
        elif u < 0.9:
            out[pos] = int(rng.integers(vocab_size))
        masked.append(u < 0.8)
    return out, chosen, masked


def features(tokenizer, model, sentences: list[str], config: Config, seed: int, *, maskings: int,
             progress: bool = False, desc: str = "features", autocast: str = ""):
    """Last-layer states of the frozen encoder at the selected positions of masked ``sentences``.

    Returns ``(states (n x hidden), original token ids (n), replaced-by-[MASK] flags (n))``. ``autocast``
    ("bfloat16"): the encoder runs under autocast (on a CPU with bf16 instructions about 3x faster; the states
    differ from fp32 by about 1% in norm).
    """
    import torch
    from tqdm.auto import tqdm

    rng = np.random.default_rng(seed)
    enc = tokenizer(sentences, truncation=True, max_length=config.max_length, return_special_tokens_mask=True)
    items = []
    for _ in range(maskings):
        for ids, special in zip(enc["input_ids"], enc["special_tokens_mask"]):
            masked_ids, pos, flags = mask_tokens(ids, special, rng, tokenizer.mask_token_id, len(tokenizer),
                                                 config.mask_fraction)
            items.append((masked_ids, pos, [ids[p] for p in pos], flags))
    order = sorted(range(len(items)), key=lambda i: len(items[i][0]))
    states, labels, flags = [], [], []
    device = next(model.parameters()).device
    base = model.base_model
    for b in tqdm(range(0, len(order), 64), desc=desc, disable=not progress):
        batch = [items[i] for i in order[b:b + 64]]
        width = max(len(x[0]) for x in batch)
        ids = torch.full((len(batch), width), tokenizer.pad_token_id, dtype=torch.long)
        att = torch.zeros((len(batch), width), dtype=torch.long)
        for r, (x, *_rest) in enumerate(batch):
            ids[r, :len(x)], att[r, :len(x)] = torch.tensor(x), 1
        with torch.inference_mode(), autocast_(device, autocast):
            hidden = base(input_ids=ids.to(device), attention_mask=att.to(device)).last_hidden_state.float().cpu()
        for r, (_, pos, orig, fl) in enumerate(batch):
            states.append(hidden[r, pos])
            labels += orig
            flags += fl
    return torch.cat(states), torch.tensor(labels), torch.tensor(flags)


def _logits(model, states):
    return head_of(model)(states).float()


def accuracy(model, states, labels, flags, batch_size: int = 2048) -> dict:
    """Masked-token accuracy (top-1 at [MASK] positions), and the mean loss over all selected positions."""
    import torch

    hits, n_mask, loss_sum = 0, 0, 0.0
    with torch.inference_mode():
        for b in range(0, len(labels), batch_size):
            logits = _logits(model, states[b:b + batch_size])
            y, f = labels[b:b + batch_size], flags[b:b + batch_size]
            loss_sum += float(torch.nn.functional.cross_entropy(logits, y, reduction="sum"))
            hits += int((logits.argmax(-1)[f] == y[f]).sum())
            n_mask += int(f.sum())
    return {"masked_token_accuracy": hits / max(n_mask, 1), "loss": loss_sum / max(len(labels), 1),
            "masked_positions": n_mask}


def most_frequent_token_accuracy(train_tokens, labels, flags) -> tuple[int, float]:
    """The reference point of masked-token accuracy: ``(token, accuracy)`` of always predicting the token most
    frequent in ``train_tokens`` (ties: the smallest id), on the validation positions ``labels`` replaced by
    [MASK] (``flags``), the positions :func:`accuracy` counts."""
    train_tokens = np.asarray(train_tokens, dtype=np.int64).ravel()
    labels, flags = np.asarray(labels, dtype=np.int64), np.asarray(flags, dtype=bool)
    if not train_tokens.size:
        raise ValueError("most_frequent_token_accuracy: no training tokens")
    values, counts = np.unique(train_tokens, return_counts=True)
    token = int(values[np.argmax(counts)])  # np.unique sorts, argmax takes the first of the largest counts
    n = int(flags.sum())
    return token, (float((labels[flags] == token).sum()) / n if n else float("nan"))


def sentence_tokens(tokenizer, sentences, max_length: int) -> np.ndarray:
    """Every non-special token id of ``sentences`` as the encoder reads them (truncated at ``max_length``)."""
    enc = tokenizer(list(sentences), truncation=True, max_length=max_length, return_special_tokens_mask=True)
    return np.asarray([t for ids, sp in zip(enc["input_ids"], enc["special_tokens_mask"])
                       for t, s in zip(ids, sp) if not s], dtype=np.int64)


def reference_point(tokenizer, train_s, vy, vf, max_length: int) -> dict:
    """:func:`most_frequent_token_accuracy` with the most frequent token of ``train_s`` (the training side of the
    sentences the validation sentences are drawn from: the extra sentences do not count)."""
    token, acc = most_frequent_token_accuracy(sentence_tokens(tokenizer, train_s, max_length), vy, vf)
    return {"most_frequent_token": tokenizer.convert_ids_to_tokens(token),
            "most_frequent_token_accuracy": acc}


def data_split(config: Config, sentences: list[str], extra_sentences=()) -> tuple[list[str], list[str], list[str]]:
    """``(train sentences, validation sentences, extra sentences used)`` of ``config``: the validation sentences a
    seeded ``validation_fraction`` of ``sentences``, the training side the rest (a seeded ``max_sentences`` of it if
    given) and the first ``max_extra`` of a seeded order of ``extra_sentences``."""
    train_idx, val_idx = parts.split(len(sentences), config.validation_fraction, config.seed)
    if config.max_sentences and len(train_idx) > config.max_sentences:
        train_idx = sorted(np.random.default_rng(config.seed).choice(train_idx, config.max_sentences, replace=False))
    extra = list(extra_sentences)
    if config.max_extra < len(extra):
        order = np.random.default_rng([config.seed, 2]).permutation(len(extra))[:config.max_extra]
        extra = [extra[i] for i in order]
    return [sentences[i] for i in train_idx] + extra, [sentences[i] for i in val_idx], extra


def chunk_plan(n: int, config: Config, n_extra: int = 0) -> list[tuple[int, int, int]]:
    """``(masking, start, stop)`` of each feature chunk of ``n`` training sentences, the last ``n_extra`` of them
    extra sentences (masked ``extra_maskings`` times), masking after masking.

    Chunk boundaries are multiples of ``chunk_sentences`` and a chunk's masking is seeded by ``(seed, masking,
    start)``, so a chunk's features depend on its own sentences alone: more extra sentences or maskings add chunks.
    """
    step = max(1, config.chunk_sentences)
    extra_maskings = config.maskings if config.extra_maskings < 0 else config.extra_maskings
    if extra_maskings > config.maskings:
        raise ValueError(f"extra_maskings={extra_maskings} is more than maskings={config.maskings}")
    plan = []
    for m in range(config.maskings):
        stop = n if m < extra_maskings else n - n_extra  # the sentences masked an m-th time
        plan += [(m, a, min(a + step, stop)) for a in range(0, stop, step)]
    return plan


def _feature_dir(run_dir: Path, config: Config, base_fingerprint: str) -> Path:
    import hashlib
    import json

    key = json.dumps([base_fingerprint] + [getattr(config, f) for f in FEATURE_FIELDS])
    return Path(run_dir) / "features" / hashlib.sha256(key.encode()).hexdigest()[:12]


def cached_features(tokenizer, model, train_s: list[str], config: Config, run_dir, base_fingerprint: str, *,
                    n_extra: int = 0, progress: bool = True, name: str = "mlm"):
    """The features (:func:`features`) of every chunk of :func:`chunk_plan`, concatenated in plan order; states as
    fp16. Each chunk is read from ``run_dir`` if there, else computed and saved (atomically) before the next, so an
    interrupted run keeps its finished chunks."""
    import torch
    from safetensors.torch import load_file, save_file

    from ..paths import atomic_path

    folder = _feature_dir(Path(run_dir), config, base_fingerprint)
    plan = chunk_plan(len(train_s), config, n_extra)
    xs, ys, fs = [], [], []
    for i, (m, a, b) in enumerate(plan):
        path = folder / f"m{m}-{a:07d}-{b:07d}-{parts.text_fingerprint(train_s[a:b])}.safetensors"
        if path.is_file():
            t = load_file(str(path))
        else:
            x, y, f = features(tokenizer, model, train_s[a:b], config, [config.seed, m, a], maskings=1,
                               progress=progress, desc=f"{name}: features {i + 1}/{len(plan)}",
                               autocast=config.autocast)
            t = {"states": x.half().contiguous(), "labels": y.long(), "flags": f.bool()}
            with atomic_path(path, suffix=".safetensors") as tmp:
                save_file(t, str(tmp))
        xs.append(t["states"])
        ys.append(t["labels"])
        fs.append(t["flags"])
    return torch.cat(xs), torch.cat(ys), torch.cat(fs)


def train(config: Config, out, *, name: str, sentences: list[str], extra_sentences=(), counts=None,
          device: str = "auto", progress: bool = True, command: str = "", run_dir=None, resume: bool = True,
          stop_after: int | None = None, sources: dict | None = None) -> dict | None:
    """Train the head of ``config.base`` on ``sentences`` into ``out`` (the book's: :mod:`metricbias.book.training_data`).

    The validation sentences are drawn from ``sentences``; ``extra_sentences`` (the first ``config.max_extra`` of a
    seeded order of them) are added to the training side only.

    **In chunks.** ``run_dir`` (default: ``out`` + ``.run``) holds the cached features of the training sentences,
    chunk by chunk (:func:`cached_features`), and a checkpoint of the head, the optimizer, the scheduler, the log and
    the best head so far every ``config.checkpoint_every`` steps. With ``resume`` (the default) a run starts from
    the last checkpoint of the same configuration and data; the batch of each step follows from the step number
    (:func:`~metricbias.trained.loop.epoch_batches`) and the dropout of a step from ``(seed, step)``, so a resumed
    run ends with the tensors of an uninterrupted one. ``stop_after``: leave after that many steps (a checkpoint
    written; returns None), for runs longer than a session.
    """
    import json

    import torch

    from .loop import epoch_batches, fit

    start_time = time.perf_counter()
    device = models.resolve_device(device)
    out = Path(out)
    run_dir = Path(run_dir) if run_dir is not None else out.with_name(out.name + ".run")
    train_s, val_s, extra = data_split(config, sentences, extra_sentences)
    parts.seed_everything(config.seed)
    base_path = backbones.resolve(config.base)
    base_fingerprint = backbones.fingerprint_path(base_path)
    tokenizer, model = _masked_lm(base_path)
    model.to(device)
    x, y, f = cached_features(tokenizer, model, train_s, config, run_dir, base_fingerprint, n_extra=len(extra),
                              progress=progress, name=name)
    vx, vy, vf = features(tokenizer, model, val_s, config, config.seed + 1, maskings=1, progress=progress,
                          desc=f"{name}: validation features")
    feature_seconds = time.perf_counter() - start_time
    head = head_parameters(model)
    trainable = list(head.values())
    if config.bias_init == "log_frequency":  # a unigram prior: the head starts at the most-frequent-token baseline
        vocab = model.get_output_embeddings().weight.shape[0]
        bias = next(p for n_, p in head.items() if n_.endswith("bias") and p.shape == (vocab,))
        counts_ = torch.bincount(y, minlength=bias.numel()).double()
        with torch.no_grad():
            bias.copy_(torch.log((counts_ + 1) / (counts_.sum() + bias.numel())).float())
    elif config.bias_init != "zero":
        raise ValueError(f"bias_init={config.bias_init!r}: zero or log_frequency")
    if config.select not in ("last", "loss"):
        raise ValueError(f"select={config.select!r}: last or loss")
    for p in trainable:
        p.requires_grad_(True)
    before = accuracy(model, vx, vy, vf)
    steps_per_epoch = -(-len(y) // config.batch_size)
    total = steps_per_epoch * config.epochs
    eval_every = config.eval_every or steps_per_epoch
    optimizer = torch.optim.AdamW(trainable, lr=config.lr, weight_decay=config.weight_decay)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: max(0.0, 1 - s / total))
    runs = Checkpoints(run_dir, config_key(config, base_fingerprint, parts.text_fingerprint(train_s)), head,
                       optimizer, scheduler)
    state, best = runs.resume({"step": 0, "losses": [], "log": [], "best_loss": float("inf"), "best_step": 0,
                               "since_best": 0, "stopped": False, "seconds": 0.0}, resume=resume)
    resumed_at = state["step"]
    from tqdm.auto import tqdm

    bar = tqdm(total=total, initial=state["step"], desc=f"train {name}", disable=not progress)
    tic_ = [time.perf_counter()]

    def write_checkpoint(step):
        state["seconds"] += time.perf_counter() - tic_[0]
        tic_[0] = time.perf_counter()
        runs.write(step, state, best)

    def after_step(step, losses):
        nonlocal best
        state["step"] = step
        state["losses"].append(losses[-1])
        stop = False
        if step % eval_every == 0 or step == total:
            measured = accuracy(model, vx, vy, vf)
            state["log"].append({"step": step, "epoch": step / steps_per_epoch,
                                 "train_loss": float(np.mean(state["losses"][-eval_every:])), **measured})
            bar.set_postfix(acc=f"{measured['masked_token_accuracy']:.3f}", val=f"{measured['loss']:.3f}")
            if measured["loss"] < state["best_loss"]:
                state["best_loss"], state["best_step"], state["since_best"] = measured["loss"], step, 0
                if config.select == "loss":
                    best = {k: v.detach().clone() for k, v in head.items()}
            else:
                state["since_best"] += 1
            stop = bool(config.patience) and state["since_best"] >= config.patience
            state["stopped"] = stop
        if stop or step % config.checkpoint_every == 0 or step == total or step == stop_at:
            write_checkpoint(step)
        return stop or step == stop_at

    def batch_loss(idx):
        states = x[idx].to(device).float()
        if config.dropout:
            g = torch.Generator().manual_seed(int(np.random.SeedSequence([config.seed, 3, state["step"] + 1])
                                                  .generate_state(1)[0]))
            keep = (torch.rand(states.shape, generator=g) >= config.dropout).to(device)
            states = states * keep / (1 - config.dropout)
        with autocast_(device, config.autocast):
            logits = _logits(model, states)
        return torch.nn.functional.cross_entropy(logits, y[idx].to(device))

    stop_at = None if stop_after is None else state["step"] + stop_after
    if not state["stopped"] and state["step"] < total:
        fit(batch_loss, epoch_batches(len(y), config.batch_size, config.seed, start=state["step"]), params=trainable,
            optimizer=optimizer, scheduler=scheduler, steps=total, start=state["step"], clip=None, bar=bar,
            after_step=after_step)
    bar.close()
    if stop_at is not None and state["step"] == stop_at and not state["stopped"] and state["step"] < total:
        return None
    for p in trainable:
        p.requires_grad_(False)
    if config.select == "loss" and best is not None:
        with torch.no_grad():
            for k, v in best.items():
                head[k].copy_(v)
    parts.round_fp16_(trainable)
    after = accuracy(model, vx, vy, vf)
    losses = state["losses"]
    last = losses[-steps_per_epoch:]
    provenance = {
        "name": name, "kind": KIND, "model": "mlm-head", "base": config.base,
        "base_fingerprint": base_fingerprint, "config": asdict(config),
        "command": command or f"metricbias train {name}", "seed": config.seed, "steps": state["step"],
        "steps_planned": total, "kept_step": state["best_step"] if config.select == "loss" else state["step"],
        "resumed_at_step": resumed_at or None,
        "device": device, "trainable_parameters": int(sum(p.numel() for p in trainable)),
        "data": {"train_sentences": len(train_s), "extra_train_sentences": len(extra),
                 "validation_sentences": len(val_s),
                 "train_positions": len(y), "validation_positions": len(vy),
                 "train_fingerprint": parts.text_fingerprint(train_s),
                 "validation_fingerprint": parts.text_fingerprint(val_s),
                 "sources": sources,
                 "counts": counts.to_dict("records") if counts is not None else None},
        "library_versions": parts.library_versions(),
        "figures": {"first_loss": losses[0], "final_train_loss": float(np.mean(last)),
                    "validation_loss": after["loss"], "masked_token_accuracy": after["masked_token_accuracy"],
                    "masked_token_accuracy_untrained_head": before["masked_token_accuracy"],
                    **reference_point(tokenizer, train_s[:len(train_s) - len(extra)], vy, vf, config.max_length),
                    "log": state["log"]},
        "seconds": {"features": round(feature_seconds, 1), "training": round(state["seconds"], 1),
                    "total": round(time.perf_counter() - start_time, 1)},
    }
    parts.save(out, dict(head), provenance)
    (Path(run_dir) / "done.json").write_text(json.dumps({"out": str(out), "key": runs.key}) + "\n", encoding="utf-8")
    return provenance


def measure(name_or_path: str, sentences: list[str], extra_sentences=(), *, device: str = "cpu") -> dict:
    """The validation figures of a saved head, measured again: its masked-token accuracy and loss on its own
    validation sentences (checked against the fingerprint it recorded) and the reference point
    (:func:`reference_point`) on the same positions."""
    folder = parts.resolve_folder(name_or_path, KIND)
    info = backbones.trained_info(folder)
    config = Config(**{k: v for k, v in info["config"].items() if k in Config.__dataclass_fields__})
    train_s, val_s, extra = data_split(config, sentences, extra_sentences)
    if parts.text_fingerprint(val_s) != info["data"]["validation_fingerprint"]:
        raise parts.PartsError(f"{folder}: its validation sentences were {info['data']['validation_fingerprint']}, "
                               f"here {parts.text_fingerprint(val_s)}: the training data changed")
    tokenizer, model = load(str(folder), device)
    vx, vy, vf = features(tokenizer, model, val_s, config, config.seed + 1, maskings=1, progress=False)
    measured = accuracy(model, vx, vy, vf)
    train_fp = parts.text_fingerprint(train_s)
    return {"masked_token_accuracy": measured["masked_token_accuracy"], "validation_loss": measured["loss"],
            "validation_positions": len(vy), "train_fingerprint_matches": train_fp == info["data"]["train_fingerprint"],
            **reference_point(tokenizer, train_s[:len(train_s) - len(extra)], vy, vf, config.max_length)}


def load(name_or_path: str, device: str = "cpu"):
    """``(tokenizer, *ForMaskedLM model in eval mode)``: the frozen base with the trained head."""
    import torch

    folder = parts.resolve_folder(name_or_path, KIND)
    tensors, info = parts.load(folder)
    tokenizer, model = _masked_lm(parts.base_of(info, folder))
    own = head_parameters(model)
    if set(own) != set(tensors):
        raise parts.PartsError(f"{folder}: saved head tensors {sorted(tensors)} do not match the model's {sorted(own)}")
    with torch.no_grad():
        for name, value in tensors.items():
            own[name].copy_(value)
    return tokenizer, model.to(device).eval()


def is_mlm_head(path) -> bool:
    path = Path(path)
    return backbones.is_trained_dir(path) and backbones.trained_info(path).get("model") == "mlm-head"


__all__ = ["Config", "FEATURE_FIELDS", "KIND", "accuracy", "cached_features", "checkpoints", "chunk_plan",
           "data_split", "features", "is_mlm_head", "load", "mask_tokens", "measure", "most_frequent_token_accuracy",
           "reference_point", "sentence_tokens", "train"]
