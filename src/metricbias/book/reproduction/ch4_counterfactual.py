"""What the multi-group counterfactual sets and their measures show (chapter 4).

The sets come from :mod:`metricbias.datasets.counterfactuals` (``build_attributes``:
rows and exclusions), the measures from :mod:`metricbias.bias.significance`
(``counterfactual_table``, ``counterfactual_vbcm``). The functions here summarize
them for a page: set sizes, exclusions, one example per attribute, the group
each metric scores worst, and how many identity terms a static-embedding metric
has no vector for.
"""

from __future__ import annotations

import pandas as pd

from ...datasets import counterfactuals, lexicons
from ..display import label
from .ch4_measures import count_list


def protected_groups(groups: dict) -> pd.DataFrame:
    """One row per attribute with its protected groups T."""
    return pd.DataFrame({"attribute": list(groups), "protected groups T": [", ".join(g) for g in groups.values()]})


def set_sizes(rows: pd.DataFrame, excluded: pd.DataFrame, groups: dict) -> pd.DataFrame:
    """Per attribute: source examples, protected groups |T| and pairs left out."""
    sizes = rows.groupby("attribute", sort=False).agg(sources=("source", "nunique")).reset_index()
    sizes["groups"] = [len(groups[a]) for a in sizes["attribute"]]
    sizes["excluded"] = [int((excluded["attribute"] == a).sum()) for a in sizes["attribute"]]
    return sizes


def exclusion_reasons(excluded: pd.DataFrame) -> pd.DataFrame:
    """Pairs left out per attribute and reason, with what the reason means."""
    out = excluded.groupby(["attribute", "reason"]).size().rename("pairs").reset_index()
    out["meaning"] = out["reason"].map(counterfactuals.REASONS)
    return out


def examples(rows: pd.DataFrame, attribute: str | None = None) -> pd.DataFrame:
    """Every row (protected groups and backgrounds) of the first source example of each attribute, or of
    ``attribute`` alone (the page shows one; the appendix keeps one per attribute)."""
    if attribute is not None:
        rows = rows[rows["attribute"] == attribute]
    first = rows.groupby("attribute", sort=False)["source"].first()
    return rows[rows["source"].isin(first)][["attribute", "group", "candidate"]].reset_index(drop=True)


