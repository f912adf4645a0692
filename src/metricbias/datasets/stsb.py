"""STS-B (GLUE): sentence pairs with human similarity ratings in [0, 5].

The mirror's files are GLUE's ``train.tsv`` / ``dev.tsv`` without a header row: ten
tab-separated fields, the sentences in fields 8 and 9 and the mean rating in field 10.
The regression metric (:mod:`metricbias.metrics.regression`) is trained on ``train``
and reports its Pearson correlation on ``dev``.
"""

from __future__ import annotations

import csv

import pandas as pd

from .. import sources
from .published import DatasetError

FILES = {"train": "glue/STS-B/train.tsv", "dev": "glue/STS-B/dev.tsv"}
N_FIELDS = 10


def read(path) -> pd.DataFrame:
    """Parse one STS-B file; a malformed row raises :class:`DatasetError` naming file and line."""
    rows = []
    with open(path, encoding="utf-8", newline="") as fh:
        for lineno, row in enumerate(csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_NONE), start=1):
            if lineno == 1 and row and row[0] == "index":  # GLUE's header, when present
                continue
            if len(row) != N_FIELDS:
                raise DatasetError(f"{path}, line {lineno}: {len(row)} fields, expected {N_FIELDS}")
            s1, s2, rating = row[7], row[8], row[9]
            try:
                value = float(rating)
            except ValueError as exc:
                raise DatasetError(f"{path}, line {lineno}: rating {rating!r} is not a number") from exc
            if not 0.0 <= value <= 5.0:
                raise DatasetError(f"{path}, line {lineno}: rating {value} is outside [0, 5]")
            if not s1.strip() or not s2.strip():
                raise DatasetError(f"{path}, line {lineno}: empty sentence")
            rows.append((s1, s2, value))
    if not rows:
        raise DatasetError(f"{path}: no rows")
    return pd.DataFrame(rows, columns=["sentence1", "sentence2", "score"])


def load(split: str) -> pd.DataFrame:
    """``sentence1, sentence2, score`` of split ``train`` or ``dev``."""
    if split not in FILES:
        raise ValueError(f"unknown STS-B split {split!r}; splits: {', '.join(FILES)}")
    return read(sources.path(FILES[split]))
