"""Liu (2024), *Robust evaluation measures for evaluating social biases in masked language models*: Table 2
(SSS/CPS, AUL, KLS and JSS of three masked LMs) beside the same measures computed here (chapter 4).

* :func:`table2`: Liu's Table 2 as printed, its numbers in columns marked " (paper)";
* :func:`masked_lms`: the masked LMs with a trained MLM head that resolve on this
  machine, and why every other encoder does not;
* :func:`pll_scores`, :func:`table2_from_scores`, :func:`pll_table2`: every pair's PLL scores, and Table 2's
  columns computed from them with :mod:`metricbias.bias.pll` for those models (SSS and AUL on StereoSet, CPS and
  AUL on CrowS-Pairs; KLS and JSS on AUL, as Liu reports them);
* :func:`measured_models`: which masked LMs the chapter measures
  (:mod:`metricbias.book.reproduction.liu_table2` puts them side by side, with intervals).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...bias.pll import RUNS as _pll_runs
from ...cache import cached_result
from ..display import label
from .names import part_name, share
from .tables import table
from .notes import interval_text

PAPER = " (paper)"
#: Liu's runs: dataset -> (pair loader name in metricbias.bias.pll, (baseline method, "aul")), from ``pll.RUNS``
RUNS = {label: (loader, _pll_runs[loader]) for label, loader in (("StereoSet", "stereoset"),
                                                                 ("CrowS-Pairs", "crows_pairs"))}
#: Table 2's number columns -> how the book labels them
COLUMNS = {"baseline_value": "baseline", "aul": "AUL", "kls": "KLS", "jss": "JSS"}


def table2() -> pd.DataFrame:
    """Liu's Table 2: dataset, model, baseline measure (SSS or CPS) and the four numbers, marked as the paper's."""
    t = table("liu2024_table2").rename(columns={"baseline_measure": "baseline measure"})
    return t.rename(columns={c: f"{label}{PAPER}" for c, label in COLUMNS.items()})


def masked_lms(device: str = "auto") -> tuple[list, dict[str, str]]:
    """(masked LMs that load with a trained MLM head, {backbone name: why it cannot be used}) on this machine.

    The candidates are the masked-LM heads trained here on the frozen encoders (``mlm-*``, shipped
    under ``models/``) and the encoders themselves (a hub masked LM in the cache has its own head).
    """
    from ... import backbones
    from ...bias import pll

    loaded, unavailable = [], {}
    for name in backbones.available():
        if backbones.BACKBONES[name].kind not in ("mlm", "encoder"):
            continue
        try:
            loaded.append(pll.load_masked_lm(name, device=device))
        except backbones.BackboneError:
            unavailable[name] = "no trained masked-LM head"
        except FileNotFoundError:
            unavailable[name] = "not installed here"
    return loaded, unavailable


def pll_scores(lms, *, sample_size: int = 0, seed: int = 0, progress: bool = False, cache=True) -> pd.DataFrame:
    """Every pair's PLL scores behind Table 2, for each masked LM in ``lms``: columns ``dataset, model, pair,
    bias_type, method, score_st, score_at`` (SSS and AUL on StereoSet, CPS and AUL on CrowS-Pairs).

    ``sample_size`` > 0 draws that many pairs of each dataset (seeded). ``cache`` is
    :func:`metricbias.bias.pll.score_sentence_pairs`'s: by default the sentences' scores are stored in the score cache.
    """
    from ...bias import pll

    frames = []
    for lm in lms:
        for dataset, (loader, methods) in RUNS.items():
            pairs = pll.drawn_pairs(loader, sample_size, seed)
            scored = pll.score_sentence_pairs(lm, pairs, methods=methods, progress=progress, cache=cache)
            frames.append(scored.assign(dataset=dataset, model=lm.name))
    columns = ["dataset", "model", "pair", "bias_type", "method", "score_st", "score_at"]
    return pd.concat(frames, ignore_index=True)[columns] if frames else pd.DataFrame(columns=columns)


def table2_from_scores(scores: pd.DataFrame) -> pd.DataFrame:
    """Table 2's columns from :func:`pll_scores`, one row per (masked LM, dataset): baseline (SSS or CPS) and AUL
    indicators, KLS and JSS on AUL, and the number of pairs."""
    from ...bias import pll

    rows = []
    for (dataset, model), block in scores.groupby(["dataset", "model"], sort=False):
        methods = RUNS[dataset][1]
        result = pll.bias_table(block)
        overall = result[result["bias_type"] == "all"].set_index("method")
        rows.append({"dataset": dataset, "model": model, "baseline measure": methods[0].upper(),
                     "baseline": overall.loc[methods[0], "indicator"], "AUL": overall.loc["aul", "indicator"],
                     "KLS": overall.loc["aul", "kls"], "JSS": overall.loc["aul", "jss"],
                     "n_pairs": int(overall.loc["aul", "n_pairs"])})
    return pd.DataFrame(rows, columns=["dataset", "model", "baseline measure", "baseline", "AUL", "KLS", "JSS",
                                       "n_pairs"])


def pll_table2(lms, *, sample_size: int = 0, seed: int = 0, progress: bool = False, cache=True) -> pd.DataFrame:
    """Table 2's columns for each masked LM in ``lms`` (:func:`table2_from_scores` of :func:`pll_scores`)."""
    return table2_from_scores(pll_scores(lms, sample_size=sample_size, seed=seed, progress=progress, cache=cache))


