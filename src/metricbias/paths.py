"""Where the project keeps things, and atomic writes.

Every location is derived from the project root so that the CLI, the tests and
the chapters agree. ``METRICBIAS_ROOT`` overrides the root (tests use it to work
in a temporary directory).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import Iterator


def project_root() -> Path:
    env = os.environ.get("METRICBIAS_ROOT")
    if env:
        return Path(env).resolve()
    # src/metricbias/paths.py -> project root (editable install, the supported mode)
    return Path(__file__).resolve().parents[2]


def data_dir() -> Path:
    return project_root() / "data"


def raw_dir() -> Path:
    return data_dir() / "raw"


def built_dir() -> Path:
    return data_dir() / "built"


def published_dir() -> Path:
    """Numbers transcribed from the papers' tables (committed)."""
    return data_dir() / "published"


def cache_dir() -> Path:
    """Score cache, trained artifacts and other generated state (ignored by git)."""
    env = os.environ.get("METRICBIAS_CACHE")
    return Path(env).resolve() if env else project_root() / ".cache" / "metricbias"


@contextlib.contextmanager
def atomic_path(target: str | os.PathLike, suffix: str = "") -> Iterator[Path]:
    """Yield a temporary path next to ``target``; rename it onto ``target`` on success.

    A failure inside the block removes the temporary file, so no half-written
    output is ever left at ``target``.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=suffix or ".tmp", dir=target.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        os.replace(tmp_path, target)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


@contextlib.contextmanager
def atomic_dir(target: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary folder next to ``target``; on success it replaces ``target``, on failure it is removed."""
    import shutil

    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    umask = os.umask(0)
    os.umask(umask)
    tmp.chmod(0o777 & ~umask)  # mkdtemp's folder is private; the result is an ordinary folder
    try:
        yield tmp
        if target.exists():
            shutil.rmtree(target)
        tmp.rename(target)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)


def write_csv_atomic(frame, target: str | os.PathLike, **kwargs) -> Path:
    """Write a pandas frame to CSV atomically (``index=False`` unless given)."""
    kwargs.setdefault("index", False)
    with atomic_path(target, suffix=".csv") as tmp:
        frame.to_csv(tmp, **kwargs)
    return Path(target)
