"""Distributional bias measures of Liu (2024): KLS and JSS on Gaussian fits of two score sets.

Liu represents the scores of the stereotypical sentences, S_st, and of the
anti-stereotypical ones, S_at, by Gaussians P_st = N(μ_st, σ_st²) and
P_at = N(μ_at, σ_at²) (Eqs. 3–4) and defines

* KLS = 100 · max(KL(P_st‖P_at), KL(P_at‖P_st)) / (KL(P_st‖P_at) + KL(P_at‖P_st))   (Eq. 6),
  in [50, 100]; 50 means no preference;
* JSS = 100 · (1 − JS(P_st‖P_at)) / (1 + Δσ), Δσ = |σ_st − σ_at|   (Eq. 9),
  with JS(P‖Q) = (KL(P‖M) + KL(Q‖M))/2 and M = (P + Q)/2 the mixture (Eqs. 7–8);
  JS "from 0 to 1", i.e. in bits; 100 means identical fits;
* over several bias types t, both are averaged with weights |D^(t)|/|D| (Eqs. 10–11).

Choices stated here (the paper leaves them open):

* **fit**: mean and sample standard deviation (``ddof=1``), as the authors'
  released code (``torch.std_mean``) does;
* **KL** of two Gaussians in closed form (nats; KLS is a ratio, so the base cancels);
* **JS** with M the exact mixture of Eq. 7, integrated numerically
  (:func:`scipy.integrate.quad`), in bits so that it lies in [0, 1]
  (``variant="paper"``, the default);
* **0/0 in Eq. 6**: two identical fits have KL = 0 both ways; we define KLS = 50
  there, the value Eq. 6 takes for *every* pair of equal-variance fits (then
  KL(P‖Q) = KL(Q‖P) = (μ_P − μ_Q)²/2σ², so KLS is constant 50 along any path
  to the identical pair);
* a fit with σ = 0 (constant scores) is not a distribution: a clear error.

**The author's released code** (``nlply/robust-bias-evaluation-measures``,
``code/scoring.py``, ``js_div``) computes JSS differently, and
``variant="author_code"`` reproduces it:

1. M is replaced by a single Gaussian, N((μ_st + μ_at)/2, (σ_st² + σ_at²)/2),
   so both KL terms have closed forms;
2. JS = (KL(P_st‖M) + KL(P_at‖M))/2 is in nats;
3. both JS and Δσ are folded with x ↦ min(x, 1)/max(x, 1), i.e. x for x ≤ 1 and
   1/x above: JS is not bounded by 1 in nats, and past 1 nat the fold makes JSS
   *rise* again as the two fits move further apart (two Gaussians 6σ apart have
   JS = 4.5 nats, folded to 0.22, so JSS = 77.8). For scores on [0, 1], Δσ ≤ 1
   and its fold changes nothing.

:func:`jss_variants` puts both side by side.

Note what Eq. 6 implies for Gaussians: the two KL divergences differ only
through the variances, so KLS measures how unequal the spreads are (weighted by
the mean gap), never the mean gap alone. JSS mixes both, and Δσ is in the
scores' own units, so JSS depends on the scale of the scores; for metric scores
we use the Eq. 1 rescaling of Sun et al. divided by 100 (scores in [0, 1]), see
:func:`pair_measures`.
"""

from __future__ import annotations

import math

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import integrate, stats

from .registry import register_measure

DEFAULT_DDOF = 1


@dataclass(frozen=True)
class GaussianFit:
    """N(mean, std²) fitted to ``n`` scores (Liu, Eqs. 3–4)."""

    mean: float
    std: float
    n: int = 0

    def __post_init__(self):
        if not (np.isfinite(self.mean) and np.isfinite(self.std)) or self.std <= 0:
            raise ValueError(f"a Gaussian needs a finite mean and a positive standard deviation, got "
                             f"mean={self.mean!r}, std={self.std!r}")


