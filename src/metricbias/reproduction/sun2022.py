"""Sun et al. (2022), *BERTScore is Unfair*: their tables beside ours.

* Tables 6 and 9 (bias of 29 released metric configurations; gender, absolute vs
  stereotypical difference) from the transcribed CSVs, keyed by released column;
* how far our n-gram metrics reproduce the per-example scores they released
  (:func:`agreement`);
* our Table 5 (debiasing adapters, :func:`table5`) in the shape of theirs;
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

Each released row has its own reference (``reference`` for candidate 1,
``reference_2`` for candidate 2) and both are used. Texts the released TSVs
wrap in CSV quotes are scored without them (the loader removes the quoting).

``METEOR`` cannot be reproduced: their code passes ``set(tokens)`` to
``single_meteor_score``, so each score depends on the iteration order of a
Python set of strings, which changes with the interpreter's hash seed
(``PYTHONHASHSEED``) from one process to the next. Our ``meteor`` scores the
tokens in order, as METEOR is defined; :func:`agreement` reports how far that
is from the released column.

Sun et al. (2022, Sec. 2.3) compare the *paradigm* of a PLM-based metric (matching,
regression, generation), which decides how much extrinsic bias it adds, with the
*backbone* (which PLM, how large), which decides its intrinsic bias. A configuration
here is one row: ``metric`` (a released column or a live label), ``family`` (BERTScore,
MoverScore, BLEURT, ...), ``paradigm``, ``backbone`` and ``params_m`` (millions of
parameters). Released configurations come from the transcribed Table 6 (which files
FrugalScore under *Generation*); live ones from a metric suite.

The summary statistic of the comparison is :func:`metricbias.bias.decomposition.variance_explained`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import backbones, datasets
from ..bias import pairwise
from ..datasets import published
from ..datasets.published import ATTRIBUTES
from ..metrics import CONFIG_COLUMNS, get
from ..display import PAPER
from ..scoring import score_pairs
from .tables import compare, table, with_average

#: Table 9 of Sun et al. (metric, configuration) -> released score column
SUN_TABLE9_COLUMNS = {
    ("BLEU", "-"): "BLEU",
    ("ROUGE", "-"): "ROUGE",
    ("METEOR", "-"): "METEOR",
    ("NIST", "-"): "NIST",
    ("chrF", "-"): "chrF",
    ("BERTScore", "RoBERTa-large"): "BERTScore-RoBERTa-large",
    ("MoverScore", "DistilBERT"): "MoverScore-DistilBERT",
    ("BLEURT", "BERT-large"): "BLEURT-BERT-large",
    ("PRISM", "Fscore"): "PRISM-F",
    ("BARTScore", "BART-large Fscore"): "BARTScore-BART-large-F",
}


def sun_table6() -> pd.DataFrame:
    """Table 6 of Sun et al. in long form: ``metric`` (released column), ``attribute``, ``paper``."""
    wide = table("sun2022_table6_bias")
    long = wide.melt(id_vars=["published_column", "metric", "backbone", "paradigm"], value_vars=list(ATTRIBUTES) + ["avg"],
                     var_name="attribute", value_name="paper")
    long = long.rename(columns={"metric": "family", "published_column": "metric"})
    return long[["metric", "family", "backbone", "paradigm", "attribute", "paper"]]


def sun_table9() -> pd.DataFrame:
    """Table 9 of Sun et al. (gender, absolute vs stereotypical difference) with the released column."""
    t9 = table("sun2022_table9_gender_absolute_vs_stereotypical")
    t9["published_column"] = [SUN_TABLE9_COLUMNS[(m, c)] for m, c in zip(t9["metric"], t9["configuration"])]
    return t9


#: released column -> (registry name, options) that reproduce it
RELEASED_SETTINGS: dict[str, tuple[str, dict]] = {
    "BLEU": ("bleu", {}),
    "ROUGE": ("rouge1", {}),
    "METEOR": ("meteor", {}),
    "NIST": ("nist", {}),
    "chrF": ("chrf", {}),
}

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
    family = t6["metric"].str.replace(r"-(precision|recall|Fscore)$", "", regex=True)
    paradigm = t6["paradigm"].where(t6["paradigm"] != "-", "n-gram")
    return pd.DataFrame({
        "metric": t6["published_column"], "family": family, "paradigm": paradigm,
        "backbone": t6["backbone"].where(t6["backbone"] != "-", None),
        "params_m": [backbones.params_millions(p) for p in t6["parameters"]], "source": "released",
    })[CONFIG_COLUMNS]


# --- Chapter 1: Tables 3, 6 and 9 recomputed from the released scores ------------------------------
#: how close a recomputed cell must be to the printed one (the paper prints two decimals)
TOLERANCE = 0.01
#: the Table 6 rows that the released scores do not reproduce (chapter 1 explains both)
UNREPRODUCED = ("PRISM-p", "METEOR")
#: the printed PRISM-precision row repeats this row of Table 6
PRISM_P_SOURCE = "BERTScore-DistilBERT"
P = f" {PAPER}"


def recomputed_bias(*, n_resamples: int = 0, seed: int = 0) -> pd.DataFrame:
    """Eq. 2 and the stereotypical difference of the 29 released score columns on the six released datasets.

    ``n_resamples=0`` gives the point values only (no bootstrap interval).
    """
    return pairwise.bias_table(published.scores(), n_resamples=n_resamples, seed=seed)


def released_sizes() -> pd.DataFrame:
    """Pairs per released dataset beside Table 3, and how many pairs carry two different references."""
    data = published.load()
    sizes = data.groupby("attribute", sort=False).agg(
        pairs=("pair_id", "size"), two=("shared_reference", lambda shared: int((~shared).sum())))
    t3 = table("sun2022_table3_sizes").set_index("attribute")
    return pd.DataFrame({"attribute": sizes.index, "source": t3.loc[sizes.index, "source"].to_numpy(),
                         "pairs" + P: t3.loc[sizes.index, "sample_pairs"].to_numpy(),
                         "pairs": sizes["pairs"].to_numpy(), "pairs with two references": sizes["two"].to_numpy()})


def reference_repeats_candidate() -> pd.DataFrame:
    """The released pairs whose reference (either row's) is one of the two candidates: not a neutral reference."""
    data = published.load()
    hit = pd.Series(False, index=data.index)
    for ref in ("reference", "reference_2"):
        hit |= (data[ref] == data["candidate_1"]) | (data[ref] == data["candidate_2"])
    return data.loc[hit, ["attribute", "candidate_1", "candidate_2", "reference"]].reset_index(drop=True)


def table6_comparison(bias: pd.DataFrame) -> pd.DataFrame:
    """Every cell of Table 6 (six attributes and the average) beside ours, long form.

    Columns: ``metric`` (released column), ``family``, ``backbone``, ``paradigm``,
    ``attribute`` (``avg``: the paper's average over the six), ``paper``, ``ours``,
    ``difference`` (ours - paper), ``agrees`` (within :data:`TOLERANCE`).
    """
    return compare(with_average(bias), sun_table6(), tolerance=TOLERANCE)


def table6_by_metric(comparison: pd.DataFrame) -> pd.DataFrame:
    """One row per released column: the printed and recomputed averages, and how many of its cells agree."""
    cells = comparison.assign(gap=comparison["difference"].abs())
    avg = cells[cells["attribute"] == "avg"].set_index("metric")
    per = cells.groupby("metric", sort=False).agg(n=("agrees", "size"), agree=("agrees", "sum"), gap=("gap", "max"))
    return pd.DataFrame({"metric": per.index, "average" + P: avg.loc[per.index, "paper"].to_numpy(),
                         "average": avg.loc[per.index, "ours"].to_numpy(),
                         f"cells reproduced (of {per['n'].max()})": per["agree"].astype(int).to_numpy(),
                         "largest |difference|": per["gap"].to_numpy()})


def table6_disagreements(comparison: pd.DataFrame) -> pd.DataFrame:
    """The attribute cells of Table 6 that the released scores do not reproduce."""
    off = comparison[(comparison["attribute"] != "avg") & ~comparison["agrees"]]
    off = off.sort_values(["metric", "attribute"])
    return pd.DataFrame({"metric": off["metric"].to_numpy(), "attribute": off["attribute"].to_numpy(),
                         "bias" + P: off["paper"].to_numpy(), "bias": off["ours"].to_numpy(),
                         "difference": off["difference"].to_numpy()})


def prism_p_misprint(comparison: pd.DataFrame) -> pd.DataFrame:
    """Per attribute: the printed PRISM-p and BERTScore-DistilBERT rows of Table 6 and the recomputed PRISM-p."""
    cells = comparison[comparison["attribute"] != "avg"].set_index(["metric", "attribute"])
    attrs = list(ATTRIBUTES)
    return pd.DataFrame({
        "attribute": attrs,
        "PRISM-p" + P: cells.loc[[("PRISM-p", a) for a in attrs], "paper"].to_numpy(),
        PRISM_P_SOURCE + P: cells.loc[[(PRISM_P_SOURCE, a) for a in attrs], "paper"].to_numpy(),
        "PRISM-p": cells.loc[[("PRISM-p", a) for a in attrs], "ours"].to_numpy(),
    })


def generation_directions(bias: pd.DataFrame, attribute: str = "gender") -> pd.DataFrame:
    """Bias of the generation metrics' precision, recall and F columns on one attribute (Sun et al., Sec. 2.3)."""
    gen = bias[(bias["attribute"] == attribute) & bias["metric"].str.match(r"(PRISM|BARTScore)")]
    model, direction = gen["metric"].str.rsplit("-", n=1).str[0], gen["metric"].str.rsplit("-", n=1).str[1]
    grid = gen.assign(model=model, direction=direction).pivot_table(index="model", columns="direction",
                                                                     values="bias", sort=False)
    grid = grid.rename(columns={"p": "precision", "r": "recall"})[["precision", "recall", "F"]]
    return grid.reset_index()


def meteor_ratios(comparison: pd.DataFrame) -> pd.DataFrame:
    """METEOR's printed and recomputed Table 6 cells and their ratio, per attribute."""
    m = comparison[(comparison["metric"] == "METEOR") & (comparison["attribute"] != "avg")]
    return pd.DataFrame({"attribute": m["attribute"].to_numpy(), "bias" + P: m["paper"].to_numpy(),
                         "bias": m["ours"].to_numpy(), "ratio": (m["ours"] / m["paper"]).to_numpy()})


def table9_comparison(bias: pd.DataFrame) -> pd.DataFrame:
    """Table 9 (gender: absolute vs stereotypical difference) beside ours, with agreement flags."""
    t9 = sun_table9()
    g = bias[bias["attribute"] == "gender"].set_index("metric")
    ours_abs = t9["published_column"].map(g["bias"])
    ours_st = t9["published_column"].map(g["stereotypical_difference"])
    return pd.DataFrame({
        "metric": t9["metric"], "configuration": t9["configuration"].replace("-", ""),
        "absolute" + P: t9["absolute_difference"], "absolute": ours_abs,
        "stereotypical" + P: t9["stereotypical_difference"], "stereotypical": ours_st,
        "absolute agrees": (ours_abs - t9["absolute_difference"]).abs() <= TOLERANCE + 1e-9,
        "stereotypical agrees": (ours_st - t9["stereotypical_difference"]).abs() <= TOLERANCE + 1e-9,
    })


def reproduction_summary(bias: pd.DataFrame | None = None) -> dict:
    """Chapter 1's headline numbers: how much of Tables 6 and 9 the released scores reproduce, and why not the rest.

    ``bias`` is :func:`recomputed_bias` (point values suffice; computed when omitted).
    """
    bias = recomputed_bias() if bias is None else bias
    cmp6 = table6_comparison(bias)
    cells = cmp6[cmp6["attribute"] != "avg"]
    ok = cells[cells["agrees"]]
    rest = cmp6[~cmp6["metric"].isin(UNREPRODUCED)]
    printed = table("sun2022_table6_bias").set_index("published_column")[list(ATTRIBUTES)]
    ratios = meteor_ratios(cmp6)["ratio"]
    directions = generation_directions(bias).set_index("model")
    t9 = table9_comparison(bias)
    gender = bias[bias["attribute"] == "gender"]
    sizes = released_sizes()
    return {
        "attributes": len(sizes),
        "attributes_sized_as_table3": int((sizes["pairs"] == sizes["pairs" + P]).sum()),
        "metrics": int(cells["metric"].nunique()),
        "cells": len(cells),
        "cells_reproduced": len(ok),
        "largest_gap_reproduced": float(ok["difference"].abs().max()),
        "cells_not_reproduced": int((~cells["agrees"]).sum()),
        "other_metrics": int(rest["metric"].nunique()),
        "other_cells": len(rest),
        "other_cells_reproduced": int(rest["agrees"].sum()),
        "other_largest_gap": float(rest["difference"].abs().max()),
        "prism_p_cells_reproduced": int(cells.loc[cells["metric"] == "PRISM-p", "agrees"].sum()),
        "prism_p_cells_copied": int((printed.loc["PRISM-p"] == printed.loc[PRISM_P_SOURCE]).sum()),
        "prism_p_gender_printed": float(printed.loc["PRISM-p", "gender"]),
        "prism_gender_precision": float(directions.loc["PRISM", "precision"]),
        "prism_gender_recall": float(directions.loc["PRISM", "recall"]),
        "prism_gender_f": float(directions.loc["PRISM", "F"]),
        "meteor_cells_reproduced": int(cells.loc[cells["metric"] == "METEOR", "agrees"].sum()),
        "meteor_ratio_min": float(ratios.min()),
        "meteor_ratio_max": float(ratios.max()),
        "table9_rows": len(t9),
        "table9_stereotypical_reproduced": int(t9["stereotypical agrees"].sum()),
        "table9_absolute_reproduced": int(t9["absolute agrees"].sum()),
        "gender_positive_stereotypical": int((gender["stereotypical_difference"] > 0).sum()),
        "gender_metrics": len(gender),
        "pairs_min": int(bias["n_pairs"].min()),
        "pairs_max": int(bias["n_pairs"].max()),
    }


# --- Table 5: debiasing adapters (chapter 6) -------------------------------------------------------
#: the bias row of Table 5 in each bias dataset
GENDER = {"published": "gender", "built": "gender"}


def table5(results: dict) -> pd.DataFrame:
    """Our Table 5: per metric, the original and ``+ adapter`` rows of gender bias and quality.

    ``results`` maps a metric label (``"BERTScore"``) to ``(backbone, compare table)``.
    Each adapter row's cells read ``value (relative change)``.
    """
    rows = []
    for label, (backbone, table) in results.items():
        keyed = {}
        for r in table.to_dict("records"):
            if r["kind"] == "bias" and r["name"] == GENDER.get(r["dataset"]):
                keyed[f"gender bias ({r['dataset']})"] = r
            elif r["kind"] == "quality":
                keyed[r["dataset"]] = r
        for variant in ("original", "+ adapter"):
            row = {"metric": label, "backbone": backbone, "variant": variant}
            for col, r in keyed.items():
                if variant == "original":
                    row[col] = f"{r['before']:.4g}" if r["kind"] == "quality" else f"{r['before']:.2f}"
                else:
                    v = f"{r['after']:.4g}" if r["kind"] == "quality" else f"{r['after']:.2f}"
                    row[col] = f"{v} ({r['relative_change']:+.1%})"
            rows.append(row)
    return pd.DataFrame(rows)
