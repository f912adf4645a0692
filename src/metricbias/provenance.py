"""Provenance of trained artifacts: what every ``models/<name>/provenance.json`` records.

The developers' guide asks each shipped artifact for the command that made it, its seed and
steps, the device, fingerprints of the data it was trained on, library versions and the
figures it reached. The helpers here collect the parts that do not depend on what was trained;
the training code adds the rest and writes the file with :func:`write` (atomically, last, so
that a folder holding ``provenance.json`` is complete: see :func:`metricbias.backbones.trained_path`).
"""

from __future__ import annotations

import functools
import importlib.metadata
import json
import platform
import shlex
import sys
from pathlib import Path

from .backbones import PROVENANCE_FILE
from .paths import atomic_dir


def command() -> str:
    """This process's command line as a user would type it (``metricbias ...`` for the CLI)."""
    argv = list(sys.argv)
    if argv and (Path(argv[0]).name == "metricbias" or Path(argv[0]).parts[-2:] == ("metricbias", "cli.py")):  # or -m
        return shlex.join(["metricbias", *argv[1:]])
    return shlex.join([Path(sys.executable).name, *argv])


@functools.lru_cache(maxsize=None)  # every metric signature asks; reading the metadata costs ms each time
def library_version(dist: str) -> str:
    """The installed version of distribution ``dist``, or "absent" (read once per process)."""
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "absent"


def versions(libraries=("torch", "transformers", "adapters")) -> dict:
    """Versions of ``libraries``, of metricbias and of Python."""
    from . import __version__

    return {lib: library_version(lib) for lib in libraries} | {"metricbias": __version__,
                                                             "python": platform.python_version()}


def device_name(device: str) -> str:
    """The GPU's name, or the CPU's and the number of torch threads."""
    import torch

    if str(device).startswith("cuda") and torch.cuda.is_available():
        return torch.cuda.get_device_name(torch.device(device))
    return f"CPU {platform.processor() or platform.machine()}, {torch.get_num_threads()} torch threads"


def data_files(paths) -> dict:
    """``{registered source path: sha256}`` of the raw files used (checked against the source registry on read)."""
    from . import sources

    return {p: sources.source(p).sha256 for p in paths}


def files(folder) -> dict:
    """``{relative path: bytes}`` of every file in ``folder`` (the provenance file aside)."""
    folder = Path(folder)
    return {p.relative_to(folder).as_posix(): p.stat().st_size for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name != PROVENANCE_FILE}


def read(folder) -> dict:
    path = Path(folder) / PROVENANCE_FILE
    if not path.is_file():
        raise FileNotFoundError(f"{folder} has no {PROVENANCE_FILE}: not a complete trained artifact")
    return json.loads(path.read_text(encoding="utf-8"))


def write(folder, record: dict) -> Path:
    """Write ``folder/provenance.json`` atomically."""
    from .paths import atomic_path

    target = Path(folder) / PROVENANCE_FILE
    with atomic_path(target, suffix=".json") as tmp:
        tmp.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return target


#: build an artifact folder beside its place, then swap it in (a failure leaves the old one as it was)
new_folder = atomic_dir


__all__ = ["command", "data_files", "device_name", "files", "new_folder", "read", "versions", "write"]