def fit_gaussian(scores, *, ddof: int = DEFAULT_DDOF, label: str = "scores") -> GaussianFit:
    """Mean and standard deviation of a score set (Eqs. 3–4)."""
    s = np.asarray(scores, dtype=float).ravel()
    if s.size <= ddof:
        raise ValueError(f"{label}: {s.size} score(s); a Gaussian fit needs more than {ddof}")
    if not np.all(np.isfinite(s)):
        raise ValueError(f"{label}: scores must be finite ({int((~np.isfinite(s)).sum())} are not)")
    std = float(np.std(s, ddof=ddof))
    if std == 0:
        raise ValueError(f"{label}: all {s.size} scores are {s[0]:g}; a Gaussian fit needs some spread")
    return GaussianFit(float(np.mean(s)), std, int(s.size))


def _fit(x, label) -> GaussianFit:
    return x if isinstance(x, GaussianFit) else fit_gaussian(x, label=label)


def kl_gaussian(p: GaussianFit, q: GaussianFit) -> float:
    """KL(P‖Q) of two Gaussians (Eq. 5), in nats: log(σ_q/σ_p) + (σ_p² + (μ_p − μ_q)²)/(2σ_q²) − 1/2."""
    return float(np.log(q.std / p.std) + (p.std ** 2 + (p.mean - q.mean) ** 2) / (2 * q.std ** 2) - 0.5)


def _expected_log_ratio(a: GaussianFit, b: GaussianFit) -> float:
    """E_A[log(a(X)/m(X))] in nats, m = (a + b)/2, integrated in A's standardized variable z = (x − μ_a)/σ_a.

    In z the weight is a standard normal whatever the two scales; the integrand
    changes fastest where the two log densities cross and around B's mean, so
    those points are handed to the adaptive quadrature as break points.
    """
    # plain floats and the math module: quad calls the integrand hundreds of times per pair of fits, and numpy's
    # scalar arithmetic costs several times more per call (np.logaddexp computes the same max + log1p(exp(-|d|)))
    am, asd, bm, bsd = float(a.mean), float(a.std), float(b.mean), float(b.std)
    log_as, log_bs, log2, log2pi_half = math.log(asd), math.log(bsd), math.log(2.0), 0.5 * math.log(2 * math.pi)

    def integrand(z):
        la = -0.5 * z * z - log_as  # log densities up to the common −log √(2π)
        lb = -0.5 * ((am + asd * z - bm) / bsd) ** 2 - log_bs
        hi, lo = (la, lb) if la >= lb else (lb, la)
        lm = hi + math.log1p(math.exp(lo - hi)) - log2
        return math.exp(-0.5 * z * z - log2pi_half) * (la - lm)

    # la(x) = lb(x) is a quadratic c2 x² + c1 x + c0 = 0
    c2 = 0.5 / b.std ** 2 - 0.5 / a.std ** 2
    c1 = a.mean / a.std ** 2 - b.mean / b.std ** 2
    c0 = 0.5 * b.mean ** 2 / b.std ** 2 - 0.5 * a.mean ** 2 / a.std ** 2 - np.log(a.std / b.std)
    roots = np.roots([c2, c1, c0]) if c2 != 0 else (np.array([-c0 / c1]) if c1 != 0 else np.array([]))
    points = {float((r.real - a.mean) / a.std) for r in np.atleast_1d(roots) if abs(r.imag) < 1e-12}
    points.add((b.mean - a.mean) / a.std)
    # the standard normal weight is below 1e-300 beyond |z| = 37
    points = sorted(z for z in points if -40 < z < 40)
    return integrate.quad(integrand, -40, 40, points=points or None, limit=500, epsabs=1e-13, epsrel=1e-11)[0]


def js_gaussian(p: GaussianFit, q: GaussianFit) -> float:
    """JS(P‖Q) with M = (P + Q)/2 the mixture (Eqs. 7–8), in bits (so in [0, 1]), by numerical integration."""
    if p.mean == q.mean and p.std == q.std:
        return 0.0
    value = 0.5 * (_expected_log_ratio(p, q) + _expected_log_ratio(q, p)) / np.log(2.0)
    return float(min(max(value, 0.0), 1.0))


