"""Generalized fairness metrics of Czarnowska et al. (2021): PCM, BCM, VBCM and MCM.

A measure is a pair (φ, d): a *scoring function* φ that maps a set of examples
A to a score φ(A) (a scalar or a set of values), and a *comparison function* d
that compares the scores of different subsets. Every measure here comes in the
paper's two versions:

* **group** (Eqs. 1, 3, 5): the examples S are split by protected group, S_t;
* **counterfactual** (Eqs. 2, 4, 6): each source example x_j has a set S'_j of
  variations, one subset S'^t_j per protected group t, and the comparison is
  made inside each S'_j and averaged over the |S'| sources.

Data come as one long table with a column ``group`` (the protected group t),
``score`` (the metric's score of that example) and, for the counterfactual
versions, ``source`` (the id of x_j). :func:`from_pairs` builds it from the two
score columns of a paired dataset.

Scoring functions φ (names; any callable ``array -> scalar or array`` also works):

* ``"mean"``: the mean score of A (a scalar);
* ``"set"``: the scores of A themselves (a set, for ``wasserstein``/``mwu``);
* ``"rescaled"`` / ``"rescaled_set"``: the same after Eq. 1 of Sun et al.: every
  score of the table is min–max rescaled to [0, 100] with the minimum and
  maximum over *all* rows of the table (every group, source and background).

Comparison functions d (Czarnowska et al., Table 2 and section 4):

* ``"abs"``: |x − y| (bivariate, symmetric);
* ``"signed"``: x − y (bivariate, antisymmetric: the order of the groups matters);
* ``"wasserstein"``: W1(X, Y) between the empirical distributions of two sets
  (Huang et al. 2020, AvgGF/AvgIF; :func:`scipy.stats.wasserstein_distance`);
* ``"mwu"``: 1/2 − U(X, Y) / (|X||Y|), with U the Mann–Whitney statistic of X
  against Y (#{x > y} + ½ #{x = y}, :func:`scipy.stats.mannwhitneyu`), as in the
  average equality gaps of Borkan et al. (2019); antisymmetric;
* ``"std"``: the (population, ddof = 0) standard deviation of the |T| scores
  (multivariate; Prabhakaran et al.'s perturbation score deviation);
* ``"range"``: max − min of the |T| scores (multivariate; perturbation score range).

**Eq. 2 of Sun et al. is a counterfactual PCM.** With T = {candidate 1,
candidate 2}, one variation per group and source (the pair i), φ = the Eq. 1
rescaled score and d = |x − y|, Eq. (2) of Czarnowska et al. with N = C(2, 2) = 1
is (1/N_pairs) Σ_i |Ŝ_i1 − Ŝ_i2|, which is Eq. 2 of Sun et al.; with
d = x − y it is their stereotypical difference (App. E). ``tests/test_generalized.py``
checks both identities on every released score column.
"""

from __future__ import annotations

import itertools
import warnings
from dataclasses import dataclass
from math import comb
from typing import Callable

import numpy as np
import pandas as pd
from scipy import stats

from .pairwise import ConstantScoresWarning
from .registry import register_measure
from .scores import GROUP, SCORE, SOURCE, from_pairs



# --------------------------------------------------------------------------- comparison functions d


@dataclass(frozen=True)
class Comparison:
    """A comparison function d of Czarnowska et al. (section 3)."""

    name: str
    arity: str  # "binary": d(x, y); "multi": d(x_1, ..., x_|T|)
    needs: str  # "scalar": φ must give scalars; "set": any φ (scalars are treated as 1-element sets)
    symmetric: bool  # d's value does not depend on the order of its arguments
    formula: str

    def __call__(self, *scores):
        return _COMPARE[self.name](*scores)


def _mwu(x, y) -> float:
    x, y = np.atleast_1d(x), np.atleast_1d(y)
    u = stats.mannwhitneyu(x, y, alternative="two-sided", method="asymptotic").statistic
    return 0.5 - float(u) / (x.size * y.size)


_COMPARE: dict[str, Callable] = {
    "abs": lambda x, y: np.abs(np.asarray(x) - np.asarray(y)),
    "signed": lambda x, y: np.asarray(x) - np.asarray(y),
    "wasserstein": lambda x, y: float(stats.wasserstein_distance(np.atleast_1d(x), np.atleast_1d(y))),
    "mwu": _mwu,
    "std": lambda *xs: np.std(np.stack([np.asarray(x, dtype=float) for x in xs]), axis=0),
    "range": lambda *xs: np.ptp(np.stack([np.asarray(x, dtype=float) for x in xs]), axis=0),
}

