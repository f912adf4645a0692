"""Profile a build of the book: time per chapter and per cell (step), slowest steps first.

Runs the chapters through :func:`metricbias.book.runner.run` (papermill, as ``metricbias run``
does), which records every chapter's and every code cell's wall time in
``<cache>/run/timings.json``; this script then prints and saves them.

* ``--cache fresh`` (default): a new, empty cache folder: the **cold** build (nothing
  scored, encoded or trained before; artifacts that ship under ``models/`` are used);
* ``--cache default``: the project's cache (``METRICBIAS_CACHE`` or ``.cache/metricbias``),
  the **warm** rerun when a build has filled it;
* ``--cache DIR``: any folder; run twice with the same DIR for cold then warm;
* ``--report-only``: no run, only the report of the timings already in the cache folder
  (``--cache DIR`` or the project's).

    .venv/bin/python benchmarks/profile_chapters.py --profile smoke [--only 01,03] [--top 15]
    /usr/bin/time -v .venv/bin/python benchmarks/profile_chapters.py --profile offline   # the full cold build

Writes ``benchmarks/results/profile-<profile>-<cache>.json`` and prints Markdown tables
(chapters, the slowest cells, then the slowest scoring jobs: each metric on each set of
pairs, from the job log the runner keeps per chapter) ready for ``benchmarks/README.md``.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from _common import machine, save


def report(profile: str, stems: list[str] | None, top: int) -> dict:
    from metricbias.book import runner

    table = runner.load_timings().get(profile, {})
    chapters = {s: t for s, t in table.items() if stems is None or s in stems}
    if not chapters:
        raise SystemExit(f"no timings for profile {profile} in {runner.timings_path()}: run the chapters first")
    total = sum(t["seconds"] for t in chapters.values())
    print(f"\n| chapter | seconds | share | slowest cell |\n|---|---:|---:|---|")
    for stem, t in chapters.items():
        slow = max(t["cells"], key=lambda c: c["seconds"], default=None)
        cell = f"cell {slow['cell']} ({slow['seconds']:.1f} s): `{slow['source']}`" if slow else ""
        print(f"| {stem} | {t['seconds']:.1f} | {t['seconds'] / total:.0%} | {cell} |")
    print(f"| **all** | **{total:.1f}** | | |")
    cells = sorted(((stem, c) for stem, t in chapters.items() for c in t["cells"]), key=lambda x: -x[1]["seconds"])
    print(f"\nslowest {min(top, len(cells))} cells:\n\n| chapter | cell | seconds | share of all | first line |\n"
          "|---|---:|---:|---:|---|")
    for stem, c in cells[:top]:
        print(f"| {stem} | {c['cell']} | {c['seconds']:.1f} | {c['seconds'] / total:.1%} | `{c['source']}` |")
    jobs = sorted(((stem, j) for stem, t in chapters.items() for j in t.get("jobs", [])), key=lambda x: -x[1]["seconds"])
    print(f"\nslowest {min(top, len(jobs))} scoring jobs (metric x pairs, summed per chapter):\n\n"
          "| chapter | metric | set of pairs | pairs computed | seconds | share of all |\n|---|---|---|---:|---:|---:|")
    for stem, j in jobs[:top]:
        print(f"| {stem} | {j['metric']} | {j['what']} | {j['computed']:,} | {j['seconds']:.1f} | "
              f"{j['seconds'] / total:.1%} |")
    return {"profile": profile, "total_seconds": total, "chapters": chapters,
            "slowest_cells": [{"chapter": s, **c} for s, c in cells[:top]],
            "slowest_jobs": [{"chapter": s, **j} for s, j in jobs[:top]]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--profile", default="smoke")
    parser.add_argument("--only", default=None, help="comma-separated chapter numbers or stems")
    parser.add_argument("--cache", default="fresh", help="fresh | default | a folder")
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--report-only", action="store_true")
    args = parser.parse_args()

    tmp = None
    if args.cache == "fresh" and not args.report_only:
        tmp = tempfile.TemporaryDirectory(prefix="metricbias-profile-")
        os.environ["METRICBIAS_CACHE"] = tmp.name
    elif args.cache not in ("fresh", "default"):
        os.environ["METRICBIAS_CACHE"] = str(Path(args.cache).resolve())
    from metricbias.book import runner
    from metricbias.paths import cache_dir

    only = args.only.split(",") if args.only else None
    wall = None
    if not args.report_only:
        print(f"cache folder: {cache_dir()} ({args.cache})")
        start = time.perf_counter()
        outputs = runner.run(profile=args.profile, only=only)
        wall = time.perf_counter() - start
        stems = [p.stem for p in outputs]
    else:
        stems = [c.stem for c in runner.select(runner.chapters(), only)]
    result = report(args.profile, stems, args.top)
    result.update({"cache": args.cache, "wall_seconds": wall, "machine": machine()})
    if wall is not None:
        print(f"\nwall time of the run (kernel start-ups included): {wall:.1f} s")
    name = "profile-" + args.profile + "-" + ("report" if args.report_only else args.cache if args.cache in ("fresh", "default") else "dir")
    print(f"machine: {result['machine']}; saved {save(name, result)}")
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