def js_gaussian_author_code(p: GaussianFit, q: GaussianFit) -> float:
    """JS as the author's released code computes it, in nats and unfolded (module docstring):
    (KL(P‖M) + KL(Q‖M))/2 with M = N((μ_p + μ_q)/2, (σ_p² + σ_q²)/2) a single Gaussian."""
    m = GaussianFit((p.mean + q.mean) / 2, float(np.sqrt((p.std ** 2 + q.std ** 2) / 2)))
    return 0.5 * (kl_gaussian(p, m) + kl_gaussian(q, m))


def fold(x: float) -> float:
    """min(x, 1)/max(x, 1): x up to 1, 1/x beyond (the author's code applies it to JS and to Δσ)."""
    return min(x, 1.0) / max(x, 1.0)


JSS_VARIANTS = ("paper", "author_code")


def kls(scores_st, scores_at) -> float:
    """KLS (Eq. 6) of two score sets (or two :class:`GaussianFit`); 50 for identical fits (0/0, see module doc)."""
    p, q = _fit(scores_st, "stereotypical scores"), _fit(scores_at, "anti-stereotypical scores")
    a, b = kl_gaussian(p, q), kl_gaussian(q, p)
    if a + b == 0:
        return 50.0
    return 100.0 * max(a, b) / (a + b)


def jss(scores_st, scores_at, variant: str = "paper") -> float:
    """JSS (Eq. 9) of two score sets (or two :class:`GaussianFit`): 100 (1 − JS) / (1 + |σ_st − σ_at|).

    ``variant="paper"``: JS of the exact mixture, in bits (Eqs. 7–9). ``"author_code"``: as the author's
    released code, 100 (1 − fold(JS)) / (1 + fold(Δσ)) with JS from :func:`js_gaussian_author_code`
    (module docstring).
    """
    if variant not in JSS_VARIANTS:
        raise ValueError(f"JSS variant must be one of {', '.join(JSS_VARIANTS)}, not {variant!r}")
    p, q = _fit(scores_st, "stereotypical scores"), _fit(scores_at, "anti-stereotypical scores")
    if variant == "author_code":
        return 100.0 * (1.0 - fold(js_gaussian_author_code(p, q))) / (1.0 + fold(abs(p.std - q.std)))
    return 100.0 * (1.0 - js_gaussian(p, q)) / (1.0 + abs(p.std - q.std))


def indicator_score(scores_st, scores_at, *, ties: str = "strict") -> float:
    """Liu's Eq. 2, the indicator-function measure: 100/N Σ I(f(S_st) > f(S_at)).

    ``ties="strict"`` is Eq. 2 as written: a tie counts as no preference for the
    stereotype, which is harmless for PLL scores (ties do not happen) but pulls a
    metric that often gives both candidates the same score (BLEU, ROUGE) towards
    0, i.e. towards "anti-stereotypical". ``ties="half"`` counts a tie as half a
    preference, 100/N Σ [I(f_st > f_at) + ½ I(f_st = f_at)]; it equals Eq. 2 when
    there are no ties, keeps 50 as "no preference", and is 50 − 100 × the
    counterfactual PCM with d = the Mann–Whitney comparison (see
    :mod:`metricbias.bias.generalized`).
    """
    a, b = np.asarray(scores_st, dtype=float), np.asarray(scores_at, dtype=float)
    if a.shape != b.shape or a.size == 0:
        raise ValueError(f"the indicator measure needs two paired score arrays of equal, non-zero length; "
                         f"got {a.size} and {b.size}")
    if ties not in ("strict", "half"):
        raise ValueError(f"ties must be 'strict' (Liu's Eq. 2) or 'half', got {ties!r}")
    wins = (a > b).astype(float)
    if ties == "half":
        wins += 0.5 * (a == b)
    return 100.0 * float(np.mean(wins))


