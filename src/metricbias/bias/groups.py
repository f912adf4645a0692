"""Group preference and stereotype congruence, apart: :func:`group_stereotype` (``mb.group_stereotype``).

Candidate 1 of every pair is the stereotypical one, so the signed, Eq. 1-rescaled difference of a pair,
``d = Ŝ_1 − Ŝ_2``, mixes two things: a preference for the stereotype-congruent sentence, and a preference for
the *group* candidate 1 happens to name. With a group code ``g = +1`` when candidate 1 names the group coded +1
and ``g = −1`` when candidate 2 does,

    d = β_stereotype + β_group · g + error,

fitted by least squares. With an intercept and one ±1 code the fit is the two group means:
``β_stereotype = (mean(d | g=+1) + mean(d | g=−1)) / 2`` (the stereotype effect with the groups balanced) and
``β_group = (mean(d | g=+1) − mean(d | g=−1)) / 2`` (half the gap a metric puts between the groups, whatever
the stereotype). Both are in Eq. 1-rescaled points (0–100).

The group code (:func:`group_codes`), and so the ``design`` of each cell:

``identified``
    the code is known for every pair and each sign holds at least :data:`MIN_SIDE` pairs. WinoBias gender: +1 when candidate 1 is the male
    one, read from ``group_1``/``group_2`` (``male``/``female``) where the pairs carry them, else from the text:
    the two candidates differ only in he/his/him/himself against she/her/hers/herself (:func:`pronoun_code`).
    Built CrowS-Pairs attributes with both directions (race, gender_crows, age, ...): +1 for ``direction``
    ``stereo`` (candidate 1, the more stereotypical sentence, names the historically disadvantaged group),
    −1 for ``antistereo`` (it names the advantaged one); a gender attribute whose groups are all male/female
    is coded by them instead, as WinoBias.
``stereotype only``
    both candidates name the same group (StereoSet: the pair differs in the stereotype, not the group):
    only β_stereotype is fitted (the mean of d); the group row is NaN.
``confounded``
    the code is unknown (the released CrowS-derived sets carry no direction) or one sign has fewer than
    :data:`MIN_SIDE` pairs (built religion: 67 ``stereo``, 2 ``antistereo``): the two
    effects cannot be told apart; the stereotype row is the mean of d (App. E's stereotypical difference,
    both effects at once) and the group row is NaN.

Intervals resample whole clusters (:mod:`metricbias.bias.clusters`: a WinoBias sentence and its twin are one
cluster; built and counterfactual pairs use their source template): 95% expanded percentile intervals
(:func:`~metricbias.bias.clusters.expanded_levels`, wider with few clusters); ``p_value`` is
the two-sided bootstrap p of the estimate against 0, ``(1 + #{|β* − β̂| ≥ |β̂|}) / (B + 1)`` over the ``B``
resamples ``β*`` (its floor is 1 / (B + 1)). Below :data:`~metricbias.bias.clusters.FEW_CLUSTERS` clusters
(``n_clusters``) the interval is marked in the book (its coverage there: :mod:`metricbias.bias.simulation`).
"""

from __future__ import annotations

import difflib
import re

import numpy as np
import pandas as pd

from .clusters import cluster_draws, cluster_keys, cluster_sums, expanded_levels
from .pairwise import DEFAULT_RESAMPLES, DEFAULT_SEED, rescale
from .scores import check

#: the columns of :func:`group_stereotype`, exactly
COLUMNS = ["attribute", "metric", "effect", "estimate", "ci_low", "ci_high", "p_value", "n_pairs", "n_clusters",
           "design"]
EFFECTS = ("group", "stereotype")
#: the effect name of the contrast row, |group| − |stereotype| (``group_stereotype(..., contrast=True)``)
CONTRAST = "group minus stereotype"
IDENTIFIED, STEREOTYPE_ONLY, CONFOUNDED = "identified", "stereotype only", "confounded"
#: the fewest pairs of each sign of the group code for the two effects to count as identified
MIN_SIDE = 5
MALE = frozenset({"he", "his", "him", "himself"})
FEMALE = frozenset({"she", "her", "hers", "herself"})
_WORDS = re.compile(r"\w+|[^\w\s]")


def pronoun_code(candidate_1: str, candidate_2: str) -> float:
    """+1 when the words in which the two texts differ hold male pronouns only in candidate 1 and female ones only
    in candidate 2 (he/his/him/himself against she/her/hers/herself); −1 the other way round; NaN otherwise.
    Other words may differ too (a released pair reads "because of she was" against "because he was")."""
    a, b = _WORDS.findall(str(candidate_1).lower()), _WORDS.findall(str(candidate_2).lower())
    changed_a, changed_b = set(), set()
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag != "equal":
            changed_a.update(a[i1:i2])
            changed_b.update(b[j1:j2])
    pronouns_a, pronouns_b = changed_a & (MALE | FEMALE), changed_b & (MALE | FEMALE)
    if not pronouns_a or not pronouns_b:
        return float("nan")
    if pronouns_a <= MALE and pronouns_b <= FEMALE:
        return 1.0
    if pronouns_a <= FEMALE and pronouns_b <= MALE:
        return -1.0
    return float("nan")


