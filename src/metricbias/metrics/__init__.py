"""Metric registry: stable names -> implementations, one module per family.

``get("bleu")`` or ``get("bertscore", backbone="all-MiniLM-L6-v2", variant="F")``
builds a metric; ``available()`` lists every name with its family. Modules are
imported on first use, so listing metrics never imports torch.
"""

from __future__ import annotations

import importlib

from .base import FAMILIES, Metric, MetricError

#: registry name -> module that defines it (the class whose ``name`` attribute matches)
REGISTRY: dict[str, str] = {
    # n-gram overlap
    "bleu": "metricbias.metrics.ngram",
    "rouge1": "metricbias.metrics.ngram",
    "rouge2": "metricbias.metrics.ngram",
    "rougeL": "metricbias.metrics.ngram",
    "rougeSU4": "metricbias.metrics.ngram",
    "meteor": "metricbias.metrics.ngram",
    "nist": "metricbias.metrics.ngram",
    "chrf": "metricbias.metrics.ngram",
    "ter": "metricbias.metrics.ngram",
    "cider": "metricbias.metrics.ngram",
    # static word embeddings
    "wmd": "metricbias.metrics.embedding",
    "embedding_average": "metricbias.metrics.embedding",
    "vector_extrema": "metricbias.metrics.embedding",
    "greedy_matching": "metricbias.metrics.embedding",
    # token matching on contextual encoders
    "bertscore": "metricbias.metrics.matching",
    "moverscore": "metricbias.metrics.matching",
    # learned regression (BLEURT-style)
    "regression": "metricbias.metrics.regression",
    # generation likelihood and distilled metrics
    "bartscore": "metricbias.metrics.generation",
    "prism": "metricbias.metrics.generation",
    "frugalscore": "metricbias.metrics.generation",
}


def metric_class(name: str) -> type[Metric]:
    if name not in REGISTRY:
        raise MetricError(f"unknown metric {name!r}; available: {', '.join(REGISTRY)}")
    module = importlib.import_module(REGISTRY[name])
    for obj in vars(module).values():
        if isinstance(obj, type) and issubclass(obj, Metric) and getattr(obj, "name", None) == name:
            return obj
    raise MetricError(f"metric {name!r}: {REGISTRY[name]} defines no Metric subclass named {name!r}")


def get(name: str, **options) -> Metric:
    """Build the metric registered as ``name`` with the given options."""
    return metric_class(name)(**options)


def available() -> list[dict]:
    """Every registered metric: name, family, options with defaults, whether it needs a backbone,
    the backbone kinds it accepts and the registered backbones of those kinds."""
    from .. import backbones

    rows = []
    for name in REGISTRY:
        cls = metric_class(name)
        accepted = [b.name for b in backbones.BACKBONES.values() if b.kind in cls.backbone_kinds]
        rows.append({"name": name, "family": cls.family, "needs_backbone": cls.needs_backbone,
                     "backbone_kinds": list(cls.backbone_kinds), "backbones": accepted,
                     "options": dict(cls.defaults)})
    return rows


def suite(profile: str = "offline") -> list[tuple[str, str, dict]]:
    """Every metric configuration of a profile as ``(label, name, options)``; see :mod:`.suites`."""
    from .suites import suite as _suite

    return _suite(profile)


__all__ = ["FAMILIES", "Metric", "MetricError", "REGISTRY", "available", "get", "metric_class", "suite"]
