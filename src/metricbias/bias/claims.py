"""The tests behind the book's comparative sentences.

A sentence that compares ("prefers", "higher", "the same") states the test it rests on:

* preference counts: a two-sided exact binomial (sign) test per row, ties left out
  (:func:`scipy.stats.binomtest`), with Benjamini–Hochberg across the rows of one table
  (:func:`scipy.stats.false_discovery_control`): :func:`sign_tests`;
* "A is higher than B": the 95% bootstrap interval of the difference of means, paired
  when the values match pair by pair, otherwise two independent samples: :func:`compare`;
* "A is the same as B": two one-sided tests against a margin fixed in advance, i.e.
  the 90% interval of the difference inside (−margin, margin) (:func:`compare` with ``margin``);
  anything else is "not distinguishable at this size";
* p-values that underflow to 0 are written as a bound, never 0, and so is a permutation p-value at its floor
  (no resample as extreme as the data: :func:`permutation_floor`) (:func:`format_p`, :func:`p_bounds`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from .pairwise import DEFAULT_RESAMPLES, DEFAULT_SEED, design_ci

#: the smallest p-value the book writes; a smaller one (including an underflow to 0) is written as "p < FLOOR"
P_FLOOR = 1e-300
#: the false discovery rate at which a Benjamini–Hochberg adjusted p-value counts as significant
ALPHA = 0.05
#: what :func:`compare` concludes when its interval neither excludes 0 nor fits inside the margin
UNDECIDED = "not distinguishable at this size"
#: the verdict on a claim that the data cannot test (no interval: a group too small, a decomposition that cannot run)
NOT_COMPARABLE = "not comparable"
#: the four words a claim of a paper gets, in the book's tables and prose
VERDICTS = ("holds", "reverses", UNDECIDED, NOT_COMPARABLE)


def bh_adjust(p_values) -> np.ndarray:
    """Benjamini–Hochberg adjusted p-values; NaN entries (no test) stay NaN and do not count in the family."""
    p = np.asarray(p_values, dtype=float)
    out = np.full(p.shape, np.nan)
    tested = ~np.isnan(p)
    if tested.any():
        out[tested] = stats.false_discovery_control(p[tested], method="bh")
    return out


def sign_tests(first, second, *, alpha: float = ALPHA) -> pd.DataFrame:
    """Per row: how many pairs favour the first and the second side (ties already left out), the two-sided exact
    binomial p-value of H0 "each untied pair favours either side with probability 1/2", its Benjamini–Hochberg
    adjustment across the rows, and the ``favours`` verdict ("first", "second", or "neither" when the adjusted p
    is not below ``alpha``). A row without untied pairs has no test (p NaN, left out of the BH family)."""
    a, b = np.asarray(first), np.asarray(second)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"sign_tests: two 1-d count arrays of equal length needed, got {a.shape} and {b.shape}")
    if (a < 0).any() or (b < 0).any() or not (np.all(a == np.round(a)) and np.all(b == np.round(b))):
        raise ValueError("sign_tests: counts must be non-negative integers")
    a, b = a.astype(int), b.astype(int)
    p = np.array([stats.binomtest(int(x), int(x + y)).pvalue if x + y else np.nan for x, y in zip(a, b)])
    adjusted = bh_adjust(p)
    significant = adjusted < alpha  # NaN compares False
    favours = np.where(significant & (a > b), "first", np.where(significant & (b > a), "second", "neither"))
    return pd.DataFrame({"n_first": a, "n_second": b, "n_untied": a + b, "p_value": p, "p_adjusted": adjusted,
                         "favours": favours})


def cluster_sign_test(values, clusters) -> dict:
    """A sign test over independent units when the values come in dependent clusters (the cells of one association
    test through many configurations, say): per cluster the mean of its defined values, and the two-sided exact sign
    test of the clusters with a positive mean against those with a negative one (a mean of exactly 0, or no defined
    value, leaves the cluster out). Returns ``clusters`` (those counted), ``positive``, ``negative``,
    ``positive_share`` and ``p_value`` (NaN without clusters)."""
    v = np.asarray(values, dtype=float)
    c = np.asarray(clusters, dtype=object)
    if v.ndim != 1 or v.shape != c.shape:
        raise ValueError(f"cluster_sign_test: values and clusters must be 1-d of equal length, got {v.shape} and "
                         f"{c.shape}")
    means = pd.Series(v).groupby(pd.Series(c), sort=False).mean().dropna()
    positive, negative = int((means > 0).sum()), int((means < 0).sum())
    n = positive + negative
    return {"clusters": n, "positive": positive, "negative": negative,
            "positive_share": positive / n if n else float("nan"),
            "p_value": direction_verdict(positive, negative)["p"]}


def direction_verdict(agree: int, disagree: int, *, alpha: float = ALPHA) -> dict:
    """Does a claimed direction hold over units that each show a significant direction (for example the
    configurations that significantly prefer the male or the female hypothesis)? The two-sided exact sign test of
    ``agree`` against ``disagree``: ``verdict`` "holds" (more agree, p < ``alpha``), "reverses" (more disagree,
    p < ``alpha``), or :data:`UNDECIDED` (no unit shows a direction counts as undecided too), with ``p`` (NaN
    without units)."""
    if agree < 0 or disagree < 0:
        raise ValueError("direction_verdict: counts must be non-negative")
    if agree + disagree == 0:
        return {"verdict": UNDECIDED, "p": float("nan")}
    p = float(stats.binomtest(int(agree), int(agree + disagree)).pvalue)
    verdict = UNDECIDED if p >= alpha else ("holds" if agree > disagree else "reverses")
    return {"verdict": verdict, "p": p}


def permutation_floor(n_resamples: int, *, two_sided: bool = True) -> float:
    """The smallest p-value a Monte Carlo permutation test with ``n_resamples`` resamples reports: (0 + 1)/(B + 1)
    one-sided, twice that two-sided (:func:`scipy.stats.permutation_test` doubles the smaller tail). A p-value there
    means no resample was as extreme as the data: it bounds p, it does not estimate it."""
    if n_resamples < 1:
        raise ValueError(f"permutation_floor: n_resamples must be at least 1, got {n_resamples}")
    return (2.0 if two_sided else 1.0) / (n_resamples + 1)


def _at_resolution(p, resolution: float | None) -> np.ndarray:
    """Which p-values sit at a permutation test's floor ``resolution`` (float rounding allowed)."""
    p = np.asarray(p, dtype=float)
    if resolution is None:
        return np.zeros(p.shape, dtype=bool)
    return p <= resolution * (1 + 1e-9)


