"""The score and embedding caches: layout, migration of the first layout, corrupt files, concurrent writers."""

import hashlib
import multiprocessing
import sqlite3
from contextlib import closing

import numpy as np
import pytest

from metricbias.cache import CacheWarning, EmbeddingCache, ScoreCache, _pair_key, data_hash
from metricbias.metrics.base import Metric


class Length(Metric):
    """Candidate length minus reference length: scores anyone can check."""

    name = "length-test"
    family = "ngram"

    def __init__(self, corpus_dependent=False):
        super().__init__()
        self.corpus_dependent = corpus_dependent
        self.calls = 0

    def _score(self, candidates, references):
        self.calls += 1
        return np.array([len(c) - len(r) for c, r in zip(candidates, references)], dtype=float)


CANDS = ["a cat", "the dog barks", "a cat", "birds"]
REFS = ["a cat sat", "a dog", "a cat sat", "fish swim"]


def test_scores_round_trip_and_keys_are_16_bytes(tmp_path):
    cache = ScoreCache(tmp_path / "s.sqlite")
    m = Length()
    first = m.score(CANDS, REFS, cache=cache)
    np.testing.assert_array_equal(first, [-4, 8, -4, -4])
    assert (cache.hits, cache.misses) == (0, 4) and m.calls == 1
    again = m.score(CANDS, REFS, cache=cache)
    assert (cache.hits, cache.misses) == (4, 4) and m.calls == 1 and again.tobytes() == first.tobytes()
    keys = cache.keys(m, CANDS, REFS)
    assert all(isinstance(k, bytes) and len(k) == 16 for k in keys) and keys[0] == keys[2]
    assert cache.lookup(keys) == dict(zip(keys, first))
    assert cache.count() == 3  # the repeated pair is one entry
    # one signature row, however many entries
    with closing(sqlite3.connect(tmp_path / "s.sqlite")) as con:
        assert con.execute("SELECT signature FROM signatures").fetchall() == [(m.signature,)]
    assert cache.clear("metric:other") == 0
    assert cache.clear("metric:length-test") == 3 and cache.count() == 0


def test_corpus_dependent_keys_include_the_corpus(tmp_path):
    cache = ScoreCache(tmp_path / "s.sqlite")
    m = Length(corpus_dependent=True)
    # the signature and corpus are hashed once per call: the keys stay those of _pair_key (stored caches stay valid)
    corpus = data_hash(CANDS, REFS)
    assert cache.keys(m, CANDS, REFS) == [_pair_key(m.signature, corpus, c, r) for c, r in zip(CANDS, REFS)]
    assert cache.keys(Length(), CANDS, REFS) == [_pair_key(Length().signature, "", c, r) for c, r in zip(CANDS, REFS)]
    assert cache.keys(m, CANDS, REFS)[0] != cache.keys(m, CANDS[:1], REFS[:1])[0]
    assert cache.keys(Length(), CANDS, REFS)[0] == cache.keys(Length(), CANDS[:1], REFS[:1])[0]


def _old_cache(path, metric, candidates, references, scores):
    """A cache in the first layout (as metricbias 0.x wrote it): hex sha256 key, signature per row."""
    with closing(sqlite3.connect(path)) as con, con:
        con.execute("CREATE TABLE scores (key TEXT PRIMARY KEY, signature TEXT NOT NULL, score REAL NOT NULL)")
        for c, r, s in zip(candidates, references, scores):
            key = hashlib.sha256("\x1f".join((metric.signature, "", c, r)).encode("utf-8")).hexdigest()
            con.execute("INSERT OR REPLACE INTO scores VALUES (?, ?, ?)", (key, metric.signature, s))


