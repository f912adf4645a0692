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

Their paradigms run on different backbones (BERT for matching and regression, BART and
PRISM's Transformer for generation), so paradigm and backbone are confounded.
:func:`paradigm_claim` puts two readings of "the paradigm has a greater impact on fairness
than the PLM" side by side:

* **released**: the share of the variance of Table 6's average bias (PLM-based metrics)
  explained by grouping the configurations by paradigm, and by backbone (eta squared);
  the groupings overlap, so the two shares need not add up to one;
* **backbone fixed**: the two-way decomposition of :func:`metricbias.bias.decomposition.decompose`
  on the 2 x 3 grid of :mod:`metricbias.metrics.backbone_grid`, where every paradigm runs on
  the same frozen encoder weights; the shares add up to one with the interaction.

The claim *holds* for a row when the paradigm's share exceeds the backbone's.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import backbones, datasets
from ..bias import pairwise
from ..datasets import published
from ..datasets.published import ATTRIBUTES
from ..datasets.summary import long_texts
from ..metrics import CONFIG_COLUMNS, configurations, get
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
    """The released pairs whose reference (either row's) is one of the two candidates: not a neutral reference.
    Long form (:func:`metricbias.datasets.summary.long_texts`): both candidates and the reference of each pair."""
    data = published.load()
    hit = pd.Series(False, index=data.index)
    for ref in ("reference", "reference_2"):
        hit |= (data[ref] == data["candidate_1"]) | (data[ref] == data["candidate_2"])
    return long_texts(data[hit], {"candidate_1": "candidate 1", "candidate_2": "candidate 2", "reference": "reference"},
                      keys=("attribute", "pair_id"))


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


def stereotypical_intervals(attribute: str = "gender", *, n_resamples: int = 9999, seed: int = 0) -> pd.DataFrame:
    """The stereotypical difference (App. E) of every released column on ``attribute`` with its 95% BCa bootstrap
    interval over pairs (the rescaling held fixed), and whether the interval excludes 0: ``metric, n_pairs,
    stereotypical_difference, ci_low, ci_high, excludes_zero``."""
    from ..bias.significance import pair_terms

    scores = published.scores()
    rows = []
    for metric, g in scores[scores["attribute"] == attribute].groupby("metric", sort=False):
        terms = pair_terms(g["score_1"], g["score_2"], signed=True, metric=metric, attribute=attribute)
        low, high = pairwise.bootstrap_ci(terms, n_resamples=n_resamples, seed=seed)
        rows.append({"metric": metric, "n_pairs": len(terms), "stereotypical_difference": float(np.mean(terms)),
                     "ci_low": low, "ci_high": high, "excludes_zero": bool(low > 0 or high < 0)})
    return pd.DataFrame(rows)


#: the generation models whose precision, recall and F columns were released
GENERATION_MODELS = ("PRISM", "BARTScore-BART-base", "BARTScore-BART-large")


def pair_term_table(scores: pd.DataFrame, attribute: str) -> pd.DataFrame:
    """The per-pair Eq. 2 terms |Ŝ_1 − Ŝ_2| of every metric of a long score table on ``attribute``: one column per
    metric (each rescaled by its own Eq. 1), one row per pair (``pair_id``); metrics with constant scores (Eq. 1
    undefined) are left out. The paired comparisons of chapters 1, 3 and 4 take their values from here."""
    import warnings

    from ..bias.pairwise import ConstantScoresWarning
    from ..bias.significance import pair_terms

    terms = {}
    for metric, g in scores[scores["attribute"] == attribute].groupby("metric", sort=False):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConstantScoresWarning)  # the bias tables already warn about these
            t = pair_terms(g["score_1"], g["score_2"], metric=metric, attribute=attribute)
        if not np.isnan(t).any():
            terms[metric] = pd.Series(t, index=g["pair_id"].to_numpy())
    return pd.DataFrame(terms)


def direction_tests(attribute: str = "gender", *, n_resamples: int = 9999, seed: int = 0) -> pd.DataFrame:
    """Is precision the most biased direction of each generation model, with F between recall and precision?
    Per model, the paired differences of the per-pair Eq. 2 terms, precision − F and F − recall, on the same
    released pairs, with their 95% bootstrap intervals and verdicts (:func:`metricbias.bias.claims.compare`)."""
    from ..bias import claims

    terms = pair_term_table(published.scores(), attribute)
    rows = []
    for model in GENERATION_MODELS:
        for (a, b), label in {("p", "F"): "precision − F", ("F", "r"): "F − recall"}.items():
            x, y = terms[f"{model}-{a}"], terms[f"{model}-{b}"]
            c = claims.compare(x.to_numpy(), y.to_numpy(), paired=True, n_resamples=n_resamples, seed=seed)
            rows.append({"model": model, "comparison": label, "difference": c["difference"], "ci_low": c["ci_low"],
                         "ci_high": c["ci_high"], "verdict": c["verdict"]})
    return pd.DataFrame(rows)


def direction_sentence(tests: pd.DataFrame, model: str = "PRISM") -> str:
    """How the ordering precision > F > recall of ``model`` stands under the paired intervals of
    :func:`direction_tests` (Markdown, no math)."""
    from ..bias.claims import interval_text

    rows = tests[tests["model"] == model].assign(confidence=0.95).to_dict("records")
    parts = [f"{r['comparison']} {interval_text(r)}" for r in rows]
    held = all(r["verdict"] == "higher" for r in rows)
    others = tests[tests["model"] != model]
    held_others = [m for m, g in others.groupby("model", sort=False) if (g["verdict"] == "higher").all()]
    return (f"Paired over the same pairs, in points of Eq. 2: {'; '.join(parts)}. "
            + ("Both intervals lie above zero, so the ordering holds beyond sampling noise. " if held else
               "Not both intervals lie above zero, so the ordering is not established at this size. ")
            + f"The same ordering holds with both intervals above zero for {len(held_others)} of the "
              f"{others['model'].nunique()} BARTScore models"
            + (f" ({', '.join(held_others)})." if held_others else "."))


def stereotypical_summary(intervals: pd.DataFrame) -> dict:
    """From :func:`stereotypical_intervals`: how many columns have a positive point value, how many intervals lie
    above or below 0, and the columns whose interval reaches 0 (``reaches_zero_names``, or "none")."""
    reach = intervals[~intervals["excludes_zero"]]
    return {"positive": int((intervals["stereotypical_difference"] > 0).sum()), "columns": len(intervals),
            "above_zero": int((intervals["ci_low"] > 0).sum()), "below_zero": int((intervals["ci_high"] < 0).sum()),
            "reaches_zero": len(reach), "reaches_zero_names": ", ".join(reach["metric"]) or "none"}


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


# --- Chapter 2: the built datasets beside the released ones -----------------------------------------
#: released column -> registry name of the n-gram metrics chapter 2 scores both references with
REFERENCE_METRICS = {"BLEU": "bleu", "ROUGE": "rouge1", "chrF": "chrf"}


def released_attributes(attributes=None) -> list[str]:
    """The released attributes among ``attributes`` (a list, a comma-separated string, or None for all), in the
    paper's order; all six when the selection names none of them (a new attribute only), so that the comparisons
    with the paper keep their reference point."""
    if isinstance(attributes, str):
        attributes = [a.strip() for a in attributes.split(",") if a.strip()]
    chosen = [a for a in ATTRIBUTES if attributes is None or a in attributes]
    return chosen or list(ATTRIBUTES)


def built_sizes(summary: pd.DataFrame) -> pd.DataFrame:
    """Per built attribute (``built.build()``'s summary): pairs and exclusions beside Table 3 and the release."""
    released = published.pairs().groupby("attribute").size()
    t3 = table("sun2022_table3_sizes").set_index("attribute")["sample_pairs"]
    attrs = summary["attribute"]
    return pd.DataFrame({"attribute": attrs, "source": summary["source"], "pairs": summary["pairs"],
                         "excluded": summary["excluded"],
                         "pairs" + P: attrs.map(t3).astype("Int64"), "released pairs": attrs.map(released).astype("Int64")})


def crows_subset(sizes: pd.DataFrame, attribute: str = "race") -> dict:
    """How the built CrowS-Pairs attributes compare with Table 3: the attribute's released pairs and its source
    pairs (built plus excluded), and which attributes we build more / fewer pairs of than the paper kept."""
    crows = sizes[(sizes["source"] == "crows_pairs") & sizes["pairs" + P].notna()].set_index("attribute")
    row = crows.loc[attribute] if attribute in crows.index else None
    return {"attribute": attribute,
            "released": int(row["released pairs"]) if row is not None else float("nan"),
            "source_pairs": int(row["pairs"] + row["excluded"]) if row is not None else float("nan"),
            "larger": ", ".join(crows.index[crows["pairs"] > crows["pairs" + P]]) or "none",
            "smaller": ", ".join(crows.index[crows["pairs"] < crows["pairs" + P]]) or "none"}


