"""Score cache footprint: the first layout (hex key + signature text per row) vs the compact one.

Writes ``--rows`` synthetic entries spread over the signatures of the offline suite
(real signature strings, texts shaped like the datasets' sentences) into

* the **first layout**, with the first layout's own schema, key and ``store`` statement
  (``git show 6476c7e:src/metricbias/cache.py``), and
* the **compact layout** through :class:`metricbias.cache.ScoreCache`,

then reports both file sizes, times a lookup of 100,000 random keys in each (the values
must be identical), and migrates a copy of the first file with ``ScoreCache`` (the path an
old cache takes on first use), reporting the size after migration and its time.

    .venv/bin/python benchmarks/bench_cache.py [--rows 2000000]
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import sqlite3
import tempfile
from contextlib import closing
from pathlib import Path

import numpy as np
from _common import Timer, machine, save

OLD_SCHEMA = "CREATE TABLE IF NOT EXISTS scores (key TEXT PRIMARY KEY, signature TEXT NOT NULL, score REAL NOT NULL)"


def old_key(signature: str, corpus: str, candidate: str, reference: str) -> str:
    blob = "\x1f".join((signature, corpus, candidate, reference)).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()


def size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.parent.glob(path.name + "*"))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--batch", type=int, default=50_000, help="entries per store call (one transaction)")
    args = parser.parse_args()

    from metricbias import metrics, profiles
    from metricbias.cache import ScoreCache

    signatures = []
    for label, name, options in profiles.suite("offline"):
        try:
            signatures.append(metrics.get(name, **options).signature)
        except Exception:  # noqa: BLE001  (a metric whose model is missing here: its signature is not needed)
            continue
    rng = np.random.default_rng(0)
    scores = rng.random(args.rows)
    sig_of = rng.integers(0, len(signatures), args.rows)

    def texts(i):
        return (f"The developer argued with the designer because candidate {i} did not like the design",
                f"The developer argued with the designer because the developer {i // 2} did not like it")

    with tempfile.TemporaryDirectory() as tmp:
        old_path, new_path = Path(tmp) / "old.sqlite", Path(tmp) / "new.sqlite"
        with Timer() as t_old:
            with closing(sqlite3.connect(old_path)) as con:
                con.execute("PRAGMA journal_mode=WAL")
                con.execute(OLD_SCHEMA)
                for start in range(0, args.rows, args.batch):
                    rows = []
                    for i in range(start, min(start + args.batch, args.rows)):
                        sig = signatures[sig_of[i]]
                        rows.append((old_key(sig, "", *texts(i)), sig, float(scores[i])))
                    with con:
                        con.executemany("INSERT OR REPLACE INTO scores VALUES (?, ?, ?)", rows)
        cache = ScoreCache(new_path)
        all_keys = []
        with Timer() as t_new:
            for start in range(0, args.rows, args.batch):
                stop = min(start + args.batch, args.rows)
                by_sig: dict[int, dict] = {}
                for i in range(start, stop):
                    sig = signatures[sig_of[i]]
                    key = hashlib.sha256("\x1f".join((sig, "", *texts(i))).encode("utf-8")).digest()[:16]
                    by_sig.setdefault(sig_of[i], {})[key] = float(scores[i])
                for s, items in by_sig.items():
                    cache.store(signatures[s], items)
        sizes = {"first_layout_bytes": size(old_path), "compact_bytes": size(new_path)}

        probe = rng.choice(args.rows, size=min(100_000, args.rows), replace=False)
        with Timer() as t_look_old:
            with closing(sqlite3.connect(old_path)) as con:
                keys = [old_key(signatures[sig_of[i]], "", *texts(i)) for i in probe]
                old_found = {}
                for start in range(0, len(keys), 900):
                    chunk = keys[start:start + 900]
                    marks = ",".join("?" * len(chunk))
                    old_found.update(con.execute(f"SELECT key, score FROM scores WHERE key IN ({marks})", chunk))
        with Timer() as t_look_new:
            keys_new = [hashlib.sha256("\x1f".join((signatures[sig_of[i]], "", *texts(i))).encode()).digest()[:16]
                        for i in probe]
            new_found = cache.lookup(keys_new)
        identical = [old_found[k] for k in keys] == [new_found[k] for k in keys_new] == [float(scores[i]) for i in probe]

        migrated = Path(tmp) / "migrated.sqlite"
        shutil.copyfile(old_path, migrated)
        with Timer() as t_mig:
            moved = ScoreCache(migrated)
        check = moved.lookup([bytes.fromhex(k)[:16] for k in keys])
        identical_after_migration = [check[bytes.fromhex(k)[:16]] for k in keys] == [old_found[k] for k in keys]
        sizes["migrated_bytes"] = size(migrated)

    result = {"rows": args.rows, "signatures": len(signatures),
              "signature_chars_mean": float(np.mean([len(s) for s in signatures])), **sizes,
              "compact_over_first": sizes["compact_bytes"] / sizes["first_layout_bytes"],
              "migrated_over_first": sizes["migrated_bytes"] / sizes["first_layout_bytes"],
              "write_seconds": {"first_layout": t_old.seconds, "compact": t_new.seconds},
              "lookup_100k_seconds": {"first_layout": t_look_old.seconds, "compact": t_look_new.seconds},
              "migration_seconds": t_mig.seconds, "lookups_identical": identical,
              "identical_after_migration": identical_after_migration, "machine": machine()}
    mb = 1e6
    print(f"score cache, {args.rows:,} entries over {len(signatures)} signatures "
          f"(mean {result['signature_chars_mean']:.0f} characters)")
    print(f"  first layout : {sizes['first_layout_bytes'] / mb:8.1f} MB  (write {t_old.seconds:.0f} s, "
          f"100k lookups {t_look_old.seconds:.2f} s)")
    print(f"  compact      : {sizes['compact_bytes'] / mb:8.1f} MB  (write {t_new.seconds:.0f} s, "
          f"100k lookups {t_look_new.seconds:.2f} s) = {result['compact_over_first']:.1%} of the first")
    print(f"  migrated copy: {sizes['migrated_bytes'] / mb:8.1f} MB  ({t_mig.seconds:.0f} s) = "
          f"{result['migrated_over_first']:.1%}; lookups identical: {identical}, after migration: "
          f"{identical_after_migration}")
    print(f"  machine: {result['machine']}; saved {save('cache', result)}")


if __name__ == "__main__":
    main()
