"""Coverage and error rates of the book's intervals and tests, by simulation with a planted bias.

Scores come from a model with a known population: pair i of template j has a latent
score per candidate,

    z_i1 = b_i + (δ + a_j)/2 + e_i1,    z_i2 = b_i − (δ + a_j)/2 + e_i2,

with b_i ~ N(0, τ_pair²) (what the two candidates share: the reference, the
sentence), a_j ~ N(0, τ_template²) (how much the template adds to the bias),
e ~ N(0, σ²), and the metric's score is logistic(z), bounded in (0, 1) like most
metrics. δ is the planted bias. With bounded scores Eq. 1 has a population
version too (the support, 0 to 1), so every measure has a population value,
computed here on a large seeded sample (:func:`population_values`):

* the stereotypical difference, 100 × E(S₁ − S₂) on that fixed scale;
* the size-robust bias, 100 × E|S₁ − S₂| / SD(S);
* Eq. 2's population value, 100 × E|S₁ − S₂|; Eq. 2 on n pairs rescales with the
  sample's range, so its bias against this value is what is reported, and, in
  :data:`ROBUSTNESS`, the coverage of its interval as the library computes it (the
  mean |d| divided by the sample's range, held fixed in the bootstrap).

The intervals (:data:`INTERVALS`): BCa over pairs; the two-level bootstrap
(conservative); the percentile interval over whole templates; and the expanded
percentile interval over whole templates, the library's interval wherever pairs
share a template (:func:`metricbias.bias.clusters.expanded_levels`).

Thousands of replicates, each with its own bootstrap, need the bootstrap to be
cheap. Both statistics are weighted sums over pairs, so a resample is a vector of
draw counts, and the resamples of a batch of ``chunk`` replicates are matrix
products (:func:`resample_weights`, :func:`weighted_statistic`). As in scipy's
vectorized bootstrap, the replicates of a batch share one resampling plan; each
batch draws a new one. The BCa end points use :func:`scipy.stats.bootstrap`'s
formulas (:func:`bca_bounds`, tested against it) with the jackknife in closed
form. A modest number of resamples per interval suffices: the coverage
estimate's Monte-Carlo error, √(p(1 − p)/R), comes from the R replicates, and
the chapter states the resamples used.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from scipy import stats

from ..cache import cached_result
from .clusters import expanded_levels
from .reliability import eq2_statistic, size_robust_statistic
from .testing import sign_flip_test

MEASURES = ("stereotypical_difference", "size_robust_bias")


@dataclass(frozen=True)
class Design:
    """The simulation model's parameters (see the module docstring). ``terms``: pairs per template; ``tails``:
    0 for normal noise, else the degrees of freedom of Student-t noise (heavy tails), scaled by ``sigma``;
    ``step``: 0 for continuous scores, else the scores rounded to multiples of ``step`` (tied scores, as BLEU's
    many d = 0 on one-word changes)."""
    delta: float = 0.3
    tau_pair: float = 1.0
    tau_template: float = 0.0
    sigma: float = 0.5
    terms: int = 1
    tails: float = 0.0
    step: float = 0.0


def simulate(design: Design, n: int, reps: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """Scores (s1, s2) of ``reps`` replicates of ``n`` pairs, each of shape (reps, n // terms, terms)."""
    j = n // design.terms
    if j < 2 or j * design.terms != n:
        raise ValueError(f"{n} pairs do not split into ≥ 2 templates of {design.terms} pairs")
    shape = (reps, j, design.terms)
    b = rng.normal(0, design.tau_pair, shape)
    shift = (design.delta + rng.normal(0, design.tau_template, (reps, j, 1))) / 2

    def noise():
        if design.tails:
            return design.sigma * rng.standard_t(design.tails, shape)
        return rng.normal(0, design.sigma, shape)

    s1, s2 = 1 / (1 + np.exp(-(b + shift + noise()))), 1 / (1 + np.exp(-(b - shift + noise())))
    if design.step:
        s1, s2 = np.round(s1 / design.step) * design.step, np.round(s2 / design.step) * design.step
    return s1, s2


def _signed(s1, s2, axis=-1):
    return 100.0 * np.mean(s1 - s2, axis=axis)


def _absolute(s1, s2, axis=-1):
    return 100.0 * np.mean(np.abs(s1 - s2), axis=axis)


#: the measures on the scores' fixed [0, 1] scale; ``absolute_difference`` is Eq. 2 before Eq. 1's rescaling
STATISTICS = {"stereotypical_difference": _signed, "size_robust_bias": size_robust_statistic,
              "absolute_difference": _absolute}


def population_values(design: Design, *, size: int = 2_000_000, seed: int = 12345) -> dict:
    """Population values of the measures (and of Eq. 2 with the support's range), from one large sample."""
    s1, s2 = simulate(replace(design, terms=1), size, 1, np.random.default_rng(seed))
    s1, s2 = s1.ravel(), s2.ravel()
    return {"stereotypical_difference": float(_signed(s1, s2)), "size_robust_bias": float(size_robust_statistic(s1, s2)),
            "eq2": float(100.0 * np.mean(np.abs(s1 - s2)))}


def jackknife(measure: str, s1, s2) -> np.ndarray:
    """Leave-one-pair-out values of a measure for every replicate (rows of the 2-d s1, s2), in closed form:
    O(n) per replicate where recomputing the statistic n times is O(n²)."""
    s1, s2 = np.asarray(s1, dtype=float), np.asarray(s2, dtype=float)
    n = s1.shape[-1]
    d = s1 - s2
    if measure in ("stereotypical_difference", "absolute_difference"):
        d = d if measure == "stereotypical_difference" else np.abs(d)
        return 100.0 * (d.sum(-1, keepdims=True) - d) / (n - 1)
    if measure != "size_robust_bias":
        raise ValueError(f"no closed-form jackknife for {measure!r}; measures: {', '.join(MEASURES)}")
    centre = (s1.mean(-1, keepdims=True) + s2.mean(-1, keepdims=True)) / 2  # the scale is shift-invariant
    a, b = s1 - centre, s2 - centre
    total, squares = (a + b).sum(-1, keepdims=True) - (a + b), (a * a + b * b).sum(-1, keepdims=True) - (a * a + b * b)
    m = 2 * (n - 1)
    scale = np.sqrt((squares - total ** 2 / m) / (m - 1))
    return 100.0 * (np.abs(d).sum(-1, keepdims=True) - np.abs(d)) / (n - 1) / scale


def bca_bounds(theta, boot, jack, *, confidence: float = 0.95):
    """BCa end points (Efron 1987) per row from the observed values ``theta`` (R,), bootstrap distributions
    ``boot`` (R, B) and jackknife values ``jack`` (R, n): the formulas of :func:`scipy.stats.bootstrap`."""
    theta = np.asarray(theta, dtype=float)[:, None]
    z0 = stats.norm.ppf(((boot < theta).sum(-1) + (boot <= theta).sum(-1)) / (2 * boot.shape[-1]))
    dev = jack.mean(-1, keepdims=True) - jack
    accel = (dev ** 3).sum(-1) / (6 * ((dev ** 2).sum(-1)) ** 1.5)
    out = []
    for z in stats.norm.ppf([(1 - confidence) / 2, (1 + confidence) / 2]):
        level = stats.norm.cdf(z0 + (z0 + z) / (1 - accel * (z0 + z)))
        out.append(_row_percentiles(boot, level))
    return out[0], out[1]


def _row_percentiles(values, q) -> np.ndarray:
    """The q[i] quantile of row i (NumPy's default linear interpolation), all rows at once."""
    ordered = np.sort(values, axis=-1)
    pos = np.clip(np.nan_to_num(q, nan=0.5), 0, 1) * (ordered.shape[-1] - 1)
    lo = np.floor(pos).astype(int)
    hi = np.minimum(lo + 1, ordered.shape[-1] - 1)
    rows = np.arange(ordered.shape[0])
    return ordered[rows, lo] + (pos - lo) * (ordered[rows, hi] - ordered[rows, lo])


def resample_weights(rng, n_resamples: int, templates: int, terms: int, *, how: str) -> np.ndarray:
    """How often each pair is drawn in each resample, shape (n_resamples, templates × terms). ``how``:
    ``"pairs"`` (pairs with replacement), ``"two-level"`` (templates, then pairs within each drawn template) or
    ``"templates"`` (templates, each with all its pairs)."""
    n = templates * terms
    if how == "pairs":
        idx = rng.integers(n, size=(n_resamples, n))
    elif how in ("two-level", "templates"):
        rows = rng.integers(templates, size=(n_resamples, templates, 1))
        within = (rng.integers(terms, size=(n_resamples, templates, terms)) if how == "two-level"
                  else np.broadcast_to(np.arange(terms), (n_resamples, templates, terms)))
        idx = (rows * terms + within).reshape(n_resamples, n)
    else:
        raise ValueError(f"unknown resampling {how!r}: pairs, two-level or templates")
    counts = np.bincount((idx + np.arange(n_resamples)[:, None] * n).ravel(), minlength=n_resamples * n)
    return counts.reshape(n_resamples, n).astype(float)


def weighted_statistic(measure: str, s1, s2, weights) -> np.ndarray:
    """A measure on every resample given as draw counts: ``s1``, ``s2`` (reps, n), ``weights`` (B, n) ->
    (reps, B). Equal to the measure on the resampled pairs (both statistics are weighted sums, so the
    resamples of a batch of replicates are three matrix products)."""
    n = s1.shape[-1]
    d = s1 - s2
    if measure in ("stereotypical_difference", "absolute_difference"):
        return 100.0 * (d if measure == "stereotypical_difference" else np.abs(d)) @ weights.T / n
    centre = (s1.mean(-1, keepdims=True) + s2.mean(-1, keepdims=True)) / 2  # the scale is shift-invariant
    a, b = s1 - centre, s2 - centre
    total, squares = (a + b) @ weights.T, (a * a + b * b) @ weights.T
    scale = np.sqrt((squares - total ** 2 / (2 * n)) / (2 * n - 1))
    return 100.0 * np.abs(d) @ weights.T / n / scale


def _bca(s1, s2, measure, n_resamples, rng):
    """BCa bounds over pairs for every replicate (s1, s2 of shape (reps, templates, terms))."""
    reps, j, m = s1.shape
    f1, f2 = s1.reshape(reps, -1), s2.reshape(reps, -1)
    boot = weighted_statistic(measure, f1, f2, resample_weights(rng, n_resamples, j, m, how="pairs"))
    return bca_bounds(STATISTICS[measure](f1, f2), boot, jackknife(measure, f1, f2))


def _percentile(how: str, expanded: bool = False):
    def interval(s1, s2, measure, n_resamples, rng):
        """Percentile bounds of the bootstrap that resamples as ``how`` says, for every replicate (``expanded``:
        at the expanded percentile levels for the number of templates)."""
        reps, j, m = s1.shape
        f1, f2 = s1.reshape(reps, -1), s2.reshape(reps, -1)
        boot = weighted_statistic(measure, f1, f2, resample_weights(rng, n_resamples, j, m, how=how))
        low, high = expanded_levels(j) if expanded else (0.025, 0.975)
        return np.quantile(boot, low, axis=-1), np.quantile(boot, high, axis=-1)
    return interval


INTERVALS = {"BCa over pairs": _bca, "two-level (conservative)": _percentile("two-level"),
             "templates only": _percentile("templates"),
             "templates, expanded": _percentile("templates", expanded=True)}


def coverage(design: Design, sizes=(20, 40, 100, 400), *, intervals=tuple(INTERVALS), reps: int = 2000,
             n_resamples: int = 199, seed: int = 0, chunk: int = 100, truth: dict | None = None,
             rescaled: bool = False) -> pd.DataFrame:
    """Empirical coverage of the 95% intervals of each measure, and Eq. 2's bias, over ``reps`` replicates.

    ``intervals``: names in :data:`INTERVALS`. One row per (n, measure, interval): ``n, templates, measure,
    interval, truth, reps, coverage, mc_se, mean_width``,
    plus one row per n for Eq. 2 (``measure="eq2"``, ``interval="—"``) with its mean value in ``estimate`` and
    ``relative_bias`` = mean / population − 1. ``rescaled``: also the stereotypical difference and Eq. 2 on
    Eq. 1's scale (``measure="eq1_difference"`` and ``"eq2_rescaled"``: divided by the range of the sample's 2n
    scores, held fixed in the bootstrap as the library does), against their population values on the scores'
    support (the same as the unrescaled ones, the support being [0, 1]), and ``absolute_difference``, Eq. 2's
    mean |d| on the fixed scale.
    """
    truth = truth or population_values(design)
    rng = np.random.default_rng(seed)
    rows = []
    measured = MEASURES + (("absolute_difference",) if rescaled else ())
    on_eq1 = {"stereotypical_difference": "eq1_difference", "absolute_difference": "eq2_rescaled"}
    truth = {**truth, "absolute_difference": truth["eq2"]}
    for n in sizes:
        names = measured + (tuple(on_eq1.values()) if rescaled else ())
        hits = {(m, i): [] for m in names for i in intervals}
        widths = {k: [] for k in hits}
        eq2 = []
        for start in range(0, reps, chunk):
            s1, s2 = simulate(design, n, min(chunk, reps - start), rng)
            eq2.append(eq2_statistic(s1.reshape(len(s1), -1), s2.reshape(len(s2), -1)))
            for m in measured:
                for i in intervals:
                    low, high = INTERVALS[i](s1, s2, m, n_resamples, rng)
                    hits[m, i].append((low <= truth[m]) & (truth[m] <= high))
                    widths[m, i].append(high - low)
                    if rescaled and m in on_eq1:
                        flat = np.concatenate([s1.reshape(len(s1), -1), s2.reshape(len(s2), -1)], axis=1)
                        with np.errstate(divide="ignore", invalid="ignore"):
                            span = np.ptp(flat, axis=1)
                            low, high = low / span, high / span
                        hits[on_eq1[m], i].append((low <= truth[m]) & (truth[m] <= high))
                        widths[on_eq1[m], i].append(high - low)
        source = {v: k for k, v in on_eq1.items()}
        for (m, i), h in hits.items():
            h = np.concatenate(h)
            p = float(np.mean(h))
            truth_m = truth[source.get(m, m)]
            rows.append({"n": n, "templates": n // design.terms, "measure": m, "interval": i, "truth": truth_m,
                         "reps": h.size, "coverage": p, "mc_se": float(np.sqrt(p * (1 - p) / h.size)),
                         "mean_width": float(np.mean(np.concatenate(widths[m, i])))})
        values = np.concatenate(eq2)
        rows.append({"n": n, "templates": n // design.terms, "measure": "eq2", "interval": "—", "truth": truth["eq2"],
                     "estimate": float(values.mean()), "relative_bias": float(values.mean() / truth["eq2"] - 1)})
    return pd.DataFrame(rows)


def type_one_error(design: Design, sizes=(20, 40, 100, 400), *, reps: int = 2000, n_resamples: int = 199,
                   alpha: float = 0.05, seed: int = 0) -> pd.DataFrame:
    """Rejection rate at level ``alpha`` of the sign-flip test of the stereotypical difference at zero bias
    (δ = 0, no template effect): ``n, rejection_rate, mc_se``."""
    null = replace(design, delta=0.0, tau_template=0.0)
    rng = np.random.default_rng(seed)
    rows = []
    for n in sizes:
        s1, s2 = simulate(null, n, reps, rng)
        d = (s1 - s2).reshape(reps, -1)
        p = sign_flip_test(d, n_resamples=n_resamples, seed=int(rng.integers(2**31)))
        rate = float(np.mean(p <= alpha))
        rows.append({"n": n, "rejection_rate": rate, "mc_se": float(np.sqrt(alpha * (1 - alpha) / reps))})
    return pd.DataFrame(rows)


#: the chapter's two designs: independent pairs (each pair its own template), and templates of four pairs whose
#: bias varies from template to template (τ_template = 0.4, about the planted δ)
PANELS = {"independent pairs": (Design(), ("BCa over pairs",)),
          "templates of 4 pairs": (Design(tau_template=0.4, terms=4), tuple(INTERVALS))}


@cached_result("simulation.coverage_study")
def coverage_study(sizes=(20, 40, 100, 400), *, reps: int = 2000, n_resamples: int = 999, seed: int = 0) -> pd.DataFrame:
    """:func:`coverage` of every design of :data:`PANELS`, with a ``panel`` column (kept in the result cache)."""
    return pd.concat([coverage(design, sizes, intervals=intervals, reps=reps, n_resamples=n_resamples, seed=seed)
                      .assign(panel=panel) for panel, (design, intervals) in PANELS.items()], ignore_index=True)


#: the departures from the smooth model the chapter checks BCa over independent pairs against: Eq. 1's rescaling
#: of the stereotypical difference and of Eq. 2, tied scores (rounded to 0.05), heavy-tailed noise (Student t, 3 df)
ROBUSTNESS = {"Eq. 1-rescaled": (Design(), True), "tied scores": (Design(step=0.05), False),
              "heavy tails": (Design(tails=3.0), False)}


@cached_result("simulation.robustness_study")
def robustness_study(sizes=(20, 40, 100, 400), *, reps: int = 2000, n_resamples: int = 999,
                     seed: int = 0) -> pd.DataFrame:
    """:func:`coverage` of BCa over pairs in every design of :data:`ROBUSTNESS`, with a ``design`` column (kept in
    the result cache); for the Eq. 1-rescaled design only its rows on Eq. 1's scale, the stereotypical difference
    (design ``Eq. 1-rescaled``) and Eq. 2 (design ``Eq. 2``)."""
    frames = []
    for name, (design, rescaled) in ROBUSTNESS.items():
        cov = coverage(design, sizes, intervals=("BCa over pairs",), reps=reps, n_resamples=n_resamples, seed=seed,
                       rescaled=rescaled)
        if rescaled:
            frames += [cov[cov["measure"] == "eq1_difference"].assign(design=name),
                       cov[cov["measure"] == "eq2_rescaled"].assign(design="Eq. 2")]
            continue
        frames.append(cov[cov["measure"] != "eq2"].assign(design=name))
    return pd.concat(frames, ignore_index=True)


@cached_result("simulation.type_one_study")
def type_one_study(sizes=(20, 40, 100, 400), *, reps: int = 2000, n_resamples: int = 999, seed: int = 0) -> pd.DataFrame:
    """:func:`type_one_error` of the sign-flip test at zero bias (kept in the result cache)."""
    return type_one_error(Design(), sizes, reps=reps, n_resamples=n_resamples, seed=seed)


__all__ = ["Design", "INTERVALS", "MEASURES", "PANELS", "ROBUSTNESS", "bca_bounds", "coverage", "coverage_study",
           "jackknife", "population_values", "resample_weights", "robustness_study", "simulate", "type_one_error",
           "type_one_study",
           "weighted_statistic"]