#: set comparisons of two one-element sets {x}, {y}: W1 = |x − y|; U = I(x > y) + ½ I(x = y)
_SINGLETON: dict[str, Callable] = {
    "wasserstein": lambda x, y: np.abs(x - y),
    "mwu": lambda x, y: 0.5 - (x > y) - 0.5 * (x == y),
}

COMPARISONS: dict[str, Comparison] = {c.name: c for c in [
    Comparison("abs", "binary", "scalar", True, "|x − y|"),
    Comparison("signed", "binary", "scalar", False, "x − y"),
    Comparison("wasserstein", "binary", "set", True, "W1(X, Y)"),
    Comparison("mwu", "binary", "set", False, "1/2 − MWU(X, Y)/(|X||Y|)"),
    Comparison("std", "multi", "scalar", True, "std(x_1, …, x_|T|)"),
    Comparison("range", "multi", "scalar", True, "max − min"),
]}


def comparison(d) -> Comparison:
    if isinstance(d, Comparison):
        return d
    if d not in COMPARISONS:
        raise ValueError(f"unknown comparison function d={d!r}; known: {', '.join(COMPARISONS)}")
    return COMPARISONS[d]


# --------------------------------------------------------------------------- scoring functions φ

SCORINGS = ("mean", "set", "rescaled", "rescaled_set")


def _phi(phi) -> tuple[Callable, bool]:
    """(function on an array of scores, rescale first?)."""
    if callable(phi):
        return phi, False
    if phi not in SCORINGS:
        raise ValueError(f"unknown scoring function phi={phi!r}; known: {', '.join(SCORINGS)} or a callable")
    if phi.endswith("set"):
        return (lambda a: np.asarray(a, dtype=float)), phi.startswith("rescaled")
    return _mean, phi.startswith("rescaled")


def rescale_all(scores, *, label: str = "scores") -> np.ndarray:
    """Eq. 1 of Sun et al. over every given score: (S − S_min)/(S_max − S_min) × 100.

    Constant scores make Eq. 1 undefined: NaN and a :class:`ConstantScoresWarning`.
    """
    s = np.asarray(scores, dtype=float)
    lo, hi = s.min(), s.max()
    if hi == lo:
        warnings.warn(f"{label}: every score is {lo:g}; Eq. 1 rescaling is undefined, so the measure is NaN",
                      ConstantScoresWarning, stacklevel=3)
        return np.full_like(s, np.nan)
    return (s - lo) / (hi - lo) * 100.0


# --------------------------------------------------------------------------- data


def _check(data: pd.DataFrame, counterfactual: bool, label: str) -> pd.DataFrame:
    need = {GROUP, SCORE} | ({SOURCE} if counterfactual else set())
    missing = need - set(data.columns)
    if missing:
        raise ValueError(f"{label}: the score table lacks column(s) {sorted(missing)} "
                         f"(a {'counterfactual' if counterfactual else 'group'} measure needs {sorted(need)})")
    if data.empty:
        raise ValueError(f"{label}: the score table is empty")
    scores = pd.to_numeric(data[SCORE], errors="coerce").to_numpy(dtype=float)
    if not np.all(np.isfinite(scores)):
        bad = data.index[~np.isfinite(scores)][:3].tolist()
        raise ValueError(f"{label}: scores must be finite numbers (rows {bad} are not)")
    return data


def _groups(data: pd.DataFrame, groups, exclude=()) -> list:
    present = list(dict.fromkeys(data[GROUP]))
    if groups is None:
        out = [g for g in present if g not in exclude]
    else:
        out = list(groups)
        unknown = [g for g in out if g not in present]
        if unknown:
            raise ValueError(f"group(s) {unknown} have no rows; groups present: {present}")
    if len(out) != len(set(out)):
        raise ValueError(f"groups must be distinct, got {out}")
    return out


def _scored(data: pd.DataFrame, rescale: bool, label: str) -> pd.DataFrame:
    data = data.copy()
    data[SCORE] = data[SCORE].astype(float)
    if rescale:
        data[SCORE] = rescale_all(data[SCORE].to_numpy(), label=label)
    return data


def _mean(a) -> float:
    return float(np.mean(a))


