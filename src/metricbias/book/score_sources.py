"""Where a chapter's scores come from: whether the build ignores the score packs (``make book RECOMPUTE=1``), and
how many of a chapter's scores came from packs, from the cache or were computed live (:func:`chapter_numbers`)."""

from __future__ import annotations

import json
import os
from pathlib import Path

#: set (to anything but "" or "0") to ignore the score packs and compute every score live
RECOMPUTE_ENV = "METRICBIAS_RECOMPUTE"


def recomputing() -> bool:
    """Whether ``METRICBIAS_RECOMPUTE`` (``make book RECOMPUTE=1``) asks for every score live, the packs ignored."""
    return os.environ.get(RECOMPUTE_ENV, "").strip() not in ("", "0")


def chapter_numbers(job_log=None, cache=None) -> dict:
    """The chapter's scores so far (its job log, ``METRICBIAS_JOB_LOG``): ``scores``, ``from_packs``, ``computed``
    (live), and of the packs it used, ``checked`` (scores recomputed to verify them) and ``max_diff``."""
    from ..cache import ScoreCache
    from ..jobs import LOG_ENV

    path = Path(job_log or os.environ.get(LOG_ENV, ""))
    records = []
    if str(path) and path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    used = {r["signature"] for r in records if r.get("packed")}
    rows = []
    if used:  # the score cache is opened only when a pack was used
        cache = ScoreCache.default() if cache in (None, True) else cache
        rows = [row for row in cache.packs() if row["signature"] in used]
    return {"scores": sum(r.get("cached", 0) + r.get("computed", 0) for r in records),
            "from_packs": sum(r.get("packed", 0) for r in records),
            "computed": sum(r.get("computed", 0) for r in records),
            "checked": sum(row["checked"] for row in rows),
            "max_diff": max((row["max_diff"] for row in rows), default=0.0)}


__all__ = ["RECOMPUTE_ENV", "chapter_numbers", "recomputing"]
