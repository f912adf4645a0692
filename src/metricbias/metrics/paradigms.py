"""Which paradigm and backbone each metric configuration has: the axes of Figure 4 of Sun et al.

Sun et al. (2022, Sec. 2.3) compare the *paradigm* of a PLM-based metric (matching,
regression, generation), which decides how much extrinsic bias it adds, with the
*backbone* (which PLM, how large), which decides its intrinsic bias. A configuration
here is one row: ``metric`` (a released column or a live label), ``family`` (BERTScore,
MoverScore, BLEURT, ...), ``paradigm``, ``backbone`` and ``params_m`` (millions of
parameters). Released configurations come from the transcribed Table 6 (which files
FrugalScore under *Generation*); live ones from a metric suite.

:func:`variance_explained` is the summary statistic of the comparison: the share of
the variance of the average bias across configurations explained by grouping them by
paradigm, or by backbone (eta squared, SS_between / SS_total).
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from .. import backbones

CONFIG_COLUMNS = ["metric", "family", "paradigm", "backbone", "params_m", "source"]

#: registry name -> (family label, paradigm as in Sun et al.'s Table 6)
LIVE_FAMILIES = {
    "bertscore": ("BERTScore", "Matching"),
    "moverscore": ("MoverScore", "Matching"),
    "regression": ("BLEURT-style", "Regression"),
    "bartscore": ("BARTScore", "Generation"),
    "prism": ("PRISM", "Generation"),
    "frugalscore": ("FrugalScore", "Generation"),
}
_TRADITIONAL = {"ngram": "n-gram", "embedding": "static embedding"}


def params_millions(text: str) -> float:
    """``"110M"`` -> 110.0; anything else (``"-"``, ``"26k x 300"``) -> NaN."""
    match = re.fullmatch(r"\s*([\d.]+)\s*M\s*", str(text))
    return float(match.group(1)) if match else float("nan")


def released_configs() -> pd.DataFrame:
    """The 29 released columns with family, paradigm, backbone and size (n-gram metrics: paradigm ``n-gram``)."""
    from .. import paper

    t6 = paper.table("sun2022_table6_bias")
    family = t6["metric"].str.replace(r"-(precision|recall|Fscore)$", "", regex=True)
    paradigm = t6["paradigm"].where(t6["paradigm"] != "-", "n-gram")
    return pd.DataFrame({
        "metric": t6["published_column"], "family": family, "paradigm": paradigm,
        "backbone": t6["backbone"].where(t6["backbone"] != "-", None),
        "params_m": [params_millions(p) for p in t6["parameters"]], "source": "released",
    })[CONFIG_COLUMNS]


def live_configs(entries) -> pd.DataFrame:
    """One row per ``(label, name, options)`` of a suite."""
    from . import metric_class

    rows = []
    for label, name, options in entries:
        cls = metric_class(name)
        family, paradigm = LIVE_FAMILIES.get(name, (None, _TRADITIONAL.get(cls.family, cls.family)))
        backbone = options.get("backbone", cls.defaults.get("backbone")) if cls.needs_backbone else None
        trained = backbones.BACKBONES.get(backbone) if backbone else None
        if trained is not None and trained.trained:  # trained parts on a frozen backbone: report that backbone
            backbone = trained.base
        if family is None:
            family = label
        elif name == "moverscore" and options.get("n_gram", 1) == 2:
            family = "MoverScore (2-gram)"
        info = backbones.BACKBONES.get(backbone) if backbone else None
        rows.append({"metric": label, "family": family, "paradigm": paradigm, "backbone": backbone,
                     "params_m": params_millions(info.params) if info else float("nan"), "source": "live"})
    return pd.DataFrame(rows, columns=CONFIG_COLUMNS)


def variance_explained(values: pd.Series, groups: pd.Series) -> float:
    """Eta squared: the share of the variance of ``values`` between the groups (NaN with < 2 groups)."""
    frame = pd.DataFrame({"v": np.asarray(values, float), "g": np.asarray(groups)}).dropna()
    if frame["g"].nunique() < 2 or len(frame) < 3:
        return float("nan")
    total = ((frame["v"] - frame["v"].mean()) ** 2).sum()
    means = frame.groupby("g")["v"].transform("mean")
    between = ((means - frame["v"].mean()) ** 2).sum()
    return float(between / total) if total > 0 else float("nan")
