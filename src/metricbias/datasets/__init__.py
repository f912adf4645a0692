"""Datasets: loaders of released data and builders of paired-candidate sets.

Every paired dataset loads by name into one pair layout: ``datasets.load("published")``
(see :mod:`metricbias.datasets.registry` for the layout and :func:`names` for the datasets).
"""

from .registry import PAIR_COLUMNS, DatasetNameError, attributes, load, names, register, sample

__all__ = ["PAIR_COLUMNS", "DatasetNameError", "attributes", "load", "names", "register", "sample"]