def measured_models(lms) -> str:
    """The masked LMs chapter 4 measures, as a list of names in words (:func:`~.names.part_name`: "MiniLM
    masked-LM head"); "none" when no head is available."""
    return ", ".join(part_name(lm.name) for lm in lms) or "none"


# --- JSS as the author's released code computes it -------------------------------------------------
#: :func:`metricbias.bias.distributional.jss_variants` columns -> how chapter 4 labels them
JSS_VARIANT_COLUMNS = {"attribute": "attribute", "metric": "metric", "jss_paper": "JSS (Eq. 9)",
                       "jss_author_code": "JSS (author's code)", "difference": "difference",
                       "js_bits": "JS, bits (exact mixture)", "js_nats_author_code": "JS, nats (one Gaussian)",
                       "delta_sigma": "Δσ"}


def jss_variant_table(variants: pd.DataFrame, n: int = 8, also=(("gender", "BERTScore-RoBERTa-large"),)) -> pd.DataFrame:
    """The ``n`` cells of a :func:`~metricbias.bias.distributional.jss_variants` table where the two JSS differ most,
    then the cells named in ``also`` (attribute, metric) when present, labelled for the page."""
    top = variants.reindex(variants["difference"].abs().sort_values(ascending=False).index).head(n)
    extra = variants[[(a, m) in set(also) for a, m in zip(variants["attribute"], variants["metric"])]]
    rows = pd.concat([top, extra[~extra.index.isin(top.index)]])
    return rows[list(JSS_VARIANT_COLUMNS)].rename(columns=JSS_VARIANT_COLUMNS).reset_index(drop=True)


def jss_variant_findings(variants: pd.DataFrame, cell=("gender", "BERTScore-RoBERTa-large")) -> dict:
    """Chapter 4's numbers on the two JSS: the largest difference and its cell, the difference in ``cell``, how
    many cells the author's code puts higher, and the largest JS in nats and Δσ (the min/max fold changes a value
    only above 1)."""
    d = variants["difference"]
    top = variants.loc[d.abs().idxmax()]
    higher = int((d > 0).sum())
    out = {"cells": len(variants), "author_higher": higher,
           "author_higher_words": share(higher, len(variants), "cells", "all {n} {noun}"),
           "max_difference": float(top["difference"]),
           "max_attribute": top["attribute"], "max_metric": top["metric"], "max_paper": float(top["jss_paper"]),
           "max_author": float(top["jss_author_code"]), "median_difference": float(d.abs().median()),
           "max_js_nats": float(variants["js_nats_author_code"].max()),
           "max_delta_sigma": float(variants["delta_sigma"].max())}
    named = variants[(variants["attribute"] == cell[0]) & (variants["metric"] == cell[1])]
    r = named.iloc[0] if len(named) else {"jss_paper": np.nan, "jss_author_code": np.nan, "difference": np.nan}
    out.update(cell_paper=float(r["jss_paper"]), cell_author=float(r["jss_author_code"]),
               cell_difference=float(r["difference"]))  # NaN where the chapter runs without that cell
    return out


