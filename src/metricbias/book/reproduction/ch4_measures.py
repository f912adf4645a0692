"""Several bias measures on the same paired scores, side by side (chapter 4).

* :func:`measure_grid`: the framework's paired instances (Eq. 2, the stereotypical
  difference, group PCMs) and Liu's measures in one table per (attribute, metric);
* :func:`agreement`: how far the measures rank the cells alike (Spearman), and
  whether Eq. 2 and the stereotypical difference name the same most biased metric;
* :func:`normality`: how often both candidate sets pass Shapiro–Wilk, the
  assumption behind KLS and JSS;
* :func:`stability_findings`: what the robustness study under subsampling finds;
* :func:`elsewhere`: how a "shown in k of n" sentence ends, so that "elsewhere" appears only when there is one;
* :func:`headline_findings`: chapter 4's headline numbers, from the frames the
  chapter computes.

Every function returns plain Python numbers and strings, ready for a page's prose.
"""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from ...bias import robustness
from ..display import label

#: the measures compared across cells: framework instances, then Liu's
MEASURE_COLUMNS = ["eq2", "group_abs", "group_w1", "stereotypical", "group_mwu", "counterfactual_mwu", "indicator",
                   "kls", "jss"]


def count_list(values: Iterable, *, bold: bool = False) -> str:
    """``"a (3), b (1)"``: each distinct value with its count, most frequent first (ties in order of appearance)."""
    counts = pd.Series(list(values), dtype=object).value_counts(sort=True)
    fmt = "**{}** ({})" if bold else "{} ({})"
    return ", ".join(fmt.format(v, int(n)) for v, n in counts.items())


def counted(parts, *, empty: str = "none") -> str:
    """Counts in a list, the zero ones left out: ``[("above 50 for", 3, ""), ("below 50 for", 1, "AUL …"),
    ("across 50 for", 0, "")]`` -> "above 50 for 3 and below 50 for 1 (AUL …)" (a non-empty note in
    parentheses); ``empty`` when every count is 0."""
    kept = [f"{phrase} {n}" + (f" ({note})" if note else "") for phrase, n, note in parts if n]
    return ", ".join(kept[:-1]) + " and " + kept[-1] if len(kept) > 1 else (kept[0] if kept else empty)


def elsewhere(shown: int, total: int, clause: str) -> str:
    """How a count sentence ends ("… in 5 of 7 panels (…)" + this): "; elsewhere <clause>." when some but not all
    of the ``total`` cases are ``shown``, else "." (in all of them, or in none, there is no "elsewhere")."""
    return f"; elsewhere {clause}." if 0 < shown < total else "."


def chapter_attributes(attributes, released, counterfactual, groups: dict) -> tuple[list[str], dict]:
    """Chapter 4's ``attributes`` parameter (None: all; "a,b" or a list) as (released attributes, {counterfactual
    attribute: protected groups}).

    ``released``: the attributes with released scores; ``counterfactual``: the chapter's default multi-group sets;
    ``groups``: every configured set (``datasets.counterfactuals.config()``), so that a named attribute with a
    set there is measured even when it is not a default.
    """
    if attributes is None:
        return list(released), {a: groups[a] for a in counterfactual}
    chosen = [a.strip() for a in attributes.split(",") if a.strip()] if isinstance(attributes, str) else list(attributes)
    unknown = [a for a in chosen if a not in released and a not in groups]
    if unknown:
        raise ValueError(f"attributes={unknown}: this chapter measures the released attributes ({', '.join(released)}) "
                         f"and the multi-group sets of data/counterfactuals.yml ({', '.join(groups)}); add an entry "
                         "there to measure a new attribute")
    kept = [a for a in chosen if a in released]
    if not kept:
        raise ValueError(f"attributes={chosen}: the first sections use the released scores, which cover "
                         f"{', '.join(released)}; name at least one of them")
    sets = {a: groups[a] for a in chosen if a in groups}
    if not sets:
        raise ValueError(f"attributes={chosen}: the multi-group section needs at least one set of "
                         f"data/counterfactuals.yml ({', '.join(groups)})")
    return kept, sets