def released_match(match: pd.DataFrame, attributes=ATTRIBUTES) -> pd.DataFrame:
    """Per released attribute: how its pairs fared in the build (``built.match_published()``) and, for the built
    ones, how often the two references agree exactly or up to case and punctuation, and how far apart they are."""
    status = match.groupby(["attribute", "status"]).size().unstack(fill_value=0)
    status = status.reindex(columns=["built", "excluded", "not_in_source"], fill_value=0)
    built = match[match["status"] == "built"].groupby("attribute").agg(
        exact=("exact", "mean"), normalized=("same_normalized", "mean"),
        distance=("token_edit_distance", lambda d: float(d.astype(float).mean())))
    out = status.join(built).reindex([a for a in attributes if a in status.index])
    return pd.DataFrame({"attribute": out.index, "built": out["built"].to_numpy(),
                         "excluded": out["excluded"].to_numpy(), "not in source": out["not_in_source"].to_numpy(),
                         "same reference": out["exact"].to_numpy(),
                         "same up to case and punctuation": out["normalized"].to_numpy(),
                         "token edit distance (mean)": out["distance"].to_numpy()})


def gender_references(match: pd.DataFrame) -> dict:
    """How many released gender references the build reproduces byte for byte, and up to case and punctuation;
    how many it does not build, and how many differ only in case or in a possessive 's."""
    g = match[match["attribute"] == "gender"]
    n = len(g)
    return {"released": n, "exact": int(g["exact"].sum()), "exact_rate": float(g["exact"].mean()) if n else float("nan"),
            "normalized": int(g["same_normalized"].sum()),
            "normalized_rate": float(g["same_normalized"].mean()) if n else float("nan"),
            "not_built": int((g["status"] != "built").sum()),
            **{kind: int((g["difference"] == kind).sum()) for kind in ("case", "possessive")}}


def reference_differences(match: pd.DataFrame, attribute: str = "gender") -> pd.DataFrame:
    """Released references of one attribute that differ from ours, by how (``not built: <reason>`` when excluded)."""
    g = match[(match["attribute"] == attribute) & ~match["exact"]]
    how = g["difference"].where(g["status"] == "built", "not built: " + g["reason"])
    return how.value_counts().sort_index().rename_axis("difference").rename("pairs").reset_index()


def reference_difference_examples(match: pd.DataFrame, attribute: str = "gender", per_kind: int = 2) -> pd.DataFrame:
    """The first ``per_kind`` built pairs of each kind of reference difference: our reference and the released one."""
    g = match[(match["attribute"] == attribute) & ~match["exact"] & (match["status"] == "built")]
    g = g.groupby("difference").head(per_kind)
    return pd.DataFrame({"difference": g["difference"].to_numpy(), "built reference": g["reference"].to_numpy(),
                         "released reference": g["published_reference"].to_numpy()})


def edit_distances(match: pd.DataFrame, cap: int = 6) -> pd.DataFrame:
    """Built CrowS-Pairs pairs per attribute and token edit distance between the references (``cap`` = cap or more)."""
    crows = match[(match["attribute"] != "gender") & (match["status"] == "built")]
    distance = crows["token_edit_distance"].astype(int).clip(upper=cap)
    counts = crows.assign(distance=distance).groupby(["attribute", "distance"], sort=False).size()
    return counts.rename("pairs").reset_index()


def difference_kinds(match: pd.DataFrame) -> pd.DataFrame:
    """Built CrowS-Pairs pairs per attribute (rows) and kind of reference difference (columns)."""
    crows = match[(match["attribute"] != "gender") & (match["status"] == "built")]
    return crows.groupby(["attribute", "difference"]).size().unstack(fill_value=0).rename_axis(columns=None
                                                                                               ).reset_index()


def wording_examples(match: pd.DataFrame, per_attribute: int = 3, seed: int = 0) -> pd.DataFrame:
    """Random CrowS-Pairs pairs whose references differ in wording: the candidate, our reference and the released."""
    crows = match[(match["attribute"] != "gender") & (match["status"] == "built") & (match["difference"] == "wording")]
    picked = crows.sample(frac=1, random_state=seed).groupby("attribute").head(per_attribute)
    return long_texts(picked, {"candidate_1": "candidate 1", "reference": "built reference",
                               "published_reference": "released reference"}, keys=("attribute",))


def not_in_source(match: pd.DataFrame) -> pd.DataFrame:
    """Released pairs that no raw pair has (the release edited the source sentence)."""
    return match.loc[match["status"] == "not_in_source", ["attribute", "candidate_1", "candidate_2"]
                     ].reset_index(drop=True)


def released_exclusions(match: pd.DataFrame) -> pd.DataFrame:
    """Released pairs that the rules exclude, per reason (rows) and attribute (columns)."""
    ex = match[match["status"] == "excluded"]
    return ex.groupby(["reason", "attribute"]).size().unstack(fill_value=0).rename_axis(columns=None).reset_index()


def reference_bias(attributes=None, *, n_resamples: int = 9999, seed: int = 0, cache=True) -> pd.DataFrame:
    """Bias (Eq. 2) of BLEU, ROUGE-1 and chrF on the released pairs that chapter 2 also builds, three ways.

    ``dataset`` is ``built`` (both candidates against the built reference), ``released`` (each candidate
    against its own released reference, scored here) or ``released scores`` (the released score columns of
    the same pairs). Eq. 1 rescales over these shared pairs, so the values are not Table 6's.
    ``metric`` is the released column's name (BLEU, ROUGE, chrF).
    """
    from ..scoring import score_metrics

    names = {v: k for k, v in REFERENCE_METRICS.items()}
    shared = score_metrics(datasets.load("matched", released_attributes(attributes)), list(names), cache=cache,
                           progress=False)
    parts = [pairwise.bias_table(part, n_resamples=n_resamples, seed=seed).assign(dataset=dataset)
             for dataset, part in shared.groupby("dataset")]
    ids = shared.loc[shared["dataset"] == "released", ["attribute", "pair_id"]].drop_duplicates()
    columns = published.scores(sorted(ids["attribute"].unique()), list(REFERENCE_METRICS))
    columns = columns[columns["pair_id"].isin(ids["pair_id"])]
    parts.append(pairwise.bias_table(columns, n_resamples=n_resamples, seed=seed).assign(dataset="released scores"))
    out = pd.concat(parts, ignore_index=True)
    out["metric"] = out["metric"].replace(names)
    return out[["dataset", *pairwise.BIAS_COLUMNS]]


#: chapter 2's equivalence margin, fixed before the comparison: built and released references "measure the same
#: bias" when the paired difference of Eq. 2 is shown to lie within ±1 point (of 100)
REFERENCE_MARGIN = 1.0


def reference_bias_tests(attributes=None, *, margin: float = REFERENCE_MARGIN, n_resamples: int = 9999,
                         seed: int = 0, cache=True) -> pd.DataFrame:
    """Built against released references, per (metric, attribute) of :func:`reference_bias`: the per-pair Eq. 2
    terms of the same pairs (each version rescaled by its own Eq. 1), their paired difference built − released with
    its 95% bootstrap interval, and two one-sided tests against ``margin`` (:func:`metricbias.bias.claims.compare`).
    Columns: ``metric, attribute, pairs, difference, ci_low, ci_high, tost_low, tost_high, margin, equivalent,
    verdict``."""
    from ..bias import claims
    from ..bias.significance import pair_terms
    from ..scoring import score_metrics

    names = {v: k for k, v in REFERENCE_METRICS.items()}
    shared = score_metrics(datasets.load("matched", released_attributes(attributes)), list(names), cache=cache,
                           progress=False)
    rows = []
    for (metric, attribute), g in shared.groupby(["metric", "attribute"], sort=False):
        built = g[g["dataset"] == "built"].set_index("pair_id")
        released = g[g["dataset"] == "released"].set_index("pair_id").loc[built.index]
        label = names.get(metric, metric)
        tb, tr = (pair_terms(d["score_1"], d["score_2"], metric=label, attribute=attribute) for d in (built, released))
        if np.isnan(tb).any() or np.isnan(tr).any():  # constant scores: Eq. 1 undefined
            c = {"difference": np.nan, "ci_low": np.nan, "ci_high": np.nan, "tost_low": np.nan, "tost_high": np.nan,
                 "margin": margin, "verdict": "undefined (constant scores)"}
        else:
            c = claims.compare(tb, tr, paired=True, margin=margin, n_resamples=n_resamples, seed=seed)
        rows.append({"metric": label, "attribute": attribute, "pairs": len(built),
                     **{k: c.get(k, False) for k in ("difference", "ci_low", "ci_high", "tost_low", "tost_high",
                                                     "margin", "equivalent", "verdict")}})
    return pd.DataFrame(rows)