def _paired_taus(stability: pd.DataFrame, panel: str) -> pd.DataFrame:
    """Kendall τ of ``panel``, one row per subsample (rate, seed) and one column per measure, draws that miss a
    measure left out: every measure is computed on the same draws, so the columns pair row by row."""
    return stability[stability["attribute"] == panel].pivot_table(index=["rate", "seed"], columns="measure",
                                                                  values="kendall_tau").dropna()


def stability_comparison(stability: pd.DataFrame, panel: str = "all", *, n_resamples: int = 9999,
                         seed: int = 0, replicates: pd.DataFrame | None = None) -> pd.DataFrame:
    """The measure whose ranking keeps the highest mean Kendall τ on ``panel`` against each other measure, paired
    over the same subsamples (every measure is computed on the same draws, rate and seed): the difference of τ with
    its 95% interval and the verdict ("higher", "lower" or "not distinguishable at this size"). With
    ``replicates`` (:func:`pair_bootstrap`) the interval covers the sampling of the pairs (:func:`pair_interval`);
    without, only the error of the subsamples (:func:`metricbias.bias.claims.compare`, bootstrap over the draws).
    ``stability``: :func:`metricbias.bias.robustness.ranking_stability`."""
    wide = _paired_taus(stability, panel)
    if wide.empty or wide.shape[1] < 2:
        return pd.DataFrame(columns=["panel", "best", "other", "draws", "difference", "ci_low", "ci_high", "verdict"])
    best = wide.mean().idxmax()
    rows = []
    reps = None if replicates is None else _replicate_taus(replicates, panel)
    for other in wide.columns.drop(best):
        c = _paired_difference(wide, best, other, reps, n_resamples=n_resamples, seed=seed)
        rows.append({"panel": panel, "best": best, "other": other, "draws": len(wide), "difference": c["difference"],
                     "ci_low": c["ci_low"], "ci_high": c["ci_high"], "verdict": c["verdict"]})
    return pd.DataFrame(rows)


#: Liu's claim: these measures rank more stably under subsampling than :data:`LIU_BASELINE`
LIU_MEASURES = ("kls", "jss")
LIU_BASELINE = "indicator"
#: :func:`metricbias.bias.claims.compare`'s verdict on "measure minus the indicator" -> what the page says of it
STABILITY_WORDS = {"higher": "more stable than the indicator", "lower": "less stable than the indicator"}