def group_codes(pairs: pd.DataFrame) -> pd.Series:
    """The ±1 group code of every pair of one attribute (module docstring), 0 where both candidates name the same
    group, NaN where it is unknown; aligned with ``pairs``' index."""
    nan = pd.Series(np.nan, index=pairs.index)
    g1 = pairs["group_1"].fillna("").astype(str).str.lower() if "group_1" in pairs.columns else None
    g2 = pairs["group_2"].fillna("").astype(str).str.lower() if "group_2" in pairs.columns else None
    if g1 is not None and (g1 != "").all():
        if g1.isin(["male", "female"]).all() and g2.isin(["male", "female"]).all() and (g1 != g2).all():
            return g1.eq("male").map({True: 1.0, False: -1.0})
        if (g1 == g2).all():
            return pd.Series(0.0, index=pairs.index)
    if {"candidate_1", "candidate_2"} <= set(pairs.columns):
        read = pd.Series([pronoun_code(a, b) for a, b in zip(pairs["candidate_1"], pairs["candidate_2"])],
                         index=pairs.index)
        if read.notna().mean() > 0.9:  # a pronoun set: the few pairs that differ otherwise stay unknown
            return read
    if "direction" in pairs.columns:
        return pairs["direction"].map({"stereo": 1.0, "antistereo": -1.0}).astype(float)
    return nan


def design_of(codes) -> str:
    """``identified``, ``stereotype only`` or ``confounded`` for one cell's group codes (module docstring)."""
    codes = np.asarray(codes, dtype=float)
    if codes.size and np.all(codes == 0):
        return STEREOTYPE_ONLY
    if codes.size and np.all(np.isin(codes, (-1.0, 1.0))) and min((codes > 0).sum(), (codes < 0).sum()) >= MIN_SIDE:
        return IDENTIFIED
    return CONFOUNDED


def fit(d, g) -> tuple[float, float]:
    """(β_stereotype, β_group) of the least-squares fit of ``d`` on an intercept and the ±1 code ``g``."""
    d, g = np.asarray(d, dtype=float), np.asarray(g, dtype=float)
    plus, minus = d[g > 0].mean(), d[g < 0].mean()
    return float((plus + minus) / 2), float((plus - minus) / 2)


def _resampled(d, g, drawn, design) -> dict[str, np.ndarray]:
    """The estimates in each resample of whole clusters (``drawn``: :func:`cluster_draws`): ``stereotype``, and
    ``group`` when identified."""
    counts, codes = drawn
    k = counts.shape[1]
    with np.errstate(invalid="ignore", divide="ignore"):
        if design != IDENTIFIED:
            return {"stereotype": (counts @ cluster_sums(d, codes, k)) / (counts @ cluster_sums(np.ones_like(d),
                                                                                                 codes, k))}
        means = [(counts @ cluster_sums(d * side, codes, k)) / (counts @ cluster_sums(side, codes, k))
                 for side in ((g > 0).astype(float), (g < 0).astype(float))]
    return {"stereotype": (means[0] + means[1]) / 2, "group": (means[0] - means[1]) / 2}


def _interval_and_p(estimate: float, draws: np.ndarray, confidence: float,
                    k: int | None = None) -> tuple[float, float, float]:
    """The interval of the resampled estimates ``draws`` (expanded percentile for ``k`` clusters; plain percentile
    without ``k``) and the two-sided bootstrap p of ``estimate`` against 0."""
    draws = draws[np.isfinite(draws)]  # a resample that drew no pair of one group has no group mean
    if draws.size == 0:
        return float("nan"), float("nan"), float("nan")
    alpha = (1 - confidence) / 2
    low, high = np.quantile(draws, (alpha, 1 - alpha) if k is None else expanded_levels(k, confidence))
    p = (1 + np.sum(np.abs(draws - estimate) >= abs(estimate))) / (draws.size + 1)
    return float(low), float(high), float(min(p, 1.0))


