"""Whether chapter 3's generation rows enter its paradigm findings.

The generation configurations run on paraphrasers trained here (BARTScore-style scoring on ``para-*``). A bias
measured on a metric weaker than BLEU says little about its paradigm, so the generation rows enter the paradigm
comparisons (Figure 4's eta squared with the live configurations, and the fixed-backbone decomposition) only when
no generation configuration is shown below BLEU on either quality measure (WMT19 kk-en DARR τ and STS-B dev r),
each compared with BLEU on the same items with the 95% paired bootstrap interval of the difference
(:func:`metricbias.metaeval.quality.paired_quality`; ``at_least_reference`` of
:func:`metricbias.book.reproduction.ch3_quality.quality_points`): a configuration whose interval lies below 0 on a
measure is below the floor; one above or not distinguishable from BLEU is not:

* :func:`generation_enters`: that decision;
* :func:`paradigm_configs`, :func:`grid_rows`, :func:`left_out`: the chapter's configuration tables with the
  generation rows left out of the paradigm comparison (and of the figures) when they do not enter;
* :func:`decision_findings`: the decision and which generation configurations decide it.
"""

from __future__ import annotations

import pandas as pd

from .names import of_all

GENERATION = "Generation"


def generation_enters(points: pd.DataFrame) -> bool:
    """True when every generation configuration of ``points`` (:func:`metricbias.book.reproduction.ch3_quality.
    quality_points`) is at least as good as the reference (BLEU) on every quality measure, or when there is none
    (nothing to leave out); False when any is below it on either."""
    gen = points[points["paradigm"] == GENERATION]
    return bool(gen["at_least_reference"].astype(bool).all())


def generation_enters_recorded(parts: dict, floors: pd.DataFrame | None = None, **options) -> bool:
    """Chapter 3's rule on the trained parts (:func:`metricbias.book.reproduction.ch3_trained.recorded`), for the
    pages that do not run chapter 3: True when every paraphraser has a paired comparison with BLEU on both measures
    (``floors``: :func:`metricbias.book.reproduction.ch3_trained.part_floors`, computed with ``options``, chapter
    3's entries and quality sets, when not given) and none of them is "below"; a paraphraser without one does not
    enter."""
    from .ch3_trained import part_floors

    paraphrasers = [name for name, p in parts.items() if p["trainer"] == "paraphraser"]
    if not paraphrasers:
        return True
    if floors is None:
        floors = part_floors({name: parts[name] for name in paraphrasers}, **options)
    words = floors[floors["part"].isin(paraphrasers)].groupby("part")["floor"].agg(list)
    return all(len(words.get(p, [])) == 2 and "below" not in words[p] and "not measured" not in words[p]
               for p in paraphrasers)


def paradigm_configs(configs: pd.DataFrame, enters: bool) -> pd.DataFrame:
    """``configs`` (:func:`metricbias.metrics.configurations`) as the paradigm comparison uses them: without the
    generation rows when they do not enter."""
    return configs if enters else configs[configs["paradigm"] != GENERATION].reset_index(drop=True)


def grid_rows(availability: pd.DataFrame, enters: bool) -> pd.DataFrame:
    """The fixed-backbone grid (:func:`metricbias.book.reproduction.ch3_paradigm_claim.grid_availability`) with its
    generation rows taken out of the decomposition (``decomposed`` false) when they do not enter; their bias is
    still shown."""
    if enters:
        return availability
    out = availability.copy()
    out["decomposed"] = out["decomposed"] & (out["paradigm"] != GENERATION)
    return out


def left_out(configs: pd.DataFrame, enters: bool) -> list[str]:
    """The configurations of ``configs`` (with their ``paradigm``) that the rule leaves out of the paradigm findings
    and of the figures that show them: the generation rows when they do not enter (none otherwise)."""
    if enters:
        return []
    return list(configs.loc[configs["paradigm"] == GENERATION, "metric"])


def decision_findings(points: pd.DataFrame) -> dict:
    """Whether the generation rows enter the paradigm comparisons, and why: the generation configurations measured
    (``generation``), those below BLEU on at least one quality measure (``below``, named in ``below_names`` or
    "none"), those at least as good as BLEU on both (``good_phrase``, :func:`.names.of_all`: "both paraphraser-based
    generation configurations", "no paraphraser-based generation configuration"), and ``decision``: "enter" when
    none is below (and one is measured), "are left out of" otherwise."""
    gen = points[points["paradigm"] == GENERATION]
    weak = gen.loc[~gen["at_least_reference"].astype(bool), "metric"].tolist()
    return {"generation": len(gen), "below": len(weak), "below_names": ", ".join(weak) or "none",
            "good_phrase": of_all([m for m in gen["metric"] if m not in weak], gen["metric"].tolist(),
                                  "paraphraser-based generation configurations"),
            "decision": "enter" if len(gen) and not weak else "are left out of"}


__all__ = ["GENERATION", "decision_findings", "generation_enters", "generation_enters_recorded", "grid_rows",
           "left_out", "paradigm_configs"]
