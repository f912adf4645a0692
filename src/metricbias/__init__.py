"""metricbias: measuring and mitigating social bias in text-generation evaluation metrics."""

__version__ = "0.1.0"
