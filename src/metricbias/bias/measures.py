"""One entry to every bias measure of a paired score table: :func:`measure`.

Each measure is computed per (attribute, metric) cell of the tidy score table
(:mod:`metricbias.bias.scores`) and reported in one long table, :data:`COLUMNS`:
``attribute, metric, measure, value, ci_low, ci_high, n_pairs, signature`` (with
``dataset`` first when the table holds several datasets). Measures:

``bias``
    Eq. 2 of Sun et al. (2022): mean absolute difference of the min-max rescaled
    scores, with a 95% BCa bootstrap interval over pairs;
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

from . import distributional, generalized, pairwise
from .scores import cells, keys

COLUMNS = ["attribute", "metric", "measure", "value", "ci_low", "ci_high", "n_pairs", "signature"]
WITH_INTERVAL = ("bias", "stereotypical_difference")
LIU = ("indicator", "kls", "jss")
CZARNOWSKA = ("group_abs", "group_w1", "group_mwu", "counterfactual_mwu")
MEASURES = (*WITH_INTERVAL, *LIU, *CZARNOWSKA)
DEFAULT = WITH_INTERVAL


def _cell(s1: np.ndarray, s2: np.ndarray, measures, key: dict, n_resamples: int, seed: int) -> list[dict]:
    out = []
    if any(m in WITH_INTERVAL for m in measures):
        r1, r2 = pairwise.rescale(s1, s2, metric=key["metric"], attribute=key["attribute"])
        diff = r1 - r2
        for m, values in (("bias", np.abs(diff)), ("stereotypical_difference", diff)):
            if m in measures:
                low, high = pairwise.bootstrap_ci(values, n_resamples=n_resamples, seed=seed)
                out.append({"measure": m, "value": float(np.mean(values)), "ci_low": low, "ci_high": high})
    if any(m in LIU for m in measures):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", pairwise.ConstantScoresWarning)  # already said once above
            try:
                liu = distributional.pair_measures(s1, s2)
            except ValueError:  # constant scores: no rescaling, no Gaussian fit
                liu = {m: np.nan for m in LIU}
        out += [{"measure": m, "value": liu[m]} for m in LIU if m in measures]
    wanted = [m for m in CZARNOWSKA if m in measures]
    if wanted:
        data = generalized.from_pairs(s1, s2)
        for m in wanted:
            measure, version, phi, d = generalized.PAIRED_INSTANCES[m]
            out.append({"measure": m, "value": generalized.MEASURES[measure](data, phi, d, version=version)})
    order = {m: i for i, m in enumerate(measures)}
    return sorted(out, key=lambda r: order[r["measure"]])


def measure(scores: pd.DataFrame, measures=DEFAULT, *, n_resamples: int = pairwise.DEFAULT_RESAMPLES,
            seed: int = pairwise.DEFAULT_SEED) -> pd.DataFrame:
    """Every requested measure of every (attribute, metric) cell, in long form (:data:`COLUMNS`)."""
    measures = [measures] if isinstance(measures, str) else list(measures or DEFAULT)
    unknown = [m for m in measures if m not in MEASURES]
    if unknown:
        raise ValueError(f"unknown bias measure(s) {unknown}; measures: {', '.join(MEASURES)}")
    rows = []
    for key, group in cells(scores):
        s1, s2 = group["score_1"].to_numpy(float), group["score_2"].to_numpy(float)
        signature = group["signature"].iloc[0] if "signature" in group else ""
        for r in _cell(s1, s2, measures, key, n_resamples, seed):
            rows.append({**key, "ci_low": np.nan, "ci_high": np.nan, **r, "n_pairs": len(group),
                         "signature": signature})
    lead = [c for c in keys(scores) if c not in COLUMNS]
    return pd.DataFrame(rows, columns=lead + COLUMNS)


__all__ = ["COLUMNS", "DEFAULT", "MEASURES", "measure"]
