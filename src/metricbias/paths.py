"""Where the project keeps things, and atomic writes.

Every location is derived from the project root so that the CLI, the tests and
the chapters agree. ``METRICBIAS_ROOT`` overrides the root (tests use it to work
in a temporary directory).

Outputs are written atomically (a temporary file renamed onto the target) with
the permissions the umask gives a new file (typically 0644), and every command
checks that its output path can be written, and that its input files and
folders exist, before it computes anything (:func:`check_writable`, :func:`check_input`).
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


class OutputPathError(ValueError):
    """An output path that cannot be written (found before any computing)."""


def _umask() -> int:
    """The process umask, read without changing it where Linux reports it."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def follow_umask(path: str | os.PathLike) -> None:
    """Give a file another library wrote privately (0600) the permissions of a new file under the umask."""
    os.chmod(path, 0o666 & ~_umask())


def check_writable(target: str | os.PathLike, option: str = "--out", folder: bool = False) -> Path:
    """Raise :class:`OutputPathError` naming ``option`` and the fix unless ``target`` can be written.

    ``folder``: the target is a folder to write files into (else a file). Creates
    nothing: it tries a probe file in the nearest folder that exists (folders
    still missing are created by the write itself).
    """
    target = Path(target)
    if folder and target.exists() and not target.is_dir():
        raise OutputPathError(f"{option} {target} is a file; give a folder (existing or new) to write into")
    if not folder and target.is_dir():
        raise OutputPathError(f"{option} {target} is a folder; give a file name, e.g. {target / 'out.csv'}")
    place = target if folder else target.parent
    while not place.exists() and place != place.parent:
        place = place.parent
    if not place.is_dir():
        raise OutputPathError(f"{option} {target}: {place} is a file, not a folder; choose another path")
    try:
        fd, probe = tempfile.mkstemp(prefix=".metricbias-probe.", dir=place)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise OutputPathError(f"{option} {target}: cannot write in {place} ({exc.strerror}); choose a folder you "
                              "can write to, or fix its permissions") from None
    return target


class InputPathError(ValueError):
    """An input file or folder that is missing or of the wrong kind (found before any computing)."""


#: suffixes that make a name-or-path value a file name
FILE_SUFFIXES = (".jsonl", ".json", ".pkl", ".tsv", ".csv", ".txt", ".bin", ".safetensors")


def check_input(source: str | os.PathLike, option: str, kind: str = "folder") -> Path:
    """Raise :class:`InputPathError` naming ``option`` and the path unless ``source`` can be read.

    ``kind``: ``folder`` or ``file`` (it must exist and be one), or ``name`` (a registered name
    or a path: checked only where it can only be a path, having a folder separator or a file suffix;
    an unknown name is left to the command, which lists the names it knows).
    """
    path = Path(source)
    if kind == "name" and os.sep not in str(source) and "/" not in str(source) \
            and path.suffix not in FILE_SUFFIXES:
        return path
    if not path.exists():
        where = "" if path.is_absolute() else f" (relative to {Path.cwd()})"
        raise InputPathError(f"{option} {path} does not exist{where}; check the path")
    if kind == "folder" and not path.is_dir():
        raise InputPathError(f"{option} {path} is a file; give a folder")
    if kind == "file" and path.is_dir():
        raise InputPathError(f"{option} {path} is a folder; give a file")
    return path


@contextlib.contextmanager
def atomic_path(target: str | os.PathLike, suffix: str = "") -> Iterator[Path]:
    """Yield a temporary path next to ``target``; rename it onto ``target`` on success.

    A failure inside the block (an interrupt included) removes the temporary file,
    so no half-written output is ever left at ``target``. The file gets the
    permissions of a new file under the umask (``mkstemp`` alone would leave 0600).
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=suffix or ".tmp", dir=target.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        if tmp_path.is_file():
            follow_umask(tmp_path)
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


@contextlib.contextmanager
def file_lock(path: str | os.PathLike):
    """An exclusive lock between processes on the file ``path`` (POSIX ``flock``; a no-op where there is none)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    with open(path, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