def worst_groups(vbcm: pd.DataFrame, scored: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per (attribute, metric) of a counterfactual VBCM (β − group), the group scored furthest below the
    original pair: the row with the largest value. With ``scored`` (the configurations' scores of the multi-group
    pairs), a configuration whose scores equal an earlier one's (:func:`metricbias.bias.scores.identical_configurations`)
    counts once, so the counts are over the distinct configurations of :func:`configurations_used`."""
    from ...bias.scores import identical_configurations

    if scored is not None and len(scored):
        vbcm = vbcm[~vbcm["metric"].isin(identical_configurations(scored)["metric"])]
    return vbcm.loc[vbcm.groupby(["attribute", "metric"])["value"].idxmax()]


def worst_group_counts(worst: pd.DataFrame) -> str:
    """"gender: non-binary (13), female (4); race: ...": how many metrics score each group worst, per attribute
    (names in words)."""
    return "; ".join(f"{label(a)}: {count_list(w['group'].map(label))}" for a, w in worst.groupby("attribute", sort=False))


def families(specs) -> dict[str, str]:
    """Metric label -> family, for profile entries ``(label, name, options)``."""
    from ...metrics import metric_class

    return {label: metric_class(name).family for label, name, _ in specs}


def worst_share(worst: pd.DataFrame, family_of: dict, *, attribute: str = "gender", group: str = "non_binary",
                family: str = "ngram") -> tuple[int, int]:
    """(metrics of ``family`` that score ``group`` worst on ``attribute``, metrics of that family measured)."""
    w = worst[(worst["attribute"] == attribute) & (worst["metric"].map(family_of) == family)]
    return int((w["group"] == group).sum()), len(w)


def vocabulary_coverage(groups: dict, metric, *, shown: int = 4) -> pd.DataFrame:
    """Per protected group: its substitution terms (the first term of each lexicon row) and those that a
    static-embedding ``metric`` has no vector for.

    A multi-word term counts as missing when any of its words is; a word counts as known when it has a
    vector as written or capitalized ("Mary").
    """
    rows = []
    for attribute, t in groups.items():
        lex = lexicons.load(attribute)
        for g in t:
            terms = sorted({row.terms[g][0] for row in lex.rows if g in row.terms})
            missing = [w for w in terms if any(len(metric.indices(part)) == 0
                                               and len(metric.indices(part.capitalize())) == 0
                                               for part in w.split())]
            rows.append({"attribute": attribute, "group": g, "terms": len(terms), "out of vocabulary": len(missing),
                         "examples": ", ".join(missing[:shown])})
    return pd.DataFrame(rows)


def uncovered_groups(coverage: pd.DataFrame) -> list[str]:
    """"attribute/group" for every group none of whose terms has a vector."""
    full = coverage[coverage["out of vocabulary"] == coverage["terms"]]
    return [f"{r.attribute}/{r.group}" for r in full.itertuples()]


def findings(worst: pd.DataFrame, family_of: dict, coverage: pd.DataFrame) -> dict:
    """The multi-group section's numbers for a page: worst groups per attribute, the n-gram metrics that score
    the non-binary candidates worst, and the groups without any term in the static vocabulary."""
    n_worst, n_ngram = worst_share(worst, family_of)
    uncovered = uncovered_groups(coverage)
    return {"worst_groups": worst_group_counts(worst), "ngram_worst_nonbinary": n_worst, "ngram_metrics": n_ngram,
            "groups_without_vectors": len(uncovered), "groups": len(coverage),
            "groups_without_vectors_list": ", ".join(": ".join(label(x) for x in g.split("/", 1)) for g in uncovered) or "none"}


def configurations_used(suite, kept, scored: pd.DataFrame | None = None) -> dict:
    """Which of chapter 3's configurations (``suite``, profile entries) the multi-group sets use (``kept``), for a
    page: ``used`` and ``suite`` (counts), ``left_out`` (the labels left out, by kind: every generation
    configuration, then the MPNet ones of the other paradigms, then any other) and ``ngram_used`` /
    ``ngram_suite`` (the n-gram configurations among them), and ``mpnet_size``, the MPNet encoder's parameters over
    MiniLM's (the reason its configurations are left out). With ``scored`` (the kept configurations' scores of
    the multi-group pairs), ``distinct`` counts them as chapter 3 does: a configuration whose scores equal an
    earlier one's on every pair (:func:`metricbias.bias.scores.identical_configurations`) counts once."""
    from ...backbones import BACKBONES
    from ...bias.scores import identical_configurations

    family_of = families(suite)
    kept_labels = {s.label for s in kept}
    gone = [s for s in suite if s.label not in kept_labels]
    generation = [s.label for s in gone if family_of[s.label] == "generation"]
    mpnet = [s.label for s in gone if family_of[s.label] != "generation" and "mpnet" in s.label.lower()]
    other = [s.label for s in gone if s.label not in generation + mpnet]
    all_generation = len(generation) == sum(f == "generation" for f in family_of.values())
    parts = ([f"{'every ' if all_generation else ''}generation configuration ({', '.join(generation)})"]
             if generation else []) + \
        ([f"the MPNet ones of the other paradigms ({', '.join(mpnet)})"] if mpnet else []) + other
    merged = identical_configurations(scored) if scored is not None and len(scored) else pd.DataFrame()
    return {"used": len(kept), "distinct": len(kept) - len(merged), "suite": len(suite),
            "left_out": "; ".join(parts) or "none",
            "mpnet_size": (BACKBONES["all-mpnet-base-v2"].params_millions
                           / BACKBONES["all-MiniLM-L6-v2"].params_millions),
            "ngram_used": sum(family_of[s.label] == "ngram" for s in kept),
            "ngram_suite": sum(f == "ngram" for f in family_of.values())}


__all__ = ["configurations_used", "examples", "exclusion_reasons", "families", "findings", "protected_groups", "set_sizes",
           "uncovered_groups", "vocabulary_coverage", "worst_group_counts", "worst_groups", "worst_share"]