def _cells(data: pd.DataFrame, groups: list, phi_fn: Callable, label: str) -> dict:
    """φ of every (source, group) cell: {group: values over sources}, sources in sorted order."""
    codes, sources = pd.factorize(data[SOURCE], sort=True)
    n = len(sources)
    group_of = data[GROUP].to_numpy()
    values = data[SCORE].to_numpy(dtype=float)
    cells = {}
    for g in groups:
        mask = group_of == g
        src, v = codes[mask], values[mask]
        counts = np.bincount(src, minlength=n)
        if (counts == 0).any():
            miss = list(sources[counts == 0])
            raise ValueError(f"{label}: counterfactual measures need every source to have a variation for every "
                             f"group; group {g!r} is missing for source(s) {miss[:5]}{' …' if len(miss) > 5 else ''}")
        if phi_fn is _mean:  # the common case, vectorized
            cells[g] = np.bincount(src, weights=v, minlength=n) / counts
        else:
            order = np.argsort(src, kind="stable")
            cells[g] = [phi_fn(chunk) for chunk in np.split(v[order], np.cumsum(counts)[:-1])]
    return {"sources": list(sources), "phi": cells}


def _apply(d: Comparison, *args):
    """d on the φ values of several groups (one list per group, one entry per source).

    Vectorized over sources when φ gave scalars and d compares scalars; one call per source otherwise.
    """
    scalar = all(np.ndim(v) == 0 for a in args for v in a)
    if scalar and d.needs == "scalar":
        return np.asarray(d(*[np.asarray(a, dtype=float) for a in args]), dtype=float)
    if d.name in _SINGLETON and all(np.size(v) == 1 for a in args for v in a):
        # every cell holds one score (one candidate per group and source): the closed form, vectorized
        return _SINGLETON[d.name](*[np.array([np.ravel(v)[0] for v in a], dtype=float) for a in args])
    if d.needs == "scalar":
        raise ValueError(f"d={d.name!r} ({d.formula}) compares scalars; φ gives sets here — use phi='mean' or "
                         "'rescaled', or a set comparison ('wasserstein', 'mwu')")
    return np.array([d(*cell) for cell in zip(*args)], dtype=float)


def _check_arity(d: Comparison, measure: str, n_groups: int) -> None:
    if measure in ("PCM", "BCM") and d.arity != "binary":
        raise ValueError(f"{measure} compares two scores at a time; d={d.name!r} is multivariate (use it in MCM)")
    if measure == "MCM" and d.arity == "binary" and n_groups != 2:
        raise ValueError(f"MCM with the bivariate d={d.name!r} needs exactly 2 groups, got {n_groups}")
    if measure == "PCM" and n_groups < 2:
        raise ValueError(f"PCM needs at least 2 protected groups, got {n_groups}")


# --------------------------------------------------------------------------- PCM


def _setup(data, phi, d, version, measure: str):
    """What every measure starts with: the comparison, φ, the version, a label for messages, the scored data."""
    d = comparison(d)
    phi_fn, rescale = _phi(phi)
    counterfactual = _version(version)
    label = f"{'counterfactual' if counterfactual else 'group'} {measure}"
    return d, phi_fn, counterfactual, label, _scored(_check(data, counterfactual, label), rescale, label)


def pcm(data: pd.DataFrame, phi="mean", d="abs", *, version: str = "counterfactual", groups=None,
        normalizer: float | None = None, per_source: bool = False):
    """Pairwise Comparison Metric (Czarnowska et al., section 3.1).

    Group PCM, Eq. (1): (1/N) Σ_{(t_i, t_j) ∈ C(T, 2)} d(φ(S_ti), φ(S_tj)).
    Counterfactual PCM, Eq. (2): (1/(|S'| N)) Σ_j Σ_{(t_i, t_k) ∈ C(T, 2)} d(φ(S'^ti_j), φ(S'^tk_j)).

    N defaults to C(|T|, 2), the number of unordered group pairs; the pairs are
    taken in the order of ``groups`` (t_i before t_k), which matters only for an
    antisymmetric d. ``per_source=True`` returns the counterfactual terms of each
    source (a Series whose mean is the PCM) for bootstrap intervals.
    """
    d, phi_fn, counterfactual, label, data = _setup(data, phi, d, version, "PCM")
    groups = _groups(data, groups)
    _check_arity(d, "PCM", len(groups))
    n = comb(len(groups), 2) if normalizer is None else normalizer
    if counterfactual:
        c = _cells(data, groups, phi_fn, label)
        terms = sum(_apply(d, c["phi"][a], c["phi"][b])
                    for a, b in itertools.combinations(groups, 2)) / n
        out = pd.Series(terms, index=pd.Index(c["sources"], name=SOURCE), name="pcm")
        return out if per_source else float(out.mean())
    if per_source:
        raise ValueError("per_source applies to the counterfactual version only")
    phis = {g: phi_fn(data.loc[data[GROUP] == g, SCORE].to_numpy()) for g in groups}
    return float(sum(float(_apply(d, [phis[a]], [phis[b]])[0])
                     for a, b in itertools.combinations(groups, 2)) / n)