def format_p(p: float, *, floor: float = P_FLOOR, digits: int = 2, bare: bool = False,
             resolution: float | None = None) -> str:
    """"p = 0.031", "p = 2.1e-05", or "p < 1e-300" when ``p`` is below ``floor`` (an underflow to 0 included) or is
    the floor itself (as :func:`p_bounds` writes such a p);
    with ``resolution`` (a permutation test's :func:`permutation_floor`), a p-value at it is "p ≤ 2.0e-04", the
    bound the test can show; ``bare``: without "p " (a table cell: "0.031", "< 1e-300", "≤ 2.0e-04")."""
    if p is None or np.isnan(p):
        text = "= —"
    elif p <= floor:  # the floor itself is what p_bounds writes for a smaller p
        text = f"< {floor:.0e}".replace("e-0", "e-")
    elif _at_resolution(p, resolution):
        text = f"≤ {resolution:.{max(digits - 1, 1)}e}"
    else:
        text = f"= {p:.{digits}g}" if p >= 1e-3 else f"= {p:.{digits - 1}e}"
    return text.removeprefix("= ") if bare else f"p {text}"


def p_bounds(frame: pd.DataFrame, columns, *, floor: float = P_FLOOR, resolution: float | None = None
             ) -> pd.DataFrame:
    """``frame`` with every p-value below ``floor`` in ``columns`` replaced by ``floor`` itself, and for each such
    column a boolean ``<column>_is_upper_bound`` saying which values are bounds rather than values: those below
    ``floor`` and, with ``resolution`` (a permutation test's :func:`permutation_floor`), those at it (no resample
    as extreme as the data). A download stays numeric and never holds p = 0."""
    out = frame.copy()
    for col in ([columns] if isinstance(columns, str) else columns):
        p = out[col].astype(float)
        below = p < floor
        out[col] = p.where(~below, floor)
        out.insert(out.columns.get_loc(col) + 1, f"{col}_is_upper_bound",
                   below.to_numpy() | _at_resolution(p.to_numpy(), resolution))
    return out


