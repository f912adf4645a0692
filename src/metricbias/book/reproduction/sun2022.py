"""Sun et al. (2022), *BERTScore is Unfair*: their tables beside ours.

* Tables 6 and 9 (bias of 29 released metric configurations; gender, absolute vs
  stereotypical difference) from the transcribed CSVs, keyed by released column;
* how far our n-gram metrics reproduce the per-example scores they released
  (:func:`agreement`);
* the paradigm / backbone axes of their Figure 4 for the released configurations
  (:func:`released_configs`; live ones: :func:`metricbias.metrics.configurations`).

The released files (:mod:`metricbias.datasets.published`) carry five n-gram
columns. Their code (``measuring_bias/metrics/metrics.py`` in the authors'
repository) computes them with nltk and rouge-score on whitespace tokens; our
defaults reproduce four of them to the printed precision (1e-9) on every row:

* ``BLEU``: sentence BLEU-4, nltk ``SmoothingFunction().method1`` = our
  ``bleu`` (sacreBLEU, ``tokenize="none"``, ``smooth_method="floor"``, 0.1);
* ``ROUGE``: rouge-score ROUGE-1 F with the Porter stemmer = our ``rouge1``;
* ``NIST``: nltk ``sentence_nist`` with ``n=2`` = our ``nist``. Their code
  calls it with the default ``n=5``, but only ``n=2`` reproduces the column,
  including its two rows whose candidate is shorter than 5 tokens, where
  ``n=5`` divides by zero (the error the replication hit);
* ``chrF``: nltk ``sentence_chrf`` (mean over orders 1-6 of F_3) = our ``chrf``.

Each released row has its own reference (``reference_1`` for candidate 1,
``reference_2`` for candidate 2) and both are used. Texts the released TSVs
wrap in CSV quotes are scored without them (the loader removes the quoting).

``METEOR`` cannot be reproduced: their code passes ``set(tokens)`` to
``single_meteor_score``, so each score depends on the iteration order of a
Python set of strings, which changes with the interpreter's hash seed
(``PYTHONHASHSEED``) from one process to the next. Our ``meteor`` scores the
tokens in order, as METEOR is defined; :func:`agreement` reports how far that
is from the released column.

The chapters' comparisons with the paper are in their own modules: :mod:`.ch1_published` (Tables 3, 6, 9),
:mod:`.ch2_datasets`, :mod:`.ch3_paradigms`, :mod:`.ch3_figure3`, :mod:`.ch3_paradigm_claim`,
:mod:`.ch3_quality` and :mod:`.ch6_table5`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ... import backbones, datasets
from ...bias import pairwise
from ...datasets import published
from ...datasets.published import ATTRIBUTES
from ...metrics import CONFIG_COLUMNS, get, metric_class
from ...scoring import score_pairs
from .names import registry_name
from .tables import table


def sun_table6() -> pd.DataFrame:
    """Table 6 of Sun et al. in long form: ``metric`` (released column), ``attribute``, ``paper``."""
    wide = table("sun2022_table6_bias")
    long = wide.melt(id_vars=["published_column", "metric", "backbone", "paradigm"], value_vars=list(ATTRIBUTES) + ["avg"],
                     var_name="attribute", value_name="paper")
    long = long.rename(columns={"metric": "family", "published_column": "metric"})
    return long[["metric", "family", "backbone", "paradigm", "attribute", "paper"]]


#: the variant suffix of a Table 6 metric ("PRISM-Fscore"): the metric family is what precedes it
VARIANT = r"-(precision|recall|Fscore)$"


def released_column(metric: str, configuration: str, t6: pd.DataFrame | None = None) -> str:
    """The released score column of a row of Sun et al.'s Table 9, found in Table 6 (``t6``) by its metric, and by
    the backbone and variant its configuration names ("RoBERTa-large", "Fscore", "BART-large Fscore"; "-": none)."""
    t6 = table("sun2022_table6_bias") if t6 is None else t6
    family = t6["metric"].str.replace(VARIANT, "", regex=True)
    words = configuration.split() if configuration != "-" else []
    match = family == metric
    for word in words:
        match &= (t6["backbone"] == word) | (t6["metric"] == f"{metric}-{word}")
    found = t6.loc[match, "published_column"]
    if len(found) != 1:
        raise ValueError(f"Sun et al.'s Table 9 row {metric} / {configuration} matches {len(found)} rows of Table 6")
    return str(found.iloc[0])


def sun_table9() -> pd.DataFrame:
    """Table 9 of Sun et al. (gender, absolute vs stereotypical difference) with the released column."""
    t9 = table("sun2022_table9_gender_absolute_vs_stereotypical")
    t6 = table("sun2022_table6_bias")
    t9["published_column"] = [released_column(m, c, t6) for m, c in zip(t9["metric"], t9["configuration"])]
    return t9


#: the released n-gram score columns
RELEASED_NGRAM_COLUMNS = ("BLEU", "ROUGE", "METEOR", "NIST", "chrF")
#: released column -> (registry name, options) that reproduce it: our defaults (see the module docstring)
RELEASED_SETTINGS: dict[str, tuple[str, dict]] = {column: (registry_name(column), {})
                                                  for column in RELEASED_NGRAM_COLUMNS}

#: released column -> our metric's label (from its card), for the five released n-gram columns
RELEASED_LABELS = {column: metric_class(name).label_for(options) for column, (name, options) in RELEASED_SETTINGS.items()}

AGREEMENT_COLUMNS = ["column", "attribute", "n_rows", "pearson_r", "max_abs_diff", "bias_ours", "bias_released",
                     "bias_diff", "signature"]


def _settings(columns, settings) -> dict[str, tuple[str, dict]]:
    chosen = {**RELEASED_SETTINGS, **(settings or {})}
    columns = list(chosen) if columns is None else list(columns)
    unknown = [c for c in columns if c not in chosen]
    if unknown:
        raise ValueError(f"no metric settings for released column(s) {unknown}; known: {', '.join(chosen)}")
    return {c: chosen[c] for c in columns}


def live_scores(columns=None, attributes=None, settings=None, cache=None) -> pd.DataFrame:
    """Our scores of the released pairs beside the released ones, one row per (column, pair).

    ``settings`` maps a released column to ``(metric name, options)`` to try
    other settings (e.g. ``{"NIST": ("nist", {"n": 5})}``). Columns:
    ``column, attribute, pair_id, signature, ours_1, ours_2, released_1, released_2``.
    """
    released = published.load(attributes)
    pairs = datasets.load("published", attributes)
    frames = []
    for column, (name, options) in _settings(columns, settings).items():
        ours = score_pairs(pairs, get(name, **options), cache=cache, label=column)
        frames.append(pd.DataFrame({
            "column": column, "attribute": ours["attribute"], "pair_id": ours["pair_id"],
            "signature": ours["signature"], "ours_1": ours["score_1"], "ours_2": ours["score_2"],
            "released_1": released[f"{column}_1"].to_numpy(), "released_2": released[f"{column}_2"].to_numpy(),
        }))
    return pd.concat(frames, ignore_index=True)


def _row(column, attribute, group: pd.DataFrame, bias_ours: float, bias_released: float) -> dict:
    ours = np.concatenate([group["ours_1"], group["ours_2"]])
    released = np.concatenate([group["released_1"], group["released_2"]])
    return {"column": column, "attribute": attribute, "n_rows": ours.size,
            "pearson_r": float(np.corrcoef(ours, released)[0, 1]),
            "max_abs_diff": float(np.max(np.abs(ours - released))),
            "bias_ours": bias_ours, "bias_released": bias_released, "bias_diff": bias_ours - bias_released,
            "signature": group["signature"].iloc[0]}


def agreement(columns=None, attributes=None, settings=None, cache=None) -> pd.DataFrame:
    """Pearson r between our scores and the released column, and Eq. 2 bias from each, per attribute.

    One row per (released column, attribute) over the 2N scored rows of that
    attribute, plus an ``all`` row per column: Pearson r and the largest
    absolute difference over every row, and the *mean* of the per-attribute
    biases (Eq. 1 rescales within an attribute, so a pooled bias is not defined).
    """
    scores = live_scores(columns, attributes, settings, cache)
    rows = []
    for column, frame in scores.groupby("column", sort=False):
        per_attribute = []
        for attribute, group in frame.groupby("attribute", sort=False):
            ours = pairwise.absolute_bias(group["ours_1"], group["ours_2"], metric=column, attribute=attribute)
            theirs = pairwise.absolute_bias(group["released_1"], group["released_2"], metric=column,
                                            attribute=attribute)
            per_attribute.append(_row(column, attribute, group, ours, theirs))
        rows.extend(per_attribute)
        rows.append(_row(column, "all", frame, float(np.mean([r["bias_ours"] for r in per_attribute])),
                         float(np.mean([r["bias_released"] for r in per_attribute]))))
    return pd.DataFrame(rows, columns=AGREEMENT_COLUMNS)


def released_configs() -> pd.DataFrame:
    """The 29 released columns with family, paradigm, backbone and size (n-gram metrics: paradigm ``n-gram``)."""
    t6 = table("sun2022_table6_bias")
    family = t6["metric"].str.replace(VARIANT, "", regex=True)
    paradigm = t6["paradigm"].where(t6["paradigm"] != "-", "n-gram")
    return pd.DataFrame({
        "metric": t6["published_column"], "family": family, "paradigm": paradigm,
        "backbone": t6["backbone"].where(t6["backbone"] != "-", None),
        "params_m": [backbones.params_millions(p) for p in t6["parameters"]], "source": "released",
    })[CONFIG_COLUMNS]
