"""Chapter 3: paradigms and backbones, live scores beside the released ones (Sun et al., Figure 4),
and the chapter's headline numbers (:func:`backbones_summary`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ... import datasets
from ...bias import pairwise
from ...datasets import published
from ...datasets.published import ATTRIBUTES
from ...metrics import CONFIG_COLUMNS, PLM_PARADIGMS, SURFACE_PARADIGMS, configurations
from .ch1_published import pair_term_table
from .names import joined, of_all
from .sun2022 import RELEASED_LABELS, released_configs
from .tables import table




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


#: :func:`paradigm_gaps`' verdict when one side of a comparison has no configuration
NO_CONFIGURATION = "no configuration on one side"
#: the groups of configurations :func:`paradigm_gaps` compares with the PLM-based ones
GAP_GROUPS = {"n-gram": ("n-gram",), "static embedding": ("static embedding",)}


def paradigm_gaps(scores: pd.DataFrame, configs: pd.DataFrame, attribute: str = "gender", *,
                  n_resamples: int = 9999, seed: int = 0) -> pd.DataFrame:
    """Is the bias of the PLM-based configurations higher than that of the n-gram (and of the static-embedding)
    ones on ``attribute``? Per pair, the mean over each group's configurations of the Eq. 2 term (each configuration
    rescaled by its own Eq. 1; configurations with constant scores left out); the paired difference PLM − group
    over the same pairs, with its 95% bootstrap interval at the design's level (whole WinoBias twin clusters on
    gender, :mod:`metricbias.bias.clusters`) and verdict (:func:`metricbias.bias.claims.compare`)."""
    from ...bias import claims
    from ...bias.clusters import template_of

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
            row.update(difference=np.nan, ci_low=np.nan, ci_high=np.nan, verdict=NO_CONFIGURATION)
        else:
            c = claims.compare(plm.to_numpy(), other.to_numpy(), paired=True, n_resamples=n_resamples, seed=seed,
                               clusters=[template_of(p, attribute) for p in table_.index])
            row.update(difference=c["difference"], ci_low=c["ci_low"], ci_high=c["ci_high"], verdict=c["verdict"])
        rows.append(row)
    return pd.DataFrame(rows)


#: :func:`paradigm_gap_findings`' words for each verdict of :func:`paradigm_gaps`
GAP_WORDS = {"higher": "more biased than", "lower": "less biased than"}
#: the verdict on Sun et al.'s claim that PLM-based metrics are more biased, by the verdict of the paired gap
GAP_CLAIM = {"higher": "holds", "lower": "reverses"}


def paradigm_gap_findings(gaps: pd.DataFrame) -> dict:
    """Numbers of :func:`paradigm_gaps` for the landing page: per group (``ngram``, ``static``) the difference,
    its interval, ``<group>_words`` ("more biased than", "less biased than" or "not distinguishable at this size
    from") and ``<group>_verdict`` on the claim that PLM-based configurations are the more biased ("holds",
    "reverses" or not distinguishable)."""
    from ...bias.claims import UNDECIDED

    out = {}
    for r in gaps.to_dict("records"):
        key = "ngram" if r["comparison"].endswith("n-gram") else "static"
        out.update({f"{key}_difference": r["difference"], f"{key}_ci_low": r["ci_low"],
                    f"{key}_ci_high": r["ci_high"],
                    f"{key}_words": GAP_WORDS.get(r["verdict"], f"{UNDECIDED} from" if r["verdict"] == UNDECIDED
                                                  else r["verdict"]),
                    f"{key}_verdict": GAP_CLAIM.get(r["verdict"], UNDECIDED if r["verdict"] == UNDECIDED
                                                    else "not comparable")})
    return out


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


def counted_once(scores: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``scores`` without the (attribute, metric) cells whose scores equal an earlier configuration's on the same
    pairs (:func:`metricbias.bias.scores.identical_cells`: ROUGE-1 and ROUGE-L where the candidates differ in one
    token, say), so that an aggregate over configurations counts that function once; and the cells left out."""
    from ...bias.scores import identical_cells

    same = identical_cells(scores)
    if same.empty:
        return scores, same
    drop = pd.MultiIndex.from_frame(same[["attribute", "metric"]])
    keep = ~pd.MultiIndex.from_frame(scores[["attribute", "metric"]]).isin(drop)
    return scores[keep].reset_index(drop=True), same