def reference_bias_table(by_dataset: pd.DataFrame, tests: pd.DataFrame) -> pd.DataFrame:
    """:func:`reference_bias` side by side per (metric, attribute): built and released bias, their paired difference
    with its 95% interval and the verdict of :func:`reference_bias_tests`, and the bias of the released score
    columns."""
    wide = by_dataset.pivot_table(index=["metric", "attribute"], columns="dataset",
                                  values=["bias", "n_pairs"], sort=False)
    b, r = wide.xs("built", axis=1, level=1), wide.xs("released", axis=1, level=1)
    out = pd.DataFrame({"metric": wide.index.get_level_values(0), "attribute": wide.index.get_level_values(1),
                        "pairs": b["n_pairs"].astype(int).to_numpy(), "built": b["bias"].to_numpy(),
                        "released": r["bias"].to_numpy(), "built − released": (b["bias"] - r["bias"]).to_numpy(),
                        "released scores": wide[("bias", "released scores")].to_numpy()})
    t = tests.rename(columns={"ci_low": "CI low", "ci_high": "CI high"})[["metric", "attribute", "CI low",
                                                                         "CI high", "verdict"]]
    out = out.merge(t, on=["metric", "attribute"], how="left")
    return out[["metric", "attribute", "pairs", "built", "released", "built − released", "CI low", "CI high",
                "verdict", "released scores"]]


def reference_bias_summary(by_dataset: pd.DataFrame, tests: pd.DataFrame) -> dict:
    """Does the choice of reference change the measured bias? Numbers of :func:`reference_bias_table`: cells shown
    the same within the margin (``same``), shown to differ (``differ``), and neither (``undecided``)."""
    from ..bias.claims import UNDECIDED

    cmp = reference_bias_table(by_dataset, tests)
    k = int(cmp["built − released"].abs().idxmax())
    verdict = cmp["verdict"].fillna("")
    return {"cells": len(cmp), "margin": float(tests["margin"].iloc[0]) if len(tests) else REFERENCE_MARGIN,
            "same": int(verdict.str.startswith("same within").sum()),
            "differ": int(verdict.isin(["higher", "lower"]).sum()), "undecided": int((verdict == UNDECIDED).sum()),
            "differ_within_margin": int((tests["verdict"].isin(["higher", "lower"])
                                         & tests.get("equivalent", pd.Series(False, index=tests.index)).astype(bool)
                                         ).sum()),
            "differ_cells": ", ".join(f"{m} on {a}" for m, a in cmp.loc[verdict.isin(["higher", "lower"]),
                                                                         ["metric", "attribute"]].to_numpy()) or "none",
            "scores_reproduced_within": float((cmp["released"] - cmp["released scores"]).abs().max()),
            "largest_difference": float(abs(cmp.loc[k, "built − released"])),
            "largest_difference_cell": f"{cmp.loc[k, 'metric']} on {cmp.loc[k, 'attribute']}"}


def reference_bias_verdict(summary: dict) -> str:
    """One sentence on :func:`reference_bias_summary`: where rule-built references are shown to measure the same
    bias as the released ones (within the margin), where they differ, and where the data cannot tell."""
    margin = f"±{summary['margin']:g} point{'s' if summary['margin'] != 1 else ''} of Eq. 2"
    text = (f"With an equivalence margin of {margin}, fixed before the comparison, the two references measure the "
            f"same bias (two one-sided tests: the 90% interval of the paired difference inside the margin) in "
            f"{summary['same']} of {summary['cells']} cells. ")
    if summary["differ"]:
        text += (f"They differ (the 95% interval of the paired difference excludes zero) in {summary['differ']}: "
                 f"{summary['differ_cells']}"
                 + (f"; in {summary['differ_within_margin']} of these the difference is still shown to be smaller "
                    "than the margin" if summary.get("differ_within_margin") else "") + ". ")
    else:
        text += "In no cell does the 95% interval of the paired difference exclude zero. "
    if summary["undecided"]:
        text += (f"In the other {summary['undecided']} the two are not distinguishable at this size: neither a "
                 "difference nor an equivalence within the margin is shown.")
    return text.strip()


def minimal_pairs(by_dataset: pd.DataFrame, *, n_resamples: int = 9999, seed: int = 0) -> dict:
    """Released-score bias of BLEU, ROUGE and chrF on every released gender pair and on the shared (minimal) ones.

    Keys ``<metric>_all`` and ``<metric>_shared`` (metric lower-cased), ``pairs_all``, ``pairs_shared``,
    ``left_out`` and ``word_level_zero`` (BLEU and ROUGE are 0 on the shared pairs).
    """
    shared = by_dataset[(by_dataset["dataset"] == "released scores") & (by_dataset["attribute"] == "gender")]
    if shared.empty:  # gender not among the attributes compared
        nan = float("nan")
        return {"pairs_all": nan, "pairs_shared": nan, "left_out": nan, "word_level_zero": False,
                **{f"{m.lower()}_{k}": nan for m in REFERENCE_METRICS for k in ("all", "shared")}}
    everything = pairwise.bias_table(published.scores(["gender"], list(REFERENCE_METRICS)), n_resamples=n_resamples,
                                     seed=seed).set_index("metric")
    shared = shared.set_index("metric")
    out = {"pairs_all": int(everything["n_pairs"].iloc[0]), "pairs_shared": int(shared["n_pairs"].iloc[0])}
    out["left_out"] = out["pairs_all"] - out["pairs_shared"]
    for metric in REFERENCE_METRICS:
        out[f"{metric.lower()}_all"] = float(everything.loc[metric, "bias"])
        out[f"{metric.lower()}_shared"] = float(shared.loc[metric, "bias"])
    out["word_level_zero"] = out["bleu_shared"] == 0 and out["rouge_shared"] == 0
    return out


def minimal_pairs_sentence(numbers: dict) -> str:
    """Why BLEU and ROUGE lose their gender bias on minimal pairs (when they do; :func:`minimal_pairs`)."""
    if not numbers.get("word_level_zero"):
        return ""
    return ("BLEU and ROUGE-1 count words, and against a reference that contains neither *he* nor *she* they "
            "cannot tell the two apart; on minimal pairs their bias is zero, and their whole released gender bias "
            "comes from the non-minimal pairs. chrF counts character n-grams, which *he* and *she* do not share "
            "entirely, so it keeps a small bias on minimal pairs.")


def datasets_summary(attributes=None, *, n_resamples: int = 9999, seed: int = 0, by_dataset=None,
                     tests=None) -> dict:
    """Chapter 2's headline numbers: what the rules build, how close the gender references come to the released
    ones, and whether the choice of reference changes the measured bias (``by_dataset``: :func:`reference_bias`,
    ``tests``: :func:`reference_bias_tests`)."""
    from ..datasets import built

    pairs, excluded = built.load(attributes), built.exclusions(attributes)
    match = built.match_published(released_attributes(attributes))
    by_dataset = reference_bias(attributes, n_resamples=n_resamples, seed=seed) if by_dataset is None else by_dataset
    tests = reference_bias_tests(attributes, n_resamples=n_resamples, seed=seed) if tests is None else tests
    gender = gender_references(match)
    bias = reference_bias_summary(by_dataset, tests)
    return {"attributes": int(pairs["attribute"].nunique()), "pairs": len(pairs), "exclusions": len(excluded),
            "gender_released": gender["released"], "gender_exact": gender["exact"],
            "gender_exact_rate": gender["exact_rate"], "gender_normalized_rate": gender["normalized_rate"],
            "bias_cells": bias["cells"], "bias_cells_same": bias["same"], "bias_cells_differ": bias["differ"],
            "bias_largest_difference": bias["largest_difference"]}


# --- Chapter 3: paradigms and backbones, live scores beside the released ones ----------------------
#: the paradigms of PLM-based metrics (Sun et al., Table 2) and of the others
PLM_PARADIGMS = ("Matching", "Regression", "Generation")
SURFACE_PARADIGMS = ("n-gram", "static embedding")
#: released column -> our metric's label, for the five released n-gram columns
RELEASED_LABELS = {"BLEU": "BLEU", "ROUGE": "ROUGE-1", "METEOR": "METEOR", "NIST": "NIST", "chrF": "chrF"}