def test_a_cache_in_the_first_layout_is_migrated_with_one_line(tmp_path, capsys):
    path = tmp_path / "scores.sqlite"
    stored = [0.125, -3.5, 0.125, 1e-300]  # values a recomputation would not give: they must come from the file
    _old_cache(path, Length(), CANDS, REFS, stored)
    cache = ScoreCache(path)
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "moved 3 entries to the compact layout" in err[0] and str(path) in err[0]
    m = Length()
    got = m.score(CANDS, REFS, cache=cache)
    assert m.calls == 0 and got.tolist() == stored
    ScoreCache(path)  # opening again: nothing left to migrate, nothing printed
    assert capsys.readouterr().err == ""
    with closing(sqlite3.connect(path)) as con:
        tables = {name for (name,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert tables == {"signatures", "entries", "packed", "packs"}


def test_the_new_layout_is_a_fraction_of_the_first(tmp_path):
    m = Length()
    n = 20_000
    cands = [f"candidate sentence number {i} with some words" for i in range(n)]
    refs = [f"reference sentence number {i}" for i in range(n)]
    scores = np.random.default_rng(0).random(n)
    _old_cache(tmp_path / "old.sqlite", m, cands, refs, scores)
    new = ScoreCache(tmp_path / "new.sqlite")
    new.store(m.signature, dict(zip(new.keys(m, cands, refs), scores)))
    old_size = (tmp_path / "old.sqlite").stat().st_size
    new_size = sum(f.stat().st_size for f in tmp_path.glob("new.sqlite*"))
    # the test metric's signature is short (~100 characters; real ones ~180), so the gain here is smaller
    assert new_size < 0.3 * old_size


@pytest.mark.parametrize("damage", ["garbage", "malformed"])
def test_a_corrupt_cache_is_moved_aside_and_rebuilt(tmp_path, damage):
    path = tmp_path / "scores.sqlite"
    if damage == "garbage":
        path.write_bytes(b"this is not a database" * 100)
        expected = "file is not a database"
    else:
        cache = ScoreCache(path)
        m = Length()
        cands = [f"text {i}" * 5 for i in range(5000)]
        cache.store(m.signature, dict(zip(cache.keys(m, cands, cands), range(5000))))
        with closing(sqlite3.connect(path)) as con:
            con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        blob = bytearray(path.read_bytes())
        page = 4096
        for start in range(2 * page, len(blob) - page, page):  # scribble over every b-tree page header
            blob[start:start + 16] = b"\xff" * 16
        path.write_bytes(bytes(blob))
        expected = "database disk image is malformed"
    with pytest.warns(CacheWarning, match=rf"score cache .*scores.sqlite was corrupt \({expected}.*moved it to "
                                          r"scores.sqlite.corrupt-\d{8}-\d{6}"):
        cache = ScoreCache(path)
        m = Length()
        got = m.score(CANDS, REFS, cache=cache)
    np.testing.assert_array_equal(got, [-4, 8, -4, -4])
    assert len(list(tmp_path.glob("scores.sqlite.corrupt-*"))) >= 1
    assert Length().score(CANDS, REFS, cache=ScoreCache(path)).tolist() == got.tolist()


def _writer(path, start, stop, rounds):
    cache = ScoreCache(path)
    m = Length()
    for _ in range(rounds):
        cands = [f"candidate {i}" for i in range(start, stop)]
        refs = [f"reference {i}" for i in range(start, stop)]
        cache.store(m.signature, {k: float(i) for k, i in zip(cache.keys(m, cands, refs), range(start, stop))})
        cache.lookup(cache.keys(m, cands, refs))


def _embedding_writer(path, seed):
    cache = EmbeddingCache(path)
    for layer in (1, 2):
        cache.put(layer, {tuple(range(i, i + 5)): np.full((5, 3), i + layer, dtype=np.float32) for i in range(200)})


def test_two_processes_write_one_cache(tmp_path):
    path = tmp_path / "scores.sqlite"
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_writer, args=(path, 0, 3000, 10)),
             ctx.Process(target=_writer, args=(path, 1500, 4500, 10))]  # 1,500 keys in common
    procs += [ctx.Process(target=_embedding_writer, args=(tmp_path / "emb.sqlite", s)) for s in (0, 1)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(300)
    assert [p.exitcode for p in procs] == [0, 0, 0, 0]
    with closing(sqlite3.connect(path)) as con:
        assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    cache = ScoreCache(path)
    m = Length()
    cands = [f"candidate {i}" for i in range(4500)]
    refs = [f"reference {i}" for i in range(4500)]
    found = cache.lookup(cache.keys(m, cands, refs))
    assert cache.count() == 4500
    assert [found[k] for k in cache.keys(m, cands, refs)] == [float(i) for i in range(4500)]
    emb = EmbeddingCache(tmp_path / "emb.sqlite").get([tuple(range(i, i + 5)) for i in range(200)], 2)
    assert len(emb) == 200 and all((emb[tuple(range(i, i + 5))] == i + 2).all() for i in range(200))


def test_embedding_cache_checks_layer_and_ids(tmp_path):
    cache = EmbeddingCache(tmp_path / "e.sqlite")
    x = np.arange(12, dtype=np.float32).reshape(4, 3) / 7
    cache.put(3, {(101, 7, 8, 102): x})
    got = cache.get([(101, 7, 8, 102), (101, 9, 102)], 3)
    assert list(got) == [(101, 7, 8, 102)] and got[(101, 7, 8, 102)].tobytes() == x.tobytes()
    assert cache.get([(101, 7, 8, 102)], 2) == {}
