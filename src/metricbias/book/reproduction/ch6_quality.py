"""Chapter 6: does the debiasing adapter keep the metric's quality? Sun et al.'s 1% criterion as a test.

* :func:`noninferiority`: the verdict on one (adapter, quality set) cell from the 95% interval of the paired
  difference (adapted minus original metric): "holds" when the interval's lower end lies above −1% of the original's
  value, "reverses" when its upper end lies below it (a loss beyond the tolerance), otherwise not distinguishable;
* :func:`quality_test`: that test for every adapter on WMT19 kk-en DARR and STS-B dev, the original metric and the
  adapted one scored on the same items (:func:`metricbias.metaeval.quality.paired_quality`);
* :func:`quality_verdict`: the claim's verdict over the cells (holds if all hold, reverses if any reverses);
* :func:`both_or_each`: one phrase for two words that may agree ("above the paper's range for both").
"""

from __future__ import annotations

import pandas as pd

#: Sun et al.'s quality criterion: a loss of at most 1% of the original metric's value
TOLERANCE = 0.01
#: the measures of :func:`metricbias.metaeval.quality.paired_quality` as the page names them
SET_NAMES = {"darr_tau": "WMT19 kk-en DARR τ", "stsb_r": "STS-B dev r"}
#: the quality set of :func:`metricbias.mitigation.evaluation.compare` each measure is taken on
SET_DATASETS = {"darr_tau": "wmt19-kk-en", "stsb_r": "stsb-dev"}
TEST_COLUMNS = ["metric", "set", "original", "adapted", "difference", "ci_low", "ci_high", "margin", "items",
                "verdict"]


def noninferiority(ci_low: float, ci_high: float, reference: float, tolerance: float = TOLERANCE) -> str:
    """The verdict on "the adapted metric keeps the original's quality" from the interval ``[ci_low, ci_high]`` of
    the difference adapted minus original: the claim holds when the interval lies above −``tolerance``·|reference|,
    reverses when it lies below it, and is not distinguishable otherwise
    (:func:`metricbias.bias.claims.claim_verdict` on the interval shifted by the margin)."""
    from ...bias.claims import claim_verdict

    if tolerance < 0:
        raise ValueError(f"noninferiority: tolerance must be non-negative, got {tolerance}")
    margin = tolerance * abs(reference)
    return claim_verdict(ci_low + margin, ci_high + margin)


def adapter_specs(found) -> tuple:
    """(original, adapted) :class:`~metricbias.metrics.Spec` of a shipped adapter
    (:class:`metricbias.mitigation.training.Shipped`): the metric it was trained for, without and with it."""
    from ...metrics.registry import Spec
    from ...mitigation.evaluation import metric_spec
    from .names import part_name

    name, options = metric_spec(found.meta)
    adapted = part_name(found.name)
    return Spec(adapted.split(",")[0], name, options), Spec(adapted, name, {**options, "adapter": found.name})


def quality_test(adapters: dict, *, darr_pairs: int = 0, stsb_pairs: int = 0, seed: int = 0, device: str = "auto",
                 n_resamples: int = 9999, tolerance: float = TOLERANCE, cache=True) -> pd.DataFrame:
    """For each adapter of ``adapters`` (label -> :class:`~metricbias.mitigation.training.Shipped`) and each of
    WMT19 kk-en DARR τ and STS-B dev r: the original metric's value, the adapted one's, their paired difference on
    the same items with its 95% bootstrap interval, the margin (−``tolerance`` of the original's value) and the
    :func:`noninferiority` verdict. ``darr_pairs``/``stsb_pairs``: seeded samples (0: the whole sets)."""
    from ...metaeval.quality import paired_quality

    rows = []
    for label, found in adapters.items():
        original, adapted = adapter_specs(found)
        paired = paired_quality([adapted], original, darr_pairs=darr_pairs, stsb_pairs=stsb_pairs, seed=seed,
                                device=device, n_resamples=n_resamples, cache=cache)
        for r in paired.to_dict("records"):
            rows.append({"metric": label, "set": SET_NAMES[r["measure"]], "original": r["reference value"],
                         "adapted": r["value"], "difference": r["difference"], "ci_low": r["ci_low"],
                         "ci_high": r["ci_high"], "margin": -tolerance * abs(r["reference value"]),
                         "items": r["items"],
                         "verdict": noninferiority(r["ci_low"], r["ci_high"], r["reference value"], tolerance)})
    return pd.DataFrame(rows, columns=TEST_COLUMNS)


def page_table(table: pd.DataFrame) -> pd.DataFrame:
    """A :func:`quality_test` table as the page shows it (seven columns): adapter, set, the original's value, the
    difference with its 95% interval as one "low to high" column, the margin and the verdict; the adapted value and
    the item counts stay in the download."""
    ci = [f"{low:+.4f} to {high:+.4f}" for low, high in zip(table["ci_low"], table["ci_high"])]
    return pd.DataFrame({"adapter": table["metric"], "set": table["set"], "original": table["original"],
                         "difference": table["difference"], "95% CI": ci, "margin": table["margin"],
                         "verdict": table["verdict"]})


def quality_verdict(table: pd.DataFrame) -> dict:
    """The claim over the cells of a :func:`quality_test` table: ``verdict`` ("holds" if every cell holds,
    "reverses" if any reverses, else not distinguishable: :func:`metricbias.bias.claims.joint_verdict`), the
    number of ``cells`` and of those that ``hold``, ``reverse`` and are ``undecided``, and ``sets`` (their names)."""
    from ...bias.claims import UNDECIDED, joint_verdict
    from .names import joined

    words = list(table["verdict"])
    return {"verdict": joint_verdict(words, reverses_on="any"), "cells": len(words),
            "hold": words.count("holds"), "reverse": words.count("reverses"), "undecided": words.count(UNDECIDED),
            "sets": joined(dict.fromkeys(s.rsplit(" ", 1)[0] for s in table["set"]))}


def verdicts(table: pd.DataFrame) -> dict:
    """(metric, quality set of the before/after table) -> the :func:`noninferiority` verdict of each cell of a
    :func:`quality_test` table: what the chapter's quality criteria take as their test."""
    dataset = {name: SET_DATASETS[key] for key, name in SET_NAMES.items()}
    return {(r["metric"], dataset[r["set"]]): r["verdict"] for r in table.to_dict("records")}


def cell_values(table: pd.DataFrame) -> dict:
    """Every figure of a :func:`quality_test` table by a key "<metric>_<measure>_<column>" (lower case, measure
    ``darr`` or ``stsb``), for the page's sentences."""
    short = {name: key.split("_")[0] for key, name in SET_NAMES.items()}
    out = {}
    for r in table.to_dict("records"):
        key = f"{r['metric'].lower()}_{short[r['set']]}"
        out.update({f"{key}_{col}": r[col] for col in TEST_COLUMNS[2:]})
    return out


def both_or_each(first: str, second: str, labels=("for BERTScore", "for regression"), both: str = "for both") -> str:
    """Two words about two things in one phrase: "<word> <both>" when they agree, otherwise "<first> <label 1> and
    <second> <label 2>" ("above the paper's range for both")."""
    if first == second:
        return f"{first} {both}"
    return f"{first} {labels[0]} and {second} {labels[1]}"


__all__ = ["SET_DATASETS", "SET_NAMES", "TEST_COLUMNS", "TOLERANCE", "adapter_specs", "both_or_each", "cell_values",
           "noninferiority", "page_table", "quality_test", "quality_verdict", "verdicts"]
