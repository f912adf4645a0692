"""Chapter 1: Sun et al.'s Tables 3, 6 and 9 recomputed from the released scores, the direction of the
generation metrics' gender bias, and the chapter's headline numbers.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...bias import pairwise
from ...datasets import published
from ...datasets.published import ATTRIBUTES
from .ch2_summary import long_texts
from .names import of_all
from ..display import PAPER
from .sun2022 import sun_table6, sun_table9
from .tables import compare, table, with_average
from .notes import interval_text


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
    Long form (:func:`.ch2_summary.long_texts`): both candidates and the reference of each pair."""
    data = published.load()
    hit = pd.Series(False, index=data.index)
    for ref in ("reference_1", "reference_2"):
        hit |= (data[ref] == data["candidate_1"]) | (data[ref] == data["candidate_2"])
    return long_texts(data[hit], {"candidate_1": "candidate 1", "candidate_2": "candidate 2", "reference_1": "reference"},
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
    from ...bias.significance import pair_terms

    scores = published.scores()
    rows = []
    for metric, g in scores[scores["attribute"] == attribute].groupby("metric", sort=False):
        terms = pair_terms(g["score_1"], g["score_2"], signed=True, metric=metric, attribute=attribute)
        low, high = pairwise.bootstrap_ci(terms, n_resamples=n_resamples, seed=seed)
        rows.append({"metric": metric, "n_pairs": len(terms), "stereotypical_difference": float(np.mean(terms)),
                     "ci_low": low, "ci_high": high, "excludes_zero": bool(low > 0 or high < 0)})
    return pd.DataFrame(rows)


#: the chapter's computation as one command (the Reproducibility appendix shows it)
COMMAND_LINE = ("The same computation from the command line: `metricbias bias --dataset published --scores published` "
                "(`metricbias.bias.pairwise`, `metricbias.book.reproduction.sun2022`).")
#: the generation models whose precision, recall and F columns were released
GENERATION_MODELS = ("PRISM", "BARTScore-BART-base", "BARTScore-BART-large")


def pair_term_table(scores: pd.DataFrame, attribute: str) -> pd.DataFrame:
    """The per-pair Eq. 2 terms |Ŝ_1 − Ŝ_2| of every metric of a long score table on ``attribute``: one column per
    metric (each rescaled by its own Eq. 1), one row per pair (``pair_id``); metrics with constant scores (Eq. 1
    undefined) are left out. The paired comparisons of chapters 1, 3 and 4 take their values from here."""
    import warnings

    from ...bias.pairwise import ConstantScoresWarning
    from ...bias.significance import pair_terms

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
    from ...bias import claims

    terms = pair_term_table(published.scores(), attribute)
    rows = []
    for model in GENERATION_MODELS:
        for (a, b), label in {("p", "F"): "precision − F", ("F", "r"): "F − recall"}.items():
            x, y = terms[f"{model}-{a}"], terms[f"{model}-{b}"]
            c = claims.compare(x.to_numpy(), y.to_numpy(), paired=True, n_resamples=n_resamples, seed=seed)
            rows.append({"model": model, "comparison": label, "difference": c["difference"], "ci_low": c["ci_low"],
                         "ci_high": c["ci_high"], "verdict": c["verdict"]})
    return pd.DataFrame(rows)


def direction_findings(tests: pd.DataFrame, model: str = "PRISM") -> dict:
    """How the ordering precision > F > recall of ``model`` stands under the paired intervals of
    :func:`direction_tests`: each difference with its interval, the verdict ("holds" when both intervals lie above
    zero, else "is not established"), and of which other models it holds (a phrase: "both BARTScore models")."""
    rows = tests[tests["model"] == model].assign(confidence=0.95).set_index("comparison")
    others = tests[tests["model"] != model]
    held_others = [m for m, g in others.groupby("model", sort=False) if (g["verdict"] == "higher").all()]
    return {"precision_f": interval_text(rows.loc["precision − F"].to_dict()),
            "f_recall": interval_text(rows.loc["F − recall"].to_dict()),
            "verdict": ("holds beyond sampling noise" if (rows["verdict"] == "higher").all()
                        else "is not established at this size"),
            "held_others": of_all(held_others, list(others["model"].unique()), "BARTScore models")}


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
        # the released scores reproduce the printed table outside the two explained rows (an exact recomputation)
        "claim_verdict": "holds" if rest["agrees"].all() else "does not hold",
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