def bias_by_paradigm(bias: pd.DataFrame, configs: pd.DataFrame) -> pd.DataFrame:
    """Mean, minimum and maximum bias over every (metric, attribute) cell of each paradigm."""
    merged = bias.merge(configs[["metric", "paradigm"]], on="metric")
    out = merged.groupby("paradigm", sort=False)["bias"].agg(["size", "mean", "min", "max"])
    return pd.DataFrame({"paradigm": out.index, "cells": out["size"].to_numpy(), "mean": out["mean"].to_numpy(),
                         "min": out["min"].to_numpy(), "max": out["max"].to_numpy()})


def gender_ranges(bias: pd.DataFrame, configs: pd.DataFrame) -> dict:
    """Range of the gender bias of PLM-based, of n-gram and of static-embedding metrics (``plm_*``, ``ngram_*``,
    ``static_*``; ``surface_*``: the last two together), ours and Table 6's (whose surface rows are n-gram only)."""
    gender = bias[bias["attribute"] == "gender"].merge(configs[["metric", "paradigm"]], on="metric")
    t6 = table("sun2022_table6_bias")
    groups = {"plm": gender[gender["paradigm"].isin(PLM_PARADIGMS)],
              "surface": gender[gender["paradigm"].isin(SURFACE_PARADIGMS)],
              "ngram": gender[gender["paradigm"] == "n-gram"],
              "static": gender[gender["paradigm"] == "static embedding"]}
    out = {}
    for key, g in groups.items():
        out[f"{key}_min"], out[f"{key}_max"] = float(g["bias"].min()), float(g["bias"].max())
    paper_plm, paper_ngram = t6.loc[t6["paradigm"] != "-", "gender"], t6.loc[t6["paradigm"] == "-", "gender"]
    return {**out, "paper_plm_min": float(paper_plm.min()), "paper_plm_max": float(paper_plm.max()),
            "paper_ngram_min": float(paper_ngram.min()), "paper_ngram_max": float(paper_ngram.max())}


#: the groups of configurations :func:`paradigm_gaps` compares with the PLM-based ones
GAP_GROUPS = {"n-gram": ("n-gram",), "static embedding": ("static embedding",)}


def paradigm_gaps(scores: pd.DataFrame, configs: pd.DataFrame, attribute: str = "gender", *,
                  n_resamples: int = 9999, seed: int = 0) -> pd.DataFrame:
    """Is the bias of the PLM-based configurations higher than that of the n-gram (and of the static-embedding)
    ones on ``attribute``? Per pair, the mean over each group's configurations of the Eq. 2 term (each configuration
    rescaled by its own Eq. 1; configurations with constant scores left out); the paired difference PLM − group
    over the same pairs, with its 95% bootstrap interval and verdict (:func:`metricbias.bias.claims.compare`)."""
    from ..bias import claims

    paradigm = configs.drop_duplicates("metric").set_index("metric")["paradigm"]
    table_ = pair_term_table(scores, attribute)

    def group_mean(paradigms):
        cols = [m for m in table_.columns if paradigm.get(m) in paradigms]
        return (table_[cols].mean(axis=1), len(cols)) if cols else (None, 0)

    plm, n_plm = group_mean(PLM_PARADIGMS)
    rows = []
    for label, paradigms in GAP_GROUPS.items():
        other, n_other = group_mean(paradigms)
        row = {"attribute": attribute, "comparison": f"PLM-based − {label}", "PLM-based configurations": n_plm,
               "other configurations": n_other, "pairs": len(table_)}
        if plm is None or other is None:
            row.update(difference=np.nan, ci_low=np.nan, ci_high=np.nan, verdict="not run here")
        else:
            c = claims.compare(plm.to_numpy(), other.to_numpy(), paired=True, n_resamples=n_resamples, seed=seed)
            row.update(difference=c["difference"], ci_low=c["ci_low"], ci_high=c["ci_high"], verdict=c["verdict"])
        rows.append(row)
    return pd.DataFrame(rows)


#: :func:`paradigm_gap_findings`' words for each verdict of :func:`paradigm_gaps`
GAP_WORDS = {"higher": "more biased than", "lower": "less biased than"}


def paradigm_gap_findings(gaps: pd.DataFrame) -> dict:
    """Numbers of :func:`paradigm_gaps` for the landing page: per group (``ngram``, ``static``) the difference,
    its interval and ``<group>_words`` ("more biased than", "less biased than" or "not distinguishable at this size
    from")."""
    from ..bias.claims import UNDECIDED

    out = {}
    for r in gaps.to_dict("records"):
        key = "ngram" if r["comparison"].endswith("n-gram") else "static"
        out.update({f"{key}_difference": r["difference"], f"{key}_ci_low": r["ci_low"],
                    f"{key}_ci_high": r["ci_high"],
                    f"{key}_words": GAP_WORDS.get(r["verdict"], f"{UNDECIDED} from" if r["verdict"] == UNDECIDED
                                                  else r["verdict"])})
    return out


def paradigm_gap_sentence(gaps: pd.DataFrame) -> str:
    """The verdicts of :func:`paradigm_gaps` as a sentence (Markdown, no math)."""
    from ..bias.claims import interval_text

    words = {"higher": "the PLM-based configurations are more biased", "lower": "they are less biased"}
    parts = []
    for r in gaps.to_dict("records"):
        if np.isnan(r["difference"]):
            parts.append(f"{r['comparison']}: not run here")
            continue
        parts.append(f"{r['comparison']} {interval_text({**r, 'confidence': 0.95})} "
                     f"({words.get(r['verdict'], r['verdict'])})")
    attribute = gaps["attribute"].iloc[0] if len(gaps) else ""
    return (f"On {attribute}, the mean bias of the PLM-based configurations minus that of each other group, paired "
            f"over the same {int(gaps['pairs'].max()) if len(gaps) else 0} pairs (in points of Eq. 2): "
            + "; ".join(parts) + ".")


def released_bias(pair_ids, *, n_resamples: int = 9999, seed: int = 0) -> pd.DataFrame:
    """Eq. 2 of the 29 released score columns on the released pairs ``pair_ids`` (a sample, say)."""
    scores = published.scores()
    return pairwise.bias_table(scores[scores["pair_id"].isin(set(pair_ids))], n_resamples=n_resamples, seed=seed)


def released_column_differences(released: pd.DataFrame, live: pd.DataFrame) -> pd.DataFrame:
    """For the five released n-gram columns: bias from our scores minus bias from theirs, one row per metric and
    one column per attribute (in the paper's order)."""
    theirs = released[released["metric"].isin(RELEASED_LABELS)].assign(
        metric=lambda d: d["metric"].map(RELEASED_LABELS))
    both = theirs.merge(live, on=["attribute", "metric"], suffixes=("_released", "_ours"))
    both["difference"] = both["bias_ours"] - both["bias_released"]
    grid = both.pivot_table(index="metric", columns="attribute", values="difference", sort=False)
    grid = grid[[a for a in ATTRIBUTES if a in grid.columns]]
    return grid.rename_axis(columns=None).reset_index()


def rank_agreement(released: pd.DataFrame, built: pd.DataFrame) -> pd.DataFrame:
    """Per attribute in both: Spearman correlation between the metrics' bias on the released and on the built pairs,
    with its 95% interval over the metrics (:func:`metricbias.bias.claims.spearman_interval`)."""
    from ..bias.claims import spearman_interval

    both = released.merge(built, on=["attribute", "metric"], suffixes=("_released", "_built"))
    rows = []
    for a, g in both.groupby("attribute", sort=True):
        rho = float(g["bias_released"].corr(g["bias_built"], method="spearman"))
        low, high = spearman_interval(rho, len(g))
        rows.append({"attribute": a, "metrics": len(g), "Spearman ρ": rho, "CI low": low, "CI high": high})
    return pd.DataFrame(rows, columns=["attribute", "metrics", "Spearman ρ", "CI low", "CI high"])


def rank_agreement_sentence(agreement: pd.DataFrame) -> str:
    """How the metrics' ranking on the built pairs follows the released one (:func:`rank_agreement`), by the lower
    ends of the intervals (Markdown, no math)."""
    if agreement.empty:
        return "No attribute is in both sets here."
    defined = agreement.dropna(subset=["CI low"])
    positive = defined[defined["CI low"] > 0]
    return (f"The Spearman correlation is {agreement['Spearman ρ'].min():.2f} to {agreement['Spearman ρ'].max():.2f} "
            f"over the {len(agreement)} attributes; its 95% interval lies above zero for {len(positive)} of "
            f"{len(agreement)} ({', '.join(positive['attribute']) or 'none'}), where the built pairs rank the "
            "metrics in an order related to the released one; the intervals are too wide to show that the two "
            "orders are the same.")


