"""The toy metric and toy judge of the appendix "Using metricbias": deliberately naive, so that the audit's
findings are known in advance (*she* is one character longer than *he*)."""

from __future__ import annotations

import math


def length_ratio(candidates, references) -> list[float]:
    """A metric written per list: each candidate's length over its reference's, in characters."""
    return [len(c) / len(r) for c, r in zip(candidates, references)]


def longer_first(reference, candidate_a, candidate_b, *, bonus: float = 0.3, slope: float = 0.5) -> float:
    """A probability-valued judge: P(candidate a preferred) with a first-position bonus of ``bonus`` log-odds and
    ``slope`` log-odds per character that a is longer than b."""
    return 1 / (1 + math.exp(-(bonus + slope * (len(candidate_a) - len(candidate_b)))))


__all__ = ["length_ratio", "longer_first"]