# --------------------------------------------------------------------------- BCM / VBCM


def _version(version: str) -> bool:
    if version not in ("counterfactual", "group"):
        raise ValueError(f"version must be 'counterfactual' or 'group', got {version!r}")
    return version == "counterfactual"


def _background_rows(data: pd.DataFrame, background, group, label: str) -> pd.DataFrame:
    if background == "all":
        return data
    if background == "rest":
        return data[data[GROUP] != group]
    rows = data[data[GROUP] == background]
    if rows.empty:
        raise ValueError(f"{label}: background {background!r} is neither 'all', 'rest' nor a group with rows; "
                         f"groups present: {list(dict.fromkeys(data[GROUP]))}")
    return rows


def vbcm(data: pd.DataFrame, phi="mean", d="abs", *, background="all", version: str = "counterfactual",
         groups=None, per_source: bool = False):
    """Vector-valued Background Comparison Metric (section 3.2): one value per protected group.

    Group, Eq. (3) without the sum: d(φ(β_ti,S), φ(S_ti)) for each t_i.
    Counterfactual, Eq. (4) without the sum: (1/|S'|) Σ_j d(φ(β_ti,S'_j), φ(S'^ti_j)).

    ``background`` is β: ``"all"`` (S, or all variations S'_j of the source),
    ``"rest"`` (S \\ S_ti, or the other variations of the source), or the name of a
    group in the table (a privileged group, or the unperturbed example of each
    source); a named background is left out of T. d is applied as
    d(φ(background), φ(group)), the paper's order. Returns a Series indexed by group
    (``per_source=True``: a frame, sources × groups).
    """
    d, phi_fn, counterfactual, label, data = _setup(data, phi, d, version, "BCM")
    named = background not in ("all", "rest")
    groups = _groups(data, groups, exclude=(background,) if named else ())
    if named and background in groups:
        raise ValueError(f"{label}: the background group {background!r} cannot also be a protected group")
    _check_arity(d, "BCM", len(groups))
    if not groups:
        raise ValueError(f"{label}: no protected groups besides the background")
    values = {}
    if counterfactual:
        for g in groups:
            bg = _background_rows(data, background, g, label)
            own = data[data[GROUP] == g]
            c_own = _cells(own, [g], phi_fn, label)
            bg = bg.assign(**{GROUP: "__background__"})
            c_bg = _cells(bg, ["__background__"], phi_fn, label)
            if c_own["sources"] != c_bg["sources"]:
                missing = sorted(set(c_own["sources"]) ^ set(c_bg["sources"]))
                raise ValueError(f"{label}: sources {missing[:5]} lack either the background or group {g!r}")
            values[g] = _apply(d, c_bg["phi"]["__background__"], c_own["phi"][g])
        frame = pd.DataFrame(values, index=pd.Index(c_own["sources"], name=SOURCE))
        return frame if per_source else frame.mean().rename("vbcm")
    if per_source:
        raise ValueError("per_source applies to the counterfactual version only")
    for g in groups:
        bg = _background_rows(data, background, g, label)[SCORE].to_numpy()
        own = data.loc[data[GROUP] == g, SCORE].to_numpy()
        values[g] = float(_apply(d, [phi_fn(bg)], [phi_fn(own)])[0])
    return pd.Series(values, name="vbcm")


def bcm(data: pd.DataFrame, phi="mean", d="abs", *, background="all", version: str = "counterfactual",
        groups=None, normalizer: float | None = None, per_source: bool = False):
    """Background Comparison Metric (section 3.2), Eqs. (3)–(4): (1/N) Σ_{t_i ∈ T} of the VBCM entries.

    N defaults to |T|. See :func:`vbcm` for the background; ``per_source=True``
    returns each source's term (a Series whose mean is the BCM).
    """
    v = vbcm(data, phi, d, background=background, version=version, groups=groups, per_source=per_source)
    n = (v.shape[1] if per_source else v.size) if normalizer is None else normalizer
    if per_source:
        return (v.sum(axis=1) / n).rename("bcm")
    return float(v.sum() / n)


# --------------------------------------------------------------------------- MCM