def figure4_points(released: pd.DataFrame, live: pd.DataFrame, configs: pd.DataFrame) -> pd.DataFrame:
    """The PLM-based configurations of Figure 4 (F-scores for generation metrics, as the paper plots), released and
    live, each with its bias averaged over the attributes (``avg_bias``)."""
    avg_released = released.groupby("metric", sort=False)["bias"].mean().rename("avg_bias")
    avg_live = live.groupby("metric", sort=False)["bias"].mean().rename("avg_bias")
    released_cfg = released_configs().merge(avg_released, left_on="metric", right_index=True)
    live_cfg = configs[CONFIG_COLUMNS].merge(avg_live, left_on="metric", right_index=True)
    points = pd.concat([released_cfg, live_cfg], ignore_index=True)
    keep = points["paradigm"].isin(PLM_PARADIGMS) & ~points["metric"].str.endswith(("-p", "-r"))
    return points[keep].sort_values(["paradigm", "family", "params_m"], kind="stable").reset_index(drop=True)


def paradigm_variance(points: pd.DataFrame) -> dict:
    """How much of the variance of the average bias paradigm, family and backbone explain (eta squared).

    Over the released configurations of :func:`figure4_points`; the backbone over those whose backbone serves
    more than one metric; ``paradigm_all`` with the live ones added.
    """
    from ..bias.decomposition import variance_explained

    rel = points[points["source"] == "released"]
    shared = rel[rel["backbone"].isin(rel["backbone"].value_counts().loc[lambda s: s > 1].index)]
    return {"released": len(rel), "shared_backbone": len(shared),
            "paradigm": variance_explained(rel["avg_bias"], rel["paradigm"]),
            "family": variance_explained(rel["avg_bias"], rel["family"]),
            "backbone": variance_explained(shared["avg_bias"], shared["backbone"]),
            "paradigm_all": variance_explained(points["avg_bias"], points["paradigm"])}


def live_positions(points: pd.DataFrame) -> pd.DataFrame:
    """Each live configuration's average bias against the range of the released configurations of its paradigm."""
    ranges = points[points["source"] == "released"].groupby("paradigm")["avg_bias"].agg(["min", "max"])
    live = points[points["source"] == "live"]
    low = live["paradigm"].map(ranges["min"])
    high = live["paradigm"].map(ranges["max"])
    where = np.select([live["avg_bias"] < low, live["avg_bias"] > high], ["below", "above"], "inside")
    where = np.where(low.isna(), "no released configuration", where)
    return pd.DataFrame({"metric": live["metric"].to_numpy(), "paradigm": live["paradigm"].to_numpy(),
                         "parameters (M)": live["params_m"].to_numpy(), "average bias": live["avg_bias"].to_numpy(),
                         "released min": low.to_numpy(), "released max": high.to_numpy(), "position": where})


def paradigm_means(points: pd.DataFrame) -> pd.DataFrame:
    """Mean of the average bias per paradigm over released and live configurations, highest first."""
    means = points.groupby("paradigm")["avg_bias"].agg(["size", "mean"]).sort_values("mean", ascending=False)
    return pd.DataFrame({"paradigm": means.index, "configurations": means["size"].to_numpy(),
                         "mean average bias": means["mean"].to_numpy()})


def figure3_example(reference_word: str = "nurse", pronoun: str = "she") -> pd.Series:
    """The first released gender pair whose reference names ``reference_word`` and whose candidate 1 says ``pronoun``."""
    pairs = published.pairs(["gender"])
    hit = pairs[pairs["reference"].str.contains(rf"\b{reference_word}\b")
                & pairs["candidate_1"].str.contains(rf"\b{pronoun}\b")]
    return hit.iloc[0]


def figure3_texts(example: pd.Series) -> pd.DataFrame:
    """The example pair as rows of text: reference, candidate 1, candidate 2."""
    return pd.DataFrame({"text": ["reference", "candidate 1", "candidate 2"],
                         "sentence": [example["reference"], example["candidate_1"], example["candidate_2"]]})


def figure3_maps(example: pd.Series, backbone: str = "all-MiniLM-L6-v2", device: str = "auto") -> dict:
    """BERTScore and MoverScore matching maps of each candidate of ``example`` against its reference.

    Returns ``{(metric, candidate): (map, score)}`` with ``metric`` in BERTScore, MoverScore and
    ``candidate`` in candidate_1, candidate_2; BERTScore's score is its F, MoverScore's the map's own
    (idf from the released gender pairs, as on the full dataset).
    """
    pairs = published.pairs(["gender"])
    corpus = (pairs["candidate_1"].tolist() + pairs["candidate_2"].tolist(),
              pairs["reference"].tolist() + pairs["reference_2"].tolist())
    bs = get("bertscore", backbone=backbone, device=device)
    ms = get("moverscore", backbone=backbone, device=device)
    out = {}
    for key in ("candidate_1", "candidate_2"):
        out[("BERTScore", key)] = (bs.matching_map(example[key], example["reference"]),
                                   float(bs.score([example[key]], [example["reference"]])[0]))
        mm = ms.matching_map(example[key], example["reference"], corpus=corpus)
        out[("MoverScore", key)] = (mm, float(mm.score))
    return out


def _pull(mm, token: str, ref_token: str) -> tuple[str, float]:
    """BERTScore: the token's best match and its cosine with ``ref_token``; MoverScore: where most of the token's
    mass goes and the share of its mass moved to ``ref_token`` (all occurrences)."""
    row = np.asarray(mm.matrix[mm.candidate_tokens.index(token)])
    best = mm.reference_tokens[int(np.argmax(row))]
    cols = [j for j, t in enumerate(mm.reference_tokens) if t == ref_token]
    value = row[cols].max() if mm.metric == "bertscore" else row[cols].sum() / row.sum()
    return best, float(value)


def figure3_pull(maps: dict, pronouns=("she", "he"), reference_word: str = "nurse") -> pd.DataFrame:
    """Per candidate pronoun: BERTScore's greedy match and cosine with ``reference_word``, and the share of its
    MoverScore mass moved to ``reference_word`` (pronouns or the word missing from a map are left out)."""
    rows = []
    for key, pronoun in zip(("candidate_1", "candidate_2"), pronouns):
        bmap, mmap = maps[("BERTScore", key)][0], maps[("MoverScore", key)][0]
        if pronoun in bmap.candidate_tokens and reference_word in bmap.reference_tokens:
            b_best, cosine = _pull(bmap, pronoun, reference_word)
            m_best, share = _pull(mmap, pronoun, reference_word)
            rows.append({"pronoun": pronoun, "BERTScore greedy match": b_best, f"cosine with {reference_word}": cosine,
                         f"MoverScore mass to {reference_word}": share})
    return pd.DataFrame(rows)


def figure3_sentence(pull: pd.DataFrame, maps: dict, reference_word: str = "nurse") -> str:
    """What the maps show, in one or two sentences (which pronoun is closer to ``reference_word`` and which
    metric scores the stereotypical candidate higher)."""
    if len(pull) != 2:
        return ""
    cosine = dict(zip(pull["pronoun"], pull[f"cosine with {reference_word}"]))
    share = pull[f"MoverScore mass to {reference_word}"]
    she, he = pull["pronoun"]
    closer = "closer to" if cosine[she] > cosine[he] else "farther from"
    higher = [m for m in ("BERTScore", "MoverScore") if maps[(m, "candidate_1")][1] > maps[(m, "candidate_2")][1]]
    verdict = (f"{' and '.join(higher)} score{'s' if len(higher) == 1 else ''} the stereotypical candidate "
               f"(*{she}*) higher" if higher else f"neither metric scores the stereotypical candidate (*{she}*) higher")
    forced = (f"The words the two candidates share with the reference are matched to themselves, so in both "
              f"candidates MoverScore leaves the pronoun to stand in for the second *{reference_word}*. What differs "
              "is how far it is: i" if share.min() > 0.5 else "I")
    return (f"{forced}n the backbone's last layer *{she}* is {closer} *{reference_word}* than *{he}* is "
            f"(cosine {cosine[she]:.3f} vs {cosine[he]:.3f}); {verdict}.")


