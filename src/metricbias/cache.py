"""Score cache keyed by a metric's signature and the data it scored.

Each entry is one (signature, candidate, reference) -> score. The key is a
sha256 of the signature and the two texts, so a changed text, option, backbone
fingerprint, library version or implementation revision never reuses a stale
score. For corpus-dependent metrics (idf weights, document frequencies) the
hash of the whole call's input is part of the key too. Entries live in one
SQLite file; every write is a transaction, so an interrupted run leaves either
the old or the new entries, never a half-written one.
"""

from __future__ import annotations

import hashlib
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Sequence

import numpy as np

from .paths import cache_dir

_SCHEMA = "CREATE TABLE IF NOT EXISTS scores (key TEXT PRIMARY KEY, signature TEXT NOT NULL, score REAL NOT NULL)"


def data_hash(candidates: Sequence[str], references: Sequence[str]) -> str:
    h = hashlib.sha256()
    for c, r in zip(candidates, references):
        h.update(c.encode("utf-8") + b"\x00" + r.encode("utf-8") + b"\x01")
    return h.hexdigest()


def _pair_key(signature: str, corpus: str, candidate: str, reference: str) -> str:
    blob = "\x1f".join((signature, corpus, candidate, reference)).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()


class ScoreCache:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with closing(self._connect()) as con, con:
            con.execute(_SCHEMA)
        self.hits = 0
        self.misses = 0

    @classmethod
    def default(cls) -> "ScoreCache":
        return cls(cache_dir() / "scores.sqlite")

    def _connect(self) -> sqlite3.Connection:
        con = sqlite3.connect(self.path, timeout=60)
        con.execute("PRAGMA journal_mode=WAL")
        return con

    def keys(self, metric, candidates: Sequence[str], references: Sequence[str]) -> list[str]:
        corpus = data_hash(candidates, references) if metric.corpus_dependent else ""
        sig = metric.signature
        return [_pair_key(sig, corpus, c, r) for c, r in zip(candidates, references)]

    def lookup(self, keys: Sequence[str]) -> dict[str, float]:
        found: dict[str, float] = {}
        unique = list(dict.fromkeys(keys))
        with closing(self._connect()) as con:
            for start in range(0, len(unique), 900):  # SQLite's bound-parameter limit
                chunk = unique[start:start + 900]
                marks = ",".join("?" * len(chunk))
                for key, score in con.execute(f"SELECT key, score FROM scores WHERE key IN ({marks})", chunk):
                    found[key] = score
        return found

    def store(self, signature: str, items: dict[str, float]) -> None:
        with closing(self._connect()) as con, con:
            con.executemany("INSERT OR REPLACE INTO scores VALUES (?, ?, ?)",
                            [(k, signature, float(v)) for k, v in items.items()])

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
        with closing(self._connect()) as con, con:
            if signature_prefix is None:
                return con.execute("DELETE FROM scores").rowcount
            return con.execute("DELETE FROM scores WHERE signature LIKE ?", (signature_prefix + "%",)).rowcount
