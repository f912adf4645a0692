"""The one layout of a candidate-pair table: what every pair loader returns and what scoring takes.

One row per pair, these columns first (:data:`PAIR_COLUMNS`):

``dataset``
    where the pair comes from (``published``, ``built``, ...; a composite set
    such as ``adapter-evaluation`` keeps each part's name);
``attribute``, ``pair_id``
    the sensitive attribute and the pair's id, unique within (dataset, attribute);
``candidate_1``, ``candidate_2``
    the two candidates; candidate 1 is the stereotypical one (WinoBias
    pro-stereotyped, CrowS-Pairs ``sent_more``);
``reference_1``, ``reference_2``
    the reference each candidate is scored against (the same text for built
    pairs; the released rows sometimes differ slightly);
``group_1``, ``group_2``
    the protected group of each candidate where the data say it (empty otherwise).

Datasets add their own columns after these (``direction``, ``source``, ...).
The loaders (:func:`metricbias.datasets.published.pairs`,
:func:`metricbias.datasets.built.load`, the registry's :func:`~metricbias.datasets.registry.load`)
return this layout; :func:`conform` checks a table a user brings and puts it in it.
"""

from __future__ import annotations

import pandas as pd

PAIR_COLUMNS = ["dataset", "attribute", "pair_id", "candidate_1", "candidate_2", "reference_1", "reference_2",
                "group_1", "group_2"]
#: what a user's table must have; :func:`conform` fills the rest
REQUIRED = ["attribute", "pair_id", "candidate_1", "candidate_2", "reference_1", "reference_2"]


def conform(pairs: pd.DataFrame, what: str = "pairs") -> pd.DataFrame:
    """Validate a pair table and put it in the pair layout (missing ``dataset``/group columns filled), rows kept
    in their order."""
    missing = [c for c in REQUIRED if c not in pairs.columns]
    if missing:
        raise ValueError(f"{what}: missing column(s) {missing}; the pair layout is {', '.join(PAIR_COLUMNS)}")
    out = pairs.copy()
    if "dataset" not in out.columns:
        out["dataset"] = "pairs"
    for col in ("group_1", "group_2"):
        if col not in out.columns:
            out[col] = ""
    dup = out.duplicated(["dataset", "attribute", "pair_id"])
    if dup.any():
        row = out.loc[dup].iloc[0]
        raise ValueError(f"{what}: pair_id {row['pair_id']!r} appears more than once in "
                         f"{row['dataset']}/{row['attribute']}")
    extra = [c for c in out.columns if c not in PAIR_COLUMNS]
    return out[PAIR_COLUMNS + extra].reset_index(drop=True)


__all__ = ["PAIR_COLUMNS", "REQUIRED", "conform"]