def backbones_summary(live: pd.DataFrame | None = None, configs: pd.DataFrame | None = None,
                      released: pd.DataFrame | None = None, *, profile: str = "offline", n_resamples: int = 0,
                      seed: int = 0) -> dict:
    """Chapter 3's headline numbers: how much of the released configurations' average bias their paradigm explains
    (against family and backbone), and where the live configurations of ``profile`` fall.

    ``live`` (bias of the live configurations on the released pairs), ``configs``
    (:func:`metricbias.metrics.configurations`) and ``released`` (:func:`released_bias` on the same pairs)
    are computed when omitted: every released pair, every configuration of ``profile`` (scores cached).
    """
    if live is None or configs is None:
        from .. import profiles
        from ..scoring import score_metrics

        specs = profiles.prepare(profiles.suite(profile), progress=False)
        configs = configurations(specs)
        from ..bias.scores import drop_identical

        scores, merged = drop_identical(score_metrics(datasets.load("published"), specs, progress=False))
        configs = configs[~configs["metric"].isin(merged["metric"])]
        live = pairwise.bias_table(scores, n_resamples=n_resamples, seed=seed)
    if released is None:  # live on every released pair
        released = released_bias(published.pairs()["pair_id"], n_resamples=n_resamples, seed=seed)
    points = figure4_points(released, live, configs)
    eta = paradigm_variance(points)
    positions = live_positions(points)
    ranges = gender_ranges(live, configs)
    return {"released_configurations": eta["released"], "shared_backbone_configurations": eta["shared_backbone"],
            "eta_paradigm": eta["paradigm"],
            "eta_family": eta["family"], "eta_backbone": eta["backbone"], "eta_paradigm_with_live": eta["paradigm_all"],
            "live_configurations": len(positions),
            "live_outside_released_range": int((positions["position"] != "inside").sum()),
            "gender_plm_min": ranges["plm_min"], "gender_plm_max": ranges["plm_max"],
            "gender_surface_min": ranges["surface_min"], "gender_surface_max": ranges["surface_max"],
            "gender_ngram_min": ranges["ngram_min"], "gender_ngram_max": ranges["ngram_max"],
            "gender_static_min": ranges["static_min"], "gender_static_max": ranges["static_max"]}


# --- paradigm vs backbone (Fig. 4), with the backbone held fixed -----------------------------------
CLAIM_COLUMNS = ["source", "attribute", "share_paradigm", "share_paradigm_ci_low", "share_paradigm_ci_high",
                 "share_backbone", "share_backbone_ci_low", "share_backbone_ci_high", "share_interaction",
                 "p_paradigm_larger", "claim_holds", "verdict", "n_configurations"]
RELEASED = "Sun et al. (2022), Table 6 (released scores; backbones differ by paradigm)"
FIXED = "this book (live scores; the same frozen backbone in every paradigm)"


def released_shares() -> dict:
    """Eta squared of Table 6's average bias by paradigm and by backbone, over the PLM-based configurations."""
    from ..bias.decomposition import variance_explained

    t6 = table("sun2022_table6_bias").set_index("published_column")
    configs = released_configs()
    plm = configs[configs["paradigm"].isin(["Matching", "Regression", "Generation"])].copy()
    plm["avg"] = plm["metric"].map(t6["avg"])
    return {"share_paradigm": variance_explained(plm["avg"], plm["paradigm"]),
            "share_backbone": variance_explained(plm["avg"], plm["backbone"]), "n_configurations": len(plm)}


def claim_verdict(p_paradigm_larger: float, alpha: float = 0.05) -> str:
    """"holds" when the paradigm's share exceeds the backbone's in at least 1 − alpha/2 of the bootstrap resamples
    (the percentile interval of their difference lies above 0), "reversed" when it does so in at most alpha/2,
    otherwise not distinguishable at this size."""
    from ..bias.claims import UNDECIDED

    if np.isnan(p_paradigm_larger):
        return "no interval"
    if p_paradigm_larger >= 1 - alpha / 2:
        return "holds"
    if p_paradigm_larger <= alpha / 2:
        return "reversed"
    return UNDECIDED


def paradigm_claim(decomposition: pd.DataFrame, n_configurations: int | None = None) -> pd.DataFrame:
    """Sun et al.'s released reading and our fixed-backbone decomposition, one row per attribute (and average)."""
    rel = released_shares()
    rows = [{"source": RELEASED, "attribute": "average", **rel,
             "claim_holds": rel["share_paradigm"] > rel["share_backbone"],
             "verdict": "point values only (no interval)"}]
    for r in decomposition.to_dict("records"):
        rows.append({"source": FIXED, "attribute": r["attribute"], "share_paradigm": r["share_paradigm"],
                     "share_paradigm_ci_low": r.get("share_paradigm_ci_low", np.nan),
                     "share_paradigm_ci_high": r.get("share_paradigm_ci_high", np.nan),
                     "share_backbone": r["share_backbone"],
                     "share_backbone_ci_low": r.get("share_backbone_ci_low", np.nan),
                     "share_backbone_ci_high": r.get("share_backbone_ci_high", np.nan),
                     "share_interaction": r["share_interaction"], "p_paradigm_larger": r["p_first_larger"],
                     "claim_holds": claim_verdict(r["p_first_larger"]) == "holds",
                     "verdict": claim_verdict(r["p_first_larger"]), "n_configurations": n_configurations})
    return pd.DataFrame(rows, columns=CLAIM_COLUMNS)


def _fix(reason: str) -> str:
    """The command an unavailable configuration's error names (the last `...` in it), without the machine's paths."""
    import re

    commands = re.findall(r"`([^`]+)`", reason)
    return commands[-1] if commands else ""


def grid_availability(encoders=None) -> pd.DataFrame:
    """The configurations of the fixed-backbone grid (:mod:`metricbias.metrics.backbone_grid`) and whether each runs
    here: ``metric, family, variant, paradigm, backbone, runs_on, decomposed, runs, fix`` (the command that makes a
    missing one available)."""
    from ..metrics import backbone_grid

    encoders = backbone_grid.ENCODERS if encoders is None else encoders
    configs = backbone_grid.configs(encoders)
    gone = backbone_grid.missing(encoders).set_index("metric")["reason"]
    from .. import backbones

    # trained parts ship under models/, but they run only where their frozen base encoder is installed
    base_here = configs["backbone"].isin(backbones.available())
    runs = ~configs["metric"].isin(gone.index) & base_here
    fix = configs["metric"].map(lambda m: _fix(gone[m]) if m in gone.index else "")
    fix = fix.where(base_here | (fix != ""), "metricbias install-backbone " + configs["backbone"])
    return configs.assign(runs=runs, fix=fix)


def grid_backbones(availability: pd.DataFrame) -> dict:
    """Which encoders of the grid ran (``ran``: at least one configuration; ``complete``: every configuration the
    decomposition uses) and which did not (``absent``), with the commands that would add the missing parts."""
    decomposed = availability[availability["decomposed"]]
    complete = [b for b, g in decomposed.groupby("backbone", sort=False) if g["runs"].all()]
    ran = [b for b, g in availability.groupby("backbone", sort=False) if g["runs"].any()]
    absent = [b for b in dict.fromkeys(availability["backbone"]) if b not in ran]
    fixes = list(dict.fromkeys(f for f in availability.loc[~availability["runs"], "fix"] if f))
    return {"ran": ran, "complete": complete, "absent": absent, "fixes": fixes,
            "configurations_run": int(availability["runs"].sum()), "configurations": len(availability)}


def grid_note(backbones_run: dict) -> str:
    """A sentence (Markdown) naming the backbones the fixed-backbone grid ran on here and what the others need."""
    def names(xs):
        return ", ".join(xs) if xs else "none"

    text = (f"Offline, the grid ran {backbones_run['configurations_run']} of its "
            f"{backbones_run['configurations']} configurations, on the backbone(s) {names(backbones_run['ran'])}")
    partial = [b for b in backbones_run["ran"] if b not in backbones_run["complete"]]
    if partial:
        text += f" ({names(partial)} without every paradigm)"
    if backbones_run["absent"]:
        text += f"; not on {names(backbones_run['absent'])}"
    text += "."
    if backbones_run["fixes"]:
        text += " The missing parts come with " + "; ".join(f"`{f}`" for f in backbones_run["fixes"]) + "."
    if len(backbones_run["complete"]) < 2:
        text += (" With fewer than two backbones in every paradigm, the backbone's share cannot be estimated: the "
                 "decomposition below has Sun et al.'s released reading only, and the paradigm's share among the "
                 "configurations of the one backbone.")
    return text


def grid_entries(availability: pd.DataFrame) -> list:
    """The grid's configurations that run here, as :class:`~metricbias.metrics.Spec` (for ``score_metrics``)."""
    from ..metrics import backbone_grid

    ran = set(availability.loc[availability["runs"], "metric"])
    encoders = list(dict.fromkeys(availability["backbone"]))
    return [e for e in backbone_grid.entries(encoders, only_available=False) if e.label in ran]


