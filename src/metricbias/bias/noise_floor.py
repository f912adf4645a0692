"""A noise floor for Eq. 2: is a metric biased, or merely sensitive to any one-word change?

Eq. 2 averages |Ŝ_1 − Ŝ_2| over pairs whose candidates differ in one identity word. A metric that moves with
*any* word change gets an Eq. 2 above zero on every attribute, biased or not. The floor is the same measure on
*control pairs*: the same templates, the identity slot filled instead with two socially neutral words of the
same part of speech and similar frequency (:func:`control_pairs`), scored against the same (neutral) references.

:func:`control_pairs` builds them from a pair table. The slot is the word in which the two candidates differ
(pairs that differ in more than one word on either side are left out, and counted). Its part of speech decides
the neutral fillers (:data:`NEUTRAL`): a personal pronoun keeps its case and drops the gender (he/she →
this/that, which agree with the same verb; his/her → my/your; him/her → it/this; himself/herself →
myself/yourself); a noun (singular or plural) or an adjective takes a pair of neutral words of its kind and of
about its frequency (:mod:`metricbias.bias.neutral_words`: WordNet nouns of furniture, vehicles, buildings, food,
landforms, ... and adjectives of temperature, size, wetness, brightness, ...; the
:data:`~metricbias.bias.neutral_words.NEAREST` pairs nearest in Google News frequency rank, one drawn per template
with a seed). The identity word's kind comes from :data:`KINDS`, else WordNet's first synset. Each control pair
keeps its source pair's id in ``source`` and its references.

:func:`noise_floor` compares the two per (attribute, metric): Eq. 2 on the attribute and on the controls, both
with one Eq. 1 rescaling (the range of all their scores together, so the two are on one scale), and their
difference, the *excess*. Its interval resamples whole templates (an attribute pair and its controls are one
cluster; the expanded percentile interval of :mod:`metricbias.bias.clusters`); its p-value is a sign-flip test over templates of the per-template
difference of mean |d| (under the null, the attribute word and the neutral word are exchangeable within a
template), two-sided. "Biased" then means "moves more with the identity word than with a neutral one".
"""

from __future__ import annotations

import difflib
import re

import numpy as np
import pandas as pd

from . import neutral_words
from .clusters import cluster_draws, cluster_keys, cluster_sums, expanded_levels
from .pairwise import DEFAULT_RESAMPLES, DEFAULT_SEED

#: the columns of :func:`noise_floor`, exactly
COLUMNS = ["attribute", "metric", "eq2", "eq2_control", "excess", "ci_low", "ci_high", "p_value", "n_pairs",
           "n_control", "n_clusters"]
#: personal pronouns by case, and their neutral (person, not gender) replacements
PRONOUN_CASES = {"he": "subject", "she": "subject", "his": "possessive", "her": "possessive", "him": "object",
                 "hers": "possessive_pronoun", "himself": "reflexive", "herself": "reflexive",
                 "they": "subject", "them": "object", "their": "possessive", "themselves": "reflexive"}
#: neutral filler pairs of the pronouns by case (nouns and adjectives: :mod:`metricbias.bias.neutral_words`)
NEUTRAL = {
    "subject": [("this", "that")], "object": [("it", "this")], "possessive": [("my", "your")],
    "possessive_pronoun": [("mine", "yours")], "reflexive": [("myself", "yourself")],
}
#: the kind of frequent identity words whose WordNet first sense is not the one meant here
KINDS = {"black": "adjective", "white": "adjective", "asian": "adjective", "latino": "adjective",
         "african": "adjective", "american": "adjective", "old": "adjective", "young": "adjective",
         "rich": "adjective", "poor": "adjective", "gay": "adjective", "straight": "adjective", "fat": "adjective",
         "thin": "adjective", "christian": "adjective", "muslim": "adjective", "jewish": "adjective",
         "man": "noun", "woman": "noun", "men": "plural", "women": "plural", "boy": "noun", "girl": "noun"}
_TOKENS = re.compile(r"\w+|[^\w\s]")