def _with_pairs(scores: pd.DataFrame, pairs) -> pd.DataFrame:
    """The score rows with the pair columns the code and the clusters need (texts, groups, direction, source)."""
    wanted = ["candidate_1", "candidate_2", "group_1", "group_2", "direction", "source", "cluster"]
    if pairs is None:
        if {"candidate_1", "candidate_2"} <= set(scores.columns):
            return scores
        if "dataset" not in scores.columns:
            raise ValueError("group_stereotype: the scores carry neither the texts nor a dataset column; pass "
                             "pairs=mb.load_pairs(<dataset>) (the pairs they were scored on)")
        from ..datasets.registry import load

        pairs = pd.concat([load(name, sorted(block["attribute"].unique())).assign(dataset=name)
                           for name, block in scores.groupby("dataset", sort=False)], ignore_index=True)
    on = [c for c in ("dataset", "attribute", "pair_id") if c in scores.columns and c in pairs.columns]
    if "pair_id" not in on:
        raise ValueError("group_stereotype: scores and pairs must both have attribute and pair_id columns")
    take = on + [c for c in wanted if c in pairs.columns and c not in on]
    merged = scores.drop(columns=[c for c in take if c not in on and c in scores.columns]).merge(
        pairs[take].drop_duplicates(on), on=on, how="left", validate="many_to_one")
    if merged["candidate_1"].isna().any():
        row = merged.loc[merged["candidate_1"].isna()].iloc[0]
        raise ValueError(f"group_stereotype: pair {row['pair_id']!r} of {row['attribute']} is not in the pairs "
                         "given; pass the pairs the scores were computed on")
    return merged


def group_stereotype(scores: pd.DataFrame, pairs: pd.DataFrame | None = None, *, n_resamples: int = 9999,
                     seed: int = 0, confidence: float = 0.95, contrast: bool = False) -> pd.DataFrame:
    """Group preference and stereotype congruence of every (attribute, metric) cell of ``scores``, apart.

    ``scores`` is a score table as :func:`metricbias.score_pairs` returns it (or the released scores); ``pairs``
    the pair table they were scored on, where the scores do not carry the texts (by default the pairs of the
    scores' ``dataset`` column are loaded). Returns :data:`COLUMNS`: one row per attribute, metric and effect
    (``group``, ``stereotype``), estimates in Eq. 1-rescaled points, cluster-bootstrap intervals and p-values,
    and the ``design`` (module docstring). A cell with constant scores gets NaN estimates. With ``contrast`` a third
    row per cell, effect :data:`CONTRAST` (|β_group| − |β_stereotype|, from the same resamples), tests which of the
    two is the larger (NaN unless the design is identified).
    """
    check(scores)
    if n_resamples < 1:
        raise ValueError(f"group_stereotype: n_resamples must be at least 1, got {n_resamples}")
    table = _with_pairs(scores, pairs)
    table = table.assign(cluster=cluster_keys(table))
    codes = {}
    for attribute, block in table.drop_duplicates(["attribute", "pair_id"]).groupby("attribute", sort=False):
        codes[attribute] = pd.Series(group_codes(block).to_numpy(), index=block["pair_id"].to_numpy())
    rows, draws_of = [], {}  # the same clusters (every metric of an attribute) are resampled the same way
    for (attribute, metric), cell in table.groupby(["attribute", "metric"], sort=False):
        g = codes[attribute].reindex(cell["pair_id"].to_numpy()).to_numpy(float)
        design = design_of(g)
        clusters = cell["cluster"].to_numpy()
        k = int(pd.Series(clusters).nunique())
        base = {"attribute": attribute, "metric": metric, "n_pairs": len(cell), "n_clusters": k, "design": design}
        s1, s2 = cell["score_1"].to_numpy(float), cell["score_2"].to_numpy(float)
        if np.ptp(np.concatenate([s1, s2])) == 0:
            rows += [{**base, "effect": e, "estimate": np.nan, "ci_low": np.nan, "ci_high": np.nan,
                      "p_value": np.nan} for e in (*EFFECTS, CONTRAST)[:3 if contrast else 2]]
            continue
        r1, r2 = rescale(s1, s2, metric=metric, attribute=attribute)
        d = r1 - r2
        if design == IDENTIFIED:
            stereotype, group = fit(d, g)
        else:
            stereotype, group = float(d.mean()), float("nan")
        key = (attribute, tuple(clusters))
        if key not in draws_of:
            draws_of[key] = cluster_draws(clusters, n_resamples=n_resamples, seed=seed)
        draws = _resampled(d, g, draws_of[key], design)
        effects = [("group", group), ("stereotype", stereotype)]
        if contrast:
            if "group" in draws:
                draws[CONTRAST] = np.abs(draws["group"]) - np.abs(draws["stereotype"])
            effects.append((CONTRAST, abs(group) - abs(stereotype)))
        for effect, estimate in effects:
            low, high, p = (_interval_and_p(estimate, draws[effect], confidence, draws_of[key][0].shape[1])
                            if effect in draws
                            else (np.nan, np.nan, np.nan))
            rows.append({**base, "effect": effect, "estimate": estimate, "ci_low": low, "ci_high": high,
                         "p_value": p})
    return pd.DataFrame(rows, columns=COLUMNS)


__all__ = ["COLUMNS", "CONFOUNDED", "CONTRAST", "EFFECTS", "IDENTIFIED", "MIN_SIDE", "STEREOTYPE_ONLY", "design_of", "fit", "group_codes",
           "group_stereotype", "pronoun_code"]
