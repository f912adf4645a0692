"""One entry to every bias measure of a paired score table: :func:`measure`.

Each measure registered in :mod:`metricbias.bias.registry` is computed per
(attribute, metric) cell of the tidy score table (:mod:`metricbias.bias.scores`)
and reported in one long table, :data:`COLUMNS`:
``attribute, metric, measure, value, ci_low, ci_high, n_pairs, signature`` (with
``dataset`` first when the table holds several datasets, and ``p_value`` last
when a requested measure has a test). :func:`wide` pivots it to one row per cell
(``mb.bias_table`` is such a view). The built-in measures (``registry.table()``):

``bias``
    Eq. 2 of Sun et al. (2022): mean absolute difference of the min-max rescaled
    scores, with a 95% bootstrap interval at the design's level: whole templates
    resampled where pairs share one (:func:`metricbias.bias.clusters.shared`: the
    WinoBias twins, counterfactual sources, a ``cluster`` column of your own pairs),
    BCa over pairs where every pair is its own;
``stereotypical_difference``
    their App. E: the mean signed difference (candidate 1 minus candidate 2), with its interval;
``indicator``, ``kls``, ``jss``
    Liu (2024): P(candidate 1 scores higher) (ties count half), and the KL and JS
    scores of Gaussian fits to the two rescaled score sets (no interval);
``group_abs``, ``group_w1``, ``group_mwu``, ``counterfactual_mwu``
    further pairwise comparison metrics of Czarnowska et al. (2021)
    (:data:`metricbias.bias.generalized.PAIRED_INSTANCES`; no interval).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from .clusters import shared
from .registry import DEFAULT_RESAMPLES, DEFAULT_SEED, Measure, get_measure
from .scores import cells, from_pairs, keys

COLUMNS = ["attribute", "metric", "measure", "value", "ci_low", "ci_high", "n_pairs", "signature"]
DEFAULT = ("bias", "stereotypical_difference")
_RESULT = ("value", "ci_low", "ci_high", "p_value")


def _inputs(measure: Measure, s1: np.ndarray, s2: np.ndarray, made: dict) -> tuple:
    """What ``measure`` takes of one cell's paired scores (the groups table is built once per cell)."""
    if measure.takes == "groups":
        if "groups" not in made:
            made["groups"] = from_pairs(s1, s2)
        return (made["groups"],)
    return s1, s2


def _cell(s1: np.ndarray, s2: np.ndarray, chosen: list[Measure], context: dict) -> list[dict]:
    made: dict = {}
    # each measure rescales on its own: say a warning (constant scores, ...) once per cell, not once per measure
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = [{"measure": m.name, **m(*_inputs(m, s1, s2, made), **context)} for m in chosen]
    for w in {(w.category, str(w.message)): w for w in caught}.values():
        warnings.warn(w.message, stacklevel=3)
    return out


def measure(scores: pd.DataFrame, measures=DEFAULT, *, n_resamples: int = DEFAULT_RESAMPLES,
            seed: int = DEFAULT_SEED) -> pd.DataFrame:
    """Every requested measure (registered names) of every (attribute, metric) cell, in long form (:data:`COLUMNS`).

    ``n_resamples`` and ``seed`` go to every measure that takes them (the bootstrap; 0 resamples: no interval),
    and so do a cell's cluster keys (``clusters``) where some of its pairs share a template.
    """
    requested = [measures] if isinstance(measures, str) else list(measures or DEFAULT)
    chosen = [get_measure(m) for m in requested]
    rows = []
    for key, group in cells(scores):
        s1, s2 = group["score_1"].to_numpy(float), group["score_2"].to_numpy(float)
        signature = group["signature"].iloc[0] if "signature" in group else ""
        context = {"n_resamples": n_resamples, "seed": seed, "metric": key["metric"], "attribute": key["attribute"],
                   "clusters": shared(group)}
        for r in _cell(s1, s2, chosen, context):
            rows.append({**key, **r, "n_pairs": len(group), "signature": signature})
    lead = [c for c in keys(scores) if c not in COLUMNS]
    tested = ["p_value"] if any(m.test for m in chosen) else []
    return pd.DataFrame(rows, columns=lead + COLUMNS + tested)


def wide(long: pd.DataFrame) -> pd.DataFrame:
    """A long measure table (:func:`measure`) as one row per cell, in the table's order: per measure a column
    of its values named after it, then ``NAME_ci_low``, ``NAME_ci_high`` if it has an interval and
    ``NAME_p_value`` if it has a test."""
    index = [c for c in long.columns if c not in ("measure", *_RESULT)]
    values = [c for c in _RESULT if c in long.columns]
    table = long.pivot(index=index, columns="measure", values=values)
    table = table.reindex(pd.MultiIndex.from_frame(long[index].drop_duplicates()))
    columns = {}
    for name in dict.fromkeys(long["measure"]):
        m = get_measure(name)
        columns[name] = table[("value", name)]
        if m.interval:
            columns[f"{name}_ci_low"], columns[f"{name}_ci_high"] = table[("ci_low", name)], table[("ci_high", name)]
        if m.test and "p_value" in values:
            columns[f"{name}_p_value"] = table[("p_value", name)]
    return pd.DataFrame(columns, index=table.index).reset_index()

__all__ = ["COLUMNS", "DEFAULT", "measure", "wide"]
