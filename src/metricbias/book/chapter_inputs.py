"""What an executed chapter depends on, as one hash: a warm ``make book`` re-executes only the chapters whose
inputs changed.

A chapter's result is a function of its notebook as it runs (source and baked parameters, see
:func:`metricbias.book.runner.prepare`) and of what it reads: the library's code, the shipped models and score packs
(``models/``), the project's data configuration (``data/`` without the raw mirror and the datasets built from
it, whose checksums ``data/sources.tsv`` holds), parts trained into the cache, the installed packages and Python,
and whether score packs are ignored (``METRICBIAS_RECOMPUTE``). :func:`shared` hashes all of that once per run;
:func:`stamp` adds the notebook. The runner writes the stamp into the executed notebook's metadata and skips a
chapter whose existing output carries the same stamp. The score cache is not an input: a chapter computes the
same numbers from a cold cache as from a warm one.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

from ..paths import cache_dir, project_root

#: key of the stamp in an executed notebook's metadata (``metadata.metricbias.inputs``)
METADATA_KEY = "metricbias"
#: derived or mirrored folders of ``data/``: their content is fixed by ``data/sources.tsv`` and the code
_DERIVED_DATA = {"raw", "built"}


def _files(folder: Path, skip_top: set[str] = frozenset()):
    if not folder.is_dir():
        return
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if rel.parts[0] in skip_top or "__pycache__" in rel.parts or not path.is_file():
            continue
        yield rel.as_posix(), path


def _add_tree(h, label: str, folder: Path, skip_top: set[str] = frozenset()) -> None:
    h.update(f"\x02{label}\x00".encode())
    for rel, path in _files(folder, skip_top):
        h.update(rel.encode("utf-8") + b"\x00" + hashlib.sha256(path.read_bytes()).digest())


def _packages() -> list[str]:
    from importlib import metadata

    return sorted({f"{d.metadata['Name'].lower()}=={d.version}" for d in metadata.distributions()
                   if d.metadata and d.metadata["Name"]})


def shared() -> str:
    """The hash of every input the chapters share (see the module's docstring)."""
    from ..cache import code_revision
    from .score_sources import recomputing

    root = project_root()
    h = hashlib.sha256(f"python {sys.version}\x00library {code_revision()}".encode())
    _add_tree(h, "models", root / "models")
    _add_tree(h, "data", root / "data", _DERIVED_DATA)
    trained = cache_dir() / "trained"  # looked up after models/: its files' sizes and times (they are large)
    h.update(b"\x02trained\x00")
    for rel, path in _files(trained):
        st = path.stat()
        h.update(f"{rel}\x00{st.st_size}\x00{st.st_mtime_ns}\x01".encode())
    h.update(json.dumps(_packages()).encode())
    h.update(f"recompute={recomputing()}".encode())
    return h.hexdigest()


def stamp(notebook, shared_hash: str) -> str:
    """The inputs hash of one chapter: its notebook as it will run (``nbformat`` node) and :func:`shared`."""
    # cell ids are drawn at random when a notebook is read: the cells' types, sources and metadata are what runs
    cells = [[c.get("cell_type"), c.get("source"), c.get("metadata", {})] for c in notebook.cells]
    meta = {k: v for k, v in notebook.metadata.items() if k != METADATA_KEY}
    body = json.dumps([cells, meta], sort_keys=True, default=str)
    return hashlib.sha256(shared_hash.encode() + b"\x00" + body.encode("utf-8")).hexdigest()


def recorded(path: Path) -> str | None:
    """The stamp an executed notebook at ``path`` carries, or ``None`` (missing, unreadable, or no stamp)."""
    try:
        nb = json.loads(Path(path).read_text(encoding="utf-8"))
        return nb["metadata"][METADATA_KEY]["inputs"]
    except (OSError, ValueError, KeyError, TypeError):
        return None


__all__ = ["METADATA_KEY", "recorded", "shared", "stamp"]