def difference_interval(x, y, *, paired: bool, confidence: float = 0.95, n_resamples: int = DEFAULT_RESAMPLES,
                        seed: int = DEFAULT_SEED, clusters=None) -> dict:
    """mean(x) − mean(y) with its bootstrap interval: over the pairs (x_i − y_i) when ``paired`` (whole clusters
    resampled where ``clusters``, one key per pair, groups them, :func:`metricbias.bias.pairwise.design_ci`; else
    BCa), otherwise BCa resampling the two samples independently (:func:`scipy.stats.bootstrap`, ``paired=False``)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.ndim != 1 or y.ndim != 1 or not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise ValueError("difference_interval: two 1-d arrays of finite values needed")
    if paired and x.shape != y.shape:
        raise ValueError(f"difference_interval: a paired difference needs equal lengths, got {x.size} and {y.size}")
    if min(x.size, y.size) < 2:
        raise ValueError(f"difference_interval: at least two values per side needed, got {x.size} and {y.size}")
    difference = float(x.mean() - y.mean())
    if paired:
        low, high = design_ci(x - y, clusters, confidence=confidence, n_resamples=n_resamples, seed=seed)
    elif np.ptp(x) == 0 and np.ptp(y) == 0:  # both samples constant: the bootstrap distribution is a point
        low = high = difference
    else:
        res = stats.bootstrap((x, y), lambda a, b, axis: a.mean(axis=axis) - b.mean(axis=axis), paired=False,
                              vectorized=True, confidence_level=confidence, n_resamples=n_resamples, method="BCa",
                              rng=np.random.default_rng(seed))
        low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
    return {"difference": difference, "ci_low": low, "ci_high": high, "confidence": confidence, "n_x": int(x.size),
            "n_y": int(y.size)}


def compare(x, y, *, paired: bool, margin: float | None = None, alpha: float = 0.05,
            n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED, clusters=None) -> dict:
    """Is mean(x) above, below or (within ``margin``) the same as mean(y)?

    The (1 − ``alpha``) interval of the difference (:func:`difference_interval`) decides "higher" or "lower" when
    it excludes 0. Otherwise, with a ``margin`` fixed in advance, two one-sided tests at level ``alpha`` (the
    (1 − 2·``alpha``) interval inside (−margin, margin)) decide "same within ±margin"; failing that, the verdict is
    :data:`UNDECIDED`. Returns the difference, the interval (``ci_low``, ``ci_high``), the TOST interval
    (``tost_low``, ``tost_high``; NaN without a margin), ``margin``, ``equivalent`` (the TOST result, also when the
    difference is shown: a real difference smaller than the margin) and ``verdict``.
    """
    out = difference_interval(x, y, paired=paired, confidence=1 - alpha, n_resamples=n_resamples, seed=seed,
                              clusters=clusters)
    out.update(tost_low=np.nan, tost_high=np.nan, margin=np.nan if margin is None else float(margin),
               equivalent=False)
    if margin is not None:
        tost = difference_interval(x, y, paired=paired, confidence=1 - 2 * alpha, n_resamples=n_resamples, seed=seed,
                                   clusters=clusters)
        out.update(tost_low=tost["ci_low"], tost_high=tost["ci_high"],
                   equivalent=bool(-margin < tost["ci_low"] and tost["ci_high"] < margin))
    if out["ci_low"] > 0:
        out["verdict"] = "higher"
    elif out["ci_high"] < 0:
        out["verdict"] = "lower"
    else:
        out["verdict"] = f"same within ±{margin:g}" if out["equivalent"] else UNDECIDED
    return out


def claim_verdict(ci_low: float, ci_high: float, *, claimed: str = "higher", comparable: bool = True) -> str:
    """The one mapping from the interval of a difference to a claim's verdict (:data:`VERDICTS`).

    ``[ci_low, ci_high]`` is the interval of the difference that the claim is about, with ``claimed`` the direction
    the claim gives it ("higher": the difference is above 0, "lower": below). The claim "holds" when the interval
    lies wholly on the claimed side of 0, "reverses" when it lies wholly on the other, and is :data:`UNDECIDED`
    otherwise; "not comparable" when ``comparable`` is false or the interval is undefined (NaN)."""
    if claimed not in ("higher", "lower"):
        raise ValueError(f"claim_verdict: claimed must be 'higher' or 'lower', got {claimed!r}")
    if not comparable or ci_low is None or ci_high is None or np.isnan(ci_low) or np.isnan(ci_high):
        return NOT_COMPARABLE
    above, below = ci_low > 0, ci_high < 0
    if claimed == "lower":
        above, below = below, above
    return "holds" if above else "reverses" if below else UNDECIDED


def joint_verdict(verdicts, *, reverses_on: str = "all") -> str:
    """One claim tested on several intervals (several adapters, several measures), from their
    :func:`claim_verdict` words: "holds" when every one holds; "reverses" when every one reverses
    (``reverses_on="all"``) or when any reverses (``"any"``: one contrary interval is enough to reverse the claim);
    "not comparable" when none is comparable; :data:`UNDECIDED` otherwise."""
    if reverses_on not in ("all", "any"):
        raise ValueError(f"joint_verdict: reverses_on must be 'all' or 'any', got {reverses_on!r}")
    verdicts = [v for v in verdicts if v != NOT_COMPARABLE]
    if not verdicts:
        return NOT_COMPARABLE
    if all(v == "holds" for v in verdicts):
        return "holds"
    if (all if reverses_on == "all" else any)(v == "reverses" for v in verdicts):
        return "reverses"
    return UNDECIDED


def spearman_interval(rho: float, n: int, *, confidence: float = 0.95) -> tuple[float, float]:
    """Interval of a Spearman correlation over ``n`` units: Fisher's z with Bonett & Wright's (2000) standard error
    sqrt((1 + rho²/2) / (n − 3)); (NaN, NaN) for fewer than 4 units or an undefined rho."""
    if n < 4 or rho is None or np.isnan(rho):
        return float("nan"), float("nan")
    z = np.arctanh(np.clip(rho, -0.999999, 0.999999))
    half = stats.norm.ppf(0.5 + confidence / 2) * np.sqrt((1 + rho**2 / 2) / (n - 3))
    return float(np.tanh(z - half)), float(np.tanh(z + half))


__all__ = ["ALPHA", "NOT_COMPARABLE", "P_FLOOR", "UNDECIDED", "VERDICTS", "bh_adjust", "claim_verdict",
           "cluster_sign_test", "compare", "difference_interval", "direction_verdict", "format_p", "joint_verdict",
           "p_bounds", "permutation_floor", "sign_tests", "spearman_interval"]