def labelled(frame: pd.DataFrame, *columns: str) -> pd.DataFrame:
    """``frame`` with the values of ``columns`` in words, as a page heads them (:func:`metricbias.book.display.label`:
    ``physical_appearance`` -> "physical appearance", ``eq2`` -> "Eq. 2", ``non_binary`` -> "non-binary")."""
    return frame.assign(**{c: frame[c].map(label) for c in columns if c in frame})


def word(name) -> str:
    """One name as a page heads it (:func:`metricbias.book.display.label`): ``physical_appearance`` -> "physical
    appearance", ``eq2`` -> "Eq. 2"; for a figure's labels and a frame's index or columns (``rename(columns=word)``)."""
    return label(name)


def words(names) -> list[str]:
    """:func:`word` of each name, in order."""
    return [label(n) for n in names]


def focus_attribute(attributes, preferred: str = "gender") -> str:
    """The attribute a single-attribute table shows: ``preferred`` when measured, else the first one."""
    attributes = list(attributes)
    return preferred if preferred in attributes else attributes[0]


def measure_grid(menu: pd.DataFrame, liu: pd.DataFrame) -> pd.DataFrame:
    """The framework's instances (``generalized.paired_table``) joined with Liu's measures
    (``distributional.measure_table``) on (attribute, metric)."""
    return menu.merge(liu.drop(columns="n_pairs"), on=["attribute", "metric"])


def rank_correlations(grid: pd.DataFrame, columns=MEASURE_COLUMNS) -> pd.DataFrame:
    """Spearman correlations between the measures over the (attribute, metric) cells."""
    return grid[list(columns)].corr(method="spearman")


def most_biased(grid: pd.DataFrame) -> pd.DataFrame:
    """Per attribute (table order): the metric with the largest Eq. 2 and the one with the largest
    |stereotypical difference|."""
    rows = []
    for attribute, g in grid.groupby("attribute", sort=False):
        rows.append({"attribute": attribute, "eq2": g.loc[g["eq2"].idxmax(), "metric"],
                     "stereotypical": g.loc[g["stereotypical"].abs().idxmax(), "metric"]})
    return pd.DataFrame(rows)


def agreement(grid: pd.DataFrame) -> dict:
    """Spearman ρ of Eq. 2 with the stereotypical difference, and in how many attributes the two name a
    different most biased metric."""
    top = most_biased(grid)
    rho = rank_correlations(grid, ["eq2", "stereotypical"]).loc["eq2", "stereotypical"]
    return {"rho_eq2_stereotypical": float(rho), "top_metric_differs": int((top["eq2"] != top["stereotypical"]).sum()),
            "attributes": len(top)}


def normality(liu: pd.DataFrame, *, alpha: float = 0.05, attributes=None) -> dict:
    """How often both candidate sets of a cell pass Shapiro–Wilk at ``alpha`` (Liu's check before fitting
    Gaussians), overall and per attribute (``by_attribute``: "race 3%, gender 0%, ..."), and how many cells
    have ties in more than half of their pairs."""
    passed = (liu["shapiro_p_1"] > alpha) & (liu["shapiro_p_2"] > alpha)
    share = passed.groupby(liu["attribute"], sort=False).mean()
    if attributes is not None:
        share = share.reindex(list(attributes))
    return {"both_normal": int(passed.sum()), "cells": len(liu), "both_normal_share": float(passed.mean()),
            "by_attribute": ", ".join(f"{label(a)} {v:.0%}" for a, v in share.items()),
            "mostly_tied": int((liu["tie_share"] > 0.5).sum())}


