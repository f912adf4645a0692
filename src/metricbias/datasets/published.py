"""The six datasets released with Sun et al. (2022), with their per-example scores.

Each released TSV holds one row per (candidate, reference) and the score of 29
metric configurations for that row. Rows come in pairs: the WinoBias
pro-stereotyped sentence (or the CrowS-Pairs ``sent_more`` sentence) first, its
counterpart second. :func:`load` turns the six files into one table with one
row per pair, in the pair layout (:mod:`.schema`) with the scores after it.

The released files are not always tidy: in some CrowS-Pairs pairs the
two rows carry slightly different references (a trailing period, a dropped
word). Both are kept (``reference_1`` for candidate 1, ``reference_2`` for
candidate 2) because the released scores were computed against each row's own
reference; ``shared_reference`` says whether they agree.

Texts that contain a comma were written CSV-style, wrapped in double quotes
(63 texts of the age and religion files). The quotes are not part of the text
the released scores were computed on (with them, nltk's BLEU differs on 5 rows
and chrF on 30; without them every row of BLEU, ROUGE, NIST and chrF is
reproduced), so :func:`read_released` removes that quoting.
"""

from __future__ import annotations

import csv
from functools import lru_cache

import numpy as np
import pandas as pd

from .. import sources
from .schema import PAIR_COLUMNS

#: attribute name -> released file (relative to the raw folder)
FILES = {
    "race": "metric_fairness/race.tsv",
    "gender": "metric_fairness/gender.tsv",
    "religion": "metric_fairness/religion.tsv",
    "physical_appearance": "metric_fairness/physical-appearance.tsv",
    "age": "metric_fairness/age.tsv",
    "socioeconomic": "metric_fairness/socioeconomic.tsv",
}
ATTRIBUTES = tuple(FILES)

#: the released score columns, in file order
METRICS = (
    "BLEU", "ROUGE", "METEOR", "NIST", "chrF",
    "BERTScore-DistilBERT", "BERTScore-RoBERTa-base", "BERTScore-RoBERTa-large",
    "BERTScore-BERT-base", "BERTScore-BERT-large",
    "MoverScore-DistilBERT", "MoverScore-BERT-base", "MoverScore-BERT-large",
    "BLEURT-BERT-tiny", "BLEURT-BERT-base", "BLEURT-BERT-large", "BLEURT-RemBERT",
    "PRISM-p", "PRISM-r", "PRISM-F",
    "BARTScore-BART-base-p", "BARTScore-BART-base-r", "BARTScore-BART-base-F",
    "BARTScore-BART-large-p", "BARTScore-BART-large-r", "BARTScore-BART-large-F",
    "FrugalScore-BERT-tiny", "FrugalScore-BERT-small", "FrugalScore-BERT-medium",
)

def _unquote(field: str) -> str:
    """A CSV-quoted field (``"a, b"``, inner quotes doubled) as its text; other fields unchanged."""
    if len(field) >= 2 and field[0] == '"' and field[-1] == '"':
        return field[1:-1].replace('""', '"')
    return field


class DatasetError(ValueError):
    """A dataset file is malformed; the message names the file and row."""


def check_attributes(attributes, known=ATTRIBUTES) -> list[str]:
    if attributes is None:
        return list(known)
    if isinstance(attributes, str):
        attributes = [a.strip() for a in attributes.split(",") if a.strip()]
    unknown = [a for a in attributes if a not in known]
    if unknown:
        raise ValueError(f"unknown attribute(s) {unknown}; known: {', '.join(known)}")
    return list(attributes)


def read_released(path) -> pd.DataFrame:
    """Parse one released TSV (one row per candidate); malformed rows raise :class:`DatasetError`."""
    with open(path, encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))
    if not rows:
        raise DatasetError(f"{path}: empty file")
    header = [h for h in rows[0] if h]
    expected = ["candidate", "reference", *METRICS]
    if header != expected:
        raise DatasetError(f"{path}, row 1: header {header} is not the released header {expected}")
    body = rows[1:]
    if len(body) % 2:
        raise DatasetError(f"{path}: {len(body)} data rows; rows must come in pairs")
    n_cols = len(expected)
    records = []
    for lineno, row in enumerate(body, start=2):
        # the released files end each line with a tab: drop empty trailing cells
        while len(row) > n_cols and row[-1] == "":
            row = row[:-1]
        if len(row) != n_cols:
            raise DatasetError(f"{path}, row {lineno}: {len(row)} fields, expected {n_cols}")
        if not row[0].strip() or not row[1].strip():
            raise DatasetError(f"{path}, row {lineno}: empty candidate or reference")
        try:
            scores = [float(x) for x in row[2:]]
        except ValueError as exc:
            raise DatasetError(f"{path}, row {lineno}: non-numeric score ({exc})") from exc
        if not np.all(np.isfinite(scores)):
            raise DatasetError(f"{path}, row {lineno}: non-finite score")
        records.append([_unquote(row[0]), _unquote(row[1]), *scores])
    return pd.DataFrame(records, columns=expected)


@lru_cache(maxsize=None)
def _load_attribute(attribute: str) -> pd.DataFrame:
    rows = read_released(sources.path(FILES[attribute]))
    first, second = rows.iloc[0::2].reset_index(drop=True), rows.iloc[1::2].reset_index(drop=True)
    out = pd.DataFrame({
        "dataset": "published",
        "attribute": attribute,
        "pair_id": [f"{attribute}-{i:04d}" for i in range(len(first))],
        "candidate_1": first["candidate"],
        "candidate_2": second["candidate"],
        "reference_1": first["reference"],
        "reference_2": second["reference"],
        "group_1": "",  # the released files do not name the groups
        "group_2": "",
    })
    out["shared_reference"] = out["reference_1"] == out["reference_2"]
    for metric in METRICS:
        out[f"{metric}_1"] = first[metric].to_numpy()
        out[f"{metric}_2"] = second[metric].to_numpy()
    return out


def load(attributes=None) -> pd.DataFrame:
    """One row per released pair: the pair layout, ``shared_reference``, then ``<metric>_1`` and ``<metric>_2``
    scores."""
    frames = [_load_attribute(a) for a in check_attributes(attributes)]
    return pd.concat(frames, ignore_index=True)


def pairs(attributes=None) -> pd.DataFrame:
    """The pairs in the pair layout (:data:`~metricbias.datasets.schema.PAIR_COLUMNS`, then ``shared_reference``),
    without the scores."""
    return load(attributes)[[*PAIR_COLUMNS, "shared_reference"]]


def scores(attributes=None, metrics=None) -> pd.DataFrame:
    """Released scores in long form: ``attribute, pair_id, metric, score_1, score_2``."""
    wide = load(attributes)
    metrics = list(METRICS) if metrics is None else list(metrics)
    unknown = [m for m in metrics if m not in METRICS]
    if unknown:
        raise ValueError(f"unknown released metric column(s) {unknown}; known: {', '.join(METRICS)}")
    parts = [
        pd.DataFrame({
            "attribute": wide["attribute"],
            "pair_id": wide["pair_id"],
            "metric": m,
            "score_1": wide[f"{m}_1"],
            "score_2": wide[f"{m}_2"],
        })
        for m in metrics
    ]
    return pd.concat(parts, ignore_index=True)
