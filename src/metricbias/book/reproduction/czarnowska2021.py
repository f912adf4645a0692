"""Czarnowska et al. (2021), *Quantifying Social Biases in NLP: A Generalization and Empirical Comparison of
Extrinsic Fairness Metrics*: Sun et al.'s Eq. 2 as one of their generalized measures (chapter 4).

* :func:`eq2_identity`: Eq. 2 and the stereotypical difference of Sun et al.,
  computed directly and as the counterfactual PCM with d = |x − y| and d = x − y,
  on every (attribute, metric) cell of a score table; the largest gaps;
* :func:`instances`: the instances of the framework that chapter 4 computes on
  the same pairs, as (measure, version, φ, d) with d's formula;
* :func:`top_separation`: whether the metric with the largest Eq. 2 (or the largest |stereotypical difference|) of
  an attribute is separated from the runner-up (a paired interval over the same pairs); :func:`top_agreement`:
  whether the two measures' separated tops differ.
"""

from __future__ import annotations

import pandas as pd

from ...bias import generalized, pairwise
from ...bias.scores import cells
from ..display import label


#: the largest difference two computations of one value may show from float rounding alone (scores in [0, 100])
ROUNDING = 1e-9


def eq2_identity(scores: pd.DataFrame) -> dict:
    """Eq. 2 vs the counterfactual PCM (d = |x − y|) and the stereotypical difference vs the signed PCM.

    Returns ``cells`` (number of (attribute, metric) cells), the largest absolute
    differences ``gap_abs`` and ``gap_signed`` over those cells (0 up to float rounding), and ``verdict``: "holds"
    when both are within float rounding (:data:`ROUNDING`), else "reverses" (the identity fails); ``abs_agreement``
    and ``signed_agreement`` say each gap as a phrase (:func:`agreement_phrase`) and ``identities`` the verdict as
    the verb of "both identities hold".
    """
    gap_abs = gap_signed = 0.0
    n = 0
    for _, g in cells(scores):
        data = generalized.from_pairs(g["score_1"], g["score_2"])
        pcm_abs = generalized.pcm(data, phi="rescaled", d="abs")
        pcm_signed = generalized.pcm(data, phi="rescaled", d="signed")
        gap_abs = max(gap_abs, abs(pairwise.absolute_bias(g["score_1"], g["score_2"]) - pcm_abs))
        gap_signed = max(gap_signed, abs(pairwise.stereotypical_difference(g["score_1"], g["score_2"]) - pcm_signed))
        n += 1
    verdict = "holds" if n and max(gap_abs, gap_signed) <= ROUNDING else ("reverses" if n else "not comparable")
    return {"cells": n, "gap_abs": float(gap_abs), "gap_signed": float(gap_signed), "verdict": verdict,
            "abs_agreement": agreement_phrase(gap_abs), "signed_agreement": agreement_phrase(gap_signed),
            "identities": {"holds": "hold", "reverses": "fail"}.get(verdict, "cannot be checked")}


def agreement_phrase(gap: float) -> str:
    """How two computations of one value agree, for a sentence: "agree to every printed digit" when their largest
    difference is 0, otherwise "differ by at most <gap>" with the gap in two significant digits ("1.4e-14")."""
    return "agree to every printed digit" if gap == 0 else f"differ by at most {gap:.2g}"


def instances(names=None) -> pd.DataFrame:
    """The paired instances of the framework (:data:`generalized.PAIRED_INSTANCES`) with d's formula."""
    chosen = generalized.PAIRED_INSTANCES if names is None else {n: generalized.PAIRED_INSTANCES[n] for n in names}
    rows = [{"column": name, "measure": measure, "version": version, "phi": phi, "d": d,
             "d formula": generalized.COMPARISONS[d].formula}
            for name, (measure, version, phi, d) in chosen.items()]
    return pd.DataFrame(rows)


#: how a page names the paired instances of the framework and their scoring functions φ
INSTANCE_NAMES = {"eq2": "Eq. 2", "stereotypical": "stereotypical difference", "group_abs": "group |x − y|",
                  "group_w1": "group W1", "group_mwu": "group Mann–Whitney",
                  "counterfactual_mwu": "counterfactual Mann–Whitney"}
PHI_NAMES = {"rescaled": "Eq. 1 score", "rescaled_set": "Eq. 1 scores, as a set", "set": "scores, as a set",
             "mean": "mean score"}


def instance_table() -> pd.DataFrame:
    """:func:`instances` as a page shows it: each instance, its measure, version, φ and d in words."""
    t = instances()
    return pd.DataFrame({"instance": t["column"].map(INSTANCE_NAMES), "measure": t["measure"],
                         "version": t["version"], "φ": t["phi"].map(PHI_NAMES), "d": t["d formula"]})


__all__ = ["INSTANCE_NAMES", "PHI_NAMES", "agreement_phrase", "eq2_identity", "instance_table", "instances"]


