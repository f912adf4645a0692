"""A researcher's own candidate pairs, from a JSONL, CSV or TSV file or a pandas DataFrame, in the pair layout.

One pair per row (per line of a JSONL file), with the fields

``attribute``
    the sensitive attribute the pair probes (``gender``, ``age``, ...);
``candidate_1``
    the stereotypical (or group-1) candidate;
``candidate_2``
    the other candidate;
``reference``
    the reference both candidates are scored against;

and optionally ``id`` (unique within its attribute; default: the row's number) and ``cluster`` (a template or
source id: pairs made from one template share it, and resampling draws whole clusters). Every text must be
non-empty. A bad row is one error naming the file, the line and the field, like the meta-evaluation loader's.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pandas as pd

from .meta_eval import _jsonl_objects
from .published import DatasetError
from .schema import conform

#: the fields every row must have, and those it may have
FIELDS = ("attribute", "candidate_1", "candidate_2", "reference")
OPTIONAL = ("id", "cluster")
#: file formats by extension
FORMATS = {".jsonl": "jsonl", ".json": "jsonl", ".csv": "csv", ".tsv": "tsv", ".txt": "tsv"}


def _csv_rows(path: Path, delimiter: str):
    """``(where, row)`` of a CSV or TSV file with a header line; errors name the file and line."""
    try:
        with open(path, encoding="utf-8-sig", newline="") as fh:
            reader = csv.DictReader(fh, delimiter=delimiter)
            header = reader.fieldnames or []
            missing = [f for f in FIELDS if f not in header]
            if missing:
                raise DatasetError(f"{path}, line 1: missing column(s) {missing}; the columns are "
                                   f"{', '.join(FIELDS)} (optional: {', '.join(OPTIONAL)})")
            for row in reader:
                if None in row:  # more cells than the header has
                    raise DatasetError(f"{path}, line {reader.line_num}: {len(header) + len(row[None])} cells, "
                                       f"the header has {len(header)}")
                yield f"{path}, line {reader.line_num}", row
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{path}: not UTF-8 text ({exc.reason}); save the file as UTF-8") from None


def _frame_rows(frame: pd.DataFrame):
    missing = [f for f in FIELDS if f not in frame.columns]
    if missing:
        raise DatasetError(f"pairs table: missing column(s) {missing}; the columns are {', '.join(FIELDS)} "
                           f"(optional: {', '.join(OPTIONAL)})")
    for i, row in enumerate(frame.to_dict("records")):
        yield f"pairs table, row {i}", row


def _rows(source):
    if isinstance(source, pd.DataFrame):
        return "pairs table", _frame_rows(source)
    path = Path(source)
    if not path.is_file():
        raise DatasetError(f"{path}: no such file" if not path.exists() else f"{path}: not a file")
    kind = FORMATS.get(path.suffix.lower())
    if kind is None:
        raise DatasetError(f"{path}: unknown pairs format {path.suffix or '(no extension)'!r}; use .jsonl, .csv or .tsv")
    if kind == "jsonl":
        return str(path), _jsonl_objects(path)
    return str(path), _csv_rows(path, "," if kind == "csv" else "\t")


def _text(row: dict, field: str, where: str) -> str:
    if field not in row:
        raise DatasetError(f"{where}: missing field {field!r}")
    value = row[field]
    if not isinstance(value, str) or not value.strip():
        raise DatasetError(f"{where}: field {field!r} must be non-empty text, found {value!r}")
    return value


def _optional(row: dict, field: str, where: str) -> str:
    value = row.get(field)
    if value is None or (isinstance(value, float) and value != value) or value == "":
        return ""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise DatasetError(f"{where}: field {field!r} must be text or a whole number, found {value!r}")
    return str(value)


def load_pairs(source) -> pd.DataFrame:
    """A user's pairs (a ``.jsonl``, ``.csv`` or ``.tsv`` path, or a DataFrame with the fields of the module
    docstring) in the pair layout: dataset ``pairs``, the reference on both sides, then ``cluster``."""
    what, rows = _rows(source)
    out, wheres = [], []
    for n, (where, row) in enumerate(rows, start=1):
        texts = {f: _text(row, f, where) for f in FIELDS}
        pair_id = _optional(row, "id", where) or str(n)
        out.append({"attribute": texts["attribute"].strip(), "pair_id": pair_id,
                    "candidate_1": texts["candidate_1"], "candidate_2": texts["candidate_2"],
                    "reference_1": texts["reference"], "reference_2": texts["reference"],
                    "cluster": _optional(row, "cluster", where) or pair_id})
        wheres.append(where)
    if not out:
        raise DatasetError(f"{what}: no pairs (the file is empty)")
    frame = pd.DataFrame(out)
    dup = frame.duplicated(["attribute", "pair_id"]).to_numpy().nonzero()[0]
    if len(dup):
        row = frame.iloc[dup[0]]
        raise DatasetError(f"{wheres[dup[0]]}: id {row['pair_id']!r} occurs twice in attribute {row['attribute']!r}")
    return conform(frame.assign(dataset="pairs"), what)


__all__ = ["FIELDS", "OPTIONAL", "load_pairs"]