def released_recomputed(live: pd.DataFrame, pair_ids) -> dict:
    """How many live (attribute, metric) cells recompute a released score column of the same pairs to float
    rounding (:func:`metricbias.bias.scores.identical_cells`, the released column first): ``cells`` (live cells of
    the metrics whose scores were released), ``recomputed`` (those equal to a released column, one function
    counted once), ``metrics`` (the metrics every cell of which is recomputed, "BLEU, ROUGE-1 and NIST"; "no
    metric") and ``released`` (every metric whose scores were released, by name)."""
    from ...bias.scores import identical_cells

    released = published.scores()
    released = released[released["pair_id"].isin(set(pair_ids))]
    released = released[released["metric"].isin(RELEASED_LABELS)].assign(dataset="released")
    ours = live[live["metric"].isin(set(RELEASED_LABELS.values()))].assign(dataset="live")
    cols = ["dataset", "attribute", "metric", "pair_id", "score_1", "score_2"]
    same = identical_cells(pd.concat([released[cols], ours[cols]], ignore_index=True))
    hit = same[(same["dataset"] == "live") & (same["same_as_dataset"] == "released")]
    cells = ours[["attribute", "metric"]].drop_duplicates()
    per_metric = cells.groupby("metric", sort=False).size()
    hits = hit.drop_duplicates(["attribute", "metric"]).groupby("metric").size()
    whole = [m for m, n in per_metric.items() if hits.get(m, 0) == n]
    return {"cells": len(cells), "recomputed": len(hit), "metrics": joined(whole, "no metric"),
            "released": joined(per_metric.index)}


def rank_agreement(released: pd.DataFrame, built: pd.DataFrame) -> pd.DataFrame:
    """Per attribute in both: Spearman correlation between the metrics' bias on the released and on the built pairs,
    with its 95% interval over the metrics (:func:`metricbias.bias.claims.spearman_interval`)."""
    from ...bias.claims import spearman_interval

    both = released.merge(built, on=["attribute", "metric"], suffixes=("_released", "_built"))
    rows = []
    for a, g in both.groupby("attribute", sort=True):
        rho = float(g["bias_released"].corr(g["bias_built"], method="spearman"))
        low, high = spearman_interval(rho, len(g))
        rows.append({"attribute": a, "metrics": len(g), "Spearman ρ": rho, "CI low": low, "CI high": high})
    return pd.DataFrame(rows, columns=["attribute", "metrics", "Spearman ρ", "CI low", "CI high"])


def rank_agreement_findings(agreement: pd.DataFrame) -> dict:
    """How the metrics' ranking on the built pairs follows the released one (:func:`rank_agreement`): the smallest
    and largest Spearman correlation (``rho_min``, ``rho_max``) over the ``attributes`` in both sets, and for how
    many (``positive``, named in ``positive_names``, or "none"; ``positive_phrase``: "all 6 attributes", "4 of the 6
    attributes (age, …)", :func:`.names.of_all`) the lower end of the 95% interval lies above zero."""
    defined = agreement.dropna(subset=["CI low"])
    positive = defined[defined["CI low"] > 0]
    return {"rho_min": float(agreement["Spearman ρ"].min()) if len(agreement) else float("nan"),
            "rho_max": float(agreement["Spearman ρ"].max()) if len(agreement) else float("nan"),
            "attributes": len(agreement), "positive": len(positive),
            "positive_names": ", ".join(positive["attribute"]).replace("_", " ") or "none",
            "positive_phrase": of_all([a.replace("_", " ") for a in positive["attribute"]],
                                      [a.replace("_", " ") for a in agreement["attribute"]], "attributes")}


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


def backbones_summary(live: pd.DataFrame | None = None, configs: pd.DataFrame | None = None,
                      released: pd.DataFrame | None = None, *, profile: str = "offline", n_resamples: int = 0,
                      seed: int = 0) -> dict:
    """Chapter 3's headline numbers: where the live configurations of ``profile`` fall against the released ones
    (Figure 4) and the gender ranges of each group. The shares of the variance that paradigm, backbone and family
    explain on the released configurations are :func:`.ch3_paradigm_claim.released_shares` (one reading).

    ``live`` (bias of the live configurations on the released pairs), ``configs``
    (:func:`metricbias.metrics.configurations`) and ``released`` (:func:`released_bias` on the same pairs)
    are computed when omitted: every released pair, every configuration of ``profile`` (scores cached).
    """
    if live is None or configs is None:
        from ... import profiles
        from ...scoring import score_metrics

        specs = profiles.suite(profile)
        configs = configurations(specs)
        from ...bias.scores import drop_identical

        scores, merged = drop_identical(score_metrics(datasets.load("published"), specs, progress=False))
        configs = configs[~configs["metric"].isin(merged["metric"])]
        live = pairwise.bias_table(scores, n_resamples=n_resamples, seed=seed)
    if released is None:  # live on every released pair
        released = released_bias(published.pairs()["pair_id"], n_resamples=n_resamples, seed=seed)
    points = figure4_points(released, live, configs)
    positions = live_positions(points)
    ranges = gender_ranges(live, configs)
    return {"live_configurations": len(positions),
            "live_outside_released_range": int((positions["position"] != "inside").sum()),
            "gender_plm_min": ranges["plm_min"], "gender_plm_max": ranges["plm_max"],
            "gender_surface_min": ranges["surface_min"], "gender_surface_max": ranges["surface_max"],
            "gender_ngram_min": ranges["ngram_min"], "gender_ngram_max": ranges["ngram_max"],
            "gender_static_min": ranges["static_min"], "gender_static_max": ranges["static_max"]}