def grid_decomposition(scores: pd.DataFrame, availability: pd.DataFrame, *, n_resamples: int = 999,
                       seed: int = 0) -> pd.DataFrame:
    """:func:`metricbias.bias.decomposition.decompose` on the decomposed configurations of the backbones complete
    here (:func:`grid_backbones`); an empty table (same columns) with fewer than two such backbones."""
    from ..bias import decomposition
    from ..bias.scores import drop_identical

    complete = grid_backbones(availability)["complete"]
    configs = availability[availability["decomposed"] & availability["backbone"].isin(complete)]
    if len(complete) < 2:
        keys = ["share_paradigm", "share_backbone", "share_interaction"]
        return pd.DataFrame(columns=["attribute", "n_pairs", *[f"{k}{e}" for k in keys for e in ("", "_ci_low",
                                                                                                  "_ci_high")],
                                     "p_first_larger"])
    # one configuration per distinct function: identical ones (PRISM-F = BARTScore-F without a target tag) would
    # otherwise count twice in their cell
    scores, _ = drop_identical(scores[scores["metric"].isin(configs["metric"])])
    configs = configs[configs["metric"].isin(scores["metric"])]
    return decomposition.decompose(scores, configs, n_resamples=n_resamples, seed=seed)


def without_identical(availability: pd.DataFrame, merged: pd.DataFrame) -> pd.DataFrame:
    """The grid's :func:`grid_availability` with the configurations that :func:`metricbias.bias.scores.
    identical_configurations` found identical to another (``merged``) marked: ``same_as`` names the one kept, and
    a merged configuration is neither decomposed nor counted."""
    same_as = availability["metric"].map(merged.set_index("metric")["same_as"]) if len(merged) else None
    out = availability.assign(same_as=same_as if same_as is not None else np.nan)
    out["decomposed"] = out["decomposed"] & out["same_as"].isna()
    return out


def identical_note(merged: pd.DataFrame, what: str = "configurations") -> str:
    """One sentence (Markdown) naming the configurations merged into another because their scores are identical
    on every side of every pair (:func:`metricbias.bias.scores.identical_configurations`); empty when none."""
    from ..bias.scores import SAME_RTOL

    if merged.empty:
        return ""
    parts = [f"{r['metric']} into {r['same_as']}" for r in merged.to_dict("records")]
    largest = float(merged["largest_difference"].max())
    how = (", to every digit" if largest == 0 else f" up to float rounding (largest difference {largest:.1e}, "
           f"relative tolerance {SAME_RTOL:g})")
    text = (f"One row per distinct function: {len(merged)} of these {what} gave scores identical to another's on "
            f"every side of all {int(merged['pairs'].max())} pairs{how}, so each is merged into the "
            f"one it equals ({'; '.join(parts)}): on these pairs the two measure one bias, and counting both would "
            "weigh that function twice.")
    if merged["metric"].str.startswith("PRISM").any():
        text += (" PRISM-style scoring differs from BARTScore-style only by the target-language tag it forces before "
                 "each target; a paraphraser trained here has no such tag, so the two compute the same function on "
                 "it. A PRISM configuration keeps its own row only on a model where its scores differ.")
    return text


def paradigm_share_per_backbone(bias: pd.DataFrame, availability: pd.DataFrame) -> pd.DataFrame:
    """Per backbone: eta squared of the average bias (over attributes) of its decomposed configurations grouped
    by paradigm — how much of the spread among one backbone's metrics lies between the paradigms."""
    from ..bias.decomposition import variance_explained

    configs = availability[availability["decomposed"] & availability["runs"]].set_index("metric")
    avg = bias[bias["metric"].isin(configs.index)].groupby("metric")["bias"].mean()
    rows = []
    for backbone, group in configs.groupby("backbone", sort=False):
        values = avg.reindex(group.index)
        rows.append({"backbone": backbone, "configurations": int(values.notna().sum()),
                     "paradigms": int(group.loc[values.notna(), "paradigm"].nunique()),
                     "share_paradigm": variance_explained(values, group["paradigm"])})
    return pd.DataFrame(rows, columns=["backbone", "configurations", "paradigms", "share_paradigm"])


def grid_bias_average(bias: pd.DataFrame, availability: pd.DataFrame) -> pd.DataFrame:
    """The page's view of the grid: one row per configuration run here (paradigm order), its average bias over the
    attributes per backbone, and the attribute where it is largest."""
    from ..metrics.backbone_grid import PARADIGMS

    ran = availability[availability["runs"]]
    t = ran[["metric", "family", "variant", "paradigm", "backbone"]].merge(bias, on="metric")  # the grid's order
    rows = []
    for (paradigm, family, variant), g in t.groupby(["paradigm", "family", "variant"], sort=False):
        row = {"paradigm": paradigm, "family": family, "variant": variant}
        for backbone, b in g.groupby("backbone", sort=False):
            row[f"{backbone}: average bias"] = b["bias"].mean()
            top = b.loc[b["bias"].idxmax()]
            row[f"{backbone}: largest on"] = f"{top['attribute']} ({top['bias']:.2f})"
        rows.append(row)
    out = pd.DataFrame(rows)
    return out.sort_values("paradigm", key=lambda c: c.map({p: i for i, p in enumerate(PARADIGMS)}), kind="stable",
                           ignore_index=True)


#: short names of the two readings in :func:`claim_table`
READINGS = {RELEASED: "released (Table 6)", FIXED: "backbone fixed (live)"}


def claim_table(claim: pd.DataFrame) -> pd.DataFrame:
    """:func:`paradigm_claim` for the page: reading, attribute, each share with its interval, interaction,
    P(paradigm share > backbone share) over the resamples and whether the claim holds."""
    return pd.DataFrame({
        "reading": claim["source"].map(READINGS), "attribute": claim["attribute"],
        "paradigm": claim["share_paradigm"], "paradigm low": claim["share_paradigm_ci_low"],
        "paradigm high": claim["share_paradigm_ci_high"], "backbone": claim["share_backbone"],
        "backbone low": claim["share_backbone_ci_low"], "backbone high": claim["share_backbone_ci_high"],
        "interaction": claim["share_interaction"], "P(paradigm > backbone)": claim["p_paradigm_larger"],
        "verdict": claim["verdict"]})


def claim_sentence(claim: pd.DataFrame, per_backbone: pd.DataFrame) -> str:
    """Chapter 3's verdict on "the paradigm matters more than the backbone" (Markdown): the released reading, the
    fixed-backbone decomposition when it ran (average over attributes, with intervals), and the paradigm's share
    among the configurations of each backbone."""
    rel = claim[claim["source"] == RELEASED].iloc[0]
    text = (f"On the released configurations, grouping by paradigm explains {rel['share_paradigm']:.0%} of the "
            f"variance of the average bias and grouping by backbone {rel['share_backbone']:.0%}, over "
            f"{int(rel['n_configurations'])} configurations whose backbones differ by paradigm (point values: the "
            "released reading has no interval, so it orders the two shares without a test).")
    fixed = claim[(claim["source"] == FIXED) & (claim["attribute"] == "average")]
    if len(fixed):
        f = fixed.iloc[0]
        holds = claim[claim["source"] == FIXED]
        text += (f" With the backbone held fixed, the paradigm's share of the average bias is {f['share_paradigm']:.0%} "
                 f"[{f['share_paradigm_ci_low']:.0%}, {f['share_paradigm_ci_high']:.0%}] and the backbone's "
                 f"{f['share_backbone']:.0%} [{f['share_backbone_ci_low']:.0%}, {f['share_backbone_ci_high']:.0%}] "
                 f"(interaction {f['share_interaction']:.0%}; the paradigm's share is the larger in "
                 f"{f['p_paradigm_larger']:.0%} of the bootstrap resamples). The claim holds when that is at least "
                 f"97.5% (the 95% interval of the difference of the two shares lies above zero): on average it "
                 f"{'holds' if f['verdict'] == 'holds' else 'is ' + f['verdict']}; it holds on "
                 f"{int((holds['verdict'] == 'holds').sum())} of {len(holds)} rows (attributes and average), is "
                 f"reversed on {int((holds['verdict'] == 'reversed').sum())} and not distinguishable on the rest.")
    for r in per_backbone.to_dict("records"):
        text += (f" Among the {r['configurations']} configurations on {r['backbone']}, the paradigm explains "
                 f"{r['share_paradigm']:.0%} of the variance of the average bias ({r['paradigms']} paradigms).")
    return text


# --- Table 5: debiasing adapters (chapter 6) -------------------------------------------------------
#: the bias row of Table 5 in each bias dataset
GENDER = {"published": "gender", "built": "gender"}