def signed_term_table(scores: pd.DataFrame, attribute: str) -> pd.DataFrame:
    """The per-pair terms Ŝ_1 − Ŝ_2 of the stereotypical difference (App. E) of every metric on ``attribute``, laid
    out as :func:`metricbias.book.reproduction.ch1_published.pair_term_table` lays out Eq. 2's |Ŝ_1 − Ŝ_2|: one
    column per metric (its own Eq. 1 rescaling), one row per pair; metrics with constant scores are left out."""
    import warnings

    import numpy as np

    from ...bias.pairwise import ConstantScoresWarning

    kept = scores[scores["attribute"] == attribute]
    columns = {}
    for metric, g in kept.groupby("metric", sort=False):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConstantScoresWarning)  # the bias tables already warn about these
            d = pairwise.pair_terms(g["score_1"], g["score_2"], signed=True, metric=metric, attribute=attribute)
        if np.isfinite(d).all():
            columns[metric] = pd.Series(d, index=g["pair_id"].to_numpy())
    return pd.DataFrame(columns)


def top_separation(scores: pd.DataFrame, *, signed: bool = False, n_resamples: int = 9999,
                   seed: int = 0) -> pd.DataFrame:
    """Per attribute of a long score table: the metrics with the largest and the second largest Eq. 2, and their
    paired difference over the same pairs (per-pair Eq. 2 terms, each metric rescaled by its own Eq. 1) with its 95%
    bootstrap interval and verdict (:func:`metricbias.bias.claims.compare`; "higher": the top place is shown).

    ``signed``: the same for the size of the stereotypical difference, |mean(Ŝ_1 − Ŝ_2)|: each metric's signed
    per-pair terms are turned by the sign of their mean, so that the paired difference of the means is
    |top| − |runner-up| and the pairs are resampled as under Eq. 2."""
    import numpy as np

    from ...bias import claims
    from .ch1_published import pair_term_table

    rows = []
    for attribute in dict.fromkeys(scores["attribute"]):
        terms = signed_term_table(scores, attribute) if signed else pair_term_table(scores, attribute)
        if terms.shape[1] < 2:
            continue
        terms = terms * np.sign(terms.mean()).replace(0.0, 1.0)
        top, second = terms.mean().sort_values(ascending=False).index[:2]
        c = claims.compare(terms[top].to_numpy(), terms[second].to_numpy(), paired=True, n_resamples=n_resamples,
                           seed=seed)
        rows.append({"attribute": attribute, "top": top, "runner-up": second, "difference": c["difference"],
                     "ci_low": c["ci_low"], "ci_high": c["ci_high"],
                     "separated": bool(c["verdict"] == "higher" and np.isfinite(c["ci_low"]))})
    return pd.DataFrame(rows, columns=["attribute", "top", "runner-up", "difference", "ci_low", "ci_high",
                                       "separated"])


def top_agreement(eq2: pd.DataFrame, signed: pd.DataFrame) -> dict:
    """Do Eq. 2 and the stereotypical difference name a different most biased metric once each top place is tested
    against its runner-up (two :func:`top_separation` tables, ``signed=False`` and ``signed=True``)?

    ``tested_differs``: attributes where both top places are separated and the two tops differ; ``both_separated``:
    attributes where both are separated; ``point_differs``: attributes where the tops differ as point values;
    ``signed_separated``: attributes where the signed top is separated; ``verdict``: "shown" when the tops differ
    in at least one attribute where both are separated, "not shown" when both are separated somewhere but never
    differ there, "not tested" when no attribute separates both (the tops then differ only as point values)."""
    m = eq2.merge(signed, on="attribute", suffixes=("_eq2", "_signed"))
    both = m["separated_eq2"] & m["separated_signed"]
    differ = m["top_eq2"] != m["top_signed"]
    return {"tested_differs": int((both & differ).sum()), "both_separated": int(both.sum()),
            "point_differs": int(differ.sum()), "signed_separated": int(m["separated_signed"].sum()),
            "attributes": len(m),
            "verdict": "shown" if (both & differ).any() else "not shown" if both.any() else "not tested"}


def top_separation_findings(separation: pd.DataFrame) -> dict:
    """Chapter 4's numbers on :func:`top_separation`: in how many attributes the most biased metric (Eq. 2) is
    separated from the runner-up, and the two lists (``attribute: metric``; "none" when empty)."""
    kept = separation[separation["separated"]]
    rest = separation[~separation["separated"]]
    return {"separated": len(kept), "attributes": len(separation),
            "separated_list": ", ".join(f"{label(r.attribute)}: {r.top}" for r in kept.itertuples()) or "none",
            "rest_list": ", ".join(f"{label(r['attribute'])}: {r['top']} against {r['runner-up']}"
                                   for r in rest.to_dict("records")) or "none"}
