"""Whether chapter 3's generation rows enter its paradigm findings.

The generation configurations run on paraphrasers trained here (BARTScore-style scoring on ``para-*``). A bias
measured on a metric weaker than BLEU says little about its paradigm, so the generation rows enter the paradigm
comparisons (Figure 4's eta squared with the live configurations, and the fixed-backbone decomposition) only when
every generation configuration is at least as good as BLEU on both quality measures (WMT19 kk-en DARR τ and STS-B
dev r, point values: ``at_least_reference`` of
:func:`metricbias.book.reproduction.ch3_quality.quality_points`):

* :func:`generation_enters`: that decision;
* :func:`paradigm_configs`, :func:`grid_rows`: the chapter's configuration tables with the generation rows left out
  of the paradigm comparison when they do not enter;
* :func:`decision_findings`: the decision and which generation configurations decide it.
"""

from __future__ import annotations

import pandas as pd

GENERATION = "Generation"


def generation_enters(points: pd.DataFrame) -> bool:
    """True when every generation configuration of ``points`` (:func:`metricbias.book.reproduction.ch3_quality.
    quality_points`) is at least as good as the reference (BLEU) on every quality measure, or when there is none
    (nothing to leave out); False when any is below it on either."""
    gen = points[points["paradigm"] == GENERATION]
    return bool(gen["at_least_reference"].astype(bool).all())


def generation_enters_recorded(parts: dict) -> bool:
    """Chapter 3's rule on the trained parts' recorded figures (:func:`metricbias.book.reproduction.ch3_trained.
    recorded`): True when every paraphraser has whole-set figures at least as good as BLEU's on the same items on
    every measure; a paraphraser without them does not enter."""
    paraphrasers = [p for p in parts.values() if p["trainer"] == "paraphraser"]
    return all(p["figures"] and all(value >= p["bleu"].get(key, float("inf")) for key, value in p["figures"].items())
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


#: appended to the label of a configuration that its quality rule leaves out of the paradigm findings, where a
#: figure still shows its bias
LEFT_OUT_MARK = " †"


def mark_left_out(frame: pd.DataFrame, configs: pd.DataFrame, enters: bool, column: str = "metric") -> pd.DataFrame:
    """``frame`` with :data:`LEFT_OUT_MARK` after each ``column`` label whose configuration (in ``configs``, with
    its ``paradigm``) is a generation row that does not enter the paradigm findings."""
    if enters:
        return frame
    out_ = set(configs.loc[configs["paradigm"] == GENERATION, "metric"])
    return frame.assign(**{column: frame[column].map(lambda m: f"{m}{LEFT_OUT_MARK}" if m in out_ else m)})


def decision_findings(points: pd.DataFrame) -> dict:
    """Whether the generation rows enter the paradigm comparisons, and why: the generation configurations measured
    (``generation``), those below BLEU on at least one quality measure (``below``, named in ``below_names`` or
    "none"), and ``decision``: "enter" when none is below (and one is measured), "are left out of" otherwise."""
    gen = points[points["paradigm"] == GENERATION]
    weak = gen.loc[~gen["at_least_reference"].astype(bool), "metric"].tolist()
    return {"generation": len(gen), "below": len(weak), "below_names": ", ".join(weak) or "none",
            "decision": "enter" if len(gen) and not weak else "are left out of"}


__all__ = ["GENERATION", "LEFT_OUT_MARK", "decision_findings", "generation_enters", "generation_enters_recorded",
           "grid_rows", "mark_left_out", "paradigm_configs"]
