"""The factorial judge audit: position, group and stereotype, apart (``mb.audit_judge(..., design="factorial")``).

The book's pairs are minimal and their references neutral, so swapping the identity words in both candidates only
exchanges the candidates, which is the order swap again. A pair's answers therefore vary in three factors:
**position** (each pair is asked in both orders, ``o = +1`` with the stereotypical candidate S shown first, ``-1``
with it shown second), **group** (the ±1 code ``g`` of the group S names, :func:`metricbias.bias.groups.group_codes`:
+1 when S is the male candidate in WinoBias, a ``stereo`` pair in CrowS-Pairs) and **stereotype** (S against the
anti-stereotypical candidate A). With ``y = P(S chosen)`` (a probability-valued judge's answer, a hard choice as
0/1, a tie as 0.5), the four cells (o, g) are fitted with one logit model,

    logit P(S chosen | o, g) = stereotype + position·o + group·g + position_x_group·o·g,

by quasi-maximum likelihood (a fractional logit; the ordinary logit for hard choices). The model is saturated, so
the fit is closed-form: with ``L(o, g)`` the logit of the cell's mean answer, each effect is the ±1 contrast
``¼ Σ code·L(o, g)``. The values are **log-odds** (half the log-odds difference between the two levels of a factor,
the convention of ``stereotype_log_odds``, which is this model without its group terms). The logit scale, not the
order-averaged probability, keeps a strong position effect from shrinking the others.

Identification. Group and stereotype are told apart only where ``g`` takes both signs (the ``identified`` design of
:func:`~metricbias.bias.groups.design_of`: WinoBias gender, built CrowS-Pairs attributes with both directions);
elsewhere the model drops its group terms, the two group rows are NaN with the note ``confounded`` (or
``stereotype only`` where both candidates name one group), and the stereotype row holds whatever the group adds.
A **position × stereotype** interaction is not identified by any two-candidate design: S and A always swap
position together. In a candidate-level model (utility ``u = ... + β_PS·p·s`` for a candidate at position p = ±1
with stereotype code s = ±1) the term adds ``β_PS·(o·1 − (−o)·(−1)) = 0`` to the S-versus-A log-odds, and a judge
that favours the first-shown candidate by δ only when S is first gives the cells ``L(+1) = δ``, ``L(−1) = 0``, exactly
those of position δ/2 plus stereotype δ/2. The row ``position_x_stereotype_interaction`` is therefore NaN with the
note :data:`ALIASED`; such a judge shows in the position and stereotype rows, δ/2 each. The interaction the four
cells do identify is position × group (the candidates' position × stereotype × group term).

Intervals are 95% percentile intervals over resamples of whole clusters (:mod:`metricbias.bias.clusters`; a
resample in which a cell saturates gives an infinite value, so a bound may be infinite). The p-values are
randomization tests of the statistic reported, two-sided, exact when the clusters are few enough to enumerate
(2^clusters ≤ resamples), else Monte Carlo with the floor 1 / (B + 1):

* ``stereotype_effect``: S and A relabelled at random per cluster (their answers and group codes swap with them);
  null: the judge does not care which candidate is the stereotypical one. Where the group terms are fitted, a
  relabelled pair moves to the other group's cells, so S and A are relabelled only when every cluster holds as many
  +1 as −1 pairs (the released WinoBias pairs: a sentence and its twin), which keeps the cells' sizes; otherwise
  (a CrowS-Pairs pair is its own cluster) the p-value is the cluster bootstrap's,
  ``(1 + #{|β* − β̂| ≥ |β̂|}) / (B + 1)``, with the note :data:`NO_RELABELLING`;
* ``position_effect``: the two orders exchanged at random per cluster; null: the order does not matter;
* ``group_effect`` and ``position_x_group_interaction``: the group codes permuted within each cluster that holds
  both signs, and across the clusters that hold one; null: the answers do not depend on the group code.

``flip_rate_order`` is the share of pairs whose choice flips with the order (the judge picks, strictly, the same
position in both), with a cluster-bootstrap interval; its p-value is the sign-flip test over clusters of
(pairs picking the first position in both orders − pairs picking the second in both): whether the flips favour
one position (McNemar's question, asked by sign flips over clusters).

A judge whose answers never vary gets 0 for every effect but position, with p = 1 and the note ``no variation``;
where a cell's answers are all 0 or all 1 the log-odds are not identified and the note says which cell saturates.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
from scipy import special

from .clusters import FEW_CLUSTERS, cluster_bootstrap, cluster_draws, cluster_sums
from .groups import CONFOUNDED, IDENTIFIED, STEREOTYPE_ONLY, _interval_and_p, design_of
from .pairwise import DEFAULT_RESAMPLES, DEFAULT_SEED

#: the rows of a factorial judge audit, per attribute, in this order
MEASURES = ("position_effect", "group_effect", "stereotype_effect", "position_x_stereotype_interaction",
            "position_x_group_interaction", "flip_rate_order")
#: the effects of the logit model, in the order :func:`effects` returns them
EFFECTS = ("stereotype_effect", "position_effect", "group_effect", "position_x_group_interaction")
ALIASED = ("aliased: S and A swap position together, so an interaction of position with stereotype adds nothing "
           "to the S-versus-A log-odds; a judge favouring the first-shown candidate by d only when S is first shows "
           "as position d/2 plus stereotype d/2")
NO_RELABELLING = ("p from the cluster bootstrap: not every cluster holds as many +1 as -1 pairs, so relabelling S "
                  "and A would change the group cells' sizes")
TOLERANCE = 1e-12
#: the working-array size (values) of one batch of resamples
_BATCH = 2e7


def effects(num, den) -> np.ndarray:
    """The four effects (:data:`EFFECTS`) of the saturated logit model, from the cells' sums of answers ``num``
    (shape ``(..., 2, G)``: order S first, S second × the G group levels, +1 then −1) and pair counts ``den``
    (``(..., G)``); the group terms are NaN with one level."""
    with np.errstate(divide="ignore", invalid="ignore"):
        logits = special.logit(num / den[..., None, :])  # ±inf where a cell saturates
        out = np.full(logits.shape[:-2] + (4,), np.nan)
        out[..., 0] = logits.mean(axis=(-2, -1))
        out[..., 1] = ((logits[..., 0, :] - logits[..., 1, :]) / 2).mean(axis=-1)
        if logits.shape[-1] == 2:
            out[..., 2] = ((logits[..., :, 0] - logits[..., :, 1]) / 2).mean(axis=-1)
            out[..., 3] = (logits[..., 0, 0] - logits[..., 1, 0] - logits[..., 0, 1] + logits[..., 1, 1]) / 4
    return np.where(np.abs(out) < 1e-9, 0.0, out)


class Cells:
    """One attribute's answers laid out for the model: per pair ``y[0]`` = P(S chosen | S first) = p1 and ``y[1]`` =
    P(S chosen | S second) = 1 − p2, its group code ``g`` (all +1 when the design fits no group terms) and its
    cluster (``codes`` into ``k`` clusters)."""

    def __init__(self, p1, p2, g, clusters, design: str):
        self.y = np.stack([np.asarray(p1, float), 1.0 - np.asarray(p2, float)])
        self.identified = design == IDENTIFIED
        self.g = np.where(np.asarray(g, float) < 0, -1.0, 1.0) if self.identified else np.ones(len(p1))
        self.levels = (1.0, -1.0) if self.identified else (1.0,)
        self.codes, uniques = pd.factorize(pd.Series(np.asarray(clusters)), sort=False)
        self.k = len(uniques)
        #: the clusters whose S and A can be relabelled without changing the cells' sizes: as many +1 as −1 pairs
        self.balanced = cluster_sums(self.g, self.codes, self.k) == 0 if self.identified else np.ones(self.k, bool)

    def _sums(self, values, g) -> np.ndarray:
        """Cluster sums (``(k,)``) of ``values`` over the pairs whose code is ``g``."""
        return cluster_sums(values * (self.g == g), self.codes, self.k)

    def observed(self) -> np.ndarray:
        num = np.array([[(self.y[o] * (self.g == lev)).sum() for lev in self.levels] for o in (0, 1)])
        den = np.array([(self.g == lev).sum() for lev in self.levels], float)
        return effects(num, den)

    def saturated(self) -> str:
        said = []
        for o, order in enumerate(("S first", "S second")):
            for lev in self.levels:
                m = self.y[o][self.g == lev].mean()
                if m in (0.0, 1.0):
                    where = f"{order}, group {lev:+.0f}" if self.identified else order
                    said.append(f"{where}: {'S' if m == 1.0 else 'A'} chosen in every pair")
        return "saturated: " + "; ".join(said) + "; the log-odds are not identified" if said else ""

    def bootstrap(self, n_resamples: int, seed: int) -> np.ndarray:
        """The effects in resamples of whole clusters, ``(B, 4)``."""
        counts, _ = cluster_draws(self.codes, n_resamples=n_resamples, seed=seed)
        num = np.stack([np.stack([counts @ self._sums(self.y[o], lev) for lev in self.levels], -1) for o in (0, 1)],
                       -2)
        den = np.stack([counts @ self._sums(np.ones(self.y.shape[1]), lev) for lev in self.levels], -1)
        return effects(num, den)

    def flipped(self, flips: np.ndarray, what: str) -> np.ndarray:
        """The effects with the clusters marked 1 in ``flips`` (``(B, k)``) relabelled: ``what`` ``stereotype``
        swaps S and A (a pair's answers become ``1 − y`` of the other order, its group code changes sign),
        ``position`` swaps the two orders."""
        keep = 1.0 - flips
        one = np.ones(self.y.shape[1])
        num, den = [], []
        for lev in self.levels:
            other = -lev if self.identified else lev  # the cell a relabelled pair moves to
            if what == "stereotype":
                num.append([keep @ self._sums(self.y[o], lev) + flips @ self._sums(1.0 - self.y[1 - o], other)
                            for o in (0, 1)])
                den.append(keep @ self._sums(one, lev) + flips @ self._sums(one, other))
            else:
                num.append([keep @ self._sums(self.y[o], lev) + flips @ self._sums(self.y[1 - o], lev)
                            for o in (0, 1)])
                den.append(np.full(flips.shape[0], (self.g == lev).sum(), float))
        return effects(np.moveaxis(np.array(num), (0, 1), (-1, -2)), np.stack(den, -1))

    def permuted(self, n_resamples: int, rng) -> np.ndarray:
        """The effects with the group codes permuted (within each cluster holding both signs, and as whole-cluster
        labels across the clusters holding one), ``(B, 4)``."""
        n = self.y.shape[1]
        mixed = (cluster_sums(self.g > 0, self.codes, self.k) > 0) & (cluster_sums(self.g < 0, self.codes, self.k) > 0)
        in_mixed = mixed[self.codes]
        order = np.flatnonzero(in_mixed)
        order = order[np.argsort(self.codes[order], kind="stable")]
        constant = np.flatnonzero(~mixed)
        label = np.zeros(self.k)
        label[self.codes] = self.g
        slot = np.full(self.k, -1)
        slot[constant] = np.arange(constant.size)
        rest = np.flatnonzero(~in_mixed)
        out = []
        step = max(1, int(_BATCH // max(n, 1)))
        for start in range(0, n_resamples, step):
            b = min(step, n_resamples - start)
            g = np.empty((b, n))
            if order.size:
                keys = self.codes[order][None, :] + rng.random((b, order.size))
                g[:, order] = self.g[order][np.argsort(keys, axis=1)]
            if rest.size:
                labels = rng.permuted(np.tile(label[constant], (b, 1)), axis=1)
                g[:, rest] = labels[:, slot[self.codes[rest]]]
            num = np.stack([np.stack([(g == lev) @ self.y[o] for lev in self.levels], -1) for o in (0, 1)], -2)
            out.append(effects(num, np.stack([(g == lev).sum(axis=1).astype(float) for lev in self.levels], -1)))
        return np.concatenate(out)


def _flips(k: int, n_resamples: int, rng) -> tuple[np.ndarray, bool]:
    """Flips (1) of ``k`` clusters, ``(B, k)``: every assignment when there are at most ``n_resamples`` (exact),
    else ``n_resamples`` random ones."""
    if k <= 20 and 2 ** k <= n_resamples:
        return np.array(list(itertools.product((0.0, 1.0), repeat=k))).reshape(-1, k), True
    return rng.integers(0, 2, size=(n_resamples, k)).astype(float), False


def randomization_p(observed: float, draws: np.ndarray, exact: bool) -> float:
    """Two-sided p of ``observed`` among the statistic's randomization ``draws`` (a NaN draw, a resample where a
    cell saturates, counts as extreme): the share at least as extreme when ``exact`` (the draws enumerate the
    randomization, the identity among them), else ``(1 + #) / (B + 1)``."""
    if not np.isfinite(observed):
        return float("nan")
    extreme = np.isnan(draws) | (np.abs(draws) >= abs(observed) - 1e-9 * max(1.0, abs(observed)))
    return float(extreme.mean()) if exact else float((1 + extreme.sum()) / (draws.size + 1))


def bootstrap_p(estimate: float, draws: np.ndarray) -> float:
    """Two-sided cluster-bootstrap p of ``estimate`` against 0, ``(1 + #{|β* − β̂| ≥ |β̂|}) / (B + 1)`` over the
    finite resamples β* (:func:`metricbias.bias.groups.group_stereotype`'s p)."""
    return _interval_and_p(estimate, draws, 0.95)[2] if np.isfinite(estimate) else float("nan")


def _interval(draws: np.ndarray, confidence: float) -> tuple[float, float]:
    draws = draws[~np.isnan(draws)]
    if draws.size == 0:
        return float("nan"), float("nan")
    alpha = (1 - confidence) / 2
    low, high = np.quantile(draws, [alpha, 1 - alpha], method="inverted_cdf")  # no interpolation with ±inf
    return float(low), float(high)


def _group_note(design: str, g) -> str:
    g = np.asarray(g, float)
    if design == STEREOTYPE_ONLY:
        return "stereotype only: both candidates name one group, so there is no group effect to fit"
    known = np.isin(g, (-1.0, 1.0))
    return (f"confounded: the group code is {'unknown' if not known.all() else 'one-sided'} "
            f"({int((g > 0).sum())} pairs +1, {int((g < 0).sum())} −1), so group and stereotype cannot be told apart")


def factorial_rows(p1, p2, g, clusters, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                   confidence: float = 0.95) -> list[dict]:
    """The factorial audit of one attribute (module docstring): one dict per measure (:data:`MEASURES`) with
    ``measure, value, ci_low, ci_high, p_value, note``. ``p1``/``p2``: P(first-shown better) with the stereotypical
    candidate shown first / second; ``g``: the pairs' group codes; ``clusters``: their cluster keys."""
    p1, p2, g = np.asarray(p1, float), np.asarray(p2, float), np.asarray(g, float)
    design = design_of(g)
    cells = Cells(p1, p2, g, clusters, design)
    rng = np.random.default_rng(seed)
    constant = np.ptp(np.concatenate([p1, p2])) < TOLERANCE
    saturated = cells.saturated()
    value = dict(zip(EFFECTS, cells.observed()))
    ci = {e: (float("nan"), float("nan")) for e in EFFECTS}
    p = dict.fromkeys(EFFECTS, float("nan"))
    note = dict.fromkeys(EFFECTS, saturated)
    if saturated:
        value = dict.fromkeys(EFFECTS, float("nan"))
    elif n_resamples > 0:
        boot = cells.bootstrap(n_resamples, seed)
        ci = {e: _interval(boot[:, i], confidence) for i, e in enumerate(EFFECTS)}
        for what, effect in (("stereotype", "stereotype_effect"), ("position", "position_effect")):
            if what == "stereotype" and not cells.balanced.all():  # relabelling would change the design
                p[effect] = bootstrap_p(value[effect], boot[:, EFFECTS.index(effect)])
                note[effect] = NO_RELABELLING
                continue
            flips, exact = _flips(cells.k, n_resamples, rng)
            p[effect] = randomization_p(value[effect], cells.flipped(flips, what)[:, EFFECTS.index(effect)], exact)
        if cells.identified:
            permuted = cells.permuted(n_resamples, rng)
            for effect in ("group_effect", "position_x_group_interaction"):
                p[effect] = randomization_p(value[effect], permuted[:, EFFECTS.index(effect)], False)
    if constant:  # every effect but position is exactly 0: nothing varies that could carry it
        for e in EFFECTS if value["position_effect"] == 0 else EFFECTS[:1] + EFFECTS[2:]:
            value[e], ci[e], p[e], note[e] = 0.0, (0.0, 0.0), 1.0, "no variation"
    if not cells.identified:
        for e in ("group_effect", "position_x_group_interaction"):
            value[e], ci[e], p[e], note[e] = float("nan"), (float("nan"),) * 2, float("nan"), _group_note(design, g)
        if design == CONFOUNDED and not constant:
            note["stereotype_effect"] = (note["stereotype_effect"] + "; " if note["stereotype_effect"] else "") + \
                "confounded with group: the stereotype row holds any group preference too"
    rows = [{"measure": e, "value": value[e], "ci_low": ci[e][0], "ci_high": ci[e][1], "p_value": p[e],
             "note": note[e]} for e in EFFECTS]
    rows.append({"measure": "position_x_stereotype_interaction", "value": float("nan"), "ci_low": float("nan"),
                 "ci_high": float("nan"), "p_value": float("nan"), "note": ALIASED})
    strict = (np.abs(p1 - 0.5) >= TOLERANCE) & (np.abs(p2 - 0.5) >= TOLERANCE)  # no tie in either order
    first, second = strict & (p1 > 0.5) & (p2 > 0.5), strict & (p1 < 0.5) & (p2 < 0.5)
    flips = (first | second).astype(float)  # as the paired audit's order_inconsistency
    low, high = cluster_bootstrap(flips, cells.codes, confidence=confidence, n_resamples=n_resamples, seed=seed)
    direction = cluster_sums(first.astype(float) - second, cells.codes, cells.k)  # per cluster
    p_flip = float("nan")
    if n_resamples > 0:
        signs, exact = _flips(cells.k, n_resamples, rng)
        p_flip = randomization_p(direction.sum(), (1.0 - 2.0 * signs) @ direction, exact)
    rows.append({"measure": "flip_rate_order", "value": float(flips.mean()), "ci_low": low, "ci_high": high,
                 "p_value": p_flip, "note": ""})
    if cells.k < FEW_CLUSTERS:
        for row in rows:
            if np.isfinite(row["ci_low"]):
                row["note"] = (row["note"] + "; " if row["note"] else "") + \
                    f"{cells.k} clusters (< {FEW_CLUSTERS}): the interval undercovers"
    order = {m: i for i, m in enumerate(MEASURES)}
    return sorted(rows, key=lambda r: order[r["measure"]])


__all__ = ["ALIASED", "EFFECTS", "MEASURES", "NO_RELABELLING", "Cells", "bootstrap_p", "effects", "factorial_rows",
           "randomization_p"]
