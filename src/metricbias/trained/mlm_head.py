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
[MASK]). AdamW with linear decay; values rounded to fp16 before evaluation and saving.

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
from .paraphraser import _masked_lm, head_of, head_parameters

KIND = "mlm"


@dataclass
class Config:
    base: str = "all-MiniLM-L6-v2"
    mask_fraction: float = 0.15
    maskings: int = 1  # independent maskings of each training sentence
    max_sentences: int = 0  # train on a seeded sample of this many sentences (0: all)
    max_extra: int = 0  # and on a seeded sample of this many training-only sentences (0: none)
    max_length: int = 64
    epochs: int = 4
    batch_size: int = 256  # masked positions per step
    lr: float = 2e-3
    weight_decay: float = 0.01
    seed: int = 0
    validation_fraction: float = 0.1


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
             progress: bool = False, desc: str = "features"):
    """Last-layer states of the frozen encoder at the selected positions of masked ``sentences``.

    Returns ``(states (n x hidden), original token ids (n), replaced-by-[MASK] flags (n))``.
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
        with torch.inference_mode():
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


def train(config: Config, out, *, name: str, sentences: list[str], extra_sentences=(), counts=None,
          device: str = "auto", progress: bool = True, command: str = "") -> dict:
    """Train the head of ``config.base`` on ``sentences`` into ``out`` (the book's:
    :mod:`metricbias.book.training_data`).

    The validation sentences are drawn from ``sentences``; ``extra_sentences`` (a seeded sample of
    ``config.max_extra`` of them) are added to the training side only.
    """
    import torch

    start_time = time.perf_counter()
    device = models.resolve_device(device)
    train_idx, val_idx = parts.split(len(sentences), config.validation_fraction, config.seed)
    if config.max_sentences and len(train_idx) > config.max_sentences:
        train_idx = sorted(np.random.default_rng(config.seed).choice(train_idx, config.max_sentences, replace=False))
    train_s, val_s = [sentences[i] for i in train_idx], [sentences[i] for i in val_idx]
    extra = list(extra_sentences)
    if config.max_extra < len(extra):
        extra = [extra[i] for i in sorted(np.random.default_rng(config.seed).choice(len(extra), config.max_extra,
                                                                                     replace=False))]
    train_s += extra
    parts.seed_everything(config.seed)
    base_path = backbones.resolve(config.base)
    tokenizer, model = _masked_lm(base_path)
    model.to(device)
    x, y, f = features(tokenizer, model, train_s, config, config.seed, maskings=config.maskings, progress=progress,
                       desc=f"{name}: train features")
    vx, vy, vf = features(tokenizer, model, val_s, config, config.seed + 1, maskings=1, progress=progress,
                          desc=f"{name}: validation features")
    feature_seconds = time.perf_counter() - start_time
    trainable = list(head_parameters(model).values())
    for p in trainable:
        p.requires_grad_(True)
    before = accuracy(model, vx, vy, vf)
    steps_per_epoch = -(-len(y) // config.batch_size)
    total = steps_per_epoch * config.epochs
    optimizer = torch.optim.AdamW(trainable, lr=config.lr, weight_decay=config.weight_decay)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: max(0.0, 1 - s / total))
    generator = torch.Generator().manual_seed(config.seed)
    log = []
    from tqdm.auto import tqdm

    from .loop import fit, shuffled_batches

    bar = tqdm(total=total, desc=f"train {name}", disable=not progress)

    def after_step(step, losses):
        if step % steps_per_epoch == 0:  # the end of an epoch
            log.append({"epoch": step // steps_per_epoch, "train_loss": float(np.mean(losses[-steps_per_epoch:])),
                        **accuracy(model, vx, vy, vf)})
            bar.set_postfix(acc=f"{log[-1]['masked_token_accuracy']:.3f}")

    losses = fit(lambda idx: torch.nn.functional.cross_entropy(_logits(model, x[idx].to(device)), y[idx].to(device)),
                 shuffled_batches(len(y), config.batch_size, generator), params=trainable, optimizer=optimizer,
                 scheduler=scheduler, steps=total, clip=None, bar=bar, after_step=after_step)
    bar.close()
    for p in trainable:
        p.requires_grad_(False)
    parts.round_fp16_(trainable)
    after = accuracy(model, vx, vy, vf)
    provenance = {
        "name": name, "kind": KIND, "model": "mlm-head", "base": config.base,
        "base_fingerprint": backbones.fingerprint_path(base_path), "config": asdict(config),
        "command": command or f"metricbias train {name}", "seed": config.seed, "steps": len(losses),
        "device": device, "trainable_parameters": int(sum(p.numel() for p in trainable)),
        "data": {"train_sentences": len(train_s), "extra_train_sentences": len(extra),
                 "validation_sentences": len(val_s),
                 "train_positions": len(y), "validation_positions": len(vy),
                 "train_fingerprint": parts.text_fingerprint(train_s),
                 "validation_fingerprint": parts.text_fingerprint(val_s),
                 "counts": counts.to_dict("records") if counts is not None else None},
        "library_versions": parts.library_versions(),
        "figures": {"first_loss": losses[0], "final_train_loss": float(np.mean(losses[-steps_per_epoch:])),
                    "validation_loss": after["loss"], "masked_token_accuracy": after["masked_token_accuracy"],
                    "masked_token_accuracy_untrained_head": before["masked_token_accuracy"], "log": log},
        "seconds": {"features": round(feature_seconds, 1), "total": round(time.perf_counter() - start_time, 1)},
    }
    parts.save(out, dict(head_parameters(model)), provenance)
    return provenance


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


__all__ = ["Config", "KIND", "accuracy", "features", "is_mlm_head", "load", "mask_tokens", "train"]