def weighted(values, sizes) -> float:
    """Eqs. 10–11: Σ_t |D^(t)|/|D| · value_t over bias types t."""
    v, n = np.asarray(values, dtype=float), np.asarray(sizes, dtype=float)
    if v.shape != n.shape or v.size == 0 or np.any(n < 0) or n.sum() == 0:
        raise ValueError(f"weighted(): need one positive size per value, got {v.size} value(s) and sizes {n.tolist()}")
    return float(np.sum(n / n.sum() * v))


def shapiro_wilk(scores) -> tuple[float, float]:
    """Shapiro–Wilk test of normality (Liu, Table 1): (statistic W, p-value), from :func:`scipy.stats.shapiro`."""
    s = np.asarray(scores, dtype=float)
    if s.size < 3:
        raise ValueError(f"the Shapiro–Wilk test needs at least 3 scores, got {s.size}")
    res = stats.shapiro(s)
    return float(res.statistic), float(res.pvalue)


def unit_rescale(scores_1, scores_2, **labels) -> tuple[np.ndarray, np.ndarray]:
    """Eq. 1 of Sun et al. divided by 100: both candidates' scores in [0, 1] with their pooled min and max
    (``labels``: the metric and attribute a warning names)."""
    from .pairwise import rescale

    r1, r2 = rescale(scores_1, scores_2, **labels)
    return r1 / 100.0, r2 / 100.0


def pair_measures(scores_1, scores_2, *, rescale: bool = True, ties: str = "half",
                  jss_variant: str = "paper") -> dict:
    """Liu's measures on one paired score set (candidate 1 = stereotypical): indicator, KLS, JSS, Shapiro–Wilk p.

    With ``rescale`` (the default for metric scores), both sets are first put on
    [0, 1] by :func:`unit_rescale`, so that Δσ in JSS is comparable across metrics.
    Metric scores tie often, so the indicator counts ties as half (see
    :func:`indicator_score`); ``tie_share`` reports how often they tie.
    ``jss_variant`` chooses how JSS is computed (:func:`jss`).
    """
    s1, s2 = (unit_rescale(scores_1, scores_2) if rescale
              else (np.asarray(scores_1, dtype=float), np.asarray(scores_2, dtype=float)))
    p, q = fit_gaussian(s1, label="candidate 1 scores"), fit_gaussian(s2, label="candidate 2 scores")
    return {
        "n_pairs": int(s1.size),
        "indicator": indicator_score(s1, s2, ties=ties),
        "tie_share": float(np.mean(s1 == s2)),
        "kls": kls(p, q),
        "jss": jss(p, q, variant=jss_variant),
        "shapiro_p_1": shapiro_wilk(s1)[1],
        "shapiro_p_2": shapiro_wilk(s2)[1],
    }


def unit_fits(scores_1, scores_2, **labels) -> tuple[GaussianFit, GaussianFit] | None:
    """Gaussian fits of both candidates' scores after :func:`unit_rescale`; None when Eq. 1 or a fit is
    undefined (constant scores, fewer than two pairs)."""
    try:
        u1, u2 = unit_rescale(scores_1, scores_2, **labels)
        return fit_gaussian(u1), fit_gaussian(u2)
    except ValueError:
        return None


@register_measure("indicator", takes="pairs", citation="Liu 2024, Eq. 2",
                  description="100 x P(candidate 1 scores higher), a tie counting half; 50: no preference")
def indicator_measure(scores_1, scores_2) -> float:
    """Liu's Eq. 2 on one cell's raw scores, ties counted half (Eq. 1's rescaling does not change the order)."""
    return indicator_score(scores_1, scores_2, ties="half")


@register_measure("kls", takes="distributions", citation="Liu 2024, Eq. 6",
                  description="KL score of Gaussian fits to the two [0, 1]-rescaled score sets; 50: none")
def kls_measure(scores_1, scores_2, *, metric=None, attribute=None) -> float:
    """KLS (Eq. 6) of the two candidates' rescaled scores; NaN when a fit is undefined."""
    fits = unit_fits(scores_1, scores_2, metric=metric, attribute=attribute)
    return kls(*fits) if fits else float("nan")


