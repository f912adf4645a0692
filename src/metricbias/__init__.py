"""metricbias: measure and mitigate social bias in text-generation evaluation metrics.

The public API, in one import::

    import metricbias as mb

    report = mb.audit("bleu", dataset="published", attributes=["gender"])   # any metric, one call
    mb.audit_report("bleu", "bleu.html", attributes=["gender"])              # the same, and a one-page HTML report
    pairs = mb.load_pairs("published", ["gender"])                           # one pair layout
    scores = mb.score_pairs(pairs, "bertscore:backbone=all-MiniLM-L6-v2")    # one scoring path, cached
    mb.bias_table(scores)                                                    # Eq. 2 with CIs
    mb.measure(scores, ["bias", "kls", "jss"])                               # every measure, long form
    mb.group_stereotype(scores)                                              # group preference and stereotype, apart
    mb.audit_judge(judge, dataset="published")                               # a pairwise judge(reference, a, b)
    mb.invariant("bertscore", attribute="gender")                            # a metric blind to an attribute

    @mb.register                                  # your own metric, then usable by name everywhere
    def overlap(candidates, references): ...

    @mb.register_measure("gap", takes="pairs")   # your own bias measure, then usable by name (mb.audit(measures=...))
    def gap(s1, s2): ...

Names are imported on first use, so ``import metricbias`` stays light.
"""

__version__ = "0.1.0"

import logging as _logging

# The adapters library logs "There are adapters available but none are activated for the forward pass" each time a
# model is loaded before its adapter is set active: expected here (metricbias activates it next), so not shown.
_logging.getLogger("adapters.model_mixin").addFilter(lambda record: "none are activated" not in record.getMessage())

#: public name -> (module, attribute)
_API = {
    "audit": ("metricbias.audits", "audit"),
    "audit_report": ("metricbias.report", "audit_report"),
    "audit_judge": ("metricbias.judges", "audit_judge"),
    "metric_judge": ("metricbias.judges", "metric_judge"),
    "invariant": ("metricbias.mitigation.invariant", "invariant"),
    "load_pairs": ("metricbias.datasets.registry", "load"),
    "datasets": ("metricbias.datasets", None),
    "score_pairs": ("metricbias.scoring", "score_pairs"),
    "score_metrics": ("metricbias.scoring", "score_metrics"),
    "bias_table": ("metricbias.bias.pairwise", "bias_table"),
    "measure": ("metricbias.bias.measures", "measure"),
    "pairs_to_detect": ("metricbias.bias.power", "pairs_to_detect"),
    "group_stereotype": ("metricbias.bias.groups", "group_stereotype"),
    "noise_floor": ("metricbias.bias.noise_floor", "noise_floor"),
    "control_pairs": ("metricbias.bias.noise_floor", "control_pairs"),
    "difference_sd": ("metricbias.bias.power", "difference_sd"),
    "metrics": ("metricbias.metrics", None),
    "get_metric": ("metricbias.metrics.registry", "get"),
    "register": ("metricbias.metrics.registry", "register"),
    "adapt": ("metricbias.metrics.objects", "adapt"),
    "register_measure": ("metricbias.bias.registry", "register_measure"),
    "Metric": ("metricbias.metrics.base", "Metric"),
    "MetricError": ("metricbias.metrics.base", "MetricError"),
    "Spec": ("metricbias.metrics.registry", "Spec"),
    "profiles": ("metricbias.profiles", None),
    "backbones": ("metricbias.backbones", None),
    "ScoreCache": ("metricbias.cache", "ScoreCache"),
}

__all__ = ["__version__", *_API]


def __getattr__(name: str):
    if name not in _API:
        raise AttributeError(f"module 'metricbias' has no attribute {name!r}")
    import importlib

    module, attr = _API[name]
    value = importlib.import_module(module)
    return getattr(value, attr) if attr else value


def __dir__():
    return sorted(__all__)
