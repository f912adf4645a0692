"""Chapter 5's list of the association tests, one row per test (the per-level table is a download)."""

from __future__ import annotations

import pandas as pd


def by_test(overview: pd.DataFrame) -> pd.DataFrame:
    """:func:`metricbias.book.reproduction.ch5_association.overview` (one row per test and level) as one row per test:
    what it contrasts (``targets X / Y``, ``attributes A / B``), the ``levels`` it runs at, and the ``pairs`` one metric
    scores for it, summed over its levels (before pairs shared between tests are counted once)."""
    keys = ["test", "targets X / Y", "attributes A / B"]
    grouped = overview.groupby(keys, sort=False)
    return grouped.agg(levels=("level", ", ".join), pairs=("pairs", "sum")).reset_index()


__all__ = ["by_test"]