@register_measure("jss", takes="distributions", citation="Liu 2024, Eq. 9",
                  description="JS score of Gaussian fits to the two [0, 1]-rescaled score sets; 100: identical")
def jss_measure(scores_1, scores_2, *, metric=None, attribute=None) -> float:
    """JSS (Eq. 9, as printed) of the two candidates' rescaled scores; NaN when a fit is undefined."""
    fits = unit_fits(scores_1, scores_2, metric=metric, attribute=attribute)
    return jss(*fits) if fits else float("nan")


def _per_group(scores: pd.DataFrame, by, measure) -> pd.DataFrame:
    """``measure(score_1, score_2) -> dict`` for every cell of a score table; errors name the cell."""
    from .scores import cells

    rows = []
    for key, group in cells(scores, by, required=(*by, "score_1", "score_2")):
        try:
            row = measure(group["score_1"], group["score_2"])
        except ValueError as exc:
            raise ValueError(f"{key}: {exc}") from exc
        rows.append({**key, **row})
    return pd.DataFrame(rows)


def measure_table(scores: pd.DataFrame, *, by=("attribute", "metric"), rescale: bool = True,
                  ties: str = "half", jss_variant: str = "paper") -> pd.DataFrame:
    """:func:`pair_measures` for every group of a long table with ``score_1, score_2`` columns."""
    return _per_group(scores, by, lambda s1, s2: pair_measures(s1, s2, rescale=rescale, ties=ties,
                                                               jss_variant=jss_variant))


def _both_jss(scores_1, scores_2, rescale: bool) -> dict:
    s1, s2 = (unit_rescale(scores_1, scores_2) if rescale
              else (np.asarray(scores_1, dtype=float), np.asarray(scores_2, dtype=float)))
    p, q = fit_gaussian(s1, label="candidate 1 scores"), fit_gaussian(s2, label="candidate 2 scores")
    paper, author = jss(p, q), jss(p, q, variant="author_code")
    return {"n_pairs": p.n, "js_bits": js_gaussian(p, q), "js_nats_author_code": js_gaussian_author_code(p, q),
            "delta_sigma": abs(p.std - q.std), "jss_paper": paper, "jss_author_code": author,
            "difference": author - paper}


def jss_variants(scores: pd.DataFrame, *, by=("attribute", "metric"), rescale: bool = True) -> pd.DataFrame:
    """JSS of every group of a long ``score_1, score_2`` table both ways: ``jss_paper`` (Eq. 9 as printed),
    ``jss_author_code`` (the released code) and ``difference`` (author_code − paper), with the two
    ingredients that differ: ``js_bits`` (exact mixture) and ``js_nats_author_code`` (unfolded), and
    ``delta_sigma``. Scores are put on [0, 1] first as in :func:`pair_measures` (``rescale``)."""
    return _per_group(scores, by, lambda s1, s2: _both_jss(s1, s2, rescale))


def weighted_over(table: pd.DataFrame, *, types: str = "attribute", by=("metric",),
                  columns=("indicator", "kls", "jss")) -> pd.DataFrame:
    """Eqs. 10–11 applied to a :func:`measure_table`: one row per ``by`` key, weights n_pairs per ``types``."""
    rows = []
    for key, group in table.groupby(list(by), sort=False):
        key = key if isinstance(key, tuple) else (key,)
        row = dict(zip(by, key))
        row["n_pairs"] = int(group["n_pairs"].sum())
        for col in columns:
            row[col] = weighted(group[col], group["n_pairs"])
        rows.append(row)
    return pd.DataFrame(rows)


__all__ = ["GaussianFit", "JSS_VARIANTS", "fit_gaussian", "fold", "indicator_measure", "indicator_score",
           "js_gaussian", "js_gaussian_author_code", "jss", "jss_measure", "jss_variants", "kl_gaussian", "kls",
           "kls_measure", "measure_table", "pair_measures", "shapiro_wilk", "unit_fits", "unit_rescale", "weighted",
           "weighted_over"]
