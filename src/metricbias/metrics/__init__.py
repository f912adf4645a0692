"""Metrics: one ``Metric`` interface, a registry of stable names, a user's own metrics.

``get("bleu")`` or ``get("bertscore", backbone="all-MiniLM-L6-v2", variant="F")``
builds a metric; ``get("bleu:tokenize=13a")`` takes the options in the one
specification syntax every command uses; ``register`` adds a ``Metric`` subclass
or a plain function ``f(candidates, references) -> scores`` under a name;
``available()`` lists every metric's card. Modules are imported on first use, so
listing metrics never imports torch.
"""

from __future__ import annotations

from .base import FAMILIES, PARADIGMS, PLM_PARADIGMS, SURFACE_PARADIGMS, Metric, MetricError
from .objects import adapt
from .registry import (BUILTIN, Spec, function_metric, get, metric_class, names, on_backbones, parse, register,
                       resolve, unregister)


#: the columns of :func:`configurations`
CONFIG_COLUMNS = ["metric", "family", "paradigm", "backbone", "params_m", "source"]


def configurations(specs) -> "pd.DataFrame":
    """One row per metric configuration (a profile's :class:`Spec` list): its label, family, paradigm, the
    pretrained backbone it runs on (a trained backbone reports the one it was trained on) and its size."""
    import pandas as pd

    from .. import backbones

    rows = []
    for label, name, options in specs:
        cls = metric_class(name)
        backbone = {**cls.defaults, **options}.get("backbone") if cls.needs_backbone else None
        info = backbones.BACKBONES.get(backbone)
        while info is not None and info.base is not None:  # trained parts on a frozen pretrained backbone
            backbone, info = info.base, backbones.BACKBONES.get(info.base)
        rows.append({"metric": label, "family": cls.label or cls.name, "paradigm": cls.paradigm_name(),
                     "backbone": backbone, "params_m": info.params_millions if info else float("nan"),
                     "source": "live"})
    return pd.DataFrame(rows, columns=CONFIG_COLUMNS)


def available() -> list[dict]:
    """Every registered metric's card (:meth:`Metric.describe`) plus the registered backbones it accepts."""
    from .. import backbones

    rows = []
    for name in names():
        card = metric_class(name).describe()
        card["backbones"] = [b.name for b in backbones.BACKBONES.values() if b.kind in card["backbone_kinds"]]
        rows.append(card)
    return rows


__all__ = ["BUILTIN", "CONFIG_COLUMNS", "FAMILIES", "PARADIGMS", "PLM_PARADIGMS", "SURFACE_PARADIGMS", "Metric", "MetricError", "Spec", "adapt", "available", "configurations", "function_metric", "get",
           "metric_class", "names", "on_backbones", "parse", "register", "resolve", "unregister"]
