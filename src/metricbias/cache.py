"""On-disk caches: scores keyed by a metric's signature and the data it scored, embeddings, and results.

**Scores.** Each entry is one (signature, candidate, reference) -> score. The key is
the first 16 bytes of a sha256 of the signature and the two texts (plus, for
corpus-dependent metrics such as idf weighting, a hash of the whole call's input),
so a changed text, option, backbone fingerprint, library version or implementation
revision never reuses a stale score. Signatures are stored once, in their own table;
each entry holds the 16-byte key, the signature's row number and the score (a
``WITHOUT ROWID`` table: the key is the B-tree, no separate index), about 40 bytes
an entry where the first layout (hex key + signature text + key index) took about 360.

**Embeddings.** :class:`EmbeddingCache` keeps an encoder's per-token hidden states
(float32, exactly as computed) by layer and token ids, one file per backbone and
adapter fingerprint, so that each distinct text is encoded once per backbone and
layer across chapters and processes.

**Results.** :func:`cached_table` keeps the table a slow, deterministic computation over
score tables returned (a robustness study, permutation tests), keyed by the computation's
name, the content of its input tables, its parameters and the library's code
(:func:`code_revision`), so that a warm rerun of the book reads it instead of
recomputing it, and any change to the inputs, the parameters or the code recomputes.
Columns are stored as numpy arrays (no pickle), so a cached table equals the computed
one bit for bit.

All three are SQLite files that many processes may read and write at once: write-ahead
logging, a long busy timeout, and every write one ``BEGIN IMMEDIATE`` transaction, so
an interrupted run leaves either the old or the new entries, never half of them. A
file that SQLite reports as not a database or malformed is moved aside
(``<name>.corrupt-<time>``) and started afresh, with one warning naming both files.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import json
import os
import sqlite3
import sys
import time
import warnings
import zipfile
from contextlib import closing
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np

from .paths import cache_dir, file_lock

#: seconds a connection waits for another process's write to finish before giving up
BUSY_TIMEOUT = 600
KEY_BYTES = 16


class CacheWarning(UserWarning):
    """A cache file was corrupt and has been replaced, or cannot be written."""


def _is_corrupt(exc: sqlite3.DatabaseError) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)
    text = str(exc)
    return "not a database" in text or "malformed" in text


def _inode(path: Path):
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return st.st_dev, st.st_ino


class SQLiteFile:
    """One SQLite file shared by processes: WAL, busy timeout, write transactions, corruption recovery.

    Subclasses give :attr:`schema` (statements run in one transaction when the file is
    opened or recreated) and :attr:`what` (how messages name the file).
    """

    schema: tuple[str, ...] = ()
    tables: tuple[str, ...] = ()  # the tables ``schema`` creates
    what = "cache"

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if not self._run(self._ready):  # a read first: opening a ready file takes no write lock
            self._run(self._create, write=True)

    def _ready(self, con: sqlite3.Connection) -> bool:
        names = {name for (name,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        return set(self.tables) <= names

    def _create(self, con: sqlite3.Connection) -> None:
        for statement in self.schema:
            con.execute(statement)

    def _connect(self) -> sqlite3.Connection:
        con = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT, isolation_level=None)  # transactions are explicit
        try:
            con.execute("PRAGMA journal_mode=WAL")  # readers never block the writer, nor it them
            con.execute("PRAGMA synchronous=NORMAL")  # WAL stays consistent; a power cut may lose the last commits
        except BaseException:
            con.close()
            raise
        return con

    def _once(self, fn: Callable, write: bool):
        with closing(self._connect()) as con:
            if not write:
                return fn(con)
            con.execute("BEGIN IMMEDIATE")  # take the write lock now: no deadlock on upgrading a read
            try:
                out = fn(con)
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    con.execute("ROLLBACK")
                raise
            con.execute("COMMIT")
            return out

    def _run(self, fn: Callable[[sqlite3.Connection], object], write: bool = False):
        """``fn(connection)``, in a write transaction if ``write``; a corrupt file is set aside and ``fn`` rerun."""
        seen = _inode(self.path)
        try:
            return self._once(fn, write)
        except sqlite3.DatabaseError as exc:
            if not _is_corrupt(exc):
                raise
            self._set_aside(exc, seen)
        self._once(self._create, write=True)
        return self._once(fn, write)

    def _set_aside(self, exc: Exception, seen) -> None:
        with file_lock(self.path.with_name(self.path.name + ".lock")):
            if _inode(self.path) != seen:  # another process has already replaced it
                return
            stamp = time.strftime("%Y%m%d-%H%M%S")
            aside = self.path.with_name(f"{self.path.name}.corrupt-{stamp}")
            n = 1
            while aside.exists():
                n += 1
                aside = self.path.with_name(f"{self.path.name}.corrupt-{stamp}-{n}")
            os.replace(self.path, aside)
            for suffix in ("-wal", "-shm"):  # a stale log must not be replayed into the new file
                side = self.path.with_name(self.path.name + suffix)
                if side.exists():
                    os.replace(side, aside.with_name(aside.name + suffix))
        warnings.warn(f"{self.what} {self.path} was corrupt ({exc}); moved it to {aside.name} and started a new "
                      "one (delete the old file when you no longer need it)", CacheWarning, stacklevel=4)


def data_hash(candidates: Sequence[str], references: Sequence[str]) -> str:
    h = hashlib.sha256()
    for c, r in zip(candidates, references):
        h.update(c.encode("utf-8") + b"\x00" + r.encode("utf-8") + b"\x01")
    return h.hexdigest()


def _pair_key(signature: str, corpus: str, candidate: str, reference: str) -> bytes:
    # the first layout keyed by the full hex digest of the same blob: its keys migrate by truncation
    blob = "\x1f".join((signature, corpus, candidate, reference)).encode("utf-8")
    return hashlib.sha256(blob).digest()[:KEY_BYTES]


def _chunks(items: Sequence, size: int) -> Iterable[Sequence]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


def _max_params(con: sqlite3.Connection) -> int:
    return min(con.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER), 10_000)


class ScoreCache(SQLiteFile):
    """Scores by (signature, candidate, reference): :meth:`score` is the one call most code needs.

    The parts, for code that computes elsewhere (a job runner's workers) and stores from
    one process: :meth:`keys` gives each pair's key (opaque 16-byte ``bytes``),
    :meth:`lookup` the stored scores of some keys, :meth:`store` writes new ones.
    """

    what = "score cache"
    tables = ("signatures", "entries", "packed", "packs")
    schema = (
        "CREATE TABLE IF NOT EXISTS signatures (id INTEGER PRIMARY KEY, signature TEXT NOT NULL UNIQUE)",
        "CREATE TABLE IF NOT EXISTS entries (key BLOB PRIMARY KEY, signature_id INTEGER NOT NULL, "
        "score REAL NOT NULL) WITHOUT ROWID",
        # the keys whose scores came from a score pack (metricbias.book.packs), and the packs imported and verified
        "CREATE TABLE IF NOT EXISTS packed (key BLOB PRIMARY KEY) WITHOUT ROWID",
        "CREATE TABLE IF NOT EXISTS packs (sha256 TEXT NOT NULL, signature TEXT NOT NULL, file TEXT NOT NULL, "
        "scores INTEGER NOT NULL, checked INTEGER NOT NULL, max_diff REAL NOT NULL, PRIMARY KEY (sha256, signature))",
    )

    def __init__(self, path: str | os.PathLike):
        self._migrated = None
        super().__init__(path)
        self.hits = 0
        self.misses = 0
        if self._migrated:
            moved, before = self._migrated
            with closing(self._connect()) as con:
                con.execute("VACUUM")  # give the freed pages back to the file system
                con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            print(f"score cache {self.path}: moved {moved:,} entries to the compact layout "
                  f"({before / 1e6:.1f} MB -> {self.path.stat().st_size / 1e6:.1f} MB)", file=sys.stderr, flush=True)

    @classmethod
    def default(cls) -> "ScoreCache":
        return cls(cache_dir() / "scores.sqlite")

    def _ready(self, con: sqlite3.Connection) -> bool:
        return super()._ready(con) and not con.execute("SELECT 1 FROM sqlite_master WHERE name = 'scores'").fetchone()

    def _create(self, con: sqlite3.Connection) -> None:
        super()._create(con)
        old = con.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'scores'").fetchone()
        if old:
            self._migrate(con)

    def _migrate(self, con: sqlite3.Connection) -> None:
        """Move the first layout's rows (hex key, signature text, score) into the compact tables."""
        before = self.path.stat().st_size
        con.create_function("key16", 1, lambda hexkey: bytes.fromhex(hexkey)[:KEY_BYTES], deterministic=True)
        con.execute("INSERT OR IGNORE INTO signatures (signature) SELECT DISTINCT signature FROM scores")
        moved = con.execute("INSERT OR REPLACE INTO entries (key, signature_id, score) "
                            "SELECT key16(s.key), g.id, s.score FROM scores s JOIN signatures g USING (signature) "
                            "ORDER BY s.key").rowcount  # hex order is byte order: appends, not scattered inserts
        con.execute("DROP TABLE scores")
        self._migrated = (moved, before)

    def keys(self, metric, candidates: Sequence[str], references: Sequence[str]) -> list[bytes]:
        """:func:`_pair_key` of every pair, the signature and corpus hashed once (a warm run is mostly this)."""
        corpus = data_hash(candidates, references) if metric.corpus_dependent else ""
        head = hashlib.sha256("\x1f".join((metric.signature, corpus, "")).encode("utf-8"))
        keys = []
        for c, r in zip(candidates, references):
            h = head.copy()
            h.update(f"{c}\x1f{r}".encode("utf-8"))
            keys.append(h.digest()[:KEY_BYTES])
        return keys

    def lookup(self, keys: Sequence[bytes]) -> dict[bytes, float]:
        unique = list(dict.fromkeys(keys))

        def read(con):
            found: dict[bytes, float] = {}
            for chunk in _chunks(unique, _max_params(con)):
                marks = ",".join("?" * len(chunk))
                found.update(con.execute(f"SELECT key, score FROM entries WHERE key IN ({marks})", chunk))
            return found

        return self._run(read) if unique else {}

    def store(self, signature: str, items: dict[bytes, float], *, pack: dict | None = None) -> None:
        """Store scores; with ``pack`` (a row of the ``packs`` table: sha256, file, scores, checked, max_diff) they
        came from that verified score pack, recorded in the same transaction."""
        if not items and pack is None:
            return

        def write(con):
            con.execute("INSERT OR IGNORE INTO signatures (signature) VALUES (?)", (signature,))
            (sig_id,) = con.execute("SELECT id FROM signatures WHERE signature = ?", (signature,)).fetchone()
            con.executemany("INSERT OR REPLACE INTO entries VALUES (?, ?, ?)",
                            [(k, sig_id, float(v)) for k, v in items.items()])
            if pack is not None:
                con.executemany("INSERT OR IGNORE INTO packed VALUES (?)", [(k,) for k in items])
                con.execute("DELETE FROM packs WHERE file = ?", (pack["file"],))  # a rebuilt pack replaces its record
                con.execute("INSERT OR REPLACE INTO packs VALUES (?, ?, ?, ?, ?, ?)",
                            (pack["sha256"], signature, pack["file"], pack["scores"], pack["checked"],
                             pack["max_diff"]))

        self._run(write, write=True)

    # --- score packs (metricbias.book.packs) ---------------------------------------------------
    def packs(self) -> list[dict]:
        """The imported score packs: ``sha256, signature, file, scores, checked, max_diff`` each."""
        def read(con):
            cur = con.execute("SELECT sha256, signature, file, scores, checked, max_diff FROM packs")
            names = [d[0] for d in cur.description]
            return [dict(zip(names, row)) for row in cur]

        return self._run(read)

    @functools.cached_property
    def has_packs(self) -> bool:
        """Whether any score pack was imported when first asked (a run asks once; packs are imported before)."""
        return bool(self._run(lambda con: con.execute("SELECT 1 FROM packs LIMIT 1").fetchone()))

    def count_packed(self, keys: Sequence[bytes]) -> int:
        """How many of ``keys`` (repeats counted) hold a score that came from a score pack."""
        unique = list(dict.fromkeys(keys))

        def read(con):
            found = set()
            for chunk in _chunks(unique, _max_params(con)):
                marks = ",".join("?" * len(chunk))
                found.update(k for (k,) in con.execute(f"SELECT key FROM packed WHERE key IN ({marks})", chunk))
            return found

        packed = self._run(read) if unique else set()
        return sum(k in packed for k in keys)

    def forget_packs(self) -> int:
        """Delete every score that came from a score pack, and the record of the imported packs; returns how many."""
        def delete(con):
            n = con.execute("DELETE FROM entries WHERE key IN (SELECT key FROM packed)").rowcount
            con.execute("DELETE FROM packed")
            con.execute("DELETE FROM packs")
            return n

        self.__dict__.pop("has_packs", None)
        return self._run(delete, write=True)

    def score(self, metric, candidates: list[str], references: list[str]) -> np.ndarray:
        """Scores from the cache where present; the rest computed once by ``metric`` and stored."""
        keys = self.keys(metric, candidates, references)
        found = self.lookup(keys)
        todo = [i for i, k in enumerate(keys) if k not in found]
        self.hits += len(keys) - len(todo)
        self.misses += len(todo)
        if todo:
            if metric.corpus_dependent:  # the corpus is the whole call: score it whole
                fresh = metric._score_dedup(candidates, references)
                new = dict(zip(keys, fresh))
            else:
                fresh = metric._score_dedup([candidates[i] for i in todo], [references[i] for i in todo])
                new = {keys[i]: s for i, s in zip(todo, fresh)}
            self.store(metric.signature, new)
            found.update(new)
        return np.array([found[k] for k in keys], dtype=float)

    def clear(self, signature_prefix: str | None = None) -> int:
        """Delete every entry, or those whose signature starts with ``signature_prefix``; returns how many."""
        def delete(con):
            if signature_prefix is None:
                n = con.execute("DELETE FROM entries").rowcount
                for table in ("signatures", "packed", "packs"):
                    con.execute(f"DELETE FROM {table}")
                return n
            ids = "SELECT id FROM signatures WHERE substr(signature, 1, ?) = ?"
            args = (len(signature_prefix), signature_prefix)
            n = con.execute(f"DELETE FROM entries WHERE signature_id IN ({ids})", args).rowcount
            con.execute("DELETE FROM signatures WHERE substr(signature, 1, ?) = ?", args)
            con.execute("DELETE FROM packs WHERE substr(signature, 1, ?) = ?", args)  # imported again when next run
            return n

        return self._run(delete, write=True)

    def count(self) -> int:
        """Number of stored scores."""
        return self._run(lambda con: con.execute("SELECT count(*) FROM entries").fetchone()[0])


def _embedding_key(layer: int, ids: bytes) -> int:
    digest = hashlib.blake2b(layer.to_bytes(2, "little") + ids, digest_size=8).digest()
    return int.from_bytes(digest, "little", signed=True)  # SQLite's 64-bit rowid: no separate index


class EmbeddingCache(SQLiteFile):
    """Per-token hidden states of one encoder (backbone + adapter), by layer and token ids.

    Stored as computed (float32, C order), so a score from cached embeddings equals the
    score from freshly computed ones bit for bit. Each row keeps its layer and ids and a
    read checks them, so a collision of the 64-bit row key can only cost a recomputation.
    """

    what = "embedding cache"
    tables = ("embeddings",)
    schema = ("CREATE TABLE IF NOT EXISTS embeddings (key INTEGER PRIMARY KEY, layer INTEGER NOT NULL, "
              "ids BLOB NOT NULL, width INTEGER NOT NULL, data BLOB NOT NULL)",)

    @staticmethod
    def folder() -> Path:
        return cache_dir() / "embeddings"

    @classmethod
    def for_encoder(cls, model_fingerprint: str, adapter_fingerprint: str) -> "EmbeddingCache":
        return cls(cls.folder() / f"{model_fingerprint}-{adapter_fingerprint}.sqlite")

    @staticmethod
    def _ids(seq: Sequence[int]) -> bytes:
        return np.asarray(seq, dtype=np.int32).tobytes()

    def get(self, seqs: Sequence[tuple[int, ...]], layer: int) -> dict[tuple[int, ...], np.ndarray]:
        """``{ids: (tokens, width) float32 array}`` for the stored ones among ``seqs``."""
        wanted = {_embedding_key(layer, self._ids(q)): q for q in dict.fromkeys(seqs)}
        if not wanted:
            return {}

        def read(con):
            found = {}
            keys = list(wanted)
            for chunk in _chunks(keys, _max_params(con)):
                marks = ",".join("?" * len(chunk))
                for key, got_layer, ids, width, data in con.execute(
                        f"SELECT key, layer, ids, width, data FROM embeddings WHERE key IN ({marks})", chunk):
                    q = wanted[key]
                    if got_layer == layer and ids == self._ids(q):
                        found[q] = np.frombuffer(data, dtype=np.float32).reshape(len(q), width)
            return found

        return self._run(read)

    def put(self, layer: int, items: dict[tuple[int, ...], np.ndarray]) -> None:
        rows = []
        for q, emb in items.items():
            ids = self._ids(q)
            emb = np.ascontiguousarray(emb, dtype=np.float32)
            rows.append((_embedding_key(layer, ids), layer, ids, emb.shape[1], emb.tobytes()))
        if rows:
            self._run(lambda con: con.executemany("INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?, ?, ?)",
                                                  rows), write=True)


@functools.lru_cache(maxsize=1)
def code_revision() -> str:
    """A hash of the library's source files and of the numerical libraries' versions (once per process).

    Any edit of ``src/metricbias`` changes it, so no cached result outlives the code that computed it.
    """
    import pandas as pd
    import scipy

    h = hashlib.sha256(f"numpy-{np.__version__}|pandas-{pd.__version__}|scipy-{scipy.__version__}".encode())
    package = Path(__file__).resolve().parent
    for path in sorted(package.rglob("*.py")):
        h.update(path.relative_to(package).as_posix().encode("utf-8") + b"\x00" + path.read_bytes() + b"\x01")
    return h.hexdigest()


def table_hash(frame) -> bytes:
    """A digest of a pandas frame's content: column names, dtypes, index and values."""
    import pandas as pd

    h = hashlib.sha256(repr([(str(c), str(t)) for c, t in frame.dtypes.items()]).encode("utf-8"))
    h.update(pd.util.hash_pandas_object(frame, index=True).to_numpy().tobytes())
    return h.digest()


def _pack(frame) -> bytes:
    """A frame with a default index, numeric, boolean or text columns and JSON ``attrs`` as an ``.npz`` blob
    (no pickle)."""
    import pandas as pd

    if not frame.index.equals(pd.RangeIndex(len(frame))):
        raise TypeError("cached_table stores tables with a default index (0, 1, …); call reset_index(drop=True)")
    arrays, dtypes = {}, []
    for i, (name, column) in enumerate(frame.items()):
        if column.dtype.kind in "biuf" and isinstance(column.dtype, np.dtype):
            arrays[f"c{i}"] = column.to_numpy()
        elif (isinstance(column.dtype, pd.StringDtype) or column.dtype == object) and \
                all(isinstance(v, str) for v in column):  # text without missing values
            arrays[f"c{i}"] = column.to_numpy(dtype=str)
        else:
            raise TypeError(f"cached_table cannot store column {name!r} ({column.dtype}): only numbers, booleans "
                            "and text")
        dtypes.append(str(column.dtype))
    if json.loads(json.dumps(frame.attrs)) != frame.attrs:
        raise TypeError(f"cached_table stores a table's attrs as JSON, which would change {frame.attrs!r}")
    meta = json.dumps({"columns": [str(c) for c in frame.columns], "dtypes": dtypes, "attrs": frame.attrs})
    buf = io.BytesIO()
    np.savez(buf, meta=np.array(meta), **arrays)
    return buf.getvalue()


def _unpack(blob: bytes):
    import pandas as pd

    with np.load(io.BytesIO(blob), allow_pickle=False) as data:
        meta = json.loads(str(data["meta"]))
        columns = {name: pd.Series(data[f"c{i}"], dtype=None if data[f"c{i}"].dtype.kind in "biuf" else dtype)
                   for i, (name, dtype) in enumerate(zip(meta["columns"], meta["dtypes"]))}
    out = pd.DataFrame(columns, columns=meta["columns"])
    out.attrs.update(meta["attrs"])
    return out


class ResultCache(SQLiteFile):
    """Tables by key (:func:`cached_table` makes the key): :meth:`get` and :meth:`put`."""

    what = "result cache"
    tables = ("results",)
    schema = ("CREATE TABLE IF NOT EXISTS results (key BLOB PRIMARY KEY, name TEXT NOT NULL, data BLOB NOT NULL) "
              "WITHOUT ROWID",)

    def __init__(self, path: str | os.PathLike):
        super().__init__(path)
        self.hits = 0
        self.misses = 0

    @classmethod
    def default(cls) -> "ResultCache":
        return cls(cache_dir() / "results.sqlite")

    def get(self, key: bytes):
        """The stored table of ``key``, or None (an unreadable entry counts as none, with a warning)."""
        row = self._run(lambda con: con.execute("SELECT name, data FROM results WHERE key = ?", (key,)).fetchone())
        if row is None:
            return None
        try:
            return _unpack(row[1])
        except (ValueError, TypeError, KeyError, OSError, zipfile.BadZipFile) as exc:
            warnings.warn(f"{self.what} {self.path}: the stored {row[0]} could not be read ({exc}); computing it "
                          "again", CacheWarning, stacklevel=3)
            return None

    def put(self, key: bytes, name: str, frame) -> None:
        blob = _pack(frame)
        self._run(lambda con: con.execute("INSERT OR REPLACE INTO results VALUES (?, ?, ?)", (key, name, blob)),
                  write=True)


def cached_result(name: str, *, ignore=("progress",)):
    """Decorate a deterministic function returning a frame so that :func:`cached_table` keeps its result.

    Its frame arguments are the key's ``tables``, every other argument (defaults included, ``ignore``
    left out) its ``params``; the decorated function takes ``cache=`` (True, a :class:`ResultCache`,
    or None/False for none).
    """
    import inspect

    import pandas as pd

    def decorate(fn):
        signature = inspect.signature(fn)

        @functools.wraps(fn)
        def run(*args, cache=True, **kwargs):
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            tables = [v for v in bound.arguments.values() if isinstance(v, pd.DataFrame)]
            params = {k: v for k, v in bound.arguments.items() if not isinstance(v, pd.DataFrame) and k not in ignore}
            return cached_table(name, lambda: fn(*bound.args, **bound.kwargs), tables=tables, params=params,
                                cache=cache)

        return run

    return decorate


def cached_table(name: str, compute: Callable, *, tables: Sequence = (), params: dict | None = None, cache=True):
    """``compute()``, a pandas frame, or the frame it returned before for the same computation.

    The key is ``name``, the content of the input ``tables`` (:func:`table_hash`), ``params``
    (JSON, in their order: a tuple and a list of the same values are one key) and :func:`code_revision`; so
    ``compute`` must depend on nothing else (seeds are parameters), and the warnings it gives
    are not repeated when the table is read back. ``cache``: True for
    :meth:`ResultCache.default`, a :class:`ResultCache`, or None/False to compute without one.
    """
    if cache is None or cache is False:
        return compute()
    store = ResultCache.default() if cache is True else cache
    h = hashlib.sha256(name.encode("utf-8") + b"\x00" + code_revision().encode("ascii") + b"\x00")
    h.update(json.dumps(params or {}, default=repr).encode("utf-8"))
    for table in tables:
        h.update(table_hash(table))
    key = h.digest()[:KEY_BYTES]
    found = store.get(key)
    if found is not None:
        store.hits += 1
        return found
    store.misses += 1
    out = compute()
    store.put(key, name, out)
    return out
