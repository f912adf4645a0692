"""Three paradigms on the same frozen backbones: the configurations of the 2 x 3 comparison.

Sun et al. (2022, Fig. 4) compare paradigms whose backbones differ (BERT for matching and
regression, BART for generation). Here every paradigm runs on the *same* frozen encoder
weights, so paradigm and backbone can be told apart:

* **matching**: BERTScore-F (layer chosen on STS-B dev) and MoverScore on the encoder itself;
* **regression**: the BLEURT-style regression metric trained on STS-B on that encoder
  (``stsb-<encoder>``);
* **generation**: BARTScore-style P, R, F and PRISM-style F on the encoder run as a UniLM
  paraphraser (``para-<encoder>``, :mod:`metricbias.trained.paraphraser`).

:func:`entries` gives the ``(label, name, options)`` of every configuration (for
:func:`metricbias.scoring.score_metrics`), :func:`configs` their family, paradigm and backbone,
:func:`missing` what cannot run here and why, and :func:`grid` the bias table laid out as
families x backbones. The decomposition uses one configuration per family
(:data:`DECOMPOSED`): the F variants and 1-gram MoverScore.
"""

from __future__ import annotations

import pandas as pd

from .. import backbones
from .base import PLM_PARADIGMS
from .registry import metric_class

ENCODERS = ("all-MiniLM-L6-v2", "all-mpnet-base-v2")
#: family -> (registry name, the backbone it runs on given the encoder, options per variant); the paradigm comes
#: from the metric's card (:meth:`metricbias.metrics.Metric.paradigm_name`)
FAMILIES = {
    "BERTScore": ("bertscore", "{}", {"F": {"variant": "F"}}),
    "MoverScore": ("moverscore", "{}", {"": {}}),
    "Regression": ("regression", "stsb-{}", {"": {}}),
    "BARTScore": ("bartscore", "para-{}", {"P": {"variant": "P"}, "R": {"variant": "R"}, "F": {"variant": "F"}}),
    "PRISM": ("prism", "para-{}", {"F": {"variant": "F"}}),
}
#: the configurations the variance decomposition uses (one per family)
DECOMPOSED = {"BERTScore": "F", "MoverScore": "", "Regression": "", "BARTScore": "F", "PRISM": "F"}
PARADIGMS = PLM_PARADIGMS
CONFIG_COLUMNS = ["metric", "family", "variant", "paradigm", "backbone", "runs_on", "decomposed"]


def _label(family: str, variant: str, encoder: str) -> str:
    short = backbones.BACKBONES[encoder].label if encoder in backbones.BACKBONES else encoder
    return f"{family}{'-' + variant if variant else ''}-{short}"


def configs(encoders=ENCODERS) -> pd.DataFrame:
    """One row per configuration: ``metric`` (label), family, variant, paradigm, backbone (the encoder),
    ``runs_on`` (the backbone the metric takes) and whether the decomposition uses it."""
    rows = []
    for encoder in encoders:
        for family, (name, runs_on, variants) in FAMILIES.items():
            paradigm = metric_class(name).paradigm_name()
            for variant in variants:
                rows.append({"metric": _label(family, variant, encoder), "family": family, "variant": variant,
                             "paradigm": paradigm, "backbone": encoder, "runs_on": runs_on.format(encoder),
                             "decomposed": DECOMPOSED[family] == variant})
    return pd.DataFrame(rows, columns=CONFIG_COLUMNS)


def entries(encoders=ENCODERS, *, only_available: bool = True) -> list:
    """A :class:`~metricbias.metrics.Spec` ``(label, registry name, options)`` per configuration (those that run here)."""
    from .registry import Spec

    out = []
    gone = set(missing(encoders)["metric"]) if only_available else set()
    for row in configs(encoders).itertuples():
        if row.metric in gone:
            continue
        name, _, variants = FAMILIES[row.family]
        out.append(Spec(row.metric, name, {"backbone": row.runs_on, **variants[row.variant]}))
    return out


def missing(encoders=ENCODERS) -> pd.DataFrame:
    """Configurations that cannot run on this machine: ``metric, runs_on, reason`` (the fix is in the reason)."""
    from . import MetricError, get

    rows = []
    for row in configs(encoders).itertuples():
        name, _, variants = FAMILIES[row.family]
        try:  # building the metric resolves its backbone (a trained one wherever its metric looks for it)
            get(name, backbone=row.runs_on, **variants[row.variant])
        except (backbones.BackboneError, MetricError) as exc:
            rows.append({"metric": row.metric, "runs_on": row.runs_on, "reason": str(exc)})
    return pd.DataFrame(rows, columns=["metric", "runs_on", "reason"])


def grid(bias: pd.DataFrame, encoders=ENCODERS) -> pd.DataFrame:
    """A bias table (:func:`metricbias.bias.pairwise.bias_table`) as paradigm/family/variant x (backbone, attribute).

    Cells read ``bias [ci_low, ci_high]``; the ``average`` column is the mean over attributes.
    """
    c = configs(encoders).set_index("metric")
    t = bias[bias["metric"].isin(c.index)].copy()
    t = t.join(c[["family", "variant", "paradigm", "backbone"]], on="metric")
    t["cell"] = [f"{b:.2f} [{lo:.2f}, {hi:.2f}]" for b, lo, hi in zip(t["bias"], t["bias_ci_low"], t["bias_ci_high"])]
    wide = t.pivot_table(index=["paradigm", "family", "variant"], columns=["backbone", "attribute"], values="cell",
                         aggfunc="first")
    avg = t.groupby(["paradigm", "family", "variant", "backbone"])["bias"].mean().unstack("backbone")
    for encoder in avg.columns:
        wide[(encoder, "average")] = avg[encoder].map(lambda v: f"{v:.2f}")
    order = {p: i for i, p in enumerate(PARADIGMS)}
    wide = wide.sort_index(axis=1).sort_index(key=lambda idx: idx.map(order) if idx.name == "paradigm" else idx)
    return wide


__all__ = ["CONFIG_COLUMNS", "DECOMPOSED", "ENCODERS", "FAMILIES", "PARADIGMS", "configs", "entries", "grid",
           "missing"]