def mcm(data: pd.DataFrame, phi="mean", d="std", *, version: str = "counterfactual", groups=None,
        per_source: bool = False):
    """Multi-group Comparison Metric (section 3.3).

    Group, Eq. (5): d(φ(S_t1), …, φ(S_t|T|)).
    Counterfactual, Eq. (6): (1/|S'|) Σ_j d(φ(S'^t1_j), …, φ(S'^t|T|_j)).
    d is multivariate (``std``, ``range``), or bivariate when |T| = 2.
    """
    d, phi_fn, counterfactual, label, data = _setup(data, phi, d, version, "MCM")
    groups = _groups(data, groups)
    _check_arity(d, "MCM", len(groups))
    if counterfactual:
        c = _cells(data, groups, phi_fn, label)
        terms = _apply(d, *[c["phi"][g] for g in groups])
        out = pd.Series(terms, index=pd.Index(c["sources"], name=SOURCE), name="mcm")
        return out if per_source else float(out.mean())
    if per_source:
        raise ValueError("per_source applies to the counterfactual version only")
    phis = [[phi_fn(data.loc[data[GROUP] == g, SCORE].to_numpy())] for g in groups]
    return float(_apply(d, *phis)[0])


MEASURES = {"PCM": pcm, "BCM": bcm, "MCM": mcm}

#: instances of the framework on a paired dataset, T = (candidate 1, candidate 2): name -> (measure, version, φ, d)
PAIRED_INSTANCES = {
    "eq2": ("PCM", "counterfactual", "rescaled", "abs"),  # Sun et al. Eq. 2
    "stereotypical": ("PCM", "counterfactual", "rescaled", "signed"),  # Sun et al. App. E
    "group_abs": ("PCM", "group", "rescaled", "abs"),  # |difference of the two mean rescaled scores|
    "group_w1": ("PCM", "group", "rescaled_set", "wasserstein"),  # W1 between the two score distributions
    "group_mwu": ("PCM", "group", "set", "mwu"),  # 1/2 − AUC of candidate 1 against candidate 2
    "counterfactual_mwu": ("PCM", "counterfactual", "set", "mwu"),  # 1/2 − P(S_1 > S_2) − ½ P(tie)
}


def paired_value(data: pd.DataFrame, name: str) -> float:
    """The paired instance ``name`` of :data:`PAIRED_INSTANCES` on a long table (:func:`from_pairs`)."""
    measure, version, phi, d = PAIRED_INSTANCES[name]
    return MEASURES[measure](data, phi, d, version=version)


def paired_table(scores: pd.DataFrame, instances=None) -> pd.DataFrame:
    """Several (measure, version, φ, d) instances for every (attribute, metric) of a long paired score table.

    ``scores`` has columns ``attribute, metric, score_1, score_2`` (``published.scores()``);
    ``instances`` names instances of :data:`PAIRED_INSTANCES` (default: all of them).
    """
    from .scores import cells

    instances = list(PAIRED_INSTANCES if instances is None else instances)
    rows = []
    for key, g in cells(scores):
        data = from_pairs(g["score_1"], g["score_2"])
        rows.append({**key, "n_pairs": len(g), **{name: paired_value(data, name) for name in instances}})
    return pd.DataFrame(rows)


#: the paired instances registered as bias measures (Eq. 2 and App. E are registered as ``bias`` and
#: ``stereotypical_difference`` by :mod:`metricbias.bias.pairwise`): name -> description
REGISTERED = {
    "group_abs": "|difference of the two candidates' mean rescaled scores| (group PCM)",
    "group_w1": "Wasserstein-1 distance between the two candidates' rescaled score sets (group PCM)",
    "group_mwu": "1/2 - AUC of candidate 1's scores against candidate 2's (group PCM, Mann-Whitney)",
    "counterfactual_mwu": "1/2 - P(S_1 > S_2) - P(tie)/2 over pairs (counterfactual PCM, Mann-Whitney)",
}


def _registered(name: str) -> Callable:
    def value(data: pd.DataFrame) -> float:
        return paired_value(data, name)

    value.__name__ = value.__qualname__ = name
    value.__doc__ = REGISTERED[name]
    return value


for _name, _description in REGISTERED.items():
    register_measure(_name, _registered(_name), takes="groups", citation="Czarnowska et al. 2021",
                     description=_description)

__all__ = ["COMPARISONS", "Comparison", "MEASURES", "PAIRED_INSTANCES", "SCORINGS", "bcm", "comparison", "from_pairs",
           "mcm", "paired_table", "paired_value", "pcm", "rescale_all", "vbcm"]
