"""Saving and loading trained parts: one fp16 safetensors file + ``provenance.json``.

A trained-backbone folder holds ``parts.safetensors`` (the trained tensors, fp16, at most
``MAX_FILE_BYTES``) and ``provenance.json`` (kind, base backbone and its fingerprint, the
configuration, the command, seed, steps, device, data fingerprints, library versions and
the figures reached), written last: a folder is complete when it holds the provenance
(:func:`metricbias.backbones.trained_path`). Trained values are rounded to fp16 *before*
they are evaluated (:func:`round_fp16_`), so the figures in the provenance and every score
are those of the saved file: loading reproduces scores exactly.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

from .. import backbones

PARTS_FILE = "parts.safetensors"
#: the developers' guide: each committed file at most 8 MB
MAX_FILE_BYTES = 8 * 1024 * 1024


class PartsError(ValueError):
    """A trained-parts folder is missing, incomplete or does not fit its base backbone."""


def round_fp16_(tensors) -> None:
    """Round every tensor in place to the nearest fp16 value (kept in its own dtype)."""
    import torch

    with torch.no_grad():
        for t in tensors:
            t.copy_(t.half().to(t.dtype))


def library_versions() -> dict:
    from .. import __version__
    from ..metrics.base import library_version

    return {lib: library_version(lib) for lib in ("torch", "transformers", "adapters", "safetensors")} | \
        {"metricbias": __version__}


def text_fingerprint(texts) -> str:
    """Short hash of a sequence of texts, in order (what a model was trained on)."""
    import hashlib

    h = hashlib.sha256()
    for t in texts:
        h.update(str(t).encode("utf-8") + b"\x00")
    return h.hexdigest()[:16]


def save(folder, tensors: dict, provenance: dict) -> Path:
    """Write ``tensors`` (as fp16) and ``provenance`` into ``folder`` atomically (built beside it, then renamed)."""
    from safetensors.torch import save_file

    folder = Path(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        save_file({k: v.detach().cpu().half().contiguous() for k, v in tensors.items()}, str(tmp / PARTS_FILE))
        size = (tmp / PARTS_FILE).stat().st_size
        if size > MAX_FILE_BYTES:
            raise PartsError(f"{folder.name}: {PARTS_FILE} would be {size / 2**20:.1f} MiB, over the "
                             f"{MAX_FILE_BYTES / 2**20:.0f} MiB per-file limit; use fewer or smaller adapters")
        (tmp / backbones.PROVENANCE_FILE).write_text(json.dumps(provenance, indent=1, sort_keys=False) + "\n",
                                                     encoding="utf-8")
        if folder.exists():
            shutil.rmtree(folder)
        tmp.rename(folder)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
    return folder


def load(folder) -> tuple[dict, dict]:
    """``(tensors as float32, provenance)`` of a complete trained-parts folder."""
    from safetensors.torch import load_file

    folder = Path(folder)
    if not backbones.is_trained_dir(folder) or not (folder / PARTS_FILE).is_file():
        raise PartsError(f"{folder} is not a complete trained-parts folder ({PARTS_FILE} + "
                         f"{backbones.PROVENANCE_FILE}); train it again")
    tensors = {k: v.float() for k, v in load_file(str(folder / PARTS_FILE)).items()}
    return tensors, backbones.trained_info(folder)


def base_of(info: dict, folder) -> Path:
    """The base backbone's folder, checked against the fingerprint the parts were trained on."""
    base = info["base"]
    path = backbones.resolve(base)
    got = backbones.fingerprint_path(path)
    if got != info["base_fingerprint"]:
        raise PartsError(f"{folder}: trained on {base} with fingerprint {info['base_fingerprint']}, but {base} here "
                         f"is {got} ({path}); the frozen backbone changed: train the parts again")
    return path


def resolve_folder(name_or_path: str, kind: str) -> Path:
    """The trained-parts folder of ``name_or_path`` (registered name or folder), checked to be of ``kind``."""
    path = backbones.resolve(name_or_path)
    if not backbones.is_trained_dir(path):
        raise PartsError(f"{name_or_path!r} ({path}) is not a folder of trained parts")
    got = backbones.trained_info(path).get("kind")
    if got != kind:
        raise PartsError(f"{name_or_path!r} holds {got} parts, not {kind} parts")
    return path


def seed_everything(seed: int) -> None:
    import random

    import numpy as np
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


__all__ = ["MAX_FILE_BYTES", "PARTS_FILE", "PartsError", "base_of", "library_versions", "load", "resolve_folder",
           "round_fp16_", "save", "seed_everything", "text_fingerprint"]