def _slot(c1: str, c2: str):
    """(start, end) character span of the one word in which ``c1`` differs from ``c2``, and the two words; None
    when they differ in more (or less) than one word on either side."""
    a, b = list(_TOKENS.finditer(c1)), list(_TOKENS.finditer(c2))
    ops = [op for op in difflib.SequenceMatcher(a=[m.group().lower() for m in a], b=[m.group().lower() for m in b],
                                                autojunk=False).get_opcodes() if op[0] != "equal"]
    if len(ops) != 1 or ops[0][0] != "replace" or ops[0][2] - ops[0][1] != 1 or ops[0][4] - ops[0][3] != 1:
        return None
    word = a[ops[0][1]]
    return word.start(), word.end(), word.group(), b[ops[0][3]].group()


def kind_of(word: str, other: str = "") -> str | None:
    """The kind of filler a slot word takes: a pronoun case, ``noun``, ``plural`` or ``adjective`` (:data:`KINDS`,
    else WordNet's first synset), or None (no neutral filler). ``other``, the word candidate 2 has there, tells
    "her" the object (against "him") from "her" the possessive (against "his")."""
    w = word.lower()
    if w == "her" and other.lower() == "him":
        return "object"
    if w in PRONOUN_CASES:
        return PRONOUN_CASES[w]
    if w in KINDS:
        return KINDS[w]
    try:
        from ..wordnet import reader

        synsets = reader().synsets(w)
    except Exception:  # no WordNet here: only the words of KINDS and the pronouns get a filler
        return None
    pos = synsets[0].pos() if synsets else None
    if pos == "n" and reader().morphy(w, "n") not in (None, w):
        return "plural"
    return {"n": "noun", "a": "adjective", "s": "adjective"}.get(pos)


def _match_case(filler: str, word: str) -> str:
    return filler[0].upper() + filler[1:] if word[:1].isupper() else filler