def reference_summary(versus: pd.DataFrame, *, alpha: float = 0.05) -> dict:
    """How many biases of :func:`metricbias.bias.significance.versus_reference` differ from the reference's at false discovery rate ``alpha``,
    and the others counted by metric ("ROUGE (5), NIST (5), ...")."""
    kept = versus["p_adjusted"] < alpha
    return {"significant": int(kept.sum()), "tests": len(versus), "not_significant": int((~kept).sum()),
            "not_significant_by_metric": count_list(versus.loc[~kept, "metric"]) or "none"}


def stability_findings(summary: pd.DataFrame, measures=robustness.MEASURES) -> dict:
    """What the robustness study (:func:`metricbias.bias.robustness.summarize`) finds, as numbers and short
    texts for a page.

    * ``most_stable`` and ``most_stable_panels``: the measure whose ranking keeps the highest
      mean τ (over rates) in the most panels, and in how many of the ``panels``;
    * ``wins``: every measure that is most stable somewhere (Markdown: "**eq2** in 7 of 7 panels");
    * ``distributional_better``: panels in which KLS or JSS beats both Eq. 2 and the indicator;
    * ``lowest_rate`` and ``tau_<measure>_lowest``: the ``all`` panel's mean τ at the lowest rate;
    * ``most_stable_by_rate``: the most stable measure of the ``all`` panel at each rate ("30% eq2, 80% eq2").
    """
    per_panel = robustness.mean_tau(summary, measures)
    best = per_panel.idxmax(axis=1)
    wins = best.value_counts()
    overall = robustness.overall_by_rate(summary, measures)
    low = float(min(overall.index))
    out = {"most_stable": label(wins.index[0]), "most_stable_panels": int(wins.iloc[0]), "panels": len(per_panel),
           "wins": ", ".join(f"**{label(m)}** in {int(n)} of {len(per_panel)} panels" for m, n in wins.items()),
           "distributional_better": int((per_panel[["kls", "jss"]].max(axis=1)
                                         > per_panel[["eq2", "indicator"]].max(axis=1)).sum()),
           "lowest_rate": low,
           "most_stable_by_rate": ", ".join(f"{r:.0%} {label(m)}" for r, m in overall.idxmax(axis=1).items())}
    out.update({f"tau_{m}_lowest": float(overall.loc[low, m]) for m in measures})
    return out


def headline_findings(*, identity: dict, agreement: dict, versus_bleu: dict, normality: dict, stability: dict,
                      counterfactual: dict) -> dict:
    """Chapter 4's headline numbers from the dicts its sections compute:
    :func:`metricbias.book.reproduction.czarnowska2021.eq2_identity`, :func:`agreement`,
    :func:`reference_summary`, :func:`normality`,
    :func:`stability_findings` and
    :func:`metricbias.book.reproduction.ch4_counterfactual.findings`.
    """
    return {
        "eq2_pcm_gap": identity["gap_abs"],
        "rho_eq2_stereotypical": agreement["rho_eq2_stereotypical"],
        "top_metric_differs": agreement["top_metric_differs"], "attributes": agreement["attributes"],
        "differ_from_bleu": versus_bleu["significant"], "tests_vs_bleu": versus_bleu["tests"],
        "both_normal_share": normality["both_normal_share"],
        "most_stable": stability["most_stable"], "most_stable_panels": stability["most_stable_panels"],
        "panels": stability["panels"],
        "ngram_worst_nonbinary": counterfactual["ngram_worst_nonbinary"], "ngram_metrics": counterfactual["ngram_metrics"],
        "groups_without_vectors": counterfactual["groups_without_vectors"], "groups": counterfactual["groups"],
    }


__all__ = ["MEASURE_COLUMNS", "agreement", "chapter_attributes", "count_list", "counted", "elsewhere", "focus_attribute",
           "headline_findings",
           "labelled", "measure_grid", "word", "words", "most_biased",
           "normality", "rank_correlations", "reference_summary", "stability_findings"]
