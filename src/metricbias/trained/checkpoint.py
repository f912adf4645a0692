"""Checkpoints of a training run that is longer than a session, and the bf16 autocast of its steps.

A run folder holds ``checkpoints/step-NNNNNN/``, one per checkpoint, the last ``keep`` of them kept. A checkpoint
is everything a resumed run needs to end with the tensors of an uninterrupted one (with batches that follow from
the step number, :func:`metricbias.trained.loop.epoch_batches`):

* the trained tensors and the optimizer's per-parameter state (AdamW's moments), fp32, in safetensors shards of at
  most :data:`metricbias.trained.parts.MAX_FILE_BYTES` each (``tensors-NN.safetensors``), so that a checkpoint can
  be committed under the project's file limit and a session on another machine continues from it;
* ``state.json``: the key of the configuration and data it belongs to, the optimizer's hyper-parameters, the
  scheduler's state and the trainer's own (step, losses, log, seconds);
* optionally ``best.safetensors``: the tensors kept by early stopping (fp16, as they are saved).

Used by :mod:`.mlm_head` and :mod:`.paraphraser`.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict
from pathlib import Path

from . import parts

STATE = "state.json"
BEST = "best.safetensors"
SHARDS = "tensors-{:02d}.safetensors"


def autocast(device: str, dtype: str):
    """A context: ``torch.autocast`` to ``dtype`` ("bfloat16") on ``device``'s type; none when ``dtype`` is ""."""
    import contextlib

    import torch

    if not dtype:
        return contextlib.nullcontext()
    return torch.autocast("cuda" if str(device).startswith("cuda") else "cpu", dtype=getattr(torch, dtype))


def config_key(config, *fingerprints: str) -> str:
    """What a checkpoint belongs to: the configuration (a dataclass) and the fingerprints of the base and data."""
    import hashlib

    return hashlib.sha256(json.dumps([asdict(config), *fingerprints], sort_keys=True).encode()).hexdigest()[:16]


def checkpoints(run_dir) -> list[Path]:
    """The complete checkpoint folders of a run, in step order."""
    return sorted(p for p in (Path(run_dir) / "checkpoints").glob("step-*") if (p / STATE).is_file())


def _shards(tensors: dict, limit: int) -> list[dict]:
    """``tensors`` in groups of at most ``limit`` bytes each, in order (a tensor over the limit alone)."""
    groups, size = [{}], 0
    for name, t in tensors.items():
        n = t.numel() * t.element_size()
        if groups[-1] and size + n > limit:
            groups.append({})
            size = 0
        groups[-1][name] = t
        size += n
    return groups


class Checkpoints:
    """The checkpoints of one run: ``run_dir``, the ``key`` they must carry, and what they save and restore:
    the trained ``tensors`` (by name), the ``optimizer`` and the ``scheduler``."""

    def __init__(self, run_dir, key: str, tensors: dict, optimizer, scheduler, *, keep: int = 2):
        self.run_dir, self.key, self.keep = Path(run_dir), key, keep
        self.tensors, self.optimizer, self.scheduler = tensors, optimizer, scheduler

    def write(self, step: int, state: dict, best: dict | None = None) -> Path:
        """Checkpoint ``step`` (written atomically) with the trainer's ``state``; older ones beyond ``keep`` go."""
        from safetensors.torch import save_file

        from ..paths import atomic_dir

        opt = self.optimizer.state_dict()
        flat = {f"tensors/{k}": v.detach() for k, v in self.tensors.items()}
        for i, per in opt["state"].items():
            flat.update({f"optimizer/{i}/{k}": v for k, v in per.items()})
        flat = {k: v.cpu().float().contiguous() if v.is_floating_point() else v.cpu().contiguous()
                for k, v in flat.items()}
        folder = self.run_dir / "checkpoints" / f"step-{step:06d}"
        with atomic_dir(folder) as tmp:
            groups = _shards(flat, parts.MAX_FILE_BYTES)
            for n, group in enumerate(groups):
                save_file(group, str(tmp / SHARDS.format(n)))
            if best is not None:
                save_file({k: v.detach().cpu().half().contiguous() for k, v in best.items()}, str(tmp / BEST))
            (tmp / STATE).write_text(json.dumps({
                "key": self.key, "step": step, "shards": len(groups), "param_groups": opt["param_groups"],
                "scheduler": self.scheduler.state_dict(), "state": state}) + "\n", encoding="utf-8")
        for old in checkpoints(self.run_dir)[:-self.keep]:
            shutil.rmtree(old)
        return folder

    def resume(self, state: dict, *, resume: bool = True) -> tuple[dict, dict | None]:
        """``(trainer state, best tensors or None)``: from the last checkpoint if ``resume`` and there is one (the
        tensors, optimizer and scheduler restored in place; a checkpoint of another key refused), else ``state``
        as given (with ``resume`` False, earlier checkpoints are removed)."""
        import torch
        from safetensors.torch import load_file

        found = checkpoints(self.run_dir)
        if not resume or not found:
            if found:
                shutil.rmtree(self.run_dir / "checkpoints")
            return state, None
        folder = found[-1]
        saved = json.loads((folder / STATE).read_text(encoding="utf-8"))
        if saved["key"] != self.key:
            raise parts.PartsError(f"{folder}: a checkpoint of another configuration or data ({saved['key']}, "
                                   f"here {self.key}); use another run folder or pass --fresh")
        flat = {}
        for n in range(saved["shards"]):
            flat.update(load_file(str(folder / SHARDS.format(n))))
        with torch.no_grad():
            for name, t in self.tensors.items():
                t.copy_(flat[f"tensors/{name}"])
        per: dict = {}
        for k, v in flat.items():
            if k.startswith("optimizer/"):
                _, i, field = k.split("/", 2)
                per.setdefault(int(i), {})[field] = v
        self.optimizer.load_state_dict({"state": per, "param_groups": saved["param_groups"]})
        self.scheduler.load_state_dict(saved["scheduler"])
        best = load_file(str(folder / BEST)) if (folder / BEST).is_file() else None
        return saved["state"], (None if best is None else {k: v.float() for k, v in best.items()})


__all__ = ["BEST", "Checkpoints", "STATE", "autocast", "checkpoints", "config_key"]