def control_pairs(pairs: pd.DataFrame, *, seed: int = DEFAULT_SEED) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Control pairs for a pair table (module docstring): ``(controls, left_out)``. ``controls`` is in the pair
    layout, one per pair with a one-word slot of a known kind, ``pair_id`` ``<source>|control``, ``source`` the
    pair it comes from, candidate 1 and 2 the template with the two neutral fillers, the pair's references, the
    ``kind``; ``left_out`` counts the pairs without one per attribute and reason."""
    rng = np.random.default_rng(seed)
    rows, skipped = [], []
    for row in pairs.itertuples(index=False):
        slot = _slot(str(row.candidate_1), str(row.candidate_2))
        if slot is None:
            skipped.append((row.attribute, "differ in more than one word"))
            continue
        start, end, word, other = slot
        kind = kind_of(word, other)
        if kind is None:
            skipped.append((row.attribute, "no neutral filler for the word's kind"))
            continue
        options = NEUTRAL.get(kind) or neutral_words.nearest_fillers(kind, word)
        if not options:
            skipped.append((row.attribute, "no neutral filler for the word's kind"))
            continue
        first, second = options[int(rng.integers(len(options)))]
        template = str(row.candidate_1)
        rows.append({"dataset": getattr(row, "dataset", "pairs"), "attribute": row.attribute,
                     "pair_id": f"{row.pair_id}|control", "source": row.pair_id,
                     "candidate_1": template[:start] + _match_case(first, word) + template[end:],
                     "candidate_2": template[:start] + _match_case(second, word) + template[end:],
                     "reference_1": row.reference_1, "reference_2": row.reference_2, "group_1": "", "group_2": "",
                     "kind": kind})
    left = pd.DataFrame(skipped, columns=["attribute", "reason"]).value_counts().rename("pairs").reset_index()
    return pd.DataFrame(rows), left


def _with_sources(control_scores: pd.DataFrame, controls: pd.DataFrame | None, caller: str) -> pd.DataFrame:
    """The control scores with the ``source`` column (the attribute pair each control comes from)."""
    if "source" in control_scores.columns:
        return control_scores
    if controls is None or "source" not in controls.columns:
        raise ValueError(f"{caller}: the control scores need a source column (the attribute pair each control "
                         "comes from); pass controls=<the control pair table>")
    return control_scores.merge(controls[["attribute", "pair_id", "source"]], on=["attribute", "pair_id"], how="left")


def _cells(scores: pd.DataFrame, control_scores: pd.DataFrame):
    """Per (attribute, metric): ``(attribute, metric, cell, terms)``, with ``terms`` None where the cell has no control
    or constant scores, else ``(d_attr, d_ctrl, keys)``: the |d| of the attribute pairs and of their controls on one
    Eq. 1 scale (the range of all their scores together) and the template key of every term, attribute pairs first."""
    for (attribute, metric), cell in scores.groupby(["attribute", "metric"], sort=False):
        ctrl = control_scores[(control_scores["attribute"] == attribute) & (control_scores["metric"] == metric)]
        ctrl = ctrl[ctrl["source"].isin(cell["pair_id"])]
        pooled = np.concatenate([cell[["score_1", "score_2"]].to_numpy(float).ravel(),
                                 ctrl[["score_1", "score_2"]].to_numpy(float).ravel()])
        if ctrl.empty or np.ptp(pooled) == 0:
            yield attribute, metric, cell, ctrl, None
            continue
        scale = 100.0 / np.ptp(pooled)
        d_attr = np.abs(cell["score_1"].to_numpy(float) - cell["score_2"].to_numpy(float)) * scale
        d_ctrl = np.abs(ctrl["score_1"].to_numpy(float) - ctrl["score_2"].to_numpy(float)) * scale
        keys = cluster_keys(pd.DataFrame({"attribute": attribute, "pair_id": np.r_[cell["pair_id"].astype(str),
                                                                                 ctrl["source"].astype(str)]}))
        yield attribute, metric, cell, ctrl, (d_attr, d_ctrl, keys.to_numpy())


def noise_floor(scores: pd.DataFrame, control_scores: pd.DataFrame, *, controls: pd.DataFrame | None = None,
                n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                confidence: float = 0.95) -> pd.DataFrame:
    """Eq. 2 on the attribute's pairs beside Eq. 2 on their control pairs, per (attribute, metric): :data:`COLUMNS`.

    ``scores``: a score table of the attribute's pairs (``attribute, metric, pair_id, score_1, score_2``);
    ``control_scores``: the same metrics on the control pairs (:func:`control_pairs`), whose ``source`` (from the
    table or from ``controls``, the control pair table) names the attribute pair each comes from. ``excess`` is
    Eq. 2 minus its control, with a template-bootstrap interval and a sign-flip p-value over templates.
    """
    from .testing import sign_flip_test

    control_scores = _with_sources(control_scores, controls, "noise_floor")
    rows = []
    for attribute, metric, cell, ctrl, terms in _cells(scores, control_scores):
        base = {"attribute": attribute, "metric": metric, "n_pairs": len(cell), "n_control": len(ctrl)}
        if terms is None:
            rows.append({**base, "n_clusters": 0, **dict.fromkeys(COLUMNS[2:8], np.nan)})
            continue
        d_attr, d_ctrl, keys = terms
        counts, codes = cluster_draws(keys, n_resamples=n_resamples, seed=seed)
        k = counts.shape[1]
        is_attr = np.r_[np.ones(len(d_attr)), np.zeros(len(d_ctrl))]
        terms = np.r_[d_attr, d_ctrl]
        with np.errstate(invalid="ignore", divide="ignore"):
            boot = ((counts @ cluster_sums(terms * is_attr, codes, k)) / (counts @ cluster_sums(is_attr, codes, k))
                    - (counts @ cluster_sums(terms * (1 - is_attr), codes, k))
                    / (counts @ cluster_sums(1 - is_attr, codes, k)))
        boot = boot[np.isfinite(boot)]
        low, high = np.quantile(boot, expanded_levels(k, confidence))
        per_attr = cluster_sums(terms * is_attr, codes, k) / np.maximum(cluster_sums(is_attr, codes, k), 1)
        per_ctrl = cluster_sums(terms * (1 - is_attr), codes, k) / np.maximum(cluster_sums(1 - is_attr, codes, k), 1)
        both = (cluster_sums(is_attr, codes, k) > 0) & (cluster_sums(1 - is_attr, codes, k) > 0)
        diff = (per_attr - per_ctrl)[both]
        p = sign_flip_test(diff, n_resamples=n_resamples or DEFAULT_RESAMPLES, seed=seed) if diff.size >= 2 else np.nan
        rows.append({**base, "n_clusters": int(both.sum()), "eq2": float(d_attr.mean()),
                     "eq2_control": float(d_ctrl.mean()), "excess": float(d_attr.mean() - d_ctrl.mean()),
                     "ci_low": float(low), "ci_high": float(high), "p_value": float(p)})
    return pd.DataFrame(rows, columns=COLUMNS)


def template_excess(scores: pd.DataFrame, control_scores: pd.DataFrame, *,
                    controls: pd.DataFrame | None = None) -> pd.DataFrame:
    """The excess over the floor per template: for every (attribute, metric) cell of :func:`noise_floor` and every
    template with both attribute pairs and controls, the mean |d| of its attribute pairs minus that of its controls
    (one Eq. 1 scale per cell, as :func:`noise_floor` uses). Columns ``attribute, metric, template, excess,
    attribute_d`` (the last: the attribute pairs' mean |d| alone, for the same comparison without the floor); two
    metrics' rows on the same template pair up, so a paired comparison of metrics against their floors can resample
    templates."""
    control_scores = _with_sources(control_scores, controls, "template_excess")
    frames = []
    for attribute, metric, _, _, terms in _cells(scores, control_scores):
        if terms is None:
            continue
        d_attr, d_ctrl, keys = terms
        side = np.r_[np.ones(len(d_attr), bool), np.zeros(len(d_ctrl), bool)]
        means = pd.DataFrame({"template": keys, "side": side, "d": np.r_[d_attr, d_ctrl]}).pivot_table(
            index="template", columns="side", values="d", aggfunc="mean").dropna()
        if means.empty:
            continue
        frames.append(pd.DataFrame({"attribute": attribute, "metric": metric, "template": means.index.astype(str),
                                    "excess": (means[True] - means[False]).to_numpy(float),
                                    "attribute_d": means[True].to_numpy(float)}))
    return (pd.concat(frames, ignore_index=True) if frames else
            pd.DataFrame(columns=["attribute", "metric", "template", "excess", "attribute_d"]))


def distinct_cells(scores: pd.DataFrame, control_scores: pd.DataFrame, *,
                   controls: pd.DataFrame | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``scores`` with each floor cell counted once: a cell (attribute, metric) whose scores equal an earlier
    metric's on the same attribute pairs and on the same control pairs (:func:`metricbias.bias.scores.
    identical_cells` over both) is the same comparison, so it is dropped, as the book counts identical configurations
    once. Returns ``(kept scores, dropped cells)``, the latter with ``attribute, metric, same_as_metric, pairs``
    (attribute and control pairs compared). A cell equal on the attribute pairs only is kept: its floor differs."""
    from .scores import identical_cells

    control_scores = _with_sources(control_scores, controls, "distinct_cells")
    columns = ["attribute", "metric", "pair_id", "score_1", "score_2"]
    both = pd.concat([scores[columns].assign(pair_id=lambda f: "pair " + f["pair_id"].astype(str)),
                      control_scores[columns].assign(pair_id=lambda f: "control " + f["pair_id"].astype(str))],
                     ignore_index=True)
    same = identical_cells(both)[["attribute", "metric", "same_as_metric", "pairs"]]
    dropped = pd.MultiIndex.from_frame(same[["attribute", "metric"]])
    keep = ~pd.MultiIndex.from_frame(scores[["attribute", "metric"]]).isin(dropped)
    return scores[keep].reset_index(drop=True), same.reset_index(drop=True)


__all__ = ["COLUMNS", "KINDS", "NEUTRAL", "PRONOUN_CASES", "control_pairs", "distinct_cells", "kind_of", "noise_floor",
           "template_excess"]