def table5(results: pd.DataFrame) -> pd.DataFrame:
    """Our Table 5: per metric, the original and ``+ adapter`` rows of gender bias and quality.

    ``results`` is a long before/after table with ``metric`` and ``backbone`` columns
    (:func:`metricbias.mitigation.evaluation.compare_all`). Each adapter row's cells read
    ``value (relative change)``.
    """
    rows = []
    for (label, backbone), table in results.groupby(["metric", "backbone"], sort=False):
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


def table5_paper_cuts(published: pd.DataFrame) -> dict:
    """The smallest and largest gender bias cut of Sun et al.'s adapters (Table 5; ``published`` is
    :func:`metricbias.reproduction.zarkadoula2023.published_tables`)."""
    cut = -published.loc[published["source"].str.startswith("Sun") & (published["variant"] != "original"),
                         "gender_bias_change"]
    return {"paper_cut_min": float(cut.min()), "paper_cut_max": float(cut.max())}


# --- chapter 3: bias against quality ---------------------------------------------------------------
#: the configuration whose quality is the bar: a finding from a configuration below it rests on a weak metric
QUALITY_REFERENCE = "BLEU"
#: the quality measures of :func:`metricbias.metaeval.quality.configuration_quality`, as the page names them
QUALITY_MEASURES = {"darr_tau": "WMT19 kk-en DARR Kendall-like τ", "stsb_r": "STS-B dev Pearson r"}


def quality_points(bias: pd.DataFrame, configs: pd.DataFrame, quality: pd.DataFrame,
                   reference: str = QUALITY_REFERENCE) -> pd.DataFrame:
    """One row per live configuration: its paradigm, its bias averaged over the attributes (``avg_bias``), its
    quality (``darr_tau``, ``stsb_r`` and their item counts) and ``at_least_reference``: whether it is at least as
    good as ``reference`` on every quality measure (point values)."""
    avg = bias.groupby("metric", sort=False)["bias"].mean().rename("avg_bias")
    out = configs[["metric", "family", "paradigm"]].merge(avg, left_on="metric", right_index=True).merge(
        quality.drop(columns="signature", errors="ignore"), on="metric")
    if reference not in set(out["metric"]):
        raise ValueError(f"quality_points: the reference configuration {reference!r} has no bias or quality row")
    ref = out.set_index("metric").loc[reference]
    out["at_least_reference"] = np.logical_and.reduce([out[m] >= ref[m] for m in QUALITY_MEASURES])
    return out.reset_index(drop=True)


def quality_table(points: pd.DataFrame, reference: str = QUALITY_REFERENCE) -> pd.DataFrame:
    """:func:`quality_points` for the page: each configuration's quality beside the reference's (differences)."""
    ref = points.set_index("metric").loc[reference]
    return pd.DataFrame({
        "metric": points["metric"], "paradigm": points["paradigm"], "average bias": points["avg_bias"],
        "DARR τ": points["darr_tau"], f"DARR τ − {reference}": points["darr_tau"] - ref["darr_tau"],
        "STS-B r": points["stsb_r"], f"STS-B r − {reference}": points["stsb_r"] - ref["stsb_r"],
        f"at least {reference}": points["at_least_reference"]})


def bias_quality_correlations(points: pd.DataFrame) -> pd.DataFrame:
    """Spearman correlation of the average bias with each quality measure over the configurations, with its 95%
    interval (:func:`metricbias.bias.claims.spearman_interval`)."""
    from ..bias.claims import spearman_interval

    rows = []
    for column, label in QUALITY_MEASURES.items():
        rho = float(points["avg_bias"].corr(points[column], method="spearman"))
        low, high = spearman_interval(rho, len(points))
        rows.append({"measure": label, "configurations": len(points), "Spearman ρ": rho, "CI low": low,
                     "CI high": high})
    return pd.DataFrame(rows)


def matched_quality_gaps(scores: pd.DataFrame, configs: pd.DataFrame, points: pd.DataFrame,
                         attribute: str = "gender", *, n_resamples: int = 9999, seed: int = 0) -> pd.DataFrame:
    """:func:`paradigm_gaps` twice: over every live configuration (``configurations = "all"``) and over those at
    least as good as the reference on every quality measure (``"at least " + reference``, quality matched)."""
    matched = set(points.loc[points["at_least_reference"], "metric"])
    every = paradigm_gaps(scores, configs, attribute, n_resamples=n_resamples, seed=seed).assign(configurations="all")
    subset = scores[scores["metric"].isin(matched)]
    kept = paradigm_gaps(subset, configs, attribute, n_resamples=n_resamples, seed=seed).assign(
        configurations=f"at least {QUALITY_REFERENCE}")
    return pd.concat([every, kept], ignore_index=True)


def generation_quality_sentence(points: pd.DataFrame, reference: str = QUALITY_REFERENCE) -> str:
    """How good the generation configurations are beside ``reference`` (Markdown): when any is below it on a
    quality measure, the gap, and that no paradigm conclusion is drawn from the generation rows."""
    gen = points[points["paradigm"] == "Generation"]
    if gen.empty:
        return "No generation configuration runs here."
    ref = points.set_index("metric").loc[reference]
    parts = [f"{r['metric']} has a DARR τ of {r['darr_tau']:.3f} and an STS-B r of {r['stsb_r']:.3f}"
             for r in gen.to_dict("records")]
    text = (f"{'; '.join(parts)}, against {reference}'s {ref['darr_tau']:.3f} and {ref['stsb_r']:.3f} on the same "
            f"{int(ref['darr_pairs'])} DARR pairs and {int(ref['stsb_pairs'])} STS-B dev pairs. ")
    weak = gen[~gen["at_least_reference"]]
    if len(weak):
        gaps = [f"{r['metric']}: {r['darr_tau'] - ref['darr_tau']:+.3f} in τ, {r['stsb_r'] - ref['stsb_r']:+.3f} in r"
                for r in weak.to_dict("records")]
        who = ("It is" if len(gen) == 1 else f"All {len(gen)} are" if len(weak) == len(gen)
               else f"{len(weak)} of the {len(gen)} generation configurations {'are' if len(weak) > 1 else 'is'}")
        text += (f"{who} below {reference} ({'; '.join(gaps)}): the paraphrasers trained here are not yet usable metrics, so no conclusion "
                 "about the generation paradigm is drawn from these rows, in this comparison or in the fixed-backbone "
                 "decomposition.")
    else:
        text += f"Every generation configuration is at least as good as {reference} on both measures."
    return text


def quality_sentence(points: pd.DataFrame, gaps: pd.DataFrame, correlations: pd.DataFrame,
                     reference: str = QUALITY_REFERENCE) -> str:
    """Chapter 3's paradigm finding restated with quality in view (Markdown): how many configurations are at least
    as good as ``reference``, the PLM-based gap over all configurations and over those, and whether the average
    bias follows quality."""
    from ..bias.claims import UNDECIDED, interval_text

    matched = points[points["at_least_reference"]]
    words = {"higher": "the PLM-based configurations more biased", "lower": "the PLM-based configurations less biased",
             UNDECIDED: UNDECIDED}
    others = [m for m in matched["metric"] if m != reference]
    text = (f"{len(others)} of the other {len(points) - 1} live configurations are at least as good as {reference} on "
            f"both measures ({', '.join(others) or 'none'}). ")
    for comparison, g in gaps.groupby("comparison", sort=False):
        rows = g.set_index("configurations")
        every, kept = rows.loc["all"], rows.loc[f"at least {reference}"]
        text += f"{comparison}: over all configurations {interval_text({**every, 'confidence': 0.95})}"
        if np.isnan(kept["difference"]):
            text += (f", and among those at least as good as {reference} the comparison cannot be made "
                     f"({int(kept['PLM-based configurations'])} PLM-based and {int(kept['other configurations'])} "
                     "other configurations qualify). ")
        else:
            text += (f" ({words.get(every['verdict'], every['verdict'])}); at matched quality "
                     f"({int(kept['PLM-based configurations'])} PLM-based against {int(kept['other configurations'])})"
                     f" {interval_text({**kept, 'confidence': 0.95})} "
                     f"({words.get(kept['verdict'], kept['verdict'])}). ")
    for r in correlations.to_dict("records"):
        verdict = ("bias rises with quality" if r["CI low"] > 0 else "bias falls as quality rises"
                   if r["CI high"] < 0 else f"a relation between bias and quality is {UNDECIDED}")
        text += (f"Across the {r['configurations']} configurations the Spearman correlation of the average bias with "
                 f"the {r['measure']} is {r['Spearman ρ']:.2f} (95% CI {r['CI low']:.2f} to {r['CI high']:.2f}): "
                 f"{verdict}. ")
    return text.strip()
