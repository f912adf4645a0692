"""How much of a bias comes from one factor or another.

Sun et al. (2022, Sec. 2.3) argue that a PLM-based metric's *paradigm* decides more of its
bias than its *backbone*. Two summaries:

* :func:`variance_explained`: the share of the variance of a bias value across
  configurations that lies between the groups of one grouping (eta squared,
  SS_between / SS_total), for configurations that are not on a grid (the released ones);
* :func:`two_way` / :func:`decompose`: a two-way decomposition with bootstrap CIs.

For metric configurations laid out on a complete grid of two factors — here the
*paradigm* (matching, regression, generation) and the *backbone* (the frozen encoder) —
let y_ab be the bias of cell (a, b) (the mean over the configurations in the cell). With
the grand mean m, the row means ȳ_a·, the column means ȳ_·b and A x B cells, the total
sum of squares splits exactly (balanced two-way layout, one value per cell):

    Σ (y_ab − m)² = B Σ_a (ȳ_a· − m)²  +  A Σ_b (ȳ_·b − m)²  +  Σ (y_ab − ȳ_a· − ȳ_·b + m)²
       total      =       factor 1     +        factor 2      +        interaction

and the **shares** are each term over the total (they sum to 1). Sun et al.'s claim,
"the paradigm has a greater impact on fairness than the PLM", reads: the paradigm's share
exceeds the backbone's.

Uncertainty: the pairs of each attribute are resampled with replacement (the same draw
for every configuration, since they score the same pairs), the Eq. 2 biases recomputed
from the per-pair terms |Ŝ_1 − Ŝ_2| (the Eq. 1 rescaling fixed on the full data, as in
:mod:`.pairwise`), and the shares recomputed; percentile intervals over the resamples.
``P(share_1 > share_2)`` is the share of resamples in which the first factor's share is
the larger.

Eq. 2 divides by the range of an attribute's scores, which grows with the number of pairs, so its average over
attributes of different sizes weighs the small ones up. ``measure="size_robust_bias"`` decomposes the size-robust
bias instead (per-pair terms 100·|S_1 − S_2| / SD of the attribute's pooled scores, the SD fixed on the full data),
whose average does not drift with the sets' sizes.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..cache import cached_result
from .pairwise import pair_terms

FACTORS = ("paradigm", "backbone")
MEASURES = ("eq2", "size_robust_bias")
AVERAGE = "average"


def variance_explained(values, groups) -> float:
    """Eta squared: the share of the variance of ``values`` between the groups (NaN with < 2 groups)."""
    frame = pd.DataFrame({"v": np.asarray(values, float), "g": np.asarray(groups)}).dropna()
    if frame["g"].nunique() < 2 or len(frame) < 3:
        return float("nan")
    total = ((frame["v"] - frame["v"].mean()) ** 2).sum()
    means = frame.groupby("g")["v"].transform("mean")
    between = ((means - frame["v"].mean()) ** 2).sum()
    return float(between / total) if total > 0 else float("nan")


def two_way(cells: pd.DataFrame, value: str = "bias", factors=FACTORS) -> dict:
    """Sums of squares and shares of ``factors[0]``, ``factors[1]`` and their interaction on a complete grid.

    ``cells`` has one row per configuration (columns ``factors`` and ``value``); configurations
    sharing a cell are averaged first. A grid with an empty cell is an error naming it.
    """
    f1, f2 = factors
    grid = cells.groupby([f1, f2])[value].mean().unstack(f2)
    if grid.isna().any().any():
        empty = [(a, b) for a in grid.index for b in grid.columns if pd.isna(grid.loc[a, b])]
        raise ValueError(f"two-way decomposition needs every {f1} x {f2} cell; empty: {empty[:4]}")
    if grid.shape[0] < 2 or grid.shape[1] < 2:
        raise ValueError(f"two-way decomposition needs at least 2 levels of each factor, got {grid.shape}")
    y = grid.to_numpy(dtype=float)
    m = y.mean()
    rows, cols = y.mean(1, keepdims=True), y.mean(0, keepdims=True)
    ss = {f1: float(y.shape[1] * ((rows - m) ** 2).sum()), f2: float(y.shape[0] * ((cols - m) ** 2).sum()),
          "interaction": float(((y - rows - cols + m) ** 2).sum())}
    total = float(((y - m) ** 2).sum())
    out = {"levels": {f1: list(grid.index), f2: list(grid.columns)}, "total_ss": total,
           "means": {f1: grid.mean(axis=1), f2: grid.mean(axis=0)}}
    for k, v in ss.items():
        out[f"ss_{k}"] = v
        out[f"share_{k}"] = v / total if total > 0 else float("nan")
    return out


def _size_robust_terms(scores_1, scores_2) -> np.ndarray:
    s1, s2 = np.asarray(scores_1, dtype=float), np.asarray(scores_2, dtype=float)
    return 100.0 * np.abs(s1 - s2) / np.concatenate([s1, s2]).std(ddof=1)


def pair_term_matrix(scores: pd.DataFrame, metrics, measure: str = "eq2") -> dict[str, np.ndarray]:
    """Per attribute: a (pairs x metrics) matrix of the per-pair terms of ``measure`` (Eq. 2's |Ŝ_1 − Ŝ_2|, or the
    size-robust bias's 100·|S_1 − S_2| / SD), pairs aligned by ``pair_id`` across metrics."""
    if measure not in MEASURES:
        raise ValueError(f"unknown measure {measure!r}; one of {', '.join(MEASURES)}")
    out = {}
    for attribute, block in scores.groupby("attribute", sort=False):
        cols = []
        index = None
        for metric in metrics:
            m = block[block["metric"] == metric].set_index("pair_id")
            if m.empty:
                raise ValueError(f"no scores of metric {metric!r} on attribute {attribute!r}")
            index = m.index if index is None else index
            m = m.reindex(index)
            if m["score_1"].isna().any():
                raise ValueError(f"metric {metric!r} did not score every pair of attribute {attribute!r}")
            cols.append(pair_terms(m["score_1"], m["score_2"], metric=metric, attribute=attribute)
                        if measure == "eq2" else _size_robust_terms(m["score_1"], m["score_2"]))
        out[attribute] = np.column_stack(cols)
    return out


@cached_result("decomposition.decompose")
def decompose(scores: pd.DataFrame, configs: pd.DataFrame, *, factors=FACTORS, n_resamples: int = 999,
              seed: int = 0, confidence: float = 0.95, measure: str = "eq2") -> pd.DataFrame:
    """Two-way decomposition of the bias of each attribute and of the average over attributes.

    ``scores``: the long live-score table (``attribute, pair_id, metric, score_1, score_2``);
    ``configs``: one row per metric label in ``scores`` with columns ``metric`` and ``factors``.
    One row per attribute (and ``average``): the shares with percentile CIs; ``difference``, the share of
    factors[0] minus that of factors[1], with its CI (the interval a claim's verdict reads; it takes the order
    statistics at or outside its ends, so that it excludes 0 only when at most alpha/2 of the resamples fall on the
    other side, where interpolating between them could exclude 0 on a count the resamples do not support); per
    factor ``f`` the main effect as a difference, ``gap_<f>``: the mean bias of its most biased level (``top_<f>``)
    minus its least biased (``bottom_<f>``), both named on the point values and held fixed over the resamples,
    with its percentile CI; and ``p_first_larger`` = P(share of factors[0] > share of factors[1]) over the
    resamples. ``measure``: the bias
    decomposed, "eq2" (Sun et al.'s) or "size_robust_bias".
    Kept in the result cache (:func:`metricbias.cache.cached_result`; ``cache=False``: none).
    """
    configs = configs.drop_duplicates("metric").set_index("metric")
    missing = sorted(set(configs.index) - set(scores["metric"]))
    if missing:
        raise ValueError(f"no scores for configuration(s) {missing}")
    f1, f2 = factors
    metrics = list(configs.index)
    terms = pair_term_matrix(scores, metrics, measure)
    keys = [f"share_{f1}", f"share_{f2}", "share_interaction", "difference", f"gap_{f1}", f"gap_{f2}"]
    top: dict[str, dict[str, tuple]] = {}  # per attribute and factor: (most, least) biased level of the point values

    def shares(biases: dict[str, np.ndarray]) -> dict[str, list[float]]:
        out = {}
        for attribute, b in {**biases, AVERAGE: np.mean(list(biases.values()), axis=0)}.items():
            cells = configs[[f1, f2]].assign(bias=b)
            d = two_way(cells.reset_index(), "bias", factors)
            ends = top.setdefault(attribute, {f: (d["means"][f].idxmax(), d["means"][f].idxmin()) for f in factors})
            gaps = [float(d["means"][f][ends[f][0]] - d["means"][f][ends[f][1]]) for f in factors]
            out[attribute] = [d[k] for k in keys[:3]] + [d[keys[0]] - d[keys[1]], *gaps]
        return out

    point = shares({a: t.mean(0) for a, t in terms.items()})
    rng = np.random.default_rng(seed)
    draws = {a: [] for a in point}
    for _ in range(n_resamples):
        resampled = {a: t[rng.integers(0, len(t), len(t))].mean(0) for a, t in terms.items()}
        for a, v in shares(resampled).items():
            draws[a].append(v)
    alpha = (1 - confidence) / 2
    rows = []
    for attribute, values in point.items():
        d = np.asarray(draws[attribute], dtype=float)
        row = {"attribute": attribute, "n_pairs": int(sum(len(t) for t in terms.values())) if attribute == AVERAGE
               else len(terms[attribute])}
        for j, key in enumerate(keys):
            row[key] = values[j]
            if len(d) and key == "difference":  # the verdict's interval: the order statistics outside, not between
                row[f"{key}_ci_low"] = np.nanquantile(d[:, j], alpha, method="lower")
                row[f"{key}_ci_high"] = np.nanquantile(d[:, j], 1 - alpha, method="higher")
            elif len(d):
                row[f"{key}_ci_low"], row[f"{key}_ci_high"] = np.nanquantile(d[:, j], [alpha, 1 - alpha])
        for f in factors:
            row[f"top_{f}"], row[f"bottom_{f}"] = top[attribute][f]
        row["p_first_larger"] = float(np.mean(d[:, 0] > d[:, 1])) if len(d) else float("nan")
        rows.append(row)
    out = pd.DataFrame(rows)
    out.attrs.update(factors=list(factors), n_resamples=n_resamples, seed=seed, confidence=confidence, measure=measure)
    return out


__all__ = ["AVERAGE", "FACTORS", "MEASURES", "decompose", "pair_term_matrix", "two_way", "variance_explained"]
