"""Chapter 3: bias against quality: each configuration's bias beside how well it rates (WMT19 DARR,
STS-B), and the paradigm gap at matched quality.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...metrics import metric_class
from ..training_data import QUALITY_REFERENCE
from .ch3_paradigms import paradigm_gaps
from .notes import interval_text


#: the configuration whose quality is the bar (the metric the trained parts' quality is set beside, by its label):
#: a finding from a configuration below it rests on a weak metric
REFERENCE_LABEL = metric_class(QUALITY_REFERENCE).label_for({})
#: the quality measures of :func:`metricbias.metaeval.quality.configuration_quality`, as the page names them
QUALITY_MEASURES = {"darr_tau": "WMT19 kk-en DARR Kendall-like τ", "stsb_r": "STS-B dev Pearson r"}


def quality_points(bias: pd.DataFrame, configs: pd.DataFrame, quality: pd.DataFrame,
                   reference: str = REFERENCE_LABEL) -> pd.DataFrame:
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


def quality_table(points: pd.DataFrame, reference: str = REFERENCE_LABEL) -> pd.DataFrame:
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
    from ...bias.claims import spearman_interval

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
        configurations=f"at least {REFERENCE_LABEL}")
    return pd.concat([every, kept], ignore_index=True)


def generation_quality_sentence(points: pd.DataFrame, reference: str = REFERENCE_LABEL) -> str:
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
        text += (f"{who} below {reference} ({'; '.join(gaps)}). A metric below {reference}'s quality is not used, so "
                 "no conclusion about the generation paradigm is drawn from the generation rows, in this comparison or in the "
                 "fixed-backbone decomposition.")
    else:
        text += f"Every generation configuration is at least as good as {reference} on both measures."
    return text


def quality_sentence(points: pd.DataFrame, gaps: pd.DataFrame, correlations: pd.DataFrame,
                     reference: str = REFERENCE_LABEL) -> str:
    """Chapter 3's paradigm finding restated with quality in view (Markdown): how many configurations are at least
    as good as ``reference``, the PLM-based gap over all configurations and over those, and whether the average
    bias follows quality."""
    from ...bias.claims import UNDECIDED

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
