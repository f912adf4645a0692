"""How much of the variation of a bias measure across metric configurations a grouping explains.

Sun et al. (2022, Sec. 2.3) argue that a PLM-based metric's *paradigm* decides
more of its bias than its *backbone*. :func:`variance_explained` is the summary
statistic of that comparison: the share of the variance of a bias value across
configurations that lies between the groups of a grouping (eta squared,
SS_between / SS_total).
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def variance_explained(values, groups) -> float:
    """Eta squared: the share of the variance of ``values`` between the groups (NaN with < 2 groups)."""
    frame = pd.DataFrame({"v": np.asarray(values, float), "g": np.asarray(groups)}).dropna()
    if frame["g"].nunique() < 2 or len(frame) < 3:
        return float("nan")
    total = ((frame["v"] - frame["v"].mean()) ** 2).sum()
    means = frame.groupby("g")["v"].transform("mean")
    between = ((means - frame["v"].mean()) ** 2).sum()
    return float(between / total) if total > 0 else float("nan")


__all__ = ["variance_explained"]