def resample_pairs(scores: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """One pair-bootstrap replicate of a long score table (``published.scores()`` layout): per attribute, as many
    pairs as it has, drawn with replacement, every metric's scores of a pair moving together; a pair drawn twice
    becomes two pairs (``pair_id`` ``<attribute>#<k>``)."""
    ids = scores[["attribute", "pair_id"]].drop_duplicates()
    drawn = []
    for attribute, block in ids.groupby("attribute", sort=False):
        picked = rng.choice(block["pair_id"].to_numpy(), size=len(block), replace=True)
        drawn.append(pd.DataFrame({"attribute": attribute, "pair_id": picked,
                                   "new_id": [f"{attribute}#{k}" for k in range(len(picked))]}))
    out = pd.concat(drawn, ignore_index=True).merge(scores, on=["attribute", "pair_id"])
    return out.drop(columns="pair_id").rename(columns={"new_id": "pair_id"})[list(scores.columns)]


@cached_result("liu2024.pair_bootstrap")
def pair_bootstrap(scores: pd.DataFrame, *, rates, n_replicates: int = 50, seed: int = 0) -> pd.DataFrame:
    """The robustness study repeated on ``n_replicates`` pair-bootstrap replicates of ``scores``
    (:func:`resample_pairs`), one subsample per rate each (:func:`metricbias.bias.robustness.ranking_stability`
    with one seed): per replicate, panel (attribute, and ``all``) and measure, the mean Kendall τ over the rates
    (columns ``replicate, panel, measure, tau``). Its spread is the sampling error of the pairs, plus that of the
    few subsamples, which :func:`pair_interval` removes."""
    from ...bias import robustness

    rng = np.random.default_rng(seed)
    frames = []
    for b in range(n_replicates):
        draws = robustness.ranking_stability(resample_pairs(scores, rng), rates=list(rates), n_seeds=1,
                                             seed=int(rng.integers(2**31)), cache=False)
        frames.append(draws.groupby(["attribute", "measure"], sort=False)["kendall_tau"].mean().reset_index()
                      .rename(columns={"attribute": "panel", "kendall_tau": "tau"}).assign(replicate=b))
    columns = ["replicate", "panel", "measure", "tau"]
    return pd.concat(frames, ignore_index=True)[columns] if frames else pd.DataFrame(columns=columns)


def _replicate_taus(replicates: pd.DataFrame, panel: str) -> pd.DataFrame:
    """:func:`pair_bootstrap`'s mean τ on ``panel``, one row per replicate and one column per measure."""
    return replicates[replicates["panel"] == panel].pivot(index="replicate", columns="measure", values="tau")


def pair_interval(differences: pd.Series, replicates: pd.Series, confidence: float = 0.95) -> tuple[float, float]:
    """The normal interval of the mean paired τ difference ``differences`` (one value per subsample, indexed by
    ``rate`` and ``seed``) that covers the sampling of the pairs: its variance is that of the pair-bootstrap
    replicates (``replicates``, :func:`pair_bootstrap`, one subsample per rate each) less their subsampling share
    (the within-rate variance of ``differences`` over the rates squared), plus the subsampling variance of the
    mean itself."""
    from scipy import stats

    by_rate = differences.groupby(level="rate")
    within = by_rate.var(ddof=1).fillna(0.0)
    n = by_rate.size()
    replicate_noise = float(within.sum()) / len(within) ** 2
    own_noise = float((n * within).sum()) / float(n.sum()) ** 2
    pairs = max(float(np.var(replicates, ddof=1)) - replicate_noise, 0.0)
    half = stats.norm.ppf(0.5 + confidence / 2) * np.sqrt(pairs + own_noise)
    mean = float(differences.mean())
    return float(mean - half), float(mean + half)


def _paired_difference(wide: pd.DataFrame, first: str, second: str, reps: pd.DataFrame | None, *,
                       n_resamples: int, seed: int) -> dict:
    """Mean τ of ``first`` minus ``second`` over the paired subsamples of ``wide`` (:func:`_paired_taus`), with
    its 95% interval: :func:`pair_interval` on the replicates ``reps`` (:func:`_replicate_taus`), or the bootstrap
    over the subsamples without them; ``verdict`` "higher", "lower" or "not distinguishable at this size"."""
    from ...bias import claims

    if reps is None:
        return claims.compare(wide[first].to_numpy(), wide[second].to_numpy(), paired=True, n_resamples=n_resamples,
                              seed=seed)
    low, high = pair_interval(wide[first] - wide[second], reps[first] - reps[second])
    return {"difference": float((wide[first] - wide[second]).mean()), "ci_low": low, "ci_high": high,
            "verdict": "higher" if low > 0 else "lower" if high < 0 else claims.UNDECIDED}


def liu_claim(stability: pd.DataFrame, panel: str = "all", *, n_resamples: int = 9999, seed: int = 0,
              replicates: pd.DataFrame | None = None) -> dict:
    """The direct test of Liu's claim that KLS and JSS rank more stably than the indicator measure: on ``panel``,
    each one's Kendall τ minus the indicator's, paired over the same subsamples (:func:`_paired_taus`). With
    ``replicates`` (:func:`pair_bootstrap`) its 95% interval covers the sampling of the pairs
    (:func:`pair_interval`); without, only the error of the subsamples
    (:func:`metricbias.bias.claims.compare`, ``paired=True``). Returns ``draws`` and, per measure (``kls_``,
    ``jss_``), ``difference``, ``ci_low``, ``ci_high``, ``stability`` (:data:`STABILITY_WORDS`, else
    "not distinguishable from the indicator at this size") and ``claim`` (the claim for that measure: holds,
    reverses or not distinguishable at this size: :func:`metricbias.bias.claims.claim_verdict`), and the claim's
    ``verdict`` for both (:func:`metricbias.bias.claims.joint_verdict`: holds or reverses when both do).
    ``stability``: :func:`metricbias.bias.robustness.ranking_stability`."""
    from ...bias import claims

    wide = _paired_taus(stability, panel)
    missing = [m for m in (*LIU_MEASURES, LIU_BASELINE) if m not in wide.columns]
    if missing or len(wide) < 2:
        raise ValueError(f"liu_claim: panel {panel!r} needs at least two subsamples with τ for "
                         f"{', '.join((*LIU_MEASURES, LIU_BASELINE))}; missing: {', '.join(missing) or 'draws'}")
    reps = None if replicates is None else _replicate_taus(replicates, panel)
    if reps is not None and len(reps) < 2:
        raise ValueError(f"liu_claim: the pair bootstrap needs at least two replicates, got {len(reps)}")
    out, verdicts = {"draws": len(wide), "replicates": 0 if reps is None else len(reps)}, []
    for m in LIU_MEASURES:
        c = _paired_difference(wide, m, LIU_BASELINE, reps, n_resamples=n_resamples, seed=seed)
        verdicts.append(claims.claim_verdict(c["ci_low"], c["ci_high"]))
        out.update({f"{m}_difference": c["difference"], f"{m}_ci_low": c["ci_low"], f"{m}_ci_high": c["ci_high"],
                    f"{m}_claim": verdicts[-1],
                    f"{m}_stability": STABILITY_WORDS.get(c["verdict"],
                                                          "not distinguishable from the indicator at this size")})
    return {**out, "verdict": claims.joint_verdict(verdicts)}


def stability_findings(comparison: pd.DataFrame) -> dict:
    """Chapter 4's numbers on :func:`stability_comparison` of one panel: the measure with the highest mean τ, the
    draws, each other measure's difference with its interval (a list), and how many others it is shown more stable
    than. Liu's claim itself is tested by :func:`liu_claim`."""
    if comparison.empty:
        return {"best": "none", "draws": 0, "differences": "none", "beaten": 0, "others": 0,
                "beaten_words": "none of the others"}
    r0 = comparison.iloc[0]
    beaten = set(comparison.loc[comparison["verdict"] == "higher", "other"])
    return {"best": label(r0["best"]), "draws": int(r0["draws"]),
            "differences": "; ".join(f"{label(r['other'])} {interval_text({**r, 'confidence': 0.95}, 3)}"
                                     for r in comparison.to_dict("records")),
            "beaten": len(beaten), "others": len(comparison),
            "beaten_words": share(len(beaten), len(comparison), "others")}


def stability_panels(stability: pd.DataFrame, *, n_resamples: int = 9999, seed: int = 0,
                     replicates: pd.DataFrame | None = None) -> pd.DataFrame:
    """:func:`stability_comparison` on every panel (attribute, and ``all``) of ``stability``, one table (with
    ``replicates``, :func:`pair_bootstrap`, intervals over the pairs)."""
    panels = list(dict.fromkeys(stability["attribute"]))
    return pd.concat([stability_comparison(stability, p, n_resamples=n_resamples, seed=seed, replicates=replicates)
                      for p in panels], ignore_index=True)


def stability_panels_findings(comparisons: pd.DataFrame) -> dict:
    """In how many panels the measure with the highest mean τ is shown more stable than every other measure by the
    paired intervals of :func:`stability_panels`, and those panels (``panel (measure)``; "none" when empty)."""
    if comparisons.empty:
        return {"shown": 0, "panels": 0, "shown_list": "none"}
    shown = comparisons.assign(won=comparisons["verdict"] == "higher").groupby("panel", sort=False)["won"].all()
    best = comparisons.drop_duplicates("panel").set_index("panel")["best"]
    return {"shown": int(shown.sum()), "panels": len(shown),
            "shown_list": ", ".join(f"{label(p)} ({label(best[p])})" for p in shown.index[shown]) or "none"}


__all__ = ["COLUMNS", "JSS_VARIANT_COLUMNS", "LIU_BASELINE", "LIU_MEASURES", "RUNS", "STABILITY_WORDS",
           "liu_claim", "measured_models", "pair_bootstrap", "pair_interval", "resample_pairs", "jss_variant_findings",
           "jss_variant_table", "masked_lms", "pll_scores", "pll_table2", "stability_comparison", "stability_panels",
           "stability_findings", "stability_panels_findings",
           "table2", "table2_from_scores"]
